/** getCompressedBalance (alias getCompressedAccountBalance): lamports of the unspent account, 0 if not found. */
import { u64, withContext } from '../resultEncoding.ts';
import { defineMethod } from './lib/define.ts';
import { accountIdParams, andThen, findAccount, indexedSlot } from './lib/shared.ts';

/** `getCompressedBalance` definition (params schema, handler); semantics in the module comment. */
export const getCompressedBalance = defineMethod({
  name: 'getCompressedBalance',
  aliases: ['getCompressedAccountBalance'],
  summary: 'Lamports of a compressed account by address or hash; 0 if not found',
  params: accountIdParams,
  handler: (ctx, p) =>
    andThen(indexedSlot(ctx), (slot) => andThen(findAccount(ctx, p), (acc) => withContext(slot, u64(acc?.lamports ?? 0n)))),
});
