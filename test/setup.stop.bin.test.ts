// Issue #33, point 4: stopping the first key build loses no finished work and says so truthfully.
// `refract start` on a fresh checkout (no ../shared, no internet) builds keys in the background and
// generates the INSECURE development ptau. Ctrl-C (SIGINT to the daemon) once the ptau's first stage is
// done: the daemon exits 0, logs the stop at info level (no error line), and the finished stage is kept;
// the next start resumes from it ("resuming the development powers of tau …") instead of starting from
// zero; SIGTERM is a normal stop too. `refract setup` run by hand and stopped exits 0 and says what is kept.
//
// The checkout is a copy of this worktree's tracked files in a temp dir (node_modules linked, the native
// addon copied), as in setup.fresh.test.ts, so no development ptau beside the repository is found.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort } from './helpers/refractBin.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let root: string;
let checkout: string;
const children: ChildProcess[] = [];

/** `refract …args` in the checkout with JSON logs; collects its output. */
function refract(args: string[], env: NodeJS.ProcessEnv) {
  const e: NodeJS.ProcessEnv = { ...process.env, ...env, REFRACT_LOG_FORMAT: 'json' };
  delete e.NODE_OPTIONS;
  delete e.REFRACT_DEV_PTAU;
  const child = spawn(process.execPath, ['bin/refract.mjs', ...args], { cwd: checkout, env: e, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const out = { text: '', code: undefined as number | null | undefined, signal: null as NodeJS.Signals | null };
  child.stdout!.on('data', (d) => (out.text += d));
  child.stderr!.on('data', (d) => (out.text += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code, signal) => { out.signal = signal; r((out.code = code)); }));
  return { child, out, exited };
}

async function until(what: string, ok: () => boolean, ms: number, out: { text: string; code?: number | null }): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (out.code !== undefined) throw new Error(`${what}: exited ${out.code}: ${out.text}`);
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}: ${out.text}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The JSON log lines of an output at `level` or above. */
const linesAtOrAbove = (text: string, level: number) =>
  text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level >= level);

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'refract-stop-'));
  checkout = path.join(root, 'repo');
  const files = spawnSync('git', ['-C', REPO, 'ls-files', '-z'], { encoding: 'utf8' }).stdout.split('\0').filter(Boolean);
  for (const f of files) {
    if (!existsSync(path.join(REPO, f))) continue;
    await mkdir(path.dirname(path.join(checkout, f)), { recursive: true });
    await copyFile(path.join(REPO, f), path.join(checkout, f));
  }
  await symlink(realpathSync(path.join(REPO, 'node_modules')), path.join(checkout, 'node_modules'));
  const addon = path.join(REPO, 'native/kernels/build');
  if (existsSync(addon)) await cp(addon, path.join(checkout, 'native/kernels/build'), { recursive: true });
  expect(existsSync(path.join(checkout, '../shared'))).toBe(false);
}, 120_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await rm(root, { recursive: true, force: true });
});

test('Ctrl-C during the first key build: exit 0, info not error, the finished ptau stage kept and resumed by the next start; SIGTERM alike; refract setup stopped by hand exits 0', async () => {
  const keys = path.join(root, 'keys');
  const stage1 = path.join(keys, 'ptau', 'dev_pot16.ptau.stage1-accumulator');
  const env = { REFRACT_PTAU_URL: `http://127.0.0.1:${await freePort()}/ptau/` }; // no internet: the download fails at once
  const args = async () => ['start', '--no-ingest', '--no-simulator', '--db', path.join(root, 'data'), '--host', '127.0.0.1', '--port', String(await freePort()), '--keys', keys, '--circuits', 'inclusion_26_1', '--prover-threads', '1'];

  // 1. The first start: wait for the ptau's first stage, then Ctrl-C.
  const a = refract(await args(), env);
  await until('the dev ptau accumulator to be finished', () => existsSync(stage1), 300_000, a.out);
  a.child.kill('SIGINT');
  expect(await a.exited).toBe(0);
  expect(linesAtOrAbove(a.out.text, 50), a.out.text).toEqual([]); // nothing at error level
  const info = linesAtOrAbove(a.out.text, 30).map((l) => l.msg);
  expect(info.some((m) => /^background setup stopped with the daemon \(exit \w+\); 0 of 1 circuits ready\. Finished keys, compiled circuits and finished powers-of-tau stages are kept/.test(m)), a.out.text).toBe(true);
  expect(info.at(-1), a.out.text).toBe('stopped');
  expect(existsSync(stage1)).toBe(true); // the finished work is still there

  // 2. The next start resumes from it (and a SIGTERM is a normal stop as well).
  const b = refract(await args(), env);
  await until('the resume', () => /resuming the development powers of tau \S+dev_pot16\.ptau: its accumulator is done/.test(b.out.text), 120_000, b.out);
  b.child.kill('SIGTERM');
  expect(await b.exited).toBe(0);
  expect(linesAtOrAbove(b.out.text, 50), b.out.text).toEqual([]);
  expect(existsSync(stage1) || existsSync(path.join(keys, 'ptau', 'dev_pot16.ptau.stage2-contributed'))).toBe(true);

  // 3. refract setup by hand, stopped: exit 0, and it says what is kept.
  const c = refract(['setup', '--keys', keys, '--circuits', 'inclusion_26_1', '--no-progress'], env);
  await until('setup to resume', () => /resuming the development powers of tau/.test(c.out.text), 120_000, c.out);
  c.child.kill('SIGINT');
  expect(await c.exited).toBe(0);
  expect(c.out.text).toMatch(/refract setup: stopped \(SIGINT\); finished keys, compiled circuits and finished powers-of-tau stages are kept: run the same command again to resume/);
}, 600_000);
