/**
 * `refract start`: indexer (RPC poller), JSON-RPC API and prover in one process, on LMDB.
 * The indexer runs on its own worker thread (src/ingest/threads/ingestThread.ts; `ingestThread: false` keeps
 * it on the main thread), so indexing a batch never holds up API requests.
 * SIGTERM/SIGINT: stop polling, finish the current batch, drain proofs, close the server and LMDB.
 *
 * Prover (src/prover/run/runtime.ts): getValidityProof(V2) and the Light-compatible `POST /prove` are
 * served by a local Piscina pool, a BullMQ queue (`redisUrl`) or an external prover (`proverUrl`).
 * Missing proving keys are built in the background by a `refract setup` child process while reads
 * are served; GET /health shows per-circuit readiness under `prover`.
 */
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type Config, grpcXToken } from '../config/config.ts';
import type { IngestEvent } from '../ingest/progress.ts';
import { type GapReport, recordIngestEvent } from '../ingest/progress.ts';
import { BackfillView } from './backfillProgress.ts';
import { Indexer } from '../ingest/indexer.ts';
import { type IngestThread, startIngestThread } from '../ingest/threads/ingestThread.ts';
import { runIngest } from '../ingest/loop.ts';
import { syncTreeRegistry } from '../ingest/treeSync.ts';
import { createLogger } from '../log.ts';
import { poseidonInfo } from '../merkle/poseidon.ts';
import { Metrics } from '../metrics.ts';
import { LmdbDataSource } from '../rpc/lmdbDataSource.ts';
import { buildServer } from '../rpc/http/server.ts';
import type { RpcContext } from '../rpc/context.ts';
import { SlotWatcher } from '../rpc/slotWatcher.ts';
import { SolanaRpc } from '../solana/rpcClient.ts';
import { selfCheck } from '../state/selfCheck.ts';
import { Store } from '../store/store.ts';
import type { GeyserServer } from '../sim/geyser.ts';
import type { Simulator } from '../sim/simulator.ts';
import { registerProveRoute } from '../rpc/http/proveRoute.ts';
import { registerSnapshotRoute } from '../rpc/http/snapshotRoute.ts';
import { recordGenesisHash, seedFromSnapshot } from './snapshot.ts';
import { ProverRuntime } from '../prover/run/runtime.ts';
import { RefractValidityProver } from '../rpc/validityProver.ts';
import { displayUrl } from '../displayUrl.ts';

/** True when a JSON-RPC `getHealth` at `url` answers within 1 s. */
async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"getHealth"}', signal: AbortSignal.timeout(1000) });
    return res.ok;
  } catch {
    return false;
  }
}

/** The URL a user on this machine reaches the API at: the bound host, or 127.0.0.1 for a wildcard bind. */
export function apiUrl(host: string, port: number): string {
  const h = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${h.includes(':') ? `[${h}]` : h}:${port}`;
}

/**
 * Opens the LMDB store at `db`; an error of the file system (permission, read-only, missing parent, no
 * space) names the directory, which lmdb-js leaves out (`Permission denied: Attempting to setup locks`).
 */
function openStore(db: string, writemap: boolean): Store {
  try {
    return new Store({ path: db, writemap });
  } catch (e) {
    throw new Error(`cannot open the store at ${path.resolve(db)} (--db / REFRACT_DB): ${(e as Error).message}`, { cause: e });
  }
}

/** The Solana node's state as the daemon sees it. */
export type NodeState = 'ok' | 'unreachable' | 'store_ahead';

/**
 * Watches the Solana node for `refract start`: every `intervalMs` a getSlot. `unreachable` when it
 * fails; `store_ahead` when the store's last slot is more than `maxLag` slots past the node's tip (a
 * node restarted from an earlier slot, e.g. a local validator or the simulator started again, or a
 * node of another chain); else `ok`. Each change is logged once (warn, with both slots; back to ok:
 * info) and shown by `refract_chain_node_state` / `refract_store_ahead_slots`, GET /health `chain`
 * and GET /readiness (503 while not ok).
 */
class ChainWatch {
  private state: { state: NodeState; nodeSlot: number | null; indexedSlot: number | null; detail?: string; since: string } | null = null;
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly rpc: SolanaRpc,
    private readonly indexedSlot: () => number | null,
    private readonly maxLag: number,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly intervalMs = 3000,
  ) {}

  /** Checks now, then every `intervalMs`. */
  start(): void {
    void this.check();
    this.timer = setInterval(() => void this.check(), this.intervalMs);
    this.timer.unref();
  }

  /** Stops checking. */
  stop(): void {
    clearInterval(this.timer);
  }

  /** What GET /health shows (null before the first check). */
  view(): Record<string, unknown> | null {
    return this.state && { ...this.state, ...(this.state.state === 'ok' ? {} : { reason: this.notReady() }) };
  }

  /** Why the daemon is not ready because of the node, or null. */
  notReady(): string | null {
    const s = this.state;
    if (!s || s.state === 'ok') return null;
    if (s.state === 'unreachable') return `the Solana node is unreachable (${s.detail}); indexed slot ${s.indexedSlot ?? 'none'}`;
    return `the store (indexed slot ${s.indexedSlot}) is ahead of the Solana node's tip (slot ${s.nodeSlot}) by ${s.indexedSlot! - s.nodeSlot!} slots: the node restarted from an earlier slot, or it is another chain; indexing waits until the node passes slot ${s.indexedSlot}`;
  }

  private async check(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const indexedSlot = this.indexedSlot();
      let next: NonNullable<ChainWatch['state']>;
      try {
        const nodeSlot = Number(await this.rpc.getSlot());
        const state: NodeState = indexedSlot !== null && indexedSlot - nodeSlot > this.maxLag ? 'store_ahead' : 'ok';
        next = { state, nodeSlot, indexedSlot, since: new Date().toISOString() };
      } catch (e) {
        next = { state: 'unreachable', nodeSlot: null, indexedSlot, detail: (e as Error).message, since: new Date().toISOString() };
      }
      for (const st of ['ok', 'unreachable', 'store_ahead'] as const) this.metrics.chainNodeState.set({ state: st }, st === next.state ? 1 : 0);
      this.metrics.storeAheadSlots.set(next.state === 'store_ahead' ? next.indexedSlot! - next.nodeSlot! : 0);
      const prev = this.state;
      if (prev?.state === next.state) next.since = prev.since;
      this.state = next;
      if (prev?.state === next.state || (!prev && next.state === 'ok')) return;
      if (next.state === 'ok') this.log.info({ nodeSlot: next.nodeSlot, indexedSlot: next.indexedSlot }, `the Solana node is back: tip slot ${next.nodeSlot}, indexed slot ${next.indexedSlot ?? 'none'}; ready`);
      else this.log.warn({ state: next.state, nodeSlot: next.nodeSlot, indexedSlot: next.indexedSlot }, `${this.notReady()}; /health says degraded and /readiness answers 503 until this changes`);
    } finally {
      this.running = false;
    }
  }
}

/** A running daemon; `stop()` shuts it down gracefully. */
export interface Daemon {
  app: FastifyInstance;
  store: Store;
  metrics: Metrics;
  prover: ProverRuntime;
  /** The ingest thread (null when ingest is off or runs on the main thread: `ingestThread: false`). */
  ingestThread: IngestThread | null;
  stop(): Promise<void>;
}

/** Prover settings of `startDaemon` that are command-line flags rather than config keys. */
export interface DaemonProverOptions {
  /** With `redisUrl`: also prove in this process (default true; `--no-local-prover`). */
  localWorker?: boolean;
  /** Per-request proof timeout, ms (default 60 000). */
  timeoutMs?: number;
  /** Bound of the in-process proof queue (default 64). */
  maxPending?: number;
  /** BullMQ queue name (default `refract-proofs`). */
  queueName?: string;
  /** Circuits served (default all); the background setup builds only these. */
  circuits?: readonly string[];
  /** Build missing keys in the background (default true). */
  autoSetup?: boolean;
  /** Extra arguments for the background `refract setup` (tests). */
  setupArgs?: string[];
  /** Circuits to preload into the pool once ready. */
  warm?: readonly string[];
  /** API key for the external prover (`--prover-url`). */
  proverApiKey?: string;
}

/** Options of `startDaemon` besides the config. */
export interface DaemonOptions {
  /** Start the built-in simulator when nothing answers at the default Solana RPC URL. */
  simulatorFallback?: boolean;
  prover?: DaemonProverOptions;
}

/**
 * Starts the daemon with `config`. Resolves once the HTTP server listens (ingest runs in the
 * background). Throws when the store cannot be opened or the port cannot be bound.
 */
export async function startDaemon(config: Config, opts: DaemonOptions = {}): Promise<Daemon> {
  const log = createLogger('refract', config.logLevel);
  let simulator: Simulator | null = null;
  let geyser: GeyserServer | null = null;
  /** Why the ingest loop stopped (shown by GET /health), once it has. */
  let ingestError: string | undefined;
  /** Batch events refused for a root mismatch since start, per tree (GET /health: degraded). */
  const rootMismatches = new Map<string, number>();
  /** The signature backfill's progress (GET /health `backfill`, the progress bar). */
  // Progress lines in the log (every 10 s and at each phase), not a bar the log lines would tear.
  const backfillView = new BackfillView(false, (text, progress) => log.info({ backfill: { phase: progress.phase, listed: progress.listed, indexed: progress.indexed, etaSeconds: progress.etaSeconds } }, text));
  /** The gap in a tree's numbers ingest is held at, if any (GET /health: degraded). */
  let sequenceHeld: GapReport | null = null;
  /** Which live source the indexer follows (GET /health `source`): grpc or rpc, since when, its fallbacks. */
  let liveSource: { source: string | null; since?: string; fallbacks: number; lastFallback?: { reason: string; detail?: string; slot: number | null; at: string } } = { source: null, fallbacks: 0 };
  if (opts.simulatorFallback && config.ingest && !(await answers(config.rpcUrl))) {
    const port = Number(new URL(config.rpcUrl).port || 8899);
    log.warn({ rpcUrl: config.rpcUrl }, 'no Solana RPC answers at the default URL: starting the built-in simulator there (generated Light transactions; use --rpc-url to index a real node)');
    // the simulator and its gRPC server (with @grpc/grpc-js) are loaded only when they start
    const [{ startSimulator }, { DEFAULT_SIM_V2_WEIGHT }, { startGeyserServer }] = await Promise.all([import('../sim/simulator.ts'), import('../sim/generator.ts'), import('../sim/geyser.ts')]);
    simulator = await startSimulator({ port, log, v2Weight: DEFAULT_SIM_V2_WEIGHT });
    // …and its Yellowstone gRPC server, which the indexer follows (the RPC poller as fallback): the default path is the fast one.
    if (!config.grpcUrl) {
      geyser = await startGeyserServer({ port: 0, host: '127.0.0.1', source: simulator, log });
      log.info({ grpcUrl: geyser.url }, 'the built-in simulator serves Yellowstone gRPC: following it there');
    }
  }
  const grpcUrl = config.grpcUrl ?? geyser?.url;
  const closeSimulator = async () => {
    await geyser?.close();
    await simulator?.close();
  };
  const metrics = new Metrics();
  const solana = new SolanaRpc(config.rpcUrl);
  // `--snapshot`: seed the empty store first (checked against the node; refused → nothing changed).
  if (config.snapshot) await seedFromSnapshot({ source: config.snapshot, db: config.db, solana: config.ingest ? solana : null, log }).catch(async (e: unknown) => {
    await closeSimulator();
    throw e;
  });
  // Trees from the chain over config/trees.json + config `trees` (src/ingest/treeSync.ts); the config alone without ingest or with `treeSync: false`.
  const synced = await syncTreeRegistry(config.ingest && config.treeSync ? solana : null, config.trees, { owner: config.treeOwner, log });
  const { registry, trees } = synced;
  const treeLookup = config.ingest && config.treeSync ? { owner: config.treeOwner, negativeTtlMs: config.treeLookupTtlSeconds * 1000 } : undefined;
  const store = openStore(config.db, config.lmdbWritemap);
  // The cluster this store indexes (snapshots name it); refuses a store of another cluster.
  if (config.ingest) await recordGenesisHash(store, solana, log).catch(async (e: unknown) => {
    await store.close();
    await closeSimulator();
    throw e;
  });
  // The startup self-check (src/state/selfCheck.ts): counters vs stored elements, per tree; never silent.
  const checked = store.read((r) => selfCheck(r, registry.all()));
  for (const c of ['inputQueue', 'outputQueue', 'addressQueue', 'leaves'] as const) metrics.storeSelfCheck.set({ check: c }, checked.disagreements.filter((d) => d.check === c).length);
  for (const d of checked.disagreements) log.error({ tree: d.tree, check: d.check }, `store self-check: tree ${d.tree}: ${d.detail}`);
  if (checked.disagreements.length) log.error({ disagreements: checked.disagreements.length, truncated: checked.truncated }, 'the store disagrees with its own counters (listed above): GET /health is degraded; re-index or restore from a snapshot');
  else log.info({ trees: checked.trees, elements: checked.elements, ms: Math.round(checked.ms) }, 'store self-check passed');
  const data = new LmdbDataSource(store, registry, { solana });
  // minContextSlot waits (src/rpc/slotWatcher.ts): the store's last slot now, then every committed batch
  // (onIngestEvent); a new slot drops lmdb-js's cached read snapshot so the woken requests see the commit.
  const slots = new SlotWatcher({
    initialSlot: store.read((r) => r.lastSlot()),
    maxWaitMs: config.minContextWaitMs,
    onAdvance: () => store.root.resetReadTxn(),
    metrics: { waiting: (n) => metrics.minContextWaiting.set(n), answered: (s) => metrics.minContextWake.observe(s) },
  });
  const p = opts.prover ?? {};
  const prover = await ProverRuntime.start({
    enabled: config.prover,
    keysDir: config.keysDir,
    proverUrl: config.proverUrl,
    proverApiKey: p.proverApiKey,
    redisUrl: config.redisUrl,
    queueName: p.queueName,
    localWorker: p.localWorker,
    threads: config.proverThreads,
    curve: config.proverCurve,
    kernels: config.proverKernels,
    backend: config.proverBackend,
    tableMb: config.proverTableMb,
    tableFiles: config.proverTableFiles,
    timeoutMs: p.timeoutMs,
    maxPending: p.maxPending,
    circuits: p.circuits,
    autoSetup: p.autoSetup,
    ptau: config.ptau,
    setupArgs: p.setupArgs,
    warm: p.warm,
    lightKeys: config.lightKeys,
    ownCircuits: config.ownCircuits,
    lightKeysSource: config.lightKeysSource ? path.resolve(config.lightKeysSource) : undefined,
    metrics,
    log,
  });
  const ctx: RpcContext = {
    data,
    getSolanaSlot: () => solana.getSlot(),
    prover: prover.enabled
      ? new RefractValidityProver({ data, service: () => prover.service(), unavailableReason: () => prover.unavailableReason(), onInternalError: (err) => log.error({ err }, 'validity proof failed') })
      : undefined,
    config: { healthMaxSlotLag: config.healthMaxSlotLag },
    slots,
  };
  // The node as the daemon sees it (GET /health `chain`, GET /readiness, refract_chain_node_state): checked
  // every few seconds while ingest runs; each change of state is logged once, with both slots.
  const chain = new ChainWatch(new SolanaRpc(config.rpcUrl, { timeoutMs: 3000 }), () => store.read((r) => r.lastSlot()), config.healthMaxSlotLag, metrics, log);
  const app = buildServer(ctx, {
    logger: log as never,
    logRequests: config.logLevel === 'debug' || config.logLevel === 'trace',
    apiKeys: config.apiKeys,
    rateLimit: config.rateLimit,
    redisUrl: config.redisUrl,
    bodyLimitBytes: config.bodyLimitBytes,
    httpErrorsAs200: config.httpErrorsAs200,
    corsOrigins: config.corsOrigins,
    onMetrics: (m) => metrics.rpcDuration.observe({ method: m.method, status: String(m.status) }, m.durationMs / 1000),
    notReady: () => (config.ingest ? chain.notReady() : null),
    health: async () => ({
      indexedSlot: store.read((r) => r.lastSlot()),
      ingest: config.ingest,
      ...(ingestError || rootMismatches.size || sequenceHeld || checked.disagreements.length || (config.ingest && chain.notReady()) ? { status: 'degraded' } : {}),
      ...(config.ingest ? { chain: chain.view() } : {}),
      ...(checked.disagreements.length ? { selfCheck: { disagreements: checked.disagreements, truncated: checked.truncated } } : {}),
      ...(ingestError ? { ingestError } : {}),
      ...(sequenceHeld ? { sequenceHeld: { ...sequenceHeld, reason: `gap in tree ${sequenceHeld.tree}'s ${sequenceHeld.stream} numbers (expected ${sequenceHeld.expected}, got ${sequenceHeld.got}) between slots ${sequenceHeld.afterSlot} and ${sequenceHeld.slot}: ingest holds until the missing transactions are found` } } : {}),
      ...(backfillView.health() ? { backfill: backfillView.health() } : {}),
      ...(config.ingest ? { source: { ...liveSource, grpc: grpcUrl ? displayUrl(grpcUrl) : null } } : {}),
      ...(rootMismatches.size ? { rootMismatches: Object.fromEntries(rootMismatches) } : {}),
      poseidon: poseidonInfo(),
      prover: await prover.health(),
    }),
  });
  if (prover.enabled) registerProveRoute(app, { service: () => prover.service(), unavailableReason: () => prover.unavailableReason(), apiKeys: config.apiKeys, rateLimit: config.rateLimit });
  registerSnapshotRoute(app, { store, workDir: config.db, apiKeys: config.apiKeys, rateLimit: config.rateLimit });
  // No CORS here: a page in a visitor's browser must not read an internal deployment's metrics.
  app.get('/metrics', { config: { cors: false } }, async (_req, reply) => {
    reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (e) {
    await prover.close();
    await store.close();
    await closeSimulator();
    throw e;
  }
  // The bound port (with `--port 0` the OS picks one: a supervisor or test reads it from this line).
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info({ port, db: config.db, rpc: config.ingest ? displayUrl(config.rpcUrl) : null, grpc: config.ingest && grpcUrl ? displayUrl(grpcUrl) : null, poseidon: poseidonInfo() }, 'refract listening');
  const api = apiUrl(config.host, port);
  log.info({ api }, `the API is at ${api}; try: curl -s ${api} -H 'content-type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"getIndexerHealth"}'   (also ${api}/health, ${api}/metrics)`);

  if (config.ingest) chain.start();
  // Key setup in the background can take many minutes without a line of its own (the ptau's stages):
  // one progress line a minute while it runs.
  const setupStarted = Date.now();
  const setupProgress = setInterval(() => {
    void prover.health().then((h) => {
      const keys = h.keys as { ready: number; total: number; setup?: { state: string; lastLines: string[] } } | undefined;
      if (keys?.setup?.state !== 'running') return;
      const last = keys.setup.lastLines.at(-1)?.replace(/^\[refract setup\]\s*/, '');
      log.info({ keys: { ready: keys.ready, total: keys.total } }, `building proving keys in the background: ${keys.ready} of ${keys.total} circuits ready after ${Math.round((Date.now() - setupStarted) / 60_000)} min${last ? `; now: ${last}` : ''} (reads work meanwhile; validity proofs answer "Prover not available … retry later")`);
    }, () => {});
  }, 60_000);
  setupProgress.unref();
  // The ingest loop: on its own thread (default; see src/ingest/threads/ingestThread.ts), or on this one (`ingestThread: false`).
  const abort = new AbortController();
  const onIngestEvent = (e: IngestEvent) => {
    if (e.kind === 'batch') slots.advance(e.lastSlot);
    else if (e.kind === 'resumed') slots.advance(e.lastIndexed);
    // Trees the ingest thread found on chain: the API answers for them too.
    if (e.kind === 'trees') for (const t of e.trees) registry.add(t);
    recordIngestEvent(metrics, e);
    if (e.kind === 'batch') for (const [tree, n] of e.rootMismatches ?? []) rootMismatches.set(tree, (rootMismatches.get(tree) ?? 0) + n);
    if (e.kind === 'backfill') backfillView.update(e.progress, e.requests, e.rateLimited);
    if (e.kind === 'sequence' && e.outcome === 'held') sequenceHeld = e.gap;
    if (e.kind === 'sequence' && e.outcome === 'released') sequenceHeld = null;
    if (e.kind === 'source') {
      const fallback = e.change.source === 'rpc' && e.change.reason !== 'start';
      liveSource = {
        source: e.change.source,
        since: new Date().toISOString(),
        fallbacks: liveSource.fallbacks + (fallback ? 1 : 0),
        ...(fallback ? { lastFallback: { reason: e.change.reason, ...(e.change.detail ? { detail: e.change.detail } : {}), slot: e.change.lastReleasedSlot, at: new Date().toISOString() } } : liveSource.lastFallback ? { lastFallback: liveSource.lastFallback } : {}),
      };
    }
  };
  // A prepare thread needs a core of its own: with two, it takes the API's (bench:catchup).
  const prepareThread = config.prepareThread ?? availableParallelism() > 2;
  const poll = {
    startSlot: config.startSlot,
    concurrency: config.fetchConcurrency,
    maxBatchBlocks: config.maxBatchBlocks,
    backfill: { thresholdSlots: config.backfillThresholdSlots, rps: config.backfillRps, concurrency: config.backfillConcurrency, batchSize: config.backfillBatchSize, billPerCall: config.backfillRpsPerCall },
    sequenceCheck: config.sequenceCheck,
    ...(grpcUrl ? { grpc: { url: grpcUrl, ...(grpcXToken() ? { xToken: grpcXToken() } : {}) } } : {}),
  };
  const thread = config.ingest && config.ingestThread
    ? startIngestThread({ ...poll, db: config.db, writemap: config.lmdbWritemap, trees, rpcUrl: config.rpcUrl, logLevel: config.logLevel, prepareThread, treeLookup }, onIngestEvent)
    : null;
  const ingestRun: Promise<void> = thread
    ? thread.done
    : config.ingest
      ? runIngest(new Indexer(store, registry, log), solana, {
          ...poll,
          signal: abort.signal,
          log,
          onEvent: onIngestEvent,
          prepareThread: prepareThread ? { trees, logLevel: config.logLevel } : undefined,
          treeLookup,
        })
      : Promise.resolve();
  metrics.ingestRunning.set(config.ingest ? 1 : 0);
  const ingest = ingestRun.catch((err) => {
    // The API keeps serving what is indexed; /health and refract_ingest_running say why nothing new arrives.
    metrics.ingestRunning.set(0);
    ingestError = `ingest stopped: ${(err as Error)?.message ?? String(err)}`;
    log.error({ err }, 'ingest stopped with an error; the API keeps serving the indexed state');
  });

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      log.info('shutting down: stop polling, finish the batch, close the server and the store');
      abort.abort();
      chain.stop();
      clearInterval(setupProgress);
      backfillView.stopBar();
      await thread?.stop().catch(() => {});
      await ingest;
      slots.close(); // waiting requests answer -32016 now instead of holding the server open
      await app.close();
      await prover.close();
      await store.close();
      await closeSimulator();
      log.info('stopped');
    })());
  return { app, store, metrics, prover, ingestThread: thread, stop };
}
