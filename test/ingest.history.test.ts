/**
 * Where a store's history begins (state/sequence.ts `HISTORY_META`, ingest/startSlot.ts): a daemon on an
 * empty store that starts at a local cluster's first block keeps a complete history, so a batched tree's
 * first numbers are held to a new tree's (batch 1, queue index 0). A tree that began before that history
 * (here a mainnet tree replayed into a fresh local cluster, met at output queue index 160680) shows its
 * first numbers as a gap; its own signature listing has nothing earlier, so they are taken as given
 * (logged, counted `accepted`), never held, and the state equals that of a daemon whose history is not
 * complete (`startSlot` given), which takes them as given without looking.
 */
import { readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../src/commands/start.ts';
import { configSchema } from '../src/config/config.ts';
import { startSimulator } from '../src/sim/simulator.ts';
import { historyStart } from '../src/state/sequence.ts';
import { Store } from '../src/store/store.ts';
import { reachSlot } from './helpers/jsonRpc.ts';
import { metricSum } from './helpers/metrics.ts';
import { tempDir, txDir } from './helpers/photon.ts';
import { dumpStore } from './helpers/store.ts';

const portOf = (d: Daemon) => (d.app.server.address() as AddressInfo).port;

describe('a store with complete history', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const f of cleanup.reverse()) await f();
  });

  it('a tree that began before it: its first numbers are looked up, found nowhere earlier, taken as given (counted accepted, never held); the state equals a partial history\'s', async () => {
    const dir = txDir('index_compress_and_close_with_tlv');
    const sim = await startSimulator({ port: 0, slotMs: 15, replay: [dir], replayOnly: true });
    cleanup.push(() => sim.close());
    const base = { port: 0, host: '127.0.0.1', logLevel: 'silent', rateLimit: false, prover: false, rpcUrl: sim.url, maxBatchBlocks: 3 } as const;
    const db = tempDir();
    const partialDb = tempDir();
    const d = await startDaemon(configSchema.parse({ ...base, db }));
    const partial = await startDaemon(configSchema.parse({ ...base, db: partialDb, startSlot: 0 }));
    cleanup.push(() => d.stop(), () => partial.stop());
    const target = readdirSync(dir).length + 5;
    for (const x of [d, partial]) await reachSlot(portOf(x), target, 60_000, 50);
    const metrics = await (await fetch(`http://127.0.0.1:${portOf(d)}/metrics`)).text();
    const gaps = (outcome: string) => metrics.split('\n').filter((l) => l.startsWith('refract_sequence_gaps_total{') && l.includes(`outcome="${outcome}"`));
    expect(gaps('accepted')).toHaveLength(1);
    expect(gaps('accepted')[0]).toMatch(/^refract_sequence_gaps_total\{tree="bmt2Ux\w+",stream="outputQueue",outcome="accepted"\} 1$/);
    expect(gaps('held')).toEqual([]);
    expect(metricSum(metrics, 'refract_sequence_held')).toBe(0);
    const partialMetrics = await (await fetch(`http://127.0.0.1:${portOf(partial)}/metrics`)).text();
    expect(partialMetrics.split('\n').filter((l) => l.startsWith('refract_sequence_gaps_total{'))).toEqual([]);
    await d.stop();
    await partial.stop();

    const [complete, begunLater] = [new Store({ path: db, readOnly: true }), new Store({ path: partialDb, readOnly: true })];
    expect(complete.read((r) => historyStart(r))).toEqual({ start: expect.any(Number), complete: true });
    expect(complete.read((r) => historyStart(r))!.start).toBeLessThanOrEqual(1);
    expect(begunLater.read((r) => historyStart(r))).toEqual({ start: 0, complete: false });
    const [a, b] = [dumpStore(complete), dumpStore(begunLater)];
    // Same state: the blocks up to the shorter run, everything else but the history entry itself.
    const n = Math.min(a.blocks!.length, b.blocks!.length);
    expect(a.blocks!.slice(0, n)).toEqual(b.blocks!.slice(0, n));
    const history = Buffer.from('history').toString('hex');
    for (const x of [a, b]) {
      delete x.blocks;
      x.meta = x.meta!.filter((l) => !l.startsWith(`${history}=`));
    }
    expect(a).toEqual(b);
    expect(a.accounts!.length).toBeGreaterThan(0);
    await complete.close();
    await begunLater.close();
  }, 90_000);
});
