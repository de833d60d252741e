/**
 * The simulator's default profile: a chain that starts at the genesis block (slot 0) and grows one
 * slot per `slotMs`, each slot a block of generated Light transactions (or replayed ones first).
 *
 * Bounded like a pruned Solana node: blocks are generated in slot order, only when asked for (never
 * past the asked slot, never ahead of the clock), and only the newest `keepSlots` generated blocks
 * are kept, as compact JSON strings. Older slots answer getBlock with -32001
 * `Block N cleaned up, does not exist on node. First available block: M` and getFirstAvailableBlock
 * moves forward with them; a transaction signature is looked up in a signature → slot index kept for
 * the same window (a pruned or unknown one gives `null`), and getSignaturesForAddress reads an
 * address → position index of the same window. Generation runs in slices of a few milliseconds, so a
 * getBlock that must catch up over many slots never stalls the other requests.
 */
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import * as base58 from '../solana/base58.ts';
import { listFiles } from '../listFiles.ts';
import { parseTransaction } from '../light/parser.ts';
import { decodeTransactionJson } from '../solana/decode.ts';
import { LightTxGenerator, type GeneratorOptions } from './generator.ts';
import { compactTxEntryText, firstSignatureBytes, staticAccountKeys } from './compactTx.ts';
import { AddressIndex, type BlockHeader, type Chain, type ChainBlock, type ChainStats, type FoundTx, GENESIS_BLOCK_TIME, RpcError, type SignatureMatch, blockhashOf, genesisHeader, hiddenFromProgramListing, indexOfPos, notAvailable, posOf, slotOfPos } from './chain.ts';
import { ACCOUNT_COMPRESSION_PROGRAM_ID } from '../light/constants.ts';

/** Longest stretch (ms) the generator runs before letting other requests in. */
const GENERATE_SLICE_MS = 10;

/** One kept block: header, and each transaction's JSON text, first signature and (replayed only) error. */
interface SimBlock extends BlockHeader {
  /** Each transaction's `{"transaction":…,"meta":…,"version":…}`, in block order. */
  txs: string[];
  /** Base58 first signature of each transaction, in block order. */
  sigs: string[];
  /** `meta.err` of each transaction when one is not null (replayed blocks), else undefined. */
  errs?: unknown[];
}

/** Options of the default profile. */
export interface WindowChainOptions {
  slotMs: number;
  txsPerBlock: number;
  keepSlots: number;
  seed: number;
  owners: number;
  v2Weight: number;
  generatorBounds?: Pick<GeneratorOptions, 'maxHeldAccounts' | 'maxAddresses' | 'v2Tree' | 'v2Queue' | 'v2RootHistoryCapacity' | 'v2AddressTree'>;
  replay: string[];
  replayOnly: boolean;
  /** One Light transaction in N left out of the account-compression program's listing (0 = none). */
  hideFromProgramListing: number;
  log?: Logger;
}

/**
 * Moves the generator's tree past every leaf and seq the replayed transactions used in the same tree.
 * @returns true when a replayed transaction used the generator's batched (v2) state tree, its output
 * queue, or its batched address tree.
 */
function continueAfterReplay(gen: LightTxGenerator, txs: Record<string, unknown>[]): boolean {
  const v2 = gen.v2Tree;
  let usedV2 = false;
  let nextLeaf = 0;
  let lastSeq = 0n;
  for (const json of txs) {
    let parsed;
    try {
      const d = decodeTransactionJson(json);
      parsed = parseTransaction(d.transaction, d.slot);
    } catch {
      continue;
    }
    for (const ev of parsed.events) {
      if (ev.kind === 'batch' && [v2.tree, v2.addressTree].includes(base58.encode(ev.event.merkleTreePubkey))) usedV2 = true;
      if (ev.kind === 'batchPublicTransaction') {
        if (ev.event.event.pubkeyArray.some((k) => [v2.tree, v2.queue, v2.addressTree].includes(base58.encode(k)))) usedV2 = true;
        if (ev.event.newAddresses.some((a) => base58.encode(a.tree) === v2.addressTree)) usedV2 = true;
      }
      if (ev.kind === 'publicTransaction') {
        const e = ev.event;
        const seq = e.sequenceNumbers.find((s) => base58.encode(s.treePubkey) === gen.treePubkey)?.seq;
        let n = 0n;
        e.outputCompressedAccounts.forEach((o, i) => {
          if (base58.encode(e.pubkeyArray[o.merkleTreeIndex] ?? new Uint8Array()) !== gen.treePubkey) return;
          nextLeaf = Math.max(nextLeaf, e.outputLeafIndices[i]! + 1);
          if (seq !== undefined && seq + n > lastSeq) lastSeq = seq + n;
          n++;
        });
      } else if (ev.kind === 'nullifier' && base58.encode(ev.event.tree) === gen.treePubkey) {
        const end = ev.event.seq + BigInt(ev.event.nullifiedLeavesIndices.length) - 1n;
        if (end > lastSeq) lastSeq = end;
      }
    }
  }
  gen.continueTree(nextLeaf, lastSeq);
  return usedV2;
}

/** Base58 first signature of a block transaction: base64 wire `[tx, 'base64']`, or a JSON-encoded one. */
function firstSignature(transaction: unknown): string {
  if (Array.isArray(transaction) && typeof transaction[0] === 'string') {
    // 1 byte (signature count, < 128) + 64 bytes of signature: the first 88 base64 characters hold them.
    return base58.encode(Buffer.from(transaction[0].slice(0, 88), 'base64').subarray(1, 65));
  }
  const sig = (transaction as { signatures?: unknown[] } | null)?.signatures?.[0];
  if (typeof sig !== 'string') throw new Error('simulator: a replayed transaction has neither base64 wire bytes nor signatures[0]');
  return sig;
}

/**
 * The account keys of a replayed transaction (getSignaturesForAddress matches them): the static keys
 * of its base64 wire bytes or of its JSON message, and the lookup-table addresses of its meta.
 */
function replayedAccountKeys(transaction: unknown, meta: unknown): string[] {
  const keys: string[] = [];
  if (Array.isArray(transaction) && typeof transaction[0] === 'string') {
    try {
      keys.push(...staticAccountKeys(Buffer.from(transaction[0], 'base64')));
    } catch {
      // not a wire transaction we can read: only its meta's keys
    }
  } else {
    const ks = (transaction as { message?: { accountKeys?: unknown[] } } | null)?.message?.accountKeys ?? [];
    for (const k of ks) {
      const s = typeof k === 'string' ? k : (k as { pubkey?: unknown } | null)?.pubkey;
      if (typeof s === 'string') keys.push(s);
    }
  }
  const loaded = (meta as { loadedAddresses?: { writable?: unknown[]; readonly?: unknown[] } } | null)?.loadedAddresses;
  for (const k of [...(loaded?.writable ?? []), ...(loaded?.readonly ?? [])]) if (typeof k === 'string') keys.push(k);
  return keys;
}

/** The default profile's chain (see the file comment). */
export function windowChain(opts: WindowChainOptions): Chain {
  const { keepSlots, slotMs } = opts;
  const gen = new LightTxGenerator({ owners: opts.owners, seed: opts.seed, v2Weight: opts.v2Weight, ...opts.generatorBounds });
  const replayTxs = opts.replay.flatMap((dir) => listFiles(dir).map((f) => JSON.parse(readFileSync(f, 'utf8')) as Record<string, unknown>));
  replayTxs.sort((a, b) => (a.slot as number) - (b.slot as number));
  // Slot s serves replayBySlot[s - 1]; an entry is dropped once its block is made (slots are made once, in order).
  const replayBySlot: (Record<string, unknown>[] | undefined)[] = [];
  for (const tx of replayTxs) {
    const last = replayBySlot[replayBySlot.length - 1];
    if (last && last[0]!.slot === tx.slot) last.push(tx);
    else replayBySlot.push([tx]);
  }
  if (continueAfterReplay(gen, replayTxs) && opts.v2Weight > 0) {
    gen.disableV2();
    opts.log?.warn({ tree: gen.v2Tree.tree, addressTree: gen.v2Tree.addressTree }, 'simulator: replayed transactions use the batched trees; generating legacy transactions only (their queues and roots cannot be continued)');
  }
  const blocks = new Map<number, SimBlock>();
  blocks.set(0, { ...genesisHeader(), txs: [], sigs: [] });
  const slotOfSignature = new Map<string, number>();
  const addresses = new AddressIndex();
  /** Hidden signatures of the kept blocks → their position. */
  const hidden = new Map<string, number>();
  let builtUpTo = 0;
  const started = Date.now();
  const currentSlot = () => 1 + Math.floor((Date.now() - started) / slotMs);
  const firstAvailable = () => Math.max(0, builtUpTo - keepSlots + 1);
  const header = (s: number, blockTime: number): BlockHeader => ({ slot: s, blockHeight: s, blockTime, blockhash: blockhashOf(s), parentSlot: s - 1, previousBlockhash: blockhashOf(s - 1) });

  /** Indexes transaction `i` of block `b` under each of its account keys. */
  const indexKeys = (b: SimBlock, i: number, keys: string[], sigBytes: Uint8Array) => {
    const pos = posOf(b.slot, i);
    const hide = hiddenFromProgramListing(opts.seed, sigBytes, opts.hideFromProgramListing);
    if (hide) hidden.set(b.sigs[i]!, pos);
    for (const k of keys) if (!(hide && k === ACCOUNT_COMPRESSION_PROGRAM_ID)) addresses.add(k, pos);
  };

  /** Makes the block of slot builtUpTo + 1 (the same JSON as ever for the seed), keeps it and drops the one leaving the window. */
  const buildNext = (): SimBlock => {
    const s = builtUpTo + 1;
    const replay = replayBySlot[s - 1];
    let block: SimBlock;
    if (replay) {
      replayBySlot[s - 1] = undefined;
      block = { ...header(s, Math.floor(Date.now() / 1000)), txs: [], sigs: [] };
      replay.forEach((t, i) => {
        block.txs.push(JSON.stringify({ transaction: t.transaction, meta: t.meta, version: t.version }));
        const sig = firstSignature(t.transaction);
        block.sigs.push(sig);
        const err = (t.meta as { err?: unknown } | null)?.err ?? null;
        if (err !== null) (block.errs ??= [])[i] = err;
        indexKeys(block, i, replayedAccountKeys(t.transaction, t.meta), base58.decode(sig));
      });
    } else if (opts.replayOnly) {
      block = { ...header(s, Math.floor(Date.now() / 1000)), txs: [], sigs: [] };
    } else {
      // The generator's block (LightTxGenerator.block: the same transactions, header and JSON), kept as text.
      block = { ...header(s, GENESIS_BLOCK_TIME + s), txs: [], sigs: [] };
      for (let i = 0; i < opts.txsPerBlock; i++) {
        const { tx } = gen.nextCompact(s);
        const sig = firstSignatureBytes(tx.wire);
        block.txs.push(compactTxEntryText(tx));
        block.sigs.push(base58.encode(sig));
        indexKeys(block, i, staticAccountKeys(tx.wire), sig);
      }
    }
    builtUpTo = s;
    blocks.set(s, block);
    for (const sig of block.sigs) slotOfSignature.set(sig, s);
    const old = blocks.get(s - keepSlots);
    if (old) {
      blocks.delete(old.slot);
      for (const sig of old.sigs) {
        if (slotOfSignature.get(sig) === old.slot) slotOfSignature.delete(sig);
        hidden.delete(sig);
      }
      addresses.dropBelow(posOf(old.slot + 1, 0));
    }
    return block;
  };

  // getBlock calls waiting for a slot not made yet; one generation loop serves them all, in slot order.
  const waiting = new Map<number, { resolve(b: SimBlock): void; reject(e: unknown): void }[]>();
  let target = 0;
  let generating = false;
  let closed = false;
  const generate = async () => {
    generating = true;
    try {
      while (builtUpTo < target && !closed) {
        const sliceEnd = performance.now() + GENERATE_SLICE_MS;
        do {
          const b = buildNext();
          const ws = waiting.get(b.slot);
          if (ws) {
            waiting.delete(b.slot);
            for (const w of ws) w.resolve(b);
          }
        } while (builtUpTo < target && performance.now() < sliceEnd);
        if (builtUpTo < target) await new Promise<void>((r) => setImmediate(r));
      }
    } catch (err) {
      opts.log?.error({ err, slot: builtUpTo + 1 }, 'simulator: generating a block failed');
      for (const ws of waiting.values()) for (const w of ws) w.reject(err);
      waiting.clear();
      target = builtUpTo;
    } finally {
      generating = false;
    }
  };
  /** The block of `slot` (0 ≤ slot ≤ tip), generating up to it first when needed; null once pruned. */
  const blockAt = (slot: number): SimBlock | null | Promise<SimBlock> => {
    if (slot <= builtUpTo) return blocks.get(slot) ?? null;
    if (closed) throw new RpcError(-32603, 'Internal error: the simulator is closing');
    return new Promise<SimBlock>((resolve, reject) => {
      const ws = waiting.get(slot);
      if (ws) ws.push({ resolve, reject });
      else waiting.set(slot, [{ resolve, reject }]);
      target = Math.max(target, slot);
      if (!generating) void generate();
    });
  };
  const cleanedUp = (s: number) => new RpcError(-32001, `Block ${s} cleaned up, does not exist on node. First available block: ${firstAvailable()}`);
  const view = (b: SimBlock): ChainBlock => ({
    slot: b.slot,
    blockHeight: b.blockHeight,
    blockTime: b.blockTime,
    blockhash: b.blockhash,
    parentSlot: b.parentSlot,
    previousBlockhash: b.previousBlockhash,
    count: b.txs.length,
    entries: () => b.txs,
    signatures: () => b.sigs,
  });
  const matches = (address: string, hi: number, lo: number, limit: number): SignatureMatch[] =>
    addresses.range(address, hi, lo, limit).map((pos) => {
      const b = blocks.get(slotOfPos(pos))!;
      const i = indexOfPos(pos);
      return { signature: b.sigs[i]!, slot: b.slot, err: b.errs?.[i] ?? null };
    });

  return {
    tip: currentSlot,
    firstAvailable,
    produced: () => true,
    blockHeight: (slot) => slot,
    block(slot) {
      if (slot > currentSlot()) throw notAvailable(slot);
      if (slot < firstAvailable()) throw cleanedUp(slot);
      const b = blockAt(slot);
      if (b === null) throw cleanedUp(slot);
      return b instanceof Promise ? b.then(view) : view(b);
    },
    transaction(_sig, text): FoundTx | null {
      const s = slotOfSignature.get(text);
      const b = s === undefined ? undefined : blocks.get(s);
      if (!b) return null; // unknown, or pruned with its block
      const i = b.sigs.indexOf(text);
      return { slot: b.slot, blockTime: b.blockTime, index: i, entry: b.txs[i]! };
    },
    locate(_sig, text) {
      const s = slotOfSignature.get(text);
      const b = s === undefined ? undefined : blocks.get(s);
      return b ? posOf(b.slot, b.sigs.indexOf(text)) : null;
    },
    signaturesFor(address, hi, lo, limit) {
      // Every block up to the tip first (a node lists up to its newest block).
      const tip = currentSlot();
      if (builtUpTo < tip) {
        const b = blockAt(tip);
        if (b instanceof Promise) return b.then(() => matches(address, hi, lo, limit));
      }
      return matches(address, hi, lo, limit);
    },
    blockTime: (slot) => blocks.get(slot)?.blockTime ?? null,
    hidden: () => [...hidden].sort((a, b) => a[1] - b[1]).map(([sig]) => sig),
    lightTransactions: () =>
      [...blocks.values()]
        .sort((a, b) => a.slot - b.slot)
        .flatMap((b) => b.sigs.map((signature, index) => ({ signature, slot: b.slot, index }))),
    stats: (): ChainStats => ({ generatedUpTo: builtUpTo, firstAvailable: firstAvailable(), keptBlocks: blocks.size, indexedSignatures: slotOfSignature.size }),
    close() {
      closed = true;
      const err = new RpcError(-32603, 'Internal error: the simulator is closing');
      for (const ws of waiting.values()) for (const w of ws) w.reject(err);
      waiting.clear();
    },
  };
}
