/**
 * Helpers shared by several method handlers: the context slot, account lookups by
 * `{address?, hash?}`, and the common param object shapes.
 */
import { z } from 'zod';
import type { Bytes32 } from '../../../types.ts';
import type { AccountRecord, RpcContext } from '../../context.ts';
import { RpcError } from '../../errors.ts';
import { hash, optional, pubkey } from '../../schemas.ts';

/**
 * The indexed slot for `context.slot` (Photon `Context::extract`).
 * Throws `Record Not Found: No data has been indexed` when nothing is indexed yet.
 */
export async function requireSlot(ctx: RpcContext): Promise<bigint> {
  const slot = await ctx.data.getIndexedSlot();
  if (slot === null) throw RpcError.notFound('No data has been indexed');
  return slot;
}

/** `{address?, hash?}` (Photon `CompressedAccountRequest`, unknown keys rejected). */
export const accountIdParams = z
  .strictObject({ address: optional(pubkey), hash: optional(hash) })
  .meta({ description: 'Identify an account by address or by hash (address wins if both are given)' });

/** Which account `{address?, hash?}` designates: address wins; neither → `Validation Error: Either address or hash must be provided`. */
export function accountId(p: { address?: Bytes32; hash?: Bytes32 }): { address: Bytes32 } | { hash: Bytes32 } {
  if (p.address) return { address: p.address };
  if (p.hash) return { hash: p.hash };
  throw RpcError.validation('Either address or hash must be provided');
}

/** The unspent account designated by `{address?, hash?}`, or null. */
export async function findAccount(ctx: RpcContext, p: { address?: Bytes32; hash?: Bytes32 }): Promise<AccountRecord | null> {
  const id = accountId(p);
  return 'address' in id ? ctx.data.getAccountByAddress(id.address) : ctx.data.getAccountByHash(id.hash);
}

/** `{hash}` (Photon `HashRequest`: unknown keys ignored). */
export const hashParams = z.object({ hash }).meta({ description: 'A compressed account hash' });
