/**
 * Proofs with Light Protocol's proving keys, standalone (bench:prove-light, tests; the daemon proves
 * through `ProofService` and its backend, which use the same pool): the witness vector (lightKeys.ts
 * `lightWitness`), a proof from a `ProverPool` whose threads keep the resident keys
 * (`<keys>/light/<name>.lkr`, made by `refract setup --light-keys`; src/prover/engine/lightThread.ts), and
 * the answer encodings: Light's prover JSON `{ar, bs, krs}` (light-keys §6: uncompressed, A not
 * negated) and the 128-byte on-chain `compressedProof` (§7: a = compress(−Ar), b = compress(Bs),
 * c = compress(Krs), Solana flags), as the official client and the reference indexer give it.
 *
 * Every proof was checked by the addon against the key's verifying key before it leaves the thread
 * (lightkey.c `lk_prove`); a proof that does not verify is an error (`verify_failed`), never an answer.
 */
import { availableParallelism } from 'node:os';
import { ProverError } from '../errors.ts';
import { lightKeyReady, lightKeySource } from '../keys/lightKeySetup.ts';
import { lightKeyFor, lightKeyId, lightWitness, type LightKeySpec } from '../keys/lightKeys.ts';
import { DEFAULT_MAX_PENDING, LocalBackend } from './backend.ts';
import { ProverPool } from './pool.ts';
import { DEFAULT_PROOF_TIMEOUT_MS } from './proofService.ts';
import { compressGnarkProof, snarkjsToGnark, type CompressedProof, type GnarkProofJson } from '../engine/proofEncoding.ts';
import type { ValidityProofInputs } from '../engine/witness.ts';

/** A proof made with a Light key. */
export interface LightProof {
  key: LightKeySpec;
  gnark: GnarkProofJson;
  compressedProof: CompressedProof;
  /** The verifier's public inputs (§7): v1 [roots, leaves, address roots, values], v2 [publicInputHash]. */
  publics: bigint[];
  /** ms: witness vector (TS), solve, h, msm, verify (C), queue + thread round trip. */
  timings: { witnessMs: number; solveMs: number; hMs: number; msmMs: number; verifyMs: number; totalMs: number };
}

/** Options of `LightProver`. */
export interface LightProverOptions {
  keysDir: string;
  /** Threads (default the available parallelism). */
  size?: number;
  /** Proofs pending (queued + proving) at most; more → `queue_full` (default 64, the in-process queue's). */
  maxPending?: number;
  /** Per-proof timeout, ms (default 60 000) → `timeout`. */
  timeoutMs?: number;
  /** Fixed-base table budget per key, MiB (default $REFRACT_LIGHT_TABLE_MB, else `LIGHT_TABLE_MB_DEFAULT`; 0 = none). */
  tableMb?: number;
}

/** See the module comment. */
export class LightProver {
  private readonly pool: ProverPool;
  /** The in-process queue in front of the pool: its bound (`maxPending` → `queue_full`) and per-proof timeout. */
  private readonly backend: LocalBackend;
  readonly keysDir: string;
  private readonly timeoutMs: number;

  constructor(opts: LightProverOptions) {
    this.keysDir = opts.keysDir;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_PROOF_TIMEOUT_MS;
    this.pool = new ProverPool({ keysDir: opts.keysDir, size: opts.size ?? Math.max(1, availableParallelism()), lightTableMb: opts.tableMb, tableFiles: false });
    this.backend = new LocalBackend(this.pool, { maxPending: opts.maxPending ?? DEFAULT_MAX_PENDING });
  }

  /** The Light key for a shape, or undefined when Light ships none (the caller falls back or refuses). */
  keyFor(inputs: Pick<ValidityProofInputs, 'accounts' | 'addresses' | 'version'>): LightKeySpec | undefined {
    return lightKeyFor(inputs.accounts.length, inputs.addresses.length, inputs.version ?? 1);
  }

  /** True when the key's resident file exists (setup done). */
  ready(key: LightKeySpec): boolean {
    return lightKeyReady(this.keysDir, key);
  }

  /**
   * Loads the given keys into every thread (so the first proofs do not pay the load).
   * @returns ms taken
   */
  async warm(keys: readonly LightKeySpec[]): Promise<number> {
    const t0 = performance.now();
    await this.pool.warm(keys.filter((k) => this.ready(k)).map(lightKeyId));
    return performance.now() - t0;
  }

  /**
   * Proves `inputs` with Light's key for their shape.
   * @throws ProverError `unsupported_shape` (Light ships no key: message names the shapes it has),
   *   `invalid_input` (values, lengths, ranges, publicInputHash), `not_ready` (the key is not
   *   converted yet: names the file and where to get it), `witness_failed` (the inputs do not satisfy
   *   the circuit: wrong root, a path that does not fold — names the circuit and the constraint),
   *   `keys_missing`, `verify_failed`, `queue_full` (more than `maxPending` pending), `timeout`, `internal`
   */
  async prove(inputs: ValidityProofInputs): Promise<LightProof> {
    const t0 = performance.now();
    const w = lightWitness(inputs);
    const witnessMs = performance.now() - t0;
    if (!this.ready(w.key)) {
      throw new ProverError('not_ready', `Light's proving key for ${w.key.name} is not set up yet (${lightKeySource(w.key)}); retry later`, { circuit: w.key.name });
    }
    const r = await this.backend.prove({ light: w, inputs }, { timeoutMs: this.timeoutMs });
    const gnark = snarkjsToGnark(r.proof);
    const st = r.stages ?? { solveMs: r.timings.witnessMs, hMs: 0, msmMs: r.timings.proveMs };
    return {
      key: w.key,
      gnark,
      compressedProof: compressGnarkProof(gnark),
      publics: w.publics,
      timings: { witnessMs, solveMs: st.solveMs, hMs: st.hMs, msmMs: st.msmMs, verifyMs: r.timings.verifyMs, totalMs: performance.now() - t0 },
    };
  }

  /** Stops the threads. */
  async close(): Promise<void> {
    await this.pool.close();
  }
}
