/**
 * The tree sequence check: every tree numbers its changes, and a source that can skip data (a
 * signature listing, a gRPC stream) is checked against those numbers, which it cannot fake. Pure:
 * the positions come in through a lookup and go out as a map; the store keeps them
 * (store.ts `seqCursor` / `putSeqCursor`) and the ingest loop decides what a gap does.
 *
 * Streams, per tree (photon.md §1.4–§1.5, §2.5–§2.6):
 * - `changelog`   StateV1: every leaf write carries the tree's changelog seq (outputs `seq`, `seq+1`, …
 *                 in output order; a forester NullifierEvent's leaf i `seq+i`), one number per write;
 * - `indexed`     AddressV1: an IndexedMerkleTreeEvent of n updates covers `seq … seq+2n−1`
 *                 (low element `seq+2k`, new element `seq+2k+1`);
 * - `outputQueue` StateV2: outputs enter the output queue at consecutive leaf indices;
 * - `inputQueue`  StateV2: spent accounts enter the input (nullifier) queue at consecutive queue indices;
 * - `addressQueue` AddressV2: new addresses enter the address queue at consecutive queue indices;
 * - `batch`       StateV2 / AddressV2: BatchAppend, BatchNullify and BatchAddressAppend events carry
 *                 the tree's consecutive `sequence_number`s.
 * A batch event also needs its queue stream to have reached the end of the range it moves into the
 * tree (`queueNeeds`): a queued entry missing right before it shows as a gap in that queue stream.
 * A stream's first number seen (no position yet) is taken as given: the history before the store's
 * first indexed slot is not known. Except on a store whose history is complete (`HISTORY_META`: it
 * began at the cluster's first Light slot, or at the genesis of a local cluster): there a batched
 * tree's streams begin where a new tree's do (`INITIAL_NEXT`: batch sequence number 1, queue index 0,
 * as Photon requires a batch event's seq to be its tree's root seq + 1, from 0), so a missing first
 * number is a gap like any other. Numbers at or below the position are a re-index and pass.
 */
import type { TreeInfo, TreeType } from '../config/trees.ts';
import * as base58 from '../solana/base58.ts';
import type { ReadView, WriteView } from '../store/store.ts';
import type { StateUpdate } from './stateUpdate.ts';

/** The numbered streams of a tree (see the module comment). */
export const SEQ_STREAMS = ['changelog', 'indexed', 'outputQueue', 'inputQueue', 'addressQueue', 'batch'] as const;
/** One numbered stream of a tree. */
export type SeqStream = (typeof SEQ_STREAMS)[number];
/** The numbered streams a tree of each type carries (see the module comment). */
export const TREE_STREAMS: Readonly<Record<TreeType, readonly SeqStream[]>> = {
  StateV1: ['changelog'],
  AddressV1: ['indexed'],
  StateV2: ['outputQueue', 'inputQueue', 'batch'],
  AddressV2: ['addressQueue', 'batch'],
};

/**
 * The `meta` entry (store.ts `metaText`) that says where the store's history begins: JSON
 * `{ start: slot, complete: boolean }`, written when an empty store starts (ingest/loop.ts), `complete`
 * when nothing of the cluster's Light history lies before `start`.
 */
export const HISTORY_META = 'history';

/** Where the store's history begins (`HISTORY_META`); undefined for a store started before it was kept, or from files. */
export function historyStart(r: Pick<ReadView, 'metaText'>): { start: number; complete: boolean } | undefined {
  const v = r.metaText(HISTORY_META);
  if (!v) return undefined;
  const h = JSON.parse(v) as { start?: unknown; complete?: unknown };
  return typeof h.start === 'number' && typeof h.complete === 'boolean' ? { start: h.start, complete: h.complete } : undefined;
}

/**
 * The first number of the batched trees' streams on a tree created in the indexed history: a new
 * batched tree has root seq 0 and empty queues (its output and input queues, and its address queue,
 * count from 0; the address tree's leaf 0 is the initial element, so its queue index is leaf index − 1).
 * The v1 streams have no entry: their first numbers are taken as given.
 */
export const INITIAL_NEXT: Readonly<Partial<Record<SeqStream, bigint>>> = { batch: 1n, outputQueue: 0n, inputQueue: 0n, addressQueue: 0n };

/** Where a tree's stream stands: the next number expected, and the slot of the last number seen. */
export interface SeqPosition {
  /** The next number the stream must carry (u64). */
  next: bigint;
  /** Slot of the transaction that carried the last number (where a gap's range starts). */
  slot: number;
  /** The stream's first number on a store with complete history (`expectedPosition`), not a stored position. */
  initial?: boolean;
}

/** A run of consecutive numbers `first … first+count−1` that one transaction gives a tree's stream. */
export interface SeqRun {
  /** Tree pubkey, base58. */
  tree: string;
  stream: SeqStream;
  first: bigint;
  count: bigint;
}

/**
 * Numbers missing from a tree's stream: the transaction at `index` carries `got` where `expected` was
 * due. Stream `nullified`: a forester nullified leaf `got` (= `expected`) of a StateV1 tree whose
 * account the store holds as unspent: the transaction that spent it is missing (v1 spends carry no
 * number of their own).
 */
export interface SequenceGap {
  /** Tree pubkey, base58. */
  tree: string;
  stream: SeqStream | 'nullified';
  expected: bigint;
  got: bigint;
  /** Slot of the last transaction before the gap that carried this stream (the missing ones are in `afterSlot … slot`). */
  afterSlot: number;
  /** Slot and signature of the transaction that showed the gap. */
  slot: number;
  signature: string;
  /** Its position in the checked `updates`. */
  index: number;
  /** `expected` is the stream's first number (complete history, nothing stored yet): if the tree's own
   * listing has nothing before `got`, the tree began before the store's history after all (a local
   * cluster started with cloned trees) and the numbers are taken as given. */
  first?: boolean;
}

/** `tree ‖ stream` map key of a position. */
export const seqKey = (tree: string, stream: SeqStream): string => `${tree}:${stream}`;

/**
 * The runs of numbers `u` gives each tree's streams, merged per (tree, stream) when consecutive
 * (a transaction's own numbers must be consecutive: a hole inside one transaction is reported as
 * two runs, and the second one is a gap).
 */
export function sequenceRuns(u: StateUpdate): SeqRun[] {
  const numbers = new Map<string, { tree: string; stream: SeqStream; values: bigint[] }>();
  const add = (tree: string, stream: SeqStream, v: bigint) => {
    const k = seqKey(tree, stream);
    let e = numbers.get(k);
    if (!e) numbers.set(k, (e = { tree, stream, values: [] }));
    e.values.push(v);
  };
  for (const { tree, leaf } of u.leaves) if (tree.type === 'StateV1') add(tree.tree, 'changelog', leaf.seq);
  for (const { account } of u.outputs) if (account.v2) add(base58.encode(account.tree), 'outputQueue', BigInt(account.leafIndex));
  for (const { tree, event } of u.indexedEvents) for (let i = 0; i < 2 * event.updates.length; i++) add(tree.tree, 'indexed', event.seq + BigInt(i));
  for (const b of u.batchInputs ?? []) add(b.tree.tree, 'inputQueue', b.queueIndex);
  for (const a of u.newAddresses ?? []) add(a.tree.tree, 'addressQueue', a.queueIndex);
  for (const { tree, event } of u.batchEvents) add(tree.tree, 'batch', event.sequenceNumber);
  const runs: SeqRun[] = [];
  for (const { tree, stream, values } of numbers.values()) {
    values.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    let first = values[0]!;
    let last = first;
    for (let i = 1; i < values.length; i++) {
      const v = values[i]!;
      if (v === last) continue; // the same number twice (a duplicate write) adds nothing
      if (v !== last + 1n) {
        runs.push({ tree, stream, first, count: last - first + 1n });
        first = v;
      }
      last = v;
    }
    runs.push({ tree, stream, first, count: last - first + 1n });
  }
  return runs;
}

/** A queue stream's number that a batch event needs reached: every queue entry it moves into its tree must be there. */
export interface QueueNeed {
  /** Tree pubkey, base58. */
  tree: string;
  stream: Extract<SeqStream, 'outputQueue' | 'inputQueue' | 'addressQueue'>;
  /** The stream's next number must be at least this (the end of the event's queue range, exclusive). */
  next: bigint;
}

/**
 * What `u`'s batch events need of their trees' queue streams: a BatchAppend the output queue up to its
 * `new_next_index`, a BatchNullify the input queue up to its `new_next_index`, a BatchAddressAppend the
 * address queue up to `new_next_index − 1` (address queue index = leaf index − 1). A batch event
 * carries no queue numbers of its own, so without this a transaction missing just before it (its
 * last queued entries) shows no gap, and the event is refused for a short queue.
 */
export function queueNeeds(u: StateUpdate): QueueNeed[] {
  return u.batchEvents.map(({ tree, event: e }) =>
    e.kind === 'batchAppend'
      ? { tree: tree.tree, stream: 'outputQueue', next: e.newNextIndex }
      : e.kind === 'batchNullify'
        ? { tree: tree.tree, stream: 'inputQueue', next: e.newNextIndex }
        : { tree: tree.tree, stream: 'addressQueue', next: e.newNextIndex - 1n },
  );
}

/**
 * Checks `updates` (in chain order) against the streams' positions: `position(tree, stream)` gives the
 * stored position (undefined: never seen). Returns the positions after the longest gap-free prefix
 * (`advanced`: only the streams that moved) and, when a transaction shows a gap, that gap (`gap.index`
 * = the first update not covered by `advanced`).
 */
export function checkSequences(
  updates: readonly StateUpdate[],
  position: (tree: string, stream: SeqStream) => SeqPosition | undefined,
): { advanced: Map<string, SeqPosition & { tree: string; stream: SeqStream }>; gap: SequenceGap | null } {
  const advanced = new Map<string, SeqPosition & { tree: string; stream: SeqStream }>();
  for (let index = 0; index < updates.length; index++) {
    const u = updates[index]!;
    const runs = sequenceRuns(u);
    const staged: (SeqPosition & { tree: string; stream: SeqStream })[] = [];
    /** The gap of `tree`'s `stream` at this update: `got` where `cur.next` was due (`first` when that is the stream's first number). */
    const gapAt = (tree: string, stream: SeqStream, cur: SeqPosition, got: bigint): SequenceGap =>
      ({ tree, stream, expected: cur.next, got, afterSlot: cur.slot, slot: u.slot, signature: u.signature, index, ...(cur.initial ? { first: true } : {}) });
    for (const r of runs) {
      const k = seqKey(r.tree, r.stream);
      const cur = staged.find((s) => s.tree === r.tree && s.stream === r.stream) ?? advanced.get(k) ?? position(r.tree, r.stream);
      const end = r.first + r.count;
      if (cur === undefined || r.first === cur.next || (r.first < cur.next && end >= cur.next)) {
        staged.push({ tree: r.tree, stream: r.stream, next: cur && cur.next > end ? cur.next : end, slot: u.slot });
        continue;
      }
      if (r.first < cur.next) continue; // wholly below the position: a re-index
      return { advanced, gap: gapAt(r.tree, r.stream, cur, r.first) };
    }
    // A batch event over queue entries the stream has not reached: the transactions that queued them are missing.
    for (const n of queueNeeds(u)) {
      const cur = staged.find((s) => s.tree === n.tree && s.stream === n.stream) ?? advanced.get(seqKey(n.tree, n.stream)) ?? position(n.tree, n.stream);
      if (cur === undefined || cur.next >= n.next) continue; // never seen (history before the store), or reached
      return { advanced, gap: gapAt(n.tree, n.stream, cur, n.next) };
    }
    for (const s of staged) advanced.set(seqKey(s.tree, s.stream), s);
  }
  return { advanced, gap: null };
}

/** A tree's stream position as the store keeps it (store.ts `seqPosition`: tree bytes, stream index). */
export function storedPosition(r: Pick<ReadView, 'seqPosition'>, tree: string, stream: SeqStream): SeqPosition | undefined {
  return r.seqPosition(base58.decode(tree, 'tree'), SEQ_STREAMS.indexOf(stream));
}

/**
 * The position the sequence check holds a stream to: the stored one, else on a store with complete
 * history the stream's first number (`INITIAL_NEXT`, slot = the history's start, where a gap's search
 * begins), else undefined (taken as given).
 */
export function expectedPosition(r: Pick<ReadView, 'seqPosition' | 'metaText'>, tree: string, stream: SeqStream): SeqPosition | undefined {
  const p = storedPosition(r, tree, stream);
  const initial = INITIAL_NEXT[stream];
  if (p || initial === undefined) return p;
  const h = historyStart(r);
  return h?.complete ? { next: initial, slot: h.start, initial: true } : undefined;
}

/**
 * The first gap `updates` (chain order) show against the stored positions, or null. Read-only: the
 * ingest loop asks this before committing a batch from a source that can skip data.
 */
export function firstSequenceGap(r: Pick<ReadView, 'seqPosition' | 'metaText'>, updates: readonly StateUpdate[]): SequenceGap | null {
  return checkSequences(updates, (tree, stream) => expectedPosition(r, tree, stream)).gap;
}

/**
 * Moves the stored positions over `updates` (inside the batch's write transaction; persist.ts). A
 * gap does not stop it: the position jumps to the numbers seen (sources that can skip data are
 * checked before the commit, see `firstSequenceGap`); every gap met is returned, for the log and
 * the metric (a file import ordered by file name inside a slot can show one).
 */
export function persistSequencePositions(w: WriteView, updates: readonly StateUpdate[]): SequenceGap[] {
  const gaps: SequenceGap[] = [];
  const jumped = new Map<string, SeqPosition>();
  let rest = updates;
  for (;;) {
    const { advanced, gap } = checkSequences(rest, (tree, stream) => jumped.get(seqKey(tree, stream)) ?? expectedPosition(w, tree, stream));
    for (const p of advanced.values()) {
      jumped.set(seqKey(p.tree, p.stream), p);
    }
    if (!gap) break;
    gaps.push(gap);
    // Take the gap's numbers as given and go on from that transaction.
    jumped.set(seqKey(gap.tree, gap.stream as SeqStream), { next: gap.got, slot: gap.afterSlot });
    rest = rest.slice(gap.index);
  }
  for (const [k, p] of jumped) {
    const i = k.lastIndexOf(':');
    w.putSeqPosition(base58.decode(k.slice(0, i), 'tree'), SEQ_STREAMS.indexOf(k.slice(i + 1) as SeqStream), p.next, p.slot);
  }
  return gaps;
}

/**
 * The first forester nullification in `updates` of a StateV1 leaf whose account the store holds as
 * unspent (and no earlier update of `updates` spends), as a gap of stream `nullified` (`afterSlot` =
 * the account's creation slot), or null. Leaves the store has no node or no account for (history before
 * the indexed range) and leaves already nullified are no evidence. `skip`: signatures already looked at.
 */
export function firstUnspentNullification(r: Pick<ReadView, 'node' | 'account'>, updates: readonly StateUpdate[], skip: ReadonlySet<string> = new Set()): SequenceGap | null {
  const spent = new Set<string>();
  const key = (h: Uint8Array) => Buffer.from(h.buffer, h.byteOffset, h.byteLength).toString('hex');
  for (let index = 0; index < updates.length; index++) {
    const u = updates[index]!;
    for (const h of u.inputs) spent.add(key(h));
    if (skip.has(u.signature)) continue;
    for (const { tree, leaf } of u.leaves) {
      if (tree.type !== 'StateV1' || leaf.hash.some((b) => b !== 0)) continue;
      const node = r.node(tree.treeBytes, BigInt(2 ** tree.height + leaf.leafIndex));
      if (!node || node.hash.every((b) => b === 0)) continue;
      const account = r.account(node.hash);
      if (!account || account.spent || spent.has(key(node.hash))) continue;
      return { tree: tree.tree, stream: 'nullified', expected: BigInt(leaf.leafIndex), got: BigInt(leaf.leafIndex), afterSlot: account.slotCreated, slot: u.slot, signature: u.signature, index };
    }
  }
  return null;
}

/** Each tree with a stored number (base58) and the lowest slot of its streams' last numbers. */
export function treesWithPositions(r: Pick<ReadView, 'seqPositions'>): Map<string, number> {
  const since = new Map<string, number>();
  for (const [tree, , , slot] of r.seqPositions()) {
    const t = base58.encode(tree);
    since.set(t, Math.min(since.get(t) ?? Number.MAX_SAFE_INTEGER, slot));
  }
  return since;
}

/**
 * Where a backfill's tail check lists each tree from (tree → slot): the lowest slot of its streams'
 * last numbers, but `backfillStart` for a tree of `trees` that lacks a position in one of the streams
 * its type carries (TREE_STREAMS). A transaction that would have begun such a stream (a tree's first
 * batch event, its first spend, every transaction of a tree met only through hidden ones) shows no
 * gap to any number, so nothing else would look for it once the program listing missed it.
 */
export function tailCheckSlots(r: Pick<ReadView, 'seqPositions' | 'seqPosition'>, trees: readonly TreeInfo[], backfillStart: number): Map<string, number> {
  const since = treesWithPositions(r);
  for (const t of trees) {
    if (TREE_STREAMS[t.type].some((s) => storedPosition(r, t.tree, s) === undefined)) since.set(t.tree, Math.min(since.get(t.tree) ?? Number.MAX_SAFE_INTEGER, backfillStart));
  }
  return since;
}

/** Takes a gap's numbers as given: the stream's position becomes `gap.got` (a gap accepted; `nullified` evidence has no position). */
export function acceptGap(w: WriteView, gap: SequenceGap): void {
  if (gap.stream === 'nullified') return;
  w.putSeqPosition(base58.decode(gap.tree, 'tree'), SEQ_STREAMS.indexOf(gap.stream), gap.got, gap.afterSlot);
}
