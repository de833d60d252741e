/**
 * Encoders for Light's instruction-based (v2) format, the inverse of parserV2's decoders: the
 * light-system `invoke` instruction, the account-compression `insert_into_queues` CPI it makes
 * (photon.md §1.5), the instruction group holding both, and the forester's Borsh `BatchEvent`
 * (`MerkleTreeEvent` tags 3/4/5, carried by a noop CPI). Used by the synthetic transaction generator
 * and tests. Pure: no state, no I/O.
 */
import { serialize, type Schema } from 'borsh';
import type { BatchEvent, Bytes32, CompressedAccount, InstructionInfo } from '../types.ts';
import { ACCOUNT_COMPRESSION_PROGRAM_ID, LIGHT_SYSTEM_PROGRAM_ID, REGISTERED_PROGRAM_PDA, SYSTEM_PROGRAM_ID } from '../light/constants.ts';
import { DISCRIMINATORS, type QueueSequenceNumber } from '../light/parserV2.ts';
import { B32, COMPRESSED_ACCOUNT } from './encodeEvents.ts';
import { TREE_TYPE_CODE, type TreeType } from '../config/trees.ts';

/** Light `TreeType` codes (config/trees.ts `TREE_TYPE_CODE`) as the u64s of `insert_into_queues` sequence-number entries. */
export const TREE_TYPE_U64 = Object.fromEntries(Object.entries(TREE_TYPE_CODE).map(([k, v]) => [k, BigInt(v)])) as Readonly<Record<TreeType, bigint>>;

/** An input of the light-system `invoke` (`PackedCompressedAccountWithMerkleContext`). */
export interface V2InvokeInput {
  account: CompressedAccount;
  /** Index of the input's tree in the light-system remaining accounts (`pubkey_array`). */
  treeIndex: number;
  /** Index of its queue in the same list. */
  queueIndex: number;
  leafIndex: number;
  /** True when the account is still in the output queue (proved by index); default false. */
  proveByIndex?: boolean;
}

/** An output: the account (for `invoke`) and its hash and leaf index (for `insert_into_queues`). */
export interface V2Output {
  account: CompressedAccount;
  /** Index of the output's tree or output queue in the light-system remaining accounts. */
  merkleTreeIndex: number;
  /** Compressed-account hash (32 bytes). */
  hash: Bytes32;
  leafIndex: number;
  /** Index of the output queue (or v1 tree) in `iiqAccounts`. */
  iiqIndex: number;
}

/** A spent account as `insert_into_queues` lists it. */
export interface V2Nullifier {
  accountHash: Bytes32;
  leafIndex: number;
  /** Indices into `iiqAccounts`: the tree, and its queue. */
  treeIndex: number;
  queueIndex: number;
  proveByIndex?: boolean;
}

/** A new address created by the transaction (light-system `new_address_params` + an `insert_into_queues` address). */
export interface V2NewAddress {
  /** The seed the address derives from (`new_address_params.seed`; not checked by the indexer). */
  seed: Bytes32;
  /** The address (32 bytes, a BN254 field element). */
  address: Bytes32;
  /** Indices of the address queue and the address tree in the light-system remaining accounts (AddressV2: the same account). */
  remainingQueueIndex: number;
  remainingTreeIndex: number;
  /** Indices of the address tree and its queue in `iiqAccounts`. */
  iiqTreeIndex: number;
  iiqQueueIndex: number;
}

/** One light transaction in the instruction-based format (one light-system `invoke` + its `insert_into_queues`). */
export interface V2LightTransaction {
  /** Transaction hash (32 bytes, a BN254 field element: first byte 0); the nullifiers are Poseidon(hash, leaf, txHash). */
  txHash: Bytes32;
  /** Light-system remaining accounts (the event's `pubkey_array`), base58. */
  remaining: string[];
  inputs: V2InvokeInput[];
  outputs: V2Output[];
  /** `insert_into_queues` accounts after the authority and the registered-program PDA, base58. */
  iiqAccounts: string[];
  nullifiers: V2Nullifier[];
  /** Output-queue sequence numbers: per output queue, the leaf index of its first output here. */
  outputSeqs: QueueSequenceNumber[];
  /** Input-queue sequence numbers: per batched tree, the input-queue index of its first spend here. */
  inputSeqs: QueueSequenceNumber[];
  /** New addresses; default none. */
  newAddresses?: V2NewAddress[];
  /** Address-queue sequence numbers: per batched address tree, the queue index of its first new address here. */
  addressSeqs?: QueueSequenceNumber[];
  /** Lamports compressed (isCompress) or decompressed; default none. */
  compressOrDecompressLamports?: bigint | null;
  isCompress?: boolean;
}

const OUTPUT: Schema = { struct: { compressedAccount: COMPRESSED_ACCOUNT, merkleTreeIndex: 'u8' } };
/** `InstructionDataInvoke` (photon.md §1.5 step 4). */
const INVOKE: Schema = {
  struct: {
    proof: { option: { array: { type: 'u8', len: 128 } } },
    inputs: {
      array: {
        type: {
          struct: {
            compressedAccount: COMPRESSED_ACCOUNT,
            merkleContext: { struct: { merkleTreePubkeyIndex: 'u8', queuePubkeyIndex: 'u8', leafIndex: 'u32', proveByIndex: 'bool' } },
            rootIndex: 'u16',
            readOnly: 'bool',
          },
        },
      },
    },
    outputs: { array: { type: OUTPUT } },
    relayFee: { option: 'u64' },
    newAddressParams: { array: { type: { struct: { seed: B32, aq: 'u8', amt: 'u8', root: 'u16' } } } },
    compressOrDecompressLamports: { option: 'u64' },
    isCompress: 'bool',
  },
};
const BATCH_EVENT: Schema = {
  struct: {
    merkleTreePubkey: B32,
    batchIndex: 'u64',
    zkpBatchIndex: 'u64',
    zkpBatchSize: 'u64',
    oldNextIndex: 'u64',
    newNextIndex: 'u64',
    newRoot: B32,
    rootIndex: 'u32',
    sequenceNumber: 'u64',
    outputQueuePubkey: { option: B32 },
  },
};
const BATCH_TAG = { batchAppend: 3, batchNullify: 4, batchAddressAppend: 5 } as const;

const u8 = (n: number, field: string) => {
  if (!Number.isInteger(n) || n < 0 || n > 255) throw new RangeError(`${field}: ${n} does not fit a u8`);
  return Buffer.from([n]);
};
const u32le = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
const u64le = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return b;
};
const b32 = (b: Uint8Array, field: string) => {
  if (b.length !== 32) throw new RangeError(`${field}: ${b.length} bytes, need 32`);
  return Buffer.from(b.buffer, b.byteOffset, b.length);
};
const ZERO_SEQ: QueueSequenceNumber = { tree: new Uint8Array(32), queue: new Uint8Array(32), treeType: 0n, seq: 0n };
const seqBytes = (s: QueueSequenceNumber, f: string) => Buffer.concat([b32(s.tree, `${f}.tree`), b32(s.queue, `${f}.queue`), u64le(s.treeType), u64le(s.seq)]);
const slice = (items: Buffer[], field: string) => Buffer.concat([u8(items.length, `${field}.len`), ...items]);

/**
 * `insert_into_queues` instruction data (§1.5 step 3): 8-byte discriminator, u32 LE body length, then
 * meta (38 B: invoked-by-program, bump, queue counts, tx hash), leaves (33 B), nullifiers (39 B),
 * addresses (34 B: address, tree index, queue index), the three sequence-number slices (80 B each; each
 * padded with one empty entry, as on chain where they are sized to capacity), output leaf indices (u32),
 * and an empty Borsh Vec of CPI-context outputs.
 * @throws RangeError when a count or index does not fit its u8, or a key is not 32 bytes.
 */
export function encodeInsertIntoQueues(t: V2LightTransaction): Buffer {
  const newAddresses = t.newAddresses ?? [];
  const addressSeqs = t.addressSeqs ?? [];
  const meta = Buffer.concat([
    Buffer.from([0, 255]),
    u8(t.nullifiers.length, 'numQueues'),
    u8(t.outputSeqs.length, 'numOutputQueues'),
    Buffer.from([0]),
    u8(addressSeqs.length, 'numAddressQueues'),
    b32(t.txHash, 'txHash'),
  ]);
  const body = Buffer.concat([
    meta,
    slice(t.outputs.map((o, i) => Buffer.concat([u8(o.iiqIndex, `outputs[${i}].iiqIndex`), b32(o.hash, `outputs[${i}].hash`)])), 'leaves'),
    slice(
      t.nullifiers.map((n, i) =>
        Buffer.concat([b32(n.accountHash, `nullifiers[${i}].accountHash`), u32le(n.leafIndex), Buffer.from([n.proveByIndex ? 1 : 0]), u8(n.treeIndex, `nullifiers[${i}].treeIndex`), u8(n.queueIndex, `nullifiers[${i}].queueIndex`)]),
      ),
      'nullifiers',
    ),
    slice(
      newAddresses.map((a, i) => Buffer.concat([b32(a.address, `newAddresses[${i}].address`), u8(a.iiqTreeIndex, `newAddresses[${i}].iiqTreeIndex`), u8(a.iiqQueueIndex, `newAddresses[${i}].iiqQueueIndex`)])),
      'addresses',
    ),
    slice([...t.outputSeqs, ZERO_SEQ].map((s, i) => seqBytes(s, `outputSeqs[${i}]`)), 'outputSeqs'),
    slice([...t.inputSeqs, ZERO_SEQ].map((s, i) => seqBytes(s, `inputSeqs[${i}]`)), 'inputSeqs'),
    slice([...addressSeqs, ZERO_SEQ].map((s, i) => seqBytes(s, `addressSeqs[${i}]`)), 'addressSeqs'),
    slice(t.outputs.map((o) => u32le(o.leafIndex)), 'outputLeafIndices'),
    u32le(0), // no CPI-context outputs
  ]);
  return Buffer.concat([Buffer.from(DISCRIMINATORS.insertIntoQueues, 'hex'), u32le(body.length), body]);
}

/** Light-system `invoke` data: discriminator, u32 LE length, Borsh `InstructionDataInvoke` (no proof; root indices 0). */
export function encodeInvoke(t: V2LightTransaction): Buffer {
  const body = serialize(INVOKE, {
    proof: null,
    inputs: t.inputs.map((i) => ({
      compressedAccount: i.account,
      merkleContext: { merkleTreePubkeyIndex: i.treeIndex, queuePubkeyIndex: i.queueIndex, leafIndex: i.leafIndex, proveByIndex: i.proveByIndex ?? false },
      rootIndex: 0,
      readOnly: false,
    })),
    outputs: t.outputs.map((o) => ({ compressedAccount: o.account, merkleTreeIndex: o.merkleTreeIndex })),
    relayFee: null,
    newAddressParams: (t.newAddresses ?? []).map((a) => ({ seed: a.seed, aq: a.remainingQueueIndex, amt: a.remainingTreeIndex, root: 0 })),
    compressOrDecompressLamports: t.compressOrDecompressLamports ?? null,
    isCompress: t.isCompress ?? false,
  });
  return Buffer.concat([Buffer.from(DISCRIMINATORS.invoke, 'hex'), u32le(body.length), body]);
}

/** The 12-byte data of a Solana system transfer of `lamports` (the fee transfer between invoke and its CPI). */
export function systemTransferData(lamports: bigint): Buffer {
  return Buffer.concat([u32le(2), u64le(lamports)]);
}

/**
 * One instruction group of a v2 light transaction, as the parser sees it: outer light-system `invoke`
 * (9 system accounts, shown as the system program, then `remaining`); inner a Solana system transfer and
 * the ACP `insert_into_queues` (accounts: authority, registered-program PDA, then `iiqAccounts`).
 */
export function v2InstructionGroup(t: V2LightTransaction): { outer: InstructionInfo; inner: InstructionInfo[] } {
  return {
    outer: { programId: LIGHT_SYSTEM_PROGRAM_ID, data: encodeInvoke(t), accounts: [...Array<string>(9).fill(SYSTEM_PROGRAM_ID), ...t.remaining] },
    inner: [
      { programId: SYSTEM_PROGRAM_ID, data: systemTransferData(5000n), accounts: [SYSTEM_PROGRAM_ID, SYSTEM_PROGRAM_ID] },
      { programId: ACCOUNT_COMPRESSION_PROGRAM_ID, data: encodeInsertIntoQueues(t), accounts: [SYSTEM_PROGRAM_ID, REGISTERED_PROGRAM_PDA, ...t.iiqAccounts] },
    ],
  };
}

/**
 * Borsh bytes of a forester `MerkleTreeEvent` batch variant: tag 3 BatchAppend, 4 BatchNullify, 5
 * BatchAddressAppend, then `BatchEvent` (118 bytes with the tag, 150 with an output queue).
 */
export function encodeBatchEvent(e: BatchEvent): Uint8Array {
  const { kind, ...fields } = e;
  return Buffer.concat([Buffer.from([BATCH_TAG[kind]]), serialize(BATCH_EVENT, fields)]);
}
