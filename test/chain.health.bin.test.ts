/**
 * Issue #33, point 3: `refract start` says when it cannot follow the node, through the binary.
 * - No node at all (`--rpc-url http://127.0.0.1:<closed>`): GET /readiness 503 naming the unreachable
 *   node, GET /health `status: degraded` with `chain.state: unreachable`, `refract_chain_node_state
 *   {state="unreachable"} 1`, and one warning in the log (not one per check).
 * - A store ahead of the node (a second start over an existing store against a simulator restarted at
 *   slot 0): the same with `store_ahead` and both slots, `refract_store_ahead_slots` > 0,
 *   getIndexerHealth `Store is ahead of the node: …`, one warning naming both slots; the gRPC source
 *   does not churn meanwhile (no gRPC probe every 15 s).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, expect, test } from 'vitest';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
import { freePort } from './helpers/refractBin.ts';
import { tempDir } from './helpers/photon.ts';

const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** Spawns `refract …args` (JSON logs); `first(msg)` resolves with the first log line of that message. */
function run(args: string[]) {
  const env: Record<string, string | undefined> = { ...process.env, REFRACT_LOG_LEVEL: 'info', REFRACT_LOG_FORMAT: 'json' };
  for (const k of Object.keys(env)) if (k.startsWith('REFRACT_') && !['REFRACT_LOG_LEVEL', 'REFRACT_LOG_FORMAT'].includes(k)) delete env[k];
  const child = spawn(process.execPath, [REFRACT_BIN, ...args], { cwd: tempDir('refract-cwd-'), env, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let text = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (text += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const lines = () => text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>);
  const first = async (msg: RegExp, ms = 60_000) => {
    const t0 = Date.now();
    for (;;) {
      const l = lines().find((x) => msg.test(String(x.msg)));
      if (l) return l;
      if (child.exitCode !== null) throw new Error(`refract ${args[0]} exited ${child.exitCode}: ${text}`);
      if (Date.now() - t0 > ms) throw new Error(`no ${msg} within ${ms} ms: ${text}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const stop = async () => {
    child.kill('SIGTERM');
    return exited;
  };
  return { child, lines, first, stop, text: () => text };
}

const get = async (url: string) => {
  const r = await fetch(url);
  return { status: r.status, text: await r.text() };
};
const rpc = async (url: string, method: string) =>
  (await (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method }) })).json()) as { result?: any; error?: { message: string } };
async function until<T>(what: string, f: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

test('no node at all: /readiness 503 and /health degraded naming the unreachable node, a metric, one warning', async () => {
  const closed = await freePort();
  const d = run(['start', '--rpc-url', `http://127.0.0.1:${closed}`, '--port', '0', '--host', '127.0.0.1', '--db', tempDir('refract-chain-'), '--no-prover']);
  const api = `http://127.0.0.1:${(await d.first(/^refract listening$/)).port}`;
  const ready = await until('/readiness 503', async () => {
    const r = await get(`${api}/readiness`);
    return r.status === 503 && r;
  });
  expect(JSON.parse(ready.text).error.message).toMatch(new RegExp(`^the Solana node is unreachable \\(getSlot: http://127\\.0\\.0\\.1:${closed} unreachable \\(.+\\)\\); indexed slot none$`));
  const health = JSON.parse((await get(`${api}/health`)).text);
  expect(health).toMatchObject({ status: 'degraded', indexedSlot: null, chain: { state: 'unreachable', nodeSlot: null } });
  expect(await (await fetch(`${api}/metrics`)).text()).toMatch(/refract_chain_node_state\{state="unreachable"\} 1/);
  await new Promise((r) => setTimeout(r, 7000)); // a few more checks (every 3 s): still one warning
  expect(d.lines().filter((l) => /^the Solana node is unreachable/.test(l.msg))).toHaveLength(1);
  expect((await get(`${api}/readiness`)).status).toBe(503);
  expect(await d.stop()).toBe(0);
}, 120_000);

test('a store ahead of a restarted node: degraded with both slots, a metric, one warning, no gRPC churn', async () => {
  const db = tempDir('refract-ahead-');
  // 1. Index a fast simulator for a while.
  const sim1 = run(['simulate', '--port', '0', '--slot-ms', '10', '--txs-per-block', '2']);
  const sim1Url = String((await sim1.first(/^Solana RPC simulator listening$/)).url);
  const d1 = run(['start', '--rpc-url', sim1Url, '--port', '0', '--host', '127.0.0.1', '--db', db, '--no-prover']);
  const api1 = `http://127.0.0.1:${(await d1.first(/^refract listening$/)).port}`;
  const indexed = await until('600 slots indexed', async () => {
    const r = await rpc(api1, 'getIndexerSlot');
    return (r.result ?? 0) > 600 && (r.result as number);
  }, 90_000);
  expect(await d1.stop()).toBe(0);
  expect(await sim1.stop()).toBe(0);

  // 2. The simulator again, from slot 0, with gRPC; the daemon over the same store, following it by gRPC.
  const sim2 = run(['simulate', '--port', '0', '--slot-ms', '100', '--txs-per-block', '2', '--grpc-port', '0']);
  const sim2Url = String((await sim2.first(/^Solana RPC simulator listening$/)).url);
  const grpcUrl = String((await sim2.first(/^Yellowstone gRPC listening$/)).grpcUrl);
  const d2 = run(['start', '--rpc-url', sim2Url, '--grpc-url', grpcUrl, '--port', '0', '--host', '127.0.0.1', '--db', db, '--no-prover']);
  const api = `http://127.0.0.1:${(await d2.first(/^refract listening$/)).port}`;
  const ready = await until('/readiness 503', async () => {
    const r = await get(`${api}/readiness`);
    return r.status === 503 && r;
  });
  expect(JSON.parse(ready.text).error.message).toMatch(/^the store \(indexed slot \d+\) is ahead of the Solana node's tip \(slot \d+\) by \d+ slots: the node restarted from an earlier slot, or it is another chain/);
  const health = JSON.parse((await get(`${api}/health`)).text);
  expect(health).toMatchObject({ status: 'degraded', chain: { state: 'store_ahead' } });
  expect(health.chain.indexedSlot).toBeGreaterThanOrEqual(indexed);
  expect(health.chain.nodeSlot).toBeLessThan(health.chain.indexedSlot);
  const metrics = await (await fetch(`${api}/metrics`)).text();
  expect(metrics).toMatch(/refract_chain_node_state\{state="store_ahead"\} 1/);
  expect(Number(/refract_store_ahead_slots (\d+)/.exec(metrics)![1])).toBeGreaterThan(0);
  expect((await rpc(api, 'getIndexerHealth')).error!.message).toMatch(/^Store is ahead of the node: indexed slot \d+, the node's tip \d+ \(the node restarted from an earlier slot, or it is another chain\)$/);
  // 20 s in this state: one warning with both slots; no gRPC probe churning every few seconds.
  await new Promise((r) => setTimeout(r, 20_000));
  const warnings = d2.lines().filter((l) => /is ahead of the Solana node's tip/.test(l.msg));
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatchObject({ level: 40, state: 'store_ahead' });
  expect(typeof warnings[0]!.nodeSlot).toBe('number');
  expect(typeof warnings[0]!.indexedSlot).toBe('number');
  expect(d2.lines().filter((l) => /gRPC probe failed/.test(l.msg))).toHaveLength(0);
  expect(d2.lines().filter((l) => /^live source: rpc/.test(l.msg)).length).toBeLessThanOrEqual(1);
  expect(await d2.stop()).toBe(0);
  expect(await sim2.stop()).toBe(0);
}, 240_000);
