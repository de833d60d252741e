/**
 * The JSON-RPC 2.0 core, independent of HTTP: read the envelope, check the path against the
 * method, find the definition, check the caller may use it, validate params, run the handler.
 * Every failure is thrown as an `RpcError`; the server maps it (errors.ts) and echoes the id.
 */
import type { RpcContext } from './context.ts';
import { runAtContextSlot, splitSlotOptions } from './contextSlot.ts';
import { RpcError } from './errors.ts';
import { RawJson, stringifyJson } from './exactJson.ts';
import { findMethod } from './methods/index.ts';
import type { MethodDefinition } from './methods/index.ts';
import { parseParams } from './params.ts';
import type { Closable } from './slotWatcher.ts';

/**
 * Who is calling, as the protocol sees it: an identity for messages and the methods it may call.
 * The HTTP transport's `Principal` (http/auth.ts: API key or client IP, rate limit) is one.
 */
export interface Caller {
  /** The caller's label in error messages (an API key's name, or `ip:<address>` when the API is open). */
  id: string;
  /** Method names (canonical names or aliases) the caller may use, or null for all. */
  methods: ReadonlySet<string> | null;
}

/** The caller when no API key is configured and no rate limit applies: may call every method. */
export const ANONYMOUS: Caller = { id: 'anonymous', methods: null };

/**
 * Throws `Forbidden: API key '<id>' may not call <method>` (HTTP 403) unless the caller may call
 * the requested name or the definition's canonical name.
 */
export function authorizeMethod(caller: Caller, requested: string, canonical: string): void {
  if (caller.methods === null) return;
  if (caller.methods.has(requested) || caller.methods.has(canonical)) return;
  throw RpcError.forbidden(`API key '${caller.id}' may not call ${requested}`);
}

/** A JSON-RPC id as echoed: string, number, or null when absent or unreadable. */
export type JsonRpcId = string | number | null;

/** A well-formed request. `params` is null when absent. */
export interface Envelope {
  id: JsonRpcId;
  method: string;
  params: unknown;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isId(v: unknown): v is string | number {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

/** The id to echo in an error reply: the body's id if it is a string or number, else null. */
export function peekId(body: unknown): JsonRpcId {
  if (!isPlainObject(body)) return null;
  const id = Object.hasOwn(body, 'id') ? body.id : undefined;
  return isId(id) ? id : null;
}

/**
 * Check the JSON-RPC 2.0 envelope of a single request (batches: batch.ts; both: answer.ts). Throws `Invalid request: …`
 * for a non-object body, `jsonrpc` other than "2.0", an id that is not a string/number/null, or a
 * non-string method; `Parse error: empty body` when there is no body.
 */
export function readEnvelope(body: unknown): Envelope {
  if (body === undefined) throw RpcError.parse('empty body');
  if (Array.isArray(body)) throw RpcError.invalidRequest('expected a request object, got an array (batches go through batch.ts)');
  if (!isPlainObject(body)) throw RpcError.invalidRequest('expected a JSON object');
  if (body.jsonrpc !== '2.0') throw RpcError.invalidRequest('jsonrpc must be "2.0"');
  const id = Object.hasOwn(body, 'id') ? body.id : null;
  if (id !== null && !isId(id)) throw RpcError.invalidRequest('id must be a string, a number or null');
  if (typeof body.method !== 'string' || body.method === '') throw RpcError.invalidRequest('method must be a non-empty string');
  const params = Object.hasOwn(body, 'params') ? body.params : null;
  return { id, method: body.method, params };
}

/**
 * Find the method of `env`, enforcing `POST /<method>`: when `pathMethod` is given it must equal
 * `env.method` (`Invalid request: path /x does not match method y`, 400). Unknown method →
 * `Method not found: <name>` (404).
 */
export function resolveMethod(env: Envelope, pathMethod: string | undefined): MethodDefinition {
  if (pathMethod !== undefined && pathMethod !== env.method) {
    throw RpcError.invalidRequest(`path /${pathMethod} does not match method ${env.method}`);
  }
  const def = findMethod(env.method);
  if (!def) throw RpcError.methodNotFound(env.method);
  return def;
}

/**
 * Authorize, validate params and run the handler; returns the JSON-RPC `result`, or a promise of it
 * when the handler is asynchronous (synchronous handlers on a synchronous data source — the LMDB
 * one — run without any promise). Failures are thrown, or rejected by the returned promise. The
 * handler runs on one consistent snapshot of the data (`ctx.data.snapshot`) when the source offers
 * it and the method does not opt out (`def.snapshot === false`).
 *
 * Read-your-writes (contextSlot.ts): `minContextSlot` / `maxWaitMs` in the params (any method; a
 * trailing config object for array params) are taken out before the method's schema validates the
 * rest; with `minContextSlot` the handler runs once the store has that slot — at once when it has,
 * else after waiting on `ctx.slots` (a promise), failing with -32016 when it does not come in time.
 * @param conn the request's connection: a wait ends when it closes (undefined: waits only time out)
 */
export function invoke(ctx: RpcContext, def: MethodDefinition, env: Envelope, caller: Caller, conn?: Closable): unknown {
  authorizeMethod(caller, env.method, def.name);
  const split = splitSlotOptions(env.params);
  const params = parseParams(def.params, split === null ? env.params : split.params);
  if (split?.minContextSlot !== undefined) return runAtContextSlot(ctx, def, params, split.minContextSlot, split.maxWaitMs, conn);
  if (def.snapshot === false || !ctx.data.snapshot) return def.handler(ctx, params);
  return ctx.data.snapshot((data) => def.handler(data === ctx.data ? ctx : { ...ctx, data }, params));
}

/**
 * The JSON-RPC success envelope for `result`, as text. A result that is already JSON text (RawJson:
 * the hot methods) is spliced in as is: the same bytes stringifyJson would produce, without its passes.
 * @throws RangeError when the result holds a value JSON cannot carry (e.g. a negative u64)
 */
export function resultEnvelopeText(id: JsonRpcId, result: unknown): string {
  return result instanceof RawJson ? `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result.text}}` : stringifyJson({ jsonrpc: '2.0', id, result });
}
