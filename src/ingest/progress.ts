/**
 * What the ingest loop (loop.ts `runIngest`) reports as it goes, as plain data: it crosses from
 * the ingest thread (workers/ingest.ts) to the main thread, which owns the Prometheus registry.
 * `recordIngestEvent` is the one place that turns these events into metrics.
 */
import type { TreeEntry } from '../config/trees.ts';
import type { Metrics } from '../metrics.ts';
import type { BackfillProgress } from './sources/backfill.ts';
import type { LiveSourceName, SourceChange } from './sources/live.ts';

/** A gap in a tree's numbered stream as events carry it (state/sequence.ts SequenceGap, numbers as strings). */
export interface GapReport {
  tree: string;
  stream: string;
  expected: string;
  got: string;
  afterSlot: number;
  slot: number;
  signature: string;
}

/** One progress report of the ingest loop (structured-clone safe). */
export type IngestEvent =
  /** Polling resumes after `lastIndexed`, the store's last slot taken from a Solana node. */
  | { kind: 'resumed'; lastIndexed: number }
  /** Trees met during ingest and found on chain (getAccountInfo): the API's registry adds them. */
  | { kind: 'trees'; trees: TreeEntry[] }
  /** The node's confirmed slot (getSlot); `lag` = tip − last indexed slot, ≥ 0. */
  | { kind: 'tip'; tip: number; lag: number }
  /** A block batch committed in one write transaction. */
  | {
      kind: 'batch';
      /** Last slot of the batch (the store's last slot now). */
      lastSlot: number;
      /** Chain tip − lastSlot, ≥ 0 (0 before the first getSlot). */
      lag: number;
      blocks: number;
      /** Transactions stored (new ones). */
      transactions: number;
      /** Compressed outputs inserted (new ones). */
      outputs: number;
      /** Transactions rejected (nothing of them stored). */
      rejected: number;
      /** Outputs/events skipped per unknown tree: [base58 tree, count]. */
      unknownTrees: [string, number][];
      /** Successful Light transactions without an event per program label: [label, count] (absent: none). */
      unparsed?: [string, number][];
      /** Batch events refused for a root mismatch per tree: [base58 tree, count] (absent: none). */
      rootMismatches?: [string, number][];
      /**
       * Time spent on the batch, seconds: preparing it (parse, validate; on the prepare thread when
       * there is one) plus committing it. Not the time it waited between the two.
       */
      seconds: number;
      /** V8 heap used by the thread that committed it, after the batch (bytes). */
      heapUsedBytes: number;
      /** Gaps in trees' numbers indexed past (sources the loop does not check; absent: none). */
      sequenceGaps?: number;
      /** The live source that gave the batch (absent: a backfill or heal batch). */
      source?: LiveSourceName;
      /** ms from when the batch's last slot was first seen (gRPC: the stream named it; the poller: its getSlot first showed it) to its commit. */
      latencyMs?: number;
    }
  /** The live source changed (gRPC ↔ RPC poller; sources/live.ts), or started. */
  | { kind: 'source'; change: SourceChange }
  /** The signature backfill's progress (sources/backfill.ts), and the requests it has sent so far. */
  | { kind: 'backfill'; progress: BackfillProgress; requests: Record<string, number>; rateLimited: number }
  /**
   * A gap in a tree's numbers (state/sequence.ts), and what became of it: `held` (nothing after it is
   * committed until the missing transactions are found; asked again), `healed` (`fetched` missing
   * transactions found through the tree's own signature listing and committed), `accepted` (the
   * numbers belong to transactions the store rejected: indexed past, logged), `released` (a held gap
   * healed or accepted).
   */
  | { kind: 'sequence'; outcome: 'held' | 'healed' | 'accepted' | 'released'; gap: GapReport; fetched?: number };

/** Cumulative request counts already turned into counter increments, per registry (the events carry totals). */
const backfillRequestsSeen = new WeakMap<Metrics, Map<string, number>>();
const backfillRateLimitedSeen = new WeakMap<Metrics, number>();

/**
 * Applies `e` to the ingest metrics: `refract_indexer_slot`, `refract_chain_tip_slot`,
 * `refract_indexer_lag_slots`, the `refract_ingest_*_total` counters and
 * `refract_ingest_batch_duration_seconds` and `refract_ingest_thread_heap_bytes`.
 */
export function recordIngestEvent(m: Metrics, e: IngestEvent): void {
  switch (e.kind) {
    case 'resumed':
      m.indexerSlot.set(e.lastIndexed);
      break;
    case 'tip':
      m.chainTipSlot.set(e.tip);
      m.indexerLag.set(e.lag);
      break;
    case 'batch':
      m.indexerSlot.set(e.lastSlot);
      m.indexerLag.set(e.lag);
      m.ingestBlocks.inc(e.blocks);
      m.ingestTransactions.inc(e.transactions);
      m.ingestOutputs.inc(e.outputs);
      m.ingestRejected.inc(e.rejected);
      for (const [tree, n] of e.unknownTrees) m.ingestUnknownTree.inc({ tree }, n);
      for (const [tree, n] of e.rootMismatches ?? []) m.ingestRootMismatch.inc({ tree }, n);
      for (const [program, n] of e.unparsed ?? []) m.ingestUnparsedLight.inc({ program }, n);
      m.ingestBatchSeconds.observe(e.seconds);
      m.ingestThreadHeap.set(e.heapUsedBytes);
      break;
    case 'trees':
      break; // no metric: start.ts adds them to the API's tree registry
    case 'backfill': {
      const p = e.progress;
      for (const phase of ['planning', 'listing', 'fetching', 'done'] as const) m.backfillPhase.set({ phase }, phase === p.phase ? 1 : 0);
      m.backfillListed.set(p.listed);
      m.backfillIndexed.set(p.indexed);
      m.backfillTargetSlot.set(p.targetSlot);
      m.backfillEta.set(p.etaSeconds ?? -1);
      for (const [method, n] of Object.entries(e.requests)) {
        const seen = backfillRequestsSeen.get(m) ?? new Map<string, number>();
        backfillRequestsSeen.set(m, seen);
        const delta = n - (seen.get(method) ?? 0);
        if (delta > 0) m.backfillRequests.inc({ method }, delta);
        seen.set(method, n);
      }
      const rl = e.rateLimited - (backfillRateLimitedSeen.get(m) ?? 0);
      if (rl > 0) m.backfillRateLimited.inc(rl);
      backfillRateLimitedSeen.set(m, e.rateLimited);
      break;
    }
    case 'source':
      for (const s of ['grpc', 'rpc'] as const) m.ingestSource.set({ source: s }, s === e.change.source ? 1 : 0);
      m.ingestSourceChanges.inc({ source: e.change.source, reason: e.change.reason });
      break;
    case 'sequence':
      m.sequenceGaps.inc({ tree: e.gap.tree, stream: e.gap.stream, outcome: e.outcome });
      if (e.outcome === 'held') m.sequenceHeld.set({ tree: e.gap.tree }, 1);
      if (e.outcome === 'released') m.sequenceHeld.set({ tree: e.gap.tree }, 0);
      break;
  }
  if (e.kind === 'batch' && e.source && e.latencyMs !== undefined) m.ingestLatency.observe({ source: e.source }, e.latencyMs / 1000);
  if (e.kind === 'batch' && e.sequenceGaps) m.sequenceGaps.inc({ tree: '', stream: '', outcome: 'observed' }, e.sequenceGaps);
}
