/**
 * Issue 17 item 8: the generator speaks today's format. With a v2 weight it mixes instruction-based
 * (v2) transactions on the batched tree bmt1 (outputs into its output queue oq1…, spends into its
 * input queue) and the forester's BatchAppend / BatchNullify events into the legacy stream. Indexed by
 * the real indexer: every transaction accepted, every batch event applied with zero root mismatches
 * (the generator's own height-32 Poseidon tree gives each event's new_root), queues as the generator
 * left them, appended accounts proved by path (`proveByIndex` false) against the indexer's root, queued
 * ones by index. With v2 weight 0 the stream is the legacy one of the seed.
 */
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { afterEach, describe, expect, it } from 'vitest';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { parseTransaction } from '../src/light/parser.ts';
import { getValidityProofPaths } from '../src/query/validityProofPaths.ts';
import { indexedLeafHashV2 } from '../src/light/hashing.ts';
import { poseidon2 } from '../src/merkle/poseidon.ts';
import { getNewAddressProof } from '../src/query/addressProofs.ts';
import { DEFAULT_V2_ADDRESS_TREE, DEFAULT_V2_QUEUE, DEFAULT_V2_TREE, LightTxGenerator } from '../src/sim/generator.ts';
import { type Simulator, startSimulator } from '../src/sim/simulator.ts';
import { decodeBlockJson } from '../src/solana/decode.ts';
import { Store } from '../src/store/store.ts';
import { tempDir, txDir } from './helpers/photon.ts';

const registry = loadTreeRegistry();
const BMT1 = registry.get(DEFAULT_V2_TREE)!;
const AMT2 = registry.get(DEFAULT_V2_ADDRESS_TREE)!;
const b58 = (b: Uint8Array) => bs58.encode(b);

describe('generator: v2 transactions on the batched tree bmt1 beside the legacy ones', () => {
  it('config/trees.json agrees with the generator defaults (StateV2 bmt1, output queue oq1…, 200 roots: a tree the official client knows)', () => {
    expect(DEFAULT_V2_TREE).toBe('bmt1LryLZUMmF7ZtqESaw7wifBXLfXHQYoE4GAmrahU');
    expect(BMT1).toMatchObject({ type: 'StateV2', queue: DEFAULT_V2_QUEUE, height: 32, rootHistoryCapacity: 200 });
  });

  it('indexes N generated blocks: both formats, batch events applied in order with zero root mismatches, queues and proofs as the generator says', async () => {
    const gen = new LightTxGenerator({ owners: 40, seed: 5, v2Weight: 6, zkpBatchSize: 10 });
    const store = new Store({ path: tempDir('refract-sim-v2-') });
    const indexer = new Indexer(store, registry);
    const seen = { legacy: 0, v2: 0, batchAppend: 0, batchNullify: 0, batchAddressAppend: 0, v2Inputs: 0 };
    const v2Outputs = new Map<string, number>(); // hash → leaf index
    let applied = 0;
    for (let s = 1; s <= 120; s++) {
      const block = decodeBlockJson(gen.block(s, 4).json, s);
      for (const tx of block.transactions) {
        for (const ev of parseTransaction(tx, s).events) {
          if (ev.kind === 'publicTransaction') seen.legacy++;
          if (ev.kind === 'batchPublicTransaction') {
            seen.v2++;
            seen.v2Inputs += ev.event.batchInputAccounts.length;
            ev.event.event.outputCompressedAccountHashes.forEach((h, i) => v2Outputs.set(b58(h), ev.event.event.outputLeafIndices[i]!));
          }
          if (ev.kind === 'batch') {
            seen[ev.event.kind]++;
            if (ev.event.kind !== 'batchAddressAppend') expect(ev.event.rootIndex).toBe(Number(ev.event.sequenceNumber % BigInt(BMT1.rootHistoryCapacity)));
          }
        }
      }
      const r = indexer.indexBlocks([block]);
      expect(r.rejected).toEqual([]);
      expect(r.unknownTrees.size).toBe(0);
      expect(r.unknownBatchInputs).toEqual([]);
      expect([...r.rootMismatches]).toEqual([]);
      expect(r.batchEvents.refused).toEqual([]);
      expect(r.batchEvents.held).toEqual([]);
      applied += r.batchEvents.applied;
    }
    // Both formats, both batch kinds, spends of queued and appended v2 accounts.
    expect(seen.legacy).toBeGreaterThan(100);
    expect(seen.v2).toBeGreaterThan(50);
    expect(seen.v2Inputs).toBeGreaterThan(20);
    expect(seen.batchAppend).toBeGreaterThan(3);
    expect(seen.batchNullify).toBeGreaterThan(1);
    expect(applied).toBe(seen.batchAppend + seen.batchNullify + seen.batchAddressAppend);

    const g = gen.v2State();
    expect(g.seq).toBe(BigInt(seen.batchAppend + seen.batchNullify));
    store.read((r) => {
      // The indexer's batched tree and root are the generator's.
      const t = r.batchTree(BMT1.treeBytes)!;
      expect(t.seq).toBe(g.seq);
      expect(t.nextIndex).toBe(BigInt(g.nextIndex));
      expect(t.rootIndex).toBe(Number(g.seq % BigInt(BMT1.rootHistoryCapacity)));
      expect(b58(t.root)).toBe(b58(g.root));
      expect(b58(r.node(BMT1.treeBytes, 1n)!.hash)).toBe(b58(g.root));
      // Queues: outputs not yet appended wait in the output queue, spends not yet nullified in the input queue.
      const outQ = [...r.outputQueue(BMT1.treeBytes)];
      expect(outQ).toHaveLength(g.outputQueue);
      expect(outQ.every((q) => q.leafIndex >= g.nextIndex)).toBe(true);
      expect([...r.inputQueue(BMT1.treeBytes)]).toHaveLength(g.inputQueue);

      // Every v2 output is stored; the live ones are proved by path once appended, by index before.
      let byPath = 0;
      let byIndex = 0;
      for (const [hash, leafIndex] of v2Outputs) {
        const a = r.account(bs58.decode(hash))!;
        expect(a, hash).toBeDefined();
        expect(a.leafIndex).toBe(leafIndex);
        expect(a.v2!.inOutputQueue).toBe(leafIndex >= g.nextIndex);
        if (a.spent) continue;
        const [p] = getValidityProofPaths(r, registry, { hashes: [a.hash], newAddresses: [] }, 'v2').accounts;
        expect(p!.proveByIndex).toBe(leafIndex >= g.nextIndex);
        if (p!.proveByIndex) byIndex++;
        else {
          byPath++;
          expect(b58(p!.proof!.root)).toBe(b58(g.root));
        }
      }
      expect(byPath).toBeGreaterThan(10);
      expect(byIndex).toBeGreaterThan(0);
    });
    await store.close();
  });

  it('config/trees.json agrees with the generator batched address tree (AddressV2 amt2…, queue = tree, height 40, 200 roots)', () => {
    expect(AMT2).toMatchObject({ type: 'AddressV2', queue: DEFAULT_V2_ADDRESS_TREE, height: 40, rootHistoryCapacity: 200 });
  });

  it('v2 new addresses in the batched address tree: queued with their indices, BatchAddressAppend events applied with zero root mismatches, proofs of fresh addresses against the generator root', async () => {
    const gen = new LightTxGenerator({ owners: 30, seed: 9, v2Weight: 8, zkpBatchSize: 10 });
    const store = new Store({ path: tempDir('refract-sim-v2addr-') });
    const indexer = new Indexer(store, registry);
    const created: string[] = [];
    let appends = 0;
    let lastSeq = 0n;
    for (let s = 1; s <= 150; s++) {
      const block = decodeBlockJson(gen.block(s, 4).json, s);
      for (const tx of block.transactions) {
        for (const ev of parseTransaction(tx, s).events) {
          if (ev.kind === 'batchPublicTransaction') {
            for (const a of ev.event.newAddresses) {
              expect(b58(a.tree)).toBe(AMT2.tree);
              expect(a.queueIndex).toBe(BigInt(created.length));
              created.push(b58(a.address));
            }
          }
          if (ev.kind === 'batch' && ev.event.kind === 'batchAddressAppend') {
            appends++;
            expect(b58(ev.event.merkleTreePubkey)).toBe(AMT2.tree);
            expect(ev.event.sequenceNumber).toBe(lastSeq + 1n);
            lastSeq = ev.event.sequenceNumber;
            expect(ev.event.rootIndex).toBe(Number(ev.event.sequenceNumber % 200n));
            expect(ev.event.newNextIndex - ev.event.oldNextIndex).toBe(10n);
          }
        }
      }
      const r = indexer.indexBlocks([block]);
      expect(r.rejected).toEqual([]);
      expect([...r.rootMismatches]).toEqual([]);
      expect(r.batchEvents.refused).toEqual([]);
      expect(r.batchEvents.held).toEqual([]);
    }
    expect(created.length).toBeGreaterThan(30);
    expect(appends).toBeGreaterThan(2);
    const g = gen.v2AddressState();
    expect(g.seq).toBe(BigInt(appends));
    expect(g.nextIndex).toBe(1 + 10 * appends);
    store.read((r) => {
      const t = r.batchTree(AMT2.treeBytes)!;
      expect([t.seq, t.nextIndex]).toEqual([g.seq, BigInt(g.nextIndex)]);
      expect(b58(r.node(AMT2.treeBytes, 1n)!.hash)).toBe(b58(g.root));
      // the queue holds the addresses not yet appended, in creation order
      expect([...r.addressQueue(AMT2.treeBytes)].map((q) => [Number(q.queueIndex), b58(q.address)])).toEqual(created.slice(10 * appends).map((a, i) => [10 * appends + i, a]));
      expect(g.queue).toBe(created.length - 10 * appends);
      // getMultipleNewAddressProofsV2's proof for a fresh address: 40 siblings folding to the generator's root
      for (const fill of [1, 77, 200]) {
        const fresh = new Uint8Array(32).fill(fill);
        fresh[0] = 0;
        const p = getNewAddressProof(r, AMT2, fresh);
        expect(p.proof).toHaveLength(40);
        expect(b58(p.root)).toBe(b58(g.root));
        let cur: Uint8Array = indexedLeafHashV2(p.lowerRangeAddress, p.higherRangeAddress);
        p.proof.forEach((sib, level) => (cur = Math.floor(p.lowElementLeafIndex / 2 ** level) % 2 ? poseidon2(sib, cur) : poseidon2(cur, sib)));
        expect(b58(cur)).toBe(b58(g.root));
        expect(Buffer.compare(Buffer.from(p.lowerRangeAddress), Buffer.from(fresh))).toBeLessThan(0);
        expect(Buffer.compare(Buffer.from(fresh), Buffer.from(p.higherRangeAddress))).toBeLessThan(0);
      }
      // an appended address is no longer absent: its low element is itself's predecessor and its range excludes it
      const appended = bs58.decode(created[0]!);
      const p = getNewAddressProof(r, AMT2, appended);
      expect(Buffer.compare(Buffer.from(p.higherRangeAddress), Buffer.from(appended))).toBe(0);
    });
    await store.close();
  });

  it('v2 weight 0 (the default) leaves the legacy stream of a seed unchanged; v2 weight > 0 changes it', () => {
    const digest = (g: LightTxGenerator) => {
      const h = createHash('sha256');
      for (let s = 1; s <= 40; s++) h.update(JSON.stringify(g.block(s, 3).json));
      return h.digest('hex');
    };
    expect(digest(new LightTxGenerator({ owners: 20, seed: 7, v2Weight: 0 }))).toBe(digest(new LightTxGenerator({ owners: 20, seed: 7 })));
    expect(digest(new LightTxGenerator({ owners: 20, seed: 7, v2Weight: 1 }))).not.toBe(digest(new LightTxGenerator({ owners: 20, seed: 7 })));
  });

  it('refuses bad v2 options, naming the option', () => {
    expect(() => new LightTxGenerator({ v2Weight: -1 })).toThrow('generator v2Weight must be a finite number ≥ 0, got -1');
    expect(() => new LightTxGenerator({ zkpBatchSize: 0 })).toThrow('generator zkpBatchSize must be an integer ≥ 1, got 0');
    expect(() => new LightTxGenerator({ v2RootHistoryCapacity: 1.5 })).toThrow('generator v2RootHistoryCapacity must be an integer ≥ 1, got 1.5');
  });

  describe('simulator', () => {
    let sim: Simulator | undefined;
    afterEach(async () => {
      await sim?.close();
      sim = undefined;
    });
    const v2Count = async (from: number, to: number) => {
      let n = 0;
      for (let s = from; s <= to; s++) {
        const r = await fetch(sim!.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getBlock', params: [s] }) });
        const block = decodeBlockJson(((await r.json()) as { result: unknown }).result, s);
        for (const tx of block.transactions) n += parseTransaction(tx, s).events.filter((e) => e.kind === 'batchPublicTransaction' || e.kind === 'batch').length;
      }
      return n;
    };

    // The reference fixtures' batched trees (not the generator's default bmt1 / amt2).
    const HLKS5 = { v2Tree: 'HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu', v2Queue: '6L7SzhYB3anwEQ9cphpJ1U7Scwj57bx2xueReg7R9cKU', v2RootHistoryCapacity: 20 };
    const EZKE8 = { v2AddressTree: 'EzKE84aVTkCUhDHLELqyJaq1Y7UVVmqxXqZjVHwHY3rK' };

    it('with a v2 weight it generates v2 transactions; after a replay that used its batched tree (HLKs5 here) it generates legacy ones only', async () => {
      sim = await startSimulator({ port: 0, slotMs: 1, txsPerBlock: 4, v2Weight: 5, generatorBounds: HLKS5 });
      while (sim.slot() < 40) await new Promise((r) => setTimeout(r, 20));
      expect(await v2Count(1, 40)).toBeGreaterThan(10);
      await sim.close();
      const dir = txDir('batched_tree_transactions');
      sim = await startSimulator({ port: 0, slotMs: 1, txsPerBlock: 4, v2Weight: 5, replay: [dir], generatorBounds: HLKS5 });
      // The replay (115 transactions, HLKs5 only) fills the first slots; the generated ones follow.
      expect(await v2Count(1, 20)).toBeGreaterThan(0);
      while (sim.slot() < 240) await new Promise((r) => setTimeout(r, 20));
      expect(await v2Count(200, 240)).toBe(0);
    });

    it('a replay on HLKs5 leaves the default batched trees (bmt1, amt2) to the generator: v2 transactions go on after it', async () => {
      sim = await startSimulator({ port: 0, slotMs: 1, txsPerBlock: 4, v2Weight: 5, replay: [txDir('batched_tree_transactions')] });
      while (sim.slot() < 240) await new Promise((r) => setTimeout(r, 20));
      expect(await v2Count(200, 240)).toBeGreaterThan(0);
    });

    it('after a replay that used its batched address tree (EzKE8 here) it generates legacy ones only', async () => {
      sim = await startSimulator({ port: 0, slotMs: 1, txsPerBlock: 4, v2Weight: 5, replay: [txDir('batched_address_transactions')], generatorBounds: EZKE8 });
      while (sim.slot() < 200) await new Promise((r) => setTimeout(r, 20));
      expect(await v2Count(1, 10)).toBeGreaterThan(0);
      expect(await v2Count(150, 200)).toBe(0);
    });
  });
});
