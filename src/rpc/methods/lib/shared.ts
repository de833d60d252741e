/**
 * Helpers shared by several method handlers: the context slot, account lookups by
 * `{address?, hash?}`, and the common param object shapes.
 */
import { z } from 'zod';
import type { Hash, Pubkey } from '../../../types.ts';
import { type AccountView, type Awaitable, type RpcContext, isThenable } from '../../context.ts';
import { RpcError } from '../../errors.ts';
import { withContext } from '../../resultEncoding.ts';
import { hash, optional, pubkey } from '../../schemas.ts';

/**
 * `f(value)` — right away when `value` is a plain value, after it resolves when it is a promise.
 * Lets a handler stay synchronous on a synchronous data source (LMDB reads are) while still
 * accepting one that returns promises: no promise, no microtask per step on the hot path.
 */
export function andThen<T, R>(value: Awaitable<T>, f: (v: T) => R): R | Promise<Awaited<R>> {
  if (isThenable(value)) {
    return (value as Promise<T>).then(f) as Promise<Awaited<R>>;
  }
  return f(value as T);
}

function checkSlot(slot: bigint | null): bigint {
  if (slot === null) throw RpcError.notFound('No data has been indexed');
  return slot;
}

/**
 * The indexed slot for `context.slot` (Photon `Context::extract`), synchronously when the data
 * source answers synchronously. Throws (or rejects with) `Record Not Found: No data has been indexed`
 * when nothing is indexed yet.
 */
export function indexedSlot(ctx: RpcContext): Awaitable<bigint> {
  return andThen(ctx.data.getIndexedSlot(), checkSlot);
}

/**
 * An optional data-source read (the v2 queue methods): `ctx.data[name](...args)`, with the indexed
 * slot for `context.slot` read before it. Throws `RpcError.unavailable('<name> is not served by this
 * data source')` when the data source lacks it (checked before the slot), as {@link requireSlot}
 * does, or as the read does.
 * @param name the data-source method, also the JSON-RPC method name in the error.
 */
export async function optionalRead<K extends 'getQueueElements' | 'getQueueInfo'>(
  ctx: RpcContext,
  name: K,
  ...args: Parameters<NonNullable<RpcContext['data'][K]>>
): Promise<{ value: Awaited<ReturnType<NonNullable<RpcContext['data'][K]>>>; slot: bigint }> {
  const read = ctx.data[name] as ((...a: typeof args) => ReturnType<NonNullable<RpcContext['data'][K]>>) | undefined;
  if (!read) throw RpcError.unavailable(`${name} is not served by this data source`);
  const slot = await requireSlot(ctx);
  return { value: await read.apply(ctx.data, args), slot };
}

/**
 * The indexed slot for `context.slot` (Photon `Context::extract`), always as a promise.
 * Throws `Record Not Found: No data has been indexed` when nothing is indexed yet.
 */
export async function requireSlot(ctx: RpcContext): Promise<bigint> {
  return indexedSlot(ctx);
}

/**
 * `{context: {slot}, value: encode(found)}` for a lookup that must find its record: the indexed slot
 * first, then `lookup()`. Throws `RpcError.notFound(notFound)` when the lookup gives null or
 * undefined, or as {@link requireSlot} does before anything is indexed.
 */
export async function foundInContext<T>(
  ctx: RpcContext,
  lookup: () => Awaitable<T | null | undefined>,
  notFound: string,
  encode: (found: T) => unknown,
): Promise<ReturnType<typeof withContext>> {
  const slot = await requireSlot(ctx);
  const found = await lookup();
  if (found === null || found === undefined) throw RpcError.notFound(notFound);
  return withContext(slot, encode(found));
}

/**
 * The indexed slot, or 0 when nothing is indexed yet: the context slot of answers that exist on an
 * empty store (new-address proofs over empty address trees, photon.md §2.6, whose reference snapshot
 * has `context.slot` 0).
 */
export async function slotOrZero(ctx: RpcContext): Promise<bigint> {
  return (await ctx.data.getIndexedSlot()) ?? 0n;
}

/** `{address?, hash?}` (Photon `CompressedAccountRequest`, unknown keys rejected). */
export const accountIdParams = z
  .strictObject({ address: optional(pubkey), hash: optional(hash) })
  .meta({ description: 'Identify an account by address or by hash (address wins if both are given)' });

/** Which account `{address?, hash?}` designates: address wins; neither → `Validation Error: Either address or hash must be provided`. */
export function accountId(p: { address?: Pubkey; hash?: Hash }): { address: Pubkey } | { hash: Hash } {
  if (p.address) return { address: p.address };
  if (p.hash) return { hash: p.hash };
  throw RpcError.validation('Either address or hash must be provided');
}

/**
 * The unspent account designated by `{address?, hash?}`, or null (synchronously when the data source
 * is). Throws `Validation Error: Either address or hash must be provided` when neither is given.
 */
export function findAccount(ctx: RpcContext, p: { address?: Pubkey; hash?: Hash }): Awaitable<AccountView | null> {
  const id = accountId(p);
  return 'address' in id ? ctx.data.getAccountByAddress(id.address) : ctx.data.getAccountByHash(id.hash);
}

/** `{hash}` (Photon `HashRequest`: unknown keys ignored). */
export const hashParams = z.object({ hash }).meta({ description: 'A compressed account hash' });
