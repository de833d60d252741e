/** getCompressedTokenAccountsByOwner: unspent token accounts by token owner, optional mint, cursor mint‖hash. */
import { encodeAccount } from '../resultEncoding.ts';
import { defineMethod } from './lib/define.ts';
import { byOwnerParams, tokenAccountPage } from './lib/tokenAccounts.ts';

/** `getCompressedTokenAccountsByOwner` definition (params schema, handler); semantics in the module comment. */
export const getCompressedTokenAccountsByOwner = defineMethod({
  name: 'getCompressedTokenAccountsByOwner',
  summary: 'Unspent compressed token accounts by owner (V1 Account shape), paginated',
  params: byOwnerParams,
  handler: (ctx, p) => tokenAccountPage(ctx, { owner: p.owner }, p, encodeAccount),
});
