/**
 * A Piscina pool of proving threads (workers/prove.ts) with per-circuit micro-batching.
 *
 * Scheduling: `prove(circuitId, input)` appends a job to its circuit's queue. The pool keeps at
 * most `size` tasks in flight (one per thread, so Piscina's own queue stays empty and jobs stay
 * regroupable). When a thread is free, the circuit with the oldest waiting job is dispatched as
 * ONE task carrying up to `min(maxBatch, ceil(waiting / size))` of its jobs (waiting counted at
 * the start of a dispatch pass): an idle pool sends
 * jobs one by one to different threads (lowest latency); a saturated pool merges queued jobs of
 * the same circuit into batches (fewer task round trips, still shared fairly between threads).
 * Arrivals are collected for `batchWindowMs` before dispatch (default 0: those of the current event-loop
 * turn; a 2 ms timer cost an idle pool ≈2–3 ms per proof). Items of a batch stream back as
 * each finishes (a MessagePort per task), so batching never delays the first jobs of a batch.
 * Batching saves only task round trips (the zkey, wasm and curve are resident per thread anyway),
 * so it neither gains nor costs measurable throughput for snarkjs proofs.
 *
 * Threads: each thread keeps its circuits' wasm, proving key and vkey resident (the proving key
 * parsed into the addon with the default `native` backend, groth16Native.ts; the zkey bytes with
 * the `snarkjs` one) and builds one bn128 curve (snarkjs' verification, and its prover), multi-threaded (ffjavascript spreads each MSM/FFT over one nested worker per core)
 * or single-threaded. Default layout (`defaultPoolLayout`): one thread per core. With the native
 * kernels (MSM and FFT; the default when the addon is built) curves are single-threaded: the MSMs,
 * most of a proof, spread over the cores left free by other proofs (a lone request uses every
 * core, eight concurrent ones one core each), and ffjavascript's nested workers only add copying
 * and scheduling (bench/results/prove.json: 2s beats 2m and 1m at concurrency 1). With the wasm ones:
 * multi-threaded curves up to MULTI_THREADED_CURVES_MAX_CORES cores, so a lone request uses every
 * core, single-threaded above that, where P threads × P nested workers would cost too much
 * memory and scheduling. A thread whose reported heap+external memory exceeds `recycleHeapBytes` (or process
 * RSS exceeds `recycleRssBytes`) is terminated after its task and replaced; dispatch pauses until
 * the old thread has exited, so no job is handed to a dying thread.
 *
 * Loading the TypeScript worker: Piscina gets `execArgv: ['--import', <tsx loader URL>]`, which
 * works under `node --import tsx`, the tsx-registered CLI and vitest (forks pool).
 */
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import { MessageChannel } from 'node:worker_threads';
import type { PoolInput, ProveItem, ProveItemMessage, ProveStages, ProveTask, ProveTaskResult, ProveWorkerData, TableLoad } from './proveMessages.ts';
import { tsxExecArgv } from '../../tsxWorker.ts';
import { getCircuit } from '../keys/circuits.ts';
import { lightKeyOfId } from '../keys/lightKeys.ts';
import { ProverError } from '../errors.ts';
import { type Groth16Proof, optimizeWasmAtCompile, type ProverKernels, proverKernels } from '../engine/snark.ts';
import { type ProverBackendKind, proverBackend, proverTableFiles, proverTableMb } from '../engine/groth16Native.ts';

/** Curve layout of the pool threads: `auto` = `defaultPoolLayout`, else every thread's curve is multi- or single-threaded. */
export type CurveThreading = 'auto' | 'multi' | 'single';

/** `singleThread` for a `CurveThreading` choice (undefined: the default layout decides). */
export function singleThreadFor(curve: CurveThreading | undefined): boolean | undefined {
  return curve === 'single' ? true : curve === 'multi' ? false : undefined;
}

/**
 * The operator's settings of a pool's threads (flags `--[prover-]threads`, `curve`, `kernels`,
 * `backend`, `table-mb`, `table-files` of `refract start` and `refract prover`), before they become
 * `ProverPoolOptions`.
 */
export interface PoolThreadSettings {
  /** Pool threads (default: cores; for `refract prover` also the BullMQ concurrency). */
  threads?: number;
  /** Curves of the pool threads (default `auto`: see `defaultPoolLayout`). */
  curve?: CurveThreading;
  /** MSM and FFT kernels of the pool threads (default native when the addon is built; see `proverKernels`). */
  kernels?: ProverKernels;
  /** Groth16 prover of the pool threads (default native when the addon is built; see `proverBackend`). */
  backend?: ProverBackendKind;
  /** Native backend: fixed-base MSM table budget per key, MiB (see `ProverPoolOptions.tableMb`). */
  tableMb?: number;
  /** Native backend: the table files' directory, or `off` (see `ProverPoolOptions.tableFiles`; default $REFRACT_PROVER_TABLE_FILES, else the keys directory). */
  tableFiles?: string;
}

/** Options of `ProverPool`. */
export interface ProverPoolOptions {
  /** Directory with `<id>.wasm/.zkey/.vkey.json` (see keys/layout.ts). */
  keysDir: string;
  /** Worker threads (default `os.availableParallelism()`). */
  size?: number;
  /** Single-threaded curves (default: see `defaultPoolLayout`). */
  singleThread?: boolean;
  /** Verify each proof in the worker before returning it (default true). */
  verify?: boolean;
  /** MSM and FFT kernels (default `proverKernels()`: native when the addon is built). */
  kernels?: ProverKernels;
  /** Native MSM threads per call (default 0: the CPUs, shared by the MSMs running in the process). */
  msmThreads?: number;
  /**
   * Native backend: fixed-base MSM tables for a key whose four tables fit this many MiB (all or none;
   * default `proverTableMb()`: REFRACT_PROVER_TABLE_MB, else 96 — the v1 circuits of up to two accounts or
   * addresses and the one-account / one-address v2 circuits fit, 38–81 MiB each, once per process (the threads share them),
   * 1.2–3.2 s each to build at load on 2 cores; 0 = no tables).
   */
  tableMb?: number;
  /**
   * Native backend: the directory of the table files (`<dir>/<circuit>.tables`, read at load, written
   * after a build), or false for none (default `proverTableFiles()`: REFRACT_PROVER_TABLE_FILES, else
   * `keysDir`). Created when missing.
   */
  tableFiles?: string | false;
  /** Native backend: called (on the pool's thread) for each key a prover thread loads, with where its tables came from and what went wrong with its table file (`note`); the table file is `<tableFiles>/<circuit>.tables`. */
  onTableLoad?: (t: TableLoad) => void;
  /**
   * Who computes the proofs (default `proverBackend()`: `native`, Refract's C Groth16 prover with the
   * zkey resident in the addon, when the addon is built; else `snarkjs`). Either way every proof is
   * verified before it is returned (`verify`): by the addon's pairing with `native`, by snarkjs with `snarkjs`.
   */
  backend?: ProverBackendKind;
  /** Collect arrivals this long before dispatching to a free thread, ms (default 0: the arrivals of the current event-loop turn, no timer). */
  batchWindowMs?: number;
  /** Most jobs merged into one task (default 4). */
  maxBatch?: number;
  /** Recycle a thread whose heapUsed + external exceeds this, bytes (default 1 GiB). */
  recycleHeapBytes?: number;
  /** Recycle the reporting thread when process RSS exceeds this, bytes (default: off; RSS is process-wide). */
  recycleRssBytes?: number;
  /**
   * A proving task (up to `maxBatch` proofs) still running after this long is aborted: its thread
   * is terminated and replaced, its jobs fail with `worker_crashed` (default 300 000 ms). Guards
   * against a thread that hangs, whose jobs would otherwise hold their queue slots for ever.
   */
  taskTimeoutMs?: number;
  /** Light keys: fixed-base table budget per key, MiB (default $REFRACT_LIGHT_TABLE_MB, else 48; 0 = none). */
  lightTableMb?: number;
  /** Worker module (default workers/prove.ts); for tests. */
  workerFile?: string;
}

/**
 * Checks a key id the pool takes: an own circuit id (circuits.ts) or a Light key id (`light/<name>`).
 * @throws ProverError `unsupported_shape` naming the unknown id
 */
export function checkKeyId(id: string): void {
  if (!lightKeyOfId(id)) getCircuit(id);
}

/**
 * Up to this many cores, pool threads get multi-threaded curves by default (P threads × P nested
 * curve workers: at most 16 compute threads on 4 cores).
 */
export const MULTI_THREADED_CURVES_MAX_CORES = 4;

/**
 * The default pool layout for a machine with `cores` cores (default `os.availableParallelism()`)
 * and the kernels (default `proverKernels()`): `size` = cores; `singleThread` = true with the native
 * kernels, else cores > MULTI_THREADED_CURVES_MAX_CORES. On 2 cores: 2s (native) or 2m (wasm);
 * bench/results/prove.json compares layouts.
 */
export function defaultPoolLayout(cores = availableParallelism(), kernels: ProverKernels = proverKernels()): { size: number; singleThread: boolean } {
  return { size: cores, singleThread: kernels === 'native' || cores > MULTI_THREADED_CURVES_MAX_CORES };
}

/** A finished proof. Times in ms. */
export interface ProveResult {
  circuitId: string;
  proof: Groth16Proof;
  /** Decimal strings, order [roots, leaves, addrRoots, values]. */
  publicSignals: string[];
  /** Time from `prove()` to dispatch. */
  queueMs: number;
  /** Wasm witness calculation. */
  witnessMs: number;
  /** snarkjs groth16.prove. */
  proveMs: number;
  /** In-worker verification (0 when disabled). */
  verifyMs: number;
  /** Time from `prove()` to resolution. */
  totalMs: number;
  /** Number of jobs in the task this proof was part of. */
  batchSize: number;
  threadId: number;
  /** Light keys: the C prover's stages (solve, h, MSMs), ms. */
  stages?: ProveStages;
}

/** Pool statistics (for metrics and health). */
export interface ProverPoolStats {
  size: number;
  singleThread: boolean;
  /** MSM and FFT kernels of the threads. */
  kernels: ProverKernels;
  /** Groth16 prover of the threads. */
  backend: ProverBackendKind;
  /** Native backend: fixed-base MSM table budget per key, MiB. */
  tableMb: number;
  /** Native backend: the directory of the table files, or false (`off`: built at every load, never written). */
  tableFiles: string | false;
  /** Tasks running now (≤ size). */
  busy: number;
  /** Jobs waiting for a thread, total and per circuit. */
  queueSize: number;
  queuedByCircuit: Record<string, number>;
  /** Share of thread time spent on tasks since the pool started, 0..1. */
  utilization: number;
  tasks: number;
  proofs: number;
  failures: number;
  /** Jobs that shared a task with at least one other job. */
  batchedJobs: number;
  recycled: number;
  /** Thread-level failures (crashes, start-up errors) and the last one's message. */
  workerErrors: number;
  lastWorkerError?: string;
  /** Last memory report per thread id (bytes). */
  threads: Record<number, { heapUsed: number; external: number; rss: number; resident: string[] }>;
  /** Native backend: per circuit, its latest key load (tables' source and size, load time, table file note). */
  tableLoads: Record<string, TableLoad>;
}

interface Job {
  circuitId: string;
  input: PoolInput;
  enqueued: number;
  onStart?: () => void;
  resolve: (r: ProveResult) => void;
  reject: (e: unknown) => void;
}

/** Options of one `ProverPool.prove` call. */
export interface ProveOptions {
  /**
   * Cancels the job while it still waits for a thread: it is removed from the queue and the call
   * rejects with the signal's reason (a `ProverError`), or `ProverError('timeout')`. A job already
   * running in a thread is not interrupted (its result is delivered as usual).
   */
  signal?: AbortSignal;
  /** Called once when a thread takes the job (it leaves the queue); for "processing" job states. Must not throw. */
  onStart?: () => void;
}

/**
 * Logs one key load of a prover thread (pino-style logger): info with its fixed-base tables' source
 * (built / file / shared / none), MiB and load time; warn with the table file's note when something
 * went wrong with the file (the tables were then built, and the next start builds them again unless
 * the file could be written).
 */
export function logTableLoad(log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void }, t: TableLoad): void {
  const fields = { circuit: t.circuitId, thread: t.threadId, tables: t.source, mib: t.mib, ms: t.ms };
  if (t.note) log.warn({ ...fields, note: t.note }, 'prover key loaded; its table file could not be used');
  else log.info(fields, 'prover key loaded');
}

/** The pool; see the module comment. Create one per process; `close()` on shutdown. */
export class ProverPool {
  private readonly piscina: Piscina;
  private readonly queues = new Map<string, Job[]>();
  private readonly opts: Required<Omit<ProverPoolOptions, 'workerFile' | 'recycleRssBytes' | 'onTableLoad' | 'lightTableMb'>> & { recycleRssBytes: number; lightTableMb?: number };
  private inFlight = 0;
  private paused = 0;
  /** The pending dispatch pass: a `batchWindowMs` timer, or (window 0) an immediate. */
  private timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  private closed = false;
  private readonly started = performance.now();
  private busyMs = 0;
  private readonly counters = { tasks: 0, proofs: 0, failures: 0, batchedJobs: 0, recycled: 0, workerErrors: 0 };
  private lastWorkerError: string | undefined;
  private readonly threadMem: ProverPoolStats['threads'] = {};
  private readonly tableLoads: Record<string, TableLoad> = {};
  private readonly onTableLoad: ((t: TableLoad) => void) | undefined;

  /**
   * Starts `size` threads (they load circuits lazily; see `warm`).
   * @throws ProverError `invalid_input` for a non-positive size
   */
  constructor(options: ProverPoolOptions) {
    const size = options.size ?? availableParallelism();
    if (!Number.isInteger(size) || size < 1) throw new ProverError('invalid_input', `pool size must be a positive integer, got ${size}`);
    const kernels = proverKernels(options.kernels);
    this.onTableLoad = options.onTableLoad;
    this.opts = {
      keysDir: path.resolve(options.keysDir),
      size,
      singleThread: options.singleThread ?? defaultPoolLayout(availableParallelism(), kernels).singleThread,
      verify: options.verify ?? true,
      kernels,
      msmThreads: options.msmThreads ?? 0,
      backend: proverBackend(options.backend),
      tableMb: proverTableMb(options.tableMb),
      tableFiles: proverTableFiles(options.keysDir, options.tableFiles),
      batchWindowMs: options.batchWindowMs ?? 0,
      maxBatch: Math.max(1, options.maxBatch ?? 4),
      recycleHeapBytes: options.recycleHeapBytes ?? 1024 ** 3,
      recycleRssBytes: options.recycleRssBytes ?? Infinity,
      taskTimeoutMs: options.taskTimeoutMs ?? 300_000,
      lightTableMb: options.lightTableMb,
    };
    if (this.opts.backend === 'native' && this.opts.tableFiles) {
      // a table file directory of its own: made here; if it cannot be, each load's table note says why
      try {
        mkdirSync(this.opts.tableFiles, { recursive: true });
      } catch {
        /* reported per key (TableLoad.note, GET /health) */
      }
    }
    // The threads' wasm (the witness calculators) compiled optimized at load, so proofs run at their steady
    // speed from the first one (snark.ts). V8's flags are the process's: set here, before any thread compiles.
    optimizeWasmAtCompile();
    const file = options.workerFile ?? fileURLToPath(new URL('../../../workers/prove.ts', import.meta.url));
    const workerData: ProveWorkerData = {
      keysDir: this.opts.keysDir,
      singleThread: this.opts.singleThread,
      verify: this.opts.verify,
      kernels: this.opts.kernels,
      msmThreads: this.opts.msmThreads,
      backend: this.opts.backend,
      tableMb: this.opts.tableMb,
      tableFiles: this.opts.tableFiles,
      lightTableMb: this.opts.lightTableMb,
    };
    this.piscina = new Piscina({
      filename: pathToFileURL(file).href,
      execArgv: tsxExecArgv(file),
      minThreads: size,
      maxThreads: size,
      concurrentTasksPerWorker: 1,
      idleTimeout: Infinity,
      // Idle threads wait in their event loop, not in Atomics.wait: what a task leaves for after its
      // answer (the malloc_trim of workers/prove.ts `trimAfter`) then runs at once instead of never.
      atomics: 'disabled',
      workerData,
    });
    // An error event with no task attached (e.g. a thread failing at start-up) must not crash the
    // process; it is counted in stats().
    this.piscina.on('error', (e: unknown) => this.noteWorkerError(e));
  }

  /**
   * Proves one circuit input.
   * @param circuitId a registry id (circuits.ts), or a Light key id (`light/<name>`, lightKeys.ts `lightKeyId`)
   * @param input circom input JSON for that circuit (witness.ts `buildCircuitInput`); for a Light key,
   *   the witness vector (lightKeys.ts `lightWitness().inputs`)
   * @returns the proof (verified in the worker unless `verify: false`) with timings
   * @throws ProverError: `unsupported_shape` (unknown id), `witness_failed` (constraint not satisfied,
   *   message names it), `invalid_input`, `keys_missing`, `verify_failed`, `worker_crashed`, `internal`
   */
  prove(circuitId: string, input: PoolInput, opts: ProveOptions = {}): Promise<ProveResult> {
    if (this.closed) return Promise.reject(new ProverError('worker_crashed', 'prover pool is closed'));
    try {
      checkKeyId(circuitId);
    } catch (e) {
      return Promise.reject(e);
    }
    const { signal } = opts;
    const cancelError = () =>
      signal?.reason instanceof ProverError ? signal.reason : new ProverError('timeout', `proof for ${circuitId} was cancelled before a prover thread took it`);
    if (signal?.aborted) return Promise.reject(cancelError());
    return new Promise((resolve, reject) => {
      let q = this.queues.get(circuitId);
      if (!q) this.queues.set(circuitId, (q = []));
      const onAbort = () => {
        const list = this.queues.get(circuitId);
        const k = list?.indexOf(job) ?? -1;
        if (k >= 0) {
          list!.splice(k, 1);
          reject(cancelError());
        }
      };
      const job: Job = {
        circuitId,
        input,
        enqueued: performance.now(),
        onStart: opts.onStart,
        resolve: (r) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(r);
        },
        reject: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      q.push(job);
      this.schedule();
    });
  }

  /**
   * Verifies a proof made elsewhere (e.g. by a prover node) against this pool's verification key
   * of `circuitId`, in a pool thread (its curve is already built; only the vkey is loaded). Runs
   * beside the proving jobs (it does not wait in the per-circuit queues).
   * @returns true when the proof verifies for `publicSignals`
   * @throws ProverError `keys_missing` when the vkey cannot be read, `worker_crashed` when the thread dies
   */
  async verify(circuitId: string, proof: Groth16Proof, publicSignals: string[]): Promise<boolean> {
    checkKeyId(circuitId);
    const task: ProveTask = { circuitId, inputs: [], verify: { proof, publicSignals } };
    let r: ProveTaskResult;
    try {
      r = (await this.piscina.run(task)) as ProveTaskResult;
    } catch (e) {
      throw new ProverError('worker_crashed', `prover thread failed while verifying ${circuitId}: ${(e as Error)?.message ?? String(e)}`);
    }
    this.noteMemory(r);
    if (r.loadError) throw new ProverError(r.loadError.code, r.loadError.message, r.loadError.details);
    return r.verified === true;
  }

  /**
   * Loads circuits (wasm, zkey, vkey) and the curve in every thread, so first requests do not pay
   * for it. Sends one preload task per thread (each thread runs one task at a time).
   * @throws ProverError `keys_missing` when a circuit's keys cannot be loaded
   */
  async warm(circuitIds: readonly string[]): Promise<void> {
    circuitIds.forEach((id) => checkKeyId(id));
    const task: ProveTask = { circuitId: circuitIds[0] ?? '', inputs: [], preload: [...circuitIds] };
    const results = (await Promise.all(Array.from({ length: this.opts.size }, () => this.piscina.run(task)))) as ProveTaskResult[];
    for (const r of results) {
      this.noteMemory(r);
      if (r.loadError) throw new ProverError(r.loadError.code, r.loadError.message, r.loadError.details);
    }
  }

  /** Current statistics (cheap; no thread round trip). */
  stats(): ProverPoolStats {
    const queuedByCircuit: Record<string, number> = {};
    let queueSize = 0;
    for (const [id, q] of this.queues) {
      if (q.length) queuedByCircuit[id] = q.length;
      queueSize += q.length;
    }
    const elapsed = performance.now() - this.started;
    return {
      size: this.opts.size,
      singleThread: this.opts.singleThread,
      kernels: this.opts.kernels,
      backend: this.opts.backend,
      tableMb: this.opts.tableMb,
      tableFiles: this.opts.tableFiles,
      busy: this.inFlight,
      queueSize,
      queuedByCircuit,
      utilization: elapsed > 0 ? Math.min(1, this.busyMs / (elapsed * this.opts.size)) : 0,
      ...this.counters,
      lastWorkerError: this.lastWorkerError,
      threads: { ...this.threadMem },
      tableLoads: { ...this.tableLoads },
    };
  }

  /** Rejects queued jobs, waits for running tasks and stops the threads. */
  async close(): Promise<void> {
    this.closed = true;
    // each with its own clear: clearImmediate on a Timeout (or the reverse) is not a no-op in Node
    if (this.timer && this.opts.batchWindowMs > 0) clearTimeout(this.timer as NodeJS.Timeout);
    else if (this.timer) clearImmediate(this.timer as NodeJS.Immediate);
    for (const q of this.queues.values()) {
      for (const j of q.splice(0)) j.reject(new ProverError('worker_crashed', 'prover pool closed before the job ran'));
    }
    await this.piscina.close();
  }

  // -------------------------------------------------------------------------------------------

  private schedule(): void {
    if (this.timer || this.closed) return;
    const pass = () => {
      this.timer = undefined;
      this.pump();
    };
    // Window 0 (the default): the pass runs once this turn's arrivals are in (jobs submitted together,
    // e.g. one request's proofs, still share it), with no timer's delay before a free thread starts.
    this.timer = this.opts.batchWindowMs > 0 ? setTimeout(pass, this.opts.batchWindowMs) : setImmediate(pass);
  }

  private pump(): void {
    // Batch sizes come from the queue lengths at the start of this pass, so jobs queued together
    // are split evenly between the threads that free up (8 queued, 2 threads → 4 + 4).
    const share = new Map<Job[], number>();
    while (!this.closed && this.paused === 0 && this.inFlight < this.opts.size) {
      let pick: Job[] | undefined;
      for (const q of this.queues.values()) {
        if (q.length && (!pick || q[0]!.enqueued < pick[0]!.enqueued)) pick = q;
      }
      if (!pick) return;
      if (!share.has(pick)) share.set(pick, Math.ceil(pick.length / this.opts.size));
      const take = Math.min(this.opts.maxBatch, Math.max(1, share.get(pick)!));
      this.dispatch(pick.splice(0, take));
    }
  }

  private dispatch(jobs: Job[]): void {
    const circuitId = jobs[0]!.circuitId;
    const t0 = performance.now();
    for (const j of jobs) j.onStart?.();
    this.inFlight++;
    this.counters.tasks++;
    if (jobs.length > 1) this.counters.batchedJobs += jobs.length;
    // Items stream back over a MessagePort as each finishes; the task result settles the rest
    // (port messages and the result travel on different channels, so either may come first).
    const done = new Array<boolean>(jobs.length).fill(false);
    const settleOnce = (k: number, item: ProveItem, threadId: number) => {
      if (done[k]) return;
      done[k] = true;
      this.settle(jobs[k]!, item, t0, jobs.length, threadId);
    };
    let port: MessageChannel | undefined;
    let task: ProveTask = { circuitId, inputs: jobs.map((j) => j.input) };
    let run: Promise<ProveTaskResult>;
    // Watchdog: aborting a running Piscina task terminates its thread (a replacement starts).
    const watchdog = new AbortController();
    const limit = this.opts.taskTimeoutMs;
    const timer = setTimeout(() => watchdog.abort(new Error(`task ran longer than ${limit} ms; its thread was terminated`)), limit);
    timer.unref();
    if (jobs.length > 1) {
      port = new MessageChannel();
      port.port1.on('message', (m: ProveItemMessage) => settleOnce(m.index, m.item, m.threadId));
      task = { ...task, port: port.port2 };
      run = this.piscina.run(task, { transferList: [port.port2], signal: watchdog.signal }) as Promise<ProveTaskResult>;
    } else {
      run = this.piscina.run(task, { signal: watchdog.signal }) as Promise<ProveTaskResult>;
    }
    run.then(
      (res) => {
        clearTimeout(timer);
        port?.port1.close();
        this.finish(t0);
        this.noteMemory(res);
        res.proofs.forEach((item: ProveItem, k) => settleOnce(k, item, res.threadId));
        this.maybeRecycle(res);
        this.pump();
      },
      (err: unknown) => {
        clearTimeout(timer);
        port?.port1.close();
        this.finish(t0);
        this.noteWorkerError(err);
        const why = watchdog.signal.aborted ? (watchdog.signal.reason as Error).message : ((err as Error)?.message ?? String(err));
        const e = new ProverError('worker_crashed', `prover thread failed while proving ${circuitId}: ${why}`);
        jobs.forEach((j, k) => {
          if (done[k]) return;
          done[k] = true;
          this.counters.failures++;
          j.reject(e);
        });
        this.pump();
      },
    );
  }

  private finish(t0: number): void {
    this.inFlight--;
    this.busyMs += performance.now() - t0;
  }

  private settle(job: Job, item: ProveItem, dispatched: number, batchSize: number, threadId: number): void {
    if (!item.ok) {
      this.counters.failures++;
      job.reject(new ProverError(item.error.code, item.error.message, item.error.details));
      return;
    }
    this.counters.proofs++;
    const now = performance.now();
    job.resolve({
      circuitId: job.circuitId,
      proof: item.proof,
      publicSignals: item.publicSignals,
      queueMs: dispatched - job.enqueued,
      witnessMs: item.witnessMs,
      proveMs: item.proveMs,
      verifyMs: item.verifyMs,
      totalMs: now - job.enqueued,
      batchSize,
      threadId,
      ...(item.stages ? { stages: item.stages } : {}),
    });
  }

  private noteWorkerError(e: unknown): void {
    this.counters.workerErrors++;
    this.lastWorkerError = (e as Error)?.message ?? String(e);
  }

  private noteMemory(r: ProveTaskResult): void {
    this.threadMem[r.threadId] = { heapUsed: r.heapUsed, external: r.external, rss: r.rss, resident: r.resident };
    for (const t of r.tableLoads ?? []) {
      // the thread that built or read the tables (and its note) stays the circuit's entry: the other threads only share them
      const prev = this.tableLoads[t.circuitId];
      if (t.source !== 'shared' || !prev || prev.source === 'shared' || prev.source === 'none') this.tableLoads[t.circuitId] = t;
      try {
        this.onTableLoad?.(t);
      } catch {
        // a failing observer must not fail the proofs
      }
    }
  }

  private maybeRecycle(r: ProveTaskResult): void {
    if (r.heapUsed + r.external <= this.opts.recycleHeapBytes && r.rss <= this.opts.recycleRssBytes) return;
    const worker = this.piscina.threads.find((t) => t.threadId === r.threadId);
    if (!worker) return;
    this.counters.recycled++;
    delete this.threadMem[r.threadId];
    this.paused++;
    let resumed = false;
    const resume = () => {
      if (resumed) return;
      resumed = true;
      clearTimeout(guard);
      this.paused--;
      this.pump();
    };
    // Piscina's own 'exit' listener (registered first) removes the thread and starts a replacement.
    worker.once('exit', () => setImmediate(resume));
    const guard = setTimeout(resume, 10_000);
    void worker.terminate();
  }
}
