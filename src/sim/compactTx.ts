/**
 * The simulator's compact form of a generated transaction and the codecs around it:
 * - {@link CompactTx}: wire bytes, account count and raw inner instructions — what the generator
 *   makes before any JSON, and what the sparse profile keeps per Light transaction;
 * - {@link compactTxJson}: the getTransaction JSON of it (the generator's historical `meta` shape);
 * - {@link packCompact} / {@link unpackCompact}: one byte string per transaction (the sparse profile's
 *   arena), about half the size of its JSON;
 * - {@link encodeLegacyTransaction}: a legacy wire transaction, byte for byte what @solana/kit's
 *   compiled-message and transaction encoders give for one signer, but without their base58 round
 *   trips (≈20× faster);
 * - inner-instruction data in base58 of any length through src/solana/base58.ts `encodeLong` (bs58's
 *   byte-at-a-time conversion is quadratic: a 500-byte event took ≈0.4 ms).
 * - {@link staticAccountKeys}: the static account keys (base58) of a wire transaction.
 */
import * as base58 from '../solana/base58.ts';

/** One inner instruction as the generator makes it (data raw; base58 only in JSON). */
export interface CompactIx {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
}

/**
 * A generated transaction: its wire bytes (legacy message, one signature), the number of its static
 * account keys (the length of `preBalances` / `postBalances`) and its inner instructions (all under the
 * outer instruction 0, stack height 2).
 */
export interface CompactTx {
  wire: Uint8Array;
  numKeys: number;
  inner: CompactIx[];
}

/** Writes a shortvec (compact-u16) length at `o`; returns the next offset. */
function writeShortVec(buf: Uint8Array, o: number, n: number): number {
  let v = n;
  for (;;) {
    const b = v & 0x7f;
    v >>= 7;
    if (v === 0) {
      buf[o++] = b;
      return o;
    }
    buf[o++] = b | 0x80;
  }
}

/** Reads a shortvec at `o`: [value, next offset]. */
export function readShortVec(buf: Uint8Array, o: number): [number, number] {
  let v = 0;
  for (let shift = 0; ; shift += 7) {
    const b = buf[o++];
    if (b === undefined) throw new RangeError('shortvec past the end');
    v |= (b & 0x7f) << shift;
    if (!(b & 0x80)) return [v, o];
  }
}

/** One outer instruction of a legacy message. */
export interface OuterIx {
  programAddressIndex: number;
  accountIndices: number[];
  data: Uint8Array;
}

/**
 * A legacy transaction with one signature (of `keys[0]`): shortvec 1, the signature, then the
 * message (header, keys, recent blockhash, instructions). Same bytes as @solana/kit's
 * `getTransactionEncoder().encode({ messageBytes: getCompiledTransactionMessageEncoder().encode(…) })`.
 * @param keys 32-byte account keys, signer first.
 */
export function encodeLegacyTransaction(
  signature: Uint8Array,
  header: { readonlySigned: number; readonlyUnsigned: number },
  keys: readonly Uint8Array[],
  recentBlockhash: Uint8Array,
  instructions: readonly OuterIx[],
): Buffer {
  let size = 1 + 64 + 3 + 3 + keys.length * 32 + 32 + 3;
  for (const ix of instructions) size += 1 + 3 + ix.accountIndices.length + 3 + ix.data.length;
  const buf = Buffer.allocUnsafe(size);
  let o = writeShortVec(buf, 0, 1);
  buf.set(signature, o);
  o += 64;
  buf[o++] = 1;
  buf[o++] = header.readonlySigned;
  buf[o++] = header.readonlyUnsigned;
  o = writeShortVec(buf, o, keys.length);
  for (const k of keys) {
    buf.set(k, o);
    o += 32;
  }
  buf.set(recentBlockhash, o);
  o += 32;
  o = writeShortVec(buf, o, instructions.length);
  for (const ix of instructions) {
    buf[o++] = ix.programAddressIndex;
    o = writeShortVec(buf, o, ix.accountIndices.length);
    for (const a of ix.accountIndices) buf[o++] = a;
    o = writeShortVec(buf, o, ix.data.length);
    buf.set(ix.data, o);
    o += ix.data.length;
  }
  return buf.subarray(0, o);
}

/** Offset of the message in a wire transaction (after the signatures) and the signature count. */
function messageOffset(wire: Uint8Array): { sigs: number; at: number } {
  const [sigs, o] = readShortVec(wire, 0);
  return { sigs, at: o + sigs * 64 };
}

/**
 * The static account keys (base58) of a legacy or v0 wire transaction (signatures first). Lookup-table
 * addresses are not in the wire bytes: they come from `meta.loadedAddresses`.
 */
export function staticAccountKeys(wire: Uint8Array): string[] {
  let { at: o } = messageOffset(wire);
  if (wire[o]! & 0x80) o++; // versioned message prefix
  o += 3;
  const [n, k] = readShortVec(wire, o);
  o = k;
  const keys: string[] = [];
  for (let i = 0; i < n; i++, o += 32) keys.push(base58.encode32(wire.subarray(o, o + 32)));
  return keys;
}

/** The first signature of a wire transaction (64 bytes, a view). */
export function firstSignatureBytes(wire: Uint8Array): Uint8Array {
  const [, o] = readShortVec(wire, 0);
  return wire.subarray(o, o + 64);
}

/**
 * The getTransaction JSON of a generated transaction at `slot`, as the generator has always written
 * it: `{slot, blockTime, version, transaction: [base64, 'base64'], meta}` with zero balances, fee 5000,
 * the inner instructions under instruction 0 (stack height 2) and 100,000 compute units.
 */
export function compactTxJson(slot: number, c: CompactTx): Record<string, unknown> {
  return {
    slot,
    blockTime: 1_700_000_000 + slot,
    version: 'legacy',
    transaction: [Buffer.from(c.wire.buffer, c.wire.byteOffset, c.wire.byteLength).toString('base64'), 'base64'],
    meta: compactMeta(c),
  };
}

/** The `meta` of {@link compactTxJson}. */
function compactMeta(c: CompactTx): Record<string, unknown> {
  const zeros = new Array<number>(c.numKeys).fill(0);
  return {
    err: null,
    status: { Ok: null },
    fee: 5000,
    preBalances: zeros,
    postBalances: zeros.slice(),
    innerInstructions: [{ index: 0, instructions: c.inner.map((i) => ({ programIdIndex: i.programIdIndex, accounts: i.accounts, data: base58.encodeLong(i.data), stackHeight: 2 })) }],
    logMessages: [],
    preTokenBalances: [],
    postTokenBalances: [],
    rewards: [],
    loadedAddresses: { writable: [], readonly: [] },
    computeUnitsConsumed: 100_000,
  };
}

/** `{"transaction":…,"meta":…,"version":"legacy"}`: one transaction of a getBlock answer, as JSON text. */
export function compactTxEntryText(c: CompactTx): string {
  const b64 = Buffer.from(c.wire.buffer, c.wire.byteOffset, c.wire.byteLength).toString('base64');
  return `{"transaction":["${b64}","base64"],"meta":${JSON.stringify(compactMeta(c))},"version":"legacy"}`;
}

/**
 * One byte string per transaction: u16 wire length, wire, u8 key count, u8 inner count, then per inner
 * instruction u8 program index, u8 account count, the account indices, u16 data length, data.
 */
export function packCompact(c: CompactTx): Buffer {
  let size = 2 + c.wire.length + 2;
  for (const ix of c.inner) size += 2 + ix.accounts.length + 2 + ix.data.length;
  const b = Buffer.allocUnsafe(size);
  let o = b.writeUInt16LE(c.wire.length, 0);
  b.set(c.wire, o);
  o += c.wire.length;
  b[o++] = c.numKeys;
  b[o++] = c.inner.length;
  for (const ix of c.inner) {
    b[o++] = ix.programIdIndex;
    b[o++] = ix.accounts.length;
    for (const a of ix.accounts) b[o++] = a;
    o = b.writeUInt16LE(ix.data.length, o);
    b.set(ix.data, o);
    o += ix.data.length;
  }
  return b;
}

/** The inverse of {@link packCompact} (views into `b`). */
export function unpackCompact(b: Uint8Array): CompactTx {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const wireLen = dv.getUint16(0, true);
  let o = 2;
  const wire = b.subarray(o, o + wireLen);
  o += wireLen;
  const numKeys = b[o++]!;
  const n = b[o++]!;
  const inner: CompactIx[] = [];
  for (let i = 0; i < n; i++) {
    const programIdIndex = b[o++]!;
    const na = b[o++]!;
    const accounts = Array.from(b.subarray(o, o + na));
    o += na;
    const len = dv.getUint16(o, true);
    o += 2;
    inner.push({ programIdIndex, accounts, data: b.subarray(o, o + len) });
    o += len;
  }
  return { wire, numKeys, inner };
}
