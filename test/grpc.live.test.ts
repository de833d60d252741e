/**
 * liveBlocks (src/ingest/sources/live.ts): gRPC with the RPC poller as fallback, over one test chain
 * served both ways (the simulator's Yellowstone server and a JSON-RPC double). Each fault (drop, skip,
 * stall, replay window exceeded at start and on a reconnect, a replay that starts late) makes it fall back to
 * the poller and come back to gRPC; the released blocks are those of a poller-only run over the same
 * slots (Light transactions compared: gRPC carries only those), no slot twice, none missing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SubscribeUpdate } from '@triton-one/yellowstone-grpc';
import { type LiveSourceOptions, type ProbeOutcome, type ReleaseInfo, type SourceChange, liveBlocks } from '../src/ingest/sources/live.ts';
import { pollBlocks } from '../src/ingest/sources/poller.ts';
import { ACCOUNT_COMPRESSION_PROGRAM_ID } from '../src/solana/programIds.ts';
import { type GeyserFaults, type GeyserServer, startGeyserServer } from '../src/sim/geyser.ts';
import type { BlockInfo, TransactionInfo } from '../src/types.ts';
import { TestChain } from './grpc.chain.ts';

let server: GeyserServer | null = null;
let chain: TestChain | null = null;
afterEach(async () => {
  chain?.stop();
  await server?.close();
  server = null;
  chain = null;
});

const quiet = { warn: () => {}, error: () => {}, info: () => {}, debug: () => {} } as never;

/** Transactions that name the account-compression program in an instruction (what gRPC carries). */
const light = (t: TransactionInfo) => t.groups.some((g) => [g.outer, ...g.inner].some((ix) => ix.programId === ACCOUNT_COMPRESSION_PROGRAM_ID || ix.accounts.includes(ACCOUNT_COMPRESSION_PROGRAM_ID)));
const project = (b: BlockInfo) => {
  const { undecodable: _, ...rest } = b;
  return { ...rest, transactions: b.transactions.filter(light) };
};

interface Run {
  blocks: BlockInfo[];
  changes: SourceChange[];
  probes: ProbeOutcome[];
  bySource: Record<string, number>;
}

/** liveBlocks until a block at or past `untilSlot` was released on gRPC after coming back (or `ms`). */
async function live(opts: Partial<LiveSourceOptions> & { startSlot: number; lastIndexedSlot: number | null }, untilSlot: number, ms = 20_000): Promise<Run> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ms);
  const r: Run = { blocks: [], changes: [], probes: [], bySource: { grpc: 0, rpc: 0 } };
  let source = 'grpc';
  const gen = liveBlocks(chain!.rpc(), {
    grpcUrl: server!.url,
    pollIntervalMs: 20,
    retryGrpcMs: 150,
    maxRetryGrpcMs: 600,
    log: quiet,
    grpc: { silenceMs: 600, reorderMs: 300 },
    ...opts,
    signal: abort.signal,
    onSourceChange: (c) => {
      r.changes.push(c);
      source = c.source;
    },
    onProbe: (p) => r.probes.push(p),
    onRelease: (i: ReleaseInfo) => {
      r.bySource[i.source]! += i.blocks;
    },
  });
  for await (const batch of gen) {
    r.blocks.push(...batch);
    if (batch[batch.length - 1]!.slot >= untilSlot && source === 'grpc' && r.changes.length > 1) break;
  }
  clearTimeout(timer);
  return r;
}

/** A poller-only run over the same chain, from `startSlot` up to `lastSlot`. */
async function pollerOnly(startSlot: number, lastIndexedSlot: number | null, lastSlot: number): Promise<BlockInfo[]> {
  const abort = new AbortController();
  const out: BlockInfo[] = [];
  for await (const batch of pollBlocks(chain!.rpc(), { startSlot, lastIndexedSlot, pollIntervalMs: 20, signal: abort.signal, log: quiet })) {
    out.push(...batch);
    if (out[out.length - 1]!.slot >= lastSlot) break;
  }
  return out.filter((b) => b.slot <= lastSlot);
}

/** The checks every scenario makes. */
async function checkRun(r: Run, startSlot: number, lastIndexedSlot: number | null) {
  const slots = r.blocks.map((b) => b.slot);
  expect(new Set(slots).size).toBe(slots.length); // no slot twice
  const last = slots[slots.length - 1]!;
  expect(slots).toEqual(chain!.blockSlots(startSlot, last)); // none missing
  const reference = await pollerOnly(startSlot, lastIndexedSlot, last);
  expect(r.blocks.map(project)).toEqual(reference.map(project));
  // Both sources released blocks, and gRPC came back.
  expect(r.bySource.rpc).toBeGreaterThan(0);
  expect(r.bySource.grpc).toBeGreaterThan(0);
  expect(r.changes[r.changes.length - 1]).toMatchObject({ source: 'grpc', previous: 'rpc', reason: 'recovered' });
}

async function setup(o: { tip?: number; replaySlots?: number; faults?: GeyserFaults } = {}) {
  chain = new TestChain({ first: 1000, tip: o.tip ?? 1030 });
  server = await startGeyserServer({ source: chain.source(), replaySlots: o.replaySlots ?? 150, pingIntervalMs: 1000, faults: o.faults });
  chain.run(20);
  return chain;
}

describe('liveBlocks: gRPC, the poller when gRPC fails, gRPC again', () => {
  it('healthy gRPC: every block from gRPC, no fallback', async () => {
    const c = await setup();
    const abort = new AbortController();
    const changes: SourceChange[] = [];
    const blocks: BlockInfo[] = [];
    for await (const batch of liveBlocks(c.rpc(), { grpcUrl: server!.url, startSlot: 1001, lastIndexedSlot: 1000, log: quiet, signal: abort.signal, onSourceChange: (x) => changes.push(x) })) {
      blocks.push(...batch);
      if (blocks[blocks.length - 1]!.slot >= 1080) break;
    }
    expect(changes).toEqual([{ source: 'grpc', previous: null, reason: 'start', lastReleasedSlot: 1000 }]);
    expect(blocks.map((b) => b.slot)).toEqual(c.blockSlots(1001, blocks[blocks.length - 1]!.slot));
    expect(c.getBlockCalls.size).toBe(0); // the RPC node was never asked for a block
  });

  it('drop: falls back on the stream error, comes back', async () => {
    await setup({ faults: { dropAfter: 60 } });
    const r = await live({ startSlot: 1001, lastIndexedSlot: 1000 }, 1120);
    expect(r.changes.map((c) => [c.source, c.reason])).toEqual([['grpc', 'start'], ['rpc', 'stream-error'], ['grpc', 'recovered']]);
    await checkRun(r, 1001, 1000);
  });

  it('skip: a lost block message is a gap; falls back, comes back', async () => {
    await setup();
    const lost = 1041; // a slot with a block (the chain skips slot % 7 = 3), produced later
    server!.faults.skip = (u: SubscribeUpdate) => u.block?.slot === String(lost);
    const r = await live({ startSlot: 1001, lastIndexedSlot: 1000 }, 1130);
    expect(r.changes.map((x) => [x.source, x.reason])).toEqual([['grpc', 'start'], ['rpc', 'gap'], ['grpc', 'recovered']]);
    expect(r.changes[1]!.lastReleasedSlot).toBeLessThan(lost); // the poller released the lost slot
    await checkRun(r, 1001, 1000);
  });

  it('stall: silence; falls back, comes back', async () => {
    await setup({ faults: { stallAfter: 80, stallMs: 10_000 } });
    const r = await live({ startSlot: 1001, lastIndexedSlot: 1000 }, 1130);
    expect(r.changes.map((x) => [x.source, x.reason])).toEqual([['grpc', 'start'], ['rpc', 'silence'], ['grpc', 'recovered']]);
    await checkRun(r, 1001, 1000);
  });

  it('replay window exceeded at start: the poller catches up until gRPC can replay from its position', async () => {
    const c = await setup({ tip: 1400, replaySlots: 60 });
    const r = await live({ startSlot: 1001, lastIndexedSlot: 1000, concurrency: 4, maxBatchBlocks: 5 }, 1450, 30_000);
    expect(r.changes.map((x) => [x.source, x.reason])).toEqual([['grpc', 'start'], ['rpc', 'replay-unavailable'], ['grpc', 'recovered']]);
    expect(r.probes.filter((p) => p.outcome === 'failed').every((p) => p.reason === 'replay-unavailable')).toBe(true);
    expect(r.probes[r.probes.length - 1]!.outcome).toBe('switched');
    expect(c.tip()).toBeGreaterThan(1400);
    await checkRun(r, 1001, 1000);
  });

  it('replay window exceeded on the reconnect (and a replay that starts late): probes fail, the poller goes on, the next probe switches', async () => {
    await setup({ faults: { dropAfter: 40 } });
    let sent = 0;
    // Armed after the first subscription asked for its fromSlot: the next one (the probe) is refused.
    server!.faults.skip = () => {
      if (++sent === 30) server!.faults.replayUnavailable = true;
      return false;
    };
    const r = await live({ startSlot: 1001, lastIndexedSlot: 1000 }, 1130);
    expect(r.changes.map((x) => [x.source, x.reason])).toEqual([['grpc', 'start'], ['rpc', 'stream-error'], ['grpc', 'recovered']]);
    expect(r.probes.map((p) => p.reason ?? p.outcome)).toEqual(['replay-unavailable', 'switched']);
    await checkRun(r, 1001, 1000);

    chain!.stop();
    await server!.close();
    await setup({ faults: { dropAfter: 40 } });
    sent = 0;
    server!.faults.skip = () => {
      if (++sent === 30) server!.faults.replayStartsLater = 3;
      return false;
    };
    const r2 = await live({ startSlot: 1001, lastIndexedSlot: 1000 }, 1130);
    expect(r2.probes.map((p) => p.reason ?? p.outcome)).toEqual(['gap', 'switched']);
    await checkRun(r2, 1001, 1000);
  });

  it('no gRPC server at all: the poller alone, probes failing with connect', async () => {
    const c = await setup();
    const url = server!.url;
    await server!.close();
    server = null;
    const abort = new AbortController();
    const changes: SourceChange[] = [];
    const probes: ProbeOutcome[] = [];
    const blocks: BlockInfo[] = [];
    for await (const batch of liveBlocks(c.rpc(), {
      grpcUrl: url, startSlot: 1001, lastIndexedSlot: 1000, pollIntervalMs: 20, retryGrpcMs: 100, maxRetryGrpcMs: 200, log: quiet, signal: abort.signal, grpc: { connectTimeoutMs: 1000 },
      onSourceChange: (x) => changes.push(x), onProbe: (p) => probes.push(p),
    })) {
      blocks.push(...batch);
      if (blocks[blocks.length - 1]!.slot >= 1060) break;
    }
    expect(changes.map((x) => [x.source, x.reason])).toEqual([['grpc', 'start'], ['rpc', 'connect']]);
    expect(probes.length).toBeGreaterThan(0);
    expect(probes.every((p) => p.outcome === 'failed' && p.reason === 'connect')).toBe(true);
    expect(blocks.map((b) => b.slot)).toEqual(c.blockSlots(1001, blocks[blocks.length - 1]!.slot));
  });
});
