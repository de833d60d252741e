/**
 * The gRPC block source (src/ingest/sources/grpc.ts) through the real Yellowstone client against the
 * simulator's server (src/sim/geyser.ts) over a test chain: every block in slot order with its Light
 * transactions (the same as decodeBlockJson of those transactions), blocks without Light transactions and
 * skipped slots, both subscription modes, resuming with fromSlot, and each fault ending the source with
 * its reason.
 */
import { PassThrough, type Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { SubscribeRequest, SubscribeUpdate } from '@triton-one/yellowstone-grpc';
import * as yellowstone from '@triton-one/yellowstone-grpc';
import { type GrpcSourceOptions, grpcBlocks } from '../src/ingest/sources/grpc.ts';
import { GrpcSourceFault } from '../src/ingest/sources/grpcFault.ts';
import { decodeBlockJson } from '../src/solana/decode.ts';
import { type GeyserServer, startGeyserServer, updatesForBlock } from '../src/sim/geyser.ts';
import { ACCOUNT_COMPRESSION_PROGRAM_ID } from '../src/solana/programIds.ts';
import { geyserBlockFromJson } from '../src/sim/yellowstoneFromJson.ts';
import type { BlockInfo } from '../src/types.ts';
import { type RawTx, TestChain, namesProgram } from './grpc.chain.ts';

let server: GeyserServer | null = null;
let chain: TestChain | null = null;
afterEach(async () => {
  chain?.stop();
  await server?.close();
  server = null;
  chain = null;
});

/** The block of `slot` as the gRPC source should give it: getBlock decoded, Light transactions only. */
function expected(c: TestChain, slot: number): BlockInfo {
  const json = c.block(slot)!;
  return decodeBlockJson({ ...json, transactions: (json.transactions as RawTx[]).filter((t) => namesProgram(t)) }, slot);
}

/** Runs the source until a block at or past `untilSlot` (or a fault, or `ms`). */
async function run(opts: Omit<GrpcSourceOptions, 'url'>, untilSlot: number, ms = 8000): Promise<{ blocks: BlockInfo[]; fault: GrpcSourceFault | null }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ms);
  const blocks: BlockInfo[] = [];
  let fault: GrpcSourceFault | null = null;
  try {
    for await (const batch of grpcBlocks({ silenceMs: 1500, reorderMs: 400, ...opts, url: server!.url, signal: abort.signal })) {
      blocks.push(...batch);
      if (blocks[blocks.length - 1]!.slot >= untilSlot) break;
    }
  } catch (err) {
    if (!(err instanceof GrpcSourceFault)) throw err;
    fault = err;
  } finally {
    clearTimeout(timer);
  }
  return { blocks, fault };
}

async function setup(o: { tip?: number; replaySlots?: number; xToken?: string } = {}) {
  chain = new TestChain({ first: 1000, tip: o.tip ?? 1030 });
  server = await startGeyserServer({ source: chain.source(), replaySlots: o.replaySlots ?? 150, pingIntervalMs: 200, xToken: o.xToken });
  return chain;
}

describe('gRPC source against the simulator\'s Yellowstone server', () => {
  for (const mode of ['blocks', 'transactions'] as const) {
    it(`mode ${mode}: every block in slot order, Light transactions only, empty blocks and skipped slots as the chain has them, replayed then live`, async () => {
      const c = await setup();
      c.run(15);
      const { blocks, fault } = await run({ mode, startSlot: 1001, lastIndexedSlot: 1000 }, 1070);
      expect(fault).toBeNull();
      const last = blocks[blocks.length - 1]!.slot;
      expect(blocks.map((b) => b.slot)).toEqual(c.blockSlots(1001, last));
      for (const b of blocks) expect(b, `slot ${b.slot}`).toEqual(expected(c, b.slot));
      expect(blocks.some((b) => b.transactions.length === 0)).toBe(true); // slots without Light transactions advance too
      expect(blocks.some((b) => b.transactions.some((t) => t.error !== null))).toBe(true); // failed ones included
      expect(blocks.some((b) => b.slot !== b.parentSlot + 1)).toBe(true); // over skipped slots
    });
  }

  it('programs: [] subscribes every transaction (Photon\'s way): blocks equal the whole getBlock decode, skimmed transactions included', async () => {
    const c = await setup();
    const { blocks } = await run({ programs: [], startSlot: 1001, lastIndexedSlot: 1000 }, 1030);
    expect(blocks.map((b) => b.slot)).toEqual(c.blockSlots(1001, 1030));
    for (const b of blocks) expect(b, `slot ${b.slot}`).toEqual(decodeBlockJson(c.block(b.slot), b.slot));
  });

  it('resumes with fromSlot after a reconnect: no slot twice, none missing', async () => {
    const c = await setup();
    c.run(15);
    const first = await run({ startSlot: 1001, lastIndexedSlot: 1000 }, 1020);
    const last = first.blocks[first.blocks.length - 1]!;
    const second = await run({ startSlot: last.slot + 1, lastIndexedSlot: last.slot, lastIndexedBlockhash: last.blockhash }, 1060);
    expect(second.fault).toBeNull();
    const all = [...first.blocks, ...second.blocks];
    expect(all.map((b) => b.slot)).toEqual(c.blockSlots(1001, all[all.length - 1]!.slot));
    expect(server!.stats().subscriptions).toBe(2);
  });

  it('answers server pings and is not fooled by them: silence is data silence', async () => {
    const c = await setup();
    // No new slots: the server only pings (every 200 ms); the source gives up after silenceMs.
    const { blocks, fault } = await run({ startSlot: 1001, lastIndexedSlot: 1000, silenceMs: 700 }, 2000);
    expect(blocks.map((b) => b.slot)).toEqual(c.blockSlots(1001, 1030));
    expect(fault?.reason).toBe('silence');
    expect(server!.stats().pings).toBeGreaterThan(1);
    expect(server!.stats().pongs).toBeGreaterThan(1); // each server ping answered with a ping request
  });

  it('the Yellowstone client\'s unary calls work against the server (GetSlot, Ping, SubscribeReplayInfo, GetVersion)', async () => {
    await setup({ tip: 1200, replaySlots: 100, xToken: 'secret' });
    const client = new ((yellowstone as any).default.default ?? (yellowstone as any).default)(server!.url, 'secret', undefined);
    await client.connect();
    expect((await client.getSlot()).slot).toBe('1200');
    expect((await client.ping(3)).count).toBe(3);
    expect((await client.subscribeReplayInfo()).firstAvailable).toBe('1101');
    expect(JSON.parse((await client.getVersion()).version).version.package).toBe('refract-sim-geyser');
    const denied = new ((yellowstone as any).default.default ?? (yellowstone as any).default)(server!.url, 'wrong', undefined);
    await denied.connect();
    await expect(denied.getSlot()).rejects.toThrow();
  });

  describe('faults end the source with their reason, after the blocks taken before them', () => {
    it('drop: the stream fails', async () => {
      const c = await setup();
      c.run(15);
      server!.faults.dropAfter = 40;
      const { blocks, fault } = await run({ startSlot: 1001, lastIndexedSlot: 1000 }, 5000);
      expect(fault?.reason).toBe('stream-error');
      expect(blocks.length).toBeGreaterThan(0);
      expect(blocks.map((b) => b.slot)).toEqual(c.blockSlots(1001, blocks[blocks.length - 1]!.slot));
      expect(server!.stats().faults).toEqual(['drop']);
    });

    for (const mode of ['blocks', 'transactions'] as const) {
      it(`skip (mode ${mode}): a lost block message is a gap`, async () => {
        const c = await setup();
        c.run(15);
        const lost = c.blockSlots(1010, 1020)[0]!;
        server!.faults.skip = (u: SubscribeUpdate) => u.block?.slot === String(lost) || u.blockMeta?.slot === String(lost);
        const { blocks, fault } = await run({ mode, startSlot: 1001, lastIndexedSlot: 1000 }, 5000);
        expect(fault?.reason).toBe('gap');
        expect(blocks[blocks.length - 1]!.slot).toBeLessThan(lost);
        expect(blocks.map((b) => b.slot)).toEqual(c.blockSlots(1001, blocks[blocks.length - 1]!.slot));
      });
    }

    it('mode transactions cannot see a lost transaction message (the meta counts every transaction of the block): why `blocks` is the default', async () => {
      const c = await setup();
      const slot = c.blockSlots(1005, 1030).find((s) => expected(c, s).transactions.length > 0)!;
      server!.faults.skip = (u) => u.transaction?.slot === String(slot);
      const { blocks } = await run({ mode: 'transactions', startSlot: 1001, lastIndexedSlot: 1000 }, 1030);
      const b = blocks.find((x) => x.slot === slot)!;
      expect(b.transactions.length).toBe(expected(c, slot).transactions.length - 1);
      // The same loss in mode blocks is a lost block message: a gap (test above).
    });

    it('stall: silence past silenceMs', async () => {
      const c = await setup();
      c.run(15);
      server!.faults.stallAfter = 30;
      server!.faults.stallMs = 5000;
      const started = performance.now();
      const { blocks, fault } = await run({ startSlot: 1001, lastIndexedSlot: 1000, silenceMs: 600 }, 5000);
      expect(fault?.reason).toBe('silence');
      expect(performance.now() - started).toBeLessThan(4000);
      expect(blocks.map((b) => b.slot)).toEqual(c.blockSlots(1001, blocks[blocks.length - 1]!.slot));
    });

    it('replay window exceeded: refused before subscribing (SubscribeReplayInfo), and by the server\'s own error', async () => {
      await setup({ tip: 1400, replaySlots: 150 });
      const a = await run({ startSlot: 1100, lastIndexedSlot: 1099 }, 5000);
      expect(a.fault?.reason).toBe('replay-unavailable');
      expect(a.fault?.message).toMatch(/first available 1251/);
      expect(server!.stats().subscriptions).toBe(0);
      const b = await run({ startSlot: 1100, lastIndexedSlot: 1099, checkReplayWindow: false }, 5000);
      expect(b.fault?.reason).toBe('replay-unavailable');
      expect(b.fault?.message).toMatch(/broadcast from 1100 is not available, last available: 1251/);
      expect(a.blocks).toEqual([]);
      expect(b.blocks).toEqual([]);
    });

    it('a replay that starts later than asked is a gap', async () => {
      const c = await setup();
      c.run(15);
      server!.faults.replayStartsLater = 4;
      const { blocks, fault } = await run({ startSlot: 1001, lastIndexedSlot: 1000 }, 5000);
      expect(fault?.reason).toBe('gap');
      expect(blocks).toEqual([]);
    });

    it('a fork: the first block does not extend the anchor', async () => {
      const c = await setup();
      c.run(15);
      const { blocks, fault } = await run({ startSlot: 1011, lastIndexedSlot: 1010, lastIndexedBlockhash: '11111111111111111111111111111111' }, 5000);
      expect(fault?.reason).toBe(c.block(1010) ? 'fork' : 'gap');
      expect(blocks).toEqual([]);
    });

    it('no server: connect', async () => {
      chain = new TestChain({ first: 1000, tip: 1010 });
      server = await startGeyserServer({ source: chain.source() });
      const url = server.url;
      await server.close();
      server = null;
      const abort = new AbortController();
      let fault: unknown = null;
      try {
        for await (const _ of grpcBlocks({ url, startSlot: 1001, lastIndexedSlot: 1000, connectTimeoutMs: 3000, signal: abort.signal })) void _;
      } catch (err) {
        fault = err;
      }
      expect((fault as GrpcSourceFault).reason).toBe('connect');
    });
  });
});

describe('gRPC source over a scripted stream (the transport option)', () => {
  /** A transport whose stream sends `updates` (then stays open), recording what the source writes. */
  function scripted(updates: SubscribeUpdate[], written: unknown[] = []) {
    return async () => ({
      firstAvailableSlot: async () => null,
      subscribe: async (req: unknown) => {
        written.push(req);
        const s = new PassThrough({ objectMode: true });
        s.write = ((chunk: unknown) => (written.push(chunk), true)) as typeof s.write;
        setTimeout(() => {
          for (const u of updates) s.push(u);
        }, 10);
        return s as unknown as Duplex;
      },
    });
  }
  const c = new TestChain({ first: 1000, tip: 1040 });
  const slots = c.blockSlots(1001, 1040);
  const blockUpdate = (slot: number): SubscribeUpdate => updatesForBlock(geyserBlockFromJson(slot, c.block(slot)!), SubscribeRequest.fromPartial({ blocks: { b: { accountInclude: [ACCOUNT_COMPRESSION_PROGRAM_ID] } } }))[0]!;
  const txUpdates = (slot: number) => updatesForBlock(geyserBlockFromJson(slot, c.block(slot)!), SubscribeRequest.fromPartial({ transactions: { t: { accountInclude: [ACCOUNT_COMPRESSION_PROGRAM_ID] } }, blocksMeta: { m: {} } }));
  const go = async (updates: SubscribeUpdate[], o: Partial<GrpcSourceOptions> = {}, untilSlot = slots[slots.length - 1]!) => {
    const written: unknown[] = [];
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 3000);
    const blocks: BlockInfo[] = [];
    let fault: GrpcSourceFault | null = null;
    try {
      for await (const batch of grpcBlocks({ url: 'scripted', startSlot: 1001, lastIndexedSlot: 1000, silenceMs: 1500, reorderMs: 300, transport: scripted(updates, written), signal: abort.signal, ...o })) {
        blocks.push(...batch);
        if (blocks[blocks.length - 1]!.slot >= untilSlot) break;
      }
    } catch (err) {
      fault = err as GrpcSourceFault;
    }
    clearTimeout(timer);
    return { blocks, fault, written };
  };

  it('blocks out of order within reorderMs, and copies (replay overlapping live), come out once, in order', async () => {
    const ups = slots.map(blockUpdate);
    [ups[3], ups[4]] = [ups[4]!, ups[3]!];
    ups.splice(10, 0, ups[2]!, ups[7]!);
    const { blocks, fault } = await go(ups);
    expect(fault).toBeNull();
    expect(blocks.map((b) => b.slot)).toEqual(slots);
  });

  it('mode transactions: a transaction after its slot\'s meta is a fault; a copy of one is not', async () => {
    const s = slots.find((x) => txUpdates(x).filter((u) => u.transaction).length >= 2)!;
    const before = slots.filter((x) => x < s).flatMap(txUpdates);
    const mine = txUpdates(s);
    const tx = mine.filter((u) => u.transaction);
    const meta = mine.find((u) => u.blockMeta)!;
    // A copy of a transaction already in the block: ignored.
    const copy = await go([...before, ...tx, meta, tx[0]!], { mode: 'transactions' }, s);
    expect(copy.fault).toBeNull();
    expect(copy.blocks[copy.blocks.length - 1]!.slot).toBe(s);
    // The block's meta before one of its transactions: the block would lack it.
    const late = await go([...before, ...tx.slice(1), meta, tx[0]!, ...txUpdates(slots[slots.indexOf(s) + 1]!)], { mode: 'transactions' });
    expect(late.fault?.reason).toBe('late-transaction');
  });

  it('lagging: the tip runs ahead of the blocks for longer than lagGraceMs', async () => {
    const tip = (n: number): SubscribeUpdate => SubscribeUpdate.fromPartial({ filters: ['s'], slot: { slot: String(n), status: 0 } });
    const { fault } = await go([blockUpdate(slots[0]!), ...Array.from({ length: 30 }, (_, i) => tip(2000 + i))], { maxLagSlots: 50, lagGraceMs: 200 });
    expect(fault?.reason).toBe('lagging');
  });

  it('decode: a transaction error variant it does not know', async () => {
    const u = blockUpdate(slots.find((x) => blockUpdate(x).block!.transactions.length > 0)!);
    u.block!.transactions[0]!.meta!.err = { err: Uint8Array.from([200, 0, 0, 0]) };
    const { fault } = await go([u]);
    expect(fault?.reason).toBe('decode');
  });

  it('writes the subscription it needs, and answers pings', async () => {
    const { written } = await go([SubscribeUpdate.fromPartial({ filters: [], ping: {} }), blockUpdate(slots[0]!)], {}, slots[0]!);
    const req = written[0] as SubscribeRequest;
    expect(req.blocks.refract).toMatchObject({ accountInclude: [ACCOUNT_COMPRESSION_PROGRAM_ID], includeTransactions: true, includeAccounts: false, includeEntries: false });
    expect(req.slots.refract).toMatchObject({ filterByCommitment: false });
    expect(req.commitment).toBe(1); // confirmed
    expect(req.fromSlot).toBe('1001');
    expect(written.slice(1).some((w) => (w as SubscribeRequest).ping)).toBe(true);
  });
});
