/**
 * The probe routes, without API key: `GET /health` (`{status: "ok", …health()}`, 503
 * `{status: "error"}` when `health` throws) and Photon's `GET /liveness` and `GET /readiness`, which
 * run the methods of those names and answer their result as the body (`null`), like jsonrpsee's GET
 * proxy. `GET /readiness` also answers 503 while `notReady()` gives a reason (`refract start`: the Solana
 * node is unreachable, or the store is ahead of its tip). Probe errors keep their HTTP status even
 * with `httpErrorsAs200`.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Awaitable, RpcContext } from '../context.ts';
import { ANONYMOUS, invoke } from '../dispatch.ts';
import { RpcError } from '../errors.ts';
import { stringifyJson } from '../exactJson.ts';
import { METHODS } from '../methods/index.ts';
import { type FastifyReplies, JSON_TYPE } from './jsonRpcRoutes.ts';

/** Options of `probesPlugin`. */
export interface ProbesOptions {
  ctx: RpcContext;
  /** Extra fields for `GET /health` (e.g. prover readiness); a throw → 503. */
  health?: () => Awaitable<Record<string, unknown>>;
  /** Why the server is not ready, or null (GET /readiness: 503 with that message while not null). */
  notReady?: () => string | null;
  /** Writes a failed liveness/readiness method as a JSON-RPC error (with its HTTP status). */
  replies: FastifyReplies;
}

/** fastify plugin: `GET /health`, `GET /liveness`, `GET /readiness` (module comment). */
export const probesPlugin = fp(
  async (app: FastifyInstance, { ctx, health, notReady, replies }: ProbesOptions) => {
    app.get('/health', async (req, reply) => {
      try {
        const extra = health ? await health() : {};
        return reply.type(JSON_TYPE).send(stringifyJson({ status: 'ok', ...extra }));
      } catch (err) {
        req.log.error({ err }, 'health check failed');
        return reply.code(503).type(JSON_TYPE).send(stringifyJson({ status: 'error' }));
      }
    });

    for (const name of ['liveness', 'readiness']) {
      const def = METHODS.find((m) => m.name === name)!;
      app.get(`/${name}`, async (req, reply) => {
        try {
          const why = name === 'readiness' ? notReady?.() : null;
          if (why) throw RpcError.unavailable(why);
          const result = await invoke(ctx, def, { id: null, method: name, params: null }, ANONYMOUS);
          return reply.type(JSON_TYPE).send(stringifyJson(result));
        } catch (err) {
          return replies.error(req, reply, null, err);
        }
      });
    }
  },
  { name: 'refract-probes', fastify: '5.x' },
);
