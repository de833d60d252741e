/** getCompressedAccountV2: as getCompressedAccount, with the AccountV2 shape (merkleContext, proveByIndex). */
import { encodeAccountV2, withContext } from '../resultEncoding.ts';
import { defineMethod } from './lib/define.ts';
import { accountIdParams, andThen, findAccount, indexedSlot } from './lib/shared.ts';

/** `getCompressedAccountV2` definition (params schema, handler); semantics in the module comment. */
export const getCompressedAccountV2 = defineMethod({
  name: 'getCompressedAccountV2',
  summary: 'Compressed account by address or hash (AccountV2 shape); null if not found or spent',
  params: accountIdParams,
  // Synchronous on a synchronous data source (no promise per request).
  handler: (ctx, p) =>
    andThen(indexedSlot(ctx), (slot) => andThen(findAccount(ctx, p), (acc) => withContext(slot, acc ? encodeAccountV2(acc) : null))),
});
