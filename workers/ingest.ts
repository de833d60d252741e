/**
 * Entry point of the ingest thread of `refract start` (src/ingest/threads/ingestThread.ts): the
 * ingest loop (src/ingest/loop.ts `runIngest`) on its own V8 heap. Opens the store, polls the Solana
 * node at `rpcUrl`, indexes batch by batch and posts each IngestEvent to the main thread. The
 * parent's `stop` aborts the loop, which finishes the batch in progress; the store is then closed
 * and the thread exits. An error that ends the loop by itself is posted as `failed` (serveThread,
 * src/ingest/threads/thread.ts) before the thread exits.
 *
 * Imports only src/ingest, src/store, src/config, src/solana and the logger (no rpc, no prover).
 */
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { runIngest } from '../src/ingest/loop.ts';
import type { IngestThreadData, IngestThreadMessage } from '../src/ingest/threads/ingestThread.ts';
import { serveThread } from '../src/ingest/threads/thread.ts';
import { createLogger } from '../src/log.ts';
import { SolanaRpc } from '../src/solana/rpcClient.ts';
import { Store } from '../src/store/store.ts';

await serveThread<IngestThreadData, IngestThreadMessage>(async ({ data, post, signal }) => {
  const log = createLogger('refract', data.logLevel);
  const store = new Store({ path: data.db, writemap: data.writemap });
  try {
    const indexer = new Indexer(store, loadTreeRegistry(data.trees), log);
    await runIngest(indexer, new SolanaRpc(data.rpcUrl), {
      startSlot: data.startSlot,
      concurrency: data.concurrency,
      maxBatchBlocks: data.maxBatchBlocks,
      signal,
      log,
      onEvent: (event) => post({ type: 'event', event }),
      prepareThread: data.prepareThread ? { trees: data.trees, logLevel: data.logLevel } : undefined,
      treeLookup: data.treeLookup,
      backfill: data.backfill,
      sequenceCheck: data.sequenceCheck,
      grpc: data.grpc,
    });
  } finally {
    await store.close();
  }
});
