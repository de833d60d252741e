/**
 * Loader of Refract's N-API addon (native/poseidon: circomlib Poseidon, long base58 decoding, and the
 * BN254 MSM and FFT that serve snarkjs in the prover),
 * built by the package's `install` script (`node-gyp rebuild -C native/poseidon`). Every user has a
 * pure-JS fallback, so a missing build (no compiler) only costs speed.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Shape of the addon's exports (see native/poseidon/src/binding.c). */
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
   * BN254 G1 / G2 multi-scalar multiplication in ffjavascript's layout (native/poseidon/src/msm.h):
   * `bases` n affine Montgomery points (64 / 128 B), `scalars` n plain LE integers (1..32 B each),
   * `out` (≥ 96 / 192 B) receives the Jacobian Montgomery sum; false (out untouched) = infinity.
   * `threads` 0 / omitted: CPUs shared by the MSMs running in the process. Blocks the caller.
   */
  msmG1?(bases: Uint8Array, scalars: Uint8Array, out: Uint8Array, threads?: number): boolean;
  msmG2?(bases: Uint8Array, scalars: Uint8Array, out: Uint8Array, threads?: number): boolean;
  /** Adds `delta` to the process-wide open-job count that automatic MSM thread counts divide the CPUs by. */
  msmJobs?(delta: number): number;
  msmImpl?(): 'adx' | 'c';
  /**
   * In-place radix-2 NTT over BN254 Fr in ffjavascript's layout (native/poseidon/src/fft.h): `buf`
   * n·32 bytes (n a power of two ≥ 2, 8-byte aligned) of Montgomery LE elements, `root` a primitive
   * n-th root of unity, `scale` (optional) multiplies every output; inverse = root⁻¹, scale n⁻¹.
   * Returns `buf`.
   */
  frFft?(buf: Uint8Array, root: Uint8Array, scale?: Uint8Array): Uint8Array;
  /** glibc `malloc_trim(0)`: free arena memory back to the kernel; false when nothing was released or no glibc. */
  mallocTrim?(): boolean;
  /** Forces the MSM's and frFft's field multiplication (tests); false when unavailable. */
  msmSelectImpl?(name: 'adx' | 'c'): boolean;
}

/** Candidate paths of the compiled addon, relative to this file (src → repo root). */
const ADDON_PATHS = ['../native/poseidon/build/Release/refract_poseidon.node', '../native/poseidon/build/Debug/refract_poseidon.node'];

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
