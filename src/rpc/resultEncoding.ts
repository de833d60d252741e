/**
 * Domain records (src/rpc/context.ts) → Photon's JSON shapes (photon.md §3.0–3.1, client.md §2.1).
 *
 * Encodings: hashes, pubkeys, addresses and signatures as base58; account data and TLV as base64;
 * u64 values as exact JSON numbers (`u64()`: a plain number when ≤ 2^53−1, else `ExactU64`, which
 * `stringifyJson` writes digit for digit). Key order follows Photon's serde output.
 */
import type {
  AccountView,
  MerkleProofRecord,
  NewAddressProofRecord,
  SignatureRecord,
  TokenDataRecord,
  TreeRef,
  ValidityProofRecord,
} from './context.ts';
import * as base58 from '../solana/base58.ts';
import { ExactU64, RawJson } from './exactJson.ts';

/** A u64 as emitted in JSON: a number when safe, else an exact wrapper. */
export type U64Json = number | ExactU64;

/** base58 of raw bytes (leading zero bytes become leading `1`s). */
export function b58(bytes: Uint8Array): string {
  return base58.encode32(bytes);
}

/** base58 of optional bytes, null stays null. */
export function b58OrNull(bytes: Uint8Array | null | undefined): string | null {
  return bytes ? base58.encode32(bytes) : null;
}

/** Standard base64 (with padding) of raw bytes. */
export function b64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A u64 (bigint or non-negative safe integer) as an exact JSON number. Throws RangeError when negative. */
export function u64(value: bigint | number): U64Json {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a u64: ${value}`);
    return value;
  }
  if (value < 0n) throw new RangeError(`not a u64: ${value}`);
  return value <= MAX_SAFE ? Number(value) : new ExactU64(value);
}

/** 32 zero bytes: Photon's default for absent nullifier / txHash (`1111…1111`). */
const ZERO32 = new Uint8Array(32);

/** `{context: {slot}, value}` — the result shape of every method except getIndexerSlot/Health and the transaction methods. */
export function withContext<T>(slot: bigint, value: T): { context: { slot: U64Json }; value: T } {
  return { context: { slot: u64(slot) }, value };
}

/** `data` of an account: `{discriminator, data (base64), dataHash}` or null. */
function encodeAccountData(data: AccountView['data']) {
  return data === null
    ? null
    : { discriminator: u64(data.discriminator), data: b64(data.data), dataHash: b58(data.dataHash) };
}

/**
 * V1 `Account`: hash, address, data, owner, lamports, tree, leafIndex, seq, slotCreated.
 * Written out as one literal, like `encodeAccountV2`, not built from shared parts by spreading: on
 * this hot path the spread version encoded about 3× slower (measured in this round's review).
 */
export function encodeAccount(a: AccountView) {
  return {
    hash: b58(a.hash),
    address: b58OrNull(a.address),
    data: encodeAccountData(a.data),
    owner: b58(a.owner),
    lamports: u64(a.lamports),
    tree: b58(a.treeInfo.tree),
    leafIndex: a.leafIndex,
    seq: a.seq === null ? null : u64(a.seq),
    slotCreated: u64(a.slotCreated),
  };
}

/** `TreeContextInfo`: {treeType, tree, queue, cpiContext} (proof `treeContext`). */
export function encodeTreeContext(t: TreeRef) {
  return { treeType: t.treeType, tree: b58(t.tree), queue: b58(t.queue), cpiContext: b58OrNull(t.cpiContext) };
}

/** `MerkleContextV2`: TreeContextInfo plus `nextTreeContext: null` (AccountV2 / validity-proof `merkleContext`). */
export function encodeMerkleContext(t: TreeRef) {
  return { ...encodeTreeContext(t), nextTreeContext: null };
}

/** `AccountV2`: hash, address, data, owner, lamports, leafIndex, seq, slotCreated, proveByIndex, merkleContext. */
export function encodeAccountV2(a: AccountView) {
  return {
    hash: b58(a.hash),
    address: b58OrNull(a.address),
    data: encodeAccountData(a.data),
    owner: b58(a.owner),
    lamports: u64(a.lamports),
    leafIndex: a.leafIndex,
    seq: a.seq === null ? null : u64(a.seq),
    slotCreated: u64(a.slotCreated),
    proveByIndex: a.inOutputQueue,
    merkleContext: encodeMerkleContext(a.treeInfo),
  };
}

/** `TokenData`: mint, owner, amount, delegate, state, tlv (base64 or null). */
export function encodeTokenData(t: TokenDataRecord) {
  return {
    mint: b58(t.mint),
    owner: b58(t.owner),
    amount: u64(t.amount),
    delegate: b58OrNull(t.delegate),
    state: t.state,
    tlv: t.tlv === null ? null : b64(t.tlv),
  };
}

/** V1 `MerkleProofWithContext`: proof, root, leafIndex, hash, merkleTree, rootSeq. */
export function encodeMerkleProof(p: MerkleProofRecord) {
  return {
    proof: p.proof.map(b58),
    root: b58(p.root),
    leafIndex: p.leafIndex,
    hash: b58(p.hash),
    merkleTree: b58(p.treeInfo.tree),
    rootSeq: u64(p.rootSeq),
  };
}

/** V2 `MerkleProofWithContextV2`: proof, root, leafIndex, hash, rootSeq, proveByIndex, treeContext. */
export function encodeMerkleProofV2(p: MerkleProofRecord) {
  return {
    proof: p.proof.map(b58),
    root: b58(p.root),
    leafIndex: p.leafIndex,
    hash: b58(p.hash),
    rootSeq: u64(p.rootSeq),
    proveByIndex: p.proveByIndex,
    treeContext: encodeTreeContext(p.treeInfo),
  };
}

/** `MerkleContextWithNewAddressProof`: root, address, lower/higherRangeAddress, nextIndex, proof, merkleTree, rootSeq, lowElementLeafIndex. */
export function encodeNewAddressProof(p: NewAddressProofRecord) {
  return {
    root: b58(p.root),
    address: b58(p.address),
    lowerRangeAddress: b58(p.lowerRangeAddress),
    higherRangeAddress: b58(p.higherRangeAddress),
    nextIndex: p.nextIndex,
    proof: p.proof.map(b58),
    merkleTree: b58(p.tree),
    rootSeq: u64(p.rootSeq),
    lowElementLeafIndex: p.lowElementLeafIndex,
  };
}

/** `SignatureInfo`: signature, slot, blockTime. */
export function encodeSignature(s: SignatureRecord) {
  return { signature: b58(s.signature), slot: u64(s.slot), blockTime: u64(s.blockTime) };
}

/** `SignatureInfoWithError`: signature, slot, blockTime, error. */
export function encodeSignatureWithError(s: SignatureRecord) {
  return { ...encodeSignature(s), error: s.error };
}

/** `CompressedProof`: {a, b, c} as arrays of byte numbers, or null. */
export function encodeCompressedProof(p: ValidityProofRecord['compressedProof']) {
  return p === null ? null : { a: Array.from(p.a), b: Array.from(p.b), c: Array.from(p.c) };
}

/** V1 `CompressedProofWithContext`: accounts then addresses flattened into parallel arrays. */
export function encodeValidityProofV1(r: ValidityProofRecord) {
  return {
    compressedProof: encodeCompressedProof(r.compressedProof),
    roots: [...r.accounts.map((a) => b58(a.root)), ...r.addresses.map((a) => b58(a.root))],
    rootIndices: [...r.accounts.map((a) => a.rootIndex), ...r.addresses.map((a) => a.rootIndex)],
    leafIndices: [...r.accounts.map((a) => a.leafIndex), ...r.addresses.map((a) => a.lowElementLeafIndex)],
    leaves: [...r.accounts.map((a) => b58(a.hash)), ...r.addresses.map((a) => b58(a.address))],
    merkleTrees: [...r.accounts.map((a) => b58(a.treeInfo.tree)), ...r.addresses.map((a) => b58(a.treeInfo.tree))],
    ...(r.warning ? { warning: r.warning } : {}),
  };
}

/** V2 `CompressedProofWithContextV2`: compressedProof, accounts[{hash, root, rootIndex{rootIndex, proveByIndex}, leafIndex, merkleContext}], addresses[…]. */
export function encodeValidityProofV2(r: ValidityProofRecord) {
  return {
    compressedProof: encodeCompressedProof(r.compressedProof),
    accounts: r.accounts.map((a) => ({
      hash: b58(a.hash),
      root: b58(a.root),
      rootIndex: { rootIndex: a.rootIndex, proveByIndex: a.proveByIndex },
      leafIndex: a.leafIndex,
      merkleContext: encodeMerkleContext(a.treeInfo),
    })),
    addresses: r.addresses.map((a) => ({
      address: b58(a.address),
      root: b58(a.root),
      rootIndex: a.rootIndex,
      merkleContext: encodeMerkleContext(a.treeInfo),
    })),
    ...(r.warning ? { warning: r.warning } : {}),
  };
}

/** Nullifier / txHash of a closed V2 account: base58, `1111…1111` (32 zero bytes) when absent. */
export function b58OrZero(bytes: Uint8Array | null): string {
  return b58(bytes ?? ZERO32);
}

// ---- JSON text encoders ---------------------------------------------------------------------
//
// The hot shapes (V1 `Account`, V1 `MerkleProofWithContext`, `{context, value}`) written straight
// to JSON text: the same bytes as `stringifyJson` of the object encoders above (key order, exact
// u64 digits, null handling), without building the intermediate objects and without a generic
// JSON.stringify pass. Every value they write needs no escaping (base58 and base64 alphabets,
// decimal digits). Handlers return the text as `rawJson(…)`; the server writes a top-level RawJson
// result as is. Cross-checked against the object encoders in test/rpc.fastparams.test.ts.

/** JSON text of a u64: the digits `u64()` leads `stringifyJson` to write. Throws RangeError like `u64`. */
export function u64Text(value: bigint | number): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a u64: ${value}`);
    return String(value);
  }
  if (value < 0n) throw new RangeError(`not a u64: ${value}`);
  return value.toString(10);
}

/** JSON text of a plain number field (as JSON.stringify writes it: non-finite → null). */
function numText(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

/** `"<base58>"` or `null`. */
function b58Text(bytes: Uint8Array | null | undefined): string {
  return bytes ? `"${base58.encode32(bytes)}"` : 'null';
}

/** JSON text of `encodeAccount(a)` (V1 `Account`). */
export function accountJson(a: AccountView): string {
  const d = a.data;
  const data = d === null ? 'null' : `{"discriminator":${u64Text(d.discriminator)},"data":"${b64(d.data)}","dataHash":"${base58.encode32(d.dataHash)}"}`;
  return (
    `{"hash":"${base58.encode32(a.hash)}","address":${b58Text(a.address)},"data":${data},"owner":"${base58.encode32(a.owner)}",` +
    `"lamports":${u64Text(a.lamports)},"tree":"${base58.encode32(a.treeInfo.tree)}","leafIndex":${numText(a.leafIndex)},` +
    `"seq":${a.seq === null ? 'null' : u64Text(a.seq)},"slotCreated":${u64Text(a.slotCreated)}}`
  );
}

/** JSON text of `encodeMerkleProof(p)` (V1 `MerkleProofWithContext`). */
export function merkleProofJson(p: MerkleProofRecord): string {
  let proof = '';
  for (let i = 0; i < p.proof.length; i++) proof += i === 0 ? `"${base58.encode32(p.proof[i]!)}"` : `,"${base58.encode32(p.proof[i]!)}"`;
  return (
    `{"proof":[${proof}],"root":"${base58.encode32(p.root)}","leafIndex":${numText(p.leafIndex)},"hash":"${base58.encode32(p.hash)}",` +
    `"merkleTree":"${base58.encode32(p.treeInfo.tree)}","rootSeq":${u64Text(p.rootSeq)}}`
  );
}

/** `withContext(slot, value)` as a RawJson result, `valueJson` being the value's JSON text. */
export function withContextJson(slot: bigint, valueJson: string): RawJson {
  return new RawJson(`{"context":{"slot":${u64Text(slot)}},"value":${valueJson}}`);
}
