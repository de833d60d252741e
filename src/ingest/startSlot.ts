/**
 * Where the RPC source starts (photon.md §1.1 "network start slot"): after the store's last slot,
 * at `--start-slot`, or on an empty store at the cluster's first Light Protocol slot (mainnet-beta,
 * devnet by genesis hash) or the node's first available block.
 */
import type { Logger } from 'pino';
import { displayUrl } from '../displayUrl.ts';
import { METHOD_NOT_FOUND, type SolanaRpc, SolanaRpcError } from '../solana/rpcClient.ts';
import type { Store } from '../store/store.ts';
import { sleep } from './sleep.ts';

/**
 * Clusters with a known first Light Protocol slot, by genesis hash (photon.md §1.1 "network start
 * slot"): indexing an empty store starts there.
 */
export const NETWORK_START_SLOTS: Readonly<Record<string, { network: string; slot: number }>> = {
  '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d': { network: 'mainnet-beta', slot: 286_193_745 },
  EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG: { network: 'devnet', slot: 319_998_225 },
};

/** The node cannot serve the history an empty store needs (it has pruned the cluster's Light start slot). */
export class StartSlotUnavailable extends Error {
  override readonly name = 'StartSlotUnavailable';
}

/**
 * Resolves where polling starts and the parent-chain anchor (`indexer`: an Indexer, or anything
 * holding the store):
 * - a store with blocks: after its last slot (anchor = that slot, unless it came from transaction
 *   files, whose synthetic blocks have no blockhash and so are not on the node's chain);
 * - `startSlot` past the store's end (or on an empty store): from there, unanchored;
 * - an empty store: mainnet-beta and devnet (by genesis hash) from the slot after their network start
 *   slot (Photon: "last" = that slot, the stream starts at last+1); other clusters (a local validator)
 *   from the node's first available block.
 * On an empty store it also says where the store's history begins (`history`, kept as
 * sequence.ts `HISTORY_META`): complete at a known cluster's start slot and at a local cluster's
 * first block when that is slot 0 or 1; not complete from `startSlot` or a later first block.
 * RPC failures are retried (every 2 s, logged) until `signal` aborts.
 * @throws StartSlotUnavailable when the node's first available block is past the cluster's Light start
 *   slot (pruned history: accounts created earlier would be missing and every root wrong); the message
 *   says to use an archival node or pass `--start-slot`.
 */
export async function resolveStartSlot(
  indexer: { readonly store: Store },
  rpc: SolanaRpc,
  startSlot: number | undefined,
  opts: { signal?: AbortSignal; log?: Logger } = {},
): Promise<{ start: number; lastIndexed: number | null; history?: { start: number; complete: boolean } }> {
  const { last, fromFiles } = indexer.store.read((r) => {
    const slot = r.lastSlot();
    return { last: slot, fromFiles: slot !== null && !r.block(slot)?.blockhash };
  });
  if (startSlot !== undefined && (last === null || startSlot > last)) {
    return { start: startSlot, lastIndexed: null, ...(last === null ? { history: { start: startSlot, complete: false } } : {}) };
  }
  if (last !== null) return { start: last + 1, lastIndexed: fromFiles ? null : last };
  for (;;) {
    try {
      const genesis = await rpc.getGenesisHash(opts.signal).catch((e: unknown) => {
        // Only a node without the method counts as an unknown cluster; any other error (a 429…) is retried.
        if (e instanceof SolanaRpcError && e.code === METHOD_NOT_FOUND) return null;
        throw e;
      });
      const first = await rpc.getFirstAvailableBlock(opts.signal);
      const known = genesis ? NETWORK_START_SLOTS[genesis] : undefined;
      if (!known) {
        // An unknown cluster: its history before the node's first available block is not indexed. Said
        // aloud, so a store started late is not mistaken for a complete one (issue #31's comparison).
        if (first > 1) opts.log?.warn({ firstAvailable: first, rpc: displayUrl(rpc.url) }, `an empty store starts at the node's first available block ${first}: the cluster's Light state before it is not indexed (use an archival node, or a snapshot of a store that has it)`);
        return { start: first, lastIndexed: null, history: { start: first, complete: first <= 1 } };
      }
      // Like Photon, the network start slot counts as the last indexed one: the stream starts after it.
      if (first > known.slot + 1) {
        throw new StartSlotUnavailable(
          `${displayUrl(rpc.url)} (${known.network}) has no blocks before slot ${first}, but Light Protocol state starts after slot ${known.slot}: index from an archival node, or pass --start-slot to accept an index without the earlier history`,
        );
      }
      return { start: known.slot + 1, lastIndexed: null, history: { start: known.slot + 1, complete: true } };
    } catch (err) {
      if (err instanceof StartSlotUnavailable) throw err;
      opts.log?.warn({ err: (err as Error).message, rpc: displayUrl(rpc.url) }, 'cannot ask the Solana node where to start; retrying in 2 s');
      if (opts.signal?.aborted) throw err;
      await sleep(2000, opts.signal);
      if (opts.signal?.aborted) throw err;
    }
  }
}
