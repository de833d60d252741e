/**
 * Token-bucket rate limiting: the interface the server uses and the in-memory implementation
 * (one process). The Redis implementation shared by replicas is in rateLimitRedis.ts.
 *
 * A bucket holds at most `burst` tokens and refills at `ratePerSecond`; each request takes one.
 * When empty, the caller learns how long until one token is back (→ HTTP 429 + Retry-After).
 */

/** Bucket parameters. */
export interface RateLimitConfig {
  /** Sustained requests per second (> 0). */
  ratePerSecond: number;
  /** Bucket size: requests allowed at once after idling (≥ 1). */
  burst: number;
}

/** Outcome of taking a token. */
export interface RateLimitDecision {
  allowed: boolean;
  /** When refused: milliseconds until a token is available (0 when allowed). */
  retryAfterMs: number;
}

/** A shared or local token-bucket store. */
export interface RateLimiter {
  /**
   * Take `cost` tokens (default 1; a batch of n requests takes n − 1 more after its first) from bucket
   * `id` with parameters `cfg`, or none when fewer are there.
   */
  take(id: string, cfg: RateLimitConfig, cost?: number): Promise<RateLimitDecision>;
  /** Resolve once usable (e.g. connected); the server waits for it (bounded) before listening. */
  ready?(): Promise<void>;
  /** Release resources (timers, connections). */
  close(): Promise<void>;
}

/** Throws on a non-positive rate or a burst below 1. */
export function checkRateLimitConfig(cfg: RateLimitConfig): void {
  if (!(cfg.ratePerSecond > 0) || !Number.isFinite(cfg.ratePerSecond)) {
    throw new Error(`rateLimit.ratePerSecond must be a positive number (got ${cfg.ratePerSecond})`);
  }
  if (!(cfg.burst >= 1) || !Number.isFinite(cfg.burst)) {
    throw new Error(`rateLimit.burst must be at least 1 (got ${cfg.burst})`);
  }
}

interface Bucket {
  tokens: number;
  /** ms timestamp of the last refill */
  ts: number;
}

/**
 * In-memory token buckets keyed by id. `now` (ms) is injectable for tests. Buckets idle long
 * enough to be full again are dropped when the map grows past `maxBuckets`.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly now: () => number;
  private readonly maxBuckets: number;

  constructor(opts: { now?: () => number; maxBuckets?: number } = {}) {
    this.now = opts.now ?? (() => performance.now());
    this.maxBuckets = opts.maxBuckets ?? 100_000;
  }

  /** Synchronous core of `take`: takes `cost` tokens (default 1) or none. */
  takeSync(id: string, cfg: RateLimitConfig, cost = 1): RateLimitDecision {
    const now = this.now();
    let b = this.buckets.get(id);
    if (!b) {
      if (this.buckets.size >= this.maxBuckets) this.sweep(now, cfg);
      b = { tokens: cfg.burst, ts: now };
      this.buckets.set(id, b);
    } else {
      const elapsed = Math.max(0, now - b.ts);
      b.tokens = Math.min(cfg.burst, b.tokens + (elapsed * cfg.ratePerSecond) / 1000);
      b.ts = now;
    }
    if (b.tokens >= cost) {
      b.tokens -= cost;
      return { allowed: true, retryAfterMs: 0 };
    }
    return { allowed: false, retryAfterMs: Math.ceil(((cost - b.tokens) * 1000) / cfg.ratePerSecond) };
  }

  async take(id: string, cfg: RateLimitConfig, cost = 1): Promise<RateLimitDecision> {
    return this.takeSync(id, cfg, cost);
  }

  /** Drop buckets that would be full by now (they carry no state); if none, drop the oldest half. */
  private sweep(now: number, cfg: RateLimitConfig): void {
    const fullAfterMs = (cfg.burst * 1000) / cfg.ratePerSecond;
    for (const [k, b] of this.buckets) if (now - b.ts >= fullAfterMs) this.buckets.delete(k);
    if (this.buckets.size >= this.maxBuckets) {
      let n = Math.floor(this.buckets.size / 2);
      for (const k of this.buckets.keys()) {
        if (n-- <= 0) break;
        this.buckets.delete(k);
      }
    }
  }

  async close(): Promise<void> {
    this.buckets.clear();
  }
}
