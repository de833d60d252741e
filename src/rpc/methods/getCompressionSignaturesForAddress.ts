/** getCompressionSignaturesForAddress: signatures touching accounts (spent or not) with this address, newest first, cursor-paginated. */
import { z } from 'zod';
import { pubkey } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { pageFields, signatureListing } from './lib/signatures.ts';

/** `getCompressionSignaturesForAddress` definition (params schema, handler); semantics in the module comment. */
export const getCompressionSignaturesForAddress = defineMethod({
  name: 'getCompressionSignaturesForAddress',
  summary: 'Signatures of transactions touching accounts (spent or not) with this address, paginated',
  params: z.strictObject({ address: pubkey, ...pageFields }),
  handler: (ctx, p) => signatureListing(ctx, { kind: 'address', address: p.address }, p),
});
