/** getCompressedAccountsByOwner: unspent accounts of an owner, memcmp filters, dataSlice, hash cursor. */
import { accountJson, encodeAccount } from '../resultEncoding.ts';
import { accountsByOwnerPage, accountsByOwnerParams } from './lib/accountsByOwner.ts';
import { defineMethod } from './lib/define.ts';

/** `getCompressedAccountsByOwner` definition (params schema, handler); semantics in the module comment. */
export const getCompressedAccountsByOwner = defineMethod({
  name: 'getCompressedAccountsByOwner',
  summary: 'Unspent compressed accounts of an owner (V1 Account shape), paginated',
  params: accountsByOwnerParams,
  handler: (ctx, p) => accountsByOwnerPage(ctx, p, encodeAccount, accountJson),
});
