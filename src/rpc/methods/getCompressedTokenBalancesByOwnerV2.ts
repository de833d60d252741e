/** getCompressedTokenBalancesByOwnerV2: as getCompressedTokenBalancesByOwner with `{items, cursor}`. */
import { tokenBalancesPage, tokenBalancesParams } from './getCompressedTokenBalancesByOwner.ts';
import { defineMethod } from './lib/define.ts';

/** `getCompressedTokenBalancesByOwnerV2` definition (params schema, handler); semantics in the module comment. */
export const getCompressedTokenBalancesByOwnerV2 = defineMethod({
  name: 'getCompressedTokenBalancesByOwnerV2',
  summary: 'Token balances of an owner per mint (`items`), paginated by mint',
  params: tokenBalancesParams,
  handler: (ctx, p) => tokenBalancesPage(ctx, p, 'items'),
});
