/**
 * Scale-out on one host: one `refract start` ingests into an LMDB environment while a second
 * `refract start --no-ingest` process serves reads from the same environment and sees new slots.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from './helpers/photon.ts';

const base = 20000 + (process.pid % 400) * 3;
const [simPort, writerPort, readerPort] = [base, base + 1, base + 2];
const procs: ChildProcess[] = [];
function refract(args: string[]): ChildProcess {
  const c = spawn(process.execPath, [join(REPO_ROOT, 'bin/refract.mjs'), ...args], { stdio: 'ignore', env: { ...process.env, REFRACT_LOG_LEVEL: 'error' } });
  procs.push(c);
  return c;
}
async function slotOf(port: number): Promise<number | null> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"getIndexerSlot"}' });
    const j = (await r.json()) as { result?: number };
    return j.result ?? null;
  } catch {
    return null;
  }
}
async function until<T>(f: () => Promise<T | null>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== null && ok(v)) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('several API processes on one LMDB environment', () => {
  afterAll(() => {
    for (const p of procs) p.kill('SIGTERM');
  });

  it('a read-only API process follows the ingesting process', async () => {
    const db = tempDir();
    refract(['simulate', '--port', String(simPort), '--slot-ms', '50']);
    refract(['start', '--db', db, '--rpc-url', `http://127.0.0.1:${simPort}`, '--port', String(writerPort), '--host', '127.0.0.1', '--no-simulator', '--no-prover']);
    const first = await until(() => slotOf(writerPort), (s) => s >= 5);
    refract(['start', '--no-ingest', '--db', db, '--port', String(readerPort), '--host', '127.0.0.1', '--no-prover']);
    const seen = await until(() => slotOf(readerPort), (s) => s >= first);
    const later = await until(() => slotOf(readerPort), (s) => s > seen + 5);
    expect(later).toBeGreaterThan(seen);
  }, 60_000);
});
