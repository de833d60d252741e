/**
 * Worker thread of `refract start` (src/ingest/ingestThread.ts): the ingest loop (runIngest) on its
 * own V8 heap. Opens the store, polls the Solana node at `rpcUrl`, indexes batch by batch and posts
 * each IngestEvent to the main thread. A `{type: 'stop'}` message aborts the loop, which finishes the
 * batch in progress; the store is then closed and the thread exits. An error that ends the loop by
 * itself is posted as `{type: 'failed', message}` before the thread exits.
 *
 * Imports only src/ingest, src/store, src/config, src/solana and the logger (no rpc, no prover).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import type { IngestThreadData, IngestThreadMessage } from '../src/ingest/ingestThread.ts';
import { runIngest } from '../src/ingest/service.ts';
import { createLogger } from '../src/log.ts';
import { threadFailure } from '../src/tsxWorker.ts';
import { SolanaRpc } from '../src/solana/rpcClient.ts';
import { Store } from '../src/store/store.ts';

const data = workerData as IngestThreadData;
const post = (m: IngestThreadMessage) => parentPort!.postMessage(m);
const abort = new AbortController();
parentPort!.on('message', (m: { type: string }) => {
  if (m.type === 'stop') abort.abort();
});
const log = createLogger('refract', data.logLevel);
const store = new Store({ path: data.db, writemap: data.writemap });
try {
  const indexer = new Indexer(store, loadTreeRegistry(data.trees), log);
  await runIngest(indexer, new SolanaRpc(data.rpcUrl), {
    startSlot: data.startSlot,
    concurrency: data.concurrency,
    maxBatchBlocks: data.maxBatchBlocks,
    signal: abort.signal,
    log,
    onEvent: (event) => post({ type: 'event', event }),
    prepareThread: data.prepareThread ? { trees: data.trees, logLevel: data.logLevel } : undefined,
    treeLookup: data.treeLookup,
  });
} catch (err) {
  post({ type: 'failed', ...threadFailure(err) });
} finally {
  await store.close();
  parentPort!.close();
}
