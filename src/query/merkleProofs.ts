/**
 * Merkle proofs of state-tree leaves and root bookkeeping (photon.md §2.5 "Merkle proof").
 */
import { ZERO_BYTES } from '../merkle/zeroValues.ts';
import type { TreeRegistry } from '../config/trees.ts';
import type { ReadView } from '../store/store.ts';
import type { Bytes32 } from '../types.ts';
import { QueryError, recordNotFound } from './errors.ts';

/** A leaf's inclusion proof with its root (MerkleProofWithContext). */
export interface MerkleProofWithContext {
  /** Siblings bottom-up, `depth` of them (26 for v1). */
  proof: Buffer[];
  root: Buffer;
  leafIndex: number;
  hash: Buffer;
  merkleTree: Buffer;
  /** Seq of the root node (0 for an empty tree). */
  rootSeq: bigint;
}

/**
 * Siblings of `leafIndex` bottom-up plus the root, from stored nodes (missing nodes are ZERO_BYTES
 * of their level). Reads depth+1 nodes from the caller's read view.
 */
export function pathAndRoot(r: ReadView, tree: Bytes32, depth: number, leafIndex: number): { proof: Buffer[]; root: Buffer; rootSeq: bigint } {
  let idx = 2 ** depth + leafIndex;
  const proof: Buffer[] = [];
  for (let level = 0; level < depth; level++) {
    // Not `idx ^ 1`: heap indices of v2 trees (2^32 + i, 2^40 + i) exceed the 32-bit range of bitwise operators.
    const sib = idx % 2 === 0 ? idx + 1 : idx - 1;
    const n = r.node(tree, BigInt(sib));
    proof.push(n ? Buffer.from(n.hash) : Buffer.from(ZERO_BYTES[level]!));
    idx = Math.floor(idx / 2);
  }
  const root = r.node(tree, 1n);
  return { proof, root: Buffer.from(root ? root.hash : ZERO_BYTES[depth]!), rootSeq: root ? root.seq : 0n };
}

/**
 * Proofs for leaf hashes in request order, null where a hash is not a current leaf of any state tree
 * (never inserted, nullified, or a V2 account still in its output queue). The depth of the first
 * found leaf's tree is used for all (Photon quirk 5). Throws QueryError `Unexpected` when that tree
 * is not in the registry.
 */
export function findLeafProofs(r: ReadView, registry: TreeRegistry, hashes: readonly Bytes32[]): (MerkleProofWithContext | null)[] {
  const heightOf = (tree: Bytes32) => registry.getBytes(tree)?.height;
  const located = hashes.map((h) => ({ hash: Buffer.from(h), at: r.leafByHash(h, heightOf) }));
  const firstAt = located.find((x) => x.at)?.at;
  if (!firstAt) return located.map(() => null);
  const first = registry.getBytes(firstAt.tree);
  if (!first) throw new QueryError('Unexpected', 'tree of a stored leaf is not in the tree registry');
  return located.map(({ hash, at }) => {
    if (!at) return null;
    const { proof, root, rootSeq } = pathAndRoot(r, at.tree, first.height, at.leafIndex);
    return { proof, root, leafIndex: at.leafIndex, hash, merkleTree: Buffer.from(at.tree), rootSeq };
  });
}

/**
 * Proofs for leaf hashes in request order. Throws RecordNotFound
 * `Leaf nodes not found for hashes. Got {found} hashes. Expected {n}.` when any hash is not a current
 * leaf (or appears twice), as Photon does. The depth of the first result's tree is used for all (Photon quirk).
 */
export function getLeafProofs(r: ReadView, registry: TreeRegistry, hashes: readonly Bytes32[]): MerkleProofWithContext[] {
  const proofs = findLeafProofs(r, registry, hashes);
  const found = new Set(proofs.filter((p) => p).map((p) => p!.hash.toString('hex'))).size;
  if (found !== hashes.length) throw recordNotFound(`Leaf nodes not found for hashes. Got ${found} hashes. Expected ${hashes.length}.`);
  return proofs as MerkleProofWithContext[];
}
