/**
 * The official client (@lightprotocol/stateless.js, V2 build) against the real HTTP server on a
 * random port (startServer), checking that envelopes, result shapes and exact u64 numbers are accepted
 * as the client parses them (client.md §2.1). The Solana URL is a dead local port, so the client uses
 * its hard-coded local tree list (smt1 …) and never calls Solana.
 *
 * Main part: the LMDB data source on the reference fixtures indexed like Photon's harness (one store
 * per fixture case); every answer is checked against the fixture data (Photon's snapshots).
 * Second part: an in-memory source with values the fixtures lack (u64::MAX amounts, the 3<<56 token
 * discriminator) and the error path through the client.
 */
import { createRpc, bn, encodeBN254toBase58 } from '@lightprotocol/stateless.js';
import { PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountView, RpcContext, TreeRef } from '../src/rpc/context.ts';
import { DEFAULT_METHOD_CONFIG } from '../src/rpc/context.ts';
import { LmdbDataSource } from '../src/rpc/lmdbDataSource.ts';
import { MemoryDataSource } from './helpers/memoryDataSource.ts';
import { startServer } from '../src/rpc/http/server.ts';
import type { Store } from '../src/store/store.ts';
import { snapshot } from './helpers/photon.ts';
import { fixtureStore, registry } from './helpers/rpcLmdb.ts';

const E2E = 'e2e_mint_and_transfer_transactions';
const BOB = new PublicKey('EU57rQxcmFhJ24ApVdUy3y4MxFXcTUN3uiVeWvGgtWXu');
const CHARLES = new PublicKey('CHvwuTvTiwRSNBwAnrCG14V8YTJ6wwhHQrifxdFzHzsX');
const PAYER = new PublicKey('J6ULJViDpQTRntYTmfkpUZZ71KTVkZNJFSDcQhFCo5Ef');
const RECEIVER = new PublicKey('FLkMEA7eA82Cvp7MqamqFKsRN3E2Vfg3Xa8NRyVARq5n');
const SMT1_B58 = 'smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT';

/** Listens on a random port of 127.0.0.1 with API key `abc`; returns the server and the compression URL. */
async function listen(ctx: RpcContext, opts: { httpErrorsAs200?: boolean } = {}): Promise<{ app: FastifyInstance; url: string }> {
  const app = await startServer(ctx, { port: 0, host: '127.0.0.1', logLevel: 'silent', env: {}, apiKeys: ['abc'], ...opts });
  const addr = app.server.address();
  if (!addr || typeof addr !== 'object') throw new Error('no address');
  return { app, url: `http://127.0.0.1:${addr.port}/?api-key=abc` };
}

function lmdbContext(store: Store): RpcContext {
  const data = new LmdbDataSource(store, registry);
  return { data, getSolanaSlot: async () => 0, config: { ...DEFAULT_METHOD_CONFIG } };
}

const b58bn = (x: Parameters<typeof encodeBN254toBase58>[0]) => encodeBN254toBase58(x);
const bnOf = (hash: string) => bn(bs58.decode(hash));

describe('@lightprotocol/stateless.js against the LMDB source on the indexed fixtures', () => {
  const servers: { app: FastifyInstance; store: Store }[] = [];
  let e2e: ReturnType<typeof createRpc>;
  let lamports: ReturnType<typeof createRpc>;

  beforeAll(async () => {
    for (const c of ['e2e', 'lamports'] as const) {
      const store = fixtureStore(c);
      const { app, url } = await listen(lmdbContext(store));
      servers.push({ app, store });
      const rpc = createRpc('http://127.0.0.1:1', url, 'http://127.0.0.1:2');
      if (c === 'e2e') e2e = rpc;
      else lamports = rpc;
    }
  });
  afterAll(async () => {
    for (const { app, store } of servers) {
      await app.close();
      await store.close();
    }
  });

  it('getIndexerSlot / getIndexerHealth', async () => {
    expect(await e2e.getIndexerSlot()).toBe(0);
    expect(await e2e.getIndexerHealth()).toBe('ok');
  });

  for (const [who, owner] of [['bob', BOB], ['charles', CHARLES]] as const) {
    it(`getCompressedTokenAccountsByOwner (${who}) = the fixture token accounts`, async () => {
      const snap = snapshot(`${E2E}-${who}-accounts-v2`).value.items;
      const { items, cursor } = await e2e.getCompressedTokenAccountsByOwner(owner);
      expect(cursor).toBeNull();
      const got = items.map((t) => ({
        hash: b58bn(t.compressedAccount.hash),
        leafIndex: t.compressedAccount.leafIndex,
        tree: t.compressedAccount.treeInfo.tree.toBase58(),
        mint: t.parsed.mint.toBase58(),
        owner: t.parsed.owner.toBase58(),
        amount: t.parsed.amount.toString(),
      }));
      const want = snap.map((i: any) => ({
        hash: i.account.hash,
        leafIndex: i.account.leafIndex,
        tree: i.account.merkleContext.tree,
        mint: i.tokenData.mint,
        owner: i.tokenData.owner,
        amount: String(i.tokenData.amount),
      }));
      const byHash = (a: { hash: string }, b: { hash: string }) => (a.hash < b.hash ? -1 : 1);
      expect(got.sort(byHash)).toEqual(want.sort(byHash));
    });
  }

  it('getCompressedAccount / getMultipleCompressedAccounts (V2) = the fixture accounts; spent → null', async () => {
    const snap = [...snapshot(`${E2E}-bob-accounts-v2`).value.items, ...snapshot(`${E2E}-charles-accounts-v2`).value.items].map((i: any) => i.account);
    for (const a of snap) {
      const acc = await e2e.getCompressedAccount(undefined, bnOf(a.hash));
      expect(acc).not.toBeNull();
      expect(b58bn(acc!.hash)).toBe(a.hash);
      expect(acc!.leafIndex).toBe(a.leafIndex);
      expect(acc!.owner.toBase58()).toBe(a.owner);
      expect(acc!.lamports.toString()).toBe(String(a.lamports));
      expect(Buffer.from(acc!.data!.data).toString('base64')).toBe(a.data.data);
      expect(acc!.treeInfo.tree.toBase58()).toBe(SMT1_B58);
    }
    const many = await e2e.getMultipleCompressedAccounts(snap.map((a: any) => bnOf(a.hash)));
    expect(many.map((x) => b58bn(x.hash)).sort()).toEqual(snap.map((a: any) => a.hash).sort());
    // the minted account 38eTBd… was spent by the first transfer
    expect(await e2e.getCompressedAccount(undefined, bnOf('38eTBdRT4kdFELvNfbJbFZNvGWUvXbn3DdJn3PzMtsqJ'))).toBeNull();
  });

  it('getCompressedAccountProof / getMultipleCompressedAccountProofs (V2) = the fixture proofs', async () => {
    const snap = snapshot(`${E2E}-bob-proofs`).value;
    const check = (p: Awaited<ReturnType<typeof e2e.getCompressedAccountProof>>, want: any) => {
      expect(b58bn(p.hash)).toBe(want.hash);
      expect(p.leafIndex).toBe(want.leafIndex);
      expect(b58bn(p.root)).toBe(want.root);
      expect(p.rootIndex).toBe(want.rootSeq % 2400);
      expect(p.merkleProof.map(b58bn)).toEqual(want.proof);
      expect(p.treeInfo.tree.toBase58()).toBe(want.merkleTree);
    };
    for (const want of snap) check(await e2e.getCompressedAccountProof(bnOf(want.hash)), want);
    const many = await e2e.getMultipleCompressedAccountProofs(snap.map((p: any) => bnOf(p.hash)));
    expect(many).toHaveLength(snap.length);
    for (const p of many) check(p, snap.find((w: any) => w.hash === b58bn(p.hash)));
  });

  for (const [who, owner] of [['payer', PAYER], ['receiver', RECEIVER]] as const) {
    it(`getCompressedAccountsByOwner / getCompressedBalanceByOwner (${who}) = the fixture accounts`, async () => {
      const snap = snapshot(`lamport_transfers-${who}-accounts`).value.items;
      const { items, cursor } = await lamports.getCompressedAccountsByOwner(owner);
      expect(cursor).toBeNull();
      expect(items.map((a) => [b58bn(a.hash), a.leafIndex, a.lamports.toString()]).sort()).toEqual(
        snap.map((a: any) => [a.hash, a.leafIndex, String(a.lamports)]).sort(),
      );
      const sum = snap.reduce((n: bigint, a: any) => n + BigInt(a.lamports), 0n);
      expect((await lamports.getCompressedBalanceByOwner(owner)).toString()).toBe(sum.toString());
      if (snap.length > 1) {
        const page = await lamports.getCompressedAccountsByOwner(owner, { limit: bn(1) });
        expect(page.items).toHaveLength(1);
        const rest = await lamports.getCompressedAccountsByOwner(owner, { cursor: page.cursor!, limit: bn(1000) });
        expect([...page.items, ...rest.items].map((a) => b58bn(a.hash)).sort()).toEqual(snap.map((a: any) => a.hash).sort());
      }
    });
  }

  it('signatures', async () => {
    const sigs = await lamports.getCompressionSignaturesForOwner(PAYER);
    expect(sigs.items.map((s) => s.signature)).toEqual(snapshot('payer-lamport_transfers-signatures').value.items.map((s: any) => s.signature));
    const latest = await e2e.getLatestCompressionSignatures(undefined, 1);
    expect(latest.value.items).toHaveLength(1);
    expect(latest.value.cursor).not.toBeNull();
  });
});

// ---- in-memory source: values the fixtures do not contain, and errors --------------------------

const SMT1: TreeRef = { tree: bs58.decode(SMT1_B58), queue: bs58.decode('nfq1NvQDJ2GEgnS8zt9prAe8rjjpAW1zFkrvZoBR148'), treeType: 1 };
const CTOKEN = bs58.decode('cTokenmWW8bLPjZEBAUgYy3zKxQZW6VKi7bqNFEVv3m');
const MINT = bs58.decode('2U35cKS3Cj2xs5EBdByXYU7LaKAitqjSZc1Jnvu4iPf4');
const U64_MAX = (1n << 64n) - 1n;

function h(n: number): Uint8Array {
  const b = new Uint8Array(32);
  b[1] = 7;
  b[31] = n;
  return b;
}

function account(n: number, over: Partial<AccountView> = {}): AccountView {
  return { hash: h(n), address: null, data: null, owner: BOB.toBytes(), lamports: BigInt(n) * 1000n, leafIndex: n, seq: BigInt(n + 1), slotCreated: 40n, treeInfo: SMT1, inOutputQueue: false, ...over };
}

function memoryContext(): RpcContext {
  const d = new MemoryDataSource();
  d.slot = 42n;
  d.trees = [{ ...SMT1, height: 26, rootHistoryCapacity: 2400 }];
  d.putAccount(account(1));
  d.putAccount(account(9, { owner: CTOKEN, lamports: 0n, data: { discriminator: 3n << 56n, data: new Uint8Array(75), dataHash: h(99) } }), {
    tokenData: { mint: MINT, owner: BOB.toBytes(), amount: U64_MAX, delegate: null, state: 'initialized', tlv: null },
  });
  return { data: d, getSolanaSlot: async () => 50, config: { ...DEFAULT_METHOD_CONFIG } };
}

describe('@lightprotocol/stateless.js: edge values and errors (in-memory source)', () => {
  let app: FastifyInstance;
  let rpc: ReturnType<typeof createRpc>;
  beforeAll(async () => {
    const s = await listen(memoryContext());
    app = s.app;
    rpc = createRpc('http://127.0.0.1:1', s.url, 'http://127.0.0.1:2');
  });
  afterAll(() => app.close());

  it('token accounts keep exact u64 amounts and the 3<<56 discriminator', async () => {
    const { items } = await rpc.getCompressedTokenAccountsByOwner(BOB);
    expect(items).toHaveLength(1);
    expect(items[0]!.parsed.amount.toString()).toBe(U64_MAX.toString());
    expect(Buffer.from(items[0]!.compressedAccount.data!.discriminator)).toEqual(Buffer.from([0, 0, 0, 0, 0, 0, 0, 3]));
    const balances = await rpc.getCompressedTokenBalancesByOwnerV2(BOB);
    expect(balances.value.items[0]!.balance.toString()).toBe(U64_MAX.toString());
  });

  it('with HTTP error statuses (httpErrorsAs200 false: REFRACT_HTTP_ERRORS_AS_200=0) the client shows only the status, not the message', async () => {
    await expect(rpc.getValidityProofV0([{ hash: bn(h(1)), tree: new PublicKey(SMT1.tree), queue: new PublicKey(SMT1.queue) }], [])).rejects.toThrow(
      /HTTP error! status: 503/,
    );
  });

  it('with httpErrorsAs200 (the daemon\'s default) the client surfaces the JSON-RPC error message', async () => {
    const s = await listen(memoryContext(), { httpErrorsAs200: true });
    const client = createRpc('http://127.0.0.1:1', s.url, 'http://127.0.0.1:2');
    await expect(client.getValidityProofV0([{ hash: bn(h(1)), tree: new PublicKey(SMT1.tree), queue: new PublicKey(SMT1.queue) }], [])).rejects.toThrow(
      /Prover not available/,
    );
    await s.app.close();
  });
});
