/**
 * getValidityProof (V1 result: parallel arrays roots/rootIndices/leafIndices/leaves/merkleTrees).
 * `newAddresses` (deprecated) go to the V1 address tree amt1; `newAddressesWithTrees` name the tree.
 * Both non-empty: ValidationError; an empty list counts as absent (Photon checks `is_empty()`).
 */
import bs58 from 'bs58';
import { ADDRESS_TREE_V1 } from '../../light/constants.ts';
import { encodeValidityProofV1 } from '../resultEncoding.ts';
import { RpcError } from '../errors.ts';
import { boundedArray, optional, pubkey } from '../schemas.ts';
import { validityProofParams } from './getValidityProofV2.ts';
import { defineMethod } from './lib/define.ts';
import { proveWithContext } from './lib/validityProof.ts';

const AMT1 = bs58.decode(ADDRESS_TREE_V1);

/** `getValidityProof` definition (params schema, handler); semantics in the module comment. */
export const getValidityProof = defineMethod({
  name: 'getValidityProof',
  snapshot: false, // waits on Solana / the prover: do not pin a read snapshot meanwhile
  summary: 'Groth16 validity proof for account hashes and/or new addresses (V1 result shape)',
  params: validityProofParams.extend({ newAddresses: optional(boundedArray(pubkey, 'addresses')) }),
  async handler(ctx, p) {
    if (p.newAddresses?.length && p.newAddressesWithTrees?.length) {
      throw RpcError.validation('Cannot provide both newAddresses and newAddressesWithTree');
    }
    // Like Photon (`is_empty()`): an empty newAddressesWithTrees does not hide newAddresses.
    const newAddresses = p.newAddressesWithTrees?.length ? p.newAddressesWithTrees : (p.newAddresses ?? []).map((address) => ({ address, tree: AMT1 }));
    return proveWithContext(ctx, { hashes: p.hashes ?? [], newAddresses }, 'v1', encodeValidityProofV1, () => {
      throw RpcError.validation('No hashes or new addresses provided for proof generation');
    });
  },
});
