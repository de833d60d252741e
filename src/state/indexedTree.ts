/**
 * Indexed (address) Merkle tree updates from `IndexedMerkleTreeEvent`s (photon.md §2.6, V1 path).
 */
import type { TreeInfo } from '../config/trees.ts';
import { TOP_ELEMENT_V1, ZEROETH_ELEMENT_V1, elementHashV1 } from '../merkle/indexedConstants.ts';
import type { IndexedElementRecord } from '../store/records.ts';
import type { WriteView } from '../store/store.ts';
import type { Bytes32, IndexedMerkleTreeEvent } from '../types.ts';
import { type LeafWrite, persistLeafNodes } from './stateTree.ts';

/** An element update with the leaf hash the event carries. */
export interface IndexedUpdate {
  element: IndexedElementRecord;
  hash: Bytes32;
}

/**
 * Collects the element updates of one event into `into` (keyed by leaf index; the higher seq wins).
 * Update k: the low element gets seq+2k, the high element seq+2k+1.
 */
export function collectIndexedUpdates(event: IndexedMerkleTreeEvent, into: Map<number, IndexedUpdate>): void {
  event.updates.forEach((u, k) => {
    const pairs: [typeof u.newLowElement, Bytes32, bigint][] = [
      [u.newLowElement, u.newLowElementHash, event.seq + 2n * BigInt(k)],
      [u.newHighElement, u.newHighElementHash, event.seq + 2n * BigInt(k) + 1n],
    ];
    for (const [el, hash, seq] of pairs) {
      const leafIndex = Number(el.index);
      const prev = into.get(leafIndex);
      if (prev && prev.element.seq > seq) continue;
      into.set(leafIndex, { element: { leafIndex, value: el.value, nextIndex: Number(el.nextIndex), nextValue: el.nextValue, seq }, hash });
    }
  });
}

/**
 * Applies the collected updates of one address tree: adds the synthetic zeroeth (seq 0) and top (seq 1)
 * elements when no update touches leaves 0 and 1, upserts elements whose seq ≥ the stored seq, and writes
 * the leaves (hashes from the event) into the tree. Runs inside the caller's write transaction.
 */
export function persistIndexedUpdates(w: WriteView, info: TreeInfo, updates: Map<number, IndexedUpdate>): void {
  if (updates.size === 0) return;
  const all = new Map(updates);
  if (!all.has(0)) all.set(0, { element: ZEROETH_ELEMENT_V1, hash: elementHashV1(ZEROETH_ELEMENT_V1) });
  if (info.type === 'AddressV1' && !all.has(1)) all.set(1, { element: TOP_ELEMENT_V1, hash: elementHashV1(TOP_ELEMENT_V1) });
  const leaves: LeafWrite[] = [];
  for (const { element, hash } of all.values()) {
    const stored = w.indexedElement(info.treeBytes, element.leafIndex);
    if (!stored || element.seq >= stored.seq) w.putIndexedElement(info.treeBytes, element);
    leaves.push({ leafIndex: element.leafIndex, hash, seq: element.seq });
  }
  persistLeafNodes(w, info.treeBytes, info.height, leaves);
}
