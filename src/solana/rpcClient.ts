/**
 * A minimal Solana JSON-RPC client (fetch): getSlot, getBlock (full, signatures, header), getTransaction,
 * getSignaturesForAddress, getFirstAvailableBlock, getGenesisHash, and JSON-RPC batches.
 *
 * Errors name the method and, for transport failures, the node as `displayUrl` shows it (scheme,
 * host and port: no credentials, path or query, where providers put their keys), so they can be shown to API callers (src/rpc/errors.ts maps both
 * error types below to `503`).
 */
import { displayUrl } from '../displayUrl.ts';

export { displayUrl };

/**
 * Where to send requests for `url`: fetch refuses URLs with credentials (`https://user:pass@host`),
 * so user and password (percent-decoded) become an `Authorization: Basic …` header and are removed
 * from the URL. A URL without credentials (or that does not parse) is returned as is, with no headers.
 */
export function requestTarget(url: string): { url: string; headers: Record<string, string> } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { url, headers: {} };
  }
  if (!u.username && !u.password) return { url, headers: {} };
  // A raw `%` that is not an escape (`pa%ss`) is taken literally rather than failing start-up.
  const user = decodeOrRaw(u.username);
  const password = decodeOrRaw(u.password);
  u.username = '';
  u.password = '';
  return { url: u.toString(), headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` } };
}

function decodeOrRaw(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** `message` with every occurrence of `url` (and of its fetch form) replaced by `displayUrl(url)`. */
export function scrubUrl(message: string, url: string): string {
  const shown = displayUrl(url);
  let out = message.split(url).join(shown);
  const target = requestTarget(url).url;
  if (target !== url) out = out.split(target).join(displayUrl(target));
  return out;
}

/**
 * The Solana node could not be asked: unreachable, timed out, a non-2xx status without a JSON-RPC
 * error, or a body that is not JSON-RPC. `message` is `<method>: <url> <what happened>` with the URL
 * redacted (`displayUrl`).
 */
export class SolanaUnavailableError extends Error {
  constructor(
    /** The JSON-RPC method that failed (e.g. `getSlot`). */
    readonly method: string,
    message: string,
    opts?: { cause?: unknown },
  ) {
    super(message, opts);
    this.name = 'SolanaUnavailableError';
  }
}

/** A JSON-RPC error returned by the node (code and message as sent). */
export class SolanaRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'SolanaRpcError';
  }
}

/**
 * The node (or the provider in front of it) refused the request for its rate limit: HTTP 429, or a
 * JSON-RPC error whose code is -32005 / -32429 or whose message says "rate limit" / "too many
 * requests". `retryAfterMs` is the `Retry-After` header in ms when sent (seconds or an HTTP date).
 */
export class SolanaRateLimitedError extends SolanaUnavailableError {
  constructor(
    method: string,
    message: string,
    readonly retryAfterMs: number | null,
  ) {
    super(method, message);
    this.name = 'SolanaRateLimitedError';
  }
}

/** JSON-RPC error codes providers use for "rate limited" (-32005 is agave's "node is behind" too, but then the message says so). */
const RATE_LIMIT_CODES = new Set([-32005, -32429]);
const RATE_LIMIT_MESSAGE = /rate.?limit|too many requests/i;

/** A JSON-RPC error body's code/message that means "rate limited" (see SolanaRateLimitedError). */
export function isRateLimitAnswer(code: number, message: string): boolean {
  return RATE_LIMIT_MESSAGE.test(message) || (RATE_LIMIT_CODES.has(code) && !/behind/i.test(message));
}

/** `Retry-After` (delta seconds or an HTTP date) in ms, or null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (!header) return null;
  const t = header.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000);
  const date = Date.parse(t);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** One answer of a JSON-RPC batch: the result, or the error the node gave that request. */
export type BatchAnswer<T> = { ok: true; result: T } | { ok: false; error: SolanaRpcError };

/** One `getSignaturesForAddress` entry (Solana's shape). */
export interface SignatureInfo {
  signature: string;
  slot: number;
  /** The transaction error (any JSON), null when it succeeded. */
  err: unknown;
  memo: string | null;
  blockTime: number | null;
  confirmationStatus?: string;
}

/** getBlock with `transactionDetails: 'signatures'`: the header and the first signature of each transaction in block order. */
export interface BlockSignatures {
  parentSlot: number;
  blockhash: string;
  previousBlockhash: string;
  blockTime: number | null;
  blockHeight: number | null;
  signatures: string[];
}

/** -32007 (slot skipped / ledger jump) and -32009 (slot skipped, or missing in long-term storage): no block. */
export const SKIPPED_SLOT_CODES = new Set([-32007, -32009]);

/** JSON-RPC "method not found". */
export const METHOD_NOT_FOUND = -32601;

/** Options of a Solana RPC client. */
export interface SolanaRpcOptions {
  /** Request timeout in ms (default 30 s). */
  timeoutMs?: number;
}

/** An account as getAccountInfo / getProgramAccounts return it with `encoding: 'base64'`. */
export interface RpcAccount {
  /** `[<base64 data>, 'base64']`. */
  data: [string, string];
  /** Owning program (base58). */
  owner: string;
  lamports: number;
  executable: boolean;
  space?: number;
}

/** One entry of a getProgramAccounts result. */
export interface RpcKeyedAccount {
  pubkey: string;
  account: RpcAccount;
}

/** Talks to one Solana JSON-RPC endpoint. */
export class SolanaRpc {
  private id = 0;
  /** Where requests go (credentials moved to a header, see `requestTarget`). */
  private readonly target: { url: string; headers: Record<string, string> };
  /**
   * @param url the node's JSON-RPC URL; `user:password@` in it is sent as HTTP Basic auth and never
   *   shown in errors (`displayUrl`)
   */
  constructor(
    readonly url: string,
    private readonly opts: SolanaRpcOptions = {},
  ) {
    this.target = requestTarget(url);
  }

  /**
   * Sends one request; resolves `result`. Throws SolanaRpcError for a JSON-RPC error and
   * SolanaUnavailableError for transport failures (unreachable, timeout, `signal` aborted, non-2xx,
   * a body that is not JSON), each naming the method and the redacted URL, e.g.
   * `getSlot: http://127.0.0.1:8899 unreachable (fetch failed)`.
   */
  async call<T>(method: string, params: unknown[] = [], signal?: AbortSignal): Promise<T> {
    const url = () => displayUrl(this.url);
    const { res, text } = await this.post(method, { jsonrpc: '2.0', id: ++this.id, method, params }, signal);
    let body: { result?: T; error?: { code: number; message: string } };
    try {
      body = JSON.parse(text);
    } catch {
      throw new SolanaUnavailableError(method, `${method}: ${url()} answered HTTP ${res.status}, body is not JSON`);
    }
    if (body?.error) {
      if (isRateLimitAnswer(body.error.code, String(body.error.message))) throw new SolanaRateLimitedError(method, `${method}: ${url()} rate limited (${body.error.code} ${body.error.message})`, retryAfterMs(res.headers.get('retry-after')));
      throw new SolanaRpcError(body.error.code, `${method}: ${body.error.message}`);
    }
    if (!res.ok) throw new SolanaUnavailableError(method, `${method}: ${url()} answered HTTP ${res.status}`);
    return body?.result as T;
  }

  /**
   * Sends `requests` as one JSON-RPC batch (a JSON array in one POST) and answers them in order.
   * A request the node answered with an error gets `{ok: false, error}` (SolanaRpcError); a rate-limit
   * answer for the whole batch, or for any request in it, throws SolanaRateLimitedError (retry the batch).
   * Throws SolanaUnavailableError when the node does not answer the batch as an array of the same
   * length (some nodes and proxies do not take batches: send the requests one by one then).
   */
  async batch<T>(requests: readonly { method: string; params: unknown[] }[], signal?: AbortSignal): Promise<BatchAnswer<T>[]> {
    const label = `batch of ${requests.length} ${requests[0]?.method ?? ''}`;
    const url = () => displayUrl(this.url);
    const first = this.id + 1;
    const payload = requests.map((r) => ({ jsonrpc: '2.0', id: ++this.id, method: r.method, params: r.params }));
    const { res, text } = await this.post(label, payload, signal);
    const after = retryAfterMs(res.headers.get('retry-after'));
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new SolanaUnavailableError(label, `${label}: ${url()} answered HTTP ${res.status}, body is not JSON`);
    }
    if (!Array.isArray(body)) {
      const e = (body as { error?: { code: number; message: string } } | null)?.error;
      if (e && isRateLimitAnswer(e.code, String(e.message))) throw new SolanaRateLimitedError(label, `${label}: ${url()} rate limited (${e.code} ${e.message})`, after);
      throw new SolanaUnavailableError(label, `${label}: ${url()} did not answer the batch with an array${e ? ` (${e.code} ${e.message})` : ''}`);
    }
    if (body.length !== requests.length) throw new SolanaUnavailableError(label, `${label}: ${url()} answered ${body.length} of ${requests.length} requests`);
    const byId = new Map<number, { result?: T; error?: { code: number; message: string } }>();
    for (const a of body as { id: number; result?: T; error?: { code: number; message: string } }[]) byId.set(Number(a?.id), a);
    return requests.map((r, i) => {
      const a = byId.get(first + i);
      if (!a) throw new SolanaUnavailableError(label, `${label}: ${url()} left request ${i} (${r.method}) unanswered`);
      if (a.error) {
        if (isRateLimitAnswer(a.error.code, String(a.error.message))) throw new SolanaRateLimitedError(label, `${label}: ${url()} rate limited (${a.error.code} ${a.error.message})`, after);
        return { ok: false, error: new SolanaRpcError(a.error.code, `${r.method}: ${a.error.message}`) };
      }
      return { ok: true, result: a.result as T };
    });
  }

  /**
   * POSTs `payload` (a request or a batch) and reads the answer's text. A 429 throws
   * SolanaRateLimitedError; a transport failure (unreachable, timeout, `signal`) SolanaUnavailableError
   * naming `what` and the redacted URL.
   */
  private async post(what: string, payload: unknown, signal?: AbortSignal): Promise<{ res: Response; text: string }> {
    const timeout = AbortSignal.timeout(this.opts.timeoutMs ?? 30_000);
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.target.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...this.target.headers },
        body: JSON.stringify(payload),
        signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
      });
      text = await res.text();
    } catch (err) {
      throw new SolanaUnavailableError(what, `${what}: ${displayUrl(this.url)} unreachable (${scrubUrl((err as Error).message, this.url)})`, { cause: err });
    }
    if (res.status === 429) throw new SolanaRateLimitedError(what, `${what}: ${displayUrl(this.url)} answered HTTP 429 (rate limited)`, retryAfterMs(res.headers.get('retry-after')));
    return { res, text };
  }

  /** Current slot at `confirmed` commitment. */
  getSlot(signal?: AbortSignal): Promise<number> {
    return this.call<number>('getSlot', [{ commitment: 'confirmed' }], signal);
  }

  /** The cluster's genesis hash (base58): tells mainnet-beta, devnet and others apart. */
  getGenesisHash(signal?: AbortSignal): Promise<string> {
    return this.call<string>('getGenesisHash', [], signal);
  }

  /** Lowest slot the node still has a block for. */
  getFirstAvailableBlock(signal?: AbortSignal): Promise<number> {
    return this.call<number>('getFirstAvailableBlock', [], signal);
  }

  /** getBlock JSON (base64, full, confirmed, maxSupportedTransactionVersion 1), or null for a skipped slot. */
  async getBlock(slot: number, signal?: AbortSignal): Promise<unknown | null> {
    try {
      return await this.call('getBlock', [slot, { encoding: 'base64', transactionDetails: 'full', rewards: false, commitment: 'confirmed', maxSupportedTransactionVersion: 1 }], signal);
    } catch (err) {
      if (err instanceof SolanaRpcError && SKIPPED_SLOT_CODES.has(err.code)) return null;
      throw err;
    }
  }

  /**
   * `getProgramAccounts(programId)` with base64 data at `confirmed`, optionally only
   * `dataSlice` of each account's data. Many public nodes refuse it (SolanaRpcError, e.g. -32601
   * or -32010 "excluded from account secondary indexes").
   * @returns `[{pubkey, account: {data: [base64, 'base64'], owner, lamports, …}}]`
   */
  getProgramAccounts(programId: string, opts: { dataSlice?: { offset: number; length: number }; signal?: AbortSignal } = {}): Promise<RpcKeyedAccount[]> {
    return this.call<RpcKeyedAccount[]>('getProgramAccounts', [programId, { encoding: 'base64', commitment: 'confirmed', ...(opts.dataSlice ? { dataSlice: opts.dataSlice } : {}) }], opts.signal);
  }

  /** `getAccountInfo(pubkey)` (base64, confirmed, optional `dataSlice`): the account, or null when it does not exist. */
  async getAccountInfo(pubkey: string, opts: { dataSlice?: { offset: number; length: number }; signal?: AbortSignal } = {}): Promise<RpcAccount | null> {
    const r = await this.call<{ value: RpcAccount | null }>('getAccountInfo', [pubkey, { encoding: 'base64', commitment: 'confirmed', ...(opts.dataSlice ? { dataSlice: opts.dataSlice } : {}) }], opts.signal);
    return r?.value ?? null;
  }

  /** getTransaction JSON (base64, confirmed, maxSupportedTransactionVersion 1), or null when unknown. */
  getTransaction(signature: string, signal?: AbortSignal): Promise<unknown | null> {
    return this.call('getTransaction', getTransactionParams(signature), signal);
  }

  /**
   * `getSignaturesForAddress(address, {limit, before, until, commitment: confirmed})`: newest first,
   * from `before` (exclusive) or the newest confirmed block, down to `until` (exclusive); `limit` ≤ 1000.
   */
  getSignaturesForAddress(address: string, opts: { before?: string; until?: string; limit?: number } = {}, signal?: AbortSignal): Promise<SignatureInfo[]> {
    const config: Record<string, unknown> = { commitment: 'confirmed', limit: opts.limit ?? 1000 };
    if (opts.before) config.before = opts.before;
    if (opts.until) config.until = opts.until;
    return this.call<SignatureInfo[]>('getSignaturesForAddress', [address, config], signal);
  }

  /** getBlock with `transactionDetails: 'signatures'` (the block's transaction order), or null for a skipped slot. */
  getBlockSignatures(slot: number, signal?: AbortSignal): Promise<BlockSignatures | null> {
    return this.getBlockDetails<BlockSignatures>(slot, 'signatures', signal);
  }

  /** getBlock with `transactionDetails: 'none'`: the header only, or null for a skipped slot. */
  getBlockHeader(slot: number, signal?: AbortSignal): Promise<Omit<BlockSignatures, 'signatures'> | null> {
    return this.getBlockDetails<Omit<BlockSignatures, 'signatures'>>(slot, 'none', signal);
  }

  /** getBlock (confirmed, maxSupportedTransactionVersion 1, no rewards) with `transactionDetails`; null for a skipped slot. */
  private async getBlockDetails<T>(slot: number, transactionDetails: 'signatures' | 'none', signal?: AbortSignal): Promise<T | null> {
    try {
      return await this.call<T>('getBlock', [slot, { encoding: 'base64', transactionDetails, rewards: false, commitment: 'confirmed', maxSupportedTransactionVersion: 1 }], signal);
    } catch (err) {
      if (err instanceof SolanaRpcError && SKIPPED_SLOT_CODES.has(err.code)) return null;
      throw err;
    }
  }
}

/** getTransaction's params as Refract sends them (base64, confirmed, maxSupportedTransactionVersion 1). */
export function getTransactionParams(signature: string): unknown[] {
  return [signature, { encoding: 'base64', commitment: 'confirmed', maxSupportedTransactionVersion: 1 }];
}
