/**
 * Who may call, and how often: the API keys (auth.ts) and the rate limiter (rateLimit.ts, or
 * rateLimitRedis.ts shared by replicas) of one server, as the checks both request paths run — the
 * fastify routes (as an `onRequest` hook, `accessPlugin`) and the hot lane (`guardSync`).
 *
 * Auth and rate limit run before the body is read: unauthenticated or throttled calls cost nothing.
 * Failed logins spend the client IP's tokens (a burst of wrong keys gets 429, not endless 401s). A
 * batch of n requests takes n − 1 more tokens once its body is read (`chargeBatch`).
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ANONYMOUS } from '../dispatch.ts';
import { RpcError } from '../errors.ts';
import { extractApiKey, loadKeysAndLimit, rateLimitFor } from './auth.ts';
import type { Principal } from './auth.ts';
import type { RpcServerOptions } from './options.ts';
import { MemoryRateLimiter } from './rateLimit.ts';
import type { RateLimitConfig, RateLimiter } from './rateLimit.ts';

/** How long `onReady` waits for a remote limiter (Redis) to connect; it fails open anyway. */
const LIMITER_READY_WAIT_MS = 2000;

/** The access checks of one server (see the module comment). */
export interface Access {
  /** True when no API key is configured (the API is open to everyone). */
  readonly open: boolean;
  /** The default bucket (per key, or per client IP while open), or false: none. */
  readonly defaultLimit: RateLimitConfig | false;
  /** The limiter, or null when no limit is configured anywhere. */
  readonly limiter: RateLimiter | null;
  /** True when `guardSync` is the whole check (no limiter, or an in-memory one): no promise per request. */
  readonly synchronous: boolean;
  /** True when a request needs a check at all (keys or a limit configured). */
  readonly needed: boolean;
  /**
   * Authenticates and (with no limiter or an in-memory one) rate-limits a request.
   * @returns the caller
   * @throws RpcError 401 (missing or invalid key), 429 (rate limited, with Retry-After)
   */
  guardSync(apiKey: string | undefined, ip: string): Principal;
  /**
   * The same check with any limiter (a remote one answers asynchronously): `done(null, principal)`,
   * or `done(err)` with the RpcError 401/429. Synchronous when `synchronous` is.
   */
  guard(apiKey: string | undefined, ip: string, done: (err: Error | null, principal?: Principal) => void): void;
  /**
   * The rest of a batch's rate-limit cost: the guard took one token for the HTTP request, a batch of
   * n requests takes n − 1 more, or none of them. A refused batch keeps costing the guard's token, as
   * any request whose body was read (a refund would let a client send refused batches for free).
   * Synchronous with an in-memory limiter. Throws (or rejects with) RpcError 429 when the tokens are
   * not there, 400 when n is above the bucket's burst (no wait would let it through).
   */
  chargeBatch(principal: Principal, n: number): void | Promise<void>;
}

/**
 * The shared limiter of replicas (rateLimitRedis.ts `RedisRateLimiter`), whose module and ioredis are
 * loaded only by a server that has a Redis URL and a limit (about 0.1 CPU-s at every start otherwise).
 * Its calls wait for the load; a failed load rejects them as a Redis failure would.
 */
function redisRateLimiter(url: string, onError: (err: unknown) => void): RateLimiter {
  const made = import('./rateLimitRedis.ts').then(({ RedisRateLimiter }) => new RedisRateLimiter({ url, onError }));
  made.catch(() => {}); // seen by each call; not an unhandled rejection before the first
  return {
    ready: async () => (await made).ready(),
    take: async (id, cfg, cost) => (await made).take(id, cfg, cost),
    close: async () => (await made).close(),
  };
}

/**
 * Builds the access checks from the server options (`apiKeys`, `env`, `rateLimit`, `redisUrl`,
 * `rateLimiter`). Throws on invalid options: bad rate-limit numbers, an empty or duplicate key.
 * @param onLimiterError hears a remote limiter's failures (requests are allowed meanwhile)
 */
export function createAccess(options: RpcServerOptions, onLimiterError: (err: unknown) => void): Access {
  const { keyConfigs, keys, defaultLimit } = loadKeysAndLimit(options);
  const anyLimit = !!defaultLimit || keyConfigs.some((k) => k.rateLimit) || !!options.rateLimiter;
  const limiter: RateLimiter | null = !anyLimit
    ? null
    : options.rateLimiter ?? (options.redisUrl ? redisRateLimiter(options.redisUrl, onLimiterError) : new MemoryRateLimiter());
  const syncLimiter = limiter instanceof MemoryRateLimiter ? limiter : null;
  const rateLimited = (retryAfterMs: number) => RpcError.rateLimited(retryAfterMs / 1000);

  const guardSync = (apiKey: string | undefined, ip: string): Principal => {
    let principal: Principal;
    try {
      principal = keys.authenticate(apiKey, ip);
    } catch (err) {
      if (syncLimiter && defaultLimit) {
        const d = syncLimiter.takeSync(`unauthenticated:${ip}`, defaultLimit);
        if (!d.allowed) throw rateLimited(d.retryAfterMs);
      }
      throw err;
    }
    const cfg = rateLimitFor(principal, defaultLimit);
    if (syncLimiter && cfg) {
      const d = syncLimiter.takeSync(principal.id, cfg);
      if (!d.allowed) throw rateLimited(d.retryAfterMs);
    }
    return principal;
  };

  const guard = (apiKey: string | undefined, ip: string, done: (err: Error | null, principal?: Principal) => void): void => {
    if (!limiter || syncLimiter) {
      let principal: Principal;
      try {
        principal = guardSync(apiKey, ip);
      } catch (err) {
        done(err as Error);
        return;
      }
      done(null, principal);
      return;
    }
    let principal: Principal;
    try {
      principal = keys.authenticate(apiKey, ip);
    } catch (err) {
      if (!defaultLimit) {
        done(err as Error);
        return;
      }
      // Failed logins spend the client IP's tokens (shared through Redis like every bucket).
      limiter.take(`unauthenticated:${ip}`, defaultLimit).then(
        (d) => done(d.allowed ? (err as Error) : rateLimited(d.retryAfterMs)),
        () => done(err as Error),
      );
      return;
    }
    const cfg = rateLimitFor(principal, defaultLimit);
    if (!cfg) {
      done(null, principal);
      return;
    }
    limiter.take(principal.id, cfg).then(
      (d) => (d.allowed ? done(null, principal) : done(rateLimited(d.retryAfterMs))),
      (err: unknown) => done(err as Error),
    );
  };

  const chargeBatch = (principal: Principal, n: number): void | Promise<void> => {
    const cfg = limiter && n > 1 ? rateLimitFor(principal, defaultLimit) : null;
    if (!limiter || !cfg) return;
    if (n > cfg.burst) throw RpcError.invalidRequest(`batch of ${n} requests is more than the rate limit's burst of ${cfg.burst} requests`);
    if (syncLimiter) {
      const d = syncLimiter.takeSync(principal.id, cfg, n - 1);
      if (!d.allowed) throw rateLimited(d.retryAfterMs);
      return;
    }
    return limiter.take(principal.id, cfg, n - 1).then((d) => {
      if (!d.allowed) throw rateLimited(d.retryAfterMs);
    });
  };

  return {
    open: keys.open,
    defaultLimit,
    limiter,
    synchronous: !limiter || !!syncLimiter,
    needed: !keys.open || !!limiter,
    guardSync,
    guard,
    chargeBatch,
  };
}

/** Per-request state of the JSON-RPC routes, in the `rpcState` request decoration (no fastify type augmentation). */
export interface RequestState {
  /** The caller, once the access hook ran. */
  principal?: Principal;
  /** Metrics label (`RpcAnswer.method`, answer.ts). */
  label?: string;
  /** JSON-RPC error code of the reply, when it is an error. */
  rpcErrorCode?: number;
}

/** The request's state, or null when nothing set it yet. */
export function peekState(req: FastifyRequest): RequestState | null {
  return (req as unknown as { rpcState: RequestState | null }).rpcState;
}

/** The request's state, created on first use. */
export function requestState(req: FastifyRequest): RequestState {
  const r = req as unknown as { rpcState: RequestState | null };
  return (r.rpcState ??= {});
}

/** The caller of a JSON-RPC request: the principal the access hook found, else anonymous. */
export function callerOf(req: FastifyRequest): Principal {
  return peekState(req)?.principal ?? ANONYMOUS;
}

/**
 * The API's start-up warning when no key is configured (the API is open), naming the per-IP limit
 * if there is one.
 */
export function warnIfOpen(access: Access, log: FastifyBaseLogger): void {
  if (!access.open) return;
  const limit = access.defaultLimit;
  log.warn(
    { rateLimitPerIp: limit || null },
    limit
      ? `no API keys configured: the API is open to everyone, rate-limited per client IP (${limit.ratePerSecond} req/s, burst ${limit.burst})`
      : 'no API keys configured: the API is open to everyone and unlimited (set REFRACT_API_KEYS for keys, REFRACT_RATE_LIMIT or --rate-limit for a per-IP limit)',
  );
}

/**
 * fastify plugin: the `rpcState` request decoration (declared once, so every request object keeps
 * one shape) and the limiter's lifecycle: `onReady` gives a remote limiter a bounded chance to
 * connect before serving, `onClose` closes it. Options: `{access}`.
 */
export const accessPlugin = fp(
  async (app: FastifyInstance, opts: { access: Access }) => {
    app.decorateRequest('rpcState', null);
    const limiter = opts.access.limiter;
    app.addHook('onReady', async () => {
      if (!limiter?.ready) return;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), LIMITER_READY_WAIT_MS)));
      const outcome = await Promise.race([limiter.ready().then(() => 'ready' as const), timeout]);
      clearTimeout(timer);
      if (outcome === 'timeout') app.log.warn('rate limiter not ready after 2 s; serving without limits until it is');
    });
    app.addHook('onClose', async () => {
      await limiter?.close();
    });
  },
  { name: 'refract-access', fastify: '5.x' },
);

/**
 * The JSON-RPC routes' `onRequest` hook: runs `access.guard` and keeps the caller in the request
 * state; a refusal goes to the error handler (401/403/429). A callback hook (no promise per request).
 * Null when there is nothing to check (no key configured, no limiter: the guard could only record
 * the client IP, which nothing reads then).
 */
export function accessHook(access: Access): ((req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void) | null {
  if (!access.needed) return null;
  if (access.synchronous) {
    return (req, _reply, done) => {
      try {
        requestState(req).principal = access.guardSync(extractApiKey(req), req.ip);
      } catch (err) {
        done(err as Error);
        return;
      }
      done();
    };
  }
  return (req, _reply, done) => {
    access.guard(extractApiKey(req), req.ip, (err, principal) => {
      if (err) {
        done(err);
        return;
      }
      requestState(req).principal = principal;
      done();
    });
  };
}
