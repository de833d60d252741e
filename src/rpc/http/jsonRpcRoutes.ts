/**
 * The JSON-RPC routes on fastify: `POST /` and `POST /:method` (the path, when given, must equal
 * the body's method), their body parser, and the JSON-RPC error body for everything fastify itself
 * refuses (unparsable body, body too large, a refused API key or rate limit, an unknown route).
 *
 * A route handler only hands the parsed body to the protocol's one request path (../answer.ts
 * `answerRpc`) and writes what comes back (`FastifyReplies`); the hot lane (fastLane.ts) calls the
 * same function for `POST /` straight on node:http.
 *
 * Hot path (measured in bench/rpc.ts): no promise for synchronous methods (the LMDB ones), no hook
 * unless needed (auth/rate limit, metrics), results the methods already wrote as JSON text are sent
 * as is, and successful replies of one event-loop turn are written together at its end (`ReplyBatch`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type ErrorLog, type RpcAnswer, answerRpc, errorAnswer, parseRpcBody } from '../answer.ts';
import { type RpcContext, isThenable } from '../context.ts';
import { type JsonRpcId, peekId } from '../dispatch.ts';
import { RpcError } from '../errors.ts';
import { type Access, accessHook, callerOf, peekState, requestState } from './access.ts';
import { redactUrl } from './auth.ts';
import { drainUnreadBody } from './drain.ts';
import { ReplyBatch } from './replyBatch.ts';

/** The content type of every JSON reply. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** Writes protocol answers and JSON-RPC errors on fastify replies (one per server). */
export interface FastifyReplies {
  /**
   * Writes `answer`: a 200 success (or batch) at the end of the event-loop turn with the turn's
   * others, an error at once with its status (200 with `httpErrorsAs200`) and headers. Keeps the
   * metrics label and error code in the request state.
   */
  answer(req: FastifyRequest, reply: FastifyReply, answer: RpcAnswer): FastifyReply;
  /**
   * Writes the JSON-RPC error reply for any thrown value (errors.ts mapping); an unexpected one is
   * logged. A body not read yet (401/403/429 before it) is drained up to the body limit, then the
   * connection goes (drain.ts).
   * @param id the id to echo (null when unknown)
   */
  error(req: FastifyRequest, reply: FastifyReply, id: JsonRpcId, err: unknown): FastifyReply;
}

/**
 * The writer of a server's replies.
 * @param bodyLimitBytes words the 413 message
 * @param httpErrorsAs200 answer JSON-RPC errors with HTTP 200 (Photon/jsonrpsee behaviour)
 * @param trackMetrics keep the metrics label and error code of every request (a metrics callback is set)
 */
export function fastifyReplies(o: { bodyLimitBytes: number; httpErrorsAs200: boolean; trackMetrics: boolean }): FastifyReplies {
  const writes = new ReplyBatch<FastifyReply>(
    (reply, text) => reply.code(200).type(JSON_TYPE).send(text),
    (err, reply) => reply.log.error({ err }, 'reply failed'),
  );
  const writeError = (reply: FastifyReply, a: RpcAnswer): FastifyReply =>
    reply
      .code(o.httpErrorsAs200 ? 200 : a.status)
      .headers(a.headers ?? {})
      .type(JSON_TYPE)
      .send(a.text);
  return {
    answer(req, reply, a) {
      const s = o.trackMetrics ? requestState(req) : peekState(req);
      if (s) s.label = a.method;
      if (a.rpcErrorCode === null) {
        writes.add(reply, a.text);
        return reply;
      }
      requestState(req).rpcErrorCode = a.rpcErrorCode;
      return writeError(reply, a);
    },
    error(req, reply, id, err) {
      const a = errorAnswer(err, id, '(unknown)', req.log as ErrorLog, o.bodyLimitBytes);
      requestState(req).rpcErrorCode = a.rpcErrorCode!;
      drainUnreadBody(req.raw, o.bodyLimitBytes);
      return writeError(reply, a);
    },
  };
}

/** Options of `jsonRpcPlugin`. */
export interface JsonRpcRoutesOptions {
  ctx: RpcContext;
  access: Access;
  replies: FastifyReplies;
}

/**
 * fastify plugin: the JSON-RPC routes (`POST /`, `POST /:method`) behind the access hook, a body
 * parser that reads any content type as JSON text (the official client sends application/json),
 * and, for the whole server, the not-found handler and the error handler (body parser errors,
 * refusals of the access hook) answering JSON-RPC error bodies.
 */
export const jsonRpcPlugin = fp(
  async (app: FastifyInstance, { ctx, access, replies }: JsonRpcRoutesOptions) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
      let value: unknown;
      try {
        value = parseRpcBody(typeof body === 'string' ? body : body.toString('utf8'));
      } catch (err) {
        done(err as Error, undefined);
        return;
      }
      done(null, value);
    });

    const charge = access.chargeBatch;
    // Synchronous when the method is (LMDB reads are): no promise, no microtask on the hot path.
    const handler = (req: FastifyRequest, reply: FastifyReply): Promise<unknown> | undefined => {
      // `reply.raw`: a request waiting for its minContextSlot stops waiting when the client goes away.
      const out = answerRpc(ctx, req.body, callerOf(req), (req.params as { method?: string } | undefined)?.method, charge, req.log as ErrorLog, reply.raw);
      if (isThenable(out)) {
        // Settles with `reply` (a thenable: settles once the batched reply has gone out), so fastify
        // never sees an empty result while the reply waits for the end of the turn.
        return out.then((a) => replies.answer(req, reply, a));
      }
      replies.answer(req, reply, out);
      return undefined;
    };
    const hook = accessHook(access);
    const routeOptions = hook ? { onRequest: hook } : {};
    app.post('/', routeOptions, handler);
    app.post('/:method', routeOptions, handler);

    app.setNotFoundHandler((req, reply) =>
      replies.error(req, reply, null, RpcError.methodNotFound(`no route ${req.method} ${redactUrl(req.url).split('?')[0]}`)),
    );
    // Errors outside the route handlers: body parser (parse error, too large), access hook (401/429).
    app.setErrorHandler((err, req, reply) => replies.error(req, reply, peekId(req.body), err));
  },
  { name: 'refract-json-rpc', fastify: '5.x', dependencies: ['refract-access'] },
);
