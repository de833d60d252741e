/**
 * getValidityProofV2: accounts and addresses with their merkleContext; output-queue accounts are
 * proved by index. An empty request answers `{compressedProof: null, accounts: [], addresses: []}`
 * with context slot 0 without touching the store (Photon quirk).
 */
import { z } from 'zod';
import { encodeValidityProofV2, withContext } from '../resultEncoding.ts';
import { boundedArray, hash, optional } from '../schemas.ts';
import { addressWithTree } from './getMultipleNewAddressProofsV2.ts';
import { defineMethod } from './lib/define.ts';
import { proveWithContext } from './lib/validityProof.ts';

/** `{hashes?, newAddressesWithTrees?}` (unknown keys rejected); getValidityProof adds the deprecated `newAddresses`. */
export const validityProofParams = z.strictObject({
  hashes: optional(boundedArray(hash, 'hashes')),
  newAddressesWithTrees: optional(boundedArray(addressWithTree, 'addresses')),
});

/** The answer to a request with neither hashes nor new addresses: no proof, context slot 0, store untouched (Photon quirk). */
const emptyProof = () => withContext(0n, { compressedProof: null, accounts: [], addresses: [] });

/** `getValidityProofV2` definition (params schema, handler); semantics in the module comment. */
export const getValidityProofV2 = defineMethod({
  name: 'getValidityProofV2',
  snapshot: false, // waits on Solana / the prover: do not pin a read snapshot meanwhile
  summary: 'Validity proof for account hashes and/or new addresses (V2 result shape)',
  params: validityProofParams,
  handler: (ctx, p) => proveWithContext(ctx, { hashes: p.hashes ?? [], newAddresses: p.newAddressesWithTrees ?? [] }, 'v2', encodeValidityProofV2, emptyProof),
});
