/**
 * The one prom-client registry of a Refract process, with every metric it exports at GET /metrics.
 * Worker threads and prover nodes report their numbers with each task result; the main thread
 * observes them here (prom-client has no worker-thread aggregation).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { logLinesDropped } from './logSink.ts';
import { nativeAddon } from './native.ts';

/** Distinct `node` label values of `refract_proofs_by_node_total` before new names count as "other". */
export const MAX_NODE_LABELS = 64;

/** All Refract metrics on one registry. */
export class Metrics {
  readonly registry = new Registry();

  readonly indexerSlot = new Gauge({ name: 'refract_indexer_slot', help: 'Last slot committed to the store', registers: [this.registry] });
  readonly chainTipSlot = new Gauge({ name: 'refract_chain_tip_slot', help: 'Latest slot reported by the Solana RPC (getSlot, confirmed)', registers: [this.registry] });
  readonly indexerLag = new Gauge({ name: 'refract_indexer_lag_slots', help: 'Chain tip slot minus the last indexed slot', registers: [this.registry] });
  readonly chainNodeState = new Gauge({ name: 'refract_chain_node_state', help: 'The Solana node as the daemon sees it: 1 for the current state (ok, unreachable, or store_ahead: the store is past the node\'s tip, a restarted node or another chain), 0 for the others. Checked every few seconds while ingest runs', labelNames: ['state'] as const, registers: [this.registry] });
  readonly storeAheadSlots = new Gauge({ name: 'refract_store_ahead_slots', help: 'Last indexed slot minus the node\'s tip when the store is ahead of the node (a restarted node or another chain), else 0', registers: [this.registry] });
  readonly ingestRunning = new Gauge({ name: 'refract_ingest_running', help: '1 while the ingest loop runs; 0 when ingest is off or the loop stopped with an error (see GET /health ingestError). refract_indexer_lag_slots is not updated once the loop has stopped, so alert on this', registers: [this.registry] });
  readonly ingestBlocks = new Counter({ name: 'refract_ingest_blocks_total', help: 'Blocks committed', registers: [this.registry] });
  readonly ingestTransactions = new Counter({ name: 'refract_ingest_transactions_total', help: 'Transactions stored (new)', registers: [this.registry] });
  readonly ingestOutputs = new Counter({ name: 'refract_ingest_outputs_total', help: 'Compressed outputs inserted (new)', registers: [this.registry] });
  readonly ingestRejected = new Counter({ name: 'refract_ingest_rejected_transactions_total', help: 'Transactions rejected by the decoder or validator (nothing stored)', registers: [this.registry] });
  readonly ingestUnknownTree = new Counter({ name: 'refract_ingest_unknown_tree_total', help: 'Outputs or events skipped because their tree is not in the registry', labelNames: ['tree'], registers: [this.registry] });
  readonly ingestRootMismatch = new Counter({ name: 'refract_ingest_root_mismatch_total', help: "Batch events (BatchAppend/BatchNullify/BatchAddressAppend) refused because the root Refract computed differs from the event's new_root; nothing of them is stored and the tree is held at its last good root", labelNames: ['tree'], registers: [this.registry] });
  readonly ingestUnparsedLight = new Counter({ name: 'refract_ingest_unparsed_light_transactions_total', help: 'Successful transactions that invoke a Light program but yielded no event, by program: light-system, account-compression, obsolete-light-system, obsolete-account-compression (each signature is also logged once at warn)', labelNames: ['program'], registers: [this.registry] });
  readonly ingestThreadHeap = new Gauge({ name: 'refract_ingest_thread_heap_bytes', help: 'V8 heap used by the thread that commits batches (refract start: the ingest thread, or the main thread with ingestThread false) after its last batch; the refract_nodejs_heap_* gauges cover the main thread only, neither covers a prepare thread', registers: [this.registry] });
  readonly backfillPhase = new Gauge({ name: 'refract_backfill_phase', help: '1 for the phase the signature backfill is in (planning, listing, fetching, done), 0 for the others; absent when no backfill ran', labelNames: ['phase'], registers: [this.registry] });
  readonly backfillListed = new Gauge({ name: 'refract_backfill_signatures_listed', help: 'Successful Light transaction signatures the backfill listed (getSignaturesForAddress on the account-compression program)', registers: [this.registry] });
  readonly backfillIndexed = new Gauge({ name: 'refract_backfill_transactions_indexed', help: 'Listed transactions the backfill has fetched and indexed', registers: [this.registry] });
  readonly backfillTargetSlot = new Gauge({ name: 'refract_backfill_target_slot', help: 'The hand-over slot: the backfill indexes up to it, then the live source follows from the next slot', registers: [this.registry] });
  readonly backfillEta = new Gauge({ name: 'refract_backfill_eta_seconds', help: 'Seconds the backfill\'s current phase needs at its current pace (-1: unknown)', registers: [this.registry] });
  readonly backfillRequests = new Counter({ name: 'refract_backfill_requests_total', help: 'HTTP requests the backfill and gap healing sent, by method (a JSON-RPC batch of getTransaction counts once, as getTransaction[batch])', labelNames: ['method'], registers: [this.registry] });
  readonly backfillRateLimited = new Counter({ name: 'refract_backfill_rate_limited_total', help: 'Rate-limited answers (HTTP 429 or a -32xxx rate-limit error) the backfill met; each paused requests (Retry-After) and lowered the request rate', registers: [this.registry] });
  readonly sequenceGaps = new Counter({ name: 'refract_sequence_gaps_total', help: 'Gaps in a tree\'s numbered changes (changelog seq, queue indices, batch sequence numbers) by outcome: held (nothing after it committed), healed (missing transactions found through the tree\'s signature listing), accepted (numbers of rejected transactions, or a tree whose numbers begin before the store\'s history), released (a held gap cleared), observed (a file import indexed past it)', labelNames: ['tree', 'stream', 'outcome'], registers: [this.registry] });
  readonly storeSelfCheck = new Gauge({ name: 'refract_store_self_check_disagreements', help: 'Disagreements the startup self-check found between a tree\'s counters and what the store holds (input/output/address queue elements vs accounts and queue positions, leaves vs indexed elements), by check; any makes GET /health degraded', labelNames: ['check'], registers: [this.registry] });
  readonly sequenceHeld = new Gauge({ name: 'refract_sequence_held', help: '1 while ingest is held at a gap in this tree\'s numbers (GET /health degraded)', labelNames: ['tree'], registers: [this.registry] });
  readonly ingestSource = new Gauge({ name: 'refract_ingest_source', help: '1 for the source the indexer follows the chain with now: grpc (Yellowstone) or rpc (the getBlock poller)', labelNames: ['source'], registers: [this.registry] });
  readonly ingestSourceChanges = new Counter({ name: 'refract_ingest_source_changes_total', help: 'Changes of the live source by the source taken and why: start, recovered (back on gRPC), or the gRPC fault that made it fall back to the RPC poller (connect, replay-unavailable, stream-error, stream-closed, silence, gap, fork, late-transaction, lagging, decode, backlog)', labelNames: ['source', 'reason'], registers: [this.registry] });
  readonly ingestLatency = new Histogram({ name: 'refract_ingest_latency_seconds', help: 'From when a slot was first seen (gRPC: the stream named it; the poller: its getSlot first showed it) to its batch committed, i.e. served; per live source', labelNames: ['source'], buckets: [0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10], registers: [this.registry] });
  readonly ingestBatchSeconds = new Histogram({ name: 'refract_ingest_batch_duration_seconds', help: 'Time spent on one block batch: prepare (parse, validate) plus commit (persist), on whichever threads did them', buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10], registers: [this.registry] });

  readonly rpcDuration = new Histogram({ name: 'refract_rpc_request_duration_seconds', help: 'JSON-RPC request duration by method and HTTP status', labelNames: ['method', 'status'], buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30], registers: [this.registry] });
  readonly minContextWake = new Histogram({ name: 'refract_min_context_slot_wake_seconds', help: 'Requests that waited for their minContextSlot: time from the ingest event announcing the slot\'s commit to the answer', buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5], registers: [this.registry] });
  readonly minContextWaiting = new Gauge({ name: 'refract_min_context_slot_waiting_requests', help: 'Requests waiting now for their minContextSlot to be indexed', registers: [this.registry] });

  readonly proofDuration = new Histogram({ name: 'refract_proof_duration_seconds', help: 'Groth16 proof time (witness + prove) by circuit', labelNames: ['circuit'], buckets: [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2], registers: [this.registry] });
  readonly proofQueueWait = new Histogram({ name: 'refract_proof_queue_wait_seconds', help: 'Time a proof job waited before a worker took it', labelNames: ['circuit'], buckets: [0.01, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6], registers: [this.registry] });
  readonly proofQueueDepth = new Gauge({ name: 'refract_proof_queue_depth', help: 'Proof jobs waiting', registers: [this.registry] });
  readonly proofQueueCapacity = new Gauge({ name: 'refract_proof_queue_capacity', help: 'Bound of refract_proof_queue_depth (--max-queued-proofs): at it, new proofs are refused with "Prover busy"; 0 while this process has no proof queue (external prover, prover off)', registers: [this.registry] });
  readonly proofActive = new Gauge({ name: 'refract_proof_active_jobs', help: 'Proof jobs being proved', registers: [this.registry] });
  readonly proofBatchSize = new Histogram({ name: 'refract_proof_batch_size', help: 'Jobs handed to a worker in one task', buckets: [1, 2, 3, 4, 6, 8, 12, 16], registers: [this.registry] });
  readonly proofErrors = new Counter({ name: 'refract_proof_errors_total', help: 'Proof failures by circuit and type', labelNames: ['circuit', 'type'], registers: [this.registry] });
  readonly proofsTotal = new Counter({ name: 'refract_proofs_total', help: 'Proofs produced and verified (once per proof: a stored or joined BullMQ result is not counted again)', labelNames: ['circuit'], registers: [this.registry] });
  readonly workerMemory = new Gauge({ name: 'refract_prover_worker_heap_bytes', help: 'Heap used by a prover worker thread after its last task', labelNames: ['worker'], registers: [this.registry] });
  readonly proofWitness = new Histogram({ name: 'refract_proof_witness_seconds', help: 'Witness calculation time (wasm) by circuit', labelNames: ['circuit'], buckets: [0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6], registers: [this.registry] });
  readonly proofRequestDuration = new Histogram({ name: 'refract_proof_request_duration_seconds', help: 'Proof request time as the API sees it (queue + witness + prove + verify + transport) by circuit, backend and outcome (ok or the error code)', labelNames: ['circuit', 'backend', 'outcome'], buckets: [0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2, 102.4], registers: [this.registry] });
  readonly proofsByNode = new Counter({ name: 'refract_proofs_by_node_total', help: `Proofs by the node that made them: its REFRACT_NODE_NAME or host name (this process, a prover node), or the external prover URL; names beyond the first ${MAX_NODE_LABELS} count as "other"`, labelNames: ['node'], registers: [this.registry] });
  /** Node names `proofsByNode` has a series for (bounded by MAX_NODE_LABELS). */
  private readonly nodeLabels = new Set<string>();
  /** The native prover's fixed-base MSM tables in this process (one set per circuit, shared by its prover threads), read at scrape time. */
  readonly proverTableBytes = new Gauge({
    name: 'refract_prover_table_bytes',
    help: 'Fixed-base MSM tables of the native prover held by this process (one set per circuit, shared by the prover threads), bytes',
    registers: [this.registry],
    collect() {
      this.set(nativeAddon?.groth16TableSets?.().bytes ?? 0);
    },
  });
  /** JSON log lines the main thread could not write to stderr (src/logSink.ts), read at scrape time. */
  readonly logLinesDropped = new Counter({
    name: 'refract_log_lines_dropped_total',
    help: "JSON log lines this process's main thread dropped instead of writing them to stderr: its reader had gone (EPIPE), or more than 4 MiB waited for a reader that stopped reading",
    registers: [this.registry],
    collect() {
      this.reset();
      this.inc(logLinesDropped());
    },
  });
  readonly proofsOwnCircuit = new Counter({ name: 'refract_proofs_own_circuit_total', help: "Proofs made with Refract's own circuit keys while Light's keys are in use (--own-circuits): Light's on-chain verifier rejects them", labelNames: ['circuit'], registers: [this.registry] });
  readonly lightKeyReady = new Gauge({ name: 'refract_prover_light_key_ready', help: "1 when Light's proving key of a circuit is converted and usable, else 0", labelNames: ['circuit'], registers: [this.registry] });
  readonly proverReady = new Gauge({ name: 'refract_prover_circuit_ready', help: '1 when the proving keys of a circuit are ready in this process, else 0', labelNames: ['circuit'], registers: [this.registry] });

  /** Where `refract_proof_queue_depth` / `refract_proof_active_jobs` / worker heap gauges read from at scrape time. */
  private proofStatsSource: (() => ProofStatsSnapshot | Promise<ProofStatsSnapshot>) | undefined;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'refract_' });
    // Queue depth and active jobs are read when scraped (BullMQ counts live in Redis).
    const self = this;
    const snapshot = async () => {
      if (!self.proofStatsSource) return undefined;
      try {
        return await self.proofStatsSource();
      } catch {
        return undefined;
      }
    };
    // prom-client calls each gauge's collect() on scrape; one shared read per scrape is enough.
    let pending: Promise<ProofStatsSnapshot | undefined> | undefined;
    const shared = () => (pending ??= snapshot().finally(() => setTimeout(() => (pending = undefined), 50)));
    Object.assign(this.proofQueueDepth, {
      async collect(this: Gauge) {
        const s = await shared();
        if (s) this.set(s.waiting);
      },
    });
    Object.assign(this.proofActive, {
      async collect(this: Gauge) {
        const s = await shared();
        if (s) this.set(s.active);
      },
    });
    Object.assign(this.workerMemory, {
      async collect(this: Gauge) {
        const s = await shared();
        if (!s?.threads) return;
        this.reset();
        for (const [id, heap] of Object.entries(s.threads)) this.set({ worker: id }, heap);
      },
    });
  }

  /**
   * Counts one proof in `refract_proofs_by_node_total` under `nodeName` (a prover's stable name, see
   * NODE_NAME). The label set is bounded: once MAX_NODE_LABELS names have series, new names count as "other".
   */
  countProofByNode(nodeName: string): void {
    let node = nodeName;
    if (!this.nodeLabels.has(node)) {
      if (this.nodeLabels.size >= MAX_NODE_LABELS) node = 'other';
      else this.nodeLabels.add(node);
    }
    this.proofsByNode.inc({ node });
  }

  /**
   * Sets where the proof queue gauges read from (called on every scrape; errors leave the last values).
   * @param fn returns waiting / active jobs and optionally heap bytes per prover thread
   */
  setProofStatsSource(fn: (() => ProofStatsSnapshot | Promise<ProofStatsSnapshot>) | undefined): void {
    this.proofStatsSource = fn;
  }
}

/** What the proof queue gauges show. */
export interface ProofStatsSnapshot {
  /** Jobs waiting for a prover (in-process queue, or BullMQ wait + delayed + prioritized). */
  waiting: number;
  /** Jobs being proved now. */
  active: number;
  /** Heap + external bytes per local prover thread id. */
  threads?: Record<string, number>;
}
