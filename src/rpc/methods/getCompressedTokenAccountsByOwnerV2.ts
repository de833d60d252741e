/** getCompressedTokenAccountsByOwnerV2: unspent token accounts by token owner, optional mint, cursor mint‖hash. */
import { encodeAccountV2 } from '../resultEncoding.ts';
import { defineMethod } from './lib/define.ts';
import { byOwnerParams, tokenAccountPage } from './lib/tokenAccounts.ts';

/** `getCompressedTokenAccountsByOwnerV2` definition (params schema, handler); semantics in the module comment. */
export const getCompressedTokenAccountsByOwnerV2 = defineMethod({
  name: 'getCompressedTokenAccountsByOwnerV2',
  summary: 'Unspent compressed token accounts by owner (AccountV2 shape), paginated',
  params: byOwnerParams,
  handler: (ctx, p) => tokenAccountPage(ctx, { owner: p.owner }, p, encodeAccountV2),
});
