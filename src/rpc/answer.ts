/**
 * The one request path of the JSON-RPC protocol: a parsed request body (a single request or a
 * batch) in, the reply out, as text with the HTTP status it maps to. Both transports call it — the
 * fastify routes (http/jsonRpcRoutes.ts) and the hot lane (http/fastLane.ts) — and only write what
 * it returns; neither reads an envelope, runs a method or maps an error itself.
 *
 * Order for a single request: envelope (dispatch.ts `readEnvelope`) → method, with the
 * `POST /<method>` path check (`resolveMethod`) → authorization, params, handler (`invoke`) →
 * success envelope, or error envelope (errors.ts `describeError`: status, code, message,
 * Retry-After) echoing the request's id. A batch (array body): whole-batch checks (`batchSize`) →
 * the transport's `chargeBatch` (the rest of its rate-limit cost) → every element as above
 * (batch.ts `runBatch`) → the response array with HTTP 200.
 *
 * Synchronous when the method is (the LMDB reads): no promise, no microtask on the hot path. The
 * returned promise, when there is one, never rejects (failures are error answers).
 */
import { batchSize, runBatch } from './batch.ts';
import { type RpcContext, isThenable } from './context.ts';
import { type Caller, type JsonRpcId, invoke, peekId, readEnvelope, resolveMethod, resultEnvelopeText } from './dispatch.ts';
import { RpcError, describeError, errorEnvelope } from './errors.ts';
import { stringifyJson } from './exactJson.ts';
import type { Closable } from './slotWatcher.ts';

/** A reply, ready for a transport to write. */
export interface RpcAnswer {
  /** The response body: JSON text of the response envelope, or of a batch's response array. */
  text: string;
  /** HTTP status: 200 for a result and for a batch (its errors are inside), else the error's (errors.ts). */
  status: number;
  /** Headers the error asks for (`Retry-After` on 429), else undefined. */
  headers: Record<string, string> | undefined;
  /** JSON-RPC error code when the body is one error envelope, else null. */
  rpcErrorCode: number | null;
  /**
   * Metrics label: the method as requested when it is a known name or alias (a bounded set),
   * `(batch)` for a batch, `(unknown)` when the request names no known method.
   */
  method: string;
}

/** Logs an unexpected error (a bug or a store failure), which answers `Internal server error`. */
export interface ErrorLog {
  error(obj: { err: unknown }, msg: string): void;
}

/**
 * Takes the rest of a batch's rate-limit cost (`n` requests; the transport's guard took one) before
 * the batch runs. Throws, or rejects with, an RpcError (429, or 400 above the bucket's burst) to
 * refuse the whole batch. Undefined: batches cost nothing more.
 */
export type ChargeBatch<C extends Caller> = (caller: C, n: number) => void | Promise<void>;

/**
 * Parses a request body's text as JSON.
 * @throws RpcError parse: `Parse error: empty body` for an empty or blank body, `Parse error: invalid JSON (…)` otherwise
 */
export function parseRpcBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    // Only a failed parse can be an empty (or blank) body: no copy of every body for a trim().
    throw text.trim() === '' ? RpcError.parse('empty body') : RpcError.parse(`invalid JSON (${(e as Error).message})`);
  }
}

/**
 * The error answer for any thrown value (the one mapping point: errors.ts `describeError`); an
 * unexpected one is logged to `log`.
 * @param id the id to echo (null when the request's is unknown or unreadable)
 * @param method the metrics label ({@link RpcAnswer.method})
 * @param bodyLimitBytes only words the 413 message (a body over the limit)
 */
export function errorAnswer(err: unknown, id: JsonRpcId, method: string, log: ErrorLog, bodyLimitBytes?: number): RpcAnswer {
  const d = describeError(err, { bodyLimitBytes });
  if (d.unexpected) log.error({ err }, 'unexpected error');
  return { text: stringifyJson(errorEnvelope(id, d.code, d.message, d.data)), status: d.status, headers: d.headers, rpcErrorCode: d.code, method };
}

/**
 * Answers a parsed request body: one request object or a batch (array). Returns the answer, or a
 * promise of it (never rejecting) when a method or the batch charge is asynchronous.
 * @param body the parsed JSON body (undefined: no body → `Parse error: empty body`)
 * @param caller who calls (authorization per method; `chargeBatch` sees it too)
 * @param pathMethod the method named by the URL path (`POST /<method>`): the request, or every
 *   element of a batch, must name it; undefined for `POST /`
 * @param chargeBatch the rest of a batch's rate-limit cost, or undefined
 * @param log hears unexpected errors
 * @param conn the request's connection (node's ServerResponse): a `minContextSlot` wait ends when it closes
 */
export function answerRpc<C extends Caller>(
  ctx: RpcContext,
  body: unknown,
  caller: C,
  pathMethod: string | undefined,
  chargeBatch: ChargeBatch<C> | undefined,
  log: ErrorLog,
  conn?: Closable,
): RpcAnswer | Promise<RpcAnswer> {
  if (Array.isArray(body)) return answerBatch(ctx, body, caller, pathMethod, chargeBatch, log, conn);
  let method = '(unknown)';
  try {
    const env = readEnvelope(body);
    const def = resolveMethod(env, pathMethod);
    method = env.method; // a known name or alias: bounded label set
    const result = invoke(ctx, def, env, caller, conn);
    if (isThenable(result)) {
      const m = method;
      return result.then(
        (value) => {
          try {
            return success(resultEnvelopeText(env.id, value), m);
          } catch (err) {
            return errorAnswer(err, peekId(body), m, log); // e.g. a negative u64 in the result
          }
        },
        (err: unknown) => errorAnswer(err, peekId(body), m, log),
      );
    }
    return success(resultEnvelopeText(env.id, result), method);
  } catch (err) {
    return errorAnswer(err, peekId(body), method, log);
  }
}

/** A 200 answer with `text` as the body. */
function success(text: string, method: string): RpcAnswer {
  return { text, status: 200, headers: undefined, rpcErrorCode: null, method };
}

/** A batch body: whole-batch checks, its charge, then every element (batch.ts). */
function answerBatch<C extends Caller>(
  ctx: RpcContext,
  body: unknown[],
  caller: C,
  pathMethod: string | undefined,
  chargeBatch: ChargeBatch<C> | undefined,
  log: ErrorLog,
  conn: Closable | undefined,
): RpcAnswer | Promise<RpcAnswer> {
  const run = (): RpcAnswer | Promise<RpcAnswer> => {
    let out: string | Promise<string>;
    try {
      out = runBatch(ctx, body, caller, pathMethod, (err) => log.error({ err }, 'unexpected error'), undefined, conn);
    } catch (err) {
      return errorAnswer(err, null, '(batch)', log); // the responses together are too large
    }
    if (typeof out === 'string') return success(out, '(batch)');
    return out.then(
      (text) => success(text, '(batch)'),
      (err: unknown) => errorAnswer(err, null, '(batch)', log),
    );
  };
  try {
    const n = batchSize(body);
    const charged = chargeBatch?.(caller, n);
    if (!charged) return run();
    return charged.then(run, (err: unknown) => errorAnswer(err, null, '(batch)', log));
  } catch (err) {
    return errorAnswer(err, null, '(batch)', log);
  }
}
