/**
 * The pure half of ingest (indexer.ts `Indexer.commitBatch` is the store half): the one module of
 * src/ingest that calls the transaction codecs.
 * - Decode: the sources (sources/poller.ts, sources/files.ts, sources/grpc.ts, fetchTransactions.ts)
 *   decode what they read with {@link decodeBlockJson} / {@link decodeTransactionJson} (src/solana/decode.ts:
 *   the wire format and the skim, pure).
 * - Parse: {@link parseBlocks} finds the Light events of a batch's transactions (src/light/parser.ts
 *   `parseTransaction`: the instruction-based parser, then the legacy noop scan; pure).
 * - State rules: {@link prepareBatch} runs the parsed batch through src/state/stateUpdate.ts
 *   `deriveStateUpdates` (every output hash recomputed in one batched Poseidon pass, mismatches
 *   rejected) into a {@link PreparedBatch}: everything the persist stage needs and nothing that refers
 *   to a store. Pure, so it may run on another thread than the commit (threads/prepareThread.ts).
 */
import type { TreeRegistry } from '../config/trees.ts';
import { lightProgramLabel, parseTransaction } from '../light/parser.ts';
import { DecodeError } from '../solana/errors.ts';
import { type StateUpdate, deriveStateUpdates } from '../state/stateUpdate.ts';
import type { BlockRecord } from '../store/records.ts';
import type { BlockInfo, ParsedTransaction } from '../types.ts';

/**
 * The wire decoders the sources use: getBlock JSON → BlockInfo (undecodable transactions listed in
 * `undecodable`, non-Light ones skimmed), getTransaction JSON → `{slot, blockTime, transaction}`
 * (throws DecodeError). See src/solana/decode.ts.
 */
export { decodeBlockJson, decodeTransactionJson } from '../solana/decode.ts';
export { DecodeError } from '../solana/errors.ts';
export { blockFromYellowstone, blockHeaderFromYellowstone } from '../solana/yellowstone.ts';
export { encode as encodeBase58 } from '../solana/base58.ts';

/**
 * A transaction left out of a batch, and why (a decode failure, a hash mismatch, a refused batch
 * event, …). `signature` is null for a block's transaction whose bytes did not get as far as its
 * signature.
 */
export interface Rejection {
  signature: string | null;
  slot: number;
  reason: string;
}

/** A successful Light transaction that yielded no event. */
export interface UnparsedLightTransaction {
  signature: string;
  slot: number;
  /** 'light-system' | 'account-compression' | 'obsolete-light-system' | 'obsolete-account-compression'. */
  program: string;
}

/** What {@link parseBlocks} found in a batch of blocks. */
export interface ParsedBlocks {
  /** Every transaction that decoded and parsed, in block order (with or without Light events). */
  parsed: ParsedTransaction[];
  /**
   * Transactions that did not decode (the block's `undecodable`, or a DecodeError of the parser),
   * by position: `failuresBefore[i]` came before `parsed[i]` in block order
   * (`failuresBefore[parsed.length]`: after the last one). Sparse.
   */
  failuresBefore: Rejection[][];
  /**
   * Successful transactions that invoke a Light program (light-system, account-compression or a
   * retired id) but yielded no event, in block order, with the program label (`lightProgramLabel`).
   */
  unparsed: UnparsedLightTransaction[];
}

/**
 * Parses every transaction of `blocks` (ascending slots) in the node's order: decoded ones with
 * `parseTransaction`, undecodable ones (and those the parser fails with a DecodeError) recorded at
 * their position. Pure. Throws only on bugs (an error other than DecodeError).
 */
export function parseBlocks(blocks: readonly BlockInfo[]): ParsedBlocks {
  const parsed: ParsedTransaction[] = [];
  const unparsed: UnparsedLightTransaction[] = [];
  const failuresBefore: Rejection[][] = [];
  for (const block of blocks) {
    // The block's transactions in the node's order: decoded ones, and undecodable ones at their index.
    const undecodable = block.undecodable ?? [];
    for (let i = 0, t = 0, u = 0; i < block.transactions.length + undecodable.length; i++) {
      if (undecodable[u]?.index === i) {
        const bad = undecodable[u++]!;
        (failuresBefore[parsed.length] ??= []).push({ signature: bad.signature, slot: block.slot, reason: bad.reason });
        continue;
      }
      const tx = block.transactions[t++]!;
      try {
        const p = parseTransaction(tx, block.slot);
        parsed.push(p);
        if (p.error === null && p.events.length === 0) {
          const program = lightProgramLabel(tx);
          if (program) unparsed.push({ signature: tx.signature, slot: block.slot, program });
        }
      } catch (err) {
        if (!(err instanceof DecodeError)) throw err;
        (failuresBefore[parsed.length] ??= []).push({ signature: tx.signature, slot: block.slot, reason: err.message });
      }
    }
  }
  return { parsed, failuresBefore, unparsed };
}

/**
 * A block batch parsed and validated, ready to be written: everything {@link Indexer.commitBatch}
 * needs and nothing that refers to a store. Plain data (structured-clone safe), so it can be made on
 * one thread (workers/prepare.ts) and committed on another.
 */
export interface PreparedBatch {
  records: BlockRecord[];
  /** StateUpdates of the accepted transactions, in block order. */
  updates: StateUpdate[];
  /** Transactions refused so far (decode failure, hash mismatch, …), in block order, with reasons. */
  rejected: Rejection[];
  /** Outputs / events skipped because their tree is not in the registry (base58 tree → count). */
  unknownTrees: Map<string, number>;
  /** Compressed outputs of the accepted transactions. */
  outputs: number;
  lastSlot: number | null;
  /**
   * Successful transactions that invoke a Light program (light-system, account-compression or a retired id)
   * but yielded no event, in block order, with the program label (see `lightProgramLabel`).
   */
  unparsed?: UnparsedLightTransaction[];
}

/**
 * Parses and validates `blocks` (ascending slots): decode failures and rejected transactions are
 * listed (in block order) and left out; every output hash of the batch is recomputed in one batched
 * Poseidon pass. Pure (registry lookups only). Throws only on bugs (not on bad transactions).
 */
export function prepareBatch(blocks: readonly BlockInfo[], registry: TreeRegistry): PreparedBatch {
  const updates: StateUpdate[] = [];
  const rejected: Rejection[] = [];
  const unknownTrees = new Map<string, number>();
  let outputs = 0;
  // Parse every transaction, then derive their state updates together: their output hashes are recomputed in
  // one batched Poseidon pass. A decode failure or a rejection drops that transaction only;
  // rejections are reported in transaction order.
  const { parsed, failuresBefore, unparsed } = parseBlocks(blocks);
  const outcomes = deriveStateUpdates(parsed, registry);
  for (let i = 0; i <= outcomes.length; i++) {
    for (const f of failuresBefore[i] ?? []) rejected.push(f);
    const p = outcomes[i];
    if (!p) continue;
    if (p.rejected) {
      rejected.push({ signature: p.rejected.signature, slot: parsed[i]!.slot, reason: p.rejected.reason });
      continue;
    }
    const u = p.update;
    for (const t of u.unknownTrees) unknownTrees.set(t, (unknownTrees.get(t) ?? 0) + 1);
    outputs += u.outputs.length;
    updates.push(u);
  }
  const records: BlockRecord[] = blocks.map((b) => ({
    slot: b.slot,
    parentSlot: b.parentSlot,
    blockTime: b.blockTime,
    blockHeight: b.blockHeight,
    blockhash: b.blockhash,
    previousBlockhash: b.previousBlockhash,
  }));
  return { records, updates, rejected, unknownTrees, outputs, lastSlot: blocks.length ? blocks[blocks.length - 1]!.slot : null, unparsed };
}
