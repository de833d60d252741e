/**
 * Runs once before any test file (vitest `globalSetup`):
 * - makes sure the INSECURE development powers of tau the tests of Refract's own circuits build their
 *   keys with exists. With `REFRACT_DEV_PTAU` (CI has ../shared/dev-ptau) or a kept `.refract-test-ptau/`
 *   this is instant; in a fresh clone alone it generates the file once here (15–25 min on 2 cores,
 *   test/helpers/devPtau.ts), before the test files start, so that no file's hook times out waiting for it
 *   while the others run;
 * - brings `.build/` up to date (bin/precompile.mjs), so the first binaries the files spawn at once do not
 *   each compile the sources.
 */
import { ensureDevPtau } from './helpers/devPtau.ts';
// @ts-expect-error: a plain ES module of bin/, without type declarations
import { precompiled } from '../bin/precompile.mjs';

export default async function setup(): Promise<void> {
  (precompiled as () => string | null)();
  await ensureDevPtau();
}
