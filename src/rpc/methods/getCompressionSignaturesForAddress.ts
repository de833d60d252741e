/** getCompressionSignaturesForAddress: signatures touching accounts (spent or not) with this address, newest first, cursor-paginated. */
import { z } from 'zod';
import { encodeSignature, withContext } from '../encode.ts';
import { pubkey } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { requireSlot } from './lib/shared.ts';
import { pageFields, signaturePage } from './lib/signatures.ts';

/** `getCompressionSignaturesForAddress` definition (params schema, handler); semantics in the module comment. */
export const getCompressionSignaturesForAddress = defineMethod({
  name: 'getCompressionSignaturesForAddress',
  summary: 'Signatures of transactions touching accounts (spent or not) with this address, paginated',
  params: z.strictObject({ address: pubkey, ...pageFields }),
  async handler(ctx, p) {
    const slot = await requireSlot(ctx);
    const { rows, cursor } = await signaturePage(ctx, { kind: 'address', address: p.address }, p);
    return withContext(slot, { items: rows.map(encodeSignature), cursor });
  },
});
