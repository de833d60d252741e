/** getMultipleCompressedAccountsV2: as getMultipleCompressedAccounts, AccountV2 shape. */
import { encodeAccountV2 } from '../resultEncoding.ts';
import { multipleAccounts, multipleAccountsParams } from './getMultipleCompressedAccounts.ts';
import { defineMethod } from './lib/define.ts';

/** `getMultipleCompressedAccountsV2` definition (params schema, handler); semantics in the module comment. */
export const getMultipleCompressedAccountsV2 = defineMethod({
  name: 'getMultipleCompressedAccountsV2',
  summary: 'Several compressed accounts by hashes or addresses (AccountV2 shape), null where missing',
  params: multipleAccountsParams,
  handler: (ctx, p) => multipleAccounts(ctx, p, encodeAccountV2),
});
