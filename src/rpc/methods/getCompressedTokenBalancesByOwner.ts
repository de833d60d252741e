/** getCompressedTokenBalancesByOwner: per-mint balances of an owner; value key is snake_case `token_balances` (Photon V1). */
import { z } from 'zod';
import type { RpcContext } from '../context.ts';
import { decodeMintCursor } from '../cursor.ts';
import { b58, u64, withContext } from '../resultEncoding.ts';
import { base58Bytes, limit, optional, pubkey } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { requireSlot } from './lib/shared.ts';

/** `{owner, mint?, cursor? (base58 mint), limit?}` (unknown keys rejected). */
export const tokenBalancesParams = z.strictObject({
  owner: pubkey,
  mint: optional(pubkey),
  cursor: optional(base58Bytes),
  limit,
});

/**
 * The balances page in context: `{context, value: {[listKey]: [{mint, balance}], cursor}}` with
 * cursor = last mint when the page is full. V1 names the list `token_balances`, V2 `items`; the rest
 * is the same. Throws `Validation Error` on a malformed cursor, `Record Not Found` before indexing.
 */
export async function tokenBalancesPage(ctx: RpcContext, p: z.output<typeof tokenBalancesParams>, listKey: 'token_balances' | 'items') {
  const afterMint = p.cursor === undefined ? null : decodeMintCursor(p.cursor);
  const slot = await requireSlot(ctx);
  const rows = await ctx.data.listTokenBalances(p.owner, { mint: p.mint ?? null, afterMint, limit: p.limit });
  const last = rows[rows.length - 1];
  const balances = rows.map((r) => ({ mint: b58(r.mint), balance: u64(r.balance) }));
  return withContext(slot, { [listKey]: balances, cursor: rows.length >= p.limit && last ? b58(last.mint) : null });
}

/** `getCompressedTokenBalancesByOwner` definition (params schema, handler); semantics in the module comment. */
export const getCompressedTokenBalancesByOwner = defineMethod({
  name: 'getCompressedTokenBalancesByOwner',
  summary: 'Token balances of an owner per mint (`token_balances`), paginated by mint',
  params: tokenBalancesParams,
  handler: (ctx, p) => tokenBalancesPage(ctx, p, 'token_balances'),
});
