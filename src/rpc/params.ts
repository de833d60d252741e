/**
 * Validate a method's params with its zod schema and turn the first failure into
 * `RpcError.invalidParams('<field>: <reason>')`, e.g.
 * `Invalid params: owner: invalid base58 pubkey (expected 32 bytes, got 31)`.
 */
import type { z } from 'zod';
import { RpcError } from './errors.ts';
import { SLOW, fastParserOf } from './fastParams.ts';
import { TOO_MANY, describeInput } from './schemas.ts';

type Issue = z.core.$ZodIssue;
type PathKey = PropertyKey;

/** `['hashes', 3, 'tree']` → `hashes[3].tree`; `[]` → `params`; `[2]` → `params[2]`. */
export function formatPath(path: readonly PathKey[]): string {
  let out = '';
  for (const k of path) {
    if (typeof k === 'number') out += `[${k}]`;
    else out += out === '' ? String(k) : `.${String(k)}`;
  }
  return out === '' ? 'params' : out.startsWith('[') ? `params${out}` : out;
}

/**
 * Fallback wording for zod's built-in issues (schema-level messages in schemas.ts win over this).
 * Returns undefined to keep zod's default.
 */
function defaultMessage(iss: z.core.$ZodRawIssue): string | undefined {
  switch (iss.code) {
    case 'invalid_type':
      return `expected ${iss.expected}, got ${describeInput(iss.input)}`;
    case 'invalid_union':
      return 'does not match any accepted shape';
    case 'invalid_value':
      return `invalid value ${JSON.stringify(iss.input)}`;
    default:
      return undefined;
  }
}

/** The `<field>: <reason>` text of one issue. Unknown keys name the key itself. */
export function formatIssue(issue: Issue): string {
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => formatPath([...issue.path, k]));
    return keys.length === 1 ? `${keys[0]}: unknown field` : `${keys.join(', ')}: unknown fields`;
  }
  return `${formatPath(issue.path)}: ${issue.message}`;
}

/**
 * Parse `params` (the JSON value, `null` when absent) with `schema`. Returns the decoded output or
 * throws `RpcError.invalidParams` naming the first offending field and the reason. Valid params of
 * the common shapes take the schema's fast path (fastParams.ts: same output); everything else, and
 * every error, goes through zod.
 */
export function parseParams<S extends z.ZodType>(schema: S, params: unknown): z.output<S> {
  const fast = fastParserOf(schema);
  if (fast) {
    const v = fast(params);
    if (v !== SLOW) return v as z.output<S>;
  }
  const r = schema.safeParse(params, { error: defaultMessage, reportInput: false });
  if (r.success) return r.data;
  const first = r.error.issues[0];
  // An array past the 1000-item limit is Photon's ValidationError (-32000), worded as Photon words it.
  if (first?.code === 'too_big' && first.message.startsWith(TOO_MANY)) throw RpcError.validation(first.message);
  const more = r.error.issues.length - 1;
  const text = first ? formatIssue(first) : 'params: invalid';
  throw RpcError.invalidParams(more > 0 ? `${text} (and ${more} more)` : text);
}
