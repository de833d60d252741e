/**
 * `refract index`: import getTransaction / getBlock JSON files into the store, in slot order,
 * resuming after the last committed slot.
 */
import type { BlockInfo } from '../types.ts';
import { type FilePlan, readPlannedBlocks } from './files.ts';
import type { Indexer, BatchResult } from './indexer.ts';

/** Totals of an import. */
export interface ImportSummary {
  blocks: number;
  transactions: number;
  outputs: number;
  outputsInserted: number;
  accountsSpent: number;
  rejected: number;
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
export function importBlocks(indexer: Indexer, blocks: readonly BlockInfo[], opts: { batchTransactions?: number; onProgress?(done: number, total: number, r: BatchResult): void } = {}): ImportSummary {
  const started = performance.now();
  const last = indexer.store.read((r) => r.lastSlot());
  const todo = blocks.filter((b) => last === null || b.slot > last);
  const sum: ImportSummary = { blocks: 0, transactions: 0, outputs: 0, outputsInserted: 0, accountsSpent: 0, rejected: 0, skippedBlocks: blocks.length - todo.length, seconds: 0 };
  const limit = opts.batchTransactions ?? DEFAULT_BATCH_TRANSACTIONS;
  let i = 0;
  while (i < todo.length) {
    const batch: BlockInfo[] = [];
    let txs = 0;
    while (i < todo.length && (batch.length === 0 || txs + todo[i]!.transactions.length <= limit)) {
      txs += todo[i]!.transactions.length;
      batch.push(todo[i++]!);
    }
    const r = indexer.indexBlocks(batch);
    sum.blocks += batch.length;
    sum.transactions += txs;
    sum.outputs += r.outputs;
    sum.outputsInserted += r.outputsInserted;
    sum.accountsSpent += r.accountsSpent;
    sum.rejected += r.rejected.length;
    opts.onProgress?.(sum.skippedBlocks + i, blocks.length, r);
  }
  sum.seconds = (performance.now() - started) / 1000;
  return sum;
}

/**
 * `importBlocks` for files that are read as their batch comes (`planFiles`): memory holds one batch,
 * and files at or below the store's last slot are not read at all (resume). Same batching, summary and
 * progress (`onProgress(doneBlocks, plan.blocks, batch)`).
 * @throws Error naming a file that does not decode (batches before it stay committed; a rerun resumes)
 */
export function importFilePlan(indexer: Indexer, plan: FilePlan, opts: { batchTransactions?: number; onProgress?(done: number, total: number, r: BatchResult): void } = {}): ImportSummary {
  const started = performance.now();
  const last = indexer.store.read((r) => r.lastSlot());
  const sum: ImportSummary = { blocks: 0, transactions: 0, outputs: 0, outputsInserted: 0, accountsSpent: 0, rejected: 0, skippedBlocks: 0, seconds: 0 };
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
    opts.onProgress?.(sum.skippedBlocks + sum.blocks, plan.blocks, r);
    batch = [];
    txs = 0;
  };
  for (const b of readPlannedBlocks(plan, last, () => sum.skippedBlocks++)) {
    const n = b.transactions.length + (b.undecodable?.length ?? 0);
    if (batch.length && txs + n > limit) flush();
    batch.push(b);
    txs += n;
  }
  flush();
  sum.seconds = (performance.now() - started) / 1000;
  return sum;
}
