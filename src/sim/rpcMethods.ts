/**
 * The simulator's JSON-RPC methods over its chain (simulator.ts module comment lists them): params
 * checked as agave checks them (RpcError with agave's codes), answers in agave's shapes, kept blocks
 * and transactions written out as JSON text (`RawJson`).
 */
import * as base58 from '../solana/base58.ts';
import { type TreeEntry, defaultTreeEntries } from '../config/trees.ts';
import { ACCOUNT_COMPRESSION_PROGRAM_ID, DEFAULT_TREE_OWNER } from '../light/constants.ts';
import { type QueueKind, encodeTreeAccount } from '../light/treeAccounts.ts';
import { type Chain, type ChainBlock, RpcError, notAvailable, posOf } from './chain.ts';
import type { SlotClock } from './slotClock.ts';

/** getSignaturesForAddress's largest `limit` (agave MAX_GET_CONFIRMED_SIGNATURES_FOR_ADDRESS2_LIMIT). */
const MAX_SIGNATURES_LIMIT = 1000;

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

/** A result that is JSON text already (a kept block or transaction), written into the response as is. */
export class RawJson {
  constructor(readonly text: string) {}
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

/** -32016 when the node has not reached `minContextSlot` (agave MinContextSlotNotReached). */
function checkMinContext(cfg: Record<string, unknown>, tip: number): void {
  const m = cfg.minContextSlot;
  if (m === undefined || m === null) return;
  if (typeof m !== 'number' || !Number.isSafeInteger(m) || m < 0) throw new RpcError(-32602, `Invalid params: minContextSlot must be a non-negative integer, got ${JSON.stringify(m)}`);
  if (tip < m) throw new RpcError(-32016, 'Minimum context slot has not been reached', { contextSlot: tip });
}

/** getBlock's JSON text of a block. */
export function renderBlock(b: ChainBlock, details: 'full' | 'signatures' | 'none', rewards: boolean): string {
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
}

/** getAccountInfo's account JSON of `data` (base64, optional dataSlice). */
function accountJson(data: Uint8Array, cfg: { dataSlice?: { offset: number; length: number } }) {
  const d = cfg.dataSlice ? data.subarray(cfg.dataSlice.offset, cfg.dataSlice.offset + cfg.dataSlice.length) : data;
  return { data: [Buffer.from(d).toString('base64'), 'base64'], executable: false, lamports: 1_000_000_000, owner: ACCOUNT_COMPRESSION_PROGRAM_ID, rentEpoch: 0, space: data.length };
}

/** The JSON-RPC methods of one simulator. */
export class SimRpcMethods {
  private readonly treeAccounts = simulatedTreeAccounts();

  /** `withIndex`: getTransaction carries agave 4.x's `transactionIndex`. */
  constructor(
    private readonly chain: Chain,
    private readonly clock: SlotClock,
    private readonly withIndex: boolean,
  ) {}

  /**
   * The result of JSON-RPC `method` with `params` (a value, RawJson text, or a Promise of either).
   * Throws RpcError (code and message as agave's) for bad params, a block not available, an unknown method.
   */
  handle(method: string, params: unknown[]): unknown {
    switch (method) {
      case 'getSlot':
      case 'getBlockHeight': {
        const cfg = configAt(method, params, 0);
        const tipNow = this.clock.tip();
        checkMinContext(cfg, tipNow);
        const slot = commitmentOf(cfg, false) === 'finalized' ? this.clock.finalizedSlot(tipNow) : tipNow;
        return method === 'getSlot' ? slot : this.chain.blockHeight(slot);
      }
      case 'getFirstAvailableBlock':
        return this.chain.firstAvailable();
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
        if (commitmentOf(cfg, true) === 'finalized' && s > this.clock.finalizedSlot()) throw new RpcError(-32004, `Block not available for slot ${s}`);
        if (s > this.clock.tip()) throw notAvailable(s); // past a paused (or moved back) tip
        const b = this.chain.block(s);
        return b instanceof Promise ? b.then((x) => new RawJson(renderBlock(x, details, rewards))) : new RawJson(renderBlock(b, details, rewards));
      }
      case 'getTransaction': {
        const sig = params[0];
        const bytes = signatureBytes(sig);
        if (!bytes) throw new RpcError(-32602, `Invalid params: signature (params[0]) must be a base58 64-byte transaction signature, got ${JSON.stringify(sig)}`);
        const cfg = configAt(method, params, 1);
        const commitment = commitmentOf(cfg, true);
        const t = this.chain.transaction(bytes, sig as string);
        if (!t || t.slot > this.clock.tip()) return null; // unknown, pruned with its block, or past a paused tip
        if (commitment === 'finalized' && t.slot > this.clock.finalizedSlot()) return null;
        return new RawJson(`{"slot":${t.slot},"blockTime":${JSON.stringify(t.blockTime)},${t.entry.slice(1, -1)}${this.withIndex ? `,"transactionIndex":${t.index}` : ''}}`);
      }
      case 'getSignaturesForAddress':
        return this.getSignaturesForAddress(params);
      case 'getProgramAccounts': {
        const cfg = accountConfig(method, params[1]);
        checkMinContext(configAt(method, params, 1), this.clock.tip());
        if (typeof params[0] !== 'string') throw new RpcError(-32602, `Invalid params: program id (params[0]) must be a base58 string, got ${JSON.stringify(params[0])}`);
        if (params[0] !== ACCOUNT_COMPRESSION_PROGRAM_ID) return [];
        return [...this.treeAccounts].map(([pubkey, data]) => ({ pubkey, account: accountJson(data, cfg) }));
      }
      case 'getAccountInfo': {
        const cfg = accountConfig(method, params[1]);
        const slot = this.clock.tip();
        checkMinContext(configAt(method, params, 1), slot);
        const pk = params[0];
        let bytes = 0;
        try {
          bytes = typeof pk === 'string' ? base58.decode(pk).length : 0;
        } catch {
          // not base58: reported below
        }
        if (bytes !== 32) throw new RpcError(-32602, `Invalid params: pubkey (params[0]) must be a base58 32-byte pubkey, got ${JSON.stringify(pk)}`);
        const data = this.treeAccounts.get(pk as string);
        return { context: { slot }, value: data ? accountJson(data, cfg) : null };
      }
      default:
        throw new RpcError(-32601, `Method not found: ${method}`);
    }
  }

  /** getSignaturesForAddress: newest first, before / until / limit ≤ 1000, as agave. */
  private getSignaturesForAddress(params: unknown[]): unknown {
    const address = params[0];
    if (typeof address !== 'string' || base58.decode32(address) === undefined) throw new RpcError(-32602, `Invalid param: address (params[0]) must be a base58 32-byte pubkey, got ${JSON.stringify(address)}`);
    const cfg = configAt('getSignaturesForAddress', params, 1);
    const limit = cfg.limit ?? MAX_SIGNATURES_LIMIT;
    if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SIGNATURES_LIMIT) throw new RpcError(-32602, `Invalid limit; max ${MAX_SIGNATURES_LIMIT}`);
    const commitment = commitmentOf(cfg, true);
    const tipNow = this.clock.tip();
    checkMinContext(cfg, tipNow);
    const finalized = this.clock.finalizedSlot(tipNow);
    const newest = commitment === 'finalized' ? finalized : tipNow;
    const cursor = (field: 'before' | 'until') => {
      const v = cfg[field];
      if (v === undefined || v === null) return undefined;
      const bytes = signatureBytes(v);
      if (!bytes) throw new RpcError(-32602, `Invalid param: ${field} must be a base58 64-byte transaction signature, got ${JSON.stringify(v)}`);
      return this.chain.locate(bytes, v as string);
    };
    const before = cursor('before');
    const until = cursor('until');
    // As agave: an unknown `before` lists nothing; an unknown `until` walks to the first available block.
    if (before === null) return [];
    const hi = Math.min(before ?? Infinity, posOf(newest + 1, 0));
    const lo = until ?? posOf(this.chain.firstAvailable(), 0) - 1;
    const items = (ms: { signature: string; slot: number; err: unknown }[]) =>
      ms.map((m) => ({ signature: m.signature, slot: m.slot, err: m.err, memo: null, blockTime: this.chain.blockTime(m.slot), confirmationStatus: m.slot <= finalized ? 'finalized' : 'confirmed' }));
    const found = this.chain.signaturesFor(address, hi, lo, limit);
    return found instanceof Promise ? found.then(items) : items(found);
  }
}
