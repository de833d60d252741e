/**
 * Token-account listings shared by getCompressedTokenAccountsByOwner/ByDelegate (V1 and V2).
 */
import { z } from 'zod';
import type { Bytes32, Pubkey } from '../../../types.ts';
import type { AccountView, RpcContext } from '../../context.ts';
import { decodeTokenAccountCursor, encodeTokenAccountCursor } from '../../cursor.ts';
import { encodeTokenData, withContext } from '../../resultEncoding.ts';
import { base58Bytes, limit, optional, pubkey } from '../../schemas.ts';
import { requireSlot } from './shared.ts';

/** `{owner, mint?, cursor?, limit?}` (unknown keys rejected). */
export const byOwnerParams = z.strictObject({
  owner: pubkey,
  mint: optional(pubkey),
  cursor: optional(base58Bytes),
  limit,
});

/** `{delegate, mint?, cursor?, limit?}` (unknown keys rejected). */
export const byDelegateParams = z.strictObject({
  delegate: pubkey,
  mint: optional(pubkey),
  cursor: optional(base58Bytes),
  limit,
});

/**
 * `{context, value: {items: [{account, tokenData}], cursor}}` for the token accounts of an owner or
 * delegate; `encodeAccount` picks the V1 or V2 account shape. cursor = base58(mint ‖ hash) of the
 * last item when the page is full.
 */
export async function tokenAccountPage<A>(
  ctx: RpcContext,
  by: { owner: Pubkey } | { delegate: Pubkey },
  p: { mint?: Bytes32; cursor?: Uint8Array; limit: number },
  encodeAccount: (a: AccountView) => A,
) {
  const slot = await requireSlot(ctx);
  const after = p.cursor === undefined ? null : decodeTokenAccountCursor(p.cursor);
  const rows = await ctx.data.listTokenAccounts(by, { mint: p.mint ?? null, after, limit: p.limit });
  const last = rows[rows.length - 1];
  return withContext(slot, {
    items: rows.map((r) => ({ account: encodeAccount(r.account), tokenData: encodeTokenData(r.tokenData) })),
    cursor: rows.length >= p.limit && last ? encodeTokenAccountCursor(last.tokenData.mint, last.account.hash) : null,
  });
}
