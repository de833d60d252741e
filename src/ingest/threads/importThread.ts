/**
 * Runs a file import (importFiles.ts `importFilePlan`) on an indexing thread (workers/import.ts;
 * young generation and protocol: thread.ts), for `refract index`.
 */
import type { FilePlan } from '../sources/files.ts';
import type { ImportSummary } from '../importFiles.ts';
import { startIndexingThread } from './thread.ts';

/** workerData of workers/import.ts. */
export interface ImportThreadData {
  db: string;
  plan: FilePlan;
  batchTransactions?: number;
  /** Store option `writemap`. */
  writemap: boolean;
}

/** Messages of workers/import.ts (besides `failed`: thread.ts). */
export type ImportThreadMessage = { type: 'progress'; done: number } | { type: 'done'; summary: ImportSummary; lastSlot: number | null };

/**
 * Imports `data.plan` into the store at `data.db` on an import thread.
 * @param onProgress blocks done so far (skipped ones included), after each batch.
 * @returns the import summary and the store's last slot afterwards.
 * @throws the thread's error (an Error naming the file that did not decode, a SchemaMismatchError's
 *   message, …) or `Error('import thread exited with code N')` if it stopped without an answer.
 */
export async function runImportThread(data: ImportThreadData, onProgress?: (done: number) => void): Promise<{ summary: ImportSummary; lastSlot: number | null }> {
  let result: { summary: ImportSummary; lastSlot: number | null } | null = null;
  const thread = startIndexingThread<ImportThreadMessage>({
    name: 'import',
    module: new URL('../../../workers/import.ts', import.meta.url),
    workerData: data,
    onMessage(m) {
      if (m.type === 'progress') onProgress?.(m.done);
      else result = { summary: m.summary, lastSlot: m.lastSlot };
    },
  });
  await thread.done;
  if (!result) throw new Error('import thread exited with code 0');
  return result;
}
