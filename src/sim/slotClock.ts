/**
 * The simulator's clock as its clients see it: the tip (the chain's newest produced slot, unless
 * paused or moved back by a pause), the finalized slot, and `POST /pause` / `POST /resume`.
 */
import type { Chain } from './chain.ts';

/** Slots between a block and its finalization (confirmationStatus, commitment `finalized`). */
export const FINALIZATION_LAG = 32;

/** The tip and finalized slot of a chain, with pause and resume. */
export class SlotClock {
  /** While paused: the tip stands here. */
  private frozen: number | null = null;
  /** After a resume: the chain's clock is read this many slots back. */
  private offset = 0;

  constructor(private readonly chain: Chain) {}

  /** The newest produced slot (the chain's, unless paused or moved back by a pause). */
  tip(): number {
    if (this.frozen !== null) return this.frozen;
    const t = this.chain.tip();
    if (this.offset === 0) return t;
    let s = t - this.offset;
    while (s > 0 && !this.chain.produced(s)) s--;
    return Math.max(0, s);
  }

  /** The newest finalized slot: a produced slot at least FINALIZATION_LAG below `tip`. */
  finalizedSlot(tip = this.tip()): number {
    let t = Math.max(0, tip - FINALIZATION_LAG);
    while (t > 0 && !this.chain.produced(t)) t--;
    return t;
  }

  /** Stops the tip where it is; returns it. Idempotent. */
  pause(): number {
    this.frozen ??= this.tip();
    return this.frozen;
  }

  /** Lets the tip move again from where it stood, at the same rate (the paused slots are not made up); returns it. */
  resume(): number {
    if (this.frozen !== null) {
      // The chain's clock is ahead of the frozen tip by the pause: read it that much back from now on.
      const at = this.frozen;
      this.frozen = null;
      this.offset = 0;
      this.offset = Math.max(0, this.tip() - at);
    }
    return this.tip();
  }

  /** True while paused. */
  paused(): boolean {
    return this.frozen !== null;
  }
}
