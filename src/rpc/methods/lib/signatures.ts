/**
 * Signature listings shared by the getCompressionSignaturesFor* and getLatest* methods:
 * param shapes, cursor decoding and the `{items, cursor}` page.
 */
import { z } from 'zod';
import type { RpcContext, SignatureFilter, SignatureRecord } from '../../context.ts';
import { decodeSignatureCursor, encodeSignatureCursor } from '../../cursor.ts';
import { encodeSignature, withContext } from '../../resultEncoding.ts';
import { cursorString, limit, optional } from '../../schemas.ts';
import { requireSlot } from './shared.ts';

/** `{cursor?, limit?}` added to a filter object (unknown keys rejected). */
export const pageFields = {
  cursor: optional(cursorString),
  limit,
};

/** `{cursor?, limit?}` alone (getLatest*), unknown keys rejected. */
export const pageParams = z.strictObject(pageFields);

/**
 * One page of signatures for `filter`: the indexed slot for `context.slot`, rows ordered by
 * (slot DESC, signature DESC), plus the next cursor (base58 of slot u64 LE ‖ signature) when the
 * page is full, else null. Throws `Record Not Found: No data has been indexed` when nothing is
 * indexed (checked first), then `Validation Error: Invalid cursor …` for a malformed cursor.
 */
export async function signaturePage(
  ctx: RpcContext,
  filter: SignatureFilter,
  page: { cursor?: string; limit: number },
): Promise<{ slot: bigint; rows: SignatureRecord[]; cursor: string | null }> {
  const slot = await requireSlot(ctx);
  const before = page.cursor === undefined ? null : decodeSignatureCursor(page.cursor);
  const rows = await ctx.data.listSignatures(filter, { before, limit: page.limit });
  const last = rows[rows.length - 1];
  const cursor = rows.length >= page.limit && last ? encodeSignatureCursor(last.slot, last.signature) : null;
  return { slot, rows, cursor };
}

/**
 * `{context: {slot}, value: {items: [SignatureInfo], cursor}}`: `signaturePage` encoded with
 * `encodeSignature` (signature base58, slot and blockTime u64). Errors as `signaturePage`.
 */
export async function signatureListing(ctx: RpcContext, filter: SignatureFilter, page: { cursor?: string; limit: number }) {
  const { slot, rows, cursor } = await signaturePage(ctx, filter, page);
  return withContext(slot, { items: rows.map(encodeSignature), cursor });
}
