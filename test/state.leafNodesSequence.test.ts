/**
 * computeLeafNodesSequence (the level-by-level hashing of a run of batch events) against computeLeafNodes
 * applied set by set with the nodes written in between: the same nodes, seqs and hash counts.
 */
import { describe, expect, it } from 'vitest';
import { type LeafWrite, computeLeafNodes, computeLeafNodesSequence } from '../src/state/stateTree.ts';
import type { NodeRecord } from '../src/store/records.ts';
import type { ReadView } from '../src/store/store.ts';

/** A ReadView over a Map of heap index → node (only `node` is used by the tree code). */
function mapView(nodes: Map<number, NodeRecord>): ReadView {
  return { node: (_tree: Uint8Array, idx: bigint) => nodes.get(Number(idx)) } as unknown as ReadView;
}

/** Deterministic pseudo-random generator (xorshift32). */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

const tree = new Uint8Array(32);
const leafHash = (r: () => number) => {
  const h = new Uint8Array(32);
  for (let i = 1; i < 32; i++) h[i] = Math.floor(r() * 256);
  return h;
};

describe('computeLeafNodesSequence', () => {
  for (const [depth, spread, seed] of [
    [8, 40, 1],
    [20, 3000, 2],
    [32, 20000, 3],
  ] as const) {
    it(`equals set-by-set computeLeafNodes (depth ${depth}, leaves < ${spread})`, () => {
      const r = rng(seed);
      const store = new Map<number, NodeRecord>();
      // A stored starting state.
      const first: LeafWrite[] = Array.from({ length: 30 }, (_, i) => ({ leafIndex: i, hash: leafHash(r), seq: 1n }));
      for (const [idx, n] of computeLeafNodes(mapView(store), tree, depth, first).nodes) store.set(idx, n);
      const sets: LeafWrite[][] = [];
      let seq = 2n;
      for (let j = 0; j < 12; j++) {
        const set: LeafWrite[] = [];
        const contiguous = j % 2 === 0;
        const start = Math.floor(r() * spread);
        for (let k = 0; k < 10; k++) {
          const leafIndex = contiguous ? (start + k) % spread : Math.floor(r() * spread);
          // Now and then an older seq (skipped when the stored leaf is newer) or a leaf written twice.
          const s = r() < 0.1 ? 1n : seq;
          set.push({ leafIndex, hash: leafHash(r), seq: s });
          if (r() < 0.1) set.push({ leafIndex, hash: leafHash(r), seq: s });
        }
        if (j === 5) set.length = 0; // an event that writes no leaf
        sets.push(set);
        seq++;
      }
      const together = computeLeafNodesSequence(mapView(new Map(store)), tree, depth, sets);
      const seqStore = new Map(store);
      sets.forEach((set, j) => {
        const one = computeLeafNodes(mapView(seqStore), tree, depth, set);
        expect(together[j]!.hashes).toBe(one.hashes);
        expect([...together[j]!.nodes.keys()].sort((a, b) => a - b)).toEqual([...one.nodes.keys()].sort((a, b) => a - b));
        for (const [idx, n] of one.nodes) {
          const t = together[j]!.nodes.get(idx)!;
          expect(Buffer.from(t.hash).toString('hex')).toBe(Buffer.from(n.hash).toString('hex'));
          expect(t.seq).toBe(n.seq);
        }
        for (const [idx, n] of one.nodes) seqStore.set(idx, n);
      });
    });
  }
});
