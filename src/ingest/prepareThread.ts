/**
 * The prepare half of the ingest loop on a thread of its own (workers/prepare.ts): poll the Solana
 * node, decode, parse and validate each batch (`prepareBatch`: hash recomputation included), and
 * hand the PreparedBatch over, while the calling thread commits the previous one
 * (`Indexer.commitBatch`). On a machine with a second core this overlaps the two halves of
 * catching up (bench:catchup). The thread runs at most {@link PREPARED_AHEAD} batches ahead of the
 * commits; each batch crosses threads by structured clone.
 */
import type { Config } from '../config/config.ts';
import { type ThreadFailure, threadError } from '../tsxWorker.ts';
import { startIndexingWorker } from './importThread.ts';
import type { PreparedBatch } from './indexer.ts';
import type { TreeEntry } from '../config/trees.ts';
import type { TreeLookupOptions } from './treeSync.ts';

/** Batches the prepare thread may have handed over that are not committed yet. */
export const PREPARED_AHEAD = 2;

/** workerData of workers/prepare.ts. */
export interface PrepareThreadData {
  rpcUrl: string;
  /** Trees added by config (loadTreeRegistry). */
  trees: Config['trees'];
  startSlot: number;
  lastIndexedSlot: number | null;
  concurrency: number;
  maxBatchBlocks: number;
  logLevel: string;
  /** Look unknown trees up on chain (runIngest `treeLookup`). */
  treeLookup?: TreeLookupOptions;
}

/** Messages of workers/prepare.ts. */
export type PrepareThreadMessage =
  | { type: 'tip'; tip: number }
  | { type: 'batch'; batch: PreparedBatch; prepareSeconds: number; trees?: TreeEntry[] }
  | ({ type: 'failed' } & ThreadFailure);

/** Messages to workers/prepare.ts. */
export type PrepareThreadCommand = { type: 'ack' } | { type: 'stop' };

/** A batch made on the prepare thread, and the time making it took there (seconds). */
export interface PreparedItem {
  batch: PreparedBatch;
  prepareSeconds: number;
  /** Trees found on chain while preparing it (TreeResolver), now in the preparing thread's registry. */
  trees?: TreeEntry[];
}

/**
 * Starts the prepare thread and yields its batches in slot order. Each `next()` after the first
 * tells the thread the previous batch is done (committed), which lets it run one batch further.
 * Ends when `signal` aborts (batches not yet taken are dropped: nothing of them was committed) or
 * the consumer stops; the thread is stopped and awaited either way.
 * @param onTip hears each chain tip the thread's poller sees.
 * @throws the thread's error (`Error(message)` with its stack) or `Error('prepare thread exited with code N')`.
 */
export async function* preparedBatchesFromThread(data: PrepareThreadData, opts: { signal: AbortSignal; onTip?: (tip: number) => void }): AsyncGenerator<PreparedItem> {
  const worker = startIndexingWorker(new URL('../../workers/prepare.ts', import.meta.url), data);
  const queue: PreparedItem[] = [];
  let failure: Error | null = null;
  let exited = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  const send = (c: PrepareThreadCommand) => {
    if (!exited) worker.postMessage(c);
  };
  worker.on('message', (m: PrepareThreadMessage) => {
    if (m.type === 'tip') opts.onTip?.(m.tip);
    else if (m.type === 'batch') queue.push({ batch: m.batch, prepareSeconds: m.prepareSeconds, ...(m.trees ? { trees: m.trees } : {}) });
    else failure = threadError(m);
    notify();
  });
  worker.on('error', (e) => {
    failure ??= threadError(e);
    notify();
  });
  const exit = new Promise<void>((resolve) =>
    worker.on('exit', (code) => {
      exited = true;
      if (code !== 0 && !failure && !opts.signal.aborted) failure = new Error(`prepare thread exited with code ${code}`);
      notify();
      resolve();
    }),
  );
  const onAbort = () => {
    send({ type: 'stop' });
    notify();
  };
  opts.signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      if (opts.signal.aborted) return;
      const item = queue.shift();
      if (item) {
        yield item;
        send({ type: 'ack' });
        continue;
      }
      if (failure) throw failure;
      if (exited) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    opts.signal.removeEventListener('abort', onAbort);
    send({ type: 'stop' });
    await exit;
  }
}
