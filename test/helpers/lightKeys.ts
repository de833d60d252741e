/**
 * Light's keys for tests: converted once into `.refract-test-keys/light-keys/light/` (the CLI
 * packages fetched with `npm pack` into its `cache/`, or $REFRACT_LIGHT_CACHE, and reused by every
 * later run). A test that needs them FAILS when they cannot be fetched (never skips: CI must see it).
 */
import path from 'node:path';
import { acquireSetupLock } from '../../src/prover/keys/keySetup.ts';
import { LocalBackend, type ProofBackend } from '../../src/prover/run/backend.ts';
import { ProverError } from '../../src/prover/errors.ts';
import { fetchLightPackage, lightCacheDir, lightKeyReady, lightKeysDir, lightPackageDir, setupLightKeys } from '../../src/prover/keys/lightKeySetup.ts';
import type { LightKeySpec } from '../../src/prover/keys/lightKeys.ts';
import type { ProverPool } from '../../src/prover/run/pool.ts';
import { REPO_ROOT } from './proverFixtures.ts';

/** The keys directory the Light tests share. */
export const LIGHT_TEST_KEYS = path.join(REPO_ROOT, '.refract-test-keys', 'light-keys');

/**
 * What the Light tests use from the CLI 0.27.0 package besides `bin/proving-keys`: Light's prover
 * binary, the five released programs and the genesis accounts (prover.light.svm.test.ts runs them
 * in LiteSVM). One list for every test, so that the first of them unpacks the 151 MB tarball once
 * (each unpack rewrites the 183 MB of keys: slow on a busy disk).
 */
export const LIGHT_PACKAGE_EXTRA: readonly string[] = [
  'bin/prover-linux-x64',
  'bin/light_system_program_pinocchio.so',
  'bin/account_compression.so',
  'bin/light_compressed_token.so',
  'bin/light_registry.so',
  'bin/spl_noop.so',
  'accounts',
];

/**
 * Converts (when not yet resident) the named Light keys, fetching the packages if needed.
 * @returns the unpacked CLI 0.27.0 `package/` directory (keys, released programs, genesis
 *   accounts, prover binary: LIGHT_PACKAGE_EXTRA); CLI 0.18.0's, with its prover binary, is at
 *   `lightPackage018()`
 */
export async function ensureLightKeys(names?: readonly string[]): Promise<string> {
  // unpack both packages with the extras first (test files run in parallel processes: under the
  // setup's lock), so that the key setup below finds its keys there and does not unpack a second time
  const release = await acquireSetupLock(lightKeysDir(LIGHT_TEST_KEYS));
  let pkgDir: string;
  try {
    pkgDir = await fetchLightPackage(lightCacheDir(LIGHT_TEST_KEYS), '0.27.0', { extra: [...LIGHT_PACKAGE_EXTRA] });
    await fetchLightPackage(lightCacheDir(LIGHT_TEST_KEYS), '0.18.0', { extra: ['bin/prover-linux-x64'] });
  } finally {
    await release();
  }
  await setupLightKeys({ keysDir: LIGHT_TEST_KEYS, names });
  return pkgDir;
}

/** The unpacked CLI 0.18.0 `package/` (its 15 v1 keys and Light's prover of that release), after `ensureLightKeys`. */
export function lightPackage018(): string {
  return lightPackageDir(lightCacheDir(LIGHT_TEST_KEYS), '0.18.0');
}

/**
 * A proof backend for Light tests: jobs for Light's keys go to `pool` (a `ProverPool` over
 * LIGHT_TEST_KEYS) through the in-process queue as the daemon's do; a job for Refract's own
 * circuits is refused (`not_ready`) and counted in `counter.own` (they must not be used while
 * Light's keys serve the shape).
 */
export function lightOnlyBackend(pool: ProverPool, counter: { own: number } = { own: 0 }): ProofBackend {
  const local = new LocalBackend(pool);
  return {
    kind: 'local',
    prove: async (job, opts) => {
      if (job.light) return local.prove(job, opts);
      counter.own++;
      throw new ProverError('not_ready', "Refract's own circuits are not set up in this test");
    },
    depth: () => local.depth(),
    close: async () => {},
  };
}

/** Light's keys under LIGHT_TEST_KEYS as ProofService sees them (ready when their resident file exists). */
export const LIGHT_TEST_SOURCE = { ready: (k: LightKeySpec) => lightKeyReady(LIGHT_TEST_KEYS, k) };
