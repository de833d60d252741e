/**
 * getValidityProof / getValidityProofV2 (stateless.js' getValidityProofV0 calls the latter) over HTTP on an indexed store (the
 * golden lamport_transfers fixture: real v1 trees of height 26) with Light's keys: the answer's
 * `compressedProof` passes Light's on-chain equation (@noble/curves, the VK read from the released
 * light_system_program_pinocchio.so), for an account (mainnet_inclusion_26_1), a new address
 * (non-inclusion_26_1, the legacy leaf with nextIndex) and both (combined_26_1_1); a different leaf fails.
 */
import bs58 from 'bs58';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ProverPool } from '../src/prover/run/pool.ts';
import { ProofService } from '../src/prover/run/proofService.ts';
import { RefractValidityProver } from '../src/rpc/validityProver.ts';
import type { Store } from '../src/store/store.ts';
import { ensureLightKeys, LIGHT_TEST_KEYS, LIGHT_TEST_SOURCE, lightOnlyBackend } from './helpers/lightKeys.ts';
import { pinocchioProgram, verifyOnChain, vkFromProgram } from './helpers/lightVerify.ts';
import { fixtureStore, lmdbServer, rpcResult } from './helpers/rpcLmdb.ts';

const PAYER_HASH = '2veKUPKieajFG7yzPNGARHq7jYS1FiXcXG8P9Txhvhcn';
const AMT1 = 'amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2';
const NEW_ADDRESS = bs58.encode(Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 0 : i * 7 + 1)));

let so: Uint8Array;
let pool: ProverPool;
let store: Store;
let app: FastifyInstance;

const big = (b58: string) => BigInt(`0x${Buffer.from(bs58.decode(b58)).toString('hex')}`);

beforeAll(async () => {
  so = pinocchioProgram(await ensureLightKeys(['mainnet_inclusion_26_1', 'non-inclusion_26_1', 'combined_26_1_1']));
  pool = new ProverPool({ keysDir: LIGHT_TEST_KEYS, size: 2, tableFiles: false });
  const service = new ProofService({ backend: lightOnlyBackend(pool), light: LIGHT_TEST_SOURCE });
  store = fixtureStore('lamports');
  app = lmdbServer(store, { prover: (data) => new RefractValidityProver({ data, service }) }).app;
  await app.ready();
}, 3_600_000);

afterAll(async () => {
  await app?.close();
  await store?.close();
  await pool?.close();
});

describe("validity proofs from the store with Light's keys", () => {
  test('getValidityProof for an indexed account: the compressedProof passes the on-chain check', async () => {
    for (const method of ['getValidityProof']) {
      const res = await rpcResult(app, method, { hashes: [PAYER_HASH] });
      const v = res.value;
      const publics = [big(v.roots[0]), big(v.leaves[0])];
      const vk = vkFromProgram(so, 'mainnet_inclusion_26_1', 3);
      expect(verifyOnChain(vk, v.compressedProof, publics), method).toBe(true);
      expect(verifyOnChain(vk, v.compressedProof, [publics[0]!, 1n])).toBe(false);
    }
  }, 120_000);

  test('getValidityProofV2 (what stateless.js getValidityProofV0 calls) for the same account', async () => {
    const res = await rpcResult(app, 'getValidityProofV2', { hashes: [PAYER_HASH] });
    const [acc] = res.value.accounts;
    expect(verifyOnChain(vkFromProgram(so, 'mainnet_inclusion_26_1', 3), res.value.compressedProof, [big(acc.root), big(acc.hash)])).toBe(true);
  }, 120_000);

  test('a new address (non-inclusion_26_1) and an account with a new address (combined_26_1_1)', async () => {
    const a = (await rpcResult(app, 'getValidityProof', { newAddressesWithTrees: [{ address: NEW_ADDRESS, tree: AMT1 }] })).value;
    expect(verifyOnChain(vkFromProgram(so, 'non-inclusion_26_1', 3), a.compressedProof, [big(a.roots[0]), big(NEW_ADDRESS)])).toBe(true);
    const c = (await rpcResult(app, 'getValidityProof', { hashes: [PAYER_HASH], newAddressesWithTrees: [{ address: NEW_ADDRESS, tree: AMT1 }] })).value;
    const publics = [big(c.roots[0]), big(c.leaves[0]), big(c.roots[1]), big(c.leaves[1])];
    expect(verifyOnChain(vkFromProgram(so, 'combined_26_1_1', 5), c.compressedProof, publics)).toBe(true);
  }, 120_000);
});
