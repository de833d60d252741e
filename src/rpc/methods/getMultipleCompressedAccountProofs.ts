/** getMultipleCompressedAccountProofs: params is a JSON array of hashes (≤ 1000); proofs in request order. */
import type { Awaitable, RpcContext } from '../context.ts';
import { merkleProofJson, withContext, withContextJson } from '../resultEncoding.ts';
import { RpcError } from '../errors.ts';
import type { Hash } from '../../types.ts';
import { boundedArray, hash } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { andThen, indexedSlot } from './lib/shared.ts';

/** Positional array of hashes (Photon `HashList`). */
export const hashListParams = boundedArray(hash, 'hashes').meta({ description: 'Array of compressed account hashes' });

/** Number of distinct hashes among the found proofs (a duplicate request counts once, as Photon's SQL IN). */
export function distinctFound(proofs: ({ hash: Uint8Array } | null)[]): number {
  return new Set(proofs.filter((x) => x !== null).map((x) => Buffer.from(x.hash).toString('hex'))).size;
}

/**
 * The proofs of a list of hashes in context, shared by V1 and V2 (they differ in the store read,
 * the not-found rule and the encoding, all in `read` and `answer`): the indexed slot first; an empty
 * list answers `withContext(slot, [])` without reading; else `answer(slot, await read(hashes))`.
 * Synchronous on a synchronous data source. Throws as `indexedSlot`, `read` and `answer` do.
 */
export function proofsInContext<P>(
  ctx: RpcContext,
  hashes: Hash[],
  read: (hashes: Hash[]) => Awaitable<(P | null)[]>,
  answer: (slot: bigint, proofs: (P | null)[]) => unknown,
): unknown {
  return andThen(indexedSlot(ctx), (slot) => (hashes.length === 0 ? withContext(slot, []) : andThen(read(hashes), (proofs) => answer(slot, proofs))));
}

/** `getMultipleCompressedAccountProofs` definition (params schema, handler); semantics in the module comment. */
export const getMultipleCompressedAccountProofs = defineMethod({
  name: 'getMultipleCompressedAccountProofs',
  summary: 'Merkle proofs of several compressed accounts (params: array of hashes)',
  params: hashListParams,
  handler: (ctx, hashes) =>
    proofsInContext(ctx, hashes, (h) => ctx.data.getMerkleProofs(h), (slot, proofs) => {
      const found = distinctFound(proofs);
      if (found !== hashes.length || proofs.some((x) => x === null)) {
        throw RpcError.notFound(`Leaf nodes not found for hashes. Got ${found} hashes. Expected ${hashes.length}.`);
      }
      // JSON text: same bytes as `withContext(slot, proofs.map(encodeMerkleProof))`.
      return withContextJson(slot, `[${proofs.map((x) => merkleProofJson(x!)).join(',')}]`);
    }),
});
