/**
 * The built-in simulator (src/sim/simulator.ts) stays bounded and answers fast: it keeps only the
 * newest `keepSlots` generated blocks (heap after GC stays flat over thousands of 1 ms slots), older
 * slots answer as a pruned Solana node answers them, getTransaction is an index look-up that never
 * generates, and the blocks are the same as the generator's for the seed.
 */
import { createHash } from 'node:crypto';
import v8 from 'node:v8';
import bs58 from 'bs58';
import vm from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { LightTxGenerator } from '../src/sim/generator.ts';
import { type Simulator, startSimulator } from '../src/sim/simulator.ts';
import { jsonRpc, sleep } from './helpers/jsonRpc.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const heapAfterGc = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

type RpcReply = { result?: any; error?: { code: number; message: string } };
const call = (url: string, method: string, params: unknown[] = []): Promise<RpcReply> => jsonRpc(url, method, params);
/** Base58 first signature of a transaction entry (getBlock or getTransaction JSON, base64 wire bytes). */
const sigOf = (t: { transaction?: unknown }) => bs58.encode(Buffer.from((t.transaction as [string, string])[0], 'base64').subarray(1, 65));

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('generator output is unchanged', () => {
  it('the first 150 blocks of seed 7 (20 owners, 3 transactions per block) hash as before the bounded simulator', () => {
    // Digest of JSON of gen.block(s, 3).json, s = 1..150. Recorded at commit 53d3f0d; re-recorded when the v1
    // address transactions (createAddress, the forester's address updates) got the address tree amt1 among
    // their account keys, as real ones have (a tree's own signature listing must find them).
    const gen = new LightTxGenerator({ owners: 20, seed: 7 });
    const h = createHash('sha256');
    for (let s = 1; s <= 150; s++) h.update(JSON.stringify(gen.block(s, 3).json));
    expect(h.digest('hex')).toBe('ba800fb8f920495dd70b82c3083a87fd8dbcb3989615a8e5fa6653da7e9084de');
    expect(gen.pending()).toEqual({ nullify: 1, addresses: 1 });
  });

  it('getBlock serves exactly the generator blocks of the seed, also while pruning', async () => {
    sim = await startSimulator({ port: 0, slotMs: 1, txsPerBlock: 2, seed: 3, owners: 30, keepSlots: 10 });
    await sleep(150);
    const gen = new LightTxGenerator({ owners: 30, seed: 3 });
    for (let s = 1; s <= 60; s++) {
      const got = await call(sim.url, 'getBlock', [s, { encoding: 'base64', maxSupportedTransactionVersion: 0 }]);
      expect(got.error).toBeUndefined();
      expect(got.result).toEqual(gen.block(s, 2).json);
    }
    expect(sim.stats()).toEqual({ generatedUpTo: 60, firstAvailable: 51, keptBlocks: 10, indexedSignatures: 20 });
  });
});

describe('bounded window, pruned-node answers', () => {
  it('keeps ≤ keepSlots blocks and a flat heap over thousands of 1 ms slots', async () => {
    const keepSlots = 100;
    // Small generator bounds so that its chain state (outputs held for later spends, the address
    // tree) is saturated early: after that, nothing may grow.
    sim = await startSimulator({ port: 0, slotMs: 1, txsPerBlock: 8, keepSlots, generatorBounds: { maxHeldAccounts: 256, maxAddresses: 64 } });
    // Follow the tip as a fast client would: each getBlock(tip) generates up to the tip.
    const followTo = async (slot: number) => {
      while (sim!.stats().generatedUpTo < slot) {
        const tip = (await call(sim!.url, 'getSlot')).result as number;
        const r = await call(sim!.url, 'getBlock', [Math.min(tip, slot)]);
        expect(r.error).toBeUndefined();
        const st = sim!.stats();
        expect(st.keptBlocks).toBeLessThanOrEqual(keepSlots);
        expect(st.indexedSignatures).toBeLessThanOrEqual(8 * keepSlots);
      }
    };
    await followTo(400);
    const base = heapAfterGc();
    await followTo(2400);
    const grown = heapAfterGc() - base;
    const st = sim.stats();
    expect(st.generatedUpTo).toBeGreaterThanOrEqual(2400);
    expect(st.keptBlocks).toBe(keepSlots);
    expect(st.firstAvailable).toBe(st.generatedUpTo - keepSlots + 1);
    // Keeping every block (the simulator before the window) cost ≈ 160 KB per 8-transaction slot, and
    // the unbounded generator state ≈ 1.8 KB per slot: 2,000 slots must add under 200 bytes each
    // (what remains is measurement noise of a GC'd heap: 100.25 seen with four test files at a time).
    expect(grown / 2000).toBeLessThan(200);
  }, 120_000);

  it('answers older slots as a pruned node: -32001 with the first available block, which moves forward', async () => {
    sim = await startSimulator({ port: 0, slotMs: 2, txsPerBlock: 1, keepSlots: 20 });
    await sleep(200);
    expect((await call(sim.url, 'getBlock', [1])).result.blockHeight).toBe(1);
    // The chain starts at the genesis block (slot 0), kept until the window passes it.
    expect((await call(sim.url, 'getFirstAvailableBlock')).result).toBe(0);
    expect((await call(sim.url, 'getBlock', [60])).error).toBeUndefined();
    expect((await call(sim.url, 'getFirstAvailableBlock')).result).toBe(41);
    expect((await call(sim.url, 'getBlock', [1])).error).toEqual({ code: -32001, message: 'Block 1 cleaned up, does not exist on node. First available block: 41' });
    expect((await call(sim.url, 'getBlock', [40])).error).toEqual({ code: -32001, message: 'Block 40 cleaned up, does not exist on node. First available block: 41' });
    expect((await call(sim.url, 'getBlock', [41])).result.blockHeight).toBe(41);
    expect((await call(sim.url, 'getBlock', [80])).error).toBeUndefined();
    expect((await call(sim.url, 'getFirstAvailableBlock')).result).toBe(61);
    expect((await call(sim.url, 'getBlock', [41])).error?.code).toBe(-32001);
    // A slot past the tip is "not available" (-32004), a malformed one is invalid params (-32602).
    expect((await call(sim.url, 'getBlock', [10_000_000])).error).toEqual({ code: -32004, message: 'Block not available for slot 10000000' });
    expect((await call(sim.url, 'getBlock', ['abc'])).error).toEqual({ code: -32602, message: 'Invalid params: slot (params[0]) must be a non-negative integer, got "abc"' });
  });

  it('getTransaction: found in the window, null once pruned or unknown, -32602 when malformed', async () => {
    sim = await startSimulator({ port: 0, slotMs: 2, txsPerBlock: 3, keepSlots: 5, seed: 11 });
    await sleep(100);
    const gen = new LightTxGenerator({ owners: 200, seed: 11 });
    const block1 = (await call(sim.url, 'getBlock', [1])).result;
    // The same seed's generator gives slot 1's transactions as getTransaction JSON: compare whole answers.
    const txs = [gen.next(1).json, gen.next(1).json, gen.next(1).json];
    for (const [i, t] of txs.entries()) {
      const got = await call(sim.url, 'getTransaction', [sigOf(t), { encoding: 'base64', maxSupportedTransactionVersion: 0 }]);
      expect(got.result).toEqual({ slot: 1, blockTime: block1.blockTime, transaction: t.transaction, meta: t.meta, version: t.version, transactionIndex: i });
      expect(block1.transactions[i].transaction).toEqual(t.transaction);
    }
    expect((await call(sim.url, 'getBlock', [20])).error).toBeUndefined();
    expect((await call(sim.url, 'getTransaction', [sigOf(txs[0]!)])).result).toBeNull();
    expect((await call(sim.url, 'getTransaction', [bs58.encode(Buffer.alloc(64, 7))])).result).toBeNull();
    expect((await call(sim.url, 'getTransaction', ['not-base58!'])).error).toEqual({
      code: -32602,
      message: 'Invalid params: signature (params[0]) must be a base58 64-byte transaction signature, got "not-base58!"',
    });
    expect(sim.stats().indexedSignatures).toBe(15);
  });

  it('getTransaction answers in milliseconds at a high slot without generating, even while a getBlock catches up', async () => {
    // A window larger than the tip: slot 3 stays kept however fast the catch-up below runs, and
    // 8 transactions per slot make the catch-up take long enough to be caught in the middle.
    sim = await startSimulator({ port: 0, slotMs: 1, txsPerBlock: 8, keepSlots: 100_000 });
    await sleep(300);
    const sig = sigOf((await call(sim.url, 'getBlock', [3])).result.transactions[0]);
    await sleep(1500); // the tip is now past 1,500 while only 3 slots are generated
    const tip = (await call(sim.url, 'getSlot')).result as number;
    expect(tip).toBeGreaterThan(1500);
    let t = performance.now();
    const found = await call(sim.url, 'getTransaction', [sig]);
    expect(performance.now() - t).toBeLessThan(200);
    expect(found.result.slot).toBe(3);
    expect(sim.stats().generatedUpTo).toBe(3);
    // A getBlock at the tip generates every slot up to it, in slices: other requests still get in.
    let caughtUp = false;
    const catchUp = call(sim.url, 'getBlock', [tip]).then((r) => {
      caughtUp = true;
      return r;
    });
    await sleep(50);
    t = performance.now();
    const during = await call(sim.url, 'getTransaction', [sig]);
    const slotDuring = await call(sim.url, 'getSlot');
    const ms = performance.now() - t;
    const genDuring = sim.stats().generatedUpTo;
    expect(caughtUp).toBe(false);
    expect(genDuring).toBeLessThan(tip);
    expect(ms).toBeLessThan(500); // generating up to the tip takes seconds
    expect(during.result.slot).toBe(3);
    expect(slotDuring.result).toBeGreaterThan(tip);
    const done = await catchUp;
    expect(done.result.blockHeight).toBe(tip);
    expect(sim.stats()).toMatchObject({ generatedUpTo: tip, keptBlocks: tip + 1 }); // slots 0 … tip
    // (A transaction whose block left the window answers null: the pruning tests above and sim.cli.)
  }, 60_000);

  it('rejects a keepSlots below 1', async () => {
    await expect(startSimulator({ port: 0, keepSlots: 0 })).rejects.toThrow('simulator keepSlots must be an integer ≥ 1, got 0');
  });
});
