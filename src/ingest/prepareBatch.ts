/**
 * The state-rules stage of ingest: a block batch, parsed (parse.ts `parseBlocks`), goes through the
 * state rules (src/state/stateUpdate.ts `deriveStateUpdates`: every output hash recomputed in one
 * batched Poseidon pass, mismatches rejected) into a {@link PreparedBatch}: everything the persist
 * stage (indexer.ts `Indexer.commitBatch`) needs and nothing that refers to a store. Pure, so it may
 * run on another thread than the commit (threads/prepareThread.ts).
 */
import type { TreeRegistry } from '../config/trees.ts';
import { type StateUpdate, deriveStateUpdates } from '../state/stateUpdate.ts';
import type { BlockRecord } from '../store/records.ts';
import type { BlockInfo } from '../types.ts';
import { type Rejection, type UnparsedLightTransaction, parseBlocks } from './parse.ts';

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
