/** getCompressedMintTokenHolders: owners of a mint by balance DESC, cursor = balance u64 LE ‖ owner. */
import { z } from 'zod';
import { decodeHolderCursor, encodeHolderCursor } from '../cursor.ts';
import { b58, u64, withContext } from '../resultEncoding.ts';
import { base58Bytes, limit, optional, pubkey } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { requireSlot } from './lib/shared.ts';

/** `getCompressedMintTokenHolders` definition (params schema, handler); semantics in the module comment. */
export const getCompressedMintTokenHolders = defineMethod({
  name: 'getCompressedMintTokenHolders',
  summary: 'Holders of a compressed-token mint with their balances, largest first, paginated',
  params: z.strictObject({ mint: pubkey, cursor: optional(base58Bytes), limit }),
  async handler(ctx, p) {
    const after = p.cursor === undefined ? null : decodeHolderCursor(p.cursor);
    const slot = await requireSlot(ctx);
    const rows = await ctx.data.listMintHolders(p.mint, { after, limit: p.limit });
    const last = rows[rows.length - 1];
    return withContext(slot, {
      items: rows.map((r) => ({ owner: b58(r.owner), balance: u64(r.balance) })),
      cursor: rows.length >= p.limit && last ? encodeHolderCursor(last.balance, last.owner) : null,
    });
  },
});
