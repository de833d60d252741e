/**
 * Crash safety of `refract start`: SIGKILL it at 20 random moments while it ingests the simulator's
 * generated stream; after each restart it catches up. The final roots, account sets, balances and
 * signatures equal a clean run over the same slots; no duplicate signatures, no double-counted balances.
 * The simulator's stream has v2 transactions (`--v2-weight 1`): the batched trees' last batch event,
 * roots and queues are compared too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import bs58 from 'bs58';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { LightTxGenerator } from '../src/sim/generator.ts';
import { decodeBlockJson } from '../src/solana/decode.ts';
import { SolanaRpc } from '../src/solana/rpcClient.ts';
import { Store } from '../src/store/store.ts';
import { REPO_ROOT, tempDir } from './helpers/photon.ts';
import { v2Digest } from './helpers/v2Digest.ts';
import { sleep } from './helpers/jsonRpc.ts';

const SEED = 5;
const OWNERS = 60;
const TREES = ['smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT', 'amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2'];
const simPort = 19000 + (process.pid % 500);
const apiPort = simPort + 600;

function node(args: string[]): ChildProcess {
  return spawn(process.execPath, [join(REPO_ROOT, 'bin/refract.mjs'), ...args], { stdio: 'ignore', env: { ...process.env, REFRACT_LOG_LEVEL: 'error' } });
}
const exited = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

function digest(store: Store) {
  const gen = new LightTxGenerator({ owners: OWNERS, seed: SEED });
  return store.read((r) => {
    const owners = Array.from({ length: OWNERS }, (_, i) => {
      const o = gen.owner(i);
      const accounts = [...r.accountsByOwner(o)];
      return {
        accounts: accounts.map((a) => bs58.encode(a.hash)),
        balance: r.balance(o).toString(),
        lamportSum: accounts.reduce((s, a) => s + a.lamports, 0n).toString(),
        tokenBalances: [...r.tokenBalances(o)].map((b) => `${bs58.encode(b.mint)}:${b.balance}`),
        signatures: [...r.signatures('owner', o)].map((s) => s.signature),
      };
    });
    const all = [...r.signatures('all', null)].map((s) => s.signature);
    return {
      owners,
      roots: TREES.map((t) => {
        const n = r.node(bs58.decode(t), 1n);
        return n ? `${Buffer.from(n.hash).toString('hex')}@${n.seq}` : null;
      }),
      v2: v2Digest(r),
      signatures: all,
      uniqueSignatures: new Set(all).size,
    };
  });
}

describe('daemon crash safety', () => {
  const sim = node(['simulate', '--port', String(simPort), '--slot-ms', '30', '--txs-per-block', '6', '--seed', String(SEED), '--v2-weight', '1']);
  afterAll(async () => {
    sim.kill('SIGTERM');
    await exited(sim);
  });

  it('SIGKILL at 20 random moments; the final state equals a clean run', async () => {
    const db = tempDir();
    const args = ['start', '--db', db, '--rpc-url', `http://127.0.0.1:${simPort}`, '--port', String(apiPort), '--host', '127.0.0.1', '--no-simulator', '--no-prover'];
    let seed = 99;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    await sleep(1500);
    for (let i = 0; i < 20; i++) {
      const d = node(args);
      await sleep(800 + rand() * 1700);
      d.kill('SIGKILL');
      await exited(d);
    }
    // The last run indexes until it is past slot 20 (a fixed sleep was too short on a loaded machine,
    // where a start alone can take seconds), then stops cleanly.
    const last = node(args);
    const indexed = async (): Promise<number> => {
      try {
        const r = await fetch(`http://127.0.0.1:${apiPort}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getIndexerSlot' }) });
        return ((await r.json()) as { result?: number }).result ?? 0;
      } catch {
        return 0;
      }
    };
    await sleep(4000);
    for (let i = 0; i < 120 && (await indexed()) <= 20; i++) await sleep(500);
    last.kill('SIGTERM');
    await exited(last);
    expect(last.exitCode).toBe(0);

    const store = new Store({ path: db });
    const lastSlot = store.read((r) => r.lastSlot())!;
    expect(lastSlot).toBeGreaterThan(20);
    const got = digest(store);
    await store.close();

    // Clean run over the same slots, in one process.
    const clean = new Store({ path: tempDir() });
    const indexer = new Indexer(clean, loadTreeRegistry());
    const rpc = new SolanaRpc(`http://127.0.0.1:${simPort}`);
    for (let s = 1; s <= lastSlot; s += 20) {
      const blocks = [];
      for (let t = s; t < Math.min(s + 20, lastSlot + 1); t++) blocks.push(decodeBlockJson(await rpc.getBlock(t), t));
      indexer.indexBlocks(blocks);
    }
    const expected = digest(clean);
    await clean.close();

    expect(got.v2[0]!.outputQueue.length + (got.v2[0]!.lastBatch ? 1 : 0), 'v2 state was indexed').toBeGreaterThan(0);
    expect(got.uniqueSignatures).toBe(got.signatures.length);
    for (const o of got.owners) expect(o.balance).toBe(o.lamportSum);
    expect(got).toEqual(expected);
  }, 240_000);
});
