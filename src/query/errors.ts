/**
 * Domain errors of the query layer. The RPC layer maps them to JSON-RPC codes and HTTP statuses
 * (photon.md §3.0: all are -32000 with these message prefixes).
 */
export type QueryErrorKind = 'RecordNotFound' | 'Validation' | 'InvalidPubkey' | 'StaleSlot' | 'Unexpected';

/** A domain error with a user-actionable message. */
export class QueryError extends Error {
  constructor(
    readonly kind: QueryErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'QueryError';
  }
}

/** `Record Not Found: …` (HTTP 404). */
export const recordNotFound = (m: string) => new QueryError('RecordNotFound', m);
/** `Validation Error: …` (HTTP 400). */
export const validationError = (m: string) => new QueryError('Validation', m);
