// ProverPool.close() with jobs still waiting for their dispatch pass: with the default window (0, a
// setImmediate pass) and with a batch window (a timer), the waiting job is refused and the pass never
// runs. Each pending pass is cleared with its own clear function (clearImmediate on a Timeout would
// corrupt Node's immediate count and timer list), and the timers of the process go on working after.
import { expect, test } from 'vitest';
import { ProverError } from '../src/prover/errors.ts';
import { ProverPool } from '../src/prover/run/pool.ts';
import { tempDir } from './helpers/photon.ts';
import { rejection } from './helpers/rejection.ts';

for (const batchWindowMs of [undefined, 50]) {
  test(`close() before the dispatch pass (batch window ${batchWindowMs ?? 'default 0'}): the waiting job is refused, nothing runs, timers still fire`, async () => {
    const pool = new ProverPool({ keysDir: tempDir('refract-pool-close-'), size: 1, batchWindowMs });
    const refused = rejection(pool.prove('inclusion_26_1', {}), ProverError);
    await pool.close();
    const e = await refused;
    expect(e.code).toBe('worker_crashed');
    expect(e.message).toBe('prover pool closed before the job ran');
    expect(pool.stats()).toMatchObject({ tasks: 0, busy: 0 });
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setImmediate(r));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(15);
  }, 60_000);
}
