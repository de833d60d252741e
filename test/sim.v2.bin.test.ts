/**
 * Issue 17 item 8 as a user sees it: `refract simulate` (default v2 weight) serves legacy and
 * instruction-based transactions, and `refract start --rpc-url <it>` indexes both: no rejected
 * transaction, no root mismatch, and the batched tree HLKs5 advanced by the forester's batch events
 * to the root the simulator's events carry. `--v2-weight 0` serves legacy only; a bad value is a usage error.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import bs58 from 'bs58';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { parseTransaction } from '../src/light/parser.ts';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
import { DEFAULT_V2_TREE } from '../src/sim/generator.ts';
import { decodeBlockJson } from '../src/solana/decode.ts';
import { Store } from '../src/store/store.ts';
import { tempDir } from './helpers/photon.ts';
import { freePort, postRpc, runRefract } from './helpers/refractBin.ts';

const HLKS5 = loadTreeRegistry().get(DEFAULT_V2_TREE)!;
const procs: ChildProcess[] = [];
afterAll(() => {
  for (const p of procs) if (p.exitCode === null) p.kill('SIGTERM');
});
function refract(args: string[]): ChildProcess {
  const c = spawn(process.execPath, [REFRACT_BIN, ...args], { stdio: 'ignore', env: { ...process.env, REFRACT_LOG_LEVEL: 'error' } });
  procs.push(c);
  return c;
}
async function until<T>(f: () => Promise<T | null>, ok: (v: T) => boolean, ms = 40_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => null);
    if (v !== null && ok(v)) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 200));
  }
}
const rpc = async (port: number, method: string, params?: unknown) => (await postRpc(port, method, params)).body as { result?: any; error?: unknown };
const stop = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null ? r() : (c.once('exit', () => r()), c.kill('SIGTERM'))));

/** Event kinds in getBlock results of slots [1, n] of the simulator at `port`. */
async function kinds(port: number, n: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (let s = 1; s <= n; s++) {
    const b = await rpc(port, 'getBlock', [s, { encoding: 'base64', maxSupportedTransactionVersion: 0 }]);
    for (const tx of decodeBlockJson(b.result, s).transactions) {
      for (const ev of parseTransaction(tx, s).events) {
        const k = ev.kind === 'batch' ? ev.event.kind : ev.kind;
        out[k] = (out[k] ?? 0) + 1;
      }
    }
  }
  return out;
}

describe('refract simulate speaks both formats; refract start indexes them', () => {
  it('default v2 weight: both formats served, indexed with zero rejections and zero root mismatches, HLKs5 advanced by batch events', async () => {
    const [simPort, apiPort] = [await freePort(), await freePort()];
    refract(['simulate', '--port', String(simPort), '--slot-ms', '5', '--txs-per-block', '8']);
    await until(() => rpc(simPort, 'getSlot').then((r) => r.result as number), (s) => s >= 300);
    const k = await kinds(simPort, 300);
    expect(k.publicTransaction).toBeGreaterThan(500);
    expect(k.batchPublicTransaction).toBeGreaterThan(50);
    expect(k.batchAppend).toBeGreaterThan(2);
    expect(k.batchNullify).toBeGreaterThan(0);

    const db = tempDir('refract-sim-v2-bin-');
    const daemon = refract(['start', '--db', db, '--rpc-url', `http://127.0.0.1:${simPort}`, '--port', String(apiPort), '--host', '127.0.0.1', '--no-simulator', '--no-prover']);
    await until(() => rpc(apiPort, 'getIndexerSlot').then((r) => r.result as number), (s) => s >= 300, 60_000);
    const metrics = await (await fetch(`http://127.0.0.1:${apiPort}/metrics`)).text();
    expect(Number(/refract_ingest_rejected_transactions_total (\d+)/.exec(metrics)![1])).toBe(0);
    expect(metrics).not.toMatch(/refract_ingest_root_mismatch_total\{[^}]*\} [1-9]/);
    await stop(daemon);

    const store = new Store({ path: db });
    store.read((r) => {
      const t = r.batchTree(HLKS5.treeBytes)!;
      expect(t.seq).toBeGreaterThanOrEqual(BigInt(k.batchAppend! + k.batchNullify!));
      expect(t.nextIndex).toBeGreaterThanOrEqual(30n);
      expect(bs58.encode(r.node(HLKS5.treeBytes, 1n)!.hash)).toBe(bs58.encode(t.root));
    });
    await store.close();
  }, 120_000);

  it('--v2-weight 0 serves legacy transactions only; a negative weight is a usage error naming the flag', async () => {
    const port = await freePort();
    refract(['simulate', '--port', String(port), '--slot-ms', '2', '--txs-per-block', '8', '--v2-weight', '0']);
    await until(() => rpc(port, 'getSlot').then((r) => r.result as number), (s) => s >= 150);
    const k = await kinds(port, 150);
    expect(k.publicTransaction).toBeGreaterThan(500);
    expect(k.batchPublicTransaction ?? 0).toBe(0);
    expect((k.batchAppend ?? 0) + (k.batchNullify ?? 0)).toBe(0);

    const bad = await runRefract(['simulate', '--port', '0', '--v2-weight', '-1']);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('--v2-weight must be a non-negative integer');
  }, 60_000);
});
