/**
 * Errors as values, and the ONE place that maps them to HTTP status and JSON-RPC code/message.
 *
 * Methods, the data source and the prover throw `RpcError` with a `kind`; the server turns any
 * thrown value into `{status, code, message}` through `describeError`. Errors of the layers below
 * that describe an expected condition are recognised too (query errors, the Solana client's errors,
 * a closed LMDB environment: see `fromFrameworkError`). Anything else becomes `Internal server
 * error` (HTTP 500) and is logged, never shown: that text is kept for bugs.
 *
 * Codes and messages follow Photon (photon.md §3.0) where Photon has the case; HTTP statuses follow
 * the Refract issue (Photon itself always answers 200).
 */

/** The kinds of failure the API can report. */
export type RpcErrorKind =
  | 'parse' // body is not JSON
  | 'invalidRequest' // not a JSON-RPC 2.0 request object
  | 'invalidParams' // params fail the method's schema
  | 'methodNotFound' // unknown method or route
  | 'notFound' // a record does not exist (Photon RecordNotFound)
  | 'validation' // request is well-formed but not acceptable (Photon ValidationError)
  | 'invalidPubkey' // Photon InvalidPubkey{field}
  | 'staleSlot' // indexer lags the validator (Photon StaleSlot)
  | 'unauthorized' // missing or unknown API key
  | 'forbidden' // key may not call this method
  | 'rateLimited' // token bucket empty
  | 'payloadTooLarge' // body above the configured limit
  | 'unavailable' // a dependency (prover, Solana RPC, the store) is not available
  | 'minContextSlotNotReached' // the request's minContextSlot was not indexed in time (Solana -32016)
  | 'internal'; // anything unexpected

/** HTTP status and JSON-RPC code per kind, and the message prefix that goes before the detail. */
const TABLE: Record<RpcErrorKind, { status: number; code: number; prefix: string }> = {
  parse: { status: 400, code: -32700, prefix: 'Parse error' },
  invalidRequest: { status: 400, code: -32600, prefix: 'Invalid request' },
  invalidParams: { status: 400, code: -32602, prefix: 'Invalid params' },
  methodNotFound: { status: 404, code: -32601, prefix: 'Method not found' },
  notFound: { status: 404, code: -32000, prefix: 'Record Not Found' },
  validation: { status: 400, code: -32000, prefix: 'Validation Error' },
  invalidPubkey: { status: 400, code: -32000, prefix: 'Invalid Public Key' },
  staleSlot: { status: 503, code: -32000, prefix: '' },
  unauthorized: { status: 401, code: -32001, prefix: 'Unauthorized' },
  forbidden: { status: 403, code: -32003, prefix: 'Forbidden' },
  rateLimited: { status: 429, code: -32005, prefix: 'Rate limited' },
  payloadTooLarge: { status: 413, code: -32600, prefix: 'Request too large' },
  unavailable: { status: 503, code: -32000, prefix: '' },
  minContextSlotNotReached: { status: 503, code: -32016, prefix: 'Minimum context slot has not been reached' },
  internal: { status: 500, code: -32000, prefix: '' },
};

/** A domain error. `detail` is the user-facing reason (it must never carry secrets or stacks). */
export class RpcError extends Error {
  readonly kind: RpcErrorKind;
  readonly detail: string;
  /** For `rateLimited`: seconds until a retry can succeed (sent as `Retry-After`). */
  readonly retryAfterSeconds?: number;
  /** The JSON-RPC error's `data` member (e.g. `{contextSlot}` of -32016), or undefined for none. */
  readonly data?: unknown;

  constructor(kind: RpcErrorKind, detail: string, opts: { retryAfterSeconds?: number; cause?: unknown; data?: unknown } = {}) {
    super(formatMessage(kind, detail), opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'RpcError';
    this.kind = kind;
    this.detail = detail;
    this.retryAfterSeconds = opts.retryAfterSeconds;
    if (opts.data !== undefined) this.data = opts.data;
  }

  /** -32700, HTTP 400. `detail`: why the body is not JSON. */
  static parse(detail: string): RpcError { return new RpcError('parse', detail); }
  /** -32600, HTTP 400. */
  static invalidRequest(detail: string): RpcError { return new RpcError('invalidRequest', detail); }
  /** -32602, HTTP 400. `detail`: `<field>: <reason>`. */
  static invalidParams(detail: string): RpcError { return new RpcError('invalidParams', detail); }
  /** -32601, HTTP 404. */
  static methodNotFound(method: string): RpcError { return new RpcError('methodNotFound', method); }
  /** -32000 `Record Not Found: …`, HTTP 404. */
  static notFound(detail: string): RpcError { return new RpcError('notFound', detail); }
  /** -32000 `Validation Error: …`, HTTP 400. */
  static validation(detail: string): RpcError { return new RpcError('validation', detail); }
  /** -32000 `Invalid Public Key: field '<field>'`, HTTP 400. */
  static invalidPubkey(field: string): RpcError { return new RpcError('invalidPubkey', `field '${field}'`); }
  /** -32000 `Node is behind {n} slots`, HTTP 503. */
  static staleSlot(slotsBehind: bigint | number): RpcError {
    return new RpcError('staleSlot', `Node is behind ${slotsBehind} slots`);
  }
  /** -32001, HTTP 401. */
  static unauthorized(detail: string): RpcError { return new RpcError('unauthorized', detail); }
  /** -32003, HTTP 403. */
  static forbidden(detail: string): RpcError { return new RpcError('forbidden', detail); }
  /** -32005, HTTP 429 with `Retry-After: <seconds>`. */
  static rateLimited(retryAfterSeconds: number): RpcError {
    const s = Math.max(1, Math.ceil(retryAfterSeconds));
    return new RpcError('rateLimited', `too many requests, retry after ${s} s`, { retryAfterSeconds: s });
  }
  /** -32600, HTTP 413. */
  static payloadTooLarge(limitBytes: number): RpcError {
    return new RpcError('payloadTooLarge', `body exceeds ${limitBytes} bytes`);
  }
  /** -32000, HTTP 503. `detail` is the whole message (e.g. `Prover not available: …`). */
  static unavailable(detail: string): RpcError { return new RpcError('unavailable', detail); }
  /**
   * -32016 `Minimum context slot has not been reached` with `data: {contextSlot}` (Solana's
   * MinContextSlotNotReached), HTTP 503. `contextSlot`: the indexed slot now.
   */
  static minContextSlotNotReached(contextSlot: number): RpcError {
    return new RpcError('minContextSlotNotReached', '', { data: { contextSlot } });
  }
  /** -32000 `Internal server error`, HTTP 500. `cause` is for logs only. */
  static internal(cause?: unknown): RpcError { return new RpcError('internal', '', { cause }); }
}

function formatMessage(kind: RpcErrorKind, detail: string): string {
  if (kind === 'internal') return 'Internal server error';
  const { prefix } = TABLE[kind];
  if (!prefix) return detail;
  return detail ? `${prefix}: ${detail}` : prefix;
}

/** What the server sends for an error. */
export interface ErrorDescription {
  /** HTTP status (before the `httpErrorsAs200` switch). */
  status: number;
  /** JSON-RPC error code. */
  code: number;
  /** JSON-RPC error message. */
  message: string;
  /** Extra HTTP headers (e.g. Retry-After). */
  headers: Record<string, string>;
  /** True when the error was not an RpcError (or was `internal`): the caller should log it. */
  unexpected: boolean;
  /** The JSON-RPC error's `data` member, when it has one. */
  data?: unknown;
}

/**
 * Map any thrown value to status/code/message (`bodyLimitBytes` only words the 413 message). RpcError → its table row; fastify's own request
 * errors (body too large, bad JSON from a built-in parser, unsupported media type) → the matching
 * kind; anything else → `internal` with `unexpected: true`.
 */
export function describeError(err: unknown, opts: { bodyLimitBytes?: number } = {}): ErrorDescription {
  const e = err instanceof RpcError ? err : fromFrameworkError(err, opts.bodyLimitBytes);
  const row = TABLE[e.kind];
  const headers: Record<string, string> = {};
  if (e.retryAfterSeconds !== undefined) headers['retry-after'] = String(e.retryAfterSeconds);
  const d: ErrorDescription = {
    status: row.status,
    code: row.code,
    message: e.message,
    headers,
    unexpected: e.kind === 'internal',
  };
  if (e.data !== undefined) d.data = e.data;
  return d;
}

/**
 * Domain errors of the query layer (src/query/errors.ts `QueryError`: `name === 'QueryError'`,
 * `kind`, `message` = the detail) are recognised by shape so that layer need not import this one.
 */
const QUERY_KINDS: Record<string, RpcErrorKind> = {
  RecordNotFound: 'notFound',
  Validation: 'validation',
  InvalidPubkey: 'invalidPubkey',
  StaleSlot: 'staleSlot',
};

/**
 * The Solana client's errors (src/solana/rpcClient.ts), recognised by `name` like QueryError (so this
 * module imports nothing): the node could not be asked (`SolanaUnavailableError`: unreachable,
 * timeout, non-2xx) or answered a JSON-RPC error (`SolanaRpcError`). Both are a dependency failure,
 * 503 `-32000`, with the client's message, which names the method and the redacted URL (Photon
 * answers `Internal server error` and keeps `RPC error: …` for its log). Null for other values.
 */
export function fromSolanaError(err: unknown): RpcError | null {
  const e = err as { name?: unknown; message?: unknown } | null;
  if (typeof e?.message !== 'string') return null;
  if (e.name === 'SolanaUnavailableError') return new RpcError('unavailable', `Solana RPC unavailable: ${e.message}`, { cause: err });
  if (e.name === 'SolanaRpcError') return new RpcError('unavailable', `Solana RPC error: ${e.message}`, { cause: err });
  return null;
}

/**
 * LMDB's own errors for conditions of the environment rather than bugs (lmdb-js words them
 * `Can not <op> … closed database`, and `MDB_READERS_FULL` when every reader slot is taken): 503
 * `Store unavailable: …`. Null for other values.
 */
export function fromStoreError(err: unknown): RpcError | null {
  const message = (err as { message?: unknown } | null)?.message;
  if (typeof message !== 'string') return null;
  if (/closed database/i.test(message)) {
    return new RpcError('unavailable', 'Store unavailable: the LMDB environment is closed (the server is shutting down)', { cause: err });
  }
  if (message.includes('MDB_READERS_FULL')) {
    return new RpcError('unavailable', 'Store unavailable: every LMDB reader slot is in use; retry', { cause: err });
  }
  return null;
}

/**
 * Map errors that are not `RpcError`s: query-layer errors by shape, the Solana client's errors by
 * name (`fromSolanaError`), LMDB environment errors (`fromStoreError`), fastify's FST_ERR_* by code,
 * else internal.
 */
function fromFrameworkError(err: unknown, bodyLimitBytes?: number): RpcError {
  const dependency = fromSolanaError(err) ?? fromStoreError(err);
  if (dependency) return dependency;
  const e = err as { name?: unknown; kind?: unknown; code?: unknown; statusCode?: unknown; message?: unknown } | null;
  if (e?.name === 'QueryError' && typeof e.kind === 'string' && typeof e.message === 'string') {
    const kind = Object.hasOwn(QUERY_KINDS, e.kind) ? QUERY_KINDS[e.kind] : undefined;
    if (!kind) return RpcError.internal(err);
    // A bare field name becomes Photon's `field '<name>'`.
    const detail = kind === 'invalidPubkey' && /^\w+$/.test(e.message) ? `field '${e.message}'` : e.message;
    return new RpcError(kind, detail, { cause: err });
  }
  const code = typeof e?.code === 'string' ? e.code : '';
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyLimitBytes === undefined
        ? new RpcError('payloadTooLarge', 'body exceeds the configured limit')
        : RpcError.payloadTooLarge(bodyLimitBytes);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return RpcError.invalidRequest(code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'empty body' : 'unreadable body');
    default:
      return RpcError.internal(err);
  }
}

/**
 * The JSON-RPC 2.0 error envelope. `id` is the request's id, or null when it could not be read;
 * `data` (the error's `data` member) is left out when undefined.
 */
export function errorEnvelope(id: string | number | null, code: number, message: string, data?: unknown): {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string; data?: unknown };
} {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}
