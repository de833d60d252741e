/**
 * `refract start`'s backfill progress lines (src/commands/backfillProgress.ts): one line at each phase
 * and at most one per interval between, saying the phase, the counts and the time left.
 */
import { expect, test } from 'vitest';
import { BackfillView } from '../src/commands/backfillProgress.ts';
import type { BackfillProgress } from '../src/ingest/sources/backfill.ts';

const progress = (p: Partial<BackfillProgress>): BackfillProgress => ({ phase: 'listing', targetSlot: 1_000_000, afterSlot: 0, listedDownTo: 1_000_000, listed: 0, failed: 0, indexed: 0, etaSeconds: null, startedAt: Date.now(), ...p });

test('a line at each phase and at most one per interval between; counts, percentages and ETA in words', async () => {
  const lines: string[] = [];
  // 1 s between lines: the 50 quick updates below fit in it even on a loaded machine
  const view = new BackfillView(false, (t) => lines.push(t), 1000);
  view.update(progress({ phase: 'listing', listedDownTo: 750_000, listed: 1200, etaSeconds: 300 }), {}, 0);
  for (let i = 0; i < 50; i++) view.update(progress({ phase: 'listing', listedDownTo: 700_000 - i, listed: 1300 + i, etaSeconds: 280 }), {}, 0);
  expect(lines).toEqual(["backfill: listing the account-compression program's signatures, 25% of 1,000,000 slots, 1,200 Light transactions listed, about 5 min left"]);
  await new Promise((r) => setTimeout(r, 1050));
  view.update(progress({ phase: 'listing', listedDownTo: 500_000, listed: 2000, etaSeconds: 45 }), {}, 0);
  expect(lines.at(-1)).toBe("backfill: listing the account-compression program's signatures, 50% of 1,000,000 slots, 2,000 Light transactions listed, about 45 s left");
  view.update(progress({ phase: 'fetching', listedDownTo: 0, listed: 4000, indexed: 1000, etaSeconds: 120 }), {}, 0);
  expect(lines.at(-1)).toBe('backfill: indexing 1,000 of 4,000 Light transactions (25%), about 2 min left');
  view.update(progress({ phase: 'done', listedDownTo: 0, listed: 4000, indexed: 4000 }), {}, 0);
  expect(lines.at(-1)).toBe('backfill: done, 4,000 Light transactions indexed up to slot 1,000,000; following the chain');
  expect(lines).toHaveLength(4);
  expect(view.health()).toMatchObject({ phase: 'done', remaining: 0 });
});
