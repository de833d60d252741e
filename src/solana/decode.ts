/**
 * Pure decoding of Solana RPC results into {@link TransactionInfo} / {@link BlockInfo}
 * (spec photon.md §1.2, Photon `src/ingester/typedefs/block_info.rs`). No I/O.
 *
 * - Wire format: legacy and v0 transactions (signatures first) are parsed by a hand-written
 *   reader below; the message-first v1 envelope is delegated to @solana/kit
 *   (`getTransactionDecoder` + `getCompiledTransactionMessageDecoder`). Kit's decoders are exact
 *   but cost ~225 µs per transaction (BigInt base58 of every key, twice), which alone would blow
 *   the ingest budget, so they are kept for the rare v1 envelope only; the tests cross-check the
 *   fast path against kit on every fixture.
 * - Base58: a limb-based encoder (≈0.7 µs per 32-byte key, memoised per key bytes) and a lazy
 *   decoder for inner-instruction data: validated eagerly, converted on first read of `data`
 *   (see {@link decodeTransactionEnvelope}), so instructions nobody reads cost no conversion.
 */
import {
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type CompiledTransactionMessage,
} from '@solana/kit';
import type { BlockInfo, InstructionGroup, InstructionInfo, TransactionInfo } from '../types.ts';
import { VOTE_PROGRAM_ID } from '../light/constants.ts';
import { DecodeError } from './errors.ts';

// ---------------------------------------------------------------------------------------------
// Base58 (Bitcoin alphabet)
// ---------------------------------------------------------------------------------------------

const B58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const B58_CODES = new Uint8Array(58);
/** char code → digit, -1 when not in the alphabet. */
const B58_MAP = new Int8Array(256).fill(-1);
for (let i = 0; i < 58; i++) {
  B58_CODES[i] = B58_ALPHABET.charCodeAt(i);
  B58_MAP[B58_ALPHABET.charCodeAt(i)] = i;
}
const LATIN1 = new TextDecoder('latin1');
const ENC_LIMBS = new Float64Array(64);
const ENC_CHARS = new Uint8Array(360);
const TWO32 = 4294967296;
const B58_CUBE = 58 * 58 * 58; // 195112 < 2^18, so rem * 2^32 + limb < 2^53 stays exact

/**
 * Base58-encodes `bytes` (leading zero bytes → leading '1'). Same output as `bs58.encode`.
 * Repeated division of big-endian 32-bit limbs by 58³; ≈1 µs for a 32-byte key.
 */
export function base58Encode(bytes: Uint8Array): string {
  const n = bytes.length;
  let zeros = 0;
  while (zeros < n && bytes[zeros] === 0) zeros++;
  const m = n - zeros;
  const nl = (m + 3) >>> 2;
  const limbs = nl <= ENC_LIMBS.length ? ENC_LIMBS : new Float64Array(nl);
  const maxChars = zeros + Math.ceil(m * 1.3658) + 3;
  const chars = maxChars <= ENC_CHARS.length ? ENC_CHARS : new Uint8Array(maxChars);
  let p = zeros;
  if (nl > 0) {
    const head = m - ((nl - 1) << 2);
    let v = 0;
    for (let k = 0; k < head; k++) v = v * 256 + bytes[p++]!;
    limbs[0] = v;
    for (let i = 1; i < nl; i++) {
      limbs[i] = ((bytes[p]! << 24) >>> 0) + (bytes[p + 1]! << 16) + (bytes[p + 2]! << 8) + bytes[p + 3]!;
      p += 4;
    }
  }
  // Digits are produced least significant first, as char codes.
  let nc = 0;
  let start = 0;
  while (start < nl) {
    let rem = 0;
    for (let i = start; i < nl; i++) {
      const x = rem * TWO32 + limbs[i]!;
      const q = Math.floor(x / B58_CUBE);
      rem = x - q * B58_CUBE;
      limbs[i] = q;
    }
    while (start < nl && limbs[start] === 0) start++;
    const d0 = rem % 58;
    rem = (rem - d0) / 58;
    const d1 = rem % 58;
    chars[nc++] = B58_CODES[d0]!;
    chars[nc++] = B58_CODES[d1]!;
    chars[nc++] = B58_CODES[(rem - d1) / 58]!;
  }
  while (nc > 0 && chars[nc - 1] === 49) nc--; // strip high zero digits ('1')
  for (let i = 0; i < zeros; i++) chars[nc++] = 49;
  for (let i = 0, j = nc - 1; i < j; i++, j--) {
    const t = chars[i]!;
    chars[i] = chars[j]!;
    chars[j] = t;
  }
  return LATIN1.decode(chars.subarray(0, nc));
}

const KEY_CACHE_LIMIT = 1 << 15;
let keyCache = new Map<string, string>();

/**
 * Base58 of the 32-byte key at `buf[pos..pos+32]`, memoised: program ids, trees, queues and PDAs
 * recur in almost every transaction. The map is keyed by the latin1 image of the bytes and is
 * dropped whenever it reaches 32k entries (≈5 MB).
 */
function encodeKeyAt(buf: Buffer, pos: number): string {
  const k = buf.toString('latin1', pos, pos + 32);
  let v = keyCache.get(k);
  if (v === undefined) {
    v = base58Encode(buf.subarray(pos, pos + 32));
    if (keyCache.size >= KEY_CACHE_LIMIT) keyCache = new Map();
    keyCache.set(k, v);
  }
  return v;
}

const B58_RE = /^[1-9A-HJ-NP-Za-km-z]*$/;

/** Index of the first character of `s` outside the base58 alphabet, or -1. */
function firstNonBase58(s: string): number {
  if (B58_RE.test(s)) return -1; // the regex engine is ~2x faster than the loop below
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 255 || B58_MAP[c]! < 0) return i;
  }
  return -1;
}

const P9 = 58n ** 9n;
const DEC_LIMBS = new Float64Array(32);
const TWO_M32 = 1 / TWO32;

/** Converts a string already known to be valid base58. */
function base58DecodeValid(s: string): Uint8Array {
  const n = s.length;
  let zeros = 0;
  while (zeros < n && s.charCodeAt(zeros) === 49) zeros++;
  if (zeros === n) return new Uint8Array(zeros);
  return n - zeros <= 120 ? decodeShort(s, zeros) : decodeLong(s, zeros);
}

/**
 * Up to 120 digits (≤ 88 bytes): little-endian 32-bit limbs in a Float64Array, multiplied by 58³
 * per 3 digits (limb·58³ + carry < 2^50, exact). ≈0.4 µs for 60 digits.
 */
function decodeShort(s: string, zeros: number): Uint8Array {
  const n = s.length;
  const limbs = DEC_LIMBS;
  let len = 0;
  let i = zeros;
  let step = (n - zeros) % 3 || 3;
  while (i < n) {
    let carry = 0;
    let mul = 1;
    for (const e = i + step; i < e; i++) {
      carry = carry * 58 + B58_MAP[s.charCodeAt(i)]!;
      mul *= 58;
    }
    step = 3;
    for (let k = 0; k < len; k++) {
      const p = limbs[k]! * mul + carry;
      carry = Math.floor(p * TWO_M32);
      limbs[k] = p - carry * TWO32;
    }
    if (carry > 0) limbs[len++] = carry;
  }
  let topBytes = 0;
  for (let top = limbs[len - 1]!; top > 0; top = Math.floor(top / 256)) topBytes++;
  const out = new Uint8Array(zeros + (len - 1) * 4 + topBytes);
  let o = out.length;
  for (let k = 0; k < len; k++) {
    let v = limbs[k]!;
    for (let c = k === len - 1 ? topBytes : 4; c > 0; c--) {
      out[--o] = v % 256;
      v = Math.floor(v / 256);
    }
  }
  return out;
}

/** POW9[k] = 58^(9·2^k). */
const POW9: bigint[] = [P9];
for (let k = 1; k < 16; k++) POW9.push(POW9[k - 1]! * POW9[k - 1]!);

/**
 * Long strings (noop events, Light system program data): a Number holds 9 digits exactly
 * (58^9 < 2^53); the 9-digit chunks become BigInts combined pairwise (divide and conquer, so
 * each level allocates ~n bytes instead of n per chunk) with C++ multiplies. ≈10 µs for a
 * 760-digit event; JS limbs take ≈40 µs.
 */
function decodeLong(s: string, zeros: number): Uint8Array {
  const n = s.length;
  const count = Math.ceil((n - zeros) / 9);
  let parts = new Array<bigint>(count); // least significant first
  for (let j = 0; j < count; j++) {
    const end = n - 9 * j;
    let chunk = 0;
    for (let i = Math.max(zeros, end - 9); i < end; i++) chunk = chunk * 58 + B58_MAP[s.charCodeAt(i)]!;
    parts[j] = BigInt(chunk);
  }
  for (let level = 0; parts.length > 1; level++) {
    const pow = POW9[level]!;
    const len = parts.length;
    const next = new Array<bigint>((len + 1) >>> 1);
    for (let j = 0; j < len; j += 2) next[j >>> 1] = j + 1 < len ? parts[j + 1]! * pow + parts[j]! : parts[j]!;
    parts = next;
  }
  let hex = parts[0]!.toString(16);
  if (hex.length & 1) hex = '0' + hex;
  const out = new Uint8Array(zeros + (hex.length >>> 1));
  out.set(Buffer.from(hex, 'hex'), zeros);
  return out;
}

/**
 * Base58-decodes `s`; same output as `bs58.decode`.
 * @throws DecodeError(`field`, "invalid base58 character 'x' at index i") on a bad string.
 */
export function base58Decode(s: string, field = 'base58'): Uint8Array {
  const bad = firstNonBase58(s);
  if (bad >= 0) throw new DecodeError(field, `invalid base58 character ${JSON.stringify(s[bad])} at index ${bad}`);
  return base58DecodeValid(s);
}

// ---------------------------------------------------------------------------------------------
// Small JSON helpers (all throw DecodeError naming the field)
// ---------------------------------------------------------------------------------------------

type Json = Record<string, unknown>;

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)?.slice(0, 40)}`;
}

function asObject(v: unknown, field: string, sig?: string): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new DecodeError(field, v === undefined ? 'missing' : `expected an object, got ${describe(v)}`, { signature: sig });
  }
  return v as Json;
}

function asArray(v: unknown, field: string, sig?: string): unknown[] {
  if (!Array.isArray(v)) {
    throw new DecodeError(field, v === undefined ? 'missing' : `expected an array, got ${describe(v)}`, { signature: sig });
  }
  return v;
}

function asUint(v: unknown, field: string, sig?: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) {
    throw new DecodeError(
      field,
      v === undefined ? 'missing' : `expected an integer in [0, ${max}], got ${describe(v)}`,
      { signature: sig },
    );
  }
  return v;
}

function asString(v: unknown, field: string, sig?: string): string {
  if (typeof v !== 'string') {
    throw new DecodeError(field, v === undefined ? 'missing' : `expected a string, got ${describe(v)}`, { signature: sig });
  }
  return v;
}

/**
 * Strict base64 → bytes: Node's decoder silently skips bad characters, so the length must be a
 * multiple of 4 and the output length must match it. (Node also reads '-' and '_' as 62/63.)
 */
function base64Decode(s: string, field: string): Uint8Array {
  if (s.length % 4 !== 0) throw new DecodeError(field, `invalid base64: length ${s.length} is not a multiple of 4`);
  const buf = Buffer.from(s, 'base64');
  let pad = 0;
  if (s.length > 0 && s.charCodeAt(s.length - 1) === 61) pad = s.charCodeAt(s.length - 2) === 61 ? 2 : 1;
  if (buf.length !== (s.length / 4) * 3 - pad) {
    throw new DecodeError(field, 'invalid base64: bad character or misplaced padding');
  }
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
}

// ---------------------------------------------------------------------------------------------
// Wire transaction (legacy / v0 signatures-first; v1 message-first through @solana/kit)
// ---------------------------------------------------------------------------------------------

/** One compiled instruction: indices into the transaction's account list. */
interface CompiledIx {
  programIndex: number;
  accountIndices: ArrayLike<number>;
  data: Uint8Array;
}

/** A decoded wire transaction before account resolution. */
interface WireTransaction {
  signature: string;
  /** Static account keys, base58. */
  staticKeys: string[];
  instructions: CompiledIx[];
  /** Sizes of the address-table-lookup index lists, or null when the message has no lookups. */
  lookups: { writable: number; readonly: number } | null;
}

const MSG = 'transaction.message';

/** Cursor over the wire bytes with bounds checks that name what was being read. */
class WireReader {
  pos = 0;
  constructor(
    readonly bytes: Uint8Array,
    public field: string,
  ) {}

  need(n: number, what: string): void {
    if (this.pos + n > this.bytes.length) {
      throw new DecodeError(
        this.field,
        `truncated at byte ${this.pos} (need ${n} byte${n === 1 ? '' : 's'} for ${what}, ${this.bytes.length - this.pos} left)`,
        { offset: this.pos },
      );
    }
  }

  u8(what: string): number {
    this.need(1, what);
    return this.bytes[this.pos++]!;
  }

  /** Solana compact-u16 ("shortvec"): 1–3 bytes, 7 bits each, canonical encodings only. */
  shortU16(what: string): number {
    const at = this.pos;
    let value = 0;
    for (let i = 0; i < 3; i++) {
      const b = this.u8(what);
      if (i === 2 && b > 3) throw new DecodeError(this.field, `compact-u16 overflow at byte ${at} (${what})`, { offset: at });
      if (i > 0 && b === 0) throw new DecodeError(this.field, `non-canonical compact-u16 at byte ${at} (${what})`, { offset: at });
      value |= (b & 0x7f) << (7 * i);
      if ((b & 0x80) === 0) return value;
    }
    return value;
  }

  take(n: number, what: string): Uint8Array {
    this.need(n, what);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

function decodeSignaturesFirst(bytes: Uint8Array): WireTransaction {
  const r = new WireReader(bytes, 'transaction.signatures');
  const numSignatures = r.shortU16('signature count');
  if (numSignatures === 0) throw new DecodeError('transaction.signatures', 'no signatures');
  r.need(numSignatures * 64, `${numSignatures} signatures`);
  const signature = base58Encode(bytes.subarray(r.pos, r.pos + 64));
  r.pos += numSignatures * 64;
  r.field = MSG;
  try {
    return { signature, ...readLegacyOrV0Message(r, numSignatures) };
  } catch (e) {
    throw e instanceof DecodeError ? e.within(null, signature) : e;
  }
}

/** Reads a legacy or v0 message that runs to the end of `r.bytes`. */
function readLegacyOrV0Message(r: WireReader, numSignatures: number): Omit<WireTransaction, 'signature'> {
  const bytes = r.bytes;
  const messageStart = r.pos;
  const first = r.u8('version/header');
  let numRequiredSignatures = first;
  const versioned = (first & 0x80) !== 0;
  if (versioned) {
    const version = first & 0x7f;
    if (version !== 0) {
      throw new DecodeError(MSG, `unsupported message version ${version} in a signatures-first transaction`, {
        offset: messageStart,
      });
    }
    numRequiredSignatures = r.u8('header');
  }
  r.take(2, 'header'); // numReadonlySigned, numReadonlyUnsigned
  if (numRequiredSignatures !== numSignatures) {
    throw new DecodeError(
      MSG,
      `header requires ${numRequiredSignatures} signatures but the transaction carries ${numSignatures}`,
      { offset: messageStart },
    );
  }
  const numKeys = r.shortU16('account key count');
  r.need(numKeys * 32, `${numKeys} account keys`);
  const staticKeys = new Array<string>(numKeys);
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < numKeys; i++) {
    staticKeys[i] = encodeKeyAt(buf, r.pos);
    r.pos += 32;
  }
  r.take(32, 'recent blockhash');
  const numIx = r.shortU16('instruction count');
  const instructions = new Array<CompiledIx>(numIx);
  for (let k = 0; k < numIx; k++) {
    const programIndex = r.u8(`instructions[${k}].programIdIndex`);
    const na = r.shortU16(`instructions[${k}].accounts length`);
    const accountIndices = r.take(na, `instructions[${k}].accounts`);
    const nd = r.shortU16(`instructions[${k}].data length`);
    const data = r.take(nd, `instructions[${k}].data`).slice();
    instructions[k] = { programIndex, accountIndices, data };
  }
  let lookups: WireTransaction['lookups'] = null;
  if (versioned) {
    const numLookups = r.shortU16('address table lookup count');
    if (numLookups > 0) {
      let writable = 0;
      let readonly = 0;
      for (let k = 0; k < numLookups; k++) {
        r.take(32, `addressTableLookups[${k}].accountKey`);
        const nw = r.shortU16(`addressTableLookups[${k}].writableIndexes length`);
        r.take(nw, `addressTableLookups[${k}].writableIndexes`);
        const nr = r.shortU16(`addressTableLookups[${k}].readonlyIndexes length`);
        r.take(nr, `addressTableLookups[${k}].readonlyIndexes`);
        writable += nw;
        readonly += nr;
      }
      lookups = { writable, readonly };
    }
  }
  if (r.pos !== bytes.length) {
    throw new DecodeError(MSG, `${bytes.length - r.pos} trailing bytes after byte ${r.pos}`, { offset: r.pos });
  }
  return { staticKeys, instructions, lookups };
}

let kitTxDecoder: ReturnType<typeof getTransactionDecoder> | undefined;
let kitMsgDecoder: ReturnType<typeof getCompiledTransactionMessageDecoder> | undefined;

/** The v1 (message-first) envelope, decoded with @solana/kit. */
function decodeMessageFirst(bytes: Uint8Array): WireTransaction {
  kitTxDecoder ??= getTransactionDecoder();
  kitMsgDecoder ??= getCompiledTransactionMessageDecoder();
  let msg: CompiledTransactionMessage;
  let messageBytes: Uint8Array;
  try {
    messageBytes = kitTxDecoder.decode(bytes).messageBytes as unknown as Uint8Array;
    const [m, end] = kitMsgDecoder.read(messageBytes, 0);
    if (end !== messageBytes.length) throw new Error(`${messageBytes.length - end} trailing bytes in the message`);
    msg = m;
  } catch (e) {
    throw new DecodeError(MSG, `invalid v1 transaction: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  if (msg.version !== 1) throw new DecodeError(MSG, `unexpected message version ${String(msg.version)} in a message-first envelope`);
  const numSignatures = msg.header.numSignerAccounts;
  if (numSignatures === 0) throw new DecodeError('transaction.signatures', 'no signatures');
  const sigStart = messageBytes.length;
  const signature = base58Encode(bytes.subarray(sigStart, sigStart + 64));
  const instructions: CompiledIx[] = msg.instructionHeaders.map((h, k) => ({
    programIndex: h.programAccountIndex,
    accountIndices: msg.instructionPayloads[k]!.instructionAccountIndices,
    data: Uint8Array.from(msg.instructionPayloads[k]!.instructionData),
  }));
  return { signature, staticKeys: msg.staticAccounts.slice(), instructions, lookups: null };
}

/**
 * Decodes a serialized Solana transaction: legacy or v0 (shortvec signature count first), or the
 * v1 envelope (message first, first byte has the high bit set).
 * @throws DecodeError `transaction.signatures` / `transaction.message` with the byte offset.
 */
function decodeWireTransaction(bytes: Uint8Array): WireTransaction {
  if (bytes.length === 0) throw new DecodeError('transaction', 'empty');
  // Buffer#slice is a view; work on a plain Uint8Array so `.slice()` copies.
  if (Buffer.isBuffer(bytes)) bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return bytes[0]! & 0x80 ? decodeMessageFirst(bytes) : decodeSignaturesFirst(bytes);
}

// ---------------------------------------------------------------------------------------------
// getTransaction / getBlock JSON → TransactionInfo / BlockInfo
// ---------------------------------------------------------------------------------------------

function resolve(accounts: string[], idx: ArrayLike<number>, field: string, sig: string): string[] {
  const out = new Array<string>(idx.length);
  for (let i = 0; i < idx.length; i++) {
    const a = accounts[idx[i]!];
    if (a === undefined) {
      throw new DecodeError(field, `account index ${idx[i]} out of range (${accounts.length} accounts)`, { signature: sig });
    }
    out[i] = a;
  }
  return out;
}

/**
 * An inner instruction whose base58 `data` was validated but is converted on first read and then
 * cached. `data` is an own enumerable accessor, so spreading, `structuredClone` and
 * `postMessage` see the bytes.
 */
function lazyInstruction(programId: string, accounts: string[], dataB58: string): InstructionInfo {
  let bytes: Uint8Array | undefined;
  return {
    programId,
    accounts,
    get data(): Uint8Array {
      return (bytes ??= base58DecodeValid(dataB58));
    },
    set data(v: Uint8Array) {
      bytes = v;
    },
  };
}

/**
 * Decodes the `[<payload>, <encoding>]` pair of a JSON transaction (`base64`, or `base58` for
 * old nodes) plus its `meta` into a {@link TransactionInfo} (spec §1.2):
 * - `signature` = first signature; `error` = `JSON.stringify(meta.err)` or null;
 * - account list = static keys, then `meta.loadedAddresses.writable`, then `.readonly` (only when
 *   the message has address-table lookups; their sizes must match the lookups);
 * - one group per outer instruction; `meta.innerInstructions[k].instructions` appended to group
 *   `meta.innerInstructions[k].index` in order; inner `data` is base58;
 * - `isVote` = any outer instruction owned by the vote program.
 * Inner-instruction `data` is materialised lazily (see {@link lazyInstruction}); every string is
 * validated before returning, so a later read cannot fail.
 * @param field prefix for error fields (e.g. `transactions[3]`); '' for a top-level transaction.
 * @throws DecodeError for any malformed part; it carries the signature once that is known.
 */
export function decodeTransactionEnvelope(transaction: unknown, meta: unknown, field = ''): TransactionInfo {
  const at = (f: string): string => (field ? `${field}.${f}` : f);
  const encoded = asArray(transaction, at('transaction'));
  if (encoded.length !== 2) throw new DecodeError(at('transaction'), `expected [payload, encoding], got ${encoded.length} items`);
  const encoding = encoded[1];
  const payload = asString(encoded[0], at('transaction[0]'));
  let bytes: Uint8Array;
  if (encoding === 'base64') bytes = base64Decode(payload, at('transaction[0]'));
  else if (encoding === 'base58') bytes = base58Decode(payload, at('transaction[0]'));
  else throw new DecodeError(at('transaction[1]'), `unsupported encoding ${describe(encoding)} (expected "base64")`);

  let wire: WireTransaction;
  try {
    wire = decodeWireTransaction(bytes);
  } catch (e) {
    throw e instanceof DecodeError && field ? e.within(field) : e;
  }
  const sig = wire.signature;
  const m = asObject(meta, at('meta'), sig);

  if (!('err' in m)) throw new DecodeError(at('meta.err'), 'missing', { signature: sig });
  const error = m.err === null ? null : JSON.stringify(m.err);

  let accounts = wire.staticKeys;
  if (wire.lookups) {
    const loaded = asObject(m.loadedAddresses, at('meta.loadedAddresses'), sig);
    const writable = asArray(loaded.writable, at('meta.loadedAddresses.writable'), sig);
    const readonly = asArray(loaded.readonly, at('meta.loadedAddresses.readonly'), sig);
    if (writable.length !== wire.lookups.writable || readonly.length !== wire.lookups.readonly) {
      throw new DecodeError(
        at('meta.loadedAddresses'),
        `has ${writable.length} writable + ${readonly.length} readonly addresses, the message's lookups select ${wire.lookups.writable} + ${wire.lookups.readonly}`,
        { signature: sig },
      );
    }
    accounts = accounts.slice();
    for (const [list, name] of [
      [writable, 'writable'],
      [readonly, 'readonly'],
    ] as const) {
      for (let i = 0; i < list.length; i++) {
        const f = at(`meta.loadedAddresses.${name}[${i}]`);
        const a = asString(list[i], f, sig);
        if (a.length < 32 || a.length > 44 || firstNonBase58(a) >= 0) {
          throw new DecodeError(f, `not a base58 pubkey: ${JSON.stringify(a.slice(0, 50))}`, { signature: sig });
        }
        accounts.push(a);
      }
    }
  }

  let isVote = false;
  const groups = new Array<InstructionGroup>(wire.instructions.length);
  for (let k = 0; k < wire.instructions.length; k++) {
    const ix = wire.instructions[k]!;
    const programId = accounts[ix.programIndex];
    if (programId === undefined) {
      throw new DecodeError(
        at(`${MSG}.instructions[${k}].programIdIndex`),
        `account index ${ix.programIndex} out of range (${accounts.length} accounts)`,
        { signature: sig },
      );
    }
    if (programId === VOTE_PROGRAM_ID) isVote = true;
    const accs = resolve(accounts, ix.accountIndices, at(`${MSG}.instructions[${k}].accounts`), sig);
    groups[k] = { outer: { programId, data: ix.data, accounts: accs }, inner: [] };
  }

  const innerList = m.innerInstructions;
  if (innerList !== undefined && innerList !== null) {
    const list = asArray(innerList, at('meta.innerInstructions'), sig);
    for (let g = 0; g < list.length; g++) {
      const gf = at(`meta.innerInstructions[${g}]`);
      const entry = asObject(list[g], gf, sig);
      const index = asUint(entry.index, `${gf}.index`, sig);
      const group = groups[index];
      if (group === undefined) {
        throw new DecodeError(`${gf}.index`, `${index} out of range (${groups.length} outer instructions)`, { signature: sig });
      }
      const ixs = asArray(entry.instructions, `${gf}.instructions`, sig);
      for (let i = 0; i < ixs.length; i++) {
        const f = `${gf}.instructions[${i}]`;
        const ui = asObject(ixs[i], f, sig);
        if (ui.data === undefined && ('parsed' in ui || 'program' in ui)) {
          throw new DecodeError(f, 'parsed inner instructions are not supported (request base64 encoding)', { signature: sig });
        }
        const pIndex = asUint(ui.programIdIndex, `${f}.programIdIndex`, sig, 255);
        const programId = accounts[pIndex];
        if (programId === undefined) {
          throw new DecodeError(`${f}.programIdIndex`, `account index ${pIndex} out of range (${accounts.length} accounts)`, {
            signature: sig,
          });
        }
        const idx = asArray(ui.accounts, `${f}.accounts`, sig);
        const accs = new Array<string>(idx.length);
        for (let j = 0; j < idx.length; j++) {
          const a = accounts[asUint(idx[j], `${f}.accounts[${j}]`, sig, 255)];
          if (a === undefined) {
            throw new DecodeError(`${f}.accounts[${j}]`, `account index ${idx[j] as number} out of range (${accounts.length} accounts)`, {
              signature: sig,
            });
          }
          accs[j] = a;
        }
        const data = asString(ui.data, `${f}.data`, sig);
        const bad = firstNonBase58(data);
        if (bad >= 0) {
          throw new DecodeError(`${f}.data`, `invalid base58 character ${JSON.stringify(data[bad])} at index ${bad}`, {
            signature: sig,
          });
        }
        group.inner.push(lazyInstruction(programId, accs, data));
      }
    }
  }

  return { signature: sig, error, isVote, groups };
}

/**
 * Decodes one `getTransaction` result (`encoding: "base64"`, spec §1.2):
 * `{slot, blockTime, transaction: [<base64>, "base64"], meta: {err, innerInstructions, loadedAddresses, …}, version}`.
 * `blockTime` null/absent → 0.
 * @throws DecodeError naming the field and the reason, e.g. `transaction.message: truncated at byte 311 (…)`.
 */
export function decodeTransactionJson(json: unknown): { slot: number; blockTime: number; transaction: TransactionInfo } {
  const o = asObject(json, 'getTransaction result');
  const slot = asUint(o.slot, 'slot');
  const blockTime = o.blockTime === null || o.blockTime === undefined ? 0 : asUint(o.blockTime, 'blockTime');
  const transaction = decodeTransactionEnvelope(o.transaction, o.meta);
  return { slot, blockTime, transaction };
}

/**
 * Decodes one `getBlock` result (`encoding: "base64"`, `transactionDetails: "full"`):
 * `{parentSlot, blockTime, blockHeight, blockhash, previousBlockhash, transactions: [{transaction, meta, version}]}`.
 * Like Photon, a missing `blockTime` or `blockHeight` is an error and a missing `transactions`
 * list means no transactions. `blockhash`/`previousBlockhash` must be 32-byte base58 values.
 * @param slot the slot the block was requested for (not part of the result).
 * @throws DecodeError; transaction errors are prefixed `transactions[i].`.
 */
export function decodeBlockJson(json: unknown, slot: number): BlockInfo {
  const o = asObject(json, 'getBlock result');
  const parentSlot = asUint(o.parentSlot, 'parentSlot');
  const blockTime = asUint(o.blockTime, 'blockTime');
  const blockHeight = asUint(o.blockHeight, 'blockHeight');
  const blockhash = asString(o.blockhash, 'blockhash');
  const previousBlockhash = asString(o.previousBlockhash, 'previousBlockhash');
  for (const [v, f] of [
    [blockhash, 'blockhash'],
    [previousBlockhash, 'previousBlockhash'],
  ] as const) {
    if (base58Decode(v, f).length !== 32) throw new DecodeError(f, `expected 32 bytes, got ${JSON.stringify(v)}`);
  }
  const list = o.transactions === undefined || o.transactions === null ? [] : asArray(o.transactions, 'transactions');
  const transactions = new Array<TransactionInfo>(list.length);
  for (let i = 0; i < list.length; i++) {
    const t = asObject(list[i], `transactions[${i}]`);
    transactions[i] = decodeTransactionEnvelope(t.transaction, t.meta, `transactions[${i}]`);
  }
  return { slot, parentSlot, blockTime, blockHeight, blockhash, previousBlockhash, transactions };
}
