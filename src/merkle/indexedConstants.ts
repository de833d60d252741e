/**
 * Constants of Light's v1 indexed (address) Merkle tree (prover.md §4.2, photon.md §2.6).
 */
import { indexedLeafHashV1 } from './indexedLeaf.ts';

/** 2^248 − 1 as 32 bytes big-endian (0x00 ‖ 31 × 0xff): the value of the top element. */
export const HIGHEST_ADDRESS_PLUS_ONE: Uint8Array = (() => {
  const b = new Uint8Array(32).fill(0xff);
  b[0] = 0;
  return b;
})();

const ZERO32 = new Uint8Array(32);

/** The zeroeth element of a v1 address tree: value 0, next index 1, next value 2^248−1 (seq 0). */
export const ZEROETH_ELEMENT_V1 = { leafIndex: 0, value: ZERO32, nextIndex: 1, nextValue: HIGHEST_ADDRESS_PLUS_ONE, seq: 0n };
/** The top element of a v1 address tree: value 2^248−1, next index 0, next value 0 (seq 1). */
export const TOP_ELEMENT_V1 = { leafIndex: 1, value: HIGHEST_ADDRESS_PLUS_ONE, nextIndex: 0, nextValue: ZERO32, seq: 1n };

/** Leaf hash of an indexed element of a v1 tree: Poseidon3(value, be32(nextIndex), nextValue). */
export function elementHashV1(e: { value: Uint8Array; nextIndex: number; nextValue: Uint8Array }): Uint8Array {
  return indexedLeafHashV1(e.value, BigInt(e.nextIndex), e.nextValue);
}
