/**
 * getCompressedAccountsByOwner (V1 and V2): params, filters and data slicing.
 */
import { z } from 'zod';
import type { AccountView, RpcContext } from '../../context.ts';
import { b58, withContext, withContextJson } from '../../resultEncoding.ts';
import { RpcError } from '../../errors.ts';
import { base58Bytes, boundedArray, hash, limit, optional, pubkey, usize } from '../../schemas.ts';
import { andThen, indexedSlot } from './shared.ts';

/** Photon allows at most 5 memcmp filters. */
export const MAX_FILTERS = 5;

/** `{memcmp: {offset, bytes}}` (Photon `FilterSelector`; memcmp may be null, which the handler rejects). */
const filterSelector = z.object({
  memcmp: optional(z.object({ offset: usize, bytes: base58Bytes })),
});

/** `{owner, filters?, dataSlice?, cursor?, limit?}` (unknown keys rejected). */
export const accountsByOwnerParams = z.strictObject({
  owner: pubkey,
  filters: optional(boundedArray(filterSelector, 'filters')),
  dataSlice: optional(z.object({ offset: usize, length: usize })),
  cursor: optional(hash),
  limit,
});

type Params = z.output<typeof accountsByOwnerParams>;

/** Apply `dataSlice` (Photon: `substr(data, offset+1, length)`) to an account's data. */
function sliceData(a: AccountView, slice: { offset: number; length: number } | undefined): AccountView {
  if (!slice || a.data === null) return a;
  return { ...a, data: { ...a.data, data: a.data.data.subarray(slice.offset, slice.offset + slice.length) } };
}

/**
 * `{context, value: {items, cursor}}`: unspent accounts of the owner; cursor = last hash when the
 * page is full. Validation errors: more than 5 filters, a filter without memcmp. With `json` (the
 * JSON text of `encode`'s output) the result is written straight to JSON text (a RawJson, same bytes).
 */
export function accountsByOwnerPage<A>(ctx: RpcContext, p: Params, encode: (a: AccountView) => A, json?: (a: AccountView) => string) {
  const filters = p.filters ?? [];
  if (filters.length > MAX_FILTERS) {
    throw RpcError.validation(`Too many filters. The maximum number of filters allowed is ${MAX_FILTERS}`);
  }
  const memcmp = filters.map((f) => {
    if (!f.memcmp) throw RpcError.validation('Filter instance cannot be null');
    return { offset: f.memcmp.offset, bytes: f.memcmp.bytes };
  });
  // Synchronous on a synchronous data source (no promise per request).
  return andThen(indexedSlot(ctx), (slot) =>
    andThen(ctx.data.listAccountsByOwner(p.owner, { filters: memcmp, cursor: p.cursor ?? null, limit: p.limit }), (rows) => {
      const last = rows[rows.length - 1];
      const cursor = rows.length >= p.limit && last ? b58(last.hash) : null;
      if (json) {
        let items = '';
        for (let i = 0; i < rows.length; i++) items += (i === 0 ? '' : ',') + json(sliceData(rows[i]!, p.dataSlice));
        return withContextJson(slot, `{"items":[${items}],"cursor":${cursor === null ? 'null' : `"${cursor}"`}}`);
      }
      return withContext(slot, { items: rows.map((r) => encode(sliceData(r, p.dataSlice))), cursor });
    }),
  );
}
