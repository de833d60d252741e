/**
 * Binary codecs for the values Refract keeps in LMDB (no keys here: keys live in `store.ts`).
 * All integers little-endian unless named otherwise. Each codec throws Error on a truncated value.
 */
import type { BatchEvent, BlockHeader, Bytes32, Hash, Pubkey, UnsignedInteger } from '../types.ts';

/**
 * A compressed account as stored (photon.md §5 `accounts`, v1 subset). The hash is the key. `hash`,
 * `tree` and `owner` are branded ({@link Hash}, {@link Pubkey}) so that one cannot be passed for the other.
 */
export interface AccountRecord {
  hash: Hash;
  tree: Pubkey;
  owner: Pubkey;
  lamports: UnsignedInteger;
  leafIndex: number;
  /** Event seq of the output (StateV1); null for V2 accounts. */
  seq: UnsignedInteger | null;
  slotCreated: number;
  spent: boolean;
  address: Bytes32 | null;
  data: { discriminator: Uint8Array; data: Uint8Array; dataHash: Bytes32 } | null;
  /** Light TreeType code (1 = StateV1). */
  treeType: number;
  /** Batched-tree (StateV2) queue state; absent for v1 accounts. */
  v2?: V2AccountState;
  /**
   * Token accounts of a compressed ATA: the wallet owner the ATA is derived from (the event's
   * `ata_owners`, decoded from the cToken Transfer2 output TLV `CompressedOnly { is_ata, owner_index }`;
   * Photon `token_accounts.ata_owner`). Absent otherwise.
   */
  ataOwner?: Bytes32;
}

/**
 * Queue state of an account of a batched state tree (photon.md §2.5.1, `accounts` columns
 * in_output_queue, nullifier_queue_index, nullifier, tx_hash, nullified_in_tree).
 */
export interface V2AccountState {
  /** The tree's output queue pubkey. */
  queue: Bytes32;
  /** Still in the output queue (no BatchAppend has covered its leaf index yet). */
  inOutputQueue: boolean;
  /** Set once the account is spent: its input-queue index, nullifier and the spending tx_hash. */
  nullifierQueueIndex: bigint | null;
  nullifier: Bytes32 | null;
  txHash: Bytes32 | null;
  /** A BatchNullify has written its nullifier into the tree. */
  nullifiedInTree: boolean;
}

const F_SPENT = 1;
const F_ADDRESS = 2;
const F_DATA = 4;
const F_SEQ = 8;
const F_V2 = 16;
/** The record ends with a 32-byte ATA wallet owner (schema 4). */
const F_ATA = 32;
/** v2 block: flags u8 (1 inOutputQueue, 2 spent-in-queue, 4 nullifiedInTree), queue 32, nqIndex u64, nullifier 32, txHash 32. */
const V2_BLOCK = 1 + 32 + 8 + 32 + 32;
const ACCOUNT_FIXED = 1 + 1 + 32 + 32 + 8 + 4 + 8 + 8; // flags, treeType, tree, owner, lamports, leafIndex, seq, slot

/**
 * Encodes an account: flags u8, treeType u8, tree, owner, lamports u64, leafIndex u32, seq u64, slotCreated u64,
 * [address], [disc 8, dataHash 32, len u32, data], [v2 block (see V2_BLOCK)], [ATA wallet owner 32].
 */
export function encodeAccount(a: AccountRecord): Buffer {
  const dataLen = a.data ? 8 + 32 + 4 + a.data.data.length : 0;
  const buf = Buffer.alloc(ACCOUNT_FIXED + (a.address ? 32 : 0) + dataLen + (a.v2 ? V2_BLOCK : 0) + (a.ataOwner ? 32 : 0));
  buf[0] = (a.spent ? F_SPENT : 0) | (a.address ? F_ADDRESS : 0) | (a.data ? F_DATA : 0) | (a.seq !== null ? F_SEQ : 0) | (a.v2 ? F_V2 : 0) | (a.ataOwner ? F_ATA : 0);
  buf[1] = a.treeType;
  buf.set(a.tree, 2);
  buf.set(a.owner, 34);
  buf.writeBigUInt64LE(a.lamports, 66);
  buf.writeUInt32LE(a.leafIndex, 74);
  buf.writeBigUInt64LE(a.seq ?? 0n, 78);
  buf.writeBigUInt64LE(BigInt(a.slotCreated), 86);
  let o = ACCOUNT_FIXED;
  if (a.address) {
    buf.set(a.address, o);
    o += 32;
  }
  if (a.data) {
    buf.set(a.data.discriminator, o);
    buf.set(a.data.dataHash, o + 8);
    buf.writeUInt32LE(a.data.data.length, o + 40);
    buf.set(a.data.data, o + 44);
    o += 44 + a.data.data.length;
  }
  if (a.v2) {
    const v = a.v2;
    buf[o] = (v.inOutputQueue ? 1 : 0) | (v.nullifierQueueIndex !== null ? 2 : 0) | (v.nullifiedInTree ? 4 : 0);
    buf.set(v.queue, o + 1);
    buf.writeBigUInt64LE(v.nullifierQueueIndex ?? 0n, o + 33);
    if (v.nullifier) buf.set(v.nullifier, o + 41);
    if (v.txHash) buf.set(v.txHash, o + 73);
    o += V2_BLOCK;
  }
  if (a.ataOwner) buf.set(a.ataOwner, o);
  return buf;
}

/** Decodes `encodeAccount` output; `hash` is the record's key. */
export function decodeAccount(hash: Bytes32, buf: Uint8Array): AccountRecord {
  if (buf.length < ACCOUNT_FIXED) throw new Error(`account record truncated (${buf.length} bytes)`);
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.length);
  const flags = b[0]!;
  let o = ACCOUNT_FIXED;
  let address: Bytes32 | null = null;
  if (flags & F_ADDRESS) {
    address = b.subarray(o, o + 32);
    o += 32;
  }
  let data: AccountRecord['data'] = null;
  if (flags & F_DATA) {
    const len = b.readUInt32LE(o + 40);
    data = { discriminator: b.subarray(o, o + 8), dataHash: b.subarray(o + 8, o + 40), data: b.subarray(o + 44, o + 44 + len) };
    o += 44 + len;
  }
  let v2: V2AccountState | undefined;
  if (flags & F_V2) {
    if (b.length < o + V2_BLOCK) throw new Error(`account record truncated (${buf.length} bytes, v2 block at ${o})`);
    const f = b[o]!;
    const queued = (f & 2) !== 0;
    v2 = {
      queue: b.subarray(o + 1, o + 33),
      inOutputQueue: (f & 1) !== 0,
      nullifierQueueIndex: queued ? b.readBigUInt64LE(o + 33) : null,
      nullifier: queued ? b.subarray(o + 41, o + 73) : null,
      txHash: queued ? b.subarray(o + 73, o + 105) : null,
      nullifiedInTree: (f & 4) !== 0,
    };
    o += V2_BLOCK;
  }
  let ataOwner: Bytes32 | undefined;
  if (flags & F_ATA) {
    if (b.length < o + 32) throw new Error(`account record truncated (${buf.length} bytes, ATA owner at ${o})`);
    ataOwner = b.subarray(o, o + 32);
  }
  const out: AccountRecord = {
    hash: hash as Hash,
    spent: (flags & F_SPENT) !== 0,
    treeType: b[1]!,
    tree: b.subarray(2, 34) as Uint8Array as Pubkey,
    owner: b.subarray(34, 66) as Uint8Array as Pubkey,
    lamports: b.readBigUInt64LE(66),
    leafIndex: b.readUInt32LE(74),
    seq: flags & F_SEQ ? b.readBigUInt64LE(78) : null,
    slotCreated: Number(b.readBigUInt64LE(86)),
    address,
    data,
  };
  if (v2) out.v2 = v2;
  if (ataOwner) out.ataOwner = ataOwner;
  return out;
}

/** Whether an encoded account is spent (no full decode). */
export function isSpentRecord(buf: Uint8Array): boolean {
  return (buf[0]! & F_SPENT) !== 0;
}

/** Returns a copy of an encoded account with the spent flag set or cleared (no full decode). */
export function withSpent(buf: Uint8Array, spent: boolean): Buffer {
  const out = Buffer.from(buf);
  out[0] = spent ? out[0]! | F_SPENT : out[0]! & ~F_SPENT;
  return out;
}

/** A Merkle tree node: hash (32 B) ‖ seq u64 LE. */
export interface NodeRecord {
  hash: Bytes32;
  seq: bigint;
}

/** Encodes a node as 40 bytes. */
export function encodeNode(n: NodeRecord): Buffer {
  const buf = Buffer.allocUnsafe(40);
  buf.set(n.hash, 0);
  buf.writeBigUInt64LE(n.seq, 32);
  return buf;
}

/** Decodes a 40-byte node. */
export function decodeNode(buf: Uint8Array): NodeRecord {
  if (buf.length !== 40) throw new Error(`node record has ${buf.length} bytes, expected 40`);
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.length);
  return { hash: b.subarray(0, 32), seq: b.readBigUInt64LE(32) };
}

/** An indexed (address) tree element: value, next index, next value, seq (photon.md §5 `indexed_trees`). */
export interface IndexedElementRecord {
  leafIndex: number;
  value: Bytes32;
  nextIndex: number;
  nextValue: Bytes32;
  seq: bigint;
}

/** Encodes value ‖ nextIndex u64 ‖ nextValue ‖ seq u64 (80 bytes); the leaf index is in the key. */
export function encodeIndexedElement(e: IndexedElementRecord): Buffer {
  const buf = Buffer.allocUnsafe(80);
  buf.set(e.value, 0);
  buf.writeBigUInt64LE(BigInt(e.nextIndex), 32);
  buf.set(e.nextValue, 40);
  buf.writeBigUInt64LE(e.seq, 72);
  return buf;
}

/** Decodes an 80-byte indexed element. */
export function decodeIndexedElement(leafIndex: number, buf: Uint8Array): IndexedElementRecord {
  if (buf.length !== 80) throw new Error(`indexed element record has ${buf.length} bytes, expected 80`);
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.length);
  return { leafIndex, value: b.subarray(0, 32), nextIndex: Number(b.readBigUInt64LE(32)), nextValue: b.subarray(40, 72), seq: b.readBigUInt64LE(72) };
}

/** A stored transaction: slot, uses_compression, error (photon.md §5 `transactions`). */
export interface TransactionRecord {
  signature: string;
  slot: number;
  usesCompression: boolean;
  error: string | null;
}

/** Encodes slot u64 ‖ flags u8 (bit0 usesCompression, bit1 has error) ‖ error utf8. */
export function encodeTransaction(t: TransactionRecord): Buffer {
  const err = t.error === null ? Buffer.alloc(0) : Buffer.from(t.error, 'utf8');
  const buf = Buffer.allocUnsafe(9 + err.length);
  buf.writeBigUInt64LE(BigInt(t.slot), 0);
  buf[8] = (t.usesCompression ? 1 : 0) | (t.error !== null ? 2 : 0);
  buf.set(err, 9);
  return buf;
}

/** Decodes `encodeTransaction` output. */
export function decodeTransaction(signature: string, buf: Uint8Array): TransactionRecord {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.length);
  return {
    signature,
    slot: Number(b.readBigUInt64LE(0)),
    usesCompression: (b[8]! & 1) !== 0,
    error: b[8]! & 2 ? b.subarray(9).toString('utf8') : null,
  };
}

/** Block metadata as stored (photon.md §1.1): slot, parent slot, time, height, hashes. */
export type BlockRecord = BlockHeader;

/** Encodes a block as JSON (small, rare). */
export function encodeBlock(b: BlockRecord): Buffer {
  return Buffer.from(JSON.stringify(b), 'utf8');
}

/** Decodes `encodeBlock` output. */
export function decodeBlock(buf: Uint8Array): BlockRecord {
  return JSON.parse(Buffer.from(buf).toString('utf8')) as BlockRecord;
}

/** Unsigned 128-bit little-endian balance (16 bytes). */
export function encodeU128(v: bigint): Buffer {
  const buf = Buffer.allocUnsafe(16);
  buf.writeBigUInt64LE(v & 0xffffffffffffffffn, 0);
  buf.writeBigUInt64LE(v >> 64n, 8);
  return buf;
}

/** Decodes a 16-byte LE u128 (undefined → 0). */
export function decodeU128(buf: Uint8Array | undefined): bigint {
  if (!buf) return 0n;
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.length);
  return b.readBigUInt64LE(0) | (b.readBigUInt64LE(8) << 64n);
}

/**
 * State of a batched (v2) tree after its last applied batch event: the event's sequence number, root and
 * root index (the root-history slot the chain wrote), and the tree's next leaf index (appends) and the
 * input queue's next index (nullifies) after it.
 */
export interface BatchTreeRecord {
  seq: bigint;
  root: Bytes32;
  rootIndex: number;
  nextIndex: bigint;
  nullifiedNextIndex: bigint;
}

/** Encodes seq u64 ‖ root 32 ‖ rootIndex u32 ‖ nextIndex u64 ‖ nullifiedNextIndex u64 (60 bytes). */
export function encodeBatchTree(r: BatchTreeRecord): Buffer {
  const b = Buffer.alloc(60);
  b.writeBigUInt64LE(r.seq, 0);
  b.set(r.root, 8);
  b.writeUInt32LE(r.rootIndex, 40);
  b.writeBigUInt64LE(r.nextIndex, 44);
  b.writeBigUInt64LE(r.nullifiedNextIndex, 52);
  return b;
}

/** Decodes `encodeBatchTree` output. */
export function decodeBatchTree(buf: Uint8Array): BatchTreeRecord {
  if (buf.length !== 60) throw new Error(`batch tree record has ${buf.length} bytes, expected 60`);
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.length);
  return { seq: b.readBigUInt64LE(0), root: Buffer.from(b.subarray(8, 40)), rootIndex: b.readUInt32LE(40), nextIndex: b.readBigUInt64LE(44), nullifiedNextIndex: b.readBigUInt64LE(52) };
}

/** A batch event held back by a sequence gap, with the transaction that carried it. */
export interface PendingBatchEventRecord {
  signature: string;
  slot: number;
  event: BatchEvent;
}

const BATCH_KIND_CODES = { batchAppend: 3, batchNullify: 4, batchAddressAppend: 5 } as const;

/** Encodes a pending batch event as JSON (rare; bigints and bytes as strings). */
export function encodePendingBatchEvent(r: PendingBatchEventRecord): Buffer {
  const e = r.event;
  const hex = (x: Uint8Array) => Buffer.from(x).toString('hex');
  return Buffer.from(
    JSON.stringify({
      signature: r.signature,
      slot: r.slot,
      kind: BATCH_KIND_CODES[e.kind],
      tree: hex(e.merkleTreePubkey),
      batchIndex: String(e.batchIndex),
      zkpBatchIndex: String(e.zkpBatchIndex),
      zkpBatchSize: String(e.zkpBatchSize),
      oldNextIndex: String(e.oldNextIndex),
      newNextIndex: String(e.newNextIndex),
      newRoot: hex(e.newRoot),
      rootIndex: e.rootIndex,
      sequenceNumber: String(e.sequenceNumber),
      outputQueue: e.outputQueuePubkey ? hex(e.outputQueuePubkey) : null,
    }),
    'utf8',
  );
}

/** Decodes `encodePendingBatchEvent` output. */
export function decodePendingBatchEvent(buf: Uint8Array): PendingBatchEventRecord {
  const j = JSON.parse(Buffer.from(buf).toString('utf8'));
  const kinds = { 3: 'batchAppend', 4: 'batchNullify', 5: 'batchAddressAppend' } as const;
  const bytes = (h: string) => new Uint8Array(Buffer.from(h, 'hex'));
  return {
    signature: j.signature,
    slot: j.slot,
    event: {
      kind: kinds[j.kind as 3 | 4 | 5],
      merkleTreePubkey: bytes(j.tree),
      batchIndex: BigInt(j.batchIndex),
      zkpBatchIndex: BigInt(j.zkpBatchIndex),
      zkpBatchSize: BigInt(j.zkpBatchSize),
      oldNextIndex: BigInt(j.oldNextIndex),
      newNextIndex: BigInt(j.newNextIndex),
      newRoot: bytes(j.newRoot),
      rootIndex: j.rootIndex,
      sequenceNumber: BigInt(j.sequenceNumber),
      outputQueuePubkey: j.outputQueue ? bytes(j.outputQueue) : null,
    },
  };
}
