/**
 * Worker thread of `refract index` (src/commands/index.ts): the file import itself — open the
 * store, index the planned files batch by batch (importFilePlan), report progress — on a V8 heap
 * of its own whose young generation is sized for batch indexing (see INGEST_YOUNG_GENERATION_MB in
 * src/ingest/importThread.ts). The main thread keeps the progress bar and prints the summary.
 *
 * Messages to the parent: `{type: 'progress', done}` after each batch, then `{type: 'done', summary,
 * lastSlot}`. A failure is thrown: the parent gets the worker's `error` event (batches before it
 * stay committed; a rerun resumes).
 *
 * Imports only src/ingest, src/store, src/config and the logger (no rpc, no prover).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadTreeRegistry } from '../src/config/trees.ts';
import type { ImportThreadData, ImportThreadMessage } from '../src/ingest/importThread.ts';
import { importFilePlan } from '../src/ingest/importFiles.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { createLogger } from '../src/log.ts';
import { Store } from '../src/store/store.ts';

const data = workerData as ImportThreadData;
const post = (m: ImportThreadMessage) => parentPort!.postMessage(m);
const store = new Store({ path: data.db, writemap: data.writemap });
try {
  const indexer = new Indexer(store, loadTreeRegistry(), createLogger('refract-index'));
  const summary = importFilePlan(indexer, data.plan, { batchTransactions: data.batchTransactions, onProgress: (done) => post({ type: 'progress', done }) });
  post({ type: 'done', summary, lastSlot: store.read((r) => r.lastSlot()) });
} finally {
  await store.close();
}
