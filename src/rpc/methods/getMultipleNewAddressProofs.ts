/**
 * getMultipleNewAddressProofs: params is a JSON array of addresses (≤ 1000), all in the V1 address tree
 * amt1. An address already in amt1 (or in an AddressV2 address queue) → `Validation Error: Address
 * <base58> already exists` (-32000, HTTP 400).
 */
import * as base58 from '../../solana/base58.ts';
import { ADDRESS_TREE_V1 } from '../../light/constants.ts';
import { boundedArray, pubkey } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { newAddressProofs } from './lib/newAddressProofs.ts';

const AMT1 = base58.decode(ADDRESS_TREE_V1);

/** `getMultipleNewAddressProofs` definition (params schema, handler); semantics in the module comment. */
export const getMultipleNewAddressProofs = defineMethod({
  name: 'getMultipleNewAddressProofs',
  summary: 'Non-inclusion proofs for new addresses in the V1 address tree (params: array of addresses)',
  params: boundedArray(pubkey, 'addresses').meta({ description: 'Array of addresses (base58)' }),
  handler: (ctx, addresses) => newAddressProofs(ctx, addresses.map((address) => ({ address, tree: AMT1 }))),
});
