/**
 * getIndexerHealth: `"ok"`, or `Node is behind {n} slots` when the Solana RPC's slot is more than
 * `config.healthMaxSlotLag` (default 20) ahead of the indexed slot. Params are ignored.
 * Errors:
 * - the Solana RPC: unreachable, timed out or non-2xx → `Solana RPC unavailable: getSlot: <url> …`; a
 *   JSON-RPC error of the node → `Solana RPC error: getSlot: <its message>`; an answer that is not a
 *   slot number → `Solana RPC error: getSlot returned …` (all HTTP 503, code -32000; the URL has no
 *   credentials or api-key value). Photon answers these `Internal server error` (UnexpectedError);
 *   Refract says which dependency failed.
 * - the store ahead of the node's tip by more than `healthMaxSlotLag` (a node restarted from an earlier
 *   slot, another chain): `Store is ahead of the node: indexed slot X, the node's tip Y (…)` (503).
 * - nothing indexed: `Record Not Found: No data has been indexed` (404) when the node answers; when it
 *   does not, the Solana error above with `; no data has been indexed yet` appended (Photon reads the
 *   context first and would only say "No data has been indexed", hiding the node being down).
 */
import { z } from 'zod';
import { RpcError, fromSolanaError } from '../errors.ts';
import type { RpcContext } from '../context.ts';
import { defineMethod } from './lib/define.ts';

/**
 * The Solana node's slot via `ctx.getSolanaSlot`, as a bigint.
 * @throws RpcError 503 `Solana RPC unavailable: …` / `Solana RPC error: …` (module comment); an
 *   error of another type (a bug of the client) → `internal`
 */
async function solanaSlot(ctx: RpcContext): Promise<bigint> {
  let answer: unknown;
  try {
    answer = await ctx.getSolanaSlot();
  } catch (err) {
    throw fromSolanaError(err) ?? RpcError.internal(err);
  }
  if (!(typeof answer === 'bigint' || (typeof answer === 'number' && Number.isSafeInteger(answer) && answer >= 0))) {
    throw RpcError.unavailable(`Solana RPC error: getSlot returned ${(JSON.stringify(answer) ?? String(answer)).slice(0, 80)}, not a slot number`);
  }
  return BigInt(answer);
}

/** `getIndexerHealth` definition (params schema, handler); semantics in the module comment. */
export const getIndexerHealth = defineMethod({
  name: 'getIndexerHealth',
  snapshot: false, // waits on Solana / the prover: do not pin a read snapshot meanwhile
  summary: 'Indexer health: "ok", or an error when the indexer lags the validator',
  params: z.unknown().meta({ description: 'Ignored' }),
  async handler(ctx) {
    const indexed = await ctx.data.getIndexedSlot();
    let chain: bigint;
    try {
      chain = await solanaSlot(ctx);
    } catch (err) {
      // With nothing indexed, the node being down is the cause worth naming; say both.
      if (indexed === null && err instanceof RpcError && err.kind === 'unavailable') {
        throw RpcError.unavailable(`${err.detail}; no data has been indexed yet`);
      }
      throw err;
    }
    if (indexed === null) throw RpcError.notFound('No data has been indexed');
    const behind = chain - indexed;
    if (behind > BigInt(ctx.config.healthMaxSlotLag)) throw RpcError.staleSlot(behind);
    if (-behind > BigInt(ctx.config.healthMaxSlotLag)) {
      throw RpcError.unavailable(`Store is ahead of the node: indexed slot ${indexed}, the node's tip ${chain} (the node restarted from an earlier slot, or it is another chain)`);
    }
    return 'ok';
  },
});
