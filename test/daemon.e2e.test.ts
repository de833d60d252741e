/**
 * End to end: the simulator (replaying the shared e2e fixtures, then generating) → `startDaemon`
 * (poller + LMDB + API + prover in one process) → the official client reads the replayed accounts
 * and gets a real Groth16 validity proof for one of them (keys: inclusion_26_1, built first with the
 * dev ptau into the shared cached test keys dir when missing).
 */
import { createRpc, encodeBN254toBase58 } from '@lightprotocol/stateless.js';
import { PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../src/commands/start.ts';
import { configSchema } from '../src/config/config.ts';
import { DEV_PTAU, ensureDevPtau, TEST_KEYS_DIR, verifyCompressedProof } from './helpers/proverFixtures.ts';
import { setupCircuits } from '../src/prover/keys/keySetup.ts';
import { terminateCurve } from '../src/prover/engine/snark.ts';
import { type Simulator, startSimulator } from '../src/sim/simulator.ts';
import { snapshot, tempDir, txDir } from './helpers/photon.ts';

const BOB = new PublicKey('EU57rQxcmFhJ24ApVdUy3y4MxFXcTUN3uiVeWvGgtWXu');

describe('daemon end to end on the simulator', () => {
  let sim: Simulator;
  let daemon: Daemon;
  let url: string;

  beforeAll(async () => {
    await setupCircuits({ keysDir: TEST_KEYS_DIR, ptau: await ensureDevPtau(), ptauInsecure: true, circuits: ['inclusion_26_1'], log: () => {} });
    sim = await startSimulator({ port: 0, slotMs: 40, txsPerBlock: 4, replay: [txDir('e2e_mint_and_transfer_transactions')] });
    const config = configSchema.parse({ db: tempDir(), rpcUrl: sim.url, port: 0, host: '127.0.0.1', logLevel: 'error', rateLimit: false, keysDir: TEST_KEYS_DIR, proverThreads: 1, lightKeys: false });
    // The test keys dir holds only the small circuits: no background build of the others.
    daemon = await startDaemon(config, { prover: { autoSetup: false, warm: ['inclusion_26_1'] } });
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
    await terminateCurve();
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

  it('the official client gets a Groth16 validity proof for a replayed account that verifies with our vkey', async () => {
    const rpc = createRpc('http://127.0.0.1:1', url, 'http://127.0.0.1:2');
    const accounts = await rpc.getCompressedTokenAccountsByOwner(BOB);
    const acc = accounts.items[0]!.compressedAccount;
    const t0 = performance.now();
    // 0.23 sends getValidityProofV2 {hashes, newAddressesWithTrees} for this call (client.md).
    const proof = await rpc.getValidityProofV0([{ hash: acc.hash, tree: acc.treeInfo.tree, queue: acc.treeInfo.queue }], []);
    const ms = performance.now() - t0;
    expect(proof.compressedProof).not.toBeNull();
    expect(proof.leaves[0]!.eq(acc.hash)).toBe(true);
    expect(proof.leafIndices).toEqual([acc.leafIndex]);
    expect(proof.proveByIndices).toEqual([false]);
    const be32 = (n: { toArrayLike: (t: typeof Buffer, e: 'be', l: number) => Buffer }) => n.toArrayLike(Buffer, 'be', 32);
    expect(await verifyCompressedProof(TEST_KEYS_DIR, 'inclusion_26_1', proof.compressedProof!, [be32(proof.roots[0]!), be32(proof.leaves[0]!)])).toBe(true);
    console.log(`official client getValidityProofV0 (1 account) against the daemon: ${ms.toFixed(0)} ms`);

    const health = await (await fetch(`${url}/health`)).json();
    expect(health.prover).toMatchObject({ mode: 'local', available: true, keys: { circuits: { inclusion_26_1: true } } });
    expect(['native', 'circomlibjs']).toContain(health.poseidon.backend);
    if (health.poseidon.backend === 'native') expect(['ifma', 'scalar']).toContain(health.poseidon.batchKernel);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/refract_proofs_total\{circuit="inclusion_26_1"\} [1-9]/);
    expect(metrics).toMatch(/refract_prover_circuit_ready\{circuit="inclusion_26_1"\} 1/);
    const bad = await fetch(`${url}/prove`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).code).toBe('malformed_body');
  });
});
