/**
 * Errors of the proving core as values with a code and a message a user can act on.
 *
 * Every code maps to the reference prover's 400 `proving_error` (spec prover.md §2.3), except
 * `malformed_request` (400 `malformed_body`), `timeout` (408 `proof_timeout`), `queue_full` /
 * `queue_unavailable` / `not_ready` (503 `queue_unavailable`) and `worker_crashed` / `setup_failed` /
 * `internal` (500 `unexpected_error`). The mappings to HTTP live in src/rpc/http/proveRoute.ts (POST /prove)
 * and src/rpc/validityProver.ts (`proverErrorToRpc`, JSON-RPC), not here. In JSON-RPC only
 * `witness_failed`, `verify_failed`, `internal` (the store or the prover contradicting itself: a bug)
 * and `remote_refused` (Photon's answer) give the bare `Internal server error`; every other code has
 * its own message.
 */
export type ProverErrorCode =
  /** The number of accounts/addresses has no circuit (spec §1.5). */
  | 'unsupported_shape'
  /** Inputs fail a structural or range check before any witness is computed. */
  | 'invalid_input'
  /** A reference-prover JSON request could not be parsed (bad hex, missing fields). */
  | 'malformed_request'
  /** The witness calculator hit a failing constraint (wrong root, value out of range, …). */
  | 'witness_failed'
  /** A circuit's wasm/zkey/vkey is missing or does not match the manifest. */
  | 'keys_missing'
  /** A produced proof did not verify against the circuit's verification key. */
  | 'verify_failed'
  /** A pool worker died or was terminated while it held the task. */
  | 'worker_crashed'
  /** Compiling a circuit or creating keys failed. */
  | 'setup_failed'
  /** The proof queue is full (in-process bound reached); retry later. */
  | 'queue_full'
  /** The proof did not finish within the per-request timeout. */
  | 'timeout'
  /** The proof queue (Redis / BullMQ) or the external prover cannot be reached. */
  | 'queue_unavailable'
  /** The proving keys of the circuit are not ready yet (missing, or being built in the background). */
  | 'not_ready'
  /** An external prover (`--prover-url`) failed: unreachable, an error of its own, or an answer without a proof. */
  | 'remote_failed'
  /**
   * An external prover refused the statement (its 400 `proving_error`: e.g. a root it does not
   * accept). `/prove` passes it on as 400 `proving_error`; the JSON-RPC methods answer Internal server
   * error, as Photon does for any non-2xx prover reply (the inputs came from the indexed state).
   */
  | 'remote_refused'
  /** An unexpected failure inside snarkjs or the prover (a bug, not an input problem). */
  | 'internal';

/** An error of the proving core. `code` is stable; `message` is meant for humans. */
export class ProverError extends Error {
  override readonly name = 'ProverError';
  constructor(
    readonly code: ProverErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

