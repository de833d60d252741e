/** getCompressionSignaturesForOwner: signatures touching accounts (spent or not) of this owner, newest first, cursor-paginated. */
import { z } from 'zod';
import { encodeSignature, withContext } from '../encode.ts';
import { pubkey } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { requireSlot } from './lib/shared.ts';
import { pageFields, signaturePage } from './lib/signatures.ts';

/** `getCompressionSignaturesForOwner` definition (params schema, handler); semantics in the module comment. */
export const getCompressionSignaturesForOwner = defineMethod({
  name: 'getCompressionSignaturesForOwner',
  summary: 'Signatures of transactions touching accounts (spent or not) of this owner, paginated',
  params: z.strictObject({ owner: pubkey, ...pageFields }),
  async handler(ctx, p) {
    const slot = await requireSlot(ctx);
    const { rows, cursor } = await signaturePage(ctx, { kind: 'owner', owner: p.owner }, p);
    return withContext(slot, { items: rows.map(encodeSignature), cursor });
  },
});
