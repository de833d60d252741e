/**
 * The INSECURE development powers of tau (BN254, 2^16, prepared for phase 2) the prover tests build
 * their keys with. Nothing outside the repository is needed: `ensureDevPtau()` generates it once into
 * `.refract-test-ptau/pot16_dev.ptau` (gitignored by `.refract-*`/) with snarkjs, as `refract setup`
 * does without `--ptau` (src/prover/engine/snark.ts createDevPtau), and later runs reuse it. Parallel test
 * files wait for one generation (a lock directory). `$REFRACT_DEV_PTAU` names an existing file to use
 * instead (e.g. a copy kept between CI runs). 2^16 (not less): inclusion_26_8 (50,336 constraints) and
 * the v2 circuits of the prover tests need it. Generation took 15–25 min on a shared 2-core machine
 * (test/fixtures/README.md).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDevPtau, terminateCurve } from '../../src/prover/engine/snark.ts';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Power of the test ptau. */
export const DEV_PTAU_POWER = 16;
/** Where the generated test ptau is kept between runs. */
export const TEST_PTAU_DIR = path.join(REPO_ROOT, '.refract-test-ptau');
/** Path of the development ptau the tests use: `$REFRACT_DEV_PTAU`, else the generated one (call `ensureDevPtau()` first). */
export const DEV_PTAU = process.env.REFRACT_DEV_PTAU ?? path.join(TEST_PTAU_DIR, `pot${DEV_PTAU_POWER}_dev.ptau`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** True while process `pid` exists. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Makes sure `DEV_PTAU` exists, generating it (minutes) when missing; another test process that is
 * generating it is waited for; the lock of a process that is gone (a killed run) is taken over, and its
 * finished stages are resumed.
 * @returns the path (`DEV_PTAU`)
 */
export async function ensureDevPtau(): Promise<string> {
  if (existsSync(DEV_PTAU)) return DEV_PTAU;
  if (process.env.REFRACT_DEV_PTAU) throw new Error(`REFRACT_DEV_PTAU=${DEV_PTAU} does not exist`);
  mkdirSync(TEST_PTAU_DIR, { recursive: true });
  const lock = `${DEV_PTAU}.lock`;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch {
      if (existsSync(DEV_PTAU)) return DEV_PTAU;
      // A lock whose process is gone (a killed run) is taken over; its finished stages are resumed.
      const pid = Number(readFileSync(path.join(lock, 'pid'), { encoding: 'utf8', flag: 'a+' }) || 0);
      if (!pid || !alive(pid)) {
        if (Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0) > 10_000) rmSync(lock, { recursive: true, force: true });
      }
      await sleep(2000);
    }
  }
  try {
    if (existsSync(DEV_PTAU)) return DEV_PTAU;
    const t0 = Date.now();
    process.stderr.write(`test setup: generating the INSECURE development ptau 2^${DEV_PTAU_POWER} at ${DEV_PTAU} (once; 15–25 min on 2 cores)\n`);
    // Written through a temp file and resumable from its last finished stage (an interrupted run's work is kept).
    await createDevPtau(DEV_PTAU, DEV_PTAU_POWER, undefined, (stage) => process.stderr.write(`test setup: resuming after the kept ${stage} stage\n`));
    await terminateCurve();
    process.stderr.write(`test setup: development ptau ready in ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
    return DEV_PTAU;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
