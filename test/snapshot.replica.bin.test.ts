/**
 * Snapshots that seed replicas which index on (issue #31), through the binary.
 *
 * 1. `test/fixtures/replica-abort.snapshot` (made by an earlier release's `refract snapshot create`
 *    from `refract simulate` with its defaults, seed 1, at slot 207): its data file aborts LMDB on
 *    the first write (`Assertion 'key.mv_size > 0' failed in mdb_page_alloc()`). `refract start
 *    --snapshot` rebuilds it into a fresh store, checks that store takes writes, and the replica
 *    then indexes on from slot 208. The simulator of that release generated its batched-tree traffic
 *    on HLKs5/EzKE8 (started here in-process with those trees), but this release's generator no
 *    longer makes the same chain (its smt1 changelog differs from slot 208 on, which the sequence
 *    check rightly holds at): the replica runs with --no-sequence-check, so what is checked is that
 *    it commits block after block of Light transactions on top of the restored store (the earlier
 *    release aborted on the first such commit).
 * 2. Snapshots taken from a daemon's `GET /snapshot` at many moments while it follows a 20 ms-slot
 *    simulator (idle between blocks and mid-commit, from a few hundred entries to the largest store
 *    of the run) each restore (`restoreSnapshot`, with its write probe) and index on: the next blocks
 *    of the chain are indexed into the restored store, in this process, through the ordinary commit
 *    path. REFRACT_TEST_SNAPSHOTS sets how many (default 6; CI took 12 until its 2-core machine took 33
 *    minutes; the run used 50).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { decodeBlockJson } from '../src/solana/decode.ts';
import { SolanaRpc } from '../src/solana/rpcClient.ts';
import { startSimulator } from '../src/sim/simulator.ts';
import { restoreSnapshot } from '../src/store/snapshot.ts';
import { Store } from '../src/store/store.ts';
import { REPO_ROOT, tempDir } from './helpers/photon.ts';
import { killSpawned, spawnRefract, type RefractProcess } from './helpers/refractBin.ts';
import { sleep } from './helpers/jsonRpc.ts';

const REPRO = join(REPO_ROOT, 'test/fixtures/replica-abort.snapshot');
const KEY = 'snapshot-test-key';
const SNAPSHOTS = Number(process.env.REFRACT_TEST_SNAPSHOTS ?? 6);

const onExit: (() => Promise<void>)[] = [];
afterAll(async () => {
  await killSpawned();
  for (const f of onExit) await f();
});

/** The first JSON log line of `p` whose msg matches `re` (waits up to `ms`). */
async function logLine(p: RefractProcess, re: RegExp, ms = 60_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + ms;
  for (;;) {
    for (const l of p.stderr().split('\n')) {
      if (!l.startsWith('{')) continue;
      const j = JSON.parse(l) as Record<string, unknown>;
      if (re.test(String(j.msg))) return j;
    }
    if (p.child.exitCode !== null || p.child.signalCode !== null) throw new Error(`exited (${p.child.exitCode ?? p.child.signalCode}) before a log line ${re}: ${p.stderr().slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`no log line ${re} within ${ms} ms: ${p.stderr().slice(-3000)}`);
    await sleep(50);
  }
}

async function rpcResult(url: string, method: string, params?: unknown): Promise<any> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const j = (await r.json()) as { result?: unknown; error?: unknown };
  if (j.error) throw new Error(`${method}: ${JSON.stringify(j.error)}`);
  return j.result;
}

async function simulator(args: string[]): Promise<{ url: string; p: RefractProcess }> {
  const p = spawnRefract(['simulate', '--port', '0', ...args]);
  return { url: String((await logLine(p, /Solana RPC simulator listening/)).url), p };
}

describe('snapshots restore into stores that take writes', () => {
  it('the replica-abort snapshot of an earlier release restores (rebuilt) and its replica indexes on', async () => {
    const sim = await startSimulator({
      port: 0,
      slotMs: 20,
      generatorBounds: { v2Tree: 'HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu', v2Queue: '6L7SzhYB3anwEQ9cphpJ1U7Scwj57bx2xueReg7R9cKU', v2RootHistoryCapacity: 2400, v2AddressTree: 'EzKE84aVTkCUhDHLELqyJaq1Y7UVVmqxXqZjVHwHY3rK' },
    });
    onExit.push(() => sim.close());
    const db = join(tempDir('refract-replica-'), 'db');
    const replica = spawnRefract(['start', '--db', db, '--rpc-url', sim.url, '--snapshot', REPRO, '--host', '127.0.0.1', '--port', '0', '--no-prover', '--no-simulator', '--backfill-threshold-slots', '0', '--no-sequence-check']);
    const restored = await logLine(replica, /store restored from the snapshot/, 120_000);
    expect(restored.slot).toBe(207);
    const url = `http://127.0.0.1:${(await logLine(replica, /refract listening/)).port}`;
    let slot = 0;
    for (let i = 0; i < 600 && slot < 400; i++) {
      await sleep(200);
      if (replica.child.exitCode !== null || replica.child.signalCode !== null) break;
      slot = await rpcResult(url, 'getIndexerSlot').catch(() => slot);
    }
    expect(replica.child.signalCode, replica.stderr().slice(-2000)).toBeNull();
    expect(replica.child.exitCode, replica.stderr().slice(-2000)).toBeNull();
    expect(slot, replica.stderr().slice(-3000)).toBeGreaterThanOrEqual(400);
    // Still writing: later blocks keep coming in (the 20 ms simulator runs ahead of it; no health check).
    await sleep(1000);
    expect(await rpcResult(url, 'getIndexerSlot')).toBeGreaterThan(slot);
    await replica.stop();
    expect(replica.child.exitCode).toBe(0);
  }, 300_000);

  it(`snapshots taken at ${SNAPSHOTS} moments of a running daemon each restore and index on`, async () => {
    const sim = await simulator(['--slot-ms', '20', '--seed', '3']);
    const peerDb = join(tempDir('refract-peer-'), 'db');
    const peer = spawnRefract(['start', '--db', peerDb, '--rpc-url', sim.url, '--host', '127.0.0.1', '--port', '0', '--no-prover', '--no-simulator', '--backfill-threshold-slots', '0'], { REFRACT_API_KEYS: KEY, REFRACT_RATE_LIMIT: 'off' });
    const peerUrl = `http://127.0.0.1:${(await logLine(peer, /refract listening/)).port}`;
    for (let i = 0; (await rpcResult(peerUrl, 'getIndexerSlot').catch(() => 0)) < 5; i++) {
      if (i > 600) throw new Error(`the peer does not index: ${peer.stderr().slice(-2000)}`);
      await sleep(100);
    }
    const rpc = new SolanaRpc(sim.url);
    const trees = loadTreeRegistry();
    const sizes: number[] = [];
    for (let i = 0; i < SNAPSHOTS; i++) {
      // Spread the moments: no pause, or a random part of a slot, so some copies start mid-commit.
      await sleep(Math.floor(Math.random() * 300));
      const file = join(tempDir('refract-snapfile-'), 'peer.snapshot');
      const res = await fetch(`${peerUrl}/snapshot`, { headers: { 'x-api-key': KEY } });
      expect(res.status).toBe(200);
      await pipeline(Readable.fromWeb(res.body as never), createWriteStream(file));
      const target = join(tempDir('refract-restored-'), 'db');
      const m = await restoreSnapshot({ source: createReadStream(file), target });
      sizes.push(m.payload.dataBytes);
      const from = m.lastBlock!.slot;
      // Index on: the next 20 blocks of the chain, committed into the restored store (a broken free-page
      // list aborts this process here).
      const store = new Store({ path: target });
      try {
        const indexer = new Indexer(store, trees);
        for (let s = from + 1; s <= from + 20; s += 5) {
          const blocks = [];
          for (let t = s; t < s + 5; t++) {
            while ((await rpc.getSlot()) < t) await sleep(20);
            blocks.push(decodeBlockJson(await rpc.getBlock(t), t));
          }
          indexer.indexBlocks(blocks);
        }
        expect(store.read((r) => r.lastSlot())).toBe(from + 20);
      } finally {
        await store.close();
      }
    }
    // Small and larger stores: the run's stores grew while it took them.
    expect(sizes[sizes.length - 1]!).toBeGreaterThan(sizes[0]!);
    await peer.stop();
    await sim.p.stop();
  }, Math.max(600_000, SNAPSHOTS * 40_000));
});
