/**
 * The LMDB store: the ONE module that knows every database name and key layout.
 *
 * Keys are binary and compare with memcmp, so integers in keys are fixed-width big-endian.
 * Pubkeys, hashes and addresses are raw 32 bytes; signatures raw 64 bytes.
 * Writes happen only inside `Store.write(fn)` (one LMDB write transaction, all or nothing);
 * reads go through `Store.read(fn)`, which pins one read transaction so every value a request
 * returns (data, roots, context slot) comes from the same snapshot.
 */
import { open, type Database, type RootDatabase, type Transaction } from 'lmdb';
import * as base58 from '../solana/base58.ts';
import type { Bytes32 } from '../types.ts';
import {
  type AccountRecord,
  type BatchTreeRecord,
  type BlockRecord,
  type PendingBatchEventRecord,
  type IndexedElementRecord,
  type NodeRecord,
  type TransactionRecord,
  decodeAccount,
  decodeBatchTree,
  decodeBlock,
  decodePendingBatchEvent,
  decodeIndexedElement,
  decodeNode,
  decodeTransaction,
  decodeU128,
  encodeAccount,
  encodeBatchTree,
  encodeBlock,
  encodePendingBatchEvent,
  encodeIndexedElement,
  encodeNode,
  encodeTransaction,
  encodeU128,
  isSpentRecord,
  withSpent,
} from './records.ts';

/** Version of the key layout and record codecs; a store written by another version is refused. */
export const SCHEMA_VERSION = 4;

type Bin = Database<Buffer, Buffer>;

const EMPTY = Buffer.alloc(0);
const DB_NAMES = [
  'meta', // utf8 name → value
  'blocks', // slot u64BE → BlockRecord
  'accounts', // hash → AccountRecord
  'accByOwner', // owner ‖ leafIndex u32BE ‖ hash → '' (unspent only)
  'accByAddress', // address → hash (the unspent account with that address)
  'tokByOwner', // owner ‖ mint ‖ hash → '' (unspent token accounts)
  'tokByDelegate', // delegate ‖ mint ‖ hash → ''
  'tokByAtaOwner', // ATA wallet owner ‖ mint ‖ hash → '' (unspent token accounts of compressed ATAs; schema 4)
  'balance', // owner → u128 lamports
  'tokenBalance', // owner ‖ mint → u128 amount
  'holdersByBalance', // mint ‖ (2^128−1 − balance) u128BE ‖ owner → '' (mirror of tokenBalance: balance DESC, owner ASC)
  'txs', // signature(64) → TransactionRecord
  'txsBySlot', // slot u64BE ‖ signature → flags u8 (1 = uses compression)
  'compTxsBySlot', // slot u64BE ‖ signature → '' (uses compression)
  'plainTxsBySlot', // slot u64BE ‖ signature → '' (no compression; pruned to PAGE_LIMIT)
  'accountTxs', // hash ‖ signature → ''
  'sigsByOwner', // owner ‖ slot u64BE ‖ signature → ''
  'sigsByTokenOwner', // token owner ‖ slot u64BE ‖ signature → ''
  'sigsByAddress', // address ‖ slot u64BE ‖ signature → ''
  'nodes', // tree ‖ nodeIndex u64BE → NodeRecord
  'indexedElements', // tree ‖ leafIndex u64BE → IndexedElementRecord
  'indexedValues', // tree ‖ value → leafIndex u64BE
  'rejected', // signature(64) → utf8 reason
  'outputQueue', // tree ‖ leafIndex u32BE → hash (StateV2 accounts still in their output queue)
  'inputQueue', // tree ‖ nullifierQueueIndex u64BE → hash (spent StateV2 accounts not yet nullified in the tree)
  'addressQueue', // tree ‖ queueIndex u64BE → address (AddressV2 addresses not yet appended)
  'addressQueued', // address → tree ‖ queueIndex u64BE
  'batchTrees', // tree → BatchTreeRecord (last applied batch event of a batched tree)
  'pendingBatchEvents', // tree ‖ sequenceNumber u64BE → PendingBatchEventRecord (held back by a sequence gap)
  'seqPositions', // tree ‖ stream u8 (SEQ_STREAMS index) → next u64BE ‖ slot u64BE (state/sequence.ts)
  'backfillSigs', // slot u64BE ‖ signature(64) → listing rank u32BE (signatures listed by the backfill, not yet indexed)
  'orphanSpends', // account hash → slot u64BE ‖ signature(64) [‖ tree ‖ nullifierQueueIndex u64BE ‖ nullifier ‖ txHash]: a spend of an account the store did not have (yet); the bracket for a batched-tree (v2) input
] as const;
type DbName = (typeof DB_NAMES)[number];

function u32be(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n, 0);
  return b;
}
function u64be(n: number | bigint): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeBigUInt64BE(BigInt(n), 0);
  return b;
}
function cat(...parts: Uint8Array[]): Buffer {
  return Buffer.concat(parts);
}
const U128_MAX = (1n << 128n) - 1n;
/** Key of a holder in `holdersByBalance`: the inverted balance sorts larger balances first. */
function holderKey(mint: Uint8Array, balance: bigint, owner: Uint8Array): Buffer {
  const k = Buffer.allocUnsafe(32 + 16 + 32);
  k.set(mint, 0);
  const inv = U128_MAX - balance;
  k.writeBigUInt64BE(inv >> 64n, 32);
  k.writeBigUInt64BE(inv & 0xffffffffffffffffn, 40);
  k.set(owner, 48);
  return k;
}
let lastSig = '';
let lastSigBytes: Buffer = Buffer.alloc(0);
/**
 * Raw 64-byte signature from base58 (the last one is memoised: a transaction's writes repeat it).
 * @throws DecodeError (`signature: invalid base58 character …`) when the string is not base58; Error when it does not decode to 64 bytes.
 */
export function signatureBytes(sig: string): Buffer {
  if (sig === lastSig) return lastSigBytes;
  const d = base58.decode(sig, 'signature');
  const b = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
  if (b.length !== 64) throw new Error(`signature '${sig}' is ${b.length} bytes, expected 64`);
  lastSig = sig;
  lastSigBytes = b;
  return b;
}
/** Scratch key of `ReadView.node` (reads are synchronous and lmdb copies the key). */
const NODE_KEY = Buffer.alloc(40);
/** Entries a read view remembers in `node` before starting over (≈ 700 proofs; a few MB). */
const NODE_MEMO_LIMIT = 20_000;
/** The smallest key strictly greater than every key starting with `prefix`. */
function prefixEnd(prefix: Uint8Array): Buffer {
  const b = Buffer.from(prefix);
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i]! < 0xff) {
      b[i]!++;
      return b.subarray(0, i + 1);
    }
  }
  return Buffer.alloc(prefix.length + 1, 0xff);
}

/** A signature entry as listed by the signature queries. */
export interface SignatureEntry {
  /** base58 */
  signature: string;
  /** The same signature, 64 raw bytes. */
  signatureBytes: Buffer;
  slot: number;
}

/** A spend recorded before its account arrived (ReadView.orphanSpend). */
export interface OrphanSpend {
  slot: number;
  /** base58 */
  signature: string;
  /** The input-queue insert of a batched-tree (v2) account's spend: tree (32 bytes), nullifier queue index, nullifier and tx hash (32 bytes each). */
  queue?: { tree: Uint8Array; queueIndex: bigint; nullifier: Uint8Array; txHash: Uint8Array };
}

/** A tree's root node as stored: the tree (32 raw bytes), the root hash (32 bytes) and its seq. */
export interface TreeRoot {
  tree: Buffer;
  hash: Buffer;
  seq: bigint;
}

/** Options for opening a store. */
export interface StoreOptions {
  /** Directory of the LMDB environment. */
  path: string;
  /** Open read-only (API replicas reading one environment). */
  readOnly?: boolean;
  /** Map size in bytes (default 64 GiB; LMDB grows the file lazily). */
  mapSize?: number;
  /**
   * Writable stores: write through LMDB's write map (`MDB_WRITEMAP`, default true). Dirty pages are
   * modified in the shared mapping instead of being copied into malloc'd pages and written at commit:
   * ≈1.8× less CPU per indexed output on a 1M-account store (random-key indexes dirty one page per
   * put). Commits stay synchronous and copy-on-write, so a crash (even mid-transaction) leaves the
   * last committed state. Costs: the data file's apparent size is the map size (sparse on Linux file
   * systems), and a full disk kills the process with SIGBUS instead of failing the transaction
   * (restart once space is freed; nothing committed is lost). Ignored for read-only stores.
   */
  writemap?: boolean;
  /**
   * Hears every put (`value`) and delete (`value` null) of this store's write transactions
   * (`write`), in order, just before it is applied: `db` is the sub-database name, `key`/`value`
   * the caller's buffers (copy them to keep them). It also hears the writes of a transaction that
   * later throws (and so commits nothing), and not those of {@link Store.applyRecordedWrites}. For
   * measurement: bench:ingest records one pass's writes and replays them to time the store's own
   * share. Default: none.
   */
  onWrite?: RecordedWriteListener;
}

/** Listener of {@link StoreOptions.onWrite}. */
export type RecordedWriteListener = (db: string, key: Uint8Array, value: Uint8Array | null) => void;

/** One recorded write: a put (`value`) or delete (`value` null) in sub-database `db`. */
export interface RecordedWrite {
  db: string;
  key: Uint8Array;
  value: Uint8Array | null;
}

/**
 * Typed reads over one pinned LMDB read (or write) transaction. Every method is synchronous.
 * Returned byte arrays are copies owned by the caller.
 */
export class ReadView {
  /** getBinary's options naming the pinned transaction (one object per view, not per read). */
  private readonly getOpts: { transaction: Transaction } | undefined;

  constructor(
    protected readonly dbs: Record<DbName, Bin>,
    protected readonly txn: Transaction | undefined,
  ) {
    this.getOpts = txn ? { transaction: txn } : undefined;
  }

  protected get(db: DbName, key: Uint8Array): Buffer | undefined {
    // lmdb's typings omit getBinary's options argument, which carries the pinned transaction.
    // lmdb copies `key` into its own buffer before reading: callers may pass a scratch buffer.
    const d = this.dbs[db] as unknown as { getBinary(k: Uint8Array, o?: { transaction: Transaction }): Buffer | undefined };
    return d.getBinary(key, this.getOpts);
  }

  protected range(db: DbName, opts: { start?: Uint8Array; end?: Uint8Array; reverse?: boolean; limit?: number; exclusiveStart?: boolean }) {
    return this.dbs[db].getRange({ ...opts, transaction: this.txn } as never) as Iterable<{ key: Buffer; value: Buffer }>;
  }

  /** Iterates keys having `prefix`, ascending (or descending), starting after `after` (a full key) when given. */
  protected *scanPrefix(db: DbName, prefix: Uint8Array, opts: { after?: Uint8Array; reverse?: boolean } = {}) {
    const end = prefixEnd(prefix);
    if (!opts.reverse) {
      const start = opts.after ? opts.after : prefix;
      for (const e of this.range(db, { start, end, exclusiveStart: !!opts.after })) yield e;
    } else {
      const start = opts.after ? opts.after : end;
      for (const e of this.range(db, { start, end: prefix, reverse: true, exclusiveStart: true })) {
        if (e.key.length >= prefix.length && Buffer.compare(e.key.subarray(0, prefix.length), prefix) === 0) yield e;
      }
    }
  }

  /** A UTF-8 metadata value by name (`meta` database), or undefined. */
  metaText(name: string): string | undefined {
    return this.get('meta', Buffer.from(name))?.toString('utf8');
  }

  /**
   * The position of a tree's numbered stream (state/sequence.ts), or undefined when never seen.
   * @param tree 32-byte tree pubkey; @param stream index into SEQ_STREAMS
   */
  seqPosition(tree: Bytes32, stream: number): { next: bigint; slot: number } | undefined {
    const v = this.get('seqPositions', cat(tree, Buffer.of(stream)));
    return v ? { next: v.readBigUInt64BE(0), slot: Number(v.readBigUInt64BE(8)) } : undefined;
  }

  /** Every stored stream position: [tree (32 bytes), stream index, next, slot]. */
  *seqPositions(): Generator<[Buffer, number, bigint, number]> {
    for (const { key, value } of this.range('seqPositions', {})) yield [key.subarray(0, 32), key[32]!, value.readBigUInt64BE(0), Number(value.readBigUInt64BE(8))];
  }

  /**
   * Signatures the backfill listed and has not indexed yet, ascending by slot (then signature
   * bytes), from `afterSlot` (exclusive) when given, up to `throughSlot` (inclusive) when given, at
   * most `limit`: `{slot, signature (base58), rank}` (rank: the listing's position inside its slot,
   * newest first).
   */
  backfillSignatures(limit: number, afterSlot?: number, throughSlot?: number): { slot: number; signature: string; rank: number }[] {
    const out: { slot: number; signature: string; rank: number }[] = [];
    const start = afterSlot === undefined ? undefined : u64be(afterSlot + 1);
    const end = throughSlot === undefined ? undefined : u64be(throughSlot + 1);
    for (const { key, value } of this.range('backfillSigs', { ...(start ? { start } : {}), ...(end ? { end } : {}), limit })) {
      out.push({ slot: Number(key.readBigUInt64BE(0)), signature: base58.encode(key.subarray(8, 72)), rank: value.readUInt32BE(0) });
    }
    return out;
  }

  /**
   * A spend of `hash` that was indexed before the account itself (a transaction found late by the
   * sequence check's healing), or undefined: the spending transaction's slot and signature, and for
   * a batched-tree (v2) account the input-queue insert its spend made (`queue`: tree, nullifier queue
   * index, nullifier, tx hash; 32-byte values), to apply when the account arrives.
   */
  orphanSpend(hash: Bytes32): OrphanSpend | undefined {
    const v = this.get('orphanSpends', hash);
    if (!v) return undefined;
    const spend: OrphanSpend = { slot: Number(v.readBigUInt64BE(0)), signature: base58.encode(v.subarray(8, 72)) };
    if (v.length >= 72 + 104) {
      spend.queue = { tree: Buffer.from(v.subarray(72, 104)), queueIndex: v.readBigUInt64BE(104), nullifier: Buffer.from(v.subarray(112, 144)), txHash: Buffer.from(v.subarray(144, 176)) };
    }
    return spend;
  }

  /** Schema version recorded in the store, or undefined for a new store. */
  schemaVersion(): number | undefined {
    const v = this.get('meta', Buffer.from('schemaVersion'));
    return v ? v.readUInt32LE(0) : undefined;
  }

  /**
   * Genesis hash (base58, as the node's getGenesisHash answers it) of the cluster this store indexes,
   * or null when none was recorded (`refract start` records it when it first talks to the node; stores
   * written by `refract index` or before the key existed have none).
   */
  genesisHash(): string | null {
    const v = this.get('meta', Buffer.from('genesisHash'));
    return v ? v.toString('utf8') : null;
  }

  /**
   * The root node (heap index 1) of every tree (state and address, v1 and v2) that has one, by
   * ascending tree pubkey: what the API answers as a tree's root and root seq (query/merkleProofs.ts
   * `pathAndRoot`; a tree without nodes answers its height's zero root and seq 0, and is not listed).
   * One seek per tree, not a scan of the nodes.
   */
  treeRoots(): TreeRoot[] {
    const out: TreeRoot[] = [];
    let start: Buffer | undefined;
    for (;;) {
      let tree: Buffer | undefined;
      for (const e of this.range('nodes', { start, limit: 1 })) tree = Buffer.from(e.key.subarray(0, 32));
      if (!tree || tree.length !== 32) return out;
      const root = this.get('nodes', cat(tree, u64be(1)));
      if (root) {
        const n = decodeNode(root);
        out.push({ tree, hash: Buffer.from(n.hash), seq: n.seq });
      }
      start = prefixEnd(tree);
    }
  }

  /** `lastSlot` of this view's snapshot, once read (read views only: a write view's blocks change). */
  private lastSlotMemo: number | null | undefined;

  /**
   * Highest committed slot (MAX(blocks.slot)), or null when nothing was indexed. On a read view the
   * value is read once and remembered (the snapshot cannot change), which makes it free for the
   * many requests sharing one snapshot (`Store.readShared`).
   */
  lastSlot(): number | null {
    if (this.lastSlotMemo !== undefined) return this.lastSlotMemo;
    let slot: number | null = null;
    // Keys only: no copy of the block record.
    const keys = this.dbs.blocks.getKeys({ reverse: true, limit: 1, transaction: this.txn } as never) as unknown as Iterable<Buffer>;
    for (const key of keys) {
      slot = Number(key.readBigUInt64BE(0));
      break;
    }
    if (this.txn) this.lastSlotMemo = slot;
    return slot;
  }

  /** Block metadata of a slot. */
  block(slot: number): BlockRecord | undefined {
    const v = this.get('blocks', u64be(slot));
    return v ? decodeBlock(v) : undefined;
  }

  /** A compressed account by hash, spent or not. */
  account(hash: Bytes32): AccountRecord | undefined {
    const v = this.get('accounts', hash);
    return v ? decodeAccount(Buffer.from(hash), v) : undefined;
  }

  /** `account` for a hash the record may keep as is (a view into an index key lmdb copied for us). */
  private accountOwnedHash(hash: Buffer): AccountRecord | undefined {
    const v = this.get('accounts', hash);
    return v ? decodeAccount(hash, v) : undefined;
  }

  /** The unspent account holding `address`, if any. */
  accountByAddress(address: Bytes32): AccountRecord | undefined {
    const h = this.get('accByAddress', address);
    if (!h) return undefined;
    const a = this.account(h);
    return a && !a.spent ? a : undefined;
  }

  /**
   * Unspent accounts of `owner` ordered by (leafIndex, hash) ascending, after the position
   * `after` = leafIndex u32BE ‖ hash (36 bytes) when given.
   */
  *accountsByOwner(owner: Bytes32, after?: Uint8Array): Generator<AccountRecord> {
    for (const e of this.scanPrefix('accByOwner', owner, { after: after ? cat(owner, after) : undefined })) {
      const a = this.accountOwnedHash(e.key.subarray(36, 68)); // range keys are fresh copies
      if (a) yield a;
    }
  }

  /** Position key (leafIndex u32BE ‖ hash) of an account in the by-owner order. */
  static ownerPosition(a: AccountRecord): Buffer {
    return cat(u32be(a.leafIndex), a.hash);
  }

  /**
   * Unspent token accounts of `owner` (or delegate, or ATA wallet owner: the wallet a compressed ATA is
   * derived from, `AccountRecord.ataOwner`) ordered by (mint, hash), optionally for one mint, after the
   * position mint ‖ hash (64 bytes) when given.
   */
  *tokenAccountsBy(kind: 'owner' | 'delegate' | 'ataOwner', who: Bytes32, mint: Bytes32 | null, after?: Uint8Array): Generator<AccountRecord> {
    const db: DbName = kind === 'owner' ? 'tokByOwner' : kind === 'delegate' ? 'tokByDelegate' : 'tokByAtaOwner';
    const prefix = mint ? cat(who, mint) : Buffer.from(who);
    for (const e of this.scanPrefix(db, prefix, { after: after ? cat(who, after) : undefined })) {
      const a = this.accountOwnedHash(e.key.subarray(64, 96)); // range keys are fresh copies
      if (a) yield a;
    }
  }

  /** Sum of lamports of the unspent accounts of `owner`. */
  balance(owner: Bytes32): bigint {
    return decodeU128(this.get('balance', owner));
  }

  /** Token balance of (owner, mint). */
  tokenBalance(owner: Bytes32, mint: Bytes32): bigint {
    return decodeU128(this.get('tokenBalance', cat(owner, mint)));
  }

  /** The token_owner_balances row of (owner, mint): its balance (possibly 0), or undefined when there is no row. */
  tokenBalanceRow(owner: Bytes32, mint: Bytes32): bigint | undefined {
    const v = this.get('tokenBalance', cat(owner, mint));
    return v ? decodeU128(v) : undefined;
  }

  /** Token balances of `owner` ordered by mint, starting after mint `after`. */
  *tokenBalances(owner: Bytes32, after?: Bytes32): Generator<{ mint: Buffer; balance: bigint }> {
    for (const e of this.scanPrefix('tokenBalance', owner, { after: after ? cat(owner, after) : undefined })) {
      yield { mint: e.key.subarray(32, 64), balance: decodeU128(e.value) };
    }
  }

  /**
   * Holders of `mint` (token_owner_balances rows, zero balances included) ordered by
   * (balance DESC, owner ASC), starting strictly after the position `after` when given.
   */
  *mintHolders(mint: Bytes32, after?: { balance: bigint; owner: Bytes32 }): Generator<{ owner: Buffer; balance: bigint }> {
    const start = after ? holderKey(mint, after.balance > U128_MAX ? U128_MAX : after.balance, after.owner) : undefined;
    for (const e of this.scanPrefix('holdersByBalance', mint, { after: start })) {
      const inv = (e.key.readBigUInt64BE(32) << 64n) | e.key.readBigUInt64BE(40);
      yield { owner: e.key.subarray(48, 80), balance: U128_MAX - inv };
    }
  }

  /** A stored transaction by signature. */
  transaction(signature: string): TransactionRecord | undefined {
    const v = this.get('txs', signatureBytes(signature));
    return v ? decodeTransaction(signature, v) : undefined;
  }

  /** Signatures that touched the account `hash` (as inputs or outputs), by signature bytes. */
  signaturesForAccount(hash: Bytes32): SignatureEntry[] {
    const out: SignatureEntry[] = [];
    for (const e of this.scanPrefix('accountTxs', hash)) {
      const raw = e.key.subarray(32, 96);
      const sig = base58.encode(raw);
      const t = this.transaction(sig);
      if (t) out.push({ signature: sig, signatureBytes: raw, slot: t.slot });
    }
    return out;
  }

  /**
   * Signatures ordered by (slot DESC, signature DESC), strictly after (i.e. older than) the position
   * `before` = (slot, 64-byte signature) when given.
   * `index` selects which set: by owner/token owner/address (with `who`), all compression txs, or all txs.
   */
  *signatures(
    index: 'owner' | 'tokenOwner' | 'address' | 'compression' | 'all',
    who: Bytes32 | null,
    before?: { slot: number | bigint; signature: Uint8Array },
  ): Generator<SignatureEntry> {
    const db: DbName = { owner: 'sigsByOwner', tokenOwner: 'sigsByTokenOwner', address: 'sigsByAddress', compression: 'compTxsBySlot', all: 'txsBySlot' }[index] as DbName;
    const prefix = who ? Buffer.from(who) : EMPTY;
    const afterKey = before ? cat(prefix, u64be(before.slot), before.signature) : undefined;
    const iter = prefix.length
      ? this.scanPrefix(db, prefix, { reverse: true, after: afterKey })
      : this.range(db, afterKey ? { start: afterKey, reverse: true, exclusiveStart: true } : { reverse: true });
    const p = prefix.length;
    for (const e of iter) {
      const sig = e.key.subarray(p + 8, p + 72);
      yield { slot: Number(e.key.readBigUInt64BE(p)), signature: base58.encode(sig), signatureBytes: sig };
    }
  }

  /**
   * Nodes already read through this read view, by key (latin1 image): the proofs of one snapshot
   * share their upper levels and root (and a shared snapshot serves many requests). Read views
   * only — a snapshot's nodes cannot change; the records are shared, callers must not mutate them.
   */
  private nodeMemo: Map<string, NodeRecord | null> | undefined;

  /** A Merkle tree node (state or address tree) at 1-based heap index `nodeIndex`. */
  node(tree: Bytes32, nodeIndex: bigint): NodeRecord | undefined {
    // tree ‖ nodeIndex u64BE, built in a scratch key (proofs read ~27 nodes each).
    NODE_KEY.set(tree, 0);
    NODE_KEY.writeBigUInt64BE(nodeIndex, 32);
    if (!this.txn) {
      const v = this.get('nodes', NODE_KEY);
      return v ? decodeNode(v) : undefined;
    }
    const memo = (this.nodeMemo ??= new Map());
    const k = NODE_KEY.toString('latin1');
    let n = memo.get(k);
    if (n === undefined) {
      const v = this.get('nodes', NODE_KEY);
      n = v ? decodeNode(v) : null;
      if (memo.size >= NODE_MEMO_LIMIT) memo.clear();
      memo.set(k, n);
    }
    return n ?? undefined;
  }

  /**
   * Where a compressed-account hash currently sits as a state-tree leaf: the account's (tree, leaf index)
   * when the leaf node there still holds this hash (a nullified leaf holds 0^32), else undefined.
   * No separate index is kept: the account record already names the position.
   * @param heightOf the height of a tree (the registry's); default 32 for StateV2 accounts, else 26
   *   (Light's v1 state trees). The store itself does not know tree heights.
   */
  leafByHash(hash: Bytes32, heightOf?: (tree: Bytes32) => number | undefined): { tree: Buffer; leafIndex: number } | undefined {
    const a = this.account(hash);
    if (!a) return undefined;
    const depth = heightOf?.(a.tree) ?? (a.treeType === 3 ? 32 : 26);
    const n = this.node(a.tree, BigInt(2 ** depth + a.leafIndex));
    if (!n || Buffer.compare(n.hash, hash) !== 0) return undefined;
    // `a.tree` is a view into the account record's own copy: the caller owns it.
    return { tree: a.tree as Uint8Array as Buffer, leafIndex: a.leafIndex };
  }

  /**
   * The highest node index stored for `tree` below `bound` (exclusive; 1-based heap index), or
   * undefined. With `bound` = 2^(height+1) this is the rightmost stored leaf (2^height + leaf index).
   */
  lastNodeIndex(tree: Bytes32, bound: bigint): bigint | undefined {
    for (const e of this.range('nodes', { start: cat(tree, u64be(bound)), end: tree, reverse: true, exclusiveStart: true, limit: 1 })) {
      if (Buffer.compare(e.key.subarray(0, 32), tree) !== 0) return undefined;
      return e.key.readBigUInt64BE(32);
    }
    return undefined;
  }

  /** The highest leaf index of `tree`'s indexed elements (address trees), or undefined when it has none. */
  lastIndexedLeafIndex(tree: Bytes32): number | undefined {
    for (const e of this.range('indexedElements', { start: prefixEnd(tree), end: tree, reverse: true, exclusiveStart: true, limit: 1 })) {
      if (Buffer.compare(e.key.subarray(0, 32), tree) !== 0) return undefined;
      return Number(e.key.readBigUInt64BE(32));
    }
    return undefined;
  }

  /** Indexed tree element at `leafIndex`. */
  indexedElement(tree: Bytes32, leafIndex: number): IndexedElementRecord | undefined {
    const v = this.get('indexedElements', cat(tree, u64be(leafIndex)));
    return v ? decodeIndexedElement(leafIndex, v) : undefined;
  }

  /** The indexed element with the largest value strictly below `value` (the low element), if any. */
  indexedLowElement(tree: Bytes32, value: Bytes32): IndexedElementRecord | undefined {
    for (const e of this.range('indexedValues', { start: cat(tree, value), end: tree, reverse: true, exclusiveStart: true })) {
      if (Buffer.compare(e.key.subarray(0, 32), tree) !== 0) return undefined;
      return this.indexedElement(tree, Number(e.value.readBigUInt64BE(0)));
    }
    return undefined;
  }

  /** Leaf index of an element with exactly `value`, if present. */
  indexedValueIndex(tree: Bytes32, value: Bytes32): number | undefined {
    const v = this.get('indexedValues', cat(tree, value));
    return v ? Number(v.readBigUInt64BE(0)) : undefined;
  }

  /** Why a transaction was rejected by the indexer, if it was. */
  rejection(signature: string): string | undefined {
    return this.get('rejected', signatureBytes(signature))?.toString('utf8');
  }

  /**
   * Hashes of `tree`'s output queue (StateV2 accounts not yet appended), by ascending leaf index,
   * from leaf index `start` (inclusive) to `end` (exclusive; default: all), at most `limit`.
   */
  *outputQueue(tree: Bytes32, start = 0, end = 2 ** 32, limit?: number): Generator<{ leafIndex: number; hash: Buffer }> {
    for (const e of this.range('outputQueue', { start: cat(tree, u32be(start)), end: end >= 2 ** 32 ? prefixEnd(tree) : cat(tree, u32be(end)), limit })) {
      yield { leafIndex: e.key.readUInt32BE(32), hash: Buffer.from(e.value) };
    }
  }

  /** Hashes of `tree`'s input queue (spent, not yet nullified in the tree), by ascending queue index in [start, end). */
  *inputQueue(tree: Bytes32, start = 0n, end?: bigint, limit?: number): Generator<{ queueIndex: bigint; hash: Buffer }> {
    for (const e of this.range('inputQueue', { start: cat(tree, u64be(start)), end: end === undefined ? prefixEnd(tree) : cat(tree, u64be(end)), limit })) {
      yield { queueIndex: e.key.readBigUInt64BE(32), hash: Buffer.from(e.value) };
    }
  }

  /** Addresses of `tree`'s address queue (AddressV2, not yet appended), by ascending queue index in [start, end). */
  *addressQueue(tree: Bytes32, start = 0n, end?: bigint, limit?: number): Generator<{ queueIndex: bigint; address: Buffer }> {
    for (const e of this.range('addressQueue', { start: cat(tree, u64be(start)), end: end === undefined ? prefixEnd(tree) : cat(tree, u64be(end)), limit })) {
      yield { queueIndex: e.key.readBigUInt64BE(32), address: Buffer.from(e.value) };
    }
  }

  /** Where an address waits in an address queue, if it does. */
  queuedAddress(address: Bytes32): { tree: Buffer; queueIndex: bigint } | undefined {
    const v = this.get('addressQueued', address);
    return v ? { tree: Buffer.from(v.subarray(0, 32)), queueIndex: v.readBigUInt64BE(32) } : undefined;
  }

  /** The last batch event applied to a batched tree (seq, root, root index, next indices), if any. */
  batchTree(tree: Bytes32): BatchTreeRecord | undefined {
    const v = this.get('batchTrees', tree);
    return v ? decodeBatchTree(v) : undefined;
  }

  /** Batch events of `tree` held back by a sequence gap, by ascending sequence number. */
  *pendingBatchEvents(tree: Bytes32): Generator<PendingBatchEventRecord> {
    for (const e of this.range('pendingBatchEvents', { start: tree, end: prefixEnd(tree) })) yield decodePendingBatchEvent(e.value);
  }
}

/** Writes inside one LMDB write transaction (plus all reads, which see the pending writes). */
export class WriteView extends ReadView {
  constructor(
    dbs: Record<DbName, Bin>,
    private readonly onWrite: RecordedWriteListener | undefined,
  ) {
    super(dbs, undefined);
  }

  private put(db: DbName, key: Uint8Array, value: Uint8Array): void {
    this.onWrite?.(db, key, value);
    // Inside transactionSync a plain put is applied synchronously to the write transaction.
    void this.dbs[db].put(key as Buffer, value as Buffer);
  }
  private del(db: DbName, key: Uint8Array): void {
    this.onWrite?.(db, key, null);
    void this.dbs[db].remove(key as Buffer);
  }

  /** Records the schema version (new store). */
  setSchemaVersion(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v, 0);
    this.put('meta', Buffer.from('schemaVersion'), b);
  }

  /** Records the cluster's genesis hash (base58; see `ReadView.genesisHash`). */
  setGenesisHash(hash: string): void {
    this.put('meta', Buffer.from('genesisHash'), Buffer.from(hash, 'utf8'));
  }

  /** Sets (or, with undefined, deletes) a UTF-8 metadata value by name (`meta` database). */
  putMetaText(name: string, value: string | undefined): void {
    if (value === undefined) this.del('meta', Buffer.from(name));
    else this.put('meta', Buffer.from(name), Buffer.from(value, 'utf8'));
  }

  /** Stores a tree stream's position (see ReadView.seqPosition). */
  putSeqPosition(tree: Bytes32, stream: number, next: bigint, slot: number): void {
    const v = Buffer.allocUnsafe(16);
    v.writeBigUInt64BE(next, 0);
    v.writeBigUInt64BE(BigInt(slot), 8);
    this.put('seqPositions', cat(tree, Buffer.of(stream)), v);
  }

  /** Adds a listed backfill signature (see ReadView.backfillSignatures). */
  putBackfillSignature(slot: number, signature: string, rank: number): void {
    this.put('backfillSigs', cat(u64be(slot), signatureBytes(signature)), u32be(rank));
  }

  /** Records a spend of an account the store does not have, with its input-queue insert for a v2 account (see ReadView.orphanSpend). */
  putOrphanSpend(hash: Bytes32, spend: OrphanSpend): void {
    const q = spend.queue;
    this.put('orphanSpends', hash, q ? cat(u64be(spend.slot), signatureBytes(spend.signature), q.tree, u64be(q.queueIndex), q.nullifier, q.txHash) : cat(u64be(spend.slot), signatureBytes(spend.signature)));
  }

  /** Forgets an orphan spend (its account arrived and was spent). */
  deleteOrphanSpend(hash: Bytes32): void {
    this.del('orphanSpends', hash);
  }

  /** Removes every listed backfill signature at or below `slot` (their chunk is committed); returns how many. */
  deleteBackfillSignaturesThrough(slot: number): number {
    const keys = [...(this.dbs.backfillSigs.getKeys({ end: u64be(slot + 1) } as never) as unknown as Iterable<Buffer>)].map((k) => Buffer.from(k));
    for (const k of keys) this.del('backfillSigs', k);
    return keys.length;
  }

  /** Removes a backfill signature once indexed (or found failed). */
  deleteBackfillSignature(slot: number, signature: string): void {
    this.del('backfillSigs', cat(u64be(slot), signatureBytes(signature)));
  }

  /** Replaces block metadata (the backfill's hand-over block: the real header over a synthetic one). */
  putBlock(b: BlockRecord): void {
    this.put('blocks', u64be(b.slot), encodeBlock(b));
  }

  /** Inserts block metadata if the slot has none (ON CONFLICT DO NOTHING). */
  insertBlock(b: BlockRecord): void {
    const key = u64be(b.slot);
    if (!this.get('blocks', key)) this.put('blocks', key, encodeBlock(b));
  }

  /**
   * Inserts a new account and its indexes (a StateV2 account `inOutputQueue` also enters its tree's
   * output queue index), and adds its lamports (and token amount) to the balances.
   * Returns false, changing nothing, when the hash already exists (idempotent re-index).
   * `token` carries the parsed token data of a token account.
   */
  insertAccount(a: AccountRecord, token: { owner: Bytes32; mint: Bytes32; delegate: Bytes32 | null; amount: bigint } | null): boolean {
    if (this.get('accounts', a.hash)) return false;
    this.put('accounts', a.hash, encodeAccount(a));
    if (!a.spent) {
      this.put('accByOwner', cat(a.owner, u32be(a.leafIndex), a.hash), EMPTY);
      if (a.address) this.put('accByAddress', a.address, a.hash);
    }
    if (a.v2?.inOutputQueue) this.putOutputQueue(a.tree, a.leafIndex, a.hash);
    this.addBalance(a.owner, a.lamports);
    if (token) {
      this.put('tokByOwner', cat(token.owner, token.mint, a.hash), EMPTY);
      if (token.delegate) this.put('tokByDelegate', cat(token.delegate, token.mint, a.hash), EMPTY);
      if (a.ataOwner && !a.spent) this.put('tokByAtaOwner', cat(a.ataOwner, token.mint, a.hash), EMPTY);
      this.addTokenBalance(token.owner, token.mint, token.amount);
    }
    return true;
  }

  /**
   * Points the address index at account `a` (by hash) when that account exists and is unspent; no-op
   * otherwise. Run for a batch's outputs after its spends: an address that moves from account to
   * account within one batch then ends on the live one, whatever order the batch's transactions were
   * applied in (`insertAccount` writes the index as each output comes, `spendAccount` clears it).
   */
  relinkAddress(a: Pick<AccountRecord, 'hash' | 'address'>): void {
    if (!a.address) return;
    const raw = this.get('accounts', a.hash);
    if (!raw || isSpentRecord(raw)) return;
    const cur = this.get('accByAddress', a.address);
    if (!cur || Buffer.compare(cur, a.hash) !== 0) this.put('accByAddress', a.address, a.hash);
  }

  /**
   * Marks an existing unspent account spent, removes it from the unspent indexes and subtracts its
   * balances. Returns the account as it was, or undefined when it is unknown or already spent.
   */
  spendAccount(hash: Bytes32, token: (a: AccountRecord) => { owner: Bytes32; mint: Bytes32; delegate: Bytes32 | null; amount: bigint } | null): AccountRecord | undefined {
    const raw = this.get('accounts', hash);
    if (!raw) return undefined;
    const a = decodeAccount(Buffer.from(hash), raw);
    if (a.spent) return undefined;
    this.put('accounts', hash, withSpent(raw, true));
    this.del('accByOwner', cat(a.owner, u32be(a.leafIndex), a.hash));
    if (a.address) {
      const cur = this.get('accByAddress', a.address);
      if (cur && Buffer.compare(cur, a.hash) === 0) this.del('accByAddress', a.address);
    }
    this.addBalance(a.owner, -a.lamports);
    const t = token(a);
    if (t) {
      this.del('tokByOwner', cat(t.owner, t.mint, a.hash));
      if (t.delegate) this.del('tokByDelegate', cat(t.delegate, t.mint, a.hash));
      if (a.ataOwner) this.del('tokByAtaOwner', cat(a.ataOwner, t.mint, a.hash));
      this.addTokenBalance(t.owner, t.mint, -t.amount);
    }
    return a;
  }

  private addBalance(owner: Bytes32, delta: bigint): void {
    if (delta === 0n) return;
    this.put('balance', owner, encodeU128(decodeU128(this.get('balance', owner)) + delta));
  }

  private addTokenBalance(owner: Bytes32, mint: Bytes32, delta: bigint): void {
    const key = cat(owner, mint);
    // Photon drops zero changes (photon.md §2.3: net-zero changes are skipped): a zero-amount output
    // makes no row.
    if (delta === 0n) return;
    const existing = this.get('tokenBalance', key);
    const old = decodeU128(existing);
    const next = old + delta;
    if (next < 0n) throw new Error(`token balance of ${base58.encode(owner)} for mint ${base58.encode(mint)} would become negative (${next})`);
    this.put('tokenBalance', key, encodeU128(next));
    if (existing) this.del('holdersByBalance', holderKey(mint, old, owner));
    this.put('holdersByBalance', holderKey(mint, next, owner), EMPTY);
  }

  /**
   * Inserts a transaction (ON CONFLICT DO NOTHING) and its slot indexes. Returns true when new.
   * Non-compression transactions beyond the newest `keepPlain` are pruned (photon.md §2.3 step 7).
   */
  insertTransaction(t: TransactionRecord, keepPlain: number): boolean {
    const sig = signatureBytes(t.signature);
    if (this.get('txs', sig)) return false;
    this.put('txs', sig, encodeTransaction(t));
    const pos = cat(u64be(t.slot), sig);
    this.put('txsBySlot', pos, Buffer.from([t.usesCompression ? 1 : 0]));
    if (t.usesCompression) this.put('compTxsBySlot', pos, EMPTY);
    else {
      this.put('plainTxsBySlot', pos, EMPTY);
      this.prunePlainTransactions(keepPlain);
    }
    return true;
  }

  private prunePlainTransactions(keep: number): void {
    const countKey = Buffer.from('plainTxCount');
    const raw = this.get('meta', countKey);
    let count = (raw ? raw.readUInt32LE(0) : 0) + 1;
    while (count > keep) {
      let oldest: Buffer | undefined;
      for (const e of this.range('plainTxsBySlot', { limit: 1 })) oldest = Buffer.from(e.key);
      if (!oldest) break;
      this.del('plainTxsBySlot', oldest);
      this.del('txsBySlot', oldest);
      this.del('txs', oldest.subarray(8));
      count--;
    }
    const b = Buffer.alloc(4);
    b.writeUInt32LE(count, 0);
    this.put('meta', countKey, b);
  }

  /**
   * Links a signature to an account (account_transactions) and fills the derived signature indexes of the
   * account's owner, token owner and address.
   */
  linkAccountTransaction(a: AccountRecord, tokenOwner: Bytes32 | null, signature: string, slot: number): void {
    const sig = signatureBytes(signature);
    this.put('accountTxs', cat(a.hash, sig), EMPTY);
    const pos = cat(u64be(slot), sig);
    this.put('sigsByOwner', cat(a.owner, pos), EMPTY);
    if (tokenOwner) this.put('sigsByTokenOwner', cat(tokenOwner, pos), EMPTY);
    if (a.address) this.put('sigsByAddress', cat(a.address, pos), EMPTY);
  }

  /** Writes a tree node (state or address tree) at 1-based heap index `nodeIndex`. */
  putNode(tree: Bytes32, nodeIndex: bigint, node: NodeRecord): void {
    this.put('nodes', cat(tree, u64be(nodeIndex)), encodeNode(node));
  }

  /** Upserts an indexed element and its value index. */
  putIndexedElement(tree: Bytes32, e: IndexedElementRecord): void {
    const prev = this.indexedElement(tree, e.leafIndex);
    if (prev && Buffer.compare(Buffer.from(prev.value), Buffer.from(e.value)) !== 0) this.del('indexedValues', cat(tree, prev.value));
    this.put('indexedElements', cat(tree, u64be(e.leafIndex)), encodeIndexedElement(e));
    this.put('indexedValues', cat(tree, e.value), u64be(e.leafIndex));
  }

  /** Records why a transaction was rejected (kept for operators; idempotent). */
  putRejection(signature: string, reason: string): void {
    this.put('rejected', signatureBytes(signature), Buffer.from(reason, 'utf8'));
  }

  /** Rewrites an existing account record (queue-state changes of a StateV2 account; indexes unchanged). */
  putAccountRecord(a: AccountRecord): void {
    this.put('accounts', a.hash, encodeAccount(a));
  }

  /** Puts a StateV2 account's leaf index into its tree's output queue index. */
  putOutputQueue(tree: Bytes32, leafIndex: number, hash: Bytes32): void {
    this.put('outputQueue', cat(tree, u32be(leafIndex)), hash);
  }

  /** Removes a leaf index from a tree's output queue index. */
  deleteOutputQueue(tree: Bytes32, leafIndex: number): void {
    this.del('outputQueue', cat(tree, u32be(leafIndex)));
  }

  /** Puts a spent StateV2 account into its tree's input queue index. */
  putInputQueue(tree: Bytes32, queueIndex: bigint, hash: Bytes32): void {
    this.put('inputQueue', cat(tree, u64be(queueIndex)), hash);
  }

  /** Removes a queue index from a tree's input queue index. */
  deleteInputQueue(tree: Bytes32, queueIndex: bigint): void {
    this.del('inputQueue', cat(tree, u64be(queueIndex)));
  }

  /** Queues an address (ON CONFLICT(address) DO NOTHING). Returns false when the address is already queued. */
  putQueuedAddress(tree: Bytes32, queueIndex: bigint, address: Bytes32): boolean {
    if (this.get('addressQueued', address)) return false;
    this.put('addressQueued', address, cat(tree, u64be(queueIndex)));
    this.put('addressQueue', cat(tree, u64be(queueIndex)), address);
    return true;
  }

  /** Removes an address from its queue. */
  deleteQueuedAddress(tree: Bytes32, queueIndex: bigint, address: Bytes32): void {
    this.del('addressQueue', cat(tree, u64be(queueIndex)));
    const v = this.get('addressQueued', address);
    if (v && Buffer.compare(v, cat(tree, u64be(queueIndex))) === 0) this.del('addressQueued', address);
  }

  /** Records the last batch event applied to a batched tree. */
  putBatchTree(tree: Bytes32, r: BatchTreeRecord): void {
    this.put('batchTrees', tree, encodeBatchTree(r));
  }

  /** Holds a batch event back (sequence gap) until the missing ones arrive. */
  putPendingBatchEvent(r: PendingBatchEventRecord): void {
    this.put('pendingBatchEvents', cat(r.event.merkleTreePubkey, u64be(r.event.sequenceNumber)), encodePendingBatchEvent(r));
  }

  /** Drops a held-back batch event. */
  deletePendingBatchEvent(tree: Bytes32, sequenceNumber: bigint): void {
    this.del('pendingBatchEvents', cat(tree, u64be(sequenceNumber)));
  }
}


/** A read transaction handed out by `Store.readShared`, with its view and users. */
interface SharedSnapshot {
  txn: Transaction;
  view: ReadView;
  /** `readShared` calls (or their promises) still using it. */
  users: number;
  /** No longer handed out; the transaction ends when `users` drops to 0. */
  released: boolean;
}

/** Thrown when the store on disk was written by an incompatible schema version. */
export class SchemaMismatchError extends Error {}

/**
 * An opened LMDB environment. Throws SchemaMismatchError when the store's schema version differs
 * from SCHEMA_VERSION.
 */
export class Store {
  readonly root: RootDatabase;
  private readonly dbs: Record<DbName, Bin>;
  private readonly onWrite: RecordedWriteListener | undefined;

  constructor(opts: StoreOptions) {
    this.root = open({
      path: opts.path,
      // `--db` is always a directory: lmdb-js would otherwise take a path with a dot in its last
      // component (`/tmp/tmp.Ab3x`, `./data.v2`) for a single-file store and fail to open it.
      noSubdir: false,
      maxDbs: DB_NAMES.length + 2,
      mapSize: opts.mapSize ?? 64 * 1024 ** 3,
      readOnly: opts.readOnly ?? false,
      keyEncoding: 'binary',
      encoding: 'binary',
      useWritemap: !(opts.readOnly ?? false) && (opts.writemap ?? true),
    } as never);
    this.onWrite = opts.onWrite;
    this.dbs = Object.fromEntries(
      DB_NAMES.map((name) => [name, this.root.openDB({ name, keyEncoding: 'binary', encoding: 'binary' } as never) as unknown as Bin]),
    ) as Record<DbName, Bin>;
    const version = this.read((r) => r.schemaVersion());
    if (version === undefined) {
      if (!opts.readOnly) this.write((w) => w.setSchemaVersion(SCHEMA_VERSION));
    } else if (version !== SCHEMA_VERSION) {
      throw new SchemaMismatchError(`store at ${opts.path} has schema version ${version}; this Refract needs ${SCHEMA_VERSION}. Re-index into a new --db directory.`);
    }
  }

  /** Runs `fn` with a view pinned to one read transaction (a consistent snapshot). */
  read<T>(fn: (r: ReadView) => T): T {
    const txn = this.root.useReadTransaction();
    try {
      return fn(new ReadView(this.dbs, txn));
    } finally {
      txn.done();
    }
  }

  /**
   * Like `read`, for asynchronous work: the read transaction stays pinned (one consistent snapshot)
   * until the promise `fn` returns settles. Keep `fn` short and free of slow I/O: a pinned reader
   * holds an LMDB reader slot and keeps old pages from being reused while it lives.
   */
  async readAsync<T>(fn: (r: ReadView) => Promise<T> | T): Promise<T> {
    const txn = this.root.useReadTransaction();
    try {
      return await fn(new ReadView(this.dbs, txn));
    } finally {
      txn.done();
    }
  }

  /** Runs `fn` inside one synchronous LMDB write transaction: all of it commits, or (on throw) none. */
  write<T>(fn: (w: WriteView) => T): T {
    try {
      return this.root.transactionSync(() => fn(new WriteView(this.dbs, this.onWrite)));
    } finally {
      // Later shared reads must see this write.
      this.releaseShared();
    }
  }

  /**
   * Applies `writes` (as recorded through {@link StoreOptions.onWrite}) in one write transaction,
   * in order, with nothing else: the store's own cost of those writes (bench:ingest). Keys and
   * values go in as recorded; no record is checked. Throws Error naming an unknown sub-database.
   */
  applyRecordedWrites(writes: readonly RecordedWrite[]): void {
    for (const w of writes) if (!Object.hasOwn(this.dbs, w.db)) throw new Error(`unknown sub-database ${w.db}`);
    this.write(() => {
      for (const w of writes) {
        const db = this.dbs[w.db as DbName];
        if (w.value) void db.put(w.key as Buffer, w.value as Buffer);
        else void db.remove(w.key as Buffer);
      }
    });
  }

  /** The snapshot shared by `readShared` calls, until `releaseShared`. */
  private shared: SharedSnapshot | null = null;
  private releaseQueued = false;
  private readonly releaseSharedCb = () => {
    this.releaseQueued = false;
    this.releaseShared();
  };

  /** Stops handing out the shared snapshot; its transaction ends when its last user is done. */
  private releaseShared(): void {
    const s = this.shared;
    if (!s) return;
    this.shared = null;
    s.released = true;
    if (s.users === 0) s.txn.done();
  }

  private unuse(s: SharedSnapshot): void {
    if (--s.users === 0 && s.released) s.txn.done();
  }

  /**
   * Like `read`, but on a read snapshot shared by every `readShared` call of the current event-loop
   * turn: one LMDB read transaction, pinned from the turn's first call until the turn ends
   * (`setImmediate`) or the next `write` of this store, whichever comes first. Meant for the API's
   * many small requests: no transaction per call, and per-snapshot memos (`ReadView.lastSlot`) are
   * read once per turn. Consistency is the same as `read` (every read of `fn` sees one snapshot);
   * freshness too: lmdb-js itself renews its shared read transaction at most once per turn, and a
   * `write` through this Store is visible to the next call; a commit from another thread or process
   * (the ingest thread's own Store) is visible from the next turn's snapshot.
   *
   * `fn` may return a promise: the snapshot then stays pinned until it settles (keep such work short:
   * a pinned reader keeps old pages from being reused). Returns what `fn` returns.
   */
  readShared<T>(fn: (r: ReadView) => T): T {
    let s = this.shared;
    if (!s) {
      const txn = this.root.useReadTransaction();
      s = this.shared = { txn, view: new ReadView(this.dbs, txn), users: 0, released: false };
      if (!this.releaseQueued) {
        this.releaseQueued = true;
        setImmediate(this.releaseSharedCb);
      }
    }
    const pinned = s;
    pinned.users++;
    let result: T;
    try {
      result = fn(pinned.view);
    } catch (err) {
      this.unuse(pinned);
      throw err;
    }
    if (result !== null && typeof (result as { then?: unknown } | undefined)?.then === 'function') {
      return (result as unknown as Promise<unknown>).then(
        (v) => {
          this.unuse(pinned);
          return v;
        },
        (err: unknown) => {
          this.unuse(pinned);
          throw err;
        },
      ) as T;
    }
    this.unuse(pinned);
    return result;
  }

  /**
   * Copies every sub-database of this store, as of ONE read transaction (consistent while other
   * threads or processes write), into a new store at `target` through LMDB's ordinary write path:
   * a fresh environment, keys appended in order (`MDB_APPEND`), committed in transactions of about
   * `COPY_TXN_BYTES` (8 MiB), yielding to the event loop between them. The result is compact (dense pages, no free pages, no write map: the data file
   * is the data's size) and is an environment LMDB itself created and wrote, so it accepts writes
   * like any store.
   *
   * Why not LMDB's own copy (`mdb_env_copy2`, lmdb-js `backup`): lmdb-js 3.x's compacting copy
   * writes an empty free-page database under the source's transaction id; the first write
   * transactions of the copy then walk lmdb-js's free-list bookkeeping off its end and abort the
   * process (`mdb.c: Assertion 'key.mv_size > 0' failed in mdb_page_alloc()`; issue #31, lmdb-js
   * issue #198), and a non-compacting copy carries every free page of the source.
   * @param target directory that must not hold a store (it is created)
   * @param onEntries hears the number of entries copied so far (after each transaction)
   * @returns entries and value bytes copied
   * @throws Error for I/O failures (disk full, permissions) or when `target` already holds a store
   */
  async copyTo(target: string, onEntries?: (entries: number) => void): Promise<{ entries: number; bytes: number }> {
    const out = new Store({ path: target, writemap: false });
    const txn = this.root.useReadTransaction();
    let entries = 0;
    let bytes = 0;
    try {
      if (out.read((r) => r.lastSlot()) !== null) throw new Error(`${target} already holds a store`);
      for (const name of DB_NAMES) {
        const it = this.dbs[name].getRange({ transaction: txn } as never)[Symbol.iterator]() as Iterator<{ key: Buffer; value: Buffer }>;
        let next = it.next();
        const dst = out.dbs[name];
        // meta's schemaVersion was written by the new store's constructor: overwrite instead of append.
        const opts = (name === 'meta' ? {} : { append: true }) as never;
        while (!next.done) {
          let txnBytes = 0;
          out.root.transactionSync(() => {
            while (!next.done && txnBytes < COPY_TXN_BYTES) {
              const { key, value } = next.value;
              void dst.put(key, value, opts);
              txnBytes += key.length + value.length + 16;
              entries++;
              next = it.next();
            }
          });
          bytes += txnBytes;
          onEntries?.(entries);
          // Let a daemon's requests run between transactions (GET /snapshot copies on the API thread).
          await new Promise((r) => setImmediate(r));
        }
      }
      return { entries, bytes };
    } finally {
      txn.done();
      await out.close();
    }
  }

  /**
   * Write probe (src/store/writeProbe.ts, run in a child process): commits write transactions that
   * allocate pages (≈2 MiB of scratch keys in `meta`), free them and allocate again, so LMDB walks
   * its free-page list as a daemon's writes will; then removes every scratch key. A store whose
   * free-page bookkeeping is broken aborts the process here (issue #31).
   * @throws Error for LMDB errors that are reported rather than aborting
   */
  writeProbe(): void {
    const key = (i: number) => Buffer.from(`writeProbe:${String(i).padStart(6, '0')}`);
    const value = Buffer.alloc(1000, 0xa5);
    for (let round = 0; round < 4; round++) {
      this.root.transactionSync(() => {
        for (let i = 0; i < 2000; i++) void this.dbs.meta.put(key(i), value);
      });
      this.root.transactionSync(() => {
        for (let i = 0; i < 2000; i++) void this.dbs.meta.remove(key(i));
      });
    }
  }

  /** Closes the environment. */
  async close(): Promise<void> {
    this.releaseShared();
    await this.root.close();
  }
}

/** Bytes of keys and values per write transaction of {@link Store.copyTo}. */
const COPY_TXN_BYTES = 8 * 1024 * 1024;
