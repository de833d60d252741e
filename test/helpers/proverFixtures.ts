/**
 * Fixtures for tests and benchmarks of the proving core: real height-26 Merkle paths built with
 * circomlib-compatible Poseidon (poseidon-lite), the v1 initial address tree (spec prover.md
 * §4.2), and a shared cached keys directory for test runs.
 *
 * Test and benchmark code (test/, bench/prove.ts); not used by the server.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { poseidon2, poseidon3 } from 'poseidon-lite';
import { V1_TREE_HEIGHT } from '../../src/prover/keys/circuits.ts';
import { ProverError } from '../../src/prover/errors.ts';
import { bigintToBe32 } from '../../src/prover/engine/proofEncoding.ts';
import type { AccountProofInput, AddressProofInput } from '../../src/prover/engine/witness.ts';

/** Repository root (two levels above this file). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Keys directory shared by test files and runs (gitignored by `.refract-*`/). */
export const TEST_KEYS_DIR = path.join(REPO_ROOT, '.refract-test-keys');
/** The development ptau (2^16, INSECURE): generated once by `ensureDevPtau()` (test/helpers/devPtau.ts), or `$REFRACT_DEV_PTAU`. */
export { DEV_PTAU, ensureDevPtau } from './devPtau.ts';

/** 2^248 − 1: the v1 address tree's highest value (`HIGHEST_ADDRESS_PLUS_ONE`). */
export const HIGHEST_ADDRESS_PLUS_ONE = (1n << 248n) - 1n;

/** Zero subtree roots: Z[0] = 0, Z[i] = Poseidon2(Z[i−1], Z[i−1]) (spec §4.1); `height + 1` entries. */
export function zeroHashes(height = V1_TREE_HEIGHT): bigint[] {
  const z = [0n];
  for (let i = 1; i <= height; i++) z.push(poseidon2([z[i - 1]!, z[i - 1]!]));
  return z;
}

/** Folds a leaf up its path (siblings leaf level first), as the circuit does. */
export function foldPath(leaf: bigint, leafIndex: number, path: readonly bigint[]): bigint {
  let cur = leaf;
  path.forEach((sib, i) => {
    cur = Math.floor(leafIndex / 2 ** i) % 2 === 1 ? poseidon2([sib, cur]) : poseidon2([cur, sib]);
  });
  return cur;
}

/**
 * A compressed account at `leafIndex` in a synthetic height-26 tree: deterministic pseudo-random
 * leaf and siblings from `seed`, root folded with Poseidon.
 */
export function syntheticAccount(seed: number, leafIndex: number): AccountProofInput {
  const r = (k: number) => poseidon2([BigInt(seed), BigInt(k)]);
  const leaf = r(1_000_000);
  const path = Array.from({ length: V1_TREE_HEIGHT }, (_, i) => r(i));
  return {
    root: bigintToBe32(foldPath(leaf, leafIndex, path)),
    leaf: bigintToBe32(leaf),
    leafIndex,
    pathElements: path.map(bigintToBe32),
  };
}

/**
 * Non-inclusion of `value` (0 < value < 2^248 − 1) in the initial v1 address tree: leaf 0 is
 * (0, next 1, 2^248 − 1), leaf 1 is (2^248 − 1, 0, 0); root 0x218538b8… (spec §4.2).
 */
export function initialAddressTreeProof(value: bigint): AddressProofInput {
  const z = zeroHashes();
  const leaf1 = poseidon3([HIGHEST_ADDRESS_PLUS_ONE, 0n, 0n]);
  const path = [leaf1, ...z.slice(1, V1_TREE_HEIGHT)];
  const leaf0 = poseidon3([0n, 1n, HIGHEST_ADDRESS_PLUS_ONE]);
  return {
    root: bigintToBe32(foldPath(leaf0, 0, path)),
    value: bigintToBe32(value),
    lowValue: bigintToBe32(0n),
    highValue: bigintToBe32(HIGHEST_ADDRESS_PLUS_ONE),
    nextIndex: 1,
    lowLeafIndex: 0,
    pathElements: path.map(bigintToBe32),
  };
}

/** A compressed proof as the API returns it (byte arrays) or as `compressProof` makes it. */
export type CompressedProofLike = { a: ArrayLike<number>; b: ArrayLike<number>; c: ArrayLike<number> };

/**
 * Checks a `compressedProof` the way a verifier receiving it would: decompress (−A, B, C), negate
 * A back, then snarkjs Groth16 verification with `<keysDir>/<circuitId>.vkey.json`.
 * @param publicSignals the circuit's public vector as 32-byte BE values or decimal strings,
 *   order [roots, leaves, addrRoots, values]
 * @returns true when the proof verifies
 */
export async function verifyCompressedProof(keysDir: string, circuitId: string, compressed: CompressedProofLike, publicSignals: readonly (Uint8Array | string)[]): Promise<boolean> {
  const { readFile } = await import('node:fs/promises');
  const { decompressProof, BN254_P, beToBigint } = await import('../../src/prover/engine/proofEncoding.ts');
  const { keyFiles } = await import('../../src/prover/keys/layout.ts');
  const { verify } = await import('../../src/prover/engine/snark.ts');
  const d = decompressProof({ a: Uint8Array.from(compressed.a), b: Uint8Array.from(compressed.b), c: Uint8Array.from(compressed.c) });
  const [ax, negAy] = d.negA;
  const proof = {
    pi_a: [ax.toString(), (negAy === 0n ? 0n : BN254_P - negAy).toString(), '1'] as [string, string, string],
    pi_b: [
      [d.b[0][0].toString(), d.b[0][1].toString()],
      [d.b[1][0].toString(), d.b[1][1].toString()],
      ['1', '0'],
    ] as [[string, string], [string, string], [string, string]],
    pi_c: [d.c[0].toString(), d.c[1].toString(), '1'] as [string, string, string],
    protocol: 'groth16' as const,
    curve: 'bn128' as const,
  };
  const vkey = JSON.parse(await readFile(keyFiles(keysDir, circuitId).vkey, 'utf8'));
  const signals = publicSignals.map((s) => (typeof s === 'string' ? s : beToBigint(s).toString()));
  return verify(vkey, signals, proof);
}

/**
 * The ProverError that `f` throws.
 * @returns the error, for its code and message
 * @throws Error when `f` throws something else (that error is its cause) or nothing
 */
export function thrownProverError(f: () => unknown): ProverError {
  try {
    f();
  } catch (e) {
    if (e instanceof ProverError) return e;
    throw new Error(`expected a ProverError, got ${String(e)}`, { cause: e });
  }
  throw new Error('expected a ProverError, nothing was thrown');
}
