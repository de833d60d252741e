/**
 * Non-inclusion (exclusion-range) proofs for new addresses in v1 address trees (photon.md §2.6).
 */
import type { TreeInfo } from '../config/trees.ts';
import { ZERO_BYTES } from '../merkle/zeroValues.ts';
import { poseidon2 } from '../merkle/poseidon.ts';
import { TOP_ELEMENT_V1, ZEROETH_ELEMENT_V1, elementHashV1 } from '../merkle/indexedConstants.ts';
import type { ReadView } from '../store/store.ts';
import type { Bytes32 } from '../types.ts';
import { pathAndRoot } from './merkleProofs.ts';

/** A new-address proof (Photon's MerkleContextWithNewAddressProof). */
export interface NewAddressProof {
  root: Buffer;
  address: Buffer;
  /** Low element value. */
  lowerRangeAddress: Buffer;
  /** Low element next value. */
  higherRangeAddress: Buffer;
  /** Low element next index. */
  nextIndex: number;
  /** `height` siblings, bottom-up. */
  proof: Buffer[];
  merkleTree: Buffer;
  rootSeq: bigint;
  lowElementLeafIndex: number;
}

/**
 * Proof that `address` lies strictly inside the range of its low element (the element with the
 * largest value below it). An empty tree yields Photon's synthetic proof over the zeroeth element
 * (proof [hash(top), Z1..], root folded with the leaf on the left, rootSeq 3 for AddressV1).
 */
export function getNewAddressProof(r: ReadView, info: TreeInfo, address: Bytes32): NewAddressProof {
  const low = r.indexedLowElement(info.treeBytes, address);
  if (!low) {
    const proof = [Buffer.from(elementHashV1(TOP_ELEMENT_V1)), ...ZERO_BYTES.slice(1, info.height).map((z) => Buffer.from(z))];
    let cur: Uint8Array = elementHashV1(ZEROETH_ELEMENT_V1);
    for (const sib of proof) cur = poseidon2(cur, sib);
    return {
      root: Buffer.from(cur),
      address: Buffer.from(address),
      lowerRangeAddress: Buffer.from(ZEROETH_ELEMENT_V1.value),
      higherRangeAddress: Buffer.from(ZEROETH_ELEMENT_V1.nextValue),
      nextIndex: ZEROETH_ELEMENT_V1.nextIndex,
      proof,
      merkleTree: Buffer.from(info.treeBytes),
      rootSeq: info.type === 'AddressV1' ? 3n : 0n,
      lowElementLeafIndex: 0,
    };
  }
  const { proof, root, rootSeq } = pathAndRoot(r, info.treeBytes, info.height, low.leafIndex);
  return {
    root,
    address: Buffer.from(address),
    lowerRangeAddress: Buffer.from(low.value),
    higherRangeAddress: Buffer.from(low.nextValue),
    nextIndex: low.nextIndex,
    proof,
    merkleTree: Buffer.from(info.treeBytes),
    rootSeq,
    lowElementLeafIndex: low.leafIndex,
  };
}
