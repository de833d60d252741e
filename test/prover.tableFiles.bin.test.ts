// Where the native prover keeps its fixed-base tables between starts, driven through the binary:
// `refract start --prover-table-files <dir>` / REFRACT_PROVER_TABLE_FILES (another directory than
// the keys', made when missing), `off` (built at every start, nothing written), and the default
// (the keys directory). A copy of inclusion_26_1's keys in a temporary directory, so that what is
// written there is this test's alone. `GET /health` reports the choice as `prover.pool.tableFiles`
// and each circuit's table source.
import { copyFileSync, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { prepareTableFiles, proverTableFiles } from '../src/prover/engine/groth16Native.ts';
import { keyFiles, MANIFEST_FILE } from '../src/prover/keys/layout.ts';
import { setupCircuits } from '../src/prover/keys/keySetup.ts';
import { nativeProverAvailable } from '../src/prover/engine/groth16Native.ts';
import { DEV_PTAU, ensureDevPtau, TEST_KEYS_DIR } from './helpers/proverFixtures.ts';
import { tempDir } from './helpers/photon.ts';
import { runRefract, startRefract, stopAll, type RefractDaemon } from './helpers/refractBin.ts';
import { REQUIRE_NATIVE } from './helpers/required.ts';

const ID = 'inclusion_26_1';
let keys: string;

/** A temporary keys directory with inclusion_26_1's keys (and the manifest) but no table file. */
function copyKeys(): string {
  const dir = tempDir('refract-keys-copy-');
  const from = keyFiles(TEST_KEYS_DIR, ID);
  const to = keyFiles(dir, ID);
  for (const k of ['wasm', 'zkey', 'vkey', 'vkeySolana'] as const) copyFileSync(from[k], to[k]);
  copyFileSync(path.join(TEST_KEYS_DIR, MANIFEST_FILE), path.join(dir, MANIFEST_FILE));
  return dir;
}

beforeAll(async () => {
  await setupCircuits({ keysDir: TEST_KEYS_DIR, ptau: await ensureDevPtau(), ptauInsecure: true, circuits: [ID], log: () => {} });
  keys = copyKeys();
}, 600_000);

afterAll(() => stopAll());

type PoolHealth = { tableFiles: string | null; tables: { byCircuit: Record<string, { source: string; note: string | null }> } };
/** `prover.pool` of GET /health once the circuit's key has loaded (its tables built or read). */
async function loaded(d: RefractDaemon): Promise<PoolHealth> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const pool = ((await (await fetch(`${d.url}/health`)).json()) as { prover: { pool: PoolHealth } }).prover.pool;
    if (pool.tables.byCircuit[ID] || Date.now() > deadline) return pool;
    await new Promise((r) => setTimeout(r, 250));
  }
}
const tablesIn = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.includes('.tables')) : []);

describe('proverTableFiles', () => {
  test('the requested value, else REFRACT_PROVER_TABLE_FILES, else the keys directory; "off" → false; empty → invalid_input naming the source', () => {
    const saved = process.env.REFRACT_PROVER_TABLE_FILES;
    try {
      delete process.env.REFRACT_PROVER_TABLE_FILES;
      expect(proverTableFiles('k')).toBe(path.resolve('k'));
      expect(proverTableFiles('k', 't')).toBe(path.resolve('t'));
      expect(proverTableFiles('k', 'off')).toBe(false);
      expect(proverTableFiles('k', false)).toBe(false);
      process.env.REFRACT_PROVER_TABLE_FILES = '/var/cache/refract';
      expect(proverTableFiles('k')).toBe('/var/cache/refract');
      expect(proverTableFiles('k', 'off')).toBe(false);
      process.env.REFRACT_PROVER_TABLE_FILES = 'off';
      expect(proverTableFiles('k')).toBe(false);
      process.env.REFRACT_PROVER_TABLE_FILES = ' ';
      expect(() => proverTableFiles('k')).toThrow(/REFRACT_PROVER_TABLE_FILES must be a directory or "off"/);
      expect(() => proverTableFiles('k', '')).toThrow(/proverTableFiles must be a directory or "off"/);
      expect(() => proverTableFiles('k', '  ')).toThrow(/proverTableFiles must be a directory or "off"/);
    } finally {
      if (saved === undefined) delete process.env.REFRACT_PROVER_TABLE_FILES;
      else process.env.REFRACT_PROVER_TABLE_FILES = saved;
    }
  });
});

describe.skipIf(!nativeProverAvailable() && !REQUIRE_NATIVE)('refract start: where the table files go', () => {
  const args = () => ['--keys', keys, '--circuits', ID, '--no-build-keys', '--prover-threads', '1', '--prover-backend', 'native'];

  test('off: built, nothing written; another directory (made when missing): written there, read back at the next start (env var); default: the keys directory', async () => {
    const off = await startRefract([...args(), '--prover-table-files', 'off']);
    const p0 = await loaded(off);
    expect(p0.tableFiles).toBe('off');
    expect(p0.tables.byCircuit[ID]).toMatchObject({ source: 'built', note: null });
    await off.stop();
    expect(tablesIn(keys)).toEqual([]);

    const dir = path.join(tempDir('refract-tables-dir-'), 'not', 'yet');
    const a = await startRefract([...args(), '--prover-table-files', dir]);
    const p1 = await loaded(a);
    expect(p1.tableFiles).toBe(dir);
    expect(p1.tables.byCircuit[ID]).toMatchObject({ source: 'built', note: null });
    await a.stop();
    expect(tablesIn(dir)).toEqual([`${ID}.tables`]);
    expect(tablesIn(keys)).toEqual([]);

    const b = await startRefract(args(), { REFRACT_PROVER_TABLE_FILES: dir });
    expect((await loaded(b)).tables.byCircuit[ID]).toMatchObject({ source: 'file', note: null });
    await b.stop();

    const c = await startRefract(args());
    const p3 = await loaded(c);
    expect(p3.tableFiles).toBe(keys);
    expect(p3.tables.byCircuit[ID]).toMatchObject({ source: 'built', note: null });
    await c.stop();
    expect(tablesIn(keys)).toEqual([`${ID}.tables`]);
  }, 240_000);

  test('an empty value is a usage error naming it', async () => {
    const bad = await runRefract(['start', '--no-ingest', '--keys', keys, '--prover-table-files', '']);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/proverTableFiles/);
    const setupBad = await runRefract(['setup', '--keys', keys, '--circuits', ID, '--no-progress', '--table-files', '']);
    expect(setupBad.status).not.toBe(0);
    expect(setupBad.stderr).toMatch(/refract setup: proverTableFiles must be a directory or "off"/);
    const badEnv = await runRefract(['prover', '--redis-url', 'redis://127.0.0.1:1', '--keys', keys], { REFRACT_PROVER_TABLE_FILES: ' ' });
    expect(badEnv.status).not.toBe(0);
    expect(badEnv.stderr).toMatch(/REFRACT_PROVER_TABLE_FILES must be a directory or "off"/);
  });
});

describe.skipIf(!nativeProverAvailable() && !REQUIRE_NATIVE)('refract setup writes the table files of the circuits it was given', () => {
  const setup = (dir: string, ...extra: string[]) => runRefract(['setup', '--keys', dir, '--ptau', DEV_PTAU, '--insecure-ptau', '--no-progress', '--circuits', ID, ...extra]);

  test('missing: built and written (summary `tables`, a log line); present: left alone; off or a budget of 0: none; the next start reads the file', async () => {
    const dir = copyKeys();
    const other = path.join(tempDir('refract-setup-tables-'), 'elsewhere');
    const off = await setup(dir, '--table-files', 'off');
    expect(off.status).toBe(0);
    expect(JSON.parse(off.stdout)).toMatchObject({ built: [], cached: [ID] });
    expect(JSON.parse(off.stdout).tables).toEqual({});
    const none = await setup(dir, '--table-mb', '0');
    expect(JSON.parse(none.stdout).tables).toEqual({});
    expect(tablesIn(dir)).toEqual([]);

    const first = await setup(dir);
    expect(first.status).toBe(0);
    const t = JSON.parse(first.stdout).tables[ID];
    expect(t).toMatchObject({ source: 'built', note: null, file: keyFiles(dir, ID).tables });
    expect(t.mib).toBeGreaterThan(30);
    expect(first.stderr).toContain(`${ID}: tables ${t.mib} MiB built in`);
    expect(tablesIn(dir)).toEqual([`${ID}.tables`]);
    expect(JSON.parse((await setup(dir)).stdout).tables).toEqual({});

    const elsewhere = await setup(dir, '--table-files', other);
    expect(JSON.parse(elsewhere.stdout).tables[ID]).toMatchObject({ source: 'built', note: null, file: path.join(other, `${ID}.tables`) });
    expect(tablesIn(other)).toEqual([`${ID}.tables`]);

    const d = await startRefract(['--keys', dir, '--circuits', ID, '--no-build-keys', '--prover-threads', '1', '--prover-backend', 'native']);
    expect((await loaded(d)).tables.byCircuit[ID]).toMatchObject({ source: 'file', note: null });
    await d.stop();
  }, 240_000);
});

describe.skipIf(!nativeProverAvailable() && !REQUIRE_NATIVE)('prepareTableFiles', () => {
  test('a key just made (`replace`): its stale file and a killed writer\'s temporary file in the table directory are replaced; a directory that cannot be made is a note per circuit, not an error', async () => {
    const dir = copyKeys();
    const other = tempDir('refract-stale-tables-');
    writeFileSync(path.join(other, `${ID}.tables`), 'stale: the tables of an earlier zkey');
    writeFileSync(path.join(other, `${ID}.tables.tmp.123.0`), 'half written');
    expect(await prepareTableFiles(dir, [ID], { tableFiles: other })).toEqual({}); // present, not replaced: left to the loads' checks
    const r = await prepareTableFiles(dir, [ID], { tableFiles: other, replace: [ID] });
    expect(r[ID]).toMatchObject({ source: 'built', note: null, file: path.join(other, `${ID}.tables`) });
    expect(tablesIn(other)).toEqual([`${ID}.tables`]);
    expect(statSync(path.join(other, `${ID}.tables`)).size).toBeGreaterThan(30 * 2 ** 20);

    const blocked = path.join(other, `${ID}.tables`, 'sub'); // under a file: cannot be made
    const n = await prepareTableFiles(dir, [ID], { tableFiles: blocked });
    expect(n[ID]).toMatchObject({ source: 'none', note: expect.stringMatching(/^cannot create .*sub: ENOTDIR/) });
  }, 120_000);
});

