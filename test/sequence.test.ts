/**
 * The tree sequence check (src/state/sequence.ts) on the real transactions of ../shared/photon: every
 * folder's numbered streams are contiguous; a transaction taken out shows as a gap naming the tree,
 * the stream and the numbers; a forester nullification of a leaf whose spend is missing is evidence.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { prepareBatch } from '../src/ingest/prepareBatch.ts';
import { planFiles, readPlannedBlocks } from '../src/ingest/sources/files.ts';
import { type SeqPosition, checkSequences, firstSequenceGap, firstUnspentNullification, seqKey, sequenceRuns } from '../src/state/sequence.ts';
import { decodeBlockJson } from '../src/ingest/parse.ts';
import { LightTxGenerator } from '../src/sim/generator.ts';
import { Store } from '../src/store/store.ts';
import { PHOTON_DIR, tempDir } from './helpers/photon.ts';

const TX_DIR = `${PHOTON_DIR}/transactions`;
const prepared = (folder: string) => prepareBatch([...readPlannedBlocks(planFiles([`${TX_DIR}/${folder}`], []), null)], loadTreeRegistry());

describe('tree sequence check on the shared fixtures', () => {
  it('every folder\'s streams are contiguous (changelog, queues, batch sequence numbers)', () => {
    const streams = new Set<string>();
    for (const folder of readdirSync(TX_DIR)) {
      const batch = prepared(folder);
      const { gap, advanced } = checkSequences(batch.updates, () => undefined);
      expect(gap, folder).toBeNull();
      for (const p of advanced.values()) streams.add(p.stream);
    }
    expect([...streams].sort()).toEqual(['addressQueue', 'batch', 'changelog', 'inputQueue', 'outputQueue']);
  });

  it('a transaction taken out of a batched tree\'s history is a gap naming the tree, the stream and the numbers', () => {
    const { updates } = prepared('batched_tree_transactions');
    const i = updates.findIndex((u, k) => k > 3 && sequenceRuns(u).some((r) => r.stream === 'outputQueue'));
    const removed = sequenceRuns(updates[i]!).find((r) => r.stream === 'outputQueue')!;
    const { gap } = checkSequences([...updates.slice(0, i), ...updates.slice(i + 1)], () => undefined);
    expect(gap).toMatchObject({ tree: removed.tree, stream: 'outputQueue', expected: removed.first });
    expect(gap!.got).toBeGreaterThan(removed.first);
    expect(gap!.index).toBeGreaterThanOrEqual(i);
    // Numbers at or below the position are a re-index, not a gap.
    const pos = new Map<string, SeqPosition>([[seqKey(removed.tree, 'outputQueue'), { next: 10_000n, slot: 1 }]]);
    expect(checkSequences(updates.slice(0, 5), (t, s) => pos.get(seqKey(t, s))).gap).toBeNull();
  });

  it('the stored positions follow the commits, and a batch from a later point of the chain shows the gap against them', async () => {
    const { updates, records } = prepared('lamport_transfers');
    expect(updates.length).toBeGreaterThanOrEqual(3);
    const store = new Store({ path: tempDir() });
    const indexer = new Indexer(store, loadTreeRegistry());
    indexer.commitBatch({ records, updates: updates.slice(0, 1), rejected: [], unknownTrees: new Map(), outputs: 0, lastSlot: records[0]!.slot });
    const gap = store.read((r) => firstSequenceGap(r, updates.slice(2)));
    expect(gap).toMatchObject({ stream: 'changelog', tree: 'smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT' });
    expect(store.read((r) => firstSequenceGap(r, updates.slice(1)))).toBeNull();
    await store.close();
  });

  it('a forester nullification of a leaf whose account the store holds as unspent is evidence of a missing spend', async () => {
    // The simulator's generator: real v1 transactions with the forester's NullifierEvents (no shared fixture has one).
    const gen = new LightTxGenerator({ owners: 5, seed: 3, v2Weight: 0 });
    const { updates, records } = prepareBatch(Array.from({ length: 30 }, (_, k) => decodeBlockJson(gen.block(k + 1, 4).json, k + 1)), loadTreeRegistry());
    const n = updates.findIndex((u) => u.leaves.some((l) => l.leaf.hash.every((b) => b === 0)));
    expect(n).toBeGreaterThan(0);
    const leaf = updates[n]!.leaves.find((l) => l.leaf.hash.every((b) => b === 0))!.leaf.leafIndex;
    // The transaction that spent the nullified leaf's account.
    const created = updates.flatMap((u) => u.outputs).find((o) => o.account.leafIndex === leaf)!.account;
    const spender = updates.findIndex((u) => u.inputs.some((h) => Buffer.from(h).equals(Buffer.from(created.hash))));
    expect(spender).toBeGreaterThanOrEqual(0);
    expect(spender).toBeLessThan(n);
    const store = new Store({ path: tempDir() });
    const indexer = new Indexer(store, loadTreeRegistry());
    const kept = updates.slice(0, n).filter((_, k) => k !== spender);
    indexer.commitBatch({ records, updates: kept, rejected: [], unknownTrees: new Map(), outputs: 0, lastSlot: null });
    const evidence = store.read((r) => firstUnspentNullification(r, updates.slice(n)));
    expect(evidence).toMatchObject({ stream: 'nullified', got: BigInt(leaf), afterSlot: created.slotCreated, signature: updates[n]!.signature, index: 0 });
    // With the spend in the checked updates (or committed), there is none.
    expect(store.read((r) => firstUnspentNullification(r, [updates[spender]!, ...updates.slice(n)]))).toBeNull();
    await store.close();
  });
});

describe('a transaction found late (healed) after one that spent its output', () => {
  it('the spend recorded before the account arrived is applied when it does: the store equals chain order', async () => {
    const { updates, records } = prepared('lamport_transfers');
    const spender = updates.findIndex((u, k) => u.inputs.some((h) => updates.slice(0, k).some((p) => p.outputs.some((o) => Buffer.from(o.account.hash).equals(Buffer.from(h))))));
    expect(spender).toBeGreaterThan(0);
    const creator = updates.findIndex((p) => p.outputs.some((o) => updates[spender]!.inputs.some((h) => Buffer.from(o.account.hash).equals(Buffer.from(h)))));
    const commit = async (order: number[]) => {
      const store = new Store({ path: tempDir() });
      const indexer = new Indexer(store, loadTreeRegistry());
      for (const k of order) indexer.commitBatch({ records, updates: [updates[k]!], rejected: [], unknownTrees: new Map(), outputs: 0, lastSlot: null });
      const hashes = updates.flatMap((u) => u.outputs.map((o) => o.account));
      const view = store.read((r) => ({
        spent: hashes.map((a) => r.account(a.hash)?.spent),
        balances: hashes.map((a) => String(r.balance(a.owner))),
        signatures: hashes.map((a) => r.signaturesForAccount(a.hash).map((s) => s.signature).sort()),
        orphans: hashes.map((a) => r.orphanSpend(a.hash) ?? null),
      }));
      await store.close();
      return view;
    };
    const inOrder = await commit(updates.map((_, k) => k));
    const late = await commit([...updates.keys()].filter((k) => k !== creator).concat(creator));
    expect(inOrder.spent).toContain(true);
    expect(late).toEqual(inOrder);
    expect(late.orphans.every((o) => o === null)).toBe(true);
  });
});
