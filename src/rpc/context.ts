/**
 * What the JSON-RPC methods need from the rest of Refract, declared as interfaces so that the
 * HTTP layer stays independent of the store, the Solana client and the prover.
 *
 * Conventions (same as src/types.ts): 32-byte values (hashes, pubkeys, addresses, roots) are
 * `Uint8Array(32)` in big-endian / wire order; transaction signatures are `Uint8Array(64)`;
 * u64 values are `bigint`; u32 values (leaf indices, root indices) are `number`.
 *
 * Every data-source function may return a value or a promise (LMDB reads are synchronous).
 * It may throw an `RpcError` (src/rpc/errors.ts) for a domain failure the caller can act on
 * (e.g. `RpcError.validation('Address … already exists')`) or a src/query `QueryError` (mapped by
 * shape in errors.ts); any other thrown value is logged and answered as `Internal server error`.
 *
 * Semantics follow Photon (shared/spec/photon.md §3.1); the method that uses each function is named.
 */
import type { AddressQueueSlice, QueueElementsRequest, QueueSize, StateQueueSlice } from '../query/queueElements.ts';
import type { Bytes32, Hash, Pubkey } from '../types.ts';
import type { SlotWatcher } from './slotWatcher.ts';

/** A value or a promise of it. */
export type Awaitable<T> = T | Promise<T>;

/** Whether `v` is a promise (anything with a `then` method) rather than a plain value. */
export function isThenable(v: unknown): v is Promise<unknown> {
  return v !== null && typeof (v as { then?: unknown } | undefined)?.then === 'function';
}

/** Light tree types (u64 on chain): StateV1=1, AddressV1=2, StateV2=3, AddressV2=4. */
export type TreeType = 1 | 2 | 3 | 4;

/** A tree as the API shows it (`merkleContext` / `treeContext` / `merkleTree`). */
export interface TreeRef {
  tree: Bytes32;
  /** Nullifier queue for V1 state trees, output queue for V2 state trees, the tree itself for AddressV2. */
  queue: Bytes32;
  treeType: TreeType;
  /** Photon always sends null; kept for completeness. */
  cpiContext?: Bytes32 | null;
}

/** A tree's metadata (Photon `tree_metadata`). */
export interface TreeInfoRecord extends TreeRef {
  /** Depth: 26 (V1), 32 (StateV2), 40 (AddressV2). */
  height: number;
  rootHistoryCapacity: number;
}

/**
 * A compressed account as the API shows it (Photon's `Account` / `AccountV2`): the `accounts` row
 * joined with its tree's {@link TreeRef}. Not the stored record (`AccountRecord`, src/store/records.ts),
 * which the data source reads and turns into this.
 */
export interface AccountView {
  hash: Bytes32;
  address: Bytes32 | null;
  /** All three present or the whole object null. `discriminator` is the 8 bytes read as u64 LE. */
  data: { discriminator: bigint; data: Uint8Array; dataHash: Bytes32 } | null;
  owner: Bytes32;
  lamports: bigint;
  leafIndex: number;
  /** V1 trees: the event sequence number; V2: always null. */
  seq: bigint | null;
  slotCreated: bigint;
  /** The account's tree (never the queue). */
  treeInfo: TreeRef;
  /** V2 accounts still in the output queue (`in_output_queue`); shown as `proveByIndex`. */
  inOutputQueue: boolean;
}

/** Token data of a compressed token account (Photon `token_accounts`). */
export interface TokenDataRecord {
  mint: Bytes32;
  owner: Bytes32;
  amount: bigint;
  delegate: Bytes32 | null;
  state: 'initialized' | 'frozen';
  /** Raw TLV bytes, or null. */
  tlv: Uint8Array | null;
}

/** A token account: the account row joined with its token data. */
export interface TokenAccountRecord {
  account: AccountView;
  tokenData: TokenDataRecord;
}

/** A Merkle inclusion proof for one leaf (photon.md §2.5). */
export interface MerkleProofRecord {
  hash: Bytes32;
  leafIndex: number;
  treeInfo: TreeRef;
  /** Siblings from the leaf up, excluding the root (26 for V1 trees). */
  proof: Bytes32[];
  root: Bytes32;
  /** seq of the root node (0 when missing). */
  rootSeq: bigint;
  /** True for V2 accounts still in the output queue (only from `getMerkleProofsV2`). */
  proveByIndex: boolean;
}

/** A non-inclusion (new address) proof: the low element of the indexed tree and its path (§2.6). */
export interface NewAddressProofRecord {
  address: Bytes32;
  tree: Bytes32;
  root: Bytes32;
  rootSeq: bigint;
  proof: Bytes32[];
  lowElementLeafIndex: number;
  /** low.value */
  lowerRangeAddress: Bytes32;
  /** low.next_value */
  higherRangeAddress: Bytes32;
  /** low.next_index */
  nextIndex: number;
}

/** One transaction in a signature listing. */
export interface SignatureRecord {
  /** 64 bytes. */
  signature: Uint8Array;
  slot: bigint;
  /** Unix seconds of the block at `slot`. */
  blockTime: bigint;
  /** `meta.err` as a string, or null. */
  error: string | null;
}

/** Which transactions to list (photon.md §3.1, signature methods). */
export type SignatureFilter =
  /** through account_transactions.hash */
  | { kind: 'account'; hash: Bytes32 }
  /** accounts (spent or not) whose address is this */
  | { kind: 'address'; address: Bytes32 }
  /** accounts (spent or not) whose owner is this */
  | { kind: 'owner'; owner: Bytes32 }
  /** token accounts (spent or not) whose token owner is this */
  | { kind: 'tokenOwner'; owner: Bytes32 }
  /** all stored transactions; `compressionOnly` keeps those with `uses_compression` */
  | { kind: 'latest'; compressionOnly: boolean };

/** A memcmp filter on account data: `data[offset .. offset + bytes.length] == bytes`. */
export interface MemcmpFilter {
  offset: number;
  bytes: Uint8Array;
}

/** A token-owner balance row (`token_owner_balances`). */
export interface TokenBalanceRecord {
  mint: Bytes32;
  balance: bigint;
}

/** A holder of a mint (`token_owner_balances` by mint). */
export interface MintHolderRecord {
  owner: Bytes32;
  balance: bigint;
}

/** The compression info of one transaction (getTransactionWithCompressionInfo). */
export interface TransactionCompressionInfoRecord {
  /**
   * The Solana `getTransaction` result (base64 encoding) to return verbatim. Either a parsed JSON
   * value or `rawJson(text)` from src/rpc/exactJson.ts to pass the original text through byte for byte
   * (keeps integers above 2^53 exact).
   */
  transaction: unknown;
  /**
   * Input accounts (spent rows). `nullifier`/`txHash`: what a batched (StateV2) tree's input queue
   * holds for the account (nullifier = Poseidon(hash, leafIndex BE32, txHash)); null for V1 trees
   * (V2 shows null as 1111…1111).
   */
  closedAccounts: {
    account: AccountView;
    tokenData: TokenDataRecord | null;
    nullifier: Bytes32 | null;
    txHash: Bytes32 | null;
  }[];
  /** Output accounts as parsed from the transaction (slotCreated = the transaction's slot). */
  openedAccounts: { account: AccountView; tokenData: TokenDataRecord | null }[];
}

/**
 * Read access to indexed state. The lead implements this on the LMDB store. "Unspent" means
 * `spent == false`. Ordering and cursor semantics are Photon's and are stated per function.
 */
export interface RpcDataSource {
  /**
   * Optional. Runs `fn` with a view of this data source whose every read comes from ONE consistent
   * snapshot of the indexed state (LmdbDataSource: one pinned LMDB read transaction), so that
   * `context.slot` and the data of a response agree while blocks are being indexed. The dispatcher
   * wraps each method handler in it (src/rpc/dispatch.ts) unless the method opts out
   * (`MethodDefinition.snapshot: false`, for handlers that wait on Solana or the prover).
   * `fn` may return a value or a promise; `snapshot` returns the same (a synchronous `fn` runs and
   * returns synchronously, with no promise on the way). The view must not be used after `fn`
   * returns, or after its promise settles. Sources without it are read call by call.
   */
  snapshot?<T>(fn: (view: RpcDataSource) => T): T;

  /** MAX(blocks.slot), or null when nothing has been indexed. Every `context.slot` comes from here. */
  getIndexedSlot(): Awaitable<bigint | null>;

  /** Metadata of the tree whose tree **or queue** pubkey is `pubkey`, or null if unknown. */
  getTreeInfo(pubkey: Bytes32): Awaitable<TreeInfoRecord | null>;

  /** The unspent account with this hash, or null (getCompressedAccount, getMultipleCompressedAccounts, balances). */
  getAccountByHash(hash: Hash): Awaitable<AccountView | null>;

  /** The unspent account with this address, or null. */
  getAccountByAddress(address: Pubkey): Awaitable<AccountView | null>;

  /**
   * Unspent accounts of `owner` matching every memcmp filter, ordered by (leafIndex ASC, hash ASC)
   * (Photon's order), at most `limit` (getCompressedAccountsByOwner).
   * `cursor` is the hash of the last item of the previous page (the cursor text stays Photon's). Photon
   * filters `hash > cursor`, which against a leaf-index order skips and repeats items; here the page
   * instead starts strictly after the cursor account's position (leafIndex, hash), looked up by hash
   * (account rows are never deleted, so this works even if it was spent since). Only a hash that is
   * not a known account falls back to Photon's `hash > cursor` filter.
   */
  listAccountsByOwner(
    owner: Pubkey,
    page: { filters: MemcmpFilter[]; cursor: Bytes32 | null; limit: number },
  ): Awaitable<AccountView[]>;

  /** Sum of unspent lamports of `owner` (`owner_balances`), 0n when none. */
  getOwnerBalance(owner: Pubkey): Awaitable<bigint>;

  /** The unspent token account with this hash, or null (getCompressedTokenAccountBalance). */
  getTokenAccountByHash(hash: Hash): Awaitable<TokenAccountRecord | null>;

  /**
   * Unspent token accounts whose token owner (or delegate) is the given key, optionally of one mint,
   * ordered by (mint ASC, hash ASC) on raw bytes, at most `limit`.
   * Cursor: with `mint` set, `hash > after.hash`; without, `(mint, hash) > (after.mint, after.hash)`.
   */
  listTokenAccounts(
    by: { owner: Pubkey } | { delegate: Pubkey },
    page: { mint: Bytes32 | null; after: { mint: Bytes32; hash: Bytes32 } | null; limit: number },
  ): Awaitable<TokenAccountRecord[]>;

  /**
   * Token balances of `owner` per mint (`token_owner_balances`, zero rows included), ordered by mint
   * ASC, at most `limit`. `afterMint` (mint > afterMint) is applied only when `mint` is null.
   */
  listTokenBalances(
    owner: Pubkey,
    page: { mint: Bytes32 | null; afterMint: Bytes32 | null; limit: number },
  ): Awaitable<TokenBalanceRecord[]>;

  /**
   * Holders of `mint`, ordered by (balance DESC, owner ASC), at most `limit`; with `after`, only rows
   * with `balance < after.balance OR (balance == after.balance AND owner > after.owner)`.
   */
  listMintHolders(
    mint: Pubkey,
    page: { after: { balance: bigint; owner: Bytes32 } | null; limit: number },
  ): Awaitable<MintHolderRecord[]>;

  /**
   * Proofs for leaves present in the state trees (V1 semantics, no spent check), one entry per
   * requested hash in request order, null where the hash has no leaf (including V2 accounts still
   * in the output queue). Use the height of the first found proof's tree for all (Photon quirk).
   */
  getMerkleProofs(hashes: Hash[]): Awaitable<(MerkleProofRecord | null)[]>;

  /**
   * Like `getMerkleProofs` but V2 semantics: an account still in a V2 output queue is found and
   * gets `proveByIndex: true`, with either a real path for its leaf index (`queued: 'path'`,
   * leaf 0^32 where empty; getCompressedAccountProofV2) or `proof: []`, root 0^32, rootSeq 0
   * (`queued: 'empty'`; getMultipleCompressedAccountProofsV2). Null for unknown hashes.
   */
  getMerkleProofsV2(hashes: Hash[], opts: { queued: 'path' | 'empty' }): Awaitable<(MerkleProofRecord | null)[]>;

  /**
   * Non-inclusion proofs in request order (§2.6). The trees are known (the method checked them with
   * `getTreeInfo`). Throws `RpcError.validation('Address {a} already exists')` (base58, the first
   * such address in request order) for an address that already exists: an element of its requested
   * address tree (V1, or V2 after its BatchAddressAppend) or waiting in an AddressV2 address queue.
   * (Photon checks only the queue; for an address in the tree it answers a range no circuit accepts.)
   */
  getNewAddressProofs(items: { address: Bytes32; tree: Bytes32 }[]): Awaitable<NewAddressProofRecord[]>;

  /**
   * Transactions matching `filter`, ordered by (slot DESC, signature DESC), at most `limit`;
   * with `before`, only `slot < before.slot OR (slot == before.slot AND signature < before.signature)`.
   * Transactions whose slot has no block row are left out (Photon quirk).
   */
  listSignatures(
    filter: SignatureFilter,
    page: { before: { slot: bigint; signature: Uint8Array } | null; limit: number },
  ): Awaitable<SignatureRecord[]>;

  /**
   * Fetch the transaction from Solana (`getTransaction`, base64, confirmed, maxSupportedTransactionVersion 1),
   * re-parse it at its own slot and look up its closed accounts (getTransactionWithCompressionInfo).
   * Returns null when Solana does not know the signature; may throw `RpcError.notFound('Account not found')`.
   */
  getTransactionWithCompressionInfo(signature: string): Awaitable<TransactionCompressionInfoRecord | null>;

  /**
   * Optional (sources without it do not serve getQueueElements). The requested queue slices of the
   * batched tree `tree` (src/query/queueElements.ts `getQueueElements`). Throws QueryError
   * `Validation` for a tree that is not indexed or of the wrong type, limits above the maximum, or a
   * start index before the first queued element.
   */
  getQueueElements?(tree: Pubkey, request: QueueElementsRequest): Awaitable<{ stateQueue?: StateQueueSlice; addressQueue?: AddressQueueSlice }>;

  /**
   * Optional (sources without it do not serve getQueueInfo). Queue sizes of the batched (V2) trees,
   * all of them (`trees` null) or the given ones in request order. Throws QueryError `Validation` for
   * a pubkey that is not an indexed tree or is a V1 tree.
   */
  getQueueInfo?(trees: Pubkey[] | null): Awaitable<QueueSize[]>;
}

/** A new address to prove, with the address tree it goes into. */
export interface AddressWithTree {
  address: Bytes32;
  tree: Bytes32;
}

/** Input of a validity proof (hashes of existing accounts, new addresses). */
export interface ValidityProofRequest {
  hashes: Bytes32[];
  newAddresses: AddressWithTree[];
}

/** A validity proof and the public inputs the client needs (photon.md §3.1 getValidityProof*). */
export interface ValidityProofRecord {
  /** a: 32 bytes, b: 64 bytes, c: 32 bytes (compressed points); null when the prover was not called (V2). */
  compressedProof: { a: Uint8Array; b: Uint8Array; c: Uint8Array } | null;
  /** Set only when the proof was made with Refract's own circuits while Light's keys are in use (`--own-circuits`): it does not verify on chain. Answered as `warning`. */
  warning?: string;
  /** In request order. */
  accounts: {
    hash: Bytes32;
    root: Bytes32;
    /** rootSeq % rootHistoryCapacity of the account's tree (0 when proveByIndex). */
    rootIndex: number;
    proveByIndex: boolean;
    leafIndex: number;
    treeInfo: TreeRef;
  }[];
  /** In request order. */
  addresses: {
    address: Bytes32;
    root: Bytes32;
    rootIndex: number;
    lowElementLeafIndex: number;
    treeInfo: TreeRef;
  }[];
}

/** The validity-proof service (src/prover). Absent until the prover lands: the methods answer "prover not available". */
export interface ValidityProver {
  /**
   * Build the proof. `mode` 'v1' = getValidityProof (no spent check), 'v2' = getValidityProofV2
   * (hashes must exist and be unspent; output-queue accounts are proved by index, not by the prover).
   * Throws `RpcError` for unsupported shapes or missing records.
   */
  getValidityProof(request: ValidityProofRequest, mode: 'v1' | 'v2'): Promise<ValidityProofRecord>;
}

/** Settings the methods read. */
export interface RpcMethodConfig {
  /** getIndexerHealth fails with `Node is behind {n} slots` when the Solana slot is ahead by more than this. Default 20. */
  healthMaxSlotLag: number;
}

/** Everything a method handler receives besides its params. */
export interface RpcContext {
  data: RpcDataSource;
  /** The Solana RPC's current slot (`getSlot`, commitment confirmed), for getIndexerHealth. */
  getSolanaSlot: () => Promise<bigint | number>;
  prover?: ValidityProver;
  config: RpcMethodConfig;
  /**
   * The slot watcher `minContextSlot` requests wait on (src/rpc/slotWatcher.ts; its `maxWaitMs` is
   * the longest wait). Absent: such requests are answered at once, at their slot or with -32016.
   */
  slots?: SlotWatcher;
}

/** Default method settings. */
export const DEFAULT_METHOD_CONFIG: RpcMethodConfig = { healthMaxSlotLag: 20 };
