// Async proving as the reference prover serves it (spec prover.md §2.3, §5.3): `POST /prove` with
// `X-Async: true` (or `?async=true`) answers 202 with a job; `GET /prove/status?job_id=…` answers
// queued / processing (202), completed with the proof (200), failed with the proving error (202);
// 404 `job_not_found`, 400 `invalid_job_id`; jobs are forgotten after their TTL. In-process (the
// Piscina pool behind a LocalBackend) and BullMQ (two API instances on one Redis: submit on one,
// status on the other). Keys: inclusion_26_1 from the shared test keys cache. Three real proofs.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LocalBackend, type ProofBackend } from '../src/prover/run/backend.ts';
import { BullBackend, startProverNode, type ProverNode } from '../src/prover/run/bullmq.ts';
import { JOB_ID_PATTERN, proofJobId } from '../src/prover/run/proofJobs.ts';
import { compressGnarkProof, type GnarkProofJson } from '../src/prover/engine/proofEncoding.ts';
import { DEV_PTAU, ensureDevPtau, syntheticAccount, TEST_KEYS_DIR, verifyCompressedProof } from './helpers/proverFixtures.ts';
import { registerProveRoute } from '../src/rpc/http/proveRoute.ts';
import { ProverPool } from '../src/prover/run/pool.ts';
import { ProofService } from '../src/prover/run/proofService.ts';
import { setupCircuits } from '../src/prover/keys/keySetup.ts';
import { terminateCurve } from '../src/prover/engine/snark.ts';
import { buildCircuitInput, toProverRequest, type ValidityProofInputs } from '../src/prover/engine/witness.ts';
import { sleep } from './helpers/jsonRpc.ts';

const REDIS = process.env.REFRACT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUEUE = `refract-test-async-${process.pid}-${Date.now()}`;
const ID = 'inclusion_26_1';
const JSON_HEADERS = { 'content-type': 'application/json' };

let pool: ProverPool;
let service: ProofService;
let app: FastifyInstance;
const closers: (() => Promise<unknown>)[] = [];

const account = (seed: number, leafIndex: number): ValidityProofInputs => ({ accounts: [syntheticAccount(seed, leafIndex)], addresses: [] });
/** The same account with another tree's root: the witness fails (the path does not fold to it). */
const wrongRoot = (seed: number): ValidityProofInputs => {
  const a = syntheticAccount(seed, 4);
  return { accounts: [{ ...a, root: syntheticAccount(seed + 1000, 4).root }], addresses: [] };
};
const body = (inputs: ValidityProofInputs) => JSON.stringify(toProverRequest(inputs));

async function submit(srv: FastifyInstance, inputs: ValidityProofInputs, how: 'header' | 'query' = 'header', headers: Record<string, string> = {}) {
  const res = await srv.inject({
    method: 'POST',
    url: how === 'query' ? '/prove?async=true' : '/prove',
    payload: body(inputs),
    headers: { ...JSON_HEADERS, ...(how === 'header' ? { 'x-async': 'true' } : {}), ...headers },
  });
  return { status: res.statusCode, body: JSON.parse(res.body) };
}

async function status(srv: FastifyInstance, query: string, headers: Record<string, string> = {}) {
  const res = await srv.inject({ method: 'GET', url: `/prove/status${query}`, headers });
  return { status: res.statusCode, body: JSON.parse(res.body), headers: res.headers };
}

/** Polls the status route until the job is completed or failed; returns the last answer and every state seen. */
async function pollUntilDone(srv: FastifyInstance, jobId: string, ms = 60_000) {
  const seen: string[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const r = await status(srv, `?job_id=${jobId}`);
    seen.push(r.body.status);
    if (r.body.status === 'completed' || r.body.status === 'failed') return { ...r, seen };
    expect(r.status).toBe(202);
    await sleep(50);
  }
  throw new Error(`job ${jobId} not finished within ${ms} ms; states seen: ${seen.join(', ')}`);
}

/** A completed status body's proof verifies for the account (root, leaf) with our vkey. */
async function verifies(proof: GnarkProofJson, inputs: ValidityProofInputs): Promise<boolean> {
  const [a] = inputs.accounts;
  return verifyCompressedProof(TEST_KEYS_DIR, ID, compressGnarkProof(proof), [a!.root, a!.leaf]);
}

function expectGnarkShape(p: GnarkProofJson): void {
  const hex = expect.stringMatching(/^0x[0-9a-f]{64}$/);
  expect(p).toEqual({ ar: [hex, hex], bs: [[hex, hex], [hex, hex]], krs: [hex, hex] });
}

beforeAll(async () => {
  await setupCircuits({ keysDir: TEST_KEYS_DIR, ptau: await ensureDevPtau(), ptauInsecure: true, circuits: [ID], log: () => {} });
  pool = new ProverPool({ keysDir: TEST_KEYS_DIR, size: 1 });
  await pool.warm([ID]);
  service = new ProofService({ backend: new LocalBackend(pool), timeoutMs: 60_000 });
  app = Fastify();
  registerProveRoute(app, { service, env: {} });
  await app.ready();
}, 300_000);

afterAll(async () => {
  for (const c of closers.reverse()) await c().catch(() => {});
  await app?.close();
  await pool?.close();
  await terminateCurve();
});

describe('async /prove, in-process queue', () => {
  test('X-Async: 202 with the job; status polls queued/processing then completed with a verifying proof; the sync answer has the same shape', async () => {
    const inputs = account(31, 5);
    const sub = await submit(app, inputs);
    expect(sub.status).toBe(202);
    const jobId = proofJobId(ID, buildCircuitInput(inputs).input);
    expect(sub.body).toEqual({
      job_id: jobId,
      status: 'queued',
      circuit_type: 'inclusion',
      queue: 'in-process',
      estimated_time: '1-3 seconds',
      status_url: `/prove/status?job_id=${jobId}`,
      message: 'Proof generation queued for inclusion circuit. Use status_url to check progress.',
    });
    expect(jobId).toMatch(JOB_ID_PATTERN);

    const first = await status(app, `?job_id=${jobId}`);
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ job_id: jobId, status: expect.stringMatching(/^(queued|processing)$/), circuit_type: 'inclusion' });
    expect(new Date(first.body.created_at).getTime()).toBeGreaterThan(Date.now() - 60_000);

    const done = await pollUntilDone(app, sub.body.status_url.split('job_id=')[1]);
    expect({ status: done.status, body: done.body }).toMatchObject({ status: 200 });
    expect(Object.keys(done.body).sort()).toEqual(['job_id', 'result', 'status']);
    expect(done.body).toMatchObject({ job_id: jobId, status: 'completed' });
    expect(Object.keys(done.body.result).sort()).toEqual(['proof', 'proof_duration_ms']);
    expect(done.body.result.proof_duration_ms).toBeGreaterThan(0);
    expectGnarkShape(done.body.result.proof);
    expect(await verifies(done.body.result.proof, inputs)).toBe(true);
    expect(await verifies(done.body.result.proof, account(32, 5))).toBe(false);
    console.log(`in-process async states seen: ${[...new Set(done.seen)].join(' → ')}`);

    // The query form, identical inputs: the same job, already proved (no second proof).
    const again = await submit(app, inputs, 'query');
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ job_id: jobId, status: 'already_queued', deduplicated: true, status_url: `/prove/status?job_id=${jobId}` });
    const cached = await status(app, `?job_id=${jobId.toUpperCase()}`);
    expect(cached.status).toBe(200);
    expect(cached.body.result.proof).toEqual(done.body.result.proof);

    // Without X-Async (or with X-Sync) the answer is the sync 200 {ar, bs, krs}.
    const sync = await app.inject({ method: 'POST', url: '/prove', payload: body(inputs), headers: { ...JSON_HEADERS, 'x-sync': 'true' } });
    expect(sync.statusCode).toBe(200);
    expectGnarkShape(JSON.parse(sync.body));
    expect(await verifies(JSON.parse(sync.body), inputs)).toBe(true);
  }, 120_000);

  test('a failing witness: the job is accepted, then fails with the proving error; a new submission starts afresh', async () => {
    const inputs = wrongRoot(33);
    const sub = await submit(app, inputs);
    expect([sub.status, sub.body.status]).toEqual([202, 'queued']);
    const done = await pollUntilDone(app, sub.body.job_id);
    expect(done.status).toBe(202);
    expect(done.body).toMatchObject({
      job_id: sub.body.job_id,
      status: 'failed',
      code: 'proving_error',
      error: expect.stringMatching(/do not fold to the given state root/),
      message: expect.stringMatching(/^Job processing failed: .*do not fold to the given state root/),
      circuit_type: 'inclusion',
    });
    expect(Date.parse(done.body.failed_at)).toBeGreaterThanOrEqual(Date.parse(done.body.created_at));
    // The sync route gives the same error for the same inputs.
    const sync = await app.inject({ method: 'POST', url: '/prove', payload: body(inputs), headers: JSON_HEADERS });
    expect([sync.statusCode, JSON.parse(sync.body).code, JSON.parse(sync.body).message]).toEqual([400, 'proving_error', done.body.error]);

    const retry = await submit(app, inputs);
    expect(retry.body).toMatchObject({ job_id: sub.body.job_id, status: 'queued' });
    expect(retry.body.deduplicated).toBeUndefined();
    expect((await pollUntilDone(app, sub.body.job_id)).body.status).toBe('failed');
  }, 60_000);

  test('input errors answer the submission itself (no job); unknown id 404, malformed id 400, no id 400, other methods 405', async () => {
    const five = await app.inject({ method: 'POST', url: '/prove', payload: JSON.stringify({ ...toProverRequest(account(34, 1)), inputCompressedAccounts: Array(5).fill(toProverRequest(account(34, 1)).inputCompressedAccounts![0]) }), headers: { ...JSON_HEADERS, 'x-async': 'true' } });
    expect([five.statusCode, JSON.parse(five.body).code]).toEqual([400, 'proving_error']);
    const notJson = await app.inject({ method: 'POST', url: '/prove?async=true', payload: '{', headers: JSON_HEADERS });
    expect([notJson.statusCode, JSON.parse(notJson.body).code]).toEqual([400, 'malformed_body']);

    const unknown = '0b8f0d1e-5c1a-4e6b-9a57-3c2d1e0f9a8b';
    expect(await status(app, `?job_id=${unknown}`)).toMatchObject({ status: 404, body: { code: 'job_not_found', message: `Job with ID ${unknown} not found. It may have expired or never existed.` } });
    for (const bad of ['abc', 'not-a-uuid-at-all-but-36-characters', `${unknown}0`, proofJobId(ID, buildCircuitInput(account(34, 1)).input).replace(/-/g, '')]) {
      expect(await status(app, `?job_id=${bad}`)).toMatchObject({ status: 400, body: { code: 'invalid_job_id', message: 'Invalid job ID format. Job ID must be a valid UUID.' } });
    }
    expect(await status(app, '')).toMatchObject({ status: 400, body: { code: 'malformed_body', message: 'job_id parameter required' } });
    expect(await status(app, '?job_id=')).toMatchObject({ status: 400, body: { code: 'malformed_body' } });
    const post = await app.inject({ method: 'POST', url: `/prove/status?job_id=${unknown}` });
    expect([post.statusCode, post.body]).toEqual([405, '']);
  });

  test('jobs are forgotten after the TTL (404) or beyond asyncMaxJobs; a full in-process queue refuses the submission with 503', async () => {
    // (a TTL long enough that a loaded machine's polls still see the failure before it is forgotten)
    const short = new ProofService({ backend: new LocalBackend(pool), timeoutMs: 60_000, asyncTtlMs: 1500 });
    const srv = Fastify();
    registerProveRoute(srv, { service: short, env: {} });
    const sub = await submit(srv, wrongRoot(35));
    expect((await pollUntilDone(srv, sub.body.job_id)).body.status).toBe('failed');
    await sleep(1600);
    expect((await status(srv, `?job_id=${sub.body.job_id}`)).status).toBe(404);
    await srv.close();

    // At most asyncMaxJobs kept: a finished job makes room for a new one; a running one does not.
    // The pool is gated so that y is surely still running when z arrives.
    const local = new LocalBackend(pool);
    let gate: Promise<void> = Promise.resolve();
    const gated: ProofBackend = {
      kind: 'local',
      prove: async (job, opts) => {
        await gate;
        return local.prove(job, opts);
      },
      depth: () => local.depth(),
      close: () => local.close(),
    };
    const capped = Fastify();
    registerProveRoute(capped, { service: new ProofService({ backend: gated, asyncMaxJobs: 1 }), env: {} });
    const x = await submit(capped, wrongRoot(38));
    expect((await pollUntilDone(capped, x.body.job_id)).body.status).toBe('failed');
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    const y = await submit(capped, wrongRoot(39));
    expect([y.status, y.body.status]).toEqual([202, 'queued']);
    expect((await status(capped, `?job_id=${x.body.job_id}`)).status).toBe(404);
    const z = await submit(capped, wrongRoot(40)); // y is held at the gate
    expect(z).toMatchObject({ status: 503, body: { code: 'queue_unavailable', message: expect.stringMatching(/too many async proof jobs in progress \(1, limit 1\)/) } });
    open();
    expect((await pollUntilDone(capped, y.body.job_id)).body.status).toBe('failed');
    await capped.close();

    const full = Fastify();
    registerProveRoute(full, { service: new ProofService({ backend: new LocalBackend(pool, { maxPending: 0 }) }), env: {} });
    const refused = await submit(full, account(36, 1));
    expect(refused).toMatchObject({ status: 503, body: { code: 'queue_unavailable', message: expect.stringMatching(/prover queue is full/) } });
    expect((await status(full, `?job_id=${proofJobId(ID, buildCircuitInput(account(36, 1)).input)}`)).status).toBe(404);
    await full.close();
  }, 60_000);

  test('API keys, method rights and the rate limit apply to submissions and to status polls (own bucket)', async () => {
    const srv = Fastify();
    registerProveRoute(srv, {
      service,
      apiKeys: [
        { key: 'reader', name: 'reader', methods: ['getCompressedAccount'] },
        { key: 'prover', name: 'prover', methods: ['getValidityProof'], rateLimit: { ratePerSecond: 0.01, burst: 1 } },
      ],
      env: {},
    });
    const id = '0b8f0d1e-5c1a-4e6b-9a57-3c2d1e0f9a8b';
    expect((await status(srv, `?job_id=${id}`)).body.code).toBe('unauthorized');
    expect((await status(srv, `?job_id=${id}`, { 'x-api-key': 'wrong' })).status).toBe(401);
    expect(await status(srv, `?job_id=${id}`, { 'x-api-key': 'reader' })).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect((await submit(srv, wrongRoot(37), 'header', { 'x-api-key': 'reader' })).status).toBe(403);
    expect((await submit(srv, wrongRoot(37))).status).toBe(401);

    // Burst 1: one status poll and one submission each, then 429 for both.
    expect((await status(srv, `?job_id=${id}`, { authorization: 'Bearer prover' })).status).toBe(404);
    const limited = await status(srv, `?job_id=${id}`, { authorization: 'Bearer prover' });
    expect([limited.status, limited.body.code]).toEqual([429, 'rate_limited']);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const ok = await submit(srv, wrongRoot(37), 'header', { 'x-api-key': 'prover' });
    expect([ok.status, ok.body.status]).toEqual([202, 'queued']);
    expect(await submit(srv, wrongRoot(37), 'header', { 'x-api-key': 'prover' })).toMatchObject({ status: 429, body: { code: 'rate_limited' } });
    await pollUntilDone(app, ok.body.job_id); // same service: let the job finish before the pool closes
    await srv.close();
  }, 60_000);
});

describe('async /prove on BullMQ: two API instances on one Redis', () => {
  test('submit on one instance, read the status on the other: completed with a verifying proof; a failing witness fails there too', async () => {
    const node: ProverNode = await startProverNode({ redisUrl: REDIS, pool, queueName: QUEUE });
    closers.push(() => node.close());
    const apis: FastifyInstance[] = [];
    let backend: BullBackend | undefined;
    for (let i = 0; i < 2; i++) {
      const b = await BullBackend.create({ redisUrl: REDIS, queueName: QUEUE });
      backend ??= b;
      const svc = new ProofService({ backend: b, timeoutMs: 60_000, verifier: (id, proof, signals) => pool.verify(id, proof, signals) });
      const srv = Fastify();
      registerProveRoute(srv, { service: svc, env: {} });
      apis.push(srv);
      closers.push(() => svc.close(), () => srv.close());
    }
    closers.push(() => backend!.queue.obliterate({ force: true }));
    const [a, b] = apis as [FastifyInstance, FastifyInstance];

    const inputs = account(41, 9);
    const sub = await submit(a, inputs);
    const jobId = proofJobId(ID, buildCircuitInput(inputs).input);
    expect(sub).toMatchObject({ status: 202, body: { job_id: jobId, status: 'queued', queue: QUEUE, circuit_type: 'inclusion', status_url: `/prove/status?job_id=${jobId}` } });
    const done = await pollUntilDone(b, jobId);
    // status and body together, so that a failed job's error shows in the assertion
    expect({ status: done.status, body: done.body }).toMatchObject({ status: 200, body: { job_id: jobId, status: 'completed' } });
    expectGnarkShape(done.body.result.proof);
    expect(await verifies(done.body.result.proof, inputs)).toBe(true);
    // The first instance sees the same job; submitting again on the second joins it.
    expect((await status(a, `?job_id=${jobId}`)).body.result.proof).toEqual(done.body.result.proof);
    expect(await submit(b, inputs, 'query')).toMatchObject({ status: 202, body: { job_id: jobId, status: 'already_queued', deduplicated: true } });
    // State straight from BullMQ on the other instance: completed.
    expect(await backend!.queue.getJobState(jobId)).toBe('completed');

    const bad = wrongRoot(42);
    const failedSub = await submit(b, bad);
    expect(failedSub.status).toBe(202);
    const failed = await pollUntilDone(a, failedSub.body.job_id);
    expect(failed).toMatchObject({ status: 202, body: { status: 'failed', code: 'proving_error', error: expect.stringMatching(/do not fold to the given state root/) } });
    expect(await backend!.queue.getJobState(failedSub.body.job_id)).toBe('failed');

    // The sync route on the same queue: the stored proof at once; the failed async job (kept 1 h) is
    // stale for a later sync request, which proves afresh and gets the error itself.
    const sync = await b.inject({ method: 'POST', url: '/prove', payload: body(inputs), headers: JSON_HEADERS });
    expect(sync.statusCode).toBe(200);
    expect(JSON.parse(sync.body)).toEqual(done.body.result.proof);
    const syncBad = await a.inject({ method: 'POST', url: '/prove', payload: body(bad), headers: JSON_HEADERS });
    expect([syncBad.statusCode, JSON.parse(syncBad.body).code, JSON.parse(syncBad.body).message]).toEqual([400, 'proving_error', failed.body.error]);
    expect((await status(a, '?job_id=0b8f0d1e-5c1a-4e6b-9a57-3c2d1e0f9a8b')).status).toBe(404);

    // Kept `resultTtlSeconds` after they finish, then unknown (BullMQ itself removes them only lazily).
    const shortBackend = await BullBackend.create({ redisUrl: REDIS, queueName: QUEUE, resultTtlSeconds: 2 });
    const shortSvc = new ProofService({ backend: shortBackend, timeoutMs: 60_000 });
    closers.push(() => shortSvc.close());
    const c = Fastify();
    registerProveRoute(c, { service: shortSvc, env: {} });
    closers.push(() => c.close());
    const expiring = await submit(c, wrongRoot(43));
    expect((await pollUntilDone(c, expiring.body.job_id)).body.status).toBe('failed');
    await sleep(2100);
    expect((await status(c, `?job_id=${expiring.body.job_id}`)).status).toBe(404);
    // A new submission of the expired job starts afresh.
    expect(await submit(c, wrongRoot(43))).toMatchObject({ status: 202, body: { job_id: expiring.body.job_id, status: 'queued' } });
  }, 120_000);
});
