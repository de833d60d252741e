/**
 * The prepare half of the RPC ingest loop: the poller's block batches (sources/poller.ts), each
 * prepared (prepareBatch.ts) as it comes, unknown trees looked up on chain (sources/treeSync.ts
 * `TreeResolver`). Runs on the loop's own thread (loop.ts) or on the prepare thread
 * (workers/prepare.ts via threads/prepareThread.ts); both hand the loop {@link PreparedItem}s.
 */
import type { TreeEntry, TreeRegistry } from '../config/trees.ts';
import type { SolanaRpc } from '../solana/rpcClient.ts';
import { type PreparedBatch, prepareBatch } from './prepareBatch.ts';
import { type PollerOptions, pollBlocks } from './sources/poller.ts';
import type { TreeResolver } from './sources/treeSync.ts';

/** A prepared batch, and the time making it took (seconds; on the thread that made it). */
export interface PreparedItem {
  batch: PreparedBatch;
  prepareSeconds: number;
  /** Trees found on chain while preparing it (TreeResolver), now in the preparing thread's registry. */
  trees?: TreeEntry[];
}

/**
 * Batches of `pollBlocks`, each prepared (`prepareBatch`) as it comes, with the time that took.
 * Shared by the inline loop and the prepare thread (workers/prepare.ts). With `resolver` (sharing
 * `registry`), a batch that met unknown trees has them looked up on chain; when any is found, the
 * batch is prepared again with it and the item's `trees` lists the entries added.
 */
export async function* pollPreparedBatches(rpc: SolanaRpc, poll: PollerOptions, registry: TreeRegistry, resolver?: TreeResolver): AsyncGenerator<PreparedItem> {
  for await (const blocks of pollBlocks(rpc, poll)) {
    const started = performance.now();
    let batch = prepareBatch(blocks, registry);
    let trees: TreeEntry[] = [];
    if (resolver && batch.unknownTrees.size) {
      trees = await resolver.resolve(batch.unknownTrees.keys(), poll.signal);
      // Stopped during the lookup: hand nothing over (a lookup cut short would have the batch skip a real tree's outputs for good).
      if (poll.signal?.aborted) return;
      if (trees.length) batch = prepareBatch(blocks, registry);
    }
    yield { batch, prepareSeconds: (performance.now() - started) / 1000, ...(trees.length ? { trees } : {}) };
  }
}
