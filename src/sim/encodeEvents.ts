/**
 * Borsh encoders for Light's legacy events (the inverse of `events.ts`), used by the synthetic
 * transaction generator and the simulator. Schemas for the `borsh` library; layouts from
 * light-event 0.23.1 (photon.md §1.4).
 */
import { serialize, type Schema } from 'borsh';
import type { IndexedMerkleTreeEvent, NullifierEvent, PublicTransactionEvent } from '../types.ts';

/** Borsh `[u8; 32]` (pubkeys and hashes). */
export const B32: Schema = { array: { type: 'u8', len: 32 } };
const BYTES: Schema = { array: { type: 'u8' } };
/** Borsh `CompressedAccount` (owner, lamports, address?, data?), shared with the v2 encoders. */
export const COMPRESSED_ACCOUNT: Schema = {
  struct: {
    owner: B32,
    lamports: 'u64',
    address: { option: B32 },
    data: { option: { struct: { discriminator: { array: { type: 'u8', len: 8 } }, data: BYTES, dataHash: B32 } } },
  },
};
const PTE_FIELDS = {
  inputCompressedAccountHashes: { array: { type: B32 } },
  outputCompressedAccountHashes: { array: { type: B32 } },
  outputCompressedAccounts: { array: { type: { struct: { compressedAccount: COMPRESSED_ACCOUNT, merkleTreeIndex: 'u8' } } } },
  outputLeafIndices: { array: { type: 'u32' } },
  sequenceNumbers: { array: { type: { struct: { treePubkey: B32, seq: 'u64' } } } },
  relayFee: { option: 'u64' },
  isCompress: 'bool',
  compressOrDecompressLamports: { option: 'u64' },
  pubkeyArray: { array: { type: B32 } },
  message: { option: BYTES },
} satisfies Record<string, Schema>;
const PTE_LEGACY: Schema = { struct: PTE_FIELDS };
const PTE_CURRENT: Schema = { struct: { ...PTE_FIELDS, ataOwners: { array: { type: { struct: { outputIndex: 'u8', walletOwner: B32 } } } } } };
const RAW_ELEMENT: Schema = { struct: { value: B32, nextIndex: 'u64', nextValue: B32, index: 'u64' } };
const NULLIFIER: Schema = { struct: { tree: B32, nullifiedLeavesIndices: { array: { type: 'u64' } }, seq: 'u64' } };
const INDEXED: Schema = {
  struct: {
    tree: B32,
    updates: { array: { type: { struct: { newLowElement: RAW_ELEMENT, newLowElementHash: B32, newHighElement: RAW_ELEMENT, newHighElementHash: B32 } } } },
    seq: 'u64',
  },
};

/** Borsh bytes of a PublicTransactionEvent in the legacy layout (no ata_owners) or the current one. */
export function encodePublicTransactionEvent(e: PublicTransactionEvent, layout: 'legacy' | 'current' = 'legacy'): Uint8Array {
  return serialize(layout === 'legacy' ? PTE_LEGACY : PTE_CURRENT, e);
}

/** Borsh bytes of `MerkleTreeEvent::V2` (tag 1, NullifierEvent). */
export function encodeNullifierEvent(e: NullifierEvent): Uint8Array {
  const body = serialize(NULLIFIER, e);
  return Buffer.concat([Buffer.from([1]), body]);
}

/** Borsh bytes of `MerkleTreeEvent::V3` (tag 2, IndexedMerkleTreeEvent). */
export function encodeIndexedMerkleTreeEvent(e: IndexedMerkleTreeEvent): Uint8Array {
  const body = serialize(INDEXED, e);
  return Buffer.concat([Buffer.from([2]), body]);
}
