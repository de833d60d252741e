/** getCompressedAccountProofV2: Merkle proof with treeContext; queued V2 accounts get proveByIndex and a path for their index. */
import { encodeMerkleProofV2, withContext } from '../resultEncoding.ts';
import { RpcError } from '../errors.ts';
import { defineMethod } from './lib/define.ts';
import { hashParams, requireSlot } from './lib/shared.ts';

/** `getCompressedAccountProofV2` definition (params schema, handler); semantics in the module comment. */
export const getCompressedAccountProofV2 = defineMethod({
  name: 'getCompressedAccountProofV2',
  summary: 'Merkle proof of a compressed account (MerkleProofWithContextV2)',
  params: hashParams,
  async handler(ctx, p) {
    const slot = await requireSlot(ctx);
    const [proof] = await ctx.data.getMerkleProofsV2([p.hash], { queued: 'path' });
    if (!proof) throw RpcError.notFound('Account not found');
    return withContext(slot, encodeMerkleProofV2(proof));
  },
});
