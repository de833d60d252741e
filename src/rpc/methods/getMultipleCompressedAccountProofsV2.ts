/** getMultipleCompressedAccountProofsV2: array of hashes; queued V2 accounts get proveByIndex with an empty proof. */
import { encodeMerkleProofV2, withContext } from '../resultEncoding.ts';
import { RpcError } from '../errors.ts';
import { hashListParams, proofsInContext } from './getMultipleCompressedAccountProofs.ts';
import { defineMethod } from './lib/define.ts';

/** `getMultipleCompressedAccountProofsV2` definition (params schema, handler); semantics in the module comment. */
export const getMultipleCompressedAccountProofsV2 = defineMethod({
  name: 'getMultipleCompressedAccountProofsV2',
  summary: 'Merkle proofs of several compressed accounts, V2 shape (params: array of hashes)',
  params: hashListParams,
  handler: (ctx, hashes) =>
    proofsInContext(ctx, hashes, (h) => ctx.data.getMerkleProofsV2(h, { queued: 'empty' }), (slot, proofs) => {
      if (proofs.some((x) => x === null)) throw RpcError.notFound('Some accounts not found');
      return withContext(slot, proofs.map((x) => encodeMerkleProofV2(x!)));
    }),
});
