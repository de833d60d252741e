/**
 * getIndexerHealth: `"ok"`, or `Node is behind {n} slots` when the Solana RPC's slot is more than
 * `config.healthMaxSlotLag` (default 20) ahead of the indexed slot. Params are ignored.
 * A failing Solana RPC gives `Internal server error` (Photon: UnexpectedError).
 */
import { z } from 'zod';
import { RpcError } from '../errors.ts';
import { defineMethod } from './lib/define.ts';
import { requireSlot } from './lib/shared.ts';

/** `getIndexerHealth` definition (params schema, handler); semantics in the module comment. */
export const getIndexerHealth = defineMethod({
  name: 'getIndexerHealth',
  snapshot: false, // waits on Solana / the prover: do not pin a read snapshot meanwhile
  summary: 'Indexer health: "ok", or an error when the indexer lags the validator',
  params: z.unknown().meta({ description: 'Ignored' }),
  async handler(ctx) {
    const indexed = await requireSlot(ctx);
    let chain: bigint;
    try {
      chain = BigInt(await ctx.getSolanaSlot());
    } catch (err) {
      throw RpcError.internal(err);
    }
    const behind = chain - indexed;
    if (behind > BigInt(ctx.config.healthMaxSlotLag)) throw RpcError.staleSlot(behind);
    return 'ok';
  },
});
