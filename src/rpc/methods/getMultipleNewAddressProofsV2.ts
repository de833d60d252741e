/**
 * getMultipleNewAddressProofsV2: params is a JSON array of `{address, tree}` (≤ 1000). An address already
 * in its tree (V1 inserted, V2 appended by a BatchAddressAppend) or still in an AddressV2 address queue
 * → `Validation Error: Address <base58> already exists` (-32000, HTTP 400).
 */
import { z } from 'zod';
import { boundedArray, pubkey } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { newAddressProofs } from './lib/newAddressProofs.ts';

/** `{address, tree}` (Photon `AddressWithTree`, unknown keys rejected). */
export const addressWithTree = z.strictObject({ address: pubkey, tree: pubkey });

/** `getMultipleNewAddressProofsV2` definition (params schema, handler); semantics in the module comment. */
export const getMultipleNewAddressProofsV2 = defineMethod({
  name: 'getMultipleNewAddressProofsV2',
  summary: 'Non-inclusion proofs for new addresses in given address trees (params: array of {address, tree})',
  params: boundedArray(addressWithTree, 'addresses').meta({ description: 'Array of {address, tree}' }),
  handler: (ctx, items) => newAddressProofs(ctx, items),
});
