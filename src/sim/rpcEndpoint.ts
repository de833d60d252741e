/**
 * JSON-RPC over the simulator's HTTP port: one request or a batch per POST, answered through the
 * methods' `handle`; request counters (`rpcStats()`, `GET /stats`) and an optional token-bucket rate
 * limit (HTTP 429 with Retry-After, -32005).
 */
import { RpcError } from './chain.ts';
import { RawJson } from './rpcMethods.ts';

/** Requests answered, as counted by the simulator (`rpcStats()`, `GET /stats`). */
export interface RpcStats {
  /** JSON-RPC requests answered, by method (each request of a batch counts; rate-limited ones do not). */
  requests: Record<string, number>;
  /** Sum of `requests`. */
  totalRequests: number;
  /** Batch POSTs answered (arrays of requests). */
  batches: number;
  /** HTTP 429 answers (rate limit). */
  rateLimited: number;
}

/** A token bucket of `rps` requests per second (capacity `rps`). */
class TokenBucket {
  private tokens: number;
  private last = performance.now();
  constructor(private readonly rps: number) {
    this.tokens = rps;
  }
  /** Takes `n` tokens (a batch larger than the bucket once it is full); else the seconds to wait. */
  take(n: number): { ok: true } | { ok: false; retryAfter: number } {
    const now = performance.now();
    this.tokens = Math.min(this.rps, this.tokens + ((now - this.last) / 1000) * this.rps);
    this.last = now;
    const need = Math.min(n, this.rps);
    if (this.tokens >= need) {
      this.tokens -= n;
      return { ok: true };
    }
    return { ok: false, retryAfter: Math.max(1, Math.ceil((need - this.tokens) / this.rps)) };
  }
}

/** A JSON-RPC error response's text. */
export function errorText(id: unknown, code: number, message: string, data?: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', error: data === undefined ? { code, message } : { code, message, data }, id: id ?? null });
}

/** Answers the POST bodies of one simulator. */
export class RpcEndpoint {
  /** Requests answered so far. */
  counters: RpcStats = { requests: {}, totalRequests: 0, batches: 0, rateLimited: 0 };
  private readonly bucket: TokenBucket | null;

  /** `handle`: a method's result (or a Promise of it); `rps` > 0 limits requests per second. */
  constructor(
    private readonly handle: (method: string, params: unknown[]) => unknown,
    rps: number,
  ) {
    this.bucket = rps > 0 ? new TokenBucket(rps) : null;
  }

  /** Sets the counters back to zero. */
  resetCounters(): void {
    this.counters = { requests: {}, totalRequests: 0, batches: 0, rateLimited: 0 };
  }

  /** One request object of a POST: its response text (or a Promise of it). */
  private answer(msg: unknown): string | Promise<string> {
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg) || typeof (msg as { method?: unknown }).method !== 'string') {
      return errorText((msg as { id?: unknown } | null)?.id, -32600, 'Invalid Request');
    }
    const { id = null, method, params } = msg as { id?: unknown; method: string; params?: unknown };
    this.counters.requests[method] = (this.counters.requests[method] ?? 0) + 1;
    this.counters.totalRequests++;
    const fail = (err: unknown) => {
      const e = err as Error;
      return err instanceof RpcError ? errorText(id, err.code, err.message, err.data) : errorText(id, -32603, `Internal error: ${e?.message ?? String(err)}`);
    };
    const succeed = (result: unknown) => `{"jsonrpc":"2.0","result":${result instanceof RawJson ? result.text : JSON.stringify(result)},"id":${JSON.stringify(id)}}`;
    try {
      const result = this.handle(method, Array.isArray(params) ? params : []);
      return result instanceof Promise ? result.then(succeed, fail) : succeed(result);
    } catch (err) {
      return fail(err);
    }
  }

  /** A POST body → HTTP status, headers and body. */
  async answerBody(body: string): Promise<{ status: number; headers: Record<string, string>; text: string }> {
    const json = { 'content-type': 'application/json' };
    let msg: unknown;
    try {
      msg = JSON.parse(body);
    } catch (err) {
      return { status: 200, headers: json, text: errorText(null, -32700, `Parse error: ${(err as Error).message}`) };
    }
    const batch = Array.isArray(msg);
    const n = batch ? Math.max(1, (msg as unknown[]).length) : 1;
    if (this.bucket) {
      const t = this.bucket.take(n);
      if (!t.ok) {
        this.counters.rateLimited++;
        return { status: 429, headers: { ...json, 'retry-after': String(t.retryAfter) }, text: errorText(null, -32005, 'Too many requests') };
      }
    }
    if (!batch) return { status: 200, headers: json, text: await this.answer(msg) };
    const list = msg as unknown[];
    if (list.length === 0) return { status: 200, headers: json, text: errorText(null, -32600, 'Invalid Request') };
    this.counters.batches++;
    const texts = await Promise.all(list.map((m) => this.answer(m)));
    return { status: 200, headers: json, text: `[${texts.join(',')}]` };
  }
}
