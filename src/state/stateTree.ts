/**
 * Concurrent (state) Merkle tree persistence, batch-aware (photon.md §2.5 `persist_leaf_nodes`).
 *
 * Nodes use 1-based heap indices: root = 1, children of n are 2n and 2n+1, the leaf of
 * `leafIndex` in a tree of depth D is node 2^D + leafIndex (level 0). Each node keeps the max seq
 * of its children; a leaf is written iff its seq ≥ the stored leaf's seq.
 * Upper levels are hashed one level at a time with one batched Poseidon call, so consecutive
 * leaves share every upper-level hash (≈1 hash per leaf for long runs instead of D).
 */
import { poseidon2Batch } from '../merkle/poseidon.ts';
import { ZERO_BYTES } from '../merkle/zeroValues.ts';
import type { NodeRecord } from '../store/records.ts';
import type { ReadView, WriteView } from '../store/store.ts';
import type { Bytes32 } from '../types.ts';

/** A leaf to write: its index, hash (32 B BE; 0^32 for a nullified leaf) and seq. */
export interface LeafWrite {
  leafIndex: number;
  hash: Bytes32;
  seq: bigint;
}

/**
 * Writes `leaves` into `tree` (depth `depth`, e.g. 26) and recomputes every touched ancestor.
 * Leaves are applied in seq order; a leaf whose seq is below the stored leaf's seq is skipped
 * (idempotent re-index). Runs inside the caller's write transaction. Returns the hashes computed.
 */
export function persistLeafNodes(w: WriteView, tree: Bytes32, depth: number, leaves: readonly LeafWrite[]): number {
  const { nodes, hashes } = computeLeafNodes(w, tree, depth, leaves);
  // Leaves in `nodes` already passed the seq rule. An ancestor's seq is the max of its children's, which
  // are the stored ones or newer, so it never goes below the stored ancestor's seq: no read needed.
  for (const [idx, node] of nodes) w.putNode(tree, BigInt(idx), node);
  return hashes;
}

/**
 * What {@link persistLeafNodes} would write, without writing: every leaf that passes the seq rule and
 * every recomputed ancestor (heap index → node; the root is index 1 when anything changed), and the
 * number of Poseidon hashes computed. Reads the stored nodes through `r`.
 */
export function computeLeafNodes(r: ReadView, tree: Bytes32, depth: number, leaves: readonly LeafWrite[]): { nodes: Map<number, NodeRecord>; hashes: number } {
  if (leaves.length === 0) return { nodes: new Map(), hashes: 0 };
  const base = 2 ** depth;
  const sorted = [...leaves].sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
  const mem = new Map<number, NodeRecord>();
  const previousLeaf = new Map<number, NodeRecord | undefined>();
  for (const leaf of sorted) {
    const idx = base + leaf.leafIndex;
    if (!previousLeaf.has(idx)) previousLeaf.set(idx, r.node(tree, BigInt(idx)));
    const existingSeq = previousLeaf.get(idx)?.seq ?? 0n;
    if (leaf.seq >= existingSeq) mem.set(idx, { hash: leaf.hash, seq: leaf.seq });
  }
  if (mem.size === 0) return { nodes: mem, hashes: 0 };

  const child = (idx: number, level: number): NodeRecord => mem.get(idx) ?? r.node(tree, BigInt(idx)) ?? { hash: ZERO_BYTES[level]!, seq: 0n };
  let frontier = [...new Set([...mem.keys()])].sort((a, b) => a - b);
  let hashes = 0;
  for (let level = 0; level < depth; level++) {
    const parents: number[] = [];
    for (const n of frontier) {
      const p = Math.floor(n / 2);
      if (parents.length === 0 || parents[parents.length - 1] !== p) parents.push(p);
    }
    const pairs = Buffer.allocUnsafe(parents.length * 64);
    const seqs: bigint[] = new Array(parents.length);
    for (let i = 0; i < parents.length; i++) {
      const p = parents[i]!;
      const l = child(2 * p, level);
      const r = child(2 * p + 1, level);
      pairs.set(l.hash, i * 64);
      pairs.set(r.hash, i * 64 + 32);
      seqs[i] = l.seq > r.seq ? l.seq : r.seq;
    }
    const out = poseidon2Batch(pairs);
    hashes += parents.length;
    for (let i = 0; i < parents.length; i++) mem.set(parents[i]!, { hash: out.subarray(i * 32, i * 32 + 32), seq: seqs[i]! });
    frontier = parents;
  }
  return { nodes: mem, hashes };
}

/**
 * {@link computeLeafNodes} for a sequence of leaf sets applied one after the other (the batch events of
 * one tree): element j is exactly what `computeLeafNodes` returns for set j once the nodes of sets
 * 0..j−1 are written, but every level of every set is hashed in ONE batched Poseidon call, so the
 * sets' single-hash upper paths share the eight-lane kernel instead of running one scalar hash each.
 * Reads the stored nodes through `r` (the state before set 0). Writes nothing.
 */
export function computeLeafNodesSequence(r: ReadView, tree: Bytes32, depth: number, sets: readonly (readonly LeafWrite[])[]): { nodes: Map<number, NodeRecord>; hashes: number }[] {
  const base = 2 ** depth;
  // Nodes of the sets before the one at hand: leaves while the leaves are chosen, then each level's
  // nodes added set by set during that level's pass (a lookup at level L only asks for level-L nodes).
  const leafOverlay = new Map<number, NodeRecord>();
  const overlay = new Map<number, NodeRecord>();
  const stored = (idx: number): NodeRecord | undefined => overlay.get(idx) ?? r.node(tree, BigInt(idx));
  const mems: Map<number, NodeRecord>[] = [];
  const frontiers: number[][] = [];
  const hashes: number[] = sets.map(() => 0);
  for (const leaves of sets) {
    const mem = new Map<number, NodeRecord>();
    const sorted = [...leaves].sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
    const previousLeaf = new Map<number, NodeRecord | undefined>();
    for (const leaf of sorted) {
      const idx = base + leaf.leafIndex;
      if (!previousLeaf.has(idx)) previousLeaf.set(idx, leafOverlay.get(idx) ?? r.node(tree, BigInt(idx)));
      const existingSeq = previousLeaf.get(idx)?.seq ?? 0n;
      if (leaf.seq >= existingSeq) mem.set(idx, { hash: leaf.hash, seq: leaf.seq });
    }
    for (const [idx, node] of mem) leafOverlay.set(idx, node);
    mems.push(mem);
    frontiers.push([...mem.keys()].sort((a, b) => a - b));
  }
  for (let level = 0; level < depth; level++) {
    const parentsOf: number[][] = [];
    const seqs: bigint[] = [];
    const chunks: Uint8Array[] = [];
    for (let j = 0; j < sets.length; j++) {
      const mem = mems[j]!;
      const parents: number[] = [];
      for (const n of frontiers[j]!) {
        const p = Math.floor(n / 2);
        if (parents.length === 0 || parents[parents.length - 1] !== p) parents.push(p);
      }
      for (const p of parents) {
        const l = mem.get(2 * p) ?? stored(2 * p) ?? { hash: ZERO_BYTES[level]!, seq: 0n };
        const rt = mem.get(2 * p + 1) ?? stored(2 * p + 1) ?? { hash: ZERO_BYTES[level]!, seq: 0n };
        chunks.push(l.hash, rt.hash);
        seqs.push(l.seq > rt.seq ? l.seq : rt.seq);
      }
      // Set j's nodes of this level are what later sets see below them.
      for (const n of frontiers[j]!) overlay.set(n, mem.get(n)!);
      parentsOf.push(parents);
    }
    if (chunks.length === 0) break; // every set's frontier is empty (and stays so)
    const pairs = Buffer.allocUnsafe(chunks.length * 32);
    chunks.forEach((c, i) => pairs.set(c, i * 32));
    const out = poseidon2Batch(pairs);
    let k = 0;
    for (let j = 0; j < sets.length; j++) {
      const mem = mems[j]!;
      for (const p of parentsOf[j]!) {
        mem.set(p, { hash: out.subarray(k * 32, k * 32 + 32), seq: seqs[k]! });
        k++;
      }
      hashes[j]! += parentsOf[j]!.length;
      frontiers[j] = parentsOf[j]!;
    }
  }
  return mems.map((nodes, j) => ({ nodes, hashes: hashes[j]! }));
}
