/**
 * Borsh decoders for the events Light programs log through the noop program (legacy v1 format,
 * spec photon.md §1.4). Layouts from light-event 0.23.1 (`sdk-libs/event/src/event.rs`) as copied
 * into Photon's `src/ingester/parser/indexer_events.rs`. Pure; all failures are `DecodeError`.
 */
import type {
  BatchEvent,
  CompressedAccount,
  CompressedAccountData,
  IndexedMerkleTreeEvent,
  LightEvent,
  NullifierEvent,
  OutputCompressedAccount,
  PublicTransactionEvent,
  RawIndexedElement,
} from '../types.ts';
import { DecodeError } from '../solana/errors.ts';
import { BorshReader } from './borsh.ts';

const PTE = 'PublicTransactionEvent';

function readCompressedAccountData(r: BorshReader): CompressedAccountData {
  const discriminator = r.fixed(8, `${PTE}.outputCompressedAccounts.compressedAccount.data.discriminator`);
  const data = r.byteVec(`${PTE}.outputCompressedAccounts.compressedAccount.data.data`);
  const dataHash = r.bytes32(`${PTE}.outputCompressedAccounts.compressedAccount.data.dataHash`);
  return { discriminator, data, dataHash };
}

function readAddress(r: BorshReader): Uint8Array {
  return r.bytes32(`${PTE}.outputCompressedAccounts.compressedAccount.address`);
}

/** `CompressedAccount` = owner[32], lamports u64, address Option<[32]>, data Option<CompressedAccountData>. */
function readCompressedAccount(r: BorshReader): CompressedAccount {
  const owner = r.bytes32(`${PTE}.outputCompressedAccounts.compressedAccount.owner`);
  const lamports = r.u64(`${PTE}.outputCompressedAccounts.compressedAccount.lamports`);
  const address = r.option(`${PTE}.outputCompressedAccounts.compressedAccount.address`, readAddress);
  const data = r.option(`${PTE}.outputCompressedAccounts.compressedAccount.data`, readCompressedAccountData);
  return { owner, lamports, address, data };
}

/** `OutputCompressedAccountWithPackedContext` = compressed_account, merkle_tree_index u8. */
function readOutput(r: BorshReader): OutputCompressedAccount {
  const compressedAccount = readCompressedAccount(r);
  const merkleTreeIndex = r.u8(`${PTE}.outputCompressedAccounts.merkleTreeIndex`);
  return { compressedAccount, merkleTreeIndex };
}

const readInputHash = (r: BorshReader) => r.bytes32(`${PTE}.inputCompressedAccountHashes`);
const readOutputHash = (r: BorshReader) => r.bytes32(`${PTE}.outputCompressedAccountHashes`);
const readLeafIndex = (r: BorshReader) => r.u32(`${PTE}.outputLeafIndices`);
const readSeq = (r: BorshReader) => ({
  treePubkey: r.bytes32(`${PTE}.sequenceNumbers.treePubkey`),
  seq: r.u64(`${PTE}.sequenceNumbers.seq`),
});
const readRelayFee = (r: BorshReader) => r.u64(`${PTE}.relayFee`);
const readLamports = (r: BorshReader) => r.u64(`${PTE}.compressOrDecompressLamports`);
const readPubkey = (r: BorshReader) => r.bytes32(`${PTE}.pubkeyArray`);
const readMessage = (r: BorshReader) => r.byteVec(`${PTE}.message`);
const readAtaOwner = (r: BorshReader) => ({
  outputIndex: r.u8(`${PTE}.ataOwners.outputIndex`),
  walletOwner: r.bytes32(`${PTE}.ataOwners.walletOwner`),
});

/**
 * Reads the fields shared by both layouts, then decides the layout without exceptions: the
 * current layout is the shared prefix plus `ata_owners: Vec<{u8, [32]}>` ending exactly at the
 * end of the data, i.e. `remaining == 4 + 33 * len`. Anything else is the legacy layout.
 */
function readPublicTransactionEvent(data: Uint8Array): PublicTransactionEvent {
  const r = new BorshReader(data);
  const inputCompressedAccountHashes = r.vec(`${PTE}.inputCompressedAccountHashes`, readInputHash, 32);
  const outputCompressedAccountHashes = r.vec(`${PTE}.outputCompressedAccountHashes`, readOutputHash, 32);
  const outputCompressedAccounts = r.vec(`${PTE}.outputCompressedAccounts`, readOutput, 43);
  const outputLeafIndices = r.vec(`${PTE}.outputLeafIndices`, readLeafIndex, 4);
  const sequenceNumbers = r.vec(`${PTE}.sequenceNumbers`, readSeq, 40);
  const relayFee = r.option(`${PTE}.relayFee`, readRelayFee);
  const isCompress = r.bool(`${PTE}.isCompress`);
  const compressOrDecompressLamports = r.option(`${PTE}.compressOrDecompressLamports`, readLamports);
  const pubkeyArray = r.vec(`${PTE}.pubkeyArray`, readPubkey, 32);
  const message = r.option(`${PTE}.message`, readMessage);
  let ataOwners: PublicTransactionEvent['ataOwners'] = [];
  const rest = r.remaining;
  if (rest >= 4) {
    const b = r.bytes;
    const o = r.offset;
    const n = (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
    if (rest === 4 + 33 * n) ataOwners = r.vec(`${PTE}.ataOwners`, readAtaOwner, 33);
  }
  return {
    inputCompressedAccountHashes,
    outputCompressedAccountHashes,
    outputCompressedAccounts,
    outputLeafIndices,
    sequenceNumbers,
    relayFee,
    isCompress,
    compressOrDecompressLamports,
    pubkeyArray,
    message,
    ataOwners,
  };
}

/**
 * Decodes the Borsh `PublicTransactionEvent` carried by a noop instruction (Photon
 * `PublicTransactionEvent::deserialize_versioned`; layout from light-event 0.23.1):
 * input_compressed_account_hashes Vec<[32]>, output_compressed_account_hashes Vec<[32]>,
 * output_compressed_accounts Vec<{CompressedAccount, merkle_tree_index u8}>, output_leaf_indices Vec<u32>,
 * sequence_numbers Vec<{tree_pubkey [32], seq u64}>, relay_fee Option<u64>, is_compress bool,
 * compress_or_decompress_lamports Option<u64>, pubkey_array Vec<[32]>, message Option<Vec<u8>>,
 * ata_owners Vec<{output_index u8, wallet_owner [32]}>; CompressedAccount = owner [32], lamports u64,
 * address Option<[32]>, data Option<{discriminator [8], data Vec<u8>, data_hash [32]}>. Integers LE.
 *
 * The current layout (with `ata_owners`) must consume every byte; otherwise the data is read with
 * the legacy layout (no `ata_owners`, `compression_lamports` in place of
 * `compress_or_decompress_lamports`; trailing bytes tolerated as borsh `deserialize` does), which
 * yields `ataOwners: []`. Byte arrays are copies; u64 → bigint.
 * @throws DecodeError(`PublicTransactionEvent.<field>`, "unexpected end of data at offset N …")
 *   when the fields common to both layouts do not decode.
 */
export function decodePublicTransactionEvent(data: Uint8Array): PublicTransactionEvent {
  try {
    return readPublicTransactionEvent(data);
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    throw new DecodeError(e.field, `${e.reason} (neither the current nor the legacy layout fits)`, {
      offset: e.offset,
      cause: e,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// MerkleTreeEvent
// ---------------------------------------------------------------------------------------------

const MTE = 'MerkleTreeEvent';

/** Tag 0, `ChangelogEvent`: decoded only to tell a real V1 event from garbage, then rejected. */
function readChangelogEvent(r: BorshReader): void {
  r.bytes32(`${MTE}.V1.id`);
  r.vec(
    `${MTE}.V1.paths`,
    (r2) =>
      r2.vec(
        `${MTE}.V1.paths[]`,
        (r3) => {
          r3.need(36, `${MTE}.V1.paths[][]`);
          r3.offset += 36;
        },
        36,
      ),
    4,
  );
  r.u64(`${MTE}.V1.seq`);
  r.u32(`${MTE}.V1.index`);
}

function readNullifierEvent(r: BorshReader): NullifierEvent {
  const tree = r.bytes32(`${MTE}.V2.id`);
  const nullifiedLeavesIndices = r.vec(`${MTE}.V2.nullifiedLeavesIndices`, (x) => x.u64(`${MTE}.V2.nullifiedLeavesIndices`), 8);
  const seq = r.u64(`${MTE}.V2.seq`);
  return { tree, nullifiedLeavesIndices, seq };
}

function readRawIndexedElement(r: BorshReader): RawIndexedElement {
  const value = r.bytes32(`${MTE}.V3.updates.element.value`);
  const nextIndex = r.u64(`${MTE}.V3.updates.element.nextIndex`);
  const nextValue = r.bytes32(`${MTE}.V3.updates.element.nextValue`);
  const index = r.u64(`${MTE}.V3.updates.element.index`);
  return { value, nextIndex, nextValue, index };
}

function readIndexedMerkleTreeEvent(r: BorshReader): IndexedMerkleTreeEvent {
  const tree = r.bytes32(`${MTE}.V3.id`);
  const updates = r.vec(
    `${MTE}.V3.updates`,
    (x) => {
      const newLowElement = readRawIndexedElement(x);
      const newLowElementHash = x.bytes32(`${MTE}.V3.updates.newLowElementHash`);
      const newHighElement = readRawIndexedElement(x);
      const newHighElementHash = x.bytes32(`${MTE}.V3.updates.newHighElementHash`);
      return { newLowElement, newLowElementHash, newHighElement, newHighElementHash };
    },
    2 * 80 + 64,
  );
  const seq = r.u64(`${MTE}.V3.seq`);
  return { tree, updates, seq };
}

const BATCH_KINDS = { 3: 'batchAppend', 4: 'batchNullify', 5: 'batchAddressAppend' } as const;

function readBatchEvent(r: BorshReader, kind: BatchEvent['kind']): BatchEvent {
  const f = `${MTE}.${kind}`;
  return {
    kind,
    merkleTreePubkey: r.bytes32(`${f}.merkleTreePubkey`),
    batchIndex: r.u64(`${f}.batchIndex`),
    zkpBatchIndex: r.u64(`${f}.zkpBatchIndex`),
    zkpBatchSize: r.u64(`${f}.zkpBatchSize`),
    oldNextIndex: r.u64(`${f}.oldNextIndex`),
    newNextIndex: r.u64(`${f}.newNextIndex`),
    newRoot: r.bytes32(`${f}.newRoot`),
    rootIndex: r.u32(`${f}.rootIndex`),
    sequenceNumber: r.u64(`${f}.sequenceNumber`),
    outputQueuePubkey: r.option(`${f}.outputQueuePubkey`, (x) => x.bytes32(`${f}.outputQueuePubkey`)),
  };
}

/**
 * Decodes a Borsh `MerkleTreeEvent` (light-event 0.23.1) from noop data, trailing bytes allowed
 * (Photon `parse_merkle_tree_event`). The u8 enum tag selects:
 * 1 `NullifierEvent` {id [32], nullified_leaves_indices Vec<u64>, seq u64} → `nullifier`;
 * 2 `IndexedMerkleTreeEvent` {id [32], updates Vec<{RawIndexedElement, hash [32], RawIndexedElement, hash [32]}>, seq u64}
 *   with RawIndexedElement {value [32], next_index u64, next_value [32], index u64} → `indexedTreeUpdate`;
 * 3/4/5 `BatchEvent` {merkle_tree_pubkey [32], batch_index, zkp_batch_index, zkp_batch_size,
 *   old_next_index, new_next_index (u64), new_root [32], root_index u32, sequence_number u64,
 *   output_queue_pubkey Option<[32]>} → `batch` (batchAppend / batchNullify / batchAddressAppend).
 * @returns null when the bytes are not a MerkleTreeEvent (empty, unknown tag, or a payload that
 *   does not decode) — Photon ignores those.
 * @throws DecodeError("Expected nullifier event or merkle tree update") for a well-formed tag-0
 *   `ChangelogEvent`, which Photon treats as a hard error.
 */
export function decodeMerkleTreeEvent(data: Uint8Array): LightEvent | null {
  if (data.length === 0) return null;
  const r = new BorshReader(data, 1);
  const tag = data[0]!;
  try {
    switch (tag) {
      case 0:
        readChangelogEvent(r);
        break; // decoded: rejected below
      case 1:
        return { kind: 'nullifier', event: readNullifierEvent(r) };
      case 2:
        return { kind: 'indexedTreeUpdate', event: readIndexedMerkleTreeEvent(r) };
      case 3:
      case 4:
      case 5:
        return { kind: 'batch', event: readBatchEvent(r, BATCH_KINDS[tag]) };
      default:
        return null;
    }
  } catch (e) {
    if (e instanceof DecodeError) return null;
    throw e;
  }
  throw new DecodeError(MTE, 'Expected nullifier event or merkle tree update (got a V1 ChangelogEvent)', { offset: 0 });
}
