/**
 * Valid (and deliberately invalid) inputs for Light's circuits, for tests and bench:prove-light:
 * Merkle paths folded with Poseidon2 as the circuits do (light-keys §5.2), indexed-tree low leaves
 * hashed as the key's circuit does (legacy height 26: Poseidon3(low, nextIndex, high); v2:
 * Poseidon2(low, high), §5.1).
 */
import { poseidon2, poseidon3 } from '../../src/merkle/poseidon.ts';
import type { LightKeySpec } from '../../src/prover/keys/lightKeys.ts';
import type { AccountProofInput, AddressProofInput, ValidityProofInputs } from '../../src/prover/engine/witness.ts';
import { bigintToBe32 } from '../../src/prover/engine/proofEncoding.ts';

/** Deterministic pseudo-random 32-byte BE value < 2^253 from a seed. */
export function seeded(seed: number): Uint8Array {
  let x = BigInt(seed) * 0x9e3779b97f4a7c15n + 0x1234567n;
  let v = 0n;
  for (let i = 0; i < 4; i++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n);
    v = (v << 64n) | x;
  }
  return bigintToBe32(v >> 3n);
}

/** The root of `leaf` at `index` with siblings `path` (bit k = 1: Poseidon2(sibling, node)). */
export function fold(leaf: Uint8Array, index: number, path: readonly Uint8Array[]): Uint8Array {
  let h = leaf;
  for (let k = 0; k < path.length; k++) h = Math.floor(index / 2 ** k) % 2 === 1 ? poseidon2(path[k]!, h) : poseidon2(h, path[k]!);
  return h;
}

/** An account at a high path index (all bits exercised), with a path that folds to its root. */
export function lightAccount(seed: number, height: number): AccountProofInput {
  const leaf = seeded(seed);
  const pathElements = Array.from({ length: height }, (_, k) => seeded(seed * 1000 + k + 1));
  const leafIndex = (2 ** height - 3 - seed * 7) % 2 ** height;
  return { root: fold(leaf, leafIndex, pathElements), leaf, leafIndex, pathElements };
}

/** A new address between a low element's value and next value, its low leaf in a tree of `height`. */
export function lightAddress(seed: number, height: number, legacy: boolean): AddressProofInput {
  const low = BigInt(seed) * 1000n + 5n;
  const value = low + 17n + BigInt(seed);
  const high = (1n << 247n) + BigInt(seed);
  const nextIndex = 3 + seed;
  const lowBytes = bigintToBe32(low);
  const highBytes = bigintToBe32(high);
  const leaf = legacy ? poseidon3(lowBytes, bigintToBe32(BigInt(nextIndex)), highBytes) : poseidon2(lowBytes, highBytes);
  const pathElements = Array.from({ length: height }, (_, k) => seeded(seed * 777 + k + 3));
  // < 2^32: Light's /prove JSON carries pathIndex as a uint32
  const lowLeafIndex = (2 ** Math.min(height, 32) - 5 - seed) % 2 ** height;
  return {
    root: fold(leaf, lowLeafIndex, pathElements),
    value: bigintToBe32(value),
    lowValue: lowBytes,
    highValue: highBytes,
    ...(legacy ? { nextIndex } : {}),
    lowLeafIndex,
    pathElements,
  };
}

/** Valid inputs for the circuit of key `k` (`seed` varies the values). */
export function lightInputsFor(k: LightKeySpec, seed = 1): ValidityProofInputs {
  return {
    accounts: Array.from({ length: k.nAccounts }, (_, i) => lightAccount(seed * 10 + i, k.stateTreeHeight)),
    addresses: Array.from({ length: k.nAddresses }, (_, i) => lightAddress(seed * 10 + i, k.addressTreeHeight, k.version === 1)),
    version: k.version,
  };
}
