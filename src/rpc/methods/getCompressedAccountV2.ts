/** getCompressedAccountV2: as getCompressedAccount, with the AccountV2 shape (merkleContext, proveByIndex). */
import { encodeAccountV2, withContext } from '../encode.ts';
import { defineMethod } from './lib/define.ts';
import { accountIdParams, findAccount, requireSlot } from './lib/shared.ts';

/** `getCompressedAccountV2` definition (params schema, handler); semantics in the module comment. */
export const getCompressedAccountV2 = defineMethod({
  name: 'getCompressedAccountV2',
  summary: 'Compressed account by address or hash (AccountV2 shape); null if not found or spent',
  params: accountIdParams,
  async handler(ctx, p) {
    const slot = await requireSlot(ctx);
    const acc = await findAccount(ctx, p);
    return withContext(slot, acc ? encodeAccountV2(acc) : null);
  },
});
