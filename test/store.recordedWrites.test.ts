/**
 * Store `onWrite` and `applyRecordedWrites` (used by bench:ingest to time the store's own share):
 * the recorder hears every put and delete of an ingest, in order, and replaying them into an empty
 * store yields the very same sub-databases, byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { LightTxGenerator } from '../src/sim/generator.ts';
import { decodeBlockJson } from '../src/solana/decode.ts';
import { type RecordedWrite, Store } from '../src/store/store.ts';
import { tempDir } from './helpers/photon.ts';
import { dumpStore } from './helpers/store.ts';

describe('recorded store writes', () => {
  it('replaying the recorded writes of an ingest rebuilds the same store byte for byte', async () => {
    const gen = new LightTxGenerator({ owners: 20, seed: 5 });
    const blocks = Array.from({ length: 12 }, (_, i) => decodeBlockJson(gen.block(i + 1, 8).json, i + 1));
    const batches: RecordedWrite[][] = [];
    let current: RecordedWrite[] = [];
    const source = new Store({ path: tempDir(), onWrite: (db, key, value) => current.push({ db, key: key.slice(), value: value ? value.slice() : null }) });
    const indexer = new Indexer(source, loadTreeRegistry());
    for (let i = 0; i < blocks.length; i += 4) {
      current = [];
      indexer.indexBlocks(blocks.slice(i, i + 4));
      batches.push(current);
    }
    const writes = batches.flat();
    expect(writes.some((w) => w.value === null)).toBe(true); // spends delete index entries
    expect(new Set(writes.map((w) => w.db))).toContain('nodes');

    const replica = new Store({ path: tempDir() });
    for (const b of batches) replica.applyRecordedWrites(b);
    const want = dumpStore(source);
    const got = dumpStore(replica);
    // The schema version is written when a store is created, not recorded by an ingest.
    expect(Object.keys(got).sort()).toEqual(Object.keys(want).sort());
    for (const [name, rows] of Object.entries(want)) expect(got[name], name).toEqual(rows);
    expect(replica.read((r) => r.lastSlot())).toBe(12);
    await source.close();
    await replica.close();
  });

  it('an unknown sub-database is refused before anything is written', async () => {
    const store = new Store({ path: tempDir() });
    const key = new Uint8Array(8);
    expect(() => store.applyRecordedWrites([{ db: 'blocks', key, value: new Uint8Array(1) }, { db: 'nope', key, value: null }])).toThrow('unknown sub-database nope');
    expect(() => store.applyRecordedWrites([{ db: 'toString', key, value: null }])).toThrow('unknown sub-database toString');
    expect(store.read((r) => r.lastSlot())).toBeNull();
    await store.close();
  });
});
