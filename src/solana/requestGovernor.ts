/**
 * Throughput control for a hosted RPC endpoint: at most `concurrency` requests in flight (p-queue),
 * started no faster than `rps` per second, and adaptive to the provider's rate limit. A rate-limited
 * answer (SolanaRateLimitedError: HTTP 429, or a -32xxx "rate limited" error) pauses every start for
 * its `Retry-After` (or an exponential pause when none is sent, 0.5 s doubling to 30 s), lowers the
 * rate to 70% of what was running, and the request is tried again; each 100 answers without one
 * raise the rate by 5% again, up to `rps`. Other failures are thrown, or with the `retry` option
 * logged and tried again after a capped exponential pause.
 */
import PQueue from 'p-queue';
import { SolanaRateLimitedError } from './rpcClient.ts';

/** Resolves after `ms`, or at once when `signal` aborts. */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** Options of a {@link RequestGovernor}. */
export interface RequestGovernorOptions {
  /** Requests per second at most (absent or 0: no rate cap, only `concurrency`). */
  rps?: number;
  /** Requests in flight at most (default 8). */
  concurrency?: number;
  /** The provider bills each call of a JSON-RPC batch: `rps` counts calls, not HTTP requests (default false). */
  billPerCall?: boolean;
  /** Told about each rate-limited answer (the pause in ms, and the rate now in requests/s or null when uncapped). */
  onRateLimited?: (pauseMs: number, rps: number | null) => void;
}

/** How {@link RequestGovernor.run} runs one request. */
export interface GovernedRun {
  /** Stops waiting and retrying (the request then throws Error('stopped')). */
  signal?: AbortSignal;
  /** JSON-RPC calls the request carries (a batch's size; default 1): with `billPerCall` the rate counts each. */
  calls?: number;
  /** Waiting requests start highest first (default 0), then in order. */
  priority?: number;
  /**
   * Retry failures other than rate limits (transport failures, node errors) with a capped exponential
   * pause, logged at warn as `<what> failed; retrying`; `retryable(err)` false throws at once. Absent:
   * such failures are thrown (rate limits are always retried).
   */
  retry?: { log: { warn(obj: object, msg: string): void }; what?: string; retryable?: (err: unknown) => boolean };
}

/** What a governor did, for metrics and benchmarks. */
export interface GovernorStats {
  /** Requests started, by label (a JSON-RPC batch counts once, under its label). */
  requests: Record<string, number>;
  /** Rate-limited answers received. */
  rateLimited: number;
  /** Current rate cap (requests/s), or null when uncapped. */
  rps: number | null;
}

/** Runs requests under a rate and concurrency budget shared by all its callers (see the module comment). */
export class RequestGovernor {
  private readonly queue: PQueue;
  private readonly maxRps: number | null;
  private rps: number | null;
  private nextStart = 0;
  private pausedUntil = 0;
  private okStreak = 0;
  private limitedStreak = 0;
  readonly stats: GovernorStats;

  constructor(private readonly opts: RequestGovernorOptions = {}) {
    this.queue = new PQueue({ concurrency: Math.max(1, opts.concurrency ?? 8) });
    this.maxRps = opts.rps && opts.rps > 0 ? opts.rps : null;
    this.rps = this.maxRps;
    this.stats = { requests: {}, rateLimited: 0, rps: this.rps };
  }

  /**
   * Runs `fn` when the budget allows, again after each rate-limited answer (until `signal` aborts),
   * and resolves its result. `label` counts the request (e.g. the JSON-RPC method). `calls`: how many
   * JSON-RPC calls the request carries (a batch's size); with `billPerCall` the rate counts each of
   * them, else the request once. A rate-limited request is tried again in its own place in the queue
   * (it keeps its slot: older work is not pushed behind newer). Waiting requests start by `priority`
   * (higher first; the backfill gives older chunks higher, so they commit first), then in order.
   * With `retry`, any other failure that `retry.retryable` accepts (default: all) is logged at warn
   * (`<what> failed; retrying`, with `retryInMs`) and the request queued again after a pause of
   * 250 ms doubling to 10 s, its slot given up meanwhile; without it, such a failure is thrown.
   * @throws whatever `fn` throws other than SolanaRateLimitedError (and, with `retry`, not accepted
   *   by `retryable`); an Error('stopped') once `signal` aborts.
   */
  async run<T>(label: string, fn: () => Promise<T>, opts: GovernedRun = {}): Promise<T> {
    const { signal, calls = 1, priority = 0, retry } = opts;
    for (let delay = 250; ; delay = Math.min(delay * 2, 10_000)) {
      if (signal?.aborted) throw new Error('stopped');
      try {
        return (await this.queue.add(async () => {
          for (;;) {
            await this.waitTurn(signal, this.opts.billPerCall ? calls : 1);
            if (signal?.aborted) throw new Error('stopped');
            this.stats.requests[label] = (this.stats.requests[label] ?? 0) + 1;
            try {
              const v = await fn();
              this.onOk();
              return v;
            } catch (err) {
              if (!(err instanceof SolanaRateLimitedError)) throw err;
              this.onLimited(err.retryAfterMs);
            }
          }
        }, { priority })) as T;
      } catch (err) {
        if (!retry || signal?.aborted || !(retry.retryable?.(err) ?? true)) throw err;
        retry.log.warn({ err: (err as Error).message, retryInMs: delay }, `${retry.what ?? label} failed; retrying`);
        await sleep(delay, signal);
      }
    }
  }

  /** Waits out a rate-limit pause and the rate cap's spacing (`weight` requests' worth). */
  private async waitTurn(signal: AbortSignal | undefined, weight: number): Promise<void> {
    for (;;) {
      const now = Date.now();
      const at = Math.max(this.pausedUntil, this.rps ? this.nextStart : 0);
      if (at <= now) break;
      await sleep(at - now, signal);
      if (signal?.aborted) return;
    }
    if (this.rps) this.nextStart = Math.max(Date.now(), this.nextStart) + (1000 * weight) / this.rps;
  }

  private onOk(): void {
    this.limitedStreak = 0;
    if (this.rps === null || (this.maxRps !== null && this.rps >= this.maxRps)) return;
    if (++this.okStreak >= 100) {
      this.okStreak = 0;
      // Uncapped (rps 0) and slowed by a 429: back to no cap once 10× the concurrency's guess runs clean.
      const raised = this.rps * 1.05;
      this.rps = this.maxRps !== null ? Math.min(this.maxRps, raised) : raised > 40 * this.queue.concurrency ? null : raised;
      this.stats.rps = this.rps;
    }
  }

  private onLimited(retryAfterMs: number | null): void {
    this.stats.rateLimited++;
    this.okStreak = 0;
    const pause = retryAfterMs ?? Math.min(30_000, 500 * 2 ** Math.min(this.limitedStreak, 6));
    this.limitedStreak++;
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + pause);
    // Slow down: 70% of the cap, or of what was measured to run when uncapped (never below 1/s).
    const running = this.rps ?? Math.max(1, this.queue.concurrency * 4);
    this.rps = Math.max(1, running * 0.7);
    this.stats.rps = this.rps;
    this.opts.onRateLimited?.(pause, this.rps);
  }
}
