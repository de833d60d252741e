/** getMultipleCompressedAccountProofsV2: array of hashes; queued V2 accounts get proveByIndex with an empty proof. */
import { encodeMerkleProofV2, withContext } from '../resultEncoding.ts';
import { RpcError } from '../errors.ts';
import { hashListParams } from './getMultipleCompressedAccountProofs.ts';
import { defineMethod } from './lib/define.ts';
import { andThen, indexedSlot } from './lib/shared.ts';

/** `getMultipleCompressedAccountProofsV2` definition (params schema, handler); semantics in the module comment. */
export const getMultipleCompressedAccountProofsV2 = defineMethod({
  name: 'getMultipleCompressedAccountProofsV2',
  summary: 'Merkle proofs of several compressed accounts, V2 shape (params: array of hashes)',
  params: hashListParams,
  handler: (ctx, hashes) =>
    andThen(indexedSlot(ctx), (slot) => {
      if (hashes.length === 0) return withContext(slot, []);
      return andThen(ctx.data.getMerkleProofsV2(hashes, { queued: 'empty' }), (proofs) => {
        if (proofs.some((x) => x === null)) throw RpcError.notFound('Some accounts not found');
        return withContext(slot, proofs.map((x) => encodeMerkleProofV2(x!)));
      });
    }),
});
