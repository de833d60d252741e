/**
 * The queues of batched (v2) trees as the reference's `getQueueElements` / `getQueueInfo` show them
 * (helius-labs/photon `src/api/method/get_queue_elements.rs`, `get_queue_info.rs`), read from the
 * store's queue indexes (`ReadView.outputQueue`, `inputQueue`, `addressQueue`) and tree nodes.
 *
 * Served: the queued elements with their indices, account hashes, current leaves, tx hashes and
 * nullifiers (input queue), addresses (address queue), the tree's current root and root seq, the
 * address tree's next leaf index. Not served (the forester's extras): the deduplicated proof nodes
 * (`nodes`, `nodeHashes`), `leavesHashChains`, the address queue's low elements and their proofs and
 * `subtrees`. Callers that need them get none of them, never placeholders.
 */
import type { TreeInfo } from '../config/trees.ts';
import { ZERO_BYTES } from '../merkle/zeroValues.ts';
import type { ReadView } from '../store/store.ts';
import { emptyTreeAddressProof } from './addressProofs.ts';
import { QueryError, validationError } from './errors.ts';

/** Most state-queue elements per request (Photon `MAX_QUEUE_ELEMENTS`). */
export const MAX_QUEUE_ELEMENTS = 30_000;
/** Most address-queue elements per request (Photon `MAX_ADDRESSES` of the new-address proofs). */
export const MAX_QUEUE_ADDRESSES = 1000;
/** Default ZKP batch size of state queues when the request gives none (light `DEFAULT_ZKP_BATCH_SIZE`). */
export const DEFAULT_ZKP_BATCH_SIZE = 500;

/** Light's `QueueType` codes of the v2 queues (`light_compressed_account::QueueType`). */
export const QUEUE_TYPE = { InputStateV2: 3, AddressV2: 4, OutputStateV2: 5 } as const;

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
}

/** State queues of a StateV2 tree with the tree's current root. */
export interface StateQueueSlice {
  initialRoot: Buffer;
  rootSeq: bigint;
  outputQueue?: OutputQueueSlice;
  inputQueue?: InputQueueSlice;
}

/** Address queue of an AddressV2 tree (ascending queue index). */
export interface AddressQueueSlice {
  addresses: Buffer[];
  queueIndices: bigint[];
  initialRoot: Buffer;
  /** Next leaf index of the address tree (1 for a tree holding only its zeroeth element). */
  startIndex: bigint;
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

/** The current leaf at `leafIndex` (zeros where none). */
function leafAt(r: ReadView, info: TreeInfo, leafIndex: number): Buffer {
  const n = r.node(info.treeBytes, BigInt(2 ** info.height + leafIndex));
  return Buffer.from(n ? n.hash : ZERO_BYTES[0]!);
}

/** `a` or `an` before a tree type name. */
export const article = (type: string) => (type.startsWith('A') ? 'an' : 'a');

function checkLimit(field: string, limit: number, max: number, noun: string): void {
  if (limit > max) throw validationError(`${field}: Too many ${noun} requested ${limit}. Maximum allowed: ${max}`);
}

/** Elements kept after cutting to whole ZKP batches (Photon keeps `floor(n / size) * size`). */
function wholeBatches(n: number, zkpBatchSize: number | undefined): number {
  const size = zkpBatchSize && zkpBatchSize > 0 ? zkpBatchSize : DEFAULT_ZKP_BATCH_SIZE;
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
  const empty: OutputQueueSlice = { leafIndices: [], accountHashes: [], leaves: [], firstQueueIndex: 0n, nextIndex: 0n };
  if (start >= 2n ** 32n || req.limit === 0) return empty;
  let rows = [...r.outputQueue(info.treeBytes, Number(start), 2 ** 32, req.limit)];
  if (rows.length === 0) return empty;
  const first = BigInt(rows[0]!.leafIndex);
  checkStart('outputQueueStartIndex', req.startIndex, first);
  rows = rows.slice(0, wholeBatches(rows.length, req.zkpBatchSize));
  if (rows.length === 0) return empty;
  return {
    leafIndices: rows.map((q) => q.leafIndex),
    accountHashes: rows.map((q) => Buffer.from(q.hash)),
    leaves: rows.map((q) => leafAt(r, info, q.leafIndex)),
    firstQueueIndex: first,
    nextIndex: first,
  };
}

function readInputQueue(r: ReadView, info: TreeInfo, req: QueueSliceRequest): InputQueueSlice {
  checkLimit('inputQueueLimit', req.limit, MAX_QUEUE_ELEMENTS, 'queue elements');
  const empty: InputQueueSlice = { leafIndices: [], accountHashes: [], leaves: [], txHashes: [], nullifiers: [], firstQueueIndex: 0n };
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
    out.leaves.push(leafAt(r, info, a.leafIndex));
    out.txHashes.push(Buffer.from(v2.txHash));
    out.nullifiers.push(Buffer.from(v2.nullifier));
  }
  return out;
}

function readAddressQueue(r: ReadView, info: TreeInfo, req: QueueSliceRequest): AddressQueueSlice {
  checkLimit('addressQueueLimit', req.limit, MAX_QUEUE_ADDRESSES, 'addresses');
  const rows = req.limit === 0 ? [] : [...r.addressQueue(info.treeBytes, req.startIndex ?? 0n, undefined, req.limit)];
  const { root, seq } = currentRoot(r, info);
  return {
    addresses: rows.map((q) => Buffer.from(q.address)),
    queueIndices: rows.map((q) => q.queueIndex),
    initialRoot: root,
    startIndex: r.batchTree(info.treeBytes)?.nextIndex ?? 1n,
    rootSeq: seq,
  };
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
    const s: StateQueueSlice = { initialRoot: root, rootSeq: seq };
    if (req.outputQueue) s.outputQueue = readOutputQueue(r, info, req.outputQueue);
    if (req.inputQueue) s.inputQueue = readInputQueue(r, info, req.inputQueue);
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

