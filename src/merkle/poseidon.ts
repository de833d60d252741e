/**
 * circomlib-compatible Poseidon over the BN254 scalar field (spec prover.md §3, photon.md §2.2).
 *
 * - x^5 S-box, RF = 8, RP = 56/57/56/60/60/63/64 for 1..7 inputs, capacity element 0, output state[0],
 *   no domain separation; identical to light-poseidon `new_circom(n)`, circomlibjs and poseidon-lite.
 * - Every input and output is a 32-byte big-endian field element; inputs must be < r
 *   (r = 0x30644e72…f0000001), as light-hasher requires.
 *
 * Backends (chosen once at module load):
 * - `'native'`: the N-API addon in native/kernels (C, Montgomery 4×64, BMI2/ADX asm when the CPU has it;
 *   constants from circomlibjs `poseidon_constants_opt`). Build: `node-gyp rebuild -C native/kernels`.
 * - `'circomlibjs'`: fallback when the addon is missing or `REFRACT_POSEIDON=js`; circomlibjs
 *   `buildPoseidon` (wasm field arithmetic), the fastest pure-JS package measured (bench/poseidon.ts).
 *   This module uses top-level await to initialise it.
 */
import { envValue } from '../config/config.ts';
import { importAsMainThread } from '../mainThreadImport.ts';
import { type NativeAddon, nativeAddon as builtAddon, nativeAddonError } from '../native.ts';

/**
 * Largest number of inputs supported (t = 8). Light's compressed-account hash needs up to 7
 * (owner, leaf index, tree, lamports, address, discriminator, data hash).
 */
export const POSEIDON_MAX_INPUTS = 7;

/** BN254 scalar field modulus r. */
export const BN254_R = 0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001n;

/** r as 32 bytes big-endian (for range checks). */
const R_BE = Uint8Array.from(Buffer.from(BN254_R.toString(16).padStart(64, '0'), 'hex'));

/** A Poseidon implementation with the byte interface used throughout Refract. */
export interface PoseidonBackend {
  readonly name: 'native' | 'circomlibjs';
  /** Poseidon of 1..7 inputs (32 B BE each, < r) → 32 B BE. Throws RangeError naming the bad input. */
  hash(inputs: readonly Uint8Array[]): Uint8Array;
  /** Poseidon(a, b). */
  hash2(a: Uint8Array, b: Uint8Array): Uint8Array;
  /** `count` independent hashes of `arity` inputs: input = count·arity·32 B, result = count·32 B. */
  hashBatch(input: Uint8Array, arity: number): Uint8Array;
}

function checkArity(n: number): void {
  if (!Number.isInteger(n) || n < 1 || n > POSEIDON_MAX_INPUTS) {
    throw new RangeError(`Poseidon takes 1..${POSEIDON_MAX_INPUTS} inputs, got ${n}`);
  }
}

function checkBatchInput(input: Uint8Array, arity: number): number {
  checkArity(arity);
  if (!(input instanceof Uint8Array)) throw new TypeError('batch input must be a Uint8Array');
  const stride = arity * 32;
  if (input.length % stride !== 0) {
    throw new RangeError(`batch input length ${input.length} is not a multiple of ${stride} (arity ${arity} × 32)`);
  }
  return input.length / stride;
}

/** Throws unless `x` is 32 bytes BE and < r. `label` names the input in the message. */
function checkFieldBytes(x: Uint8Array, label: string): void {
  if (!(x instanceof Uint8Array)) throw new TypeError(`${label} must be a Uint8Array`);
  if (x.length !== 32) throw new RangeError(`${label} must be 32 bytes, got ${x.length}`);
  if (!isFieldElement(x)) throw new RangeError(`${label} is not a BN254 field element (must be < r)`);
}

// ---------------------------------------------------------------------------------------------
// native backend

/** The addon, or null (with the reason) when it is not built or disabled by REFRACT_POSEIDON=js. */
function loadNativeAddon(): { addon: NativeAddon | null; error: string | null } {
  if (envValue('REFRACT_POSEIDON') === 'js') return { addon: null, error: 'disabled by REFRACT_POSEIDON=js' };
  return { addon: builtAddon, error: nativeAddonError };
}

function nativeBackend(addon: NativeAddon): PoseidonBackend {
  return {
    name: 'native',
    hash(inputs) {
      const out = new Uint8Array(32);
      switch (inputs.length) {
        case 1: addon.hash(out, inputs[0]!); break;
        case 2: addon.hash(out, inputs[0]!, inputs[1]!); break;
        case 3: addon.hash(out, inputs[0]!, inputs[1]!, inputs[2]!); break;
        case 4: addon.hash(out, inputs[0]!, inputs[1]!, inputs[2]!, inputs[3]!); break;
        case 5: addon.hash(out, inputs[0]!, inputs[1]!, inputs[2]!, inputs[3]!, inputs[4]!); break;
        case 6: addon.hash(out, inputs[0]!, inputs[1]!, inputs[2]!, inputs[3]!, inputs[4]!, inputs[5]!); break;
        case 7: addon.hash(out, inputs[0]!, inputs[1]!, inputs[2]!, inputs[3]!, inputs[4]!, inputs[5]!, inputs[6]!); break;
        default: checkArity(inputs.length);
      }
      return out;
    },
    hash2(a, b) {
      const out = new Uint8Array(32);
      addon.hash(out, a, b);
      return out;
    },
    hashBatch(input, arity) {
      const count = checkBatchInput(input, arity);
      const out = new Uint8Array(count * 32);
      if (count > 0) addon.hashBatch(input, arity, out);
      return out;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// circomlibjs fallback

/**
 * Builds the circomlibjs (wasm) backend. Same outputs and errors as the native backend.
 * Exported for tests and benchmarks; normal code uses the module-level functions.
 */
export async function createCircomlibjsBackend(): Promise<PoseidonBackend> {
  // Untyped package: a non-literal specifier keeps TypeScript from demanding declarations.
  const spec: string = 'circomlibjs';
  // In a worker thread (the ingest thread) a plain import would start web-worker's worker mode.
  const { buildPoseidon } = await importAsMainThread<{ buildPoseidon: () => Promise<any> }>(spec);
  const p = await buildPoseidon();
  const F = p.F as {
    fromRprLE(buf: Uint8Array, off: number): Uint8Array;
    toRprBE(buf: Uint8Array, off: number, a: Uint8Array): void;
  };
  const le = new Uint8Array(32);

  /** Hashes n inputs read from `get(i)` into out[off..off+32). Inputs are range-checked first. */
  const hashInto = (n: number, get: (i: number) => Uint8Array, label: (i: number) => string, out: Uint8Array, off: number) => {
    const mont = new Uint8Array(n * 32);
    for (let i = 0; i < n; i++) {
      const x = get(i);
      checkFieldBytes(x, label(i));
      for (let k = 0; k < 32; k++) le[k] = x[31 - k]!;
      mont.set(F.fromRprLE(le, 0), i * 32);
    }
    F.toRprBE(out, off, p(mont));
  };

  return {
    name: 'circomlibjs',
    hash(inputs) {
      checkArity(inputs.length);
      const out = new Uint8Array(32);
      hashInto(inputs.length, (i) => inputs[i]!, (i) => `Poseidon input ${i}`, out, 0);
      return out;
    },
    hash2(a, b) {
      const out = new Uint8Array(32);
      hashInto(2, (i) => (i === 0 ? a : b), (i) => `Poseidon input ${i}`, out, 0);
      return out;
    },
    hashBatch(input, arity) {
      const count = checkBatchInput(input, arity);
      const out = new Uint8Array(count * 32);
      for (let k = 0; k < count; k++) {
        const base = k * arity * 32;
        hashInto(arity, (i) => input.subarray(base + i * 32, base + i * 32 + 32), (i) => `Poseidon batch item ${k} input ${i}`, out, k * 32);
      }
      return out;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// module-level selection

const loaded = loadNativeAddon();
const backend: PoseidonBackend = loaded.addon ? nativeBackend(loaded.addon) : await createCircomlibjsBackend();

/** Which backend is active: `'native'` (N-API addon) or `'circomlibjs'` (wasm fallback). */
export const poseidonBackend: 'native' | 'circomlibjs' = backend.name;

/** Why the native addon is not in use (null when it is). */
export const nativeLoadError: string | null = loaded.error;

/**
 * The native addon's raw exports when loaded (multiplication backend `impl()`: 'adx' | 'c',
 * `selectImpl()` to force one), else null. For tests and benchmarks.
 */
export const nativeAddon: NativeAddon | null = loaded.addon;

/** Which Poseidon code runs here (GET /health, start-up log). */
export interface PoseidonInfo {
  /** 'native' (the addon) or 'circomlibjs' (wasm fallback). */
  backend: 'native' | 'circomlibjs';
  /** Field multiplication of the native single-hash path: BMI2/ADX asm or portable C; null without the addon. */
  multiply: 'adx' | 'c' | null;
  /** Kernel of batched hashing (ingest: output hashes and tree levels): eight-lane AVX-512 IFMA or scalar; null without the addon. */
  batchKernel: 'ifma' | 'scalar' | null;
  /** Why the addon is not in use (null when it is). */
  nativeError: string | null;
}

/** The Poseidon backend and kernels in use ({@link PoseidonInfo}); reads the addon's current selection. */
export function poseidonInfo(): PoseidonInfo {
  const native = backend.name === 'native' ? loaded.addon : null;
  return { backend: backend.name, multiply: native?.impl() ?? null, batchKernel: native?.batchImpl?.() ?? null, nativeError: loaded.error };
}

/**
 * circomlib Poseidon of 1..7 field elements.
 * @param inputs 1..7 inputs, each 32 bytes big-endian and < r (BN254 scalar modulus).
 * @returns a new 32-byte big-endian hash.
 * @throws RangeError naming the input index if an input is not 32 bytes or is ≥ r, or if the
 *   number of inputs is outside 1..7; TypeError if an input is not a Uint8Array.
 */
export function poseidon(inputs: readonly Uint8Array[]): Uint8Array {
  return backend.hash(inputs);
}

/**
 * Poseidon(a, b) — Merkle parent of (left, right). 32-byte BE inputs < r → 32-byte BE.
 * @throws RangeError naming the input index (0 = a, 1 = b) when out of range or not 32 bytes.
 */
export function poseidon2(a: Uint8Array, b: Uint8Array): Uint8Array {
  return backend.hash2(a, b);
}

/**
 * Poseidon(a, b, c) — e.g. the v1 indexed-leaf hash. 32-byte BE inputs < r → 32-byte BE.
 * @throws RangeError naming the input index when out of range or not 32 bytes.
 */
export function poseidon3(a: Uint8Array, b: Uint8Array, c: Uint8Array): Uint8Array {
  return backend.hash([a, b, c]);
}

/**
 * Many Poseidon(left, right) in one call (one native call for the whole batch).
 * @param pairs n × 64 bytes: left ‖ right for each pair, 32-byte BE elements < r.
 * @returns n × 32 bytes: hash k at [32k, 32k+32).
 * @throws RangeError if the length is not a multiple of 64, or naming the pair (“batch item k”)
 *   and side (input 0 = left, 1 = right) of the first element ≥ r.
 * Runs synchronously on the calling thread (≈ n × 12 µs natively).
 */
export function poseidon2Batch(pairs: Uint8Array): Uint8Array {
  return backend.hashBatch(pairs, 2);
}

/**
 * Generalised batch: `count` independent Poseidon hashes of `arity` (1..7) inputs each.
 * @param input count × arity × 32 bytes (tuples laid out back to back, BE elements < r).
 * @returns count × 32 bytes.
 * @throws RangeError like {@link poseidon2Batch}.
 */
export function poseidonBatch(input: Uint8Array, arity: number): Uint8Array {
  return backend.hashBatch(input, arity);
}

/**
 * Poseidon of many tuples of mixed arity, hashed with one batch call per arity (the native batch
 * kernel runs eight tuples at a time where the CPU has AVX-512 IFMA).
 * @param tuples each 1..7 inputs of 32 bytes BE, < r.
 * @returns one new 32-byte BE hash per tuple, in order (views into one buffer per arity).
 * @throws RangeError if a tuple has 0 or more than 7 inputs, an input is not 32 bytes, or naming the
 *   batch item (counted within its arity) and input of the first element ≥ r.
 */
export function poseidonTuples(tuples: readonly (readonly Uint8Array[])[]): Uint8Array[] {
  const out: Uint8Array[] = new Array(tuples.length);
  const byArity = new Map<number, number[]>();
  for (let k = 0; k < tuples.length; k++) {
    const n = tuples[k]!.length;
    checkArity(n);
    let list = byArity.get(n);
    if (!list) byArity.set(n, (list = []));
    list.push(k);
  }
  for (const [arity, list] of byArity) {
    const input = new Uint8Array(list.length * arity * 32);
    list.forEach((k, j) => {
      tuples[k]!.forEach((x, i) => {
        if (x.length !== 32) throw new RangeError(`batch item ${j} input ${i} must be 32 bytes, got ${x.length}`);
        input.set(x, (j * arity + i) * 32);
      });
    });
    const hashes = backend.hashBatch(input, arity);
    list.forEach((k, j) => {
      out[k] = hashes.subarray(j * 32, j * 32 + 32);
    });
  }
  return out;
}

/** True when `x` is 32 bytes and, read big-endian, below the BN254 scalar modulus r. */
export function isFieldElement(x: Uint8Array): boolean {
  if (x.length !== 32) return false;
  for (let i = 0; i < 32; i++) if (x[i] !== R_BE[i]) return x[i]! < R_BE[i]!;
  return false;
}
