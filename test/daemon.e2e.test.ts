/**
 * End to end: the simulator (replaying the shared e2e fixtures, then generating) → `startDaemon`
 * (poller + LMDB + API + prover in one process, with its defaults: Light's keys) → the official
 * client reads the replayed accounts and gets a validity proof for one of them that Light's on-chain
 * verifier accepts: the equation with the verifying key read out of Light's released program (keys:
 * Light's, converted once into the shared test dir, test/helpers/lightKeys.ts; no key is built).
 */
import { createRpc, encodeBN254toBase58 } from '@lightprotocol/stateless.js';
import { PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../src/commands/start.ts';
import { configSchema } from '../src/config/config.ts';
import { ensureLightKeys, LIGHT_TEST_KEYS } from './helpers/lightKeys.ts';
import { pinocchioProgram, verifyOnChain, vkFromProgram } from './helpers/lightVerify.ts';
import { type Simulator, startSimulator } from '../src/sim/simulator.ts';
import { snapshot, tempDir, txDir } from './helpers/photon.ts';

const BOB = new PublicKey('EU57rQxcmFhJ24ApVdUy3y4MxFXcTUN3uiVeWvGgtWXu');

describe('daemon end to end on the simulator', () => {
  let sim: Simulator;
  let daemon: Daemon;
  let url: string;
  let so: Uint8Array;

  beforeAll(async () => {
    // all 24 of Light's keys converted (shared with the other Light tests): no background conversion
    so = pinocchioProgram(await ensureLightKeys());
    sim = await startSimulator({ port: 0, slotMs: 40, txsPerBlock: 4, replay: [txDir('e2e_mint_and_transfer_transactions')] });
    const config = configSchema.parse({ db: tempDir(), rpcUrl: sim.url, port: 0, host: '127.0.0.1', logLevel: 'error', rateLimit: false, keysDir: LIGHT_TEST_KEYS, proverThreads: 1, lightKeys: true });
    // Refract's own circuits are not built (they serve only with --own-circuits)
    daemon = await startDaemon(config, { prover: { autoSetup: false } });
    const addr = daemon.app.server.address();
    url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    // Wait until the replayed slots and some generated ones are indexed.
    for (let i = 0; i < 300; i++) {
      const slot = daemon.store.read((r) => r.lastSlot());
      if (slot !== null && slot >= 10) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 3_600_000);
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

  it("the official client gets a validity proof for a replayed account that Light's on-chain verifier accepts", async () => {
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
    const publics = [BigInt(`0x${be32(proof.roots[0]!).toString('hex')}`), BigInt(`0x${be32(proof.leaves[0]!).toString('hex')}`)];
    const vk = vkFromProgram(so, 'mainnet_inclusion_26_1', publics.length + 1);
    expect(verifyOnChain(vk, proof.compressedProof!, publics)).toBe(true);
    // one byte changed: refused
    const c = [...proof.compressedProof!.c];
    c[7] ^= 1;
    expect(verifyOnChain(vk, { ...proof.compressedProof!, c }, publics)).toBe(false);
    console.log(`official client getValidityProofV0 (1 account) against the daemon: ${ms.toFixed(0)} ms`);

    const health = await (await fetch(`${url}/health`)).json();
    expect(health.prover).toMatchObject({ mode: 'local', available: true });
    expect(health.prover.lightKeys.ready).toContain('mainnet_inclusion_26_1');
    expect(['native', 'circomlibjs']).toContain(health.poseidon.backend);
    if (health.poseidon.backend === 'native') expect(['ifma', 'scalar']).toContain(health.poseidon.batchKernel);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/refract_proofs_total\{circuit="mainnet_inclusion_26_1"\} [1-9]/);
    const bad = await fetch(`${url}/prove`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).code).toBe('malformed_body');
  });
});
