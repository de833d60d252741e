/**
 * `ProofService`: one validity proof, from indexer-shaped inputs to the encodings the API returns,
 * over any `ProofBackend` (local pool, BullMQ, external prover).
 *
 * Steps: circuit choice and circom input (witness.ts; unsupported shapes and bad values fail here,
 * before anything is queued) → keys readiness of the circuit (keyReadiness.ts) → backend → the proof's
 * public signals must equal the inputs → verification with THIS process's verification key unless
 * the backend already did it with the same keys (a proof that fails is an error, counted, never
 * returned) → `compressedProof` (spec §2.4) and the reference JSON `{ar, bs, krs}`.
 *
 * Metrics (metrics.ts), observed here in the API process for every backend, so proofs made by
 * worker threads and by prover nodes all show up in this process's /metrics:
 * proofs total, proof time (witness + prove) and witness time per circuit, queue wait, batch size,
 * request time per backend, proofs by node, and errors by circuit and code.
 */
import type { Metrics } from '../../metrics.ts';
import { poolJob, queuedJob, type BackendProof, type ProofBackend, type ProofJob } from './backend.ts';
import { proofJobId, type BackendJobStatus } from './proofJobs.ts';
import { compressProof, snarkjsToGnark, type CompressedProof, type GnarkProofJson } from '../engine/proofEncoding.ts';
import { lightKeyFor, lightKeyId, LIGHT_KEYS, lightWitness } from '../keys/lightKeys.ts';
import { lightKeySource } from '../keys/lightKeySetup.ts';
import { ProverError } from '../errors.ts';
import type { ProveStages } from './proveMessages.ts';
import type { Groth16Proof } from '../engine/snark.ts';
import { buildCircuitInput, type ValidityProofInputs } from '../engine/witness.ts';

/** Default per-request proof timeout (ms): above the slowest v1 circuit (inclusion ×8, ~10 s on 2 cores) with queueing room. */
export const DEFAULT_PROOF_TIMEOUT_MS = 60_000;

/** Async jobs (and their proofs or errors) are kept this long after they finish, ms (the reference's 1 h result TTL). */
export const DEFAULT_ASYNC_TTL_MS = 3_600_000;

/** An in-process async job gives up after this long, ms (the reference's 600 s job expiry, spec §5.4). */
export const DEFAULT_ASYNC_TIMEOUT_MS = 600_000;

/** Queue name reported for in-process async jobs (the BullMQ backend reports its queue's name). */
export const LOCAL_QUEUE_NAME = 'in-process';

/** A validity proof with everything the RPC layer returns or logs. Times in ms. */
export interface ValidityProof {
  circuitId: string;
  /** −A, B, C compressed (32 + 64 + 32 bytes), Photon's `compressedProof`. */
  compressedProof: CompressedProof;
  /** The reference prover's `/prove` response body. */
  gnark: GnarkProofJson;
  /** snarkjs form, for verification with `<id>.vkey.json`. */
  proof: Groth16Proof;
  /** [roots, leaves, addrRoots, values] as decimal strings. */
  publicSignals: string[];
  timings: { queueMs: number; witnessMs: number; proveMs: number; verifyMs: number; totalMs: number };
  /** Light keys: the C prover's stages (solve, h, MSMs), ms, when the prover reported them. */
  stages?: ProveStages;
  /**
   * Which keys made it: `light` (Light's own key: Light's on-chain verifier accepts it) or `own`
   * (Refract's circuits, only with `ownCircuits`: the on-chain verifier REJECTS it). Absent on
   * services without Light keys (the legacy setup).
   */
  keys?: 'light' | 'own';
}

/**
 * Light's keys as ProofService sees them: which are set up (resident files under the keys
 * directory, lightKeySetup.ts `lightKeyReady`). Their proofs are made by the backend like any other
 * (the pool threads, or prover nodes, load the resident files).
 */
export interface LightProofSource {
  ready(key: (typeof LIGHT_KEYS)[number]): boolean;
  /**
   * While missing keys are being converted in the background: how (e.g. "being converted in the
   * background by `refract setup --light-keys` (pid 123)"), for the `not_ready` answer; else undefined.
   */
  pending?(): string | undefined;
}

/** The warning an answer made with Refract's own circuits carries (and the log line). */
export const OWN_CIRCUIT_WARNING = "made with Refract's own circuit keys, not Light's: Light's on-chain verifier will reject this proof";

/** State of an async proof job (`POST /prove` with `X-Async: true`). Times are ms epoch. */
export interface AsyncJobStatus {
  jobId: string;
  /** `queued` (waiting), `processing` (a prover has it), `completed` (`proof` set), `failed` (`error` set). */
  state: 'queued' | 'processing' | 'completed' | 'failed';
  circuitId: string;
  createdAt: number;
  finishedAt?: number;
  proof?: ValidityProof;
  error?: ProverError;
}

/** The answer to an async submission. */
export interface AsyncSubmission {
  /** `proofJobId` of the inputs: a UUID-shaped hash, the same for identical inputs. */
  jobId: string;
  circuitId: string;
  /** True when an identical job (queued, proving, or finished with a proof) was joined. */
  deduplicated: boolean;
  /** Where the job waits: the BullMQ queue name, or `in-process`. */
  queue: string;
}

/** A backend that keeps jobs itself, so any API replica can report them (BullMQ). */
interface JobKeepingBackend {
  submit(job: ProofJob): Promise<{ jobId: string; deduplicated: boolean; queue: string }>;
  jobStatus(jobId: string): Promise<BackendJobStatus | undefined>;
}

function keepsJobs(b: ProofBackend): b is ProofBackend & JobKeepingBackend {
  const o = b as Partial<JobKeepingBackend>;
  return typeof o.submit === 'function' && typeof o.jobStatus === 'function';
}

/** Verifies a proof against this process's verification key of `circuitId`. */
export type ProofVerifier = (circuitId: string, proof: BackendProof['proof'], publicSignals: string[]) => Promise<boolean>;

/** Tells whether a circuit's keys are usable; throws `ProverError('not_ready')` with the reason when not. */
export interface CircuitReadiness {
  check(circuitId: string): void;
}

/** Options of `ProofService`. */
export interface ProofServiceOptions {
  backend: ProofBackend;
  metrics?: Metrics;
  /** Per-request timeout, ms (default 60 s). */
  timeoutMs?: number;
  /** Keys readiness per circuit (local keys); omitted → every circuit is assumed ready. */
  readiness?: CircuitReadiness;
  /**
   * Verifies proofs the backend did not verify with this process's keys (BullMQ results from other
   * nodes). Omitted → such proofs are returned unverified, which is only right for an external
   * prover with its own keys (`--prover-url`).
   */
  verifier?: ProofVerifier;
  /** Async jobs are kept this long after they finish, then unknown, ms (default 1 h). BullMQ: set `resultTtlSeconds` of the backend alike. */
  asyncTtlMs?: number;
  /** Timeout of one in-process async job, ms (default 600 000). */
  asyncTimeoutMs?: number;
  /**
   * Light's keys (lightProver.ts): every shape Light ships a key for is proven with it. A shape
   * without a Light key, or whose key is not set up yet, is refused (`unsupported_shape` naming
   * the missing key file / `not_ready`) unless `ownCircuits`, which then proves it with Refract's
   * own circuits (`keys: 'own'`, a warning in the answer, the log and refract_proofs_own_circuit_total).
   * Omitted: Refract's own circuits only (the setup before Light keys).
   */
  light?: LightProofSource;
  /** With `light`: allow Refract's own circuits for shapes without a ready Light key (default false). */
  ownCircuits?: boolean;
  /** Called for each proof made with Refract's own circuits while `light` is set (log + metric). */
  onOwnCircuit?: (circuitId: string) => void;
  /**
   * Most async jobs kept in this process (default 10 000): beyond it finished ones are forgotten,
   * earliest submitted first, before their TTL (their status turns 404), and with none finished a new submission is
   * refused with `queue_full`. Bounds the memory of the in-process table (~2 KB per proof).
   */
  asyncMaxJobs?: number;
}

/** See the module comment. One per process; `close()` closes the backend. */
export class ProofService {
  readonly backend: ProofBackend;
  readonly timeoutMs: number;
  readonly asyncTtlMs: number;
  readonly asyncTimeoutMs: number;
  /** In-process async jobs; with a job-keeping backend (BullMQ), its completed jobs' verified proofs only (a cache). */
  private readonly jobs = new Map<string, AsyncJobStatus>();

  /** @param opts backend, metrics, timeouts, readiness and verifier (see `ProofServiceOptions`) */
  constructor(private readonly opts: ProofServiceOptions) {
    this.backend = opts.backend;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_PROOF_TIMEOUT_MS;
    this.asyncTtlMs = opts.asyncTtlMs ?? DEFAULT_ASYNC_TTL_MS;
    this.asyncTimeoutMs = opts.asyncTimeoutMs ?? DEFAULT_ASYNC_TIMEOUT_MS;
  }

  /**
   * Proves `inputs` (accounts first, then addresses).
   * @param call.timeoutMs this call's timeout (default the service's `timeoutMs`)
   * @param call.onStart called when a local prover thread takes the job
   * @returns the proof with its encodings and timings (`timings.totalMs` is the whole request)
   * @throws ProverError: `unsupported_shape` / `invalid_input` (inputs), `not_ready` (keys), the
   *   backend's errors (`queue_full`, `timeout`, `queue_unavailable`, `witness_failed`, …),
   *   `verify_failed` (the proof does not verify with this process's vkey), `internal` (public
   *   signals differ from the inputs)
   */
  async prove(inputs: ValidityProofInputs, call: { timeoutMs?: number; onStart?: () => void } = {}): Promise<ValidityProof> {
    const t0 = performance.now();
    const m = this.opts.metrics;
    let circuitId = 'unknown';
    let outcome = 'ok';
    try {
      const route = this.route(inputs);
      if (route.key) circuitId = route.key.name; // an input error below is counted under the circuit
      const { job, keyId } = this.jobFor(inputs, route);
      if (!route.key) {
        circuitId = keyId;
        this.opts.readiness?.check(keyId);
      }
      const tw = performance.now() - t0;
      const r = await this.backend.prove(job, { timeoutMs: call.timeoutMs ?? this.timeoutMs, onStart: call.onStart });
      const verifyMs = await this.check(keyId, poolJob(job).publicSignals, r);
      const totalMs = performance.now() - t0;
      if (m && !r.reused) {
        // Proof work is counted once, by the request that caused it (not for a stored or joined result).
        const circuit = circuitId;
        m.proofsTotal.inc({ circuit });
        m.proofDuration.observe({ circuit }, (r.timings.witnessMs + r.timings.proveMs) / 1000);
        m.proofWitness.observe({ circuit }, r.timings.witnessMs / 1000);
        m.proofQueueWait.observe({ circuit }, r.timings.queueMs / 1000);
        m.proofBatchSize.observe(r.batchSize);
        m.countProofByNode(r.provedByName);
      }
      if (route.own) this.opts.onOwnCircuit?.(circuitId);
      return {
        circuitId,
        compressedProof: compressProof(r.proof),
        gnark: snarkjsToGnark(r.proof),
        proof: r.proof,
        publicSignals: r.publicSignals,
        // Light keys: the witness vector (here) and the R1CS solve (in the thread) count as the witness
        timings: { queueMs: r.timings.queueMs, witnessMs: r.timings.witnessMs + (route.key ? tw : 0), proveMs: r.timings.proveMs, verifyMs, totalMs },
        ...(r.stages ? { stages: r.stages } : {}),
        ...(route.key ? { keys: 'light' as const } : route.own ? { keys: 'own' as const } : {}),
      };
    } catch (e) {
      const code = e instanceof ProverError ? e.code : 'internal';
      outcome = code;
      m?.proofErrors.inc({ circuit: circuitId, type: code });
      throw e instanceof ProverError ? e : new ProverError('internal', `prover error: ${(e as Error)?.message ?? String(e)}`);
    } finally {
      // Every request, failed ones too (a timeout is the latency an operator most needs to see).
      m?.proofRequestDuration.observe({ circuit: circuitId, backend: this.backend.kind, outcome }, (performance.now() - t0) / 1000);
    }
  }

  /**
   * Which keys prove `inputs` when Light's keys are configured: `{key}` (Light's, set up), `{own:
   * true}` (Refract's circuits, only with `ownCircuits`), or `{own: false}` without Light keys.
   * @throws ProverError `not_ready` (Light's key for the shape is not set up yet: names the file and
   *   where to get it), `unsupported_shape` (Light ships no key for the shape: lists the files it ships)
   */
  private route(inputs: ValidityProofInputs): { key?: (typeof LIGHT_KEYS)[number]; own: boolean } {
    const light = this.opts.light;
    if (!light) return { own: false };
    const v = inputs.version ?? 1;
    const key = lightKeyFor(inputs.accounts.length, inputs.addresses.length, v);
    if (key && light.ready(key)) return { key, own: false };
    if (this.opts.ownCircuits) return { own: true };
    if (key) {
      const how = light.pending?.() ?? `not set up yet (${lightKeySource(key)})`;
      throw new ProverError('not_ready', `Light's proving key for ${key.name} is ${how}; retry later`, { circuit: key.name });
    }
    const kind = inputs.addresses.length === 0 ? 'inclusion' : inputs.accounts.length === 0 ? 'non-inclusion' : 'combined';
    throw new ProverError(
      'unsupported_shape',
      `no Light proving key for ${kind} with ${inputs.accounts.length} account(s) and ${inputs.addresses.length} address(es) (v${v}): Light's CLI packages ship only ${LIGHT_KEYS.filter((k) => k.version === v).map((k) => k.file).join(', ')}; ` +
        "start with --own-circuits to prove it with Refract's own circuits (such a proof does NOT verify on chain)",
    );
  }

  /**
   * The backend job for `inputs` on `route`: with Light's key its witness vector (lightKeys.ts
   * `lightWitness`), else the own circuit's circom input (the caller checks the own circuit's readiness).
   * @returns the job and its pool / queue id (`light/<name>` or the own circuit id)
   * @throws ProverError `invalid_input` / `witness_failed` (inputs), `unsupported_shape`
   */
  private jobFor(inputs: ValidityProofInputs, route: { key?: (typeof LIGHT_KEYS)[number] }): { job: ProofJob; keyId: string } {
    if (route.key) return { job: { light: lightWitness(inputs), inputs }, keyId: lightKeyId(route.key) };
    const witness = buildCircuitInput(inputs);
    return { job: { witness, inputs }, keyId: witness.circuitId };
  }

  /**
   * Checks a backend's proof: its public signals must equal `expected` (when known), and a proof not
   * verified with this process's keys is verified here (when a verifier is set).
   * @returns the verification time, ms (the backend's plus this one)
   * @throws ProverError `internal` (public signals differ), `verify_failed`
   */
  private async check(circuitId: string, expected: readonly string[] | undefined, r: BackendProof): Promise<number> {
    if (expected && (r.publicSignals.length !== expected.length || r.publicSignals.some((s, i) => s !== expected[i]))) {
      throw new ProverError('internal', `${circuitId}: the proof's public signals differ from the inputs (proved by ${r.provedBy})`, {
        expected,
        got: r.publicSignals,
      });
    }
    let verifyMs = r.timings.verifyMs;
    if (!r.verifiedLocally && this.opts.verifier) {
      const tv = performance.now();
      const ok = await this.opts.verifier(circuitId, r.proof, expected ? [...expected] : r.publicSignals);
      verifyMs += performance.now() - tv;
      if (!ok) {
        throw new ProverError('verify_failed', `the ${circuitId} proof made by ${r.provedBy} does not verify against this server's verification key (different keys on the prover node?)`);
      }
    }
    return verifyMs;
  }

  /**
   * Starts an async proof of `inputs` and returns at once (`POST /prove` with `X-Async: true`).
   * Input errors and keys readiness are checked first, so they answer the submission itself. With a
   * BullMQ backend the job goes to the queue (any API replica can then report it); otherwise it runs
   * in this process's queue (timeout `asyncTimeoutMs`) and is kept `asyncTtlMs` after it finishes.
   * Identical inputs map to one job id: a queued, running or completed job is joined
   * (`deduplicated`), a failed one is started afresh.
   * @throws ProverError `unsupported_shape` / `invalid_input` (inputs), `not_ready` (keys), and
   *   immediate refusals of the queue: `queue_full`, `queue_unavailable`
   */
  async submit(inputs: ValidityProofInputs): Promise<AsyncSubmission> {
    const route = this.route(inputs);
    // the pool / queue id (`light/<name>` or the own circuit id): routes look the circuit's kind up by it (lightKeys.ts `keyShape`)
    const { job, keyId: circuitId } = this.jobFor(inputs, route);
    if (!route.key) this.opts.readiness?.check(circuitId);
    if (keepsJobs(this.backend)) return { ...(await this.backend.submit(job)), circuitId };

    this.sweep();
    const jobId = proofJobId(circuitId, queuedJob(job).input);
    const cur = this.jobs.get(jobId);
    if (cur && cur.state !== 'failed') return { jobId, circuitId, deduplicated: true, queue: LOCAL_QUEUE_NAME };
    this.jobs.delete(jobId);
    this.makeRoom();
    const entry: AsyncJobStatus = { jobId, circuitId, state: 'queued', createdAt: Date.now() };
    this.jobs.set(jobId, entry);
    const run = this.prove(inputs, {
      timeoutMs: this.asyncTimeoutMs,
      onStart: () => {
        if (entry.state === 'queued') entry.state = 'processing';
      },
    });
    run.then(
      (proof) => Object.assign(entry, { state: 'completed', proof, finishedAt: Date.now() }),
      (error: unknown) => Object.assign(entry, { state: 'failed', error: asProverError(error), finishedAt: Date.now() }),
    );
    // A refusal the queue gives at once (full, closed) answers the submission, as a failed enqueue
    // does in the reference; anything later is the job's failure, reported by `status`.
    const early = await Promise.race([run.then(() => undefined, (e: unknown) => asProverError(e)), new Promise<undefined>((r) => setImmediate(r, undefined))]);
    if (early) {
      if (this.jobs.get(jobId) === entry) this.jobs.delete(jobId);
      throw early;
    }
    return { jobId, circuitId, deduplicated: false, queue: LOCAL_QUEUE_NAME };
  }

  /**
   * The state of async job `jobId`: from this process's table, or with BullMQ from the queue (any
   * replica's jobs, as BullMQ reports their state; a completed proof is checked and verified here as
   * `prove` does, once: the verified proof is cached for later polls; a proof that fails the check
   * is reported `failed` with that error).
   * @returns undefined for an unknown job, or one that finished more than `asyncTtlMs` ago (BullMQ:
   *   the backend's `resultTtlSeconds`)
   * @throws ProverError `queue_unavailable` (Redis), or what stops this process from checking a
   *   completed proof (e.g. `not_ready`: its verification key is not loaded yet)
   */
  async status(jobId: string): Promise<AsyncJobStatus | undefined> {
    this.sweep();
    if (!keepsJobs(this.backend)) {
      const known = this.jobs.get(jobId);
      return known && { ...known };
    }
    const s = await this.backend.jobStatus(jobId);
    if (!s) return undefined;
    const base = { jobId, circuitId: s.circuitId, createdAt: s.createdAt, finishedAt: s.finishedAt };
    if (s.state === 'failed') return { ...base, state: 'failed', error: s.error };
    if (s.state !== 'completed' || !s.result) return { ...base, state: s.state };
    const cached = this.jobs.get(jobId);
    if (cached?.proof && cached.createdAt === s.createdAt) return { ...cached };
    const r = s.result;
    try {
      const verifyMs = await this.check(s.circuitId, s.expectedPublicSignals, r);
      const proof: ValidityProof = {
        circuitId: s.circuitId,
        compressedProof: compressProof(r.proof),
        gnark: snarkjsToGnark(r.proof),
        proof: r.proof,
        publicSignals: r.publicSignals,
        timings: { ...r.timings, verifyMs },
      };
      const done: AsyncJobStatus = { ...base, state: 'completed', proof };
      try {
        this.makeRoom();
        this.jobs.set(jobId, done);
      } catch {
        /* table full of running jobs: not cached, verified again next time */
      }
      return { ...done };
    } catch (e) {
      // The proof is wrong (does not verify, public signals differ): the job failed. Anything else
      // (this process's verification keys not loaded yet, a verifier thread down) is this replica's
      // passing condition, answered as such (503 on the status route), never as a failed job.
      const err = asProverError(e);
      if (err.code === 'verify_failed' || err.code === 'internal') return { ...base, state: 'failed', error: err };
      throw err;
    }
  }

  /**
   * Makes room for one more entry in the async table: forgets finished jobs, earliest submitted
   * first, while it is at `asyncMaxJobs`.
   * @throws ProverError `queue_full` when every kept job is still queued or running
   */
  private makeRoom(): void {
    const max = this.opts.asyncMaxJobs ?? 10_000;
    if (this.jobs.size < max) return;
    for (const [id, j] of this.jobs) {
      if (this.jobs.size < max) return;
      if (j.finishedAt !== undefined) this.jobs.delete(id);
    }
    if (this.jobs.size >= max) throw new ProverError('queue_full', `too many async proof jobs in progress (${this.jobs.size}, limit ${max}); retry later`);
  }

  /** Drops async jobs (and cached results) that finished more than `asyncTtlMs` ago. */
  private sweep(): void {
    const cutoff = Date.now() - this.asyncTtlMs;
    for (const [id, j] of this.jobs) if (j.finishedAt !== undefined && j.finishedAt < cutoff) this.jobs.delete(id);
  }

  /** Waiting / active jobs of the backend. */
  depth() {
    return this.backend.depth();
  }

  /** Closes the backend. */
  async close(): Promise<void> {
    await this.backend.close();
  }
}

/** Any thrown value as a ProverError (others become `internal`). */
function asProverError(e: unknown): ProverError {
  return e instanceof ProverError ? e : new ProverError('internal', `prover error: ${(e as Error)?.message ?? String(e)}`);
}
