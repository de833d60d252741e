/**
 * `refract simulate`: a local Solana JSON-RPC endpoint serving Light transactions as blocks at a
 * steady slot rate — generated (default) or replayed from getTransaction files (`--replay DIR...`,
 * then generated). Methods: getSlot, getBlock, getTransaction, getHealth, getBlockHeight,
 * getFirstAvailableBlock, getVersion, and getProgramAccounts / getAccountInfo for its tree and queue
 * accounts (`simulatedTreeAccounts`: what `refract start`'s tree sync reads).
 *
 * Bounded like a pruned Solana node: blocks are generated in slot order, only when a getBlock asks
 * for them (never past the asked slot, never ahead of the clock), and only the newest `keepSlots`
 * generated blocks are kept, as compact JSON strings. Older slots answer getBlock with -32001
 * `Block N cleaned up, does not exist on node. First available block: M` and getFirstAvailableBlock
 * moves forward with them; a transaction signature is looked up in a signature → slot index kept for
 * the same window (a pruned or unknown one gives `null`). Generation runs in slices of a few
 * milliseconds, so a getBlock that must catch up over many slots never stalls the other requests.
 */
import { createServer, type Server } from 'node:http';
import * as base58 from '../solana/base58.ts';
import type { Logger } from 'pino';
import { readFileSync } from 'node:fs';
import { listFiles } from '../listFiles.ts';
import { LightTxGenerator, type GeneratorOptions } from './generator.ts';
import { parseTransaction } from '../light/parser.ts';
import { decodeTransactionJson } from '../solana/decode.ts';
import { type TreeEntry, defaultTreeEntries } from '../config/trees.ts';
import { ACCOUNT_COMPRESSION_PROGRAM_ID, DEFAULT_TREE_OWNER } from '../light/constants.ts';
import { type QueueKind, encodeTreeAccount } from '../light/treeAccounts.ts';

const QUEUE_OF: Record<TreeEntry['type'], QueueKind | null> = { StateV1: 'NullifierV1', AddressV1: 'AddressV1', StateV2: 'OutputV2', AddressV2: null };

/**
 * The account-compression accounts the simulator serves: each tree of `config/trees.json` (the
 * generated transactions use smt1, amt1 and, with a v2 weight, HLKs5 and its output queue) and its queue, owned by Photon's expected tree owner,
 * as header-only account data in the real accounts' layout (src/light/treeAccounts.ts
 * `encodeTreeAccount`; next index and sequence number 0). Pubkey (base58) → data.
 */
export function simulatedTreeAccounts(trees: readonly TreeEntry[] = defaultTreeEntries()): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const t of trees) {
    out.set(t.tree, encodeTreeAccount({ kind: 'tree', ...t, nextIndex: 0, sequenceNumber: 0, owner: DEFAULT_TREE_OWNER }));
    const q = QUEUE_OF[t.type];
    if (q && t.queue !== t.tree) out.set(t.queue, encodeTreeAccount({ kind: 'queue', queue: t.queue, tree: t.tree, queueType: q, owner: DEFAULT_TREE_OWNER }));
  }
  return out;
}

/** getAccountInfo / getProgramAccounts `config` (params[1]): base64 only, optional dataSlice. Throws RpcError -32602 naming the field. */
function accountConfig(method: string, v: unknown): { dataSlice?: { offset: number; length: number } } {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object') throw new RpcError(-32602, `Invalid params: ${method} config (params[1]) must be an object`);
  const c = v as { encoding?: unknown; dataSlice?: { offset?: unknown; length?: unknown } };
  if (c.encoding !== undefined && c.encoding !== 'base64') throw new RpcError(-32602, `Invalid params: ${method}: the simulator serves encoding "base64" only, got ${JSON.stringify(c.encoding)}`);
  if (c.dataSlice === undefined) return {};
  const { offset, length } = c.dataSlice ?? {};
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || (offset as number) < 0 || (length as number) < 0) {
    throw new RpcError(-32602, `Invalid params: ${method}: dataSlice needs non-negative integer offset and length, got ${JSON.stringify(c.dataSlice)}`);
  }
  return { dataSlice: { offset: offset as number, length: length as number } };
}

/** Simulator options. */
export interface SimulatorOptions {
  port?: number;
  host?: string;
  /** Milliseconds per slot (default 400). */
  slotMs?: number;
  /** Generated transactions per block (default 8). */
  txsPerBlock?: number;
  /** Directories of getTransaction JSON files replayed first, one slot per source slot, in slot order. */
  replay?: string[];
  /** Stop generating after replay (default false: generate forever). */
  replayOnly?: boolean;
  seed?: number;
  owners?: number;
  /**
   * Newest generated blocks kept (default {@link DEFAULT_KEEP_SLOTS}); older slots answer as pruned.
   * An integer ≥ 1, else startSimulator throws a RangeError.
   */
  keepSlots?: number;
  /** The generator's memory bounds (GeneratorOptions maxHeldAccounts / maxAddresses; defaults there). */
  generatorBounds?: Pick<GeneratorOptions, 'maxHeldAccounts' | 'maxAddresses'>;
  /**
   * Relative weight of instruction-based (v2) transactions on the batched tree HLKs5 beside the legacy
   * kinds (GeneratorOptions.v2Weight; default 0 here, `refract simulate` and `npm start` pass
   * DEFAULT_SIM_V2_WEIGHT). Ignored (no v2 transactions) when replayed transactions use that tree.
   */
  v2Weight?: number;
  log?: Logger;
}

/** Blocks the simulator keeps by default (≈ 20 minutes of 400 ms slots; ≈ 12 KB per 8-transaction block). */
export const DEFAULT_KEEP_SLOTS = 3000;

/** Longest stretch (ms) the generator runs before letting other requests in. */
const GENERATE_SLICE_MS = 10;

/** One kept block, as JSON text: what getBlock and getTransaction answer, without the object graph. */
interface SimBlock {
  slot: number;
  /** The getBlock result without `transactions`, e.g. `{"blockHeight":5,…,"rewards":[]}`. */
  header: string;
  /** `blockTime` of the block (getTransaction repeats it). */
  blockTime: unknown;
  /** Each transaction's `{"transaction":…,"meta":…,"version":…}`, in block order. */
  txs: string[];
  /** Base58 first signature of each transaction, in block order. */
  sigs: string[];
}

/** Counts describing what the simulator holds in memory. */
export interface SimulatorStats {
  /** Highest slot generated so far (0 before the first getBlock). */
  generatedUpTo: number;
  /** getFirstAvailableBlock: the oldest kept slot (1 until the window fills). */
  firstAvailable: number;
  /** Blocks held (≤ keepSlots). */
  keptBlocks: number;
  /** Signatures in the signature → slot index (those of the kept blocks). */
  indexedSignatures: number;
}

/** A JSON-RPC error with its code, as the server sends it. */
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** A result that is JSON text already (a kept block or transaction), written into the response as is. */
class RawJson {
  constructor(readonly text: string) {}
}

/** A running simulator. */
export interface Simulator {
  server: Server;
  url: string;
  /** Current slot. */
  slot(): number;
  /** What is held in memory now (kept blocks, indexed signatures, window). */
  stats(): SimulatorStats;
  close(): Promise<void>;
}

const sha = (s: string) => base58.encode(Buffer.from(s.padEnd(32, '.').slice(0, 32)));

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
 * Starts the simulator; resolves once it listens. Throws a RangeError when `keepSlots` is not an
 * integer ≥ 1, and the listen error (EADDRINUSE…) when the port cannot be bound.
 */
export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const keepSlots = opts.keepSlots ?? DEFAULT_KEEP_SLOTS;
  if (!Number.isSafeInteger(keepSlots) || keepSlots < 1) throw new RangeError(`simulator keepSlots must be an integer ≥ 1, got ${keepSlots}`);
  const gen = new LightTxGenerator({ owners: opts.owners ?? 200, seed: opts.seed ?? 1, v2Weight: opts.v2Weight ?? 0, ...opts.generatorBounds });
  const replayTxs = (opts.replay ?? []).flatMap((dir) => listFiles(dir).map((f) => JSON.parse(readFileSync(f, 'utf8')) as Record<string, unknown>));
  replayTxs.sort((a, b) => (a.slot as number) - (b.slot as number));
  // Slot s serves replayBySlot[s - 1]; an entry is dropped once its block is made (slots are made once, in order).
  const replayBySlot: (Record<string, unknown>[] | undefined)[] = [];
  for (const tx of replayTxs) {
    const last = replayBySlot[replayBySlot.length - 1];
    if (last && last[0]!.slot === tx.slot) last.push(tx);
    else replayBySlot.push([tx]);
  }
  const replaySlots = replayBySlot.length;
  if (continueAfterReplay(gen, replayTxs) && (opts.v2Weight ?? 0) > 0) {
    gen.disableV2();
    opts.log?.warn({ tree: gen.v2Tree.tree, addressTree: gen.v2Tree.addressTree }, 'simulator: replayed transactions use the batched trees; generating legacy transactions only (their queues and roots cannot be continued)');
  }
  const blocks = new Map<number, SimBlock>();
  const slotOfSignature = new Map<string, number>();
  let builtUpTo = 0;
  const started = Date.now();
  const slotMs = opts.slotMs ?? 400;
  const currentSlot = () => 1 + Math.floor((Date.now() - started) / slotMs);
  const firstAvailable = () => Math.max(1, builtUpTo - keepSlots + 1);

  /** Makes the block of slot builtUpTo + 1 (the same JSON as ever for the seed), keeps it and drops the one leaving the window. */
  const buildNext = (): SimBlock => {
    const s = builtUpTo + 1;
    const replay = replayBySlot[s - 1];
    let json: Record<string, unknown>;
    if (replay) {
      replayBySlot[s - 1] = undefined;
      json = {
        blockHeight: s, blockTime: Math.floor(Date.now() / 1000), blockhash: sha(`b${s}`), parentSlot: s - 1, previousBlockhash: sha(`b${s - 1}`), rewards: [],
        transactions: replay.map((t) => ({ transaction: t.transaction, meta: t.meta, version: t.version })),
      };
    } else if (opts.replayOnly) {
      json = { blockHeight: s, blockTime: Math.floor(Date.now() / 1000), blockhash: sha(`b${s}`), parentSlot: s - 1, previousBlockhash: sha(`b${s - 1}`), rewards: [], transactions: [] };
    } else {
      json = gen.block(s, opts.txsPerBlock ?? 8).json;
    }
    const { transactions, ...rest } = json as { transactions: { transaction: unknown; meta: unknown; version: unknown }[]; blockTime?: unknown };
    const block: SimBlock = {
      slot: s,
      header: JSON.stringify(rest),
      blockTime: rest.blockTime,
      txs: transactions.map((t) => JSON.stringify(t)),
      sigs: transactions.map((t) => firstSignature(t.transaction)),
    };
    builtUpTo = s;
    blocks.set(s, block);
    for (const sig of block.sigs) slotOfSignature.set(sig, s);
    const old = blocks.get(s - keepSlots);
    if (old) {
      blocks.delete(old.slot);
      for (const sig of old.sigs) if (slotOfSignature.get(sig) === old.slot) slotOfSignature.delete(sig);
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
  /** The block of `slot` (1 ≤ slot ≤ tip), generating up to it first when needed; null once pruned. */
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
  const blockJson = (b: SimBlock) => new RawJson(`${b.header.slice(0, -1)}${b.header.length > 2 ? ',' : ''}"transactions":[${b.txs.join(',')}]}`);
  const cleanedUp = (s: number) => new RpcError(-32001, `Block ${s} cleaned up, does not exist on node. First available block: ${firstAvailable()}`);

  const treeAccounts = simulatedTreeAccounts();
  const accountJson = (data: Uint8Array, cfg: { dataSlice?: { offset: number; length: number } }) => {
    const d = cfg.dataSlice ? data.subarray(cfg.dataSlice.offset, cfg.dataSlice.offset + cfg.dataSlice.length) : data;
    return { data: [Buffer.from(d).toString('base64'), 'base64'], executable: false, lamports: 1_000_000_000, owner: ACCOUNT_COMPRESSION_PROGRAM_ID, rentEpoch: 0, space: data.length };
  };

  const handle = (method: string, params: unknown[]): unknown => {
    const slot = currentSlot();
    switch (method) {
      case 'getSlot':
      case 'getBlockHeight':
        return slot;
      case 'getFirstAvailableBlock':
        return firstAvailable();
      case 'getGenesisHash':
        return sha('refract-simulator-genesis');
      case 'getHealth':
        return 'ok';
      case 'getVersion':
        return { 'solana-core': 'refract-simulator', 'feature-set': 0 };
      case 'getBlock': {
        const s = params[0];
        if (typeof s !== 'number' || !Number.isSafeInteger(s) || s < 0) throw new RpcError(-32602, `Invalid params: slot (params[0]) must be a non-negative integer, got ${JSON.stringify(s)}`);
        if (s > slot) throw new RpcError(-32004, `Block not available for slot ${s}`);
        if (s < firstAvailable()) throw cleanedUp(s);
        const b = blockAt(s);
        if (b === null) throw cleanedUp(s);
        return b instanceof Promise ? b.then(blockJson) : blockJson(b);
      }
      case 'getTransaction': {
        const sig = params[0];
        let bytes = 0;
        try {
          bytes = typeof sig === 'string' ? base58.decode(sig).length : 0;
        } catch {
          // not base58: reported below
        }
        if (bytes !== 64) throw new RpcError(-32602, `Invalid params: signature (params[0]) must be a base58 64-byte transaction signature, got ${JSON.stringify(sig)}`);
        const s = slotOfSignature.get(sig as string);
        const b = s === undefined ? undefined : blocks.get(s);
        if (!b) return null; // unknown, or pruned with its block
        const i = b.sigs.indexOf(sig as string);
        return new RawJson(`{"slot":${b.slot},"blockTime":${JSON.stringify(b.blockTime) ?? 'null'},${b.txs[i]!.slice(1)}`);
      }
      case 'getProgramAccounts': {
        const cfg = accountConfig(method, params[1]);
        if (typeof params[0] !== 'string') throw new RpcError(-32602, `Invalid params: program id (params[0]) must be a base58 string, got ${JSON.stringify(params[0])}`);
        if (params[0] !== ACCOUNT_COMPRESSION_PROGRAM_ID) return [];
        return [...treeAccounts].map(([pubkey, data]) => ({ pubkey, account: accountJson(data, cfg) }));
      }
      case 'getAccountInfo': {
        const cfg = accountConfig(method, params[1]);
        const pk = params[0];
        let bytes = 0;
        try {
          bytes = typeof pk === 'string' ? base58.decode(pk).length : 0;
        } catch {
          // not base58: reported below
        }
        if (bytes !== 32) throw new RpcError(-32602, `Invalid params: pubkey (params[0]) must be a base58 32-byte pubkey, got ${JSON.stringify(pk)}`);
        const data = treeAccounts.get(pk as string);
        return { context: { slot }, value: data ? accountJson(data, cfg) : null };
      }
      default:
        throw new RpcError(-32601, `Method not found: ${method}`);
    }
  };

  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      let id: unknown = null;
      const reply = (out: string) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(out);
      };
      const fail = (err: unknown) => {
        const e = err as Error & { code?: unknown };
        const code = err instanceof RpcError ? e.code : err instanceof SyntaxError ? -32700 : -32603;
        reply(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message: err instanceof SyntaxError ? `Parse error: ${e.message}` : e.message } }));
      };
      const succeed = (result: unknown) => {
        const text = result instanceof RawJson ? result.text : JSON.stringify(result);
        reply(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${text}}`);
      };
      try {
        const msg = JSON.parse(body) as { id?: unknown; method?: string; params?: unknown[] };
        id = msg.id ?? null;
        const result = handle(String(msg.method), Array.isArray(msg.params) ? msg.params : []);
        if (result instanceof Promise) result.then(succeed, fail);
        else succeed(result);
      } catch (err) {
        fail(err);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8899, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port ?? 8899;
  const url = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  opts.log?.info({ url, slotMs, keepSlots, replaySlots }, 'Solana RPC simulator listening');
  return {
    server,
    url,
    slot: currentSlot,
    stats: () => ({ generatedUpTo: builtUpTo, firstAvailable: firstAvailable(), keptBlocks: blocks.size, indexedSignatures: slotOfSignature.size }),
    close: () => {
      closed = true;
      const err = new RpcError(-32603, 'Internal error: the simulator is closing');
      for (const ws of waiting.values()) for (const w of ws) w.reject(err);
      waiting.clear();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
