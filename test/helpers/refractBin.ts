/**
 * Driving the real `refract` binary (bin/refract.mjs) as a user would: `startRefract` spawns
 * `refract start --no-ingest` on a fresh store and a free port and resolves once GET /health answers
 * (`stopAll` stops every daemon it started); `runRefract` runs a command to completion (start-up
 * errors); `postRpc` makes one JSON-RPC call over HTTP.
 *
 * The child gets this process's environment without any inherited `REFRACT_*` variable (so a
 * developer's own settings cannot change a test), plus the test's `env`; its working directory is a
 * fresh temporary one (no `config/refract.json` is picked up by accident).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { REFRACT_BIN } from '../../src/prover/keys/keyReadiness.ts';
import { Indexer } from '../../src/ingest/indexer.ts';
import { Store } from '../../src/store/store.ts';
import { tempDir } from './photon.ts';
import { runCommand } from './runCommand.ts';
import { registry, slot0 } from './rpcLmdb.ts';

/** A port nothing listens on right now (the OS picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** CPU seconds process `pid` has used so far, all its threads (/proc/<pid>/stat utime + stime, ticks of 10 ms). */
export function processCpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** This process's environment without its REFRACT_ settings (REFRACT_LIGHT_KEYS kept) or NODE_OPTIONS, with `env` on top. */
export function childEnv(env: Record<string, string>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...process.env };
  for (const k of Object.keys(out)) if (k.startsWith('REFRACT_') && k !== 'REFRACT_LIGHT_KEYS') delete out[k];
  delete out.NODE_OPTIONS;
  return { ...out, ...env };
}

/**
 * A fresh store holding the empty slot-0 block (as Photon's harness indexes first): getIndexerSlot
 * answers 0 instead of "No data has been indexed". Returns its directory, closed.
 */
export async function slotZeroDb(): Promise<string> {
  const db = tempDir();
  const store = new Store({ path: db });
  new Indexer(store, registry).indexBlocks([slot0()]);
  await store.close();
  return db;
}

const running: RefractDaemon[] = [];

/** Stops every daemon `startRefract` started that still runs (for `afterAll`). */
export async function stopAll(): Promise<void> {
  await Promise.all(running.splice(0).map((d) => d.stop()));
}

/** One JSON-RPC call over HTTP to a daemon (or `127.0.0.1:<port>`): the HTTP status and the parsed body. */
export async function postRpc(target: RefractDaemon | number, method: string, params?: unknown): Promise<{ status: number; body: any }> {
  const url = typeof target === 'number' ? `http://127.0.0.1:${target}` : target.url;
  const res = await fetch(`${url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params === undefined ? {} : { params }) }),
  });
  return { status: res.status, body: await res.json() };
}

/** A running `refract start`. */
export interface RefractDaemon {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  port: number;
  child: ChildProcess;
  /** Everything the daemon wrote to stderr so far (its pino log lines). */
  stderr(): string;
  /** SIGTERM, then wait for the exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
}

/**
 * `refract start --no-ingest --host 127.0.0.1 --port <free> …args` with `env` added (and `--db <tmp>`
 * unless `args` has a `--db`).
 * Resolves once GET /health answers 200; rejects with the daemon's stderr if it exits first or is
 * not up within 60 s. A port taken between the probe and the bind is retried with another.
 */
export async function startRefract(args: string[], env: Record<string, string> = {}): Promise<RefractDaemon> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const db = args.includes('--db') ? [] : ['--db', tempDir()];
    const child = spawn(process.execPath, [REFRACT_BIN, 'start', '--no-ingest', ...db, '--host', '127.0.0.1', '--port', String(port), ...args], {
      cwd: tempDir('refract-cwd-'),
      env: childEnv(env),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    let up = false;
    while (!up && child.exitCode === null && Date.now() < deadline) {
      up = await fetch(`${url}/health`).then((r) => r.ok, () => false);
      if (!up) await new Promise((r) => setTimeout(r, 100));
    }
    if (up) {
      const daemon: RefractDaemon = {
        url,
        port,
        child,
        stderr: () => err,
        stop: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(timer);
        },
      };
      running.push(daemon);
      return daemon;
    }
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
    if (attempt < 2 && err.includes('EADDRINUSE')) continue;
    throw new Error(`refract start did not come up (exit ${child.exitCode}): ${err}`);
  }
}

/** Runs `refract …args` to completion with `env` added (killed after 60 s): exit status and output. */
export async function runRefract(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return runCommand(process.execPath, [REFRACT_BIN, ...args], { cwd: tempDir('refract-cwd-'), env: childEnv(env) as NodeJS.ProcessEnv });
}

/** A `refract` child process spawned by {@link spawnRefract}. */
export interface RefractProcess {
  child: ChildProcess;
  /** Everything it wrote to stderr so far (its pino log lines). */
  stderr(): string;
  /** Sends `signal` (default SIGTERM) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const spawned: RefractProcess[] = [];

/**
 * Spawns `refract …args` (no inherited REFRACT_* variables, `env` added, REFRACT_LOG_LEVEL `info`
 * unless given) in a temporary working directory, keeping its stderr. {@link killSpawned} ends them all.
 */
export function spawnRefract(args: string[], env: Record<string, string> = {}): RefractProcess {
  const child = spawn(process.execPath, [REFRACT_BIN, ...args], { cwd: tempDir('refract-cwd-'), env: childEnv({ REFRACT_LOG_LEVEL: 'info', ...env }), stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const p: RefractProcess = {
    child,
    stderr: () => err,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
  spawned.push(p);
  return p;
}

/** SIGKILLs every process {@link spawnRefract} started (an afterAll). */
export async function killSpawned(): Promise<void> {
  await Promise.all(spawned.splice(0).map((p) => p.stop('SIGKILL')));
}
