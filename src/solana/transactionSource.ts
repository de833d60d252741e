/**
 * `getTransaction` against a Solana JSON-RPC node with the result kept as the node's raw JSON text,
 * for the API's getTransactionWithCompressionInfo(V2), which pass the transaction through byte for
 * byte (`10.0` stays `10.0`, integers above 2^53 stay exact). Errors are the client's
 * (rpcClient.ts): `SolanaRpcError` for a JSON-RPC error, `SolanaUnavailableError` for transport
 * failures, both naming the URL without query string or credentials.
 */
import PQueue from 'p-queue';
import { displayUrl } from '../displayUrl.ts';
import { SolanaRpcError, SolanaUnavailableError, requestTarget, scrubUrl } from './rpcClient.ts';

/**
 * The raw JSON text of the top-level `result` member of a JSON-RPC response body, or undefined when
 * there is none. Assumes `body` is valid JSON (the caller parsed it first).
 */
export function jsonRpcResultText(body: string): string | undefined {
  let i = 0;
  const ws = () => {
    while (i < body.length && (body[i] === ' ' || body[i] === '\n' || body[i] === '\r' || body[i] === '\t')) i++;
  };
  const skipString = () => {
    i++; // opening quote
    while (body[i] !== '"') i += body[i] === '\\' ? 2 : 1;
    i++;
  };
  const skipValue = () => {
    ws();
    const c = body[i];
    if (c === '"') return skipString();
    if (c === '{' || c === '[') {
      let depth = 0;
      do {
        const d = body[i];
        if (d === '"') {
          skipString();
          continue;
        }
        if (d === '{' || d === '[') depth++;
        else if (d === '}' || d === ']') depth--;
        i++;
      } while (depth > 0);
      return;
    }
    while (i < body.length && !',}] \n\r\t'.includes(body[i]!)) i++; // number or literal
  };
  ws();
  if (body[i] !== '{') return undefined;
  i++;
  for (;;) {
    ws();
    if (body[i] !== '"') return undefined;
    const keyStart = i;
    skipString();
    const key = JSON.parse(body.slice(keyStart, i)) as string;
    ws();
    i++; // ':'
    ws();
    const valueStart = i;
    skipValue();
    if (key === 'result') return body.slice(valueStart, i);
    ws();
    if (body[i] !== ',') return undefined;
    i++;
  }
}

/**
 * getTransaction requests in flight at most per source: the API's callers share them, so that one
 * JSON-RPC batch of 1000 getTransactionWithCompressionInfo calls (or many clients at once) does not
 * open 1000 connections to the node at the same moment (seen: 400 at once against a local node all
 * failed with "fetch failed"). The others wait their turn, in order.
 */
export const GET_TRANSACTION_CONCURRENCY = 16;

/**
 * `getTransaction` against a Solana RPC, returning the result as raw JSON text (byte for byte as the
 * node sent it) so that it can be passed through verbatim. Same request as `SolanaRpc.getTransaction`.
 * At most `concurrency` requests are in flight (default {@link GET_TRANSACTION_CONCURRENCY}); the
 * timeout counts from a request's start, not from its wait.
 */
export class SolanaTransactionSource {
  private id = 0;
  private readonly target: { url: string; headers: Record<string, string> };
  private readonly queue: PQueue;
  constructor(
    readonly url: string,
    private readonly timeoutMs = 30_000,
    concurrency = GET_TRANSACTION_CONCURRENCY,
  ) {
    this.target = requestTarget(url);
    this.queue = new PQueue({ concurrency: Math.max(1, concurrency) });
  }

  /**
   * Raw result text, or null when the node answers `null` (unknown signature). Throws
   * SolanaRpcError for a JSON-RPC error and SolanaUnavailableError naming the URL (without query
   * string or credentials) for transport failures; the API answers both as 503 (src/rpc/errors.ts).
   */
  async getTransaction(signature: string): Promise<string | null> {
    return (await this.queue.add(() => this.fetchTransaction(signature))) as string | null;
  }

  /** One getTransaction request (see `getTransaction`). */
  private async fetchTransaction(signature: string): Promise<string | null> {
    let res: Response;
    try {
      res = await fetch(this.target.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...this.target.headers },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: ++this.id,
          method: 'getTransaction',
          params: [signature, { encoding: 'base64', commitment: 'confirmed', maxSupportedTransactionVersion: 1 }],
        }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new SolanaUnavailableError('getTransaction', `getTransaction: ${displayUrl(this.url)} unreachable (${scrubUrl((err as Error).message, this.url)})`, { cause: err });
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw new SolanaUnavailableError('getTransaction', `getTransaction: ${displayUrl(this.url)} answer could not be read (${scrubUrl((err as Error).message, this.url)})`, { cause: err });
    }
    let body: { result?: unknown; error?: { code: number; message: string } } | null;
    try {
      body = JSON.parse(text);
    } catch {
      throw new SolanaUnavailableError('getTransaction', `getTransaction: ${displayUrl(this.url)} answered HTTP ${res.status}, body is not JSON`);
    }
    if (body?.error) throw new SolanaRpcError(body.error.code, `getTransaction: ${body.error.message}`);
    if (!res.ok) throw new SolanaUnavailableError('getTransaction', `getTransaction: ${displayUrl(this.url)} answered HTTP ${res.status}`);
    if (body?.result === null || body?.result === undefined) return null;
    const raw = jsonRpcResultText(text);
    if (raw === undefined) throw new SolanaUnavailableError('getTransaction', `getTransaction: ${displayUrl(this.url)} answered without a JSON-RPC result member`);
    return raw;
  }
}
