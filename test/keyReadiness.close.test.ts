// KeyReadiness.close() and the background setup's exit report: the report line is written before
// close() returns, also when the setup child exited just before close() was called (its report then
// still waits on a refresh of the keys directory). CI once saw the daemon log "stopped" before
// "background setup stopped with the daemon …": close() returned at once because the child was gone.
import type { ChildProcess } from 'node:child_process';
import { expect, test } from 'vitest';
import { KeyReadiness } from '../src/prover/keys/keyReadiness.ts';
import { tempDir } from './helpers/photon.ts';

test('a setup child that exits just before close(): its report is logged before close() returns, and /health agrees with it', async () => {
  const order: string[] = [];
  const r = new KeyReadiness(tempDir('refract-readiness-close-'), {
    circuits: ['inclusion_26_1'],
    log: (level, msg) => {
      if (!msg.startsWith('[setup]')) order.push(`${level}: ${msg}`);
    },
  });
  // an unknown flag: `refract setup` exits 1 at once (a usage error), before anything is built
  const state = r.startBackgroundSetup({ args: ['--no-such-flag'] });
  const child = (r as unknown as { child: ChildProcess }).child;
  const closed = new Promise<void>((resolve) =>
    // registered after KeyReadiness's own exit handler: the child is gone, its report pending
    child.once('exit', () => void r.close().then(() => (order.push('closed'), resolve()))),
  );
  await closed;
  expect(order.at(-1)).toBe('closed');
  expect(order.slice(0, -1).at(-1)).toMatch(/^info: background setup stopped with the daemon \(exit 1\); 0 of 1 circuits ready\./);
  expect(state.state).toBe('stopped');
  expect(state.exitCode).toBe(1);
}, 60_000);
