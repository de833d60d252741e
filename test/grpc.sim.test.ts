/**
 * The simulator behind the Yellowstone server: `rpcGeyserSource` over the simulator's own JSON-RPC (what
 * `refract simulate --grpc-port` could serve) or the simulator's own GeyserSource methods, and liveBlocks against both, with a dropped stream on the way:
 * the released blocks are the poller's over the same slots (Light transactions), none twice, none missing.
 */
import { afterEach, expect, it } from 'vitest';
import { liveBlocks, type SourceChange } from '../src/ingest/sources/live.ts';
import { pollBlocks } from '../src/ingest/sources/poller.ts';
import { ACCOUNT_COMPRESSION_PROGRAM_ID } from '../src/solana/programIds.ts';
import { SolanaRpc } from '../src/solana/rpcClient.ts';
import { type GeyserServer, type GeyserSource, rpcGeyserSource, startGeyserServer } from '../src/sim/geyser.ts';
import { type Simulator, startSimulator } from '../src/sim/simulator.ts';
import type { BlockInfo, TransactionInfo } from '../src/types.ts';

const quiet = { warn: () => {}, error: () => {}, info: () => {}, debug: () => {}, child: () => quiet } as never;
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const light = (t: TransactionInfo) => t.groups.some((g) => [g.outer, ...g.inner].some((ix) => ix.programId === ACCOUNT_COMPRESSION_PROGRAM_ID || ix.accounts.includes(ACCOUNT_COMPRESSION_PROGRAM_ID)));
const project = (b: BlockInfo) => ({ ...b, transactions: b.transactions.filter(light) });

for (const via of ['the simulator itself', 'rpcGeyserSource over its JSON-RPC'] as const) it(`liveBlocks over the simulator (source: ${via}): gRPC, a drop, the poller, gRPC again; the same blocks as the poller alone`, async () => {
  // 80 ms slots: the simulator, the Yellowstone server, the poller and liveBlocks share this process, and
  // on a loaded 2-core CI machine (four test files at once) 40 ms slots outran the poller, so gRPC never
  // caught up to switch back within the time given
  const sim: Simulator = await startSimulator({ port: 0, slotMs: 80, txsPerBlock: 3, log: quiet });
  cleanup.push(() => sim.close());
  const rpc = new SolanaRpc(sim.url);
  let source: GeyserSource = sim;
  if (via !== 'the simulator itself') {
    const s = await rpcGeyserSource(rpc, { pollMs: 20 });
    cleanup.push(() => s.close());
    source = s;
  }
  const server: GeyserServer = await startGeyserServer({ source, faults: { dropAfter: 80 } });
  cleanup.push(() => server.close());

  const start = source.tipSlot();
  const abort = new AbortController();
  const changes: SourceChange[] = [];
  const blocks: BlockInfo[] = [];
  const timer = setTimeout(() => abort.abort(), 60_000);
  for await (const batch of liveBlocks(rpc, { grpcUrl: server.url, startSlot: start, lastIndexedSlot: start - 1, pollIntervalMs: 20, retryGrpcMs: 200, log: quiet, signal: abort.signal, onSourceChange: (c) => changes.push(c) })) {
    blocks.push(...batch);
    if (changes.length >= 3 && blocks[blocks.length - 1]!.slot >= start + 60) break;
  }
  clearTimeout(timer);
  expect(changes.map((c) => [c.source, c.reason])).toEqual([['grpc', 'start'], ['rpc', 'stream-error'], ['grpc', 'recovered']]);
  const last = blocks[blocks.length - 1]!.slot;
  const reference: BlockInfo[] = [];
  for await (const batch of pollBlocks(rpc, { startSlot: start, lastIndexedSlot: start - 1, pollIntervalMs: 20, log: quiet })) {
    reference.push(...batch.filter((b) => b.slot <= last));
    if (batch[batch.length - 1]!.slot >= last) break;
  }
  expect(blocks.map((b) => b.slot)).toEqual(reference.map((b) => b.slot));
  expect(blocks.map(project)).toEqual(reference.map(project));
  expect(blocks.reduce((n, b) => n + b.transactions.length, 0)).toBeGreaterThan(50);
});
