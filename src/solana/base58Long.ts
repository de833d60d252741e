/**
 * Base58 decoding of LONG strings (inner-instruction data of Light transactions: noop events,
 * system-program instruction data), the one base58 routine Refract keeps of its own.
 *
 * Why not only `bs58`: every Light event reaches us base58-encoded (the RPC's `innerInstructions`
 * format), and `bs58`/`base-x` decode is quadratic in the length — measured ≈1 ms for a 560-byte
 * event vs ≈32 µs here (kit's base58 is ≈0.7 ms), which alone caps ingest at ≈3,000 transactions/s
 * per core. Signatures to store keys go through `base58DecodeChecked` (invalid input throws); other
 * short values and all encoding use `bs58`. This decoder is
 * cross-checked against `bs58.decode` on every fixture and on random inputs (test/decode.test.ts).
 *
 * Backends: the native addon's `base58Decode` (C, u64 limbs, 10-digit chunks: ≈6 µs for a 700-byte
 * event) when it is built, else the BigInt method below.
 *
 * BigInt method: 9-digit chunks (58^9 < 2^53, exact in a Number) become BigInts that are combined pairwise
 * (divide and conquer), so the big multiplications run in V8's C++ BigInt code.
 */
import bs58 from 'bs58';
import { nativeAddon } from '../native.ts';
import { BASE58_ALPHABET } from './base58Fixed.ts';

const MAP = new Int8Array(128).fill(-1);
for (let i = 0; i < 58; i++) MAP[BASE58_ALPHABET.charCodeAt(i)] = i;

/** POW9[k] = 58^(9·2^k), grown on demand (the big powers cost hundreds of ms to compute). */
const POW9: bigint[] = [58n ** 9n];
function pow9(k: number): bigint {
  while (POW9.length <= k) POW9.push(POW9[POW9.length - 1]! * POW9[POW9.length - 1]!);
  return POW9[k]!;
}

/**
 * Decodes a string that is known to be valid base58 (validate first; an invalid character gives
 * garbage, not an error). Same bytes as `bs58.decode(s)`.
 */
export function base58DecodeLong(s: string): Uint8Array {
  if (nativeDecode) {
    const r = nativeDecode(s);
    if (typeof r !== 'number') return r;
  }
  return base58DecodeBigInt(s);
}

const nativeDecode = process.env.REFRACT_BASE58 === 'js' ? undefined : nativeAddon?.base58Decode;

/**
 * Decodes any string, valid or not: the native decoder when built (≈10× bs58 on an 88-character
 * signature), else `bs58.decode`. Same bytes as `bs58.decode(s)`.
 * @throws bs58's Error ("Non-base58 character") when `s` is not base58.
 */
export function base58DecodeChecked(s: string): Uint8Array {
  const r = nativeDecode?.(s);
  return r !== undefined && typeof r !== 'number' ? r : bs58.decode(s);
}

/** The BigInt (divide and conquer) decoder; exported for tests. Same contract as base58DecodeLong. */
export function base58DecodeBigInt(s: string): Uint8Array {
  const n = s.length;
  let zeros = 0;
  while (zeros < n && s.charCodeAt(zeros) === 49) zeros++;
  if (zeros === n) return new Uint8Array(zeros);
  const count = Math.ceil((n - zeros) / 9);
  let parts = new Array<bigint>(count); // least significant first
  for (let j = 0; j < count; j++) {
    const end = n - 9 * j;
    let chunk = 0;
    for (let i = Math.max(zeros, end - 9); i < end; i++) chunk = chunk * 58 + MAP[s.charCodeAt(i)]!;
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
  const out = new Uint8Array(zeros + (hex.length >>> 1));
  out.set(Buffer.from(hex, 'hex'), zeros);
  return out;
}
