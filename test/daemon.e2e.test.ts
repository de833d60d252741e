/**
 * End to end: the simulator (replaying the shared e2e fixtures, then generating) → `startDaemon`
 * (poller + LMDB + API in one process) → the official client reads the replayed accounts.
 */
import { createRpc, encodeBN254toBase58 } from '@lightprotocol/stateless.js';
import { PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../src/commands/start.ts';
import { configSchema } from '../src/config/config.ts';
import { type Simulator, startSimulator } from '../src/sim/simulator.ts';
import { snapshot, tempDir, txDir } from './helpers/photon.ts';

const BOB = new PublicKey('EU57rQxcmFhJ24ApVdUy3y4MxFXcTUN3uiVeWvGgtWXu');

describe('daemon end to end on the simulator', () => {
  let sim: Simulator;
  let daemon: Daemon;
  let url: string;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, slotMs: 40, txsPerBlock: 4, replay: [txDir('e2e_mint_and_transfer_transactions')] });
    const config = configSchema.parse({ db: tempDir(), rpcUrl: sim.url, port: 0, host: '127.0.0.1', logLevel: 'warn', rateLimit: false, prover: false });
    daemon = await startDaemon(config);
    const addr = daemon.app.server.address();
    url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    // Wait until the replayed slots and some generated ones are indexed.
    for (let i = 0; i < 300; i++) {
      const slot = daemon.store.read((r) => r.lastSlot());
      if (slot !== null && slot >= 10) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  afterAll(async () => {
    await daemon?.stop();
    await sim?.close();
  });

  it('indexes the replayed transactions and serves them to the official client', async () => {
    const rpc = createRpc('http://127.0.0.1:1', url, 'http://127.0.0.1:2');
    const res = await rpc.getCompressedTokenAccountsByOwner(BOB);
    const expected = snapshot('e2e_mint_and_transfer_transactions-bob-accounts').value.items.map((i: { account: { hash: string } }) => i.account.hash).sort();
    expect(res.items.map((i) => encodeBN254toBase58(i.compressedAccount.hash)).sort()).toEqual(expected);
    const slot = await rpc.getIndexerSlot();
    expect(slot).toBeGreaterThanOrEqual(10);
  });

  it('keeps indexing the generated stream (metrics show progress)', async () => {
    const before = daemon.store.read((r) => r.lastSlot())!;
    await new Promise((r) => setTimeout(r, 500));
    const after = daemon.store.read((r) => r.lastSlot())!;
    expect(after).toBeGreaterThan(before);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/refract_ingest_outputs_total \d+/);
    expect(Number(/refract_ingest_rejected_transactions_total (\d+)/.exec(metrics)![1])).toBe(0);
  });
});
