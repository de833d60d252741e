/**
 * HTTP/JSON-RPC framework tests (fastify.inject, in-memory data source): envelope, id echo,
 * routing, a table of bad inputs with their exact status/code/message, auth, rate limits, body
 * limit, exact u64 output, OpenAPI, the httpErrorsAs200 switch, metrics and log redaction.
 */
import bs58 from 'bs58';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountView, RpcContext, TreeRef } from '../src/rpc/context.ts';
import { DEFAULT_METHOD_CONFIG } from '../src/rpc/context.ts';
import type { RequestMetrics, RpcServerOptions } from '../src/rpc/http/options.ts';
import { exactU64, rawJson, stringifyJson } from '../src/rpc/exactJson.ts';
import { MemoryDataSource } from './helpers/memoryDataSource.ts';
import { METHOD_NAMES } from '../src/rpc/methods/index.ts';
import { BN254_MODULUS } from '../src/rpc/schemas.ts';
import { buildServer } from '../src/rpc/http/server.ts';
import { runBatch } from '../src/rpc/batch.ts';
import { loadConfig } from '../src/config/config.ts';
import { redactUrl } from '../src/rpc/http/auth.ts';

// ---------------------------------------------------------------------------------------------
// fixtures

const SMT1: TreeRef = {
  tree: bs58.decode('smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT'),
  queue: bs58.decode('nfq1NvQDJ2GEgnS8zt9prAe8rjjpAW1zFkrvZoBR148'),
  treeType: 1,
};
const OWNER = bs58.decode('EU57rQxcmFhJ24ApVdUy3y4MxFXcTUN3uiVeWvGgtWXu');
const OWNER_B58 = 'EU57rQxcmFhJ24ApVdUy3y4MxFXcTUN3uiVeWvGgtWXu';
const CTOKEN = bs58.decode('cTokenmWW8bLPjZEBAUgYy3zKxQZW6VKi7bqNFEVv3m');
const MINT = bs58.decode('2U35cKS3Cj2xs5EBdByXYU7LaKAitqjSZc1Jnvu4iPf4');

/** A 32-byte hash below the modulus: byte 0 = 0, last byte = n. */
function h(n: number): Uint8Array {
  const b = new Uint8Array(32);
  b[30] = n >> 8;
  b[31] = n & 0xff;
  b[1] = 7;
  return b;
}
const b58 = (b: Uint8Array) => bs58.encode(b);

function account(n: number, over: Partial<AccountView> = {}): AccountView {
  return {
    hash: h(n),
    address: null,
    data: null,
    owner: OWNER,
    lamports: BigInt(n) * 1000n,
    leafIndex: n,
    seq: BigInt(n + 1),
    slotCreated: 40n,
    treeInfo: SMT1,
    inOutputQueue: false,
    ...over,
  };
}

/** Discriminator of V2 token accounts: bytes [0,0,0,0,0,0,0,3] read as u64 LE = 3 << 56 (> 2^53). */
const TOKEN_V2_DISCRIMINATOR = 3n << 56n;
const U64_MAX = (1n << 64n) - 1n;

function makeData(): MemoryDataSource {
  const d = new MemoryDataSource();
  d.slot = 42n;
  d.trees = [{ ...SMT1, height: 26, rootHistoryCapacity: 2400 }];
  for (let i = 1; i <= 5; i++) d.putAccount(account(i));
  d.putAccount(account(6), { spent: true });
  d.putAccount(
    account(7, {
      owner: CTOKEN,
      lamports: U64_MAX,
      data: { discriminator: TOKEN_V2_DISCRIMINATOR, data: new Uint8Array([1, 2, 3]), dataHash: h(99) },
    }),
    { tokenData: { mint: MINT, owner: OWNER, amount: U64_MAX, delegate: null, state: 'initialized', tlv: null } },
  );
  d.proofs.set(Buffer.from(h(1)).toString('hex'), {
    hash: h(1),
    leafIndex: 1,
    treeInfo: SMT1,
    proof: Array.from({ length: 26 }, (_, i) => h(200 + i)),
    root: h(250),
    rootSeq: 7n,
    proveByIndex: false,
  });
  for (let i = 0; i < 3; i++) {
    const sig = new Uint8Array(64).fill(i + 1);
    d.putTransaction({ record: { signature: sig, slot: BigInt(40 + i), blockTime: 1700000000n + BigInt(i), error: null }, usesCompression: true, accountHashes: [h(i + 1)] });
  }
  return d;
}

function makeCtx(data = makeData(), over: Partial<RpcContext> = {}): RpcContext {
  return { data, getSolanaSlot: async () => 50, config: { ...DEFAULT_METHOD_CONFIG }, ...over };
}

function makeServer(opts: RpcServerOptions = {}, ctx: RpcContext = makeCtx()): FastifyInstance {
  return buildServer(ctx, { logLevel: 'silent', rateLimit: false, env: {}, ...opts });
}

interface Reply {
  status: number;
  headers: Record<string, unknown>;
  raw: string;
  body: any;
}

async function post(app: FastifyInstance, payload: unknown, opts: { url?: string; headers?: Record<string, string>; raw?: boolean } = {}): Promise<Reply> {
  const res = await app.inject({
    method: 'POST',
    url: opts.url ?? '/',
    headers: { 'content-type': 'application/json', ...opts.headers },
    payload: opts.raw ? (payload as string) : JSON.stringify(payload),
  });
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, headers: res.headers, raw: res.body, body };
}

const rpc = (method: string, params?: unknown, id: string | number = 'test-account') =>
  params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };

// ---------------------------------------------------------------------------------------------

describe('envelope and routing', () => {
  let app: FastifyInstance;
  beforeAll(() => {
    app = makeServer();
  });
  afterAll(() => app.close());

  it('answers {jsonrpc, id, result: {context: {slot}, value}} and echoes a string id', async () => {
    const r = await post(app, rpc('getCompressedAccount', { hash: b58(h(1)) }));
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.body.jsonrpc).toBe('2.0');
    expect(r.body.id).toBe('test-account');
    expect(r.body.result.context).toEqual({ slot: 42 });
    expect(r.body.result.value).toEqual({
      hash: b58(h(1)),
      address: null,
      data: null,
      owner: OWNER_B58,
      lamports: 1000,
      tree: b58(SMT1.tree),
      leafIndex: 1,
      seq: 2,
      slotCreated: 40,
    });
  });

  it('echoes a numeric id, and null when the id is absent', async () => {
    expect((await post(app, rpc('getIndexerSlot', [], 17))).body).toEqual({ jsonrpc: '2.0', id: 17, result: 42 });
    expect((await post(app, { jsonrpc: '2.0', method: 'getIndexerSlot' })).body).toEqual({ jsonrpc: '2.0', id: null, result: 42 });
  });

  it('serves POST /<method> when the path agrees with the body', async () => {
    const r = await post(app, rpc('getIndexerHealth'), { url: '/getIndexerHealth' });
    expect(r.status).toBe(200);
    expect(r.body.result).toBe('ok');
  });

  it('rejects a path that disagrees with the body method (400, id echoed)', async () => {
    const r = await post(app, rpc('getIndexerSlot', undefined, 5), { url: '/getIndexerHealth' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      jsonrpc: '2.0',
      id: 5,
      error: { code: -32600, message: 'Invalid request: path /getIndexerHealth does not match method getIndexerSlot' },
    });
  });

  it('serves the alias getCompressedAccountBalance with the getCompressedBalance definition', async () => {
    const a = await post(app, rpc('getCompressedAccountBalance', { hash: b58(h(2)) }));
    const b = await post(app, rpc('getCompressedBalance', { hash: b58(h(2)) }));
    expect(a.body.result).toEqual({ context: { slot: 42 }, value: 2000 });
    expect(b.body.result).toEqual(a.body.result);
  });

  it('parses the body whatever the content type says', async () => {
    const res = await app.inject({ method: 'POST', url: '/', headers: { 'content-type': 'text/plain' }, payload: JSON.stringify(rpc('getIndexerSlot')) });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body).result).toBe(42);
  });
});

describe('bad input table: status, code and message', () => {
  let app: FastifyInstance;
  let keyed: FastifyInstance;
  let limited: FastifyInstance;
  let small: FastifyInstance;
  let limitedForBatch: FastifyInstance;
  beforeAll(() => {
    app = makeServer();
    keyed = makeServer({
      apiKeys: ['open-key', { key: 'slot-only-key', name: 'slot-only', methods: ['getIndexerSlot'] }],
      env: { REFRACT_API_KEYS: 'env-key-1, env-key-2' },
    });
    limited = makeServer({ rateLimit: { ratePerSecond: 1, burst: 3 } });
    limitedForBatch = makeServer({ rateLimit: { ratePerSecond: 1, burst: 3 } });
    small = makeServer({ bodyLimitBytes: 1024 });
  });
  afterAll(async () => {
    await Promise.all([app.close(), keyed.close(), limited.close(), limitedForBatch.close(), small.close()]);
  });

  const modulusB58 = bs58.encode(Buffer.from(BN254_MODULUS.toString(16).padStart(64, '0'), 'hex'));
  const hashes1001 = Array.from({ length: 1001 }, (_, i) => b58(h(i)));
  const owner31 = bs58.encode(new Uint8Array(31).fill(9));

  type Case = {
    name: string;
    server?: () => FastifyInstance;
    body: unknown;
    raw?: boolean;
    url?: string;
    headers?: Record<string, string>;
    status: number;
    code: number;
    message: string | RegExp;
    id?: string | number | null;
  };
  const cases: Case[] = [
    { name: 'malformed JSON', body: '{"jsonrpc":"2.0",', raw: true, status: 400, code: -32700, message: /^Parse error: invalid JSON \(/, id: null },
    { name: 'empty body', body: '', raw: true, status: 400, code: -32700, message: 'Parse error: empty body', id: null },
    { name: 'non-object body (number)', body: '42', raw: true, status: 400, code: -32600, message: 'Invalid request: expected a JSON object', id: null },
    { name: 'non-object body (string)', body: '"hello"', raw: true, status: 400, code: -32600, message: 'Invalid request: expected a JSON object', id: null },
    { name: 'empty batch', body: [], status: 400, code: -32600, message: 'Invalid request: empty batch', id: null },
    { name: 'batch above 1000 requests', body: Array.from({ length: 1001 }, (_, i) => rpc('getIndexerSlot', undefined, i)), status: 400, code: -32600, message: 'Invalid request: batch of 1001 requests; at most 1000', id: null },
    { name: 'batch above the rate-limit burst', server: () => limitedForBatch, body: Array.from({ length: 4 }, (_, i) => rpc('getIndexerSlot', undefined, i)), status: 400, code: -32600, message: "Invalid request: batch of 4 requests is more than the rate limit's burst of 3 requests", id: null },
    { name: 'wrong jsonrpc version', body: { jsonrpc: '1.0', id: 'x', method: 'getIndexerSlot' }, status: 400, code: -32600, message: 'Invalid request: jsonrpc must be "2.0"', id: 'x' },
    { name: 'missing jsonrpc', body: { id: 'x', method: 'getIndexerSlot' }, status: 400, code: -32600, message: 'Invalid request: jsonrpc must be "2.0"', id: 'x' },
    { name: 'object id', body: { jsonrpc: '2.0', id: { a: 1 }, method: 'getIndexerSlot' }, status: 400, code: -32600, message: 'Invalid request: id must be a string, a number or null', id: null },
    { name: 'method not a string', body: { jsonrpc: '2.0', id: 1, method: 7 }, status: 400, code: -32600, message: 'Invalid request: method must be a non-empty string', id: 1 },
    { name: 'unknown method', body: rpc('getEverything', {}), status: 404, code: -32601, message: 'Method not found: getEverything' },
    { name: 'prototype key as method', body: rpc('constructor', {}), status: 404, code: -32601, message: 'Method not found: constructor' },
    { name: 'path/method mismatch', url: '/getCompressedAccount', body: rpc('getIndexerSlot'), status: 400, code: -32600, message: 'Invalid request: path /getCompressedAccount does not match method getIndexerSlot' },
    { name: 'wrong path (nested)', url: '/v1/getIndexerSlot', body: rpc('getIndexerSlot'), status: 404, code: -32601, message: 'Method not found: no route POST /v1/getIndexerSlot', id: null },
    { name: 'malformed URL', url: '/%E0%A4%A', body: rpc('getIndexerSlot'), status: 400, code: -32600, message: 'Invalid request: malformed URL (FST_ERR_BAD_URL)', id: null },
    { name: 'missing params for an object method', body: rpc('getCompressedAccountsByOwner'), status: 400, code: -32602, message: 'Invalid params: params: expected object, got null' },
    { name: 'array params for an object method', body: rpc('getCompressedAccount', [b58(h(1))]), status: 400, code: -32602, message: 'Invalid params: params: expected object, got array' },
    { name: 'object params for an array method', body: rpc('getMultipleCompressedAccountProofs', { hashes: [] }), status: 400, code: -32602, message: 'Invalid params: params: expected an array, got object' },
    { name: 'wrong type: owner number', body: rpc('getCompressedAccountsByOwner', { owner: 5 }), status: 400, code: -32602, message: 'Invalid params: owner: invalid base58 pubkey (expected a string, got number)' },
    { name: 'wrong type: limit string', body: rpc('getCompressedAccountsByOwner', { owner: OWNER_B58, limit: '10' }), status: 400, code: -32602, message: 'Invalid params: limit: must be an integer between 1 and 1000 (got string)' },
    { name: 'wrong type: hashes not array', body: rpc('getMultipleCompressedAccounts', { hashes: 'abc' }), status: 400, code: -32602, message: 'Invalid params: hashes: expected an array, got string' },
    { name: 'wrong type: dataSlice offset negative', body: rpc('getCompressedAccountsByOwner', { owner: OWNER_B58, dataSlice: { offset: -1, length: 2 } }), status: 400, code: -32602, message: 'Invalid params: dataSlice.offset: expected a non-negative integer' },
    { name: 'unknown key (deny_unknown_fields)', body: rpc('getCompressedAccount', { hash: b58(h(1)), foo: 1 }), status: 400, code: -32602, message: 'Invalid params: foo: unknown field' },
    { name: 'unknown key nested', body: rpc('getMultipleNewAddressProofsV2', [{ address: b58(h(1)), tree: b58(SMT1.tree), extra: true }]), status: 400, code: -32602, message: 'Invalid params: params[0].extra: unknown field' },
    { name: 'bad base58 character', body: rpc('getCompressedAccountsByOwner', { owner: 'O0Il' + OWNER_B58.slice(4) }), status: 400, code: -32602, message: 'Invalid params: owner: invalid base58 pubkey (non-base58 character)' },
    { name: 'pubkey of 31 bytes', body: rpc('getCompressedAccountsByOwner', { owner: owner31 }), status: 400, code: -32602, message: 'Invalid params: owner: invalid base58 pubkey (expected 32 bytes, got 31)' },
    { name: 'hash of 33 bytes', body: rpc('getCompressedAccount', { hash: bs58.encode(new Uint8Array(33).fill(1)) }), status: 400, code: -32602, message: 'Invalid params: hash: invalid base58 hash (expected 32 bytes, got 33)' },
    { name: 'hash = BN254 modulus', body: rpc('getCompressedAccount', { hash: modulusB58 }), status: 400, code: -32602, message: 'Invalid params: hash: invalid hash (value is not below the BN254 field modulus)' },
    { name: 'hash 0xff…ff in an array', body: rpc('getMultipleCompressedAccountProofs', [b58(h(1)), bs58.encode(new Uint8Array(32).fill(255))]), status: 400, code: -32602, message: 'Invalid params: params[1]: invalid hash (value is not below the BN254 field modulus)' },
    { name: 'signature of 63 bytes', body: rpc('getTransactionWithCompressionInfo', { signature: bs58.encode(new Uint8Array(63).fill(3)) }), status: 400, code: -32602, message: 'Invalid params: signature: invalid base58 signature (expected 64 bytes, got 63)' },
    { name: 'oversize array: 1001 hashes', body: rpc('getMultipleCompressedAccounts', { hashes: hashes1001 }), status: 400, code: -32000, message: 'Validation Error: Too many hashes requested 1001. Maximum allowed: 1000' },
    { name: 'oversize positional array: 1001 hashes', body: rpc('getMultipleCompressedAccountProofs', hashes1001), status: 400, code: -32000, message: 'Validation Error: Too many hashes requested 1001. Maximum allowed: 1000' },
    { name: 'oversize positional array: 1001 addresses', body: rpc('getMultipleNewAddressProofs', hashes1001), status: 400, code: -32000, message: 'Validation Error: Too many addresses requested 1001. Maximum allowed: 1000' },
    { name: 'limit 0', body: rpc('getCompressedAccountsByOwner', { owner: OWNER_B58, limit: 0 }), status: 400, code: -32602, message: 'Invalid params: limit: must be an integer between 1 and 1000 (got 0)' },
    { name: 'limit 1001', body: rpc('getCompressionSignaturesForOwner', { owner: OWNER_B58, limit: 1001 }), status: 400, code: -32602, message: 'Invalid params: limit: must be an integer between 1 and 1000 (got 1001)' },
    { name: 'limit 1.5', body: rpc('getLatestCompressionSignatures', { limit: 1.5 }), status: 400, code: -32602, message: 'Invalid params: limit: must be an integer between 1 and 1000 (got 1.5)' },
    { name: 'validation: neither address nor hash', body: rpc('getCompressedAccount', {}), status: 400, code: -32000, message: 'Validation Error: Either address or hash must be provided' },
    { name: 'validation: both hashes and addresses', body: rpc('getMultipleCompressedAccounts', { hashes: [], addresses: [] }), status: 400, code: -32000, message: 'Validation Error: Cannot provide both hashes and addresses' },
    { name: 'validation: too many filters', body: rpc('getCompressedAccountsByOwner', { owner: OWNER_B58, filters: Array(6).fill({ memcmp: { offset: 0, bytes: '1' } }) }), status: 400, code: -32000, message: 'Validation Error: Too many filters. The maximum number of filters allowed is 5' },
    { name: 'validation: bad token cursor length', body: rpc('getCompressedTokenAccountsByOwner', { owner: OWNER_B58, cursor: b58(h(1)) }), status: 400, code: -32000, message: 'Validation Error: Invalid cursor length. Expected 64. Received 32.' },
    { name: 'validation: signature cursor not base58', body: rpc('getCompressionSignaturesForOwner', { owner: OWNER_B58, cursor: 'not-base58!' }), status: 400, code: -32000, message: 'Validation Error: Invalid cursor not-base58!' },
    { name: 'validation: no addresses', body: rpc('getMultipleNewAddressProofs', []), status: 400, code: -32000, message: 'Validation Error: No addresses provided' },
    { name: 'invalid pubkey: unknown address tree', body: rpc('getMultipleNewAddressProofsV2', [{ address: b58(h(1)), tree: OWNER_B58 }]), status: 400, code: -32000, message: "Invalid Public Key: field 'tree'" },
    { name: 'record not found: proof', body: rpc('getCompressedAccountProof', { hash: b58(h(55)) }), status: 404, code: -32000, message: 'Record Not Found: Leaf nodes not found for hashes. Got 0 hashes. Expected 1.' },
    { name: 'record not found: signatures for account', body: rpc('getCompressionSignaturesForAccount', { hash: b58(h(55)) }), status: 404, code: -32000, message: 'Record Not Found: Account not found' },
    { name: 'prover not available', body: rpc('getValidityProofV2', { hashes: [b58(h(1))] }), status: 503, code: -32000, message: 'Prover not available: validity proofs are not enabled on this server' },
    { name: 'missing API key', server: () => keyed, body: rpc('getIndexerSlot'), status: 401, code: -32001, message: 'Unauthorized: missing API key', id: null },
    { name: 'wrong API key (header)', server: () => keyed, headers: { 'x-api-key': 'nope' }, body: rpc('getIndexerSlot'), status: 401, code: -32001, message: 'Unauthorized: invalid API key', id: null },
    { name: 'wrong API key (query)', server: () => keyed, url: '/?api-key=nope', body: rpc('getIndexerSlot'), status: 401, code: -32001, message: 'Unauthorized: invalid API key', id: null },
    { name: 'wrong API key (bearer)', server: () => keyed, headers: { authorization: 'Bearer nope' }, body: rpc('getIndexerSlot'), status: 401, code: -32001, message: 'Unauthorized: invalid API key', id: null },
    { name: 'key not allowed to call the method', server: () => keyed, headers: { 'x-api-key': 'slot-only-key' }, body: rpc('getIndexerHealth', undefined, 9), status: 403, code: -32003, message: "Forbidden: API key 'slot-only' may not call getIndexerHealth", id: 9 },
    { name: 'body too large', server: () => small, body: JSON.stringify(rpc('getMultipleCompressedAccountProofs', Array(100).fill(b58(h(1))))), raw: true, status: 413, code: -32600, message: 'Request too large: body exceeds 1024 bytes', id: null },
  ];

  for (const c of cases) {
    it(`${c.name} → ${c.status} ${c.code}`, async () => {
      const server = c.server ? c.server() : app;
      const r = await post(server, c.body, { url: c.url, headers: c.headers, raw: c.raw });
      expect(r.status).toBe(c.status);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(Object.keys(r.body).sort()).toEqual(['error', 'id', 'jsonrpc']);
      expect(r.body.jsonrpc).toBe('2.0');
      expect(Object.keys(r.body.error).sort()).toEqual(['code', 'message']);
      expect(r.body.error.code).toBe(c.code);
      if (typeof c.message === 'string') expect(r.body.error.message).toBe(c.message);
      else expect(r.body.error.message).toMatch(c.message);
      const expectedId = c.id === undefined ? (c.body as { id?: unknown }).id : c.id;
      expect(r.body.id).toBe(expectedId);
    });
  }

  it('rate-limit burst: the 4th request within a second gets 429 with Retry-After', async () => {
    const statuses: number[] = [];
    let last: Reply | undefined;
    for (let i = 0; i < 4; i++) {
      last = await post(limited, rpc('getIndexerSlot', undefined, i));
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(last!.headers['retry-after']).toBe('1');
    expect(last!.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32005, message: 'Rate limited: too many requests, retry after 1 s' } });
  });

  it('a batch is answered with HTTP 200 and one response per request, in order, each as the request alone gets it', async () => {
    const items: unknown[] = [
      rpc('getIndexerSlot', undefined, 1),
      rpc('getIndexerHealth', undefined, 'h'), // asynchronous (asks the Solana slot)
      rpc('noSuchMethod', undefined, 2),
      rpc('getCompressedAccount', { hash: 'not base58!' }, 3),
      rpc('getCompressedBalanceByOwner', { owner: OWNER_B58 }, 4),
      42,
      { jsonrpc: '2.0', id: 5 },
      [rpc('getIndexerSlot')],
    ];
    const r = await post(app, items);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.body).toHaveLength(items.length);
    for (let i = 0; i < items.length - 1; i++) expect(r.body[i], `element ${i}`).toEqual((await post(app, items[i])).body);
    expect(r.body[7]).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request: a batch element must be a request object, not an array' } });
    expect(r.body[0].result).toBe(42);
    expect(r.body[2].error.code).toBe(-32601);
    // POST /<method>: every element must name the path's method.
    const viaPath = await post(app, [rpc('getIndexerSlot', undefined, 1), rpc('getIndexerHealth', undefined, 2)], { url: '/getIndexerSlot' });
    expect(viaPath.body[0].result).toBe(42);
    expect(viaPath.body[1].error).toEqual({ code: -32600, message: 'Invalid request: path /getIndexerSlot does not match method getIndexerHealth' });
    // A key's method allow-list applies to each element.
    const mixed = await post(keyed, [rpc('getIndexerSlot', undefined, 1), rpc('getIndexerHealth', undefined, 2)], { headers: { 'x-api-key': 'slot-only-key' } });
    expect(mixed.status).toBe(200);
    expect(mixed.body[0].result).toBe(42);
    expect(mixed.body[1].error.code).toBe(-32003);
  });

  it('a batch whose responses together pass the size cap fails as a whole', async () => {
    const anyone = { id: 'x', methods: null };
    const items = [rpc('getIndexerSlot', undefined, 1), rpc('getIndexerSlot', undefined, 2)];
    const run = async (max: number) => runBatch(makeCtx(), items, anyone, undefined, () => {}, max);
    await expect(run(1000)).resolves.toBe(JSON.stringify(items.map((r) => ({ jsonrpc: '2.0', id: r.id, result: 42 }))));
    await expect(run(40)).rejects.toThrow(/^Invalid request: the batch's responses come to 0\.0 MB, more than 0\.0 MB; send fewer requests per batch$/);
  });

  it('a batch of n requests spends n rate-limit tokens', async () => {
    const server = makeServer({ rateLimit: { ratePerSecond: 1, burst: 3 } });
    try {
      const three = await post(server, [1, 2, 3].map((i) => rpc('getIndexerSlot', undefined, i)));
      expect(three.status).toBe(200);
      expect(three.body.map((x: any) => x.result)).toEqual([42, 42, 42]);
      const next = await post(server, rpc('getIndexerSlot'));
      expect(next.status).toBe(429);
      expect(next.headers['retry-after']).toBe('1');
      const batch = await post(server, [rpc('getIndexerSlot', undefined, 1), rpc('getIndexerSlot', undefined, 2)]);
      expect(batch.status).toBe(429);
      expect(batch.body.error.code).toBe(-32005);
      // A refused batch costs its first token, as any refused request whose body was read: no free retries.
      await new Promise((r) => setTimeout(r, 1100));
      const batch2 = await post(server, [rpc('getIndexerSlot', undefined, 1), rpc('getIndexerSlot', undefined, 2)]);
      expect(batch2.status).toBe(429); // ≈1.1 tokens: not enough for 2; the guard's one is spent
      expect((await post(server, rpc('getIndexerSlot'))).status).toBe(429);
    } finally {
      await server.close();
    }
  });

  it('batches are counted in the metrics as one request labelled (batch)', async () => {
    const seen: RequestMetrics[] = [];
    const server = makeServer({ onMetrics: (m) => seen.push(m) });
    try {
      await post(server, [rpc('getIndexerSlot', undefined, 1), rpc('noSuchMethod', undefined, 2)]);
      await post(server, []);
      expect(seen.map((m) => [m.method, m.status])).toEqual([
        ['(batch)', 200],
        ['(batch)', 400],
      ]);
    } finally {
      await server.close();
    }
  });

  it('accepts keys from header, bearer, query and env', async () => {
    const ways: { url?: string; headers?: Record<string, string> }[] = [{ headers: { 'x-api-key': 'open-key' } }, { headers: { authorization: 'Bearer env-key-2' } }, { url: '/?api-key=env-key-1' }, { url: '/getIndexerSlot?api-key=slot-only-key' }];
    for (const o of ways) {
      const r = await post(keyed, rpc('getIndexerSlot'), o);
      expect(r.status, JSON.stringify(o)).toBe(200);
      expect(r.body.result).toBe(42);
    }
  });

  it('accepts a hash one below the modulus (and still answers null for it)', async () => {
    const below = bs58.encode(Buffer.from((BN254_MODULUS - 1n).toString(16).padStart(64, '0'), 'hex'));
    const r = await post(app, rpc('getCompressedAccount', { hash: below }));
    expect(r.status).toBe(200);
    expect(r.body.result.value).toBeNull();
  });

  it('after all of it the servers still answer', async () => {
    for (const s of [app, small, keyed]) {
      const r = await post(s, rpc('getIndexerSlot'), { headers: { 'x-api-key': 'open-key' } });
      expect(r.status).toBe(200);
      expect(r.body.result).toBe(42);
    }
    const res = await app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
  });
});

describe('server errors never leak', () => {
  it('a throwing data source gives 500 Internal server error without details', async () => {
    const data = makeData();
    data.getAccountByHash = () => {
      throw new Error('secret: /var/lib/refract/data.mdb corrupted');
    };
    const app = makeServer({}, makeCtx(data));
    const r = await post(app, rpc('getCompressedAccount', { hash: b58(h(1)) }));
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ jsonrpc: '2.0', id: 'test-account', error: { code: -32000, message: 'Internal server error' } });
    expect(r.raw).not.toContain('secret');
    expect((await post(app, rpc('getIndexerSlot'))).status).toBe(200);
    await app.close();
  });

  it('query-layer errors (QueryError shape) map to their Photon messages', async () => {
    class QueryError extends Error {
      constructor(readonly kind: string, message: string) {
        super(message);
        this.name = 'QueryError';
      }
    }
    const cases: [QueryError, number, string][] = [
      [new QueryError('RecordNotFound', 'Account not found'), 404, 'Record Not Found: Account not found'],
      [new QueryError('Validation', 'Address x already exists'), 400, 'Validation Error: Address x already exists'],
      [new QueryError('InvalidPubkey', 'tree'), 400, "Invalid Public Key: field 'tree'"],
      [new QueryError('Unexpected', 'db path /secret'), 500, 'Internal server error'],
      [new QueryError('constructor', 'x'), 500, 'Internal server error'],
    ];
    for (const [err, status, message] of cases) {
      const data = makeData();
      data.getAccountByHash = () => {
        throw err;
      };
      const app = makeServer({}, makeCtx(data));
      const r = await post(app, rpc('getCompressedAccount', { hash: b58(h(1)) }));
      expect([r.status, r.body.error.message]).toEqual([status, message]);
      await app.close();
    }
  });

  it('nothing indexed yet → 404 Record Not Found: No data has been indexed', async () => {
    const data = makeData();
    data.slot = null;
    const app = makeServer({}, makeCtx(data));
    const r = await post(app, rpc('getIndexerSlot'));
    expect(r.status).toBe(404);
    expect(r.body.error).toEqual({ code: -32000, message: 'Record Not Found: No data has been indexed' });
    await app.close();
  });
});

describe('getIndexerHealth', () => {
  it('is ok within the lag and "Node is behind {n} slots" beyond it', async () => {
    let chain = 62;
    const app = makeServer({}, makeCtx(makeData(), { getSolanaSlot: async () => chain }));
    expect((await post(app, rpc('getIndexerHealth', []))).body.result).toBe('ok'); // 20 behind: ok
    chain = 63;
    const r = await post(app, rpc('getIndexerHealth', []));
    expect(r.status).toBe(503);
    expect(r.body.error).toEqual({ code: -32000, message: 'Node is behind 21 slots' });
    await app.close();
  });

  it('honours a configured lag and maps a failing Solana RPC to Internal server error', async () => {
    const app = makeServer({}, makeCtx(makeData(), { getSolanaSlot: async () => 100, config: { healthMaxSlotLag: 100 } }));
    expect((await post(app, rpc('getIndexerHealth'))).body.result).toBe('ok');
    await app.close();
    const broken = makeServer({}, makeCtx(makeData(), { getSolanaSlot: async () => Promise.reject(new Error('ECONNREFUSED')) }));
    const r = await post(broken, rpc('getIndexerHealth'));
    expect(r.status).toBe(500);
    expect(r.body.error.message).toBe('Internal server error');
    await broken.close();
  });
});

describe('exact u64 serialisation', () => {
  it('emits u64 values above 2^53 as exact JSON numbers (token discriminator 3<<56, u64::MAX)', async () => {
    const app = makeServer();
    const r = await post(app, rpc('getCompressedTokenAccountsByOwnerV2', { owner: OWNER_B58 }));
    expect(r.status).toBe(200);
    expect(r.raw).toContain('"discriminator":216172782113783808');
    expect(r.raw).toContain('"lamports":18446744073709551615');
    expect(r.raw).toContain('"amount":18446744073709551615');
    expect(r.raw).not.toMatch(/"(discriminator|lamports|amount)":"/); // numbers, not strings
    const bal = await post(app, rpc('getCompressedTokenAccountBalance', { hash: b58(h(7)) }));
    expect(bal.raw).toContain('"value":{"amount":18446744073709551615}');
    await app.close();
  });

  it('stringifyJson: ExactU64, bare bigint, raw JSON, and look-alike strings stay strings', () => {
    expect(stringifyJson({ a: exactU64(2n ** 64n - 1n), b: [exactU64(1n), 2] })).toBe('{"a":18446744073709551615,"b":[1,2]}');
    expect(stringifyJson({ n: 9007199254740993n, m: [1n] })).toBe('{"n":9007199254740993,"m":[1]}');
    const raw = '{"lamports":18446744073709551615,"log":"say \\"hi\\"\\n"}';
    expect(stringifyJson({ transaction: rawJson(raw) })).toBe(`{"transaction":${raw}}`);
    const tricky = { s: '\u0000N123', t: '\\u0000', u: 'N5' };
    expect(JSON.parse(stringifyJson(tricky))).toEqual(tricky);
    expect(() => stringifyJson({ x: -1n })).toThrow(RangeError);
  });
});

describe('methods over the in-memory data source', () => {
  let app: FastifyInstance;
  beforeAll(() => {
    app = makeServer();
  });
  afterAll(() => app.close());

  it('getCompressedAccountsByOwner pages with a hash cursor and applies dataSlice', async () => {
    const p1 = await post(app, rpc('getCompressedAccountsByOwner', { owner: OWNER_B58, filters: [], limit: 3 }));
    expect(p1.body.result.value.items.map((a: any) => a.leafIndex)).toEqual([1, 2, 3]);
    expect(p1.body.result.value.cursor).toBe(b58(h(3)));
    const p2 = await post(app, rpc('getCompressedAccountsByOwner', { owner: OWNER_B58, cursor: p1.body.result.value.cursor, limit: 3 }));
    expect(p2.body.result.value.items.map((a: any) => a.leafIndex)).toEqual([4, 5]);
    expect(p2.body.result.value.cursor).toBeNull();
    const sliced = await post(app, rpc('getCompressedAccountsByOwnerV2', { owner: b58(CTOKEN), dataSlice: { offset: 1, length: 1 } }));
    expect(sliced.body.result.value.items[0].data.data).toBe(Buffer.from([2]).toString('base64'));
    expect(sliced.body.result.value.items[0].merkleContext).toEqual({
      treeType: 1,
      tree: b58(SMT1.tree),
      queue: b58(SMT1.queue),
      cpiContext: null,
      nextTreeContext: null,
    });
  });

  it('getMultipleCompressedAccounts keeps request order with null for missing or spent', async () => {
    const r = await post(app, rpc('getMultipleCompressedAccounts', { hashes: [b58(h(2)), b58(h(6)), b58(h(77)), b58(h(1))] }));
    expect(r.body.result.value.items.map((a: any) => a && a.leafIndex)).toEqual([2, null, null, 1]);
  });

  it('getCompressedBalance is 0 (not null) when not found; by owner sums unspent lamports', async () => {
    expect((await post(app, rpc('getCompressedBalance', { hash: b58(h(77)) }))).body.result.value).toBe(0);
    expect((await post(app, rpc('getCompressedBalanceByOwner', { owner: OWNER_B58, ignored: 1 }))).body.result.value).toBe(15000);
  });

  it('getMultipleCompressedAccountProofs: V1 proof shape; any missing hash is Record Not Found', async () => {
    const ok = await post(app, rpc('getMultipleCompressedAccountProofs', [b58(h(1))]));
    expect(ok.body.result.value[0]).toMatchObject({ hash: b58(h(1)), leafIndex: 1, merkleTree: b58(SMT1.tree), rootSeq: 7, root: b58(h(250)) });
    expect(ok.body.result.value[0].proof).toHaveLength(26);
    const bad = await post(app, rpc('getMultipleCompressedAccountProofs', [b58(h(1)), b58(h(2))]));
    expect(bad.status).toBe(404);
    expect(bad.body.error.message).toBe('Record Not Found: Leaf nodes not found for hashes. Got 1 hashes. Expected 2.');
  });

  it('signature listings page with a slot‖signature cursor', async () => {
    const p1 = await post(app, rpc('getLatestCompressionSignatures', { limit: 2 }));
    const v1 = p1.body.result.value;
    expect(v1.items.map((s: any) => s.slot)).toEqual([42, 41]);
    expect(Object.keys(v1.items[0])).toEqual(['signature', 'slot', 'blockTime']);
    const p2 = await post(app, rpc('getLatestCompressionSignatures', { limit: 2, cursor: v1.cursor }));
    expect(p2.body.result.value.items.map((s: any) => s.slot)).toEqual([40]);
    expect(p2.body.result.value.cursor).toBeNull();
    const nv = await post(app, rpc('getLatestNonVotingSignatures', {}));
    expect(nv.body.result.value.items[0].error).toBeNull();
    expect('cursor' in nv.body.result.value).toBe(false);
    const byOwner = await post(app, rpc('getCompressionSignaturesForOwner', { owner: OWNER_B58 }));
    expect(byOwner.body.result.value.items).toHaveLength(3);
  });

  it('getCompressedTokenBalancesByOwner uses snake_case token_balances; V2 uses items', async () => {
    const v1 = await post(app, rpc('getCompressedTokenBalancesByOwner', { owner: OWNER_B58 }));
    expect(v1.body.result.value).toEqual({ token_balances: [{ mint: b58(MINT), balance: exactNumber(v1.raw, 'balance') }], cursor: null });
    expect(v1.raw).toContain('"balance":18446744073709551615');
    const v2 = await post(app, rpc('getCompressedTokenBalancesByOwnerV2', { owner: OWNER_B58 }));
    expect(Object.keys(v2.body.result.value)).toEqual(['items', 'cursor']);
  });

  it('getValidityProofV2 with an empty request answers slot 0 without a prover', async () => {
    const r = await post(app, rpc('getValidityProofV2', {}));
    expect(r.body.result).toEqual({ context: { slot: 0 }, value: { compressedProof: null, accounts: [], addresses: [] } });
  });

  it('getValidityProof uses the injected prover and the V1 result shape', async () => {
    const ctx = makeCtx();
    ctx.prover = {
      async getValidityProof(req, mode) {
        expect(mode).toBe('v1');
        return {
          compressedProof: { a: new Uint8Array(32).fill(1), b: new Uint8Array(64).fill(2), c: new Uint8Array(32).fill(3) },
          accounts: req.hashes.map((hash, i) => ({ hash, root: h(250), rootIndex: 7, proveByIndex: false, leafIndex: i, treeInfo: SMT1 })),
          addresses: [],
        };
      },
    };
    const s = makeServer({}, ctx);
    const r = await post(s, rpc('getValidityProof', { hashes: [b58(h(1))] }));
    expect(r.status).toBe(200);
    expect(r.body.result.value).toMatchObject({ roots: [b58(h(250))], rootIndices: [7], leafIndices: [0], leaves: [b58(h(1))], merkleTrees: [b58(SMT1.tree)] });
    expect(r.body.result.value.compressedProof.b).toHaveLength(64);
    await s.close();
  });
});

/** The raw digits of the first `"key":<number>` in a JSON text, as a JS number (for toEqual on parsed bodies). */
function exactNumber(raw: string, key: string): number {
  const m = new RegExp(`"${key}":(\\d+)`).exec(raw);
  return Number(m![1]);
}

describe('CORS (browser clients; Photon allows any origin)', () => {
  const preflight = (app: FastifyInstance, url = '/', origin = 'https://app.example') =>
    app.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-api-key' } });

  it('by default any origin: replies carry Access-Control-Allow-Origin *, preflights are answered without an API key', async () => {
    const app = makeServer({ apiKeys: ['k'], rateLimit: { ratePerSecond: 1, burst: 1 } });
    try {
      const ok = await app.inject({ method: 'POST', url: '/', headers: { origin: 'https://app.example', 'content-type': 'application/json', 'x-api-key': 'k' }, payload: JSON.stringify(rpc('getIndexerSlot')) });
      expect(ok.statusCode).toBe(200);
      expect(ok.headers['access-control-allow-origin']).toBe('*');
      expect(ok.headers['access-control-expose-headers']).toBe('Retry-After');
      // Errors too (a page can read why it was refused, and when to retry).
      const limited = await app.inject({ method: 'POST', url: '/', headers: { origin: 'https://app.example', 'x-api-key': 'k' }, payload: JSON.stringify(rpc('getIndexerSlot')) });
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['access-control-allow-origin']).toBe('*');
      for (const url of ['/', '/getCompressedAccount', '/prove']) {
        const p = await preflight(app, url);
        expect(p.statusCode, url).toBe(204);
        expect(p.headers['access-control-allow-origin']).toBe('*');
        expect(String(p.headers['access-control-allow-methods'])).toContain('POST');
        expect(String(p.headers['access-control-allow-headers'])).toMatch(/X-API-Key/);
        expect(p.headers['access-control-max-age']).toBe('86400');
      }
    } finally {
      await app.close();
    }
  });

  it('config: REFRACT_CORS_ORIGINS takes a comma-separated list, or none', () => {
    expect(loadConfig({ env: {} }).corsOrigins).toEqual(['*']);
    expect(loadConfig({ env: { REFRACT_CORS_ORIGINS: 'https://a.example, https://b.example' } }).corsOrigins).toEqual(['https://a.example', 'https://b.example']);
    expect(loadConfig({ env: { REFRACT_CORS_ORIGINS: 'none' } }).corsOrigins).toEqual([]);
  });

  it('an origin list allows those origins only; an empty list sends no CORS headers', async () => {
    const listed = makeServer({ corsOrigins: ['https://app.example'] });
    const none = makeServer({ corsOrigins: [] });
    try {
      const post = (app: FastifyInstance, origin: string) => app.inject({ method: 'POST', url: '/', headers: { origin, 'content-type': 'application/json' }, payload: JSON.stringify(rpc('getIndexerSlot')) });
      const allowed = await post(listed, 'https://app.example');
      expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example');
      expect(String(allowed.headers.vary)).toMatch(/Origin/);
      const other = await post(listed, 'https://evil.example');
      expect(other.statusCode).toBe(200); // CORS is the browser's check; the server only withholds the header
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
      const plain = await post(none, 'https://app.example');
      expect(plain.headers['access-control-allow-origin']).toBeUndefined();
      expect((await preflight(none)).headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await Promise.all([listed.close(), none.close()]);
    }
  });
});

describe('openapi.json', () => {
  it('lists every method and alias with its params schema', async () => {
    const app = makeServer();
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = JSON.parse(res.body);
    expect(doc.openapi).toBe('3.1.0');
    const expected = [
      'getCompressedAccount', 'getCompressedAccountProof', 'getCompressedAccountsByOwner', 'getCompressedBalance',
      'getCompressedAccountBalance', 'getCompressedBalanceByOwner', 'getCompressedTokenAccountBalance',
      'getCompressedTokenAccountsByDelegate', 'getCompressedTokenAccountsByOwner', 'getMultipleCompressedAccountProofs',
      'getMultipleCompressedAccounts', 'getValidityProof', 'getMultipleNewAddressProofs', 'getMultipleNewAddressProofsV2',
      'getIndexerHealth', 'getIndexerSlot', 'getCompressionSignaturesForAccount', 'getCompressionSignaturesForAddress',
      'getCompressionSignaturesForOwner', 'getCompressionSignaturesForTokenOwner', 'getLatestCompressionSignatures',
      'getLatestNonVotingSignatures', 'getTransactionWithCompressionInfo', 'getTransactionWithCompressionInfoV2',
      'getCompressedTokenBalancesByOwner', 'getCompressedTokenBalancesByOwnerV2', 'getCompressedMintTokenHolders',
      'getCompressedAccountV2', 'getMultipleCompressedAccountsV2', 'getCompressedAccountsByOwnerV2',
      'getCompressedTokenAccountsByOwnerV2', 'getCompressedTokenAccountsByDelegateV2', 'getCompressedAccountProofV2',
      'getMultipleCompressedAccountProofsV2', 'getValidityProofV2', 'getQueueElements', 'getQueueInfo', 'liveness', 'readiness',
    ];
    expect([...METHOD_NAMES].sort()).toEqual([...expected].sort());
    for (const name of expected) {
      const op = doc.paths[`/${name}`]?.post;
      expect(op, name).toBeDefined();
      const body = op.requestBody.content['application/json'].schema;
      expect(body.properties.method).toEqual({ const: name });
      expect(body.properties.params, name).toBeDefined();
    }
    const owner = doc.paths['/getCompressedAccountsByOwner'].post.requestBody.content['application/json'].schema.properties.params;
    expect(owner.additionalProperties).toBe(false);
    expect(owner.required).toEqual(['owner']);
    expect(owner.properties.limit.anyOf[0]).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000 });
    const proofs = doc.paths['/getMultipleCompressedAccountProofs'].post.requestBody.content['application/json'].schema.properties.params;
    expect(proofs).toMatchObject({ type: 'array', maxItems: 1000 });
    const root = doc.paths['/'].post.requestBody.content['application/json'].schema.oneOf;
    expect(root).toHaveLength(expected.length + 1); // every method's request, and a batch of them
    expect(root.at(-1)).toMatchObject({ type: 'array', minItems: 1, maxItems: 1000 });
    expect(root.at(-1).items.oneOf).toHaveLength(expected.length);
    await app.close();
  });
});

describe('httpErrorsAs200', () => {
  it('answers JSON-RPC errors with HTTP 200 and the same body (Retry-After kept)', async () => {
    const app = makeServer({ httpErrorsAs200: true, rateLimit: { ratePerSecond: 1, burst: 1 } });
    const bad = await post(app, rpc('getCompressedAccountsByOwner', { owner: OWNER_B58, limit: 0 }));
    expect(bad.status).toBe(200);
    expect(bad.body.error).toEqual({ code: -32602, message: 'Invalid params: limit: must be an integer between 1 and 1000 (got 0)' });
    const limited = await post(app, rpc('getEverything'));
    expect(limited.status).toBe(200);
    expect(limited.body.error.code).toBe(-32005);
    expect(limited.headers['retry-after']).toBeDefined();
    await app.close();
    const off = makeServer({ httpErrorsAs200: false });
    expect((await post(off, rpc('getEverything'))).status).toBe(404);
    await off.close();
  });
});

/** A pino destination that keeps every written line. */
function logSink(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, stream };
}

describe('health, metrics and logs', () => {
  it('GET /health merges the injected callback; a throwing callback gives 503', async () => {
    const ok = makeServer({ health: () => ({ prover: { ready: false } }) });
    const r = await ok.inject({ method: 'GET', url: '/health' });
    expect(r.statusCode).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ status: 'ok', prover: { ready: false } });
    await ok.close();
    const bad = makeServer({
      health: () => {
        throw new Error('x');
      },
    });
    const b = await bad.inject({ method: 'GET', url: '/health' });
    expect(b.statusCode).toBe(503);
    expect(JSON.parse(b.body)).toEqual({ status: 'error' });
    await bad.close();
  });

  it('feeds the metrics callback with method, status and duration (unknown methods are not labels)', async () => {
    const seen: RequestMetrics[] = [];
    const app = makeServer({ onMetrics: (m) => seen.push(m) });
    await post(app, rpc('getIndexerSlot'));
    await post(app, rpc('getCompressedAccountBalance', { hash: b58(h(1)) }));
    await post(app, rpc('attacker-chosen-' + 'x'.repeat(50)));
    await post(app, rpc('getCompressedAccount', { nope: 1 }));
    await app.inject({ method: 'GET', url: '/health' });
    expect(seen.map((m) => [m.method, m.status, m.rpcErrorCode])).toEqual([
      ['getIndexerSlot', 200, null],
      ['getCompressedAccountBalance', 200, null],
      ['(unknown)', 404, -32601],
      ['getCompressedAccount', 400, -32602],
      ['GET /health', 200, null],
    ]);
    for (const m of seen) expect(m.durationMs).toBeGreaterThanOrEqual(0);
    await app.close();
  });

  it('never logs API keys from the query string', async () => {
    const { lines, stream } = logSink();
    const app = makeServer({ logger: pino({ level: 'info' }, stream), apiKeys: ['super-secret-key'] });
    await post(app, rpc('getIndexerSlot'), { url: '/?api-key=super-secret-key' });
    await post(app, rpc('getIndexerSlot'), { url: '/?x=1&api-key=wrong-secret' });
    await post(app, rpc('getIndexerSlot'), { headers: { authorization: 'Bearer super-secret-key' } });
    await app.close();
    const log = lines.join('');
    expect(log).toContain('api-key=***');
    expect(log).not.toContain('super-secret-key');
    expect(log).not.toContain('wrong-secret');
    expect(redactUrl('/a?b=1&API-KEY=s3cret#f')).toBe('/a?b=1&API-KEY=***#f');
    // The query parser decodes names: `api%2Dkey` is the api-key parameter too; an undecodable name is redacted.
    expect(redactUrl('/?api%2Dkey=s3cret&x=1')).toBe('/?api%2Dkey=***&x=1');
    expect(redactUrl('/?%E0%A4%A=s3cret&api+key=x')).toBe('/?%E0%A4%A=***&api+key=x');
  });

  it('request logs carry the request id (per-request child loggers are created lazily)', async () => {
    const { lines, stream } = logSink();
    const app = makeServer({ logger: pino({ level: 'info' }, stream) });
    await post(app, rpc('getIndexerSlot'));
    await app.close();
    const records = lines.map((l) => JSON.parse(l) as { msg: string; reqId?: string });
    const incoming = records.find((r) => r.msg === 'incoming request');
    const completed = records.find((r) => r.msg === 'request completed');
    expect(incoming?.reqId).toBeTruthy();
    expect(completed?.reqId).toBe(incoming?.reqId);

    // At level warn a successful call writes nothing (and builds no child logger).
    const { lines: quiet, stream: quietStream } = logSink();
    const q = makeServer({ logger: pino({ level: 'warn' }, quietStream) });
    await post(q, rpc('getIndexerSlot'));
    await q.close();
    expect(quiet.filter((l) => !l.includes('no API keys configured'))).toEqual([]);
  });

  it('warns at start when no API key is configured', async () => {
    const { lines, stream } = logSink();
    const app = makeServer({ logger: pino({ level: 'warn' }, stream) });
    await app.close();
    expect(lines.join('')).toContain('no API keys configured');
  });
});
