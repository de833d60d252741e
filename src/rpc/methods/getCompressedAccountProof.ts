/** getCompressedAccountProof: Merkle proof of a leaf in a state tree (no spent check). */
import { encodeMerkleProof } from '../resultEncoding.ts';
import { defineMethod } from './lib/define.ts';
import { foundInContext, hashParams } from './lib/shared.ts';

/** `getCompressedAccountProof` definition (params schema, handler); semantics in the module comment. */
export const getCompressedAccountProof = defineMethod({
  name: 'getCompressedAccountProof',
  summary: 'Merkle proof of a compressed account (V1 MerkleProofWithContext)',
  params: hashParams,
  handler: (ctx, p) =>
    foundInContext(
      ctx,
      async () => (await ctx.data.getMerkleProofs([p.hash]))[0],
      'Leaf nodes not found for hashes. Got 0 hashes. Expected 1.',
      encodeMerkleProof,
    ),
});
