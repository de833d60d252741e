/**
 * Shared by getValidityProof and getValidityProofV2: the prover lookup.
 */
import type { RpcContext, ValidityProver } from '../../context.ts';
import { RpcError } from '../../errors.ts';

/** The configured prover, or `Prover not available: validity proofs are not enabled on this server` (HTTP 503). */
export function requireProver(ctx: RpcContext): ValidityProver {
  if (!ctx.prover) throw RpcError.unavailable('Prover not available: validity proofs are not enabled on this server');
  return ctx.prover;
}
