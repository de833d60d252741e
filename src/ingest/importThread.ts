/**
 * Runs a file import (importFilePlan) on a worker thread (workers/importFiles.ts) whose young
 * generation is INGEST_YOUNG_GENERATION_MB, for `refract index` and bench:ingest.
 *
 * Why a thread: indexing a batch keeps its decoded transactions alive while it allocates ≈25 KB per
 * compressed output, and with Node's default young generation (16 MiB semi-spaces) every scavenge
 * copies that live batch again. A young generation of 384 MiB (128 MiB semi-spaces) took ≈12% less
 * CPU per output (alternating process runs of the same import: 138.6 vs 121.8 µs per output, 6
 * pairs). Only the thread's heap gets it: `node --max-semi-space-size` would apply to every thread
 * of the process (prover threads included) and cannot be set after start-up.
 */
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { startTsxWorker } from '../tsxWorker.ts';
import type { FilePlan } from './files.ts';
import type { ImportSummary } from './importFiles.ts';

/** Young-generation size (MiB; V8 `maxYoungGenerationSizeMb` = 3 semi-spaces) of import threads. */
export const INGEST_YOUNG_GENERATION_MB = 384;

/**
 * Starts a thread that indexes (the import, ingest and prepare threads, bench:ingest's) on the
 * TypeScript module `module` (a file URL, e.g. `new URL('../../workers/ingest.ts', import.meta.url)`),
 * with a young generation of INGEST_YOUNG_GENERATION_MB.
 */
export function startIndexingWorker(module: URL, workerData: unknown): Worker {
  return startTsxWorker(fileURLToPath(module), { workerData, resourceLimits: { maxYoungGenerationSizeMb: INGEST_YOUNG_GENERATION_MB } });
}

/** workerData of workers/importFiles.ts. */
export interface ImportThreadData {
  db: string;
  plan: FilePlan;
  batchTransactions?: number;
  /** Store option `writemap`. */
  writemap: boolean;
}

/** Messages of workers/importFiles.ts. */
export type ImportThreadMessage = { type: 'progress'; done: number } | { type: 'done'; summary: ImportSummary; lastSlot: number | null };

/**
 * Imports `data.plan` into the store at `data.db` on an import thread.
 * @param onProgress blocks done so far (skipped ones included), after each batch.
 * @returns the import summary and the store's last slot afterwards.
 * @throws the thread's error (an Error naming the file that did not decode, a SchemaMismatchError's
 *   message, …) or `Error('import thread exited with code N')` if it stopped without an answer.
 */
export function runImportThread(data: ImportThreadData, onProgress?: (done: number) => void): Promise<{ summary: ImportSummary; lastSlot: number | null }> {
  const worker = startIndexingWorker(new URL('../../workers/importFiles.ts', import.meta.url), data);
  return new Promise((resolve, reject) => {
    let result: { summary: ImportSummary; lastSlot: number | null } | null = null;
    let failure: unknown = null;
    worker.on('message', (m: ImportThreadMessage) => {
      if (m.type === 'progress') onProgress?.(m.done);
      else result = { summary: m.summary, lastSlot: m.lastSlot };
    });
    worker.on('error', (e) => (failure = e));
    worker.on('exit', (code) => {
      if (failure) reject(failure);
      else if (result) resolve(result);
      else reject(new Error(`import thread exited with code ${code}`));
    });
  });
}
