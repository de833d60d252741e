/**
 * `ProofService`: one validity proof, from indexer-shaped inputs to the encodings the API returns,
 * over any `ProofBackend` (local pool, BullMQ, external prover).
 *
 * Steps: circuit choice and circom input (witness.ts; unsupported shapes and bad values fail here,
 * before anything is queued) → keys readiness of the circuit (readiness.ts) → backend → the proof's
 * public signals must equal the inputs → verification with THIS process's verification key unless
 * the backend already did it with the same keys (a proof that fails is an error, counted, never
 * returned) → `compressedProof` (spec §2.4) and the reference JSON `{ar, bs, krs}`.
 *
 * Metrics (metrics.ts), observed here in the API process for every backend, so proofs made by
 * worker threads and by prover nodes all show up in this process's /metrics:
 * proofs total, proof time (witness + prove) and witness time per circuit, queue wait, batch size,
 * request time per backend, proofs by node, and errors by circuit and code.
 */
import type { Metrics } from '../metrics.ts';
import type { BackendProof, ProofBackend } from './backend.ts';
import { compressProof, snarkjsToGnark } from './encode.ts';
import { ProverError } from './errors.ts';
import type { ValidityProof } from './validity.ts';
import { buildCircuitInput, type ValidityProofInputs } from './witness.ts';

/** Default per-request proof timeout (ms): above the slowest v1 circuit (inclusion ×8, ~10 s on 2 cores) with queueing room. */
export const DEFAULT_PROOF_TIMEOUT_MS = 60_000;

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
}

/** See the module comment. One per process; `close()` closes the backend. */
export class ProofService {
  readonly backend: ProofBackend;
  readonly timeoutMs: number;

  /** @param opts backend, metrics, timeout, readiness and verifier (see `ProofServiceOptions`) */
  constructor(private readonly opts: ProofServiceOptions) {
    this.backend = opts.backend;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_PROOF_TIMEOUT_MS;
  }

  /**
   * Proves `inputs` (accounts first, then addresses).
   * @returns the proof with its encodings and timings (`timings.totalMs` is the whole request)
   * @throws ProverError: `unsupported_shape` / `invalid_input` (inputs), `not_ready` (keys), the
   *   backend's errors (`queue_full`, `timeout`, `queue_unavailable`, `witness_failed`, …),
   *   `verify_failed` (the proof does not verify with this process's vkey), `internal` (public
   *   signals differ from the inputs)
   */
  async prove(inputs: ValidityProofInputs): Promise<ValidityProof> {
    const t0 = performance.now();
    const m = this.opts.metrics;
    let circuitId = 'unknown';
    let outcome = 'ok';
    try {
      const witness = buildCircuitInput(inputs);
      circuitId = witness.circuitId;
      this.opts.readiness?.check(circuitId);
      const r = await this.backend.prove({ witness, inputs }, { timeoutMs: this.timeoutMs });
      if (r.publicSignals.length !== witness.publicSignals.length || r.publicSignals.some((s, i) => s !== witness.publicSignals[i])) {
        throw new ProverError('internal', `${circuitId}: the proof's public signals differ from the inputs (proved by ${r.provedBy})`, {
          expected: witness.publicSignals,
          got: r.publicSignals,
        });
      }
      let verifyMs = r.timings.verifyMs;
      if (!r.verifiedLocally && this.opts.verifier) {
        const tv = performance.now();
        const ok = await this.opts.verifier(circuitId, r.proof, witness.publicSignals);
        verifyMs += performance.now() - tv;
        if (!ok) {
          throw new ProverError('verify_failed', `the ${circuitId} proof made by ${r.provedBy} does not verify against this server's verification key (different keys on the prover node?)`);
        }
      }
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
      return {
        circuitId,
        compressedProof: compressProof(r.proof),
        gnark: snarkjsToGnark(r.proof),
        proof: r.proof,
        publicSignals: r.publicSignals,
        timings: { queueMs: r.timings.queueMs, witnessMs: r.timings.witnessMs, proveMs: r.timings.proveMs, verifyMs, totalMs },
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

  /** Waiting / active jobs of the backend. */
  depth() {
    return this.backend.depth();
  }

  /** Closes the backend. */
  async close(): Promise<void> {
    await this.backend.close();
  }
}
