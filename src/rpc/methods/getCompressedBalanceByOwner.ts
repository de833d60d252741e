/** getCompressedBalanceByOwner: sum of the owner's unspent lamports (0 if none). */
import { z } from 'zod';
import { u64, withContext } from '../resultEncoding.ts';
import { pubkey } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { requireSlot } from './lib/shared.ts';

/** `getCompressedBalanceByOwner` definition (params schema, handler); semantics in the module comment. */
export const getCompressedBalanceByOwner = defineMethod({
  name: 'getCompressedBalanceByOwner',
  summary: 'Total lamports of the unspent compressed accounts of an owner',
  // Photon's GetCompressedBalanceByOwnerRequest ignores unknown keys.
  params: z.object({ owner: pubkey }),
  async handler(ctx, p) {
    const slot = await requireSlot(ctx);
    return withContext(slot, u64(await ctx.data.getOwnerBalance(p.owner)));
  },
});
