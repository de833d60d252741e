/**
 * Refract's own Groth16 prover (native/kernels/src/groth16.c through the addon): the proof snarkjs'
 * `groth16.prove` makes, with every step in C — A·w, B·w from the zkey's coefficients, the coset
 * FFTs and H, the four MSMs over key tables kept resident in the addon, the randomisation with r, s
 * from the OS CSPRNG — and the same output (snarkjs' proof JSON, public signals from the witness).
 *
 * The zkey is parsed ONCE (`loadNativeKey`) into an addon-owned key behind an opaque handle; a proof
 * passes only the witness. snarkjs stays for setup, for verification (the pool verifies every proof
 * before returning it) and as the test oracle; `proverBackend('snarkjs')` keeps its prover.
 */
import { ProverError } from './errors.ts';
import type { Groth16Proof } from './snark.ts';
import { nativeAddon } from '../native.ts';

/** Who computes a Groth16 proof in the pool threads: Refract's C prover or snarkjs' `groth16.prove`. */
export type ProverBackendKind = 'native' | 'snarkjs';

/** True when the addon is built with the native Groth16 prover. */
export function nativeProverAvailable(): boolean {
  return typeof nativeAddon?.groth16Load === 'function' && typeof nativeAddon.groth16Prove === 'function';
}

/**
 * The backend a thread would use: `requested` (else REFRACT_PROVER_BACKEND, else `native`),
 * downgraded to `snarkjs` when the addon is not built or predates the native prover.
 * @throws ProverError `invalid_input` when REFRACT_PROVER_BACKEND is set to anything else
 */
export function proverBackend(requested?: ProverBackendKind): ProverBackendKind {
  let want = requested;
  if (!want) {
    const env = process.env.REFRACT_PROVER_BACKEND;
    if (env === undefined || env === '') want = 'native';
    else if (env === 'native' || env === 'snarkjs') want = env;
    else throw new ProverError('invalid_input', `REFRACT_PROVER_BACKEND must be native or snarkjs, got "${env}"`);
  }
  return want === 'native' && nativeProverAvailable() ? 'native' : 'snarkjs';
}

/** A zkey loaded into the addon (resident until the object is garbage-collected). */
export interface NativeGroth16Key {
  /** Opaque addon handle. */
  readonly handle: unknown;
  /** Witness length (signals incl. the constant 1). */
  readonly nVars: number;
  /** Public signals (without the constant 1). */
  readonly nPublic: number;
  /** Evaluation domain (power of two ≥ constraints + public inputs + 1). */
  readonly domainSize: number;
  /** Bytes held by the addon for this key. */
  readonly bytes: number;
}

/** Names of the stages `proveNative` times, in the addon's order. */
export const NATIVE_STAGES = ['witness', 'abc', 'fft', 'msmA', 'msmB1', 'msmB2', 'msmCH', 'finish'] as const;
export type NativeStage = (typeof NATIVE_STAGES)[number];
/**
 * Per-stage times of one native proof, ms: `cpu` = the calling thread's CPU (CLOCK_THREAD_CPUTIME_ID;
 * MSM helper threads not included, so exact only with threads = 1), `wall` = elapsed.
 * witness = .wtns parse and checks; abc = A·w, B·w from the coefficients and C = A·B; fft = three
 * iFFT → coset shift → FFT and H = A·B − C; msmA, msmB1 (G1), msmB2 (G2), msmCH (C over the private
 * signals and H in one G1 MSM); finish = affine conversions, the 4-point MSM for π_C and the output.
 */
export type NativeStageTimes = Record<'cpu' | 'wall', Record<NativeStage, number>>;

function addonError(e: unknown, what: string): ProverError {
  const err = e as { code?: string; message?: string };
  const message = `${what}: ${err?.message ?? String(e)}`;
  switch (err?.code) {
    case 'ERR_GROTH16_KEY':
      return new ProverError('keys_missing', `${message}; re-run \`refract setup\``, { native: err.code });
    case 'ERR_GROTH16_WITNESS':
      return new ProverError('witness_failed', message, { native: err.code });
    default:
      return new ProverError('internal', message, { native: err?.code });
  }
}

/**
 * Parses zkey bytes once into the addon (the bytes are not kept: release them afterwards).
 * @param zkey snarkjs Groth16 zkey file bytes (BN254)
 * @param label names the key in errors (circuit id or file)
 * @throws ProverError `keys_missing` (malformed / not Groth16 / not BN254 / a point off the curve:
 *   the message names the section), `internal` when the addon lacks the prover or memory runs out
 */
export function loadNativeKey(zkey: Uint8Array, label = 'zkey'): NativeGroth16Key {
  if (!nativeProverAvailable()) throw new ProverError('internal', `${label}: the native prover is not built (addon missing or older)`);
  let handle: unknown;
  try {
    handle = nativeAddon!.groth16Load!(zkey);
  } catch (e) {
    throw addonError(e, label);
  }
  const info = nativeAddon!.groth16Info!(handle);
  return { handle, ...info };
}

function leDecimal(b: Uint8Array, o: number): string {
  let v = 0n;
  for (let k = 31; k >= 0; k--) v = (v << 8n) | BigInt(b[o + k]!);
  return v.toString();
}

/**
 * One Groth16 proof with the native prover.
 * @param key from `loadNativeKey`
 * @param wtns the witness in snarkjs' `.wtns` format (`WitnessCalculator.calculateWtns`)
 * @param opts.threads MSM threads (0 / absent: the CPUs shared by the MSMs and open jobs of the process)
 * @param opts.rs 64 bytes, r then s as little-endian integers < r (tests: compare with snarkjs);
 *   absent: fresh uniform values from the OS CSPRNG (the only choice in production)
 * @param opts.stages also return the per-stage times
 * @returns the proof in snarkjs' JSON form (affine, z = 1) and the public signals (witness 1..nPublic)
 * @throws ProverError `witness_failed` (malformed witness: format, field, length, a value ≥ r,
 *   w[0] ≠ 1), `internal` (r or s ≥ r, out of memory)
 */
export function proveNative(
  key: NativeGroth16Key,
  wtns: Uint8Array,
  opts: { threads?: number; rs?: Uint8Array; stages?: boolean } = {},
): { proof: Groth16Proof; publicSignals: string[]; stages?: NativeStageTimes } {
  const out = new Uint8Array(256);
  const times = opts.stages ? new Float64Array(2 * NATIVE_STAGES.length) : undefined;
  let inf: number;
  // Open job for the MSMs' automatic thread count: while two proofs run, each MSM takes one core.
  const jobs = nativeAddon!.msmJobs;
  jobs?.(1);
  try {
    inf = nativeAddon!.groth16Prove!(key.handle, wtns, out, opts.threads ?? 0, opts.rs, times);
  } catch (e) {
    throw addonError(e, 'native prover');
  } finally {
    jobs?.(-1);
  }
  const c = (i: number) => leDecimal(out, 32 * i);
  const z = (bit: number) => ((inf & bit) !== 0 ? '0' : '1');
  const proof: Groth16Proof = {
    pi_a: [c(0), c(1), z(1)],
    pi_b: [
      [c(2), c(3)],
      [c(4), c(5)],
      [z(2), '0'],
    ],
    pi_c: [c(6), c(7), z(4)],
    protocol: 'groth16',
    curve: 'bn128',
  };
  // public signals: witness entries 1..nPublic (entry 0 is the constant 1); the addon checked the layout
  const base = wtns.length - key.nVars * 32;
  const publicSignals: string[] = [];
  for (let i = 1; i <= key.nPublic; i++) publicSignals.push(leDecimal(wtns, base + 32 * i));
  let stages: NativeStageTimes | undefined;
  if (times) {
    const pick = (off: number) => Object.fromEntries(NATIVE_STAGES.map((s, i) => [s, times[off + i]!])) as Record<NativeStage, number>;
    stages = { cpu: pick(0), wall: pick(NATIVE_STAGES.length) };
  }
  return { proof, publicSignals, stages };
}
