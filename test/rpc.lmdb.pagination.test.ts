/**
 * Pagination and snapshot-consistency properties of the LMDB-backed API, on synthetic but valid Light
 * transactions (src/sim/generator.ts) indexed into a store and queried over HTTP (fastify.inject):
 *
 * 1. On a fixed store, paging every cursor method with limits 1, 2, 3, 7 and 1000 returns exactly the
 *    list an independent oracle computes (every item once, in the documented order).
 * 2. While new blocks are indexed between page requests, a paged listing never repeats an item, stays
 *    in order, contains every item that existed (unchanged) from the first to the last page, and only
 *    items that existed at some point.
 * 3. `snapshot()` pins one read transaction: the context slot and the data stay consistent while a
 *    block is committed meanwhile.
 *
 * The oracle replays the same StateUpdates (parse + prepare, the pure part of ingest) into plain maps
 * and sorts with plain comparisons; it shares no code with the store's indexes or the data source.
 */
import bs58 from 'bs58';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Indexer } from '../src/ingest/indexer.ts';
import { parseTransaction } from '../src/light/parser.ts';
import type { TokenData } from '../src/light/tokenData.ts';
import { GET_TRANSACTION_CONCURRENCY, jsonRpcResultText, SolanaTransactionSource } from '../src/solana/transactionSource.ts';
import { LightTxGenerator } from '../src/sim/generator.ts';
import { decodeBlockJson } from '../src/solana/decode.ts';
import { deriveStateUpdate } from '../src/state/stateUpdate.ts';
import type { AccountRecord } from '../src/store/records.ts';
import { Store } from '../src/store/store.ts';
import { asHash, asPubkey, type BlockInfo } from '../src/types.ts';
import { startLocalNode } from './helpers/localNode.ts';
import { tempDir } from './helpers/photon.ts';
import { lmdbServer, pageAll, registry, rpcResult } from './helpers/rpcLmdb.ts';

const LIMITS = [1, 2, 3, 7, 1000];
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const cmp = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b);
const d58 = (s: string) => bs58.decode(s);

/** Plain-map model of the indexed state, fed with the same StateUpdates as the indexer. */
class Oracle {
  accounts = new Map<string, { a: AccountRecord; token: TokenData | null; spent: boolean }>();
  tokenBalances = new Map<string, { owner: Uint8Array; mint: Uint8Array; balance: bigint }>();
  sigs = new Map<string, Map<string, { slot: number; sig: Uint8Array }>>();
  compression = new Map<string, { slot: number; sig: Uint8Array }>();

  private link(key: string, slot: number, sig: Uint8Array) {
    let m = this.sigs.get(key);
    if (!m) this.sigs.set(key, (m = new Map()));
    m.set(hex(sig), { slot, sig });
  }

  private addToken(owner: Uint8Array, mint: Uint8Array, delta: bigint) {
    const k = hex(owner) + hex(mint);
    const row = this.tokenBalances.get(k) ?? { owner, mint, balance: 0n };
    row.balance += delta;
    this.tokenBalances.set(k, row);
  }

  apply(block: BlockInfo) {
    for (const tx of block.transactions) {
      const u = deriveStateUpdate(parseTransaction(tx, block.slot), registry);
      const sig = d58(u.signature);
      const touched: { a: AccountRecord; token: TokenData | null }[] = [];
      for (const o of u.outputs) {
        if (this.accounts.has(hex(o.account.hash))) continue;
        this.accounts.set(hex(o.account.hash), { a: o.account, token: o.token, spent: false });
        if (o.token) this.addToken(o.token.owner, o.token.mint, o.token.amount);
      }
      for (const h of u.inputs) {
        const e = this.accounts.get(hex(h));
        if (!e) continue;
        touched.push(e);
        if (!e.spent && e.token) this.addToken(e.token.owner, e.token.mint, -e.token.amount);
        e.spent = true;
      }
      for (const o of u.outputs) touched.push({ a: o.account, token: o.token });
      for (const t of touched) {
        this.link(`owner:${hex(t.a.owner)}`, block.slot, sig);
        if (t.token) this.link(`tokenOwner:${hex(t.token.owner)}`, block.slot, sig);
      }
      if (u.recordTransaction && u.usesCompression) this.compression.set(hex(sig), { slot: block.slot, sig });
    }
  }

  unspent() {
    return [...this.accounts.values()].filter((e) => !e.spent);
  }
  accountsByOwner(owner: Uint8Array): string[] {
    return this.unspent()
      .filter((e) => cmp(e.a.owner, owner) === 0)
      .sort((x, y) => x.a.leafIndex - y.a.leafIndex || cmp(x.a.hash, y.a.hash))
      .map((e) => bs58.encode(e.a.hash));
  }
  tokenAccountsByOwner(owner: Uint8Array, mint?: Uint8Array): string[] {
    return this.unspent()
      .filter((e) => e.token && cmp(e.token.owner, owner) === 0 && (!mint || cmp(e.token.mint, mint) === 0))
      .sort((x, y) => cmp(x.token!.mint, y.token!.mint) || cmp(x.a.hash, y.a.hash))
      .map((e) => bs58.encode(e.a.hash));
  }
  balancesOf(owner: Uint8Array) {
    return [...this.tokenBalances.values()]
      .filter((r) => cmp(r.owner, owner) === 0)
      .sort((x, y) => cmp(x.mint, y.mint))
      .map((r) => ({ mint: bs58.encode(r.mint), balance: Number(r.balance) }));
  }
  holdersOf(mint: Uint8Array) {
    return [...this.tokenBalances.values()]
      .filter((r) => cmp(r.mint, mint) === 0)
      .sort((x, y) => (x.balance === y.balance ? cmp(x.owner, y.owner) : x.balance > y.balance ? -1 : 1))
      .map((r) => ({ owner: bs58.encode(r.owner), balance: Number(r.balance) }));
  }
  mints(): Uint8Array[] {
    const m = new Map<string, Uint8Array>();
    for (const r of this.tokenBalances.values()) m.set(hex(r.mint), r.mint);
    return [...m.values()].sort(cmp);
  }
  signatures(key: string | null): string[] {
    const rows = key === null ? [...this.compression.values()] : [...(this.sigs.get(key)?.values() ?? [])];
    return rows.sort((x, y) => y.slot - x.slot || cmp(y.sig, x.sig)).map((r) => bs58.encode(r.sig));
  }
}

/** A store, its indexer, a generator and the oracle, advanced block by block. */
class World {
  readonly store = new Store({ path: tempDir('refract-paging-') });
  readonly indexer = new Indexer(this.store, registry);
  readonly gen: LightTxGenerator;
  readonly oracle = new Oracle();
  slot = 0;
  constructor(seed: number, readonly owners: number) {
    this.gen = new LightTxGenerator({ owners, seed });
  }
  /** Generates, indexes and models one block of `txs` transactions. */
  step(txs: number): void {
    this.slot++;
    const block = decodeBlockJson(this.gen.block(this.slot, txs).json, this.slot);
    const r = this.indexer.indexBlocks([block]);
    expect(r.rejected).toEqual([]);
    this.oracle.apply(block);
  }
  owner(i: number): Uint8Array {
    return this.gen.owner(i);
  }
}

/** A cursor method's listing: method, params, the oracle's expected identities, and how to identify / order returned items. */
interface Listing {
  name: string;
  method: string;
  params: Record<string, unknown>;
  expected: () => unknown[];
  id: (item: any) => unknown;
  items?: (value: any) => any[];
  /** Sort key of a returned item (compared with `order`); undefined for listings with a mutable key. */
  order?: (a: any, b: any) => number;
}

function listings(w: World): Listing[] {
  const out: Listing[] = [];
  const sigOrder = (a: any, b: any) => b.slot - a.slot || cmp(d58(b.signature), d58(a.signature));
  for (let i = 0; i < w.owners; i++) {
    const o = w.owner(i);
    const owner = bs58.encode(o);
    out.push({
      name: `accounts of owner ${i}`,
      method: 'getCompressedAccountsByOwner',
      params: { owner },
      expected: () => w.oracle.accountsByOwner(o),
      id: (a) => a.hash,
      order: (a, b) => a.leafIndex - b.leafIndex || cmp(d58(a.hash), d58(b.hash)),
    });
    out.push({
      name: `accounts V2 of owner ${i}`,
      method: 'getCompressedAccountsByOwnerV2',
      params: { owner },
      expected: () => w.oracle.accountsByOwner(o),
      id: (a) => a.hash,
      order: (a, b) => a.leafIndex - b.leafIndex || cmp(d58(a.hash), d58(b.hash)),
    });
    out.push({
      name: `token accounts of owner ${i}`,
      method: 'getCompressedTokenAccountsByOwner',
      params: { owner },
      expected: () => w.oracle.tokenAccountsByOwner(o),
      id: (t) => t.account.hash,
      order: (a, b) => cmp(d58(a.tokenData.mint), d58(b.tokenData.mint)) || cmp(d58(a.account.hash), d58(b.account.hash)),
    });
    const mint = w.oracle.mints()[i % Math.max(1, w.oracle.mints().length)];
    if (mint) {
      out.push({
        name: `token accounts of owner ${i}, one mint`,
        method: 'getCompressedTokenAccountsByOwnerV2',
        params: { owner, mint: bs58.encode(mint) },
        expected: () => w.oracle.tokenAccountsByOwner(o, mint),
        id: (t) => t.account.hash,
        order: (a, b) => cmp(d58(a.account.hash), d58(b.account.hash)),
      });
    }
    out.push({
      name: `token balances of owner ${i}`,
      method: 'getCompressedTokenBalancesByOwner',
      params: { owner },
      expected: () => w.oracle.balancesOf(o),
      id: (b) => b,
      items: (v) => v.token_balances,
      order: (a, b) => cmp(d58(a.mint), d58(b.mint)),
    });
    out.push({
      name: `signatures of owner ${i}`,
      method: 'getCompressionSignaturesForOwner',
      params: { owner },
      expected: () => w.oracle.signatures(`owner:${hex(o)}`),
      id: (s) => s.signature,
      order: sigOrder,
    });
    out.push({
      name: `signatures of token owner ${i}`,
      method: 'getCompressionSignaturesForTokenOwner',
      params: { owner },
      expected: () => w.oracle.signatures(`tokenOwner:${hex(o)}`),
      id: (s) => s.signature,
      order: sigOrder,
    });
  }
  for (const mint of w.oracle.mints()) {
    out.push({ name: `holders of ${bs58.encode(mint).slice(0, 6)}`, method: 'getCompressedMintTokenHolders', params: { mint: bs58.encode(mint) }, expected: () => w.oracle.holdersOf(mint), id: (h) => h });
  }
  out.push({ name: 'latest compression signatures', method: 'getLatestCompressionSignatures', params: {}, expected: () => w.oracle.signatures(null), id: (s) => s.signature, order: sigOrder });
  return out;
}

describe('paging on a fixed store returns every item exactly once, in order', () => {
  const w = new World(7, 4);
  let app: FastifyInstance;
  beforeAll(() => {
    for (let i = 0; i < 25; i++) w.step(12);
    app = lmdbServer(w.store).app;
  });
  afterAll(async () => {
    await app.close();
    await w.store.close();
  });

  it('the generated state is rich enough to exercise paging', () => {
    expect(w.oracle.unspent().length).toBeGreaterThan(150);
    expect(w.oracle.mints().length).toBeGreaterThan(1);
    expect(w.oracle.signatures(null).length).toBeGreaterThan(250);
    for (let i = 0; i < w.owners; i++) expect(w.oracle.tokenAccountsByOwner(w.owner(i)).length).toBeGreaterThan(3);
  });

  for (const limit of LIMITS) {
    it(`limit ${limit}`, async () => {
      for (const l of listings(w)) {
        const got = await pageAll(app, l.method, l.params, limit, { items: l.items });
        expect(got.map(l.id), `${l.name}, limit ${limit}`).toEqual(l.expected());
      }
    });
  }

  it('balances by owner equal the sum of the listed accounts; holders sum to the minted supply', async () => {
    for (let i = 0; i < w.owners; i++) {
      const owner = bs58.encode(w.owner(i));
      const items = await pageAll(app, 'getCompressedAccountsByOwner', { owner }, 1000);
      const sum = items.reduce((s, a) => s + BigInt(a.lamports), 0n);
      expect(BigInt((await rpcResult(app, 'getCompressedBalanceByOwner', { owner })).value)).toBe(sum);
    }
  });

  it('a Photon-style cursor of an unknown hash falls back to `hash > cursor`', async () => {
    const owner = bs58.encode(w.owner(0));
    const all = await pageAll(app, 'getCompressedAccountsByOwner', { owner }, 1000);
    const floor = new Uint8Array(32).fill(0x20); // below the BN254 modulus, not an account hash
    const res = await rpcResult(app, 'getCompressedAccountsByOwner', { owner, cursor: bs58.encode(floor), limit: 1000 });
    expect(res.value.items.map((a: any) => a.hash)).toEqual(all.filter((a) => cmp(d58(a.hash), floor) > 0).map((a) => a.hash));
  });
});

describe('paging while blocks are indexed between page requests', () => {
  for (const limit of [1, 2, 3, 7]) {
    it(`limit ${limit}: no item twice, in order, every item present throughout, nothing invented`, async () => {
      const w = new World(100 + limit, 3);
      for (let i = 0; i < 12; i++) w.step(10);
      const { app } = lmdbServer(w.store);
      try {
        for (const l of listings(w).filter((x) => x.order)) {
          const idKey = (v: unknown) => JSON.stringify(v);
          const start = new Set(l.expected().map(idKey));
          const seen = new Set(start);
          let blocks = 0;
          const got = await pageAll(app, l.method, l.params, limit, {
            items: l.items,
            // A few blocks between the first page requests (a growing tail would otherwise be chased for long).
            between: () => {
              if (blocks++ >= 6) return;
              w.step(2);
              for (const x of l.expected()) seen.add(idKey(x));
            },
          });
          const end = new Set(l.expected().map(idKey));
          // Balances are identified by mint here (their amounts move while paging).
          const ident = l.method === 'getCompressedTokenBalancesByOwner' ? (x: any) => x.mint : l.id;
          const gotIds = got.map((x) => idKey(ident(x)));
          const norm = (s: Set<string>) => new Set([...s].map((k) => (l.method === 'getCompressedTokenBalancesByOwner' ? JSON.stringify(JSON.parse(k).mint) : k)));
          expect(new Set(gotIds).size, `${l.name}: duplicates`).toBe(gotIds.length);
          for (let i = 1; i < got.length; i++) expect(l.order!(got[i - 1], got[i]), `${l.name}: order at ${i}`).toBeLessThan(0);
          const [startN, endN, seenN, gotN] = [norm(start), norm(end), norm(seen), new Set(gotIds)];
          for (const k of startN) if (endN.has(k)) expect(gotN.has(k), `${l.name}: missing ${k}`).toBe(true);
          for (const k of gotN) expect(seenN.has(k), `${l.name}: never existed ${k}`).toBe(true);
        }
      } finally {
        await app.close();
        await w.store.close();
      }
    });
  }
});

describe('snapshot consistency', () => {
  it('a pinned snapshot keeps its slot and data while a block is committed', async () => {
    const w = new World(3, 2);
    for (let i = 0; i < 3; i++) w.step(10);
    const { data } = lmdbServer(w.store);
    const owner = asPubkey(w.owner(0));
    await data.snapshot(async (view) => {
      const slot = await view.getIndexedSlot();
      const balance = await view.getOwnerBalance(owner);
      const sigs = await view.listSignatures({ kind: 'latest', compressionOnly: true }, { before: null, limit: 1000 });
      const unspentBefore = w.oracle.unspent().map((e) => e.a.hash);
      await new Promise((r) => setTimeout(r, 5)); // cross a macrotask: the txn stays pinned
      w.step(20);
      // The fresh source sees the new block …
      expect(data.getIndexedSlot()).toBe(BigInt(w.slot));
      const fresh = data.listSignatures({ kind: 'latest', compressionOnly: true }, { before: null, limit: 1000 });
      expect(fresh.length).toBeGreaterThan(sigs.length);
      const spentMeanwhile = unspentBefore.filter((h) => w.oracle.accounts.get(hex(h))!.spent);
      expect(spentMeanwhile.length).toBeGreaterThan(0);
      // … the pinned view does not (range reads and point reads alike).
      expect(await view.getIndexedSlot()).toBe(slot);
      expect(await view.getOwnerBalance(owner)).toBe(balance);
      expect(await view.listSignatures({ kind: 'latest', compressionOnly: true }, { before: null, limit: 1000 })).toEqual(sigs);
      for (const h of spentMeanwhile) {
        expect(await view.getAccountByHash(asHash(h))).not.toBeNull();
        expect(data.getAccountByHash(h)).toBeNull();
      }
    });
    await w.store.close();
  });
});

describe('dispatcher snapshots', () => {
  it('data methods run on one pinned snapshot; methods waiting on Solana / the prover do not pin', async () => {
    const w = new World(5, 2);
    w.step(5);
    const { app, data } = lmdbServer(w.store);
    const pinned: boolean[] = [];
    const original = data.snapshot.bind(data);
    data.snapshot = (fn) => original((view) => (pinned.push(true), fn(view)));
    const owner = bs58.encode(w.owner(0));
    await rpcResult(app, 'getCompressedAccountsByOwner', { owner });
    await rpcResult(app, 'getCompressionSignaturesForOwner', { owner });
    expect(pinned).toHaveLength(2);
    await rpcResult(app, 'getIndexerHealth');
    expect(pinned).toHaveLength(2);
    await app.close();
    await w.store.close();
  });
});

describe('jsonRpcResultText', () => {
  it('returns the raw text of the top-level result member', () => {
    expect(jsonRpcResultText('{"jsonrpc":"2.0","result":{"a":10.0,"b":[1,{"c":"}\\"]"}]},"id":1}')).toBe('{"a":10.0,"b":[1,{"c":"}\\"]"}]}');
    expect(jsonRpcResultText('{ "id" : {"result": 1} , "result" : 123456789012345678901 }')).toBe('123456789012345678901');
    expect(jsonRpcResultText('{"result":null}')).toBe('null');
    expect(jsonRpcResultText('{"error":{"code":1}}')).toBeUndefined();
  });
});

describe('SolanaTransactionSource', () => {
  it(`keeps at most ${GET_TRANSACTION_CONCURRENCY} getTransaction requests in flight at the node; the others wait their turn and all answer verbatim`, async () => {
    let inFlight = 0;
    let most = 0;
    const node = await startLocalNode((msg: { id: number; params: [string] }, res) => {
      inFlight++;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight--;
        res.setHeader('content-type', 'application/json');
        res.end(`{"jsonrpc":"2.0","result":{"signature":"${msg.params[0]}","fee":10.0},"id":${msg.id}}`);
      }, 10);
    });
    try {
      const source = new SolanaTransactionSource(node.url);
      const sigs = Array.from({ length: 200 }, (_, i) => `sig${i}`);
      const answers = await Promise.all(sigs.map((s) => source.getTransaction(s)));
      expect(answers).toEqual(sigs.map((s) => `{"signature":"${s}","fee":10.0}`));
      expect(most).toBeLessThanOrEqual(GET_TRANSACTION_CONCURRENCY);
      expect(most).toBeGreaterThan(1);
    } finally {
      await node.close();
    }
  });
});
