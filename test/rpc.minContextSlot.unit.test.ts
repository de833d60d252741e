/**
 * minContextSlot (read-your-writes, issue #27) in process: where the options go in params and how
 * they are validated (src/rpc/contextSlot.ts), the waiting (src/rpc/slotWatcher.ts) on an LMDB store
 * indexed as the test goes, the -32016 error, batches, and waiters released by closed connections.
 * The daemon as a user runs it: rpc.minContextSlot.bin.test.ts.
 */
import type { AddressInfo } from 'node:net';
import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { Indexer } from '../src/ingest/indexer.ts';
import { splitSlotOptions } from '../src/rpc/contextSlot.ts';
import { DEFAULT_METHOD_CONFIG, type RpcContext } from '../src/rpc/context.ts';
import { buildServer } from '../src/rpc/http/server.ts';
import { LmdbDataSource } from '../src/rpc/lmdbDataSource.ts';
import { SlotWatcher } from '../src/rpc/slotWatcher.ts';
import { Store } from '../src/store/store.ts';
import type { BlockInfo } from '../src/types.ts';
import { tempDir } from './helpers/photon.ts';
import { registry, slot0 } from './helpers/rpcLmdb.ts';

const block = (slot: number): BlockInfo => ({ ...slot0(), slot, parentSlot: slot - 1, blockTime: slot, blockHeight: slot });

/** A listening API on a fresh store at slot 0, with a slot watcher fed by `commit`. */
async function setup(maxWaitMs = 2000) {
  const store = new Store({ path: tempDir('refract-mcs-') });
  const indexer = new Indexer(store, registry);
  indexer.indexBlocks([slot0()]);
  const answered: number[] = [];
  const slots = new SlotWatcher({ initialSlot: 0, maxWaitMs, onAdvance: () => store.root.resetReadTxn(), metrics: { waiting: () => {}, answered: (s) => void answered.push(s) } });
  const ctx: RpcContext = { data: new LmdbDataSource(store, registry), getSolanaSlot: async () => 0, config: { ...DEFAULT_METHOD_CONFIG }, slots };
  const app = buildServer(ctx, { logLevel: 'silent', rateLimit: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  let last = 0;
  return {
    store,
    slots,
    answered,
    port,
    /** Index empty blocks up to `slot` and announce it, as the ingest loop's batch event does. */
    commit(slot: number) {
      const blocks: BlockInfo[] = [];
      while (last < slot) blocks.push(block(++last));
      indexer.indexBlocks(blocks);
      slots.advance(slot);
    },
    async close() {
      slots.close();
      await app.close();
      await store.close();
    },
  };
}

/** POST `body` to `/` (or `/path`): status and parsed body. */
async function post(port: number, body: unknown, path = '/'): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}
const rpc = (method: string, params?: unknown, id: number | string = 1) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));
const HASH = '11111111111111111111111111111112v'; // 111 as a field element: no such account

const toClose: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of toClose) await c();
});

describe('splitSlotOptions: where minContextSlot and maxWaitMs go', () => {
  it('leaves params without them untouched (null: nothing copied)', () => {
    for (const p of [null, undefined, [], [HASH], { hash: HASH }, 'x', 5, [{ address: 'a', tree: 'b' }], [{}]]) expect(splitSlotOptions(p)).toBeNull();
  });
  it('takes them out of a params object, keeping every other key', () => {
    expect(splitSlotOptions({ hash: HASH, minContextSlot: 7, maxWaitMs: 10 })).toEqual({ params: { hash: HASH }, minContextSlot: 7, maxWaitMs: 10 });
    expect(splitSlotOptions({ minContextSlot: null, maxWaitMs: 3 })).toEqual({ params: {}, minContextSlot: undefined, maxWaitMs: 3 });
  });
  it('takes a trailing config object off array params', () => {
    expect(splitSlotOptions([{ minContextSlot: 0 }])).toEqual({ params: [], minContextSlot: 0, maxWaitMs: undefined });
    expect(splitSlotOptions([HASH, { minContextSlot: 9, maxWaitMs: 0 }])).toEqual({ params: [HASH], minContextSlot: 9, maxWaitMs: 0 });
  });
  it('refuses values that are not non-negative integers, naming the field', () => {
    const msg = (p: unknown) => {
      try {
        splitSlotOptions(p);
        return 'accepted';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(msg({ minContextSlot: -1 })).toBe('Invalid params: minContextSlot: expected a non-negative integer, got -1');
    expect(msg({ minContextSlot: 1.5 })).toBe('Invalid params: minContextSlot: expected a non-negative integer, got 1.5');
    expect(msg({ minContextSlot: '10' })).toBe('Invalid params: minContextSlot: expected a non-negative integer, got string "10"');
    expect(msg({ minContextSlot: 2 ** 53 })).toMatch(/^Invalid params: minContextSlot: expected a non-negative integer/);
    expect(msg({ minContextSlot: 1, maxWaitMs: true })).toBe('Invalid params: maxWaitMs: expected a non-negative integer, got boolean');
    expect(msg([HASH, { minContextSlot: [] }])).toBe('Invalid params: params[1].minContextSlot: expected a non-negative integer, got array');
    expect(msg([{ minContextSlot: 1, commitment: 'confirmed' }])).toMatch(/^Invalid params: params\[0\]\.commitment: unknown field/);
  });
});

describe('minContextSlot over HTTP on an LMDB store', () => {
  it('answers at once when the slot is indexed, unchanged without it, and keeps strict schemas strict', async () => {
    const t = await setup();
    toClose.push(t.close);
    expect((await post(t.port, rpc('getIndexerSlot', []))).body.result).toBe(0);
    expect((await post(t.port, rpc('getIndexerSlot', [{ minContextSlot: 0 }]))).body.result).toBe(0);
    const acc = await post(t.port, rpc('getCompressedAccount', { hash: HASH, minContextSlot: 0 }));
    expect(acc.body.result).toEqual({ context: { slot: 0 }, value: null });
    // getCompressedAccount's params are strict: other unknown keys are still refused.
    const strict = await post(t.port, rpc('getCompressedAccount', { hash: HASH, minContextSlot: 0, foo: 1 }));
    expect(strict.body.error).toEqual({ code: -32602, message: 'Invalid params: foo: unknown field' });
    const bad = await post(t.port, rpc('getCompressedAccount', { hash: HASH, minContextSlot: -3 }));
    expect([bad.status, bad.body.error]).toEqual([400, { code: -32602, message: 'Invalid params: minContextSlot: expected a non-negative integer, got -3' }]);
    // Positional params with the trailing config object.
    const proofs = await post(t.port, rpc('getMultipleCompressedAccountProofs', [HASH, { minContextSlot: 0 }]));
    expect(proofs.body.error.message).not.toMatch(/params/);
  });

  it('waits for the slot, answers with context.slot ≥ it and the committed data, waking waiters in slot order', async () => {
    const t = await setup();
    toClose.push(t.close);
    const order: number[] = [];
    const a = post(t.port, rpc('getIndexerSlot', [{ minContextSlot: 3 }])).then((r) => (order.push(3), r));
    const b = post(t.port, rpc('getLatestNonVotingSignatures', { minContextSlot: 2 })).then((r) => (order.push(2), r));
    const c = post(t.port, rpc('getIndexerSlot', { minContextSlot: 2 }), '/getIndexerSlot').then((r) => (order.push(2), r));
    // the three requests reach the server (on a loaded CI machine, more than a fixed 50 ms)
    for (let i = 0; i < 100 && t.slots.waiting < 3; i++) await tick(50);
    expect(t.slots.waiting).toBe(3);
    t.commit(1);
    await tick(50);
    expect(t.slots.waiting).toBe(3);
    t.commit(3);
    const [ra, rb, rc] = await Promise.all([a, b, c]);
    expect(ra.body.result).toBe(3);
    expect(rb.body.result.context.slot).toBe(3);
    expect(rc.body.result).toBe(3);
    expect(t.slots.waiting).toBe(0);
    expect(t.answered.length).toBe(3);
    expect(Math.max(...t.answered)).toBeLessThan(0.05);
  });

  it('times out with -32016 and data.contextSlot; maxWaitMs shortens the wait, 0 never waits, the bound caps it', async () => {
    const t = await setup(400);
    toClose.push(t.close);
    t.commit(4);
    let started = performance.now();
    const r = await post(t.port, rpc('getIndexerSlot', [{ minContextSlot: 100 }], 'x'));
    let took = performance.now() - started;
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ jsonrpc: '2.0', id: 'x', error: { code: -32016, message: 'Minimum context slot has not been reached', data: { contextSlot: 4 } } });
    expect(took).toBeGreaterThanOrEqual(380);
    started = performance.now();
    expect((await post(t.port, rpc('getIndexerSlot', { minContextSlot: 100, maxWaitMs: 100 }))).body.error.code).toBe(-32016);
    took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(90);
    expect(took).toBeLessThan(350);
    started = performance.now();
    expect((await post(t.port, rpc('getIndexerSlot', { minContextSlot: 5, maxWaitMs: 0 }))).body.error.data).toEqual({ contextSlot: 4 });
    expect(performance.now() - started).toBeLessThan(100);
    started = performance.now();
    expect((await post(t.port, rpc('getIndexerSlot', { minContextSlot: 100, maxWaitMs: 60_000 }))).body.error.code).toBe(-32016);
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it('in a batch: each element waits for its own slot, the others answer, errors stay per element', async () => {
    const t = await setup(1000);
    toClose.push(t.close);
    const batch = post(t.port, [
      rpc('getIndexerSlot', [{ minContextSlot: 2 }], 1),
      rpc('getIndexerSlot', [], 2),
      rpc('getIndexerSlot', [{ minContextSlot: 50, maxWaitMs: 100 }], 3),
      rpc('getIndexerSlot', { minContextSlot: 'soon' }, 4),
      rpc('getCompressedBalanceByOwner', { owner: '11111111111111111111111111111111', minContextSlot: 2 }, 5),
    ]);
    await tick(150);
    t.commit(2);
    const r = await batch;
    expect(r.status).toBe(200);
    const byId = Object.fromEntries((r.body as any[]).map((x) => [x.id, x]));
    expect(byId[1].result).toBe(2);
    expect(byId[2].result).toBe(0);
    expect(byId[3].error).toEqual({ code: -32016, message: 'Minimum context slot has not been reached', data: { contextSlot: 0 } });
    expect(byId[4].error).toEqual({ code: -32602, message: 'Invalid params: minContextSlot: expected a non-negative integer, got string "soon"' });
    expect(byId[5].result).toEqual({ context: { slot: 2 }, value: 0 });
  });

  it('releases the waiters of a connection that closes (single request and batch)', async () => {
    const t = await setup(30_000);
    toClose.push(t.close);
    const send = (body: unknown) => {
      const text = JSON.stringify(body);
      const req = request({ host: '127.0.0.1', port: t.port, method: 'POST', path: '/', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } });
      req.on('error', () => {});
      req.end(text);
      return req;
    };
    const single = send(rpc('getIndexerSlot', { minContextSlot: 1000 }));
    const batch = send(Array.from({ length: 50 }, (_, i) => rpc('getIndexerSlot', [{ minContextSlot: 1000 + i }], i)));
    const routed = (() => {
      const text = JSON.stringify(rpc('getIndexerSlot', { minContextSlot: 1000 }));
      const req = request({ host: '127.0.0.1', port: t.port, method: 'POST', path: '/getIndexerSlot', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } });
      req.on('error', () => {});
      req.end(text);
      return req;
    })();
    for (let i = 0; i < 50 && t.slots.waiting < 52; i++) await tick(20);
    expect(t.slots.waiting).toBe(52);
    single.destroy();
    batch.destroy();
    routed.destroy();
    for (let i = 0; i < 50 && t.slots.waiting > 0; i++) await tick(10);
    expect(t.slots.waiting).toBe(0);
  });
});

describe('SlotWatcher', () => {
  it('wakes in slot order, ignores old slots, times out, and close() ends every wait', async () => {
    const w = new SlotWatcher({ initialSlot: 10, maxWaitMs: 1000 });
    const seen: string[] = [];
    const at = (ms: number) => performance.now() + ms;
    w.wait(13, at(1000), undefined, (o) => seen.push(`13:${o}`));
    w.wait(12, at(1000), undefined, (o) => seen.push(`12:${o}`));
    w.wait(12, at(1000), undefined, (o) => seen.push(`12b:${o}`));
    w.wait(500, at(30), undefined, (o) => seen.push(`500:${o}`));
    w.wait(900, at(1000), undefined, (o) => seen.push(`900:${o}`));
    expect(w.waiting).toBe(5);
    w.advance(9);
    w.advance(13);
    await tick(5);
    expect(seen).toEqual(['12:reached', '12b:reached', '13:reached']);
    await tick(60);
    expect(seen.at(-1)).toBe('500:timeout');
    w.close();
    expect(seen.at(-1)).toBe('900:timeout');
    expect(w.waiting).toBe(0);
    w.wait(1, at(100), undefined, (o) => seen.push(`after:${o}`));
    expect(seen.at(-1)).toBe('after:timeout');
  });
});
