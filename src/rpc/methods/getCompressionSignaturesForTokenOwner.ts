/** getCompressionSignaturesForTokenOwner: signatures touching token accounts (spent or not) of this token owner, newest first, cursor-paginated. */
import { z } from 'zod';
import { pubkey } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { pageFields, signatureListing } from './lib/signatures.ts';

/** `getCompressionSignaturesForTokenOwner` definition (params schema, handler); semantics in the module comment. */
export const getCompressionSignaturesForTokenOwner = defineMethod({
  name: 'getCompressionSignaturesForTokenOwner',
  summary: 'Signatures of transactions touching token accounts (spent or not) of this token owner, paginated',
  params: z.strictObject({ owner: pubkey, ...pageFields }),
  handler: (ctx, p) => signatureListing(ctx, { kind: 'tokenOwner', owner: p.owner }, p),
});
