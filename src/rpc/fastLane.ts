/**
 * The JSON-RPC hot lane: `POST /` handled straight on node:http, in front of fastify (through
 * fastify's `serverFactory`). Everything else — other paths, `POST /?api-key=…`, `POST /<method>` —
 * goes to fastify unchanged, and server.ts leaves the lane out where fastify's pipeline does work
 * the lane does not (request logging, a Redis rate limiter, proxy headers).
 *
 * Why: at tens of thousands of small requests per second fastify's per-request machinery (request
 * and reply objects, content-type parser lookup, route context, hooks runner) is a measurable share
 * of the work (bench/rpc.ts: ≈20% more getCompressedAccount requests per second). The lane runs the
 * same API-key check and rate limit (the server's `guard`), the same JSON-RPC core (dispatch.ts), the
 * same error mapping (errors.ts: status, code, message, Retry-After), the same body limit and the
 * same metrics callback, so a client cannot tell the two paths apart (test/rpc.http.test.ts compares
 * the lane's replies over sockets with fastify's, byte for byte).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extractApiKey } from './auth.ts';
import { batchSize, runBatch } from './batch.ts';
import type { Principal } from './auth.ts';
import { type RpcContext, isThenable } from './context.ts';
import { invoke, peekId, readEnvelope, resolveMethod } from './dispatch.ts';
import type { JsonRpcId } from './dispatch.ts';
import { drainUnreadBody } from './drain.ts';
import { RpcError, describeError, errorEnvelope } from './errors.ts';
import { stringifyJson } from './json.ts';
import { ReplyBatch, resultEnvelopeText } from './replyBatch.ts';
import type { RequestMetrics } from './config.ts';

const JSON_TYPE = 'application/json; charset=utf-8';
/** The caller when no guard runs (no API key, no rate limit): may call every method. */
const ANONYMOUS: Principal = { id: 'anonymous', methods: null };

/** What the lane needs from the server. */
export interface FastLaneOptions {
  ctx: RpcContext;
  /**
   * API key and rate limit check before the body is read: returns the caller or throws an RpcError
   * (401/403/429). Null: no check (no key and no limit configured).
   */
  guard: ((apiKey: string | undefined, ip: string) => Principal) | null;
  /** The rest of a batch's rate-limit cost (n − 1 tokens); throws RpcError 429/400. Synchronous (in-memory limiter). */
  chargeBatch: (principal: Principal, n: number) => void;
  bodyLimitBytes: number;
  httpErrorsAs200: boolean;
  /** Add the any-origin CORS headers of the CORS plugin (server.ts) to every reply. */
  corsAnyOrigin: boolean;
  /** Their `Access-Control-Expose-Headers` value. */
  corsExposedHeaders: string;
  onMetrics?: (m: RequestMetrics) => void;
  /** Logs an unexpected error (a bug or a store failure). */
  logError: (err: unknown) => void;
}

/**
 * Builds the lane: `handle(req, res)` returns false (touching nothing) when the request is not
 * `POST /`, so the caller passes it on to fastify.
 */
export function createFastLane(o: FastLaneOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const exposed = o.corsExposedHeaders;
  /** A reply's headers (object literals: no spread on the hot path). */
  const headers = o.corsAnyOrigin
    ? (length: number): Record<string, string | number> => ({ 'access-control-allow-origin': '*', 'access-control-expose-headers': exposed, 'content-type': JSON_TYPE, 'content-length': length })
    : (length: number): Record<string, string | number> => ({ 'content-type': JSON_TYPE, 'content-length': length });
  // Successful replies of a turn go out together at its end (see ReplyBatch for why).
  const batch = new ReplyBatch<ServerResponse>(
    (res, text) => {
      if (res.destroyed) return;
      res.writeHead(200, headers(Buffer.byteLength(text)));
      res.end(text);
    },
    (err) => o.logError(err),
  );

  const finish = (res: ServerResponse, started: number, method: string, status: number, rpcErrorCode: number | null) => {
    if (!o.onMetrics) return;
    try {
      o.onMetrics({ method, status, durationMs: performance.now() - started, rpcErrorCode });
    } catch (err) {
      o.logError(err);
    }
  };

  const sendError = (res: ServerResponse, started: number, method: string, id: JsonRpcId, err: unknown) => {
    const d = describeError(err, { bodyLimitBytes: o.bodyLimitBytes });
    if (d.unexpected) o.logError(err);
    const status = o.httpErrorsAs200 ? 200 : d.status;
    if (!res.destroyed) {
      const text = stringifyJson(errorEnvelope(id, d.code, d.message));
      res.writeHead(status, Object.assign(headers(Buffer.byteLength(text)), d.headers));
      res.end(text);
    }
    finish(res, started, method, status, d.code);
  };

  const sendResultText = (res: ServerResponse, started: number, method: string, text: string) => {
    batch.add(res, text);
    finish(res, started, method, 200, null);
  };
  const sendResult = (res: ServerResponse, started: number, method: string, id: JsonRpcId, result: unknown) =>
    sendResultText(res, started, method, resultEnvelopeText(id, result));

  /** A batch body (batch.ts): charged to the rate limit, run, answered with HTTP 200 and the response array. */
  const onBatch = (res: ServerResponse, started: number, principal: Principal, body: unknown[]) => {
    let out: string | Promise<string>;
    try {
      o.chargeBatch(principal, batchSize(body));
      out = runBatch(o.ctx, body, principal, undefined, o.logError);
    } catch (err) {
      sendError(res, started, '(batch)', null, err);
      return;
    }
    if (typeof out === 'string') sendResultText(res, started, '(batch)', out);
    else {
      out.then(
        (text) => sendResultText(res, started, '(batch)', text),
        (err: unknown) => sendError(res, started, '(batch)', null, err),
      );
    }
  };

  const onBody = (res: ServerResponse, started: number, principal: Principal, text: string) => {
    let body: unknown;
    let method = '(unknown)';
    try {
      body = JSON.parse(text);
    } catch (e) {
      sendError(res, started, method, null, text.trim() === '' ? RpcError.parse('empty body') : RpcError.parse(`invalid JSON (${(e as Error).message})`));
      return;
    }
    if (Array.isArray(body)) {
      onBatch(res, started, principal, body);
      return;
    }
    try {
      const env = readEnvelope(body);
      const def = resolveMethod(env, undefined);
      method = env.method;
      const result = invoke(o.ctx, def, env, principal);
      if (isThenable(result)) {
        const m = method;
        result.then(
          (value) => {
            try {
              sendResult(res, started, m, env.id, value);
            } catch (err) {
              sendError(res, started, m, peekId(body), err);
            }
          },
          (err: unknown) => sendError(res, started, m, peekId(body), err),
        );
        return;
      }
      sendResult(res, started, method, env.id, result);
    } catch (err) {
      sendError(res, started, method, peekId(body), err);
    }
  };

  return (req, res) => {
    if (req.method !== 'POST' || req.url !== '/') return false;
    const started = performance.now();
    let principal = ANONYMOUS;
    if (o.guard) {
      try {
        principal = o.guard(extractApiKey({ headers: req.headers, query: undefined }), req.socket.remoteAddress ?? '');
      } catch (err) {
        drainUnreadBody(req, o.bodyLimitBytes);
        sendError(res, started, '(unknown)', null, err);
        return true;
      }
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > o.bodyLimitBytes) {
      drainUnreadBody(req, o.bodyLimitBytes);
      sendError(res, started, '(unknown)', null, RpcError.payloadTooLarge(o.bodyLimitBytes));
      return true;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > o.bodyLimitBytes) {
        // Past the limit: the rest is drained like any unread body (drain.ts).
        tooLarge = true;
        chunks.length = 0;
        req.off('data', onData);
        drainUnreadBody(req, o.bodyLimitBytes);
        sendError(res, started, '(unknown)', null, RpcError.payloadTooLarge(o.bodyLimitBytes));
        return;
      }
      chunks.push(c);
    };
    req.on('data', onData);
    req.on('end', () => {
      if (tooLarge) return;
      onBody(res, started, principal, chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', () => res.destroy());
    return true;
  };
}
