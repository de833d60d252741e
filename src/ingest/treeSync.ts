/**
 * Trees from the chain (photon.md §1.1 "tree-metadata sync"): at `refract start`, one
 * `getProgramAccounts` on the account-compression program, each account decoded
 * (src/light/treeAccounts.ts), the expected owner's trees kept and merged over `config/trees.json`
 * + config `trees` (the chain wins; each difference is logged once). During ingest, a tree the
 * registry does not know is looked up with `getAccountInfo` before its outputs are skipped
 * (`TreeResolver`, with a negative cache).
 */
import type { Logger } from 'pino';
import { type TreeEntry, TreeRegistry, loadTreeRegistry } from '../config/trees.ts';
import { ACCOUNT_COMPRESSION_PROGRAM_ID, DEFAULT_TREE_OWNER } from '../light/constants.ts';
import { type DecodedTree, TREE_ACCOUNT_HEADER_BYTES, TreeAccountError, decodeTreeAccount } from '../light/treeAccounts.ts';
import type { SolanaRpc } from '../solana/rpcClient.ts';

/** How long `TreeResolver` remembers that a pubkey is not a usable tree (default 10 minutes). */
export const DEFAULT_NEGATIVE_TTL_MS = 10 * 60_000;

const HEADER_SLICE = { offset: 0, length: TREE_ACCOUNT_HEADER_BYTES };

/** The registry entry of a decoded tree. */
export function treeEntryOf(t: DecodedTree): TreeEntry {
  return { tree: t.tree, queue: t.queue, type: t.type, height: t.height, rootHistoryCapacity: t.rootHistoryCapacity };
}

/** What one `getProgramAccounts` on the account-compression program held. */
export interface ChainTrees {
  /** Trees of the expected owner. */
  trees: DecodedTree[];
  /** Trees of other owners (dropped), base58 tree → owner. */
  otherOwners: Map<string, string>;
  /** Queue accounts seen (v1 nullifier / address, v2 output queues). */
  queues: number;
  /** Accounts of other kinds (registered programs, group authorities…): not trees. */
  otherAccounts: number;
  /** Tree or queue accounts that did not decode: pubkey → reason. */
  invalid: Map<string, string>;
}

/**
 * Fetches every account of the account-compression program (only the first
 * TREE_ACCOUNT_HEADER_BYTES of each: v1 trees are megabytes) and decodes them.
 * @param owner keep trees whose AccessMetadata.owner is this (base58)
 * @throws what SolanaRpc.getProgramAccounts throws (SolanaRpcError when the node refuses the
 *   method, SolanaUnavailableError when it cannot be reached), and Error when the answer is not an array
 */
export async function fetchChainTrees(rpc: SolanaRpc, owner: string, signal?: AbortSignal): Promise<ChainTrees> {
  const accounts = await rpc.getProgramAccounts(ACCOUNT_COMPRESSION_PROGRAM_ID, { dataSlice: HEADER_SLICE, signal });
  if (!Array.isArray(accounts)) throw new Error(`getProgramAccounts: expected an array of accounts, got ${typeof accounts}`);
  const out: ChainTrees = { trees: [], otherOwners: new Map(), queues: 0, otherAccounts: 0, invalid: new Map() };
  for (const a of accounts) {
    try {
      // The program id asked for is the owner; a node that filters nothing would still be caught by decodeTreeAccount.
      const d = decodeTreeAccount({ pubkey: a.pubkey, data: a.account.data[0], owner: a.account.owner });
      if (d.kind === 'queue') out.queues++;
      else if (d.owner === owner) out.trees.push(d);
      else out.otherOwners.set(d.tree, d.owner);
    } catch (err) {
      if (err instanceof TreeAccountError && (err.reason === 'unknown-discriminator' || err.reason === 'not-acp')) out.otherAccounts++;
      else out.invalid.set(String(a?.pubkey), (err as Error).message);
    }
  }
  return out;
}

/**
 * Merges chain trees over the configured ones (`config/trees.json` + config `trees`): a tree on
 * both takes the chain's queue, type, height and capacity. Logs each difference once (warn) and
 * the configured trees the chain did not show (info: they are kept).
 * @returns the entries to add over `config/trees.json` (what `loadTreeRegistry` and the ingest
 *   threads take as `trees`): the config's, then the chain's
 */
export function mergeChainTrees(configured: readonly TreeEntry[], chain: readonly TreeEntry[], log?: Logger): TreeEntry[] {
  const base = loadTreeRegistry(configured);
  const onChain = new Set(chain.map((t) => t.tree));
  for (const c of chain) {
    const known = base.get(c.tree);
    if (!known) continue;
    const fields = (['queue', 'type', 'height', 'rootHistoryCapacity'] as const).filter((k) => known[k] !== c[k]);
    if (fields.length) {
      log?.warn(
        { tree: c.tree, config: Object.fromEntries(fields.map((k) => [k, known[k]])), chain: Object.fromEntries(fields.map((k) => [k, c[k]])) },
        `tree ${c.tree}: chain and config differ in ${fields.join(', ')}; using the chain's`,
      );
    }
  }
  const missing = base.all().filter((t) => !onChain.has(t.tree)).map((t) => t.tree);
  if (missing.length) log?.info({ trees: missing }, 'configured trees not found on chain for the expected owner: kept as configured');
  return [...configured, ...chain];
}

/** Settings of the tree sync. */
export interface TreeSyncOptions {
  /** Keep trees of this AccessMetadata.owner (base58; default DEFAULT_TREE_OWNER). */
  owner?: string;
  log?: Logger;
  signal?: AbortSignal;
}

/** The tree registry `refract start` uses, and where it came from. */
export interface SyncedTrees {
  registry: TreeRegistry;
  /** Entries over `config/trees.json` (pass as `trees` to the ingest / prepare threads). */
  trees: TreeEntry[];
  /** `chain`: synced and merged; `config`: no sync asked, the node refused or failed, or it had none of the owner's trees. */
  source: 'chain' | 'config';
  /** Trees of the expected owner found on chain (0 with source `config`). */
  chainTrees: number;
}

/**
 * Builds the registry from the chain merged over the config (see module doc); `rpc` null = the
 * config alone (no ingest, or `treeSync: false`). A node that does not answer getProgramAccounts
 * (refused, unreachable, a bad answer) → a warning naming the error and the config's trees alone;
 * never throws for that. Throws only for an invalid configured entry (as `loadTreeRegistry`).
 */
export async function syncTreeRegistry(rpc: SolanaRpc | null, configured: readonly TreeEntry[], opts: TreeSyncOptions = {}): Promise<SyncedTrees> {
  const owner = opts.owner ?? DEFAULT_TREE_OWNER;
  const log = opts.log;
  if (!rpc) return { registry: loadTreeRegistry(configured), trees: [...configured], source: 'config', chainTrees: 0 };
  let chain: ChainTrees;
  try {
    chain = await fetchChainTrees(rpc, owner, opts.signal);
  } catch (err) {
    log?.warn({ err: (err as Error).message, rpc: rpc.url }, 'tree sync: the node did not answer getProgramAccounts on the account-compression program; using config/trees.json and config trees only');
    return { registry: loadTreeRegistry(configured), trees: [...configured], source: 'config', chainTrees: 0 };
  }
  for (const [pubkey, reason] of chain.invalid) log?.warn({ account: pubkey, reason }, 'tree sync: a tree/queue account did not decode; skipped');
  if (chain.otherOwners.size) log?.info({ owner, others: Object.fromEntries(chain.otherOwners) }, `tree sync: ${chain.otherOwners.size} trees of other owners skipped`);
  const entries = chain.trees.map(treeEntryOf);
  if (!entries.length) log?.warn({ owner, rpc: rpc.url }, 'tree sync: no trees of the expected owner on chain; using config/trees.json and config trees only');
  const trees = mergeChainTrees(configured, entries, log);
  log?.info({ trees: entries.length, queues: chain.queues, owner }, 'tree sync: trees loaded from the chain');
  return { registry: loadTreeRegistry(trees), trees, source: entries.length ? 'chain' : 'config', chainTrees: entries.length };
}

/** Settings of the unknown-tree lookup during ingest (plain data: crosses to ingest threads). */
export interface TreeLookupOptions {
  /** Accept trees of this owner (base58). */
  owner: string;
  /** Remember a miss this long, ms (default DEFAULT_NEGATIVE_TTL_MS). */
  negativeTtlMs?: number;
}

/**
 * Looks up trees the registry does not know with `getAccountInfo` (a queue pubkey leads to its
 * tree), adds the expected owner's to the registry, and remembers misses (not an account, not a
 * tree, another owner, an RPC error) for `negativeTtlMs` so a stream of outputs of an unknown tree
 * costs one request per TTL.
 */
export class TreeResolver {
  private readonly misses = new Map<string, number>();
  private readonly ttl: number;

  constructor(
    private readonly rpc: SolanaRpc,
    readonly registry: TreeRegistry,
    private readonly opts: TreeLookupOptions & { log?: Logger; now?: () => number },
  ) {
    this.ttl = opts.negativeTtlMs ?? DEFAULT_NEGATIVE_TTL_MS;
  }

  /**
   * Resolves each unknown `pubkey` (base58 tree or queue); known ones and cached misses cost nothing.
   * @returns the entries added to the registry (empty when none was found). Never throws for RPC or
   *   decode failures: they are logged (warn) and cached as misses.
   */
  async resolve(pubkeys: Iterable<string>, signal?: AbortSignal): Promise<TreeEntry[]> {
    const added: TreeEntry[] = [];
    const now = this.opts.now ?? Date.now;
    for (const pubkey of new Set(pubkeys)) {
      if (this.registry.get(pubkey)) continue;
      const until = this.misses.get(pubkey);
      if (until !== undefined && until > now()) continue;
      this.misses.delete(pubkey);
      const found = await this.lookup(pubkey, signal);
      if (typeof found === 'string') {
        this.misses.set(pubkey, now() + this.ttl);
        this.opts.log?.warn({ pubkey, reason: found, retryInMs: this.ttl }, 'unknown tree: not a usable tree on chain; its outputs are skipped');
        continue;
      }
      this.registry.add(found);
      added.push(found);
      this.opts.log?.info({ ...found, via: pubkey }, 'unknown tree found on chain: added to the tree registry');
    }
    return added;
  }

  /** The tree entry for `pubkey`, or why there is none. */
  private async lookup(pubkey: string, signal?: AbortSignal): Promise<TreeEntry | string> {
    try {
      const first = await this.decode(pubkey, signal);
      if (typeof first === 'string') return first;
      let tree = first;
      if (first.kind === 'queue') {
        const t = await this.decode(first.tree, signal);
        if (typeof t === 'string') return `queue of ${first.tree}: ${t}`;
        if (t.kind !== 'tree') return `queue of ${first.tree}, which is a queue account, not a tree`;
        if (t.queue !== pubkey) return `queue of ${first.tree}, whose queue is ${t.queue}`;
        tree = t;
      }
      if (tree.kind !== 'tree') return 'not a tree';
      if (tree.owner !== this.opts.owner) return `tree of owner ${tree.owner}, not the expected ${this.opts.owner}`;
      return treeEntryOf(tree);
    } catch (err) {
      return `getAccountInfo failed: ${(err as Error).message}`;
    }
  }

  private async decode(pubkey: string, signal?: AbortSignal) {
    const acc = await this.rpc.getAccountInfo(pubkey, { dataSlice: HEADER_SLICE, signal });
    if (!acc) return `no account ${pubkey}`;
    try {
      return decodeTreeAccount({ pubkey, data: acc.data[0], owner: acc.owner });
    } catch (err) {
      return (err as Error).message;
    }
  }
}
