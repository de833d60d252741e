/**
 * Token buckets in Redis, shared by every replica: one atomic Lua script per request
 * (HMGET tokens/ts → refill → take → HSET + PEXPIRE), timed with the Redis server clock (`TIME`)
 * so replica clock skew does not matter.
 *
 * If Redis fails (down, not yet connected), requests are allowed at once (fail open: no offline
 * queue) and the error is reported through `onError` — availability of the API wins over limiting.
 */
import { Redis } from 'ioredis';
import type { RateLimitConfig, RateLimitDecision, RateLimiter } from './rateLimit.ts';

/**
 * KEYS[1] bucket key; ARGV: rate (tokens/s), burst, cost.
 * Returns {allowed (0|1), retryAfterMs}.
 */
export const TOKEN_BUCKET_LUA = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = burst
  ts = now
end
local elapsed = now - ts
if elapsed < 0 then elapsed = 0 end
tokens = math.min(burst, tokens + elapsed * rate / 1000)
local allowed = 0
local retry = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
else
  retry = math.ceil((cost - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {allowed, retry}
`;

type BucketCommand = (key: string, rate: string, burst: string, cost: string) => Promise<[number, number]>;

/** Redis-backed limiter. Give it a URL (it owns the connection) or an existing ioredis client. */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;
  private readonly owned: boolean;
  private readonly prefix: string;
  private readonly onError: (err: unknown) => void;

  constructor(opts: { url?: string; client?: Redis; keyPrefix?: string; onError?: (err: unknown) => void }) {
    if (opts.client) {
      this.redis = opts.client;
      this.owned = false;
    } else if (opts.url) {
      // Fail fast rather than queueing requests while Redis is unreachable.
      this.redis = new Redis(opts.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
      this.owned = true;
    } else {
      throw new Error('RedisRateLimiter needs a url or a client');
    }
    this.prefix = opts.keyPrefix ?? 'refract:rl:';
    this.onError = opts.onError ?? (() => {});
    this.redis.on('error', (err) => this.onError(err));
    this.redis.defineCommand('refractTokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET_LUA });
  }

  /** Resolve when the connection is ready (immediately if it already is). */
  ready(): Promise<void> {
    if (this.redis.status === 'ready') return Promise.resolve();
    return new Promise((resolve) => this.redis.once('ready', () => resolve()));
  }

  /** Take `cost` tokens (default 1) or none; on any Redis error, allow and report via `onError`. */
  async take(id: string, cfg: RateLimitConfig, cost = 1): Promise<RateLimitDecision> {
    try {
      const cmd = (this.redis as unknown as { refractTokenBucket: BucketCommand }).refractTokenBucket.bind(this.redis);
      const [allowed, retry] = await cmd(this.prefix + id, String(cfg.ratePerSecond), String(cfg.burst), String(cost));
      return { allowed: Number(allowed) === 1, retryAfterMs: Number(retry) };
    } catch (err) {
      this.onError(err);
      return { allowed: true, retryAfterMs: 0 };
    }
  }

  /** Close the connection if this limiter opened it. */
  async close(): Promise<void> {
    if (this.owned) await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
