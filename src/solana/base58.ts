/**
 * Base58 (the Bitcoin alphabet Solana uses for keys, hashes and signatures): Refract's one base58
 * module. Every function gives the same bytes / text as the `bs58` package (leading zero bytes ↔
 * leading `1`s); test/base58.test.ts holds them equal on random and edge-case inputs.
 *
 * Use it as a namespace: `import * as base58 from '../solana/base58.ts'`, then
 * - `base58.encode(bytes)`: any length. Lengths 4, 8, …, 64 (keys, hashes, signatures, cursors) take
 *   the limb encoder below, others go to `bs58`.
 * - `base58.encode32(bytes)`: the same text, through a memo for 32-byte values that recur (the API's
 *   responses: owners, trees, mints, upper proof nodes).
 * - `base58.decode(s, field)`: any string; an invalid character is a {@link DecodeError} naming it.
 * - `base58.decode32(s)`: the 32 bytes of `s`, or undefined when it is not base58 of exactly 32 bytes
 *   (callers then take `decode` / `tryDecode` for the reason).
 * - `base58.tryDecode(s)`: the bytes, or undefined on an invalid character (as `bs58.decodeUnsafe`).
 * - `base58.decodeValidated(s)`: a string already checked with {@link firstInvalidChar} (lazily
 *   materialised inner-instruction data).
 *
 * Why not only `bs58`: `base-x` converts one byte / one digit at a time, quadratic in the length.
 * - Encoding: here the value is held in 32-bit limbs and converted three base-58 digits at a time
 *   (58³ · 2³² < 2⁵³, so every step is exact in a double): ≈0.5 µs for 32 bytes and ≈1.5 µs for 64,
 *   against ≈2 and ≈7 µs (a 64-byte signature per transaction was ≈3% of ingest CPU).
 * - Fixed-width decoding of 32-byte params (limbs, three digits at a time): ≈0.4 µs vs ≈1.8 µs.
 * - Long strings (every Light event reaches us base58-encoded in `innerInstructions`): the native
 *   addon's decoder (native/kernels/src/base58.c, u64 limbs, 10-digit chunks: ≈6 µs for a 700-byte
 *   event, ≈10× bs58 on an 88-character signature) when it is built, else a BigInt divide-and-conquer
 *   decoder (≈32 µs for 560 bytes vs ≈1 ms for bs58). `REFRACT_BASE58=js` disables the native path.
 */
import { envValue } from '../config/config.ts';
import bs58 from 'bs58';
import { nativeAddon } from '../native.ts';
import { DecodeError } from './errors.ts';

/** The base58 (Bitcoin) alphabet: digit value → character. */
export const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** char code (< 128) → digit value, or -1. */
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < 58; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;

const TWO32 = 2 ** 32;

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

const NON_B58 = /[^1-9A-HJ-NP-Za-km-z]/;

/** Index of the first character of `s` outside the base58 alphabet, or -1 when `s` is all base58. */
export function firstInvalidChar(s: string): number {
  return s.search(NON_B58);
}

/** The DecodeError of an invalid character: `<field>: invalid base58 character "x" at index i`. */
function invalidChar(s: string, index: number, field: string): DecodeError {
  return new DecodeError(field, `invalid base58 character ${JSON.stringify(s[index])} at index ${index}`);
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

const CODES = Buffer.from(ALPHABET, 'latin1');
const B3 = 58 * 58 * 58;
/** PAIRS[2v], PAIRS[2v+1]: the two digit characters of v < 58². */
const PAIRS = new Uint8Array(58 * 58 * 2);
for (let v = 0; v < 58 * 58; v++) {
  PAIRS[2 * v] = CODES[Math.floor(v / 58)]!;
  PAIRS[2 * v + 1] = CODES[v % 58]!;
}
/** Longest input of the limb encoder (a signature). */
const MAX_LIMB_BYTES = 64;
/** Scratch of the encoder: up to 16 limbs, most significant first. */
const encodeLimbs = new Float64Array(MAX_LIMB_BYTES / 4);
/** Scratch for the text: ≤ 88 digits for 64 bytes (3 per group, some dropped) plus one `1` per zero byte. */
const out = Buffer.alloc(2 * MAX_LIMB_BYTES + 32);

/**
 * The base58 text of a number held in big-endian 32-bit limbs `limbs[0..n)` (consumed: left zero),
 * written into the end of `dst`: repeated division by 58³, three digits a step from the least
 * significant end, the zero digits of the most significant group dropped, then one `1` per leading
 * zero byte of the input (`zeros`). Limbs before `first` are known zero (any zero limbs after it are skipped).
 * @returns where the text starts in `dst` (it ends at `dst.length`)
 */
function limbDigits(limbs: Float64Array, first: number, n: number, zeros: number, dst: Uint8Array): number {
  let pos = dst.length;
  while (first < n && limbs[first] === 0) first++;
  while (first < n) {
    let r = 0;
    for (let i = first; i < n; i++) {
      const cur = r * TWO32 + limbs[i]!;
      // cur < 58³ · 2³² < 2⁵³ and a true quotient is ≥ 1/58³ away from the next integer, more
      // than the division's rounding error, so the floor is exact.
      const q = Math.floor(cur / B3);
      r = cur - q * B3;
      limbs[i] = q;
    }
    while (first < n && limbs[first] === 0) first++;
    const d0 = Math.floor(r / 3364);
    const lo = (r - d0 * 3364) * 2;
    dst[--pos] = PAIRS[lo + 1]!;
    dst[--pos] = PAIRS[lo]!;
    dst[--pos] = CODES[d0]!;
  }
  while (pos < dst.length && dst[pos] === 49) pos++;
  for (let i = 0; i < zeros; i++) dst[--pos] = 49;
  return pos;
}

/**
 * base58 of `bytes`, exactly as `bs58.encode(bytes)`. Lengths 4, 8, …, 64 take the limb encoder;
 * any other length (including 0) is encoded by `bs58`.
 * @param bytes any byte array, or a view into a larger one (not modified).
 * @returns the text; on the limb path a flat (non-rope) string, safe to keep in a memo.
 */
export function encode(bytes: Uint8Array): string {
  const len = bytes.length;
  if (len === 0 || len > MAX_LIMB_BYTES || (len & 3) !== 0) return bs58.encode(bytes);
  const n = len >> 2;
  let zeros = 0;
  while (zeros < len && bytes[zeros] === 0) zeros++;
  for (let i = 0; i < n; i++) {
    const o = i * 4;
    encodeLimbs[i] = bytes[o]! * 0x1000000 + ((bytes[o + 1]! << 16) | (bytes[o + 2]! << 8) | bytes[o + 3]!);
  }
  const pos = limbDigits(encodeLimbs, zeros >> 2, n, zeros, out);
  return (out as unknown as { latin1Slice(s: number, e: number): string }).latin1Slice(pos, out.length);
}

/**
 * base58 of `bytes` of any length, exactly as `bs58.encode(bytes)`: up to 64 bytes in steps of 4
 * {@link encode}; longer values (the simulator's inner-instruction data) the same limb method over
 * a fresh buffer, O(n²/12) limb steps instead of bs58's O(n²) byte steps.
 */
export function encodeLong(bytes: Uint8Array): string {
  const len = bytes.length;
  if (len === 0) return '';
  if (len <= MAX_LIMB_BYTES && (len & 3) === 0) return encode(bytes);
  let zeros = 0;
  while (zeros < len && bytes[zeros] === 0) zeros++;
  // Limbs of 4 bytes, most significant first; the first limb takes the len % 4 leading bytes.
  const n = Math.ceil(len / 4);
  const limbs = new Float64Array(n);
  const head = len - (n - 1) * 4;
  let v = 0;
  for (let i = 0; i < head; i++) v = v * 256 + bytes[i]!;
  limbs[0] = v;
  for (let i = 1; i < n; i++) {
    const o = head + (i - 1) * 4;
    limbs[i] = bytes[o]! * 0x1000000 + ((bytes[o + 1]! << 16) | (bytes[o + 2]! << 8) | bytes[o + 3]!);
  }
  // ≤ 1.37 digits per byte, 3 per group: room for every group, plus the `1`s of the zero bytes.
  const dst = Buffer.allocUnsafe(Math.ceil((len * 1.3658) / 3) * 3 + 3 + zeros);
  const pos = limbDigits(limbs, 0, n, zeros, dst);
  return dst.toString('latin1', pos, dst.length);
}

/**
 * A small direct-mapped memo of 32-byte encodings: the same pubkeys (owner of a page, trees, queues,
 * mints) and upper proof nodes recur within a response and across requests. Slot = low bits of
 * the last bytes; a hit is a 32-byte compare (≈0.05 µs), a miss costs the compare plus a copy.
 * Bounded: MEMO_SLOTS × (32 bytes + one ≤44-char string). One per thread (module state).
 */
const MEMO_SLOTS = 1024;
const memoBytes = new Uint8Array(MEMO_SLOTS * 32);
const memoText: (string | undefined)[] = new Array(MEMO_SLOTS).fill(undefined);

/**
 * base58 of a 32-byte value (hash, pubkey, root), memoised; same text as {@link encode} and
 * `bs58.encode`. Any other length is passed to {@link encode} unmemoised.
 */
export function encode32(bytes: Uint8Array): string {
  if (bytes.length !== 32) return encode(bytes);
  const slot = ((bytes[31]! | (bytes[30]! << 8)) ^ bytes[0]!) & (MEMO_SLOTS - 1);
  const o = slot * 32;
  const text = memoText[slot];
  if (text !== undefined) {
    let i = 0;
    while (i < 32 && memoBytes[o + i] === bytes[i]) i++;
    if (i === 32) return text;
  }
  const s = encode(bytes);
  memoBytes.set(bytes, o);
  memoText[slot] = s;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

/**
 * The addon's decoder: bytes, or the index of the first character it rejects. It reads the string
 * as latin1, so a code unit above 0xff is truncated to its low byte (U+0131 reads as '1'): callers
 * hand it only strings that passed {@link firstInvalidChar}.
 */
const nativeDecode = envValue('REFRACT_BASE58') === 'js' ? undefined : nativeAddon?.base58Decode;

/**
 * The bytes of base58 text `s` (any length), exactly as `bs58.decode(s)`: the native decoder when
 * built, else `bs58`.
 * @param field names the value in the error (e.g. `transaction[0]`, `programs[2]`).
 * @throws DecodeError(`field`, `invalid base58 character "x" at index i`) when `s` is not base58.
 */
export function decode(s: string, field = 'base58'): Uint8Array {
  const bad = firstInvalidChar(s);
  if (bad >= 0) throw invalidChar(s, bad, field);
  return decodeValidated(s);
}

/** The bytes of `s`, or undefined when it holds a non-base58 character (as `bs58.decodeUnsafe`). */
export function tryDecode(s: string): Uint8Array | undefined {
  return firstInvalidChar(s) >= 0 ? undefined : decodeValidated(s);
}

/** Above this many characters, without the addon, the BigInt decoder beats `bs58` (quadratic). */
const LONG_CHARS = 100;

/**
 * The bytes of a string already known to be base58 ({@link firstInvalidChar} is -1); same bytes as
 * `bs58.decode(s)`. An invalid character gives garbage, not an error: validate first.
 */
export function decodeValidated(s: string): Uint8Array {
  if (nativeDecode) {
    try {
      const r = nativeDecode(s);
      if (typeof r !== 'number') return r;
    } catch {
      // The addon sizes its output as if no byte were a leading zero (base58_decoded_max), so a
      // string with more than a few leading `1`s fails there ("out of memory"): decode it below.
    }
  }
  return s.length > LONG_CHARS ? decodeBigInt(s) : bs58.decode(s);
}

/** Scratch of the fixed-width decoder: 8 limbs, most significant first. */
const decodeLimbs = new Float64Array(8);

/**
 * The 32 bytes `s` decodes to, or undefined when it is not base58 of exactly 32 bytes (invalid
 * character, other length): callers then use {@link decode} or {@link tryDecode} for the reason.
 * Same bytes as `bs58.decode(s)` whenever that has 32 bytes.
 */
export function decode32(s: string): Uint8Array | undefined {
  const n = s.length;
  if (n === 0 || n > 64) return undefined;
  let zeros = 0;
  while (zeros < n && s.charCodeAt(zeros) === 49) zeros++;
  decodeLimbs.fill(0);
  // value = value · 58^k + chunk, k = 1..3 digits at a time; limbs least significant last.
  let i = zeros;
  while (i < n) {
    let chunk = 0;
    let mul = 1;
    for (let k = 0; k < 3 && i < n; k++, i++) {
      const c = s.charCodeAt(i);
      const d = c < 128 ? DIGIT[c]! : -1;
      if (d < 0) return undefined;
      chunk = chunk * 58 + d;
      mul *= 58;
    }
    let carry = chunk;
    for (let j = 7; j >= 0; j--) {
      const cur = decodeLimbs[j]! * mul + carry;
      carry = Math.floor(cur / TWO32);
      decodeLimbs[j] = cur - carry * TWO32;
    }
    if (carry !== 0) return undefined; // ≥ 2^256: more than 32 bytes
  }
  const bytes = new Uint8Array(32);
  for (let j = 0; j < 8; j++) {
    const v = decodeLimbs[j]!;
    const hi = Math.floor(v / 0x1000000);
    const lo = v - hi * 0x1000000;
    bytes[j * 4] = hi;
    bytes[j * 4 + 1] = lo >>> 16;
    bytes[j * 4 + 2] = (lo >>> 8) & 0xff;
    bytes[j * 4 + 3] = lo & 0xff;
  }
  // bs58 output = `zeros` zero bytes + the number's minimal big-endian bytes: 32 bytes iff those add up.
  let lead = 0;
  while (lead < 32 && bytes[lead] === 0) lead++;
  return zeros + (32 - lead) === 32 ? bytes : undefined;
}

/** POW9[k] = 58^(9·2^k), grown on demand (the big powers cost hundreds of ms to compute). */
const POW9: bigint[] = [58n ** 9n];
function pow9(k: number): bigint {
  while (POW9.length <= k) POW9.push(POW9[POW9.length - 1]! * POW9[POW9.length - 1]!);
  return POW9[k]!;
}

/**
 * The pure-JS long-string decoder (used without the addon; exported for tests); same contract as
 * {@link decodeValidated}. 9-digit chunks (58⁹ < 2⁵³, exact in a Number) become BigInts combined
 * pairwise (divide and conquer), so the big multiplications run in V8's C++ BigInt code.
 */
export function decodeBigInt(s: string): Uint8Array {
  const n = s.length;
  let zeros = 0;
  while (zeros < n && s.charCodeAt(zeros) === 49) zeros++;
  if (zeros === n) return new Uint8Array(zeros);
  const count = Math.ceil((n - zeros) / 9);
  let parts = new Array<bigint>(count); // least significant first
  for (let j = 0; j < count; j++) {
    const end = n - 9 * j;
    let chunk = 0;
    for (let i = Math.max(zeros, end - 9); i < end; i++) chunk = chunk * 58 + DIGIT[s.charCodeAt(i)]!;
    parts[j] = BigInt(chunk);
  }
  for (let level = 0; parts.length > 1; level++) {
    const pow = pow9(level);
    const len = parts.length;
    const next = new Array<bigint>((len + 1) >>> 1);
    for (let j = 0; j < len; j += 2) next[j >>> 1] = j + 1 < len ? parts[j + 1]! * pow + parts[j]! : parts[j]!;
    parts = next;
  }
  let hex = parts[0]!.toString(16);
  if (hex.length & 1) hex = `0${hex}`;
  const bytes = new Uint8Array(zeros + (hex.length >>> 1));
  bytes.set(Buffer.from(hex, 'hex'), zeros);
  return bytes;
}
