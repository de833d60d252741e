/**
 * An in-memory `RpcDataSource`: the reference semantics of the interface (filters, ordering,
 * cursors) in plain code, used by the RPC tests and usable as an oracle for the LMDB
 * implementation. Not for production volumes (every query scans).
 *
 * Fill the public fields directly; `putAccount` / `putTransaction` are conveniences.
 */
import type { Bytes32 } from '../../src/types.ts';
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
} from '../../src/rpc/context.ts';
import { RpcError } from '../../src/rpc/errors.ts';
import { b58 } from '../../src/rpc/resultEncoding.ts';

/** Lexicographic byte comparison (memcmp order). */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const eq = (a: Uint8Array | null | undefined, b: Uint8Array | null | undefined): boolean =>
  !!a && !!b && a.length === b.length && compareBytes(a, b) === 0;

/** A stored account: the record plus spent flag and optional token data. */
export interface StoredAccount {
  account: AccountView;
  spent: boolean;
  tokenData: TokenDataRecord | null;
}

/** A stored transaction: its listing record, whether it used compression, and the hashes it touched. */
export interface StoredTransaction {
  record: SignatureRecord;
  usesCompression: boolean;
  accountHashes: Bytes32[];
}

/** In-memory data source (see module doc). */
export class MemoryDataSource implements RpcDataSource {
  /** MAX(blocks.slot), null = nothing indexed. */
  slot: bigint | null = null;
  trees: TreeInfoRecord[] = [];
  accounts = new Map<string, StoredAccount>();
  transactions: StoredTransaction[] = [];
  /** Proofs by hex hash (V1 semantics: leaves in the tree). */
  proofs = new Map<string, MerkleProofRecord>();
  /** Answer for `getNewAddressProofs` (default: throws), called once no requested address exists. */
  newAddressProofs: (items: { address: Bytes32; tree: Bytes32 }[]) => NewAddressProofRecord[] = () => {
    throw new Error('MemoryDataSource.newAddressProofs not set');
  };
  /** Addresses that are elements of an address tree, as hex(tree) + hex(address) (`putTreeAddress`). */
  treeAddresses = new Set<string>();
  /** Addresses waiting in an AddressV2 address queue, by hex address (`putQueuedAddress`). */
  queuedAddresses = new Set<string>();
  /** Answers for getTransactionWithCompressionInfo by base58 signature. */
  compressionInfo = new Map<string, TransactionCompressionInfoRecord>();

  /** Store an account (and its token data). */
  putAccount(account: AccountView, opts: { spent?: boolean; tokenData?: TokenDataRecord | null } = {}): void {
    this.accounts.set(hex(account.hash), { account, spent: opts.spent ?? false, tokenData: opts.tokenData ?? null });
  }

  /** Record `address` as an element of address tree `tree` (inserted by V1, appended by V2). */
  putTreeAddress(tree: Bytes32, address: Bytes32): void {
    this.treeAddresses.add(hex(tree) + hex(address));
  }

  /** Record `address` as waiting in an AddressV2 address queue (of any tree). */
  putQueuedAddress(address: Bytes32): void {
    this.queuedAddresses.add(hex(address));
  }

  /** Store a transaction. */
  putTransaction(tx: StoredTransaction): void {
    this.transactions.push(tx);
  }

  getIndexedSlot(): bigint | null {
    return this.slot;
  }

  getTreeInfo(pubkey: Bytes32): TreeInfoRecord | null {
    return this.trees.find((t) => eq(t.tree, pubkey)) ?? this.trees.find((t) => eq(t.queue, pubkey)) ?? null;
  }

  private unspent(): StoredAccount[] {
    return [...this.accounts.values()].filter((a) => !a.spent);
  }

  getAccountByHash(hash: Bytes32): AccountView | null {
    const a = this.accounts.get(hex(hash));
    return a && !a.spent ? a.account : null;
  }

  getAccountByAddress(address: Bytes32): AccountView | null {
    return this.unspent().find((a) => eq(a.account.address, address))?.account ?? null;
  }

  listAccountsByOwner(owner: Bytes32, page: { filters: MemcmpFilter[]; cursor: Bytes32 | null; limit: number }): AccountView[] {
    const matches = (a: AccountView) =>
      page.filters.every((f) => {
        const d = a.data?.data;
        if (!d || f.offset + f.bytes.length > d.length) return false;
        return compareBytes(d.subarray(f.offset, f.offset + f.bytes.length), f.bytes) === 0;
      });
    // The cursor is the previous page's last hash: start after that account's (leafIndex, hash)
    // position; an unknown hash falls back to Photon's `hash > cursor` filter (interface doc).
    const at = page.cursor ? this.accounts.get(hex(page.cursor))?.account : undefined;
    const after = (a: AccountView): boolean => {
      if (!page.cursor) return true;
      if (!at) return compareBytes(a.hash, page.cursor) > 0;
      return a.leafIndex > at.leafIndex || (a.leafIndex === at.leafIndex && compareBytes(a.hash, at.hash) > 0);
    };
    return this.unspent()
      .map((s) => s.account)
      .filter((a) => eq(a.owner, owner) && matches(a) && after(a))
      .sort((x, y) => x.leafIndex - y.leafIndex || compareBytes(x.hash, y.hash))
      .slice(0, page.limit);
  }

  getOwnerBalance(owner: Bytes32): bigint {
    return this.unspent()
      .filter((s) => eq(s.account.owner, owner))
      .reduce((n, s) => n + s.account.lamports, 0n);
  }

  getTokenAccountByHash(hash: Bytes32): TokenAccountRecord | null {
    const a = this.accounts.get(hex(hash));
    return a && !a.spent && a.tokenData ? { account: a.account, tokenData: a.tokenData } : null;
  }

  listTokenAccounts(
    by: { owner: Bytes32 } | { delegate: Bytes32 },
    page: { mint: Bytes32 | null; after: { mint: Bytes32; hash: Bytes32 } | null; limit: number },
  ): TokenAccountRecord[] {
    const rows = this.unspent()
      .filter((s): s is StoredAccount & { tokenData: TokenDataRecord } => s.tokenData !== null)
      .map((s) => ({ account: s.account, tokenData: s.tokenData }))
      .filter((r) => ('owner' in by ? eq(r.tokenData.owner, by.owner) : eq(r.tokenData.delegate, by.delegate)))
      .filter((r) => !page.mint || eq(r.tokenData.mint, page.mint))
      .filter((r) => {
        const a = page.after;
        if (!a) return true;
        if (page.mint) return compareBytes(r.account.hash, a.hash) > 0;
        const m = compareBytes(r.tokenData.mint, a.mint);
        return m > 0 || (m === 0 && compareBytes(r.account.hash, a.hash) > 0);
      })
      .sort((x, y) => compareBytes(x.tokenData.mint, y.tokenData.mint) || compareBytes(x.account.hash, y.account.hash));
    return rows.slice(0, page.limit);
  }

  /** Per (owner, mint) sums of unspent token amounts. */
  private balances(): { owner: Bytes32; mint: Bytes32; balance: bigint }[] {
    const m = new Map<string, { owner: Bytes32; mint: Bytes32; balance: bigint }>();
    for (const s of this.unspent()) {
      if (!s.tokenData) continue;
      const k = hex(s.tokenData.owner) + hex(s.tokenData.mint);
      const e = m.get(k) ?? { owner: s.tokenData.owner, mint: s.tokenData.mint, balance: 0n };
      e.balance += s.tokenData.amount;
      m.set(k, e);
    }
    return [...m.values()];
  }

  listTokenBalances(owner: Bytes32, page: { mint: Bytes32 | null; afterMint: Bytes32 | null; limit: number }): TokenBalanceRecord[] {
    return this.balances()
      .filter((b) => eq(b.owner, owner) && (!page.mint || eq(b.mint, page.mint)))
      .filter((b) => page.mint !== null || !page.afterMint || compareBytes(b.mint, page.afterMint) > 0)
      .sort((x, y) => compareBytes(x.mint, y.mint))
      .slice(0, page.limit)
      .map((b) => ({ mint: b.mint, balance: b.balance }));
  }

  listMintHolders(mint: Bytes32, page: { after: { balance: bigint; owner: Bytes32 } | null; limit: number }): MintHolderRecord[] {
    const a = page.after;
    return this.balances()
      .filter((b) => eq(b.mint, mint))
      .filter((b) => !a || b.balance < a.balance || (b.balance === a.balance && compareBytes(b.owner, a.owner) > 0))
      .sort((x, y) => (x.balance === y.balance ? compareBytes(x.owner, y.owner) : x.balance > y.balance ? -1 : 1))
      .slice(0, page.limit)
      .map((b) => ({ owner: b.owner, balance: b.balance }));
  }

  getMerkleProofs(hashes: Bytes32[]): (MerkleProofRecord | null)[] {
    return hashes.map((h) => this.proofs.get(hex(h)) ?? null);
  }

  getMerkleProofsV2(hashes: Bytes32[], opts: { queued: 'path' | 'empty' }): (MerkleProofRecord | null)[] {
    return hashes.map((h) => {
      const p = this.proofs.get(hex(h));
      if (p) return p;
      const a = this.accounts.get(hex(h))?.account;
      if (!a || !a.inOutputQueue) return null;
      const zero = new Uint8Array(32);
      return {
        hash: a.hash,
        leafIndex: a.leafIndex,
        treeInfo: a.treeInfo,
        proof: opts.queued === 'empty' ? [] : Array.from({ length: 32 }, () => zero),
        root: zero,
        rootSeq: 0n,
        proveByIndex: true,
      };
    });
  }

  /**
   * As LmdbDataSource: the first address (request order) in its tree or in an address queue is
   * refused with `Validation Error: Address <base58> already exists`; otherwise `newAddressProofs`.
   */
  getNewAddressProofs(items: { address: Bytes32; tree: Bytes32 }[]): NewAddressProofRecord[] {
    for (const { address, tree } of items) {
      if (this.treeAddresses.has(hex(tree) + hex(address)) || this.queuedAddresses.has(hex(address))) {
        throw RpcError.validation(`Address ${b58(address)} already exists`);
      }
    }
    return this.newAddressProofs(items);
  }

  listSignatures(
    filter: SignatureFilter,
    page: { before: { slot: bigint; signature: Uint8Array } | null; limit: number },
  ): SignatureRecord[] {
    const touches = (tx: StoredTransaction, pred: (s: StoredAccount) => boolean) =>
      tx.accountHashes.some((h) => {
        const s = this.accounts.get(hex(h));
        return s !== undefined && pred(s);
      });
    const keep = (tx: StoredTransaction): boolean => {
      switch (filter.kind) {
        case 'account':
          return tx.accountHashes.some((h) => eq(h, filter.hash));
        case 'address':
          return touches(tx, (s) => eq(s.account.address, filter.address));
        case 'owner':
          return touches(tx, (s) => eq(s.account.owner, filter.owner));
        case 'tokenOwner':
          return touches(tx, (s) => eq(s.tokenData?.owner, filter.owner));
        case 'latest':
          return !filter.compressionOnly || tx.usesCompression;
      }
    };
    const b = page.before;
    return this.transactions
      .filter(keep)
      .map((t) => t.record)
      .filter((r) => !b || r.slot < b.slot || (r.slot === b.slot && compareBytes(r.signature, b.signature) < 0))
      .sort((x, y) => (x.slot === y.slot ? compareBytes(y.signature, x.signature) : x.slot > y.slot ? -1 : 1))
      .slice(0, page.limit);
  }

  /** The stored answer (its closed accounts carry their own nullifier / txHash: null for V1 trees). */
  getTransactionWithCompressionInfo(signature: string): TransactionCompressionInfoRecord | null {
    return this.compressionInfo.get(signature) ?? null;
  }
}
