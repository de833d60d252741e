/**
 * `refract index`: import getTransaction / getBlock JSON files into the store, in slot order,
 * resuming after the last committed slot.
 */
import type { BlockInfo } from '../types.ts';
import { type FilePlan, readPlannedBlocks } from './sources/files.ts';
import type { Indexer, BatchResult } from './indexer.ts';

/** Totals of an import. */
export interface ImportSummary {
  blocks: number;
  transactions: number;
  outputs: number;
  outputsInserted: number;
  accountsSpent: number;
  rejected: number;
  /** Successful Light transactions (light-system, account-compression or a retired id) that yielded no event. */
  unparsedLightTransactions: number;
  /** The same, per program label (light-system, account-compression, obsolete-…). */
  unparsedByProgram: Record<string, number>;
  /** Batch events refused because the computed root differs from the event's new_root (also counted in `rejected`). */
  rootMismatches: number;
  /** Batch events held back by a sequence gap (their predecessors were not indexed). */
  batchEventsHeld: number;
  skippedBlocks: number;
  seconds: number;
}

/** Transactions per write transaction of the file importer unless told otherwise (`--batch-transactions`). */
export const DEFAULT_BATCH_TRANSACTIONS = 2_000;

/**
 * Indexes `blocks` (ascending) in batches of about `batchTransactions` transactions (whole slots per
 * batch, one write transaction each). Blocks at or below the store's last slot are skipped (resume).
 * `onProgress(doneBlocks, totalBlocks, batch)` is called after every committed batch (skipped blocks count as done).
 */
export function importBlocks(indexer: Indexer, blocks: readonly BlockInfo[], opts: ImportOptions = {}): ImportSummary {
  const last = indexer.store.read((r) => r.lastSlot());
  const todo = blocks.filter((b) => last === null || b.slot > last);
  return indexInBatches(indexer, todo, blocks.length, blocks.length - todo.length, opts);
}

/** Options of `importBlocks` / `importFilePlan`. */
export interface ImportOptions {
  /** Transactions per write transaction (whole blocks; default DEFAULT_BATCH_TRANSACTIONS). */
  batchTransactions?: number;
  onProgress?(done: number, total: number, r: BatchResult): void;
}

/**
 * `importBlocks` for files that are read as their batch comes (`planFiles`): memory holds one batch,
 * and files at or below the store's last slot are not read at all (resume). Same batching, summary and
 * progress (`onProgress(doneBlocks, plan.blocks, batch)`).
 * @throws Error naming a file that does not decode (batches before it stay committed; a rerun resumes)
 */
export function importFilePlan(indexer: Indexer, plan: FilePlan, opts: ImportOptions = {}): ImportSummary {
  const last = indexer.store.read((r) => r.lastSlot());
  let skipped = 0;
  return indexInBatches(indexer, readPlannedBlocks(plan, last, () => skipped++), plan.blocks, () => skipped, opts);
}

/**
 * Indexes `source` (ascending, nothing at or below the store's last slot) in batches of whole blocks
 * of at most `batchTransactions` transactions (a bigger block, or blocks of one slot, go together), one
 * write transaction each.
 * `skipped`: blocks passed over before or while `source` runs (they count as done for progress).
 */
function indexInBatches(indexer: Indexer, source: Iterable<BlockInfo>, total: number, skipped: number | (() => number), opts: ImportOptions): ImportSummary {
  const started = performance.now();
  const skippedNow = typeof skipped === 'number' ? () => skipped : skipped;
  const sum: ImportSummary = { blocks: 0, transactions: 0, outputs: 0, outputsInserted: 0, accountsSpent: 0, rejected: 0, unparsedLightTransactions: 0, unparsedByProgram: {}, rootMismatches: 0, batchEventsHeld: 0, skippedBlocks: skippedNow(), seconds: 0 };
  const limit = opts.batchTransactions ?? DEFAULT_BATCH_TRANSACTIONS;
  let batch: BlockInfo[] = [];
  let txs = 0;
  const flush = () => {
    if (!batch.length) return;
    const r = indexer.indexBlocks(batch);
    sum.blocks += batch.length;
    sum.transactions += txs;
    sum.outputs += r.outputs;
    sum.outputsInserted += r.outputsInserted;
    sum.accountsSpent += r.accountsSpent;
    sum.rejected += r.rejected.length;
    sum.unparsedLightTransactions += r.unparsed.length;
    for (const u of r.unparsed) sum.unparsedByProgram[u.program] = (sum.unparsedByProgram[u.program] ?? 0) + 1;
    for (const n of r.rootMismatches.values()) sum.rootMismatches += n;
    sum.batchEventsHeld += r.batchEvents.held.length;
    opts.onProgress?.(skippedNow() + sum.blocks, total, r);
    batch = [];
    txs = 0;
  };
  for (const b of source) {
    const n = b.transactions.length + (b.undecodable?.length ?? 0);
    // Never between two blocks of one slot (transaction files and a block file): a resume skips
    // every block at or below the last committed slot.
    if (batch.length && txs + n > limit && batch[batch.length - 1]!.slot !== b.slot) flush();
    batch.push(b);
    txs += n;
  }
  flush();
  sum.skippedBlocks = skippedNow();
  sum.seconds = (performance.now() - started) / 1000;
  return sum;
}
