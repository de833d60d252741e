/**
 * RPC block source: polls a Solana node and yields block batches strictly in slot order.
 *
 * getSlot every `pollIntervalMs`; slots next..latest are fetched with at most `concurrency` getBlock
 * calls in flight; skipped slots (-32007/-32009) are passed over; any other error is retried with
 * exponential backoff (capped); blocks are released in ascending slot order, each checked against the
 * previous released block (parentSlot), as a batch of every consecutive block that is ready.
 */
import type { Logger } from 'pino';
import { decodeBlockJson } from '../solana/decode.ts';
import type { SolanaRpc } from '../solana/rpcClient.ts';
import type { BlockInfo } from '../types.ts';

/** Poller options. */
export interface PollerOptions {
  /** First slot to fetch. */
  startSlot: number;
  /** Slot of the last block already indexed (its parent-chain anchor), or null. */
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
  let tip = -1;
  let wake: (() => void) | null = null;
  const notify = () => { wake?.(); wake = null; };

  const fetchSlot = async (slot: number) => {
    let delay = 100;
    for (;;) {
      if (opts.signal?.aborted) return;
      try {
        const json = await rpc.getBlock(slot);
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
        ready.delete(next);
        next++;
        if (b === null) continue;
        if (lastReleased !== null && b.parentSlot !== lastReleased) opts.log?.warn({ slot: b.slot, parentSlot: b.parentSlot, lastReleased }, 'block parent differs from the last indexed slot');
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
