/**
 * Fast paths for params validation, derived from the same zod schemas (a cache of "how to parse
 * a valid input" per schema): parsing `{hash}` with zod costs ≈5 µs, most of it generic machinery
 * (payload objects, issue arrays, per-key bookkeeping); a straight-line function over the same
 * building blocks does it in well under 1 µs.
 *
 * Contract: a fast parser returns either exactly what the zod schema's `safeParse(input).data`
 * would be (same keys, same values; the leaf checks are the very functions the zod schemas run),
 * or `SLOW` when it cannot tell — any invalid input, any shape it does not model. The caller then
 * runs zod, so error messages (and any case the fast path declines) are zod's, unchanged.
 *
 * What has a fast parser:
 * - leaves registered by schemas.ts with `registerFast` (base58 keys and hashes, page limit, usize,
 *   `optional(…)`, `boundedArray(…)`), looked up through the schema's `def` — zod's `.meta()` clones
 *   a schema but shares its `def`, so a described copy keeps its fast parser;
 * - `z.object` / `z.strictObject` (no refinements, no other catchall) whose every field has one,
 *   compiled here following zod's object rules (key order of the shape; absent optional keys left
 *   out; `null`→`undefined` keys kept; unknown keys stripped, or `SLOW` when strict).
 * Anything else (unions, other transforms, …) has none and is always parsed by zod.
 * Equivalence is fuzzed against zod in test/rpc.fastparams.test.ts.
 */
import type { z } from 'zod';

/** Returned by a fast parser that cannot decide: run the zod schema instead. */
export const SLOW: unique symbol = Symbol('slow');

/** Output of the zod schema for `input`, or `SLOW`. */
export type FastParser = (input: unknown) => unknown;

interface ZodInternals {
  _zod: {
    def: { type: string; shape?: Record<string, z.ZodType>; catchall?: z.ZodType; checks?: unknown[] };
    optin?: 'optional' | 'defaulted';
    optout?: 'optional';
  };
}

const internals = (schema: z.ZodType): ZodInternals['_zod'] => (schema as unknown as ZodInternals)._zod;

/** Registered and compiled parsers by zod `def` (null: none). */
const BY_DEF = new WeakMap<object, FastParser | null>();

/**
 * Declare `fast` as the fast parser of `schema` (and of its `.meta()` copies). `fast` must obey the
 * module contract: return the schema's output for inputs it accepts, `SLOW` otherwise.
 * Returns `schema`.
 */
export function registerFast<S extends z.ZodType>(schema: S, fast: FastParser): S {
  BY_DEF.set(internals(schema).def, fast);
  return schema;
}

/** The fast parser of `schema` (registered, or compiled for objects), or null when it has none. */
export function fastParserOf(schema: z.ZodType): FastParser | null {
  const def = internals(schema).def;
  let fast = BY_DEF.get(def);
  if (fast === undefined) {
    fast = def.type === 'object' ? compileObject(schema) : null;
    BY_DEF.set(def, fast);
  }
  return fast;
}

interface Field {
  key: string;
  parse: FastParser;
  optin: 'optional' | 'defaulted' | undefined;
  optional: boolean;
}

/** zod's `$ZodObject` parse (schemas.js `handlePropertyResult`, `handleCatchall`) for valid inputs. */
function compileObject(schema: z.ZodType): FastParser | null {
  const def = internals(schema).def;
  if (def.checks?.length) return null;
  const catchall = def.catchall ? internals(def.catchall).def.type : undefined;
  if (catchall !== undefined && catchall !== 'never') return null;
  const strict = catchall === 'never';
  const shape = def.shape ?? {};
  if (Object.getOwnPropertySymbols(shape).length) return null;
  const fields: Field[] = [];
  for (const key of Object.keys(shape)) {
    if (key === '__proto__') return null;
    const el = shape[key]!;
    const parse = fastParserOf(el);
    if (!parse) return null;
    const z = internals(el);
    fields.push({ key, parse, optin: z.optin, optional: z.optout === 'optional' });
  }
  const keys = new Set(fields.map((f) => f.key));
  return (input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return SLOW;
    const obj = input as Record<string, unknown>;
    if (strict) for (const k in obj) if (!keys.has(k)) return SLOW; // unknown key: zod reports it
    const out: Record<string, unknown> = {};
    for (const f of fields) {
      const present = f.key in obj;
      if (!present) {
        if (f.optin === undefined) return SLOW; // required key missing
        if (f.optional && f.optin === 'optional') continue; // absent and optional: no key at all
      }
      const v = f.parse(obj[f.key]);
      if (v === SLOW) return SLOW;
      if (v !== undefined) out[f.key] = v;
      else if (present || (f.optin === 'defaulted' && !f.optional)) out[f.key] = undefined;
    }
    return out;
  };
}
