/** getMultipleCompressedAccountProofs: params is a JSON array of hashes (≤ 1000); proofs in request order. */
import { merkleProofJson, withContext, withContextJson } from '../resultEncoding.ts';
import { RpcError } from '../errors.ts';
import { boundedArray, hash } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { andThen, indexedSlot } from './lib/shared.ts';

/** Positional array of hashes (Photon `HashList`). */
export const hashListParams = boundedArray(hash, 'hashes').meta({ description: 'Array of compressed account hashes' });

/** Number of distinct hashes among the found proofs (a duplicate request counts once, as Photon's SQL IN). */
export function distinctFound(proofs: ({ hash: Uint8Array } | null)[]): number {
  return new Set(proofs.filter((x) => x !== null).map((x) => Buffer.from(x.hash).toString('hex'))).size;
}

/** `getMultipleCompressedAccountProofs` definition (params schema, handler); semantics in the module comment. */
export const getMultipleCompressedAccountProofs = defineMethod({
  name: 'getMultipleCompressedAccountProofs',
  summary: 'Merkle proofs of several compressed accounts (params: array of hashes)',
  params: hashListParams,
  handler: (ctx, hashes) =>
    andThen(indexedSlot(ctx), (slot) => {
      if (hashes.length === 0) return withContext(slot, []);
      return andThen(ctx.data.getMerkleProofs(hashes), (proofs) => {
        const found = distinctFound(proofs);
        if (found !== hashes.length || proofs.some((x) => x === null)) {
          throw RpcError.notFound(`Leaf nodes not found for hashes. Got ${found} hashes. Expected ${hashes.length}.`);
        }
        // JSON text: same bytes as `withContext(slot, proofs.map(encodeMerkleProof))`.
        return withContextJson(slot, `[${proofs.map((x) => merkleProofJson(x!)).join(',')}]`);
      });
    }),
});
