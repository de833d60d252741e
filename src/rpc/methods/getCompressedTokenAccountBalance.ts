/**
 * getCompressedTokenAccountBalance: `{amount}` of an unspent token account, 0 if not found.
 * Photon quirk kept: by address it matches the token **owner** (first account by mint, hash).
 */
import { u64, withContext } from '../resultEncoding.ts';
import { defineMethod } from './lib/define.ts';
import { accountId, accountIdParams, requireSlot } from './lib/shared.ts';

/** `getCompressedTokenAccountBalance` definition (params schema, handler); semantics in the module comment. */
export const getCompressedTokenAccountBalance = defineMethod({
  name: 'getCompressedTokenAccountBalance',
  summary: 'Token amount of a compressed token account by hash (or, Photon quirk, by owner as address); 0 if not found',
  params: accountIdParams,
  async handler(ctx, p) {
    const id = accountId(p);
    const slot = await requireSlot(ctx);
    const row =
      'address' in id
        ? (await ctx.data.listTokenAccounts({ owner: id.address }, { mint: null, after: null, limit: 1 }))[0] ?? null
        : await ctx.data.getTokenAccountByHash(id.hash);
    return withContext(slot, { amount: u64(row?.tokenData.amount ?? 0n) });
  },
});
