import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The test files that take longest, longest first (a fresh clone has no cached durations, and vitest then
 * orders by file size): measured in a fresh-clone CI run on 2 cores (2026-12-07, a slow Ice Lake VM), four files at a time (bench-free wall
 * times of 0.3–7 min each: simulated chains in real time, SIGKILL cycles, circom compiles and Groth16 key
 * builds). Longest first, the long files overlap the many short ones instead of finishing alone at the
 * end: circuits.test (4.5 min of compiles) had started last but one and ended the run. Packed in this
 * order the measured durations take 8% less time; where the cores are already full (a run measured
 * right after, 42 CPU-min in 22 wall-min on 2 cores) the wall time stays the same (1228 vs 1240 s).
 */
const SLOW_FIRST = [
  'crash.kill.bin',
  'backfill.bin',
  'snapshot.replica.bin',
  'prover.native',
  'circuits.v2',
  'circuits',
  'setup.fresh',
  'snapshot.restore.bin',
  'prover.msm',
  'prover.light',
  'snapshot.store',
  'grpc.bin',
  'prover.tableFiles.bin',
  'chain.health.bin',
  'client.sim.bin',
  'prover.daemon',
  'ingest.crash',
  'sim.bounded',
  'prover.light.differential',
];

/** vitest's order (cached durations, then size), with SLOW_FIRST moved to the front in its order. */
class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = SLOW_FIRST.findIndex((n) => f.moduleId.endsWith(`/test/${n}.test.ts`));
      return i < 0 ? SLOW_FIRST.length : i;
    };
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 600_000,
    pool: 'forks',
    // The test files' processes run V8 without its background compile and GC threads: with four files on
    // two cores those threads only compete for the cores (about 14% less CPU for the same files, measured
    // on EPYC Zen 3). The binaries the tests spawn run as users run them.
    poolOptions: { forks: { execArgv: ['--single-threaded'] } },
    // Four test files at a time. vitest's default on a 2-core machine is cores − 1 = ONE file at a
    // time, and most of the suite waits rather than computes (simulated chains in real time, daemons
    // started and killed, Redis, HTTP): run serially the CI took 34 min; overlapped, the waits share
    // the clock. CPU-bound files (proofs, key builds) then share the cores, so no test asserts a
    // wall-clock speed (benchmarks live in bench/).
    maxWorkers: 4,
    minWorkers: 1,
    sequence: { sequencer: SlowFirstSequencer },
    // the development ptau, once, before the files start (instant with REFRACT_DEV_PTAU or a kept one)
    globalSetup: ['test/globalSetup.ts'],
    // names any test that holds its worker's event loop 20 s or more (vitest's worker RPC times out at 60 s)
    setupFiles: ['test/setup/loopWatch.ts', 'test/setup/cpuLog.ts'],
    // Daemons started by tests serve Refract's own circuits unless a test asks for Light's keys
    // (the Light tests use LIGHT_TEST_KEYS): no background fetch of Light's packages.
    env: { REFRACT_LIGHT_KEYS: 'false' },
  },
});
