/**
 * getTransactionWithCompressionInfoV2: as V1 with AccountV2; closed items are
 * `{account: {account, nullifier, txHash}, optionalTokenData}`: for a batched (StateV2) tree account the
 * nullifier and tx hash its input queue holds, for a V1 tree account 1111…1111 (as Photon).
 */
import { b58OrZero, encodeAccountV2 } from '../resultEncoding.ts';
import { defineMethod } from './lib/define.ts';
import { transactionParams, transactionWithCompressionInfo } from './lib/transactions.ts';

/** `getTransactionWithCompressionInfoV2` definition (params schema, handler); semantics in the module comment. */
export const getTransactionWithCompressionInfoV2 = defineMethod({
  name: 'getTransactionWithCompressionInfoV2',
  snapshot: false, // waits on Solana / the prover: do not pin a read snapshot meanwhile
  summary: 'A transaction with the compressed accounts it closed and opened (V2 shapes, no context)',
  params: transactionParams,
  handler: (ctx, p) =>
    transactionWithCompressionInfo(
      ctx,
      p.signature,
      (c) => ({ account: encodeAccountV2(c.account), nullifier: b58OrZero(c.nullifier), txHash: b58OrZero(c.txHash) }),
      encodeAccountV2,
    ),
});
