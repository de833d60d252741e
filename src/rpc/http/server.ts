/**
 * The API server: `buildServer` composes fastify plugins of one job each and, for `POST /`, the hot
 * lane in front of fastify; `startServer` also listens.
 *
 * Routes:
 * - `POST /` and `POST /:method` — JSON-RPC 2.0, single requests and batches (jsonRpcRoutes.ts; the
 *   protocol's one request path is ../answer.ts);
 * - `GET /health`, `GET /liveness`, `GET /readiness` — probes, without API key (probes.ts);
 * - `GET /openapi.json` — OpenAPI 3.1 document generated from the param schemas (openapiRoute.ts).
 * Anything else → 404 with a JSON-RPC error body. `POST /prove` is registered on the returned
 * instance by `refract start` (proveRoute.ts).
 *
 * Plugins, in order: CORS (@fastify/cors, before the routes so preflights, which carry no key, are
 * answered), access (API keys and rate limits: access.ts), JSON-RPC routes, probes, OpenAPI, metrics
 * (only with an `onMetrics` callback).
 */
import { envValue } from '../../config/config.ts';
import { createServer } from 'node:http';
import fastifyCors from '@fastify/cors';
import Fastify, { LogController } from 'fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RpcContext } from '../context.ts';
import { RpcError } from '../errors.ts';
import { accessPlugin, createAccess, warnIfOpen } from './access.ts';
import { redactUrl } from './auth.ts';
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_PORT } from './options.ts';
import type { RpcServerOptions } from './options.ts';
import { CORS_EXPOSED_HEADERS, corsOptions } from './cors.ts';
import { createFastLane } from './fastLane.ts';
import { fastifyReplies, jsonRpcPlugin } from './jsonRpcRoutes.ts';
import { lazyChildLoggerFactory } from './lazyLogger.ts';
import { metricsPlugin } from './requestMetrics.ts';
import { openApiPlugin } from './openapiRoute.ts';
import { probesPlugin } from './probes.ts';

/** Idle keep-alive connections are closed after this (fastify's default; above common load-balancer idle timeouts). */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;
/** A request must arrive whole within this (slow uploads are cut off). */
const REQUEST_TIMEOUT_MS = 120_000;
/** A remote limiter's failures are logged at most this often (e.g. Redis down). */
const LIMITER_WARN_INTERVAL_MS = 60_000;

/**
 * Build the API server on `ctx` (data source, Solana slot, prover, method config).
 * Does not listen. Throws on invalid options (bad rate-limit numbers, empty/duplicate keys).
 */
export function buildServer(ctx: RpcContext, options: RpcServerOptions = {}): FastifyInstance {
  const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const httpErrorsAs200 = options.httpErrorsAs200 ?? false;
  // Assigned below; the callbacks that read it run only once the server exists.
  let app: FastifyInstance;
  let lastLimiterWarning = 0;
  const access = createAccess(options, (err) => {
    const now = Date.now();
    if (now - lastLimiterWarning < LIMITER_WARN_INTERVAL_MS) return;
    lastLimiterWarning = now;
    app.log.warn({ err }, 'rate limiter (redis) failed; allowing requests');
  });
  const replies = fastifyReplies({ bodyLimitBytes: bodyLimit, httpErrorsAs200, trackMetrics: !!options.onMetrics });
  const corsOrigins = options.corsOrigins ?? ['*'];
  const corsAny = corsOrigins.includes('*');

  // `POST /` goes through the hot lane (fastLane.ts) unless a request needs something only fastify's
  // pipeline does here: request logging, a remote (Redis) rate limiter, proxy headers, per-origin CORS
  // answers (Vary; the lane adds the any-origin headers itself). `REFRACT_FAST_LANE=0` turns it off.
  const level = (options.logger as { level?: string } | undefined)?.level ?? options.logLevel ?? 'info';
  const requestLogs = options.logRequests !== false && ['info', 'debug', 'trace'].includes(level);
  let closing = false;
  const lane =
    !requestLogs && !options.trustProxy && access.synchronous && (corsOrigins.length === 0 || corsAny) && envValue('REFRACT_FAST_LANE') !== '0'
      ? createFastLane({
          ctx,
          access,
          bodyLimitBytes: bodyLimit,
          httpErrorsAs200,
          corsAnyOrigin: corsAny,
          corsExposedHeaders: CORS_EXPOSED_HEADERS,
          onMetrics: options.onMetrics,
          log: { error: (obj, msg) => app.log.error(obj, msg) },
        })
      : null;

  const serializers = {
    req(req: FastifyRequest) {
      return { method: req.method, url: redactUrl(req.url), remoteAddress: req.ip };
    },
  };
  app = Fastify({
    ...(lane
      ? {
          serverFactory: (handler: (req: never, res: never) => void) =>
            createServer({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS }, (req, res) => {
              // Once closing, fastify answers everything (503, `return503OnClosing`).
              if (closing || !lane(req, res)) handler(req as never, res as never);
            }),
        }
      : {}),
    // The same socket timeouts with and without the lane (fastify applies its own only to a server it creates).
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Malformed URLs (FST_ERR_BAD_URL) also get a JSON-RPC error body.
    frameworkErrors: (err, req, reply) => {
      replies.error(req, reply, null, RpcError.invalidRequest(`malformed URL (${err.code ?? 'bad url'})`));
    },
    ...(options.logger
      ? { loggerInstance: options.logger.child({}, { serializers }) }
      : { logger: { level: options.logLevel ?? 'info', serializers } }),
    logController: new LogController({ disableRequestLogging: options.logRequests === false }),
    // No pino child logger per request unless the request logs something (hot path).
    childLoggerFactory: lazyChildLoggerFactory as never,
    bodyLimit,
    trustProxy: options.trustProxy ?? false,
    return503OnClosing: true,
  }) as unknown as FastifyInstance;
  warnIfOpen(access, app.log);

  if (corsOrigins.length > 0) void app.register(fastifyCors, corsOptions(corsOrigins));
  void app.register(accessPlugin, { access });
  void app.register(jsonRpcPlugin, { ctx, access, replies });
  // The probes keep their HTTP statuses whatever httpErrorsAs200 says: load balancers and Kubernetes read the status.
  const probeReplies = fastifyReplies({ bodyLimitBytes: bodyLimit, httpErrorsAs200: false, trackMetrics: !!options.onMetrics });
  void app.register(probesPlugin, { ctx, health: options.health, notReady: options.notReady, replies: probeReplies });
  void app.register(openApiPlugin);
  if (options.onMetrics) void app.register(metricsPlugin, { onMetrics: options.onMetrics });
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  return app;
}

/**
 * Build and listen on `port` (default 8784) and `host` (default 0.0.0.0). Resolves to the
 * listening instance; rejects if the port cannot be bound.
 */
export async function startServer(
  ctx: RpcContext,
  options: RpcServerOptions & { port?: number; host?: string } = {},
): Promise<FastifyInstance> {
  const app = buildServer(ctx, options);
  await app.listen({ port: options.port ?? DEFAULT_PORT, host: options.host ?? '0.0.0.0' });
  return app;
}
