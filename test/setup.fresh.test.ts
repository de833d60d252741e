// The README's first command path on a fresh machine: a checkout with no `../shared` beside it (so
// no development ptau) and no internet. `refract start` (= `npm start`) runs `refract setup` in the
// background, which must try the public ceremony download, fall back quickly, and generate the
// INSECURE development ptau — that used to die within 5 s ("logger.log is not a function";
// /health: setup failed). Then the key of the smallest circuit builds in such a checkout.
//
// The checkout is a copy of this worktree's tracked files (current contents) in a temp dir, with
// node_modules symlinked and the prebuilt native addon copied, driven through bin/refract.mjs.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { KeysManifest } from '../src/prover/keys/layout.ts';
import { DEV_PTAU, ensureDevPtau } from './helpers/devPtau.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

let root: string;
let checkout: string;
const children: ChildProcess[] = [];

/** Copies the tracked files of this worktree to `dest`, links node_modules, copies the native addon build. */
async function freshCheckout(dest: string): Promise<void> {
  const files = spawnSync('git', ['-C', REPO, 'ls-files', '-z'], { encoding: 'utf8' }).stdout.split('\0').filter(Boolean);
  expect(files).toContain('bin/refract.mjs');
  for (const f of files) {
    if (!existsSync(path.join(REPO, f))) continue; // deleted in the worktree
    await mkdir(path.dirname(path.join(dest, f)), { recursive: true });
    await copyFile(path.join(REPO, f), path.join(dest, f));
  }
  await symlink(realpathSync(path.join(REPO, 'node_modules')), path.join(dest, 'node_modules'));
  const addon = path.join(REPO, 'native/kernels/build');
  if (existsSync(addon)) await cp(addon, path.join(dest, 'native/kernels/build'), { recursive: true });
}

/** A URL whose port nothing listens on: the download fails at once, as on a machine without internet. */
async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return `http://127.0.0.1:${port}/ptau/`;
}

/** `refract <command> …` in the checkout; collects stderr/stdout. */
function refract(command: string, args: string[], env: NodeJS.ProcessEnv) {
  const e = { ...process.env, ...env };
  delete e.NODE_OPTIONS;
  delete e.REFRACT_DEV_PTAU;
  const child = spawn(process.execPath, ['bin/refract.mjs', command, ...args], { cwd: checkout, env: e, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const out = { stdout: '', stderr: '', code: undefined as number | null | undefined };
  child.stdout!.on('data', (d) => (out.stdout += d));
  child.stderr!.on('data', (d) => (out.stderr += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r((out.code = code))));
  return { child, out, exited };
}

async function until(what: string, ok: () => boolean, ms: number, failed: () => Promise<string | undefined> | string | undefined): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    const f = await failed();
    if (f !== undefined) throw new Error(`${what}: ${f}`);
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'refract-fresh-'));
  checkout = path.join(root, 'repo');
  await freshCheckout(checkout);
  expect(existsSync(path.join(checkout, '../shared'))).toBe(false);
}, 60_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await rm(root, { recursive: true, force: true });
});

describe('a checkout with no ../shared and no internet', () => {
  test('refract start builds keys in the background: the download falls back at once, the INSECURE dev ptau is generated past the old crash', async () => {
    const keys = path.join(root, 'keys-dev');
    const url = await closedPortUrl();
    const port = Number(new URL(await closedPortUrl()).port);
    const args = ['--no-ingest', '--no-simulator', '--db', path.join(root, 'data'), '--host', '127.0.0.1', '--port', String(port), '--keys', keys, '--circuits', 'inclusion_26_1', '--prover-threads', '1'];
    const { child, out, exited } = refract('start', args, { REFRACT_PTAU_URL: url });
    const ptauDir = path.join(keys, 'ptau');
    // newAccumulator writes `<file>.stage1-accumulator.tmp-<pid>` (and, for 2^16, calls logger.log at point
    // 100,000 — the old crash, 5 s in), renamed to `<file>.stage1-accumulator` when done; contribute then
    // starts. The finished accumulator's appearance means the contribution runs.
    const contributing = () => existsSync(path.join(ptauDir, 'dev_pot16.ptau.stage1-accumulator'));
    // GET /health carries the background setup's state and last lines.
    const getHealth = async () => JSON.stringify(await (await fetch(`http://127.0.0.1:${port}/health`)).json());
    const failed = async () => {
      if (out.code !== undefined) return `refract start exited ${out.code}: ${out.stderr}${out.stdout}`;
      const h = await getHealth().catch(() => ''); // not listening yet
      return h.includes('"state":"failed"') ? `the background setup failed: ${h}` : undefined;
    };
    await until('the dev ptau contribution to start', contributing, 240_000, failed);
    const health = await getHealth();
    child.kill('SIGTERM');
    await exited;
    expect(health).not.toMatch(/is not a function/);
    expect(health).toMatch(/"state":"running"/);
    expect(health).toContain(`WARNING: cannot download the public ceremony ptau ${url}powersOfTau28_hez_final_16.ptau: ECONNREFUSED; falling back to an INSECURE development powers of tau`);
    expect(health).toContain(`WARNING: creating an INSECURE development powers of tau (2^16) at ${path.join(ptauDir, 'dev_pot16.ptau')}`);
    expect(health).toContain('ptau: creating INSECURE dev ptau 2^16');
  }, 300_000);

  test('the key of the smallest circuit builds there (ptau given: generating 2^13+ takes minutes)', async () => {
    // inclusion_26_1 needs a 2^13 ptau (requiredPtauPower); generating one takes minutes on a busy
    // 2-core machine, so this uses the development ptau file from outside the checkout.
    const keys = path.join(root, 'keys-build');
    const { out, exited } = refract('setup', ['--keys', keys, '--circuits', 'inclusion_26_1', '--no-progress', '--ptau', await ensureDevPtau(), '--insecure-ptau'], { REFRACT_PTAU_URL: 'off' });
    expect(await exited, out.stderr).toBe(0);
    const summary = JSON.parse(out.stdout) as { built: string[]; cached: string[]; ptau: { power: number; insecureDev: boolean } };
    expect(summary.built).toEqual(['inclusion_26_1']);
    expect(summary.ptau).toMatchObject({ power: 16, insecureDev: true });
    const manifest = JSON.parse(await readFile(path.join(keys, 'manifest.json'), 'utf8')) as KeysManifest;
    expect(manifest.circuits.inclusion_26_1).toMatchObject({ constraints: 6292, nPublic: 2 });
    for (const f of ['inclusion_26_1.zkey', 'inclusion_26_1.wasm', 'inclusion_26_1.vkey.json']) expect(readdirSync(keys).join(' ')).toContain(f);
  }, 420_000);
});
