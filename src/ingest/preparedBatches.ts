/**
 * The prepare half of the RPC ingest loop: the poller's block batches (sources/poller.ts), each
 * prepared (prepareBatch.ts) as it comes, unknown trees looked up on chain (treeSync.ts
 * `TreeResolver`). Runs on the loop's own thread (loop.ts) or on the prepare thread
 * (workers/prepare.ts via threads/prepareThread.ts); both hand the loop {@link PreparedItem}s.
 */
import type { TreeEntry, TreeRegistry } from '../config/trees.ts';
import type { SolanaRpc } from '../solana/rpcClient.ts';
import { type PreparedBatch, prepareBatch } from './prepareBatch.ts';
import { type LiveSourceName, type LiveSourceOptions, type SourceChange, liveBlocks } from './sources/live.ts';
import { type PollerOptions, pollBlocks } from './sources/poller.ts';
import type { TreeResolver } from './treeSync.ts';

/** A prepared batch, and the time making it took (seconds; on the thread that made it). */
export interface PreparedItem {
  batch: PreparedBatch;
  prepareSeconds: number;
  /** Trees found on chain while preparing it (TreeResolver), now in the preparing thread's registry. */
  trees?: TreeEntry[];
  /** The source that gave its blocks (gRPC or the RPC poller). */
  source?: LiveSourceName;
  /**
   * When its last block's slot was first seen (Unix ms): on gRPC when the stream first named the slot,
   * with the poller alone when its getSlot first showed the slot, else the block's time (whole
   * seconds); absent when unknown. The ingest latency metric starts here.
   */
  seenAt?: number;
}

/** The live source's settings for `pollPreparedBatches` (gRPC with RPC fallback, sources/live.ts). */
export type LiveSettings = Pick<LiveSourceOptions, 'grpcUrl' | 'xToken' | 'grpc'> & { onSourceChange?: (c: SourceChange) => void };

/**
 * Batches of `pollBlocks`, each prepared (`prepareBatch`) as it comes, with the time that took.
 * Shared by the inline loop and the prepare thread (workers/prepare.ts). With `resolver` (sharing
 * `registry`), a batch that met unknown trees has them looked up on chain; when any is found, the
 * batch is prepared again with it and the item's `trees` lists the entries added.
 */
export async function* pollPreparedBatches(rpc: SolanaRpc, poll: PollerOptions, registry: TreeRegistry, resolver?: TreeResolver, live?: LiveSettings): AsyncGenerator<PreparedItem> {
  // What liveBlocks says of the batch it is about to yield (its onRelease runs just before the yield).
  let released: { source: LiveSourceName; lagMs: number | null } | null = null;
  // The poller alone: when its getSlot first showed each slot (Unix ms; the newest 4096 slots).
  const tipSeenAt = new Map<number, number>();
  let lastTip = -1;
  const onTip = (t: number) => {
    const now = Date.now();
    if (t - lastTip > 4096) tipSeenAt.clear(); // a jump (the first poll): nothing older is kept
    for (let s = Math.max(lastTip + 1, t - 4095); s <= t; s++) {
      tipSeenAt.set(s, now);
      tipSeenAt.delete(s - 4096);
    }
    if (t > lastTip) lastTip = t;
    poll.onTip?.(t);
  };
  const source = live ? liveBlocks(rpc, { ...poll, ...live, onRelease: (r) => (released = { source: r.source, lagMs: r.lagMs }) }) : pollBlocks(rpc, { ...poll, onTip });
  for await (const blocks of source) {
    const now = Date.now();
    const r = released as { source: LiveSourceName; lagMs: number | null } | null;
    released = null;
    const last = blocks[blocks.length - 1];
    const lastTime = last?.blockTime ?? 0;
    const seenAt = r?.lagMs != null ? now - r.lagMs : (last && tipSeenAt.get(last.slot)) ?? (lastTime > 0 ? lastTime * 1000 : undefined);
    const started = performance.now();
    let batch = prepareBatch(blocks, registry);
    let trees: TreeEntry[] = [];
    if (resolver && batch.unknownTrees.size) {
      trees = await resolver.resolve(batch.unknownTrees.keys(), poll.signal);
      // Stopped during the lookup: hand nothing over (a lookup cut short would have the batch skip a real tree's outputs for good).
      if (poll.signal?.aborted) return;
      if (trees.length) batch = prepareBatch(blocks, registry);
    }
    yield { batch, prepareSeconds: (performance.now() - started) / 1000, ...(trees.length ? { trees } : {}), source: r?.source ?? 'rpc', ...(seenAt !== undefined ? { seenAt } : {}) };
  }
}
