/** getLatestCompressionSignatures: newest transactions that used compression, cursor-paginated. */
import { defineMethod } from './lib/define.ts';
import { pageParams, signatureListing } from './lib/signatures.ts';

/** `getLatestCompressionSignatures` definition (params schema, handler); semantics in the module comment. */
export const getLatestCompressionSignatures = defineMethod({
  name: 'getLatestCompressionSignatures',
  summary: 'Latest transactions that used ZK compression, paginated',
  params: pageParams,
  handler: (ctx, p) => signatureListing(ctx, { kind: 'latest', compressionOnly: true }, p),
});
