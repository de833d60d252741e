/** getMultipleCompressedAccounts: `{hashes}` or `{addresses}` (≤ 1000); items in request order, null when missing or spent. */
import { z } from 'zod';
import type { AccountView, RpcContext } from '../context.ts';
import { encodeAccount, withContext } from '../resultEncoding.ts';
import { RpcError } from '../errors.ts';
import { boundedArray, hash, optional, pubkey } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { requireSlot } from './lib/shared.ts';

/** `{hashes?} | {addresses?}` (unknown keys rejected; exactly one must be given). */
export const multipleAccountsParams = z.strictObject({
  hashes: optional(boundedArray(hash, 'hashes')),
  addresses: optional(boundedArray(pubkey, 'addresses')),
});

/** `{context, value: {items}}` with `encode` choosing the V1 or V2 account shape. */
export async function multipleAccounts<A>(
  ctx: RpcContext,
  p: z.output<typeof multipleAccountsParams>,
  encode: (a: AccountView) => A,
) {
  if (p.hashes && p.addresses) throw RpcError.validation('Cannot provide both hashes and addresses');
  if (!p.hashes && !p.addresses) throw RpcError.validation('Either hashes or addresses must be provided');
  const slot = await requireSlot(ctx);
  const rows = p.hashes
    ? await Promise.all(p.hashes.map((h) => ctx.data.getAccountByHash(h)))
    : await Promise.all(p.addresses!.map((a) => ctx.data.getAccountByAddress(a)));
  return withContext(slot, { items: rows.map((r) => (r ? encode(r) : null)) });
}

/** `getMultipleCompressedAccounts` definition (params schema, handler); semantics in the module comment. */
export const getMultipleCompressedAccounts = defineMethod({
  name: 'getMultipleCompressedAccounts',
  summary: 'Several compressed accounts by hashes or addresses (V1 Account shape), null where missing',
  params: multipleAccountsParams,
  handler: (ctx, p) => multipleAccounts(ctx, p, encodeAccount),
});
