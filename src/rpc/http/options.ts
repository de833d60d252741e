/**
 * Options of the HTTP server (`buildServer`) and their defaults.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { ApiKeyConfig } from './auth.ts';
import type { Awaitable } from '../context.ts';
import type { RateLimitConfig, RateLimiter } from './rateLimit.ts';

/** Default API port (Photon's). */
export const DEFAULT_PORT = 8784;
/** Default request body limit: 1 MiB. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;
/** Default per-key bucket once API keys are configured: 100 requests/s sustained, bursts of 200. */
export const DEFAULT_RATE_LIMIT: RateLimitConfig = { ratePerSecond: 100, burst: 200 };

/**
 * The default bucket a server applies (the JSON-RPC API and `POST /prove` alike): `configured` when
 * given (`false` = none; per key, or per client IP while the API is open); when absent, none while no
 * key is configured (`open`: the operator's own clients, like the reference indexer and prover) and
 * `DEFAULT_RATE_LIMIT` per key once keys are.
 */
export function resolveRateLimit(configured: RateLimitConfig | false | undefined, open: boolean): RateLimitConfig | false {
  if (configured !== undefined) return configured;
  return open ? false : DEFAULT_RATE_LIMIT;
}

/** One finished request, for the metrics callback. */
export interface RequestMetrics {
  /** JSON-RPC method name as requested when it is a known method or alias; `(unknown)` for other RPC calls; the route (e.g. `GET /health`) otherwise. */
  method: string;
  /** HTTP status sent. */
  status: number;
  /** Time from request start to response end, milliseconds. */
  durationMs: number;
  /** JSON-RPC error code when the response carried an error, else null. */
  rpcErrorCode: number | null;
}

/** `buildServer` options. Everything is optional. */
export interface RpcServerOptions {
  /** pino level for fastify's logger (default `info`). Ignored when `logger` is given. */
  logLevel?: string;
  /** A pino logger instance to use instead of creating one. */
  logger?: FastifyBaseLogger;
  /** Log one line per request/response (fastify's request logging). Default true. */
  logRequests?: boolean;
  /** Maximum request body, bytes (default 1 MiB) → 413 above it. */
  bodyLimitBytes?: number;
  /**
   * Answer JSON-RPC errors with HTTP 200 (Photon/jsonrpsee behaviour) instead of 4xx/5xx. Default false
   * for an embedded server; `refract start` passes the config's `httpErrorsAs200`, true by default.
   */
  httpErrorsAs200?: boolean;
  /** API keys (strings or objects; `refract start` passes the config's `apiKeys`). None at all → open API. */
  apiKeys?: readonly (string | ApiKeyConfig)[];
  /**
   * An environment record whose `REFRACT_API_KEYS` adds keys (tests, embedding without `loadConfig`).
   * Default none: `process.env` is not read here (`loadConfig` reads the variable into `apiKeys`).
   */
  env?: Record<string, string | undefined>;
  /**
   * Default bucket per key, or per client IP while the API is open; `false` disables rate limiting.
   * Absent: none while no key is configured, 100/s burst 200 per key once keys are (`resolveRateLimit`).
   */
  rateLimit?: RateLimitConfig | false;
  /** Redis URL for rate limits shared by replicas (ioredis). Without it buckets are in memory. */
  redisUrl?: string;
  /** A ready limiter (overrides `redisUrl`; for tests or custom stores). Closed with the server. */
  rateLimiter?: RateLimiter;
  /**
   * CORS (browser clients, as Photon's server allows): origins allowed to call the API from a page.
   * Default `['*']` (any origin, like Photon); a list of origins allows those only; `[]` sends no CORS
   * headers. Preflights (`OPTIONS`) are answered without an API key.
   */
  corsOrigins?: string[];
  /** fastify `trustProxy` (use X-Forwarded-For for the client IP). Default false. */
  trustProxy?: boolean | string | string[];
  /** Called once per response (e.g. prom-client histogram). Must not throw (errors are logged). */
  onMetrics?: (m: RequestMetrics) => void;
  /** Extra fields for `GET /health` (e.g. prover readiness). A throw → 503 `{status: "error"}`. */
  health?: () => Awaitable<Record<string, unknown>>;
  /** Why the server is not ready (`GET /readiness` → 503 with this message), or null when it is. */
  notReady?: () => string | null;
}
