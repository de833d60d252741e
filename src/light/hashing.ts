/**
 * Light Protocol hashing helpers (spec photon.md §2.2, prover.md §4.2). All Poseidon calls are the
 * circom BN254 Poseidon of src/merkle/poseidon.ts; every 32-byte value is big-endian.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';

import { be32 } from '../merkle/indexedLeaf.ts';
import { isFieldElement, poseidon, poseidon2, poseidon3 } from '../merkle/poseidon.ts';

// ---------------------------------------------------------------------------------------------
// hashToField with a bounded two-generation cache for 32-byte keys (owners and trees repeat a lot)

/**
 * Entries per cache generation: at most 2× this many results are cached (≈150 B each). A key used
 * within the last two generations is a hit; the older generation is dropped as a whole, so a hit
 * costs one or two Map lookups and no reordering (cheaper than a strict LRU).
 */
export const HASH_TO_FIELD_CACHE_SIZE = 32_768;

let current = new Map<string, Uint8Array>();
let previous = new Map<string, Uint8Array>();

function keccakToField(bytes: Uint8Array): Uint8Array {
  const buf = new Uint8Array(bytes.length + 1);
  buf.set(bytes);
  buf[bytes.length] = 0xff;
  const h = keccak_256(buf);
  h[0] = 0;
  return h;
}

function remember(key: string, h: Uint8Array): void {
  if (current.size >= HASH_TO_FIELD_CACHE_SIZE) {
    previous = current;
    current = new Map();
  }
  current.set(key, h);
}

/** Cached variant returning a shared instance (callers must not mutate it). */
function hashToFieldShared(bytes: Uint8Array): Uint8Array {
  if (bytes.length !== 32) return keccakToField(bytes);
  const key = Buffer.from(bytes.buffer, bytes.byteOffset, 32).toString('latin1');
  let h = current.get(key);
  if (h !== undefined) return h;
  h = previous.get(key);
  if (h === undefined) h = keccakToField(bytes);
  remember(key, h);
  return h;
}

/**
 * Light's `hash_to_bn254_field_size_be` (light-hasher `hash_to_field_size.rs`):
 * keccak256(bytes ‖ 0xFF) with byte[0] set to 0, so the result is < 2^248 < r.
 * @param bytes any length (typically a 32-byte pubkey); results for 32-byte inputs are cached (two
 *   generations of {@link HASH_TO_FIELD_CACHE_SIZE} entries).
 * @returns a new 32-byte big-endian field element.
 */
export function hashToField(bytes: Uint8Array): Uint8Array {
  return hashToFieldShared(bytes).slice();
}

// ---------------------------------------------------------------------------------------------
// compressed account hash

/** The fields of a compressed account that enter its hash (a `CompressedAccount` from src/types.ts fits). */
export interface HashableCompressedAccount {
  /** Owner program pubkey, 32 bytes. */
  owner: Uint8Array;
  /** u64 lamports. */
  lamports: bigint;
  /** 32-byte address, or null. */
  address: Uint8Array | null;
  /** discriminator: 8 raw bytes; dataHash: 32 bytes (< r). Null when the account has no data. */
  data: { discriminator: Uint8Array; dataHash: Uint8Array } | null;
}

/** State-tree generation: 'v1' (StateV1, little-endian leaf index / lamports) or 'v2' (batched, big-endian). */
export type TreeKind = 'v1' | 'v2';

const U64_MAX = (1n << 64n) - 1n;

/**
 * Compressed account hash (light-compressed-account `hash_with_hashed_values`, photon.md §2.2):
 * Poseidon over, in order,
 *   1. hashToField(owner);
 *   2. leaf index u32 in bytes[28..32] of 32 zero bytes (LE for v1, BE for v2);
 *   3. hashToField(tree) — the Merkle tree pubkey, never the queue;
 *   4. if lamports ≠ 0: 32 zero bytes with byte[23] = 1 and the u64 in bytes[24..32] (LE v1, BE v2);
 *   5. if address is present: the 32-byte address;
 *   6. if data is present: disc32 (byte[23] = 2, the 8 discriminator bytes raw in [24..32]), dataHash.
 * That is 3..7 Poseidon inputs.
 * @param tree 32-byte tree pubkey. @param leafIndex u32. @param treeKind 'v1' | 'v2'.
 * @returns 32-byte big-endian hash.
 * @throws RangeError naming the field: a bad leaf index, lamports outside u64, wrong sizes, or an
 *   address / dataHash that is not a BN254 field element (≥ r).
 */
export function compressedAccountHash(
  account: HashableCompressedAccount,
  tree: Uint8Array,
  leafIndex: number,
  treeKind: TreeKind,
): Uint8Array {
  return poseidon(compressedAccountHashInputs(account, tree, leafIndex, treeKind));
}

/**
 * The 3..7 Poseidon inputs of {@link compressedAccountHash} (32-byte BE field elements, checked),
 * for callers that hash many accounts in one batch (`poseidonTuples`). The owner and tree entries
 * are shared cached instances: do not mutate them.
 * @throws RangeError as {@link compressedAccountHash}.
 */
export function compressedAccountHashInputs(
  account: HashableCompressedAccount,
  tree: Uint8Array,
  leafIndex: number,
  treeKind: TreeKind,
): Uint8Array[] {
  if (!Number.isInteger(leafIndex) || leafIndex < 0 || leafIndex > 0xffffffff) {
    throw new RangeError(`leafIndex must be a u32, got ${leafIndex}`);
  }
  if (account.owner.length !== 32) throw new RangeError(`owner must be 32 bytes, got ${account.owner.length}`);
  if (tree.length !== 32) throw new RangeError(`tree must be 32 bytes, got ${tree.length}`);
  const le = treeKind === 'v1';
  if (!le && treeKind !== 'v2') throw new RangeError(`treeKind must be 'v1' or 'v2', got ${String(treeKind)}`);

  const leaf = new Uint8Array(32);
  new DataView(leaf.buffer).setUint32(28, leafIndex, le);
  const inputs: Uint8Array[] = [hashToFieldShared(account.owner), leaf, hashToFieldShared(tree)];

  const lamports = account.lamports;
  if (lamports < 0n || lamports > U64_MAX) throw new RangeError(`lamports must be a u64, got ${lamports}`);
  if (lamports !== 0n) {
    const lam = new Uint8Array(32);
    lam[23] = 1;
    new DataView(lam.buffer).setBigUint64(24, lamports, le);
    inputs.push(lam);
  }
  if (account.address) {
    if (!isFieldElement(account.address)) throw new RangeError(`address is not a BN254 field element (32 bytes BE, < r)`);
    inputs.push(account.address);
  }
  if (account.data) {
    const { discriminator, dataHash } = account.data;
    if (discriminator.length !== 8) throw new RangeError(`discriminator must be 8 bytes, got ${discriminator.length}`);
    if (!isFieldElement(dataHash)) throw new RangeError(`dataHash is not a BN254 field element (32 bytes BE, < r)`);
    const disc = new Uint8Array(32);
    disc[23] = 2;
    disc.set(discriminator, 24);
    inputs.push(disc, dataHash);
  }
  return inputs;
}

// ---------------------------------------------------------------------------------------------
// nullifier and indexed leaves

/**
 * V2 input-queue nullifier (light-compressed-account `nullifier.rs`):
 * Poseidon(accountHash, be32(u64 leafIndex), txHash).
 * @param accountHash 32 B BE (< r). @param leafIndex u64 (number or bigint). @param txHash 32 B BE (< r).
 * @returns 32-byte big-endian hash. @throws RangeError on out-of-range inputs.
 */
export function nullifierHash(accountHash: Uint8Array, leafIndex: number | bigint, txHash: Uint8Array): Uint8Array {
  return poseidon3(accountHash, be32(BigInt(leafIndex), 'leafIndex'), txHash);
}

/** Indexed-tree leaf hashes live with the indexed-tree constants in merkle/ (a codec below light/). */
export { indexedLeafHashV1, indexedLeafHashV2 } from '../merkle/indexedLeaf.ts';
