/**
 * Crash safety of the file importer: SIGKILL `refract index` at random points during a long
 * import, restart it each time, let it finish; the final state equals a clean run's. The stream mixes
 * legacy and instruction-based (v2) transactions with the forester's batch events, so the batched
 * trees' last batch event, roots and queues are compared too.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import bs58 from 'bs58';
import { LightTxGenerator } from '../src/sim/generator.ts';
import { Store } from '../src/store/store.ts';
import { REPO_ROOT, tempDir } from './helpers/photon.ts';
import { v2Digest } from './helpers/v2Digest.ts';

const OWNERS = 40;
const TREES = ['smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT', 'amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2'];

/** Everything observable: per-owner unspent accounts, balances, token balances, tree roots, all signatures. */
function digest(store: Store, gen: LightTxGenerator) {
  return store.read((r) => ({
    owners: Array.from({ length: OWNERS }, (_, i) => {
      const o = gen.owner(i);
      return {
        accounts: [...r.accountsByOwner(o)].map((a) => bs58.encode(a.hash)),
        tokens: [...r.tokenAccountsBy('owner', o, null)].map((a) => bs58.encode(a.hash)),
        balance: r.balance(o).toString(),
        tokenBalances: [...r.tokenBalances(o)].map((b) => `${bs58.encode(b.mint)}:${b.balance}`),
        signatures: [...r.signatures('owner', o)].map((s) => s.signature),
      };
    }),
    roots: TREES.map((t) => {
      const n = r.node(bs58.decode(t), 1n);
      return n ? `${Buffer.from(n.hash).toString('hex')}@${n.seq}` : null;
    }),
    v2: v2Digest(r),
    signatures: [...r.signatures('all', null)].length,
    lastSlot: r.lastSlot(),
  }));
}

function runImport(db: string, blocksDir: string): { child: ReturnType<typeof spawn>; done: Promise<number | null>; stderr: () => string } {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/refract.mjs'), 'index', '--db', db, '--blocks', blocksDir, '--batch-transactions', '150', '--no-progress'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, REFRACT_LOG_LEVEL: 'error' },
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const done = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ? null : code)));
  return { child, done, stderr: () => err };
}

describe('crash safety', () => {
  it('SIGKILL at random points, restart, finish: state equals a clean run', async () => {
    const gen = new LightTxGenerator({ owners: OWNERS, seed: 11, v2Weight: 1 });
    const blocksDir = tempDir('refract-crash-blocks-');
    mkdirSync(blocksDir, { recursive: true });
    for (let slot = 1; slot <= 360; slot++) writeFileSync(join(blocksDir, String(slot)), JSON.stringify(gen.block(slot, 25).json));

    // Clean run: the same binary, not killed (in another process: a synchronous import here would hold
    // this worker's event loop for half a minute under load).
    const cleanDb = tempDir();
    const first = runImport(cleanDb, blocksDir);
    expect(await first.done, first.stderr()).toBe(0);
    const clean = new Store({ path: cleanDb });
    const expected = digest(clean, gen);
    // The stream really exercised the batched trees: appends, queued elements on both kinds of tree.
    expect(expected.v2[0]!.lastBatch, 'a batch event on the state tree').not.toBeNull();
    expect(expected.v2[1]!.lastBatch, 'a BatchAddressAppend on the address tree').not.toBeNull();
    await clean.close();

    // Crashing runs.
    let db = tempDir();
    let kills = 0;
    let seed = 12345;
    let window = 2500;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let round = 0; round < 16; round++) {
      const { child, done, stderr } = runImport(db, blocksDir);
      const timer = setTimeout(() => child.kill('SIGKILL'), 600 + rand() * window);
      const code = await done;
      clearTimeout(timer);
      if (code === null) {
        kills++;
        continue;
      }
      expect(code, stderr()).toBe(0);
      if (kills > 0) break;
      // The machine was fast enough to finish before any kill: start over, killing sooner.
      db = tempDir();
      window /= 2;
    }
    // Finish (no kill).
    const last = runImport(db, blocksDir);
    expect(await last.done, last.stderr()).toBe(0);
    const store = new Store({ path: db });
    expect(digest(store, gen)).toEqual(expected);
    await store.close();
    expect(kills).toBeGreaterThan(0);
  }, 300_000);
});
