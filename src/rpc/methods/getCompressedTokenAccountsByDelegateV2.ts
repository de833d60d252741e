/** getCompressedTokenAccountsByDelegateV2: unspent token accounts by token delegate, optional mint, cursor mint‖hash. */
import { encodeAccountV2 } from '../resultEncoding.ts';
import { defineMethod } from './lib/define.ts';
import { byDelegateParams, tokenAccountPage } from './lib/tokenAccounts.ts';

/** `getCompressedTokenAccountsByDelegateV2` definition (params schema, handler); semantics in the module comment. */
export const getCompressedTokenAccountsByDelegateV2 = defineMethod({
  name: 'getCompressedTokenAccountsByDelegateV2',
  summary: 'Unspent compressed token accounts by delegate (AccountV2 shape), paginated',
  params: byDelegateParams,
  handler: (ctx, p) => tokenAccountPage(ctx, { delegate: p.delegate }, p, encodeAccountV2),
});
