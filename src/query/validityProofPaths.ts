/**
 * The store side of getValidityProof / getValidityProofV2 (photon.md §3.1 "getValidityProof
 * algorithm", steps 1–3 and 7): which accounts and new addresses go to the prover, with their
 * Merkle paths, roots and root indices. Proving itself (steps 4–6) is the prover's job; this module
 * gives it everything it needs from ONE read view, so a proof and its `context.slot` agree.
 */
import bs58 from 'bs58';
import type { TreeInfo, TreeRegistry } from '../config/trees.ts';
import type { ReadView } from '../store/store.ts';
import type { Bytes32 } from '../types.ts';
import { type NewAddressProof, getNewAddressProof } from './addressProofs.ts';
import { QueryError, validationError } from './errors.ts';
import { type MerkleProofWithContext, getLeafProofs } from './merkleProofs.ts';

/** One account of a validity proof, in request order. */
export interface AccountPath {
  hash: Buffer;
  leafIndex: number;
  tree: TreeInfo;
  /**
   * True for a V2 account still in its output queue (Photon `in_output_queue`): it is proved by
   * index, never sent to the prover, and has no path (`proof` null, root 0^32, rootIndex 0).
   */
  proveByIndex: boolean;
  /** The inclusion proof (siblings bottom-up, root, rootSeq); null when `proveByIndex`. */
  proof: MerkleProofWithContext | null;
  /** `rootSeq % rootHistoryCapacity` of the account's own tree (0 when `proveByIndex`). */
  rootIndex: number;
}

/** One new address of a validity proof, in request order. */
export interface NewAddressPath {
  tree: TreeInfo;
  /** The non-inclusion proof (low element, siblings, root, rootSeq). */
  proof: NewAddressProof;
  /** `rootSeq % rootHistoryCapacity` of the address tree. */
  rootIndex: number;
}

/**
 * Everything a validity proof needs from the store: each account's and each new address's Merkle
 * path, root and root index, in request order. Not the prover's inputs (`ValidityProofInputs`,
 * src/prover/engine/witness.ts), which src/rpc/validityProver.ts builds from these.
 */
export interface ValidityProofPaths {
  accounts: AccountPath[];
  addresses: NewAddressPath[];
}

/** Rust `{:?}` of a `Vec<String>`: `["a", "b"]` (Photon's error messages use it). */
function debugList(xs: readonly string[]): string {
  return `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;
}

function treeOf(registry: TreeRegistry, tree: Bytes32): TreeInfo {
  const info = registry.getBytes(tree);
  if (!info) throw new QueryError('Unexpected', `tree ${bs58.encode(tree)} of a stored leaf is not in the tree registry`);
  return info;
}

/**
 * The root-history slot of a root: for a batched tree whose root is the one its last batch event wrote,
 * that event's `root_index` (what the chain wrote); otherwise `rootSeq % capacity` (photon.md §2.5).
 */
export function rootIndexOf(r: ReadView, tree: TreeInfo, rootSeq: bigint, capacity: bigint): number {
  if (tree.type === 'StateV2' || tree.type === 'AddressV2') {
    const b = r.batchTree(tree.treeBytes);
    if (b && b.seq === rootSeq) return b.rootIndex;
  }
  return Number(rootSeq % capacity);
}

/**
 * Reads the Merkle paths of a validity proof for `hashes` (existing accounts) and `newAddresses`.
 *
 * - `mode: 'v1'` (getValidityProof): every hash must be a current leaf of a state tree
 *   (RecordNotFound `Leaf nodes not found for hashes. Got {found} hashes. Expected {n}.`); there is
 *   **no spent check** (Photon quirk 4).
 * - `mode: 'v2'` (getValidityProofV2): every hash must be an existing **unspent** account, else
 *   ValidationError `Not all requested account hashes exist or are available (might be spent).
 *   Requested: [...], Found in DB: [...]`. Accounts still in a V2 output queue (a StateV2 account
 *   without a leaf) are proved by index.
 * - Root indices use each tree's own root-history capacity. If the first proved account's tree has no
 *   metadata: ValidationError `Tree metadata not found for {tree}. Please ensure tree metadata sync has
 *   been run.` Proofs of different heights: ValidationError `All state trees for account proofs must have
 *   the same height` (addresses: `All address trees for new address proofs must have the same height`).
 * - New addresses: the low element's exclusion proof in the named tree; an unknown tree is
 *   InvalidPubkey `tree` (the API checks the trees before calling). The AddressV2 "already in the
 *   queue" check is not made here: src/rpc/validityProver.ts `checkCurrentState` makes it (with the
 *   tree and address-account checks) before calling this.
 * - Root indices of batched trees: the last batch event's `root_index` when the proof's root is the one
 *   it wrote (`rootIndexOf`).
 * Throws QueryError (src/query/errors.ts) for all of the above.
 */
export function getValidityProofPaths(
  r: ReadView,
  registry: TreeRegistry,
  request: { hashes: readonly Bytes32[]; newAddresses: readonly { address: Bytes32; tree: Bytes32 }[] },
  mode: 'v1' | 'v2',
): ValidityProofPaths {
  const accounts: (AccountPath | null)[] = request.hashes.map(() => null);
  let toProve: { index: number; hash: Bytes32 }[] = request.hashes.map((hash, index) => ({ index, hash }));

  if (mode === 'v2' && request.hashes.length > 0) {
    const found = request.hashes.map((h) => {
      const a = r.account(h);
      return a && !a.spent ? a : undefined;
    });
    if (found.some((a) => !a)) {
      throw validationError(
        `Not all requested account hashes exist or are available (might be spent). Requested: ${debugList(request.hashes.map((h) => bs58.encode(h)))}, Found in DB: ${debugList(found.filter((a) => a).map((a) => bs58.encode(a!.hash)))}`,
      );
    }
    toProve = [];
    found.forEach((a, index) => {
      const tree = registry.getBytes(a!.tree);
      const queued = tree?.type === 'StateV2' && (a!.v2 ? a!.v2.inOutputQueue : !r.leafByHash(a!.hash));
      if (queued) accounts[index] = { hash: Buffer.from(a!.hash), leafIndex: a!.leafIndex, tree: tree!, proveByIndex: true, proof: null, rootIndex: 0 };
      else toProve.push({ index, hash: request.hashes[index]! });
    });
  }

  if (toProve.length > 0) {
    const proofs = getLeafProofs(r, registry, toProve.map((x) => x.hash));
    const first = registry.getBytes(proofs[0]!.merkleTree);
    if (!first) throw validationError(`Tree metadata not found for ${bs58.encode(proofs[0]!.merkleTree)}. Please ensure tree metadata sync has been run.`);
    const height = proofs[0]!.proof.length;
    if (proofs.some((p) => p.proof.length !== height)) throw validationError('All state trees for account proofs must have the same height');
    proofs.forEach((p, i) => {
      const tree = treeOf(registry, p.merkleTree);
      const capacity = BigInt(tree.rootHistoryCapacity || first.rootHistoryCapacity);
      accounts[toProve[i]!.index] = { hash: p.hash, leafIndex: p.leafIndex, tree, proveByIndex: false, proof: p, rootIndex: rootIndexOf(r, tree, p.rootSeq, capacity) };
    });
  }

  const addresses = request.newAddresses.map(({ address, tree }): NewAddressPath => {
    const info = registry.getBytes(tree);
    if (!info || (info.type !== 'AddressV1' && info.type !== 'AddressV2')) throw new QueryError('InvalidPubkey', 'tree');
    const proof = getNewAddressProof(r, info, address);
    return { tree: info, proof, rootIndex: rootIndexOf(r, info, proof.rootSeq, BigInt(info.rootHistoryCapacity)) };
  });
  if (addresses.some((a) => a.proof.proof.length !== addresses[0]!.proof.proof.length)) {
    throw validationError('All address trees for new address proofs must have the same height');
  }
  return { accounts: accounts as AccountPath[], addresses };
}
