/**
 * Light's keys behind the API: ProofService proves every shape Light ships a key for with Light's
 * key (never Refract's own circuits unless `ownCircuits`), `POST /prove` (sync and `X-Async`)
 * answers Light's `{ar, bs, krs}` for Light's request bodies (legacy with nextIndex, v2 with
 * publicInputHash), and the answers pass Light's on-chain equation (@noble/curves, VK from the
 * released program). A shape without a Light key and a key not set up give clear errors.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ProofBackend } from '../src/prover/run/backend.ts';
import { ProverPool } from '../src/prover/run/pool.ts';
import { ProverError } from '../src/prover/errors.ts';
import { lightKeyByName } from '../src/prover/keys/lightKeys.ts';
import { LightProver } from '../src/prover/run/lightProver.ts';
import { compressGnarkProof } from '../src/prover/engine/proofEncoding.ts';
import { ProofService } from '../src/prover/run/proofService.ts';
import { toProverRequest, type ValidityProofInputs } from '../src/prover/engine/witness.ts';
import { registerProveRoute } from '../src/rpc/http/proveRoute.ts';
import { lightInputsFor } from './helpers/lightInputs.ts';
import { ensureLightKeys, LIGHT_TEST_KEYS, LIGHT_TEST_SOURCE, lightOnlyBackend } from './helpers/lightKeys.ts';
import { pinocchioProgram, verifyOnChain, vkFromProgram } from './helpers/lightVerify.ts';

const NAMES = ['mainnet_inclusion_26_1', 'non-inclusion_26_1', 'combined_26_1_1', 'inclusion_32_1', 'non-inclusion_40_1', 'combined_32_40_1_1'];
let so: Uint8Array;
let pool: ProverPool;
let service: ProofService;
const light = LIGHT_TEST_SOURCE;
let app: FastifyInstance;

const counter = { own: 0 };
let ownBackend: ProofBackend;

const verify = (name: string, gnark: Parameters<typeof compressGnarkProof>[0], publics: bigint[]) =>
  verifyOnChain(vkFromProgram(so, name, publics.length + 1), compressGnarkProof(gnark), publics);

beforeAll(async () => {
  const pkg = await ensureLightKeys(NAMES);
  so = pinocchioProgram(pkg);
  pool = new ProverPool({ keysDir: LIGHT_TEST_KEYS, size: 2, tableFiles: false });
  ownBackend = lightOnlyBackend(pool, counter);
  service = new ProofService({ backend: ownBackend, light, timeoutMs: 60_000 });
  app = Fastify();
  registerProveRoute(app, { service, env: {} });
  await app.ready();
}, 3_600_000);

afterAll(async () => {
  await app?.close();
  await pool?.close();
});

describe('ProofService with Light keys', () => {
  test('every tested shape is proven with Light\'s key and verifies on chain; own circuits untouched', async () => {
    for (const name of NAMES) {
      const k = lightKeyByName(name)!;
      const p = await service.prove(lightInputsFor(k, 7));
      expect(p.circuitId).toBe(name);
      expect(p.keys).toBe('light');
      expect(verifyOnChain(vkFromProgram(so, name, p.publicSignals.length + 1), p.compressedProof, p.publicSignals.map(BigInt))).toBe(true);
    }
    expect(counter.own).toBe(0);
  }, 300_000);

  test('a shape Light ships no key for: unsupported_shape naming the files and --own-circuits; with ownCircuits it goes to the own backend', async () => {
    const k = lightKeyByName('mainnet_inclusion_26_1')!;
    const five: ValidityProofInputs = { accounts: Array.from({ length: 5 }, (_, i) => lightInputsFor(k, i + 1).accounts[0]!), addresses: [] };
    const e = await service.prove(five).catch((x: unknown) => x as ProverError);
    expect(e).toBeInstanceOf(ProverError);
    expect((e as ProverError).code).toBe('unsupported_shape');
    expect((e as ProverError).message).toContain('mainnet_inclusion_26_4.key');
    expect((e as ProverError).message).toContain('--own-circuits');
    // v2 inclusion × 8: Refract registers it, Light ships no key for it
    const k2 = lightKeyByName('inclusion_32_1')!;
    const eight: ValidityProofInputs = { version: 2, accounts: Array.from({ length: 8 }, (_, i) => lightInputsFor(k2, i + 1).accounts[0]!), addresses: [] };
    expect(((await service.prove(eight).catch((x: unknown) => x)) as ProverError).code).toBe('unsupported_shape');
    const own = new ProofService({ backend: ownBackend, light, ownCircuits: true });
    const before = counter.own;
    await own.prove(eight).catch(() => undefined);
    expect(counter.own).toBe(before + 1);
  });

  test('a Light key not set up yet: not_ready "… retry later" naming the file and the package', async () => {
    const none = new ProofService({ backend: ownBackend, light: { ready: () => false } });
    const e = (await none.prove(lightInputsFor(lightKeyByName('inclusion_32_1')!, 1)).catch((x: unknown) => x)) as ProverError;
    expect(e.code).toBe('not_ready');
    expect(e.message).toMatch(/^Light's proving key for inclusion_32_1 is not set up yet \(inclusion_32_1\.key from @lightprotocol\/zk-compression-cli@0\.27\.0.*retry later/);
    // while the daemon converts the keys in the background, the answer says so instead
    const converting = new ProofService({ backend: ownBackend, light: { ready: () => false, pending: () => 'being converted in the background by `refract setup --light-keys` (pid 42)' } });
    const e2 = (await converting.prove(lightInputsFor(lightKeyByName('inclusion_32_1')!, 1)).catch((x: unknown) => x)) as ProverError;
    expect([e2.code, e2.message]).toEqual(['not_ready', "Light's proving key for inclusion_32_1 is being converted in the background by `refract setup --light-keys` (pid 42); retry later"]);
  });
});

describe('POST /prove with Light keys', () => {
  test('sync: Light\'s request bodies → {ar, bs, krs} that verify on chain', async () => {
    for (const name of NAMES) {
      const inputs = lightInputsFor(lightKeyByName(name)!, 8);
      const body = toProverRequest(inputs);
      const res = await app.inject({ method: 'POST', url: '/prove', payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      expect(res.statusCode, res.body).toBe(200);
      const json = JSON.parse(res.body);
      expect(Object.keys(json)).toEqual(['ar', 'bs', 'krs']);
      const p = await service.prove(inputs); // the same publics
      expect(verify(name, json, p.publicSignals.map(BigInt))).toBe(true);
    }
  }, 300_000);

  test('async (X-Async): 202, then the status route has a proof that verifies on chain', async () => {
    const inputs = lightInputsFor(lightKeyByName('mainnet_inclusion_26_1')!, 9);
    const sub = await app.inject({ method: 'POST', url: '/prove', payload: JSON.stringify(toProverRequest(inputs)), headers: { 'content-type': 'application/json', 'x-async': 'true' } });
    expect(sub.statusCode, sub.body).toBe(202);
    const { job_id } = JSON.parse(sub.body);
    let done: { status: string; result?: { proof: Parameters<typeof compressGnarkProof>[0] } } = { status: 'queued' };
    for (let i = 0; i < 300 && done.status !== 'completed' && done.status !== 'failed'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      done = JSON.parse((await app.inject({ method: 'GET', url: `/prove/status?job_id=${job_id}` })).body);
    }
    expect(done.status).toBe('completed');
    const publics = inputs.accounts.flatMap((a) => [a.root]).concat(inputs.accounts.map((a) => a.leaf)).map((b) => BigInt(`0x${Buffer.from(b).toString('hex')}`));
    expect(verify('mainnet_inclusion_26_1', done.result!.proof, publics)).toBe(true);
  }, 120_000);

  test('inputs that do not satisfy the circuit: 400 proving_error naming the input and the circuit, no proof', async () => {
    const inputs = lightInputsFor(lightKeyByName('mainnet_inclusion_26_1')!, 10);
    inputs.accounts[0]!.pathElements[3] = inputs.accounts[0]!.leaf;
    const res = await app.inject({ method: 'POST', url: '/prove', payload: JSON.stringify(toProverRequest(inputs)), headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.body).toMatch(/accounts\[0\]: leaf .* folds to root .*, not the given root .*circuit mainnet_inclusion_26_1/);
    expect(res.body).not.toContain('"ar"');
  }, 60_000);
});

describe('LightProver bounds', () => {
  test('more than maxPending proofs: queue_full; a proof slower than timeoutMs: timeout; the prover works after both', async () => {
    const k = lightKeyByName('mainnet_inclusion_26_1')!;
    const small = new LightProver({ keysDir: LIGHT_TEST_KEYS, size: 1, maxPending: 1, timeoutMs: 1 });
    try {
      const first = small.prove(lightInputsFor(k, 20)).catch((e: unknown) => e as ProverError);
      const second = (await small.prove(lightInputsFor(k, 21)).catch((e: unknown) => e)) as ProverError;
      expect(second.code).toBe('queue_full');
      expect(((await first) as ProverError).code).toBe('timeout');
    } finally {
      await small.close();
    }
    const again = new LightProver({ keysDir: LIGHT_TEST_KEYS, size: 1 });
    const p = await again.prove(lightInputsFor(k, 22)).finally(() => again.close());
    expect(verifyOnChain(vkFromProgram(so, k.name, 3), p.compressedProof, p.publics)).toBe(true);
  }, 120_000);
});
