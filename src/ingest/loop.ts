/**
 * The ingest loop of `refract start`: find where to start (sources/startSlot.ts), poll the Solana
 * RPC and prepare each batch (preparedBatches.ts, here or on a prepare thread:
 * threads/prepareThread.ts), commit it in one write transaction (indexer.ts), report progress as
 * IngestEvents (progress.ts), stop cleanly (finish the current batch) on abort. Its thread:
 * threads/ingestThread.ts.
 */
import { setImmediate } from 'node:timers/promises';
import { getHeapStatistics } from 'node:v8';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { displayUrl } from '../displayUrl.ts';
import type { SolanaRpc } from '../solana/rpcClient.ts';
import type { IngestEvent } from './progress.ts';
import type { BatchResult, Indexer } from './indexer.ts';
import { type PreparedItem, pollPreparedBatches } from './preparedBatches.ts';
import { sleep } from './sources/poller.ts';
import { resolveStartSlot } from './sources/startSlot.ts';
import { type TreeLookupOptions, TreeResolver } from './sources/treeSync.ts';
import { preparedBatchesFromThread } from './threads/prepareThread.ts';

/** Options of the ingest loop. */
export interface IngestOptions {
  /** First slot when the store is empty or ends before it (default: see sources/startSlot.ts `resolveStartSlot`). */
  startSlot?: number;
  concurrency: number;
  maxBatchBlocks: number;
  signal: AbortSignal;
  log: Logger;
  /** Hears progress (resume point, chain tip, each committed batch); see progress.ts. */
  onEvent?: (e: IngestEvent) => void;
  /**
   * Prepare batches (poll, decode, parse, validate) on a thread of their own (threads/prepareThread.ts)
   * while this thread commits: what that thread needs besides the poll settings. Absent: both halves
   * run here, one after the other.
   */
  prepareThread?: { trees: Config['trees']; logLevel: string };
  /**
   * Look trees the registry does not know up on chain (getAccountInfo, negative cache) before their
   * outputs are skipped (sources/treeSync.ts `TreeResolver`); absent = skip them at once.
   */
  treeLookup?: TreeLookupOptions;
}

/**
 * Runs until `opts.signal` aborts. Store errors are logged and the batch is retried after a pause
 * (the write transaction left nothing behind; an abort cuts the pause short). Throws what ends the
 * loop otherwise: StartSlotUnavailable, a prepare thread's failure, or a block source that ended
 * without an abort.
 */
export async function runIngest(indexer: Indexer, rpc: SolanaRpc, opts: IngestOptions): Promise<void> {
  let resolved: Awaited<ReturnType<typeof resolveStartSlot>>;
  try {
    resolved = await resolveStartSlot(indexer, rpc, opts.startSlot, { signal: opts.signal, log: opts.log });
  } catch (err) {
    if (opts.signal.aborted) return;
    throw err;
  }
  const { start, lastIndexed } = resolved;
  opts.log.info({ start, lastIndexed, rpc: displayUrl(rpc.url) }, 'ingest starting');
  let lastSlot = lastIndexed ?? 0;
  let tip = 0;
  const emit = opts.onEvent ?? (() => {});
  if (lastIndexed !== null) emit({ kind: 'resumed', lastIndexed });
  const onTip = (s: number) => {
    tip = s;
    emit({ kind: 'tip', tip, lag: Math.max(0, tip - lastSlot) });
  };
  const poll = { startSlot: start, lastIndexedSlot: lastIndexed, concurrency: opts.concurrency, maxBatchBlocks: opts.maxBatchBlocks };
  const batches: AsyncIterable<PreparedItem> = opts.prepareThread
    ? preparedBatchesFromThread({ ...poll, rpcUrl: rpc.url, trees: opts.prepareThread.trees, logLevel: opts.prepareThread.logLevel, treeLookup: opts.treeLookup }, { signal: opts.signal, onTip })
    : pollPreparedBatches(rpc, { ...poll, signal: opts.signal, log: opts.log, onTip }, indexer.registry, opts.treeLookup && new TreeResolver(rpc, indexer.registry, { ...opts.treeLookup, log: opts.log }));
  for await (const { batch, prepareSeconds, trees } of batches) {
    if (trees?.length) {
      // Found on chain while preparing (maybe on the prepare thread): this thread's registry and the API's learn them too.
      for (const t of trees) indexer.registry.add(t);
      emit({ kind: 'trees', trees });
    }
    const first = batch.records[0]?.slot;
    let committed: { r: BatchResult; seconds: number } | undefined;
    for (let attempt = 0; !committed; attempt++) {
      try {
        const started = performance.now();
        const r = indexer.commitBatch(batch);
        committed = { r, seconds: prepareSeconds + (performance.now() - started) / 1000 };
      } catch (err) {
        opts.log.error({ err, slots: [first, batch.lastSlot], attempt }, 'indexing a batch failed; nothing was written, retrying');
        await sleep(Math.min(30_000, 500 * 2 ** attempt), opts.signal);
        if (opts.signal.aborted) return;
      }
    }
    const { r, seconds } = committed;
    lastSlot = r.lastSlot ?? lastSlot;
    emit({
      kind: 'batch',
      lastSlot,
      lag: Math.max(0, tip - lastSlot),
      blocks: batch.records.length,
      transactions: r.transactions,
      outputs: r.outputsInserted,
      rejected: r.rejected.length,
      unknownTrees: [...r.unknownTrees],
      ...(r.rootMismatches.size ? { rootMismatches: [...r.rootMismatches] } : {}),
      ...(r.unparsed.length ? { unparsed: countBy(r.unparsed.map((u) => u.program)) } : {}),
      seconds,
      heapUsedBytes: getHeapStatistics().used_heap_size,
    });
    opts.log.debug({ slots: [first, lastSlot], outputs: r.outputsInserted, txs: r.transactions }, 'indexed batch');
    // Give the event loop a turn between batches: a prepare thread that is ahead always has the next
    // batch waiting, and taking it at once would keep this thread's I/O (the API, a stop) waiting.
    await setImmediate();
  }
  if (!opts.signal.aborted) throw new Error(`the block source ended at slot ${lastSlot} without being stopped`);
  opts.log.info({ lastSlot }, 'ingest stopped');
}

/** [value, count] pairs of `values`, in first-seen order. */
function countBy(values: readonly string[]): [string, number][] {
  const m = new Map<string, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return [...m];
}
