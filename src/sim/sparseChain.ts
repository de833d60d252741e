/**
 * The simulator's sparse, mainnet-like profile: the whole history (slots 0 … `historySlots`) is
 * there at start, and the chain then grows one slot per `slotMs`.
 *
 * - About one slot in `lightEvery` holds Light transactions (1 … `lightMaxPerSlot` of them, both
 *   formats, forester events included), the slot choice a hash of the seed and the slot. They are
 *   made by the generator in slot order (its state depends on order) — the whole history at start,
 *   then each new slot as the clock reaches it — and kept packed (wire bytes and raw inner
 *   instructions, ≈0.8 KB each), with a signature index and an address → position index.
 * - Every block also holds `paddingTxs` non-Light transactions (votes, transfers, token transfers;
 *   padding.ts), derived from (seed, slot, index) when asked, never stored; the Light ones sit at
 *   positions among them derived from the seed.
 * - About one slot in `skipEvery` is skipped (getBlock -32007), never slot 0 nor `historySlots`.
 *
 * Memory grows with the number of Light transactions, not of slots; the same seed gives the same
 * chain whatever is asked in whatever order.
 */
import type { Logger } from 'pino';
import * as base58 from '../solana/base58.ts';
import { ACCOUNT_COMPRESSION_PROGRAM_ID } from '../light/constants.ts';
import { LightTxGenerator, type GeneratorOptions } from './generator.ts';
import { compactTxEntryText, packCompact, staticAccountKeys, unpackCompact } from './compactTx.ts';
import { PaddingSource, mix32 } from './padding.ts';
import { AddressIndex, type BlockHeader, type Chain, type ChainBlock, type FoundTx, F64List, GENESIS_BLOCK_TIME, blockhashBytes, blockhashOf, genesisHeader, hiddenFromProgramListing, indexOfPos, notAvailable, posOf, skippedSlot, slotOfPos } from './chain.ts';

/** Slots of history the sparse profile starts with by default. */
export const DEFAULT_HISTORY_SLOTS = 2_000_000;
/** About one slot in this many holds Light transactions, by default. */
export const DEFAULT_LIGHT_EVERY = 50;
/** Most Light transactions in one slot by default (each Light slot holds 1 … this many). */
export const DEFAULT_LIGHT_PER_SLOT = 4;
/** Padding (non-Light) transactions per block by default: ≈1.1 MB of getBlock JSON (base64, full), ≈10–15 ms to make. */
export const DEFAULT_PADDING_TXS = 1000;
/** About one slot in this many is skipped by default (0 = none). */
export const DEFAULT_SKIP_EVERY = 20;
/** Most padding transactions a block may hold (their index is 16 bits in the signature). */
export const MAX_PADDING_TXS = 60_000;

/** Options of the sparse profile. */
export interface SparseChainOptions {
  slotMs: number;
  seed: number;
  owners: number;
  v2Weight: number;
  generatorBounds?: Pick<GeneratorOptions, 'maxHeldAccounts' | 'maxAddresses' | 'v2Tree' | 'v2Queue' | 'v2RootHistoryCapacity' | 'v2AddressTree'>;
  historySlots: number;
  lightEvery: number;
  lightMaxPerSlot: number;
  paddingTxs: number;
  skipEvery: number;
  hideFromProgramListing: number;
  log?: Logger;
}

/** Bytes of one arena chunk of packed Light transactions. */
const CHUNK = 4 << 20;
/** Slots per checkpoint of the skipped-slot count (blockHeight). */
const SKIP_CP = 4096;

/** The sparse profile's chain (see the file comment); generates the history before it returns. */
export function sparseChain(opts: SparseChainOptions): Chain {
  const { seed, historySlots, lightEvery, lightMaxPerSlot, skipEvery } = opts;
  const P = opts.paddingTxs;
  const gen = new LightTxGenerator({ owners: opts.owners, seed, v2Weight: opts.v2Weight, ...opts.generatorBounds });
  const padding = new PaddingSource(seed);

  // Packed Light transactions (compactTx.ts packCompact) in an arena of chunks, by id (generation order).
  const chunks: Buffer[] = [];
  let used = CHUNK; // bytes used in the last chunk
  const recOff = new F64List(1024); // chunk * CHUNK + offset
  const recLen = new F64List(1024);
  const recPos = new F64List(1024); // position (slot, index in block), ascending with the id
  const lightSlots = new F64List(256);
  const lightFirst = new F64List(256); // first id of each Light slot
  const sigIndex = new Map<number, number>(); // first 6 signature bytes → id
  const sigOverflow = new Map<string, number>(); // ids whose 6-byte prefix was taken
  const hiddenIds: number[] = [];
  const addresses = new AddressIndex();
  let generatedTo = 0;

  const isSkipped = (s: number) => skipEvery > 0 && s >= 1 && s !== historySlots && mix32(seed, s, 0x5c1d) % skipEvery === 0;
  const lightCount = (s: number) => (s >= 1 && !isSkipped(s) && mix32(seed, s, 0x11a7) % lightEvery === 0 ? 1 + (mix32(seed, s, 0xc0) % lightMaxPerSlot) : 0);
  /** Block positions of the k Light transactions of slot s among the P padding ones (ascending). */
  const lightPositions = (s: number, k: number): number[] => {
    const u = Array.from({ length: k }, (_, j) => mix32(seed, s, 0x905, j)).sort((a, b) => a - b);
    return u.map((x, j) => j + Math.floor((x / 4294967296) * (P + 1)));
  };

  const record = (id: number): Buffer => {
    const off = recOff.get(id);
    const c = chunks[Math.floor(off / CHUNK)]!;
    const o = off % CHUNK;
    return c.subarray(o, o + recLen.get(id));
  };
  /** The first signature of Light transaction `id`: after the u16 wire length and the shortvec 1. */
  const sigOf = (id: number): Buffer => record(id).subarray(3, 67);
  const prefix = (sig: Uint8Array) => sig[0]! + sig[1]! * 2 ** 8 + sig[2]! * 2 ** 16 + sig[3]! * 2 ** 24 + sig[4]! * 2 ** 32 + sig[5]! * 2 ** 40;
  const append = (b: Buffer): number => {
    if (used + b.length > CHUNK) {
      chunks.push(Buffer.allocUnsafeSlow(CHUNK));
      used = 0;
    }
    const off = (chunks.length - 1) * CHUNK + used;
    b.copy(chunks[chunks.length - 1]!, used);
    used += b.length;
    return off;
  };

  /** Generates and indexes slot s's Light transactions (slots strictly in order). */
  const generateSlot = (s: number) => {
    const k = lightCount(s);
    if (!k) return;
    const positions = lightPositions(s, k);
    lightSlots.push(s);
    lightFirst.push(recOff.length);
    for (let j = 0; j < k; j++) {
      const { tx } = gen.nextCompact(s);
      const packed = packCompact(tx);
      const id = recOff.length;
      recOff.push(append(packed));
      recLen.push(packed.length);
      const pos = posOf(s, positions[j]!);
      recPos.push(pos);
      const sig = packed.subarray(3, 67);
      const p = prefix(sig);
      if (sigIndex.has(p)) sigOverflow.set(base58.encode(sig), id);
      else sigIndex.set(p, id);
      const hide = hiddenFromProgramListing(seed, sig, opts.hideFromProgramListing);
      if (hide) hiddenIds.push(id);
      for (const key of staticAccountKeys(tx.wire)) if (!(hide && key === ACCOUNT_COMPRESSION_PROGRAM_ID)) addresses.add(key, pos);
    }
  };
  const extendTo = (slot: number) => {
    for (let s = generatedTo + 1; s <= slot; s++) generateSlot(s);
    if (slot > generatedTo) generatedTo = slot;
  };

  // The history, before the clock starts.
  const t0 = performance.now();
  let lastLog = t0;
  for (let s = 1; s <= historySlots; s++) {
    generateSlot(s);
    if (opts.log && (s & 0xffff) === 0 && performance.now() - lastLog > 5000) {
      lastLog = performance.now();
      opts.log.info({ slot: s, historySlots, lightTransactions: recOff.length }, 'simulator: generating the history');
    }
  }
  generatedTo = historySlots;
  const historyMs = Math.round(performance.now() - t0);
  const started = Date.now();
  const clockSlot = () => historySlots + Math.floor((Date.now() - started) / opts.slotMs);
  const tip = () => {
    const c = clockSlot();
    extendTo(c);
    let t = c;
    while (isSkipped(t)) t--;
    return t;
  };

  /** skipCum[k]: skipped slots in [1, k·SKIP_CP]. */
  const skipCum = [0];
  const skippedUpTo = (s: number) => {
    const k = Math.floor(s / SKIP_CP);
    while (skipCum.length <= k) {
      const from = (skipCum.length - 1) * SKIP_CP + 1;
      let n = skipCum[skipCum.length - 1]!;
      for (let t = from; t < from + SKIP_CP; t++) if (isSkipped(t)) n++;
      skipCum.push(n);
    }
    let n = skipCum[k]!;
    for (let t = k * SKIP_CP + 1; t <= s; t++) if (isSkipped(t)) n++;
    return n;
  };
  const parentOf = (s: number) => {
    let t = s - 1;
    while (t > 0 && isSkipped(t)) t--;
    return Math.max(0, t);
  };
  const blockTime = (s: number) => GENESIS_BLOCK_TIME + Math.floor((s * 2) / 5);
  const header = (s: number): BlockHeader => {
    if (s === 0) return genesisHeader();
    const parent = parentOf(s);
    return { slot: s, blockHeight: s - skippedUpTo(s), blockTime: blockTime(s), blockhash: blockhashOf(s), parentSlot: parent, previousBlockhash: blockhashOf(parent) };
  };
  /** [first id, count] of slot s's Light transactions (count 0 when none). */
  const lightIdsAt = (s: number): [number, number] => {
    const i = lightSlots.lowerBound(s);
    if (i >= lightSlots.length || lightSlots.get(i) !== s) return [0, 0];
    const first = lightFirst.get(i);
    const end = i + 1 < lightFirst.length ? lightFirst.get(i + 1) : recOff.length;
    return [first, end - first];
  };
  /** Block index of padding transaction j of slot s (the Light ones take their positions first). */
  const paddingIndex = (s: number, j: number) => {
    const [first, n] = lightIdsAt(s);
    let i = j;
    for (let m = 0; m < n; m++) if (indexOfPos(recPos.get(first + m)) <= i) i++;
    return i;
  };
  /** Each transaction of block s in order: a Light id, or the padding index as -1 − j. */
  const layout = (s: number): number[] => {
    if (s === 0) return [];
    const [first, n] = lightIdsAt(s);
    const out: number[] = [];
    let m = 0;
    let j = 0;
    for (let i = 0; i < P + n; i++) {
      if (m < n && indexOfPos(recPos.get(first + m)) === i) out.push(first + m++);
      else out.push(-1 - j++);
    }
    return out;
  };
  const findLight = (sig: Uint8Array, text: string): number | null => {
    const id = sigIndex.get(prefix(sig));
    if (id !== undefined && sigOf(id).equals(sig)) return id;
    return sigOverflow.get(text) ?? null;
  };
  /** A padding signature's slot and block index, when it is one of a produced block ≤ the tip. */
  const findPadding = (sig: Uint8Array): { slot: number; j: number; index: number } | null => {
    const at = padding.locate(sig);
    if (!at || at.slot < 1 || at.index >= P || isSkipped(at.slot) || at.slot > tip()) return null;
    return { slot: at.slot, j: at.index, index: paddingIndex(at.slot, at.index) };
  };

  return {
    tip,
    firstAvailable: () => 0,
    produced: (slot) => !isSkipped(slot),
    blockHeight: (slot) => (slot === 0 ? 0 : slot - skippedUpTo(slot)),
    block(slot): ChainBlock {
      if (slot > tip()) throw notAvailable(slot);
      if (isSkipped(slot)) throw skippedSlot(slot);
      const h = header(slot);
      const order = layout(slot);
      const bh = slot === 0 ? null : blockhashBytes(h.parentSlot);
      return {
        ...h,
        count: order.length,
        entries: () => order.map((x) => (x >= 0 ? compactTxEntryText(unpackCompact(record(x))) : padding.tx(slot, -1 - x, bh!).entry)),
        signatures: () => order.map((x) => base58.encode(x >= 0 ? sigOf(x) : padding.signature(slot, -1 - x))),
      };
    },
    transaction(sig, text): FoundTx | null {
      const id = findLight(sig, text);
      if (id !== null) {
        const pos = recPos.get(id);
        const slot = slotOfPos(pos);
        return { slot, blockTime: blockTime(slot), index: indexOfPos(pos), entry: compactTxEntryText(unpackCompact(record(id))) };
      }
      const p = findPadding(sig);
      if (!p) return null;
      return { slot: p.slot, blockTime: blockTime(p.slot), index: p.index, entry: padding.tx(p.slot, p.j, blockhashBytes(parentOf(p.slot))).entry };
    },
    locate(sig, text) {
      const id = findLight(sig, text);
      if (id !== null) return recPos.get(id);
      const p = findPadding(sig);
      return p ? posOf(p.slot, p.index) : null;
    },
    signaturesFor(address, hi, lo, limit) {
      tip(); // Light transactions up to the clock first
      return addresses.range(address, hi, lo, limit).map((pos) => {
        const id = recPos.lowerBound(pos);
        return { signature: base58.encode(sigOf(id)), slot: slotOfPos(pos), err: null };
      });
    },
    blockTime: (slot) => blockTime(slot),
    hidden: () => hiddenIds.map((id) => base58.encode(sigOf(id))),
    lightTransactions: () => {
      tip();
      return Array.from({ length: recOff.length }, (_, id) => ({ signature: base58.encode(sigOf(id)), slot: slotOfPos(recPos.get(id)), index: indexOfPos(recPos.get(id)) }));
    },
    stats: () => {
      const a = addresses.size();
      const n = recOff.length;
      return {
        generatedUpTo: generatedTo,
        firstAvailable: 0,
        keptBlocks: lightSlots.length,
        indexedSignatures: n,
        lightTransactions: n,
        lightBytes: (chunks.length - 1) * CHUNK + used + recOff.bytes() * 3 + lightSlots.bytes() * 2 + a.bytes,
        historyMs,
      };
    },
    close() {},
  };
}
