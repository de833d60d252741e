/**
 * Differential check against Light's own prover (package/bin/prover-linux-x64, on 127.0.0.1), every
 * key against the release that ships it: the 18 keys of CLI 0.27.0 against 0.27.0's prover, and the
 * six only CLI 0.18.0 ships (inclusion of 8, combined 2×2 … 4×2) against 0.18.0's prover (its older
 * request schema: the same entries under `input-compressed-accounts` / `new-addresses`). The same
 * inputs go to it and to Refract's `POST /prove`; both answers must pass Light's on-chain equation
 * (@noble/curves; VK from the released program, or from the key for the six) — byte equality is not
 * expected, proofs are randomized. Refract's proof of every key also fails that equation with one byte
 * changed in A, B or C, with a wrong public input and with A not negated, and its JSON is Light's (0x +
 * 64 lowercase hex, uncompressed). A request whose path does not fold is refused by both.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LIGHT_KEYS, lightWitness } from '../src/prover/keys/lightKeys.ts';
import { ProverPool } from '../src/prover/run/pool.ts';
import { compressGnarkProof, negateG1, parseHex, toHex32, type GnarkProofJson } from '../src/prover/engine/proofEncoding.ts';
import { ProofService } from '../src/prover/run/proofService.ts';
import { toProverRequest } from '../src/prover/engine/witness.ts';
import { registerProveRoute } from '../src/rpc/http/proveRoute.ts';
import { lightInputsFor, seeded } from './helpers/lightInputs.ts';
import { ensureLightKeys, LIGHT_TEST_KEYS, LIGHT_TEST_SOURCE, lightOnlyBackend, lightPackage018 } from './helpers/lightKeys.ts';
import { startReferenceProver, type ReferenceProver } from './helpers/lightReferenceProver.ts';
import { lightVerifyingKey, pinocchioProgram, verifyOnChain } from './helpers/lightVerify.ts';

let so: Uint8Array;
let ref: ReferenceProver;
let ref018: ReferenceProver;
let pool: ProverPool;
let app: FastifyInstance;

beforeAll(async () => {
  const pkg = await ensureLightKeys();
  so = pinocchioProgram(pkg);
  [ref, ref018] = await Promise.all([startReferenceProver(pkg), startReferenceProver(lightPackage018(), '0.18.0')]);
  pool = new ProverPool({ keysDir: LIGHT_TEST_KEYS, size: 2, tableFiles: false });
  app = Fastify();
  registerProveRoute(app, { service: new ProofService({ backend: lightOnlyBackend(pool), light: LIGHT_TEST_SOURCE }), env: {} });
  await app.ready();
}, 3_600_000);

afterAll(async () => {
  await ref?.stop();
  await ref018?.stop();
  await app?.close();
  await pool?.close();
});

describe("Refract vs Light's prover on the same requests", () => {
  for (const k of LIGHT_KEYS) {
    test(`${k.name} (Light's prover ${k.pkg})`, async () => {
      const light = k.pkg === '0.27.0' ? ref : ref018;
      const inputs = lightInputsFor(k, 11);
      const req = toProverRequest(inputs);
      const theirs = await fetch(`${light.url}/prove`, { method: 'POST', body: light.body(req), headers: { 'content-type': 'application/json' } });
      expect(theirs.status, await theirs.clone().text()).toBe(200);
      const ours = await app.inject({ method: 'POST', url: '/prove', payload: JSON.stringify(req), headers: { 'content-type': 'application/json' } });
      expect(ours.statusCode, ours.body).toBe(200);
      const publics = lightWitness(inputs).publics;
      const vk = lightVerifyingKey(so, LIGHT_TEST_KEYS, k.name, publics.length);
      expect(verifyOnChain(vk, compressGnarkProof(await theirs.json()), publics)).toBe(true);
      const gnark = JSON.parse(ours.body) as GnarkProofJson;
      const proof = compressGnarkProof(gnark);
      expect(verifyOnChain(vk, proof, publics)).toBe(true);
      // one byte changed in each part, a wrong public input, A not negated: all fail
      for (const part of ['a', 'b', 'c'] as const) {
        const bad = { ...proof, [part]: Uint8Array.from(proof[part]) };
        bad[part][bad[part].length - 1]! ^= 1;
        expect(verifyOnChain(vk, bad, publics)).toBe(false);
      }
      expect(verifyOnChain(vk, proof, publics.map((x, i) => (i === 0 ? x + 1n : x)))).toBe(false);
      const [x, y] = negateG1(parseHex(gnark.ar[0]), parseHex(gnark.ar[1]));
      expect(verifyOnChain(vk, compressGnarkProof({ ...gnark, ar: [toHex32(x), toHex32(y)] }), publics)).toBe(false);
      // Light's prover JSON: 0x + 64 lowercase hex, uncompressed
      for (const v of [...gnark.ar, ...gnark.bs.flat(), ...gnark.krs]) expect(v).toMatch(/^0x[0-9a-f]{64}$/);
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
