/**
 * RPC block source: polls a Solana node and yields block batches strictly in slot order.
 *
 * getSlot every `pollIntervalMs`; slots next..latest are fetched with at most `concurrency` getBlock
 * calls in flight; skipped slots (-32007/-32009, or a null result) are passed over; any other error is
 * retried with exponential backoff (capped). Blocks are released in ascending slot order, as a batch
 * of every consecutive block that is ready, and only while each one's `parentSlot` is the last
 * released slot (photon.md §1.1):
 * - a block whose parent is a slot the node called skipped: that slot is fetched again, and now must
 *   hold a block (a "skipped" answer is retried), before the child is released;
 * - a block whose parent is older than the last released one (another fork, or a store indexed from
 *   another cluster): nothing is released; the block is fetched again after a pause, with an error
 *   logged each time, so the indexer stops (visible as lag) instead of mixing chains.
 */
import type { Logger } from 'pino';
import { decodeBlockJson } from '../solana/decode.ts';
import type { SolanaRpc } from '../solana/rpcClient.ts';
import type { BlockInfo } from '../types.ts';

/** Poller options. */
export interface PollerOptions {
  /** First slot to fetch. */
  startSlot: number;
  /** Slot of the last block already indexed (its parent-chain anchor), or null: the first block is not checked. */
  lastIndexedSlot: number | null;
  /** Max getBlock calls in flight (default 20). */
  concurrency?: number;
  /** getSlot interval in ms (default 400). */
  pollIntervalMs?: number;
  /** Max blocks per yielded batch (default 100). */
  maxBatchBlocks?: number;
  /** Abort to stop after the current batch. */
  signal?: AbortSignal;
  log?: Logger;
  /** Called with every observed chain tip (for the lag metric). */
  onTip?(slot: number): void;
}

/** Resolves after `ms` or as soon as `signal` aborts (the abort listener is removed either way). */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

/** Yields batches of consecutive blocks in slot order until `signal` aborts. */
export async function* pollBlocks(rpc: SolanaRpc, opts: PollerOptions): AsyncGenerator<BlockInfo[]> {
  const concurrency = opts.concurrency ?? 20;
  const maxBatch = opts.maxBatchBlocks ?? 100;
  const ready = new Map<number, BlockInfo | null>();
  const inFlight = new Set<number>();
  let next = opts.startSlot; // next slot to release
  let nextToFetch = opts.startSlot;
  let lastReleased = opts.lastIndexedSlot;
  // Skipped slots scanned since the last release: kept in `ready` until a later block is released,
  // so a rewind to one of them (a child names it as parent) scans them again.
  const passed = new Set<number>();
  // Slots a fetched block names as its parent: a "skipped" answer for them is an error (retried).
  const mustExist = new Map<number, number>(); // parent slot → child slot
  let tip = -1;
  let wake: (() => void) | null = null;
  const notify = () => { wake?.(); wake = null; };

  const fetchSlot = async (slot: number, initialDelay = 0) => {
    let delay = 100;
    if (initialDelay) await sleep(initialDelay, opts.signal);
    for (;;) {
      if (opts.signal?.aborted) return;
      try {
        const json = await rpc.getBlock(slot);
        const child = mustExist.get(slot);
        if (json === null && child !== undefined) throw new Error(`the node calls slot ${slot} skipped, but block ${child} names it as its parent`);
        ready.set(slot, json === null ? null : decodeBlockJson(json, slot));
        break;
      } catch (err) {
        opts.log?.warn({ slot, err: (err as Error).message, retryInMs: delay }, 'getBlock failed; retrying');
        await sleep(delay, opts.signal);
        delay = Math.min(delay * 2, 5_000);
      }
    }
    inFlight.delete(slot);
    notify();
  };
  const refetch = (slot: number, initialDelay = 0) => {
    ready.delete(slot);
    if (inFlight.has(slot)) return;
    inFlight.add(slot);
    void fetchSlot(slot, initialDelay);
  };
  let chainErrors = 0;

  const tipLoop = (async () => {
    let delay = 100;
    while (!opts.signal?.aborted) {
      try {
        tip = await rpc.getSlot();
        opts.onTip?.(tip);
        delay = 100;
        notify();
        await sleep(opts.pollIntervalMs ?? 400, opts.signal);
      } catch (err) {
        opts.log?.warn({ err: (err as Error).message, retryInMs: delay }, 'getSlot failed; retrying');
        await sleep(delay, opts.signal);
        delay = Math.min(delay * 2, 5_000);
      }
    }
    notify();
  })();

  try {
    while (!opts.signal?.aborted) {
      while (inFlight.size < concurrency && nextToFetch <= tip && nextToFetch < next + concurrency * 4) {
        inFlight.add(nextToFetch);
        void fetchSlot(nextToFetch);
        nextToFetch++;
      }
      const batch: BlockInfo[] = [];
      while (ready.has(next) && batch.length < maxBatch) {
        const b = ready.get(next)!;
        if (b === null) {
          passed.add(next++);
          continue;
        }
        if (lastReleased !== null && b.parentSlot !== lastReleased) {
          if (b.parentSlot > lastReleased && b.parentSlot < b.slot && ready.get(b.parentSlot) === null) {
            // The node called the parent skipped: fetch it again, and rescan from it.
            opts.log?.warn({ slot: b.slot, parentSlot: b.parentSlot, lastReleased }, 'block names a skipped slot as its parent; fetching that slot again');
            mustExist.set(b.parentSlot, b.slot);
            refetch(b.parentSlot);
            next = b.parentSlot;
          } else {
            // Not on the indexed chain: release nothing; ask again after a pause.
            chainErrors++;
            opts.log?.error(
              { slot: b.slot, parentSlot: b.parentSlot, lastReleased, attempts: chainErrors },
              'block does not extend the indexed chain (parentSlot is not the last indexed slot): indexing waits; fetching it again',
            );
            refetch(b.slot, Math.min(30_000, 500 * 2 ** Math.min(chainErrors, 6)));
          }
          break;
        }
        ready.delete(next);
        for (const s of passed) {
          if (s > b.slot) continue; // after a rewind: still to be scanned again
          ready.delete(s);
          passed.delete(s);
        }
        mustExist.delete(b.slot);
        chainErrors = 0;
        next++;
        lastReleased = b.slot;
        batch.push(b);
      }
      if (batch.length) {
        yield batch;
        continue;
      }
      await new Promise<void>((resolve) => { wake = resolve; setTimeout(resolve, 1_000); });
    }
  } finally {
    notify();
    await tipLoop;
  }
}
