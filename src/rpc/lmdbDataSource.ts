/**
 * `RpcDataSource` over the LMDB store (src/store/store.ts) and the tree registry: what the JSON-RPC
 * API serves in production. Semantics are Photon's (photon.md §3.1) as documented per function in
 * src/rpc/context.ts; orderings come straight from the store's binary indexes, so every listing is
 * a bounded range scan.
 *
 * Consistency: every call reads in ONE LMDB read transaction, and `snapshot(fn)` pins one read
 * transaction for a whole request, so `context.slot` and the data agree while blocks are indexed.
 * That transaction is the store's shared snapshot of the current event-loop turn
 * (`Store.readShared`): the requests handled in one turn read the same state, and its last slot
 * and upper tree nodes are read once.
 *
 * Pagination: cursors are positions in the index order (sort key + unique tie-breaker), so paging
 * with any limit returns every item exactly once, in order, also while new blocks are indexed between
 * pages (items created or spent meanwhile may or may not show up, never twice).
 * By-owner accounts keep Photon's order (leafIndex, hash) and Photon's cursor text (the last hash),
 * but resume after the cursor account's position instead of Photon's `hash > cursor` filter, which
 * skips and repeats items (context.ts `listAccountsByOwner`).
 */
import type { TreeInfo, TreeRegistry } from '../config/trees.ts';
import { TREE_TYPE_CODE } from '../config/trees.ts';
import type { TokenData } from '../light/tokenData.ts';
import { isTokenAccount, parseTokenData } from '../light/tokenData.ts';
import { existingAddress, getNewAddressProof } from '../query/addressProofs.ts';
import { findLeafProofs, pathAndRoot } from '../query/merkleProofs.ts';
import { validationError } from '../query/errors.ts';
import { type AddressQueueSlice, type QueueElementsRequest, type QueueSize, type StateQueueSlice, article, getQueueElements, getQueueSizes } from '../query/queueElements.ts';
import { closedAccounts, parseCompressionInfo } from '../query/transactionInfo.ts';
import { type ValidityProofPaths, getValidityProofPaths } from '../query/validityProofPaths.ts';
import { SolanaRpc } from '../solana/rpcClient.ts';
import { SolanaTransactionSource } from '../solana/transactionSource.ts';
import type { AccountRecord } from '../store/records.ts';
import { ReadView, type SignatureEntry, type Store } from '../store/store.ts';
import type { Bytes32 } from '../types.ts';
import type {
  AccountView,
  MemcmpFilter,
  MerkleProofRecord,
  MintHolderRecord,
  NewAddressProofRecord,
  RpcDataSource,
  SignatureFilter,
  SignatureRecord,
  TokenAccountRecord,
  TokenBalanceRecord,
  TokenDataRecord,
  TransactionCompressionInfoRecord,
  TreeInfoRecord,
  TreeRef,
  TreeType,
  ValidityProofRecord,
  ValidityProofRequest,
} from './context.ts';
import { RpcError } from './errors.ts';
import { rawJson } from './exactJson.ts';
import { b58 } from './resultEncoding.ts';

/** Fetches a Solana `getTransaction` result (base64 encoding). */
export interface TransactionFetcher {
  /**
   * The `getTransaction` result for `signature` (`encoding: "base64"`, confirmed,
   * maxSupportedTransactionVersion 1), or null when the node does not know it. Returning the raw
   * JSON **text** of the result (a string) passes it through byte for byte (`10.0` stays `10.0`,
   * integers above 2^53 stay exact); a parsed value is re-serialised by JSON.stringify.
   */
  getTransaction(signature: string): Promise<unknown | null>;
}

/** Options of `LmdbDataSource`. */
export interface LmdbDataSourceOptions {
  /**
   * Solana RPC for getTransactionWithCompressionInfo(V2); without it those methods answer 503.
   * A `SolanaRpc` is wrapped in `SolanaTransactionSource` so the transaction JSON is passed through
   * verbatim; any other `TransactionFetcher` is used as is.
   */
  solana?: TransactionFetcher | SolanaRpc;
}

const ZERO32 = new Uint8Array(32);
const STATE_V2 = TREE_TYPE_CODE.StateV2;

function compare(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

/** Byte equality without a native call (Buffer.compare costs more than 32 JS compares). */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function matchesFilters(a: AccountRecord, filters: readonly MemcmpFilter[]): boolean {
  for (const f of filters) {
    const d = a.data?.data;
    if (!d || f.offset + f.bytes.length > d.length) return false;
    if (compare(d.subarray(f.offset, f.offset + f.bytes.length), f.bytes) !== 0) return false;
  }
  return true;
}

function tokenRecord(t: TokenData): TokenDataRecord {
  return { mint: t.mint, owner: t.owner, amount: t.amount, delegate: t.delegate, state: t.state, tlv: t.tlv };
}

/**
 * LMDB-backed data source. Construct once per store; it is stateless apart from the optional pinned
 * view of a `snapshot`. Throws QueryError `Unexpected` (→ `Internal server error`) on store records
 * that do not decode or reference trees missing from the registry.
 */
export class LmdbDataSource implements RpcDataSource {
  /** Set only on the per-request views made by `snapshot`. */
  private view: ReadView | null = null;
  private readonly solana: TransactionFetcher | undefined;

  /**
   * @param store the indexed state.
   * @param registry the trees Refract indexes (queues and types for `merkleContext`, heights, capacities).
   * @param options Solana fetcher for the transaction methods (a `SolanaRpc` is fetched from verbatim).
   */
  constructor(
    readonly store: Store,
    readonly registry: TreeRegistry,
    options: LmdbDataSourceOptions = {},
  ) {
    this.solana = options.solana instanceof SolanaRpc ? new SolanaTransactionSource(options.solana.url) : options.solana;
  }

  /** One read: on the pinned view inside a snapshot, else in its own read transaction. */
  private read<T>(fn: (r: ReadView) => T): T {
    return this.view ? fn(this.view) : this.store.read(fn);
  }

  /**
   * Runs `fn` with a view of this source pinned to one LMDB read snapshot (`Store.readShared`: the
   * snapshot of the current event-loop turn, shared with other requests of the turn; kept until the
   * promise settles when `fn` returns one). Every read through the view, context slot included, sees
   * the same state. Synchronous `fn` → synchronous result.
   */
  snapshot<T>(fn: (view: RpcDataSource) => T): T {
    if (this.view) return fn(this);
    return this.store.readShared((r) => fn(this.pinnedTo(r)));
  }

  /** The last view made by `pinnedTo`, reused while the shared snapshot is the same. */
  private lastPinned: LmdbDataSource | null = null;

  /** This source with every read on `r`. */
  private pinnedTo(r: ReadView): LmdbDataSource {
    const last = this.lastPinned;
    if (last && last.view === r) return last;
    const pinned = Object.create(this) as LmdbDataSource;
    pinned.view = r;
    this.lastPinned = pinned;
    return pinned;
  }

  // ---- conversions -------------------------------------------------------------------------

  /**
   * Registry refs by tree pubkey (latin1 image of the 32 bytes; the registry is immutable). Every
   * account and proof names its tree, so the registry lookup (a base58 encoding) is done once per tree.
   */
  private readonly refs = new Map<string, TreeRef | null>();

  /** `{tree, queue, treeType}` of a stored tree pubkey (registry; unknown trees show the tree as queue). */
  treeRef(tree: Bytes32, fallbackType: number): TreeRef {
    // Consecutive records mostly share a tree: compare with the last one found first.
    const last = this.lastRef;
    if (last && sameBytes(last.tree, tree)) return last;
    const key = Buffer.from(tree.buffer, tree.byteOffset, tree.byteLength).toString('latin1');
    let ref = this.refs.get(key);
    if (ref === undefined) {
      const info = this.registry.getBytes(tree);
      ref = info ? { tree: info.treeBytes, queue: info.queueBytes, treeType: TREE_TYPE_CODE[info.type] as TreeType } : null;
      // Bounded: only registered trees are kept (unknown ones are rare: records of trees removed from the registry).
      if (ref) this.refs.set(key, ref);
    }
    if (!ref) return { tree, queue: tree, treeType: fallbackType as TreeType };
    this.lastRef = ref;
    return ref;
  }

  /** The last registered tree `treeRef` returned. */
  private lastRef: TreeRef | null = null;

  /** A stored account as the API record (`discriminator` = the 8 bytes as u64 LE; V2 queue state from the record's v2 block). */
  private toAccount(r: ReadView | null, a: AccountRecord): AccountView {
    const d = a.data;
    return {
      hash: a.hash,
      address: a.address,
      data: d ? { discriminator: Buffer.from(d.discriminator.buffer, d.discriminator.byteOffset, 8).readBigUInt64LE(0), data: d.data, dataHash: d.dataHash } : null,
      owner: a.owner,
      lamports: a.lamports,
      leafIndex: a.leafIndex,
      seq: a.seq,
      slotCreated: BigInt(a.slotCreated),
      treeInfo: this.treeRef(a.tree, a.treeType),
      // The v2 block records it (BatchAppend clears it); older records: StateV2 without a leaf.
      inOutputQueue: a.v2 ? a.v2.inOutputQueue : r !== null && a.treeType === STATE_V2 && !r.leafByHash(a.hash),
    };
  }

  private toTokenAccount(r: ReadView, a: AccountRecord): TokenAccountRecord {
    return { account: this.toAccount(r, a), tokenData: tokenRecord(parseTokenData(a.data!.data)) };
  }

  // ---- RpcDataSource ----------------------------------------------------------------------

  /** MAX(blocks.slot) or null. */
  getIndexedSlot(): bigint | null {
    const s = this.read((r) => r.lastSlot());
    return s === null ? null : BigInt(s);
  }

  /** Registry entry whose tree or queue is `pubkey`. */
  getTreeInfo(pubkey: Bytes32): TreeInfoRecord | null {
    const info = this.registry.getBytes(pubkey);
    if (!info) return null;
    return { tree: info.treeBytes, queue: info.queueBytes, treeType: TREE_TYPE_CODE[info.type] as TreeType, height: info.height, rootHistoryCapacity: info.rootHistoryCapacity };
  }

  /** The unspent account with `hash`, or null. */
  getAccountByHash(hash: Bytes32): AccountView | null {
    return this.read((r) => {
      const a = r.account(hash);
      return a && !a.spent ? this.toAccount(r, a) : null;
    });
  }

  /** The unspent account holding `address`, or null. */
  getAccountByAddress(address: Bytes32): AccountView | null {
    return this.read((r) => {
      const a = r.accountByAddress(address);
      return a ? this.toAccount(r, a) : null;
    });
  }

  /** Unspent accounts of `owner` by (leafIndex, hash), resuming after the cursor account (see module doc). */
  listAccountsByOwner(owner: Bytes32, page: { filters: MemcmpFilter[]; cursor: Bytes32 | null; limit: number }): AccountView[] {
    if (page.limit <= 0) return [];
    return this.read((r) => {
      let after: Buffer | undefined;
      let hashFloor: Bytes32 | null = null;
      if (page.cursor) {
        const at = r.account(page.cursor);
        if (at) after = ReadView.ownerPosition(at);
        else hashFloor = page.cursor;
      }
      const out: AccountView[] = [];
      for (const a of r.accountsByOwner(owner, after)) {
        if (hashFloor && compare(a.hash, hashFloor) <= 0) continue;
        if (!matchesFilters(a, page.filters)) continue;
        out.push(this.toAccount(r, a));
        if (out.length >= page.limit) break;
      }
      return out;
    });
  }

  /** `owner_balances` lamports (0 when none). */
  getOwnerBalance(owner: Bytes32): bigint {
    return this.read((r) => r.balance(owner));
  }

  /** The unspent token account with `hash`, or null. */
  getTokenAccountByHash(hash: Bytes32): TokenAccountRecord | null {
    return this.read((r) => {
      const a = r.account(hash);
      return a && !a.spent && isTokenAccount(a) ? this.toTokenAccount(r, a) : null;
    });
  }

  /** Unspent token accounts of an owner or delegate by (mint, hash); see context.ts for the cursor. */
  listTokenAccounts(
    by: { owner: Bytes32 } | { delegate: Bytes32 },
    page: { mint: Bytes32 | null; after: { mint: Bytes32; hash: Bytes32 } | null; limit: number },
  ): TokenAccountRecord[] {
    if (page.limit <= 0) return [];
    const [kind, who] = 'owner' in by ? (['owner', by.owner] as const) : (['delegate', by.delegate] as const);
    // With a mint filter Photon compares only the hash (the cursor's mint is ignored).
    const after = page.after ? Buffer.concat([page.mint ?? page.after.mint, page.after.hash]) : undefined;
    return this.read((r) => {
      const out: TokenAccountRecord[] = [];
      for (const a of r.tokenAccountsBy(kind, who, page.mint, after)) {
        out.push(this.toTokenAccount(r, a));
        if (out.length >= page.limit) break;
      }
      return out;
    });
  }

  /** `token_owner_balances` rows of `owner` by mint (zero rows included). */
  listTokenBalances(owner: Bytes32, page: { mint: Bytes32 | null; afterMint: Bytes32 | null; limit: number }): TokenBalanceRecord[] {
    if (page.limit <= 0) return [];
    return this.read((r) => {
      if (page.mint) {
        const balance = r.tokenBalanceRow(owner, page.mint);
        return balance === undefined ? [] : [{ mint: page.mint, balance }];
      }
      const out: TokenBalanceRecord[] = [];
      for (const b of r.tokenBalances(owner, page.afterMint ?? undefined)) {
        out.push({ mint: b.mint, balance: b.balance });
        if (out.length >= page.limit) break;
      }
      return out;
    });
  }

  /**
   * Holders of `mint` by (balance DESC, owner ASC), zero balances included (Photon has no amount filter).
   * The sort key is the balance itself, so a holder whose balance changes between two page requests
   * may be skipped or seen twice; pages of an unchanged mint are exact.
   */
  listMintHolders(mint: Bytes32, page: { after: { balance: bigint; owner: Bytes32 } | null; limit: number }): MintHolderRecord[] {
    if (page.limit <= 0) return [];
    return this.read((r) => {
      const out: MintHolderRecord[] = [];
      for (const h of r.mintHolders(mint, page.after ?? undefined)) {
        out.push({ owner: h.owner, balance: h.balance });
        if (out.length >= page.limit) break;
      }
      return out;
    });
  }

  /** V1 proofs (null where a hash is not a current leaf); height of the first found leaf's tree for all. */
  getMerkleProofs(hashes: Bytes32[]): (MerkleProofRecord | null)[] {
    return this.read((r) =>
      findLeafProofs(r, this.registry, hashes).map((p) =>
        p ? { hash: p.hash, leafIndex: p.leafIndex, treeInfo: this.treeRef(p.merkleTree, 1), proof: p.proof, root: p.root, rootSeq: p.rootSeq, proveByIndex: false } : null,
      ),
    );
  }

  /**
   * V2 proofs: leaves as in V1; a StateV2 account without a leaf (still in its output queue) gets
   * `proveByIndex` and either the path of its leaf index (`queued: 'path'`) or an empty proof.
   */
  getMerkleProofsV2(hashes: Bytes32[], opts: { queued: 'path' | 'empty' }): (MerkleProofRecord | null)[] {
    return this.read((r) => {
      const leaves = findLeafProofs(r, this.registry, hashes);
      return hashes.map((h, i): MerkleProofRecord | null => {
        const p = leaves[i];
        if (p) return { hash: p.hash, leafIndex: p.leafIndex, treeInfo: this.treeRef(p.merkleTree, 1), proof: p.proof, root: p.root, rootSeq: p.rootSeq, proveByIndex: false };
        const a = r.account(h);
        const tree = a ? this.registry.getBytes(a.tree) : undefined;
        if (!a || !tree || a.treeType !== STATE_V2) return null;
        const treeInfo = this.treeRef(a.tree, a.treeType);
        if (opts.queued === 'empty') return { hash: a.hash, leafIndex: a.leafIndex, treeInfo, proof: [], root: ZERO32, rootSeq: 0n, proveByIndex: true };
        const { proof, root, rootSeq } = pathAndRoot(r, a.tree, tree.height, a.leafIndex);
        return { hash: a.hash, leafIndex: a.leafIndex, treeInfo, proof, root, rootSeq, proveByIndex: true };
      });
    });
  }

  /**
   * The registered tree whose TREE pubkey is `tree` (TreeRegistry.getTreeBytes); otherwise a validation
   * error led by `field`, naming the tree a queue pubkey belongs to.
   */
  private indexedTree(tree: Bytes32, field: string): TreeInfo {
    const info = this.registry.getTreeBytes(tree);
    if (info) return info;
    const queueOf = this.registry.getBytes(tree);
    throw validationError(`${field} ${b58(tree)} is not a tree Refract indexes${queueOf ? ` (it is the queue of tree ${queueOf.tree})` : ''}`);
  }

  /** Queue slices of batched tree `tree` (src/query/queueElements.ts); unknown trees are a validation error. */
  getQueueElements(tree: Bytes32, request: QueueElementsRequest): { stateQueue?: StateQueueSlice; addressQueue?: AddressQueueSlice } {
    const info = this.indexedTree(tree, 'tree');
    return this.read((r) => getQueueElements(r, info, request));
  }

  /** Queue sizes of every registered V2 tree, or of `trees` (each must be a registered V2 tree). */
  getQueueInfo(trees: Bytes32[] | null): QueueSize[] {
    const infos = trees
      ? trees.map((t, i) => {
          const info = this.indexedTree(t, `trees[${i}]:`);
          if (info.type !== 'StateV2' && info.type !== 'AddressV2') throw validationError(`trees[${i}]: ${info.tree} is ${article(info.type)} ${info.type} tree, which has no batched queues`);
          return info;
        })
      : this.registry.all().filter((t) => t.type === 'StateV2' || t.type === 'AddressV2');
    return this.read((r) => getQueueSizes(r, infos));
  }

  /**
   * Exclusion proofs in request order (the trees were checked by the method). An address that already
   * exists (src/query/addressProofs.ts `existingAddress`: an element of the requested address tree, V1
   * or V2, or waiting in an AddressV2 address queue) is refused before any proof, the first such one in
   * request order: `Validation Error: Address <base58> already exists` (Photon's message; Photon itself
   * checks only the queue and answers a proof no circuit accepts for an address in the tree).
   */
  getNewAddressProofs(items: { address: Bytes32; tree: Bytes32 }[]): NewAddressProofRecord[] {
    return this.read((r) => {
      for (const { address, tree } of items) {
        if (existingAddress(r, tree, address)) throw RpcError.validation(`Address ${b58(address)} already exists`);
      }
      return items.map(({ address, tree }) => {
        const info = this.registry.getBytes(tree);
        if (!info) throw RpcError.invalidPubkey('tree');
        const p = getNewAddressProof(r, info, address);
        return {
          address: p.address,
          tree: p.merkleTree,
          root: p.root,
          rootSeq: p.rootSeq,
          proof: p.proof,
          lowElementLeafIndex: p.lowElementLeafIndex,
          lowerRangeAddress: p.lowerRangeAddress,
          higherRangeAddress: p.higherRangeAddress,
          nextIndex: p.nextIndex,
        };
      });
    });
  }

  /**
   * Signatures for `filter` by (slot DESC, signature DESC), strictly older than `before`; rows whose
   * slot has no block are dropped (Photon quirk 8). `error` (the stored transaction's error) is read
   * only for the non-voting listing, the one method that shows it; it is null elsewhere.
   */
  listSignatures(filter: SignatureFilter, page: { before: { slot: bigint; signature: Uint8Array } | null; limit: number }): SignatureRecord[] {
    if (page.limit <= 0) return [];
    return this.read((r) => {
      const before = page.before ?? undefined;
      let entries: Iterable<SignatureEntry>;
      switch (filter.kind) {
        case 'account': {
          const all = r.signaturesForAccount(filter.hash).sort((x, y) => y.slot - x.slot || compare(y.signatureBytes, x.signatureBytes));
          entries = before
            ? all.filter((e) => BigInt(e.slot) < before.slot || (BigInt(e.slot) === before.slot && compare(e.signatureBytes, before.signature) < 0))
            : all;
          break;
        }
        case 'owner':
          entries = r.signatures('owner', filter.owner, before);
          break;
        case 'tokenOwner':
          entries = r.signatures('tokenOwner', filter.owner, before);
          break;
        case 'address':
          entries = r.signatures('address', filter.address, before);
          break;
        case 'latest':
          entries = r.signatures(filter.compressionOnly ? 'compression' : 'all', null, before);
          break;
      }
      // Only getLatestNonVotingSignatures shows `error` (always null in practice: failed transactions are not stored).
      const withError = filter.kind === 'latest' && !filter.compressionOnly;
      const blockTimes = new Map<number, number | null>();
      const out: SignatureRecord[] = [];
      for (const e of entries) {
        let time = blockTimes.get(e.slot);
        if (time === undefined) blockTimes.set(e.slot, (time = r.block(e.slot)?.blockTime ?? null));
        if (time === null) continue;
        const error = withError ? (r.transaction(e.signature)?.error ?? null) : null;
        out.push({ signature: e.signatureBytes, slot: BigInt(e.slot), blockTime: BigInt(time), error });
        if (out.length >= page.limit) break;
      }
      return out;
    });
  }

  /**
   * Fetches the transaction from Solana, re-parses it at its own slot (opened accounts) and reads its
   * closed accounts from the store (`Record Not Found: Account not found` when one is missing or not
   * yet spent), each with the nullifier and tx hash its batched tree's input queue holds (null for V1
   * trees, shown by V2 as 1111…1111). The fetched JSON is returned verbatim. Null when Solana does not
   * know the signature; `Service unavailable` (503) when no Solana RPC is configured. The node failing throws the Solana
   * client's errors, which the API answers 503 `Solana RPC unavailable: getTransaction: <url> …` or
   * `Solana RPC error: getTransaction: …` (src/rpc/errors.ts `fromSolanaError`).
   */
  async getTransactionWithCompressionInfo(signature: string): Promise<TransactionCompressionInfoRecord | null> {
    const solana = this.solana;
    if (!solana) throw RpcError.unavailable('getTransactionWithCompressionInfo needs a Solana RPC; none is configured');
    const fetched = await solana.getTransaction(signature);
    if (fetched === null || fetched === undefined) return null;
    const text = typeof fetched === 'string' ? fetched : null;
    const json: unknown = text === null ? fetched : JSON.parse(text);
    if (json === null) return null;
    const parsed = parseCompressionInfo(json, this.registry);
    return this.read((r) => ({
      transaction: text === null ? json : rawJson(text),
      closedAccounts: closedAccounts(r, parsed.inputs).map((c) => ({
        account: this.toAccount(r, c.account),
        tokenData: c.token ? tokenRecord(c.token) : null,
        nullifier: c.nullifier,
        txHash: c.txHash,
      })),
      openedAccounts: parsed.opened.map((o) => ({ account: this.toAccount(null, o.account), tokenData: o.token ? tokenRecord(o.token) : null })),
    }));
  }

  // ---- validity proofs (for the prover wiring) ---------------------------------------------

  /**
   * Everything a validity proof needs from the store (src/query/validityProofPaths.ts: paths, roots,
   * root indices, prove-by-index accounts) together with the context slot, from ONE read transaction.
   * Throws QueryError with Photon's messages (missing / spent hashes, tree metadata, heights).
   */
  validityProofPaths(request: ValidityProofRequest, mode: 'v1' | 'v2'): { slot: bigint | null; paths: ValidityProofPaths } {
    return this.read((r) => {
      const s = r.lastSlot();
      return { slot: s === null ? null : BigInt(s), paths: getValidityProofPaths(r, this.registry, request, mode) };
    });
  }

  /**
   * The API record of a validity proof from the store's paths and the prover's compressed proof (null when
   * nothing went to the prover). Prove-by-index accounts get root 0^32 (`1111…1111`) and rootIndex 0.
   */
  validityProofRecord(paths: ValidityProofPaths, compressedProof: ValidityProofRecord['compressedProof']): ValidityProofRecord {
    return {
      compressedProof,
      accounts: paths.accounts.map((a) => ({
        hash: a.hash,
        root: a.proof ? a.proof.root : ZERO32,
        rootIndex: a.rootIndex,
        proveByIndex: a.proveByIndex,
        leafIndex: a.leafIndex,
        treeInfo: this.treeRef(a.tree.treeBytes, TREE_TYPE_CODE[a.tree.type]),
      })),
      addresses: paths.addresses.map((a) => ({
        address: a.proof.address,
        root: a.proof.root,
        rootIndex: a.rootIndex,
        lowElementLeafIndex: a.proof.lowElementLeafIndex,
        treeInfo: this.treeRef(a.tree.treeBytes, TREE_TYPE_CODE[a.tree.type]),
      })),
    };
  }
}
