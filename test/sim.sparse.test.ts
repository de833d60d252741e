/**
 * The simulator's sparse, mainnet-like profile (src/sim/sparseChain.ts) and the Solana RPC semantics
 * a signature backfill relies on (src/sim/simulator.ts): the genesis block, getSignaturesForAddress
 * paging (before / until / limit, newest first, as agave), getBlock transactionDetails, getTransaction's
 * transactionIndex, JSON-RPC batches, the rate limit, the program-listing fault switch, determinism,
 * skipped slots, and the hooks of a gRPC server (blockJson, tipSlot, onSlot).
 */
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { parseTransaction } from '../src/light/parser.ts';
import { staticAccountKeys } from '../src/sim/compactTx.ts';
import { DEFAULT_V2_ADDRESS_TREE, DEFAULT_V2_TREE } from '../src/sim/generator.ts';
import { type Simulator, startSimulator } from '../src/sim/simulator.ts';
import { decodeBlockJson } from '../src/solana/decode.ts';
import { Store } from '../src/store/store.ts';
import { jsonRpc } from './helpers/jsonRpc.ts';
import { tempDir } from './helpers/photon.ts';

const ACP = 'compr6CUsB5m2jS4Y3831ztGSTnDpnKJTKS95d64XVq';
const SMT1 = 'smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT';
const AMT1 = 'amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2';
// Every Light transaction names a tree it changes among its account keys (the v1 address transactions name amt1).
const TREES = [SMT1, AMT1, DEFAULT_V2_TREE, DEFAULT_V2_ADDRESS_TREE];
const HISTORY = 20_000;

type RpcReply = { result?: any; error?: { code: number; message: string; data?: unknown }; id?: unknown };
/** POSTs a JSON-RPC batch (an array of requests). */
async function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}
const call = (url: string, method: string, params: unknown[] = []): Promise<RpcReply> => jsonRpc(url, method, params);
/** Every page of getSignaturesForAddress(address, cfg) with `limit`, following `before`. */
async function listAll(url: string, address: string, limit: number, cfg: Record<string, unknown> = {}): Promise<any[]> {
  const out: any[] = [];
  let before: string | undefined;
  for (;;) {
    const r = await call(url, 'getSignaturesForAddress', [address, { limit, ...cfg, ...(before ? { before } : {}) }]);
    expect(r.error).toBeUndefined();
    out.push(...r.result);
    if (r.result.length < limit) return out;
    before = r.result[r.result.length - 1].signature;
  }
}
const sigOfEntry = (t: { transaction: [string, string] }) => bs58.encode(Buffer.from(t.transaction[0], 'base64').subarray(1, 65));
const keysOfEntry = (t: { transaction: [string, string] }) => staticAccountKeys(Buffer.from(t.transaction[0], 'base64'));

let sim: Simulator;
/** Every Light transaction, ascending (slot, index). */
let light: { signature: string; slot: number; index: number }[];
beforeAll(async () => {
  // An hour per slot: the chain stays at its history for the whole file.
  sim = await startSimulator({ port: 0, profile: 'sparse', historySlots: HISTORY, paddingTxs: 20, slotMs: 3_600_000, v2Weight: 2, seed: 3, hideFromProgramListing: 7 });
  light = sim.lightTransactions();
}, 120_000);
afterAll(async () => {
  await sim?.close();
});

describe('sparse profile: the chain', () => {
  it('starts at a genesis block: slot 0 is its own parent, getFirstAvailableBlock 0, the tip is history-slots', async () => {
    const g = (await call(sim.url, 'getBlock', [0, { encoding: 'base64', maxSupportedTransactionVersion: 0 }])).result;
    expect(g).toMatchObject({ blockHeight: 0, parentSlot: 0, previousBlockhash: g.blockhash, transactions: [], rewards: [] });
    expect((await call(sim.url, 'getFirstAvailableBlock')).result).toBe(0);
    expect((await call(sim.url, 'getSlot')).result).toBe(HISTORY);
    expect(sim.tipSlot()).toBe(HISTORY);
    // The first produced slot after 0 names the genesis block as its parent.
    let s = 1;
    while ((await call(sim.url, 'getBlock', [s])).error) s++;
    const b = (await call(sim.url, 'getBlock', [s])).result;
    expect(b).toMatchObject({ parentSlot: 0, previousBlockhash: g.blockhash });
  });

  it('has Light transactions in about one slot of 50, a few each, both formats and forester events; memory holds only them', async () => {
    const slots = new Set(light.map((t) => t.slot));
    expect(slots.size).toBeGreaterThan(HISTORY / 50 / 1.5);
    expect(slots.size).toBeLessThan((HISTORY / 50) * 1.5);
    expect(light.length / slots.size).toBeGreaterThan(1.5);
    const st = sim.stats();
    expect(st).toMatchObject({ firstAvailable: 0, keptBlocks: slots.size, lightTransactions: light.length, generatedUpTo: HISTORY });
    // Event kinds of the Light slots' blocks, through the indexer's decoder.
    const kinds = new Map<string, number>();
    for (const slot of [...slots].slice(0, 200)) {
      const b = (await call(sim.url, 'getBlock', [slot])).result;
      for (const tx of decodeBlockJson(b, slot).transactions) {
        for (const ev of parseTransaction(tx, slot).events) {
          const k = ev.kind === 'batch' ? ev.event.kind : ev.kind;
          kinds.set(k, (kinds.get(k) ?? 0) + 1);
        }
      }
    }
    for (const k of ['publicTransaction', 'nullifier', 'indexedTreeUpdate', 'batchPublicTransaction', 'batchAppend']) expect(kinds.get(k) ?? 0, k).toBeGreaterThan(0);
    // Padding is derived, never stored: the same history with 50× the padding holds the same bytes.
    const padded = await startSimulator({ port: 0, profile: 'sparse', historySlots: HISTORY, paddingTxs: 1000, slotMs: 3_600_000, v2Weight: 2, seed: 3 });
    try {
      expect(padded.stats().lightBytes).toBe(st.lightBytes);
      const big = await call(padded.url, 'getBlock', [light[0]!.slot]);
      expect(big.result.transactions).toHaveLength(1000 + light.filter((t) => t.slot === light[0]!.slot).length);
    } finally {
      await padded.close();
    }
  }, 120_000);

  it('skipped slots answer -32007; the next block names the last produced slot as its parent; blockHeight counts produced slots', async () => {
    let skipped = 0;
    let checked = 0;
    for (let s = 1; s < 400; s++) {
      const r = await call(sim.url, 'getBlock', [s, { transactionDetails: 'none', rewards: false }]);
      if (r.error) {
        expect(r.error).toEqual({ code: -32007, message: `Slot ${s} was skipped, or missing due to ledger jump to recent snapshot` });
        expect(await sim.blockJson(s)).toBeNull();
        skipped++;
        continue;
      }
      expect(r.result).toEqual({ blockHeight: s - skipped, blockTime: expect.any(Number), blockhash: expect.any(String), parentSlot: expect.any(Number), previousBlockhash: expect.any(String) });
      let p = s - 1;
      while (p > 0 && (await call(sim.url, 'getBlock', [p, { transactionDetails: 'none' }])).error) p--;
      expect(r.result.parentSlot).toBe(p);
      checked++;
    }
    expect(skipped).toBeGreaterThan(5);
    expect(checked).toBeGreaterThan(300);
    expect((await call(sim.url, 'getBlockHeight')).result).toBeLessThan(HISTORY);
  });

  it('the Light transactions index with zero rejections and zero root mismatches (slots in order, padding skimmed)', async () => {
    const store = new Store({ path: tempDir('refract-sim-sparse-') });
    const indexer = new Indexer(store, loadTreeRegistry());
    try {
      let applied = 0;
      for (const slot of [...new Set(light.map((t) => t.slot))]) {
        const r = indexer.indexBlocks([decodeBlockJson((await call(sim.url, 'getBlock', [slot])).result, slot)]);
        expect(r.rejected).toEqual([]);
        expect([...r.rootMismatches]).toEqual([]);
        expect(r.batchEvents.refused).toEqual([]);
        applied += r.batchEvents.applied;
      }
      expect(applied).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  }, 120_000);
});

describe('getSignaturesForAddress', () => {
  it('pages of 100 with before give every listed Light transaction once, newest first (slot, then index descending)', async () => {
    const hidden = new Set(sim.hiddenSignatures());
    const all = await listAll(sim.url, ACP, 100);
    const expected = light.filter((t) => !hidden.has(t.signature)).reverse();
    expect(all.map((x) => x.signature)).toEqual(expected.map((t) => t.signature));
    expect(all.map((x) => x.slot)).toEqual(expected.map((t) => t.slot));
    const tip = sim.tipSlot();
    for (const x of all) {
      expect(x).toEqual({ signature: x.signature, slot: x.slot, err: null, memo: null, blockTime: expect.any(Number), confirmationStatus: x.slot <= tip - 32 ? 'finalized' : 'confirmed' });
    }
    // The same with the default limit (1000) and with limit 7.
    expect((await listAll(sim.url, ACP, 1000)).map((x) => x.signature)).toEqual(expected.map((t) => t.signature));
    expect((await call(sim.url, 'getSignaturesForAddress', [ACP])).result).toHaveLength(Math.min(1000, expected.length));
    expect((await listAll(sim.url, ACP, 7)).map((x) => x.signature)).toEqual(expected.map((t) => t.signature));
  }, 60_000);

  it('matches what getBlock shows: every transaction of a scanned range whose keys hold the program is listed (or hidden), at its block position', async () => {
    const hidden = new Set(sim.hiddenSignatures());
    const listed = new Map((await listAll(sim.url, ACP, 1000)).map((x) => [x.signature, x.slot]));
    const position = new Map(light.map((t) => [t.signature, t]));
    let found = 0;
    // Slots 0 … 2999 in batches of 100 getBlock requests.
    for (let from = 0; from < 3000; from += 100) {
      const reqs = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: from + i, method: 'getBlock', params: [from + i, { encoding: 'base64', maxSupportedTransactionVersion: 0 }] }));
      const replies = (await (await post(sim.url, reqs)).json()) as RpcReply[];
      expect(replies.map((r) => r.id)).toEqual(reqs.map((r) => r.id));
      for (const r of replies) {
        if (r.error) continue; // skipped
        const slot = r.id as number;
        (r.result.transactions as { transaction: [string, string] }[]).forEach((t, index) => {
          const sig = sigOfEntry(t);
          if (!keysOfEntry(t).includes(ACP)) {
            expect(position.has(sig)).toBe(false);
            return;
          }
          found++;
          expect(position.get(sig)).toEqual({ signature: sig, slot, index });
          if (hidden.has(sig)) expect(listed.has(sig)).toBe(false);
          else expect(listed.get(sig)).toBe(slot);
        });
      }
    }
    expect(found).toBe(light.filter((t) => t.slot < 3000).length);
    expect(found).toBeGreaterThan(50);
  }, 60_000);

  it('before and until are exclusive; an unknown before lists nothing, an unknown until walks to the start; a padding signature works as a cursor', async () => {
    const hidden = new Set(sim.hiddenSignatures());
    const order = light.filter((t) => !hidden.has(t.signature)).reverse();
    const sigs = order.map((t) => t.signature);
    const list = async (cfg: Record<string, unknown>) => {
      const r = await call(sim.url, 'getSignaturesForAddress', [ACP, cfg]);
      expect(r.error).toBeUndefined();
      return (r.result as { signature: string }[]).map((x) => x.signature);
    };
    expect(await list({ before: sigs[10], limit: 5 })).toEqual(sigs.slice(11, 16));
    expect(await list({ until: sigs[sigs.length - 20] })).toEqual(sigs.slice(0, sigs.length - 20).slice(0, 1000));
    expect(await list({ before: sigs[100], until: sigs[130] })).toEqual(sigs.slice(101, 130));
    expect(await list({ before: sigs[100], until: sigs[101] })).toEqual([]);
    const unknown = bs58.encode(Buffer.alloc(64, 9));
    expect(await list({ before: unknown })).toEqual([]);
    expect(await list({ until: unknown, before: sigs[sigs.length - 3] })).toEqual(sigs.slice(sigs.length - 2));
    // A padding transaction of a Light slot as `before`: the Light transactions before it in that block and older.
    const t = order[50]!;
    const block = (await call(sim.url, 'getBlock', [t.slot, { transactionDetails: 'signatures' }])).result.signatures as string[];
    const paddingAfter = block.findIndex((s, i) => i > t.index && !light.some((l) => l.signature === s));
    if (paddingAfter >= 0) {
      const expected = order.filter((l) => l.slot < t.slot || (l.slot === t.slot && l.index < paddingAfter)).map((l) => l.signature);
      expect(await list({ before: block[paddingAfter], limit: 20 })).toEqual(expected.slice(0, 20));
    }
  });

  it('limit above 1000 or below 1, commitment processed and a bad address are -32602; minContextSlot past the tip is -32016; finalized lists up to tip − 32', async () => {
    expect((await call(sim.url, 'getSignaturesForAddress', [ACP, { limit: 1001 }])).error).toEqual({ code: -32602, message: 'Invalid limit; max 1000' });
    expect((await call(sim.url, 'getSignaturesForAddress', [ACP, { limit: 0 }])).error).toEqual({ code: -32602, message: 'Invalid limit; max 1000' });
    expect((await call(sim.url, 'getSignaturesForAddress', [ACP, { commitment: 'processed' }])).error).toEqual({ code: -32602, message: 'Method does not support commitment below `confirmed`' });
    expect((await call(sim.url, 'getSignaturesForAddress', ['nope'])).error?.code).toBe(-32602);
    expect((await call(sim.url, 'getSignaturesForAddress', [ACP, { before: 'x' }])).error?.code).toBe(-32602);
    expect((await call(sim.url, 'getSignaturesForAddress', [ACP, { minContextSlot: HISTORY + 1000 }])).error).toEqual({
      code: -32016,
      message: 'Minimum context slot has not been reached',
      data: { contextSlot: HISTORY },
    });
    expect((await call(sim.url, 'getSignaturesForAddress', [ACP, { minContextSlot: HISTORY, limit: 1 }])).result).toHaveLength(1);
    const fin = (await call(sim.url, 'getSignaturesForAddress', [ACP, { commitment: 'finalized', limit: 1000 }])).result as { slot: number; confirmationStatus: string }[];
    expect(fin.every((x) => x.slot <= HISTORY - 32 && x.confirmationStatus === 'finalized')).toBe(true);
    // An address no transaction holds.
    expect((await call(sim.url, 'getSignaturesForAddress', [bs58.encode(Buffer.alloc(32, 5))])).result).toEqual([]);
  });

  it('the fault switch: hidden transactions are absent from the program listing only (tree listings, getTransaction and getBlock show them)', async () => {
    const hidden = sim.hiddenSignatures();
    expect(hidden.length).toBeGreaterThan(light.length / 7 / 2);
    expect(hidden.length).toBeLessThan((light.length / 7) * 2);
    const program = new Set((await listAll(sim.url, ACP, 1000)).map((x) => x.signature));
    const byTree = new Set<string>();
    for (const tree of TREES) for (const x of await listAll(sim.url, tree, 1000)) byTree.add(x.signature);
    expect(byTree.size).toBe(light.length);
    for (const sig of hidden) {
      expect(program.has(sig)).toBe(false);
      expect(byTree.has(sig)).toBe(true);
    }
    const h = light.find((t) => t.signature === hidden[0])!;
    const tx = (await call(sim.url, 'getTransaction', [h.signature])).result;
    expect(tx).toMatchObject({ slot: h.slot, transactionIndex: h.index });
    expect((await call(sim.url, 'getBlock', [h.slot, { transactionDetails: 'signatures' }])).result.signatures[h.index]).toBe(h.signature);
  }, 60_000);
});

describe('getBlock and getTransaction', () => {
  it('transactionDetails signatures lists the first signature of each transaction in block order; none lists neither; rewards: false drops rewards', async () => {
    for (const slot of [...new Set(light.map((t) => t.slot))].slice(0, 20)) {
      const full = (await call(sim.url, 'getBlock', [slot, { encoding: 'base64', maxSupportedTransactionVersion: 0, transactionDetails: 'full' }])).result;
      const sigs = (await call(sim.url, 'getBlock', [slot, { transactionDetails: 'signatures' }])).result;
      const none = (await call(sim.url, 'getBlock', [slot, { transactionDetails: 'none', rewards: false }])).result;
      expect(sigs.signatures).toEqual(full.transactions.map(sigOfEntry));
      expect(sigs.transactions).toBeUndefined();
      const { transactions, ...header } = full;
      expect(transactions).toHaveLength(20 + light.filter((t) => t.slot === slot).length);
      expect(sigs).toEqual({ ...header, signatures: sigs.signatures });
      const { rewards, ...bare } = header;
      expect(rewards).toEqual([]);
      expect(none).toEqual(bare);
      // The Light ones sit at their positions.
      for (const t of light.filter((l) => l.slot === slot)) expect(sigs.signatures[t.index]).toBe(t.signature);
    }
    expect((await call(sim.url, 'getBlock', [light[0]!.slot, { transactionDetails: 'accounts' }])).error?.code).toBe(-32602);
    expect((await call(sim.url, 'getBlock', [HISTORY + 5])).error).toEqual({ code: -32004, message: `Block not available for slot ${HISTORY + 5}` });
  });

  it('getTransaction answers {slot, blockTime, transaction, meta, version, transactionIndex}, the index its position in getBlock (Light and padding)', async () => {
    for (const t of light.slice(0, 40)) {
      const block = (await call(sim.url, 'getBlock', [t.slot])).result;
      const tx = (await call(sim.url, 'getTransaction', [t.signature, { encoding: 'base64', maxSupportedTransactionVersion: 0 }])).result;
      expect(Object.keys(tx).sort()).toEqual(['blockTime', 'meta', 'slot', 'transaction', 'transactionIndex', 'version']);
      expect(tx).toEqual({ slot: t.slot, blockTime: block.blockTime, ...block.transactions[t.index], transactionIndex: t.index });
      // A padding transaction of the same block.
      const p = (block.transactions as { transaction: [string, string] }[]).findIndex((e) => !keysOfEntry(e).includes(ACP));
      const ptx = (await call(sim.url, 'getTransaction', [sigOfEntry(block.transactions[p])])).result;
      expect(ptx).toEqual({ slot: t.slot, blockTime: block.blockTime, ...block.transactions[p], transactionIndex: p });
    }
    expect((await call(sim.url, 'getTransaction', [bs58.encode(Buffer.alloc(64, 1))])).result).toBeNull();
    expect((await call(sim.url, 'getTransaction', [light[0]!.signature, { commitment: 'processed' }])).error?.code).toBe(-32602);
  });

  it('transactionIndex: false leaves transactionIndex out (an older node)', async () => {
    const old = await startSimulator({ port: 0, profile: 'sparse', historySlots: 2000, paddingTxs: 5, slotMs: 3_600_000, seed: 3, transactionIndex: false });
    try {
      const t = old.lightTransactions()[0]!;
      const tx = (await call(old.url, 'getTransaction', [t.signature])).result;
      expect(tx.slot).toBe(t.slot);
      expect('transactionIndex' in tx).toBe(false);
    } finally {
      await old.close();
    }
  });
});

describe('JSON-RPC batches, rate limit, counters', () => {
  it('a batch is answered by an array, each request on its own; an empty batch is one -32600 error; counters count them', async () => {
    sim.resetRpcStats();
    const r = await post(sim.url, [
      { jsonrpc: '2.0', id: 'a', method: 'getSlot' },
      { jsonrpc: '2.0', id: 2, method: 'noSuchMethod' },
      { jsonrpc: '2.0', id: 3, method: 'getTransaction', params: [light[1]!.signature] },
      { id: 4 },
    ]);
    expect(r.status).toBe(200);
    const body = (await r.json()) as RpcReply[];
    expect(body).toHaveLength(4);
    expect(body[0]).toEqual({ jsonrpc: '2.0', id: 'a', result: HISTORY });
    expect(body[1]).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found: noSuchMethod' } });
    expect(body[2]!.result.transactionIndex).toBe(light[1]!.index);
    expect(body[3]).toEqual({ jsonrpc: '2.0', id: 4, error: { code: -32600, message: 'Invalid Request' } });
    expect(await (await post(sim.url, [])).json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } });
    await call(sim.url, 'getSlot');
    expect(sim.rpcStats()).toEqual({ requests: { getSlot: 2, noSuchMethod: 1, getTransaction: 1 }, totalRequests: 4, batches: 1, rateLimited: 0 });
    const stats = (await (await fetch(`${sim.url}/stats`)).json()) as Record<string, any>;
    expect(stats).toMatchObject({ profile: 'sparse', slot: HISTORY, requests: { getSlot: 2, noSuchMethod: 1, getTransaction: 1 }, batches: 1, rateLimited: 0, chain: { lightTransactions: light.length } });
  });

  it('--rps: past the token bucket HTTP 429 with Retry-After and a -32005 body; each request of a batch counts', async () => {
    const limited = await startSimulator({ port: 0, profile: 'sparse', historySlots: 1000, paddingTxs: 0, slotMs: 3_600_000, rps: 5 });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await post(limited.url, { jsonrpc: '2.0', id: i, method: 'getSlot' })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      const r = await post(limited.url, { jsonrpc: '2.0', id: 9, method: 'getSlot' });
      expect(r.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await r.json()).toEqual({ jsonrpc: '2.0', error: { code: -32005, message: 'Too many requests' }, id: null });
      await new Promise((res) => setTimeout(res, 1100)); // the bucket refills (5 tokens per second)
      const batch = Array.from({ length: 4 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getSlot' }));
      expect((await post(limited.url, batch)).status).toBe(200);
      expect((await post(limited.url, batch)).status).toBe(429); // 4 + 4 > 5
      expect(limited.rpcStats()).toMatchObject({ totalRequests: 9, batches: 1, rateLimited: 2 });
    } finally {
      await limited.close();
    }
  });
});

describe('determinism and the gRPC hooks', () => {
  it('two simulators of the same seed answer the same, whatever is asked in what order; another seed differs', async () => {
    const opts = { port: 0, profile: 'sparse' as const, historySlots: 5000, paddingTxs: 30, slotMs: 3_600_000, v2Weight: 2, seed: 21 };
    const a = await startSimulator(opts);
    const b = await startSimulator(opts);
    const c = await startSimulator({ ...opts, seed: 22 });
    try {
      const slots = [...new Set(a.lightTransactions().map((t) => t.slot))].slice(0, 15);
      const ask = async (s: Simulator, order: number[]) => {
        const out = new Map<string, string>();
        for (const slot of order) out.set(`block ${slot}`, await (await post(s.url, { jsonrpc: '2.0', id: 1, method: 'getBlock', params: [slot] })).text());
        out.set('list', JSON.stringify(await listAll(s.url, ACP, 50)));
        return out;
      };
      const ra = await ask(a, slots);
      const rb = await ask(b, [...slots].reverse());
      expect([...rb].sort()).toEqual([...ra].sort());
      expect(c.lightTransactions().map((t) => t.signature)).not.toEqual(a.lightTransactions().map((t) => t.signature));
      expect(await c.blockJson(slots[0]!)).not.toEqual(await a.blockJson(slots[0]!));
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  }, 60_000);

  it('blockJson is getBlock (base64, full); tipSlot advances with the clock; onSlot announces each new produced slot once, in order', async () => {
    const s = await startSimulator({ port: 0, profile: 'sparse', historySlots: 3000, paddingTxs: 3, slotMs: 15, seed: 5 });
    try {
      const t = s.lightTransactions()[0]!;
      expect(await s.blockJson(t.slot)).toEqual((await call(s.url, 'getBlock', [t.slot, { encoding: 'base64', transactionDetails: 'full', maxSupportedTransactionVersion: 0 }])).result);
      await expect(s.blockJson(s.tipSlot() + 1000)).rejects.toThrow('Block not available');
      const seen: number[] = [];
      const start = s.tipSlot();
      const stop = s.onSlot((slot) => seen.push(slot));
      while (seen.length < 25) await new Promise((r) => setTimeout(r, 20));
      stop();
      const n = seen.length;
      await new Promise((r) => setTimeout(r, 100));
      expect(seen).toHaveLength(n); // unsubscribed
      expect(seen[0]).toBeGreaterThan(start);
      for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1]!);
      // Every slot in between that is not announced is a skipped one.
      for (let slot = seen[0]!; slot <= seen[seen.length - 1]!; slot++) {
        const b = await s.blockJson(slot);
        expect(b === null).toBe(!seen.includes(slot));
        if (b) expect(b.parentSlot).toBe(seen[seen.indexOf(slot) - 1] ?? b.parentSlot);
      }
      expect(s.tipSlot()).toBeGreaterThanOrEqual(seen[seen.length - 1]!);
    } finally {
      await s.close();
    }
  }, 60_000);
});

describe('default profile', () => {
  it('starts at the genesis block; getSignaturesForAddress lists the generated blocks newest first; onSlot announces every slot', async () => {
    // 25 ms slots: every listing call first makes every block up to the tip, so a clock faster than the
    // generator (5 ms slots on a loaded CI machine) made each page wait on a tip that ran away from it.
    const s = await startSimulator({ port: 0, slotMs: 25, txsPerBlock: 3, keepSlots: 10_000, seed: 2, hideFromProgramListing: 5 });
    try {
      const g = (await call(s.url, 'getBlock', [0])).result;
      expect(g).toMatchObject({ blockHeight: 0, parentSlot: 0, previousBlockhash: g.blockhash, transactions: [] });
      expect((await call(s.url, 'getBlock', [1])).result).toMatchObject({ parentSlot: 0, previousBlockhash: g.blockhash });
      while (s.tipSlot() < 60) await new Promise((r) => setTimeout(r, 20));
      // The listing first makes every block up to the tip (later pages may make more: they are newer).
      const listed = await listAll(s.url, ACP, 10);
      expect(listed[0].slot).toBeGreaterThanOrEqual(60);
      const hidden = new Set(s.hiddenSignatures());
      expect(hidden.size).toBeGreaterThan(0);
      const expected = s
        .lightTransactions()
        .filter((t) => !hidden.has(t.signature) && t.slot <= listed[0].slot)
        .reverse();
      expect(listed.map((x) => x.signature)).toEqual(expected.map((t) => t.signature));
      for (const sig of hidden) expect((await call(s.url, 'getTransaction', [sig])).result).not.toBeNull();
      const tx = (await call(s.url, 'getTransaction', [listed[3].signature])).result;
      const block = (await call(s.url, 'getBlock', [tx.slot, { transactionDetails: 'signatures' }])).result;
      expect(block.signatures[tx.transactionIndex]).toBe(listed[3].signature);
      const seen: number[] = [];
      const stop = s.onSlot((slot) => seen.push(slot));
      while (seen.length < 5) await new Promise((r) => setTimeout(r, 10));
      stop();
      expect(seen.slice(0, 5)).toEqual([seen[0], seen[0]! + 1, seen[0]! + 2, seen[0]! + 3, seen[0]! + 4]);
      expect(await s.blockJson(seen[4]!)).toMatchObject({ blockHeight: seen[4], parentSlot: seen[3] });
    } finally {
      await s.close();
    }
  }, 60_000);

  it('blockJson of a pruned slot rejects with the pruned-node error; getSignaturesForAddress lists only the window', async () => {
    const s = await startSimulator({ port: 0, slotMs: 2, txsPerBlock: 2, keepSlots: 5 });
    try {
      while (s.tipSlot() < 30) await new Promise((r) => setTimeout(r, 10));
      const listed = await listAll(s.url, ACP, 1000);
      const first = (await call(s.url, 'getFirstAvailableBlock')).result as number;
      expect(first).toBeGreaterThan(20);
      expect(listed.length).toBeLessThanOrEqual(10);
      expect(listed.every((x) => x.slot >= first)).toBe(true);
      await expect(s.blockJson(0)).rejects.toThrow(`Block 0 cleaned up, does not exist on node. First available block: ${first}`);
    } finally {
      await s.close();
    }
  });
});
