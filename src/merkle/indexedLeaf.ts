/**
 * Leaf hashes of Light's indexed (address) Merkle trees (prover.md §4.2, photon.md §2.6). They sit in
 * merkle/, below light/, so that the indexed-tree constants (indexedConstants.ts) need nothing above
 * them; light/hashing.ts re-exports both under the same names.
 */
import { poseidon2, poseidon3 } from './poseidon.ts';

const U64_MAX = (1n << 64n) - 1n;

/**
 * 32 zero bytes with the u64 `v` big-endian in bytes[24..32].
 * @param what the field name used in the error. @throws RangeError when `v` is not a u64.
 */
export function be32(v: bigint, what: string): Uint8Array {
  if (v < 0n || v > U64_MAX) throw new RangeError(`${what} must be a u64, got ${v}`);
  const b = new Uint8Array(32);
  new DataView(b.buffer).setBigUint64(24, v, false);
  return b;
}

/**
 * Leaf hash of an AddressV1 indexed-tree element: Poseidon3(value, be32(u64 nextIndex), nextValue)
 * (Photon `indexed_merkle_tree/helpers.rs`; next_index in bytes[24..32]).
 * @param value 32 B BE (< r). @param nextIndex u64. @param nextValue 32 B BE (< r).
 * @returns 32-byte big-endian hash. @throws RangeError on out-of-range inputs.
 */
export function indexedLeafHashV1(value: Uint8Array, nextIndex: bigint, nextValue: Uint8Array): Uint8Array {
  return poseidon3(value, be32(nextIndex, 'nextIndex'), nextValue);
}

/**
 * Leaf hash of an AddressV2 indexed-tree element: Poseidon2(value, nextValue); next_index is not hashed.
 * @returns 32-byte big-endian hash. @throws RangeError on out-of-range inputs.
 */
export function indexedLeafHashV2(value: Uint8Array, nextValue: Uint8Array): Uint8Array {
  return poseidon2(value, nextValue);
}
