/**
 * A minimal Solana JSON-RPC client (fetch): getSlot, getBlock, getTransaction, getFirstAvailableBlock,
 * getGenesisHash.
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
    let res: Response;
    let text: string;
    const timeout = AbortSignal.timeout(this.opts.timeoutMs ?? 30_000);
    try {
      res = await fetch(this.target.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...this.target.headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++this.id, method, params }),
        signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
      });
      text = await res.text();
    } catch (err) {
      throw new SolanaUnavailableError(method, `${method}: ${url()} unreachable (${scrubUrl((err as Error).message, this.url)})`, { cause: err });
    }
    let body: { result?: T; error?: { code: number; message: string } };
    try {
      body = JSON.parse(text);
    } catch {
      throw new SolanaUnavailableError(method, `${method}: ${url()} answered HTTP ${res.status}, body is not JSON`);
    }
    if (body?.error) throw new SolanaRpcError(body.error.code, `${method}: ${body.error.message}`);
    if (!res.ok) throw new SolanaUnavailableError(method, `${method}: ${url()} answered HTTP ${res.status}`);
    return body?.result as T;
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
  getTransaction(signature: string): Promise<unknown | null> {
    return this.call('getTransaction', [signature, { encoding: 'base64', commitment: 'confirmed', maxSupportedTransactionVersion: 1 }]);
  }
}
