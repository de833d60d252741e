/**
 * Generator of synthetic but valid Light Protocol transactions. Legacy (noop) format on a v1 tree:
 * compress, lamport transfers, compressed-token mint and transfer, address creation, and the
 * forester's nullification and address-tree updates. With `v2Weight` > 0, also the instruction-based
 * (v2) format on a batched state tree (default bmt1, output queue oq1…): compress and transfer
 * outputs into the output queue, spends into the input queue, and the forester's BatchAppend /
 * BatchNullify events every zkp batch, whose `new_root` the generator computes on its own height-32
 * Poseidon tree; and new addresses in a batched address tree (AddressV2, default amt2…, queue = tree)
 * with the forester's BatchAddressAppend events, whose `new_root` comes from the generator's own
 * height-40 indexed tree (v2 leaf = Poseidon(value, next value), zeroeth element at leaf 0). Every
 * output hash is the real compressed-account hash, so the indexer's recomputation accepts them; every
 * tree update carries correct seqs and roots.
 *
 * The batched trees, their queues and forester batches are src/sim/batchedTrees.ts; this class draws
 * (one xorshift32 stream: the same seed gives the same transactions), keeps the v1 tree and the held
 * accounts, and wraps each event into its transaction.
 *
 * Output is Solana JSON as an RPC node returns it (getBlock with base64 transactions, or
 * getTransaction), with legacy wire transactions encoded by compactTx.ts (the bytes @solana/kit gives);
 * `nextCompact` gives the same transactions before JSON (wire bytes and raw inner instructions).
 *
 * Every tree it writes to is one `@lightprotocol/stateless.js` knows on a local URL without asking the
 * chain (its `localTestActiveStateTreeInfos`): smt1/nfq1 (v1 state), amt1/aq1 (v1 address), bmt1/oq1
 * (batched state) and amt2 (batched address). A stream on other trees makes the official client throw
 * `No associated TreeInfo found for tree or queue` (issue #33).
 */
import { createHash } from 'node:crypto';
import * as base58 from '../solana/base58.ts';
import { type CompactIx, type CompactTx, compactTxJson, encodeLegacyTransaction } from './compactTx.ts';
import {
  ACCOUNT_COMPRESSION_PROGRAM_ID,
  ADDRESS_TREE_V1,
  COMPRESSED_TOKEN_PROGRAM_ID,
  LIGHT_REGISTRY_PROGRAM_ID,
  LIGHT_SYSTEM_PROGRAM_ID,
  NOOP_PROGRAM_ID,
  REGISTERED_PROGRAM_PDA,
  SYSTEM_PROGRAM_ID,
} from '../light/constants.ts';
import { encodeIndexedMerkleTreeEvent, encodeNullifierEvent, encodePublicTransactionEvent } from './encodeEvents.ts';
import { TREE_TYPE_U64, type V2LightTransaction, encodeBatchEvent, v2InstructionGroup } from './encodeV2.ts';
import { compressedAccountHash } from '../light/hashing.ts';
import { BatchedTrees, toBigint, toBytes32 } from './batchedTrees.ts';
import { elementHashV1 } from '../merkle/indexedConstants.ts';
import type { CompressedAccount, PublicTransactionEvent } from '../types.ts';

/** Transaction kinds the generator makes. */
export type TxKind =
  | 'compress'
  | 'transfer'
  | 'tokenMint'
  | 'tokenTransfer'
  | 'createAddress'
  | 'nullify'
  | 'addressUpdate'
  | 'v2Compress'
  | 'v2Transfer'
  | 'v2CreateAddress'
  | 'batchAppend'
  | 'batchNullify'
  | 'batchAddressAppend';

/**
 * The batched state tree v2 transactions go to by default: bmt1, the first of the official client's
 * local batched trees (config/trees.json: StateV2, height 32, root history 200).
 */
export const DEFAULT_V2_TREE = 'bmt1LryLZUMmF7ZtqESaw7wifBXLfXHQYoE4GAmrahU';
/** Its output queue (oq1). */
export const DEFAULT_V2_QUEUE = 'oq1na8gojfdUhsfCpyjNt6h4JaDWtHf1yQj4koBWfto';
/** Root-history capacity of {@link DEFAULT_V2_TREE} (config/trees.json). */
export const DEFAULT_V2_ROOT_HISTORY_CAPACITY = 200;
/**
 * The batched address tree v2 new addresses go to by default: amt2, the official client's default
 * address tree (config/trees.json: AddressV2, height 40, queue = tree, root history 200).
 */
export const DEFAULT_V2_ADDRESS_TREE = 'amt2kaJA14v3urZbZvnc5v2np8jqvc4Z8zDep5wbtzx';
/**
 * The v2 weight `refract simulate` and `npm start` use by default: beside the legacy kinds' total
 * weight of 11, about one user transaction in twelve is a v2 one.
 */
export const DEFAULT_SIM_V2_WEIGHT = 1;

/** Generator options. */
export interface GeneratorOptions {
  /** Number of distinct owners (default 1000). */
  owners?: number;
  /** PRNG seed (default 1). */
  seed?: number;
  /** State tree (default smt1). */
  tree?: string;
  /** Outputs of a compress transaction (default 1); a bench uses more. */
  compressOutputs?: number;
  /** Relative weights of the user transaction kinds. */
  weights?: Partial<Record<'compress' | 'transfer' | 'tokenMint' | 'tokenTransfer' | 'createAddress', number>>;
  /**
   * Most outputs remembered for later spends (default 4096, ≈ 1 MB): past it, the owner's oldest is
   * forgotten (it stays unspent on chain). Keeps a long run's memory flat; the stream is unchanged
   * until the bound is reached.
   */
  maxHeldAccounts?: number;
  /**
   * Most addresses the generator creates (default 65,536, ≈ 10 MB of indexed-tree elements); past it,
   * `createAddress` turns into a compress. Same purpose as maxHeldAccounts.
   */
  maxAddresses?: number;
  /**
   * Relative weight of instruction-based (v2) user transactions on the batched tree, beside the legacy
   * kinds' weights (default 0: none, and the stream is exactly the legacy one of the seed). Half of
   * them spend a held v2 account when there is one (v2Transfer), the others compress (v2Compress).
   */
  v2Weight?: number;
  /** Batched state tree (base58, default {@link DEFAULT_V2_TREE}). */
  v2Tree?: string;
  /** Its output queue (base58, default {@link DEFAULT_V2_QUEUE}). */
  v2Queue?: string;
  /** Root-history capacity of the batched tree: an event's root_index is seq mod this (default 200, bmt1's). */
  v2RootHistoryCapacity?: number;
  /** Leaves (output queue) or nullifiers (input queue) per forester batch event (default 10). */
  zkpBatchSize?: number;
  /**
   * Most v2 outputs the generator makes (default 65,536; its tree takes 64 bytes per leaf); past it,
   * v2 transactions turn into legacy compresses.
   */
  maxV2Leaves?: number;
  /** Batched address tree of the v2 new addresses (base58, AddressV2, queue = tree; default {@link DEFAULT_V2_ADDRESS_TREE}). */
  v2AddressTree?: string;
  /** Its root-history capacity: a BatchAddressAppend's root_index is seq mod this (default 200, amt2's). */
  v2AddressRootHistoryCapacity?: number;
  /**
   * Most v2 addresses the generator creates (default 65,536; its indexed tree takes about 100 bytes per
   * address); past it, v2 address creations turn into v2 compresses.
   */
  maxV2Addresses?: number;
}

/**
 * What the generator remembers of an output it may spend later: only what a later transaction reads
 * (its hash, leaf, owner, lamports, token), not the account's data, so long runs hold little per account.
 */
interface Held {
  hash: Uint8Array;
  leafIndex: number;
  ownerIdx: number;
  owner: Uint8Array;
  lamports: bigint;
  hasAddress: boolean;
  token?: { mint: Uint8Array; amount: bigint };
}

/** A new output: its account (for the event) and what is held of it. */
interface Output {
  account: CompressedAccount;
  held: Held;
  seq: bigint;
}

const DISC_TOKEN = Uint8Array.from([2, 0, 0, 0, 0, 0, 0, 0]);
const TOKEN_PROGRAM = base58.decode(COMPRESSED_TOKEN_PROGRAM_ID);
const sha = (s: string) => createHash('sha256').update(s).digest();

/** A deterministic stream of valid Light transactions over one state tree and the v1 address tree. */
export class LightTxGenerator {
  private rng: number;
  private readonly tree: Uint8Array;
  private readonly treeB58: string;
  private readonly addressTree = base58.decode(ADDRESS_TREE_V1);
  private readonly owners: Uint8Array[];
  private readonly mints: Uint8Array[];
  private nextLeaf = 0;
  private treeSeq = 0n;
  private readonly held = new Map<number, Held[]>();
  /** Entries in `held` (bounded by maxHeldAccounts). */
  private heldCount = 0;
  /** Addresses created so far (bounded by maxAddresses). */
  private addressesCreated = 0;
  private readonly pendingNullify: number[] = [];
  private readonly pendingAddresses: Uint8Array[] = [];
  /** Indexed tree: sorted values with leaf index and next pointer (v1: zeroeth and top elements). */
  private readonly itree: { value: bigint; leafIndex: number; nextIndex: number; nextValue: bigint }[] = [];
  private addressSeq = 2n;
  private sigCounter = 0;
  private readonly keyMemo = new Map<string, Uint8Array>();
  /** Whether v2 transactions are generated (v2Weight > 0, until disableV2). */
  private v2Enabled: boolean;
  /** The batched state and address trees the v2 transactions and forester batches go to. */
  private readonly v2: BatchedTrees;

  constructor(private readonly opts: GeneratorOptions = {}) {
    this.rng = (opts.seed ?? 1) >>> 0 || 1;
    this.treeB58 = opts.tree ?? 'smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT';
    this.tree = base58.decode(this.treeB58);
    this.owners = Array.from({ length: opts.owners ?? 1000 }, (_, i) => sha(`refract-owner-${opts.seed ?? 1}-${i}`));
    this.mints = Array.from({ length: 4 }, (_, i) => sha(`refract-mint-${opts.seed ?? 1}-${i}`));
    const max = (1n << 248n) - 1n;
    this.itree.push({ value: 0n, leafIndex: 0, nextIndex: 1, nextValue: max }, { value: max, leafIndex: 1, nextIndex: 0, nextValue: 0n });
    const v2Weight = opts.v2Weight ?? 0;
    if (!(v2Weight >= 0) || !Number.isFinite(v2Weight)) throw new RangeError(`generator v2Weight must be a finite number ≥ 0, got ${v2Weight}`);
    const zkp = opts.zkpBatchSize ?? 10;
    if (!Number.isSafeInteger(zkp) || zkp < 1) throw new RangeError(`generator zkpBatchSize must be an integer ≥ 1, got ${zkp}`);
    const cap = opts.v2RootHistoryCapacity ?? DEFAULT_V2_ROOT_HISTORY_CAPACITY;
    if (!Number.isSafeInteger(cap) || cap < 1) throw new RangeError(`generator v2RootHistoryCapacity must be an integer ≥ 1, got ${cap}`);
    const addrCap = opts.v2AddressRootHistoryCapacity ?? 200;
    if (!Number.isSafeInteger(addrCap) || addrCap < 1) throw new RangeError(`generator v2AddressRootHistoryCapacity must be an integer ≥ 1, got ${addrCap}`);
    this.v2Enabled = v2Weight > 0;
    this.v2 = new BatchedTrees({
      owners: this.owners,
      zkp,
      rootCap: cap,
      addressRootCap: addrCap,
      maxLeaves: opts.maxV2Leaves ?? 65_536,
      maxAddresses: opts.maxV2Addresses ?? 65_536,
      maxHeld: opts.maxHeldAccounts ?? 4096,
      tree: opts.v2Tree ?? DEFAULT_V2_TREE,
      queue: opts.v2Queue ?? DEFAULT_V2_QUEUE,
      addressTree: opts.v2AddressTree ?? DEFAULT_V2_ADDRESS_TREE,
    });
  }

  /** The batched state tree of the v2 transactions (base58), its output queue, and the batched address tree. */
  get v2Tree(): { tree: string; queue: string; addressTree: string } {
    return { tree: this.v2.o.tree, queue: this.v2.o.queue, addressTree: this.v2.o.addressTree };
  }

  /**
   * Stops generating v2 transactions (e.g. replayed transactions already used the batched tree, whose
   * queues and root the generator cannot continue); the v2 weight then goes to legacy compresses.
   */
  disableV2(): void {
    this.v2Enabled = false;
  }

  /**
   * The generator's batched tree: root (32 bytes, of its reference height-32 tree after the last batch
   * event), sequence number, tree next index, and queue lengths (output queue: outputs not yet appended;
   * input queue: spends not yet nullified).
   */
  v2State(): { root: Uint8Array; seq: bigint; nextIndex: number; outputQueue: number; inputQueue: number } {
    return this.v2.state();
  }

  /**
   * The generator's batched address tree: root (32 bytes, of its height-40 indexed tree after the last
   * BatchAddressAppend), sequence number, tree next index (1 + appended addresses), and the addresses
   * still queued.
   */
  v2AddressState(): { root: Uint8Array; seq: bigint; nextIndex: number; queue: number } {
    return this.v2.addressState();
  }

  /**
   * Continues a state tree that already holds leaves (e.g. replayed transactions): the next output
   * gets leaf index `nextLeaf` and seq `lastSeq + 1`.
   */
  continueTree(nextLeaf: number, lastSeq: bigint): void {
    this.nextLeaf = Math.max(this.nextLeaf, nextLeaf);
    if (lastSeq > this.treeSeq) this.treeSeq = lastSeq;
  }

  /** The state tree this generator appends to (base58). */
  get treePubkey(): string {
    return this.treeB58;
  }

  /** Owner pubkeys (32 bytes) the generator uses, by index. */
  owner(i: number): Uint8Array {
    return this.owners[i]!;
  }

  private rand(): number {
    // xorshift32
    let x = this.rng;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.rng = x >>> 0;
    return this.rng / 4294967296;
  }
  private pick<T>(a: readonly T[]): T {
    return a[Math.floor(this.rand() * a.length)]!;
  }
  private fieldBytes(): Uint8Array {
    const b = sha(`f-${this.rand()}-${this.sigCounter}`);
    b[0] = 0;
    return b;
  }

  private output(account: CompressedAccount, ownerIdx: number, token?: Held['token']): Output {
    const leafIndex = this.nextLeaf++;
    const seq = ++this.treeSeq;
    // A copy in Node's shared Buffer pool: no ArrayBuffer of its own for each held account.
    const hash = Buffer.from(compressedAccountHash(account, this.tree, leafIndex, 'v1'));
    const held: Held = { hash, leafIndex, ownerIdx, owner: account.owner, lamports: account.lamports, hasAddress: account.address !== null, token };
    return { account, held, seq };
  }

  private takeHeld(filter: (h: Held) => boolean): Held | undefined {
    for (let tries = 0; tries < 8; tries++) {
      const ownerIdx = Math.floor(this.rand() * this.owners.length);
      const list = this.held.get(ownerIdx);
      const i = list?.findIndex(filter) ?? -1;
      if (list && i >= 0) return this.unhold(list, i);
    }
    for (const list of this.held.values()) {
      const i = list.findIndex(filter);
      if (i >= 0) return this.unhold(list, i);
    }
    return undefined;
  }

  private unhold(list: Held[], i: number): Held {
    this.heldCount--;
    return list.splice(i, 1)[0]!;
  }

  private hold(h: Held): void {
    let list = this.held.get(h.ownerIdx);
    if (!list) this.held.set(h.ownerIdx, (list = []));
    list.push(h);
    if (++this.heldCount > (this.opts.maxHeldAccounts ?? 4096)) {
      list.shift();
      this.heldCount--;
    }
  }

  private tokenAccount(ownerIdx: number, mint: Uint8Array, amount: bigint): CompressedAccount {
    const data = Buffer.alloc(75);
    data.set(mint, 0);
    data.set(this.owners[ownerIdx]!, 32);
    data.writeBigUInt64LE(amount, 64);
    return { owner: TOKEN_PROGRAM, lamports: 0n, address: null, data: { discriminator: DISC_TOKEN, data, dataHash: this.fieldBytes() } };
  }

  /** Builds the PublicTransactionEvent of a user transaction from inputs and outputs. */
  private event(inputs: Held[], outs: Output[], isCompress: boolean, lamports: bigint | null): PublicTransactionEvent {
    return {
      inputCompressedAccountHashes: inputs.map((h) => h.hash),
      outputCompressedAccountHashes: outs.map((o) => o.held.hash),
      outputCompressedAccounts: outs.map((o) => ({ compressedAccount: o.account, merkleTreeIndex: 0 })),
      outputLeafIndices: outs.map((o) => o.held.leafIndex),
      sequenceNumbers: outs.length ? [{ treePubkey: this.tree, seq: outs[0]!.seq }] : [],
      relayFee: null,
      isCompress,
      compressOrDecompressLamports: lamports,
      pubkeyArray: [this.tree],
      message: null,
      ataOwners: [],
    };
  }

  /** Next user or forester transaction of `kind` (or a weighted random kind), as getTransaction JSON at `slot`. */
  next(slot: number, kind?: TxKind): { json: Record<string, unknown>; kind: TxKind; outputs: number } {
    const t = this.nextCompact(slot, kind);
    return { json: compactTxJson(slot, t.tx), kind: t.kind, outputs: t.outputs };
  }

  /**
   * {@link next} before JSON: the same transaction (the same stream, the generator state advances the
   * same way) as wire bytes and raw inner instructions.
   */
  nextCompact(slot: number, kind?: TxKind): { tx: CompactTx; kind: TxKind; outputs: number } {
    const k = kind ?? this.chooseKind();
    switch (k) {
      case 'compress': {
        const n = this.opts.compressOutputs ?? 1;
        const outs = Array.from({ length: n }, () => {
          const ownerIdx = Math.floor(this.rand() * this.owners.length);
          return this.output({ owner: this.owners[ownerIdx]!, lamports: BigInt(1 + Math.floor(this.rand() * 1e9)), address: null, data: null }, ownerIdx);
        });
        const total = outs.reduce((s, o) => s + o.account.lamports, 0n);
        outs.forEach((o) => this.hold(o.held));
        return { tx: this.userTx(slot, this.event([], outs, true, total)), kind: k, outputs: n };
      }
      case 'transfer': {
        const input = this.takeHeld((h) => !h.token && !h.hasAddress && h.lamports > 1n);
        if (!input) return this.nextCompact(slot, 'compress');
        const to = Math.floor(this.rand() * this.owners.length);
        const amount = 1n + BigInt(Math.floor(this.rand() * Number(input.lamports - 1n)));
        const outs = [
          this.output({ owner: this.owners[to]!, lamports: amount, address: null, data: null }, to),
          this.output({ owner: input.owner, lamports: input.lamports - amount, address: null, data: null }, input.ownerIdx),
        ];
        outs.forEach((o) => this.hold(o.held));
        this.pendingNullify.push(input.leafIndex);
        return { tx: this.userTx(slot, this.event([input], outs, false, null)), kind: k, outputs: 2 };
      }
      case 'tokenMint': {
        const mint = this.pick(this.mints);
        const outs = Array.from({ length: 2 }, () => {
          const ownerIdx = Math.floor(this.rand() * this.owners.length);
          const amount = BigInt(1 + Math.floor(this.rand() * 1e6));
          return this.output(this.tokenAccount(ownerIdx, mint, amount), ownerIdx, { mint, amount });
        });
        outs.forEach((o) => this.hold(o.held));
        return { tx: this.userTx(slot, this.event([], outs, false, null)), kind: k, outputs: 2 };
      }
      case 'tokenTransfer': {
        const input = this.takeHeld((h) => !!h.token && h.token.amount > 1n);
        if (!input) return this.nextCompact(slot, 'tokenMint');
        const { mint, amount: total } = input.token!;
        const to = Math.floor(this.rand() * this.owners.length);
        const amount = 1n + BigInt(Math.floor(this.rand() * Number(total - 1n)));
        const outs = [
          this.output(this.tokenAccount(to, mint, amount), to, { mint, amount }),
          this.output(this.tokenAccount(input.ownerIdx, mint, total - amount), input.ownerIdx, { mint, amount: total - amount }),
        ];
        outs.forEach((o) => this.hold(o.held));
        this.pendingNullify.push(input.leafIndex);
        return { tx: this.userTx(slot, this.event([input], outs, false, null)), kind: k, outputs: 2 };
      }
      case 'createAddress': {
        if (this.addressesCreated >= (this.opts.maxAddresses ?? 65_536)) return this.nextCompact(slot, 'compress');
        this.addressesCreated++;
        const ownerIdx = Math.floor(this.rand() * this.owners.length);
        const address = this.fieldBytes();
        address[1] = address[1]! & 0x7f;
        const out = this.output({ owner: this.owners[ownerIdx]!, lamports: 0n, address, data: { discriminator: Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]), data: sha(`d${this.sigCounter}`), dataHash: this.fieldBytes() } }, ownerIdx);
        this.hold(out.held);
        this.pendingAddresses.push(address);
        return { tx: this.userTx(slot, this.event([], [out], false, null), ADDRESS_TREE_V1), kind: k, outputs: 1 };
      }
      case 'nullify': {
        if (!this.pendingNullify.length) return this.nextCompact(slot);
        const leaves = this.pendingNullify.splice(0, Math.min(8, this.pendingNullify.length));
        const seq = this.treeSeq + 1n;
        this.treeSeq += BigInt(leaves.length);
        const data = encodeNullifierEvent({ tree: this.tree, nullifiedLeavesIndices: leaves.map(BigInt), seq });
        return { tx: this.foresterTx(slot, data), kind: k, outputs: 0 };
      }
      case 'addressUpdate': {
        if (!this.pendingAddresses.length) return this.nextCompact(slot);
        const value = this.pendingAddresses.shift()!;
        return { tx: this.foresterTx(slot, this.addressUpdate(value), ADDRESS_TREE_V1), kind: k, outputs: 0 };
      }
      case 'v2Compress': {
        if (!this.v2Room(2)) return this.nextCompact(slot, 'compress');
        const n = 1 + Math.floor(this.rand() * 2);
        const outs = Array.from({ length: n }, () => this.v2.output(Math.floor(this.rand() * this.owners.length), BigInt(1 + Math.floor(this.rand() * 1e9))));
        const total = outs.reduce((s, o) => s + o.lamports, 0n);
        const t = this.v2.transaction(this.fieldBytes(), [], outs);
        return { tx: this.v2UserTx(slot, { ...t, isCompress: true, compressOrDecompressLamports: total }), kind: k, outputs: n };
      }
      case 'v2Transfer': {
        if (!this.v2Room(2)) return this.nextCompact(slot, 'compress');
        // A random held account: still in the output queue (proved by index) or already appended.
        const held = this.v2.held;
        const r = Math.floor(this.rand() * held.length);
        const i = held[r] && held[r].lamports > 1n ? r : held.findIndex((h) => h.lamports > 1n);
        if (i < 0) return this.nextCompact(slot, 'v2Compress');
        const input = held.splice(i, 1)[0]!;
        const to = Math.floor(this.rand() * this.owners.length);
        const amount = 1n + BigInt(Math.floor(this.rand() * Number(input.lamports - 1n)));
        const outs = [this.v2.output(to, amount), this.v2.output(input.ownerIdx, input.lamports - amount)];
        return { tx: this.v2UserTx(slot, this.v2.transaction(this.fieldBytes(), [input], outs)), kind: k, outputs: 2 };
      }
      case 'v2CreateAddress': {
        if (!this.v2Room(1) || this.v2.addrNext >= this.v2.o.maxAddresses) return this.nextCompact(slot, 'v2Compress');
        // One output in the batched state tree carrying the new address, created in the batched address tree.
        const address = this.fieldBytes();
        const seed = this.fieldBytes();
        const ownerIdx = Math.floor(this.rand() * this.owners.length);
        const out = this.v2.output(ownerIdx, 0n, address);
        const queueIndex = this.v2.queueAddress(address);
        const t = this.v2.transaction(this.fieldBytes(), [], [out]);
        const addressTree = this.v2.o.addressTree;
        t.remaining.push(addressTree);
        t.iiqAccounts.push(addressTree);
        const r = t.remaining.length - 1;
        const q = t.iiqAccounts.length - 1;
        t.newAddresses = [{ seed, address, remainingQueueIndex: r, remainingTreeIndex: r, iiqTreeIndex: q, iiqQueueIndex: q }];
        t.addressSeqs = [{ tree: this.v2.addressTreeBytes, queue: this.v2.addressTreeBytes, treeType: TREE_TYPE_U64.AddressV2, seq: BigInt(queueIndex) }];
        return { tx: this.v2UserTx(slot, t), kind: k, outputs: 1 };
      }
      case 'batchAddressAppend': {
        const event = this.v2.addressBatch();
        if (!event) return this.nextCompact(slot);
        return { tx: this.foresterTx(slot, encodeBatchEvent(event), this.v2.o.addressTree), kind: k, outputs: 0 };
      }
      case 'batchAppend':
      case 'batchNullify': {
        const event = this.v2.stateBatch(k);
        if (!event) return this.nextCompact(slot);
        return { tx: this.foresterTx(slot, encodeBatchEvent(event), this.v2.o.tree), kind: k, outputs: 0 };
      }
    }
  }

  /** True when v2 is enabled and `n` more v2 outputs stay within maxV2Leaves. */
  private v2Room(n: number): boolean {
    return this.v2Enabled && this.v2.room(n);
  }

  /** Number of accounts waiting for the forester's nullification / address insertion. */
  pending(): { nullify: number; addresses: number } {
    return { nullify: this.pendingNullify.length, addresses: this.pendingAddresses.length };
  }

  private chooseKind(): TxKind {
    // v2 checks draw from the PRNG only once v2 transactions exist: with v2Weight 0 the stream is the legacy one.
    if (this.v2.ready('batchAppend') && this.rand() < 0.5) return 'batchAppend';
    if (this.v2.ready('batchAddressAppend') && this.rand() < 0.5) return 'batchAddressAppend';
    if (this.v2.ready('batchNullify') && this.rand() < 0.5) return 'batchNullify';
    if (this.pendingNullify.length >= 8 && this.rand() < 0.5) return 'nullify';
    if (this.pendingAddresses.length > 0 && this.rand() < 0.5) return 'addressUpdate';
    const w = { compress: 3, transfer: 4, tokenMint: 1, tokenTransfer: 2, createAddress: 1, ...this.opts.weights, v2: this.opts.v2Weight ?? 0 };
    const total = Object.values(w).reduce((a, b) => a + b, 0);
    let x = this.rand() * total;
    for (const [k, v] of Object.entries(w)) {
      if ((x -= v) < 0) {
        if (k !== 'v2') return k as TxKind;
        const r = this.rand();
        if (r < 0.25) return 'v2CreateAddress';
        return this.v2.held.length > 0 && r < 0.625 ? 'v2Transfer' : 'v2Compress';
      }
    }
    return 'compress';
  }

  /** Inserts `value` into the v1 indexed tree and returns the encoded IndexedMerkleTreeEvent. */
  private addressUpdate(valueBytes: Uint8Array): Uint8Array {
    const value = toBigint(valueBytes);
    let low = this.itree[0]!;
    for (const e of this.itree) if (e.value < value && e.value >= low.value) low = e;
    const newIndex = this.itree.length;
    const high = { value, leafIndex: newIndex, nextIndex: low.nextIndex, nextValue: low.nextValue };
    low.nextIndex = newIndex;
    low.nextValue = value;
    this.itree.push(high);
    const raw = (e: typeof low) => ({ value: toBytes32(e.value), nextIndex: BigInt(e.nextIndex), nextValue: toBytes32(e.nextValue), index: BigInt(e.leafIndex) });
    const hash = (e: typeof low) => elementHashV1({ value: toBytes32(e.value), nextIndex: e.nextIndex, nextValue: toBytes32(e.nextValue) });
    const seq = this.addressSeq;
    this.addressSeq += 2n;
    return encodeIndexedMerkleTreeEvent({
      tree: this.addressTree,
      updates: [{ newLowElement: raw(low), newLowElementHash: hash(low), newHighElement: raw(high), newHighElementHash: hash(high) }],
      seq,
    });
  }

  /** The next transaction signature (64 bytes). */
  private signature(): Buffer {
    return Buffer.concat([sha(`sig-${this.opts.seed ?? 1}-${++this.sigCounter}`), sha(`sig2-${this.sigCounter}`)]);
  }

  /** The 32 bytes of a base58 account key (memoised: the generator uses a handful). */
  private keyBytes(k: string): Uint8Array {
    let b = this.keyMemo.get(k);
    if (!b) this.keyMemo.set(k, (b = base58.decode(k)));
    return b;
  }

  /**
   * A user transaction: outer LSP invoke; inner ACP (nullifier queue), SYS, ACP (append), SYS, NOOP(event).
   * Account list: payer, tree (and the v1 address tree when it creates an address: a real transaction
   * names every tree it changes, which is how a tree's own signature listing finds it), then the programs.
   */
  private userTx(slot: number, event: PublicTransactionEvent, addressTreeB58?: string): CompactTx {
    const payer = this.owners[0]!;
    const trees = [this.treeB58, ...(addressTreeB58 ? [addressTreeB58] : [])];
    const keys = [base58.encode(payer), ...trees, LIGHT_SYSTEM_PROGRAM_ID, ACCOUNT_COMPRESSION_PROGRAM_ID, SYSTEM_PROGRAM_ID, NOOP_PROGRAM_ID];
    const LSP = 1 + trees.length;
    const [ACP, SYS, NOOP] = [LSP + 1, LSP + 2, LSP + 3];
    const outer = { programAddressIndex: LSP, accountIndices: Array.from({ length: trees.length + 1 }, (_, i) => i), data: Uint8Array.from([26, 16, 169, 7, 21, 202, 242, 25, 0, 0, 0, 0]) };
    const inner = [
      { programIdIndex: ACP, accounts: [1], data: Uint8Array.from([91, 101, 183, 28, 0, 0, 0, 0]) },
      { programIdIndex: SYS, accounts: [0, 1], data: Uint8Array.from([2, 0, 0, 0, 0, 0, 0, 0]) },
      { programIdIndex: ACP, accounts: [1], data: Uint8Array.from([199, 144, 10, 82, 0, 0, 0, 0]) },
      { programIdIndex: SYS, accounts: [0, 1], data: Uint8Array.from([2, 0, 0, 0, 0, 0, 0, 0]) },
      { programIdIndex: NOOP, accounts: [], data: encodePublicTransactionEvent(event) },
    ];
    return this.wrap(slot, keys, 4, outer, inner);
  }

  /**
   * A v2 user transaction: outer light-system `invoke`; inner Solana system transfer, ACP
   * `insert_into_queues` (no noop). Account list: payer, batched tree, output queue (and the batched
   * address tree when it creates an address), then the programs and the registered-program PDA.
   */
  private v2UserTx(slot: number, t: V2LightTransaction): CompactTx {
    const trees = [this.v2.o.tree, this.v2.o.queue, ...(t.newAddresses?.length ? [this.v2.o.addressTree] : [])];
    const keys = [base58.encode(this.owners[0]!), ...trees, LIGHT_SYSTEM_PROGRAM_ID, ACCOUNT_COMPRESSION_PROGRAM_ID, SYSTEM_PROGRAM_ID, REGISTERED_PROGRAM_PDA];
    const index = (k: string) => {
      const i = keys.indexOf(k);
      if (i < 0) throw new Error(`generator: account ${k} is not in the v2 transaction's account list`);
      return i;
    };
    const g = v2InstructionGroup(t);
    const outer = { programAddressIndex: index(g.outer.programId), accountIndices: g.outer.accounts.map(index), data: Uint8Array.from(g.outer.data) };
    const inner = g.inner.map((ix) => ({ programIdIndex: index(ix.programId), accounts: ix.accounts.map(index), data: ix.data }));
    return this.wrap(slot, keys, 4, outer, inner);
  }

  /** A forester transaction: outer registry; inner ACP (nullify / update address tree / batch update) then NOOP(event). */
  private foresterTx(slot: number, eventData: Uint8Array, treeB58 = this.treeB58): CompactTx {
    const payer = this.owners[0]!;
    const keys = [base58.encode(payer), treeB58, LIGHT_REGISTRY_PROGRAM_ID, ACCOUNT_COMPRESSION_PROGRAM_ID, NOOP_PROGRAM_ID];
    const outer = { programAddressIndex: 2, accountIndices: [0, 1], data: Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]) };
    const inner = [
      { programIdIndex: 3, accounts: [1], data: Uint8Array.from([158, 91, 21, 224, 0, 0, 0, 0]) },
      { programIdIndex: 4, accounts: [], data: eventData },
    ];
    return this.wrap(slot, keys, 3, outer, inner);
  }

  /** The legacy wire transaction (one signer, `keys[0]`; recent blockhash = the slot's blockhash) and its inner instructions. */
  private wrap(slot: number, keys: string[], readonlyPrograms: number, outer: { programAddressIndex: number; accountIndices: number[]; data: Uint8Array }, inner: CompactIx[]): CompactTx {
    const wire = encodeLegacyTransaction(
      this.signature(),
      { readonlySigned: 0, readonlyUnsigned: readonlyPrograms },
      keys.map((k) => this.keyBytes(k)),
      sha(`bh-${slot}`),
      [outer],
    );
    return { wire, numKeys: keys.length, inner: inner.map((i) => ({ ...i, data: Uint8Array.from(i.data) })) };
  }

  /** A getBlock JSON result with `count` generated transactions at `slot` (parent = slot − 1). */
  block(slot: number, count: number): { json: Record<string, unknown>; outputs: number } {
    let outputs = 0;
    const txs = Array.from({ length: count }, () => {
      const t = this.next(slot);
      outputs += t.outputs;
      const { transaction, meta, version } = t.json as { transaction: unknown; meta: unknown; version: unknown };
      return { transaction, meta, version };
    });
    return {
      json: {
        blockHeight: slot,
        blockTime: 1_700_000_000 + slot,
        blockhash: base58.encode(sha(`bh-${slot}`)),
        parentSlot: Math.max(0, slot - 1),
        previousBlockhash: base58.encode(sha(`bh-${slot - 1}`)),
        transactions: txs,
        rewards: [],
      },
      outputs,
    };
  }
}
