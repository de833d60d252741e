/**
 * bench:ingest — runs bench/ingestThread.ts (the benchmark itself; see its comment) on a worker
 * thread with the import thread's young generation (INGEST_YOUNG_GENERATION_MB), exactly as
 * `refract index` runs a file import (src/ingest/importThread.ts).
 *
 * Usage: npm run bench:ingest [-- --blocks N --txs-per-block N --batch-blocks N]
 */
import { fileURLToPath } from 'node:url';
import { INGEST_YOUNG_GENERATION_MB } from '../src/ingest/importThread.ts';
import { startTsxWorker } from '../src/tsxWorker.ts';

const worker = startTsxWorker(fileURLToPath(new URL('./ingestThread.ts', import.meta.url)), {
  workerData: { args: process.argv.slice(2) },
  resourceLimits: { maxYoungGenerationSizeMb: INGEST_YOUNG_GENERATION_MB },
});
worker.on('error', (err) => {
  console.error(err);
  process.exitCode = 1;
});
worker.on('exit', (code) => {
  if (code !== 0) process.exitCode = code;
});
