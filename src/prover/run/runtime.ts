/**
 * `ProverRuntime`: the prover side of `refract start`, assembled from its options.
 *
 * | options | backend | proofs made by | verified with |
 * |---|---|---|---|
 * | `enabled: false` | none | — ("Prover not available") | — |
 * | `proverUrl` | `RemoteBackend` | the external prover | not verified (its own keys) |
 * | default | `LocalBackend` (bounded in-process queue) | this process's Piscina pool | the pool thread (this keysDir) |
 * | `redisUrl` | `BullBackend` | `refract prover` nodes, plus this process's pool unless `localWorker: false` | this keysDir: the local pool's threads (or a 1-thread verifier pool) |
 *
 * Keys (all but the remote mode): per-circuit readiness of `keysDir` (keyReadiness.ts). When circuits
 * are missing, `refract setup` runs in a child process in the background (`autoSetup`, default on)
 * and circuits become usable one by one; until then their requests answer "Prover not available".
 * `health()` feeds GET /health; queue gauges and readiness gauges feed /metrics.
 */
import { childEnv } from '../../config/config.ts';
import { availableParallelism } from 'node:os';
import type { Metrics } from '../../metrics.ts';
import { nativeAddon } from '../../native.ts';
import { DEFAULT_MAX_PENDING, LocalBackend, RemoteBackend, type ProofBackend } from './backend.ts';
import type { BullBackend, ProverNode } from './bullmq.ts';
import { DEFAULT_QUEUE_NAME } from './proofJobs.ts';
import { DEFAULT_CIRCUIT_IDS, getCircuit } from '../keys/circuits.ts';
import { logTableLoad, type PoolThreadSettings, ProverPool, singleThreadFor } from './pool.ts';
import { nativeTableSets, proverBackend, proverTableFiles, proverTableMb } from '../engine/groth16Native.ts';
import { KeyReadiness } from '../keys/keyReadiness.ts';
import { DEFAULT_PROOF_TIMEOUT_MS, OWN_CIRCUIT_WARNING, ProofService, type LightProofSource, type ProofVerifier } from './proofService.ts';
import { LIGHT_KEYS, lightKeyId } from '../keys/lightKeys.ts';
import { lightKeyReady, lightKeySource } from '../keys/lightKeySetup.ts';
import { REFRACT_BIN } from '../keys/keyReadiness.ts';
import { spawn, type ChildProcess } from 'node:child_process';

/** Circuits loaded into the pool as soon as their keys are ready (the common small shapes). */
export const DEFAULT_WARM_CIRCUITS: readonly string[] = ['inclusion_26_1', 'inclusion_26_2', 'non-inclusion_26_1', 'combined_26_26_1_1', 'v2_inclusion_32_1', 'v2_non-inclusion_40_1'];

/** Minimal logger (pino-compatible). */
export interface RuntimeLog {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

/** Options of `ProverRuntime.start`. */
export interface ProverRuntimeOptions extends PoolThreadSettings {
  /** false → no prover (config `prover: false` / `--no-prover`). */
  enabled: boolean;
  keysDir: string;
  /** External Light-compatible prover (`--prover-url`). */
  proverUrl?: string;
  /** API key sent to the external prover (`Authorization: Bearer`). */
  proverApiKey?: string;
  /** BullMQ queue on this Redis (`--redis-url`). */
  redisUrl?: string;
  queueName?: string;
  /** With Redis: also prove in this process (default true; `--no-local-prover`). */
  localWorker?: boolean;
  /** Per-request proof timeout, ms (default 60 s). */
  timeoutMs?: number;
  /** Proof queue bound, default 64: pending proofs of the in-process queue, or jobs waiting in the BullMQ queue. */
  maxPending?: number;
  /** Circuits served (default `DEFAULT_CIRCUIT_IDS`: all v1 and the default v2 ones); others answer "not ready". The background setup builds only these. */
  circuits?: readonly string[];
  /** Build missing keys in the background (default true). */
  autoSetup?: boolean;
  /** ptau for the background setup (`--ptau` / config `ptau`); default: the dev ptau if present. */
  ptau?: string;
  /** Extra arguments for the background `refract setup` (tests). */
  setupArgs?: string[];
  /** Circuits to preload when ready (default `DEFAULT_WARM_CIRCUITS`). */
  warm?: readonly string[];
  /** BullMQ lock and stalled-check settings of the local worker (bullmq.ts defaults). */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /**
   * Prove with Light's own proving keys (`<keys>/light/*.lkr`, from `refract setup --light-keys`) every
   * shape Light ships a key for; missing keys are converted in the background (`autoSetup`).
   * Default false here (programmatic use); `refract start` turns it on (config `lightKeys`, default true).
   */
  lightKeys?: boolean;
  /** With `lightKeys`: prove shapes without a ready Light key with Refract's own circuits (their proofs do NOT verify on chain). Default false. */
  ownCircuits?: boolean;
  /** Directory of Light `.key` files for the background conversion (default: fetch the CLI packages from the npm registry). */
  lightKeysSource?: string;
  metrics?: Metrics;
  log?: RuntimeLog;
}

const quiet: RuntimeLog = { info() {}, warn() {}, error() {} };

/** See the module comment. */
export class ProverRuntime {
  private svc: ProofService | undefined;
  private backend: ProofBackend | undefined;
  private pool: ProverPool | undefined;
  private verifierPool: ProverPool | undefined;
  private node: ProverNode | undefined;
  private readiness: KeyReadiness | undefined;
  private lastError: string | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly warmed = new Set<string>();
  private light: LightProofSource | undefined;
  private lightSetup: { child?: ChildProcess; state: 'running' | 'done' | 'failed' | 'stopped'; lastLines: string[]; exitCode?: number | null } | undefined;
  private lightTimer: NodeJS.Timeout | undefined;
  private readonly lightWarmed = new Set<string>();
  readonly mode: 'disabled' | 'remote' | 'local' | 'bullmq';

  private constructor(private readonly opts: ProverRuntimeOptions) {
    this.mode = !opts.enabled ? 'disabled' : opts.proverUrl ? 'remote' : opts.redisUrl ? 'bullmq' : 'local';
  }

  /**
   * Builds the runtime. Never fails for missing keys (they are built in the background) or an
   * unreachable Redis (retried every 10 s; meanwhile proofs answer "Prover not available").
   */
  static async start(opts: ProverRuntimeOptions): Promise<ProverRuntime> {
    const rt = new ProverRuntime(opts);
    await rt.init();
    return rt;
  }

  /** True unless the prover is disabled. */
  get enabled(): boolean {
    return this.mode !== 'disabled';
  }

  /** The proof service, once it exists (undefined while disabled or while Redis is unreachable). */
  service(): ProofService | undefined {
    return this.svc;
  }

  /** Why `service()` is undefined, for error messages: the queue's last connection error, or "starting". */
  unavailableReason(): string {
    if (this.mode === 'disabled') return 'validity proofs are not enabled on this server';
    return this.lastError ? `the proof queue is unreachable (${this.lastError}); retrying every 10 s` : 'the prover is starting';
  }

  /** Per-circuit key readiness (undefined in remote and disabled modes). */
  keys(): KeyReadiness | undefined {
    return this.readiness;
  }

  private get log(): RuntimeLog {
    return this.opts.log ?? quiet;
  }

  private async init(): Promise<void> {
    const o = this.opts;
    if (this.mode === 'disabled') return;
    const timeoutMs = o.timeoutMs ?? DEFAULT_PROOF_TIMEOUT_MS;
    if (this.mode === 'remote') {
      this.backend = new RemoteBackend(o.proverUrl!, { apiKey: o.proverApiKey });
      this.svc = new ProofService({ backend: this.backend, metrics: o.metrics, timeoutMs });
      o.metrics?.setProofStatsSource(() => this.backend!.depth());
      this.log.warn({ proverUrl: o.proverUrl }, 'validity proofs go to an external prover; its proofs are not verified against this server\'s keys');
      return;
    }

    o.circuits?.forEach((id) => getCircuit(id)); // unknown ids fail at start
    // refract_prover_circuit_ready: every default circuit (0 when not served) and any other served one.
    const readyMetricIds = [...new Set([...DEFAULT_CIRCUIT_IDS, ...(o.circuits ?? [])])];
    const readiness = new KeyReadiness(o.keysDir, {
      circuits: o.circuits,
      onChange: (ready) => {
        for (const id of readyMetricIds) o.metrics?.proverReady.set({ circuit: id }, ready.has(id) ? 1 : 0);
        this.warmReady(ready);
      },
      log: (level, msg) => this.log[level](msg),
    });
    this.readiness = readiness;
    await readiness.refresh();
    for (const id of readyMetricIds) o.metrics?.proverReady.set({ circuit: id }, readiness.isReady(id) ? 1 : 0);
    const ownWanted = !o.lightKeys || !!o.ownCircuits;
    if (!readiness.complete && ownWanted) {
      if (o.autoSetup !== false) {
        // the setup writes the table files this process's threads will read (none for the snarkjs backend)
        const tableArgs = proverBackend(o.backend) === 'native' ? ['--table-mb', String(proverTableMb(o.tableMb)), '--table-files', proverTableFiles(o.keysDir, o.tableFiles) || 'off'] : ['--table-mb', '0'];
        readiness.startBackgroundSetup({ ptau: o.ptau, args: [...tableArgs, ...(o.setupArgs ?? [])] });
      }
      else this.log.warn({ keysDir: readiness.keysDir, ready: readiness.readyIds() }, 'proving keys incomplete and background setup is off: run `refract setup` (new keys are picked up within 30 s)');
      readiness.watchUntilComplete();
    }

    o.metrics?.proofQueueCapacity.set(o.maxPending ?? DEFAULT_MAX_PENDING);
    const threads = o.threads ?? availableParallelism();
    if (this.mode === 'local' || o.localWorker !== false) this.pool = new ProverPool({ keysDir: o.keysDir, size: threads, singleThread: singleThreadFor(o.curve), kernels: o.kernels, backend: o.backend, tableMb: o.tableMb, tableFiles: o.tableFiles, onTableLoad: (t) => logTableLoad(this.log, t) });
    // Light's keys are proved by the same pool (ids `light/<name>`), warmed as they become ready
    if (o.lightKeys) this.startLight();
    const verifier: ProofVerifier = (id, proof, signals) => this.verifyPool().verify(id, proof, signals);

    if (this.mode === 'local') {
      this.backend = new LocalBackend(this.pool!, { maxPending: o.maxPending });
      this.svc = new ProofService({ backend: this.backend, metrics: o.metrics, timeoutMs, readiness, verifier, ...this.lightOptions() });
    } else {
      const connect = async () => {
        let backend: BullBackend | undefined;
        try {
          // BullMQ and ioredis are loaded only here, by a daemon with a Redis queue (0.2 CPU-s a start otherwise)
          const { BullBackend, startProverNode } = await import('./bullmq.ts');
          backend = await BullBackend.create({ redisUrl: o.redisUrl!, queueName: o.queueName, maxWaiting: o.maxPending });
          if (this.pool) {
            this.node = await startProverNode({
              redisUrl: o.redisUrl!,
              pool: this.pool,
              queueName: o.queueName,
              lockDurationMs: o.lockDurationMs,
              stalledIntervalMs: o.stalledIntervalMs,
            });
          }
          if (this.closed) {
            await backend.close();
            await this.node?.close();
            return;
          }
          this.backend = backend;
          this.svc = new ProofService({ backend, metrics: o.metrics, timeoutMs, readiness, verifier, ...this.lightOptions() });
          this.lastError = undefined;
          this.log.info({ queue: o.queueName ?? DEFAULT_QUEUE_NAME, localWorker: !!this.pool }, 'proof queue connected (BullMQ)');
        } catch (e) {
          // The queue connected but the local worker did not: close it, the next try makes a new one.
          if (backend && this.backend !== backend) await backend.close();
          this.lastError = (e as Error).message;
          this.log.error({ err: e }, 'proof queue unavailable; retrying in 10 s (validity proofs answer "Prover not available" meanwhile)');
          if (!this.closed) {
            this.retryTimer = setTimeout(() => void connect(), 10_000);
            this.retryTimer.unref();
          }
        }
      };
      await connect();
    }
    o.metrics?.setProofStatsSource(async () => {
      const d = this.backend ? await this.backend.depth() : { waiting: 0, active: 0 };
      if (!d.threads && this.pool) {
        const s = this.pool.stats();
        d.threads = Object.fromEntries(Object.entries(s.threads).map(([k, m]) => [k, m.heapUsed + m.external]));
      }
      return d;
    });
    this.warmReady(new Set(readiness.readyIds()));
  }

  /** ProofService options for Light's keys (none when `lightKeys` is off). */
  private lightOptions() {
    if (!this.light) return {};
    const o = this.opts;
    return {
      light: this.light,
      ownCircuits: !!o.ownCircuits,
      onOwnCircuit: (circuit: string) => {
        o.metrics?.proofsOwnCircuit.inc({ circuit });
        this.log.warn({ circuit }, `proof ${OWN_CIRCUIT_WARNING}`);
      },
    };
  }

  /**
   * Light's keys: the prover threads, readiness gauges, warm-up of the ready keys, and when some are
   * missing `refract setup --light-keys` in a child process (lowest priority, dies with this
   * process) whose converted keys are picked up every 2 s.
   */
  private startLight(): void {
    const o = this.opts;
    this.light = {
      ready: (k) => lightKeyReady(o.keysDir, k),
      pending: () => (this.lightSetup?.state === 'running' ? `being converted in the background by \`refract setup --light-keys\` (pid ${this.lightSetup.child?.pid})` : undefined),
    };
    const refresh = () => {
      const ready = LIGHT_KEYS.filter((k) => lightKeyReady(o.keysDir, k));
      for (const k of LIGHT_KEYS) o.metrics?.lightKeyReady.set({ circuit: k.name }, ready.includes(k) ? 1 : 0);
      const fresh = ready.filter((k) => !this.lightWarmed.has(k.name));
      fresh.forEach((k) => this.lightWarmed.add(k.name));
      if (fresh.length && this.pool && !this.closed) {
        const t0 = performance.now();
        this.pool.warm(fresh.map(lightKeyId)).then(
          () => this.log.info({ circuits: fresh.map((k) => k.name), ms: Math.round(performance.now() - t0) }, "Light keys loaded into the prover threads"),
          (err) => this.log.warn({ err }, 'loading Light keys failed (they load on first use)'),
        );
      }
      return ready.length;
    };
    const n = refresh();
    if (n === LIGHT_KEYS.length) return;
    const missing = LIGHT_KEYS.filter((k) => !lightKeyReady(o.keysDir, k));
    if (o.autoSetup === false) {
      this.log.warn({ missing: missing.map((k) => k.name) }, `Light proving keys missing: run \`refract setup --light-keys [DIR] --keys ${o.keysDir}\` (e.g. ${lightKeySource(missing[0]!)})`);
    } else {
      const args = [REFRACT_BIN, 'setup', '--keys', o.keysDir, '--light-keys', ...(o.lightKeysSource ? [o.lightKeysSource] : []), '--no-progress', '--exit-on-stdin-close'];
      const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], env: childEnv() });
      const state: NonNullable<ProverRuntime['lightSetup']> = { child, state: 'running', lastLines: [] };
      this.lightSetup = state;
      this.log.warn({ pid: child.pid, missing: missing.length }, 'Light proving keys missing: converting them in the background (refract setup --light-keys); their circuits answer "Prover not available" until ready');
      // stderr: its progress lines, relayed; stdout: its JSON summary, logged as one line at the end
      let summary = '';
      child.stdout!.setEncoding('utf8').on('data', (d: string) => (summary += d));
      child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        for (const line of d.split(/\r?\n/).filter(Boolean)) {
          state.lastLines.push(line);
          if (state.lastLines.length > 20) state.lastLines.shift();
          this.log.info(`[light setup] ${line}`);
        }
      });
      child.on('exit', (code, signal) => {
        if (summary.trim()) {
          try {
            const s = JSON.parse(summary) as { converted?: unknown[]; cached?: unknown[]; missing?: unknown[]; seconds?: number };
            this.log.info({ converted: s.converted?.length, cached: s.cached?.length, missing: s.missing, seconds: s.seconds }, 'background conversion of Light keys finished');
          } catch {
            this.log.info(`[light setup] ${summary.trim()}`);
          }
        }
        state.exitCode = code;
        // Ctrl-C in a terminal signals the whole process group: the setup child may end (130: SIGINT, 143:
        // SIGTERM, or by the signal) before this daemon's own shutdown has closed the runtime. A stop, not a failure.
        const stopped = this.closed || signal !== null || code === 130 || code === 143;
        state.state = code === 0 ? 'done' : stopped ? 'stopped' : 'failed';
        state.child = undefined;
        refresh();
        if (code !== 0 && stopped && !this.closed) {
          this.log.info({ code, signal }, 'background conversion of Light keys stopped by a signal; the converted keys are kept, the next start converts the missing ones');
        } else if (code !== 0 && !stopped) {
          this.log.error({ code, lastLines: state.lastLines.slice(-3) }, 'background conversion of Light keys failed; run `refract setup --light-keys` by hand');
        }
      });
    }
    this.lightTimer = setInterval(() => {
      if (refresh() === LIGHT_KEYS.length) clearInterval(this.lightTimer);
    }, 2000);
    this.lightTimer.unref();
  }

  private verifyPool(): ProverPool {
    if (this.pool) return this.pool;
    this.verifierPool ??= new ProverPool({ keysDir: this.opts.keysDir, size: 1, singleThread: true });
    return this.verifierPool;
  }

  /** Loads newly ready circuits of the warm list into the pool, in the background. */
  private warmReady(ready: ReadonlySet<string>): void {
    if (!this.pool || this.closed) return;
    if (this.opts.lightKeys && !this.opts.ownCircuits) return; // Light's keys serve every request: own circuits stay unloaded
    const ids = (this.opts.warm ?? DEFAULT_WARM_CIRCUITS).filter((id) => ready.has(id) && !this.warmed.has(id));
    if (ids.length === 0) return;
    ids.forEach((id) => this.warmed.add(id));
    const t0 = performance.now();
    this.pool.warm(ids).then(
      () => this.log.info({ circuits: ids, ms: Math.round(performance.now() - t0) }, 'prover pool warmed'),
      (err) => {
        ids.forEach((id) => this.warmed.delete(id));
        this.log.warn({ err, circuits: ids }, 'warming the prover pool failed (circuits load on first use)');
      },
    );
  }

  /** What GET /health shows under `prover`. */
  async health(): Promise<Record<string, unknown>> {
    if (this.mode === 'disabled') return { mode: 'disabled' };
    const out: Record<string, unknown> = { mode: this.mode, available: !!this.svc };
    if (this.mode === 'remote') out.proverUrl = this.opts.proverUrl;
    // Refract's own circuits' keys: shown when they can serve (no Light keys, or --own-circuits); while
    // Light's keys serve every request they are not built, and "0 of 19 ready" would only alarm
    if (this.readiness && !(this.light && !this.opts.ownCircuits)) {
      const h = this.readiness.health();
      out.ready = h.ready === h.total;
      out.keys = h;
    }
    if (this.light) {
      const ready = LIGHT_KEYS.filter((k) => lightKeyReady(this.opts.keysDir, k)).map((k) => k.name);
      if (!this.opts.ownCircuits) out.ready = ready.length === LIGHT_KEYS.length;
      out.lightKeys = {
        ready,
        missing: LIGHT_KEYS.map((k) => k.name).filter((n) => !ready.includes(n)),
        ownCircuits: !!this.opts.ownCircuits,
        ...(this.lightSetup ? { setup: { state: this.lightSetup.state, lastLines: this.lightSetup.lastLines.slice(-5) } } : {}),
      };
    }
    if (this.lastError) out.error = this.lastError;
    if (this.backend) {
      try {
        out.queue = await this.backend.depth();
      } catch (e) {
        out.queue = { error: (e as Error).message };
      }
    }
    if (this.pool) {
      const s = this.pool.stats();
      // fieldArithmetic: the multiplication of the native kernels or the native prover (ifma = ADX plus the eight-lane AVX-512 IFMA MSM flush and FFT; adx; c)
      const tables = s.backend === 'native' ? nativeTableSets() : null;
      // tableMb: the fixed-base table budget per circuit; tables: the sets in this process (shared by the threads), their MiB,
      // and per loaded circuit where its tables came from (built / file / shared / none), MiB, load ms and the table file's note (null: fine)
      const byCircuit = Object.fromEntries(Object.entries(s.tableLoads).map(([id, { circuitId: _c, threadId: _t, ...report }]) => [id, report]));
      out.pool = { threads: s.size, curve: s.singleThread ? 'single' : 'multi', kernels: s.kernels, backend: s.backend, tableMb: s.backend === 'native' ? s.tableMb : null, tableFiles: s.backend === 'native' ? s.tableFiles || 'off' : null, tables: tables ? { sets: tables.sets, mib: Number((tables.bytes / 2 ** 20).toFixed(1)), byCircuit } : null, fieldArithmetic: s.kernels === 'native' || s.backend === 'native' ? (nativeAddon?.msmImpl?.() ?? null) : null, busy: s.busy, queued: s.queueSize, proofs: s.proofs, failures: s.failures, utilization: Number(s.utilization.toFixed(3)) };
    }
    return out;
  }

  /** Stops the background setup, the queue worker, the backend and the pools. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.lightTimer);
    this.lightSetup?.child?.kill('SIGTERM');
    this.opts.metrics?.setProofStatsSource(undefined);
    await this.readiness?.close();
    await this.node?.close();
    await this.backend?.close();
    await this.pool?.close();
    await this.verifierPool?.close();
  }
}
