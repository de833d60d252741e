/**
 * The fastify server: routes, body parsing, API keys, rate limits, error replies, logging and
 * the metrics hook. `buildServer` returns an un-started instance; `startServer` also listens.
 *
 * Routes:
 * - `POST /` and `POST /:method` — JSON-RPC 2.0 (the path, when given, must equal the body's method);
 * - `GET /health` — liveness (`{status: "ok", …options.health()}`);
 * - `GET /openapi.json` — OpenAPI 3.1 document generated from the param schemas.
 * Anything else → 404 with a JSON-RPC error body.
 */
import Fastify, { LogController } from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiKeyStore, extractApiKey, loadApiKeys, redactUrl } from './auth.ts';
import type { Principal } from './auth.ts';
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_PORT, DEFAULT_RATE_LIMIT } from './config.ts';
import type { RpcServerOptions } from './config.ts';
import type { RpcContext } from './context.ts';
import { invoke, peekId, readEnvelope, resolveMethod } from './dispatch.ts';
import type { JsonRpcId } from './dispatch.ts';
import { RpcError, describeError, errorEnvelope } from './errors.ts';
import { stringifyJson } from './json.ts';
import { METHODS } from './methods/index.ts';
import { buildOpenApi } from './openapi.ts';
import { MemoryRateLimiter, checkRateLimitConfig } from './rateLimit.ts';
import type { RateLimiter } from './rateLimit.ts';
import { RedisRateLimiter } from './rateLimitRedis.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

/** Per-request state kept outside the request object (no fastify type augmentation). */
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
  const defaultLimit = options.rateLimit === undefined ? DEFAULT_RATE_LIMIT : options.rateLimit;
  if (defaultLimit) checkRateLimitConfig(defaultLimit);
  const keyConfigs = loadApiKeys(options.apiKeys, options.env ?? process.env);
  for (const k of keyConfigs) if (k.rateLimit) checkRateLimitConfig(k.rateLimit);
  const keys = new ApiKeyStore(keyConfigs);
  const anyLimit = !!defaultLimit || keyConfigs.some((k) => k.rateLimit) || !!options.rateLimiter;

  const serializers = {
    req(req: FastifyRequest) {
      return { method: req.method, url: redactUrl(req.url), remoteAddress: req.ip };
    },
  };
  const state = new WeakMap<FastifyRequest, RequestState>();
  const st = (req: FastifyRequest): RequestState => {
    let s = state.get(req);
    if (!s) state.set(req, (s = {}));
    return s;
  };

  /** Send a JSON-RPC error for any thrown value (the one mapping point: errors.ts). */
  const sendError = (req: FastifyRequest, reply: FastifyReply, id: JsonRpcId, err: unknown): FastifyReply => {
    const d = describeError(err, { bodyLimitBytes: bodyLimit });
    if (d.unexpected) req.log.error({ err }, 'unexpected error');
    st(req).rpcErrorCode = d.code;
    return reply
      .code(httpErrorsAs200 ? 200 : d.status)
      .headers(d.headers)
      .type(JSON_TYPE)
      .send(stringifyJson(errorEnvelope(id, d.code, d.message)));
  };

  const app: FastifyInstance = Fastify({
    // Malformed URLs (FST_ERR_BAD_URL) also get a JSON-RPC error body.
    frameworkErrors: (err, req, reply) => {
      sendError(req, reply, null, RpcError.invalidRequest(`malformed URL (${err.code ?? 'bad url'})`));
    },
    ...(options.logger
      ? { loggerInstance: options.logger.child({}, { serializers }) }
      : { logger: { level: options.logLevel ?? 'info', serializers } }),
    logController: new LogController({ disableRequestLogging: options.logRequests === false }),
    bodyLimit,
    trustProxy: options.trustProxy ?? false,
    return503OnClosing: true,
  }) as unknown as FastifyInstance;

  const limiter: RateLimiter | null = !anyLimit
    ? null
    : options.rateLimiter ??
      (options.redisUrl
        ? new RedisRateLimiter({ url: options.redisUrl, onError: warnOnce(app, 'rate limiter (redis) failed; allowing requests') })
        : new MemoryRateLimiter());
  if (keys.open) app.log.warn('no API keys configured: the JSON-RPC API is open to everyone (rate limits apply per IP)');

  // Body: any content type is parsed as JSON text (the official client sends application/json).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(RpcError.parse('empty body'), undefined);
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      done(RpcError.parse(`invalid JSON (${(e as Error).message})`), undefined);
    }
  });

  // Auth and rate limit before the body is read: unauthenticated or throttled calls cost nothing.
  const guard = async (req: FastifyRequest) => {
    const principal = keys.authenticate(extractApiKey(req), req.ip);
    st(req).principal = principal;
    const cfg = principal.rateLimit === undefined ? defaultLimit : principal.rateLimit;
    if (limiter && cfg) {
      const d = await limiter.take(principal.id, cfg);
      if (!d.allowed) throw RpcError.rateLimited(d.retryAfterMs / 1000);
    }
  };

  const rpcHandler = async (req: FastifyRequest, reply: FastifyReply) => {
    const id = peekId(req.body);
    const s = st(req);
    s.label = '(unknown)';
    try {
      const env = readEnvelope(req.body);
      const def = resolveMethod(env, (req.params as { method?: string } | undefined)?.method);
      s.label = env.method; // a known name or alias: bounded label set
      const result = await invoke(ctx, def, env, s.principal ?? { id: 'anonymous', methods: null });
      const text = stringifyJson({ jsonrpc: '2.0', id: env.id, result });
      return reply.code(200).type(JSON_TYPE).send(text);
    } catch (err) {
      return sendError(req, reply, id, err);
    }
  };

  app.post('/', { onRequest: guard }, rpcHandler);
  app.post('/:method', { onRequest: guard }, rpcHandler);

  app.get('/health', async (req, reply) => {
    try {
      const extra = options.health ? await options.health() : {};
      return reply.type(JSON_TYPE).send(stringifyJson({ status: 'ok', ...extra }));
    } catch (err) {
      req.log.error({ err }, 'health check failed');
      return reply.code(503).type(JSON_TYPE).send(stringifyJson({ status: 'error' }));
    }
  });

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

  app.addHook('onResponse', async (req, reply) => {
    if (!options.onMetrics) return;
    const s = state.get(req);
    const routeUrl = req.routeOptions.url;
    const isRpc = req.method === 'POST' && (routeUrl === '/' || routeUrl === '/:method');
    try {
      options.onMetrics({
        method: isRpc ? (s?.label ?? '(unknown)') : `${req.method} ${routeUrl ?? '(no route)'}`,
        status: reply.statusCode,
        durationMs: reply.elapsedTime,
        rpcErrorCode: s?.rpcErrorCode ?? null,
      });
    } catch (err) {
      req.log.error({ err }, 'metrics callback failed');
    }
  });

  // Give a remote limiter (Redis) a bounded chance to connect before serving; it fails open anyway.
  app.addHook('onReady', async () => {
    if (!limiter?.ready) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), 2000)));
    const outcome = await Promise.race([limiter.ready().then(() => 'ready' as const), timeout]);
    clearTimeout(timer);
    if (outcome === 'timeout') app.log.warn('rate limiter not ready after 2 s; serving without limits until it is');
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
