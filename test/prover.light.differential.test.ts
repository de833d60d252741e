/**
 * Differential check against Light's own prover (package/bin/prover-linux-x64 of CLI 0.27.0, on
 * 127.0.0.1): the same `/prove` request bodies go to it and to Refract's `POST /prove`; both answers
 * must pass Light's on-chain equation (@noble/curves, VK from the released program) — byte equality
 * is not expected, proofs are randomized. A request whose path does not fold is refused by both.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LIGHT_KEYS, lightWitness } from '../src/prover/keys/lightKeys.ts';
import { ProverPool } from '../src/prover/run/pool.ts';
import { compressGnarkProof } from '../src/prover/engine/proofEncoding.ts';
import { ProofService } from '../src/prover/run/proofService.ts';
import { toProverRequest } from '../src/prover/engine/witness.ts';
import { registerProveRoute } from '../src/rpc/http/proveRoute.ts';
import { lightInputsFor, seeded } from './helpers/lightInputs.ts';
import { ensureLightKeys, LIGHT_TEST_KEYS, LIGHT_TEST_SOURCE, lightOnlyBackend } from './helpers/lightKeys.ts';
import { startReferenceProver, type ReferenceProver } from './helpers/lightReferenceProver.ts';
import { pinocchioProgram, verifyOnChain, vkFromProgram } from './helpers/lightVerify.ts';

const KEYS = LIGHT_KEYS.filter((k) => k.pkg === '0.27.0');
let so: Uint8Array;
let ref: ReferenceProver;
let pool: ProverPool;
let app: FastifyInstance;


beforeAll(async () => {
  const pkg = await ensureLightKeys(KEYS.map((k) => k.name));
  so = pinocchioProgram(pkg);
  ref = await startReferenceProver(pkg);
  pool = new ProverPool({ keysDir: LIGHT_TEST_KEYS, size: 2, tableFiles: false });
  app = Fastify();
  registerProveRoute(app, { service: new ProofService({ backend: lightOnlyBackend(pool), light: LIGHT_TEST_SOURCE }), env: {} });
  await app.ready();
}, 3_600_000);

afterAll(async () => {
  await ref?.stop();
  await app?.close();
  await pool?.close();
});

describe("Refract vs Light's prover on the same requests", () => {
  for (const k of KEYS) {
    test(k.name, async () => {
      const inputs = lightInputsFor(k, 11);
      const body = JSON.stringify(toProverRequest(inputs));
      const theirs = await fetch(`${ref.url}/prove`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      expect(theirs.status, await theirs.clone().text()).toBe(200);
      const ours = await app.inject({ method: 'POST', url: '/prove', payload: body, headers: { 'content-type': 'application/json' } });
      expect(ours.statusCode, ours.body).toBe(200);
      const publics = lightWitness(inputs).publics;
      const vk = vkFromProgram(so, k.name, publics.length + 1);
      expect(verifyOnChain(vk, compressGnarkProof(await theirs.json()), publics)).toBe(true);
      expect(verifyOnChain(vk, compressGnarkProof(JSON.parse(ours.body)), publics)).toBe(true);
    }, 120_000);
  }

  test('a path that does not fold: both refuse with 400, no proof', async () => {
    const inputs = lightInputsFor(LIGHT_KEYS[0]!, 12);
    inputs.accounts[0]!.pathElements[0] = seeded(4242);
    const body = JSON.stringify(toProverRequest(inputs));
    const theirs = await fetch(`${ref.url}/prove`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    const ours = await app.inject({ method: 'POST', url: '/prove', payload: body, headers: { 'content-type': 'application/json' } });
    expect(theirs.status).toBe(400);
    expect(ours.statusCode).toBe(400);
    expect(await theirs.text()).toMatch(/constraint #\d+ is not satisfied/);
    expect(ours.body).toMatch(/accounts\[0\]: .* folds to root .*mainnet_inclusion_26_1/);
  }, 60_000);
});
