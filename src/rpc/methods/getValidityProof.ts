/**
 * getValidityProof (V1 result: parallel arrays roots/rootIndices/leafIndices/leaves/merkleTrees).
 * `newAddresses` (deprecated) go to the V1 address tree amt1; `newAddressesWithTrees` name the tree.
 */
import bs58 from 'bs58';
import { z } from 'zod';
import { ADDRESS_TREE_V1 } from '../../light/constants.ts';
import type { ValidityProofRecord } from '../context.ts';
import { encodeValidityProofV1, withContext } from '../encode.ts';
import { RpcError } from '../errors.ts';
import { boundedArray, hash, optional, pubkey } from '../schemas.ts';
import { addressWithTree } from './getMultipleNewAddressProofsV2.ts';
import { defineMethod } from './lib/define.ts';
import { checkAddressTrees } from './lib/newAddressProofs.ts';
import { requireSlot } from './lib/shared.ts';
import { requireProver } from './lib/validityProof.ts';

const AMT1 = bs58.decode(ADDRESS_TREE_V1);

/**
 * The slot of the store read a validity proof's inputs came from, when the prover reports it
 * (src/prover/validityProver.ts adds `slot` to the record), so `context.slot` matches the data;
 * undefined otherwise (the handler then uses its own slot read).
 */
export function readSlot(record: ValidityProofRecord): bigint | undefined {
  const s = (record as ValidityProofRecord & { slot?: unknown }).slot;
  return typeof s === 'bigint' ? s : undefined;
}

/** `getValidityProof` definition (params schema, handler); semantics in the module comment. */
export const getValidityProof = defineMethod({
  name: 'getValidityProof',
  snapshot: false, // waits on Solana / the prover: do not pin a read snapshot meanwhile
  summary: 'Groth16 validity proof for account hashes and/or new addresses (V1 result shape)',
  params: z.strictObject({
    hashes: optional(boundedArray(hash, 'hashes')),
    newAddresses: optional(boundedArray(pubkey, 'addresses')),
    newAddressesWithTrees: optional(boundedArray(addressWithTree, 'addresses')),
  }),
  async handler(ctx, p) {
    const hashes = p.hashes ?? [];
    if (p.newAddresses?.length && p.newAddressesWithTrees?.length) {
      throw RpcError.validation('Cannot provide both newAddresses and newAddressesWithTree');
    }
    const newAddresses = p.newAddressesWithTrees ?? (p.newAddresses ?? []).map((address) => ({ address, tree: AMT1 }));
    if (hashes.length === 0 && newAddresses.length === 0) {
      throw RpcError.validation('No hashes or new addresses provided for proof generation');
    }
    const prover = requireProver(ctx);
    const slot = await requireSlot(ctx);
    await checkAddressTrees(ctx, newAddresses);
    const proof = await prover.getValidityProof({ hashes, newAddresses }, 'v1');
    return withContext(readSlot(proof) ?? slot, encodeValidityProofV1(proof));
  },
});
