/**
 * Logging never stops the daemon (src/logSink.ts), through the binary: `refract start` whose stderr
 * reader stopped reading (a full pipe, e.g. `… 2>&1 | less` left alone) or has gone (`… 2>&1 | head -2`)
 * keeps answering, and SIGTERM stops it with exit 0. Before the LogSink, pino's exit flush spun
 * forever on the full pipe (sonic-boom's flushSync retries EAGAIN and EPIPE without end), so the
 * daemon never exited. Lines it could not write count in `refract_log_lines_dropped_total`.
 */
import { afterAll, expect, test } from 'vitest';
import { LogSink, logLinesDropped } from '../src/logSink.ts';
import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from './helpers/photon.ts';
import { postRpc, startRefract, stopAll, type RefractDaemon } from './helpers/refractBin.ts';

afterAll(stopAll);

/** SIGTERM; resolves with the exit code and signal, or 'hung' when the process is still there after `ms`. */
async function terminate(d: RefractDaemon, ms = 10_000): Promise<{ code: number | null; signal: string | null } | 'hung'> {
  const exited = new Promise<{ code: number | null; signal: string | null }>((r) => d.child.once('exit', (code, signal) => r({ code, signal })));
  d.child.kill('SIGTERM');
  return Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), ms))]);
}

const dropped = async (d: RefractDaemon) => Number((await (await fetch(`${d.url}/metrics`)).text()).match(/^refract_log_lines_dropped_total (\d+)/m)?.[1]);

test('a stderr reader that stopped reading: the daemon keeps answering and SIGTERM stops it', async () => {
  // trace: fastify logs two lines per request, so 600 requests write ~500 KB, far more than the
  // pipe (64 KiB) and this side's stream buffer hold
  const d = await startRefract(['--no-prover'], { REFRACT_LOG_LEVEL: 'trace', REFRACT_LOG_FORMAT: 'json' });
  d.child.stderr!.pause();
  const t0 = Date.now();
  for (let i = 0; i < 600; i++) expect((await postRpc(d, 'getIndexerSlot')).body.error.message).toMatch(/No data has been indexed/);
  const elapsed = Date.now() - t0;
  expect(elapsed).toBeLessThan(60_000);
  expect(await dropped(d)).toBe(0); // less than 4 MiB waits: nothing dropped while it runs
  expect(await terminate(d)).toEqual({ code: 0, signal: null });
  d.child.stderr!.resume();
}, 120_000);

test('a stderr reader that has gone: lines are dropped and counted, SIGTERM stops the daemon', async () => {
  const d = await startRefract(['--no-prover'], { REFRACT_LOG_LEVEL: 'trace', REFRACT_LOG_FORMAT: 'json' });
  d.child.stderr!.destroy();
  for (let i = 0; i < 5; i++) await postRpc(d, 'getIndexerSlot');
  await new Promise((r) => setTimeout(r, 200));
  expect(await dropped(d)).toBeGreaterThan(0);
  expect((await postRpc(d, 'getIndexerSlot')).status).toBe(200);
  expect(await terminate(d)).toEqual({ code: 0, signal: null });
}, 120_000);

test('LogSink: writes lines in order, flushes what waits at exit, drops and counts on a closed descriptor', async () => {
  const file = path.join(tempDir(), 'log');
  const fd = openSync(file, 'w');
  const sink = new LogSink(fd);
  const ns = () => readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l).n as number);
  for (let i = 0; i < 100; i++) sink.write(`{"n":${i}}\n`);
  await new Promise((r) => setTimeout(r, 100));
  expect(ns()).toEqual([...Array(100).keys()]);
  // at exit: the write in flight (line 100) and the rest written synchronously (order within them not kept)
  for (let i = 100; i < 150; i++) sink.write(`{"n":${i}}\n`);
  sink.flushSync();
  await new Promise((r) => setTimeout(r, 100));
  expect(ns().sort((a, b) => a - b)).toEqual([...Array(150).keys()]);
  closeSync(fd);

  const before = logLinesDropped();
  const bad = new LogSink(fd); // closed: EBADF
  bad.write('{"a":1}\n');
  await new Promise((r) => setTimeout(r, 100));
  bad.write('{"a":2}\n');
  bad.flushSync();
  expect(logLinesDropped() - before).toBe(2);

  const small = new LogSink(openSync(path.join(tempDir(), 'log2'), 'w'), { maxPendingBytes: 10 });
  const b2 = logLinesDropped();
  small.write('0123456789abc\n'); // longer than all that may wait
  expect(logLinesDropped() - b2).toBe(1);
});
