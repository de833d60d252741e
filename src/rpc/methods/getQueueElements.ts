/**
 * getQueueElements: the queued elements of a batched (v2) tree, Photon's request and response shape
 * (helius-labs/photon `get_queue_elements.rs`). Params `{tree, outputQueueStartIndex?, outputQueueLimit?,
 * outputQueueZkpBatchSize?, inputQueue…, addressQueue…}`: a queue is requested by giving its limit.
 * The nested form of Photon's later request (`outputQueue: {limit, startIndex?, zkpBatchSize?}`, same for
 * `inputQueue`, `addressQueue`) is accepted too; one queue given both ways, or a start index / batch
 * size without its limit, is refused.
 * Result `{context, stateQueue?: {initialRoot, rootSeq, outputQueue?, inputQueue?}, addressQueue?}`.
 *
 * State queue slices are cut to whole ZKP batches (`…ZkpBatchSize`, default 500) as in the reference.
 * The forester's extras are served as the reference computes them (src/query/queueElements.ts):
 * `stateQueue.nodes` / `nodeHashes` (left out when empty, as the reference), each queue's
 * `leavesHashChains`, and the address queue's `nodes`, `nodeHashes`, `lowElementIndices`,
 * `lowElementValues`, `lowElementNextIndices`, `lowElementNextValues`, `lowElementProofs`,
 * `leavesHashChains` (per `addressQueueZkpBatchSize`, default 250) and `subtrees`. Node ids are
 * `(level << 56) | position`, exact u64 JSON numbers.
 */
import { z } from 'zod';
import type { AddressQueueSlice, InputQueueSlice, OutputQueueSlice, QueueSliceRequest, StateQueueSlice } from '../../query/queueElements.ts';
import { b58, u64 } from '../resultEncoding.ts';
import { RpcError } from '../errors.ts';
import { optional, pubkey, usize } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { optionalRead } from './lib/shared.ts';

const u16Message = (iss: { input?: unknown }) => `expected an integer between 0 and 65535 (u16), got ${typeof iss.input === 'number' ? iss.input : iss.input === undefined ? 'nothing' : typeof iss.input}`;
/** A u16 (limits, ZKP batch sizes). */
const u16 = z.int({ error: u16Message }).min(0, { error: u16Message }).max(65535, { error: u16Message });

/** One queue of the nested request form (Photon `QueueRequest`): `{limit, startIndex?, zkpBatchSize?}`. */
const queueRequest = z.strictObject(
  { limit: u16, startIndex: optional(usize), zkpBatchSize: optional(u16) },
  { error: (iss) => (iss.code === 'unrecognized_keys' ? undefined : 'expected an object {limit, startIndex?, zkpBatchSize?}') },
);

/** `getQueueElements` params (Photon `GetQueueElementsRequest`, unknown keys rejected). */
export const queueElementsParams = z
  .strictObject(
    {
      tree: pubkey,
      outputQueueStartIndex: optional(usize),
      outputQueueLimit: optional(u16),
      outputQueueZkpBatchSize: optional(u16),
      inputQueueStartIndex: optional(usize),
      inputQueueLimit: optional(u16),
      inputQueueZkpBatchSize: optional(u16),
      addressQueueStartIndex: optional(usize),
      addressQueueLimit: optional(u16),
      addressQueueZkpBatchSize: optional(u16),
      outputQueue: optional(queueRequest),
      inputQueue: optional(queueRequest),
      addressQueue: optional(queueRequest),
    },
    { error: (iss) => (iss.code === 'unrecognized_keys' ? undefined : 'expected an object {tree, outputQueueLimit?, inputQueueLimit?, addressQueueLimit?, …}') },
  )
  .meta({ description: 'A batched tree and the queues to read (a queue is requested by giving its limit)' });

type Params = z.output<typeof queueElementsParams>;

/**
 * The slice request of queue `name` (`output`, `input`, `address`) from the flat fields or the nested
 * object, or undefined when not requested. Throws `Invalid params` when both forms are given, or a
 * flat start index / batch size without the flat limit.
 */
function slice(p: Params, name: 'output' | 'input' | 'address'): QueueSliceRequest | undefined {
  const f = `${name}Queue` as const;
  const limitKey = `${f}Limit` as const;
  const startKey = `${f}StartIndex` as const;
  const zkpKey = `${f}ZkpBatchSize` as const;
  const nested = p[f];
  const flatGiven = [limitKey, startKey, zkpKey].filter((k) => p[k] !== undefined);
  if (nested && flatGiven.length) throw RpcError.invalidParams(`${f}: given both as an object and as ${flatGiven.join(', ')}; use one form`);
  if (nested) return slice1(nested.limit, nested.startIndex, nested.zkpBatchSize);
  if (p[limitKey] === undefined && flatGiven.length) throw RpcError.invalidParams(`${flatGiven[0]}: given without ${limitKey} (a queue is requested by its limit)`);
  return slice1(p[limitKey], p[startKey], p[zkpKey]);
}

function slice1(limit: number | undefined, start: number | undefined, zkp: number | undefined): QueueSliceRequest | undefined {
  if (limit === undefined) return undefined;
  const s: QueueSliceRequest = { limit };
  if (start !== undefined) s.startIndex = BigInt(start);
  if (zkp !== undefined) s.zkpBatchSize = zkp;
  return s;
}

const encodeOutput = (q: OutputQueueSlice) => ({
  leafIndices: q.leafIndices,
  accountHashes: q.accountHashes.map(b58),
  leaves: q.leaves.map(b58),
  firstQueueIndex: u64(q.firstQueueIndex),
  nextIndex: u64(q.nextIndex),
  leavesHashChains: q.leavesHashChains.map(b58),
});

const encodeInput = (q: InputQueueSlice) => ({
  leafIndices: q.leafIndices,
  accountHashes: q.accountHashes.map(b58),
  leaves: q.leaves.map(b58),
  txHashes: q.txHashes.map(b58),
  nullifiers: q.nullifiers.map(b58),
  firstQueueIndex: u64(q.firstQueueIndex),
  leavesHashChains: q.leavesHashChains.map(b58),
});

function encodeState(s: StateQueueSlice) {
  return {
    ...(s.nodes.length ? { nodes: s.nodes.map(u64), nodeHashes: s.nodeHashes.map(b58) } : {}),
    initialRoot: b58(s.initialRoot),
    rootSeq: u64(s.rootSeq),
    ...(s.outputQueue ? { outputQueue: encodeOutput(s.outputQueue) } : {}),
    ...(s.inputQueue ? { inputQueue: encodeInput(s.inputQueue) } : {}),
  };
}

const encodeAddress = (a: AddressQueueSlice) => ({
  addresses: a.addresses.map(b58),
  queueIndices: a.queueIndices.map(u64),
  nodes: a.nodes.map(u64),
  nodeHashes: a.nodeHashes.map(b58),
  lowElementIndices: a.lowElementIndices.map(u64),
  lowElementValues: a.lowElementValues.map(b58),
  lowElementNextIndices: a.lowElementNextIndices.map(u64),
  lowElementNextValues: a.lowElementNextValues.map(b58),
  lowElementProofs: a.lowElementProofs.map((p) => p.map(b58)),
  leavesHashChains: a.leavesHashChains.map(b58),
  initialRoot: b58(a.initialRoot),
  startIndex: u64(a.startIndex),
  subtrees: a.subtrees.map(b58),
  rootSeq: u64(a.rootSeq),
});

/** `getQueueElements` definition (params schema, handler); semantics in the module comment. */
export const getQueueElements = defineMethod({
  name: 'getQueueElements',
  summary: 'Queued elements of a batched (v2) tree: output, input (nullifier) and address queues',
  params: queueElementsParams,
  async handler(ctx, p) {
    const { value: r, slot } = await optionalRead(ctx, 'getQueueElements', p.tree, {
      outputQueue: slice(p, 'output'),
      inputQueue: slice(p, 'input'),
      addressQueue: slice(p, 'address'),
    });
    return {
      context: { slot: u64(slot) },
      ...(r.stateQueue ? { stateQueue: encodeState(r.stateQueue) } : {}),
      ...(r.addressQueue ? { addressQueue: encodeAddress(r.addressQueue) } : {}),
    };
  },
});
