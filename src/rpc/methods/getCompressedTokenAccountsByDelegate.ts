/** getCompressedTokenAccountsByDelegate: unspent token accounts by token delegate, optional mint, cursor mint‖hash. */
import { encodeAccount } from '../resultEncoding.ts';
import { defineMethod } from './lib/define.ts';
import { byDelegateParams, tokenAccountPage } from './lib/tokenAccounts.ts';

/** `getCompressedTokenAccountsByDelegate` definition (params schema, handler); semantics in the module comment. */
export const getCompressedTokenAccountsByDelegate = defineMethod({
  name: 'getCompressedTokenAccountsByDelegate',
  summary: 'Unspent compressed token accounts by delegate (V1 Account shape), paginated',
  params: byDelegateParams,
  handler: (ctx, p) => tokenAccountPage(ctx, { delegate: p.delegate }, p, encodeAccount),
});
