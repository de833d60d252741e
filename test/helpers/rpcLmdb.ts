/**
 * Test helpers for the LMDB-backed API: stores indexed from the reference fixtures the way Photon's
 * harness does it (photon.md §4.2), a JSON-RPC caller over fastify.inject, and a fake Solana RPC
 * (node:http on 127.0.0.1) answering getTransaction from fixture files.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadTreeRegistry } from '../../src/config/trees.ts';
import { loadTransactionFiles } from '../../src/ingest/sources/files.ts';
import { Indexer } from '../../src/ingest/indexer.ts';
import { DEFAULT_METHOD_CONFIG, type RpcContext, type ValidityProver } from '../../src/rpc/context.ts';
import { LmdbDataSource, type LmdbDataSourceOptions } from '../../src/rpc/lmdbDataSource.ts';
import { buildServer } from '../../src/rpc/http/server.ts';
import { decodeBlockJson } from '../../src/solana/decode.ts';
import { Store } from '../../src/store/store.ts';
import type { BlockInfo, TransactionInfo } from '../../src/types.ts';
import { PHOTON_DIR, tempDir, txFiles } from './photon.ts';

export const registry = loadTreeRegistry();

/** The empty block at slot 0 Photon's harness indexes first, optionally carrying `txs`. */
export const slot0 = (txs: TransactionInfo[] = []): BlockInfo => ({ slot: 0, parentSlot: 0, blockTime: 0, blockHeight: 0, blockhash: '', previousBlockhash: '', transactions: txs });

/** Fixture stores, one per Photon test (each Photon test uses a fresh database). */
export type FixtureCase = 'e2e' | 'lamports' | 'block' | 'empty';

/** The getTransaction fixture files of a case (the lamport case uses only its three current transactions). */
export function fixtureFiles(c: 'e2e' | 'lamports'): string[] {
  return c === 'e2e' ? txFiles('e2e_mint_and_transfer_transactions') : txFiles('lamport_transfers', ['5NLdbq', '4TFBPy', 'QBrbAZ']);
}

export const BLOCK_SLOT = 270893658;

/**
 * A fresh store indexed like Photon's harness: the slot-0 block, then the case's transactions at
 * slot 0 (one batch); `block` indexes the getBlock fixture at its own slot; `empty` only the slot-0 block.
 */
export function fixtureStore(c: FixtureCase): Store {
  const store = new Store({ path: tempDir('refract-rpc-') });
  const indexer = new Indexer(store, registry);
  if (c === 'block') {
    const json = JSON.parse(readFileSync(join(PHOTON_DIR, 'blocks/get_lanon_voting_signatures', String(BLOCK_SLOT)), 'utf8'));
    const r = indexer.indexBlocks([decodeBlockJson(json, BLOCK_SLOT)]);
    if (r.rejected.length) throw new Error(`block fixture rejected: ${JSON.stringify(r.rejected)}`);
    return store;
  }
  indexer.indexBlocks([slot0()]);
  if (c !== 'empty') {
    const txs = loadTransactionFiles(fixtureFiles(c)).map((f) => f.transaction);
    const r = indexer.indexBlocks([slot0(txs)]);
    if (r.rejected.length) throw new Error(`fixture rejected: ${JSON.stringify(r.rejected)}`);
  }
  return store;
}

/** An API server (not listening) on `store` with an LMDB data source. */
export function lmdbServer(
  store: Store,
  opts: { dataOptions?: LmdbDataSourceOptions; prover?: (data: LmdbDataSource) => ValidityProver; solanaSlot?: number } = {},
): { app: FastifyInstance; data: LmdbDataSource; ctx: RpcContext } {
  const data = new LmdbDataSource(store, registry, opts.dataOptions);
  const ctx: RpcContext = {
    data,
    getSolanaSlot: async () => opts.solanaSlot ?? Number(data.getIndexedSlot() ?? 0),
    prover: opts.prover?.(data),
    config: { ...DEFAULT_METHOD_CONFIG },
  };
  const app = buildServer(ctx, { logLevel: 'silent', rateLimit: false, env: {} });
  return { app, data, ctx };
}

/**
 * A validity "prover" that computes every public input from the store (src/query/validityProofPaths.ts)
 * and returns a dummy all-zero proof (null in V2 when nothing needs proving): the Groth16 prover is
 * not wired into the API yet, so only roots, root indices, leaf indices, leaves and trees are real.
 */
export function stubProver(data: LmdbDataSource): ValidityProver {
  return {
    async getValidityProof(request, mode) {
      const { paths } = data.validityProofPaths(request, mode);
      const needsProver = paths.accounts.some((a) => !a.proveByIndex) || paths.addresses.length > 0;
      const dummy = { a: new Uint8Array(32), b: new Uint8Array(64), c: new Uint8Array(32) };
      return data.validityProofRecord(paths, mode === 'v2' && !needsProver ? null : dummy);
    },
  };
}

/** A JSON-RPC reply: the raw body and its parsed form. */
export interface RpcReply {
  status: number;
  text: string;
  body: any;
  /** The `result` text exactly as sent. */
  resultText: string;
}

/** POSTs one JSON-RPC call through fastify.inject. */
export async function rpcCall(app: FastifyInstance, method: string, params?: unknown): Promise<RpcReply> {
  const res = await app.inject({
    method: 'POST',
    url: '/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 'test-account', method, ...(params === undefined ? {} : { params }) }),
  });
  const body = JSON.parse(res.body);
  const start = res.body.indexOf('"result":');
  return { status: res.statusCode, text: res.body, body, resultText: start < 0 ? '' : res.body.slice(start + '"result":'.length, -1) };
}

/** `result` of a call, failing with the error message when there is none. */
export async function rpcResult(app: FastifyInstance, method: string, params?: unknown): Promise<any> {
  const r = await rpcCall(app, method, params);
  if (!('result' in r.body)) throw new Error(`${method}: ${r.status} ${r.text}`);
  return r.body.result;
}

/**
 * Pages a cursor method to the end with `limit`, returning every item in order.
 * `items` picks the list out of `value` (default `value.items`).
 */
export async function pageAll(
  app: FastifyInstance,
  method: string,
  params: Record<string, unknown>,
  limit: number,
  opts: { items?: (value: any) => any[]; between?: () => void | Promise<void>; maxPages?: number } = {},
): Promise<any[]> {
  const pick = opts.items ?? ((v: any) => v.items);
  const out: any[] = [];
  let cursor: string | null = null;
  for (let page = 0; ; page++) {
    if (page > (opts.maxPages ?? 100_000)) throw new Error(`${method}: too many pages`);
    const res = await rpcResult(app, method, { ...params, limit, ...(cursor === null ? {} : { cursor }) });
    const items = pick(res.value);
    out.push(...items);
    cursor = res.value.cursor;
    if (cursor === null) return out;
    if (items.length !== limit) throw new Error(`${method}: a page with a cursor has ${items.length} items, limit ${limit}`);
    await opts.between?.();
  }
}

/**
 * A fake Solana JSON-RPC on 127.0.0.1 answering `getTransaction` with the fixture file named by the
 * signature (the file text spliced verbatim as `result`), `null` for unknown signatures, and `getSlot`.
 */
export async function fakeSolana(dirs: string[], slot = 0): Promise<{ url: string; server: Server; calls: string[]; close(): Promise<void> }> {
  const files = new Map<string, string>();
  for (const d of dirs) for (const f of readdirSync(d)) files.set(f, join(d, f));
  const calls: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const msg = JSON.parse(body) as { id: unknown; method: string; params: unknown[] };
      calls.push(msg.method);
      let result = 'null';
      if (msg.method === 'getTransaction') {
        const file = files.get(String(msg.params[0]));
        if (file) result = readFileSync(file, 'utf8').trim();
      } else if (msg.method === 'getSlot') result = String(slot);
      res.setHeader('content-type', 'application/json');
      res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${result}}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, server, calls, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
