/**
 * Command-line values are checked before anything starts: a zero or oversized timeout, interval,
 * thread count or queue bound is a usage error naming the flag (exit code 1), not a daemon that
 * times out every proof or whose timers fire at once.
 */
import { describe, expect, test } from 'vitest';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
import { runCommand } from './helpers/runCommand.ts';

const run = (...args: string[]) => {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return runCommand(process.execPath, [REFRACT_BIN, ...args], { env, timeoutMs: 30_000 });
};

describe('refract CLI values', () => {
  test.each([
    ['start', '--proof-timeout-ms', '0'],
    ['start', '--max-queued-proofs', '0'],
    ['start', '--prover-threads', '-1'],
    ['prover', '--lock-duration-ms', '99999999999'],
    ['prover', '--stalled-interval-ms', '1.5'],
  ])('refract %s %s %s → usage error naming the flag', async (cmd, flag, value) => {
    const r = await run(cmd, flag, value);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${flag} must be an integer from 1 to 2147483647`);
  });
});
