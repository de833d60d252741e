/**
 * Shared by getTransactionWithCompressionInfo (V1 `Account` items) and
 * getTransactionWithCompressionInfoV2 (`AccountV2` items, closed items with nullifier/txHash).
 */
import { z } from 'zod';
import type { AccountView, RpcContext, TransactionCompressionInfoRecord } from '../../context.ts';
import { encodeTokenData } from '../../resultEncoding.ts';
import { RpcError } from '../../errors.ts';
import { signature } from '../../schemas.ts';

/** `{signature}` (unknown keys rejected). */
export const transactionParams = z.strictObject({ signature });

/** One closed (input) account of a transaction record: account, tokenData, V2 nullifier/txHash (null when absent). */
export type ClosedAccount = TransactionCompressionInfoRecord['closedAccounts'][number];

/**
 * Photon's `GetTransactionResponse` for `sig` (no context): `{transaction, compressionInfo:
 * {closedAccounts: [{account, optionalTokenData}], openedAccounts: [{account, optionalTokenData}]}}`,
 * `transaction` verbatim from the record, `optionalTokenData` a `TokenData` or null. `closedAccount`
 * and `openedAccount` encode each item's `account` field (V1 or V2 shape). Throws (rejects with)
 * `Record Not Found: Transaction not found` when the data source has no record for `sig`.
 */
export async function transactionWithCompressionInfo<C, O>(
  ctx: RpcContext,
  sig: string,
  closedAccount: (c: ClosedAccount) => C,
  openedAccount: (a: AccountView) => O,
) {
  const rec = await ctx.data.getTransactionWithCompressionInfo(sig);
  if (!rec) throw RpcError.notFound('Transaction not found');
  // Photon's GetTransactionResponse field order: transaction, then compressionInfo.
  return {
    transaction: rec.transaction,
    compressionInfo: {
      closedAccounts: rec.closedAccounts.map((c) => ({
        account: closedAccount(c),
        optionalTokenData: c.tokenData ? encodeTokenData(c.tokenData) : null,
      })),
      openedAccounts: rec.openedAccounts.map((o) => ({
        account: openedAccount(o.account),
        optionalTokenData: o.tokenData ? encodeTokenData(o.tokenData) : null,
      })),
    },
  };
}
