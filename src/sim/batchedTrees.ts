/**
 * The generator's batched (v2) trees (src/sim/generator.ts): the batched state tree with its output and
 * input queues, and the batched address tree with its address queue; the forester's progress through
 * them; and reference trees whose roots the batch events carry (photon.md §1.6). No randomness here:
 * the generator draws, this keeps the queues and trees consistent.
 */
import * as base58 from '../solana/base58.ts';
import { TREE_TYPE_U64, type V2LightTransaction } from './encodeV2.ts';
import { compressedAccountHash, indexedLeafHashV2, nullifierHash } from '../light/hashing.ts';
import { HIGHEST_ADDRESS_PLUS_ONE } from '../merkle/indexedConstants.ts';
import { ZERO_BYTES } from '../merkle/zeroValues.ts';
import type { BatchEvent, CompressedAccount } from '../types.ts';
import { DenseMerkleTree } from './denseMerkleTree.ts';

/** Height of the batched state tree. */
const V2_HEIGHT = 32;
/** Height of the batched address tree. */
const V2_ADDRESS_HEIGHT = 40;
const HIGHEST = toBigint(HIGHEST_ADDRESS_PLUS_ONE);

/** 32 big-endian bytes → bigint. */
export function toBigint(bytes: Uint8Array): bigint {
  return BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
}
/** bigint → 32 big-endian bytes. */
export function toBytes32(v: bigint): Buffer {
  return Buffer.from(v.toString(16).padStart(64, '0'), 'hex');
}

/** A v2 output the generator may spend later (lamport-only account, no address, no data). */
export interface HeldV2 {
  hash: Uint8Array;
  leafIndex: number;
  ownerIdx: number;
  lamports: bigint;
}

/** The batched trees' settings (checked by the generator). */
export interface BatchedTreesOptions {
  owners: readonly Uint8Array[];
  /** ZKP batch size: accounts, nullifiers or addresses per batch event. */
  zkp: number;
  /** Root-history capacities: a batch event's root_index is seq mod these. */
  rootCap: number;
  addressRootCap: number;
  /** Bounds of the reference trees (leaves; addresses). */
  maxLeaves: number;
  maxAddresses: number;
  /** Most held v2 accounts (the oldest is forgotten beyond). */
  maxHeld: number;
  tree: string;
  queue: string;
  addressTree: string;
}

/** The batched state and address trees of one generator. */
export class BatchedTrees {
  readonly treeBytes: Uint8Array;
  readonly queueBytes: Uint8Array;
  readonly addressTreeBytes: Uint8Array;
  /** Next output-queue leaf index. */
  nextLeaf = 0;
  /** Tree next index: leaves below it are appended. */
  appended = 0;
  /** Next input-queue index. */
  inputNext = 0;
  /** Input-queue entries below it are nullified in the tree. */
  nullified = 0;
  /** Batched tree sequence number (last batch event's). */
  private seq = 0n;
  /** Held outputs, oldest first. */
  readonly held: HeldV2[] = [];
  /** Account hash of each output-queue leaf, by leaf index, until its BatchAppend. */
  private readonly queuedHashes = new Map<number, Uint8Array>();
  /** Input-queue entries (leaf index, nullifier), by queue index, until their BatchNullify. */
  private readonly inputQueue = new Map<number, { leafIndex: number; nullifier: Uint8Array }>();
  /** Leaves already replaced by their nullifier (a later BatchAppend keeps the nullifier). */
  private readonly nullifiedLeaves = new Set<number>();
  private treeModel: DenseMerkleTree | null = null;
  /** Next address-queue index. */
  addrNext = 0;
  /** Address-queue entries below it are appended to the tree (tree next index = this + 1). */
  addrAppended = 0;
  /** Address tree sequence number (last BatchAddressAppend's). */
  private addrSeq = 0n;
  /** Queued addresses by queue index, until their BatchAddressAppend. */
  private readonly addrQueue = new Map<number, Uint8Array>();
  /** Elements of the indexed tree, ascending by value (the zeroeth element first), with their leaf index. */
  private readonly addrSorted: { value: bigint; leafIndex: number }[] = [{ value: 0n, leafIndex: 0 }];
  private addrModel: DenseMerkleTree | null = null;

  constructor(readonly o: BatchedTreesOptions) {
    this.treeBytes = base58.decode(o.tree);
    this.queueBytes = base58.decode(o.queue);
    this.addressTreeBytes = base58.decode(o.addressTree);
  }

  /** Whether `n` more outputs stay within the reference tree's bound. */
  room(n: number): boolean {
    return this.nextLeaf + n <= this.o.maxLeaves;
  }

  /** Whether a forester batch of each kind is ready (a full ZKP batch queued). */
  ready(kind: 'batchAppend' | 'batchNullify' | 'batchAddressAppend'): boolean {
    const queued = kind === 'batchAppend' ? this.nextLeaf - this.appended : kind === 'batchNullify' ? this.inputNext - this.nullified : this.addrNext - this.addrAppended;
    return queued >= this.o.zkp;
  }

  private model(): DenseMerkleTree {
    return (this.treeModel ??= new DenseMerkleTree(V2_HEIGHT, this.o.maxLeaves));
  }

  /** The reference height-40 indexed tree of the batched address tree, created with its zeroeth element `{0 → 2^248−1}` at leaf 0. */
  private addressModel(): DenseMerkleTree {
    if (!this.addrModel) {
      this.addrModel = new DenseMerkleTree(V2_ADDRESS_HEIGHT, this.o.maxAddresses + 1);
      this.addrModel.set(0, indexedLeafHashV2(new Uint8Array(32), HIGHEST_ADDRESS_PLUS_ONE));
    }
    return this.addrModel;
  }

  /** Root, sequence number, tree next index and queue lengths of the batched state tree. */
  state(): { root: Uint8Array; seq: bigint; nextIndex: number; outputQueue: number; inputQueue: number } {
    return { root: this.treeModel?.root() ?? Buffer.from(ZERO_BYTES[V2_HEIGHT]!), seq: this.seq, nextIndex: this.appended, outputQueue: this.nextLeaf - this.appended, inputQueue: this.inputNext - this.nullified };
  }

  /** Root, sequence number, tree next index (1 + appended addresses) and queued addresses of the batched address tree. */
  addressState(): { root: Uint8Array; seq: bigint; nextIndex: number; queue: number } {
    return { root: this.addressModel().root(), seq: this.addrSeq, nextIndex: this.addrAppended + 1, queue: this.addrNext - this.addrAppended };
  }

  /**
   * A new lamport-only output at the next output-queue leaf: queued, and held for a later spend
   * (unless it carries an `address`: such accounts are not spent by the generator).
   */
  output(ownerIdx: number, lamports: bigint, address: Uint8Array | null = null): HeldV2 & { account: CompressedAccount } {
    const account: CompressedAccount = { owner: this.o.owners[ownerIdx]!, lamports, address, data: null };
    const leafIndex = this.nextLeaf++;
    const hash = Buffer.from(compressedAccountHash(account, this.treeBytes, leafIndex, 'v2'));
    this.queuedHashes.set(leafIndex, hash);
    const held: HeldV2 = { hash, leafIndex, ownerIdx, lamports };
    if (!address) {
      this.held.push(held);
      if (this.held.length > this.o.maxHeld) this.held.shift();
    }
    return { ...held, account };
  }

  /** Queues `address` for the batched address tree; returns its queue index. */
  queueAddress(address: Uint8Array): number {
    const queueIndex = this.addrNext++;
    this.addrQueue.set(queueIndex, address);
    return queueIndex;
  }

  /**
   * The light transaction with hash `txHash` spending `inputs` (held accounts: into the input queue,
   * proved by index while still in the output queue) and creating `outs` (already at their
   * output-queue leaves). Light-system remaining accounts: [tree, output queue]; insert_into_queues
   * accounts: [output queue, tree].
   */
  transaction(txHash: Uint8Array, inputs: HeldV2[], outs: (HeldV2 & { account: CompressedAccount })[]): V2LightTransaction {
    const seqEntry = (seq: number) => ({ tree: this.treeBytes, queue: this.queueBytes, treeType: TREE_TYPE_U64.StateV2, seq: BigInt(seq) });
    const inputSeqs = inputs.length ? [seqEntry(this.inputNext)] : [];
    for (const h of inputs) this.inputQueue.set(this.inputNext++, { leafIndex: h.leafIndex, nullifier: Buffer.from(nullifierHash(h.hash, h.leafIndex, txHash)) });
    return {
      txHash,
      remaining: [this.o.tree, this.o.queue],
      inputs: inputs.map((h) => ({
        account: { owner: this.o.owners[h.ownerIdx]!, lamports: h.lamports, address: null, data: null },
        treeIndex: 0,
        queueIndex: 1,
        leafIndex: h.leafIndex,
        proveByIndex: h.leafIndex >= this.appended,
      })),
      outputs: outs.map((o) => ({ account: o.account, merkleTreeIndex: 1, hash: o.hash, leafIndex: o.leafIndex, iiqIndex: 0 })),
      iiqAccounts: [this.o.queue, this.o.tree],
      nullifiers: inputs.map((h) => ({ accountHash: h.hash, leafIndex: h.leafIndex, treeIndex: 1, queueIndex: 0, proveByIndex: h.leafIndex >= this.appended })),
      outputSeqs: outs.length ? [seqEntry(outs[0]!.leafIndex)] : [],
      inputSeqs,
    };
  }

  /**
   * A forester's batch on the state tree, or null when no full ZKP batch is queued: append the next
   * zkp queued outputs (those nullified meanwhile stay their nullifier), or nullify the next zkp
   * entries of the input queue. The event covers [oldNext, newNext) of that queue: next sequence
   * number, root of the reference tree, root_index = seq mod root-history capacity; batches of 5 zkp
   * batches, two alternating (batch_index, zkp_batch_index).
   */
  stateBatch(kind: 'batchAppend' | 'batchNullify'): BatchEvent | null {
    if (!this.ready(kind)) return null;
    const append = kind === 'batchAppend';
    const zkp = this.o.zkp;
    const old = append ? this.appended : this.nullified;
    const leaves: [number, Uint8Array][] = [];
    for (let i = old; i < old + zkp; i++) {
      if (append) {
        const hash = this.queuedHashes.get(i)!;
        this.queuedHashes.delete(i);
        if (!this.nullifiedLeaves.has(i)) leaves.push([i, hash]);
      } else {
        const e = this.inputQueue.get(i)!;
        this.inputQueue.delete(i);
        leaves.push([e.leafIndex, e.nullifier]);
        this.nullifiedLeaves.add(e.leafIndex);
      }
    }
    this.model().setMany(leaves);
    if (append) this.appended += zkp;
    else this.nullified += zkp;
    return this.event(kind, this.treeBytes, old, old, this.model().root(), ++this.seq, this.o.rootCap, append ? this.queueBytes : null);
  }

  /**
   * A forester's BatchAddressAppend of the next zkp queued addresses, or null when fewer are queued:
   * each goes into the indexed tree (its low element now points at it), the event carries the new root.
   */
  addressBatch(): BatchEvent | null {
    if (!this.ready('batchAddressAppend')) return null;
    const zkp = this.o.zkp;
    const oldNext = this.addrAppended + 1;
    const leaves: [number, Uint8Array][] = [];
    for (let q = this.addrAppended; q < this.addrAppended + zkp; q++) {
      this.addressInsert(this.addrQueue.get(q)!, q + 1, leaves);
      this.addrQueue.delete(q);
    }
    this.addressModel().setMany(leaves);
    this.addrAppended += zkp;
    return this.event('batchAddressAppend', this.addressTreeBytes, oldNext - 1, oldNext, this.addressModel().root(), ++this.addrSeq, this.o.addressRootCap, null);
  }

  /**
   * A forester's batch event of one ZKP batch: the batch starts at `queuePos` of its queue (batches of 5
   * zkp batches, two alternating: batch_index, zkp_batch_index), moves the tree's next index from
   * `oldNext` by zkp, and carries the new root, its sequence number and root_index = seq mod `rootCap`.
   */
  private event(kind: BatchEvent['kind'], tree: Uint8Array, queuePos: number, oldNext: number, newRoot: Uint8Array, seq: bigint, rootCap: number, outputQueue: Uint8Array | null): BatchEvent {
    const zkp = this.o.zkp;
    const batchSize = 5 * zkp;
    return {
      kind,
      merkleTreePubkey: tree,
      batchIndex: BigInt(Math.floor(queuePos / batchSize) % 2),
      zkpBatchIndex: BigInt(Math.floor((queuePos % batchSize) / zkp)),
      zkpBatchSize: BigInt(zkp),
      oldNextIndex: BigInt(oldNext),
      newNextIndex: BigInt(oldNext + zkp),
      newRoot,
      rootIndex: Number(seq % BigInt(rootCap)),
      sequenceNumber: seq,
      outputQueuePubkey: outputQueue,
    };
  }

  /**
   * Appends `address` at `leafIndex` of the indexed tree (photon.md §2.6 `multi_append`): its low element
   * (largest value below it) now points at it, it takes the low element's old next value; both leaves
   * get new leaf hashes (v2 leaf = Poseidon(value, next value)), pushed to `leaves` for one rehash of the batch.
   */
  private addressInsert(address: Uint8Array, leafIndex: number, leaves: [number, Uint8Array][]): void {
    const value = toBigint(address);
    const sorted = this.addrSorted;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]!.value < value) lo = mid + 1;
      else hi = mid;
    }
    if (sorted[lo]?.value === value) throw new Error(`generator: address ${base58.encode(address)} queued twice`);
    const low = sorted[lo - 1]!;
    const next = sorted[lo]?.value ?? HIGHEST;
    leaves.push([leafIndex, indexedLeafHashV2(address, toBytes32(next))], [low.leafIndex, indexedLeafHashV2(toBytes32(low.value), address)]);
    sorted.splice(lo, 0, { value, leafIndex });
  }
}
