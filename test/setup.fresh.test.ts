// The README's first command path on a fresh machine: a checkout with no `../shared` beside it (so
// no development ptau) and no internet. `refract setup` (what `npm start` runs in the background)
// must try the public ceremony download, fall back quickly, and generate the INSECURE development
// ptau — which used to die within seconds ("logger.log is not a function"). Then the key of the
// smallest circuit builds in such a checkout.
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
import type { KeysManifest } from '../src/prover/keys.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SHARED_DEV_PTAU = path.join(REPO, '../shared/dev-ptau/pot16_dev.ptau');

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
  const addon = path.join(REPO, 'native/poseidon/build');
  if (existsSync(addon)) await cp(addon, path.join(dest, 'native/poseidon/build'), { recursive: true });
}

/** A URL whose port nothing listens on: the download fails at once, as on a machine without internet. */
async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return `http://127.0.0.1:${port}/ptau/`;
}

/** `refract setup …` in the checkout; collects stderr/stdout. */
function refractSetup(args: string[], env: NodeJS.ProcessEnv) {
  const e = { ...process.env, ...env };
  delete e.NODE_OPTIONS;
  delete e.REFRACT_DEV_PTAU;
  const child = spawn(process.execPath, ['bin/refract.mjs', 'setup', ...args], { cwd: checkout, env: e, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const out = { stdout: '', stderr: '', code: undefined as number | null | undefined };
  child.stdout!.on('data', (d) => (out.stdout += d));
  child.stderr!.on('data', (d) => (out.stderr += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r((out.code = code))));
  return { child, out, exited };
}

async function until(what: string, ok: () => boolean, ms: number, failed: () => string | undefined): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    const f = failed();
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
  test('refract setup falls back from the download at once and generates the INSECURE dev ptau past the old crash', async () => {
    const keys = path.join(root, 'keys-dev');
    const url = await closedPortUrl();
    const t0 = Date.now();
    const { child, out, exited } = refractSetup(['--keys', keys, '--circuits', 'inclusion_26_1', '--no-progress'], { REFRACT_PTAU_URL: url });
    const ptauDir = path.join(keys, 'ptau');
    // newAccumulator writes `<file>.tmp-<pid>.0` (and, for 2^16, calls logger.log at point 100,000 —
    // the old crash); contribute then writes `.1`. Its appearance means the accumulator is done.
    const contributing = () => existsSync(ptauDir) && readdirSync(ptauDir).some((f) => /^dev_pot16\.ptau\.tmp-\d+\.1$/.test(f));
    await until('the dev ptau contribution to start', contributing, 240_000, () => (out.code !== undefined ? `setup exited ${out.code}: ${out.stderr}` : undefined));
    child.kill('SIGTERM');
    await exited;
    expect(out.stderr).not.toMatch(/is not a function/);
    expect(out.stderr).toContain(`[refract setup] WARNING: cannot download the public ceremony ptau ${url}powersOfTau28_hez_final_16.ptau: ECONNREFUSED; falling back to an INSECURE development powers of tau`);
    expect(out.stderr).toContain(`[refract setup] WARNING: creating an INSECURE development powers of tau (2^16) at ${path.join(ptauDir, 'dev_pot16.ptau')}`);
    expect(out.stderr).toContain('ptau: creating INSECURE dev ptau 2^16');
    // The download attempt cost well under the old failure time (5 s) plus the accumulator.
    expect(Date.now() - t0).toBeLessThan(240_000);
  }, 300_000);

  test('the key of the smallest circuit builds there (ptau given: generating 2^13+ takes minutes)', async () => {
    // inclusion_26_1 needs a 2^13 ptau (requiredPtauPower); generating one takes minutes on a busy
    // 2-core machine, so this uses the development ptau file from outside the checkout.
    const keys = path.join(root, 'keys-build');
    const { out, exited } = refractSetup(['--keys', keys, '--circuits', 'inclusion_26_1', '--no-progress', '--ptau', SHARED_DEV_PTAU, '--insecure-ptau'], { REFRACT_PTAU_URL: 'off' });
    expect(await exited, out.stderr).toBe(0);
    const summary = JSON.parse(out.stdout) as { built: string[]; cached: string[]; ptau: { power: number; insecureDev: boolean } };
    expect(summary.built).toEqual(['inclusion_26_1']);
    expect(summary.ptau).toMatchObject({ power: 16, insecureDev: true });
    const manifest = JSON.parse(await readFile(path.join(keys, 'manifest.json'), 'utf8')) as KeysManifest;
    expect(manifest.circuits.inclusion_26_1).toMatchObject({ constraints: 6292, nPublic: 2 });
    for (const f of ['inclusion_26_1.zkey', 'inclusion_26_1.wasm', 'inclusion_26_1.vkey.json']) expect(readdirSync(keys).join(' ')).toContain(f);
  }, 420_000);
});
