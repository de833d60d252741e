/**
 * The ingest loop of `refract start`: poll the Solana RPC, prepare each batch (here or on a prepare
 * thread), commit it in one write transaction, report progress as IngestEvents (events.ts), stop
 * cleanly (finish the current batch) on abort.
 */
import { setImmediate } from 'node:timers/promises';
import { getHeapStatistics } from 'node:v8';
import type { Logger } from 'pino';
import { METHOD_NOT_FOUND, type SolanaRpc, SolanaRpcError } from '../solana/rpcClient.ts';
import type { Config } from '../config/config.ts';
import type { TreeEntry, TreeRegistry } from '../config/trees.ts';
import type { IngestEvent } from './events.ts';
import { type BatchResult, type Indexer, prepareBatch } from './indexer.ts';
import { type PollerOptions, pollBlocks, sleep } from './poller.ts';
import { type PreparedItem, preparedBatchesFromThread } from './prepareThread.ts';
import { displayUrl } from '../displayUrl.ts';
import { type TreeLookupOptions, TreeResolver } from './treeSync.ts';

/** Options of the ingest loop. */
export interface IngestOptions {
  /** First slot when the store is empty or ends before it (default: see `resolveStartSlot`). */
  startSlot?: number;
  concurrency: number;
  maxBatchBlocks: number;
  signal: AbortSignal;
  log: Logger;
  /** Hears progress (resume point, chain tip, each committed batch); see events.ts. */
  onEvent?: (e: IngestEvent) => void;
  /**
   * Prepare batches (poll, decode, parse, validate) on a thread of their own (prepareThread.ts)
   * while this thread commits: what that thread needs besides the poll settings. Absent: both halves
   * run here, one after the other.
   */
  prepareThread?: { trees: Config['trees']; logLevel: string };
  /**
   * Look trees the registry does not know up on chain (getAccountInfo, negative cache) before their
   * outputs are skipped (treeSync.ts `TreeResolver`); absent = skip them at once.
   */
  treeLookup?: TreeLookupOptions;
}

/**
 * Clusters with a known first Light Protocol slot, by genesis hash (photon.md §1.1 "network start
 * slot"): indexing an empty store starts there.
 */
export const NETWORK_START_SLOTS: Readonly<Record<string, { network: string; slot: number }>> = {
  '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d': { network: 'mainnet-beta', slot: 286_193_745 },
  EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG: { network: 'devnet', slot: 319_998_225 },
};

/** The node cannot serve the history an empty store needs (it has pruned the cluster's Light start slot). */
export class StartSlotUnavailable extends Error {
  override readonly name = 'StartSlotUnavailable';
}

/**
 * Resolves where polling starts and the parent-chain anchor:
 * - a store with blocks: after its last slot (anchor = that slot, unless it came from transaction
 *   files, whose synthetic blocks have no blockhash and so are not on the node's chain);
 * - `startSlot` past the store's end (or on an empty store): from there, unanchored;
 * - an empty store: mainnet-beta and devnet (by genesis hash) from the slot after their network start
 *   slot (Photon: "last" = that slot, the stream starts at last+1); other clusters (a local validator)
 *   from the node's first available block.
 * RPC failures are retried (every 2 s, logged) until `signal` aborts.
 * @throws StartSlotUnavailable when the node's first available block is past the cluster's Light start
 *   slot (pruned history: accounts created earlier would be missing and every root wrong); the message
 *   says to use an archival node or pass `--start-slot`.
 */
export async function resolveStartSlot(
  indexer: Indexer,
  rpc: SolanaRpc,
  startSlot: number | undefined,
  opts: { signal?: AbortSignal; log?: Logger } = {},
): Promise<{ start: number; lastIndexed: number | null }> {
  const { last, fromFiles } = indexer.store.read((r) => {
    const slot = r.lastSlot();
    return { last: slot, fromFiles: slot !== null && !r.block(slot)?.blockhash };
  });
  if (startSlot !== undefined && (last === null || startSlot > last)) return { start: startSlot, lastIndexed: null };
  if (last !== null) return { start: last + 1, lastIndexed: fromFiles ? null : last };
  for (;;) {
    try {
      const genesis = await rpc.getGenesisHash(opts.signal).catch((e: unknown) => {
        // Only a node without the method counts as an unknown cluster; any other error (a 429…) is retried.
        if (e instanceof SolanaRpcError && e.code === METHOD_NOT_FOUND) return null;
        throw e;
      });
      const first = await rpc.getFirstAvailableBlock(opts.signal);
      const known = genesis ? NETWORK_START_SLOTS[genesis] : undefined;
      if (!known) return { start: first, lastIndexed: null };
      // Like Photon, the network start slot counts as the last indexed one: the stream starts after it.
      if (first > known.slot + 1) {
        throw new StartSlotUnavailable(
          `${displayUrl(rpc.url)} (${known.network}) has no blocks before slot ${first}, but Light Protocol state starts after slot ${known.slot}: index from an archival node, or pass --start-slot to accept an index without the earlier history`,
        );
      }
      return { start: known.slot + 1, lastIndexed: null };
    } catch (err) {
      if (err instanceof StartSlotUnavailable) throw err;
      opts.log?.warn({ err: (err as Error).message, rpc: displayUrl(rpc.url) }, 'cannot ask the Solana node where to start; retrying in 2 s');
      if (opts.signal?.aborted) throw err;
      await sleep(2000, opts.signal);
      if (opts.signal?.aborted) throw err;
    }
  }
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

/**
 * Runs until `opts.signal` aborts. Store errors are logged and the batch is retried after a pause
 * (the write transaction left nothing behind; an abort cuts the pause short). Throws what ends the
 * loop otherwise: StartSlotUnavailable, a prepare thread's failure, or a block source that ended
 * without an abort.
 */
export async function runIngest(indexer: Indexer, rpc: SolanaRpc, opts: IngestOptions): Promise<void> {
  let resolved: Awaited<ReturnType<typeof resolveStartSlot>>;
  try {
    resolved = await resolveStartSlot(indexer, rpc, opts.startSlot, { signal: opts.signal, log: opts.log });
  } catch (err) {
    if (opts.signal.aborted) return;
    throw err;
  }
  const { start, lastIndexed } = resolved;
  opts.log.info({ start, lastIndexed, rpc: displayUrl(rpc.url) }, 'ingest starting');
  let lastSlot = lastIndexed ?? 0;
  let tip = 0;
  const emit = opts.onEvent ?? (() => {});
  if (lastIndexed !== null) emit({ kind: 'resumed', lastIndexed });
  const onTip = (s: number) => {
    tip = s;
    emit({ kind: 'tip', tip, lag: Math.max(0, tip - lastSlot) });
  };
  const poll = { startSlot: start, lastIndexedSlot: lastIndexed, concurrency: opts.concurrency, maxBatchBlocks: opts.maxBatchBlocks };
  const batches: AsyncIterable<PreparedItem> = opts.prepareThread
    ? preparedBatchesFromThread({ ...poll, rpcUrl: rpc.url, trees: opts.prepareThread.trees, logLevel: opts.prepareThread.logLevel, treeLookup: opts.treeLookup }, { signal: opts.signal, onTip })
    : pollPreparedBatches(rpc, { ...poll, signal: opts.signal, log: opts.log, onTip }, indexer.registry, opts.treeLookup && new TreeResolver(rpc, indexer.registry, { ...opts.treeLookup, log: opts.log }));
  for await (const { batch, prepareSeconds, trees } of batches) {
    if (trees?.length) {
      // Found on chain while preparing (maybe on the prepare thread): this thread's registry and the API's learn them too.
      for (const t of trees) indexer.registry.add(t);
      emit({ kind: 'trees', trees });
    }
    const first = batch.records[0]?.slot;
    let committed: { r: BatchResult; seconds: number } | undefined;
    for (let attempt = 0; !committed; attempt++) {
      try {
        const started = performance.now();
        const r = indexer.commitBatch(batch);
        committed = { r, seconds: prepareSeconds + (performance.now() - started) / 1000 };
      } catch (err) {
        opts.log.error({ err, slots: [first, batch.lastSlot], attempt }, 'indexing a batch failed; nothing was written, retrying');
        await sleep(Math.min(30_000, 500 * 2 ** attempt), opts.signal);
        if (opts.signal.aborted) return;
      }
    }
    const { r, seconds } = committed;
    lastSlot = r.lastSlot ?? lastSlot;
    emit({
      kind: 'batch',
      lastSlot,
      lag: Math.max(0, tip - lastSlot),
      blocks: batch.records.length,
      transactions: r.transactions,
      outputs: r.outputsInserted,
      rejected: r.rejected.length,
      unknownTrees: [...r.unknownTrees],
      ...(r.rootMismatches.size ? { rootMismatches: [...r.rootMismatches] } : {}),
      ...(r.unparsed.length ? { unparsed: countBy(r.unparsed.map((u) => u.program)) } : {}),
      seconds,
      heapUsedBytes: getHeapStatistics().used_heap_size,
    });
    opts.log.debug({ slots: [first, lastSlot], outputs: r.outputsInserted, txs: r.transactions }, 'indexed batch');
    // Give the event loop a turn between batches: a prepare thread that is ahead always has the next
    // batch waiting, and taking it at once would keep this thread's I/O (the API, a stop) waiting.
    await setImmediate();
  }
  if (!opts.signal.aborted) throw new Error(`the block source ended at slot ${lastSlot} without being stopped`);
  opts.log.info({ lastSlot }, 'ingest stopped');
}

/** [value, count] pairs of `values`, in first-seen order. */
function countBy(values: readonly string[]): [string, number][] {
  const m = new Map<string, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return [...m];
}
