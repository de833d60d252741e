/**
 * The indexing step shared by every source: blocks in → one LMDB write transaction out.
 * decode (done by the source) → parse (pure) → prepare StateUpdate (pure) → persist (one txn).
 * `prepareBatch` is the pure half, `Indexer.commitBatch` the store half (they may run on two
 * threads: src/ingest/prepareThread.ts); `indexBlocks` does both.
 */
import type { Logger } from 'pino';
import type { TreeRegistry } from '../config/trees.ts';
import { lightProgramLabel, parseTransaction } from '../light/parser.ts';
import { DecodeError } from '../solana/errors.ts';
import { type PersistStats, persistBatch } from '../state/persist.ts';
import { type StateUpdate, prepareStateUpdates } from '../state/prepare.ts';
import type { BlockRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { BlockInfo, ParsedTransaction } from '../types.ts';

/** Result of indexing one batch. */
export interface BatchResult extends PersistStats {
  /**
   * Transactions refused (decode failure, hash mismatch, …), in block order, with reasons. Nothing of
   * them was stored. `signature` is null for a block's transaction whose bytes did not get as far as
   * its signature (such a rejection is logged and counted, not recorded).
   */
  rejected: { signature: string | null; slot: number; reason: string }[];
  /** Outputs / events skipped because their tree is not in the registry (base58 tree → count). */
  unknownTrees: Map<string, number>;
  /** Compressed outputs seen (including re-indexed ones). */
  outputs: number;
  lastSlot: number | null;
  /** Batch events refused because the computed root differs from the event's new_root (base58 tree → count); also in `rejected`. */
  rootMismatches: Map<string, number>;
  /** Successful Light transactions that yielded no event (see PreparedBatch.unparsed). */
  unparsed: UnparsedLightTransaction[];
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
  rejected: BatchResult['rejected'];
  unknownTrees: Map<string, number>;
  outputs: number;
  lastSlot: number | null;
  /**
   * Successful transactions that invoke a Light program (light-system, account-compression or a retired id)
   * but yielded no event, in block order, with the program label (see `lightProgramLabel`).
   */
  unparsed?: UnparsedLightTransaction[];
}

/** A successful Light transaction that yielded no event. */
export interface UnparsedLightTransaction {
  signature: string;
  slot: number;
  /** 'light-system' | 'account-compression' | 'obsolete-light-system' | 'obsolete-account-compression'. */
  program: string;
}

/** Signatures remembered for "logged once per signature" (then the set starts over). */
const UNPARSED_LOG_MEMORY = 10_000;

/**
 * Parses and validates `blocks` (ascending slots): decode failures and rejected transactions are
 * listed (in block order) and left out; every output hash of the batch is recomputed in one batched
 * Poseidon pass. Pure (registry lookups only). Throws only on bugs (not on bad transactions).
 */
export function prepareBatch(blocks: readonly BlockInfo[], registry: TreeRegistry): PreparedBatch {
  const updates: StateUpdate[] = [];
  const rejected: BatchResult['rejected'] = [];
  const unknownTrees = new Map<string, number>();
  let outputs = 0;
  // Parse every transaction, then prepare them together: their output hashes are recomputed in
  // one batched Poseidon pass. A decode failure or a rejection drops that transaction only;
  // rejections are reported in transaction order.
  const parsed: ParsedTransaction[] = [];
  const unparsed: UnparsedLightTransaction[] = [];
  const failuresBefore: BatchResult['rejected'][number][][] = []; // decode failures before parsed[i]
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
  const prepared = prepareStateUpdates(parsed, registry);
  for (let i = 0; i <= prepared.length; i++) {
    for (const f of failuresBefore[i] ?? []) rejected.push(f);
    const p = prepared[i];
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

/** Applies block batches to a store. */
export class Indexer {
  /** Signatures of unparsed Light transactions already logged (bounded). */
  private readonly loggedUnparsed = new Set<string>();

  constructor(
    readonly store: Store,
    readonly registry: TreeRegistry,
    private readonly log?: Logger,
  ) {}

  /**
   * Indexes `blocks` (ascending slots) in ONE write transaction: all of it commits or none.
   * A transaction that fails to decode or to validate is rejected (logged, recorded, counted) and the
   * rest of the batch proceeds. Throws only on store failures, leaving the store unchanged.
   */
  indexBlocks(blocks: readonly BlockInfo[]): BatchResult {
    return this.commitBatch(prepareBatch(blocks, this.registry));
  }

  /**
   * Writes a batch made by {@link prepareBatch} (with this indexer's registry) in ONE write
   * transaction, as `indexBlocks` does. Throws only on store failures, leaving the store unchanged
   * (the same batch may be committed again).
   */
  commitBatch(batch: PreparedBatch): BatchResult {
    const { records, updates, unknownTrees, outputs, lastSlot } = batch;
    const unparsed = batch.unparsed ?? [];
    const rejected = [...batch.rejected];
    const stats = this.store.write((w) => {
      const s = persistBatch(w, records, updates);
      for (const r of s.batchEvents.refused) rejected.push({ signature: r.signature, slot: r.slot, reason: r.reason });
      for (const r of rejected) if (r.signature !== null) w.putRejection(r.signature, r.reason);
      return s;
    });
    for (const r of rejected) this.log?.warn({ signature: r.signature, slot: r.slot, reason: r.reason }, 'transaction rejected');
    for (const r of stats.batchEvents.refused) {
      if (r.rootMismatch) this.log?.error({ tree: r.tree, seq: String(r.seq), computedRoot: r.rootMismatch.computed, eventRoot: r.rootMismatch.expected, signature: r.signature }, 'batch event refused: root mismatch');
    }
    for (const u of stats.unknownBatchInputs) this.log?.warn({ signature: u.signature, hash: u.hash }, 'spent account of a batched tree is unknown (created before the indexed range): not put in the input queue');
    for (const h of stats.batchEvents.held) this.log?.warn({ tree: h.tree, seq: String(h.seq), expectedSeq: String(h.expected), signature: h.signature }, 'batch event held back: sequence gap');
    for (const [tree, count] of unknownTrees) this.log?.warn({ tree, count }, 'skipped outputs/events of an unknown tree');
    for (const u of unparsed) {
      if (this.loggedUnparsed.has(u.signature)) continue;
      if (this.loggedUnparsed.size >= UNPARSED_LOG_MEMORY) this.loggedUnparsed.clear();
      this.loggedUnparsed.add(u.signature);
      this.log?.warn({ signature: u.signature, slot: u.slot, program: u.program }, 'Light transaction yielded no event');
    }
    const rootMismatches = new Map<string, number>();
    for (const r of stats.batchEvents.refused) if (r.rootMismatch) rootMismatches.set(r.tree, (rootMismatches.get(r.tree) ?? 0) + 1);
    return { ...stats, rejected, unknownTrees, outputs, lastSlot, rootMismatches, unparsed };
  }
}
