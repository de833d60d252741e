/**
 * Runs once before any test file (vitest `globalSetup`): makes sure the INSECURE development powers
 * of tau the tests of Refract's own circuits build their keys with exists. With `REFRACT_DEV_PTAU`
 * (CI has ../shared/dev-ptau) or a kept `.refract-test-ptau/` this is instant; in a fresh clone alone it
 * generates the file once here (15–25 min on 2 cores, test/helpers/devPtau.ts), before the test files
 * start, so that no file's hook times out waiting for it while the others run.
 */
import { ensureDevPtau } from './helpers/devPtau.ts';

export default async function setup(): Promise<void> {
  await ensureDevPtau();
}
