/**
 * The prepare half of the ingest loop on a thread of its own (workers/prepare.ts; young generation
 * and protocol: thread.ts): poll the Solana node, decode, parse and validate each batch
 * (preparedBatches.ts `pollPreparedBatches`: `prepareBatch`, hash recomputation included), and hand
 * the PreparedBatch over, while the calling thread commits the previous one (`Indexer.commitBatch`).
 * On a machine with a second core this overlaps the two halves of catching up (bench:catchup). The
 * thread runs at most {@link PREPARED_AHEAD} batches ahead of the commits; each batch crosses threads
 * by structured clone.
 */
import type { Config } from '../../config/config.ts';
import type { TreeEntry } from '../../config/trees.ts';
import type { PreparedBatch } from '../prepareBatch.ts';
import type { PreparedItem } from '../preparedBatches.ts';
import type { LiveSourceName, SourceChange } from '../sources/live.ts';
import type { TreeLookupOptions } from '../treeSync.ts';
import { startIndexingThread } from './thread.ts';

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
  /** Follow the chain over Yellowstone gRPC with the RPC poller as fallback (runIngest `grpc`). */
  grpc?: { url: string; xToken?: string };
}

/** Messages of workers/prepare.ts (besides `failed`: thread.ts). */
export type PrepareThreadMessage =
  | { type: 'tip'; tip: number }
  | { type: 'source'; change: SourceChange }
  | { type: 'batch'; batch: PreparedBatch; prepareSeconds: number; trees?: TreeEntry[]; source?: LiveSourceName; seenAt?: number };

/** Commands to workers/prepare.ts: `ack` = a batch was committed (besides `stop`: thread.ts). */
export type PrepareThreadCommand = { type: 'ack' };

/**
 * Starts the prepare thread and yields its batches in slot order. Each `next()` after the first
 * tells the thread the previous batch is done (committed), which lets it run one batch further.
 * Ends when `signal` aborts (batches not yet taken are dropped: nothing of them was committed) or
 * the consumer stops; the thread is stopped and awaited either way.
 * @param onTip hears each chain tip the thread's poller sees.
 * @throws the thread's error (`Error(message)` with its stack) or `Error('prepare thread exited with code N')`.
 */
export async function* preparedBatchesFromThread(data: PrepareThreadData, opts: { signal: AbortSignal; onTip?: (tip: number) => void; onSourceChange?: (c: SourceChange) => void }): AsyncGenerator<PreparedItem> {
  const queue: PreparedItem[] = [];
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  const thread = startIndexingThread<PrepareThreadMessage, PrepareThreadCommand>({
    name: 'prepare',
    module: new URL('../../../workers/prepare.ts', import.meta.url),
    workerData: data,
    onMessage(m) {
      if (m.type === 'tip') opts.onTip?.(m.tip);
      else if (m.type === 'source') opts.onSourceChange?.(m.change);
      else queue.push({ batch: m.batch, prepareSeconds: m.prepareSeconds, ...(m.trees ? { trees: m.trees } : {}), ...(m.source ? { source: m.source } : {}), ...(m.seenAt !== undefined ? { seenAt: m.seenAt } : {}) });
    },
    onChange: notify,
  });
  const onAbort = () => {
    void thread.stop();
    notify();
  };
  opts.signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      if (opts.signal.aborted) return;
      const item = queue.shift();
      if (item) {
        yield item;
        thread.send({ type: 'ack' });
        continue;
      }
      if (thread.failure) throw thread.failure;
      // Exited without a failure: code 0 ends the batches, another code rejects `done`.
      if (thread.exited) return await thread.done;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    opts.signal.removeEventListener('abort', onAbort);
    // Stopped here (abort, the consumer's break, a failure): how the thread ends is no news.
    await thread.stop().catch(() => {});
  }
}
