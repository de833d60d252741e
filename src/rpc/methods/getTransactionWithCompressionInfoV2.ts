/**
 * getTransactionWithCompressionInfoV2: as V1 with AccountV2; closed items are
 * `{account: {account, nullifier, txHash}, optionalTokenData}` (nullifier/txHash default 1111…1111).
 */
import { b58OrZero, encodeAccountV2, encodeTokenData } from '../encode.ts';
import { loadTransaction, transactionParams } from './getTransactionWithCompressionInfo.ts';
import { defineMethod } from './lib/define.ts';

/** `getTransactionWithCompressionInfoV2` definition (params schema, handler); semantics in the module comment. */
export const getTransactionWithCompressionInfoV2 = defineMethod({
  name: 'getTransactionWithCompressionInfoV2',
  snapshot: false, // waits on Solana / the prover: do not pin a read snapshot meanwhile
  summary: 'A transaction with the compressed accounts it closed and opened (V2 shapes, no context)',
  params: transactionParams,
  async handler(ctx, p) {
    const rec = await loadTransaction(ctx, p.signature);
    // Photon's GetTransactionResponse field order: transaction, then compressionInfo.
    return {
      transaction: rec.transaction,
      compressionInfo: {
        closedAccounts: rec.closedAccounts.map((c) => ({
          account: { account: encodeAccountV2(c.account), nullifier: b58OrZero(c.nullifier), txHash: b58OrZero(c.txHash) },
          optionalTokenData: c.tokenData ? encodeTokenData(c.tokenData) : null,
        })),
        openedAccounts: rec.openedAccounts.map((o) => ({
          account: encodeAccountV2(o.account),
          optionalTokenData: o.tokenData ? encodeTokenData(o.tokenData) : null,
        })),
      },
    };
  },
});
