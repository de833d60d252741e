/**
 * The persist stage of ingest, and the indexing step shared by every source: blocks in → one LMDB
 * write transaction out. decode (done by the source) → parse → state rules (prepareBatch.ts, pure)
 * → persist (here: src/state/persist.ts in one write transaction).
 * `prepareBatch` is the pure half, `Indexer.commitBatch` the store half (they may run on two
 * threads: threads/prepareThread.ts); `indexBlocks` does both.
 */
import type { Logger } from 'pino';
import type { TreeRegistry } from '../config/trees.ts';
import { type PersistStats, persistBatch } from '../state/persist.ts';
import type { Store, WriteView } from '../store/store.ts';
import type { BlockInfo } from '../types.ts';
import { type PreparedBatch, type Rejection, type UnparsedLightTransaction, prepareBatch } from './prepareBatch.ts';

/** Result of indexing one batch. */
export interface BatchResult extends PersistStats {
  /**
   * Transactions refused (decode failure, hash mismatch, …), in block order, with reasons. Nothing of
   * them was stored. `signature` is null for a block's transaction whose bytes did not get as far as
   * its signature (such a rejection is logged and counted, not recorded).
   */
  rejected: Rejection[];
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

/** Signatures remembered for "logged once per signature" (then the set starts over). */
const UNPARSED_LOG_MEMORY = 10_000;

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
   * transaction, as `indexBlocks` does; `extra` writes more in the same transaction (the backfill's
   * position). Throws only on store failures, leaving the store unchanged (the same batch may be
   * committed again).
   */
  commitBatch(batch: PreparedBatch, extra?: (w: WriteView) => void): BatchResult {
    const { records, updates, unknownTrees, outputs, lastSlot } = batch;
    const unparsed = batch.unparsed ?? [];
    const rejected = [...batch.rejected];
    const stats = this.store.write((w) => {
      const s = persistBatch(w, records, updates);
      for (const r of s.batchEvents.refused) rejected.push({ signature: r.signature, slot: r.slot, reason: r.reason });
      for (const r of rejected) if (r.signature !== null) w.putRejection(r.signature, r.reason);
      extra?.(w);
      return s;
    });
    for (const g of stats.sequenceGaps) this.log?.warn({ tree: g.tree, stream: g.stream, expected: String(g.expected), got: String(g.got), afterSlot: g.afterSlot, slot: g.slot, signature: g.signature }, 'sequence gap in a tree\'s numbers (not checked for this source): indexed past it');
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
