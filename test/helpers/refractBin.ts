/**
 * Driving the real `refract` binary (bin/refract.mjs) from tests: a free port, `refract start` that
 * resolves once its API answers (and is stopped by `stopAll`), and a JSON-RPC POST over HTTP.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT } from './photon.ts';

/** A TCP port nothing listens on (bound to 0 by the OS, then released). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const started: ChildProcess[] = [];

/**
 * `refract start <args> --port <port> --host 127.0.0.1` with `REFRACT_LOG_LEVEL=error`; resolves once
 * the API answers a request (within 60 s), rejects with its stderr if it exits first.
 */
export async function startRefract(args: string[], port: number): Promise<ChildProcess> {
  const c = spawn(process.execPath, [join(REPO_ROOT, 'bin/refract.mjs'), 'start', ...args, '--port', String(port), '--host', '127.0.0.1'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, REFRACT_LOG_LEVEL: 'error' },
  });
  started.push(c);
  let stderr = '';
  c.stderr!.on('data', (d) => (stderr += d));
  const end = Date.now() + 60_000;
  for (;;) {
    if (c.exitCode !== null) throw new Error(`refract start exited with ${c.exitCode}: ${stderr}`);
    try {
      await postRpc(port, 'getIndexerSlot');
      return c;
    } catch {
      if (Date.now() > end) throw new Error(`refract start did not answer within 60 s: ${stderr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** SIGTERM to every process `startRefract` started that still runs; resolves when they have exited. */
export async function stopAll(): Promise<void> {
  await Promise.all(
    started.splice(0).map(async (c) => {
      if (c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      await exited;
    }),
  );
}

/** One JSON-RPC call over HTTP to 127.0.0.1:`port`: the HTTP status and the parsed body. */
export async function postRpc(port: number, method: string, params?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params === undefined ? {} : { params }) }),
  });
  return { status: res.status, body: await res.json() };
}
