/**
 * Checked reads of parsed RPC JSON (the `getTransaction` / `getBlock` results): each returns the
 * value in the expected shape or throws a {@link DecodeError} naming the field and what was found
 * instead (`meta.err: missing`, `slot: expected an integer in [0, …], got string "7"`). Pure, no I/O.
 */
import { DecodeError } from './errors.ts';

/** A parsed JSON object. */
export type Json = Record<string, unknown>;

/** `v` described for an error message: `null`, `an array`, `an object` or `<type> <value>` (≤ 40 chars). */
export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)?.slice(0, 40)}`;
}

/**
 * `v` as a JSON object (not null, not an array).
 * @param sig the transaction's signature for the error, when known.
 * @throws DecodeError(`field`, `missing` | `expected an object, got …`).
 */
export function asObject(v: unknown, field: string, sig?: string): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new DecodeError(field, v === undefined ? 'missing' : `expected an object, got ${describe(v)}`, { signature: sig });
  }
  return v as Json;
}

/**
 * `v` as an array.
 * @throws DecodeError(`field`, `missing` | `expected an array, got …`).
 */
export function asArray(v: unknown, field: string, sig?: string): unknown[] {
  if (!Array.isArray(v)) {
    throw new DecodeError(field, v === undefined ? 'missing' : `expected an array, got ${describe(v)}`, { signature: sig });
  }
  return v;
}

/**
 * `v` as an integer in [0, `max`] (default: the largest safe integer).
 * @throws DecodeError(`field`, `missing` | `expected an integer in [0, max], got …`).
 */
export function asUint(v: unknown, field: string, sig?: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) {
    throw new DecodeError(
      field,
      v === undefined ? 'missing' : `expected an integer in [0, ${max}], got ${describe(v)}`,
      { signature: sig },
    );
  }
  return v;
}

/**
 * `v` as a string.
 * @throws DecodeError(`field`, `missing` | `expected a string, got …`).
 */
export function asString(v: unknown, field: string, sig?: string): string {
  if (typeof v !== 'string') {
    throw new DecodeError(field, v === undefined ? 'missing' : `expected a string, got ${describe(v)}`, { signature: sig });
  }
  return v;
}

/**
 * Strict base64 → bytes (a view of Node's decoded buffer). Node's decoder silently skips bad
 * characters, so the length must be a multiple of 4 and the output length must match it. (Node
 * also reads '-' and '_' as 62/63.)
 * @throws DecodeError(`field`, `invalid base64: …`).
 */
export function base64Decode(s: string, field: string): Uint8Array {
  if (s.length % 4 !== 0) throw new DecodeError(field, `invalid base64: length ${s.length} is not a multiple of 4`);
  const buf = Buffer.from(s, 'base64');
  let pad = 0;
  if (s.length > 0 && s.charCodeAt(s.length - 1) === 61) pad = s.charCodeAt(s.length - 2) === 61 ? 2 : 1;
  if (buf.length !== (s.length / 4) * 3 - pad) {
    throw new DecodeError(field, 'invalid base64: bad character or misplaced padding');
  }
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
}
