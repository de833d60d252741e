/**
 * getTransactionWithCompressionInfo: the Solana transaction verbatim plus the compressed accounts it
 * closed and opened (V1 Account shape). Result has no context.
 */
import { z } from 'zod';
import type { RpcContext, TransactionCompressionInfoRecord } from '../context.ts';
import { encodeAccount, encodeTokenData } from '../encode.ts';
import { RpcError } from '../errors.ts';
import { signature } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';

/** `{signature}` (unknown keys rejected). */
export const transactionParams = z.strictObject({ signature });

/** Fetch the record or throw `Record Not Found: Transaction not found`. */
export async function loadTransaction(ctx: RpcContext, sig: string): Promise<TransactionCompressionInfoRecord> {
  const rec = await ctx.data.getTransactionWithCompressionInfo(sig);
  if (!rec) throw RpcError.notFound('Transaction not found');
  return rec;
}

/** `getTransactionWithCompressionInfo` definition (params schema, handler); semantics in the module comment. */
export const getTransactionWithCompressionInfo = defineMethod({
  name: 'getTransactionWithCompressionInfo',
  snapshot: false, // waits on Solana / the prover: do not pin a read snapshot meanwhile
  summary: 'A transaction with the compressed accounts it closed and opened (V1 shapes, no context)',
  params: transactionParams,
  async handler(ctx, p) {
    const rec = await loadTransaction(ctx, p.signature);
    // Photon's GetTransactionResponse field order: transaction, then compressionInfo.
    return {
      transaction: rec.transaction,
      compressionInfo: {
        closedAccounts: rec.closedAccounts.map((c) => ({
          account: encodeAccount(c.account),
          optionalTokenData: c.tokenData ? encodeTokenData(c.tokenData) : null,
        })),
        openedAccounts: rec.openedAccounts.map((o) => ({
          account: encodeAccount(o.account),
          optionalTokenData: o.tokenData ? encodeTokenData(o.tokenData) : null,
        })),
      },
    };
  },
});
