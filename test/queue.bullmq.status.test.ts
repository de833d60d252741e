// BullBackend.jobStatus against the real Redis when a job finishes between its two Redis reads.
// CI once saw a good proof reported as a failed job ("completed without a proof"): the job's hash
// was read while it was active, its state just after it completed. The reads are forced to
// interleave here: a plain BullMQ worker (no proving) finishes the job inside `queue.getJob`, or
// another request removes a failed job and adds it afresh there.
import { UnrecoverableError, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { BullBackend } from '../src/prover/run/bullmq.ts';
import type { ProofJobData, ProofJobResult } from '../src/prover/run/proofJobs.ts';
import { buildCircuitInput, type ValidityProofInputs } from '../src/prover/engine/witness.ts';
import { syntheticAccount } from './helpers/proverFixtures.ts';
import { sleep } from './helpers/jsonRpc.ts';

const REDIS = process.env.REFRACT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUEUE = `refract-test-status-${process.pid}-${Date.now()}`;

const FAKE_RESULT: ProofJobResult = {
  proof: { pi_a: ['1', '2', '1'], pi_b: [['1', '2'], ['3', '4'], ['1', '0']], pi_c: ['5', '6', '1'], protocol: 'groth16', curve: 'bn128' },
  publicSignals: ['7'],
  node: 'other-node:1:abc',
  timings: { queueMs: 1, witnessMs: 1, proveMs: 1, verifyMs: 1, poolQueueMs: 0 },
  batchSize: 1,
  startedAt: Date.now(),
};

let backend: BullBackend;
let worker: Worker<ProofJobData, ProofJobResult>;
/** What the worker does with the job it holds, once released: return FAKE_RESULT or throw. */
let outcome: 'complete' | 'fail' = 'complete';
let release: () => void = () => {};
let closing = false;
/** Resolves once the worker holds a job (its `release` set): `active` in Redis comes before that. */
let held: Promise<void> = new Promise(() => {});
let onHeld: () => void = () => {};
function expectHold(): void {
  held = new Promise((r) => (onHeld = r));
}

beforeAll(async () => {
  backend = await BullBackend.create({ redisUrl: REDIS, queueName: QUEUE });
  worker = new Worker<ProofJobData, ProofJobResult>(
    QUEUE,
    async () => {
      if (!closing)
        await new Promise<void>((r) => {
          release = r;
          onHeld();
        });
      if (outcome === 'fail') throw new UnrecoverableError(JSON.stringify({ code: 'witness_failed', message: 'the path does not fold' }));
      return FAKE_RESULT;
    },
    { connection: { url: REDIS }, concurrency: 1 },
  );
  await worker.waitUntilReady();
});

afterAll(async () => {
  closing = true; // a job the worker takes from now on (the last test's re-added one) is not held
  release();
  await worker?.close(true);
  await backend?.queue.obliterate({ force: true }).catch(() => {});
  await backend?.close();
});

async function until(jobId: string, want: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if ((await backend.queue.getJobState(jobId)) === want) return;
    await sleep(10);
  }
  throw new Error(`job ${jobId} never reached ${want}`);
}

/** Submits an async job for `inputs`, waits until the worker holds it, and makes the next `getJob` finish it first. */
async function activeJobFinishingInsideGetJob(inputs: ValidityProofInputs): Promise<string> {
  expectHold();
  const { jobId } = await backend.submit({ witness: buildCircuitInput(inputs), inputs });
  await held;
  const getJob = backend.queue.getJob.bind(backend.queue);
  vi.spyOn(backend.queue, 'getJob').mockImplementationOnce(async (id: string) => {
    const before = await getJob(id); // the hash as it was while the job was active
    release();
    await until(id, outcome === 'complete' ? 'completed' : 'failed');
    return before;
  });
  return jobId;
}

describe('BullBackend.jobStatus: a job finishing between the reads', () => {
  test('completed meanwhile: reported processing (not failed), then completed with the proof', async () => {
    outcome = 'complete';
    const jobId = await activeJobFinishingInsideGetJob({ accounts: [syntheticAccount(51, 2)], addresses: [] });
    const first = await backend.jobStatus(jobId);
    expect(first?.state === 'failed' ? first.error?.message : first?.state).toBe('processing');
    const next = await backend.jobStatus(jobId);
    expect(next?.state).toBe('completed');
    expect(next?.state === 'completed' && next.result?.proof).toEqual(FAKE_RESULT.proof);
  });

  test('failed meanwhile: reported processing, then failed with the node\'s own error (not a bare "failed")', async () => {
    outcome = 'fail';
    const jobId = await activeJobFinishingInsideGetJob({ accounts: [syntheticAccount(52, 3)], addresses: [] });
    expect((await backend.jobStatus(jobId))?.state).toBe('processing');
    const next = await backend.jobStatus(jobId);
    expect(next?.state === 'failed' && [next.error?.code, next.error?.message]).toEqual(['witness_failed', 'the path does not fold']);
  });

  test('failed, then removed and added afresh by another request between the reads: reported queued, not failed', async () => {
    outcome = 'fail';
    const inputs = { accounts: [syntheticAccount(53, 4)], addresses: [] };
    const job = { witness: buildCircuitInput(inputs), inputs };
    expectHold();
    const { jobId } = await backend.submit(job);
    await held;
    release();
    await until(jobId, 'failed');
    const getJob = backend.queue.getJob.bind(backend.queue);
    vi.spyOn(backend.queue, 'getJob').mockImplementationOnce(async (id: string) => {
      expect(await backend.submit(job)).toMatchObject({ jobId, deduplicated: false }); // the stale failure removed, the job added again
      return getJob(id);
    });
    const s = await backend.jobStatus(jobId);
    expect(s?.state === 'failed' ? s.error?.message : s?.state).toMatch(/^(queued|processing)$/);
  });
});
