/**
 * The fastify server: routes, body parsing, API keys, rate limits, error replies, logging and
 * the metrics hook. `buildServer` returns an un-started instance; `startServer` also listens.
 *
 * Routes:
 * - `POST /` and `POST /:method` — JSON-RPC 2.0 (the path, when given, must equal the body's method),
 *   single requests and batches (batch.ts);
 * - `GET /health` — liveness (`{status: "ok", …options.health()}`);
 * - `GET /openapi.json` — OpenAPI 3.1 document generated from the param schemas.
 * Anything else → 404 with a JSON-RPC error body.
 *
 * Hot path (measured in bench/rpc.ts): no promise for synchronous methods (the LMDB ones), no hook
 * unless needed (auth/rate limit, metrics), results the methods already wrote as JSON text are sent
 * as is, and successful replies of one event-loop turn are written together at its end (`ReplyBatch`, replyBatch.ts).
 */
import { createServer } from 'node:http';
import fastifyCors from '@fastify/cors';
import Fastify, { LogController } from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiKeyStore, extractApiKey, loadApiKeys, rateLimitFor, redactUrl } from './auth.ts';
import { batchSize, runBatch } from './batch.ts';
import type { Principal } from './auth.ts';
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_PORT, resolveRateLimit } from './config.ts';
import type { RpcServerOptions } from './config.ts';
import { type RpcContext, isThenable } from './context.ts';
import { invoke, peekId, readEnvelope, resolveMethod } from './dispatch.ts';
import type { JsonRpcId } from './dispatch.ts';
import { drainUnreadBody } from './drain.ts';
import { RpcError, describeError, errorEnvelope } from './errors.ts';
import { stringifyJson } from './json.ts';
import { createFastLane } from './fastLane.ts';
import { lazyChildLoggerFactory } from './lazyLogger.ts';
import { ReplyBatch, resultEnvelopeText } from './replyBatch.ts';
import { METHODS } from './methods/index.ts';
import { buildOpenApi } from './openapi.ts';
import { MemoryRateLimiter, checkRateLimitConfig } from './rateLimit.ts';
import type { RateLimiter } from './rateLimit.ts';
import { RedisRateLimiter } from './rateLimitRedis.ts';

const JSON_TYPE = 'application/json; charset=utf-8';
/** Request headers a browser page may send (preflight `Access-Control-Allow-Headers`): the API's and the reference prover's. */
const CORS_ALLOWED_HEADERS = ['Content-Type', 'Authorization', 'X-API-Key', 'X-Requested-With', 'X-Async', 'X-Sync'];
/** Reply headers a page may read beside the simple ones (429's Retry-After). */
const CORS_EXPOSED_HEADERS = 'Retry-After';
/** The caller when no guard ran (no API key configured, no rate limit): may call every method. */
const ANONYMOUS: Principal = { id: 'anonymous', methods: null };
/** Idle keep-alive connections are closed after this (fastify's default; above common load-balancer idle timeouts). */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;
/** A request must arrive whole within this (slow uploads are cut off). */
const REQUEST_TIMEOUT_MS = 120_000;

/** Per-request state, in the `rpcState` request decoration (no fastify type augmentation). */
interface RequestState {
  principal?: Principal;
  /** Metrics label. */
  label?: string;
  rpcErrorCode?: number;
}

/**
 * Build the API server on `ctx` (data source, Solana slot, prover, method config).
 * Does not listen. Throws on invalid options (bad rate-limit numbers, empty/duplicate keys).
 */
export function buildServer(ctx: RpcContext, options: RpcServerOptions = {}): FastifyInstance {
  const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const httpErrorsAs200 = options.httpErrorsAs200 ?? false;
  const keyConfigs = loadApiKeys(options.apiKeys, options.env);
  for (const k of keyConfigs) if (k.rateLimit) checkRateLimitConfig(k.rateLimit);
  const keys = new ApiKeyStore(keyConfigs);
  const defaultLimit = resolveRateLimit(options.rateLimit, keys.open);
  if (defaultLimit) checkRateLimitConfig(defaultLimit);
  const anyLimit = !!defaultLimit || keyConfigs.some((k) => k.rateLimit) || !!options.rateLimiter;

  const serializers = {
    req(req: FastifyRequest) {
      return { method: req.method, url: redactUrl(req.url), remoteAddress: req.ip };
    },
  };
  // A decoration (declared once, so every request object keeps one shape) instead of a WeakMap.
  const peek = (req: FastifyRequest): RequestState | null => (req as unknown as { rpcState: RequestState | null }).rpcState;
  const st = (req: FastifyRequest): RequestState => {
    const r = req as unknown as { rpcState: RequestState | null };
    return (r.rpcState ??= {});
  };
  const metrics = options.onMetrics;

  /** Send a JSON-RPC error for any thrown value (the one mapping point: errors.ts). */
  const sendError = (req: FastifyRequest, reply: FastifyReply, id: JsonRpcId, err: unknown): FastifyReply => {
    const d = describeError(err, { bodyLimitBytes: bodyLimit });
    if (d.unexpected) req.log.error({ err }, 'unexpected error');
    st(req).rpcErrorCode = d.code;
    // Answered before the body was read (401/403/429 from the guard): what is left is drained up to the
    // body limit, then the connection goes (drain.ts).
    drainUnreadBody(req.raw, bodyLimit);
    return reply
      .code(httpErrorsAs200 ? 200 : d.status)
      .headers(d.headers)
      .type(JSON_TYPE)
      .send(stringifyJson(errorEnvelope(id, d.code, d.message)));
  };

  // `POST /` goes through the hot lane (fastLane.ts) unless a request needs something only fastify's
  // pipeline does here: request logging, a remote (Redis) rate limiter, proxy headers.
  // `REFRACT_FAST_LANE=0` turns it off.
  const level = (options.logger as { level?: string } | undefined)?.level ?? options.logLevel ?? 'info';
  const requestLogs = options.logRequests !== false && ['info', 'debug', 'trace'].includes(level);
  const memoryLimiter = options.rateLimiter ? options.rateLimiter instanceof MemoryRateLimiter : !options.redisUrl;
  const needsGuard = !keys.open || anyLimit;
  let logError: (err: unknown) => void = () => {};
  let closing = false;
  let guardSync: (apiKey: string | undefined, ip: string) => Principal = () => ANONYMOUS;
  let chargeBatch: (principal: Principal, n: number) => void | Promise<void> = () => {};
  const corsOrigins = options.corsOrigins ?? ['*'];
  const corsAny = corsOrigins.includes('*');
  // The lane adds the any-origin CORS headers itself; an origin list (Vary, per-origin answers) stays with the plugin.
  const lane =
    !requestLogs && !options.trustProxy && (!anyLimit || memoryLimiter) && (corsOrigins.length === 0 || corsAny) && process.env.REFRACT_FAST_LANE !== '0'
      ? createFastLane({
          corsAnyOrigin: corsAny,
          corsExposedHeaders: CORS_EXPOSED_HEADERS,
          ctx,
          guard: needsGuard ? (apiKey, ip) => guardSync(apiKey, ip) : null,
          chargeBatch: (principal, n) => chargeBatch(principal, n) as void,
          bodyLimitBytes: bodyLimit,
          httpErrorsAs200,
          onMetrics: options.onMetrics,
          logError: (err) => logError(err),
        })
      : null;

  const app: FastifyInstance = Fastify({
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
      sendError(req, reply, null, RpcError.invalidRequest(`malformed URL (${err.code ?? 'bad url'})`));
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

  if (corsOrigins.length > 0) {
    // Registered before the routes: its onRequest hook runs before the API-key guard, so preflights
    // (which carry no key) are answered.
    void app.register(fastifyCors, {
      origin: corsAny ? '*' : corsOrigins,
      methods: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
      allowedHeaders: CORS_ALLOWED_HEADERS,
      exposedHeaders: CORS_EXPOSED_HEADERS,
      maxAge: 86_400,
    });
  }

  const limiter: RateLimiter | null = !anyLimit
    ? null
    : options.rateLimiter ??
      (options.redisUrl
        ? new RedisRateLimiter({ url: options.redisUrl, onError: warnOnce(app, 'rate limiter (redis) failed; allowing requests') })
        : new MemoryRateLimiter());
  logError = (err) => app.log.error({ err }, 'unexpected error');
  if (keys.open) {
    app.log.warn(
      { rateLimitPerIp: defaultLimit || null },
      defaultLimit
        ? `no API keys configured: the API is open to everyone, rate-limited per client IP (${defaultLimit.ratePerSecond} req/s, burst ${defaultLimit.burst})`
        : 'no API keys configured: the API is open to everyone and unlimited (set REFRACT_API_KEYS for keys, REFRACT_RATE_LIMIT or --rate-limit for a per-IP limit)',
    );
  }
  app.decorateRequest('rpcState', null);

  // Body: any content type is parsed as JSON text (the official client sends application/json).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      // Only a failed parse can be an empty (or blank) body: no copy of every body for a trim().
      done(text.trim() === '' ? RpcError.parse('empty body') : RpcError.parse(`invalid JSON (${(e as Error).message})`), undefined);
      return;
    }
    done(null, value);
  });

  // Auth and rate limit before the body is read: unauthenticated or throttled calls cost nothing.
  // A callback hook, synchronous unless the limiter is remote (no promise per request).
  const syncLimiter = limiter instanceof MemoryRateLimiter ? limiter : null;
  /** Authenticates and (with no limiter or an in-memory one) rate-limits; throws RpcError 401/403/429. */
  guardSync = (apiKey, ip) => {
    let principal: Principal;
    try {
      principal = keys.authenticate(apiKey, ip);
    } catch (err) {
      // Failed logins spend the client IP's tokens: a burst of wrong keys gets 429, not endless 401s.
      if (syncLimiter && defaultLimit) {
        const d = syncLimiter.takeSync(`unauthenticated:${ip}`, defaultLimit);
        if (!d.allowed) throw RpcError.rateLimited(d.retryAfterMs / 1000);
      }
      throw err;
    }
    const cfg = rateLimitFor(principal, defaultLimit);
    if (syncLimiter && cfg) {
      const d = syncLimiter.takeSync(principal.id, cfg);
      if (!d.allowed) throw RpcError.rateLimited(d.retryAfterMs / 1000);
    }
    return principal;
  };
  /**
   * The rest of a batch's rate-limit cost: the guard took one token for the HTTP request, a batch of
   * n requests takes n − 1 more, or none of them. A refused batch keeps costing the guard's token, as
   * any request whose body was read (a refund would let a client send refused batches for free).
   * Synchronous with an in-memory limiter. Throws (or rejects with) RpcError 429 when the tokens are
   * not there, 400 when n is above the bucket's burst (no wait would let it through).
   */
  chargeBatch = (principal, n) => {
    const cfg = limiter && n > 1 ? rateLimitFor(principal, defaultLimit) : null;
    if (!limiter || !cfg) return;
    if (n > cfg.burst) throw RpcError.invalidRequest(`batch of ${n} requests is more than the rate limit's burst of ${cfg.burst} requests`);
    if (syncLimiter) {
      const d = syncLimiter.takeSync(principal.id, cfg, n - 1);
      if (!d.allowed) throw RpcError.rateLimited(d.retryAfterMs / 1000);
      return;
    }
    return limiter.take(principal.id, cfg, n - 1).then((d) => {
      if (!d.allowed) throw RpcError.rateLimited(d.retryAfterMs / 1000);
    });
  };
  const guard = (req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
    if (!limiter || syncLimiter) {
      try {
        st(req).principal = guardSync(extractApiKey(req), req.ip);
      } catch (err) {
        done(err as Error);
        return;
      }
      done();
      return;
    }
    let principal: Principal;
    try {
      principal = keys.authenticate(extractApiKey(req), req.ip);
    } catch (err) {
      if (!defaultLimit) {
        done(err as Error);
        return;
      }
      // Failed logins spend the client IP's tokens (shared through Redis like every bucket).
      limiter.take(`unauthenticated:${req.ip}`, defaultLimit).then(
        (d) => done(d.allowed ? (err as Error) : RpcError.rateLimited(d.retryAfterMs / 1000)),
        () => done(err as Error),
      );
      return;
    }
    st(req).principal = principal;
    const cfg = rateLimitFor(principal, defaultLimit);
    if (!cfg) {
      done();
    } else {
      limiter.take(principal.id, cfg).then(
        (d) => done(d.allowed ? undefined : RpcError.rateLimited(d.retryAfterMs / 1000)),
        (err: unknown) => done(err as Error),
      );
    }
  };
  // With no key configured and no limiter the guard could only record the client IP, which nothing
  // reads then (authorizeMethod allows everything, no bucket): leave the hook out.
  const routeOptions = keys.open && !limiter ? {} : { onRequest: guard };

  // Successful replies are serialised right away (errors are handled as ever) and written at the
  // end of the event-loop turn, together with the others of the turn (see `ReplyBatch`).
  const batch = new ReplyBatch<FastifyReply>(
    (reply, text) => reply.code(200).type(JSON_TYPE).send(text),
    (err, reply) => reply.log.error({ err }, 'reply failed'),
  );
  const sendResult = (reply: FastifyReply, id: JsonRpcId, result: unknown): void => batch.add(reply, resultEnvelopeText(id, result));

  /** A batch body (batch.ts): charged to the rate limit, run, answered with HTTP 200 and the response array. */
  const batchHandler = (req: FastifyRequest, reply: FastifyReply, body: unknown[], s: RequestState | null): Promise<unknown> | undefined => {
    if (s) s.label = '(batch)';
    const pathMethod = (req.params as { method?: string } | undefined)?.method;
    const principal = s?.principal ?? ANONYMOUS;
    // Never throws: a failure of the whole batch (its responses too large) is sent as the error reply.
    const run = (): Promise<unknown> | undefined => {
      let out: string | Promise<string>;
      try {
        out = runBatch(ctx, body, principal, pathMethod, (err) => req.log.error({ err }, 'unexpected error'));
      } catch (err) {
        sendError(req, reply, null, err);
        return undefined;
      }
      if (typeof out === 'string') {
        batch.add(reply, out);
        return undefined;
      }
      return out.then(
        (text) => {
          batch.add(reply, text);
          return reply;
        },
        (err: unknown) => sendError(req, reply, null, err),
      );
    };
    try {
      const charged = chargeBatch(principal, batchSize(body));
      if (!charged) return run();
      // Settles with `reply` (a thenable: settles once the batched reply has gone out), as rpcHandler does.
      return charged.then(() => run() ?? reply, (err: unknown) => sendError(req, reply, null, err));
    } catch (err) {
      sendError(req, reply, null, err);
      return undefined;
    }
  };

  // Synchronous when the method is (LMDB reads are): no promise, no microtask on the hot path.
  const rpcHandler = (req: FastifyRequest, reply: FastifyReply): Promise<unknown> | undefined => {
    const s = metrics ? st(req) : peek(req);
    if (Array.isArray(req.body)) return batchHandler(req, reply, req.body, s);
    if (s) s.label = '(unknown)';
    try {
      const env = readEnvelope(req.body);
      const def = resolveMethod(env, (req.params as { method?: string } | undefined)?.method);
      if (s) s.label = env.method; // a known name or alias: bounded label set
      const result = invoke(ctx, def, env, s?.principal ?? ANONYMOUS);
      if (isThenable(result)) {
        // Settles with `reply` (a thenable: settles once the batched reply has gone out), so fastify
        // never sees an empty result while the reply waits for the end of the turn.
        return result.then(
          (value) => {
            try {
              sendResult(reply, env.id, value);
            } catch (err) {
              sendError(req, reply, peekId(req.body), err); // e.g. a negative u64 in the result
            }
            return reply;
          },
          (err: unknown) => sendError(req, reply, peekId(req.body), err),
        );
      }
      sendResult(reply, env.id, result);
    } catch (err) {
      sendError(req, reply, peekId(req.body), err);
    }
    return undefined;
  };

  app.post('/', routeOptions, rpcHandler);
  app.post('/:method', routeOptions, rpcHandler);

  app.get('/health', async (req, reply) => {
    try {
      const extra = options.health ? await options.health() : {};
      return reply.type(JSON_TYPE).send(stringifyJson({ status: 'ok', ...extra }));
    } catch (err) {
      req.log.error({ err }, 'health check failed');
      return reply.code(503).type(JSON_TYPE).send(stringifyJson({ status: 'error' }));
    }
  });

  // Photon's probes: GET /liveness and GET /readiness run the methods of those names and answer their
  // result as the body (`null`), like jsonrpsee's GET proxy. No API key, like /health.
  for (const name of ['liveness', 'readiness']) {
    const def = METHODS.find((m) => m.name === name)!;
    app.get(`/${name}`, async (req, reply) => {
      try {
        const result = await invoke(ctx, def, { id: null, method: name, params: null }, ANONYMOUS);
        return reply.type(JSON_TYPE).send(stringifyJson(result));
      } catch (err) {
        return sendError(req, reply, null, err);
      }
    });
  }

  let openapiText: string | undefined;
  app.get('/openapi.json', async (_req, reply) => {
    openapiText ??= JSON.stringify(buildOpenApi(METHODS));
    return reply.type(JSON_TYPE).send(openapiText);
  });

  app.setNotFoundHandler((req, reply) =>
    sendError(req, reply, null, RpcError.methodNotFound(`no route ${req.method} ${redactUrl(req.url).split('?')[0]}`)),
  );

  // Errors outside the route handlers: body parser (parse error, too large), guard (401/429).
  app.setErrorHandler((err, req, reply) => sendError(req, reply, peekId(req.body), err));

  if (metrics) {
    // A callback hook (no promise per request), only when there is a metrics callback.
    app.addHook('onResponse', (req, reply, done) => {
      const s = peek(req);
      // The RPC handler always sets a label; without one, look at the route (`routeOptions` builds
      // a fresh object per access: not on the hot path).
      let method = s?.label;
      if (method === undefined) {
        const routeUrl = req.routeOptions.url;
        const isRpc = req.method === 'POST' && (routeUrl === '/' || routeUrl === '/:method');
        method = isRpc ? '(unknown)' : `${req.method} ${routeUrl ?? '(no route)'}`;
      }
      try {
        metrics({
          method,
          status: reply.statusCode,
          durationMs: reply.elapsedTime,
          rpcErrorCode: s?.rpcErrorCode ?? null,
        });
      } catch (err) {
        req.log.error({ err }, 'metrics callback failed');
      }
      done();
    });
  }

  // Give a remote limiter (Redis) a bounded chance to connect before serving; it fails open anyway.
  app.addHook('onReady', async () => {
    if (!limiter?.ready) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), 2000)));
    const outcome = await Promise.race([limiter.ready().then(() => 'ready' as const), timeout]);
    clearTimeout(timer);
    if (outcome === 'timeout') app.log.warn('rate limiter not ready after 2 s; serving without limits until it is');
  });

  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onClose', async () => {
    await limiter?.close();
  });

  return app;
}

/** A logger callback that warns at most once a minute (e.g. Redis down). */
function warnOnce(app: FastifyInstance, msg: string): (err: unknown) => void {
  let last = 0;
  return (err) => {
    const now = Date.now();
    if (now - last < 60_000) return;
    last = now;
    app.log.warn({ err }, msg);
  };
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
