/**
 * What the simulator's JSON-RPC layer (simulator.ts) asks of a chain profile — the default pruned
 * window (windowChain.ts) or the sparse full history (sparseChain.ts) — and the pieces both share:
 * the JSON-RPC error, block hashes and the genesis block, transaction positions, and the
 * address → transaction index behind getSignaturesForAddress.
 */
import { createHash } from 'node:crypto';
import * as base58 from '../solana/base58.ts';
import { mix32 } from './padding.ts';
import { TypedList } from '../typedList.ts';

/** A JSON-RPC error with its code (and optional `data`), as the server sends it. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** -32004, as agave answers a slot past its tip. */
export const notAvailable = (slot: number) => new RpcError(-32004, `Block not available for slot ${slot}`);
/** -32007, as agave answers a skipped slot. */
export const skippedSlot = (slot: number) => new RpcError(-32007, `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`);

/** The 32 bytes of slot `s`'s blockhash: sha256(`bh-<s>`) (the generator's recent blockhash of its transactions at s). */
export const blockhashBytes = (slot: number): Buffer => createHash('sha256').update(`bh-${slot}`).digest();
/** Slot `s`'s blockhash, base58. */
export const blockhashOf = (slot: number): string => base58.encode(blockhashBytes(slot));

/** blockTime of the generated blocks (the generator's, 1,700,000,000 + slot). */
export const GENESIS_BLOCK_TIME = 1_700_000_000;

/** The header fields of a block (getBlock without transactions, signatures and rewards). */
export interface BlockHeader {
  slot: number;
  blockHeight: number | null;
  blockTime: number | null;
  blockhash: string;
  parentSlot: number;
  previousBlockhash: string;
}

/**
 * Block 0 of a fresh ledger: `parentSlot` 0 and `previousBlockhash` equal to its own `blockhash`
 * (agave's genesis bank), no transactions.
 */
export function genesisHeader(): BlockHeader {
  const h = blockhashOf(0);
  return { slot: 0, blockHeight: 0, blockTime: GENESIS_BLOCK_TIME, blockhash: h, parentSlot: 0, previousBlockhash: h };
}

/** A block as a chain serves it: header, then its transactions on demand (in block order). */
export interface ChainBlock extends BlockHeader {
  /** Number of transactions. */
  count: number;
  /** Each transaction's `{"transaction":…,"meta":…,"version":…}` JSON text, in block order. */
  entries(): string[];
  /** Base58 first signature of each transaction, in block order. */
  signatures(): string[];
}

/** A transaction found by signature: its block, position and getBlock entry text. */
export interface FoundTx {
  slot: number;
  blockTime: number | null;
  /** Position in its block (agave 4.x `transactionIndex`). */
  index: number;
  /** `{"transaction":…,"meta":…,"version":…}`. */
  entry: string;
}

/** One getSignaturesForAddress match before the RPC layer adds memo, blockTime and confirmation status. */
export interface SignatureMatch {
  signature: string;
  slot: number;
  err: unknown;
}

/** Positions order transactions on the chain: slot, then index in the block. Index < 2^20. */
export const POS_SCALE = 2 ** 20;
export const posOf = (slot: number, index: number) => slot * POS_SCALE + index;
export const slotOfPos = (pos: number) => Math.floor(pos / POS_SCALE);
export const indexOfPos = (pos: number) => pos % POS_SCALE;

/** A growable Float64Array (positions, offsets), ascending where `lowerBound` is used. */
export class F64List extends TypedList<Float64Array> {
  constructor(capacity = 16) {
    super((n) => new Float64Array(n), capacity);
  }
  /** The first index whose value is ≥ v (the list ascending); `length` when none. */
  lowerBound(v: number, from = 0): number {
    let lo = from;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.a[mid]! < v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/**
 * address (base58) → positions of the transactions whose account keys include it, ascending. Used
 * newest first by getSignaturesForAddress; a window drops positions below its first slot.
 */
export class AddressIndex {
  private readonly lists = new Map<string, F64List>();
  private entries = 0;

  /** Adds `pos` to `address` (positions come in ascending order; a repeat of the last one is ignored). */
  add(address: string, pos: number): void {
    let l = this.lists.get(address);
    if (!l) this.lists.set(address, (l = new F64List(4)));
    if (l.length && l.get(l.length - 1) >= pos) return;
    l.push(pos);
    this.entries++;
  }

  /** Drops every position below `pos` (a pruned window); empty lists go. */
  dropBelow(pos: number): void {
    for (const [a, l] of this.lists) {
      const n = l.lowerBound(pos);
      if (n === 0) continue;
      this.entries -= n;
      if (n === l.length) this.lists.delete(a);
      else l.dropFront(n);
    }
  }

  /** Positions p of `address` with lo < p < hi, newest first, at most `limit`. */
  range(address: string, hi: number, lo: number, limit: number): number[] {
    const l = this.lists.get(address);
    if (!l) return [];
    const out: number[] = [];
    for (let i = l.lowerBound(hi) - 1; i >= 0 && out.length < limit; i--) {
      const p = l.get(i);
      if (p <= lo) break;
      out.push(p);
    }
    return out;
  }

  /** Positions held (over all addresses) and addresses. */
  size(): { entries: number; addresses: number; bytes: number } {
    let bytes = 0;
    for (const l of this.lists.values()) bytes += l.bytes();
    return { entries: this.entries, addresses: this.lists.size, bytes };
  }
}

/** What a chain profile holds in memory (SimulatorStats). */
export interface ChainStats {
  /** Highest slot generated so far (default profile: 0 before the first getBlock). */
  generatedUpTo: number;
  /** getFirstAvailableBlock. */
  firstAvailable: number;
  /** Blocks held (default profile; the sparse profile: slots holding Light transactions). */
  keptBlocks: number;
  /** Signatures in the signature index (default profile: of the kept blocks; sparse: Light transactions). */
  indexedSignatures: number;
  /** Sparse profile: Light transactions held. */
  lightTransactions?: number;
  /** Sparse profile: bytes of the held Light transactions (packed), their indexes included. */
  lightBytes?: number;
  /** Sparse profile: milliseconds spent generating the history at start. */
  historyMs?: number;
}

/** A chain profile as the RPC layer uses it. A method may answer a Promise when it must generate first. */
export interface Chain {
  /** The newest produced slot (a block, never a skipped slot). */
  tip(): number;
  /** The oldest slot getBlock serves. */
  firstAvailable(): number;
  /** True when `slot` (≤ tip) has a block (false for a skipped slot). */
  produced(slot: number): boolean;
  /** blockHeight of the block at `slot` (a produced slot ≤ tip). */
  blockHeight(slot: number): number;
  /**
   * The block at `slot`. Throws RpcError -32004 past the tip, -32001 when pruned, -32007 when
   * skipped.
   */
  block(slot: number): ChainBlock | Promise<ChainBlock>;
  /** The transaction of a signature (64 bytes, base58 `text`), or null when unknown or pruned. */
  transaction(sig: Uint8Array, text: string): FoundTx | null;
  /** The position of a signature's transaction (for before / until), or null when unknown. */
  locate(sig: Uint8Array, text: string): number | null;
  /**
   * Transactions whose account keys include `address` at positions lo < p < hi, newest first, at most
   * `limit` (every block up to the tip made first).
   */
  signaturesFor(address: string, hi: number, lo: number, limit: number): SignatureMatch[] | Promise<SignatureMatch[]>;
  /** blockTime of the block at `slot` (held or derivable), or null. */
  blockTime(slot: number): number | null;
  /** Signatures left out of the program's listing (hideFromProgramListing), ascending position. */
  hidden(): string[];
  /** Every Light transaction held, ascending position (sparse: all; default: the kept blocks'). */
  lightTransactions(): { signature: string; slot: number; index: number }[];
  stats(): ChainStats;
  close(): void;
}

/**
 * True when a Light transaction of signature `sig` is one the fault switch leaves out of the
 * program's getSignaturesForAddress listing: one in `every` (0 = none), chosen by a hash of the seed
 * and the signature.
 */
export function hiddenFromProgramListing(seed: number, sig: Uint8Array, every: number): boolean {
  if (!every) return false;
  const w = (o: number) => (sig[o]! | (sig[o + 1]! << 8) | (sig[o + 2]! << 16) | (sig[o + 3]! << 24)) >>> 0;
  return mix32(seed, w(0), w(4), w(8), 0x41de) % every === 0;
}
