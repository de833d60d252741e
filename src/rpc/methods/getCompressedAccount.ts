/** getCompressedAccount: the unspent account by address or hash (address wins); value null when not found or spent. */
import { encodeAccount, withContext } from '../encode.ts';
import { defineMethod } from './lib/define.ts';
import { accountIdParams, findAccount, requireSlot } from './lib/shared.ts';

/** `getCompressedAccount` definition (params schema, handler); semantics in the module comment. */
export const getCompressedAccount = defineMethod({
  name: 'getCompressedAccount',
  summary: 'Compressed account by address or hash (V1 Account shape); null if not found or spent',
  params: accountIdParams,
  async handler(ctx, p) {
    const slot = await requireSlot(ctx);
    const acc = await findAccount(ctx, p);
    return withContext(slot, acc ? encodeAccount(acc) : null);
  },
});
