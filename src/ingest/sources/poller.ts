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
 *   logged each time, so the indexer stops (visible as lag) instead of mixing chains;
 * - the genesis block of a fresh ledger (slot 0, `parentSlot` 0, `previousBlockhash` = its own
 *   blockhash, as agave serves it) has no parent and is released as the first block.
 *
 * Batching while catching up: every batch is one write transaction and one disk sync (≈10–20 ms on a
 * VM disk), so a batch per block caps catch-up at a few dozen blocks per second. While the tip is at
 * least max(`concurrency`, LINGER_MIN_BEHIND) slots past the scan position and the next slot is
 * already being fetched, released blocks wait up to `lingerMs` (default 100) for that fetch, up to
 * `maxBatchBlocks` per batch. Near the tip a block is yielded as soon as it is ready.
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { decodeBlockJson } from '../prepareBatch.ts';
import type { SolanaRpc } from '../../solana/rpcClient.ts';
import type { BlockInfo } from '../../types.ts';
import { sleep } from '../sleep.ts';

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
  /** While catching up: how long released blocks wait for the next one (ms, default 100). */
  lingerMs?: number;
  /** Abort to stop after the current batch. */
  signal?: AbortSignal;
  log?: Logger;
  /** Called with every observed chain tip (for the lag metric). */
  onTip?(slot: number): void;
}

/** Slots behind the tip below which the poller never lingers (see "Batching while catching up"). */
export const LINGER_MIN_BEHIND = 16;

/**
 * Yields batches of consecutive blocks in slot order until `signal` aborts or the consumer stops
 * (breaks out of its loop); either way the tip poll and the fetches in flight are cancelled.
 */
export async function* pollBlocks(rpc: SolanaRpc, opts: PollerOptions): AsyncGenerator<BlockInfo[]> {
  const concurrency = opts.concurrency ?? 20;
  const maxBatch = opts.maxBatchBlocks ?? 100;
  const lingerMs = opts.lingerMs ?? 100;
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  if (opts.signal?.aborted) stop.abort();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });
  const signal = stop.signal;
  // Every fetch waiting out a retry (and the tip loop) listens to `signal` until its sleep ends:
  // more than Node's default of 10 is expected, not a leak.
  setMaxListeners(2 * concurrency + 10, signal);
  const ready = new Map<number, BlockInfo | null>(); // fetched, not yet scanned (null: skipped)
  const inFlight = new Set<number>();
  let next = opts.startSlot; // scan position: the next slot to release
  let nextToFetch = opts.startSlot;
  let lastReleased = opts.lastIndexedSlot;
  // Every slot between the last released one (or startSlot, unanchored) and `next` was answered
  // "skipped"; nothing of them is kept. After a rewind (`next` moved back to a parent), slots below
  // `knownSkippedUntil` that are neither ready nor in flight are among those.
  let knownSkippedUntil = next;
  // Slots a fetched block names as its parent: fetched again, and a "skipped" answer re-asks the child.
  const mustExist = new Map<number, number>(); // parent slot → child slot
  const parentMisses = new Map<number, number>(); // child slot → times its named parent answered "skipped"
  let chainErrors = 0;
  let tip = -1;
  let wake: (() => void) | null = null;
  const notify = () => { wake?.(); wake = null; };

  const fetchSlot = async (slot: number, initialDelay = 0) => {
    let delay = 100;
    if (initialDelay) await sleep(initialDelay, signal);
    while (!signal.aborted) {
      try {
        const json = await rpc.getBlock(slot, signal);
        if (lastReleased !== null && slot <= lastReleased) break; // settled meanwhile
        const child = mustExist.get(slot);
        if (json === null && child !== undefined) {
          // Still "skipped": ask for the child again too (it may now name another parent).
          mustExist.delete(slot);
          const misses = (parentMisses.get(child) ?? 0) + 1;
          parentMisses.set(child, misses);
          opts.log?.warn({ slot, child, misses }, 'the node calls this slot skipped, but a later block names it as its parent; fetching both again');
          ready.set(slot, null);
          inFlight.delete(slot);
          refetch(child, Math.min(5_000, 100 * 2 ** Math.min(misses, 6)));
          notify();
          return;
        }
        ready.set(slot, json === null ? null : decodeBlockJson(json, slot));
        break;
      } catch (err) {
        if (signal.aborted) break;
        opts.log?.warn({ slot, err: (err as Error).message, retryInMs: delay }, 'getBlock failed; retrying');
        await sleep(delay, signal);
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

  const tipLoop = (async () => {
    let delay = 100;
    while (!signal.aborted) {
      try {
        tip = await rpc.getSlot(signal);
        opts.onTip?.(tip);
        delay = 100;
        notify();
        await sleep(opts.pollIntervalMs ?? 400, signal);
      } catch (err) {
        if (signal.aborted) break;
        opts.log?.warn({ err: (err as Error).message, retryInMs: delay }, 'getSlot failed; retrying');
        await sleep(delay, signal);
        delay = Math.min(delay * 2, 5_000);
      }
    }
    notify();
  })();

  // Released blocks not yet yielded (see "Batching while catching up"), since `batchSince` (ms).
  let batch: BlockInfo[] = [];
  let batchSince = 0;
  try {
    while (!signal.aborted) {
      while (inFlight.size < concurrency && nextToFetch <= tip && nextToFetch < next + concurrency * 4) {
        inFlight.add(nextToFetch);
        void fetchSlot(nextToFetch);
        nextToFetch++;
      }
      while (batch.length < maxBatch) {
        const b = ready.get(next);
        if (b === undefined) {
          if (next < knownSkippedUntil && !inFlight.has(next)) {
            next++; // answered "skipped" before a rewind
            continue;
          }
          break;
        }
        if (b === null) {
          ready.delete(next++);
          continue;
        }
        // Parents above `floor` and below the block were answered "skipped" (the scan passed them).
        const floor = lastReleased ?? opts.startSlot - 1;
        // The genesis block (slot 0 of a fresh ledger: parentSlot 0 = its own slot) has no parent to check.
        const genesis = b.parentSlot === b.slot && lastReleased === null;
        if (!genesis && (lastReleased === null ? b.parentSlot >= opts.startSlot : b.parentSlot !== lastReleased)) {
          if (b.parentSlot > floor && b.parentSlot < b.slot) {
            // The node called the parent skipped: fetch it again (it must exist), rescan from it.
            opts.log?.warn({ slot: b.slot, parentSlot: b.parentSlot, lastReleased }, 'block names a skipped slot as its parent; fetching that slot again');
            mustExist.set(b.parentSlot, b.slot);
            knownSkippedUntil = Math.max(knownSkippedUntil, next);
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
        for (const [parent, child] of mustExist) if (child === b.slot || parent <= b.slot) mustExist.delete(parent);
        parentMisses.delete(b.slot);
        chainErrors = 0;
        next++;
        lastReleased = b.slot;
        if (batch.length === 0) batchSince = performance.now();
        batch.push(b);
      }
      if (batch.length) {
        // Catching up and the next block is on its way: let it join (one commit for both).
        const lingering = performance.now() - batchSince;
        if (batch.length < maxBatch && lingering < lingerMs && inFlight.has(next) && tip - next >= Math.max(concurrency, LINGER_MIN_BEHIND)) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, lingerMs - lingering);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          continue;
        }
        yield batch;
        batch = [];
        continue;
      }
      await new Promise<void>((resolve) => { wake = resolve; setTimeout(resolve, 1_000); });
    }
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    stop.abort();
    notify();
    await tipLoop;
  }
}
