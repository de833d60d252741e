/**
 * Command-line values are checked before anything starts: a zero or oversized timeout, interval,
 * thread count or queue bound is a usage error naming the flag (exit code 1), not a daemon that
 * times out every proof or whose timers fire at once.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { REFRACT_BIN } from '../src/prover/readiness.ts';

const run = (...args: string[]) => {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return spawnSync(process.execPath, [REFRACT_BIN, ...args], { encoding: 'utf8', env, timeout: 30_000 });
};

describe('refract CLI values', () => {
  test.each([
    ['start', '--proof-timeout-ms', '0'],
    ['start', '--max-queued-proofs', '0'],
    ['start', '--prover-threads', '-1'],
    ['prover', '--lock-duration-ms', '99999999999'],
    ['prover', '--stalled-interval-ms', '1.5'],
  ])('refract %s %s %s → usage error naming the flag', (cmd, flag, value) => {
    const r = run(cmd, flag, value);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${flag} must be an integer from 1 to 2147483647`);
  });
});

describe('refract launch flags', () => {
  const root = new URL('..', import.meta.url).pathname;
  const FLAG = '--max-semi-space-size=128';

  test('the bin, npm start, the Dockerfile and the benches start node with the same young-generation size', async () => {
    const { readFileSync } = await import('node:fs');
    const read = (f: string) => readFileSync(`${root}${f}`, 'utf8');
    expect(read('bin/refract.mjs').split('\n')[0]).toBe(`#!/usr/bin/env -S node ${FLAG}`);
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    expect(scripts.start).toBe(`node ${FLAG} bin/refract.mjs start`);
    expect(scripts['bench:ingest']).toContain(FLAG);
    expect(read('Dockerfile')).toContain(`ENTRYPOINT ["node", "${FLAG}", "bin/refract.mjs"]`);
    for (const f of ['bench/rpc.ts', 'bench/soak.ts']) expect(read(f), f).toContain(`'${FLAG}'`);
  });

  test('the bin runs through its shebang', () => {
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const r = spawnSync(REFRACT_BIN, ['--help'], { encoding: 'utf8', env, timeout: 30_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('Usage: refract');
  });
});
