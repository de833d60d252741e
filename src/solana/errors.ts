/**
 * The one error type of the decoding layer (wire transactions, RPC JSON, Borsh events).
 *
 * Every malformed input surfaces as a `DecodeError`; decoders never return partial data and never
 * let another exception type escape (a `RangeError` from a typed array, a `SyntaxError` from JSON,
 * a `SolanaError` from @solana/kit… are all wrapped).
 */

/** Optional context of a {@link DecodeError}. */
export interface DecodeErrorContext {
  /** First signature (base58) of the transaction being decoded, when it is already known. */
  signature?: string;
  /** Byte offset into the buffer being read, when the failure is positional. */
  offset?: number;
  /** The underlying error, if any. */
  cause?: unknown;
}

/**
 * Malformed input. `message` is `"<field>: <reason>"`, e.g.
 * `transaction.message: truncated at byte 311 (need 32 bytes for staticAccounts[9], 12 left)`, followed by
 * ` [signature <sig>]` once the transaction signature is known.
 */
export class DecodeError extends Error {
  override readonly name = 'DecodeError';
  /** Dotted path of the field that failed, e.g. `meta.innerInstructions[0].instructions[3].data`. */
  readonly field: string;
  /** Why it failed, without the field name. */
  readonly reason: string;
  /** Base58 signature of the transaction, when known. */
  readonly signature?: string;
  /** Byte offset of the failure, for binary decoders. */
  readonly offset?: number;

  constructor(field: string, reason: string, ctx: DecodeErrorContext = {}) {
    super(
      `${field}: ${reason}${ctx.signature !== undefined ? ` [signature ${ctx.signature}]` : ''}`,
      ctx.cause !== undefined ? { cause: ctx.cause } : undefined,
    );
    this.field = field;
    this.reason = reason;
    if (ctx.signature !== undefined) this.signature = ctx.signature;
    if (ctx.offset !== undefined) this.offset = ctx.offset;
  }

  /**
   * Returns a copy with `field` prefixed by `prefix` (`prefix.field`) and the signature attached
   * (a signature already present is kept). Used to give nested decoders' errors their full path.
   */
  within(prefix: string | null, signature?: string): DecodeError {
    const field = prefix ? `${prefix}.${this.field}` : this.field;
    return new DecodeError(field, this.reason, {
      signature: this.signature ?? signature,
      offset: this.offset,
      cause: this.cause,
    });
  }
}
