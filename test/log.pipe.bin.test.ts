/**
 * Logging never stops the daemon (src/logSink.ts), through the binary: `refract start` whose stderr
 * reader stopped reading (a full pipe, e.g. `… 2>&1 | less` left alone) or has gone (`… 2>&1 | head -2`)
 * keeps answering, and SIGTERM stops it with exit 0. Before the LogSink, pino's exit flush spun
 * forever on the full pipe (sonic-boom's flushSync retries EAGAIN and EPIPE without end), so the
 * daemon never exited. Lines it could not write count in `refract_log_lines_dropped_total`.
 *
 * The first case runs tsx without its cache (`TSX_DISABLE_CACHE=1`), as after any change of the sources:
 * tsx then spawns its esbuild service with an inherited stderr, and libuv makes fd 0–2 blocking in that
 * child, on the open file description the daemon shares. A sink writing to fd 2 itself then blocked a
 * thread-pool thread on the full pipe and SIGTERM hung; the sink's own non-blocking description of the
 * pipe does not.
 */
import { afterAll, expect, test } from 'vitest';
import { LogSink, logLinesDropped } from '../src/logSink.ts';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, openSync, readFile, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
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
  const d = await startRefract(['--no-prover'], { REFRACT_LOG_LEVEL: 'trace', REFRACT_LOG_FORMAT: 'json', TSX_DISABLE_CACHE: '1' });
  // the hard case is in place: the daemon's fd 2 is blocking (O_NONBLOCK, octal 04000, cleared by the esbuild child)
  const flags = parseInt(readFileSync(`/proc/${d.child.pid}/fdinfo/2`, 'utf8').match(/^flags:\s*(\d+)/m)![1], 8);
  expect(flags & 0o4000, 'fd 2 of the daemon is non-blocking: tsx no longer clears it, so this case no longer tests a blocking pipe').toBe(0);
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

  const smallFd = openSync(path.join(tempDir(), 'log2'), 'w');
  const small = new LogSink(smallFd, { maxPendingBytes: 10 });
  const b2 = logLinesDropped();
  small.write('0123456789abc\n'); // longer than all that may wait
  expect(logLinesDropped() - b2).toBe(1);
  closeSync(smallFd);
});

/**
 * A sink on `fd` whose reader never reads, with O_NONBLOCK cleared as an inheriting child leaves it:
 * 300 KB of lines fill it (pipe and socket buffers hold far less), lines queued after that are dropped
 * by the exit flush, and no thread blocks (a blocked thread-pool thread would hold the read back).
 */
async function neverBlocks(fd: number): Promise<void> {
  const sink = new LogSink(fd);
  expect(sink.mode).toBe('nonblocking');
  const before = logLinesDropped();
  const line = `${JSON.stringify({ pad: 'x'.repeat(1000) })}\n`;
  for (let i = 0; i < 300; i++) sink.write(line);
  await new Promise((r) => setTimeout(r, 200));
  for (let i = 0; i < 10; i++) sink.write(line);
  const t0 = Date.now();
  sink.flushSync(); // EAGAIN at once: gives up, counted
  expect(Date.now() - t0).toBeLessThan(1000);
  expect(logLinesDropped() - before).toBeGreaterThanOrEqual(10);
  sink.close();
  await new Promise<void>((r, j) => readFile(fileURLToPath(import.meta.url), (e) => (e ? j(e) : r())));
}

test('LogSink on a blocking socket that is not read (a parent that stopped reading): nothing blocks', async () => {
  const reader = spawn('sleep', ['60'], { stdio: ['pipe', 'ignore', 'ignore'] }); // a socket pair; sleep never reads
  try {
    const handle = (reader.stdin as unknown as { _handle: { fd: number; setBlocking(b: boolean): number } })._handle;
    handle.setBlocking(true);
    await neverBlocks(handle.fd);
  } finally {
    reader.kill('SIGKILL');
  }
});

test('LogSink on a blocking pipe that is not read (`| less` left alone): nothing blocks', async () => {
  const fifo = path.join(tempDir(), 'fifo');
  execFileSync('mkfifo', [fifo]);
  const readEnd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK); // open, never read
  const writeEnd = openSync(fifo, constants.O_WRONLY); // blocking
  try {
    await neverBlocks(writeEnd);
  } finally {
    closeSync(writeEnd);
    closeSync(readEnd);
  }
});
