/**
 * Entry point of the prepare thread of the ingest loop (src/ingest/threads/prepareThread.ts): polls
 * the Solana node from `startSlot` and prepares each batch (src/ingest/preparedBatches.ts
 * `pollPreparedBatches`: parse, validate, recompute every output hash) and posts it with the time
 * that took. At most PREPARED_AHEAD batches are out without an `ack`; `stop` ends polling. A bug that
 * throws is posted as `failed` (serveThread, src/ingest/threads/thread.ts) before the thread exits.
 * Touches no store.
 */
import { loadTreeRegistry } from '../src/config/trees.ts';
import { pollPreparedBatches } from '../src/ingest/preparedBatches.ts';
import type { SourceChange } from '../src/ingest/sources/live.ts';
import { TreeResolver } from '../src/ingest/treeSync.ts';
import { PREPARED_AHEAD, type PrepareThreadCommand, type PrepareThreadData, type PrepareThreadMessage } from '../src/ingest/threads/prepareThread.ts';
import { serveThread } from '../src/ingest/threads/thread.ts';
import { createLogger } from '../src/log.ts';
import { SolanaRpc } from '../src/solana/rpcClient.ts';

await serveThread<PrepareThreadData, PrepareThreadMessage, PrepareThreadCommand>(async ({ data, post, signal, onCommand }) => {
  let credits = PREPARED_AHEAD;
  let wake: (() => void) | null = null;
  onCommand((c) => {
    if (c.type === 'ack') credits++;
    wake?.();
    wake = null;
  });
  const log = createLogger('refract', data.logLevel);
  const registry = loadTreeRegistry(data.trees);
  const poll = {
    startSlot: data.startSlot,
    lastIndexedSlot: data.lastIndexedSlot,
    concurrency: data.concurrency,
    maxBatchBlocks: data.maxBatchBlocks,
    signal,
    log,
    onTip: (tip: number) => post({ type: 'tip', tip }),
  };
  const rpc = new SolanaRpc(data.rpcUrl);
  const resolver = data.treeLookup && new TreeResolver(rpc, registry, { ...data.treeLookup, log });
  const live = data.grpc ? { grpcUrl: data.grpc.url, xToken: data.grpc.xToken, onSourceChange: (change: SourceChange) => post({ type: 'source', change }) } : undefined;
  for await (const { batch, prepareSeconds, trees, source, seenAt } of pollPreparedBatches(rpc, poll, registry, resolver, live)) {
    post({ type: 'batch', batch, prepareSeconds, ...(trees ? { trees } : {}), ...(source ? { source } : {}), ...(seenAt !== undefined ? { seenAt } : {}) });
    credits--;
    while (credits <= 0 && !signal.aborted) await new Promise<void>((resolve) => (wake = resolve));
  }
});
