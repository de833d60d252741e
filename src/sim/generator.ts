/**
 * Generator of synthetic but valid Light Protocol v1 (legacy noop format) transactions: compress,
 * lamport transfers, compressed-token mint and transfer, address creation, and the forester's
 * nullification and address-tree updates. Every output hash is the real compressed-account hash,
 * so the indexer's recomputation accepts them; every tree update carries correct seqs.
 *
 * Output is Solana JSON as an RPC node returns it (getBlock with base64 transactions, or
 * getTransaction), with wire transactions encoded by @solana/kit.
 */
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import {
  type Address,
  getCompiledTransactionMessageEncoder,
  getTransactionEncoder,
} from '@solana/kit';
import {
  ACCOUNT_COMPRESSION_PROGRAM_ID,
  ADDRESS_TREE_V1,
  COMPRESSED_TOKEN_PROGRAM_ID,
  LIGHT_REGISTRY_PROGRAM_ID,
  LIGHT_SYSTEM_PROGRAM_ID,
  NOOP_PROGRAM_ID,
  SYSTEM_PROGRAM_ID,
} from '../light/constants.ts';
import { encodeIndexedMerkleTreeEvent, encodeNullifierEvent, encodePublicTransactionEvent } from '../light/encodeEvents.ts';
import { compressedAccountHash } from '../light/hashing.ts';
import { elementHashV1 } from '../merkle/indexedConstants.ts';
import type { CompressedAccount, PublicTransactionEvent } from '../types.ts';

/** Transaction kinds the generator makes. */
export type TxKind = 'compress' | 'transfer' | 'tokenMint' | 'tokenTransfer' | 'createAddress' | 'nullify' | 'addressUpdate';

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
const TOKEN_PROGRAM = bs58.decode(COMPRESSED_TOKEN_PROGRAM_ID);
const sha = (s: string) => createHash('sha256').update(s).digest();

/** A deterministic stream of valid Light transactions over one state tree and the v1 address tree. */
export class LightTxGenerator {
  private rng: number;
  private readonly tree: Uint8Array;
  private readonly treeB58: string;
  private readonly addressTree = bs58.decode(ADDRESS_TREE_V1);
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
  private readonly txEncoder = getTransactionEncoder();
  private readonly msgEncoder = getCompiledTransactionMessageEncoder();

  constructor(private readonly opts: GeneratorOptions = {}) {
    this.rng = (opts.seed ?? 1) >>> 0 || 1;
    this.treeB58 = opts.tree ?? 'smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT';
    this.tree = bs58.decode(this.treeB58);
    this.owners = Array.from({ length: opts.owners ?? 1000 }, (_, i) => sha(`refract-owner-${opts.seed ?? 1}-${i}`));
    this.mints = Array.from({ length: 4 }, (_, i) => sha(`refract-mint-${opts.seed ?? 1}-${i}`));
    const max = (1n << 248n) - 1n;
    this.itree.push({ value: 0n, leafIndex: 0, nextIndex: 1, nextValue: max }, { value: max, leafIndex: 1, nextIndex: 0, nextValue: 0n });
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
        return { json: this.userTx(slot, this.event([], outs, true, total)), kind: k, outputs: n };
      }
      case 'transfer': {
        const input = this.takeHeld((h) => !h.token && !h.hasAddress && h.lamports > 1n);
        if (!input) return this.next(slot, 'compress');
        const to = Math.floor(this.rand() * this.owners.length);
        const amount = 1n + BigInt(Math.floor(this.rand() * Number(input.lamports - 1n)));
        const outs = [
          this.output({ owner: this.owners[to]!, lamports: amount, address: null, data: null }, to),
          this.output({ owner: input.owner, lamports: input.lamports - amount, address: null, data: null }, input.ownerIdx),
        ];
        outs.forEach((o) => this.hold(o.held));
        this.pendingNullify.push(input.leafIndex);
        return { json: this.userTx(slot, this.event([input], outs, false, null)), kind: k, outputs: 2 };
      }
      case 'tokenMint': {
        const mint = this.pick(this.mints);
        const outs = Array.from({ length: 2 }, () => {
          const ownerIdx = Math.floor(this.rand() * this.owners.length);
          const amount = BigInt(1 + Math.floor(this.rand() * 1e6));
          return this.output(this.tokenAccount(ownerIdx, mint, amount), ownerIdx, { mint, amount });
        });
        outs.forEach((o) => this.hold(o.held));
        return { json: this.userTx(slot, this.event([], outs, false, null)), kind: k, outputs: 2 };
      }
      case 'tokenTransfer': {
        const input = this.takeHeld((h) => !!h.token && h.token.amount > 1n);
        if (!input) return this.next(slot, 'tokenMint');
        const { mint, amount: total } = input.token!;
        const to = Math.floor(this.rand() * this.owners.length);
        const amount = 1n + BigInt(Math.floor(this.rand() * Number(total - 1n)));
        const outs = [
          this.output(this.tokenAccount(to, mint, amount), to, { mint, amount }),
          this.output(this.tokenAccount(input.ownerIdx, mint, total - amount), input.ownerIdx, { mint, amount: total - amount }),
        ];
        outs.forEach((o) => this.hold(o.held));
        this.pendingNullify.push(input.leafIndex);
        return { json: this.userTx(slot, this.event([input], outs, false, null)), kind: k, outputs: 2 };
      }
      case 'createAddress': {
        if (this.addressesCreated >= (this.opts.maxAddresses ?? 65_536)) return this.next(slot, 'compress');
        this.addressesCreated++;
        const ownerIdx = Math.floor(this.rand() * this.owners.length);
        const address = this.fieldBytes();
        address[1] = address[1]! & 0x7f;
        const out = this.output({ owner: this.owners[ownerIdx]!, lamports: 0n, address, data: { discriminator: Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]), data: sha(`d${this.sigCounter}`), dataHash: this.fieldBytes() } }, ownerIdx);
        this.hold(out.held);
        this.pendingAddresses.push(address);
        return { json: this.userTx(slot, this.event([], [out], false, null)), kind: k, outputs: 1 };
      }
      case 'nullify': {
        if (!this.pendingNullify.length) return this.next(slot);
        const leaves = this.pendingNullify.splice(0, Math.min(8, this.pendingNullify.length));
        const seq = this.treeSeq + 1n;
        this.treeSeq += BigInt(leaves.length);
        const data = encodeNullifierEvent({ tree: this.tree, nullifiedLeavesIndices: leaves.map(BigInt), seq });
        return { json: this.foresterTx(slot, data), kind: k, outputs: 0 };
      }
      case 'addressUpdate': {
        if (!this.pendingAddresses.length) return this.next(slot);
        const value = this.pendingAddresses.shift()!;
        return { json: this.foresterTx(slot, this.addressUpdate(value)), kind: k, outputs: 0 };
      }
    }
  }

  /** Number of accounts waiting for the forester's nullification / address insertion. */
  pending(): { nullify: number; addresses: number } {
    return { nullify: this.pendingNullify.length, addresses: this.pendingAddresses.length };
  }

  private chooseKind(): TxKind {
    if (this.pendingNullify.length >= 8 && this.rand() < 0.5) return 'nullify';
    if (this.pendingAddresses.length > 0 && this.rand() < 0.5) return 'addressUpdate';
    const w = { compress: 3, transfer: 4, tokenMint: 1, tokenTransfer: 2, createAddress: 1, ...this.opts.weights };
    const total = Object.values(w).reduce((a, b) => a + b, 0);
    let x = this.rand() * total;
    for (const [k, v] of Object.entries(w)) {
      if ((x -= v) < 0) return k as TxKind;
    }
    return 'compress';
  }

  /** Inserts `value` into the v1 indexed tree and returns the encoded IndexedMerkleTreeEvent. */
  private addressUpdate(valueBytes: Uint8Array): Uint8Array {
    const value = BigInt(`0x${Buffer.from(valueBytes).toString('hex')}`);
    let low = this.itree[0]!;
    for (const e of this.itree) if (e.value < value && e.value >= low.value) low = e;
    const newIndex = this.itree.length;
    const high = { value, leafIndex: newIndex, nextIndex: low.nextIndex, nextValue: low.nextValue };
    low.nextIndex = newIndex;
    low.nextValue = value;
    this.itree.push(high);
    const b32 = (v: bigint) => Buffer.from(v.toString(16).padStart(64, '0'), 'hex');
    const raw = (e: typeof low) => ({ value: b32(e.value), nextIndex: BigInt(e.nextIndex), nextValue: b32(e.nextValue), index: BigInt(e.leafIndex) });
    const hash = (e: typeof low) => elementHashV1({ value: b32(e.value), nextIndex: e.nextIndex, nextValue: b32(e.nextValue) });
    const seq = this.addressSeq;
    this.addressSeq += 2n;
    return encodeIndexedMerkleTreeEvent({
      tree: this.addressTree,
      updates: [{ newLowElement: raw(low), newLowElementHash: hash(low), newHighElement: raw(high), newHighElementHash: hash(high) }],
      seq,
    });
  }

  private signature(): string {
    return bs58.encode(Buffer.concat([sha(`sig-${this.opts.seed ?? 1}-${++this.sigCounter}`), sha(`sig2-${this.sigCounter}`)]));
  }

  /**
   * A user transaction: outer LSP invoke; inner ACP (nullifier queue), SYS, ACP (append), SYS, NOOP(event).
   * Account list: payer, tree, then the programs.
   */
  private userTx(slot: number, event: PublicTransactionEvent): Record<string, unknown> {
    const payer = this.owners[0]!;
    const keys = [bs58.encode(payer), this.treeB58, LIGHT_SYSTEM_PROGRAM_ID, ACCOUNT_COMPRESSION_PROGRAM_ID, SYSTEM_PROGRAM_ID, NOOP_PROGRAM_ID];
    const [LSP, ACP, SYS, NOOP] = [2, 3, 4, 5];
    const outer = { programAddressIndex: LSP, accountIndices: [0, 1], data: Uint8Array.from([26, 16, 169, 7, 21, 202, 242, 25, 0, 0, 0, 0]) };
    const inner = [
      { programIdIndex: ACP, accounts: [1], data: bs58.encode(Uint8Array.from([91, 101, 183, 28, 0, 0, 0, 0])) },
      { programIdIndex: SYS, accounts: [0, 1], data: bs58.encode(Uint8Array.from([2, 0, 0, 0, 0, 0, 0, 0])) },
      { programIdIndex: ACP, accounts: [1], data: bs58.encode(Uint8Array.from([199, 144, 10, 82, 0, 0, 0, 0])) },
      { programIdIndex: SYS, accounts: [0, 1], data: bs58.encode(Uint8Array.from([2, 0, 0, 0, 0, 0, 0, 0])) },
      { programIdIndex: NOOP, accounts: [], data: bs58.encode(encodePublicTransactionEvent(event)) },
    ];
    return this.wrap(slot, keys, 4, outer, inner);
  }

  /** A forester transaction: outer registry; inner ACP (nullify / update address tree) then NOOP(event). */
  private foresterTx(slot: number, eventData: Uint8Array): Record<string, unknown> {
    const payer = this.owners[0]!;
    const keys = [bs58.encode(payer), this.treeB58, LIGHT_REGISTRY_PROGRAM_ID, ACCOUNT_COMPRESSION_PROGRAM_ID, NOOP_PROGRAM_ID];
    const outer = { programAddressIndex: 2, accountIndices: [0, 1], data: Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]) };
    const inner = [
      { programIdIndex: 3, accounts: [1], data: bs58.encode(Uint8Array.from([158, 91, 21, 224, 0, 0, 0, 0])) },
      { programIdIndex: 4, accounts: [], data: bs58.encode(eventData) },
    ];
    return this.wrap(slot, keys, 3, outer, inner);
  }

  private wrap(
    slot: number,
    keys: string[],
    readonlyPrograms: number,
    outer: { programAddressIndex: number; accountIndices: number[]; data: Uint8Array },
    inner: { programIdIndex: number; accounts: number[]; data: string }[],
  ): Record<string, unknown> {
    const signature = this.signature();
    const messageBytes = this.msgEncoder.encode({
      version: 'legacy',
      header: { numSignerAccounts: 1, numReadonlySignerAccounts: 0, numReadonlyNonSignerAccounts: readonlyPrograms },
      staticAccounts: keys as Address[],
      lifetimeToken: bs58.encode(sha(`bh-${slot}`)),
      instructions: [outer],
    } as never);
    const wire = this.txEncoder.encode({ messageBytes, signatures: { [keys[0]!]: bs58.decode(signature) } } as never);
    return {
      slot,
      blockTime: 1_700_000_000 + slot,
      version: 'legacy',
      transaction: [Buffer.from(wire).toString('base64'), 'base64'],
      meta: {
        err: null,
        status: { Ok: null },
        fee: 5000,
        preBalances: keys.map(() => 0),
        postBalances: keys.map(() => 0),
        innerInstructions: [{ index: 0, instructions: inner.map((i) => ({ ...i, stackHeight: 2 })) }],
        logMessages: [],
        preTokenBalances: [],
        postTokenBalances: [],
        rewards: [],
        loadedAddresses: { writable: [], readonly: [] },
        computeUnitsConsumed: 100_000,
      },
    };
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
        blockhash: bs58.encode(sha(`bh-${slot}`)),
        parentSlot: Math.max(0, slot - 1),
        previousBlockhash: bs58.encode(sha(`bh-${slot - 1}`)),
        transactions: txs,
        rewards: [],
      },
      outputs,
    };
  }
}
