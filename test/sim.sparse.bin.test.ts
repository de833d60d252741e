/**
 * `refract simulate --profile sparse` as a user runs it (bin/refract.mjs): the history is there at
 * start, getSignaturesForAddress of the account-compression program pages back through it newest
 * first, getTransaction fetches what it lists, GET /stats counts the requests; the sparse flags
 * without `--profile sparse` are a usage error.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
import { freePort, runRefract } from './helpers/refractBin.ts';
import { jsonRpc } from './helpers/jsonRpc.ts';

const ACP = 'compr6CUsB5m2jS4Y3831ztGSTnDpnKJTKS95d64XVq';
const procs: ChildProcess[] = [];
afterAll(() => {
  for (const p of procs) if (p.exitCode === null) p.kill('SIGTERM');
});

type RpcReply = { result?: any; error?: { code: number; message: string } };
const call = (url: string, method: string, params: unknown[] = []): Promise<RpcReply> => jsonRpc(url, method, params);

describe('refract simulate --profile sparse', () => {
  it('serves 20,000 slots of history at once: the program listing pages back through every Light transaction, newest first', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [REFRACT_BIN, 'simulate', '--profile', 'sparse', '--history-slots', '20000', '--port', String(port), '--hide-program-signatures', '1000000'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, REFRACT_LOG_LEVEL: 'info' },
    });
    procs.push(child);
    let err = '';
    const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', (d) => {
        err += d;
        const m = /"url":"(http:[^"]+)".*listening/.exec(err);
        if (m) resolve(m[1]!);
      });
      void exit.then((code) => reject(new Error(`refract simulate exited (${code}): ${err}`)));
    });
    expect(err).toContain('"profile":"sparse"');
    const tip = (await call(url, 'getSlot')).result as number;
    expect(tip).toBeGreaterThanOrEqual(20_000);
    expect((await call(url, 'getFirstAvailableBlock')).result).toBe(0);

    const all: { signature: string; slot: number }[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await call(url, 'getSignaturesForAddress', [ACP, { limit: 1000, commitment: 'confirmed', ...(before ? { before } : {}) }]);
      expect(page.error).toBeUndefined();
      all.push(...page.result);
      if (page.result.length < 1000) break;
      before = page.result[page.result.length - 1].signature;
    }
    // About one slot in 50 (a few transactions each) over 20,000 slots.
    expect(all.length).toBeGreaterThan(400);
    expect(new Set(all.map((x) => x.signature)).size).toBe(all.length);
    for (let i = 1; i < all.length; i++) expect(all[i]!.slot).toBeLessThanOrEqual(all[i - 1]!.slot);
    expect(all[all.length - 1]!.slot).toBeLessThan(200);

    // getTransaction fetches a listed one; its transactionIndex is its place in the (padded) block.
    const t = all[Math.floor(all.length / 2)]!;
    const tx = (await call(url, 'getTransaction', [t.signature, { encoding: 'base64', maxSupportedTransactionVersion: 0 }])).result;
    expect(tx.slot).toBe(t.slot);
    const block = (await call(url, 'getBlock', [t.slot, { transactionDetails: 'signatures' }])).result;
    expect(block.signatures.length).toBeGreaterThan(1000);
    expect(block.signatures[tx.transactionIndex]).toBe(t.signature);

    const stats = (await (await fetch(`${url}/stats`)).json()) as { requests: Record<string, number>; batches: number; rateLimited: number };
    expect(stats.requests.getSignaturesForAddress).toBe(Math.ceil((all.length + 1) / 1000));
    expect(stats.requests.getTransaction).toBe(1);
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
  }, 120_000);

  it('sparse flags without --profile sparse, or an unknown profile, are usage errors', async () => {
    const a = await runRefract(['simulate', '--port', '0', '--history-slots', '100']);
    expect(a.status).toBe(1);
    expect(a.stderr).toContain('--history-slots, --light-every, --padding-txs and --skip-every need --profile sparse');
    const b = await runRefract(['simulate', '--port', '0', '--profile', 'dense']);
    expect(b.status).not.toBe(0);
    expect(b.stderr).toContain('--profile must be default or sparse');
  }, 60_000);
});
