// setupCircuits' powers-of-tau handling: a generated development ptau (tiny power, so it is fast)
// and the errors for unusable ptau files. The happy path with real keys is in prover.test.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ProverError } from '../src/prover/errors.ts';
import { TEST_KEYS_DIR } from '../src/prover/fixtures.ts';
import { setupCircuits } from '../src/prover/setup.ts';
import { createDevPtau, loadSnarkjs, readPtauInfo, requiredPtauPower, terminateCurve } from '../src/prover/snark.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'refract-setup-'));
});
afterAll(async () => {
  await terminateCurve();
  await rm(dir, { recursive: true, force: true });
});

async function setupError(p: Promise<unknown>): Promise<ProverError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ProverError);
    return e as ProverError;
  }
  throw new Error('expected setupCircuits to fail');
}

describe('powers of tau', () => {
  test('createDevPtau makes a prepared phase-2 file of the requested power', async () => {
    const f = path.join(dir, 'p8.ptau');
    await createDevPtau(f, 8);
    expect(await readPtauInfo(f)).toEqual({ power: 8, ceremonyPower: 8, preparedPhase2: true });

    // Too small for inclusion_26_1 (6,292 constraints + 2 public → 2^13): rejected before any zkey work.
    expect(requiredPtauPower({ nConstraints: 6292, nPubInputs: 2, nPubOutputs: 0 })).toBe(13);
    const e = await setupError(setupCircuits({ keysDir: path.join(dir, 'keys'), ptau: f, circuits: ['inclusion_26_1'], buildDir: path.join(TEST_KEYS_DIR, 'build'), log: () => {} }));
    expect(e.code).toBe('setup_failed');
    expect(e.message).toMatch(/has power 8; the selected circuits need ≥ 13/);
  });

  test('an unprepared ptau is refused with the fix', async () => {
    // The intermediate file of createDevPtau is exactly an unprepared ptau; make one by hand.
    const { curves, powersOfTau } = await loadSnarkjs();
    const f = path.join(dir, 'raw.ptau');
    await powersOfTau.newAccumulator(await curves.getCurveFromName('bn128'), 8, f);
    const e = await setupError(setupCircuits({ keysDir: path.join(dir, 'keys2'), ptau: f, circuits: ['inclusion_26_1'], log: () => {} }));
    expect(e.message).toMatch(/not prepared for phase 2 \(run `snarkjs powersoftau prepare phase2`\)/);
  });

  test('a generated dev ptau must be large enough for the selected circuits', async () => {
    const e = await setupError(setupCircuits({ keysDir: path.join(dir, 'keys3'), devPtauPower: 12, circuits: ['inclusion_26_1'], log: () => {} }));
    expect(e.message).toMatch(/devPtauPower 12 is too small; the selected circuits need ≥ 13/);
  });
});
