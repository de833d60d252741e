// Real Groth16 validity proofs over HTTP on the indexed golden fixtures: getValidityProof /
// getValidityProofV2 through fastify + LMDB + RefractValidityProver + ProofService + the Piscina
// pool (keys: inclusion_26_1 and non-inclusion_26_1 in the shared cached test keys dir), plus
// POST /prove (Light-compatible), the external-prover backend (--prover-url), the in-process queue's
// bound and timeout, keys readiness, and the proof metrics.
import { cpSync, existsSync } from 'node:fs';
import path from 'node:path';
import bs58 from 'bs58';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MAX_NODE_LABELS, Metrics } from '../src/metrics.ts';
import { LocalBackend, NODE_NAME, RemoteBackend } from '../src/prover/run/backend.ts';
import { compressGnarkProof, compressedProofToJson } from '../src/prover/engine/proofEncoding.ts';
import { ProverError } from '../src/prover/errors.ts';
import { DEV_PTAU, ensureDevPtau, HIGHEST_ADDRESS_PLUS_ONE, initialAddressTreeProof, syntheticAccount, TEST_KEYS_DIR, verifyCompressedProof } from './helpers/proverFixtures.ts';
import { registerProveRoute } from '../src/rpc/http/proveRoute.ts';
import { ProverPool } from '../src/prover/run/pool.ts';
import { KeyReadiness } from '../src/prover/keys/keyReadiness.ts';
import { ProofService } from '../src/prover/run/proofService.ts';
import { setupCircuits } from '../src/prover/keys/keySetup.ts';
import { keyFiles, MANIFEST_FILE } from '../src/prover/keys/layout.ts';
import { terminateCurve } from '../src/prover/engine/snark.ts';
import { RefractValidityProver } from '../src/rpc/validityProver.ts';
import { toProverRequest } from '../src/prover/engine/witness.ts';
import type { Store } from '../src/store/store.ts';
import { snapshot, tempDir } from './helpers/photon.ts';
import { fixtureStore, lmdbServer, rpcCall, rpcResult } from './helpers/rpcLmdb.ts';

const IDS = ['inclusion_26_1', 'non-inclusion_26_1'];
const AMT1 = 'amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2';
const PAYER_HASH = '2veKUPKieajFG7yzPNGARHq7jYS1FiXcXG8P9Txhvhcn';
/** An input of a lamport_transfers transaction: spent, but its leaf is not nullified yet. */
const SPENT_HASH = 'xnGjgxV7eeAda2tQtFL8VZHsKj4RcbU6o3rbpYXcaqm';
const NEW_ADDRESS = bs58.encode(Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 0 : i * 7 + 1)));

let pool: ProverPool;
let metrics: Metrics;
let service: ProofService;
let store: Store;
let app: FastifyInstance;

const decode = (s: string) => bs58.decode(s);

beforeAll(async () => {
  await setupCircuits({ keysDir: TEST_KEYS_DIR, ptau: await ensureDevPtau(), ptauInsecure: true, circuits: IDS, log: () => {} });
  pool = new ProverPool({ keysDir: TEST_KEYS_DIR, size: 2 });
  await pool.warm(IDS);
  metrics = new Metrics({ defaultMetrics: false });
  const readiness = new KeyReadiness(TEST_KEYS_DIR);
  await readiness.refresh();
  service = new ProofService({ backend: new LocalBackend(pool), metrics, readiness, timeoutMs: 60_000 });
  store = fixtureStore('lamports');
  app = lmdbServer(store, { prover: (data) => new RefractValidityProver({ data, service }) }).app;
  registerProveRoute(app, { service, env: {} });
  await app.ready();
}, 600_000);

afterAll(async () => {
  await app?.close();
  await store?.close();
  await pool?.close();
  await terminateCurve();
});

describe('getValidityProof over HTTP on lamport_transfers', () => {
  test('payer (1 account): roots, rootIndices, leafIndices, leaves, merkleTrees = snapshot; the proof verifies with our vkey', async () => {
    const t0 = performance.now();
    const res = await rpcResult(app, 'getValidityProof', { hashes: [PAYER_HASH] });
    const ms = performance.now() - t0;
    const snap = snapshot('lamport_transfers-payer-validity-proof');
    const { compressedProof, ...rest } = res.value;
    const { compressedProof: _s, ...snapRest } = snap.value;
    expect(rest).toEqual(snapRest);
    expect(res.context).toEqual(snap.context);
    expect([compressedProof.a.length, compressedProof.b.length, compressedProof.c.length]).toEqual([32, 64, 32]);
    expect(await verifyCompressedProof(TEST_KEYS_DIR, 'inclusion_26_1', compressedProof, [decode(rest.roots[0]), decode(rest.leaves[0])])).toBe(true);
    // A different leaf must not verify.
    expect(await verifyCompressedProof(TEST_KEYS_DIR, 'inclusion_26_1', compressedProof, [decode(rest.roots[0]), '1'])).toBe(false);
    console.log(`getValidityProof (inclusion_26_1) over HTTP: ${ms.toFixed(0)} ms`);
  });

  test('getValidityProofV2 for the same account: V2 shape, verifying proof', async () => {
    const res = await rpcResult(app, 'getValidityProofV2', { hashes: [PAYER_HASH] });
    const [acc] = res.value.accounts;
    expect(acc).toMatchObject({ hash: PAYER_HASH, root: 'DQ366kMe5qRsNQecusoD3tzJk79CT88MuPpRhx3nSzz', rootIndex: { rootIndex: 5, proveByIndex: false }, leafIndex: 3 });
    expect(acc.merkleContext.tree).toBe('smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT');
    expect(res.value.addresses).toEqual([]);
    expect(await verifyCompressedProof(TEST_KEYS_DIR, 'inclusion_26_1', res.value.compressedProof, [decode(acc.root), decode(acc.hash)])).toBe(true);
  });

  test('a new address (newAddresses and newAddressesWithTrees): non-inclusion proof in amt1 verifies', async () => {
    const a = await rpcResult(app, 'getValidityProof', { newAddresses: [NEW_ADDRESS] });
    const b = await rpcResult(app, 'getValidityProof', { newAddressesWithTrees: [{ address: NEW_ADDRESS, tree: AMT1 }] });
    // An empty list beside the other one counts as absent (Photon: is_empty()), so the address is proved.
    const c = await rpcResult(app, 'getValidityProof', { newAddresses: [NEW_ADDRESS], newAddressesWithTrees: [] });
    const d = await rpcResult(app, 'getValidityProof', { newAddresses: [], newAddressesWithTrees: [{ address: NEW_ADDRESS, tree: AMT1 }] });
    for (const res of [a, b, c, d]) {
      const v = res.value;
      expect(v.leaves).toEqual([NEW_ADDRESS]);
      expect(v.merkleTrees).toEqual([AMT1]);
      expect(v.leafIndices).toEqual([0]); // the low element of the empty tree
      const expectedRoot = initialAddressTreeProof(1n).root;
      expect(Buffer.from(decode(v.roots[0])).equals(Buffer.from(expectedRoot))).toBe(true);
      expect(await verifyCompressedProof(TEST_KEYS_DIR, 'non-inclusion_26_1', v.compressedProof, [decode(v.roots[0]), decode(NEW_ADDRESS)])).toBe(true);
    }
  });

  test('a spent hash, an unknown hash and an existing address fail with specific messages', async () => {
    const spent = await rpcCall(app, 'getValidityProof', { hashes: [SPENT_HASH] });
    expect(spent.status).toBe(400);
    expect(spent.body.error.message).toBe(`Validation Error: Account ${SPENT_HASH} is spent: a validity proof can only cover unspent accounts`);
    const spentV2 = await rpcCall(app, 'getValidityProofV2', { hashes: [SPENT_HASH] });
    expect(spentV2.body.error.message).toMatch(/is spent/);

    const unknown = bs58.encode(Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 0 : 200 - i)));
    const miss = await rpcCall(app, 'getValidityProof', { hashes: [unknown] });
    expect(miss.status).toBe(404);
    expect(miss.body.error.message).toBe(`Record Not Found: Account ${unknown} does not exist`);

    // An address already in amt1 (a separate store with one indexed element).
    const other = fixtureStore('empty');
    const existing = Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 0 : 3 * i));
    other.write((w) => w.putIndexedElement(decode(AMT1), { leafIndex: 2, value: existing, nextIndex: 1, nextValue: Buffer.from((HIGHEST_ADDRESS_PLUS_ONE).toString(16).padStart(64, '0'), 'hex'), seq: 1n }));
    const srv = lmdbServer(other, { prover: (data) => new RefractValidityProver({ data, service }) }).app;
    const dup = await rpcCall(srv, 'getValidityProof', { newAddressesWithTrees: [{ address: bs58.encode(existing), tree: AMT1 }] });
    expect(dup.status).toBe(400);
    expect(dup.body.error.message).toBe(`Validation Error: Address ${bs58.encode(existing)} already exists in address tree ${AMT1} (leaf 2): a new-address proof needs an unused address`);
    await srv.close();
    await other.close();
  });

  test('an unsupported number of hashes or addresses lists the supported shapes', async () => {
    const five = Array.from({ length: 5 }, () => PAYER_HASH);
    const r = await rpcCall(app, 'getValidityProof', { hashes: five });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe(
      'Validation Error: no validity-proof circuit for 5 account(s) and 0 address(es); supported shapes: accounts only: 1, 2, 3, 4 or 8; addresses only: 1 or 2; accounts and addresses: 1–4 accounts with 1 or 2 addresses',
    );
    const three = await rpcCall(app, 'getValidityProof', { newAddresses: [NEW_ADDRESS, NEW_ADDRESS, NEW_ADDRESS] });
    expect(three.body.error.message).toMatch(/no validity-proof circuit for 0 account\(s\) and 3 address\(es\); supported shapes: /);
  });

  test('proof metrics: proofs, durations, queue wait, errors by type', async () => {
    const text = await metrics.registry.metrics();
    expect(Number(/refract_proofs_total\{circuit="inclusion_26_1"\} (\d+)/.exec(text)?.[1])).toBeGreaterThanOrEqual(2);
    expect(Number(/refract_proofs_total\{circuit="non-inclusion_26_1"\} (\d+)/.exec(text)?.[1])).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/refract_proof_duration_seconds_count\{circuit="inclusion_26_1"\} [1-9]/);
    expect(text).toMatch(/refract_proof_queue_wait_seconds_count\{circuit="inclusion_26_1"\} [1-9]/);
    expect(text).toMatch(/refract_proof_witness_seconds_count\{circuit="inclusion_26_1"\} [1-9]/);
    expect(text).toMatch(/refract_proof_batch_size_count [1-9]/);
    // Local proofs count under this process's node name (REFRACT_NODE_NAME or the host name).
    expect(text).toMatch(new RegExp(`refract_proofs_by_node_total\\{node="${NODE_NAME}"\\} [1-9]`));
  });

  test('refract_proofs_by_node_total keeps at most MAX_NODE_LABELS names; later names count as "other"', async () => {
    const m = new Metrics({ defaultMetrics: false });
    for (let i = 0; i < MAX_NODE_LABELS + 10; i++) m.countProofByNode(`node-${i}`);
    m.countProofByNode('node-0');
    const text = await m.registry.metrics();
    const series = text.split('\n').filter((l) => l.startsWith('refract_proofs_by_node_total{'));
    expect(series).toHaveLength(MAX_NODE_LABELS + 1);
    expect(series).toContain('refract_proofs_by_node_total{node="node-0"} 2');
    expect(series).toContain(`refract_proofs_by_node_total{node="node-${MAX_NODE_LABELS - 1}"} 1`);
    expect(series).toContain('refract_proofs_by_node_total{node="other"} 10');
  });
});

describe('POST /prove (reference prover JSON)', () => {
  test('an inclusion request → {ar, bs, krs} that compresses to a verifying proof', async () => {
    const inputs = { accounts: [syntheticAccount(7, 12)], addresses: [] };
    const res = await app.inject({ method: 'POST', url: '/prove', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(toProverRequest(inputs)) });
    expect(res.statusCode, res.body).toBe(200);
    const g = JSON.parse(res.body);
    expect(Object.keys(g)).toEqual(['ar', 'bs', 'krs']);
    for (const v of [...g.ar, ...g.bs.flat(), ...g.krs]) expect(v).toMatch(/^0x[0-9a-f]{64}$/);
    const c = compressedProofToJson(compressGnarkProof(g));
    expect(await verifyCompressedProof(TEST_KEYS_DIR, 'inclusion_26_1', c, [inputs.accounts[0]!.root, inputs.accounts[0]!.leaf])).toBe(true);
  });

  test('errors: malformed body → 400 malformed_body; wrong root → 400 proving_error; other methods → 405', async () => {
    const post = (payload: string) => app.inject({ method: 'POST', url: '/prove', headers: { 'content-type': 'application/json' }, payload });
    const bad = await post('{"circuitType": "inclusion",');
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body).code).toBe('malformed_body');
    const req = toProverRequest({ accounts: [syntheticAccount(8, 3)], addresses: [] });
    const badHex = await post(JSON.stringify({ ...req, inputCompressedAccounts: [{ ...req.inputCompressedAccounts![0]!, leaf: '0xzz' }] }));
    expect([badHex.statusCode, JSON.parse(badHex.body).code]).toEqual([400, 'malformed_body']);
    const noType = await post(JSON.stringify({ ...req, circuitType: undefined }));
    expect([noType.statusCode, JSON.parse(noType.body).code]).toEqual([400, 'malformed_body']);
    const noHeight = await post(JSON.stringify({ ...req, stateTreeHeight: undefined }));
    expect([noHeight.statusCode, JSON.parse(noHeight.body).code]).toEqual([400, 'malformed_body']);
    const wrongRoot = await post(JSON.stringify({ ...req, inputCompressedAccounts: [{ ...req.inputCompressedAccounts![0]!, root: toProverRequest({ accounts: [syntheticAccount(9, 3)], addresses: [] }).inputCompressedAccounts![0]!.root }] }));
    expect(wrongRoot.statusCode).toBe(400);
    expect(JSON.parse(wrongRoot.body)).toMatchObject({ code: 'proving_error', message: expect.stringMatching(/do not fold to the given state root/) });
    const five = await post(JSON.stringify({ ...req, inputCompressedAccounts: Array(5).fill(req.inputCompressedAccounts![0]) }));
    expect(JSON.parse(five.body)).toMatchObject({ code: 'proving_error', message: expect.stringMatching(/supported shapes/) });
    const get = await app.inject({ method: 'GET', url: '/prove' });
    expect([get.statusCode, get.body]).toEqual([405, '']);
  });

  test('with API keys configured: 401 unauthorized without a key, 200 with it', async () => {
    const srv = Fastify();
    registerProveRoute(srv, { service, apiKeys: ['s3cret'], env: {} });
    const payload = JSON.stringify(toProverRequest({ accounts: [syntheticAccount(10, 1)], addresses: [] }));
    const no = await srv.inject({ method: 'POST', url: '/prove', payload, headers: { 'content-type': 'application/json' } });
    expect([no.statusCode, JSON.parse(no.body).code]).toEqual([401, 'unauthorized']);
    const yes = await srv.inject({ method: 'POST', url: '/prove', payload, headers: { 'content-type': 'application/json', authorization: 'Bearer s3cret' } });
    expect(yes.statusCode).toBe(200);
    await srv.close();
  });

  test("a key's methods and rate limit apply: 403 without getValidityProof, 429 with Retry-After past its burst", async () => {
    const srv = Fastify();
    registerProveRoute(srv, {
      service,
      apiKeys: [
        { key: 'reader', name: 'reader', methods: ['getCompressedAccount'] },
        { key: 'prover', name: 'prover', methods: ['getValidityProofV2'], rateLimit: { ratePerSecond: 0.01, burst: 1 } },
      ],
      env: {},
    });
    const payload = JSON.stringify(toProverRequest({ accounts: [syntheticAccount(10, 1)], addresses: [] }));
    const as = (key: string) => srv.inject({ method: 'POST', url: '/prove', payload, headers: { 'content-type': 'application/json', 'x-api-key': key } });
    const reader = await as('reader');
    expect([reader.statusCode, JSON.parse(reader.body).code]).toEqual([403, 'forbidden']);
    expect(JSON.parse(reader.body).message).toMatch(/'reader' may not request proofs/);
    expect((await as('prover')).statusCode).toBe(200);
    const limited = await as('prover');
    expect([limited.statusCode, JSON.parse(limited.body).code]).toEqual([429, 'rate_limited']);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    await srv.close();
  });
});

describe('--prover-url: an external Light-compatible prover', () => {
  test('getValidityProof goes to {url}/prove; {ar,bs,krs} → compressedProof; non-2xx → error', async () => {
    // The external prover: another server exposing POST /prove (here backed by the same pool).
    const ext = Fastify();
    const seen: unknown[] = [];
    ext.addHook('preHandler', async (req) => void seen.push(req.body));
    registerProveRoute(ext, { service, env: {} });
    await ext.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(ext.server.address() as AddressInfo).port}`;
    const remote = new ProofService({ backend: new RemoteBackend(url), timeoutMs: 60_000 });
    const s2 = fixtureStore('lamports');
    const srv = lmdbServer(s2, { prover: (data) => new RefractValidityProver({ data, service: remote }) }).app;
    try {
      const res = await rpcResult(srv, 'getValidityProof', { hashes: [PAYER_HASH] });
      expect(seen).toHaveLength(1);
      expect(JSON.parse(seen[0] as string)).toMatchObject({ circuitType: 'inclusion', stateTreeHeight: 26, inputCompressedAccounts: [{ pathIndex: 3 }] });
      const v = res.value;
      expect(await verifyCompressedProof(TEST_KEYS_DIR, 'inclusion_26_1', v.compressedProof, [decode(v.roots[0]), decode(v.leaves[0])])).toBe(true);

      // The external prover rejects (wrong root): the API answers an error, never a proof.
      const acc = syntheticAccount(11, 2);
      const e = await remote.prove({ accounts: [{ ...acc, root: syntheticAccount(12, 2).root }], addresses: [] }).catch((x) => x);
      expect(e).toBeInstanceOf(ProverError);
      expect(e.code).toBe('remote_refused'); // its 400 proving_error
      expect(e.message).toMatch(/answered HTTP 400 proving_error: constraint not satisfied/);
    } finally {
      await srv.close();
      await s2.close();
      await ext.close();
    }
    const down = new ProofService({ backend: new RemoteBackend(url), timeoutMs: 5000 });
    const err = await down.prove({ accounts: [syntheticAccount(1, 1)], addresses: [] }).catch((x) => x);
    expect(err.code).toBe('queue_unavailable');
  });
});

describe('the in-process queue', () => {
  test('bounded: a request beyond maxPending → "Prover busy"; per-request timeout → "Proof timed out"', async () => {
    const bounded = new ProofService({ backend: new LocalBackend(pool, { maxPending: 1 }), timeoutMs: 60_000 });
    const a = bounded.prove({ accounts: [syntheticAccount(21, 1)], addresses: [] });
    const b = await bounded.prove({ accounts: [syntheticAccount(22, 1)], addresses: [] }).catch((x) => x);
    expect(b.code).toBe('queue_full');
    expect(b.message).toMatch(/prover queue is full \(1 proofs pending, limit 1\)/);
    await a;

    const slow = new ProofService({ backend: new LocalBackend(pool), timeoutMs: 1 });
    const t = await slow.prove({ accounts: [syntheticAccount(23, 1)], addresses: [] }).catch((x) => x);
    expect(t.code).toBe('timeout');
    expect(t.message).toMatch(/did not finish within 0\.0 s/);

    // Over JSON-RPC: 503 with the reason.
    const s3 = fixtureStore('lamports');
    const srv = lmdbServer(s3, { prover: (data) => new RefractValidityProver({ data, service: slow }) }).app;
    const r = await rpcCall(srv, 'getValidityProof', { hashes: [PAYER_HASH] });
    expect(r.status).toBe(503);
    expect(r.body.error.message).toMatch(/^Proof timed out: proof for inclusion_26_1 did not finish within/);
    await srv.close();
    await s3.close();
    await new Promise((res) => setTimeout(res, 3000)); // let the abandoned proofs drain
  });
});

describe('keys readiness', () => {
  test('missing keys → "Prover not available" naming the fix; GET /health-style report per circuit', async () => {
    const empty = new KeyReadiness(tempDir('refract-nokeys-'));
    await empty.refresh();
    const s = new ProofService({ backend: new LocalBackend(pool), readiness: empty });
    const s4 = fixtureStore('lamports');
    const srv = lmdbServer(s4, { prover: (data) => new RefractValidityProver({ data, service: s }) }).app;
    const r = await rpcCall(srv, 'getValidityProof', { hashes: [PAYER_HASH] });
    expect(r.status).toBe(503);
    expect(r.body.error.message).toMatch(/^Prover not available: proving keys for inclusion_26_1 are not ready: they are missing from .* \(0 of 19 circuits ready\); run `refract setup --keys /);
    expect(empty.health()).toMatchObject({ ready: 0, total: 19, circuits: { inclusion_26_1: false, v2_inclusion_32_1: false, 'v2_non-inclusion_40_1': false } });
    const ok = new KeyReadiness(TEST_KEYS_DIR);
    await ok.refresh();
    expect(ok.health().circuits).toMatchObject({ inclusion_26_1: true, 'non-inclusion_26_1': true });
    await srv.close();
    await s4.close();
  });

  test('keys that appear later (a `refract setup` run by hand) are noticed without a restart', async () => {
    const dir = tempDir('refract-latekeys-');
    const late = new KeyReadiness(dir, { circuits: ['inclusion_26_1'] });
    await late.refresh();
    expect(late.isReady('inclusion_26_1')).toBe(false);
    late.watchUntilComplete(50);
    // the circuit's files, then the manifest (not the whole shared dir: other files there, e.g. a
    // concurrent setup's lock, come and go while other test files run)
    const files = keyFiles(TEST_KEYS_DIR, 'inclusion_26_1');
    for (const f of [files.wasm, files.zkey, files.vkey, files.vkeySolana]) if (existsSync(f)) cpSync(f, path.join(dir, path.basename(f)));
    cpSync(path.join(TEST_KEYS_DIR, MANIFEST_FILE), path.join(dir, MANIFEST_FILE));
    for (let i = 0; i < 100 && !late.isReady('inclusion_26_1'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(late.isReady('inclusion_26_1')).toBe(true);
    expect(late.complete).toBe(true);
    await late.close();
  });
});
