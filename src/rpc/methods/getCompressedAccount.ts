/** getCompressedAccount: the unspent account by address or hash (address wins); value null when not found or spent. */
import { accountJson, withContextJson } from '../resultEncoding.ts';
import { defineMethod } from './lib/define.ts';
import { accountIdParams, andThen, findAccount, indexedSlot } from './lib/shared.ts';

/** `getCompressedAccount` definition (params schema, handler); semantics in the module comment. */
export const getCompressedAccount = defineMethod({
  name: 'getCompressedAccount',
  summary: 'Compressed account by address or hash (V1 Account shape); null if not found or spent',
  params: accountIdParams,
  // Synchronous on a synchronous data source (no promise per request); the result is written
  // straight to JSON text (same bytes as `withContext(slot, encodeAccount(acc))`).
  handler: (ctx, p) =>
    andThen(indexedSlot(ctx), (slot) => andThen(findAccount(ctx, p), (acc) => withContextJson(slot, acc ? accountJson(acc) : 'null'))),
});
