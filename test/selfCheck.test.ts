/**
 * The startup self-check (src/state/selfCheck.ts): clean stores (every recorded transaction folder
 * of the reference fixtures, the simulator's mixed stream) agree with their counters; a store with one
 * spent flag flipped, a queue element removed from an account, or a queue slot pointing elsewhere is
 * reported with the tree and the numbers.
 */
import { readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { prepareBatch } from '../src/ingest/prepareBatch.ts';
import { planFiles, readPlannedBlocks } from '../src/ingest/sources/files.ts';
import { decodeBlockJson } from '../src/ingest/prepareBatch.ts';
import { LightTxGenerator } from '../src/sim/generator.ts';
import { selfCheck } from '../src/state/selfCheck.ts';
import { Store } from '../src/store/store.ts';
import { PHOTON_DIR, tempDir } from './helpers/photon.ts';
import { startRefract, stopAll } from './helpers/refractBin.ts';

const TX_DIR = `${PHOTON_DIR}/transactions`;
const registry = loadTreeRegistry();

/** A store holding the simulator's mixed stream (legacy and v2, 60 blocks). */
function simStore(path = tempDir()): Store {
  const gen = new LightTxGenerator({ owners: 6, seed: 11, v2Weight: 3 });
  const store = new Store({ path });
  new Indexer(store, registry).indexBlocks(Array.from({ length: 60 }, (_, k) => decodeBlockJson(gen.block(k + 1, 6).json, k + 1)));
  return store;
}

afterAll(stopAll);

describe('startup self-check', () => {
  it('every reference fixture folder and the simulator stream: no disagreement', async () => {
    for (const folder of readdirSync(TX_DIR)) {
      const store = new Store({ path: tempDir() });
      const batch = prepareBatch([...readPlannedBlocks(planFiles([`${TX_DIR}/${folder}`], []), null)], registry);
      new Indexer(store, registry).commitBatch(batch);
      const report = store.read((r) => selfCheck(r, registry.all()));
      expect(report.disagreements, folder).toEqual([]);
      await store.close();
    }
    const store = simStore();
    const report = store.read((r) => selfCheck(r, registry.all()));
    expect(report.disagreements).toEqual([]);
    expect(report.elements).toBeGreaterThan(0);
    await store.close();
  });

  it('one spent flag flipped: the input-queue element and its unspent account are reported', async () => {
    const store = simStore();
    const v2 = registry.all().filter((t) => t.type === 'StateV2');
    const victim = store.read((r) => v2.flatMap((t) => [...r.inputQueue(t.treeBytes)].map((e) => ({ t, e })))[0]);
    expect(victim, 'the stream spent a v2 account').toBeDefined();
    store.write((w) => w.putAccountRecord({ ...w.account(victim!.e.hash)!, spent: false }));
    const report = store.read((r) => selfCheck(r, registry.all()));
    expect(report.disagreements).toEqual([{ tree: victim!.t.tree, check: 'inputQueue', detail: expect.stringContaining(`input queue element ${victim!.e.queueIndex} holds account`) }]);
    expect(report.disagreements[0]!.detail).toContain('which is not spent');
    await store.close();
  });

  it('an output-queue element at another leaf index, an address queue slot pointing elsewhere', async () => {
    const store = simStore();
    const v2 = registry.all().filter((t) => t.type === 'StateV2');
    const out = store.read((r) => v2.flatMap((t) => [...r.outputQueue(t.treeBytes)].map((e) => ({ t, e })))[0]);
    expect(out).toBeDefined();
    store.write((w) => w.putOutputQueue(out!.t.treeBytes, out!.e.leafIndex + 1_000_000, out!.e.hash));
    const report = store.read((r) => selfCheck(r, registry.all()));
    expect(report.disagreements.map((d) => [d.tree, d.check])).toContainEqual([out!.t.tree, 'outputQueue']);
    expect(report.disagreements.some((d) => d.detail.includes(`leaf index ${out!.e.leafIndex + 1_000_000}`) && d.detail.includes(`which is at leaf index ${out!.e.leafIndex}`))).toBe(true);
    await store.close();
  });
});

describe('refract start runs the self-check', () => {
  it('a store with one spent flag flipped: logged with the tree and numbers, counted in a metric, /health degraded; a clean one passes', async () => {
    const clean = tempDir();
    await simStore(clean).close();
    const ok = await startRefract(['--db', clean, '--no-prover']);
    expect((await (await fetch(`${ok.url}/health`)).json()).status).toBe('ok');
    expect(await (await fetch(`${ok.url}/metrics`)).text()).toMatch(/^refract_store_self_check_disagreements\{check="inputQueue"\} 0$/m);
    await ok.stop();
    expect(ok.stderr()).toContain('store self-check passed');

    const db = tempDir();
    const store = simStore(db);
    const v2 = registry.all().filter((t) => t.type === 'StateV2');
    const victim = store.read((r) => v2.flatMap((t) => [...r.inputQueue(t.treeBytes)].map((e) => ({ t, e })))[0])!;
    store.write((w) => w.putAccountRecord({ ...w.account(victim.e.hash)!, spent: false }));
    await store.close();
    const d = await startRefract(['--db', db, '--no-prover']);
    const health = await (await fetch(`${d.url}/health`)).json();
    expect(health.status).toBe('degraded');
    expect(health.selfCheck.disagreements).toEqual([{ tree: victim.t.tree, check: 'inputQueue', detail: expect.stringContaining('which is not spent') }]);
    expect(await (await fetch(`${d.url}/metrics`)).text()).toMatch(/^refract_store_self_check_disagreements\{check="inputQueue"\} 1$/m);
    await d.stop();
    expect(d.stderr()).toContain(`store self-check: tree ${victim.t.tree}: input queue element ${victim.e.queueIndex} holds account`);
  }, 120_000);
});
