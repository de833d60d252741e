/**
 * Entry point of the import thread of `refract index` (src/ingest/threads/importThread.ts): the file
 * import itself — open the store, index the planned files batch by batch (importFilePlan), report
 * progress — on a V8 heap of its own whose young generation is sized for batch indexing
 * (src/ingest/threads/thread.ts). The main thread keeps the progress bar and prints the summary.
 *
 * Messages to the parent (ImportThreadMessage): `progress` after each batch, then `done`; a failure
 * is posted as `failed` (serveThread; batches before it stay committed, a rerun resumes).
 *
 * Imports only src/ingest, src/store, src/config and the logger (no rpc, no prover).
 */
import { loadTreeRegistry } from '../src/config/trees.ts';
import { importFilePlan } from '../src/ingest/importFiles.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import type { ImportThreadData, ImportThreadMessage } from '../src/ingest/threads/importThread.ts';
import { serveThread } from '../src/ingest/threads/thread.ts';
import { createLogger } from '../src/log.ts';
import { Store } from '../src/store/store.ts';

await serveThread<ImportThreadData, ImportThreadMessage>(async ({ data, post }) => {
  const store = new Store({ path: data.db, writemap: data.writemap });
  try {
    const indexer = new Indexer(store, loadTreeRegistry(), createLogger('refract-index'));
    const summary = importFilePlan(indexer, data.plan, { batchTransactions: data.batchTransactions, onProgress: (done) => post({ type: 'progress', done }) });
    post({ type: 'done', summary, lastSlot: store.read((r) => r.lastSlot()) });
  } finally {
    await store.close();
  }
});
