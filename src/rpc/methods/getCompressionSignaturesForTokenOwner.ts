/** getCompressionSignaturesForTokenOwner: signatures touching token accounts (spent or not) of this token owner, newest first, cursor-paginated. */
import { z } from 'zod';
import { encodeSignature, withContext } from '../encode.ts';
import { pubkey } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { requireSlot } from './lib/shared.ts';
import { pageFields, signaturePage } from './lib/signatures.ts';

/** `getCompressionSignaturesForTokenOwner` definition (params schema, handler); semantics in the module comment. */
export const getCompressionSignaturesForTokenOwner = defineMethod({
  name: 'getCompressionSignaturesForTokenOwner',
  summary: 'Signatures of transactions touching token accounts (spent or not) of this token owner, paginated',
  params: z.strictObject({ owner: pubkey, ...pageFields }),
  async handler(ctx, p) {
    const slot = await requireSlot(ctx);
    const { rows, cursor } = await signaturePage(ctx, { kind: 'tokenOwner', owner: p.owner }, p);
    return withContext(slot, { items: rows.map(encodeSignature), cursor });
  },
});
