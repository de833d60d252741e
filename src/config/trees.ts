import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import bs58 from 'bs58';
import { z } from 'zod';

/** Tree types as Light's `TreeType` u64 (StateV1=1, AddressV1=2, StateV2=3, AddressV2=4). */
export type TreeType = 'StateV1' | 'AddressV1' | 'StateV2' | 'AddressV2';

export const TREE_TYPE_CODE: Record<TreeType, number> = { StateV1: 1, AddressV1: 2, StateV2: 3, AddressV2: 4 };

/** One known Merkle tree: its queue, type, height (depth) and root-history capacity. */
export interface TreeInfo {
  /** Tree pubkey, base58. */
  tree: string;
  /** Queue pubkey (nullifier queue for state trees, address queue for address trees), base58. */
  queue: string;
  type: TreeType;
  /** Depth: 26 for v1 trees. */
  height: number;
  /** Root history capacity; root index = root seq mod this. */
  rootHistoryCapacity: number;
  /** Raw 32-byte tree pubkey. */
  treeBytes: Uint8Array;
  queueBytes: Uint8Array;
}

const treeEntrySchema = z
  .object({
    tree: z.string(),
    queue: z.string(),
    type: z.enum(['StateV1', 'AddressV1', 'StateV2', 'AddressV2']),
    height: z.number().int().min(1).max(40),
    rootHistoryCapacity: z.number().int().min(1),
  })
  .strict();

/** JSON shape of one tree entry in `config/trees.json` or a user config. */
export type TreeEntry = z.infer<typeof treeEntrySchema>;

const latin1 = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');

function pubkeyBytes(value: string, field: string): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(value);
  } catch {
    throw new Error(`tree registry: ${field} '${value}' is not base58`);
  }
  if (bytes.length !== 32) throw new Error(`tree registry: ${field} '${value}' is ${bytes.length} bytes, expected 32`);
  return bytes;
}

/**
 * The set of trees Refract indexes, looked up by tree or queue pubkey (base58).
 * An output or event for a tree that is not here is skipped (logged and counted by the caller),
 * never guessed. Source of the defaults: Light's v1 trees (photon.md §4.1).
 */
export class TreeRegistry {
  private readonly byTree = new Map<string, TreeInfo>();
  private readonly byQueue = new Map<string, TreeInfo>();
  /** Tree, then queue, pubkey bytes as latin1 strings → info (the ingest hot path looks up raw bytes). */
  private readonly byBytes = new Map<string, TreeInfo>();

  /** Builds a registry from entries; throws Error naming the entry on a bad pubkey or a duplicate tree. */
  constructor(entries: readonly TreeEntry[]) {
    for (const [i, raw] of entries.entries()) this.put(raw, `entry ${i}`);
    for (const info of this.byQueue.values()) this.byBytes.set(latin1(info.queueBytes), info);
    for (const info of this.byTree.values()) this.byBytes.set(latin1(info.treeBytes), info);
  }

  private put(raw: TreeEntry, label: string): TreeInfo {
    const parsed = treeEntrySchema.safeParse(raw);
    if (!parsed.success) throw new Error(`tree registry: ${label}: ${parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ')}`);
    const e = parsed.data;
    const info: TreeInfo = { ...e, treeBytes: pubkeyBytes(e.tree, `${label} tree`), queueBytes: pubkeyBytes(e.queue, `${label} queue`) };
    this.byTree.set(e.tree, info);
    if (e.queue !== e.tree) this.byQueue.set(e.queue, info);
    return info;
  }

  /**
   * Adds (or replaces) one tree found after start (a tree met during ingest and looked up on chain).
   * Throws Error naming the tree on a bad entry, like the constructor.
   */
  add(entry: TreeEntry): TreeInfo {
    const info = this.put(entry, `tree ${entry.tree}`);
    if (info.queue !== info.tree) this.byBytes.set(latin1(info.queueBytes), info);
    this.byBytes.set(latin1(info.treeBytes), info);
    return info;
  }

  /** Looks a tree up by its tree pubkey, then by its queue pubkey (base58); undefined when unknown. */
  get(pubkey: string): TreeInfo | undefined {
    return this.byTree.get(pubkey) ?? this.byQueue.get(pubkey);
  }

  /** Same as `get` with the raw 32-byte pubkey (no base58 encoding). */
  getBytes(pubkey: Uint8Array): TreeInfo | undefined {
    return pubkey.length === 32 ? this.byBytes.get(latin1(pubkey)) : undefined;
  }

  /**
   * The tree whose TREE pubkey is `pubkey` (raw 32 bytes); a queue pubkey is unknown here. Merkle-tree
   * events (nullifications, indexed-tree updates) name trees: Photon looks their metadata up by tree
   * pubkey only and drops events for anything else (photon.md §2.3).
   */
  getTreeBytes(pubkey: Uint8Array): TreeInfo | undefined {
    const info = this.getBytes(pubkey);
    return info && Buffer.compare(info.treeBytes, pubkey) === 0 ? info : undefined;
  }

  /** Every registered tree. */
  all(): TreeInfo[] {
    return [...this.byTree.values()];
  }
}

/** Reads `config/trees.json` (Light's known v1 trees). */
export function defaultTreeEntries(): TreeEntry[] {
  const path = fileURLToPath(new URL('../../config/trees.json', import.meta.url));
  return JSON.parse(readFileSync(path, 'utf8')) as TreeEntry[];
}

/** Registry of the default trees plus `extra` entries (extra ones override defaults with the same tree). */
export function loadTreeRegistry(extra: readonly TreeEntry[] = []): TreeRegistry {
  return new TreeRegistry([...defaultTreeEntries(), ...extra]);
}
