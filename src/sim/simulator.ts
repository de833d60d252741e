/**
 * `refract simulate`: a local Solana JSON-RPC endpoint serving Light transactions, in one of two
 * profiles, both starting at a genesis block at slot 0 (`parentSlot` 0, `previousBlockhash` = its own
 * `blockhash`, as a fresh agave ledger):
 * - `default` (windowChain.ts): one block of generated Light transactions per slot at a steady slot
 *   rate (or replayed from getTransaction files first, `--replay DIR...`), generated when asked and
 *   kept in a pruned window (`keepSlots`);
 * - `sparse` (sparseChain.ts): a mainnet-like chain whose whole history (`historySlots`) exists at
 *   start — Light transactions in about one slot of `lightEvery`, padding (votes, transfers) in every
 *   block, skipped slots — then growing one slot per `slotMs`.
 *
 * Methods: getSlot, getBlockHeight, getBlock (transactionDetails full | signatures | none, rewards),
 * getTransaction (with agave 4.x's `transactionIndex` unless `transactionIndex: false`),
 * getSignaturesForAddress (newest first, before / until / limit ≤ 1000, as agave), getHealth,
 * getFirstAvailableBlock, getGenesisHash, getVersion, and getProgramAccounts / getAccountInfo for its
 * tree and queue accounts (`simulatedTreeAccounts`: what `refract start`'s tree sync reads).
 * JSON-RPC batches (an array of requests in one POST); an optional token-bucket rate limit (`rps`:
 * HTTP 429 with Retry-After); request counters in process (`rpcStats()`) and at `GET /stats`.
 * For a gRPC (Yellowstone) server beside it: `blockJson(slot)`, `tipSlot()`, `onSlot(listener)`.
 *
 * Control over HTTP (for tests and benches driving the binary), on the same port:
 * - `POST /pause`: the chain stops growing at its tip (getSlot, getBlock, getSignaturesForAddress and
 *   the gRPC server all stand still there), so two indexers can be compared at the same slot;
 *   `POST /resume`: it grows again from that slot at the same rate (the slots paused are not made up:
 *   the clock is moved back by the pause). Both answer `{paused, slot}`; `GET /stats` shows `paused`.
 * - routes added by the process embedding the simulator ({@link Simulator.route}): `refract simulate
 *   --grpc-port` adds `POST /geyser/faults` and `GET /geyser/faults` (fault injection into its gRPC
 *   server: src/sim/geyser.ts `applyFaultRequest`).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import * as base58 from '../solana/base58.ts';
import type { Logger } from 'pino';
import { type TreeEntry, defaultTreeEntries } from '../config/trees.ts';
import { ACCOUNT_COMPRESSION_PROGRAM_ID, DEFAULT_TREE_OWNER } from '../light/constants.ts';
import { type QueueKind, encodeTreeAccount } from '../light/treeAccounts.ts';
import { DEFAULT_SIM_V2_WEIGHT, type GeneratorOptions } from './generator.ts';
import { type Chain, type ChainBlock, type ChainStats, RpcError, notAvailable, posOf } from './chain.ts';
import { windowChain } from './windowChain.ts';
import {
  DEFAULT_HISTORY_SLOTS,
  DEFAULT_LIGHT_EVERY,
  DEFAULT_LIGHT_PER_SLOT,
  DEFAULT_PADDING_TXS,
  DEFAULT_SKIP_EVERY,
  MAX_PADDING_TXS,
  sparseChain,
} from './sparseChain.ts';

export { DEFAULT_HISTORY_SLOTS, DEFAULT_LIGHT_EVERY, DEFAULT_LIGHT_PER_SLOT, DEFAULT_PADDING_TXS, DEFAULT_SKIP_EVERY, MAX_PADDING_TXS };

const QUEUE_OF: Record<TreeEntry['type'], QueueKind | null> = { StateV1: 'NullifierV1', AddressV1: 'AddressV1', StateV2: 'OutputV2', AddressV2: null };

/**
 * The account-compression accounts the simulator serves: each tree of `config/trees.json` (the
 * generated transactions use smt1, amt1 and, with a v2 weight, bmt1 with its output queue oq1 and amt2) and its queue, owned by Photon's expected tree owner,
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
  /** `default` (a pruned window of generated blocks, the default) or `sparse` (a mainnet-like full history). */
  profile?: 'default' | 'sparse';
  /** Milliseconds per slot (default 400). */
  slotMs?: number;
  /**
   * Default profile: generated transactions per block (default 8). Sparse profile: the most Light
   * transactions of a Light slot, which holds 1 … this many (default {@link DEFAULT_LIGHT_PER_SLOT}).
   */
  txsPerBlock?: number;
  /** Default profile: directories of getTransaction JSON files replayed first, one slot per source slot, in slot order. */
  replay?: string[];
  /** Default profile: stop generating after replay (default false: generate forever). */
  replayOnly?: boolean;
  seed?: number;
  owners?: number;
  /**
   * Default profile: newest generated blocks kept (default {@link DEFAULT_KEEP_SLOTS}); older slots
   * answer as pruned. An integer ≥ 1, else startSimulator throws a RangeError.
   */
  keepSlots?: number;
  /** The generator's memory bounds (GeneratorOptions maxHeldAccounts / maxAddresses) and, for tests, its batched trees (v2Tree, v2Queue, v2RootHistoryCapacity, v2AddressTree); defaults there. */
  generatorBounds?: Pick<GeneratorOptions, 'maxHeldAccounts' | 'maxAddresses' | 'v2Tree' | 'v2Queue' | 'v2RootHistoryCapacity' | 'v2AddressTree'>;
  /**
   * Relative weight of instruction-based (v2) transactions on the batched trees bmt1 and amt2 beside the legacy
   * kinds (GeneratorOptions.v2Weight; default profile: 0 here, `refract simulate` and `npm start` pass
   * DEFAULT_SIM_V2_WEIGHT; sparse profile: DEFAULT_SIM_V2_WEIGHT). Ignored (no v2 transactions) when
   * replayed transactions use that tree.
   */
  v2Weight?: number;
  /** Sparse profile: slots of history at start (the tip is this slot; default {@link DEFAULT_HISTORY_SLOTS}). */
  historySlots?: number;
  /** Sparse profile: about one slot in N holds Light transactions (default {@link DEFAULT_LIGHT_EVERY}). */
  lightEvery?: number;
  /** Sparse profile: non-Light transactions per block (default {@link DEFAULT_PADDING_TXS}, at most {@link MAX_PADDING_TXS}). */
  paddingTxs?: number;
  /** Sparse profile: about one slot in N is skipped (getBlock -32007; default {@link DEFAULT_SKIP_EVERY}; 0 = none). */
  skipEvery?: number;
  /**
   * Provider-style rate limit: a token bucket of N requests per second (each request of a batch
   * counts); past it HTTP 429 with `Retry-After`. Default: none.
   */
  rps?: number;
  /** getTransaction answers agave 4.x's `transactionIndex` (default true; false = an older node). */
  transactionIndex?: boolean;
  /**
   * Fault switch for tests: one Light transaction in N (a hash of the seed and its signature; forester
   * transactions included) is left out of getSignaturesForAddress answers for the account-compression
   * program only (listing by tree or queue, getTransaction and getBlock still show it). Default 0: none.
   */
  hideFromProgramListing?: number;
  log?: Logger;
}

/** Blocks the simulator keeps by default (≈ 20 minutes of 400 ms slots; ≈ 12 KB per 8-transaction block). */
export const DEFAULT_KEEP_SLOTS = 3000;

/** Slots between a block and its finalization (confirmationStatus, commitment `finalized`). */
const FINALIZATION_LAG = 32;
/** getSignaturesForAddress's largest `limit` (agave MAX_GET_CONFIRMED_SIGNATURES_FOR_ADDRESS2_LIMIT). */
const MAX_SIGNATURES_LIMIT = 1000;

/** Counts describing what the simulator holds in memory. */
export type SimulatorStats = ChainStats;

/** Requests answered, as counted by the simulator (`rpcStats()`, `GET /stats`). */
export interface RpcStats {
  /** JSON-RPC requests answered, by method (each request of a batch counts; rate-limited ones do not). */
  requests: Record<string, number>;
  /** Sum of `requests`. */
  totalRequests: number;
  /** Batch POSTs answered (arrays of requests). */
  batches: number;
  /** HTTP 429 answers (rate limit). */
  rateLimited: number;
}

/** A result that is JSON text already (a kept block or transaction), written into the response as is. */
class RawJson {
  constructor(readonly text: string) {}
}

/** A running simulator. */
export interface Simulator {
  server: Server;
  url: string;
  profile: 'default' | 'sparse';
  /** Current slot (the clock; the default profile's tip). */
  slot(): number;
  /** The newest produced slot (getSlot's answer; never a skipped slot). */
  tipSlot(): number;
  /** What is held in memory now (kept blocks, indexed signatures, window). */
  stats(): SimulatorStats;
  /** Requests answered so far (by method, batches, 429s). */
  rpcStats(): RpcStats;
  /** Sets the request counters back to zero. */
  resetRpcStats(): void;
  /**
   * The getBlock JSON of `slot` as getBlock with encoding base64 and full transactions answers it;
   * null for a skipped slot. Rejects (RpcError -32004 / -32001) for a slot not produced yet or pruned.
   */
  blockJson(slot: number): Promise<Record<string, unknown> | null>;
  /**
   * Calls `listener` once for each new produced slot (skipped slots are not announced), in order, as
   * the chain advances after this call; returns the unsubscribe function.
   */
  onSlot(listener: (slot: number) => void): () => void;
  /** Signatures the fault switch left out of the program's listing (`hideFromProgramListing`), ascending. */
  hiddenSignatures(): string[];
  /** Stops the chain at its tip (`POST /pause`); returns the tip. Idempotent. */
  pause(): number;
  /** Lets the chain grow again from its tip at the same rate (`POST /resume`); returns the tip. Idempotent. */
  resume(): number;
  /** True while paused. */
  paused(): boolean;
  /**
   * Serves `handler` at `method path` on the simulator's HTTP port (before JSON-RPC: a POST to that
   * path is not a JSON-RPC request). The handler gets the parsed JSON body (undefined when empty) and
   * returns the JSON answer (HTTP 200); a RangeError it throws answers HTTP 400 `{error}`, any other
   * error HTTP 500 `{error}`.
   */
  route(method: 'GET' | 'POST', path: string, handler: (body: unknown) => unknown): void;
  /**
   * The Light transactions held, ascending (slot, index): sparse profile every one up to the tip; default
   * profile every transaction of the kept blocks.
   */
  lightTransactions(): { signature: string; slot: number; index: number }[];
  close(): Promise<void>;
}

const sha = (s: string) => base58.encode(Buffer.from(s.padEnd(32, '.').slice(0, 32)));

/** A config object (params[i]) or {}; -32602 when present and not an object. */
function configAt(method: string, params: unknown[], i: number): Record<string, unknown> {
  const v = params[i];
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new RpcError(-32602, `Invalid params: ${method} config (params[${i}]) must be an object`);
  return v as Record<string, unknown>;
}

/** The 64 bytes of a base58 signature, or undefined. */
function signatureBytes(v: unknown): Uint8Array | undefined {
  if (typeof v !== 'string') return undefined;
  const b = base58.tryDecode(v);
  return b?.length === 64 ? b : undefined;
}

/**
 * The commitment of a config, `confirmed` when absent (the simulator's tip is confirmed; agave's default
 * is `finalized`); -32602 below `confirmed` for the methods that need it (as agave).
 */
function commitmentOf(cfg: Record<string, unknown>, atLeastConfirmed: boolean): 'processed' | 'confirmed' | 'finalized' {
  const c = cfg.commitment ?? 'confirmed';
  if (c !== 'processed' && c !== 'confirmed' && c !== 'finalized') throw new RpcError(-32602, `Invalid params: commitment must be processed, confirmed or finalized, got ${JSON.stringify(c)}`);
  if (atLeastConfirmed && c === 'processed') throw new RpcError(-32602, 'Method does not support commitment below `confirmed`');
  return c;
}

/** A token bucket of `rps` requests per second (capacity `rps`). */
class TokenBucket {
  private tokens: number;
  private last = performance.now();
  constructor(private readonly rps: number) {
    this.tokens = rps;
  }
  /** Takes `n` tokens (a batch larger than the bucket once it is full); else the seconds to wait. */
  take(n: number): { ok: true } | { ok: false; retryAfter: number } {
    const now = performance.now();
    this.tokens = Math.min(this.rps, this.tokens + ((now - this.last) / 1000) * this.rps);
    this.last = now;
    const need = Math.min(n, this.rps);
    if (this.tokens >= need) {
      this.tokens -= n;
      return { ok: true };
    }
    return { ok: false, retryAfter: Math.max(1, Math.ceil((need - this.tokens) / this.rps)) };
  }
}

/** Checks a positive integer option. */
function checkInt(name: string, v: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isSafeInteger(v) || v < min || v > max) throw new RangeError(`simulator ${name} must be an integer from ${min} to ${max}, got ${v}`);
  return v;
}

/**
 * Starts the simulator; resolves once it listens (the sparse profile generates its history first).
 * Throws a RangeError for an option out of range (`keepSlots` not an integer ≥ 1, …), and the listen
 * error (EADDRINUSE…) when the port cannot be bound.
 */
export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const profile = opts.profile ?? 'default';
  if (profile !== 'default' && profile !== 'sparse') throw new RangeError(`simulator profile must be default or sparse, got ${JSON.stringify(profile)}`);
  const keepSlots = opts.keepSlots ?? DEFAULT_KEEP_SLOTS;
  if (!Number.isSafeInteger(keepSlots) || keepSlots < 1) throw new RangeError(`simulator keepSlots must be an integer ≥ 1, got ${keepSlots}`);
  const slotMs = checkInt('slotMs', opts.slotMs ?? 400, 1);
  const seed = opts.seed ?? 1;
  const hide = checkInt('hideFromProgramListing', opts.hideFromProgramListing ?? 0, 0);
  const rps = opts.rps ?? 0;
  if (!(rps >= 0) || !Number.isFinite(rps)) throw new RangeError(`simulator rps must be a number ≥ 0 (0 = no limit), got ${rps}`);
  const withIndex = opts.transactionIndex ?? true;
  let chain: Chain;
  if (profile === 'sparse') {
    const skipEvery = checkInt('skipEvery', opts.skipEvery ?? DEFAULT_SKIP_EVERY, 0);
    if (skipEvery === 1) throw new RangeError('simulator skipEvery must be 0 (no skipped slots) or ≥ 2, got 1');
    opts.log?.info({ historySlots: opts.historySlots ?? DEFAULT_HISTORY_SLOTS }, 'simulator: generating the sparse history');
    chain = sparseChain({
      slotMs,
      seed,
      owners: opts.owners ?? 200,
      v2Weight: opts.v2Weight ?? DEFAULT_SIM_V2_WEIGHT,
      generatorBounds: opts.generatorBounds,
      historySlots: checkInt('historySlots', opts.historySlots ?? DEFAULT_HISTORY_SLOTS, 1, 2 ** 32),
      lightEvery: checkInt('lightEvery', opts.lightEvery ?? DEFAULT_LIGHT_EVERY, 1),
      lightMaxPerSlot: checkInt('txsPerBlock', opts.txsPerBlock ?? DEFAULT_LIGHT_PER_SLOT, 1, 1000),
      paddingTxs: checkInt('paddingTxs', opts.paddingTxs ?? DEFAULT_PADDING_TXS, 0, MAX_PADDING_TXS),
      skipEvery,
      hideFromProgramListing: hide,
      log: opts.log,
    });
  } else {
    chain = windowChain({
      slotMs,
      txsPerBlock: checkInt('txsPerBlock', opts.txsPerBlock ?? 8, 0, 100_000),
      keepSlots,
      seed,
      owners: opts.owners ?? 200,
      v2Weight: opts.v2Weight ?? 0,
      generatorBounds: opts.generatorBounds,
      replay: opts.replay ?? [],
      replayOnly: !!opts.replayOnly,
      hideFromProgramListing: hide,
      log: opts.log,
    });
  }

  // Pause (`POST /pause`): the tip stands at `frozen`; on resume the chain's clock is read `offset` slots back.
  let frozen: number | null = null;
  let offset = 0;
  /** The newest produced slot (the chain's, unless paused or moved back by a pause). */
  const tip = (): number => {
    if (frozen !== null) return frozen;
    const t = chain.tip();
    if (offset === 0) return t;
    let s = t - offset;
    while (s > 0 && !chain.produced(s)) s--;
    return Math.max(0, s);
  };

  /** The newest finalized slot: a produced slot at least FINALIZATION_LAG below the tip. */
  const finalizedSlot = (tip_ = tip()) => {
    let t = Math.max(0, tip_ - FINALIZATION_LAG);
    while (t > 0 && !chain.produced(t)) t--;
    return t;
  };
  /** -32016 when the node has not reached `minContextSlot` (agave MinContextSlotNotReached). */
  const checkMinContext = (cfg: Record<string, unknown>, tip: number) => {
    const m = cfg.minContextSlot;
    if (m === undefined || m === null) return;
    if (typeof m !== 'number' || !Number.isSafeInteger(m) || m < 0) throw new RpcError(-32602, `Invalid params: minContextSlot must be a non-negative integer, got ${JSON.stringify(m)}`);
    if (tip < m) throw new RpcError(-32016, 'Minimum context slot has not been reached', { contextSlot: tip });
  };

  /** getBlock's JSON text of a block. */
  const renderBlock = (b: ChainBlock, details: 'full' | 'signatures' | 'none', rewards: boolean): string => {
    const parts = [
      `"blockHeight":${JSON.stringify(b.blockHeight)}`,
      `"blockTime":${JSON.stringify(b.blockTime)}`,
      `"blockhash":${JSON.stringify(b.blockhash)}`,
      `"parentSlot":${b.parentSlot}`,
      `"previousBlockhash":${JSON.stringify(b.previousBlockhash)}`,
    ];
    if (details === 'full') parts.push(`"transactions":[${b.entries().join(',')}]`);
    else if (details === 'signatures') parts.push(`"signatures":${JSON.stringify(b.signatures())}`);
    if (rewards) parts.push('"rewards":[]');
    return `{${parts.join(',')}}`;
  };

  const treeAccounts = simulatedTreeAccounts();
  const accountJson = (data: Uint8Array, cfg: { dataSlice?: { offset: number; length: number } }) => {
    const d = cfg.dataSlice ? data.subarray(cfg.dataSlice.offset, cfg.dataSlice.offset + cfg.dataSlice.length) : data;
    return { data: [Buffer.from(d).toString('base64'), 'base64'], executable: false, lamports: 1_000_000_000, owner: ACCOUNT_COMPRESSION_PROGRAM_ID, rentEpoch: 0, space: data.length };
  };

  const getSignaturesForAddress = (params: unknown[]): unknown => {
    const address = params[0];
    if (typeof address !== 'string' || base58.decode32(address) === undefined) throw new RpcError(-32602, `Invalid param: address (params[0]) must be a base58 32-byte pubkey, got ${JSON.stringify(address)}`);
    const cfg = configAt('getSignaturesForAddress', params, 1);
    const limit = cfg.limit ?? MAX_SIGNATURES_LIMIT;
    if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SIGNATURES_LIMIT) throw new RpcError(-32602, `Invalid limit; max ${MAX_SIGNATURES_LIMIT}`);
    const commitment = commitmentOf(cfg, true);
    const tipNow = tip();
    checkMinContext(cfg, tipNow);
    const finalized = finalizedSlot(tipNow);
    const newest = commitment === 'finalized' ? finalized : tipNow;
    const cursor = (field: 'before' | 'until') => {
      const v = cfg[field];
      if (v === undefined || v === null) return undefined;
      const bytes = signatureBytes(v);
      if (!bytes) throw new RpcError(-32602, `Invalid param: ${field} must be a base58 64-byte transaction signature, got ${JSON.stringify(v)}`);
      return chain.locate(bytes, v as string);
    };
    const before = cursor('before');
    const until = cursor('until');
    // As agave: an unknown `before` lists nothing; an unknown `until` walks to the first available block.
    if (before === null) return [];
    const hi = Math.min(before ?? Infinity, posOf(newest + 1, 0));
    const lo = until ?? posOf(chain.firstAvailable(), 0) - 1;
    const items = (ms: { signature: string; slot: number; err: unknown }[]) =>
      ms.map((m) => ({ signature: m.signature, slot: m.slot, err: m.err, memo: null, blockTime: chain.blockTime(m.slot), confirmationStatus: m.slot <= finalized ? 'finalized' : 'confirmed' }));
    const found = chain.signaturesFor(address, hi, lo, limit);
    return found instanceof Promise ? found.then(items) : items(found);
  };

  const handle = (method: string, params: unknown[]): unknown => {
    switch (method) {
      case 'getSlot':
      case 'getBlockHeight': {
        const cfg = configAt(method, params, 0);
        const tipNow = tip();
        checkMinContext(cfg, tipNow);
        const slot = commitmentOf(cfg, false) === 'finalized' ? finalizedSlot(tipNow) : tipNow;
        return method === 'getSlot' ? slot : chain.blockHeight(slot);
      }
      case 'getFirstAvailableBlock':
        return chain.firstAvailable();
      case 'getGenesisHash':
        return sha('refract-simulator-genesis');
      case 'getHealth':
        return 'ok';
      case 'getVersion':
        return { 'solana-core': 'refract-simulator', 'feature-set': 0 };
      case 'getBlock': {
        const s = params[0];
        if (typeof s !== 'number' || !Number.isSafeInteger(s) || s < 0) throw new RpcError(-32602, `Invalid params: slot (params[0]) must be a non-negative integer, got ${JSON.stringify(s)}`);
        const cfg = configAt(method, params, 1);
        const details = cfg.transactionDetails ?? 'full';
        if (details !== 'full' && details !== 'signatures' && details !== 'none') {
          throw new RpcError(-32602, `Invalid params: transactionDetails: the simulator serves "full", "signatures" or "none", got ${JSON.stringify(details)}`);
        }
        const rewards = cfg.rewards !== false;
        if (commitmentOf(cfg, true) === 'finalized' && s > finalizedSlot()) throw new RpcError(-32004, `Block not available for slot ${s}`);
        if (s > tip()) throw notAvailable(s); // past a paused (or moved back) tip
        const b = chain.block(s);
        return b instanceof Promise ? b.then((x) => new RawJson(renderBlock(x, details, rewards))) : new RawJson(renderBlock(b, details, rewards));
      }
      case 'getTransaction': {
        const sig = params[0];
        const bytes = signatureBytes(sig);
        if (!bytes) throw new RpcError(-32602, `Invalid params: signature (params[0]) must be a base58 64-byte transaction signature, got ${JSON.stringify(sig)}`);
        const cfg = configAt(method, params, 1);
        const commitment = commitmentOf(cfg, true);
        const t = chain.transaction(bytes, sig as string);
        if (!t || t.slot > tip()) return null; // unknown, pruned with its block, or past a paused tip
        if (commitment === 'finalized' && t.slot > finalizedSlot()) return null;
        return new RawJson(`{"slot":${t.slot},"blockTime":${JSON.stringify(t.blockTime)},${t.entry.slice(1, -1)}${withIndex ? `,"transactionIndex":${t.index}` : ''}}`);
      }
      case 'getSignaturesForAddress':
        return getSignaturesForAddress(params);
      case 'getProgramAccounts': {
        const cfg = accountConfig(method, params[1]);
        checkMinContext(configAt(method, params, 1), tip());
        if (typeof params[0] !== 'string') throw new RpcError(-32602, `Invalid params: program id (params[0]) must be a base58 string, got ${JSON.stringify(params[0])}`);
        if (params[0] !== ACCOUNT_COMPRESSION_PROGRAM_ID) return [];
        return [...treeAccounts].map(([pubkey, data]) => ({ pubkey, account: accountJson(data, cfg) }));
      }
      case 'getAccountInfo': {
        const cfg = accountConfig(method, params[1]);
        const slot = tip();
        checkMinContext(configAt(method, params, 1), slot);
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

  // Request counters and the rate limit.
  let counters: RpcStats = { requests: {}, totalRequests: 0, batches: 0, rateLimited: 0 };
  const bucket = rps > 0 ? new TokenBucket(rps) : null;
  const errorText = (id: unknown, code: number, message: string, data?: unknown) =>
    JSON.stringify({ jsonrpc: '2.0', error: data === undefined ? { code, message } : { code, message, data }, id: id ?? null });

  /** One request object of a POST: its response text (or a Promise of it). */
  const answer = (msg: unknown): string | Promise<string> => {
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg) || typeof (msg as { method?: unknown }).method !== 'string') {
      return errorText((msg as { id?: unknown } | null)?.id, -32600, 'Invalid Request');
    }
    const { id = null, method, params } = msg as { id?: unknown; method: string; params?: unknown };
    counters.requests[method] = (counters.requests[method] ?? 0) + 1;
    counters.totalRequests++;
    const fail = (err: unknown) => {
      const e = err as Error;
      return err instanceof RpcError ? errorText(id, err.code, err.message, err.data) : errorText(id, -32603, `Internal error: ${e?.message ?? String(err)}`);
    };
    const succeed = (result: unknown) => `{"jsonrpc":"2.0","result":${result instanceof RawJson ? result.text : JSON.stringify(result)},"id":${JSON.stringify(id)}}`;
    try {
      const result = handle(method, Array.isArray(params) ? params : []);
      return result instanceof Promise ? result.then(succeed, fail) : succeed(result);
    } catch (err) {
      return fail(err);
    }
  };

  /** A POST body → HTTP status, headers and body. */
  const answerBody = async (body: string): Promise<{ status: number; headers: Record<string, string>; text: string }> => {
    const json = { 'content-type': 'application/json' };
    let msg: unknown;
    try {
      msg = JSON.parse(body);
    } catch (err) {
      return { status: 200, headers: json, text: errorText(null, -32700, `Parse error: ${(err as Error).message}`) };
    }
    const batch = Array.isArray(msg);
    const n = batch ? Math.max(1, (msg as unknown[]).length) : 1;
    if (bucket) {
      const t = bucket.take(n);
      if (!t.ok) {
        counters.rateLimited++;
        return { status: 429, headers: { ...json, 'retry-after': String(t.retryAfter) }, text: errorText(null, -32005, 'Too many requests') };
      }
    }
    if (!batch) return { status: 200, headers: json, text: await answer(msg) };
    const list = msg as unknown[];
    if (list.length === 0) return { status: 200, headers: json, text: errorText(null, -32600, 'Invalid Request') };
    counters.batches++;
    const texts = await Promise.all(list.map(answer));
    return { status: 200, headers: json, text: `[${texts.join(',')}]` };
  };

  // Control routes (module comment): `METHOD path` → handler of the parsed JSON body.
  const routes = new Map<string, (body: unknown) => unknown>();
  const pause = () => {
    frozen ??= tip();
    return frozen;
  };
  const resume = () => {
    if (frozen !== null) {
      // The chain's clock is ahead of the frozen tip by the pause: read it that much back from now on.
      const at = frozen;
      frozen = null;
      offset = 0;
      offset = Math.max(0, tip() - at);
    }
    return tip();
  };
  routes.set('POST /pause', () => ({ paused: true, slot: pause() }));
  routes.set('POST /resume', () => ({ paused: false, slot: resume() }));
  const serveRoute = (handler: (body: unknown) => unknown, text: string, res: ServerResponse) => {
    const send = (status: number, v: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(v));
    };
    Promise.resolve()
      .then(() => handler(text.trim() === '' ? undefined : JSON.parse(text)))
      .then(
        (v) => send(200, v ?? null),
        (err: Error) => send(err instanceof RangeError || err instanceof SyntaxError ? 400 : 500, { error: err?.message ?? String(err) }),
      );
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const route = routes.get(`${req.method} ${path}`);
    if (route) {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => (text += d));
      req.on('end', () => serveRoute(route, text, res));
      return;
    }
    if (req.method === 'GET') {
      if (path === '/stats') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ profile, slot: tip(), paused: frozen !== null, ...counters, chain: chain.stats() }));
      } else if (path === '/health') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found');
      }
      req.resume();
      return;
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      answerBody(body).then(
        (r) => {
          res.writeHead(r.status, r.headers);
          res.end(r.text);
        },
        (err) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(errorText(null, -32603, `Internal error: ${(err as Error)?.message}`));
        },
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8899, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : (opts.port ?? 8899);
  const url = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  if (profile === 'sparse') {
    const st = chain.stats();
    opts.log?.info(
      { url, profile, slotMs, tip: tip(), lightTransactions: st.lightTransactions, lightSlots: st.keptBlocks, historyMs: st.historyMs, heapMb: Math.round(process.memoryUsage().heapUsed / 1e6), rps: rps || undefined },
      'Solana RPC simulator listening',
    );
  } else {
    opts.log?.info({ url, profile, slotMs, keepSlots, rps: rps || undefined }, 'Solana RPC simulator listening');
  }

  // onSlot: one ticker while someone listens, announcing each produced slot once, in order.
  const listeners = new Set<(slot: number) => void>();
  let announced = -1;
  let ticker: ReturnType<typeof setInterval> | null = null;
  const tick = () => {
    const tipNow = tip();
    for (let s = announced + 1; s <= tipNow && listeners.size; s++) {
      announced = s;
      if (!chain.produced(s)) continue;
      for (const l of [...listeners]) {
        try {
          l(s);
        } catch (err) {
          opts.log?.error({ err, slot: s }, 'simulator: an onSlot listener threw');
        }
      }
    }
  };
  let closing: Promise<void> | null = null;

  return {
    server,
    url,
    profile,
    slot: () => tip(),
    tipSlot: () => tip(),
    stats: () => chain.stats(),
    rpcStats: () => ({ ...counters, requests: { ...counters.requests } }),
    resetRpcStats: () => {
      counters = { requests: {}, totalRequests: 0, batches: 0, rateLimited: 0 };
    },
    async blockJson(slot) {
      if (slot > tip()) throw notAvailable(slot);
      try {
        return JSON.parse(renderBlock(await chain.block(slot), 'full', true)) as Record<string, unknown>;
      } catch (err) {
        if (err instanceof RpcError && err.code === -32007) return null;
        throw err;
      }
    },
    onSlot(listener) {
      if (listeners.size === 0) {
        announced = tip();
        // Every few ms, so a gRPC server hears of a slot within that of the clock making it (its latency is measured from there).
        ticker = setInterval(tick, Math.max(1, Math.min(5, Math.floor(slotMs / 4))));
        ticker.unref?.();
      }
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && ticker) {
          clearInterval(ticker);
          ticker = null;
        }
      };
    },
    hiddenSignatures: () => chain.hidden(),
    pause,
    resume,
    paused: () => frozen !== null,
    route(method, path, handler) {
      routes.set(`${method} ${path}`, handler);
    },
    lightTransactions: () => chain.lightTransactions(),
    close: () => {
      if (ticker) clearInterval(ticker);
      ticker = null;
      listeners.clear();
      chain.close();
      closing ??= new Promise<void>((r) => {
        server.close(() => r());
        // keep-alive connections (an indexer's pooled fetch) would hold close() until they idle out (5 s)
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
