/**
 * JSON serialisation for responses, with exact u64 numbers and verbatim raw JSON.
 *
 * `JSON.stringify` cannot write integers above 2^53 exactly (and throws on bigint). Values that must
 * be emitted as exact JSON numbers are wrapped (`ExactU64`, made by `u64()` in resultEncoding.ts or by
 * `exactU64()`), and pre-encoded JSON text is wrapped with `rawJson()`. Both wrappers serialise
 * natively (via `toJSON`) to a sentinel string that contains a per-process random nonce; one regex
 * pass then splices the exact digits / raw text in place of the quoted sentinel. The fast path (no
 * wrapper present) is a plain `JSON.stringify` plus one `includes` scan.
 *
 * A bare `bigint` anywhere in the value is also accepted (serialised exactly), at the cost of a
 * replacer pass.
 */
import { randomBytes } from 'node:crypto';

const NONCE = randomBytes(9).toString('hex');
/** The text a sentinel starts with inside JSON output: `"` is followed by an escaped NUL, then the nonce. */
const SENTINEL_PREFIX = `\u0000${NONCE}:`;
const SENTINEL_IN_JSON = `"\\u0000${NONCE}:`;
const SENTINEL_RE = new RegExp(`"\\\\u0000${NONCE}:(?:N(\\d+)|R((?:[^"\\\\]|\\\\.)*))"`, 'g');

/** An unsigned integer written as an exact JSON number. `digits` are decimal digits. */
export class ExactU64 {
  readonly digits: string;
  constructor(value: bigint) {
    if (value < 0n) throw new RangeError(`u64 cannot be negative: ${value}`);
    this.digits = value.toString(10);
  }
  /** Called by JSON.stringify: the sentinel the serializer replaces. */
  toJSON(): string {
    return `${SENTINEL_PREFIX}N${this.digits}`;
  }
}

/** Wrap a non-negative bigint so that `stringifyJson` writes it as an exact JSON number. */
export function exactU64(value: bigint): ExactU64 {
  return new ExactU64(value);
}

/** Pre-encoded JSON text spliced verbatim into the output. The text must be valid JSON (not checked). */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toJSON(): string {
    return `${SENTINEL_PREFIX}R${this.text}`;
  }
}

/** Wrap valid JSON text (e.g. a Solana response passed through) so it is emitted byte for byte. */
export function rawJson(text: string): RawJson {
  return new RawJson(text);
}

function bigintReplacer(key: string, v: unknown): unknown {
  if (typeof v !== 'bigint') return v;
  if (v < 0n) throw new RangeError(`negative bigint at "${key}"`);
  return `${SENTINEL_PREFIX}N${v.toString(10)}`;
}

function splice(json: string): string {
  if (!json.includes(SENTINEL_IN_JSON)) return json;
  return json.replace(SENTINEL_RE, (_m, digits: string | undefined, escaped: string | undefined) =>
    digits !== undefined ? digits : (JSON.parse(`"${escaped}"`) as string),
  );
}

/**
 * Serialise a response value to JSON text. Handles `ExactU64`, `RawJson` and bare non-negative
 * bigints; everything else as `JSON.stringify`. Throws RangeError on a negative bigint.
 */
export function stringifyJson(value: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof TypeError) || !/BigInt/i.test(err.message)) throw err;
    json = JSON.stringify(value, bigintReplacer);
  }
  return splice(json);
}
