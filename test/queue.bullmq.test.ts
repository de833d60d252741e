// The BullMQ proof queue against the real Redis (127.0.0.1:6379), with Light's keys (jobs
// `light/<name>`): two `refract prover` processes drain one queue; identical requests are
// deduplicated; a node SIGKILLed mid-proof does not lose the request (stalled-job recovery hands it
// to the other node within the timeout); input errors fail at once, before anything is queued; no
// node → a clear timeout. Proofs from the nodes are verified in this process against Light's
// verifying key (a 1-thread verifier pool), as the API does, and pass the on-chain equation with the
// VK read from the released program.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startDaemon } from '../src/commands/start.ts';
import { configSchema } from '../src/config/config.ts';
import { Metrics } from '../src/metrics.ts';
import { Queue } from 'bullmq';
import { BullBackend } from '../src/prover/run/bullmq.ts';
import { proofJobId } from '../src/prover/run/proofJobs.ts';
import { ProverPool } from '../src/prover/run/pool.ts';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
import { lightKeyByName, lightWitness } from '../src/prover/keys/lightKeys.ts';
import { ProofService } from '../src/prover/run/proofService.ts';
import type { ValidityProofInputs } from '../src/prover/engine/witness.ts';
import { lightInputsFor } from './helpers/lightInputs.ts';
import { ensureLightKeys, LIGHT_TEST_KEYS, LIGHT_TEST_SOURCE } from './helpers/lightKeys.ts';
import { pinocchioProgram, verifyOnChain, vkFromProgram } from './helpers/lightVerify.ts';
import { fixtureStore } from './helpers/rpcLmdb.ts';

const REDIS = process.env.REFRACT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUEUE = `refract-test-${process.pid}-${Date.now()}`;
/** The Light keys used: proofs of one account; the daemon tests also serve new addresses. */
const KEY = 'mainnet_inclusion_26_1';
const KEY_ID = `light/${KEY}`;
const NAMES = [KEY, 'non-inclusion_26_1'];

interface NodeProc {
  child: ChildProcess;
  events: Record<string, unknown>[];
  nodeId?: string;
  /** REFRACT_NODE_NAME given to the process: its `refract_proofs_by_node_total` label. */
  name: string;
  waitFor(pred: (e: Record<string, unknown>) => boolean, ms: number): Promise<Record<string, unknown>>;
}

let nodeCount = 0;
function startNode(): NodeProc {
  const name = `test-node-${++nodeCount}`;
  const env: NodeJS.ProcessEnv = { ...process.env, REFRACT_NODE_NAME: name };
  delete env.NODE_OPTIONS;
  const child = spawn(
    process.execPath,
    [REFRACT_BIN, 'prover', '--redis-url', REDIS, '--keys', LIGHT_TEST_KEYS, '--threads', '1', '--queue', QUEUE, '--lock-duration-ms', '3000', '--stalled-interval-ms', '1000', '--warm', KEY_ID, '--events', '--log-level', 'error'],
    { stdio: ['ignore', 'pipe', 'inherit'], env },
  );
  const events: Record<string, unknown>[] = [];
  const waiters: { pred: (e: Record<string, unknown>) => boolean; resolve: (e: Record<string, unknown>) => void }[] = [];
  const node: NodeProc = {
    child,
    events,
    name,
    waitFor(pred, ms) {
      const hit = events.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`prover node ${child.pid}: no matching event within ${ms} ms; events: ${JSON.stringify(events)}`)), ms);
        waiters.push({ pred, resolve: (e) => (clearTimeout(t), resolve(e)) });
      });
    },
  };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let e: Record<string, unknown>;
    try {
      e = JSON.parse(line);
    } catch {
      return;
    }
    events.push(e);
    if (e.event === 'ready') node.nodeId = e.node as string;
    for (const w of [...waiters]) {
      if (w.pred(e)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(e);
      }
    }
  });
  return node;
}

const account = (seed: number): ValidityProofInputs => lightInputsFor(lightKeyByName(KEY)!, seed);
/** The queue's job id of `inputs` (the Light witness vector, hex). */
const jobIdOf = (inputs: ValidityProofInputs) => proofJobId(KEY_ID, Buffer.from(lightWitness(inputs).inputs).toString('hex'));
let so: Uint8Array;

let nodes: NodeProc[] = [];
let backend: BullBackend;
let verifierPool: ProverPool;
let metrics: Metrics;
let service: ProofService;

const big = (b: ArrayLike<number>) => BigInt(`0x${Buffer.from(b).toString('hex')}`);
/** The proof passes Light's on-chain equation for one account (VK from the released program). */
async function verified(inputs: ValidityProofInputs, compressed: { a: ArrayLike<number>; b: ArrayLike<number>; c: ArrayLike<number> }): Promise<boolean> {
  const a = inputs.accounts[0]!;
  return verifyOnChain(vkFromProgram(so, KEY, 3), { a: Uint8Array.from(compressed.a), b: Uint8Array.from(compressed.b), c: Uint8Array.from(compressed.c) }, [big(a.root), big(a.leaf)]);
}

beforeAll(async () => {
  so = pinocchioProgram(await ensureLightKeys(NAMES));
  nodes = [startNode(), startNode()];
  await Promise.all(nodes.map((n) => n.waitFor((e) => e.event === 'ready', 120_000)));
  backend = await BullBackend.create({ redisUrl: REDIS, queueName: QUEUE });
  verifierPool = new ProverPool({ keysDir: LIGHT_TEST_KEYS, size: 1, singleThread: true, tableFiles: false });
  metrics = new Metrics({ defaultMetrics: false });
  service = new ProofService({ backend, metrics, timeoutMs: 60_000, light: LIGHT_TEST_SOURCE, verifier: (id, p, s) => verifierPool.verify(id, p, s) });
}, 600_000);

afterAll(async () => {
  for (const n of nodes) if (n.child.exitCode === null && n.child.signalCode === null) n.child.kill('SIGTERM');
  await Promise.all(nodes.map((n) => (n.child.exitCode !== null || n.child.signalCode !== null ? undefined : new Promise((r) => n.child.once('exit', r)))));
  await backend?.queue.obliterate({ force: true }).catch(() => {});
  await backend?.close();
  await verifierPool?.close();
});

describe('BullMQ proof queue with two `refract prover` processes', () => {
  test('both nodes drain one queue; every proof verifies here; node metrics reach this process', async () => {
    const inputs = [1, 2, 3, 4].map(account);
    const t0 = performance.now();
    const proofs = await Promise.all(inputs.map((i) => service.prove(i)));
    const ms = performance.now() - t0;
    for (const [k, p] of proofs.entries()) expect(await verified(inputs[k]!, p.compressedProof)).toBe(true);
    const completedBy = new Set(nodes.flatMap((n) => n.events.filter((e) => e.event === 'completed').map(() => n.nodeId)));
    expect(completedBy.size).toBe(2);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/refract_proofs_total\{circuit="mainnet_inclusion_26_1"\} 4/);
    // The label is the node's stable name, not its per-process id.
    for (const n of nodes) {
      expect(n.nodeId).toMatch(new RegExp(`^${n.name}:\\d+:[0-9a-f]{4}$`));
      expect(text).toContain(`refract_proofs_by_node_total{node="${n.name}"}`);
    }
    expect(text).toMatch(/refract_proof_queue_wait_seconds_count\{circuit="mainnet_inclusion_26_1"\} 4/);
    expect(text).toMatch(/refract_proof_request_duration_seconds_count\{circuit="mainnet_inclusion_26_1",backend="bullmq",outcome="ok"\} 4/);
    console.log(`4 proofs on 2 prover nodes (1 thread each): ${ms.toFixed(0)} ms`);
  });

  test('identical requests share one job: same proof bytes, proved once; a later one gets the stored proof', async () => {
    const inputs = account(40);
    const jobId = jobIdOf(inputs);
    const [a, b] = await Promise.all([service.prove(inputs), service.prove(inputs)]);
    expect(Buffer.from(a.compressedProof.a).equals(Buffer.from(b.compressedProof.a))).toBe(true);
    expect(Buffer.from(a.compressedProof.c).equals(Buffer.from(b.compressedProof.c))).toBe(true);
    const provedBefore = Number(/refract_proofs_total\{circuit="mainnet_inclusion_26_1"\} (\d+)/.exec(await metrics.registry.metrics())?.[1]);
    const t0 = performance.now();
    const c = await service.prove(inputs);
    const cachedMs = performance.now() - t0;
    // The stored proof is delivered, not counted as proved again.
    expect(Number(/refract_proofs_total\{circuit="mainnet_inclusion_26_1"\} (\d+)/.exec(await metrics.registry.metrics())?.[1])).toBe(provedBefore);
    expect(Buffer.from(c.compressedProof.b).equals(Buffer.from(a.compressedProof.b))).toBe(true);
    const runs = nodes.flatMap((n) => n.events.filter((e) => e.event === 'active' && e.jobId === jobId));
    expect(runs).toHaveLength(1);
    expect(cachedMs).toBeLessThan(5000); // no proof: the counter and the active events above say so; this only bounds a stuck wait
    expect(await verified(inputs, c.compressedProof)).toBe(true);
  });

  test('an unsatisfiable input fails at once, before it is queued, with the input and the circuit named', async () => {
    const bad = account(50);
    bad.accounts[0] = { ...bad.accounts[0]!, root: account(51).accounts[0]!.root };
    const counts = await backend.queue.getJobCounts();
    const e = await service.prove(bad).catch((x) => x);
    expect(e.code).toBe('witness_failed');
    expect(e.message).toMatch(/accounts\[0\]: leaf .* folds to root .*, not the given root .*circuit mainnet_inclusion_26_1/);
    expect(await metrics.registry.metrics()).toMatch(/refract_proof_request_duration_seconds_count\{circuit="mainnet_inclusion_26_1",backend="bullmq",outcome="witness_failed"\} 1/);
    expect(await backend.queue.getJobCounts()).toEqual(counts); // nothing was queued
  });

  test('a node SIGKILLed mid-proof: the other node proves the job, the request still gets its proof', async () => {
    // The kill must land while the node proves (tens of ms for inclusion_26_1). On a loaded machine the
    // node may finish first: that attempt does not count; a fresh node replaces the killed one and the
    // test tries again with new inputs (at most three times).
    for (let attempt = 0; ; attempt++) {
      const inputs = account(60 + attempt);
      const jobId = jobIdOf(inputs);
      const t0 = performance.now();
      const pending = service.prove(inputs);
      const first = await Promise.race(nodes.map((n) => n.waitFor((e) => e.event === 'active' && e.jobId === jobId, 30_000).then(() => n)));
      first.child.kill('SIGKILL'); // at once: the node printed 'active' as it handed the job to its pool
      const p = await pending;
      const ms = performance.now() - t0;
      // Proved again by the other node: the kill landed before the first node's result reached Redis.
      const other = nodes.find((n) => n !== first)!;
      const byOther = await other.waitFor((e) => e.event === 'completed' && e.jobId === jobId, 10_000).then(
        () => true,
        () => false,
      );
      if (!byOther && attempt < 2) {
        console.log(`SIGKILL attempt ${attempt + 1}: the node finished the proof before the kill landed; again with a fresh node`);
        const fresh = startNode();
        nodes[nodes.indexOf(first)] = fresh;
        await fresh.waitFor((e) => e.event === 'ready', 120_000);
        continue;
      }
      expect(byOther).toBe(true);
      expect(await verified(inputs, p.compressedProof)).toBe(true);
      expect(ms).toBeLessThan(30_000);
      console.log(`SIGKILL recovery: proof delivered ${ms.toFixed(0)} ms after the request (lock 3 s, stalled check 1 s)`);
      return;
    }
  });

  test('no prover node on the queue → a clear timeout', async () => {
    const lonely = await BullBackend.create({ redisUrl: REDIS, queueName: `${QUEUE}-empty` });
    try {
      const s = new ProofService({ backend: lonely, timeoutMs: 1500, light: LIGHT_TEST_SOURCE });
      const e = await s.prove(account(70)).catch((x) => x);
      expect(e.code).toBe('timeout');
      expect(e.message).toMatch(/did not finish within 1\.5 s \(queue .*-empty: 1 waiting, 0 proving; is a `refract prover` node running\?\)/);
    } finally {
      await lonely.queue.obliterate({ force: true });
      await lonely.close();
    }
  });
});

describe('refract start --redis-url', () => {
  const PAYER_HASH = '2veKUPKieajFG7yzPNGARHq7jYS1FiXcXG8P9Txhvhcn';

  async function daemonOn(queueName: string, localWorker: boolean, redisUrl = REDIS) {
    const store = fixtureStore('lamports');
    const db = (store.root as unknown as { path: string }).path;
    await store.close();
    const config = configSchema.parse({ db, ingest: false, port: 0, host: '127.0.0.1', logLevel: 'silent', rateLimit: false, keysDir: LIGHT_TEST_KEYS, redisUrl, proverThreads: 1, lightKeys: true });
    const daemon = await startDaemon(config, { prover: { queueName, localWorker, autoSetup: false, warm: [] } });
    const addr = daemon.app.server.address();
    const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    const call = async (method: string, params: unknown) =>
      (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })).json();
    return { daemon, url, call };
  }

  test('with its local worker: getValidityProof through the BullMQ queue; /health and /metrics show it', async () => {
    const q = `${QUEUE}-daemon`;
    const { daemon, url, call } = await daemonOn(q, true);
    try {
      const res = await call('getValidityProof', { hashes: [PAYER_HASH] });
      const v = res.result.value;
      const compressed = { a: Uint8Array.from(v.compressedProof.a), b: Uint8Array.from(v.compressedProof.b), c: Uint8Array.from(v.compressedProof.c) };
      expect(verifyOnChain(vkFromProgram(so, KEY, 3), compressed, [big(bs58.decode(v.roots[0])), big(bs58.decode(v.leaves[0]))])).toBe(true);
      const health = await (await fetch(`${url}/health`)).json();
      expect(health.prover).toMatchObject({ mode: 'bullmq', available: true, queue: { waiting: 0, active: 0 } });
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).toMatch(/refract_proof_request_duration_seconds_count\{circuit="mainnet_inclusion_26_1",backend="bullmq",outcome="ok"\} 1/);
      expect(metrics).toMatch(/refract_proof_queue_depth 0/);
    } finally {
      await daemon.stop();
      await new Queue(q, { connection: { url: REDIS } }).obliterate({ force: true }).catch(() => {});
    }
  });

  test('Redis unreachable: getValidityProof and /health say why, and the rest of the API serves', async () => {
    const { daemon, url, call } = await daemonOn(`${QUEUE}-down`, false, 'redis://127.0.0.1:1');
    try {
      const res = await call('getValidityProof', { hashes: [PAYER_HASH] });
      expect(res.error.message).toMatch(/^Prover not available: the proof queue is unreachable \(.*\); retrying every 10 s$/);
      const health = await (await fetch(`${url}/health`)).json();
      expect(health.prover).toMatchObject({ mode: 'bullmq', available: false, error: expect.stringMatching(/queue/) });
      expect((await call('getCompressedAccount', { hash: PAYER_HASH })).result.value.hash).toBe(PAYER_HASH);
    } finally {
      await daemon.stop();
    }
  });

  test('--no-local-prover: only enqueues; a `refract prover` node proves, this server verifies with its vkey', async () => {
    const { daemon, call } = await daemonOn(QUEUE, false);
    try {
      const survivor = nodes.find((n) => n.child.exitCode === null && n.child.signalCode === null)!;
      const before = survivor.events.filter((e) => e.event === 'completed').length;
      const res = await call('getValidityProof', { hashes: [PAYER_HASH] });
      expect(res.result, JSON.stringify(res)).toBeDefined();
      expect(survivor.events.filter((e) => e.event === 'completed').length).toBe(before + 1);
      const metrics = await daemon.metrics.registry.metrics();
      expect(metrics).toContain(`refract_proofs_by_node_total{node="${survivor.name}"} 1`);
    } finally {
      await daemon.stop();
    }
  });
});
