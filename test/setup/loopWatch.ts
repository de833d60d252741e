/**
 * Keeps vitest's worker RPC alive through synchronous tests: turns the event loop before every test,
 * and names a test that holds its worker's event loop for 20 s or more (stderr, one line per stretch).
 *
 * vitest's worker reports to the main process over an RPC whose calls time out after 60 s; a stretch
 * of synchronous work that long (a chain of `spawnSync`, a synchronous proof loop on a loaded 2-core
 * machine) ends the run with `[vitest-worker]: Timeout calling "onTaskUpdate"` although every test
 * passed, and that error does not say which file. This watch does: the timer below cannot fire during
 * the stretch, so at its next turn it sees the gap and names the test that was running. Such code
 * should await (test/helpers/runCommand.ts) instead.
 */
import { afterEach, beforeEach } from 'vitest';

const WARN_MS = 20_000;
let current = '(between tests)';
/** the test running at the last turn of the loop, then every test started since */
let during: string[] = [current];
let last = performance.now();
const timer = setInterval(() => {
  const now = performance.now();
  if (now - last >= WARN_MS) {
    process.stderr.write(`[loop-watch] the event loop was held ${((now - last) / 1000).toFixed(1)} s during ${during.join(' | ')}: await instead of blocking (vitest's worker RPC times out at 60 s)\n`);
  }
  last = now;
  during = [current];
}, 500);
timer.unref();

beforeEach(async (ctx) => {
  // Turn the event loop once before every test: the RPC answers that arrived during synchronous tests
  // are read before the next one starts (vitest itself only awaits microtasks between tests).
  await new Promise((resolve) => setImmediate(resolve));
  current = `${ctx.task.file?.name ?? '?'} > ${ctx.task.name}`;
  during.push(current);
});
afterEach(() => {
  current = '(between tests)';
});
