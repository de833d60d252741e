/** getCompressedAccountProofV2: Merkle proof with treeContext; queued V2 accounts get proveByIndex and a path for their index. */
import { encodeMerkleProofV2 } from '../resultEncoding.ts';
import { defineMethod } from './lib/define.ts';
import { foundInContext, hashParams } from './lib/shared.ts';

/** `getCompressedAccountProofV2` definition (params schema, handler); semantics in the module comment. */
export const getCompressedAccountProofV2 = defineMethod({
  name: 'getCompressedAccountProofV2',
  summary: 'Merkle proof of a compressed account (MerkleProofWithContextV2)',
  params: hashParams,
  handler: (ctx, p) =>
    foundInContext(ctx, async () => (await ctx.data.getMerkleProofsV2([p.hash], { queued: 'path' }))[0], 'Account not found', encodeMerkleProofV2),
});
