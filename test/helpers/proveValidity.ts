/**
 * `proveValidity` (tests): one validity proof straight from a `ProverPool`, without the
 * `ProofService` (no readiness, no backend, no metrics): indexer inputs → circuit choice and circom
 * input (witness.ts) → proof from the pool (verified in the worker) → the encodings Photon and the
 * reference prover return (proofEncoding.ts).
 */
import { compressProof, snarkjsToGnark } from '../../src/prover/engine/proofEncoding.ts';
import { ProverError } from '../../src/prover/errors.ts';
import type { ProverPool } from '../../src/prover/run/pool.ts';
import type { ValidityProof } from '../../src/prover/run/proofService.ts';
import { buildCircuitInput, type ValidityProofInputs } from '../../src/prover/engine/witness.ts';

/**
 * Proves inclusion of `inputs.accounts` and non-inclusion of `inputs.addresses` (v1, height 26).
 * @throws ProverError `unsupported_shape` / `invalid_input` before anything is queued; from the
 *   pool `witness_failed` (e.g. a stale root), `keys_missing`, `verify_failed`, `worker_crashed`,
 *   `internal` (the proof's public signals differ from the inputs: a bug)
 */
export async function proveValidity(pool: ProverPool, inputs: ValidityProofInputs): Promise<ValidityProof> {
  const w = buildCircuitInput(inputs);
  const r = await pool.prove(w.circuitId, w.input);
  if (r.publicSignals.length !== w.publicSignals.length || r.publicSignals.some((s, i) => s !== w.publicSignals[i])) {
    throw new ProverError('internal', `${w.circuitId}: proof public signals differ from the inputs`, {
      expected: w.publicSignals,
      got: r.publicSignals,
    });
  }
  return {
    circuitId: w.circuitId,
    compressedProof: compressProof(r.proof),
    gnark: snarkjsToGnark(r.proof),
    proof: r.proof,
    publicSignals: r.publicSignals,
    timings: { queueMs: r.queueMs, witnessMs: r.witnessMs, proveMs: r.proveMs, verifyMs: r.verifyMs, totalMs: r.totalMs },
  };
}
