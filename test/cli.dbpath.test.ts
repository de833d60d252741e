/**
 * `--db` is a directory whatever its name: lmdb-js takes a path whose last component has a dot
 * (`mktemp -d` gives `/tmp/tmp.XXXX`) for a single-file store unless told otherwise, and
 * `refract start` failed with "Is a directory". Driven through the bin, as an operator would.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { postRpc, runRefract, startRefract, stopAll } from './helpers/refractBin.ts';
import { PHOTON_DIR, tempDir } from './helpers/photon.ts';

afterAll(stopAll);

describe('--db with a dot in its name', () => {
  it('refract index and refract start use it as a directory', async () => {
    const db = join(tempDir(), 'tmp.Ab3x.v2');
    mkdirSync(db); // as `mktemp -d` leaves it
    const indexed = await runRefract(['index', '--db', db, '--transactions', join(PHOTON_DIR, 'transactions', 'lamport_transfers')]);
    expect(indexed.stderr).not.toMatch(/Is a directory/);
    expect(indexed.status).toBe(0);
    expect(existsSync(join(db, 'data.mdb'))).toBe(true);
    const d = await startRefract(['--db', db, '--no-prover']);
    const slot = await postRpc(d, 'getIndexerSlot');
    expect(slot.status).toBe(200);
    expect(slot.body.result).toBeGreaterThan(0);
  }, 120_000);
});
