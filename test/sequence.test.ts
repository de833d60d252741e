/**
 * The tree sequence check (src/state/sequence.ts) on the real transactions of test/fixtures/photon: every
 * folder's numbered streams are contiguous; a transaction taken out shows as a gap naming the tree,
 * the stream and the numbers; a forester nullification of a leaf whose spend is missing is evidence.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { prepareBatch } from '../src/ingest/prepareBatch.ts';
import { planFiles, readPlannedBlocks } from '../src/ingest/sources/files.ts';
import { HISTORY_META, INITIAL_NEXT, SEQ_STREAMS, type SeqPosition, checkSequences, expectedPosition, firstSequenceGap, firstUnspentNullification, queueNeeds, seqKey, sequenceRuns, tailCheckSlots } from '../src/state/sequence.ts';
import { decodeBlockJson } from '../src/ingest/prepareBatch.ts';
import { LightTxGenerator } from '../src/sim/generator.ts';
import { Store } from '../src/store/store.ts';
import * as base58 from '../src/solana/base58.ts';
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

  it('a transaction that queued the last entries a batch event moves into the tree, taken out, is a gap at the batch event (its queue stream)', () => {
    // The simulator's generator with v2 transactions (its BatchAppend / BatchNullify / BatchAddressAppend events).
    const gen = new LightTxGenerator({ owners: 5, seed: 4, v2Weight: 6 });
    const { updates } = prepareBatch(Array.from({ length: 60 }, (_, k) => decodeBlockJson(gen.block(k + 1, 6).json, k + 1)), loadTreeRegistry());
    let checked = 0;
    for (let j = 0; j < updates.length; j++) {
      for (const n of queueNeeds(updates[j]!)) {
        // The last transaction before the event that queued entries in that stream, inside the event's range.
        let i = j - 1;
        while (i >= 0 && !sequenceRuns(updates[i]!).some((r) => r.tree === n.tree && r.stream === n.stream)) i--;
        if (i < 0) continue;
        const run = sequenceRuns(updates[i]!).find((r) => r.tree === n.tree && r.stream === n.stream)!;
        // Only that stream's numbers (else an earlier gap in another stream names it first).
        if (run.first + run.count !== n.next || sequenceRuns(updates[i]!).length !== 1) continue;
        const { gap } = checkSequences([...updates.slice(0, i), ...updates.slice(i + 1, j + 1)], () => undefined);
        expect(gap).toMatchObject({ tree: n.tree, stream: n.stream, expected: run.first, got: n.next, index: j - 1, signature: updates[j]!.signature });
        // With the transaction there, nothing is missing.
        expect(checkSequences(updates.slice(0, j + 1), () => undefined).gap).toBeNull();
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
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

describe('a batched-tree (v2) transaction found late after the one that spent its output', () => {
  it('the orphan spend enters the input queue when the account arrives, as in chain order (two trees)', async () => {
    // The simulator's mix: legacy transactions on smt1 and v2 ones on a batched state tree, one stream.
    const gen = new LightTxGenerator({ owners: 6, seed: 11, v2Weight: 3 });
    const { updates, records } = prepareBatch(Array.from({ length: 40 }, (_, k) => decodeBlockJson(gen.block(k + 1, 4).json, k + 1)), loadTreeRegistry());
    const eq = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));
    // A v2 spend whose creator has no batch event between them (moving the creator after the spender
    // must not move it past a batch append of its own leaf).
    let pair: { creator: number; spender: number } | undefined;
    for (let s = 0; s < updates.length && !pair; s++) {
      for (const input of updates[s]!.batchInputs ?? []) {
        const c = updates.findIndex((u) => u.outputs.some((o) => eq(o.account.hash, input.accountHash)));
        if (c >= 0 && c < s && !updates.slice(c + 1, s + 1).some((u) => u.batchEvents.length)) pair = { creator: c, spender: s };
      }
    }
    expect(pair, 'the stream has a v2 spend to move').toBeDefined();
    const { creator, spender } = pair!;
    // The two trees: the spender's inputs are in a batched tree, and the stream also writes smt1.
    const treesWritten = new Set(updates.flatMap((u) => u.outputs.map((o) => base58.encode(o.account.tree))));
    expect(treesWritten.size).toBeGreaterThanOrEqual(2);
    const commit = async (order: number[]) => {
      const store = new Store({ path: tempDir() });
      const indexer = new Indexer(store, loadTreeRegistry());
      for (const k of order) indexer.commitBatch({ records, updates: [updates[k]!], rejected: [], unknownTrees: new Map(), outputs: 0, lastSlot: null });
      const hex = (b: Uint8Array | null | undefined) => (b ? Buffer.from(b).toString('hex') : null);
      const view = store.read((r) => ({
        accounts: updates.flatMap((u) => u.outputs).map(({ account: a }) => {
          const got = r.account(a.hash)!;
          return { hash: hex(a.hash), spent: got.spent, v2: got.v2 ? { queueIndex: String(got.v2.nullifierQueueIndex), nullifier: hex(got.v2.nullifier), txHash: hex(got.v2.txHash) } : null };
        }),
        inputQueues: [...treesWritten].map((t) => [...r.inputQueue(base58.decode(t))].map((e) => `${e.queueIndex}:${hex(e.hash)}`)),
        roots: [...treesWritten].map((t) => hex(r.batchTree(base58.decode(t))?.root)),
        orphans: updates.flatMap((u) => u.outputs).filter(({ account: a }) => r.orphanSpend(a.hash)).length,
      }));
      await store.close();
      return view;
    };
    const inOrder = await commit(updates.map((_, k) => k));
    const order = [...updates.keys()].filter((k) => k !== creator);
    order.splice(order.indexOf(spender) + 1, 0, creator);
    const late = await commit(order);
    expect(inOrder.inputQueues.flat().length).toBeGreaterThan(0);
    expect(late).toEqual(inOrder);
    expect(late.orphans).toBe(0);
  });

  it('the tail check lists from the backfill\'s start a tree still missing a stream (its first batch event hidden), else from its last numbers', () => {
    const registry = loadTreeRegistry();
    const { updates } = prepared('batched_address_transactions');
    const first = updates.findIndex((u) => sequenceRuns(u).some((r) => r.stream === 'batch'));
    const tree = sequenceRuns(updates[first]!).find((r) => r.stream === 'batch')!.tree;
    expect(first).toBeGreaterThan(0);
    /** A read view holding the positions `checkSequences` reaches over `us`. */
    const view = (us: typeof updates) => {
      const pos = [...checkSequences(us, () => undefined).advanced.values()];
      const idx = (st: (typeof SEQ_STREAMS)[number]) => SEQ_STREAMS.indexOf(st);
      return {
        *seqPositions(): Generator<[Buffer, number, bigint, number]> {
          for (const p of pos) yield [Buffer.from(base58.decode(p.tree)), idx(p.stream), p.next, p.slot];
        },
        seqPosition(t: Uint8Array, stream: number) {
          const p = pos.find((q) => base58.encode(t) === q.tree && idx(q.stream) === stream);
          return p && { next: p.next, slot: p.slot };
        },
      };
    };
    const info = registry.get(tree)!;
    expect(info.type).toBe('AddressV2');
    const unseen = registry.all().find((t) => t.type === 'StateV1' && !updates.some((u) => sequenceRuns(u).some((r) => r.tree === t.tree)))!;
    // the address queue reached, the first batch event missing: from the backfill's start (-1)
    const before = tailCheckSlots(view(updates.slice(0, first)), [info, unseen], -1);
    expect(before.get(tree)).toBe(-1);
    expect(before.get(unseen.tree)).toBe(-1); // a tree the store never met at all
    // once the tree's batch stream has a number too: from the lowest slot of its streams' last numbers
    const after = tailCheckSlots(view(updates.slice(0, first + 1)), [info], -1);
    expect(after.get(tree)).toBeGreaterThanOrEqual(updates[first - 1]!.slot);
  });
});

describe('a store with complete history holds a batched tree\'s first numbers to a new tree\'s', () => {
  /** A read view with no stored position and the given history meta. */
  const view = (history: { start: number; complete: boolean } | undefined) => ({
    seqPosition: () => undefined,
    metaText: (name: string) => (name === HISTORY_META && history ? JSON.stringify(history) : undefined),
  });
  // The simulator's generator: fresh v2 trees (root seq 0, empty queues) from its first block.
  const gen = new LightTxGenerator({ owners: 5, seed: 7, v2Weight: 6 });
  const { updates } = prepareBatch(Array.from({ length: 60 }, (_, k) => decodeBlockJson(gen.block(k + 1, 6).json, k + 1)), loadTreeRegistry());
  const complete = view({ start: 0, complete: true });

  it('the first numbers: batch sequence number 1, queue index 0; v1 streams and partial histories take them as given; a stored position wins', () => {
    const tree = sequenceRuns(updates.find((u) => sequenceRuns(u).some((r) => r.stream === 'batch'))!).find((r) => r.stream === 'batch')!.tree;
    expect(expectedPosition(complete, tree, 'batch')).toEqual({ next: 1n, slot: 0, initial: true });
    for (const st of ['outputQueue', 'inputQueue', 'addressQueue'] as const) expect(expectedPosition(complete, tree, st)).toEqual({ next: 0n, slot: 0, initial: true });
    expect(INITIAL_NEXT.changelog).toBeUndefined();
    expect(expectedPosition(complete, tree, 'changelog')).toBeUndefined();
    expect(expectedPosition(complete, tree, 'indexed')).toBeUndefined();
    expect(expectedPosition(view({ start: 500, complete: false }), tree, 'batch')).toBeUndefined();
    expect(expectedPosition(view(undefined), tree, 'batch')).toBeUndefined();
    expect(expectedPosition({ ...complete, seqPosition: () => ({ next: 7n, slot: 3 }) }, tree, 'batch')).toEqual({ next: 7n, slot: 3 });
  });

  it('the generator\'s fresh trees pass whole; each one\'s first batch event taken out is a gap from 1 marked first, found from the history\'s start', () => {
    expect(firstSequenceGap(complete, updates)).toBeNull();
    const firsts = new Map<string, number>();
    updates.forEach((u, i) => {
      for (const r of sequenceRuns(u)) if (r.stream === 'batch' && !firsts.has(r.tree)) firsts.set(r.tree, i);
    });
    expect(firsts.size).toBeGreaterThanOrEqual(2); // the v2 state tree and the v2 address tree
    for (const [tree, i] of firsts) {
      const run = sequenceRuns(updates[i]!).find((r) => r.tree === tree && r.stream === 'batch')!;
      expect(run.first).toBe(1n);
      const without = [...updates.slice(0, i), ...updates.slice(i + 1)];
      const gap = firstSequenceGap(complete, without);
      expect(gap, tree).toMatchObject({ tree, stream: 'batch', expected: 1n, got: 2n, afterSlot: 0, first: true });
      // Without a complete history the stream's first number is taken as given: nothing shows.
      expect(checkSequences(without, () => undefined).gap).toBeNull();
    }
  });

  it('a tree\'s first queued entries taken out are a gap at the batch event that moves them (queue index from 0)', () => {
    const i = updates.findIndex((u) => sequenceRuns(u).some((r) => r.stream === 'outputQueue'));
    const run = sequenceRuns(updates[i]!).find((r) => r.stream === 'outputQueue')!;
    expect(run.first).toBe(0n);
    const gap = firstSequenceGap(complete, [...updates.slice(0, i), ...updates.slice(i + 1)]);
    expect(gap).toMatchObject({ tree: run.tree, stream: 'outputQueue', expected: 0n, first: true });
  });

  it('the chain agrees: Light\'s test trees in the shared fixtures (created in their history) begin at batch 1 and queue index 0 and pass whole; a mainnet tree met part-way is a first-number gap, which is why the history is complete only where the store began with the cluster', () => {
    for (const folder of ['batch_append_nullify', 'batched_address_transactions', 'batched_tree_transactions']) {
      const { updates: real } = prepared(folder);
      const streams = new Set(real.flatMap((u) => sequenceRuns(u).map((r) => r.stream)));
      expect(streams.has('batch'), folder).toBe(true);
      expect(firstSequenceGap(complete, real), folder).toBeNull();
    }
    const { updates: midway } = prepared('index_compress_and_close_with_tlv');
    expect(checkSequences(midway, () => undefined).gap).toBeNull();
    expect(firstSequenceGap(complete, midway)).toMatchObject({ stream: 'outputQueue', expected: 0n, got: 160680n, first: true });
  });
});
