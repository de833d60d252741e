/**
 * getIndexerHealth: `"ok"`, or `Node is behind {n} slots` when the Solana RPC's slot is more than
 * `config.healthMaxSlotLag` (default 20) ahead of the indexed slot. Params are ignored.
 * Errors, in Photon's order: nothing indexed (`Record Not Found: No data has been indexed`), then the
 * Solana RPC: unreachable, timed out or non-2xx → `Solana RPC unavailable: getSlot: <url> …`; a JSON-RPC
 * error of the node → `Solana RPC error: getSlot: <its message>`; an answer that is not a slot number
 * → `Solana RPC error: getSlot returned …` (all HTTP 503, code -32000; the URL has no credentials or
 * api-key value). Photon answers these as `Internal server error`; Refract says which dependency failed.
 */
import { z } from 'zod';
import { RpcError, fromSolanaError } from '../errors.ts';
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
    let answer: unknown;
    try {
      answer = await ctx.getSolanaSlot();
    } catch (err) {
      throw fromSolanaError(err) ?? RpcError.internal(err);
    }
    if (!(typeof answer === 'bigint' || (typeof answer === 'number' && Number.isSafeInteger(answer) && answer >= 0))) {
      throw RpcError.unavailable(`Solana RPC error: getSlot returned ${(JSON.stringify(answer) ?? String(answer)).slice(0, 80)}, not a slot number`);
    }
    const chain = BigInt(answer);
    const behind = chain - indexed;
    if (behind > BigInt(ctx.config.healthMaxSlotLag)) throw RpcError.staleSlot(behind);
    return 'ok';
  },
});
