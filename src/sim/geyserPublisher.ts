/**
 * The slots a Yellowstone server over a simulated chain streams (src/sim/geyser.ts): every slot up to
 * `published` is streamed; the chain's slots are published in order as the source produces them, each
 * block converted once (src/sim/yellowstoneFromJson.ts) and cached for the replay window.
 */
import type { Logger } from 'pino';
import type { GeyserSource } from './geyser.ts';
import { type GeyserBlock, geyserBlockFromJson } from './yellowstoneFromJson.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The published slots of one server, and their blocks. */
export class GeyserPublisher {
  /** Every slot ≤ this is streamed to live subscribers. */
  published: number;
  private target: number;
  private readonly cache = new Map<number, Promise<GeyserBlock | null>>();
  private readonly waiters = new Set<() => void>();
  private publishing = false;
  private closed = false;
  private readonly unsubscribe: () => void;

  /**
   * Starts at the source's tip and follows its slots. `replaySlots`: how far back a `fromSlot` may go
   * (the cache keeps that window, plus 16 slots).
   */
  constructor(
    private readonly source: GeyserSource,
    private readonly replaySlots: number,
    private readonly log?: Logger,
  ) {
    this.published = source.tipSlot();
    this.target = this.published;
    this.unsubscribe = source.onSlot((slot) => {
      if (slot > this.target) this.target = slot;
      void this.publish();
    });
  }

  /** The oldest slot a `fromSlot` may ask for. */
  firstAvailable(): number {
    return Math.max(0, this.published - this.replaySlots + 1);
  }

  /**
   * The block of `slot` (null: skipped, or not available). `retry`: keep asking while the source throws
   * (a slot not produced yet), up to 200 times; otherwise a failure is logged, not cached (the next
   * subscriber asks the source again), and gives null.
   */
  blockAt(slot: number, retry = false): Promise<GeyserBlock | null> {
    let p = this.cache.get(slot);
    if (!p) {
      p = (async () => {
        for (let attempt = 0; ; attempt++) {
          try {
            const json = await this.source.blockJson(slot);
            return json === null ? null : geyserBlockFromJson(slot, json as Record<string, unknown>);
          } catch (err) {
            if (!retry || this.closed || attempt >= 200) {
              this.log?.warn({ slot, err: (err as Error).message }, 'geyser: block unavailable; this subscriber gets nothing for the slot');
              if (this.cache.get(slot) === p) this.cache.delete(slot);
              return null;
            }
            await sleep(Math.min(500, 20 * 2 ** Math.min(attempt, 5)));
          }
        }
      })();
      this.cache.set(slot, p);
      for (const s of this.cache.keys()) if (s < this.firstAvailable() - 16) this.cache.delete(s);
    }
    return p;
  }

  /** The newest published block of the replay window (skipped slots passed over), or null. */
  async latest(): Promise<GeyserBlock | null> {
    for (let s = this.published; s >= this.firstAvailable(); s--) {
      const b = await this.blockAt(s);
      if (b) return b;
    }
    return null;
  }

  /** Calls `waiter` once, at the next published slot or at close. */
  onNextPublish(waiter: () => void): void {
    this.waiters.add(waiter);
  }

  /** Forgets a waiter of {@link onNextPublish}. */
  offNextPublish(waiter: () => void): void {
    this.waiters.delete(waiter);
  }

  /** Whether {@link close} was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Stops following the source and wakes every waiter. */
  close(): void {
    this.closed = true;
    this.unsubscribe();
    this.wakeWaiters();
  }

  private wakeWaiters(): void {
    for (const w of this.waiters) w();
    this.waiters.clear();
  }

  /** Publishes up to the target slot, in order, each once its block is there. */
  private async publish(): Promise<void> {
    if (this.publishing) return;
    this.publishing = true;
    try {
      while (this.published < this.target && !this.closed) {
        await this.blockAt(this.published + 1, true);
        this.published++;
        this.wakeWaiters();
      }
    } finally {
      this.publishing = false;
    }
  }
}
