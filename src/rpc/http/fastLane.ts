/**
 * The JSON-RPC hot lane: `POST /` handled straight on node:http, in front of fastify (through
 * fastify's `serverFactory`). Everything else — other paths, `POST /?api-key=…`, `POST /<method>` —
 * goes to fastify unchanged, and server.ts leaves the lane out where fastify's pipeline does work
 * the lane does not (request logging, a Redis rate limiter, proxy headers).
 *
 * Why: at tens of thousands of small requests per second fastify's per-request machinery (request
 * and reply objects, content-type parser lookup, route context, hooks runner) is a measurable share
 * of the work (bench/rpc.ts: ≈20% more getCompressedAccount requests per second). The lane runs the
 * same API-key check and rate limit (access.ts), the same request path (../answer.ts `answerRpc`:
 * envelope, dispatch, batches, error mapping with status, code, message and Retry-After), the same
 * body limit and the same metrics callback, so a client cannot tell the two paths apart (test/rpc.http.test.ts compares
 * the lane's replies over sockets with fastify's, byte for byte).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ErrorLog, type RpcAnswer, answerRpc, errorAnswer, parseRpcBody } from '../answer.ts';
import { type RpcContext, isThenable } from '../context.ts';
import { ANONYMOUS } from '../dispatch.ts';
import { RpcError } from '../errors.ts';
import type { Access } from './access.ts';
import { extractApiKey } from './auth.ts';
import type { Principal } from './auth.ts';
import type { RequestMetrics } from './options.ts';
import { drainUnreadBody } from './drain.ts';
import { JSON_TYPE } from './jsonRpcRoutes.ts';
import { ReplyBatch } from './replyBatch.ts';

/** What the lane needs from the server. */
export interface FastLaneOptions {
  ctx: RpcContext;
  /**
   * The server's access checks (access.ts): `guardSync` runs before the body is read, `chargeBatch`
   * for batches. Only a synchronous one (no limiter or an in-memory one) may serve the lane.
   */
  access: Access;
  bodyLimitBytes: number;
  httpErrorsAs200: boolean;
  /** Add the any-origin CORS headers of the CORS plugin (cors.ts) to every reply. */
  corsAnyOrigin: boolean;
  /** Their `Access-Control-Expose-Headers` value. */
  corsExposedHeaders: string;
  onMetrics?: (m: RequestMetrics) => void;
  /** Logs unexpected errors (a bug or a store failure). */
  log: ErrorLog;
}

/**
 * Builds the lane: `handle(req, res)` returns false (touching nothing) when the request is not
 * `POST /`, so the caller passes it on to fastify.
 * @throws Error when `access` is not synchronous (a remote limiter: server.ts leaves the lane out then)
 */
export function createFastLane(o: FastLaneOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  if (!o.access.synchronous) throw new Error('the hot lane needs synchronous access checks (no limiter, or an in-memory one)');
  const { ctx, access, log } = o;
  const exposed = o.corsExposedHeaders;
  /** A reply's headers (object literals: no spread on the hot path). */
  const headers = o.corsAnyOrigin
    ? (length: number): Record<string, string | number> => ({ 'access-control-allow-origin': '*', 'access-control-expose-headers': exposed, 'content-type': JSON_TYPE, 'content-length': length })
    : (length: number): Record<string, string | number> => ({ 'content-type': JSON_TYPE, 'content-length': length });
  // Successful replies of a turn go out together at its end (see ReplyBatch for why).
  const writes = new ReplyBatch<ServerResponse>(
    (res, text) => {
      if (res.destroyed) return;
      res.writeHead(200, headers(Buffer.byteLength(text)));
      res.end(text);
    },
    (err) => log.error({ err }, 'unexpected error'),
  );
  const chargeBatch = access.chargeBatch as (principal: Principal, n: number) => void;

  /** Writes `a` (a success at the end of the turn, an error at once) and reports the metrics. */
  const send = (res: ServerResponse, started: number, a: RpcAnswer): void => {
    let status = 200;
    if (a.rpcErrorCode === null) writes.add(res, a.text);
    else {
      status = o.httpErrorsAs200 ? 200 : a.status;
      if (!res.destroyed) {
        res.writeHead(status, Object.assign(headers(Buffer.byteLength(a.text)), a.headers));
        res.end(a.text);
      }
    }
    if (!o.onMetrics) return;
    try {
      o.onMetrics({ method: a.method, status, durationMs: performance.now() - started, rpcErrorCode: a.rpcErrorCode });
    } catch (err) {
      log.error({ err }, 'unexpected error');
    }
  };
  /** Writes the error reply of a request refused before its body was parsed. */
  const refuse = (res: ServerResponse, started: number, err: unknown): void => send(res, started, errorAnswer(err, null, '(unknown)', log, o.bodyLimitBytes));

  const onBody = (res: ServerResponse, started: number, principal: Principal, text: string) => {
    let body: unknown;
    try {
      body = parseRpcBody(text);
    } catch (err) {
      refuse(res, started, err);
      return;
    }
    // `res`: a request waiting for its minContextSlot stops waiting when the client goes away.
    const out = answerRpc(ctx, body, principal, undefined, chargeBatch, log, res);
    if (isThenable(out)) out.then((a) => send(res, started, a));
    else send(res, started, out);
  };

  return (req, res) => {
    if (req.method !== 'POST' || req.url !== '/') return false;
    const started = performance.now();
    let principal: Principal = ANONYMOUS;
    if (access.needed) {
      try {
        principal = access.guardSync(extractApiKey({ headers: req.headers, query: undefined }), req.socket.remoteAddress ?? '');
      } catch (err) {
        drainUnreadBody(req, o.bodyLimitBytes);
        refuse(res, started, err);
        return true;
      }
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > o.bodyLimitBytes) {
      drainUnreadBody(req, o.bodyLimitBytes);
      refuse(res, started, RpcError.payloadTooLarge(o.bodyLimitBytes));
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
        refuse(res, started, RpcError.payloadTooLarge(o.bodyLimitBytes));
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
