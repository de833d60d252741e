/**
 * The LMDB write map (Store option `writemap`, config `lmdbWritemap` / REFRACT_LMDB_WRITEMAP): on by
 * default for writable stores, off on request and always off for read-only ones; the files are the
 * same either way (the golden, SIGKILL crash and scale-out tests all run with it on).
 */
import { describe, expect, it } from 'vitest';
import { loadConfig, parseEnvBoolean } from '../src/config/config.ts';
import { Store } from '../src/store/store.ts';
import { tempDir } from './helpers/photon.ts';

describe('LMDB write map', () => {
  it('a store written through the write map reads the same without it and read-only', async () => {
    const dir = tempDir();
    const on = new Store({ path: dir });
    const blockHash = 'b'.repeat(44);
    on.write((w) => w.insertBlock({ slot: 7, parentSlot: 6, blockTime: 1, blockHeight: 7, blockhash: blockHash, previousBlockhash: blockHash }));
    await on.close();
    const off = new Store({ path: dir, writemap: false });
    expect(off.read((r) => r.lastSlot())).toBe(7);
    await off.close();
    const ro = new Store({ path: dir, readOnly: true });
    expect(ro.read((r) => r.lastSlot())).toBe(7);
    await ro.close();
  });

  it('config: lmdbWritemap defaults to true; REFRACT_LMDB_WRITEMAP=0 turns it off', () => {
    expect(loadConfig({ env: {} }).lmdbWritemap).toBe(true);
    expect(loadConfig({ env: { REFRACT_LMDB_WRITEMAP: '0' } }).lmdbWritemap).toBe(false);
    expect(loadConfig({ env: { REFRACT_LMDB_WRITEMAP: 'Off' } }).lmdbWritemap).toBe(false);
    expect(loadConfig({ env: { REFRACT_LMDB_WRITEMAP: 'yes' } }).lmdbWritemap).toBe(true);
  });

  it('boolean environment switches: one reading for refract start and refract index; a typo is an error naming the variable', () => {
    for (const t of ['1', 'true', 'TRUE', 'yes', 'on', ' on ']) expect(parseEnvBoolean('X', t)).toBe(true);
    for (const f of ['0', 'false', 'No', 'off']) expect(parseEnvBoolean('X', f)).toBe(false);
    expect(parseEnvBoolean('X', undefined)).toBeUndefined();
    expect(parseEnvBoolean('X', '')).toBeUndefined();
    expect(() => parseEnvBoolean('REFRACT_LMDB_WRITEMAP', 'flase')).toThrow(/REFRACT_LMDB_WRITEMAP: expected .* got "flase"/);
    expect(() => loadConfig({ env: { REFRACT_INGEST_THREAD: '2' } })).toThrow(/REFRACT_INGEST_THREAD/);
  });
});
