/**
 * The ingest loop of `refract start`: find where to start (startSlot.ts), poll the Solana
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
import { RequestGovernor } from '../solana/requestGovernor.ts';
import type { SolanaRpc } from '../solana/rpcClient.ts';
import { HISTORY_META } from '../state/sequence.ts';
import type { WriteView } from '../store/store.ts';
import type { IngestEvent } from './progress.ts';
import type { BatchResult, Indexer } from './indexer.ts';
import { SequenceGuard } from './guard/guard.ts';
import { type PreparedBatch, prepareBatch } from './prepareBatch.ts';
import { type PreparedItem, pollPreparedBatches } from './preparedBatches.ts';
import { BACKFILL_META, type BackfillOptions, type BackfillState, fetchChunks, listSignatures, planBackfill, progressOf } from './sources/backfill.ts';
import type { LiveSourceName, SourceChange } from './sources/live.ts';
import { sleep } from './sleep.ts';
import { resolveStartSlot } from './startSlot.ts';
import { type TreeLookupOptions, TreeResolver } from './treeSync.ts';
import { preparedBatchesFromThread } from './threads/prepareThread.ts';

/** Options of the ingest loop. */
export interface IngestOptions {
  /** First slot when the store is empty or ends before it (default: see startSlot.ts `resolveStartSlot`). */
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
   * outputs are skipped (treeSync.ts `TreeResolver`); absent = skip them at once.
   */
  treeLookup?: TreeLookupOptions;
  /** Signature backfill when the store is far behind the tip (sources/backfill.ts); absent = never. */
  backfill?: BackfillSettings;
  /** Follow the chain over Yellowstone gRPC, the RPC poller as fallback (sources/live.ts); absent = the poller alone. */
  grpc?: { url: string; xToken?: string };
  /**
   * Check every batch against the trees' numbered streams before committing it (state/sequence.ts):
   * a gap holds ingest until the tree's own signature listing heals it (default true).
   */
  sequenceCheck?: boolean;
}

/** Backfill settings of `refract start` (config `backfill*`). */
export interface BackfillSettings {
  /** Backfill when the tip is at least this many slots past where indexing would start (0: never). */
  thresholdSlots: number;
  /** Requests per second at most (0: no cap). */
  rps: number;
  /** Requests in flight at most. */
  concurrency: number;
  /** getTransaction per JSON-RPC batch (1: no batches). */
  batchSize: number;
  /** `rps` counts each call of a batch (providers that bill per call), not each HTTP request. */
  billPerCall?: boolean;
}

/** Transactions per backfill chunk (one write transaction), and chunks fetched ahead. */
const BACKFILL_CHUNK = 1000;
const BACKFILL_PREFETCH = 3;

/**
 * Runs until `opts.signal` aborts. Store errors are logged and the batch is retried after a pause
 * (the write transaction left nothing behind; an abort cuts the pause short). Throws what ends the
 * loop otherwise: StartSlotUnavailable, a prepare thread's failure, or a block source that ended
 * without an abort.
 */
export async function runIngest(indexer: Indexer, rpc: SolanaRpc, opts: IngestOptions): Promise<void> {
  const resolve = async () => {
    try {
      return await resolveStartSlot(indexer, rpc, opts.startSlot, { signal: opts.signal, log: opts.log });
    } catch (err) {
      if (opts.signal.aborted) return null;
      throw err;
    }
  };
  let resolved = await resolve();
  if (!resolved) return;
  if (resolved.history) {
    const history = resolved.history;
    indexer.store.write((w) => w.putMetaText(HISTORY_META, JSON.stringify(history)));
    opts.log.info(history, history.complete ? 'an empty store: its history begins with the cluster\'s, so every batched tree\'s numbers are checked from their first' : 'an empty store: its history begins part-way, so each tree\'s first numbers are taken as given');
  }
  const emit = opts.onEvent ?? (() => {});
  const gov = new RequestGovernor({
    rps: opts.backfill?.rps,
    concurrency: opts.backfill?.concurrency ?? 8,
    billPerCall: opts.backfill?.billPerCall,
    onRateLimited: (pauseMs, rps) => opts.log.warn({ pauseMs, rps }, 'the node rate-limited a request: pausing and slowing down'),
  });
  const guard = new SequenceGuard({ indexer, rpc, gov, opts, emit, commit: (batch, prepareSeconds, extra) => commitWithRetry(ctx, batch, prepareSeconds, extra) });
  const ctx: Ctx = { indexer, rpc, gov, opts, emit, lastSlot: resolved.lastIndexed ?? 0, tip: 0, arrival: null, guard };
  // A stored backfill resumes whatever the threshold is now (planBackfill); a new one needs a threshold > 0.
  if (opts.backfill) {
    const state = await withNodeRetry(ctx, 'planning the backfill', () => planBackfill(indexer.store, rpc, gov, resolved!.start, { thresholdSlots: opts.backfill!.thresholdSlots, signal: opts.signal, log: opts.log }));
    if (opts.signal.aborted) return;
    if (state) {
      await runBackfill(ctx, state);
      if (opts.signal.aborted) return;
      resolved = await resolve();
      if (!resolved) return;
    }
  }
  const { start, lastIndexed } = resolved;
  opts.log.info({ start, lastIndexed, rpc: displayUrl(rpc.url) }, 'ingest starting');
  ctx.lastSlot = lastIndexed ?? ctx.lastSlot;
  if (lastIndexed !== null) emit({ kind: 'resumed', lastIndexed });
  const onTip = (s: number) => {
    ctx.tip = s;
    emit({ kind: 'tip', tip: s, lag: Math.max(0, s - ctx.lastSlot) });
  };
  const poll = { startSlot: start, lastIndexedSlot: lastIndexed, concurrency: opts.concurrency, maxBatchBlocks: opts.maxBatchBlocks };
  const onSourceChange = (change: SourceChange) => {
    const level = change.reason === 'start' || change.reason === 'recovered' ? 'info' : 'warn';
    opts.log[level]({ source: change.source, previous: change.previous, reason: change.reason, detail: change.detail, lastReleasedSlot: change.lastReleasedSlot }, change.source === 'grpc' ? 'following the chain over gRPC' : 'following the chain with the RPC poller');
    emit({ kind: 'source', change });
  };
  const live = opts.grpc ? { grpcUrl: opts.grpc.url, xToken: opts.grpc.xToken, onSourceChange } : undefined;
  if (!opts.grpc) emit({ kind: 'source', change: { source: 'rpc', previous: null, reason: 'start', lastReleasedSlot: lastIndexed } });
  const batches: AsyncIterable<PreparedItem> = opts.prepareThread
    ? preparedBatchesFromThread({ ...poll, rpcUrl: rpc.url, trees: opts.prepareThread.trees, logLevel: opts.prepareThread.logLevel, treeLookup: opts.treeLookup, ...(opts.grpc ? { grpc: opts.grpc } : {}) }, { signal: opts.signal, onTip, onSourceChange })
    : pollPreparedBatches(rpc, { ...poll, signal: opts.signal, log: opts.log, onTip }, indexer.registry, opts.treeLookup && new TreeResolver(rpc, indexer.registry, { ...opts.treeLookup, log: opts.log }), live);
  for await (const { batch, prepareSeconds, trees, source, seenAt } of batches) {
    if (trees?.length) {
      // Found on chain while preparing (maybe on the prepare thread): this thread's registry and the API's learn them too.
      for (const t of trees) indexer.registry.add(t);
      emit({ kind: 'trees', trees });
    }
    ctx.arrival = { source: source ?? 'rpc', seenAt };
    await ctx.guard.commit(batch, prepareSeconds);
    ctx.arrival = null;
    if (opts.signal.aborted) break;
    // Give the event loop a turn between batches: a prepare thread that is ahead always has the next
    // batch waiting, and taking it at once would keep this thread's I/O (the API, a stop) waiting.
    await setImmediate();
  }
  if (!opts.signal.aborted) throw new Error(`the block source ended at slot ${ctx.lastSlot} without being stopped`);
  opts.log.info({ lastSlot: ctx.lastSlot }, 'ingest stopped');
}

/** What the loop's steps share. */
interface Ctx {
  indexer: Indexer;
  rpc: SolanaRpc;
  gov: RequestGovernor;
  opts: IngestOptions;
  emit: (e: IngestEvent) => void;
  /** The store's last slot as this loop committed it. */
  lastSlot: number;
  tip: number;
  /** Checks and commits every batch (guard/guard.ts). */
  guard: SequenceGuard;
  /** The live source of the batch being committed and when its last slot was first seen (Unix ms). */
  arrival: { source: LiveSourceName; seenAt?: number } | null;
}

/** Runs a node request until it succeeds (logged, paused 2 s between tries) or the loop stops (then undefined). */
async function withNodeRetry<T>(ctx: Ctx, what: string, fn: () => Promise<T>): Promise<T | undefined> {
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (ctx.opts.signal.aborted) return undefined;
      ctx.opts.log.warn({ err: (err as Error).message }, `${what} failed; retrying in 2 s`);
      await sleep(2000, ctx.opts.signal);
      if (ctx.opts.signal.aborted) return undefined;
    }
  }
}

/** The backfill: list (or resume listing), then fetch and commit chunk by chunk, then hand over (sources/backfill.ts). */
async function runBackfill(ctx: Ctx, state: BackfillState): Promise<void> {
  const { indexer, rpc, gov, opts } = ctx;
  const settings = opts.backfill!;
  const report = (p: ReturnType<typeof progressOf>) => ctx.emit({ kind: 'backfill', progress: p, requests: { ...gov.stats.requests }, rateLimited: gov.stats.rateLimited });
  const bopts: BackfillOptions = {
    thresholdSlots: settings.thresholdSlots,
    batchSize: settings.batchSize,
    chunkTransactions: BACKFILL_CHUNK,
    prefetchChunks: BACKFILL_PREFETCH,
    signal: opts.signal,
    log: opts.log,
    onProgress: report,
  };
  ctx.tip = state.target.slot;
  ctx.guard.beginBackfill(state.afterSlot);
  report(progressOf(state, state.phase));
  opts.log.info({ phase: state.phase, targetSlot: state.target.slot, afterSlot: state.afterSlot, listed: state.listed, indexed: state.indexed }, 'backfill running');
  try {
    if (state.phase === 'listing') await listSignatures(indexer.store, rpc, gov, state, bopts);
    if (opts.signal.aborted) return;
    report(progressOf(state, 'fetching'));
    const remaining = state.listed - state.indexed;
    const began = performance.now();
    const indexedAtStart = state.indexed;
    opts.log.info({ listed: state.listed, failed: state.failed, remaining }, 'backfill listing done: fetching the Light transactions');
    for await (const chunk of fetchChunks(indexer.store, rpc, gov, state, bopts)) {
      if (chunk.handOver && opts.sequenceCheck !== false) await ctx.guard.tailCheck(chunk.handOver.slot);
      if (opts.signal.aborted) return;
      const started = performance.now();
      const batch = prepareBatch(chunk.blocks, indexer.registry);
      const indexedAfter = state.indexed + chunk.count;
      const extra = (w: WriteView) => {
        if (chunk.throughSlot !== null) w.deleteBackfillSignaturesThrough(chunk.throughSlot);
        if (chunk.handOver) {
          w.putBlock(chunk.handOver);
          w.putMetaText(BACKFILL_META, undefined);
        } else w.putMetaText(BACKFILL_META, JSON.stringify({ ...state, indexed: indexedAfter }));
      };
      await ctx.guard.commit(batch, (performance.now() - started) / 1000, extra);
      if (opts.signal.aborted) return;
      state.indexed = indexedAfter;
      opts.log.debug({ throughSlot: chunk.throughSlot, indexed: state.indexed, listed: state.listed }, 'backfill chunk committed');
      if (chunk.handOver) {
        ctx.lastSlot = Math.max(ctx.lastSlot, chunk.handOver.slot);
        opts.log.info({ targetSlot: chunk.handOver.slot, indexed: state.indexed, seconds: Math.round((Date.now() - state.startedAt) / 1000), requests: gov.stats.requests }, 'backfill done: following the chain from the hand-over block');
        report(progressOf(state, 'done', 0));
        ctx.emit({ kind: 'batch', lastSlot: ctx.lastSlot, lag: 0, blocks: 0, transactions: 0, outputs: 0, rejected: 0, unknownTrees: [], seconds: 0, heapUsedBytes: getHeapStatistics().used_heap_size });
        return;
      }
      const rate = (state.indexed - indexedAtStart) / Math.max(0.001, (performance.now() - began) / 1000);
      report(progressOf(state, 'fetching', rate > 0 ? (state.listed - state.indexed) / rate : null));
    }
  } catch (err) {
    if (opts.signal.aborted) return;
    throw err;
  }
}

/**
 * Commits `batch` and reports it (a `batch` event). A store failure wrote nothing: it is logged and
 * the batch committed again after a pause, until it succeeds or the loop stops.
 */
async function commitWithRetry(ctx: Ctx, batch: PreparedBatch, prepareSeconds: number, extra?: (w: WriteView) => void): Promise<void> {
  const { indexer, opts, emit } = ctx;
  const first = batch.records[0]?.slot;
  let committed: { r: BatchResult; seconds: number } | undefined;
  for (let attempt = 0; !committed; attempt++) {
    try {
      const started = performance.now();
      const r = indexer.commitBatch(batch, extra);
      committed = { r, seconds: prepareSeconds + (performance.now() - started) / 1000 };
    } catch (err) {
      opts.log.error({ err, slots: [first, batch.lastSlot], attempt }, 'indexing a batch failed; nothing was written, retrying');
      await sleep(Math.min(30_000, 500 * 2 ** attempt), opts.signal);
      if (opts.signal.aborted) return;
    }
  }
  const { r, seconds } = committed;
  ctx.lastSlot = Math.max(ctx.lastSlot, r.lastSlot ?? ctx.lastSlot);
  emit({
    kind: 'batch',
    lastSlot: ctx.lastSlot,
    lag: Math.max(0, ctx.tip - ctx.lastSlot),
    blocks: batch.records.length,
    transactions: r.transactions,
    outputs: r.outputsInserted,
    rejected: r.rejected.length,
    unknownTrees: [...r.unknownTrees],
    ...(r.rootMismatches.size ? { rootMismatches: [...r.rootMismatches] } : {}),
    ...(r.unparsed.length ? { unparsed: countBy(r.unparsed.map((u) => u.program)) } : {}),
    ...(r.sequenceGaps.length ? { sequenceGaps: r.sequenceGaps.length } : {}),
    ...(ctx.arrival ? { source: ctx.arrival.source, ...(ctx.arrival.seenAt !== undefined ? { latencyMs: Math.max(0, Date.now() - ctx.arrival.seenAt) } : {}) } : {}),
    seconds,
    heapUsedBytes: getHeapStatistics().used_heap_size,
  });
  opts.log.debug({ slots: [first, ctx.lastSlot], outputs: r.outputsInserted, txs: r.transactions }, 'indexed batch');
}

/** [value, count] pairs of `values`, in first-seen order. */
function countBy(values: readonly string[]): [string, number][] {
  const m = new Map<string, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return [...m];
}
