/**
 * Proof backends: where a circuit input goes to become a Groth16 proof.
 *
 * - `LocalBackend`: an in-process bounded queue in front of the `ProverPool` (worker threads).
 *   Full → `ProverError('queue_full')`; per-request timeout → `ProverError('timeout')` (a job still
 *   waiting for a thread is withdrawn; one already proving finishes and is dropped).
 * - `BullBackend` (bullmq.ts): a BullMQ queue drained by prover nodes (`refract prover`).
 * - `RemoteBackend`: an external Light-compatible prover, `POST {url}/prove` with the reference JSON
 *   (spec prover.md §2.2) → `{ar, bs, krs}`.
 *
 * Backends only prove. Choosing the circuit, checking readiness, verifying foreign proofs, metrics
 * and encodings are the `ProofService`'s job (proofService.ts).
 */
import { envValue } from '../../config/config.ts';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { gnarkToSnarkjs, type GnarkProofJson } from '../engine/proofEncoding.ts';
import { ProverError, type ProverErrorCode } from '../errors.ts';
import { lightKeyId, type LightWitness } from '../keys/lightKeys.ts';
import type { ProverPool } from './pool.ts';
import type { PoolInput, ProveStages } from './proveMessages.ts';
import type { CircuitInput, Groth16Proof } from '../engine/snark.ts';
import { toProverRequest, type CircuitWitnessInput, type ValidityProofInputs } from '../engine/witness.ts';
import { displayUrl } from '../../displayUrl.ts';

/**
 * A proof request as backends take it: the inputs in indexer form, and what a prover thread needs:
 * with Light's key, its witness vector (`light`); with Refract's own circuits, the circom input
 * (`witness`). Exactly one of the two is set.
 */
export type ProofJob =
  | {
      /** Circuit id, circom input and expected public signals (witness.ts `buildCircuitInput`). */
      witness: CircuitWitnessInput;
      light?: undefined;
      /** The inputs the witness was built from (an external prover gets them as reference JSON). */
      inputs: ValidityProofInputs;
    }
  | {
      witness?: undefined;
      /** Light's key for the shape, the witness vector and the public inputs (lightKeys.ts `lightWitness`). */
      light: LightWitness;
      inputs: ValidityProofInputs;
    };

/** A job as a prover thread takes it (pool.ts). */
export interface PoolJob {
  /** An own circuit id, or a Light key id (`light/<name>`). */
  keyId: string;
  /** The circom input, or the Light witness vector. */
  input: PoolInput;
  /** The public signals the proof must have (decimal strings). */
  publicSignals: string[];
}

/** What a prover thread takes for `job` (see `PoolJob`). */
export function poolJob(job: ProofJob): PoolJob {
  if (job.light) {
    const l = job.light;
    return { keyId: lightKeyId(l.key), input: l.inputs, publicSignals: l.publics.map((x) => x.toString()) };
  }
  return { keyId: job.witness.circuitId, input: job.witness.input, publicSignals: job.witness.publicSignals };
}

/**
 * `job` as the proof queue stores it and hashes it into the job id (bullmq.ts `proofJobId`): the
 * input as JSON, a Light witness vector as hex.
 */
export function queuedJob(job: ProofJob): { keyId: string; input: CircuitInput | string; publicSignals: string[] } {
  const p = poolJob(job);
  return { ...p, input: p.input instanceof Uint8Array ? Buffer.from(p.input).toString('hex') : p.input };
}

/** Timings of one proof, ms. */
export interface ProofTimings {
  /** Waiting for a prover (queue, BullMQ wait). */
  queueMs: number;
  witnessMs: number;
  proveMs: number;
  /** Verification where the proof was made (0 when not verified there). */
  verifyMs: number;
  /** From submission to result, as the backend saw it. */
  totalMs: number;
}

/** A proof from a backend. */
export interface BackendProof {
  proof: Groth16Proof;
  /** Public signals of the proof (decimal strings), as the prover reports them. */
  publicSignals: string[];
  /**
   * True when the proof was verified against THIS process's verification keys (a local pool thread
   * did it, or the prover node shares this process). False: the caller must verify.
   */
  verifiedLocally: boolean;
  /** Who proved it: a node id (`name:pid:random`), or the external prover URL. */
  provedBy: string;
  /** The prover's stable name (`NODE_NAME` of the node, or the external prover URL): the metrics label. */
  provedByName: string;
  timings: ProofTimings;
  /** Jobs in the pool task the proof was part of (1 when unknown). */
  batchSize: number;
  /** Light keys: the C prover's stages (solve, h, MSMs), ms, when the prover reported them. */
  stages?: ProveStages;
  /**
   * True when this request did not cause the proof: it got a stored result, or joined an identical
   * job that had already started (BullMQ dedup). Such a proof is not counted again as proved.
   */
  reused?: boolean;
}

/** Waiting / running jobs of a backend. */
export interface BackendDepth {
  waiting: number;
  active: number;
  /** Heap + external bytes per local prover thread (local pools only). */
  threads?: Record<string, number>;
}

/** Options of one `ProofBackend.prove` call. */
export interface ProveCallOptions {
  timeoutMs: number;
  onStart?: () => void;
}

/** Where proofs are made. */
export interface ProofBackend {
  readonly kind: 'local' | 'bullmq' | 'remote';
  /**
   * Proves one job.
   * @param opts.timeoutMs per-request timeout (→ `ProverError('timeout')`)
   * @param opts.onStart called once when a prover takes the job (local pool only; others ignore it)
   * @throws ProverError with the backend's failure (see the module comment of each backend)
   */
  prove(job: ProofJob, opts: ProveCallOptions): Promise<BackendProof>;
  /** Current queue depth (for metrics and /health). */
  depth(): Promise<BackendDepth>;
  /** Stops accepting work and releases resources (a pool passed in by the caller is not closed). */
  close(): Promise<void>;
}

/**
 * This process's node name: `$REFRACT_NODE_NAME` (e.g. a pod or machine name that survives restarts),
 * else the host name. The `node` label of `refract_proofs_by_node_total`, so that label keeps one value
 * per prover node across restarts instead of one per process.
 */
export const NODE_NAME = envValue('REFRACT_NODE_NAME')?.trim() || hostname();

/**
 * This process's node id, `name:pid:random`: tells local proofs from prover nodes' ones. The random
 * part keeps two processes apart that share a name and pid (containers on host networking,
 * each running node as PID 1): a proof counts as verified here only when this process made it.
 */
export const NODE_ID = `${NODE_NAME}:${process.pid}:${randomBytes(2).toString('hex')}`;

/** Options of `LocalBackend`. */
export interface LocalBackendOptions {
  /** Most proofs accepted at once (waiting + running); more → `queue_full`. Default 64. */
  maxPending?: number;
  /** Close the pool with the backend (default false: the caller owns it). */
  ownsPool?: boolean;
}

/**
 * The in-process queue: a bounded number of proofs in front of a `ProverPool`. Proofs come back
 * verified by the pool's threads (same keys as this process), so `verifiedLocally` is true.
 */
/** Default bound of waiting proof jobs (`--max-queued-proofs`), in-process and BullMQ alike. */
export const DEFAULT_MAX_PENDING = 64;

export class LocalBackend implements ProofBackend {
  readonly kind = 'local' as const;
  private pending = 0;
  private readonly maxPending: number;

  /** @param pool the prover pool (keys of this process) */
  constructor(
    readonly pool: ProverPool,
    private readonly opts: LocalBackendOptions = {},
  ) {
    this.maxPending = opts.maxPending ?? DEFAULT_MAX_PENDING;
  }

  /**
   * Proves through the pool.
   * @throws ProverError `queue_full` (maxPending reached), `timeout`, or the pool's errors
   */
  async prove(job: ProofJob, opts: ProveCallOptions): Promise<BackendProof> {
    const { keyId: circuitId, input } = poolJob(job);
    if (this.pending >= this.maxPending) {
      throw new ProverError('queue_full', `prover queue is full (${this.pending} proofs pending, limit ${this.maxPending}); retry later`, { pending: this.pending });
    }
    const ahead = this.pending;
    this.pending++;
    const ac = new AbortController();
    const timeoutError = () =>
      new ProverError('timeout', `proof for ${circuitId} did not finish within ${(opts.timeoutMs / 1000).toFixed(1)} s (${ahead} proofs were ahead of it in the queue)`, { timeoutMs: opts.timeoutMs });
    const run = this.pool.prove(circuitId, input, { signal: ac.signal, onStart: opts.onStart });
    run.then(
      () => this.pending--,
      () => this.pending--,
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        ac.abort(timeoutError());
        reject(timeoutError());
      }, opts.timeoutMs);
    });
    try {
      const r = await Promise.race([run, timeout]);
      return {
        proof: r.proof,
        publicSignals: r.publicSignals,
        verifiedLocally: true,
        provedBy: NODE_ID,
        provedByName: NODE_NAME,
        timings: { queueMs: r.queueMs, witnessMs: r.witnessMs, proveMs: r.proveMs, verifyMs: r.verifyMs, totalMs: r.totalMs },
        batchSize: r.batchSize,
        ...(r.stages ? { stages: r.stages } : {}),
      };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waiting and running jobs of the pool, and its threads' memory. */
  async depth(): Promise<BackendDepth> {
    const s = this.pool.stats();
    const threads: Record<string, number> = {};
    for (const [id, m] of Object.entries(s.threads)) threads[id] = m.heapUsed + m.external;
    return { waiting: s.queueSize, active: s.busy, threads };
  }

  /** Closes the pool when `ownsPool`. */
  async close(): Promise<void> {
    if (this.opts.ownsPool) await this.pool.close();
  }
}

/** Options of `RemoteBackend`. */
export interface RemoteBackendOptions {
  /** Sent as `Authorization: Bearer <key>` (Photon's behaviour) when given. */
  apiKey?: string;
  /** fetch implementation (tests). */
  fetch?: typeof fetch;
}

/**
 * The external prover's error codes → ours. Its `malformed_body` is a request WE built from the
 * indexed state, so it is the prover's (or our) failure, never the API client's.
 */
const ERROR_CODES: Record<string, ProverErrorCode> = {
  malformed_body: 'remote_failed',
  proving_error: 'remote_refused',
  proof_timeout: 'timeout',
  queue_unavailable: 'queue_unavailable',
};

/** Our code for an external prover's non-2xx answer: its HTTP `status` and its error `code`, if any. */
function remoteErrorCode(status: number, code: string | undefined): ProverErrorCode {
  if (code === 'proving_error' && status >= 500) return 'remote_failed'; // its own failure, not a refusal
  if (code && Object.hasOwn(ERROR_CODES, code)) return ERROR_CODES[code]!;
  return status === 408 ? 'timeout' : 'remote_failed';
}

/**
 * An external Light-compatible prover (`--prover-url`): `POST {url}/prove` with the reference
 * prover's v1 JSON; a 200 `{ar, bs, krs}` becomes the proof. Proofs are NOT verified against this
 * process's keys (an external prover uses its own keys, e.g. Light's gnark keys), so
 * `verifiedLocally` is false and the `ProofService` only verifies them when told to.
 */
export class RemoteBackend implements ProofBackend {
  readonly kind = 'remote' as const;
  private readonly url: string;
  /** The prover as messages, logs and the `refract_proofs_by_node_total` label show it (`displayUrl`: no credentials, path or query). */
  private readonly shown: string;
  private active = 0;

  /** @param baseUrl the prover's base URL; `/prove` is appended */
  constructor(
    baseUrl: string,
    private readonly opts: RemoteBackendOptions = {},
  ) {
    this.url = baseUrl.replace(/\/+$/, '') + '/prove';
    this.shown = displayUrl(baseUrl);
  }

  /**
   * Sends the job to the external prover.
   * @throws ProverError `queue_unavailable` (unreachable, or its 503 queue_unavailable), `timeout` (no
   *   answer in time, 408 or its proof_timeout), `remote_refused` (a 4xx proving_error: it refused the
   *   statement), `remote_failed` (any other non-2xx, its malformed_body included, or a 200 without a
   *   proof; with the prover's code and message)
   */
  async prove(job: ProofJob, opts: { timeoutMs: number }): Promise<BackendProof> {
    const f = this.opts.fetch ?? fetch;
    const t0 = performance.now();
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    let res: Response;
    this.active++;
    try {
      res = await f(this.url, { method: 'POST', headers, body: JSON.stringify(toProverRequest(job.inputs)), signal: AbortSignal.timeout(opts.timeoutMs) });
    } catch (e) {
      this.active--;
      const err = e as Error;
      if (err.name === 'TimeoutError') throw new ProverError('timeout', `external prover ${this.shown} did not answer within ${(opts.timeoutMs / 1000).toFixed(1)} s`);
      throw new ProverError('queue_unavailable', `external prover ${this.shown} is unreachable: ${err.message}`);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      const err = e as Error;
      if (err.name === 'TimeoutError') throw new ProverError('timeout', `external prover ${this.shown} did not finish its answer within ${(opts.timeoutMs / 1000).toFixed(1)} s`);
      throw new ProverError('remote_failed', `external prover ${this.shown}: reading its answer failed: ${err.message}`);
    } finally {
      this.active--;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!res.ok) {
      const b = body as { code?: unknown; message?: unknown } | undefined;
      const code = typeof b?.code === 'string' ? b.code : undefined;
      const message = typeof b?.message === 'string' ? b.message : text.slice(0, 200);
      throw new ProverError(
        remoteErrorCode(res.status, code),
        `external prover ${this.shown} answered HTTP ${res.status}${code ? ` ${code}` : ''}: ${message}`,
        { status: res.status, code },
      );
    }
    const g = body as GnarkProofJson | undefined;
    const hex = (v: unknown) => typeof v === 'string' && /^(0x)?[0-9a-fA-F]{1,64}$/.test(v);
    const pair = (v: unknown): v is [string, string] => Array.isArray(v) && v.length === 2 && v.every(hex);
    if (!g || !pair(g.ar) || !pair(g.krs) || !Array.isArray(g.bs) || g.bs.length !== 2 || !g.bs.every(pair)) {
      throw new ProverError('remote_failed', `external prover ${this.shown} answered 200 without a proof {ar, bs, krs}: ${text.slice(0, 200)}`);
    }
    const totalMs = performance.now() - t0;
    return {
      proof: gnarkToSnarkjs(g),
      publicSignals: poolJob(job).publicSignals,
      verifiedLocally: false,
      provedBy: this.shown,
      provedByName: this.shown,
      timings: { queueMs: 0, witnessMs: 0, proveMs: totalMs, verifyMs: 0, totalMs },
      batchSize: 1,
    };
  }

  /** Requests in flight to the external prover. */
  async depth(): Promise<BackendDepth> {
    return { waiting: 0, active: this.active };
  }

  /** Nothing to release. */
  async close(): Promise<void> {}
}
