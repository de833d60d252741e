/**
 * Non-inclusion (exclusion-range) proofs for new addresses in address trees (photon.md §2.6).
 */
import type { TreeInfo } from '../config/trees.ts';
import { ZERO_BYTES } from '../merkle/zeroValues.ts';
import { poseidon2 } from '../merkle/poseidon.ts';
import { indexedLeafHashV2 } from '../light/hashing.ts';
import { HIGHEST_ADDRESS_PLUS_ONE, TOP_ELEMENT_V1, ZEROETH_ELEMENT_V1, elementHashV1 } from '../merkle/indexedConstants.ts';
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
 * The zeroeth element of an AddressV2 (batched) address tree: value 0, next index 0, next value
 * 2^248−1 (photon.md §2.6); its leaf hash is Poseidon2(value, nextValue).
 */
const ZEROETH_ELEMENT_V2 = { value: new Uint8Array(32), nextIndex: 0, nextValue: HIGHEST_ADDRESS_PLUS_ONE };

/**
 * Photon's synthetic proof for a tree with no element yet (photon.md §2.6 "If there is no element"):
 * the low element is the zeroeth element at leaf 0 and the siblings are those of the tree as created
 * on chain, `height` of them bottom-up.
 * - AddressV1: leaf 0 = zeroeth V1 `{0, next 1, 2^248−1}`, siblings `[hash(top element), Z1..Z(h−1)]`
 *   (leaf 1 holds the top element), rootSeq 3.
 * - AddressV2: leaf 0 = zeroeth V2 `{0, next 0, 2^248−1}` hashed Poseidon2(value, nextValue),
 *   siblings `[Z0..Z(h−1)]`, rootSeq 0.
 * The root folds Poseidon(cur, sibling) with the leaf always on the left (leaf index 0).
 */
export function emptyTreeAddressProof(info: TreeInfo, address: Bytes32): NewAddressProof {
  const v1 = info.type === 'AddressV1';
  const low = v1 ? ZEROETH_ELEMENT_V1 : ZEROETH_ELEMENT_V2;
  const siblings = v1 ? [elementHashV1(TOP_ELEMENT_V1), ...ZERO_BYTES.slice(1, info.height)] : ZERO_BYTES.slice(0, info.height);
  const proof = siblings.map((z) => Buffer.from(z));
  let cur: Uint8Array = v1 ? elementHashV1(low) : indexedLeafHashV2(low.value, low.nextValue);
  for (const sib of proof) cur = poseidon2(cur, sib);
  return addressProof(info, address, { ...low, leafIndex: 0 }, { proof, root: Buffer.from(cur), rootSeq: v1 ? 3n : 0n });
}

/** The API shape of a new-address proof from its low element and the path of that element's leaf. */
function addressProof(
  info: TreeInfo,
  address: Bytes32,
  low: { value: Uint8Array; nextIndex: number; nextValue: Uint8Array; leafIndex: number },
  path: { proof: Buffer[]; root: Buffer; rootSeq: bigint },
): NewAddressProof {
  return {
    root: path.root,
    address: Buffer.from(address),
    lowerRangeAddress: Buffer.from(low.value),
    higherRangeAddress: Buffer.from(low.nextValue),
    nextIndex: low.nextIndex,
    proof: path.proof,
    merkleTree: Buffer.from(info.treeBytes),
    rootSeq: path.rootSeq,
    lowElementLeafIndex: low.leafIndex,
  };
}

/** Where an address already is, for a new-address proof (see `existingAddress`). */
export type ExistingAddress = { in: 'tree'; leafIndex: number } | { in: 'queue'; tree: Buffer; queueIndex: bigint };

/**
 * Whether `address` already exists for a new-address proof in address tree `tree`: an element of
 * that indexed tree (`{in: 'tree', leafIndex}`: a V1 address its IndexedMerkleTreeEvent inserted, a
 * V2 address its BatchAddressAppend appended, or the tree's initial elements), or still waiting in
 * an AddressV2 address queue (`{in: 'queue', tree, queueIndex}`, any tree: Photon's `address_queues`
 * check is by address alone). Null when the address is new. No non-inclusion proof exists for such
 * an address (`getNewAddressProof` would return the range whose upper bound is the address itself).
 */
export function existingAddress(r: ReadView, tree: Bytes32, address: Bytes32): ExistingAddress | null {
  const leafIndex = r.indexedValueIndex(tree, address);
  if (leafIndex !== undefined) return { in: 'tree', leafIndex };
  const queued = r.queuedAddress(address);
  return queued ? { in: 'queue', ...queued } : null;
}

/**
 * Proof that `address` lies strictly inside the range of its low element (the element with the
 * largest value below it), with `info.height` siblings. A tree with no element yet (nothing indexed
 * for it, e.g. a fresh store) yields Photon's synthetic proof (`emptyTreeAddressProof`).
 * Does not check that the address is new: for an address already in the tree the low element is its
 * predecessor, whose next value is the address (callers refuse it first with `existingAddress`).
 */
export function getNewAddressProof(r: ReadView, info: TreeInfo, address: Bytes32): NewAddressProof {
  const low = r.indexedLowElement(info.treeBytes, address);
  if (!low) return emptyTreeAddressProof(info, address);
  return addressProof(info, address, low, pathAndRoot(r, info.treeBytes, info.height, low.leafIndex));
}
