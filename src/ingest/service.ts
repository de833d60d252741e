/**
 * The ingest loop of `refract start`: poll the Solana RPC, index each batch in one write
 * transaction, export progress as metrics, stop cleanly (finish the current batch) on abort.
 */
import type { Logger } from 'pino';
import type { Metrics } from '../metrics.ts';
import type { SolanaRpc } from '../solana/rpcClient.ts';
import type { Indexer } from './indexer.ts';
import { pollBlocks } from './poller.ts';

/** Options of the ingest loop. */
export interface IngestOptions {
  /** First slot when the store is empty (default: the node's first available block, else 0). */
  startSlot?: number;
  concurrency: number;
  maxBatchBlocks: number;
  signal: AbortSignal;
  log: Logger;
  metrics?: Metrics;
}

/** Resolves the slot to start from: after the store's last slot, else `startSlot`, else the node's first available block. */
export async function resolveStartSlot(indexer: Indexer, rpc: SolanaRpc, startSlot: number | undefined): Promise<{ start: number; lastIndexed: number | null }> {
  const last = indexer.store.read((r) => r.lastSlot());
  if (startSlot !== undefined && (last === null || startSlot > last)) return { start: startSlot, lastIndexed: null };
  if (last !== null) return { start: last + 1, lastIndexed: last };
  try {
    return { start: await rpc.getFirstAvailableBlock(), lastIndexed: null };
  } catch {
    return { start: 0, lastIndexed: null };
  }
}

/**
 * Runs until `opts.signal` aborts. Store errors are logged and the batch is retried after a pause
 * (the write transaction left nothing behind).
 */
export async function runIngest(indexer: Indexer, rpc: SolanaRpc, opts: IngestOptions): Promise<void> {
  const { start, lastIndexed } = await resolveStartSlot(indexer, rpc, opts.startSlot);
  opts.log.info({ start, lastIndexed, rpc: rpc.url }, 'ingest starting');
  let lastSlot = lastIndexed ?? 0;
  let tip = 0;
  const m = opts.metrics;
  if (lastIndexed !== null) m?.indexerSlot.set(lastIndexed);
  for await (const batch of pollBlocks(rpc, {
    startSlot: start,
    lastIndexedSlot: lastIndexed,
    concurrency: opts.concurrency,
    maxBatchBlocks: opts.maxBatchBlocks,
    signal: opts.signal,
    log: opts.log,
    onTip: (s) => {
      tip = s;
      m?.chainTipSlot.set(s);
      m?.indexerLag.set(Math.max(0, tip - lastSlot));
    },
  })) {
    for (let attempt = 0; ; attempt++) {
      try {
        const r = indexer.indexBlocks(batch);
        lastSlot = r.lastSlot ?? lastSlot;
        if (m) {
          m.indexerSlot.set(lastSlot);
          m.indexerLag.set(Math.max(0, tip - lastSlot));
          m.ingestBlocks.inc(batch.length);
          m.ingestTransactions.inc(r.transactions);
          m.ingestOutputs.inc(r.outputsInserted);
          m.ingestRejected.inc(r.rejected.length);
          for (const [tree, n] of r.unknownTrees) m.ingestUnknownTree.inc({ tree }, n);
        }
        opts.log.debug({ slots: [batch[0]!.slot, lastSlot], outputs: r.outputsInserted, txs: r.transactions }, 'indexed batch');
        break;
      } catch (err) {
        opts.log.error({ err, slots: [batch[0]!.slot, batch[batch.length - 1]!.slot], attempt }, 'indexing a batch failed; nothing was written, retrying');
        await new Promise((res) => setTimeout(res, Math.min(30_000, 500 * 2 ** attempt)));
        if (opts.signal.aborted) return;
      }
    }
  }
  opts.log.info({ lastSlot }, 'ingest stopped');
}
