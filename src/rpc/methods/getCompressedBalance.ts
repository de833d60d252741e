/** getCompressedBalance (alias getCompressedAccountBalance): lamports of the unspent account, 0 if not found. */
import { u64, withContext } from '../encode.ts';
import { defineMethod } from './lib/define.ts';
import { accountIdParams, findAccount, requireSlot } from './lib/shared.ts';

/** `getCompressedBalance` definition (params schema, handler); semantics in the module comment. */
export const getCompressedBalance = defineMethod({
  name: 'getCompressedBalance',
  aliases: ['getCompressedAccountBalance'],
  summary: 'Lamports of a compressed account by address or hash; 0 if not found',
  params: accountIdParams,
  async handler(ctx, p) {
    const slot = await requireSlot(ctx);
    const acc = await findAccount(ctx, p);
    return withContext(slot, u64(acc?.lamports ?? 0n));
  },
});
