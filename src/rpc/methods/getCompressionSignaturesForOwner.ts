/** getCompressionSignaturesForOwner: signatures touching accounts (spent or not) of this owner, newest first, cursor-paginated. */
import { z } from 'zod';
import { pubkey } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { pageFields, signatureListing } from './lib/signatures.ts';

/** `getCompressionSignaturesForOwner` definition (params schema, handler); semantics in the module comment. */
export const getCompressionSignaturesForOwner = defineMethod({
  name: 'getCompressionSignaturesForOwner',
  summary: 'Signatures of transactions touching accounts (spent or not) of this owner, paginated',
  params: z.strictObject({ owner: pubkey, ...pageFields }),
  handler: (ctx, p) => signatureListing(ctx, { kind: 'owner', owner: p.owner }, p),
});
