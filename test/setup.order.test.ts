// setupCircuits builds in setupOrder (the most used circuits first) and makes each circuit's key as
// soon as its compile is done, while later circuits still compile — so the first proofs come before
// the whole set is compiled. Keys and compile output go to a temp dir (2^16 dev ptau): non-inclusion_26_1
// compiles for real; inclusion_26_1's compile is copied from the shared test build (the same source
// hash, so setup takes it as done), which saves a compile and still tells the order apart: built in the
// wrong order, non-inclusion's real compile would come first.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { checkKeys } from '../src/prover/keys/layout.ts';
import { compileCached, setupCircuits, type SetupProgress } from '../src/prover/keys/keySetup.ts';
import { DEV_PTAU, ensureDevPtau } from './helpers/devPtau.ts';
import { TEST_KEYS_DIR } from './helpers/proverFixtures.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

let dir: string;
beforeAll(async () => {
  await ensureDevPtau();
  dir = await mkdtemp(path.join(tmpdir(), 'refract-setup-order-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('non-inclusion_26_1 given first: inclusion_26_1 is built first, its key made while non-inclusion compiles', async () => {
  const keysDir = path.join(dir, 'keys');
  await compileCached('inclusion_26_1', path.join(TEST_KEYS_DIR, 'build'));
  await cp(path.join(TEST_KEYS_DIR, 'build', 'inclusion_26_1'), path.join(keysDir, 'build', 'inclusion_26_1'), { recursive: true });
  const events: SetupProgress[] = [];
  const res = await setupCircuits({
    keysDir,
    ptau: DEV_PTAU,
    ptauInsecure: true,
    circuits: ['non-inclusion_26_1', 'inclusion_26_1'],
    compileConcurrency: 1,
    onProgress: (p) => events.push(p),
    log: () => {},
  });
  const at = (id: string, stage: SetupProgress['stage']) => {
    const i = events.findIndex((e) => e.circuitId === id && e.stage === stage);
    expect(i, `${id} ${stage}`).toBeGreaterThanOrEqual(0);
    return i;
  };
  // Built in setupOrder, reported in the caller's order.
  expect(res.built).toEqual(['non-inclusion_26_1', 'inclusion_26_1']);
  expect(at('inclusion_26_1', 'compiled')).toBeLessThan(at('non-inclusion_26_1', 'compiled'));
  expect(at('inclusion_26_1', 'done')).toBeLessThan(at('non-inclusion_26_1', 'zkey'));
  // Pipelined: inclusion's key was started before non-inclusion's compile finished.
  expect(at('inclusion_26_1', 'zkey')).toBeLessThan(at('non-inclusion_26_1', 'compiled'));
  expect(events.at(-1)!.fraction).toBe(1);
  expect((await checkKeys(keysDir, ['inclusion_26_1', 'non-inclusion_26_1'])).map((e) => e.id)).toEqual(['inclusion_26_1', 'non-inclusion_26_1']);
}, 600_000);
