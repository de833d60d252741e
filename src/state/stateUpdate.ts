/**
 * Parsed Light events of one transaction → a StateUpdate (pure: no I/O, registry lookups only).
 *
 * Every output hash is recomputed from the account (photon.md §2.2) and a mismatch rejects the
 * whole transaction, as does a missing sequence number or unparsable token data. Outputs and events
 * for trees missing from the registry are skipped and reported in `unknownTrees`, never guessed.
 */
import * as base58 from '../solana/base58.ts';
import type { TreeInfo, TreeRegistry } from '../config/trees.ts';
import { TREE_TYPE_CODE } from '../config/trees.ts';
import { compressedAccountHashInputs } from '../light/hashing.ts';
import { poseidonTuples } from '../merkle/poseidon.ts';
import { type TokenData, TokenDataError, isTokenAccount, parseTokenData } from '../light/tokenData.ts';
import type { AccountRecord } from '../store/records.ts';
import type { BatchEvent, BatchPublicTransactionEvent, Bytes32, Hash, IndexedMerkleTreeEvent, ParsedTransaction, PublicTransactionEvent, Pubkey } from '../types.ts';
import type { LeafWrite } from './stateTree.ts';

/** A transaction the indexer refuses to apply; nothing of it is stored. */
export class TransactionRejected extends Error {
  constructor(
    readonly signature: string,
    readonly reason: string,
  ) {
    super(`transaction ${signature} rejected: ${reason}`);
    this.name = 'TransactionRejected';
  }
}

/** A new compressed account with its parsed token data (null when not a token account). */
export interface OutputAccount {
  account: AccountRecord;
  token: TokenData | null;
}

/** Everything one transaction changes. */
export interface StateUpdate {
  signature: string;
  slot: number;
  /** Whether the transaction row is stored (not a vote, or used compression). */
  recordTransaction: boolean;
  usesCompression: boolean;
  error: string | null;
  outputs: OutputAccount[];
  /** Input (spent) account hashes. */
  inputs: Bytes32[];
  /** State-tree leaf writes (outputs and nullifications). */
  leaves: { tree: TreeInfo; leaf: LeafWrite }[];
  indexedEvents: { tree: TreeInfo; event: IndexedMerkleTreeEvent }[];
  /** Forester batch events (BatchAppend / BatchNullify / BatchAddressAppend) of known batched trees. */
  batchEvents: { tree: TreeInfo; event: BatchEvent }[];
  /** Spent accounts of batched state trees entering their tree's input queue (photon.md §1.5 `batch_input_accounts`); absent when none. */
  batchInputs?: { tree: TreeInfo; accountHash: Bytes32; nullifier: Bytes32; queueIndex: bigint; txHash: Bytes32 }[];
  /** New addresses entering an AddressV2 tree's queue (photon.md §1.5 `batch_new_addresses`); absent when none. */
  newAddresses?: { tree: TreeInfo; address: Bytes32; queueIndex: bigint }[];
  /** Trees referenced by this transaction that are not in the registry (base58). */
  unknownTrees: string[];
}

/**
 * Null when `index` is a leaf of `info`'s tree (0 ≤ index < 2^height), else the rejection reason
 * `"<what> <index> is outside tree <tree> (height <h>: leaves 0..2^h−1)"`. Events come from the chain
 * unchecked (u64 indices): an index past the tree would write outside it or fail the key encoding.
 */
function leafIndexError(info: TreeInfo, index: bigint | number, what: string): string | null {
  const i = BigInt(index);
  return i >= 0n && i < 1n << BigInt(info.height) ? null : `${what} ${i} is outside tree ${info.tree} (height ${info.height}: leaves 0..2^${info.height}−1)`;
}

/** The first `leafIndexError` among `indices` ([index, what] pairs, in order), or null. */
function firstLeafIndexError(info: TreeInfo, indices: readonly (readonly [bigint | number, string])[]): string | null {
  for (const [index, what] of indices) {
    const e = leafIndexError(info, index, what);
    if (e) return e;
  }
  return null;
}

/** Map key of a 32-byte pubkey. */
const keyOf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');

/** An output hash still to be recomputed: its Poseidon inputs and what the event claims. */
interface HashCheck {
  output: number;
  inputs: Uint8Array[];
  claimed: Bytes32;
  tree: string;
  leafIndex: number;
}

function addOutputs(tx: ParsedTransaction, e: PublicTransactionEvent, registry: TreeRegistry, u: StateUpdate, checks: HashCheck[]): void {
  const n = e.outputCompressedAccounts.length;
  if (e.outputCompressedAccountHashes.length !== n || e.outputLeafIndices.length !== n)
    throw new TransactionRejected(tx.signature, `event has ${n} output accounts, ${e.outputCompressedAccountHashes.length} output hashes and ${e.outputLeafIndices.length} leaf indices`);
  const treeSeq = new Map<string, bigint>();
  for (const s of e.sequenceNumbers) treeSeq.set(keyOf(s.treePubkey), s.seq);
  for (let i = 0; i < n; i++) {
    const out = e.outputCompressedAccounts[i]!;
    const treeKey = e.pubkeyArray[out.merkleTreeIndex];
    if (!treeKey) throw new TransactionRejected(tx.signature, `output ${i}: merkle_tree_index ${out.merkleTreeIndex} is outside pubkey_array (${e.pubkeyArray.length} keys)`);
    const info = registry.getBytes(treeKey);
    if (!info) {
      u.unknownTrees.push(base58.encode(treeKey));
      continue;
    }
    if (info.type !== 'StateV1' && info.type !== 'StateV2') throw new TransactionRejected(tx.signature, `output ${i}: tree ${info.tree} is ${info.type}, not a state tree`);
    const batched = info.type === 'StateV2';
    const leafIndex = e.outputLeafIndices[i]!;
    const outside = leafIndexError(info, leafIndex, `output ${i}: leaf index`);
    if (outside) throw new TransactionRejected(tx.signature, outside);
    const hash = e.outputCompressedAccountHashes[i]!;
    const acc = out.compressedAccount;
    try {
      checks.push({ output: i, inputs: compressedAccountHashInputs(acc, info.treeBytes, leafIndex, batched ? 'v2' : 'v1'), claimed: hash, tree: info.tree, leafIndex });
    } catch (err) {
      if (err instanceof RangeError) throw new TransactionRejected(tx.signature, `output ${i}: ${err.message}`);
      throw err;
    }
    // StateV1: the output takes its tree's event seq (then +1). StateV2: no seq (photon.md §2.1, quirk 7).
    let seq: bigint | null = null;
    if (!batched) {
      const k = keyOf(treeKey);
      const s = treeSeq.get(k);
      if (s === undefined) throw new TransactionRejected(tx.signature, `output ${i}: missing sequence number for tree ${info.tree}`);
      treeSeq.set(k, s + 1n);
      seq = s;
    }
    let token: TokenData | null = null;
    if (isTokenAccount(acc)) {
      try {
        token = parseTokenData(acc.data!.data);
      } catch (err) {
        if (err instanceof TokenDataError) throw new TransactionRejected(tx.signature, `output ${i}: ${err.message}`);
        throw err;
      }
    }
    const account: AccountRecord = {
      // 32 bytes each: the Poseidon output, the registry's tree key, the event's owner.
      hash: hash as Hash,
      tree: info.treeBytes as Pubkey,
      owner: acc.owner as Pubkey,
      lamports: acc.lamports,
      leafIndex,
      seq,
      slotCreated: tx.slot,
      spent: false,
      address: acc.address,
      data: acc.data,
      treeType: TREE_TYPE_CODE[info.type],
    };
    // A compressed ATA's wallet owner (the event's ata_owners by output index; the last entry wins, as Photon's map): token accounts only.
    let ataOwner: Bytes32 | undefined;
    if (token) for (const o of e.ataOwners) if (o.outputIndex === i) ataOwner = o.walletOwner;
    if (ataOwner) account.ataOwner = ataOwner;
    if (batched) {
      // Enters the output queue; its leaf is written by the BatchAppend that covers its index (§2.5.1).
      account.v2 = { queue: info.queueBytes, inOutputQueue: true, nullifierQueueIndex: null, nullifier: null, txHash: null, nullifiedInTree: false };
      u.outputs.push({ account, token });
    } else {
      u.outputs.push({ account, token });
      u.leaves.push({ tree: info, leaf: { leafIndex, hash, seq: seq! } });
    }
  }
}

/**
 * The tree whose TREE pubkey is `tree` (`TreeRegistry.getTreeBytes`: a queue pubkey does not count), or
 * undefined after reporting `tree` (base58) in `u.unknownTrees`: the caller skips what names it.
 */
function knownTree(registry: TreeRegistry, tree: Uint8Array, u: StateUpdate): TreeInfo | undefined {
  const info = registry.getTreeBytes(tree);
  if (!info) u.unknownTrees.push(base58.encode(tree));
  return info;
}

/**
 * The queue entries of a v2 event (photon.md §1.5 step 6): spent accounts of batched state trees enter
 * the input queue; new addresses with a queue index enter their AddressV2 tree's queue. Unknown trees are
 * reported, never guessed.
 */
function addV2QueueEntries(tx: ParsedTransaction, e: BatchPublicTransactionEvent, registry: TreeRegistry, u: StateUpdate): void {
  e.batchInputAccounts.forEach((b, i) => {
    const info = knownTree(registry, b.tree, u);
    if (!info) return;
    if (info.type === 'StateV1') return; // a v1 input: spent above; v1 nullifier queues are not indexed (photon.md §2.5)
    if (info.type !== 'StateV2') throw new TransactionRejected(tx.signature, `batch input ${i}: tree ${info.tree} is ${info.type}, not a state tree`);
    if (b.queueIndex === null) throw new TransactionRejected(tx.signature, `batch input ${i} (${base58.encode(b.accountHash)}): no input-queue index (the light-system instruction has fewer inputs in trees with an input sequence number than insert_into_queues has nullifiers for them; this one is in tree ${info.tree})`);
    (u.batchInputs ??= []).push({ tree: info, accountHash: b.accountHash, nullifier: b.nullifier, queueIndex: b.queueIndex, txHash: e.txHash });
  });
  e.newAddresses.forEach((a, i) => {
    if (a.queueIndex === null) return; // a v1 address tree: its queue is not indexed (photon.md §2.5)
    const info = knownTree(registry, a.tree, u);
    if (!info) return;
    if (info.type === 'AddressV1') return; // v1 address queues are not indexed (photon.md §2.5); the tree's IndexedMerkleTreeEvent carries it
    if (info.type !== 'AddressV2') throw new TransactionRejected(tx.signature, `new address ${i}: tree ${info.tree} is ${info.type}, not an address tree`);
    (u.newAddresses ??= []).push({ tree: info, address: a.address, queueIndex: a.queueIndex });
  });
}

/**
 * Builds the StateUpdate of a parsed transaction, recomputing every output hash. Throws
 * TransactionRejected (naming the signature and the reason) for an event whose hashes, indices,
 * field elements or token data are inconsistent.
 */
export function deriveStateUpdate(tx: ParsedTransaction, registry: TreeRegistry): StateUpdate {
  const [p] = deriveStateUpdates([tx], registry);
  if (p!.rejected) throw p!.rejected;
  return p!.update!;
}

/** The outcome of deriving one transaction's state update: the update, or why the transaction is rejected. */
export type StateUpdateOutcome = { update: StateUpdate; rejected?: undefined } | { update?: undefined; rejected: TransactionRejected };

/**
 * {@link deriveStateUpdate} for many transactions: the same updates and rejections, in order, with
 * every output hash of the batch recomputed in one batched Poseidon pass (grouped by arity).
 * Reasons are those of a check-as-you-go pass: an output whose hash differs is reported before any
 * fault found after it in the same transaction. Pure. Throws only what is not a TransactionRejected (a bug).
 */
export function deriveStateUpdates(txs: readonly ParsedTransaction[], registry: TreeRegistry): StateUpdateOutcome[] {
  const results: StateUpdateOutcome[] = [];
  const pending: { index: number; signature: string; checks: HashCheck[] }[] = [];
  for (const tx of txs) {
    const checks: HashCheck[] = [];
    try {
      results.push({ update: buildStateUpdate(tx, registry, checks) });
    } catch (err) {
      if (!(err instanceof TransactionRejected)) throw err;
      results.push({ rejected: err });
    }
    // Also for a rejected transaction: a mismatch among the outputs checked before the fault wins.
    if (checks.length) pending.push({ index: results.length - 1, signature: tx.signature, checks });
  }
  const hashes = poseidonTuples(pending.flatMap((p) => p.checks.map((c) => c.inputs)));
  let offset = 0;
  for (const { index, signature, checks } of pending) {
    const mismatch = firstMismatch(checks, hashes, offset);
    offset += checks.length;
    if (mismatch) results[index] = { rejected: new TransactionRejected(signature, mismatch) };
  }
  return results;
}

/** The rejection reason for the first check whose recomputed hash (hashes[offset + k]) differs from the event's. */
function firstMismatch(checks: readonly HashCheck[], hashes: readonly Uint8Array[], offset: number): string | null {
  for (let k = 0; k < checks.length; k++) {
    const c = checks[k]!;
    const expected = hashes[offset + k]!;
    if (Buffer.compare(Buffer.from(expected.buffer, expected.byteOffset, 32), Buffer.from(c.claimed.buffer, c.claimed.byteOffset, c.claimed.length)) !== 0)
      return `output ${c.output}: event hash ${base58.encode(c.claimed)} differs from the recomputed compressed-account hash ${base58.encode(expected)} (tree ${c.tree}, leaf ${c.leafIndex})`;
  }
  return null;
}

/** The StateUpdate of `tx` without the hash comparison: output hashes to recompute go to `checks`. */
function buildStateUpdate(tx: ParsedTransaction, registry: TreeRegistry, checks: HashCheck[]): StateUpdate {
  const u: StateUpdate = {
    signature: tx.signature,
    slot: tx.slot,
    recordTransaction: tx.error === null && (!tx.isVote || tx.usesCompression),
    usesCompression: tx.usesCompression,
    error: tx.error,
    outputs: [],
    inputs: [],
    leaves: [],
    indexedEvents: [],
    batchEvents: [],
    unknownTrees: [],
  };
  if (tx.error !== null) return u;
  for (const ev of tx.events) {
    switch (ev.kind) {
      case 'publicTransaction':
        u.inputs.push(...ev.event.inputCompressedAccountHashes);
        addOutputs(tx, ev.event, registry, u, checks);
        break;
      case 'batchPublicTransaction':
        u.inputs.push(...ev.event.event.inputCompressedAccountHashes);
        addOutputs(tx, ev.event.event, registry, u, checks);
        addV2QueueEntries(tx, ev.event, registry, u);
        break;
      case 'nullifier': {
        const info = knownTree(registry, ev.event.tree, u);
        if (!info) break;
        if (info.type !== 'StateV1') throw new TransactionRejected(tx.signature, `nullifier event for ${info.tree}, which is ${info.type}`);
        const outside = firstLeafIndexError(info, ev.event.nullifiedLeavesIndices.map((i) => [i, 'nullifier event: leaf index'] as const));
        if (outside) throw new TransactionRejected(tx.signature, outside);
        ev.event.nullifiedLeavesIndices.forEach((leafIndex, i) => {
          u.leaves.push({ tree: info, leaf: { leafIndex: Number(leafIndex), hash: new Uint8Array(32), seq: ev.event.seq + BigInt(i) } });
        });
        break;
      }
      case 'indexedTreeUpdate': {
        const info = knownTree(registry, ev.event.tree, u);
        if (!info) break;
        if (info.type !== 'AddressV1') throw new TransactionRejected(tx.signature, `indexed tree update for ${info.tree}, which is ${info.type}`);
        const indices = ev.event.updates.flatMap((up, k) => [
          [up.newLowElement.index, `indexed tree update ${k}: low element index`] as const,
          [up.newLowElement.nextIndex, `indexed tree update ${k}: low element next index`] as const,
          [up.newHighElement.index, `indexed tree update ${k}: high element index`] as const,
          [up.newHighElement.nextIndex, `indexed tree update ${k}: high element next index`] as const,
        ]);
        const outside = firstLeafIndexError(info, indices);
        if (outside) throw new TransactionRejected(tx.signature, outside);
        u.indexedEvents.push({ tree: info, event: ev.event });
        break;
      }
      case 'batch': {
        const info = knownTree(registry, ev.event.merkleTreePubkey, u);
        if (!info) break;
        const want = ev.event.kind === 'batchAddressAppend' ? 'AddressV2' : 'StateV2';
        if (info.type !== want) throw new TransactionRejected(tx.signature, `${ev.event.kind} event for ${info.tree}, which is ${info.type} (expected ${want})`);
        const e = ev.event;
        if (e.newNextIndex < e.oldNextIndex) throw new TransactionRejected(tx.signature, `${e.kind} event for ${info.tree}: new_next_index ${e.newNextIndex} < old_next_index ${e.oldNextIndex}`);
        const outside = e.kind === 'batchNullify' ? null : leafIndexError(info, e.newNextIndex === 0n ? 0n : e.newNextIndex - 1n, `${e.kind} event: last leaf index`);
        if (outside) throw new TransactionRejected(tx.signature, outside);
        u.batchEvents.push({ tree: info, event: e });
        break;
      }
    }
  }
  return u;
}
