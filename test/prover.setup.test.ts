// setupCircuits' powers-of-tau handling: a generated development ptau (tiny power, so it is fast)
// and the errors for unusable ptau files. The happy path with real keys is in prover.test.ts.
import { rejection } from './helpers/rejection.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ProverError } from '../src/prover/errors.ts';
import { ensureDevPtau, TEST_KEYS_DIR } from './helpers/proverFixtures.ts';
import { setupCircuits } from '../src/prover/keys/keySetup.ts';
import { createDevPtau, loadSnarkjs, readPtauInfo, requiredPtauPower, terminateCurve } from '../src/prover/engine/snark.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'refract-setup-'));
});
afterAll(async () => {
  await terminateCurve();
  await rm(dir, { recursive: true, force: true });
});

describe('powers of tau', () => {
  test('createDevPtau makes a prepared phase-2 file of the requested power', async () => {
    const f = path.join(dir, 'p8.ptau');
    await createDevPtau(f, 8);
    expect(await readPtauInfo(f)).toEqual({ power: 8, ceremonyPower: 8, preparedPhase2: true });

    // Too small for inclusion_26_1 (6,292 constraints + 2 public → 2^13): rejected before any zkey work.
    expect(requiredPtauPower({ nConstraints: 6292, nPubInputs: 2, nPubOutputs: 0 })).toBe(13);
    const e = await rejection(setupCircuits({ keysDir: path.join(dir, 'keys'), ptau: f, circuits: ['inclusion_26_1'], buildDir: path.join(TEST_KEYS_DIR, 'build'), log: () => {} }), ProverError);
    expect(e.code).toBe('setup_failed');
    expect(e.message).toMatch(/has power 8; the selected circuits need ≥ 13/);
  });

  test('an unprepared ptau is refused with the fix', async () => {
    // The intermediate file of createDevPtau is exactly an unprepared ptau; make one by hand.
    const { curves, powersOfTau } = await loadSnarkjs();
    const f = path.join(dir, 'raw.ptau');
    await powersOfTau.newAccumulator(await curves.getCurveFromName('bn128'), 8, f);
    const e = await rejection(setupCircuits({ keysDir: path.join(dir, 'keys2'), ptau: f, circuits: ['inclusion_26_1'], log: () => {} }), ProverError);
    expect(e.message).toMatch(/not prepared for phase 2 \(run `snarkjs powersoftau prepare phase2`\)/);
  });

  test('a generated dev ptau must be large enough for the selected circuits', async () => {
    const e = await rejection(setupCircuits({ keysDir: path.join(dir, 'keys3'), devPtauPower: 12, circuits: ['inclusion_26_1'], log: () => {} }), ProverError);
    expect(e.message).toMatch(/devPtauPower 12 is too small; the selected circuits need ≥ 13/);
  });
});

describe('stopping a setup', () => {
  /** Pids of circom2 compilers whose command line names `dir`. */
  const compilersIn = (d: string): number[] =>
    readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
          return cmd.includes('circom2') && cmd.includes(d.slice(1));
        } catch {
          return false;
        }
      })
      .map(Number);
  const until = async (what: string, ok: () => boolean, ms = 60_000) => {
    const t0 = Date.now();
    while (!ok()) {
      if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  test.each([
    ['its stdin closes (the daemon died: --exit-on-stdin-close)', (c: ChildProcess) => c.stdin!.end()],
    ['it gets SIGTERM (the daemon stops)', (c: ChildProcess) => c.kill('SIGTERM')],
  ])('when %s, the circom compilers it started die with it', async (_what, stop) => {
    const keys = await mkdtemp(path.join(tmpdir(), 'refract-setup-stop-'));
    // The tests' development ptau (2^16): large enough, so setup goes on to compile.
    const ptau = await ensureDevPtau();
    const child = spawn(process.execPath, [path.join(REPO, 'bin/refract.mjs'), 'setup', '--keys', keys, '--circuits', 'combined_26_26_4_2', '--no-progress', '--exit-on-stdin-close', '--ptau', ptau, '--insecure-ptau'], { stdio: ['pipe', 'ignore', 'ignore'] });
    try {
      await until('a circom2 compile to start', () => compilersIn(keys).length > 0);
      const exited = new Promise((r) => child.once('exit', r));
      stop(child);
      await exited;
      await until('its compilers to exit', () => compilersIn(keys).length === 0, 500);
    } finally {
      child.kill('SIGKILL');
      for (const p of compilersIn(keys)) process.kill(p, 'SIGKILL');
      await rm(keys, { recursive: true, force: true });
    }
  }, 90_000);
});
