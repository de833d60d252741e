/**
 * getTransactionWithCompressionInfo: the Solana transaction verbatim plus the compressed accounts it
 * closed and opened (V1 Account shape). Result has no context.
 */
import { encodeAccount } from '../resultEncoding.ts';
import { defineMethod } from './lib/define.ts';
import { transactionParams, transactionWithCompressionInfo } from './lib/transactions.ts';

/** `getTransactionWithCompressionInfo` definition (params schema, handler); semantics in the module comment. */
export const getTransactionWithCompressionInfo = defineMethod({
  name: 'getTransactionWithCompressionInfo',
  snapshot: false, // waits on Solana / the prover: do not pin a read snapshot meanwhile
  summary: 'A transaction with the compressed accounts it closed and opened (V1 shapes, no context)',
  params: transactionParams,
  handler: (ctx, p) => transactionWithCompressionInfo(ctx, p.signature, (c) => encodeAccount(c.account), encodeAccount),
});
