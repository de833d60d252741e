/** getCompressionSignaturesForAccount: the (at most 2) transactions that created / spent an account hash; no cursor. */
import { encodeSignature, withContext } from '../resultEncoding.ts';
import { RpcError } from '../errors.ts';
import { defineMethod } from './lib/define.ts';
import { hashParams, requireSlot } from './lib/shared.ts';

/** `getCompressionSignaturesForAccount` definition (params schema, handler); semantics in the module comment. */
export const getCompressionSignaturesForAccount = defineMethod({
  name: 'getCompressionSignaturesForAccount',
  summary: 'Signatures of the transactions that touched a compressed account hash',
  params: hashParams,
  async handler(ctx, p) {
    const slot = await requireSlot(ctx);
    const rows = await ctx.data.listSignatures({ kind: 'account', hash: p.hash }, { before: null, limit: 1000 });
    if (rows.length === 0) throw RpcError.notFound('Account not found');
    if (rows.length > 2) throw RpcError.internal(new Error(`account has ${rows.length} transactions (expected at most 2)`));
    return withContext(slot, { items: rows.map(encodeSignature) });
  },
});
