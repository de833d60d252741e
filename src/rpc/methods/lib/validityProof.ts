/**
 * Shared by getValidityProof and getValidityProofV2: the prover lookup and the prove-and-wrap step.
 */
import type { RpcContext, ValidityProofRecord, ValidityProofRequest, ValidityProver } from '../../context.ts';
import { withContext } from '../../resultEncoding.ts';
import { RpcError } from '../../errors.ts';
import { checkAddressTrees } from './newAddressProofs.ts';
import { requireSlot, slotOrZero } from './shared.ts';

/** The configured prover, or `Prover not available: validity proofs are not enabled on this server` (HTTP 503). */
export function requireProver(ctx: RpcContext): ValidityProver {
  if (!ctx.prover) throw RpcError.unavailable('Prover not available: validity proofs are not enabled on this server');
  return ctx.prover;
}

/**
 * The slot of the store read a validity proof's inputs came from, when the prover reports it
 * (src/rpc/validityProver.ts adds `slot` to the record), so `context.slot` matches the data;
 * undefined otherwise (the handler then uses its own slot read).
 */
export function readSlot(record: ValidityProofRecord): bigint | undefined {
  const s = (record as ValidityProofRecord & { slot?: unknown }).slot;
  return typeof s === 'bigint' ? s : undefined;
}

/**
 * `{context: {slot}, value: encode(proof)}` for `request`, proved in `mode` ('v1' or 'v2', see
 * `ValidityProver`); a request with neither hashes nor new addresses answers `whenEmpty()` instead
 * (V1 throws a validation error there, V2 answers an empty proof) before anything else is checked.
 * context.slot is the prover's read slot (`readSlot`), else the indexed slot. Errors, in this order:
 * no prover (503, `requireProver`), nothing indexed when the request has account hashes (`Record Not
 * Found: No data has been indexed`; a request with only new addresses is proved against the empty
 * address trees, context slot 0), an unknown address tree (`Invalid Public Key: field 'tree'`), then
 * whatever the prover throws.
 */
export async function proveWithContext<T>(
  ctx: RpcContext,
  request: ValidityProofRequest,
  mode: 'v1' | 'v2',
  encode: (proof: ValidityProofRecord) => T,
  whenEmpty: () => unknown,
) {
  if (request.hashes.length === 0 && request.newAddresses.length === 0) return whenEmpty();
  const prover = requireProver(ctx);
  const slot = request.hashes.length > 0 ? await requireSlot(ctx) : await slotOrZero(ctx);
  await checkAddressTrees(ctx, request.newAddresses);
  const proof = await prover.getValidityProof(request, mode);
  return withContext(readSlot(proof) ?? slot, encode(proof));
}
