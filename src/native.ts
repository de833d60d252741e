/**
 * Loader of Refract's N-API addon (native/kernels: circomlib Poseidon, long base58 decoding, and the
 * BN254 MSM and FFT that serve snarkjs in the prover, and Refract's own Groth16 prover),
 * built by the package's `install` script (`node-gyp rebuild -C native/kernels`). Every user has a
 * pure-JS fallback, so a missing build (no compiler) only costs speed.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Shape of the addon's exports (see native/kernels/src/binding.c). */
/** Where a native key's fixed-base tables came from: none, built in this process, read from its table file, or shared with another key of the process. */
export type TableSource = 'none' | 'built' | 'file' | 'shared';

export interface NativeAddon {
  /** Poseidon of 1..7 inputs (32 B BE each) into `out`; returns `out`. */
  hash(out: Uint8Array, ...inputs: Uint8Array[]): Uint8Array;
  /** `count` hashes of `arity` inputs each, results into `out`; returns `out`. */
  hashBatch(input: Uint8Array, arity: number, out: Uint8Array): Uint8Array;
  /** Field multiplication in use: BMI2/ADX asm or portable C. */
  impl(): 'adx' | 'c';
  selectImpl(name: 'adx' | 'c'): boolean;
  /** Kernel of `hashBatch`: eight-lane AVX-512 IFMA (default where the CPU has it) or scalar; same results. */
  batchImpl?(): 'ifma' | 'scalar';
  selectBatchImpl?(name: 'ifma' | 'scalar'): boolean;
  MAX_INPUTS: number;
  /** Bytes of a base58 string (same as `bs58.decode`), or the index of its first invalid character. */
  base58Decode?(s: string): Uint8Array | number;
  /**
   * BN254 G1 / G2 multi-scalar multiplication in ffjavascript's layout (native/kernels/src/msm.h):
   * `bases` n affine Montgomery points (64 / 128 B), `scalars` n plain LE integers (1..32 B each),
   * `out` (≥ 96 / 192 B) receives the Jacobian Montgomery sum; false (out untouched) = infinity.
   * `threads` 0 / omitted: CPUs shared by the MSMs running in the process. Blocks the caller.
   */
  msmG1?(bases: Uint8Array, scalars: Uint8Array, out: Uint8Array, threads?: number): boolean;
  msmG2?(bases: Uint8Array, scalars: Uint8Array, out: Uint8Array, threads?: number): boolean;
  /** Adds `delta` to the process-wide open-job count that automatic MSM thread counts divide the CPUs by. */
  msmJobs?(delta: number): number;
  /**
   * Field multiplication of the MSM, frFft and the native prover: 'ifma' (ADX plus the batch-affine
   * additions and the coset FFT on eight AVX-512 IFMA lanes; the default where the CPU has it),
   * 'adx' (BMI2/ADX asm) or 'c' (portable).
   */
  msmImpl?(): 'ifma' | 'adx' | 'c';
  /** Bucket algorithm of msmG1 / msmG2 (native/kernels/src/msm.h; same results): 'glv' (default), 'affine', 'xyzz'. */
  msmAlgorithm?(): 'glv' | 'affine' | 'xyzz';
  /** Selects the bucket algorithm for the process (tests, benchmarks); false for an unknown name. */
  msmSelectAlgorithm?(name: string): boolean;
  /**
   * In-place radix-2 NTT over BN254 Fr in ffjavascript's layout (native/kernels/src/fft.h): `buf`
   * n·32 bytes (n a power of two ≥ 2, 8-byte aligned) of Montgomery LE elements, `root` a primitive
   * n-th root of unity, `scale` (optional) multiplies every output; inverse = root⁻¹, scale n⁻¹.
   * Returns `buf`.
   */
  frFft?(buf: Uint8Array, root: Uint8Array, scale?: Uint8Array): Uint8Array;
  /**
   * One write of `buf` to `fd` that never blocks the calling thread, whatever the descriptor's O_NONBLOCK:
   * `send(MSG_DONTWAIT | MSG_NOSIGNAL)` on a socket, else `write()`. Bytes written, or −errno (−11 EAGAIN: full).
   */
  writeNonBlocking?(fd: number, buf: Uint8Array): number;
  /** glibc `malloc_trim(0)`: free arena memory back to the kernel; false when nothing was released or no glibc. */
  mallocTrim?(): boolean;
  /** Forces the MSM's and frFft's field multiplication (tests); false when unavailable. */
  msmSelectImpl?(name: 'ifma' | 'adx' | 'c'): boolean;
  /**
   * Refract's Groth16 prover (native/kernels/src/groth16.h): parses a snarkjs BN254 Groth16 zkey
   * once into an addon-owned key and returns its opaque handle (freed when garbage-collected).
   * Throws an Error with code ERR_GROTH16_KEY (malformed / unsupported key; the message names the
   * section) or ERR_GROTH16_NOMEM.
   */
  groth16Load?(zkey: Uint8Array): unknown;
  /** Sizes of a loaded key: witness length, public signals, domain, coefficients, resident bytes. */
  groth16Info?(handle: unknown): { nVars: number; nPublic: number; domainSize: number; nCoefs: number; bytes: number; tableBytes?: number; tableSource?: TableSource; tableNote?: string | null };
  /**
   * Gives the key fixed-base tables for its four MSMs when together they fit `maxBytes` (all or none),
   * shared with the process's other keys of the same points; returns the tables' bytes (0: none).
   * Blocks while the first load builds them on every core (≈ 1.2 s for inclusion_26_1 on 2 cores).
   */
  groth16Tables?(handle: unknown, maxBytes: number, path?: string): number;
  /** The process's fixed-base table sets (shared by the keys with the same points, across threads) and their bytes. */
  groth16TableSets?(): { sets: number; bytes: number };
  /** Fixed-base table of n affine bases (group 1: 64 B each, 2: 128 B); `msmFixed` = msmG1/msmG2 over them. */
  msmTable?(group: 1 | 2, bases: Uint8Array): unknown;
  msmFixed?(table: unknown, scalars: Uint8Array, out: Uint8Array, threads?: number): boolean;
  /** Bytes a table of `msmTable` holds. */
  msmTableBytes?(table: unknown): number;
  /**
   * A proof for a `.wtns` witness: `out` (≥ 256 B) ← π_A (x, y), π_B (x.c0, x.c1, y.c0, y.c1),
   * π_C (x, y) as plain LE 32-byte affine coordinates; returns the infinity flags (bit 0 A, 1 B, 2 C).
   * `threads` MSM threads (0 = automatic), `rs` 64 bytes (r, s LE) or undefined for CSPRNG values,
   * `times` Float64Array(16) ← per-stage thread-CPU ms [0..8) and wall ms [8..16). Blocks the caller.
   * Errors: ERR_GROTH16_WITNESS (malformed witness), ERR_GROTH16_ARG (r or s ≥ r), ERR_GROTH16_NOMEM.
   */
  groth16Prove?(handle: unknown, wtns: Uint8Array, out: Uint8Array, threads?: number, rs?: Uint8Array, times?: Float64Array): number;
  /**
   * Groth16 verification (native/kernels/src/pairing.h): `vk` α1 (64 B) ‖ β2 ‖ γ2 ‖ δ2 (128 B each) ‖
   * IC_0..IC_n (64 B each), `proof` 256 B in `groth16Prove`'s layout, `publics` n × 32 B; all plain LE,
   * an all-zero point is infinity. True when e(−π_A, π_B)·e(α1, β2)·e(vk_x, γ2)·e(π_C, δ2) = 1.
   * Error ERR_GROTH16_VERIFY_INPUT (message: which field, why) for a coordinate ≥ q, a point off its
   * curve, π_B outside G2, a public signal ≥ r or a wrong vk size. Blocks the caller (≈ 2.5 ms for inclusion_26_1).
   */
  groth16Verify?(vk: Uint8Array, proof: Uint8Array, publics: Uint8Array): boolean;
  /** e(P, Q) (P 64 B, Q 128 B, plain LE) into `out` (≥ 384 B: the Fq12 value, ffjavascript's coordinate order); returns `out`. */
  bn254Pairing?(p: Uint8Array, q: Uint8Array, out: Uint8Array): Uint8Array;
}

/** Candidate paths of the compiled addon, relative to this file (src → repo root). */
const ADDON_PATHS = ['../native/kernels/build/Release/refract_native.node', '../native/kernels/build/Debug/refract_native.node'];

function load(): { addon: NativeAddon | null; error: string | null } {
  const require = createRequire(import.meta.url);
  let error = 'not built';
  for (const rel of ADDON_PATHS) {
    try {
      const addon = require(fileURLToPath(new URL(rel, import.meta.url))) as NativeAddon;
      if (typeof addon.hash === 'function' && typeof addon.hashBatch === 'function') return { addon, error: null };
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code !== 'MODULE_NOT_FOUND') error = String(err.message ?? err);
    }
  }
  return { addon: null, error };
}

const loaded = load();
/** The addon, or null when it is not built (see `nativeAddonError`). */
export const nativeAddon: NativeAddon | null = loaded.addon;
/** Why the addon is unavailable ('not built' or the load error), null when loaded. */
export const nativeAddonError: string | null = loaded.error;
