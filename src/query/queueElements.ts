/**
 * The queues of batched (v2) trees as the reference's `getQueueElements` / `getQueueInfo` show them
 * (helius-labs/photon `src/api/method/get_queue_elements.rs`, `get_queue_info.rs`), read from the
 * store's queue indexes (`ReadView.outputQueue`, `inputQueue`, `addressQueue`) and tree nodes.
 *
 * Served: the queued elements with their indices, account hashes, current leaves, tx hashes and
 * nullifiers (input queue), addresses (address queue), the tree's current root and root seq, the
 * address tree's next leaf index, and the forester's extras as the reference computes them:
 * - state queues: the deduplicated nodes of every queued leaf's path (`nodes` encoded
 *   `(level << 56) | position`, level 0 = leaves, level `height` = the root; with `nodeHashes`), and per
 *   ZKP batch the hash chain of the batch's account hashes (output queue) or nullifiers (input queue);
 * - address queue: each address's low element (index, value, next index, next value) and its proof in
 *   the current tree, the deduplicated proof nodes plus the low elements' leaves, the hash chain of
 *   every whole ZKP batch of addresses (default 250), and the tree's `subtrees` (the right-most
 *   left-hand node of every level, Photon `get_subtrees`).
 * A hash chain is Light's `create_hash_chain_from_slice`: `c = v[0]`, then `c = Poseidon(c, v[i])`.
 */
import type { TreeInfo } from '../config/trees.ts';
import { HIGHEST_ADDRESS_PLUS_ONE } from '../merkle/indexedConstants.ts';
import { indexedLeafHashV2 } from '../merkle/indexedLeaf.ts';
import { poseidon2 } from '../merkle/poseidon.ts';
import { ZERO_BYTES } from '../merkle/zeroValues.ts';
import type { ReadView } from '../store/store.ts';
import type { Bytes32 } from '../types.ts';
import { emptyTreeAddressProof, getNewAddressProof } from './addressProofs.ts';
import { QueryError, validationError } from './errors.ts';

/** Most state-queue elements per request (Photon `MAX_QUEUE_ELEMENTS`). */
const MAX_QUEUE_ELEMENTS = 30_000;
/** Most address-queue elements per request (Photon `MAX_ADDRESSES` of the new-address proofs). */
const MAX_QUEUE_ADDRESSES = 1000;
/** Default ZKP batch size of state queues when the request gives none (light `DEFAULT_ZKP_BATCH_SIZE`). */
const DEFAULT_ZKP_BATCH_SIZE = 500;
/** Default ZKP batch size of the address queue's hash chains (light `DEFAULT_ADDRESS_ZKP_BATCH_SIZE`). */
const DEFAULT_ADDRESS_ZKP_BATCH_SIZE = 250;

/** Light's `QueueType` codes of the v2 queues (`light_compressed_account::QueueType`). */
const QUEUE_TYPE = { InputStateV2: 3, AddressV2: 4, OutputStateV2: 5 } as const;

/** One queue slice of a request: first queue index (inclusive), max elements, ZKP batch size. */
export interface QueueSliceRequest {
  startIndex?: bigint;
  limit: number;
  /** Whole ZKP batches only: the slice is cut down to a multiple of it (state queues; default 500). */
  zkpBatchSize?: number;
}

/** Output queue elements (ascending leaf index). `leaves` = the tree's current leaf at each index (zeros until appended). */
export interface OutputQueueSlice {
  leafIndices: number[];
  accountHashes: Buffer[];
  leaves: Buffer[];
  /** Leaf index of the first element (0 when empty). */
  firstQueueIndex: bigint;
  /** Where the elements will be appended: the first element's leaf index (Photon's definition; 0 when empty). */
  nextIndex: bigint;
  /** Hash chain of each ZKP batch's account hashes, in batch order (one per whole batch of the slice). */
  leavesHashChains: Buffer[];
}

/** Input (nullifier) queue elements (ascending nullifier queue index). */
export interface InputQueueSlice {
  leafIndices: number[];
  accountHashes: Buffer[];
  /** The tree's current leaf at each leaf index (the account hash once appended, zeros before). */
  leaves: Buffer[];
  txHashes: Buffer[];
  nullifiers: Buffer[];
  /** Nullifier queue index of the first element (0 when empty). */
  firstQueueIndex: bigint;
  /** Hash chain of each ZKP batch's nullifiers, in batch order (one per whole batch of the slice). */
  leavesHashChains: Buffer[];
}

/** State queues of a StateV2 tree with the tree's current root. */
export interface StateQueueSlice {
  /**
   * Deduplicated nodes of the paths of every returned leaf (output queue, then input queue):
   * `(level << 56) | position`, ascending; level 0 = leaves, level `height` = the root. Empty when
   * both slices are empty.
   */
  nodes: bigint[];
  /** The hash of each node of `nodes` (zeros of its level where the tree holds nothing). */
  nodeHashes: Buffer[];
  initialRoot: Buffer;
  rootSeq: bigint;
  outputQueue?: OutputQueueSlice;
  inputQueue?: InputQueueSlice;
}

/** Address queue of an AddressV2 tree (ascending queue index). */
export interface AddressQueueSlice {
  addresses: Buffer[];
  queueIndices: bigint[];
  /** Deduplicated proof nodes of the low elements, `(level << 56) | position` ascending, plus each low element's leaf. */
  nodes: bigint[];
  nodeHashes: Buffer[];
  /** Per address, its low element in the current tree: leaf index, value, next index, next value, proof (`height` siblings, bottom-up). */
  lowElementIndices: bigint[];
  lowElementValues: Buffer[];
  lowElementNextIndices: bigint[];
  lowElementNextValues: Buffer[];
  lowElementProofs: Buffer[][];
  /** Hash chain of each whole ZKP batch of addresses (a trailing partial batch has none). */
  leavesHashChains: Buffer[];
  initialRoot: Buffer;
  /** Next leaf index of the address tree (1 for a tree holding only its zeroeth element). */
  startIndex: bigint;
  /** Per level 0..height−1, the right-most node that is a left child (Photon `get_subtrees`). */
  subtrees: Buffer[];
  rootSeq: bigint;
}

/** What `getQueueElements` asks for; at least one slice. */
export interface QueueElementsRequest {
  outputQueue?: QueueSliceRequest;
  inputQueue?: QueueSliceRequest;
  addressQueue?: QueueSliceRequest;
}

/** The size of one queue of a batched tree (`getQueueInfo`). */
export interface QueueSize {
  tree: Buffer;
  queue: Buffer;
  queueType: number;
  queueSize: number;
}

/** The current root and its seq: node 1, else the tree as created (AddressV2: zeroeth element only). */
function currentRoot(r: ReadView, info: TreeInfo): { root: Buffer; seq: bigint } {
  const n = r.node(info.treeBytes, 1n);
  if (n) return { root: Buffer.from(n.hash), seq: n.seq };
  if (info.type === 'AddressV2') return { root: emptyTreeAddressProof(info, new Uint8Array(32)).root, seq: 0n };
  return { root: Buffer.from(ZERO_BYTES[info.height]!), seq: 0n };
}

/** Node id of the forester's extras: `(level << 56) | position` (Photon `encode_node_index`). */
const encodeNodeIndex = (level: number, position: number): bigint => (BigInt(level) << 56n) | BigInt(position);

/**
 * Light's `create_hash_chain_from_slice`: zeros for no value, else `c = v[0]`, then `c = Poseidon(c, v[i])`.
 */
function hashChain(values: readonly Uint8Array[]): Buffer {
  if (values.length === 0) return Buffer.alloc(32);
  let c: Uint8Array = values[0]!;
  for (let i = 1; i < values.length; i++) c = poseidon2(c, values[i]!);
  return Buffer.from(c);
}

/** The hash chain of each whole batch of `size` values, in order (a trailing partial batch has none). */
function batchHashChains(values: readonly Uint8Array[], size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let start = 0; start + size <= values.length; start += size) out.push(hashChain(values.slice(start, start + size)));
  return out;
}

/** The node at `level`, `position` of a tree of height `height` (1-based heap index `2^(height−level) + position`), zeros of its level where none is stored. */
function nodeAt(r: ReadView, info: TreeInfo, level: number, position: number): Buffer {
  const n = r.node(info.treeBytes, BigInt(2 ** (info.height - level) + position));
  return Buffer.from(n ? n.hash : ZERO_BYTES[level]!);
}

/**
 * The deduplicated nodes of the paths of `leafIndices` (Photon `deduplicate_nodes_from_refs`): per leaf,
 * the leaf, and at every level its sibling and its parent, up to the root at level `height`; read from
 * the tree (the parents the reference recomputes are the stored ones). Sorted by encoded index.
 */
function pathNodes(r: ReadView, info: TreeInfo, leafIndices: readonly number[]): { nodes: bigint[]; nodeHashes: Buffer[] } {
  const nodes: bigint[] = [];
  const nodeHashes: Buffer[] = [];
  if (leafIndices.length === 0) return { nodes, nodeHashes };
  let onPath = [...new Set(leafIndices)].sort((a, b) => a - b);
  for (let level = 0; level <= info.height; level++) {
    const here = new Set(onPath);
    // Siblings: not `p ^ 1` (positions reach 2^32 − 1, past the bitwise operators' range).
    if (level < info.height) for (const p of onPath) here.add(p % 2 === 0 ? p + 1 : p - 1);
    for (const p of [...here].sort((a, b) => a - b)) {
      nodes.push(encodeNodeIndex(level, p));
      nodeHashes.push(nodeAt(r, info, level, p));
    }
    onPath = [...new Set(onPath.map((p) => Math.floor(p / 2)))];
  }
  return { nodes, nodeHashes };
}

/**
 * Photon's `get_subtrees` of an address tree of `nextIndex` leaves: per level 0..height−1, the node at
 * the level's last occupied position when that is a left child (even), else its left neighbour. A tree
 * with nothing appended yet holds only its zeroeth element (Photon's `EMPTY_SUBTREES`).
 */
function subtrees(r: ReadView, info: TreeInfo, nextIndex: bigint, appended: boolean): Buffer[] {
  const out: Buffer[] = [];
  if (!appended) {
    let cur: Uint8Array = indexedLeafHashV2(new Uint8Array(32), HIGHEST_ADDRESS_PLUS_ONE);
    for (let level = 0; level < info.height; level++) {
      out.push(Buffer.from(cur));
      cur = poseidon2(cur, ZERO_BYTES[level]!);
    }
    return out;
  }
  const last = Number(nextIndex) - 1;
  for (let level = 0; level < info.height; level++) {
    const p = Math.floor(last / 2 ** level);
    out.push(nodeAt(r, info, level, p % 2 === 0 ? p : p - 1));
  }
  return out;
}

/** `a` or `an` before a tree type name. */
export const article = (type: string) => (type.startsWith('A') ? 'an' : 'a');

function checkLimit(field: string, limit: number, max: number, noun: string): void {
  if (limit > max) throw validationError(`${field}: Too many ${noun} requested ${limit}. Maximum allowed: ${max}`);
}

/** The ZKP batch size of a state slice: the request's when positive, else 500. */
const zkpSize = (zkpBatchSize: number | undefined): number => (zkpBatchSize && zkpBatchSize > 0 ? zkpBatchSize : DEFAULT_ZKP_BATCH_SIZE);

/** Elements kept after cutting to whole ZKP batches (Photon keeps `floor(n / size) * size`). */
function wholeBatches(n: number, zkpBatchSize: number | undefined): number {
  const size = zkpSize(zkpBatchSize);
  return Math.floor(n / size) * size;
}

function checkStart(field: string, start: bigint | undefined, first: bigint): void {
  if (start !== undefined && first > start) {
    throw validationError(`${field}: Requested start_index ${start} but first_queue_index ${first} is later (possible pruning)`);
  }
}

function readOutputQueue(r: ReadView, info: TreeInfo, req: QueueSliceRequest): OutputQueueSlice {
  checkLimit('outputQueueLimit', req.limit, MAX_QUEUE_ELEMENTS, 'queue elements');
  const start = req.startIndex ?? 0n;
  const empty: OutputQueueSlice = { leafIndices: [], accountHashes: [], leaves: [], firstQueueIndex: 0n, nextIndex: 0n, leavesHashChains: [] };
  if (start >= 2n ** 32n || req.limit === 0) return empty;
  let rows = [...r.outputQueue(info.treeBytes, Number(start), 2 ** 32, req.limit)];
  if (rows.length === 0) return empty;
  const first = BigInt(rows[0]!.leafIndex);
  checkStart('outputQueueStartIndex', req.startIndex, first);
  rows = rows.slice(0, wholeBatches(rows.length, req.zkpBatchSize));
  if (rows.length === 0) return empty;
  const accountHashes = rows.map((q) => Buffer.from(q.hash));
  return {
    leafIndices: rows.map((q) => q.leafIndex),
    accountHashes,
    leaves: rows.map((q) => nodeAt(r, info, 0, q.leafIndex)),
    firstQueueIndex: first,
    nextIndex: first,
    leavesHashChains: batchHashChains(accountHashes, zkpSize(req.zkpBatchSize)),
  };
}

function readInputQueue(r: ReadView, info: TreeInfo, req: QueueSliceRequest): InputQueueSlice {
  checkLimit('inputQueueLimit', req.limit, MAX_QUEUE_ELEMENTS, 'queue elements');
  const empty: InputQueueSlice = { leafIndices: [], accountHashes: [], leaves: [], txHashes: [], nullifiers: [], firstQueueIndex: 0n, leavesHashChains: [] };
  if (req.limit === 0) return empty;
  let rows = [...r.inputQueue(info.treeBytes, req.startIndex ?? 0n, undefined, req.limit)];
  if (rows.length === 0) return empty;
  const first = rows[0]!.queueIndex;
  checkStart('inputQueueStartIndex', req.startIndex, first);
  rows = rows.slice(0, wholeBatches(rows.length, req.zkpBatchSize));
  const out: InputQueueSlice = { ...empty, firstQueueIndex: rows.length ? first : 0n };
  for (const [i, q] of rows.entries()) {
    const a = r.account(q.hash);
    const v2 = a?.v2;
    if (!a || !v2) throw new QueryError('Unexpected', `input queue element ${i} (queue index ${q.queueIndex}) has no StateV2 account record`);
    if (!v2.nullifier) throw new QueryError('Unexpected', `Missing nullifier for spent queue element at index ${i} (leaf_index=${a.leafIndex})`);
    if (!v2.txHash) throw new QueryError('Unexpected', `Missing tx_hash for spent queue element at index ${i} (leaf_index=${a.leafIndex})`);
    out.leafIndices.push(a.leafIndex);
    out.accountHashes.push(Buffer.from(q.hash));
    out.leaves.push(nodeAt(r, info, 0, a.leafIndex));
    out.txHashes.push(Buffer.from(v2.txHash));
    out.nullifiers.push(Buffer.from(v2.nullifier));
  }
  out.leavesHashChains = batchHashChains(out.nullifiers, zkpSize(req.zkpBatchSize));
  return out;
}

function readAddressQueue(r: ReadView, info: TreeInfo, req: QueueSliceRequest): AddressQueueSlice {
  checkLimit('addressQueueLimit', req.limit, MAX_QUEUE_ADDRESSES, 'addresses');
  if (req.zkpBatchSize === 0) throw validationError('addressQueueZkpBatchSize: Address queue ZKP batch size must be greater than zero');
  const rows = req.limit === 0 ? [] : [...r.addressQueue(info.treeBytes, req.startIndex ?? 0n, undefined, req.limit)];
  const { root, seq } = currentRoot(r, info);
  const batch = r.batchTree(info.treeBytes);
  const startIndex = batch?.nextIndex ?? 1n;
  const out: AddressQueueSlice = {
    addresses: rows.map((q) => Buffer.from(q.address)),
    queueIndices: rows.map((q) => q.queueIndex),
    nodes: [],
    nodeHashes: [],
    lowElementIndices: [],
    lowElementValues: [],
    lowElementNextIndices: [],
    lowElementNextValues: [],
    lowElementProofs: [],
    leavesHashChains: [],
    initialRoot: root,
    startIndex,
    subtrees: subtrees(r, info, startIndex, r.node(info.treeBytes, 1n) !== undefined),
    rootSeq: seq,
  };
  if (rows.length === 0) return out;
  const nodes = new Map<bigint, Buffer>();
  for (const address of out.addresses) {
    const p = getNewAddressProof(r, info, address as Bytes32);
    out.lowElementIndices.push(BigInt(p.lowElementLeafIndex));
    out.lowElementValues.push(p.lowerRangeAddress);
    out.lowElementNextIndices.push(BigInt(p.nextIndex));
    out.lowElementNextValues.push(p.higherRangeAddress);
    out.lowElementProofs.push(p.proof);
    let pos = p.lowElementLeafIndex;
    for (const [level, sibling] of p.proof.entries()) {
      nodes.set(encodeNodeIndex(level, pos % 2 === 0 ? pos + 1 : pos - 1), sibling);
      pos = Math.floor(pos / 2);
    }
    nodes.set(encodeNodeIndex(0, p.lowElementLeafIndex), Buffer.from(indexedLeafHashV2(p.lowerRangeAddress, p.higherRangeAddress)));
  }
  for (const [k, v] of [...nodes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    out.nodes.push(k);
    out.nodeHashes.push(v);
  }
  out.leavesHashChains = batchHashChains(out.addresses, req.zkpBatchSize ?? DEFAULT_ADDRESS_ZKP_BATCH_SIZE);
  return out;
}

/**
 * The requested queue slices of batched tree `info` (`getQueueElements`). State slices need a StateV2
 * tree, the address slice an AddressV2 tree. Throws QueryError `Validation` for a tree of the wrong
 * type, a limit above the maximum (30000 state elements, 1000 addresses) or a start index before the
 * first queued element (pruned), `Unexpected` for an input queue row whose account lacks its nullifier
 * or tx hash.
 */
export function getQueueElements(r: ReadView, info: TreeInfo, req: QueueElementsRequest): { stateQueue?: StateQueueSlice; addressQueue?: AddressQueueSlice } {
  const wantsState = req.outputQueue !== undefined || req.inputQueue !== undefined;
  if (!wantsState && !req.addressQueue) throw validationError('At least one queue must be requested');
  if (wantsState && info.type !== 'StateV2') {
    throw validationError(`tree ${info.tree} is ${article(info.type)} ${info.type} tree: output and input queues (outputQueueLimit, inputQueueLimit) belong to StateV2 trees`);
  }
  if (req.addressQueue && info.type !== 'AddressV2') {
    throw validationError(`tree ${info.tree} is ${article(info.type)} ${info.type} tree: the address queue (addressQueueLimit) belongs to AddressV2 trees`);
  }
  const out: { stateQueue?: StateQueueSlice; addressQueue?: AddressQueueSlice } = {};
  if (wantsState) {
    const { root, seq } = currentRoot(r, info);
    const s: StateQueueSlice = { nodes: [], nodeHashes: [], initialRoot: root, rootSeq: seq };
    if (req.outputQueue) s.outputQueue = readOutputQueue(r, info, req.outputQueue);
    if (req.inputQueue) s.inputQueue = readInputQueue(r, info, req.inputQueue);
    Object.assign(s, pathNodes(r, info, [...(s.outputQueue?.leafIndices ?? []), ...(s.inputQueue?.leafIndices ?? [])]));
    out.stateQueue = s;
  }
  if (req.addressQueue) out.addressQueue = readAddressQueue(r, info, req.addressQueue);
  return out;
}

function count(it: Iterable<unknown>): number {
  let n = 0;
  for (const _ of it) n++;
  return n;
}

/**
 * Queue sizes of batched trees (`getQueueInfo`): per StateV2 tree its input queue (spent, not yet
 * nullified in the tree) and output queue (not yet appended), per AddressV2 tree its address queue
 * (not yet appended), in the order of `trees`. V1 trees have no batched queue: callers pass V2 trees only.
 */
export function getQueueSizes(r: ReadView, trees: readonly TreeInfo[]): QueueSize[] {
  const out: QueueSize[] = [];
  for (const t of trees) {
    const base = { tree: Buffer.from(t.treeBytes), queue: Buffer.from(t.queueBytes) };
    if (t.type === 'StateV2') {
      out.push({ ...base, queueType: QUEUE_TYPE.InputStateV2, queueSize: count(r.inputQueue(t.treeBytes)) });
      out.push({ ...base, queueType: QUEUE_TYPE.OutputStateV2, queueSize: count(r.outputQueue(t.treeBytes)) });
    } else if (t.type === 'AddressV2') {
      out.push({ ...base, queueType: QUEUE_TYPE.AddressV2, queueSize: count(r.addressQueue(t.treeBytes)) });
    }
  }
  return out;
}

