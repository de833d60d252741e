/**
 * Healing a gap in a tree's numbered stream (state/sequence.ts): the transactions carrying the
 * missing numbers are somewhere between the last transaction that carried that stream
 * (`gap.afterSlot`) and the one that showed the gap. Every transaction that changes a tree has the
 * tree's pubkey among its account keys, so `getSignaturesForAddress(tree)` walking back from the
 * gap's transaction lists them, whatever the source that missed them (a program-wide signature
 * listing, a stream). Those the store has neither indexed nor rejected are fetched as blocks (one per
 * slot, block order) for the loop to commit before the rest of its batch.
 */
import type { RequestGovernor } from '../../solana/requestGovernor.ts';
import type { SolanaRpc } from '../../solana/rpcClient.ts';
import type { SequenceGap } from '../../state/sequence.ts';
import type { Store } from '../../store/store.ts';
import type { BlockInfo } from '../../types.ts';
import { type FetchOptions, fetchBlocks } from '../fetchTransactions.ts';
import type { PreparedBatch } from '../prepareBatch.ts';

/** What a tree's own listing shows over a gap's range. */
export interface GapListing {
  /** The missing transactions, fetched: blocks of the slots that hold them, ascending. */
  blocks: BlockInfo[];
  /** Signatures in the range that the store rejected (their numbers can never be applied). */
  rejected: string[];
  /** Signatures listed in the range (for the log). */
  listed: number;
}

/**
 * Lists `gap.tree`'s signatures from the gap's transaction (or, without `signature`, from the newest,
 * skipping those past `throughSlot`) back to `gap.afterSlot` and fetches those the store does not
 * have (`known`: signatures already in the batch being committed count as had).
 * @throws only when `opts.signal` aborts (node errors are retried)
 */
export async function listGap(
  rpc: SolanaRpc,
  gov: RequestGovernor,
  store: Store,
  gap: Pick<SequenceGap, 'tree' | 'afterSlot'> & { signature?: string; throughSlot?: number },
  known: ReadonlySet<string>,
  opts: Pick<FetchOptions, 'batchSize' | 'signal' | 'log'>,
): Promise<GapListing> {
  const missing: { slot: number; signature: string }[] = [];
  const rejected: string[] = [];
  let listed = 0;
  let before = gap.signature;
  for (;;) {
    const page = await gov.run('getSignaturesForAddress', () => rpc.getSignaturesForAddress(gap.tree, { ...(before ? { before } : {}), limit: 1000 }, opts.signal), { signal: opts.signal, retry: { log: opts.log, what: 'getSignaturesForAddress (tree)' } });
    let end = page.length < 1000;
    // One read transaction for the page's lookups.
    store.read((r) => {
      for (const e of page) {
        if (e.slot < gap.afterSlot) {
          end = true;
          break;
        }
        if (gap.throughSlot !== undefined && e.slot > gap.throughSlot) continue;
        listed++;
        if ((e.err !== null && e.err !== undefined) || known.has(e.signature) || r.transaction(e.signature)) continue;
        if (r.rejection(e.signature) !== undefined) rejected.push(e.signature);
        else missing.push({ slot: e.slot, signature: e.signature });
      }
    });
    if (end || page.length === 0) break;
    before = page[page.length - 1]!.signature;
  }
  missing.sort((a, b) => a.slot - b.slot);
  const blocks = missing.length ? await fetchBlocks(rpc, gov, missing, Math.max(0, missing[0]!.slot - 1), { ok: opts.batchSize > 1 }, opts) : [];
  return { blocks, rejected, listed };
}

/**
 * `batch` cut before its update `index`: the first part holds the updates before it and the blocks
 * (and rejections, unparsed reports) of the slots before that update's slot; the second the rest.
 * Both are PreparedBatches the indexer commits as usual.
 */
export function splitPreparedBatch(batch: PreparedBatch, index: number): [PreparedBatch, PreparedBatch] {
  const cutSlot = batch.updates[index]?.slot ?? Number.MAX_SAFE_INTEGER;
  const before = (slot: number) => slot < cutSlot;
  const part = (first: boolean): PreparedBatch => {
    const updates = first ? batch.updates.slice(0, index) : batch.updates.slice(index);
    const records = batch.records.filter((r) => before(r.slot) === first);
    return {
      records,
      updates,
      rejected: batch.rejected.filter((r) => before(r.slot) === first),
      unknownTrees: first ? new Map() : batch.unknownTrees,
      outputs: updates.reduce((n, u) => n + u.outputs.length, 0),
      lastSlot: records.length ? records[records.length - 1]!.slot : first ? null : batch.lastSlot,
      ...(batch.unparsed ? { unparsed: batch.unparsed.filter((u) => before(u.slot) === first) } : {}),
    };
  };
  return [part(true), part(false)];
}
