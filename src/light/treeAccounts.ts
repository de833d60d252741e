/**
 * Codec of Light Protocol's Merkle tree and queue accounts (owned by the account-compression
 * program): what the tree-metadata sync (photon.md §1.1, src/ingest/treeSync.ts) reads from the chain.
 * Pure: bytes in, plain objects out; no store, ingest or RPC imports.
 *
 * Layouts (all integers little-endian; offsets include the 8-byte discriminator):
 * - `MerkleTreeMetadata` (216 B): AccessMetadata {owner, program_owner, forester} (3 × 32),
 *   RolloverMetadata {index, rollover_fee, rollover_threshold, network_fee, rolledover_slot,
 *   close_threshold, additional_bytes} (7 × u64), associated_queue (32), next_merkle_tree (32).
 *   `QueueMetadata` (224 B): the same access + rollover metadata, associated_merkle_tree (32),
 *   next_queue (32), queue_type u64.
 * - v2 `BatchedMerkleTreeAccount` (`BatchMta`): tree_type u64 @8, MerkleTreeMetadata @16,
 *   sequence_number u64 @232, next_index u64 @240, height u32 @248, root_history_capacity u32 @252,
 *   capacity u64 @256, then queue batches, root history… An address tree's queue is the tree itself.
 * - v2 `BatchedQueueAccount` (`queueacc`): QueueMetadata @8 (queue_type 5 = output queue).
 * - v1 `StateMerkleTreeAccount` / `AddressMerkleTreeAccount` (Anchor discriminators): MerkleTreeMetadata
 *   @8, then the concurrent Merkle tree header @224: height, canopy_depth, next_index,
 *   sequence_number (u64 each), rightmost_leaf (32), filled_subtrees {capacity, length},
 *   changelog {capacity, length, first, last}, roots {capacity @336, length, first, last}, canopy.
 *   The root-history capacity is the roots vector's capacity.
 * - v1 `QueueAccount` (Anchor): QueueMetadata @8 (queue_type 1 = nullifier queue, 2 = address queue),
 *   then the hash set.
 */
import * as base58 from '../solana/base58.ts';
import type { TreeType } from '../config/trees.ts';
import { ACCOUNT_COMPRESSION_PROGRAM_ID } from './constants.ts';

/** Account discriminators (first 8 bytes), hex. */
export const TREE_ACCOUNT_DISCRIMINATORS = {
  /** `b"BatchMta"`: v2 batched state or address tree. */
  batchedTree: '42617463684d7461',
  /** `b"queueacc"`: v2 batched (output) queue. */
  batchedQueue: '7175657565616363',
  /** Anchor `sha256("account:StateMerkleTreeAccount")[..8]`. */
  stateTreeV1: 'ac2bacba1d49db54',
  /** Anchor `sha256("account:AddressMerkleTreeAccount")[..8]`. */
  addressTreeV1: '0ba1af09d4e54949',
  /** Anchor `sha256("account:QueueAccount")[..8]`: v1 nullifier and address queues. */
  queueV1: 'a4c86c3e573f7b41',
} as const;

/** Light's `QueueType` u64 codes of the queues decoded here. */
export const QUEUE_TYPE_CODE = { NullifierV1: 1, AddressV1: 2, OutputV2: 5 } as const;
/** A queue kind: v1 nullifier queue (of a StateV1 tree), v1 address queue, v2 output queue (of a StateV2 tree). */
export type QueueKind = keyof typeof QUEUE_TYPE_CODE;

const TREE_TYPE_BY_CODE: Record<number, TreeType> = { 3: 'StateV2', 4: 'AddressV2' };
const BATCHED_TREE_CODE: Record<'StateV2' | 'AddressV2', number> = { StateV2: 3, AddressV2: 4 };

/**
 * Bytes of an account's data the decoders read (the v1 trees' roots capacity ends there): a
 * `getProgramAccounts` can ask for `dataSlice {offset: 0, length: TREE_ACCOUNT_HEADER_BYTES}`
 * instead of megabytes per v1 tree.
 */
export const TREE_ACCOUNT_HEADER_BYTES = 344;

const BATCHED_TREE_BYTES = 264;
const QUEUE_BYTES = 232;
const V1_TREE_BYTES = 344;

/** Access and rollover metadata shared by every tree and queue account. */
export interface AccountMetadata {
  /** AccessMetadata.owner (base58): the authority that created the tree (Photon keeps only the expected owner's). */
  owner: string;
  /** AccessMetadata.program_owner (base58; all zeros = none → null). */
  programOwner: string | null;
  /** AccessMetadata.forester (base58; all zeros = none → null). */
  forester: string | null;
  /** RolloverMetadata.index. */
  rolloverIndex: number;
  /** RolloverMetadata.rolledover_slot; null while not rolled over (u64::MAX). */
  rolledOverSlot: number | null;
}

/** A decoded tree account. */
export interface DecodedTree extends AccountMetadata {
  kind: 'tree';
  /** The account's pubkey (base58). */
  tree: string;
  /** Its queue (base58): nullifier/address queue (v1), output queue (StateV2), the tree itself (AddressV2). */
  queue: string;
  type: TreeType;
  /** Depth. */
  height: number;
  /** Roots kept on chain: root index = root sequence number mod this. */
  rootHistoryCapacity: number;
  /** Leaves appended so far (v2 state: leaves in the tree, not those still in the output queue). */
  nextIndex: number;
  /** The tree's sequence number (root updates so far). */
  sequenceNumber: number;
  /** MerkleTreeMetadata.next_merkle_tree after a rollover (base58), else null. */
  nextTree: string | null;
}

/** A decoded queue account. */
export interface DecodedQueue extends AccountMetadata {
  kind: 'queue';
  /** The account's pubkey (base58). */
  queue: string;
  queueType: QueueKind;
  /** QueueMetadata.associated_merkle_tree: the tree this queue belongs to (base58). */
  tree: string;
  /** QueueMetadata.next_queue after a rollover (base58), else null. */
  nextQueue: string | null;
}

/** A decoded account-compression account. */
export type DecodedTreeAccount = DecodedTree | DecodedQueue;

/** Why an account does not decode; `message` names the account and the field. */
export class TreeAccountError extends Error {
  override readonly name = 'TreeAccountError';
  constructor(
    /** `not-acp`: another program owns it; `unknown-discriminator`: not a tree or queue; `short`: data too short; `invalid`: a field out of range. */
    readonly reason: 'not-acp' | 'unknown-discriminator' | 'short' | 'invalid',
    message: string,
  ) {
    super(message);
  }
}

const ZERO32 = new Uint8Array(32);
const U64_MAX = 0xffff_ffff_ffff_ffffn;

class Reader {
  readonly view: DataView;
  constructor(
    readonly data: Uint8Array,
    readonly what: string,
  ) {
    this.view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  }
  need(bytes: number, kind: string): void {
    if (this.data.length < bytes) throw new TreeAccountError('short', `${this.what}: ${kind} data is ${this.data.length} bytes, its header needs ${bytes}`);
  }
  pubkey(at: number): string {
    return base58.encode(this.data.subarray(at, at + 32));
  }
  optionalPubkey(at: number): string | null {
    return Buffer.compare(this.data.subarray(at, at + 32), ZERO32) === 0 ? null : this.pubkey(at);
  }
  u64(at: number): bigint {
    return this.view.getBigUint64(at, true);
  }
  /** A u64 that must fit a JS number (≤ 2^53 − 1). */
  num(at: number, field: string): number {
    const v = this.u64(at);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new TreeAccountError('invalid', `${this.what}: ${field} ${v} (@${at}) exceeds 2^53-1`);
    return Number(v);
  }
  u32(at: number): number {
    return this.view.getUint32(at, true);
  }
  /** AccessMetadata at `at`, RolloverMetadata at `at + 96`. */
  metadata(at: number): AccountMetadata {
    const rolled = this.u64(at + 96 + 32);
    return {
      owner: this.pubkey(at),
      programOwner: this.optionalPubkey(at + 32),
      forester: this.optionalPubkey(at + 64),
      rolloverIndex: this.num(at + 96, 'rollover index'),
      rolledOverSlot: rolled === U64_MAX ? null : this.num(at + 96 + 32, 'rolledover slot'),
    };
  }
}

function checkTreeShape(r: Reader, type: TreeType, height: number, capacity: number, at: { height: number; capacity: number }): void {
  if (height < 1 || height > 40) throw new TreeAccountError('invalid', `${r.what}: ${type} height ${height} (@${at.height}) is not in 1..40`);
  if (capacity < 1) throw new TreeAccountError('invalid', `${r.what}: ${type} root history capacity ${capacity} (@${at.capacity}) must be at least 1`);
}

function toBytes(data: string | Uint8Array): Uint8Array {
  return typeof data === 'string' ? Buffer.from(data, 'base64') : data;
}

/**
 * Decodes one account of the account-compression program.
 * @param account `pubkey` (base58), `data` (base64 string as the RPC sends it, or raw bytes; a
 *   prefix of at least the header is enough, see TREE_ACCOUNT_HEADER_BYTES), `owner` (the program
 *   that owns the account, base58)
 * @returns a DecodedTree (StateV1/AddressV1/StateV2/AddressV2) or a DecodedQueue (v1 nullifier, v1
 *   address, v2 output queue)
 * @throws TreeAccountError: `not-acp` when `owner` is not the account-compression program,
 *   `unknown-discriminator` for any other account type (hex of the 8 bytes in the message), `short`
 *   when the data ends before the header does, `invalid` for an unknown tree/queue type code, a
 *   height outside 1..40, a zero root-history capacity or a u64 past 2^53-1.
 */
export function decodeTreeAccount(account: { pubkey: string; data: string | Uint8Array; owner: string }): DecodedTreeAccount {
  const what = `account ${account.pubkey}`;
  if (account.owner !== ACCOUNT_COMPRESSION_PROGRAM_ID) {
    throw new TreeAccountError('not-acp', `${what}: owned by ${account.owner}, not the account-compression program ${ACCOUNT_COMPRESSION_PROGRAM_ID}`);
  }
  const r = new Reader(toBytes(account.data), what);
  r.need(8, 'account');
  const disc = Buffer.from(r.data.subarray(0, 8)).toString('hex');
  const D = TREE_ACCOUNT_DISCRIMINATORS;
  switch (disc) {
    case D.batchedTree: {
      r.need(BATCHED_TREE_BYTES, 'batched Merkle tree');
      const code = r.u64(8);
      const type = TREE_TYPE_BY_CODE[Number(code)];
      if (code > 4n || !type) throw new TreeAccountError('invalid', `${what}: batched Merkle tree type ${code} (@8) is neither StateV2 (3) nor AddressV2 (4)`);
      const height = r.u32(248);
      const rootHistoryCapacity = r.u32(252);
      checkTreeShape(r, type, height, rootHistoryCapacity, { height: 248, capacity: 252 });
      const queue = type === 'AddressV2' ? account.pubkey : r.pubkey(168);
      return {
        kind: 'tree',
        tree: account.pubkey,
        queue,
        type,
        height,
        rootHistoryCapacity,
        nextIndex: r.num(240, 'next index'),
        sequenceNumber: r.num(232, 'sequence number'),
        nextTree: r.optionalPubkey(200),
        ...r.metadata(16),
      };
    }
    case D.stateTreeV1:
    case D.addressTreeV1: {
      const type: TreeType = disc === D.stateTreeV1 ? 'StateV1' : 'AddressV1';
      r.need(V1_TREE_BYTES, `${type} Merkle tree`);
      const height = r.num(224, 'height');
      const rootHistoryCapacity = r.num(336, 'roots capacity');
      checkTreeShape(r, type, height, rootHistoryCapacity, { height: 224, capacity: 336 });
      return {
        kind: 'tree',
        tree: account.pubkey,
        queue: r.pubkey(160),
        type,
        height,
        rootHistoryCapacity,
        nextIndex: r.num(240, 'next index'),
        sequenceNumber: r.num(248, 'sequence number'),
        nextTree: r.optionalPubkey(192),
        ...r.metadata(8),
      };
    }
    case D.queueV1:
    case D.batchedQueue: {
      const v1 = disc === D.queueV1;
      r.need(QUEUE_BYTES, v1 ? 'v1 queue' : 'batched queue');
      const code = r.u64(224);
      const queueType: QueueKind | undefined = v1
        ? code === 1n ? 'NullifierV1' : code === 2n ? 'AddressV1' : undefined
        : code === 5n ? 'OutputV2' : undefined;
      if (!queueType) {
        const expected = v1 ? 'nullifier (1) or address (2)' : 'output (5)';
        throw new TreeAccountError('invalid', `${what}: ${v1 ? 'v1' : 'batched'} queue type ${code} (@224) is not ${expected}`);
      }
      return { kind: 'queue', queue: account.pubkey, queueType, tree: r.pubkey(160), nextQueue: r.optionalPubkey(192), ...r.metadata(8) };
    }
    default:
      throw new TreeAccountError('unknown-discriminator', `${what}: discriminator ${disc} is not a Light tree or queue account (known: ${Object.entries(D).map(([k, v]) => `${k} ${v}`).join(', ')})`);
  }
}

/** What `encodeTreeAccount` writes: a tree, or a queue. Owner and the rest of the metadata as decoded. */
export type TreeAccountFields =
  | (Omit<DecodedTree, 'kind' | 'programOwner' | 'forester' | 'rolloverIndex' | 'rolledOverSlot' | 'nextTree'> & { kind: 'tree' } & Partial<AccountMetadata> & { nextTree?: string | null })
  | (Omit<DecodedQueue, 'kind' | 'programOwner' | 'forester' | 'rolloverIndex' | 'rolledOverSlot' | 'nextQueue'> & { kind: 'queue' } & Partial<AccountMetadata> & { nextQueue?: string | null });

function pubkeyBytes(v: string, field: string): Uint8Array {
  let b: Uint8Array;
  try {
    b = base58.decode(v);
  } catch {
    throw new TypeError(`encodeTreeAccount: ${field} '${v}' is not base58`);
  }
  if (b.length !== 32) throw new TypeError(`encodeTreeAccount: ${field} '${v}' is ${b.length} bytes, expected 32`);
  return b;
}

/**
 * Builds the header of a tree or queue account in the layout `decodeTreeAccount` reads (the
 * simulator serves these; real accounts continue with roots, queues and hash sets, which are left
 * out: the result is exactly the header, e.g. 264 bytes for a batched tree, 344 for a v1 tree).
 * Rollover threshold, fees and the rest of the tree data are zero; `rolledOverSlot` null = u64::MAX.
 * @throws TypeError for a pubkey that is not 32 bytes of base58, or a height/capacity the decoder would reject.
 */
export function encodeTreeAccount(f: TreeAccountFields): Uint8Array {
  const isTree = f.kind === 'tree';
  const v1 = isTree ? f.type === 'StateV1' || f.type === 'AddressV1' : f.queueType !== 'OutputV2';
  const size = isTree ? (v1 ? V1_TREE_BYTES : BATCHED_TREE_BYTES) : QUEUE_BYTES;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  const D = TREE_ACCOUNT_DISCRIMINATORS;
  const disc = isTree ? (f.type === 'StateV1' ? D.stateTreeV1 : f.type === 'AddressV1' ? D.addressTreeV1 : D.batchedTree) : v1 ? D.queueV1 : D.batchedQueue;
  out.set(Buffer.from(disc, 'hex'), 0);
  const u64 = (at: number, v: number | bigint) => view.setBigUint64(at, BigInt(v), true);
  const key = (at: number, v: string | null | undefined, field: string) => {
    if (v) out.set(pubkeyBytes(v, field), at);
  };
  const meta = (at: number) => {
    key(at, f.owner, 'owner');
    key(at + 32, f.programOwner, 'programOwner');
    key(at + 64, f.forester, 'forester');
    u64(at + 96, f.rolloverIndex ?? 0);
    u64(at + 128, f.rolledOverSlot ?? U64_MAX);
  };
  if (isTree) {
    if (!(Number.isInteger(f.height) && f.height >= 1 && f.height <= 40)) throw new TypeError(`encodeTreeAccount: height ${f.height} is not in 1..40`);
    if (!(Number.isInteger(f.rootHistoryCapacity) && f.rootHistoryCapacity >= 1)) throw new TypeError(`encodeTreeAccount: rootHistoryCapacity ${f.rootHistoryCapacity} must be a positive integer`);
    if (v1) {
      meta(8);
      key(160, f.queue, 'queue');
      key(192, f.nextTree, 'nextTree');
      u64(224, f.height);
      u64(240, f.nextIndex);
      u64(248, f.sequenceNumber);
      u64(336, f.rootHistoryCapacity);
    } else {
      u64(8, BATCHED_TREE_CODE[f.type as 'StateV2' | 'AddressV2']);
      meta(16);
      if (f.type === 'StateV2') key(168, f.queue, 'queue');
      key(200, f.nextTree, 'nextTree');
      u64(232, f.sequenceNumber);
      u64(240, f.nextIndex);
      view.setUint32(248, f.height, true);
      view.setUint32(252, f.rootHistoryCapacity, true);
      u64(256, 2n ** BigInt(f.height));
    }
  } else {
    meta(8);
    key(160, f.tree, 'tree');
    key(192, f.nextQueue, 'nextQueue');
    u64(224, QUEUE_TYPE_CODE[f.queueType]);
  }
  return out;
}
