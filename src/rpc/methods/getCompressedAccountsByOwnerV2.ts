/** getCompressedAccountsByOwnerV2: as getCompressedAccountsByOwner, AccountV2 shape. */
import { encodeAccountV2 } from '../resultEncoding.ts';
import { accountsByOwnerPage, accountsByOwnerParams } from './lib/accountsByOwner.ts';
import { defineMethod } from './lib/define.ts';

/** `getCompressedAccountsByOwnerV2` definition (params schema, handler); semantics in the module comment. */
export const getCompressedAccountsByOwnerV2 = defineMethod({
  name: 'getCompressedAccountsByOwnerV2',
  summary: 'Unspent compressed accounts of an owner (AccountV2 shape), paginated',
  params: accountsByOwnerParams,
  handler: (ctx, p) => accountsByOwnerPage(ctx, p, encodeAccountV2),
});
