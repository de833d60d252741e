/**
 * The sequence guard: every batch the ingest loop commits (live, backfill chunk, or what a heal
 * found) goes through {@link SequenceGuard.commit}, which checks it against the trees' numbered
 * streams (state/sequence.ts) before it is applied:
 * - a gap: the part before it is committed, the tree's own signature listing over the gap's range
 *   (heal.ts) finds the missing transactions, they are committed first (checked the same way, one
 *   level deeper), then the rest;
 * - numbers of transactions Refract rejected are accepted (logged, `accepted` event);
 * - a forester's nullification of a leaf whose account the store holds unspent is evidence too;
 * - anything else holds ingest (logged, `held` event, /health degraded) and is looked up again
 *   with a growing pause until the tree is whole (`released`).
 * While a backfill runs, a stream met for the first time has its tree listed back to the backfill's
 * start first (head check), and before the hand-over every tree met is listed up to it (tail check).
 * The guard's state: the held gap, the head check, nullifications already looked up.
 */
import type { Logger } from 'pino';
import type { RequestGovernor } from '../../solana/requestGovernor.ts';
import type { SolanaRpc } from '../../solana/rpcClient.ts';
import { type SeqStream, type SequenceGap, acceptGap, firstSequenceGap, firstUnspentNullification, seqKey, sequenceRuns, storedPosition, tailCheckSlots, treesWithPositions } from '../../state/sequence.ts';
import type { WriteView } from '../../store/store.ts';
import type { Indexer } from '../indexer.ts';
import { type PreparedBatch, prepareBatch } from '../prepareBatch.ts';
import type { GapReport, IngestEvent } from '../progress.ts';
import { sleep } from '../sleep.ts';
import { type GapListing, listGap, splitPreparedBatch } from './heal.ts';

/** How deep a heal may recurse (a missing transaction whose own numbers show another gap). */
const MAX_HEAL_DEPTH = 8;

/** What the guard works with, from the ingest loop. */
export interface GuardDeps {
  indexer: Indexer;
  rpc: SolanaRpc;
  /** The governor of the backfill's and healing's node requests. */
  gov: RequestGovernor;
  opts: {
    signal: AbortSignal;
    log: Logger;
    /** false: commit without checking (IngestOptions.sequenceCheck; default true). */
    sequenceCheck?: boolean;
    /** getTransaction per JSON-RPC batch of a heal's fetches (default 100). */
    backfill?: { batchSize: number };
  };
  emit: (e: IngestEvent) => void;
  /**
   * Commits (a part of) a batch in one write transaction and reports it; a store failure is retried
   * there. Returns once committed, or once the loop stops. `extra` writes go with the commit.
   */
  commit: (batch: PreparedBatch, prepareSeconds: number, extra?: (w: WriteView) => void) => Promise<void>;
}

/** The guard's state beside its dependencies. */
interface GuardCtx extends GuardDeps {
  /** The gap ingest is held at, if any. */
  held: GapReport | null;
  /**
   * While a backfill runs: where it began (its `afterSlot`) and the trees' streams already looked at
   * (`seqKey`). A stream met for the first time (no stored number) has its tree listed on its own back
   * to there before the stream's first number is committed: a transaction missing before a stream's
   * first number shows no gap (e.g. a tree's first batch event, after its outputs set a position).
   */
  headCheck: { afterSlot: number; seen: Set<string> } | null;
  /** Nullifications already looked up without finding the spend (not looked up again). */
  nullifiedLookedAt: Set<string>;
}

/** The one entry that checks and commits a batch (see the module comment). */
export class SequenceGuard {
  private readonly ctx: GuardCtx;

  constructor(deps: GuardDeps) {
    this.ctx = { ...deps, held: null, headCheck: null, nullifiedLookedAt: new Set() };
  }

  /** A backfill that began after `afterSlot` is running: streams met for the first time get a head check. */
  beginBackfill(afterSlot: number): void {
    this.ctx.headCheck = { afterSlot, seen: new Set() };
  }

  /**
   * Commits `batch` after the check (module comment); `extra` goes with the commit of its last part.
   * Returns once all of it is committed, or once the loop stops (`opts.signal`).
   */
  commit(batch: PreparedBatch, prepareSeconds: number, extra?: (w: WriteView) => void): Promise<void> {
    return commitChecked(this.ctx, batch, prepareSeconds, extra);
  }

  /** Before the hand-over at `throughSlot`: each tree met is listed on its own up to it (see `tailCheck`). */
  tailCheck(throughSlot: number): Promise<void> {
    return tailCheck(this.ctx, throughSlot);
  }
}

/**
 * Before the hand-over: a gap at the very end of a tree's history shows no later number to give it
 * away, so each tree the backfill met is listed on its own (getSignaturesForAddress(tree)) from its
 * last number's slot up to the hand-over slot, and what the store lacks is fetched and committed
 * (checked like any batch). One listing request per tree in the usual case. A registered tree still
 * missing one of its streams (state/sequence.ts `tailCheckSlots`: e.g. a batched tree whose first
 * batch event the program listing hid) is listed from the backfill's start: a stream's first number
 * shows no gap, and a killed and restarted backfill (a new head check) would otherwise never look
 * back for it.
 */
async function tailCheck(ctx: GuardCtx, throughSlot: number): Promise<void> {
  const { indexer, opts } = ctx;
  // tree → the lowest last-number slot over its streams; the backfill's start for a tree still missing a stream
  const start = ctx.headCheck?.afterSlot;
  const since = indexer.store.read((r) => (start === undefined ? treesWithPositions(r) : tailCheckSlots(r, indexer.registry.all(), start)));
  for (const [tree, afterSlot] of since) {
    const listing = await listTree(ctx, { tree, afterSlot, throughSlot }, new Set());
    if (!listing) return;
    await commitFound(ctx, listing, { tree, stream: 'tail', expected: '', got: '', afterSlot, slot: throughSlot, signature: '' }, 'backfill: the tree\'s own signature listing shows transactions the program listing missed after its last number; indexing them', 0);
  }
}

/** `listGap` with the loop's settings; null once the loop stops (listGap throws only then). */
async function listTree(ctx: GuardCtx, gap: Parameters<typeof listGap>[3], known: ReadonlySet<string>): Promise<GapListing | null> {
  ctx.opts.log.debug({ tree: gap.tree, afterSlot: gap.afterSlot, throughSlot: gap.throughSlot, signature: gap.signature }, 'listing a tree\'s signatures');
  try {
    return await listGap(ctx.rpc, ctx.gov, ctx.indexer.store, gap, known, { batchSize: ctx.opts.backfill?.batchSize ?? 100, signal: ctx.opts.signal, log: ctx.opts.log });
  } catch (err) {
    if (ctx.opts.signal.aborted) return null;
    throw err;
  }
}

/**
 * Commits what a tree's own listing found missing (checked like any batch, one heal level deeper),
 * logging `message` and reporting a `healed` event; false when it found nothing.
 */
async function commitFound(ctx: GuardCtx, listing: GapListing, report: GapReport, message: string, depth: number): Promise<boolean> {
  if (!listing.blocks.length) return false;
  const fetched = listing.blocks.reduce((n, b) => n + b.transactions.length + (b.undecodable?.length ?? 0), 0);
  ctx.opts.log.warn({ ...report, fetched, listed: listing.listed }, message);
  ctx.emit({ kind: 'sequence', outcome: 'healed', gap: report, fetched });
  await commitChecked(ctx, prepareBatch(listing.blocks, ctx.indexer.registry), 0, undefined, depth + 1);
  return true;
}

/** Commits the updates of `batch` before `index` (when there are any) and returns the rest, or null once the loop stops. */
async function commitBefore(ctx: GuardCtx, batch: PreparedBatch, index: number, prepareSeconds: number): Promise<PreparedBatch | null> {
  const [head, tail] = splitPreparedBatch(batch, index);
  if (head.updates.length || head.records.length || head.rejected.length) await ctx.commit(head, prepareSeconds);
  return ctx.opts.signal.aborted ? null : tail;
}

/**
 * The first update of `updates` that carries a number of a tree's stream with no stored position and
 * not yet looked at (`seen`, keys `seqKey(tree, stream)`), or null. Per stream, not per tree: a tree's
 * streams begin at different transactions (its first outputs, its first forester batch event, …), and
 * the first number of each is taken as given by the sequence check.
 */
function firstUnseenStream(ctx: GuardCtx, updates: readonly PreparedBatch['updates'][number][], seen: ReadonlySet<string>): { tree: string; stream: SeqStream; index: number } | null {
  return ctx.indexer.store.read((r) => {
    const known = new Set<string>();
    for (let index = 0; index < updates.length; index++) {
      for (const run of sequenceRuns(updates[index]!)) {
        const key = seqKey(run.tree, run.stream);
        if (seen.has(key) || known.has(key)) continue;
        if (storedPosition(r, run.tree, run.stream) !== undefined) known.add(key);
        else return { tree: run.tree, stream: run.stream, index };
      }
    }
    return null;
  });
}

/** A gap as events carry it. */
function gapReport(g: SequenceGap): GapReport {
  return { tree: g.tree, stream: g.stream, expected: String(g.expected), got: String(g.got), afterSlot: g.afterSlot, slot: g.slot, signature: g.signature };
}

/**
 * Commits `batch` after the tree sequence check (`IngestOptions.sequenceCheck`): the part before a
 * gap is committed, the transactions that carry the missing numbers are looked up through the tree's
 * own signature listing (heal.ts) and committed (checked the same way), then the rest; numbers of
 * rejected transactions are accepted; anything else holds ingest (logged, `held` event, /health
 * degraded) and is looked up again with a growing pause. `extra` goes with the commit of the batch's
 * last part.
 */
async function commitChecked(ctx: GuardCtx, batch: PreparedBatch, prepareSeconds: number, extra?: (w: WriteView) => void, depth = 0): Promise<void> {
  const { indexer, opts } = ctx;
  let current = batch;
  let holds = 0;
  for (;;) {
    const checking = opts.sequenceCheck !== false && depth <= MAX_HEAL_DEPTH;
    const gap = checking
      ? indexer.store.read((r) => {
          const numbers = firstSequenceGap(r, current.updates);
          const nullified = firstUnspentNullification(r, current.updates, ctx.nullifiedLookedAt);
          return nullified && (!numbers || nullified.index < numbers.index) ? nullified : numbers;
        })
      : null;
    const unseen = checking && ctx.headCheck ? firstUnseenStream(ctx, current.updates, ctx.headCheck.seen) : null;
    // A tree's stream met for the first time before the first gap: look at the tree's history before it first (its own listing).
    if (unseen && (!gap || unseen.index <= gap.index)) {
      const rest = await commitBefore(ctx, current, unseen.index, prepareSeconds);
      if (!rest) return;
      prepareSeconds = 0;
      current = rest;
      const first = rest.updates[0]!;
      const afterSlot = ctx.headCheck!.afterSlot;
      const listing = await listTree(ctx, { tree: unseen.tree, afterSlot: afterSlot + 1, signature: first.signature }, new Set(rest.updates.map((u) => u.signature)));
      if (!listing) return;
      ctx.headCheck!.seen.add(seqKey(unseen.tree, unseen.stream));
      await commitFound(ctx, listing, { tree: unseen.tree, stream: 'head', expected: '', got: '', afterSlot, slot: first.slot, signature: first.signature }, 'backfill: the tree\'s own signature listing shows transactions before the first one the program listing gave; indexing them first', depth);
      continue;
    }
    if (!gap) {
      await ctx.commit(current, prepareSeconds, extra);
      if (opts.signal.aborted) return;
      if (ctx.held && depth === 0) {
        ctx.emit({ kind: 'sequence', outcome: 'released', gap: ctx.held });
        opts.log.info({ tree: ctx.held.tree, stream: ctx.held.stream }, 'the held tree is whole again: ingest goes on');
        ctx.held = null;
      }
      return;
    }
    const rest = await commitBefore(ctx, current, gap.index, prepareSeconds);
    if (!rest) return;
    prepareSeconds = 0;
    current = rest;
    const report = gapReport(gap);
    const listing = await listTree(ctx, gap, new Set(rest.updates.map((u) => u.signature)));
    if (!listing) return;
    if (await commitFound(ctx, listing, report, 'sequence gap in a tree\'s numbers: the missing transactions were found through the tree\'s signature listing; indexing them first', depth)) continue;
    if (gap.first) {
      // A complete history, yet the tree's own listing has nothing before its first number here: the tree began before it.
      opts.log.warn({ ...report, listed: listing.listed }, 'a batched tree\'s numbers begin past a new tree\'s first, and its own signature listing has nothing earlier: the tree began before the store\'s history (e.g. cloned into a local cluster); taking them as given');
      indexer.store.write((w) => acceptGap(w, gap));
      ctx.emit({ kind: 'sequence', outcome: 'accepted', gap: report });
      continue;
    }
    if (gap.stream === 'nullified') {
      // Evidence, not a number: the spend may be a transaction Refract rejected, or lie before the indexed range.
      opts.log.error({ ...report, rejected: listing.rejected.slice(0, 10), listed: listing.listed }, 'a forester nullified a leaf whose account the store holds as unspent, and the tree\'s signature listing has no missing transaction for it: indexing on (the account stays unspent here)');
      ctx.nullifiedLookedAt.add(gap.signature);
      ctx.emit({ kind: 'sequence', outcome: 'accepted', gap: report });
      continue;
    }
    if (listing.rejected.length) {
      opts.log.error({ ...report, rejected: listing.rejected.slice(0, 10) }, 'sequence gap in a tree\'s numbers: they belong to transactions Refract rejected; indexing past it');
      indexer.store.write((w) => acceptGap(w, gap));
      ctx.emit({ kind: 'sequence', outcome: 'accepted', gap: report });
      continue;
    }
    holds++;
    if (!ctx.held) {
      ctx.held = report;
      ctx.emit({ kind: 'sequence', outcome: 'held', gap: report });
    }
    const pause = Math.min(60_000, 1000 * 2 ** Math.min(holds, 6));
    opts.log.error({ ...report, listed: listing.listed, retryInMs: pause }, `sequence gap in a tree's numbers: nothing after slot ${gap.afterSlot} of this tree's transactions is found, so ingest holds here (nothing after it is applied); asking again`);
    await sleep(pause, opts.signal);
    if (opts.signal.aborted) return;
  }
}

