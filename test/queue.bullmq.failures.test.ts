// The BullMQ proof queue's failure paths against the real Redis (127.0.0.1:6379), with in-process
// prover nodes whose pools are stubs (no keys, no proving): a failure does not answer later identical
// requests; a node without a circuit's keys hands the job to one that has them; a Redis error while
// waiting is a queue_unavailable error, never an unhandled rejection (which would end the process).
import { afterAll, describe, expect, test } from 'vitest';
import { BullBackend, type ProverNode, type ProverNodeEvent, startProverNode } from '../src/prover/run/bullmq.ts';
import { proofJobId } from '../src/prover/run/proofJobs.ts';
import { ProverError } from '../src/prover/errors.ts';
import { syntheticAccount } from './helpers/proverFixtures.ts';
import type { ProverPool } from '../src/prover/run/pool.ts';
import type { Groth16Proof } from '../src/prover/engine/snark.ts';
import { buildCircuitInput } from '../src/prover/engine/witness.ts';

const REDIS = process.env.REFRACT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `refract-test-fail-${process.pid}-${Date.now()}`;
const PROOF: Groth16Proof = { pi_a: ['1', '2', '1'], pi_b: [['1', '2'], ['3', '4'], ['1', '0']], pi_c: ['5', '6', '1'], protocol: 'groth16', curve: 'bn128' } as Groth16Proof;

const jobFor = (seed: number) => {
  const inputs = { accounts: [syntheticAccount(seed, seed)], addresses: [] };
  return { witness: buildCircuitInput(inputs), inputs };
};

/** A pool stub: `prove` runs `f` (throw to fail) and counts calls. */
function stubPool(f: () => void): ProverPool & { calls: number } {
  const pool = {
    calls: 0,
    stats: () => ({ size: 1 }),
    async prove(circuitId: string) {
      pool.calls++;
      f();
      return { circuitId, proof: PROOF, publicSignals: ['1'], queueMs: 0, witnessMs: 1, proveMs: 1, verifyMs: 0, batchSize: 1 };
    },
  };
  return pool as unknown as ProverPool & { calls: number };
}

const open: { close(): Promise<void> }[] = [];
const queues: BullBackend[] = [];
afterAll(async () => {
  for (const o of open.reverse()) await o.close().catch(() => {});
  for (const b of queues) {
    await b.queue.obliterate({ force: true }).catch(() => {});
    await b.close();
  }
});

async function backendOn(name: string): Promise<BullBackend> {
  const b = await BullBackend.create({ redisUrl: REDIS, queueName: `${PREFIX}-${name}` });
  queues.push(b);
  return b;
}

async function nodeOn(name: string, pool: ProverPool, events: ProverNodeEvent[] = [], extra: object = {}): Promise<ProverNode> {
  const n = await startProverNode({ redisUrl: REDIS, queueName: `${PREFIX}-${name}`, pool, onEvent: (e) => events.push(e), ...extra });
  open.push(n);
  return n;
}

describe('BullMQ proof queue: failures', () => {
  test('a job that failed before a request arrived is proved afresh, not replayed', async () => {
    const b = await backendOn('stale');
    const failing = await nodeOn('stale', stubPool(() => {
      throw new ProverError('invalid_input', 'stub: refused');
    }));
    const job = jobFor(1);
    const e = await b.prove(job, { timeoutMs: 10_000 }).catch((x) => x);
    expect(e).toBeInstanceOf(ProverError);
    expect(e.code).toBe('invalid_input');
    await failing.close();

    const good = stubPool(() => {});
    await nodeOn('stale', good);
    await new Promise((r) => setTimeout(r, 5));
    const p = await b.prove(job, { timeoutMs: 10_000 });
    expect(p.proof).toEqual(PROOF);
    expect(good.calls).toBe(1);
  });

  test('a node without the keys hands the job back; a node with them proves it; alone, it fails with keys_missing', async () => {
    const b = await backendOn('keys');
    const events: ProverNodeEvent[] = [];
    const keyless = stubPool(() => {
      throw new ProverError('keys_missing', 'stub: no keys for inclusion_26_1 here');
    });
    // Handbacks enough to outlast the keyed node's start on a loaded machine (it must get a turn).
    await nodeOn('keys', keyless, events, { keysMissingDelayMs: 100, keysMissingHandbacks: 100 });
    const pending = b.prove(jobFor(2), { timeoutMs: 20_000 });
    for (let i = 0; i < 200 && !events.some((e) => e.type === 'handedBack'); i++) await new Promise((r) => setTimeout(r, 20));
    expect(events.some((e) => e.type === 'handedBack')).toBe(true);
    const keyed = stubPool(() => {});
    await nodeOn('keys', keyed);
    const p = await pending;
    expect(p.proof).toEqual(PROOF);

    // Only keyless nodes on a queue: the job fails with keys_missing once its handbacks are used up.
    const b2 = await backendOn('keys-alone');
    const events2: ProverNodeEvent[] = [];
    await nodeOn('keys-alone', keyless, events2, { keysMissingDelayMs: 50, keysMissingHandbacks: 2 });
    const e = await b2.prove(jobFor(3), { timeoutMs: 20_000 }).catch((x) => x);
    expect(e.code).toBe('keys_missing');
    expect(e.message).toMatch(/no keys for inclusion_26_1/);
    expect(events2.filter((x) => x.type === 'handedBack')).toHaveLength(2);
  });

  test('identical requests made before any node runs share one proof; only the first counts it as its own', async () => {
    const b = await backendOn('joined');
    const job = jobFor(8);
    const first = b.prove(job, { timeoutMs: 10_000 });
    // the first request's job is in the queue before the second request is made (`reused` compares ms stamps)
    const id = proofJobId(job.witness.circuitId, job.witness.input);
    for (const end = Date.now() + 10_000; (await b.queue.getJobState(id)) !== 'waiting'; ) {
      if (Date.now() > end) throw new Error(`job ${id} not queued within 10 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => setTimeout(r, 2));
    const second = b.prove(job, { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 20));
    const pool = stubPool(() => {});
    await nodeOn('joined', pool);
    const [p1, p2] = await Promise.all([first, second]);
    expect(pool.calls).toBe(1);
    expect([p1.reused, p2.reused]).toEqual([false, true]);
  });

  test('a full queue refuses new jobs (queue_full) but lets a request join an identical waiting job', async () => {
    const b = await BullBackend.create({ redisUrl: REDIS, queueName: `${PREFIX}-full`, maxWaiting: 2 });
    queues.push(b);
    const waiting = [jobFor(5), jobFor(6)].map((j) => b.prove(j, { timeoutMs: 1500 }).catch((x) => x));
    for (let i = 0; i < 100 && (await b.depth()).waiting < 2; i++) await new Promise((r) => setTimeout(r, 10));
    const full = await b.prove(jobFor(7), { timeoutMs: 1500 }).catch((x) => x);
    expect(full).toBeInstanceOf(ProverError);
    expect(full.code).toBe('queue_full');
    expect(full.message).toMatch(/is full \(2 waiting, 0 proving, limit 2\)/);
    const joined = await b.prove(jobFor(5), { timeoutMs: 300 }).catch((x) => x);
    expect(joined.code).toBe('timeout'); // no node: it waited on the existing job instead of being refused
    for (const w of await Promise.all(waiting)) expect(w.code).toBe('timeout');
  });

  test('a Redis error while waiting is queue_unavailable, not an unhandled rejection', async () => {
    const b = await backendOn('lookup');
    b.queue.getJobState = (() => Promise.reject(new Error('Connection is closed.'))) as typeof b.queue.getJobState;
    const e = await b.prove(jobFor(4), { timeoutMs: 5_000 }).catch((x) => x);
    expect(e).toBeInstanceOf(ProverError);
    expect(e.code).toBe('queue_unavailable');
    expect(e.message).toMatch(/Connection is closed/);
  });
});
