/**
 * `refract simulate` as a user runs it (bin/refract.mjs): `--replay` serves the fixture transactions
 * first, `--keep-slots` bounds the blocks kept, and older slots then answer as on a pruned node.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';
import { afterAll, describe, expect, it } from 'vitest';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
import { txDir } from './helpers/photon.ts';
import { runCommand } from './helpers/runCommand.ts';
import { jsonRpc } from './helpers/jsonRpc.ts';

const procs: ChildProcess[] = [];
afterAll(() => {
  for (const p of procs) if (p.exitCode === null) p.kill('SIGTERM');
});

/** Starts `refract simulate ARGS`; resolves with its URL from the "listening" log line (stderr). */
function simulate(args: string[]): { child: ChildProcess; url: Promise<string>; exit: Promise<number | null>; stderr: () => string } {
  const child = spawn(process.execPath, [REFRACT_BIN, 'simulate', ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, REFRACT_LOG_LEVEL: 'info' } });
  procs.push(child);
  let err = '';
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const url = new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d) => {
      err += d;
      const m = /"url":"(http:[^"]+)"/.exec(err);
      if (m) resolve(m[1]!);
    });
    void exit.then((code) => reject(new Error(`refract simulate exited (${code}): ${err}`)));
  });
  return { child, url, exit, stderr: () => err };
}

type RpcReply = { result?: any; error?: { code: number; message: string } };
const call = (url: string, method: string, params: unknown[] = []): Promise<RpcReply> => jsonRpc(url, method, params);

describe('refract simulate', () => {
  it('--replay serves the fixtures first; with --keep-slots they are pruned once the window passes them', async () => {
    const dir = txDir('e2e_mint_and_transfer_transactions');
    const fixtures = readdirSync(dir)
      .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as { slot: number; transaction: [string, string]; meta: unknown; version: unknown })
      .sort((a, b) => a.slot - b.slot);
    const sim = simulate(['--port', '0', '--slot-ms', '2', '--txs-per-block', '1', '--keep-slots', '25', '--replay', dir]);
    const url = await sim.url;
    expect(sim.stderr()).toContain('"keepSlots":25');
    await new Promise((r) => setTimeout(r, 200));
    // Fixture i (ascending source slot, one per slot here) is served at simulator slot i + 1.
    const sigs: string[] = [];
    for (const [i, f] of fixtures.entries()) {
      const block = await call(url, 'getBlock', [i + 1]);
      expect(block.result.transactions).toEqual([{ transaction: f.transaction, meta: f.meta, version: f.version }]);
      const sig = bs58.encode(Buffer.from(f.transaction[0], 'base64').subarray(1, 65));
      sigs.push(sig);
      const tx = await call(url, 'getTransaction', [sig, { encoding: 'base64', maxSupportedTransactionVersion: 0 }]);
      expect(tx.result).toMatchObject({ slot: i + 1, transaction: f.transaction, meta: f.meta });
    }
    // Generated blocks follow the replay; asking for slot 40 moves the 25-slot window to 16..40.
    const after = await call(url, 'getBlock', [40]);
    expect(after.result.parentSlot).toBe(39);
    expect(after.result.transactions).toHaveLength(1);
    expect((await call(url, 'getFirstAvailableBlock')).result).toBe(16);
    expect((await call(url, 'getBlock', [1])).error).toEqual({ code: -32001, message: 'Block 1 cleaned up, does not exist on node. First available block: 16' });
    for (const sig of sigs) expect((await call(url, 'getTransaction', [sig])).result).toBeNull();
    expect((await call(url, 'getBlock', [16])).result.blockHeight).toBe(16);
    sim.child.kill('SIGTERM');
    expect(await sim.exit).toBe(0);
  }, 60_000);

  it('--keep-slots 0 is a usage error naming the flag', async () => {
    const r = await runCommand(process.execPath, [REFRACT_BIN, 'simulate', '--port', '0', '--keep-slots', '0'], { timeoutMs: 30_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('--keep-slots must be an integer from 1 to 2147483647');
  }, 60_000);
});
