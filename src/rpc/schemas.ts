/**
 * zod building blocks for method params. Each one validates the JSON input, decodes it to the
 * domain form (bytes, numbers) and carries an OpenAPI description (serve with `io: 'input'`).
 *
 * Error messages are the reason part of `Invalid params: <field>: <reason>`; the field path is
 * added by params.ts.
 */
import * as base58 from '../solana/base58.ts';
import { z } from 'zod';
import { PAGE_LIMIT } from '../light/constants.ts';
import type { Hash, Pubkey, Signature } from '../types.ts';
import { SLOW, fastParserOf, registerFast } from './fastParams.ts';

/** BN254 scalar field modulus r; hashes and roots are field elements below it. */
export const BN254_MODULUS = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

/** Longest base58 text we try to decode (DoS guard; 64 bytes need at most 88 chars). */
const MAX_B58_CHARS = 512;

/** Describe a JSON input's type for messages: `null`, `array`, or `typeof`. */
export function describeInput(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** base58-decode, or a reason string on failure. */
function decodeB58(s: string): Uint8Array | string {
  if (s.length > MAX_B58_CHARS) return `string too long (${s.length} chars)`;
  const bytes = base58.tryDecode(s);
  return bytes ?? 'non-base58 character';
}

/** `decodeB58` expecting `size` bytes: the fixed-width decoder for 32 bytes (same bytes), the general one otherwise or on failure. */
function decodeB58Sized(s: string, size: number): Uint8Array | string {
  if (size === 32) {
    const b = base58.decode32(s);
    if (b) return b;
  }
  return decodeB58(s);
}

/** The modulus as 32 big-endian bytes: a 32-byte value is a field element iff it compares below. */
const MODULUS_BE = Buffer.from(BN254_MODULUS.toString(16).padStart(64, '0'), 'hex');

/**
 * A base58 string that decodes to exactly `size` bytes; `what` names it in messages
 * (e.g. `invalid base58 pubkey (expected 32 bytes, got 31)`).
 */
function fixedBase58<T extends Uint8Array>(what: string, size: number, description: string, checkField = false) {
  /** The decoded bytes (branded `T`: the length is checked here), or the reason they are not acceptable. */
  const check = (s: string): T | string => {
    const bytes = decodeB58Sized(s, size);
    if (typeof bytes === 'string') return `invalid base58 ${what} (${bytes})`;
    if (bytes.length !== size) return `invalid base58 ${what} (expected ${size} bytes, got ${bytes.length})`;
    if (checkField && Buffer.compare(bytes, MODULUS_BE) >= 0) return `invalid ${what} (value is not below the BN254 field modulus)`;
    return bytes as T;
  };
  const schema = z
    .string({ error: (iss) => `invalid base58 ${what} (expected a string, got ${describeInput(iss.input)})` })
    .meta({ description, format: 'base58' })
    .transform((s, ctx) => {
      const r = check(s);
      if (typeof r !== 'string') return r;
      ctx.addIssue({ code: 'custom', message: r, input: s });
      return z.NEVER;
    });
  return registerFast(schema, (v) => {
    if (typeof v !== 'string') return SLOW;
    const r = check(v);
    return typeof r === 'string' ? SLOW : r;
  });
}

/** A 32-byte pubkey (also used for addresses, as Photon's `SerializablePubkey`). Output: a {@link Pubkey} (Uint8Array(32)). */
export const pubkey = fixedBase58<Pubkey>('pubkey', 32, 'Base58-encoded 32-byte public key');

/** A 32-byte hash: base58, big-endian value below the BN254 modulus. Output: a {@link Hash} (Uint8Array(32)). */
export const hash = fixedBase58<Hash>('hash', 32, 'Base58-encoded 32-byte hash, a BN254 field element (big-endian, below the modulus)', true);

/** A 64-byte transaction signature, base58. Output: the canonical base58 string. */
export const signature = fixedBase58<Signature>('signature', 64, 'Base58-encoded 64-byte transaction signature').transform((b) => base58.encode(b));

/** Any base58 byte string (Photon `Base58String`), e.g. a pagination cursor or memcmp bytes. Output: Uint8Array. */
export const base58Bytes = registerFast(
  z
    .string({ error: (iss) => `invalid base58 string (expected a string, got ${describeInput(iss.input)})` })
    .meta({ description: 'Base58-encoded bytes', format: 'base58' })
    .transform((s, ctx) => {
      const bytes = decodeB58(s);
      if (typeof bytes === 'string') {
        ctx.addIssue({ code: 'custom', message: `invalid base58 string (${bytes})`, input: s });
        return z.NEVER;
      }
      return bytes;
    }),
  (v) => {
    if (typeof v !== 'string') return SLOW;
    const bytes = decodeB58(v);
    return typeof bytes === 'string' ? SLOW : bytes;
  },
);

/** An opaque cursor string, decoded by the method (signature cursors: Photon validates them late). */
export const cursorString = z
  .string({ error: (iss) => `expected a cursor string, got ${describeInput(iss.input)}` })
  .max(MAX_B58_CHARS, { error: `cursor too long (max ${MAX_B58_CHARS} chars)` })
  .meta({ description: 'Opaque pagination cursor from a previous response' });

const limitMessage = (iss: { input?: unknown }) =>
  `must be an integer between 1 and ${PAGE_LIMIT} (got ${typeof iss.input === 'number' ? iss.input : describeInput(iss.input)})`;

/** Page size: integer 1..1000, default 1000 when absent or null. Output: number. */
export const limit = registerFast(
  z
    .int({ error: limitMessage })
    .min(1, { error: limitMessage })
    .max(PAGE_LIMIT, { error: limitMessage })
    .meta({ description: `Page size, 1..${PAGE_LIMIT}`, default: PAGE_LIMIT })
    .nullish()
    .transform((v) => v ?? PAGE_LIMIT),
  (v) => (v === undefined || v === null ? PAGE_LIMIT : Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= PAGE_LIMIT ? v : SLOW),
);

/** A non-negative integer offset/length (`usize`). */
export const usize = registerFast(
  z
    .int({ error: (iss) => `expected a non-negative integer, got ${describeInput(iss.input)}` })
    .min(0, { error: 'expected a non-negative integer' })
    .max(Number.MAX_SAFE_INTEGER, { error: 'value too large' }),
  (v) => (Number.isSafeInteger(v) && (v as number) >= 0 ? v : SLOW),
);

/** Start of the too-many-items message (parseParams turns it into Photon's ValidationError). */
export const TOO_MANY = 'Too many ';

/**
 * An array of at most 1000 items. `noun` words the too-many message as Photon does:
 * `Too many <noun> requested <n>. Maximum allowed: 1000` (-32000 `Validation Error: …`).
 */
export function boundedArray<T extends z.ZodType>(item: T, noun: string) {
  const schema = z
    .array(item, { error: (iss) => `expected an array, got ${describeInput(iss.input)}` })
    .max(PAGE_LIMIT, {
      error: (iss) => `${TOO_MANY}${noun} requested ${Array.isArray(iss.input) ? iss.input.length : '?'}. Maximum allowed: ${PAGE_LIMIT}`,
    });
  const each = fastParserOf(item);
  if (!each) return schema;
  return registerFast(schema, (v) => {
    if (!Array.isArray(v) || v.length > PAGE_LIMIT) return SLOW;
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      const r = each(v[i]);
      if (r === SLOW) return SLOW;
      out[i] = r;
    }
    return out;
  });
}

/** Optional field: absent and null both mean "not given" (serde `Option` with `default`). */
export function optional<T extends z.ZodType>(schema: T) {
  const opt = schema.nullish().transform((v) => v ?? undefined);
  const inner = fastParserOf(schema);
  return inner ? registerFast(opt, (v) => (v === undefined || v === null ? undefined : inner(v))) : opt;
}
