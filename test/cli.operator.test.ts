/**
 * Operator details, through the bin. `--port 0`: the log line `refract listening` carries the port the
 * OS bound (it said 0). `--db` is a directory whatever its name: lmdb-js takes a path whose last component has a dot
 * (`mktemp -d` gives `/tmp/tmp.XXXX`) for a single-file store unless told otherwise, and
 * `refract start` failed with "Is a directory". Driven through the bin, as an operator would.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureDevPtau } from './helpers/proverFixtures.ts';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
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

describe('--port 0', () => {
  it('the listening log line names the port the OS bound, and the API answers there', async () => {
    const child = spawn(process.execPath, [REFRACT_BIN, 'start', '--no-ingest', '--no-prover', '--db', tempDir(), '--host', '127.0.0.1', '--port', '0'], {
      cwd: tempDir('refract-cwd-'),
      env: { ...process.env, REFRACT_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let err = '';
        child.stderr!.setEncoding('utf8').on('data', (d: string) => {
          err += d;
          const line = err.split('\n').find((l) => l.includes('"refract listening"'));
          if (line) resolve(JSON.parse(line).port);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
      });
      expect(port).toBeGreaterThan(0);
      expect((await postRpc(port, 'getIndexerSlot')).status).toBeLessThan(500);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }, 120_000);
});

describe('stopping refract start while its background key setup runs', () => {
  it('logs the setup as stopped with the daemon (it resumes next start), not as failed', async () => {
    const d = await startRefract(['--keys', tempDir(), '--circuits', 'inclusion_26_1', '--ptau', await ensureDevPtau()], { REFRACT_LOG_LEVEL: 'info' });
    // Wait until the setup child is at work, then stop the daemon.
    const until = Date.now() + 60_000;
    while (!/"state":"running"/.test(await (await fetch(`${d.url}/health`)).text()) && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
    await d.stop();
    expect(d.stderr()).toMatch(/background setup stopped with the daemon/);
    expect(d.stderr()).not.toMatch(/background setup failed/);
  }, 120_000);
});

describe('without the native addon (REFRACT_POSEIDON=js)', () => {
  it('refract index hashes with circomlibjs on its worker thread without web-worker taking the thread over', async () => {
    // ffjavascript's web-worker, imported plainly in a worker thread, printed a raw TypeError
    // ("The \"id\" argument must be of type string") and hooked the thread's parentPort.
    const dir = join(PHOTON_DIR, 'transactions', 'batched_tree_transactions');
    const js = await runRefract(['index', '--db', tempDir(), '--no-progress', '--transactions', dir], { REFRACT_POSEIDON: 'js' });
    const native = await runRefract(['index', '--db', tempDir(), '--no-progress', '--transactions', dir]);
    expect(js.stderr).not.toMatch(/TypeError|web-worker/);
    expect(js.status, js.stderr).toBe(0);
    expect(native.status, native.stderr).toBe(0);
    const summary = (out: string) => {
      const s = JSON.parse(out) as Record<string, unknown> & { outputs: number };
      return { ...s, db: '', seconds: 0, outputsPerSecond: 0, transactionsPerSecond: 0 };
    };
    expect(summary(js.stdout)).toEqual(summary(native.stdout));
    expect(summary(js.stdout).outputs).toBeGreaterThan(0);
  }, 120_000);
});
