/**
 * What CI must have. `.ci/run` installs Redis, promtool and the native addon's toolchain and sets
 * `REFRACT_REQUIRE_TOOLS=1` and `REFRACT_REQUIRE_NATIVE=1`: there a test whose tool is missing (or
 * whose fixed port is taken) FAILS, naming it, instead of passing green untested. On a developer's
 * machine without them the same tests are skipped, with the reason printed.
 */
import { spawnSync } from 'node:child_process';

/** `REFRACT_REQUIRE_TOOLS=1`: Redis, promtool and a free 127.0.0.1:8899 are required (CI). */
export const REQUIRE_TOOLS = process.env.REFRACT_REQUIRE_TOOLS === '1';
/** `REFRACT_REQUIRE_NATIVE=1`: the native addon (Poseidon, MSM, the C prover) is required (CI). */
export const REQUIRE_NATIVE = process.env.REFRACT_REQUIRE_NATIVE === '1';

/** Whether `cmd --version` runs (a tool on the PATH). */
export function haveTool(cmd: string): boolean {
  return spawnSync(cmd, ['--version']).status === 0;
}

/**
 * Whether to skip tests that need `what`: false when it is there; when it is missing, true on a
 * developer's machine (printing why) and false when `required` (CI), where the tests then fail.
 */
export function skipWithout(present: boolean, what: string, required: boolean): boolean {
  if (present) return false;
  if (required) return false;
  console.log(`skipped: ${what} is missing here (required in CI)`);
  return true;
}
