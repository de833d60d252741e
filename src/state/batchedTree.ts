/**
 * Batched (v2) trees: the forester's BatchAppend / BatchNullify / BatchAddressAppend events applied to
 * the output, input and address queues (photon.md §2.5.2, §2.6 `multi_append`), inside the caller's
 * write transaction.
 *
 * Beyond the reference: every event's resulting root is computed in memory first and compared with the
 * event's `new_root` (the root the chain computed). A mismatch refuses the event: nothing of it is
 * written, and the caller records the refusal. Events of a tree are applied strictly in sequence order;
 * an event whose predecessor is missing is held back (stored, applied when the gap closes), never
 * guessed past.
 */
import * as base58 from '../solana/base58.ts';
import type { TreeInfo } from '../config/trees.ts';
import { indexedLeafHashV2 } from '../light/hashing.ts';
import { HIGHEST_ADDRESS_PLUS_ONE } from '../merkle/indexedConstants.ts';
import { ZERO_BYTES } from '../merkle/zeroValues.ts';
import type { AccountRecord, BatchTreeRecord, IndexedElementRecord, NodeRecord } from '../store/records.ts';
import type { WriteView } from '../store/store.ts';
import type { BatchEvent, Bytes32 } from '../types.ts';
import { type LeafWrite, computeLeafNodes, computeLeafNodesSequence } from './stateTree.ts';

/** A batch event with the transaction that carried it. */
export interface BatchEventInput {
  tree: TreeInfo;
  event: BatchEvent;
  signature: string;
  slot: number;
}

/** A batch event that was refused: nothing of it was stored. */
export interface RefusedBatchEvent {
  signature: string;
  slot: number;
  tree: string;
  seq: bigint;
  reason: string;
  /** Set when the refusal is a root mismatch: the root Refract computed and the event's `new_root` (base58). */
  rootMismatch?: { computed: string; expected: string };
}

/** What {@link persistBatchEvents} did. */
export interface BatchEventsOutcome {
  applied: number;
  /** Already applied (re-index): skipped. */
  skipped: number;
  /** Held back by a sequence gap (stored; applied once the missing events arrive). */
  held: { tree: string; seq: bigint; expected: bigint; signature: string }[];
  refused: RefusedBatchEvent[];
  /** Poseidon hashes computed for the events' roots (applied and refused events alike). */
  rootHashes: number;
  /** Wall-clock seconds spent computing those roots (stored-node reads and hashing; one thread, so ≈ CPU); for bench:ingest's v2 breakdown. */
  rootSeconds: number;
}

/** The zeroeth element of an AddressV2 tree (photon.md §2.6): value 0, next index 0, next value 2^248−1, seq 0. */
export const ZEROETH_ELEMENT_V2: IndexedElementRecord = { leafIndex: 0, value: new Uint8Array(32), nextIndex: 0, nextValue: HIGHEST_ADDRESS_PLUS_ONE, seq: 0n };

const b58 = (b: Uint8Array) => base58.encode(b);
const eq = (a: Uint8Array, b: Uint8Array) => Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length)) === 0;
const cmp = (a: Uint8Array, b: Uint8Array) => Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length));

/** The state of a batched tree before any batch event: seq 0, the empty root, next index 0 (1 for AddressV2: the zeroeth element). */
export function initialBatchTree(info: TreeInfo): BatchTreeRecord {
  return { seq: 0n, root: ZERO_BYTES[info.height]!, rootIndex: 0, nextIndex: info.type === 'AddressV2' ? 1n : 0n, nullifiedNextIndex: 0n };
}

/** A failed check of one event (refused; nothing written). */
class Refusal extends Error {
  constructor(
    readonly reason: string,
    readonly rootMismatch?: { computed: string; expected: string },
  ) {
    super(reason);
  }
}

/** Planned writes of one event, applied only after the root check. */
interface Plan {
  leaves: LeafWrite[];
  commit: (w: WriteView) => void;
  next: Pick<BatchTreeRecord, 'nextIndex' | 'nullifiedNextIndex'>;
  /** BatchNullify: the hashes of the accounts it nullifies in the tree. */
  nullified?: Bytes32[];
}

/** `nullifiedAhead`: hex hashes of accounts that earlier events of a guessed run nullify (see {@link speculateRoots}). */
function planAppend(w: WriteView, info: TreeInfo, e: BatchEvent, state: BatchTreeRecord, nullifiedAhead?: ReadonlySet<string>): Plan {
  const seq = e.sequenceNumber;
  if (e.oldNextIndex !== state.nextIndex) throw new Refusal(`BatchAppend seq ${seq}: old_next_index ${e.oldNextIndex} differs from the tree's next index ${state.nextIndex}`);
  const want = Number(e.newNextIndex - e.oldNextIndex);
  const queued = [...w.outputQueue(info.treeBytes, Number(e.oldNextIndex), Number(e.newNextIndex))];
  if (queued.length !== want) throw new Refusal(`BatchAppend seq ${seq}: the output queue of ${info.tree} holds ${queued.length} accounts in leaf range [${e.oldNextIndex}, ${e.newNextIndex}), expected ${want}`);
  const accounts: AccountRecord[] = [];
  const leaves: LeafWrite[] = [];
  for (const q of queued) {
    const a = w.account(q.hash);
    if (!a?.v2) throw new Refusal(`BatchAppend seq ${seq}: queued hash ${b58(q.hash)} has no StateV2 account record`);
    accounts.push(a);
    // An account already nullified in the tree keeps its nullifier leaf (§2.5.2 BatchAppend step 4).
    if (!a.v2.nullifiedInTree && !(nullifiedAhead?.size && nullifiedAhead.has(Buffer.from(a.hash).toString('hex')))) leaves.push({ leafIndex: a.leafIndex, hash: a.hash, seq });
  }
  return {
    leaves,
    next: { nextIndex: e.newNextIndex, nullifiedNextIndex: state.nullifiedNextIndex },
    commit: (w) => {
      for (const a of accounts) {
        w.deleteOutputQueue(info.treeBytes, a.leafIndex);
        w.putAccountRecord({ ...a, v2: { ...a.v2!, inOutputQueue: false } });
      }
    },
  };
}

function planNullify(w: WriteView, info: TreeInfo, e: BatchEvent, state: BatchTreeRecord): Plan {
  const seq = e.sequenceNumber;
  if (e.oldNextIndex !== state.nullifiedNextIndex) throw new Refusal(`BatchNullify seq ${seq}: old_next_index ${e.oldNextIndex} differs from the input queue's nullified index ${state.nullifiedNextIndex}`);
  const want = Number(e.newNextIndex - e.oldNextIndex);
  const queued = [...w.inputQueue(info.treeBytes, e.oldNextIndex, e.newNextIndex)];
  if (queued.length !== want) throw new Refusal(`BatchNullify seq ${seq}: the input queue of ${info.tree} holds ${queued.length} accounts in queue range [${e.oldNextIndex}, ${e.newNextIndex}), expected ${want}`);
  const accounts: { a: AccountRecord; queueIndex: bigint }[] = [];
  const leaves: LeafWrite[] = [];
  for (const q of queued) {
    const a = w.account(q.hash);
    if (!a?.v2?.nullifier) throw new Refusal(`BatchNullify seq ${seq}: queued hash ${b58(q.hash)} has no nullifier`);
    accounts.push({ a, queueIndex: q.queueIndex });
    leaves.push({ leafIndex: a.leafIndex, hash: a.v2.nullifier, seq });
  }
  return {
    leaves,
    next: { nextIndex: state.nextIndex, nullifiedNextIndex: e.newNextIndex },
    nullified: accounts.map((x) => x.a.hash),
    commit: (w) => {
      for (const { a, queueIndex } of accounts) {
        w.deleteInputQueue(info.treeBytes, queueIndex);
        w.putAccountRecord({ ...a, v2: { ...a.v2!, nullifiedInTree: true } });
      }
    },
  };
}

/**
 * `multi_append` (photon.md §2.6 V2 path): each queued address becomes a new element at the next leaf
 * index, linked after its low element (the largest value below it). The zeroeth element is seeded into an
 * empty tree. Leaf hash = Poseidon(value, next_value).
 */
function planAddressAppend(w: WriteView, info: TreeInfo, e: BatchEvent, state: BatchTreeRecord): Plan {
  const seq = e.sequenceNumber;
  const tree = info.treeBytes;
  if (e.oldNextIndex !== state.nextIndex) throw new Refusal(`BatchAddressAppend seq ${seq}: old_next_index ${e.oldNextIndex} differs from the tree's next index ${state.nextIndex}`);
  if (e.oldNextIndex < 1n) throw new Refusal(`BatchAddressAppend seq ${seq}: old_next_index 0 (leaf 0 is the zeroeth element)`);
  const want = Number(e.newNextIndex - e.oldNextIndex);
  const queued = [...w.addressQueue(tree, e.oldNextIndex - 1n, e.newNextIndex - 1n)];
  if (queued.length !== want) throw new Refusal(`BatchAddressAppend seq ${seq}: the address queue of ${info.tree} holds ${queued.length} addresses in queue range [${e.oldNextIndex - 1n}, ${e.newNextIndex - 1n}), expected ${want}`);

  const mem = new Map<number, IndexedElementRecord>();
  if (!w.indexedElement(tree, 0)) mem.set(0, ZEROETH_ELEMENT_V2);
  /** Elements added by this event, by value (for low-element lookups that the store does not see yet). */
  const added: IndexedElementRecord[] = [...mem.values()];
  const latest = (el: IndexedElementRecord) => mem.get(el.leafIndex) ?? el;
  let idx = Number(e.oldNextIndex);
  for (const q of queued) {
    const v = q.address;
    if (w.indexedValueIndex(tree, v) !== undefined || added.some((x) => eq(x.value, v))) throw new Refusal(`BatchAddressAppend seq ${seq}: address ${b58(v)} is already in tree ${info.tree}`);
    let low = w.indexedLowElement(tree, v);
    for (const x of added) if (cmp(x.value, v) < 0 && (!low || cmp(x.value, low.value) > 0)) low = x;
    if (!low) throw new Refusal(`BatchAddressAppend seq ${seq}: no low element for address ${b58(v)} in tree ${info.tree}`);
    low = latest(low);
    const el: IndexedElementRecord = { leafIndex: idx, value: v, nextIndex: low.nextIndex, nextValue: low.nextValue, seq };
    mem.set(low.leafIndex, { ...low, nextIndex: idx, nextValue: v, seq });
    mem.set(idx, el);
    added.push(el);
    idx++;
  }
  const leaves: LeafWrite[] = [...mem.values()].map((el) => ({ leafIndex: el.leafIndex, hash: indexedLeafHashV2(el.value, el.nextValue), seq: el.seq }));
  return {
    leaves,
    next: { nextIndex: e.newNextIndex, nullifiedNextIndex: state.nullifiedNextIndex },
    commit: (w) => {
      for (const el of mem.values()) w.putIndexedElement(tree, el);
      for (const q of queued) w.deleteQueuedAddress(tree, q.queueIndex, q.address);
    },
  };
}

let rootHashing: 'run' | 'event' = 'run';
/**
 * How batch events' roots are hashed: `run` (default) hashes a StateV2 tree's run of in-sequence events
 * of one batch level by level together ({@link speculateRoots}); `event` hashes each event on its own.
 * Same roots and writes either way; for bench:ingest's A/B and tests.
 */
export function selectBatchRootHashing(mode: 'run' | 'event'): void {
  rootHashing = mode;
}

/** Nodes of one event computed ahead (see {@link speculateRoots}) from the leaves it was planned with. */
interface Speculated {
  leaves: LeafWrite[];
  nodes: Map<number, NodeRecord>;
}

const sameLeaves = (a: readonly LeafWrite[], b: readonly LeafWrite[]) => a.length === b.length && a.every((x, i) => x.leafIndex === b[i]!.leafIndex && x.seq === b[i]!.seq && eq(x.hash, b[i]!.hash));

/**
 * The nodes of a StateV2 tree's run of in-sequence events (`sorted`, from the tree's `state`), planned
 * against the store as it is now and hashed together (stateTree.ts `computeLeafNodesSequence`: one batched
 * Poseidon call per level for the whole run instead of one scalar hash per level and event on the upper
 * path). Keyed by sequence number. Only a guess: {@link applyEvent} uses an event's entry only when the
 * event's real plan (made after the previous events' writes) has the same leaves and every earlier event
 * of the run was applied from its entry, which makes the entry exactly what it would compute itself.
 * AddressV2 runs are not guessed (each event's low elements depend on the previous event's writes).
 */
function speculateRoots(w: WriteView, info: TreeInfo, sorted: readonly { event: BatchEvent }[], state: BatchTreeRecord, out: BatchEventsOutcome): Map<bigint, Speculated> {
  if (info.type !== 'StateV2') return new Map();
  // Planning reads the queues and accounts; a run of fewer than two in-sequence events is not guessed.
  let run = 0;
  for (const { event: e } of sorted) {
    if (e.sequenceNumber <= state.seq) continue;
    if (e.sequenceNumber !== state.seq + BigInt(run) + 1n || e.kind === 'batchAddressAppend') break;
    if (++run === 2) break;
  }
  if (run < 2) return new Map();
  const planned: { seq: bigint; leaves: LeafWrite[] }[] = [];
  let s = state;
  // What the run's earlier BatchNullify events will have marked (an append then keeps the nullifier leaf).
  const nullifiedAhead = new Set<string>();
  for (const { event: e } of sorted) {
    if (e.sequenceNumber <= s.seq) continue;
    if (e.sequenceNumber !== s.seq + 1n || e.kind === 'batchAddressAppend') break;
    let plan: Plan;
    try {
      plan = e.kind === 'batchAppend' ? planAppend(w, info, e, s, nullifiedAhead) : planNullify(w, info, e, s);
    } catch (err) {
      if (err instanceof Refusal) break;
      throw err;
    }
    for (const h of plan.nullified ?? []) nullifiedAhead.add(Buffer.from(h).toString('hex'));
    planned.push({ seq: e.sequenceNumber, leaves: plan.leaves });
    s = { ...s, seq: e.sequenceNumber, ...plan.next };
  }
  if (planned.length < 2) return new Map();
  const t0 = performance.now();
  const computed = computeLeafNodesSequence(w, info.treeBytes, info.height, planned.map((p) => p.leaves));
  out.rootSeconds += (performance.now() - t0) / 1000;
  for (const c of computed) out.rootHashes += c.hashes;
  return new Map(planned.map((p, j) => [p.seq, { leaves: p.leaves, nodes: computed[j]!.nodes }]));
}

/**
 * Applies one in-sequence event: plan, compute the root (or take `spec`'s nodes when planned with the
 * same leaves), compare with `new_root`, then write. The root computation's hashes and seconds are added
 * to `out` (also when the event is refused). Returns the tree's new state and whether `spec` was used.
 */
function applyEvent(w: WriteView, info: TreeInfo, e: BatchEvent, state: BatchTreeRecord, out: BatchEventsOutcome, spec?: Speculated): { state: BatchTreeRecord; usedSpec: boolean } {
  const plan = e.kind === 'batchAppend' ? planAppend(w, info, e, state) : e.kind === 'batchNullify' ? planNullify(w, info, e, state) : planAddressAppend(w, info, e, state);
  const usedSpec = spec !== undefined && sameLeaves(plan.leaves, spec.leaves);
  let nodes: Map<number, NodeRecord>;
  if (usedSpec) nodes = spec.nodes;
  else {
    const t0 = performance.now();
    const c = computeLeafNodes(w, info.treeBytes, info.height, plan.leaves);
    nodes = c.nodes;
    out.rootHashes += c.hashes;
    out.rootSeconds += (performance.now() - t0) / 1000;
  }
  const root: NodeRecord = nodes.get(1) ?? w.node(info.treeBytes, 1n) ?? { hash: ZERO_BYTES[info.height]!, seq: 0n };
  if (!eq(root.hash, e.newRoot)) {
    throw new Refusal(`${e.kind} seq ${e.sequenceNumber}: computed root ${b58(root.hash)} of ${info.tree} differs from the event's new_root ${b58(e.newRoot)}`, {
      computed: b58(root.hash),
      expected: b58(e.newRoot),
    });
  }
  for (const [idx, node] of nodes) if (idx !== 1) w.putNode(info.treeBytes, BigInt(idx), node);
  // The root carries the event's sequence number even when no leaf changed (`update_root_sequence`).
  w.putNode(info.treeBytes, 1n, { hash: root.hash, seq: e.sequenceNumber });
  plan.commit(w);
  const next: BatchTreeRecord = { seq: e.sequenceNumber, root: Buffer.from(root.hash), rootIndex: e.rootIndex, ...plan.next };
  w.putBatchTree(info.treeBytes, next);
  return { state: next, usedSpec };
}

/** Re-index of an already applied BatchAddressAppend: drop queue rows below `new_next_index − 1` (§2.5.2). */
function cleanAddressQueue(w: WriteView, info: TreeInfo, e: BatchEvent): void {
  if (e.newNextIndex < 1n) return;
  for (const q of [...w.addressQueue(info.treeBytes, 0n, e.newNextIndex - 1n)]) w.deleteQueuedAddress(info.treeBytes, q.queueIndex, q.address);
}

/**
 * Applies the batch events of one block batch (after its outputs, spends and queue inserts), per tree in
 * sequence order together with events held back earlier:
 * - seq ≤ the tree's applied seq: already applied (re-index), skipped (an address append also cleans its queue);
 * - seq = applied + 1: applied if its queue range is complete and its computed root equals `new_root`,
 *   otherwise refused (nothing written);
 * - seq > applied + 1: held back (stored) until the missing events arrive.
 * Duplicate sequence numbers keep the first event. Runs inside the caller's write transaction.
 */
export function persistBatchEvents(w: WriteView, inputs: readonly BatchEventInput[]): BatchEventsOutcome {
  const out: BatchEventsOutcome = { applied: 0, skipped: 0, held: [], refused: [], rootHashes: 0, rootSeconds: 0 };
  const byTree = new Map<string, { info: TreeInfo; events: Map<bigint, BatchEventInput & { pending: boolean }> }>();
  for (const x of inputs) {
    let t = byTree.get(x.tree.tree);
    if (!t) byTree.set(x.tree.tree, (t = { info: x.tree, events: new Map() }));
    if (!t.events.has(x.event.sequenceNumber)) t.events.set(x.event.sequenceNumber, { ...x, pending: false });
  }
  for (const { info, events } of byTree.values()) {
    for (const p of w.pendingBatchEvents(info.treeBytes)) {
      if (!events.has(p.event.sequenceNumber)) events.set(p.event.sequenceNumber, { tree: info, event: p.event, signature: p.signature, slot: p.slot, pending: true });
      else events.get(p.event.sequenceNumber)!.pending = true;
    }
    let state = w.batchTree(info.treeBytes) ?? initialBatchTree(info);
    const sorted = [...events.values()].sort((a, b) => (a.event.sequenceNumber < b.event.sequenceNumber ? -1 : 1));
    const spec = rootHashing === 'run' ? speculateRoots(w, info, sorted, state, out) : new Map<bigint, Speculated>();
    let specValid = spec.size > 0;
    for (const x of sorted) {
      const e = x.event;
      if (e.sequenceNumber <= state.seq) {
        if (e.kind === 'batchAddressAppend') cleanAddressQueue(w, info, e);
        if (x.pending) w.deletePendingBatchEvent(info.treeBytes, e.sequenceNumber);
        out.skipped++;
        continue;
      }
      if (e.sequenceNumber > state.seq + 1n) {
        if (!x.pending) w.putPendingBatchEvent({ signature: x.signature, slot: x.slot, event: e });
        out.held.push({ tree: info.tree, seq: e.sequenceNumber, expected: state.seq + 1n, signature: x.signature });
        continue;
      }
      // A guessed entry holds only while every earlier event of the run was applied from its own entry.
      const guess = specValid ? spec.get(e.sequenceNumber) : undefined;
      specValid = false;
      try {
        const applied = applyEvent(w, info, e, state, out, guess);
        state = applied.state;
        specValid = applied.usedSpec;
        out.applied++;
      } catch (err) {
        if (!(err instanceof Refusal)) throw err;
        const r: RefusedBatchEvent = { signature: x.signature, slot: x.slot, tree: info.tree, seq: e.sequenceNumber, reason: err.reason };
        if (err.rootMismatch) r.rootMismatch = err.rootMismatch;
        out.refused.push(r);
      }
      if (x.pending) w.deletePendingBatchEvent(info.treeBytes, e.sequenceNumber);
    }
  }
  return out;
}

/**
 * Puts a spent batched-tree (v2) account's nullifier into its tree's input queue: the account
 * record takes the nullifier queue index, nullifier and tx hash (32-byte values), and the input
 * queue index maps the queue index to the account hash. No-op for an account that is unknown, not
 * v2, or already queued or nullified (a re-index).
 */
export function enterInputQueue(w: WriteView, accountHash: Bytes32, q: { tree: Uint8Array; queueIndex: bigint; nullifier: Uint8Array; txHash: Uint8Array }): void {
  const a = w.account(accountHash);
  if (!a?.v2 || a.v2.nullifierQueueIndex !== null) return;
  w.putAccountRecord({ ...a, v2: { ...a.v2, nullifierQueueIndex: q.queueIndex, nullifier: q.nullifier as Bytes32, txHash: q.txHash as Bytes32 } });
  w.putInputQueue(q.tree as Bytes32, q.queueIndex, accountHash);
}

/**
 * The V2 queue inserts of one update: spent accounts into input queues, new addresses into address queues.
 * Returns the hashes of spent accounts that could not be queued because the store does not know them
 * (created before the indexed range, or by a transaction not indexed yet: persist.ts keeps the insert
 * with the orphan spend and applies it when the account arrives): the caller reports them.
 */
export function persistQueueInserts(
  w: WriteView,
  batchInputs: readonly { tree: TreeInfo; accountHash: Bytes32; nullifier: Bytes32; queueIndex: bigint; txHash: Bytes32 }[],
  newAddresses: readonly { tree: TreeInfo; address: Bytes32; queueIndex: bigint }[],
): Bytes32[] {
  const unknown: Bytes32[] = [];
  for (const b of batchInputs) {
    const a = w.account(b.accountHash);
    if (!a?.v2) {
      unknown.push(b.accountHash);
      continue;
    }
    enterInputQueue(w, b.accountHash, { tree: b.tree.treeBytes, queueIndex: b.queueIndex, nullifier: b.nullifier, txHash: b.txHash });
  }
  for (const n of newAddresses) {
    if (w.indexedValueIndex(n.tree.treeBytes, n.address) !== undefined) continue; // re-index: already appended
    w.putQueuedAddress(n.tree.treeBytes, n.queueIndex, n.address);
  }
  return unknown;
}
