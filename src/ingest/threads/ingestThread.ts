/**
 * Runs the daemon's ingest loop (loop.ts `runIngest`: poll the Solana node, index each batch in one
 * write transaction) on an indexing thread of its own (workers/ingest.ts; young generation and
 * protocol: thread.ts), for `refract start`.
 *
 * Why a thread:
 * - the API stops stalling: indexing a batch is one synchronous write transaction (tens to hundreds
 *   of milliseconds while catching up), which on the main thread holds every request queued behind
 *   it; on its own thread the main thread keeps serving (LMDB readers never wait for the writer);
 * - the thread's V8 heap gets the indexing threads' young generation (INGEST_YOUNG_GENERATION_MB,
 *   thread.ts), which indexing needs and the API's small requests do not.
 * The thread opens the same LMDB environment (lmdb-js shares one environment between the threads of
 * a process); its commits are visible to the main thread from its next read snapshot. Progress comes
 * back as IngestEvents (progress.ts), which the main thread turns into metrics.
 */
import type { Worker } from 'node:worker_threads';
import type { Config } from '../../config/config.ts';
import type { IngestEvent } from '../progress.ts';
import type { BackfillSettings } from '../loop.ts';
import type { TreeLookupOptions } from '../treeSync.ts';
import { startIndexingThread } from './thread.ts';

/** workerData of workers/ingest.ts. */
export interface IngestThreadData {
  db: string;
  writemap: boolean;
  /** Trees added by config (loadTreeRegistry). */
  trees: Config['trees'];
  rpcUrl: string;
  startSlot?: number;
  concurrency: number;
  maxBatchBlocks: number;
  logLevel: string;
  /** Prepare batches on a second thread (runIngest `prepareThread`). */
  prepareThread: boolean;
  /** Look unknown trees up on chain (runIngest `treeLookup`). */
  treeLookup?: TreeLookupOptions;
  /** Signature backfill settings (runIngest `backfill`). */
  backfill?: BackfillSettings;
  /** runIngest `sequenceCheck`. */
  sequenceCheck?: boolean;
  /** runIngest `grpc`. */
  grpc?: { url: string; xToken?: string };
}

/**
 * Messages of workers/ingest.ts to the main thread (besides `failed`, posted when the loop ended by
 * itself with an error, not after `stop`: thread.ts).
 */
export type IngestThreadMessage = { type: 'event'; event: IngestEvent };

/** A running ingest thread. */
export interface IngestThread {
  /**
   * Settles when the thread has exited: resolves after a clean stop, rejects with the loop's error
   * (`Error(message)` with the thread's stack, e.g. StartSlotUnavailable's text, or "the block source
   * ended … without being stopped") or `Error('ingest thread exited with code N')`.
   */
  readonly done: Promise<void>;
  /** Asks the loop to stop (it finishes the batch being indexed and closes its store), then waits for `done`. */
  stop(): Promise<void>;
  readonly worker: Worker;
}

/**
 * Starts the ingest loop on a thread. `onEvent` hears its progress on the main thread.
 * @returns the thread handle; errors of the loop arrive through `done`.
 */
export function startIngestThread(data: IngestThreadData, onEvent: (e: IngestEvent) => void): IngestThread {
  const thread = startIndexingThread<IngestThreadMessage>({
    name: 'ingest',
    module: new URL('../../../workers/ingest.ts', import.meta.url),
    workerData: data,
    onMessage: (m) => onEvent(m.event),
  });
  return { done: thread.done, worker: thread.worker, stop: () => thread.stop() };
}
