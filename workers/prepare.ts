/**
 * Prepare thread of the ingest loop (src/ingest/prepareThread.ts): polls the Solana node from
 * `startSlot` (pollBlocks), prepares each batch (`prepareBatch`: parse, validate, recompute every
 * output hash) and posts it with the time that took. At most PREPARED_AHEAD batches are out
 * without an `ack`; `stop` ends polling. A bug that throws is posted as `failed` before the thread
 * exits. Touches no store.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { PREPARED_AHEAD, type PrepareThreadCommand, type PrepareThreadData, type PrepareThreadMessage } from '../src/ingest/prepareThread.ts';
import { pollPreparedBatches } from '../src/ingest/service.ts';
import { TreeResolver } from '../src/ingest/treeSync.ts';
import { createLogger } from '../src/log.ts';
import { threadFailure } from '../src/tsxWorker.ts';
import { SolanaRpc } from '../src/solana/rpcClient.ts';

const data = workerData as PrepareThreadData;
const post = (m: PrepareThreadMessage) => parentPort!.postMessage(m);
const abort = new AbortController();
let credits = PREPARED_AHEAD;
let wake: (() => void) | null = null;
parentPort!.on('message', (c: PrepareThreadCommand) => {
  if (c.type === 'ack') credits++;
  else abort.abort();
  wake?.();
  wake = null;
});
const log = createLogger('refract', data.logLevel);
const registry = loadTreeRegistry(data.trees);
try {
  const poll = {
    startSlot: data.startSlot,
    lastIndexedSlot: data.lastIndexedSlot,
    concurrency: data.concurrency,
    maxBatchBlocks: data.maxBatchBlocks,
    signal: abort.signal,
    log,
    onTip: (tip: number) => post({ type: 'tip', tip }),
  };
  const rpc = new SolanaRpc(data.rpcUrl);
  const resolver = data.treeLookup && new TreeResolver(rpc, registry, { ...data.treeLookup, log });
  for await (const { batch, prepareSeconds, trees } of pollPreparedBatches(rpc, poll, registry, resolver)) {
    post({ type: 'batch', batch, prepareSeconds, ...(trees ? { trees } : {}) });
    credits--;
    while (credits <= 0 && !abort.signal.aborted) await new Promise<void>((resolve) => (wake = resolve));
  }
} catch (err) {
  post({ type: 'failed', ...threadFailure(err) });
} finally {
  parentPort!.close();
}
