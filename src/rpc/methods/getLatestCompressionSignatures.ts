/** getLatestCompressionSignatures: newest transactions that used compression, cursor-paginated. */
import { encodeSignature, withContext } from '../encode.ts';
import { defineMethod } from './lib/define.ts';
import { requireSlot } from './lib/shared.ts';
import { pageParams, signaturePage } from './lib/signatures.ts';

/** `getLatestCompressionSignatures` definition (params schema, handler); semantics in the module comment. */
export const getLatestCompressionSignatures = defineMethod({
  name: 'getLatestCompressionSignatures',
  summary: 'Latest transactions that used ZK compression, paginated',
  params: pageParams,
  async handler(ctx, p) {
    const slot = await requireSlot(ctx);
    const { rows, cursor } = await signaturePage(ctx, { kind: 'latest', compressionOnly: true }, p);
    return withContext(slot, { items: rows.map(encodeSignature), cursor });
  },
});
