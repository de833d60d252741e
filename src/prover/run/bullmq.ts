/**
 * The proof queue on Redis (BullMQ): `BullBackend` enqueues from the API process, `startProverNode`
 * (`refract prover`, and the API's own local worker) drains it.
 *
 * Jobs
 * - Job id = SHA-256 of (circuit id, circom input), written as a UUID (`proofJobId`): identical
 *   requests map to one job, so a second request while the first is queued or proving waits for the
 *   same proof, and one made within the result TTL (`removeOnComplete.age`, default 1 h) gets the
 *   stored proof at once (spec §5.5 dedup).
 * - Async jobs (`submit`, `POST /prove` with `X-Async: true`) are the same jobs, added without
 *   waiting; their failures are kept for the result TTL too, and `jobStatus` reads any job's state
 *   from BullMQ, so every API replica on the queue answers `GET /prove/status`. A job finished more
 *   than the result TTL ago counts as unknown even before BullMQ's lazy clean-up removes it.
 * - Failures: input errors (constraint not satisfied, bad input, unknown circuit) fail at once
 *   (`UnrecoverableError`); a node without the circuit's keys hands the job back (delayed, no attempt
 *   used) for a node that has them, and fails it with `keys_missing` after `keysMissingHandbacks`;
 *   anything else (a crashed prover thread) is retried `attempts` times with exponential backoff.
 *   A request that finds its job already failed before it arrived removes it and enqueues afresh
 *   (BullMQ drops old failed jobs only when another job fails, so `failedTtlSeconds` alone would
 *   let one failure answer identical requests for hours).
 * - A node that dies mid-proof (SIGKILL, OOM) stops renewing its job lock; after `lockDurationMs`
 *   another node's stalled check (every `stalledIntervalMs`) puts the job back in the queue and it
 *   is proved again (up to `maxStalledCount` times). Locks are renewed by the node's event loop,
 *   which stays free because proofs run in the Piscina pool (never on the BullMQ event loop).
 * - Jobs older than `jobExpiryMs` (default 10 min, spec §5.4) are failed unproved: nobody waits for them.
 * - The API waits on the QueueEvents stream (`completed:<id>` / `failed:<id>`) plus one state look-up,
 *   all inside its own error handling (BullMQ's `Job.waitUntilFinished` lets a failed Redis look-up
 *   escape as an unhandled rejection, which would end the API process); the job itself goes on after
 *   a timeout, and its proof is kept for the next identical request.
 *
 * Results carry the prover node's id and timings (queue wait, witness, prove, verify), so the API
 * process observes every proof in its own metrics (proofService.ts). Errors travel as JSON
 * `{code, message}` in the job's `failedReason`.
 */
import { randomBytes } from 'node:crypto';
import { DelayedError, Queue, QueueEvents, UnrecoverableError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { BackendDepth, BackendProof, ProofBackend, ProofJob } from './backend.ts';
import { DEFAULT_MAX_PENDING, NODE_ID, NODE_NAME, queuedJob } from './backend.ts';
import { lightKeyOfId } from '../keys/lightKeys.ts';
import { ProverError, type ProverErrorCode } from '../errors.ts';
import { type PoolThreadSettings, ProverPool, singleThreadFor } from './pool.ts';
import type { CircuitInput, Groth16Proof } from '../engine/snark.ts';
import type { TableLoad } from './proveMessages.ts';
import { displayUrl } from '../../displayUrl.ts';
import { DEFAULT_QUEUE_NAME, proofJobId, type BackendJobStatus, type ProofJobData, type ProofJobResult } from './proofJobs.ts';

/** Redis connection options for BullMQ from a URL. */
function connection(url: string, worker: boolean) {
  // Workers must retry forever (maxRetriesPerRequest null); producers fail fast (no offline queue,
  // and a command unanswered for 5 s fails, also on a half-open connection the kernel still holds).
  return worker
    ? { url, maxRetriesPerRequest: null }
    : { url, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 5000, commandTimeout: PRODUCER_COMMAND_TIMEOUT_MS };
}

/** A producer's Redis command (add, job state, counts) fails after this long without an answer, ms. */
export const PRODUCER_COMMAND_TIMEOUT_MS = 5000;

/** Options of `BullBackend`. */
export interface BullBackendOptions {
  redisUrl: string;
  queueName?: string;
  /** Tries per job for retryable failures (default 3). */
  attempts?: number;
  /** First retry delay, ms, doubled each time (default 1000). */
  backoffMs?: number;
  /** Completed jobs (proofs) are kept this long for dedup, s (default 3600). */
  resultTtlSeconds?: number;
  /** Failed jobs are kept this long, s (default 10). */
  failedTtlSeconds?: number;
  /** Wait this long for Redis at start, ms (default 5000). */
  connectTimeoutMs?: number;
  /**
   * Most jobs waiting in the queue (all API replicas' together) before a new request is refused
   * with `queue_full` (default 64; joining an identical job is always allowed). Keeps a backlog
   * that provers cannot clear within the request timeout from growing without bound.
   */
  maxWaiting?: number;
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Connects once to `url` and PINGs, without retries, within `timeoutMs`. BullMQ objects are only made
 * after this answers: a QueueEvents or Worker whose Redis never answered retries for ever, and its
 * close() does not return (it waits for a connection that never comes).
 * @throws Error naming the Redis URL (without credentials) and the reason
 */
async function probeRedis(url: string, timeoutMs: number): Promise<void> {
  const r = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  let cause: Error | undefined;
  r.on('error', (e: Error) => (cause ??= e));
  try {
    await withTimeout(
      r.connect().then(() => r.ping()),
      timeoutMs,
      `Redis at ${displayUrl(url)}`,
    );
  } catch (e) {
    throw new Error(`Redis at ${displayUrl(url)}: ${(cause ?? (e as Error)).message}`);
  } finally {
    r.disconnect();
  }
}

function decodeFailure(reason: string, jobId: string): ProverError {
  try {
    const e = JSON.parse(reason) as { code?: ProverErrorCode; message?: string };
    if (e && typeof e.code === 'string' && typeof e.message === 'string') return new ProverError(e.code, e.message, { jobId });
  } catch {
    /* plain text */
  }
  if (/stalled more than allowable limit/i.test(reason)) {
    return new ProverError('worker_crashed', `proof job ${jobId} failed: the prover nodes taking it died or stalled too often (${reason})`, { jobId });
  }
  return new ProverError('internal', `proof job ${jobId} failed: ${reason}`, { jobId });
}

/** The producer side: see the module comment. Create with `BullBackend.create`. */
export class BullBackend implements ProofBackend {
  readonly kind = 'bullmq' as const;

  private constructor(
    readonly queue: Queue<ProofJobData, ProofJobResult>,
    private readonly events: QueueEvents,
    private readonly opts: BullBackendOptions,
  ) {}

  /**
   * Connects the queue and its event stream.
   * @throws ProverError `queue_unavailable` when Redis does not answer within `connectTimeoutMs`
   */
  static async create(opts: BullBackendOptions): Promise<BullBackend> {
    const name = opts.queueName ?? DEFAULT_QUEUE_NAME;
    try {
      await probeRedis(opts.redisUrl, opts.connectTimeoutMs ?? 5000);
    } catch (e) {
      throw new ProverError('queue_unavailable', `proof queue unavailable: ${(e as Error).message}`);
    }
    const queue = new Queue<ProofJobData, ProofJobResult>(name, { connection: connection(opts.redisUrl, false) });
    const events = new QueueEvents(name, { connection: connection(opts.redisUrl, true) });
    queue.on('error', () => {}); // connection errors surface as failed calls
    events.on('error', () => {});
    events.setMaxListeners(0); // two listeners per waiting request, removed when it settles
    try {
      await withTimeout(Promise.all([queue.waitUntilReady(), events.waitUntilReady()]), opts.connectTimeoutMs ?? 5000, `Redis at ${displayUrl(opts.redisUrl)}`);
    } catch (e) {
      // Not awaited: closing a QueueEvents that never connected does not return (see probeRedis).
      void Promise.allSettled([queue.close(), events.close()]);
      throw new ProverError('queue_unavailable', `proof queue unavailable: ${(e as Error).message}`);
    }
    return new BullBackend(queue, events, opts);
  }

  /**
   * Enqueues (or joins an identical job) and waits for the result.
   * @throws ProverError `queue_unavailable` (Redis), `timeout`, or the job's error
   */
  async prove(job: ProofJob, opts: { timeoutMs: number }): Promise<BackendProof> {
    const queued = queuedJob(job);
    const circuitId = queued.keyId;
    const jobId = proofJobId(circuitId, queued.input);
    const t0 = performance.now();
    const submitted = Date.now();
    let r: ProofJobResult | 'stale' = 'stale';
    try {
      await this.checkBacklog(jobId);
      // A job that had failed before this request arrived is stale: remove it and enqueue afresh, once.
      for (let attempt = 0; attempt < 2 && r === 'stale'; attempt++) {
        if (attempt > 0) await this.queue.remove(jobId).catch(() => 0);
        await this.enqueue(queued, jobId);
        r = await this.waitForJob(jobId, Math.max(1, opts.timeoutMs - (performance.now() - t0)), submitted);
      }
      if (r === 'stale') throw new Error(`job ${jobId} keeps failing before it is waited for`);
    } catch (e) {
      if (e instanceof ProverError) throw e;
      const msg = (e as Error)?.message ?? String(e);
      if (/timed out before finishing/.test(msg)) {
        const d = await this.depth().catch(() => undefined);
        throw new ProverError(
          'timeout',
          `proof for ${circuitId} did not finish within ${(opts.timeoutMs / 1000).toFixed(1)} s (queue ${this.queue.name}: ${d ? `${d.waiting} waiting, ${d.active} proving` : 'depth unknown'}; is a \`refract prover\` node running?)`,
          { jobId, timeoutMs: opts.timeoutMs },
        );
      }
      if (/Connection is closed|ECONNREFUSED|Stream isn't writeable|Command timed out|ETIMEDOUT|ECONNRESET/i.test(msg)) {
        throw new ProverError('queue_unavailable', `proof queue unavailable while waiting for job ${jobId}: ${msg}`);
      }
      throw decodeFailure(msg, jobId);
    }
    return toBackendProof(r, jobId, submitted, performance.now() - t0);
  }

  /**
   * Async submission (`POST /prove` with `X-Async: true`): enqueues the job, or joins the identical
   * one, and returns at once. A job found failed, or finished longer than `resultTtlSeconds` ago,
   * is removed and enqueued afresh. Async jobs keep a failure for `resultTtlSeconds` too (not
   * `failedTtlSeconds`), so that their status can say why.
   * @returns the job id (`proofJobId`), whether an existing job was joined, and the queue name
   * @throws ProverError `queue_full` (backlog), `queue_unavailable` (Redis)
   */
  async submit(job: ProofJob): Promise<{ jobId: string; deduplicated: boolean; queue: string }> {
    const queued = queuedJob(job);
    const jobId = proofJobId(queued.keyId, queued.input);
    await this.checkBacklog(jobId);
    // The state first, then the job's hash (see `readJob`).
    const found = await this.readJob(jobId);
    if (found) {
      const { state, job: existing } = found;
      const expired = state === 'completed' && this.finishedTooLongAgo(existing.finishedOn);
      if (state !== 'failed' && !expired) return { jobId, deduplicated: true, queue: this.queue.name };
      await this.queue.remove(jobId).catch((e: unknown) => this.redisFailed('cannot remove the finished job', e));
    }
    const ttl = this.opts.resultTtlSeconds ?? 3600;
    await this.enqueue(queued, jobId, ttl);
    return { jobId, deduplicated: false, queue: this.queue.name };
  }

  /**
   * The state of job `jobId` from BullMQ, as any API replica sees it: waiting / delayed /
   * prioritized → `queued`, active → `processing`, `completed` with the node's proof, `failed` with
   * its error. A job finished more than `resultTtlSeconds` ago counts as unknown (BullMQ removes old
   * jobs only lazily).
   * @returns undefined for an unknown (or expired) job
   * @throws ProverError `queue_unavailable` (Redis)
   */
  async jobStatus(jobId: string): Promise<BackendJobStatus | undefined> {
    const found = await this.readJob(jobId);
    if (!found) return undefined;
    const { state, job } = found;
    const base = { jobId, circuitId: job.data.circuitId, createdAt: job.timestamp, expectedPublicSignals: job.data.publicSignals };
    if (state === 'completed' || state === 'failed') {
      if (this.finishedTooLongAgo(job.finishedOn)) return undefined;
      const finishedAt = job.finishedOn ?? Date.now();
      if (state === 'failed') return { ...base, state: 'failed', finishedAt, error: decodeFailure(job.failedReason || 'failed', jobId) };
      const r = job.returnvalue;
      if (!r || !r.proof || !Array.isArray(r.publicSignals)) {
        return { ...base, state: 'failed', finishedAt, error: new ProverError('internal', `proof job ${jobId} completed without a proof`) };
      }
      return { ...base, state: 'completed', finishedAt, result: toBackendProof(r, jobId, job.timestamp, finishedAt - job.timestamp) };
    }
    return { ...base, state: state === 'active' ? 'processing' : 'queued' };
  }

  /**
   * Job `jobId`'s state, then its hash: two Redis reads, in that order. BullMQ writes the return
   * value or failure reason in the same script that moves a job to completed or failed, so a hash
   * read after a finished state holds them. (Read the other way round, a job finishing between the
   * reads looked completed without a proof: a good proof reported as a failed job.) A finished job
   * removed and added afresh between the reads (another request retrying it) has a hash without
   * `finishedOn`: the newer read wins, and the job counts as waiting.
   * @returns undefined when the job is unknown (never added, removed, or removed between the reads)
   * @throws ProverError `queue_unavailable` (Redis)
   */
  private async readJob(jobId: string): Promise<{ state: string; job: Job<ProofJobData, ProofJobResult> } | undefined> {
    const state = await this.queue.getJobState(jobId).catch((e: unknown) => this.redisFailed('cannot read the job state', e));
    if (state === 'unknown') return undefined;
    const job = await this.queue.getJob(jobId).catch((e: unknown) => this.redisFailed('cannot read the job', e));
    if (!job) return undefined;
    const finished = state === 'completed' || state === 'failed';
    return { state: finished && job.finishedOn === undefined ? 'waiting' : state, job };
  }

  /** True when `finishedOn` (ms epoch) is more than `resultTtlSeconds` ago. */
  private finishedTooLongAgo(finishedOn: number | undefined): boolean {
    return finishedOn !== undefined && Date.now() - finishedOn > (this.opts.resultTtlSeconds ?? 3600) * 1000;
  }

  /**
   * Refuses a new job while `maxWaiting` or more are waiting. An identical job already in the queue
   * is joined whatever the backlog (it costs nothing more).
   * @throws ProverError `queue_full`, `queue_unavailable` (Redis)
   */
  private async checkBacklog(jobId: string): Promise<void> {
    const limit = this.opts.maxWaiting ?? DEFAULT_MAX_PENDING;
    const d = await this.depth().catch((e: unknown) => this.redisFailed('cannot read the queue depth', e));
    if (d.waiting < limit) return;
    const state = await this.queue.getJobState(jobId).catch((e: unknown) => this.redisFailed('cannot read the job state', e));
    if (state === 'waiting' || state === 'active' || state === 'delayed' || state === 'prioritized' || state === 'completed') return;
    throw new ProverError('queue_full', `proof queue ${this.queue.name} is full (${d.waiting} waiting, ${d.active} proving, limit ${limit}); retry later or add prover nodes`, { waiting: d.waiting, limit });
  }

  /**
   * Adds the job (or joins the identical one); a failure is kept `failedTtlSeconds` (default 10 s),
   * or `failedTtl` s when given (async jobs). @throws ProverError `queue_unavailable`
   */
  private async enqueue(queued: ReturnType<typeof queuedJob>, jobId: string, failedTtl?: number): Promise<void> {
    const { keyId: circuitId, input, publicSignals } = queued;
    try {
      await this.queue.add(
        'prove',
        { circuitId, input, publicSignals },
        {
          jobId,
          attempts: this.opts.attempts ?? 3,
          backoff: { type: 'exponential', delay: this.opts.backoffMs ?? 1000 },
          removeOnComplete: { age: this.opts.resultTtlSeconds ?? 3600 },
          removeOnFail: { age: failedTtl ?? this.opts.failedTtlSeconds ?? 10 },
        },
      );
    } catch (e) {
      this.redisFailed('cannot enqueue the proof', e);
    }
  }

  /** Throws ProverError `queue_unavailable`: "`what` (Redis at <url>): <reason>". */
  private redisFailed(what: string, e: unknown): never {
    throw new ProverError('queue_unavailable', `${what} (Redis at ${displayUrl(this.opts.redisUrl)}): ${(e as Error)?.message ?? String(e)}`);
  }

  /**
   * Waits for job `jobId`: resolves with its return value; rejects with Error(failedReason) when it
   * fails, or with a "timed out before finishing" Error after `timeoutMs`; resolves `'stale'` when the
   * job is found failed and was created before `since` (ms epoch, API clock), or no longer exists. Listens for the finish
   * events first, then looks the job's state up once (it may have finished before the listeners
   * were in place). Every Redis error rejects this promise; none escapes unhandled.
   */
  private waitForJob(jobId: string, timeoutMs: number, since: number): Promise<ProofJobResult | 'stale'> {
    return new Promise((resolve, reject) => {
      const completedEvent = `completed:${jobId}`;
      const failedEvent = `failed:${jobId}`;
      const events = this.events as unknown as NodeJS.EventEmitter; // per-job event names are untyped
      let settled = false;
      const settle = (f: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        events.off(completedEvent, onCompleted);
        events.off(failedEvent, onFailed);
        f();
      };
      const onCompleted = (args: { returnvalue: unknown }) => settle(() => resolve(args.returnvalue as ProofJobResult));
      const onFailed = (args: { failedReason: string }) => settle(() => reject(new Error(args.failedReason)));
      const timer = setTimeout(
        () => settle(() => reject(new Error(`timed out before finishing, no finish notification arrived after ${Math.round(timeoutMs)} ms (id=${jobId})`))),
        timeoutMs,
      );
      events.on(completedEvent, onCompleted);
      events.on(failedEvent, onFailed);
      (async () => {
        await this.events.waitUntilReady();
        // The usual case, a job just added: its state alone (the events will tell the rest), no hash read.
        const now = await this.queue.getJobState(jobId);
        if (now === 'unknown') return settle(() => resolve('stale'));
        if (now !== 'completed' && now !== 'failed') return;
        const read = await this.readJob(jobId);
        if (!read) return settle(() => resolve('stale'));
        const { state, job: found } = read;
        if (state !== 'completed' && state !== 'failed') return;
        if (state === 'completed') return settle(() => resolve(found.returnvalue));
        // Created before this request (clock of the API that added it, not of the node): stale.
        if (found.timestamp < since) return settle(() => resolve('stale'));
        settle(() => reject(new Error(found.failedReason || 'failed')));
      })().catch((e: unknown) => settle(() => reject(e instanceof Error ? e : new Error(String(e)))));
    });
  }

  /** BullMQ job counts: waiting (wait + delayed + prioritized) and active. */
  async depth(): Promise<BackendDepth> {
    const c = await this.queue.getJobCounts('wait', 'delayed', 'prioritized', 'active');
    return { waiting: (c.wait ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0), active: c.active ?? 0 };
  }

  /** Closes the queue and event connections. */
  async close(): Promise<void> {
    await Promise.allSettled([this.events.close(), this.queue.close()]);
  }
}


/**
 * A node's job result as a `BackendProof`.
 * @param submitted ms epoch when the request was made (a job created earlier counts as `reused`)
 * @param totalMs time from the request to the result
 */
function toBackendProof(r: ProofJobResult, jobId: string, submitted: number, totalMs: number): BackendProof {
  if (!r || !r.proof || !Array.isArray(r.publicSignals)) throw new ProverError('internal', `proof job ${jobId} completed without a proof`);
  return {
    proof: r.proof,
    publicSignals: r.publicSignals,
    verifiedLocally: r.node === NODE_ID,
    provedBy: r.node,
    provedByName: r.nodeName ?? nodeNameOf(r.node),
    timings: {
      // For a deduplicated job started before this request, there was no wait for this request.
      queueMs: Math.max(0, Math.min(r.timings.queueMs, r.startedAt - submitted)) + r.timings.poolQueueMs,
      witnessMs: r.timings.witnessMs,
      proveMs: r.timings.proveMs,
      verifyMs: r.timings.verifyMs,
      totalMs,
    },
    batchSize: r.batchSize,
    // Created before this request was made: another request caused it (a stored or joined result).
    reused: (r.createdAt ?? r.startedAt) < submitted,
  };
}


// ---------------------------------------------------------------------------------------------
// Consumer: prover nodes

/** Options of `startProverNode`. */
export interface ProverNodeOptions extends PoolThreadSettings {
  redisUrl: string;
  /** Keys directory (ignored when `pool` is given). */
  keysDir?: string;
  /** Native backend, own pool: each key load of a prover thread (`ProverPoolOptions.onTableLoad`). */
  onTableLoad?: (t: TableLoad) => void;
  /** Use this pool (e.g. the API process's own) instead of starting one; it is not closed with the node. */
  pool?: ProverPool;
  queueName?: string;
  /** Job lock, ms (default 30 000; renewed every half of it while proving). */
  lockDurationMs?: number;
  /** Stalled-job check interval, ms (default 15 000). */
  stalledIntervalMs?: number;
  /** Times a job may stall (its node died) before it fails (default 2). */
  maxStalledCount?: number;
  /** Jobs older than this are failed unproved, ms (default 600 000). */
  jobExpiryMs?: number;
  /** Circuits to load into the pool at start (default none: loaded on first use). */
  warm?: readonly string[];
  /**
   * A node that lacks a job's circuit keys hands the job back (delayed by `keysMissingDelayMs`,
   * default 2000, no attempt used) so a node that has them can take it; after this many handbacks
   * (default 5) the job fails with `keys_missing`.
   */
  keysMissingHandbacks?: number;
  keysMissingDelayMs?: number;
  /** Job lifecycle events (tests and logs). */
  onEvent?: (e: ProverNodeEvent) => void;
}

/** What a prover node reports about its jobs. */
export type ProverNodeEvent =
  | { type: 'active'; jobId: string; circuitId: string; node: string }
  | { type: 'completed'; jobId: string; circuitId: string; node: string; proveMs: number }
  | { type: 'failed'; jobId: string; circuitId: string; node: string; code: string; message: string; retry: boolean }
  | { type: 'handedBack'; jobId: string; circuitId: string; node: string; handbacks: number };

/** The name part of an older node's id (`host:pid` or `host:pid:random`), for the metrics label. */
function nodeNameOf(nodeId: string): string {
  return nodeId.replace(/:\d+(:[0-9a-f]+)?$/, '');
}

/** A running prover node. */
export interface ProverNode {
  readonly worker: Worker<ProofJobData, ProofJobResult>;
  readonly pool: ProverPool;
  readonly nodeId: string;
  /** Stops taking jobs, waits for running ones (they finish or go back to the queue), closes its pool. */
  close(): Promise<void>;
}

/** Codes that fail a job at once: retrying gives the same answer (keys_missing: once handbacks are used up). */
const PERMANENT: ReadonlySet<ProverErrorCode> = new Set(['unsupported_shape', 'invalid_input', 'malformed_request', 'witness_failed', 'keys_missing', 'verify_failed']);

/**
 * Starts a BullMQ worker with `concurrency = pool size` whose jobs await the Piscina pool (proofs
 * never run on the worker's event loop, so its locks keep being renewed).
 * @throws ProverError `queue_unavailable` when Redis cannot be reached
 */
export async function startProverNode(opts: ProverNodeOptions): Promise<ProverNode> {
  const ownPool = !opts.pool;
  if (ownPool && !opts.keysDir) throw new ProverError('invalid_input', 'startProverNode: give keysDir or pool');
  const pool = opts.pool ?? new ProverPool({ keysDir: opts.keysDir!, size: opts.threads, singleThread: singleThreadFor(opts.curve), kernels: opts.kernels, backend: opts.backend, tableMb: opts.tableMb, tableFiles: opts.tableFiles, onTableLoad: opts.onTableLoad });
  const concurrency = pool.stats().size;
  const nodeId = NODE_ID;
  const expiry = opts.jobExpiryMs ?? 600_000;
  const emit = opts.onEvent ?? (() => {});
  const maxHandbacks = opts.keysMissingHandbacks ?? 5;
  const handbackDelay = opts.keysMissingDelayMs ?? 2000;
  try {
    await probeRedis(opts.redisUrl, 5000);
  } catch (e) {
    if (ownPool) await pool.close();
    throw new ProverError('queue_unavailable', `prover node cannot reach the queue: ${(e as Error).message}`);
  }
  if (opts.warm?.length) await pool.warm(opts.warm);

  const worker = new Worker<ProofJobData, ProofJobResult>(
    opts.queueName ?? DEFAULT_QUEUE_NAME,
    async (job, token) => {
      const { circuitId, input } = job.data;
      const jobId = job.id ?? '?';
      const startedAt = Date.now();
      emit({ type: 'active', jobId, circuitId, node: nodeId });
      if (startedAt - job.timestamp > expiry) {
        const message = `proof job ${jobId} expired: queued ${Math.round((startedAt - job.timestamp) / 1000)} s ago (limit ${expiry / 1000} s)`;
        emit({ type: 'failed', jobId, circuitId, node: nodeId, code: 'timeout', message, retry: false });
        throw new UnrecoverableError(JSON.stringify({ code: 'timeout', message }));
      }
      try {
        // a Light key's witness vector travels as hex
        const r = await pool.prove(circuitId, lightKeyOfId(circuitId) && typeof input === 'string' ? new Uint8Array(Buffer.from(input, 'hex')) : (input as CircuitInput));
        emit({ type: 'completed', jobId, circuitId, node: nodeId, proveMs: r.proveMs });
        return {
          proof: r.proof,
          publicSignals: r.publicSignals,
          node: nodeId,
          nodeName: NODE_NAME,
          timings: { queueMs: Math.max(0, (job.processedOn ?? startedAt) - job.timestamp), witnessMs: r.witnessMs, proveMs: r.proveMs, verifyMs: r.verifyMs, poolQueueMs: r.queueMs },
          batchSize: r.batchSize,
          startedAt,
          createdAt: job.timestamp,
        };
      } catch (e) {
        const pe = e instanceof ProverError ? e : new ProverError('internal', (e as Error)?.message ?? String(e));
        const handbacks = job.data.handbacks ?? 0;
        if (pe.code === 'keys_missing' && token && handbacks < maxHandbacks) {
          // Another node may have the keys: hand the job back without using an attempt.
          await job.updateData({ ...job.data, handbacks: handbacks + 1 });
          await job.moveToDelayed(Date.now() + handbackDelay, token);
          emit({ type: 'handedBack', jobId, circuitId, node: nodeId, handbacks: handbacks + 1 });
          throw new DelayedError();
        }
        const payload = JSON.stringify({ code: pe.code, message: pe.message });
        const retry = !PERMANENT.has(pe.code);
        emit({ type: 'failed', jobId, circuitId, node: nodeId, code: pe.code, message: pe.message, retry });
        throw retry ? new Error(payload) : new UnrecoverableError(payload);
      }
    },
    {
      connection: connection(opts.redisUrl, true),
      concurrency,
      lockDuration: opts.lockDurationMs ?? 30_000,
      stalledInterval: opts.stalledIntervalMs ?? 15_000,
      maxStalledCount: opts.maxStalledCount ?? 2,
      name: `${nodeId}:${randomBytes(3).toString('hex')}`,
      autorun: false,
    },
  );
  worker.on('error', () => {}); // connection hiccups: the worker reconnects by itself
  try {
    await withTimeout(worker.waitUntilReady(), 5000, `Redis at ${displayUrl(opts.redisUrl)}`);
  } catch (e) {
    void worker.close(true).catch(() => {}); // not awaited: see probeRedis
    if (ownPool) await pool.close();
    throw new ProverError('queue_unavailable', `prover node cannot reach the queue: ${(e as Error).message}`);
  }
  worker.run().catch(() => {});
  let closing: Promise<void> | undefined;
  return {
    worker,
    pool,
    nodeId,
    close: () =>
      (closing ??= (async () => {
        await worker.close();
        if (ownPool) await pool.close();
      })()),
  };
}
