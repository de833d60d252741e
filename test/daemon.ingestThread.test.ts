/**
 * `refract start` indexes on its own thread (src/ingest/threads/ingestThread.ts), preparing batches on a
 * second one (src/ingest/threads/prepareThread.ts): the state it builds from the simulator equals that of
 * the thread without the prepare thread and of the main-thread loop (with and without) byte for byte, its
 * progress reaches the main thread's metrics and API, a failure of the loop reaches GET /health, and
 * `stop()` ends the thread.
 */
import { readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../src/commands/start.ts';
import { configSchema } from '../src/config/config.ts';
import { NETWORK_START_SLOTS } from '../src/ingest/startSlot.ts';
import { type Simulator, startSimulator } from '../src/sim/simulator.ts';
import { Store } from '../src/store/store.ts';
import { tempDir, txDir } from './helpers/photon.ts';
import { dumpStore } from './helpers/store.ts';

const baseConfig = { port: 0, host: '127.0.0.1', logLevel: 'silent', rateLimit: false, prover: false } as const;
const urlOf = (d: Daemon) => `http://127.0.0.1:${(d.app.server.address() as AddressInfo).port}`;
const rpc = async (d: Daemon, method: string, params: unknown = {}) =>
  (await (await fetch(urlOf(d), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })).json()) as { result?: any; error?: any };

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('ingest thread of refract start', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const f of cleanup.reverse()) await f();
  });

  it('indexes the replayed fixtures exactly as without the prepare thread and as the main-thread loop; metrics and API follow it; stop ends the threads', async () => {
    const replay = [txDir('e2e_mint_and_transfer_transactions'), txDir('lamport_transfers')];
    const sim: Simulator = await startSimulator({ port: 0, slotMs: 15, replay, replayOnly: true });
    cleanup.push(() => sim.close());
    const threadedDb = tempDir();
    const singleDb = tempDir();
    const mainDb = tempDir();
    const threaded = await startDaemon(configSchema.parse({ ...baseConfig, db: threadedDb, rpcUrl: sim.url, maxBatchBlocks: 3, prepareThread: true }));
    const single = await startDaemon(configSchema.parse({ ...baseConfig, db: singleDb, rpcUrl: sim.url, maxBatchBlocks: 3, prepareThread: false }));
    const onMain = await startDaemon(configSchema.parse({ ...baseConfig, db: mainDb, rpcUrl: sim.url, maxBatchBlocks: 3, ingestThread: false, prepareThread: false }));
    const mainPrepareDb = tempDir();
    const mainPrepare = await startDaemon(configSchema.parse({ ...baseConfig, db: mainPrepareDb, rpcUrl: sim.url, maxBatchBlocks: 3, ingestThread: false, prepareThread: true }));
    expect(threaded.ingestThread).not.toBeNull();
    expect(onMain.ingestThread).toBeNull();

    // Past the replayed slots (at most one per fixture file), both have indexed every fixture.
    const target = replay.reduce((n, dir) => n + readdirSync(dir).length, 0) + 5;
    for (const d of [threaded, single, onMain, mainPrepare]) await until('the replay to be indexed', async () => ((await rpc(d, 'getIndexerSlot')).result ?? 0) >= target);

    // The thread's batches reach the main thread's metrics.
    const metricsReply = await fetch(`${urlOf(threaded)}/metrics`, { headers: { origin: 'https://page.example' } });
    // CORS covers the API, never the metrics (a page in a visitor's browser must not read them).
    expect(metricsReply.headers.get('access-control-allow-origin')).toBeNull();
    expect((await fetch(`${urlOf(threaded)}/health`, { headers: { origin: 'https://page.example' } })).headers.get('access-control-allow-origin')).toBe('*');
    const metrics = await metricsReply.text();
    expect(Number(/^refract_indexer_slot (\d+)$/m.exec(metrics)![1])).toBeGreaterThanOrEqual(target);
    expect(Number(/^refract_ingest_outputs_total (\d+)$/m.exec(metrics)![1])).toBeGreaterThan(0);
    expect(Number(/^refract_ingest_batch_duration_seconds_count (\d+)$/m.exec(metrics)![1])).toBeGreaterThan(0);
    expect(Number(/^refract_ingest_rejected_transactions_total (\d+)$/m.exec(metrics)![1])).toBe(0);
    expect(/^refract_ingest_running (\d+)$/m.exec(metrics)![1]).toBe('1');
    // The thread's own heap (the process gauges see the main thread's only).
    expect(Number(/^refract_ingest_thread_heap_bytes (\d+)$/m.exec(metrics)![1])).toBeGreaterThan(1e6);

    await threaded.stop();
    await single.stop();
    await onMain.stop();
    await mainPrepare.stop();
    await expect(threaded.ingestThread!.done).resolves.toBeUndefined();
    expect(threaded.ingestThread!.worker.threadId).toBe(-1);

    // Same state byte for byte; the empty blocks after the replay are compared up to the shorter run.
    const read = async (path: string) => {
      const s = new Store({ path, readOnly: true });
      const out = dumpStore(s);
      await s.close();
      return out;
    };
    const [a, b, c, d] = [await read(threadedDb), await read(singleDb), await read(mainDb), await read(mainPrepareDb)];
    const n = Math.min(a.blocks!.length, b.blocks!.length, c.blocks!.length, d.blocks!.length);
    expect(n).toBeGreaterThanOrEqual(target);
    for (const x of [a, b, d]) expect(x.blocks!.slice(0, n)).toEqual(c.blocks!.slice(0, n));
    for (const x of [a, b, c, d]) delete x.blocks;
    expect(a).toEqual(c);
    expect(b).toEqual(c);
    expect(d).toEqual(c);
    expect(a.accounts!.length).toBeGreaterThan(0);
  }, 60_000);

  it('a loop that fails on the thread is reported by GET /health; the API keeps serving', async () => {
    // A mainnet node whose history starts after Light's first slot: the loop refuses to start.
    const mainnet = Object.keys(NETWORK_START_SLOTS).find((g) => NETWORK_START_SLOTS[g]!.network === 'mainnet-beta')!;
    const node = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const { id, method } = JSON.parse(body);
        const result = method === 'getGenesisHash' ? mainnet : method === 'getFirstAvailableBlock' ? 300_000_000 : 300_000_100;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result }));
      });
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise((r) => node.close(r)));
    const d = await startDaemon(configSchema.parse({ ...baseConfig, db: tempDir(), rpcUrl: `http://127.0.0.1:${(node.address() as AddressInfo).port}` }));
    cleanup.push(() => d.stop());
    await expect(d.ingestThread!.done).rejects.toThrow(/no blocks before slot 300000000/);
    let health: any;
    await until('/health to report the failure', async () => (health = await (await fetch(`${urlOf(d)}/health`)).json()).status === 'degraded');
    expect(health.ingestError).toMatch(/^ingest stopped: .*no blocks before slot 300000000, but Light Protocol state starts after slot 286193745.*--start-slot/);
    // Operators alerting on Prometheus see it too (the lag gauge no longer moves once the loop is gone).
    expect(/^refract_ingest_running (\d+)$/m.exec(await (await fetch(`${urlOf(d)}/metrics`)).text())![1]).toBe('0');
    // Nothing was indexed; the API answers as on any empty store.
    expect((await rpc(d, 'getIndexerSlot')).error).toMatchObject({ message: 'Record Not Found: No data has been indexed' });
  }, 30_000);
});

describe('stopping the ingest loop while it catches up', () => {
  it('with the prepare thread ahead: stop() returns promptly, the store ends on a whole batch, and a restart resumes after it', async () => {
    // The simulator's tip runs ahead (5 ms slots), so the loop lingers, batches and waits for credits.
    const sim = await startSimulator({ port: 0, slotMs: 5, txsPerBlock: 10 });
    try {
      const db = tempDir();
      const config = configSchema.parse({ ...baseConfig, db, rpcUrl: sim.url, prepareThread: true });
      const first = await startDaemon(config);
      await until('some batches to be committed', async () => ((await rpc(first, 'getIndexerSlot')).result ?? 0) >= 50);
      const t0 = performance.now();
      await first.stop();
      expect(performance.now() - t0).toBeLessThan(10_000);
      await expect(first.ingestThread!.done).resolves.toBeUndefined();

      // Every slot from 1 to the last committed one is a block record: no gap, nothing half-written.
      const store = new Store({ path: db, readOnly: true });
      const slots = store.read((r) => {
        const out: number[] = [];
        for (let s = 1, last = r.lastSlot()!; s <= last; s++) if (r.block(s)) out.push(s);
        return { out, last: r.lastSlot()! };
      });
      await store.close();
      expect(slots.out).toEqual(Array.from({ length: slots.last }, (_, i) => i + 1));

      const second = await startDaemon(config);
      try {
        await until('the restart to index past the stop', async () => ((await rpc(second, 'getIndexerSlot')).result ?? 0) > slots.last + 20);
      } finally {
        await second.stop();
      }
    } finally {
      await sim.close();
    }
  }, 60_000);
});
