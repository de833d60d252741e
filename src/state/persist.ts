/**
 * StateUpdates of one block batch → LMDB writes, inside ONE write transaction (photon.md §2.3).
 * Re-applying the same updates changes nothing (inserts are ON CONFLICT DO NOTHING, spends are
 * no-ops on spent accounts, tree writes obey the seq rule).
 */
import * as base58 from '../solana/base58.ts';
import type { TreeInfo } from '../config/trees.ts';
import { PAGE_LIMIT } from '../light/constants.ts';
import { isTokenAccount, parseTokenData } from '../light/tokenData.ts';
import type { AccountRecord, BlockRecord } from '../store/records.ts';
import type { WriteView } from '../store/store.ts';
import { type BatchEventInput, type BatchEventsOutcome, enterInputQueue, persistBatchEvents, persistQueueInserts } from './batchedTree.ts';
import { type IndexedUpdate, collectIndexedUpdates, persistIndexedUpdates } from './indexedTree.ts';
import type { StateUpdate } from './stateUpdate.ts';
import { type SequenceGap, persistSequencePositions } from './sequence.ts';
import { type LeafWrite, persistLeafNodes } from './stateTree.ts';

/** Counts of what one batch changed. */
export interface PersistStats {
  blocks: number;
  transactions: number;
  outputsInserted: number;
  accountsSpent: number;
  leavesWritten: number;
  treeHashes: number;
  /** Spent accounts of batched trees that the store does not know (created before the indexed range): not queued. */
  unknownBatchInputs: { signature: string; hash: string }[];
  /** Batch events (batched trees): applied, skipped (re-index), held back (sequence gap) and refused (nothing stored). */
  batchEvents: BatchEventsOutcome;
  /** Gaps in trees' numbered streams that this batch showed and went past (state/sequence.ts; the RPC sources check before committing). */
  sequenceGaps: SequenceGap[];
}

function tokenOf(a: Pick<AccountRecord, 'owner' | 'data'>) {
  if (!isTokenAccount(a)) return null;
  const t = parseTokenData(a.data!.data);
  return { owner: t.owner, mint: t.mint, delegate: t.delegate, amount: t.amount };
}

/**
 * Applies `blocks` metadata and `updates` to the store: all outputs of the batch, then (in order) the
 * spends, batched-tree queue inserts, transaction rows and signature links. Tree leaves of the whole batch
 * are written together per tree, so consecutive leaves share upper-level hashing. Batch events come last
 * (src/state/batchedTree.ts); the transaction of a refused batch event is not recorded (`stats.batchEvents.refused`).
 */
export function persistBatch(w: WriteView, blocks: readonly BlockRecord[], updates: readonly StateUpdate[]): PersistStats {
  const stats: PersistStats = {
    blocks: blocks.length,
    transactions: 0,
    outputsInserted: 0,
    accountsSpent: 0,
    leavesWritten: 0,
    treeHashes: 0,
    unknownBatchInputs: [],
    batchEvents: { applied: 0, skipped: 0, held: [], refused: [], rootHashes: 0, rootSeconds: 0 },
    sequenceGaps: [],
  };
  const batchEvents: BatchEventInput[] = [];
  for (const b of blocks) w.insertBlock(b);
  const leavesByTree = new Map<string, { info: TreeInfo; leaves: LeafWrite[] }>();
  const indexedByTree = new Map<string, { info: TreeInfo; updates: Map<number, IndexedUpdate> }>();

  // Every output of the batch first, then the spends (photon.md §2.3 steps 3–4: the batch's updates
  // are merged, outputs inserted, then inputs spent), so a spend finds an account that an earlier-sorted
  // transaction of the same batch did not create yet (file imports order one slot's transactions by
  // file name, not execution order).
  for (const u of updates) {
    for (const { account, token } of u.outputs) {
      if (!w.insertAccount(account, token ? { owner: token.owner, mint: token.mint, delegate: token.delegate, amount: token.amount } : null)) continue;
      stats.outputsInserted++;
      // Spent before it arrived (its transaction was found late, by healing a sequence gap): spend it now, as in chain order.
      const orphan = w.orphanSpend(account.hash);
      if (orphan) {
        w.deleteOrphanSpend(account.hash);
        const t = token ? { owner: token.owner, mint: token.mint, delegate: token.delegate, amount: token.amount } : null;
        if (w.spendAccount(account.hash, () => t)) stats.accountsSpent++;
        // A batched-tree account's spend also put its nullifier in the input queue, as chain order would have.
        if (orphan.queue) enterInputQueue(w, account.hash, orphan.queue);
        w.linkAccountTransaction(account, token?.owner ?? null, orphan.signature, orphan.slot);
      }
    }
  }
  for (const u of updates) {
    const linked: { account: AccountRecord; tokenOwner: Uint8Array | null }[] = [];
    for (const hash of u.inputs) {
      const existing = w.account(hash);
      if (!existing) {
        // Created before the indexed range, or by a transaction not indexed yet: applied if it arrives.
        const input = u.batchInputs?.find((b) => Buffer.compare(b.accountHash, hash) === 0);
        w.putOrphanSpend(hash, { slot: u.slot, signature: u.signature, queue: input && { tree: input.tree.treeBytes, queueIndex: input.queueIndex, nullifier: input.nullifier, txHash: input.txHash } });
        continue;
      }
      const token = tokenOf(existing);
      linked.push({ account: existing, tokenOwner: token?.owner ?? null });
      if (w.spendAccount(hash, () => token)) stats.accountsSpent++;
    }
    for (const { account, token } of u.outputs) linked.push({ account, tokenOwner: token?.owner ?? null });
    if (u.batchInputs || u.newAddresses) {
      for (const h of persistQueueInserts(w, u.batchInputs ?? [], u.newAddresses ?? [])) stats.unknownBatchInputs.push({ signature: u.signature, hash: base58.encode(h) });
    }
    for (const { tree, event } of u.batchEvents) batchEvents.push({ tree, event, signature: u.signature, slot: u.slot });
    // A transaction carrying batch events is recorded after them: a refused event leaves no trace.
    if (u.recordTransaction && u.batchEvents.length === 0) {
      if (w.insertTransaction({ signature: u.signature, slot: u.slot, usesCompression: u.usesCompression, error: u.error }, PAGE_LIMIT)) stats.transactions++;
    }
    for (const { account, tokenOwner } of linked) w.linkAccountTransaction(account, tokenOwner, u.signature, u.slot);
    for (const { tree, leaf } of u.leaves) {
      let entry = leavesByTree.get(tree.tree);
      if (!entry) leavesByTree.set(tree.tree, (entry = { info: tree, leaves: [] }));
      entry.leaves.push(leaf);
    }
    for (const { tree, event } of u.indexedEvents) {
      let entry = indexedByTree.get(tree.tree);
      if (!entry) indexedByTree.set(tree.tree, (entry = { info: tree, updates: new Map() }));
      collectIndexedUpdates(event, entry.updates);
    }
  }
  // An address reused within the batch ends on its live account, whatever the order (store.ts relinkAddress).
  for (const u of updates) for (const { account } of u.outputs) if (account.address) w.relinkAddress(account);
  for (const { info, updates: ups } of indexedByTree.values()) persistIndexedUpdates(w, info, ups);
  for (const { info, leaves } of leavesByTree.values()) {
    stats.leavesWritten += leaves.length;
    stats.treeHashes += persistLeafNodes(w, info.treeBytes, info.height, leaves);
  }
  // Batch events last (photon.md §2.3 step 8), after every queue insert of the batch.
  let refused = new Set<string>();
  if (batchEvents.length) {
    stats.batchEvents = persistBatchEvents(w, batchEvents);
    refused = new Set(stats.batchEvents.refused.map((r) => r.signature));
    for (const u of updates) {
      if (u.batchEvents.length === 0 || !u.recordTransaction || refused.has(u.signature)) continue;
      if (w.insertTransaction({ signature: u.signature, slot: u.slot, usesCompression: u.usesCompression, error: u.error }, PAGE_LIMIT)) stats.transactions++;
    }
  }
  // The trees' numbered streams move over what was stored: a refused batch event leaves no trace here either.
  stats.sequenceGaps = persistSequencePositions(w, refused.size ? updates.filter((u) => !refused.has(u.signature)) : updates);
  return stats;
}
