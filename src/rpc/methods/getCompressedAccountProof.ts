/** getCompressedAccountProof: Merkle proof of a leaf in a state tree (no spent check). */
import { encodeMerkleProof, withContext } from '../resultEncoding.ts';
import { RpcError } from '../errors.ts';
import { defineMethod } from './lib/define.ts';
import { hashParams, requireSlot } from './lib/shared.ts';

/** `getCompressedAccountProof` definition (params schema, handler); semantics in the module comment. */
export const getCompressedAccountProof = defineMethod({
  name: 'getCompressedAccountProof',
  summary: 'Merkle proof of a compressed account (V1 MerkleProofWithContext)',
  params: hashParams,
  async handler(ctx, p) {
    const slot = await requireSlot(ctx);
    const [proof] = await ctx.data.getMerkleProofs([p.hash]);
    if (!proof) throw RpcError.notFound('Leaf nodes not found for hashes. Got 0 hashes. Expected 1.');
    return withContext(slot, encodeMerkleProof(proof));
  },
});
