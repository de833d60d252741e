/**
 * The startup self-check (issue #31): for each tree, the store's own counters must agree with what
 * it holds. Cheap enough for every start: it reads the queues (bounded by the trees' queue sizes)
 * and a few keys per tree, never every account.
 *
 * Checks, per tree of the registry (or with stored state):
 * - `inputQueue` (batched state trees): every input-queue element is a known account, spent, whose
 *   nullifier queue index is that element's index (spent flags vs nullifier entries); and below
 *   the tree's next input-queue number (`seqPositions`).
 * - `outputQueue` (batched state trees): every output-queue element is a known account of that
 *   tree at that leaf index, not yet appended (leaf index ≥ the last batch append's next index),
 *   and below the tree's next output-queue number.
 * - `addressQueue` (batched address trees): every queued address points back at its queue slot
 *   (`addressQueued`), is not in the indexed tree yet, and is below the next address-queue number.
 * - `leaves` (address trees): the rightmost stored leaf is the rightmost indexed element (next leaf
 *   index vs stored leaves).
 * A disagreement names the tree, the check and the numbers. The store is still served; the caller
 * logs each one, counts them in a metric and reports `/health` degraded.
 */
import * as base58 from '../solana/base58.ts';
import type { TreeInfo } from '../config/trees.ts';
import type { ReadView } from '../store/store.ts';
import { SEQ_STREAMS } from './sequence.ts';

/** One disagreement between a tree's counters and what the store holds. */
export interface SelfCheckDisagreement {
  /** Tree pubkey, base58. */
  tree: string;
  check: 'inputQueue' | 'outputQueue' | 'addressQueue' | 'leaves';
  /** What disagrees, with the numbers (e.g. "input queue element 12 (account 3xY…) is not spent"). */
  detail: string;
}

/** The outcome of {@link selfCheck}: trees looked at, elements read, disagreements (at most `limit`), time taken. */
export interface SelfCheckReport {
  trees: number;
  elements: number;
  disagreements: SelfCheckDisagreement[];
  /** More disagreements than `limit` were found (only the first `limit` are listed). */
  truncated: boolean;
  ms: number;
}

const b58 = (b: Uint8Array) => base58.encode(b);

/**
 * Runs the self-check over `trees` in the read view `r` (one snapshot).
 * @param trees the tree registry's trees (type and height decide the checks)
 * @param limit most disagreements listed (default 100)
 */
export function selfCheck(r: ReadView, trees: readonly TreeInfo[], limit = 100): SelfCheckReport {
  const t0 = performance.now();
  const out: SelfCheckDisagreement[] = [];
  let found = 0;
  let elements = 0;
  const add = (tree: string, check: SelfCheckDisagreement['check'], detail: string) => {
    if (found++ < limit) out.push({ tree, check, detail });
  };
  const nextOf = (t: TreeInfo, stream: (typeof SEQ_STREAMS)[number]) => r.seqPosition(t.treeBytes, SEQ_STREAMS.indexOf(stream))?.next;
  for (const t of trees) {
    if (t.type === 'StateV2') {
      const appended = r.batchTree(t.treeBytes)?.nextIndex ?? 0n;
      const outNext = nextOf(t, 'outputQueue');
      for (const e of r.outputQueue(t.treeBytes)) {
        elements++;
        const a = r.account(e.hash);
        if (!a) add(t.tree, 'outputQueue', `output queue element at leaf index ${e.leafIndex} holds account ${b58(e.hash)}, which the store does not have`);
        else if (Buffer.compare(Buffer.from(a.tree), Buffer.from(t.treeBytes)) !== 0 || a.leafIndex !== e.leafIndex) add(t.tree, 'outputQueue', `output queue element at leaf index ${e.leafIndex} holds account ${b58(e.hash)}, which is at leaf index ${a.leafIndex} of tree ${b58(a.tree)}`);
        if (BigInt(e.leafIndex) < appended) add(t.tree, 'outputQueue', `output queue element at leaf index ${e.leafIndex} is below the tree's appended next index ${appended} (it should have left the queue)`);
        if (outNext !== undefined && BigInt(e.leafIndex) >= outNext) add(t.tree, 'outputQueue', `output queue element at leaf index ${e.leafIndex} is at or past the next output-queue number ${outNext}`);
      }
      const inNext = nextOf(t, 'inputQueue');
      for (const e of r.inputQueue(t.treeBytes)) {
        elements++;
        const a = r.account(e.hash);
        if (!a) add(t.tree, 'inputQueue', `input queue element ${e.queueIndex} holds account ${b58(e.hash)}, which the store does not have`);
        else if (!a.spent) add(t.tree, 'inputQueue', `input queue element ${e.queueIndex} holds account ${b58(e.hash)}, which is not spent`);
        else if (a.v2?.nullifierQueueIndex !== e.queueIndex) add(t.tree, 'inputQueue', `input queue element ${e.queueIndex} holds account ${b58(e.hash)}, whose nullifier queue index is ${a.v2?.nullifierQueueIndex ?? 'none'}`);
        if (inNext !== undefined && e.queueIndex >= inNext) add(t.tree, 'inputQueue', `input queue element ${e.queueIndex} is at or past the next input-queue number ${inNext}`);
      }
    }
    if (t.type === 'AddressV2') {
      const addrNext = nextOf(t, 'addressQueue');
      for (const e of r.addressQueue(t.treeBytes)) {
        elements++;
        const back = r.queuedAddress(e.address);
        if (!back || Buffer.compare(back.tree, Buffer.from(t.treeBytes)) !== 0 || back.queueIndex !== e.queueIndex) add(t.tree, 'addressQueue', `address queue element ${e.queueIndex} (${b58(e.address)}) is indexed as ${back ? `element ${back.queueIndex} of tree ${b58(back.tree)}` : 'not queued'}`);
        const inTree = r.indexedValueIndex(t.treeBytes, e.address);
        if (inTree !== undefined) add(t.tree, 'addressQueue', `address queue element ${e.queueIndex} (${b58(e.address)}) is already in the tree at leaf index ${inTree}`);
        if (addrNext !== undefined && e.queueIndex >= addrNext) add(t.tree, 'addressQueue', `address queue element ${e.queueIndex} is at or past the next address-queue number ${addrNext}`);
      }
    }
    if (t.type === 'AddressV1' || t.type === 'AddressV2') {
      const lastElement = r.lastIndexedLeafIndex(t.treeBytes);
      const lastNode = r.lastNodeIndex(t.treeBytes, 1n << BigInt(t.height + 1));
      const leafBase = 1n << BigInt(t.height);
      const lastLeaf = lastNode !== undefined && lastNode >= leafBase ? Number(lastNode - leafBase) : undefined;
      if (lastElement !== lastLeaf) add(t.tree, 'leaves', `the rightmost indexed element is at leaf index ${lastElement ?? 'none'}, the rightmost stored leaf at ${lastLeaf ?? 'none'}`);
    }
  }
  return { trees: trees.length, elements, disagreements: out, truncated: found > limit, ms: performance.now() - t0 };
}
