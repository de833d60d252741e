/**
 * Shared data shapes that flow one way through Refract:
 * source (JSON) → decode (TransactionInfo) → parse (ParsedTransaction with Light events)
 * → state update → store → query → response.
 *
 * Conventions: every 32-byte value (hash, pubkey, address, field element) is a `Uint8Array`
 * of length 32 in big-endian / wire order; pubkeys that only need comparing (program ids,
 * instruction accounts, signatures) are base58 strings; u64 values are `bigint`; u32 values
 * (leaf indices) are `number`.
 */

/**
 * 32 raw bytes: a hash, a field element (big-endian, < BN254 scalar modulus) or a pubkey. Nothing
 * stops a hash from passing where a pubkey is meant: at boundaries where that mix-up matters, use
 * the branded {@link Hash} / {@link Pubkey} instead (both are still `Uint8Array`s, so they pass
 * wherever a `Bytes32` is taken).
 */
export type Bytes32 = Uint8Array;

declare const brand: unique symbol;
/** A `Uint8Array` tagged with what it holds (a compile-time brand; nothing at run time). */
type Branded<T extends string> = Uint8Array & { readonly [brand]: T };

/**
 * 32 bytes, big-endian: a Poseidon hash / BN254 field element (account hash, root, nullifier,
 * data hash). The reference's `Hash`. Make one with {@link asHash}.
 */
export type Hash = Branded<'Hash'>;
/**
 * 32 bytes: a Solana public key (owner, mint, delegate, tree, queue), or a compressed account's
 * address (the reference's `SerializablePubkey` serves both). Make one with {@link asPubkey}.
 */
export type Pubkey = Branded<'Pubkey'>;
/** 64 bytes: a transaction signature (the reference's `SerializableSignature`). Make one with {@link asSignature}. */
export type Signature = Branded<'Signature'>;
/**
 * A u64 amount, index or sequence number (lamports, token amounts, seq, slot counters): a `bigint`
 * in [0, 2^64), as the reference's `UnsignedInteger`. An alias (not a brand): arithmetic on it stays
 * `bigint`. Range is checked where the value is written (Borsh, LMDB codecs).
 */
export type UnsignedInteger = bigint;

/** `bytes` as a {@link Hash} (same object). @throws RangeError when it is not 32 bytes long. */
export function asHash(bytes: Uint8Array): Hash {
  if (bytes.length !== 32) throw new RangeError(`a hash is 32 bytes, got ${bytes.length}`);
  return bytes as Hash;
}

/** `bytes` as a {@link Pubkey} (same object). @throws RangeError when it is not 32 bytes long. */
export function asPubkey(bytes: Uint8Array): Pubkey {
  if (bytes.length !== 32) throw new RangeError(`a pubkey is 32 bytes, got ${bytes.length}`);
  return bytes as Pubkey;
}

/** `bytes` as a {@link Signature} (same object). @throws RangeError when it is not 64 bytes long. */
export function asSignature(bytes: Uint8Array): Signature {
  if (bytes.length !== 64) throw new RangeError(`a signature is 64 bytes, got ${bytes.length}`);
  return bytes as Signature;
}

/** One instruction with its program id and accounts resolved through the transaction's account list. */
export interface InstructionInfo {
  /** Program id, base58. */
  programId: string;
  /** Raw instruction data. */
  data: Uint8Array;
  /** Account pubkeys, base58, in instruction order. */
  accounts: string[];
}

/** An outer instruction followed by the inner instructions it invoked (meta.innerInstructions[k] with index k). */
export interface InstructionGroup {
  outer: InstructionInfo;
  inner: InstructionInfo[];
}

/** A Solana transaction reduced to what the Light parser needs. Source: getTransaction / getBlock JSON. */
export interface TransactionInfo {
  /** First signature, base58. */
  signature: string;
  /** `meta.err` serialised as a JSON string, or null when the transaction succeeded. */
  error: string | null;
  /** True when any outer instruction belongs to the vote program. */
  isVote: boolean;
  groups: InstructionGroup[];
}

/** Block metadata (photon.md §1.1): slot, parent slot, time, height, hashes (the store's block record). */
export interface BlockHeader {
  slot: number;
  parentSlot: number;
  /** Unix seconds; 0 when unknown. */
  blockTime: number;
  blockHeight: number;
  blockhash: string;
  previousBlockhash: string;
}

/** A block (getBlock JSON, base64 transactions) or a single getTransaction file wrapped as a block. */
export interface BlockInfo extends BlockHeader {
  transactions: TransactionInfo[];
  /**
   * Transactions of the block that did not decode (absent when none), left out of `transactions`: the
   * indexer rejects each one (logged, recorded, counted) and indexes the rest of the block.
   */
  undecodable?: UndecodableTransaction[];
}

/** A transaction of a block that did not decode. */
export interface UndecodableTransaction {
  /** Position in the block's `transactions` list as the node sent it. */
  index: number;
  /** First signature (base58), when the wire bytes got that far. */
  signature: string | null;
  /** The DecodeError message, e.g. `transactions[3].meta: expected an object, got null`. */
  reason: string;
}

/** `CompressedAccountData` (Borsh): discriminator[8], data Vec<u8>, data_hash[32]. */
export interface CompressedAccountData {
  discriminator: Uint8Array;
  data: Uint8Array;
  dataHash: Bytes32;
}

/** `CompressedAccount` (Borsh): owner[32], lamports u64, address Option<[32]>, data Option<CompressedAccountData>. */
export interface CompressedAccount {
  owner: Bytes32;
  lamports: bigint;
  address: Bytes32 | null;
  data: CompressedAccountData | null;
}

/** `OutputCompressedAccountWithPackedContext`: the account and an index into `pubkeyArray`. */
export interface OutputCompressedAccount {
  compressedAccount: CompressedAccount;
  merkleTreeIndex: number;
}

/** Light's `PublicTransactionEvent` (legacy noop format; current and legacy layouts). */
export interface PublicTransactionEvent {
  inputCompressedAccountHashes: Bytes32[];
  outputCompressedAccountHashes: Bytes32[];
  outputCompressedAccounts: OutputCompressedAccount[];
  outputLeafIndices: number[];
  sequenceNumbers: { treePubkey: Bytes32; seq: bigint }[];
  relayFee: bigint | null;
  isCompress: boolean;
  compressOrDecompressLamports: bigint | null;
  pubkeyArray: Bytes32[];
  message: Uint8Array | null;
  /** Absent (empty) in the legacy layout. */
  ataOwners: { outputIndex: number; walletOwner: Bytes32 }[];
}

/** `RawIndexedElement`: value[32], next_index u64, next_value[32], index u64. */
export interface RawIndexedElement {
  value: Bytes32;
  nextIndex: bigint;
  nextValue: Bytes32;
  index: bigint;
}

/** `MerkleTreeEvent` V2 (tag 1): a forester nullified these leaves; leaf i gets seq `seq + i`. */
export interface NullifierEvent {
  tree: Bytes32;
  nullifiedLeavesIndices: bigint[];
  seq: bigint;
}

/** `MerkleTreeEvent` V3 (tag 2): indexed (address) tree updates; update k: low gets seq+2k, high seq+2k+1. */
export interface IndexedMerkleTreeEvent {
  tree: Bytes32;
  updates: {
    newLowElement: RawIndexedElement;
    newLowElementHash: Bytes32;
    newHighElement: RawIndexedElement;
    newHighElementHash: Bytes32;
  }[];
  seq: bigint;
}

/** `BatchEvent` (tags 3/4/5), decoded but not applied to v1 state. */
export interface BatchEvent {
  kind: 'batchAppend' | 'batchNullify' | 'batchAddressAppend';
  merkleTreePubkey: Bytes32;
  batchIndex: bigint;
  zkpBatchIndex: bigint;
  zkpBatchSize: bigint;
  oldNextIndex: bigint;
  newNextIndex: bigint;
  newRoot: Bytes32;
  rootIndex: number;
  sequenceNumber: bigint;
  outputQueuePubkey: Bytes32 | null;
}

/** A new address of a v2 event (`NewAddress`): the address tree it goes into and its address-queue index. */
export interface NewAddress {
  address: Bytes32;
  /** Address tree pubkey (`insert_into_queues` account `tree_index`). */
  tree: Bytes32;
  /** Index in the tree's address queue; null (u64::MAX on chain) when no address sequence number names the tree (v1 trees). */
  queueIndex: bigint | null;
}

/** A spent account entering a batched (v2) state tree's input queue (`BatchNullifyContext`). */
export interface BatchInputAccount {
  accountHash: Bytes32;
  /** Leaf index of the spent account (`insert_into_queues` nullifier entry). */
  leafIndex: number;
  /** State tree pubkey (`insert_into_queues` account `tree_index`). */
  tree: Bytes32;
  /** Poseidon(accountHash, be32(leafIndex), txHash). */
  nullifier: Bytes32;
  /** Index in the tree's input queue; null (u64::MAX on chain) when no input sequence number assigned one. */
  queueIndex: bigint | null;
}

/**
 * A Light transaction event rebuilt from instructions (light-event `BatchPublicTransactionEvent`, photon.md
 * §1.5): the light-system instruction plus its account-compression `insert_into_queues` CPI.
 */
export interface BatchPublicTransactionEvent {
  /** The classic event (inputs, outputs, leaf indices, output sequence numbers, pubkey array, ATA owners). */
  event: PublicTransactionEvent;
  /** `insert_into_queues` tx_hash (32 B). */
  txHash: Bytes32;
  newAddresses: NewAddress[];
  /** Spent accounts of batched trees (trees with an input sequence number), in nullifier order. */
  batchInputAccounts: BatchInputAccount[];
}

/** One decoded Light event of a transaction, in instruction order. */
export type LightEvent =
  | { kind: 'publicTransaction'; event: PublicTransactionEvent }
  | { kind: 'batchPublicTransaction'; event: BatchPublicTransactionEvent }
  | { kind: 'nullifier'; event: NullifierEvent }
  | { kind: 'indexedTreeUpdate'; event: IndexedMerkleTreeEvent }
  | { kind: 'batch'; event: BatchEvent };

/** The parser's output for one transaction (pure; no state consulted). */
export interface ParsedTransaction {
  signature: string;
  slot: number;
  error: string | null;
  isVote: boolean;
  /** True when any Light event was found. */
  usesCompression: boolean;
  events: LightEvent[];
}
