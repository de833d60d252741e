/**
 * bench:ingest — runs bench/ingestThread.ts (the benchmark itself; see its comment) on a worker
 * thread with the import thread's young generation (INGEST_YOUNG_GENERATION_MB), exactly as
 * `refract index` runs a file import (src/ingest/threads/importThread.ts, src/ingest/threads/thread.ts).
 *
 * Usage: npm run bench:ingest [-- --blocks N --txs-per-block N --batch-blocks N]
 */
import { startIndexingWorker } from '../src/ingest/threads/thread.ts';

const worker = startIndexingWorker(new URL('./ingestThread.ts', import.meta.url), { args: process.argv.slice(2) });
worker.on('error', (err) => {
  console.error(err);
  process.exitCode = 1;
});
worker.on('exit', (code) => {
  if (code !== 0) process.exitCode = code;
});
