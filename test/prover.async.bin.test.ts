// Async /prove as a user runs it: two `refract start` processes (bin/refract.mjs) on one Redis and
// one BullMQ queue, with their defaults: Light's keys (converted once into the shared Light test dir,
// test/helpers/lightKeys.ts; no key is built). A proves (its local prover node), B only enqueues
// (`--no-local-prover`). A job submitted to A with `X-Async: true` is reported by B's `GET
// /prove/status` (B reads BullMQ and verifies A's proof against its own copy of the key), and the
// proof passes Light's on-chain equation here (VK from the released program). One real proof.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { proofJobId } from '../src/prover/run/proofJobs.ts';
import { compressGnarkProof } from '../src/prover/engine/proofEncoding.ts';
import { syntheticAccount } from './helpers/proverFixtures.ts';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
import { lightKeyId, lightWitness } from '../src/prover/keys/lightKeys.ts';
import { toProverRequest, type ValidityProofInputs } from '../src/prover/engine/witness.ts';
import { ensureLightKeys, LIGHT_TEST_KEYS } from './helpers/lightKeys.ts';
import { pinocchioProgram, verifyOnChain, vkFromProgram } from './helpers/lightVerify.ts';
import { tempDir } from './helpers/photon.ts';

const REDIS = process.env.REFRACT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUEUE = `refract-test-async-bin-${process.pid}-${Date.now()}`;
const procs: ChildProcess[] = [];
let so: Uint8Array;

/** Starts `refract start` on a random port; resolves with its base URL from the "Server listening at" log line (logs go to stderr). */
function refractStart(name: string, extra: string[]): Promise<string> {
  // Light's keys are the daemon's default (the test runner turns them off for other daemons)
  const env: NodeJS.ProcessEnv = { ...process.env, REFRACT_NODE_NAME: name, REFRACT_LIGHT_KEYS: 'true' };
  delete env.NODE_OPTIONS;
  const args = ['start', '--no-ingest', '--db', join(tempDir(), 'db'), '--port', '0', '--host', '127.0.0.1', '--keys', LIGHT_TEST_KEYS, '--no-build-keys'];
  const child = spawn(process.execPath, [REFRACT_BIN, ...args, '--prover-threads', '1', '--redis-url', REDIS, '--queue', QUEUE, '--log-level', 'info', ...extra], { stdio: ['ignore', 'ignore', 'pipe'], env });
  procs.push(child);
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${name}: no "Server listening" line within 60 s`)), 60_000);
    const lines: string[] = [];
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before listening: ${lines.slice(-5).join('\n')}`)));
    createInterface({ input: child.stderr! }).on('line', (line) => {
      if (lines.push(line) > 20) lines.shift();
      const m = /Server listening at (http:\/\/[^"\s]+)/.exec(line);
      if (m) {
        clearTimeout(t);
        resolve(m[1]!);
      }
    });
  });
}

async function status(base: string, jobId: string) {
  const res = await fetch(`${base}/prove/status?job_id=${jobId}`);
  return { status: res.status, body: (await res.json()) as any };
}

let a: string;
let b: string;

beforeAll(async () => {
  // all 24 converted: neither daemon starts a background conversion
  so = pinocchioProgram(await ensureLightKeys());
  [a, b] = await Promise.all([refractStart('async-bin-a', []), refractStart('async-bin-b', ['--no-local-prover'])]);
  // The prover connects to Redis after the server listens: 503 until then, then 404 for an unknown job.
  for (const base of [a, b]) {
    const end = Date.now() + 60_000;
    while ((await status(base, '0b8f0d1e-5c1a-4e6b-9a57-3c2d1e0f9a8b')).status !== 404) {
      if (Date.now() > end) throw new Error(`${base}: prover not available within 60 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}, 3_600_000);

afterAll(async () => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGTERM');
  await Promise.all(procs.map((p) => (p.exitCode !== null || p.signalCode !== null ? undefined : new Promise((r) => p.once('exit', r)))));
  const q = new Queue(QUEUE, { connection: { url: REDIS } });
  await q.obliterate({ force: true }).catch(() => {});
  await q.close();
});

describe('refract start ×2 on one Redis: async /prove', () => {
  test("submitted on A (X-Async), status on B: queued/processing, then completed with a proof Light's verifier accepts", async () => {
    const inputs: ValidityProofInputs = { accounts: [syntheticAccount(51, 7)], addresses: [] };
    const witness = lightWitness(inputs);
    expect(witness.key.name).toBe('mainnet_inclusion_26_1');
    // the job id hashes the pool key id and the witness vector (backend.ts queuedJob)
    const jobId = proofJobId(lightKeyId(witness.key), Buffer.from(witness.inputs).toString('hex'));
    const res = await fetch(`${a}/prove`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-async': 'true' }, body: JSON.stringify(toProverRequest(inputs)) });
    expect(res.status).toBe(202);
    const sub = (await res.json()) as any;
    expect(sub).toMatchObject({ job_id: jobId, status: 'queued', queue: QUEUE, circuit_type: 'inclusion', status_url: `/prove/status?job_id=${jobId}` });

    let last: { status: number; body: any } | undefined;
    const seen = new Set<string>();
    const end = Date.now() + 60_000;
    while (Date.now() < end) {
      last = await status(b, jobId);
      if (last.status === 503) {
        // B cannot check the proof yet (its keys are still loading): a passing condition, asked again.
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      seen.add(last.body.status);
      if (last.status !== 202) break;
      expect(last.body, JSON.stringify(last.body)).toMatchObject({ job_id: jobId, status: expect.stringMatching(/^(queued|processing)$/), circuit_type: 'inclusion' });
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(last?.status, JSON.stringify(last?.body)).toBe(200);
    expect(last!.body).toMatchObject({ job_id: jobId, status: 'completed', result: { proof: { ar: expect.any(Array), bs: expect.any(Array), krs: expect.any(Array) } } });
    const vk = vkFromProgram(so, witness.key.name, witness.publics.length + 1);
    expect(verifyOnChain(vk, compressGnarkProof(last!.body.result.proof), witness.publics)).toBe(true);
    console.log(`async via two refract processes, states seen on B: ${[...seen].join(' → ')}`);

    // B (no local prover) joins the same job with the query form.
    const again = await fetch(`${b}/prove?async=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(toProverRequest(inputs)) });
    expect([again.status, await again.json()]).toEqual([202, expect.objectContaining({ job_id: jobId, status: 'already_queued', deduplicated: true })]);
    expect((await status(a, jobId)).body.result.proof).toEqual(last!.body.result.proof);
  }, 120_000);
});
