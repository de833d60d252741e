/**
 * getTransactionWithCompressionInfoV2 answers, for each closed account of a batched (StateV2) tree,
 * the nullifier and tx hash its input queue holds (issue #28; before, both were 1111…1111), and
 * 1111…1111 for a V1 tree's closed account (as the reference). Over the reference fixtures
 * (test/fixtures/photon) batch_append_nullify and batched_tree_transactions, each indexed
 * one transaction per block at its own slot and served with a fake Solana RPC returning the fixture
 * files; e2e_mint_and_transfer_transactions for the V1 case. The nullifier is recomputed here with
 * poseidon-lite as Poseidon(accountHash, leafIndex as a 32-byte BE u64, txHash) (photon.md §1.5) and,
 * once a BatchNullify covered the account, compared with the tree leaf the chain's new_root confirmed.
 */
import bs58 from 'bs58';
import type { FastifyInstance } from 'fastify';
import { poseidon3 } from 'poseidon-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Indexer } from '../src/ingest/indexer.ts';
import { loadTransactionFiles, type TransactionFile } from '../src/ingest/sources/files.ts';
import { parseTransaction } from '../src/light/parser.ts';
import { SolanaRpc } from '../src/solana/rpcClient.ts';
import { Store } from '../src/store/store.ts';
import type { BatchEvent, BatchPublicTransactionEvent, BlockInfo } from '../src/types.ts';
import { tempDir, txDir } from './helpers/photon.ts';
import { fakeSolana, fixtureStore, lmdbServer, registry, rpcResult } from './helpers/rpcLmdb.ts';

const HLKS5 = 'HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu';
const SMT1 = 'smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT';
const ZERO = '11111111111111111111111111111111';

const eventsOf = (f: TransactionFile) => parseTransaction(f.transaction, f.slot).events;
const batchEventOf = (f: TransactionFile): BatchEvent | undefined => eventsOf(f).flatMap((e) => (e.kind === 'batch' ? [e.event] : []))[0];
const v2EventsOf = (f: TransactionFile): BatchPublicTransactionEvent[] => eventsOf(f).flatMap((e) => (e.kind === 'batchPublicTransaction' ? [e.event] : []));
const block = (f: TransactionFile): BlockInfo => ({ slot: f.slot, parentSlot: 0, blockTime: 0, blockHeight: 0, blockhash: '', previousBlockhash: '', transactions: [f.transaction] });

/** A 32-byte big-endian value (base58) as a field element. */
const fe = (b58: string) => BigInt(`0x${Buffer.from(bs58.decode(b58)).toString('hex') || '0'}`);
/** Field element → 32-byte big-endian base58. */
const b58Of = (v: bigint) => bs58.encode(Buffer.from(v.toString(16).padStart(64, '0'), 'hex'));
/** Poseidon(accountHash, be32(leafIndex as u64), txHash), independent of src/light/hashing.ts. */
const expectedNullifier = (hash: string, leafIndex: number, txHash: string) => b58Of(poseidon3([fe(hash), BigInt(leafIndex), fe(txHash)]));

/** A closed item of the V2 answer, flattened. */
interface Closed {
  signature: string;
  hash: string;
  leafIndex: number;
  tree: string;
  nullifier: string;
  txHash: string;
}

/**
 * Indexes `folder` one transaction per block and serves it; `closedOf(sig)` calls
 * getTransactionWithCompressionInfoV2 and returns its closed accounts.
 */
function fixtureServer(folder: string) {
  const files = loadTransactionFiles([txDir(folder)]);
  const ctx = {
    files,
    store: null as unknown as Store,
    app: null as unknown as FastifyInstance,
    solana: null as unknown as Awaited<ReturnType<typeof fakeSolana>>,
    async closedOf(signature: string): Promise<Closed[]> {
      const res = await rpcResult(ctx.app, 'getTransactionWithCompressionInfoV2', { signature });
      return res.compressionInfo.closedAccounts.map((c: any) => ({
        signature,
        hash: c.account.account.hash,
        leafIndex: c.account.account.leafIndex,
        tree: c.account.account.merkleContext.tree,
        nullifier: c.account.nullifier,
        txHash: c.account.txHash,
      }));
    },
  };
  beforeAll(async () => {
    ctx.store = new Store({ path: tempDir('refract-txinfo-v2-') });
    const indexer = new Indexer(ctx.store, registry);
    for (const f of files) expect(indexer.indexBlocks([block(f)]).rejected).toEqual([]);
    ctx.solana = await fakeSolana([txDir(folder)]);
    ctx.app = lmdbServer(ctx.store, { dataOptions: { solana: new SolanaRpc(ctx.solana.url) } }).app;
  });
  afterAll(async () => {
    await ctx.app.close();
    await ctx.solana.close();
    await ctx.store.close();
  });
  return ctx;
}

/**
 * Every closed account of every user transaction of `ctx`'s folder: each in HLKs5 with the nullifier
 * recomputed here, the tx hash of the transaction's insert_into_queues (= the stored one, not zeros);
 * once nullified in the tree, the tree leaf equals that nullifier. Returns them all.
 */
async function checkAllClosed(ctx: ReturnType<typeof fixtureServer>): Promise<Closed[]> {
  const all: Closed[] = [];
  for (const f of ctx.files.filter((x) => !batchEventOf(x))) {
    const events = v2EventsOf(f);
    const closed = await ctx.closedOf(f.transaction.signature);
    const inputs = events.flatMap((e) => e.batchInputAccounts.map((b) => ({ hash: bs58.encode(b.accountHash), leafIndex: b.leafIndex, txHash: bs58.encode(e.txHash) })));
    // the answer's closed accounts are exactly the transaction's batched inputs
    expect(closed.map((c) => [c.hash, c.leafIndex]).sort()).toEqual(inputs.map((i) => [i.hash, i.leafIndex]).sort());
    for (const c of closed) {
      const input = inputs.find((i) => i.hash === c.hash)!;
      expect(c.tree).toBe(HLKS5);
      expect(c.txHash).not.toBe(ZERO);
      expect(c.nullifier).not.toBe(ZERO);
      expect(c.txHash).toBe(input.txHash);
      expect(c.nullifier).toBe(expectedNullifier(c.hash, c.leafIndex, input.txHash));
      const stored = ctx.store.read((r) => r.account(bs58.decode(c.hash))!.v2!);
      expect([bs58.encode(stored.txHash!), bs58.encode(stored.nullifier!)]).toEqual([c.txHash, c.nullifier]);
      if (stored.nullifiedInTree) {
        const leaf = ctx.store.read((r) => r.node(bs58.decode(HLKS5), BigInt(2 ** 32 + c.leafIndex)));
        expect(bs58.encode(leaf!.hash)).toBe(c.nullifier);
      }
      all.push(c);
    }
  }
  return all;
}

describe('batch_append_nullify (20 spends in HLKs5, 10 of them nullified by a BatchNullify)', () => {
  const ctx = fixtureServer('batch_append_nullify');

  it('each closed account: the stored nullifier (recomputed) and tx hash, queued or nullified in the tree', async () => {
    const closed = await checkAllClosed(ctx);
    expect(closed).toHaveLength(20);
    // input-queue order 0..19 (test/fixtures/photon/README.md): 0, 2, 4, 6, 8, 1, 5, 9, 11, 13, 3, 10, 12, 16, 18, 7, 15, 19, 21, 23
    expect(closed.map((c) => c.leafIndex)).toEqual([0, 2, 4, 6, 8, 1, 5, 9, 11, 13, 3, 10, 12, 16, 18, 7, 15, 19, 21, 23]);
    const nullified = ctx.store.read((r) => closed.filter((c) => r.account(bs58.decode(c.hash))!.v2!.nullifiedInTree).length);
    expect(nullified).toBe(10);
    expect(new Set(closed.map((c) => c.txHash)).size).toBe(20);
  });
});

describe('batched_tree_transactions (50 spends in HLKs5, all nullified by 5 BatchNullify events)', () => {
  const ctx = fixtureServer('batched_tree_transactions');

  it('each of the 50 closed accounts (even leaves 0..98): the nullifier tree A holds at its leaf, and its tx hash', async () => {
    const closed = await checkAllClosed(ctx);
    expect(closed.map((c) => c.leafIndex)).toEqual(Array.from({ length: 50 }, (_, k) => 2 * k));
    expect(ctx.store.read((r) => closed.every((c) => r.account(bs58.decode(c.hash))!.v2!.nullifiedInTree))).toBe(true);
  });
});

describe('a V1 tree closed account (e2e_mint_and_transfer_transactions, smt1)', () => {
  const TRANSFER_TX = '5UZuijpSnqBpgMpqnggxZ58bzZ8aJtqqVjtvzx2Pg2C58jXph1rdrXyHdTxJfsHawNJyr8syU4U1MEYccDUQeTSV';
  let store: Store;
  let app: FastifyInstance;
  let solana: Awaited<ReturnType<typeof fakeSolana>>;
  beforeAll(async () => {
    store = fixtureStore('e2e');
    solana = await fakeSolana([txDir('e2e_mint_and_transfer_transactions')]);
    app = lmdbServer(store, { dataOptions: { solana: new SolanaRpc(solana.url) } }).app;
  });
  afterAll(async () => {
    await app.close();
    await solana.close();
    await store.close();
  });

  it('nullifier and txHash stay 1111…1111', async () => {
    const res = await rpcResult(app, 'getTransactionWithCompressionInfoV2', { signature: TRANSFER_TX });
    const closed = res.compressionInfo.closedAccounts;
    expect(closed.length).toBeGreaterThan(0);
    for (const c of closed) {
      expect(c.account.account.merkleContext.tree).toBe(SMT1);
      expect([c.account.nullifier, c.account.txHash]).toEqual([ZERO, ZERO]);
    }
  });
});
