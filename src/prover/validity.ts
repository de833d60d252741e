/**
 * `proveValidity`: the proving step of `getValidityProof` in one call: indexer inputs → circuit
 * choice and circom input (witness.ts) → proof from the pool (verified in the worker) → the
 * encodings Photon and the reference prover return (encode.ts).
 */
import { compressProof, snarkjsToGnark, type CompressedProof, type GnarkProofJson } from './encode.ts';
import { ProverError } from './errors.ts';
import type { ProverPool } from './pool.ts';
import type { Groth16Proof } from './snark.ts';
import { buildCircuitInput, type ValidityProofInputs } from './witness.ts';

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
}

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
