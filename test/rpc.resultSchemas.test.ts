/**
 * Result schemas (src/rpc/resultSchemas.ts) against the golden responses, and openapi.json built from
 * them (issue 16 item 6):
 * - every method has a result schema, and nothing else is listed;
 * - every snapshot of the reference (test/fixtures/photon/snapshots) validates against its method's
 *   schema (strict: an unknown key fails);
 * - every response the golden tests produce on LMDB — the legacy fixtures (e2e, lamport transfers, the
 *   getBlock fixture, an empty store) and the v2 fixtures (batched state tree before and after its batch
 *   events, batched address tree, cToken transfers on HLKs5, the compress-and-close with TLV) — plus a
 *   call of every other method over the same stores, validates against both the zod schema and the JSON
 *   Schema that openapi.json publishes for that method (Ajv, draft 2020-12); every method is covered;
 * - openapi.json documents a result for every method and alias (no `{}` anywhere in a result).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import bs58 from 'bs58';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Indexer } from '../src/ingest/indexer.ts';
import { loadTransactionFiles, type TransactionFile } from '../src/ingest/sources/files.ts';
import { parseTransaction } from '../src/light/parser.ts';
import { METHODS, METHOD_NAMES, findMethod } from '../src/rpc/methods/index.ts';
import { buildOpenApi } from '../src/rpc/openapi.ts';
import { RESULT_SCHEMAS, resultSchemaId, resultSchemaOf } from '../src/rpc/resultSchemas.ts';
import { SolanaRpc } from '../src/solana/rpcClient.ts';
import { Store } from '../src/store/store.ts';
import type { BlockInfo } from '../src/types.ts';
import { PHOTON_DIR, tempDir, txDir } from './helpers/photon.ts';
import { fakeSolana, fixtureStore, lmdbServer, registry, rpcCall, stubProver } from './helpers/rpcLmdb.ts';

const AMT1 = 'amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2';
const HLKS5 = 'HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu';
const EZKE8 = 'EzKE84aVTkCUhDHLELqyJaq1Y7UVVmqxXqZjVHwHY3rK';

const doc = buildOpenApi(METHODS) as any;
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema({ ...doc, $id: 'refract:openapi.json' });

/** Validate `result` of `method` (canonical name or alias) with zod (strict) and with openapi.json's JSON Schema. */
function expectValid(method: string, result: unknown, label = method): void {
  const def = findMethod(method);
  expect(def, `unknown method ${method}`).toBeDefined();
  const parsed = resultSchemaOf(def!.name).safeParse(result);
  expect(parsed.success ? [] : parsed.error.issues.slice(0, 5), `${label}: zod`).toEqual([]);
  // The JSON Schema the document gives for this method's 200 response (the `result` $ref).
  const ref = doc.paths[`/${method}`].post.responses['200'].content['application/json'].schema.properties.result.$ref as string;
  expect(ref).toBe(`#/components/schemas/${resultSchemaId(def!.name)}`);
  const validate = ajv.getSchema(`refract:openapi.json${ref}`)!;
  expect(validate, ref).toBeDefined();
  validate(result);
  expect(validate.errors?.slice(0, 5) ?? [], `${label}: openapi.json`).toEqual([]);
}

/** Canonical names of the methods whose responses were checked. */
const exercised = new Set<string>();

/** POST one call, expect a result (HTTP 200), check it against its schemas; returns the result. */
async function call(app: FastifyInstance, method: string, params?: unknown): Promise<any> {
  const r = await rpcCall(app, method, params);
  expect(r.status, `${method}: ${r.text.slice(0, 300)}`).toBe(200);
  expect(r.body, method).toHaveProperty('result');
  expectValid(method, r.body.result);
  // The whole reply against the method's documented 200 response (envelope and result).
  const envelope = ajv.getSchema(`refract:openapi.json#/paths/~1${method}/post/responses/200/content/application~1json/schema`)!;
  expect(envelope, method).toBeDefined();
  envelope(r.body);
  expect(envelope.errors ?? [], `${method}: reply envelope`).toEqual([]);
  exercised.add(findMethod(method)!.name);
  return r.body.result;
}

describe('a result schema per method', () => {
  it('every method in src/rpc/methods has one, and nothing else is listed', () => {
    expect(Object.keys(RESULT_SCHEMAS).sort()).toEqual(METHODS.map((m) => m.name).sort());
    expect(() => resultSchemaOf('getEverything')).toThrow('no result schema for method getEverything');
  });

  it('is strict: an unknown key, a u64 written as a string, a non-base58 hash or a hash above the modulus fails', () => {
    const ok = { context: { slot: 1 }, value: { amount: 5 } };
    const s = resultSchemaOf('getCompressedTokenAccountBalance');
    expect(s.safeParse(ok).success).toBe(true);
    expect(s.safeParse({ ...ok, extra: 1 }).success).toBe(false);
    expect(s.safeParse({ ...ok, value: { amount: 5, x: 1 } }).success).toBe(false);
    expect(s.safeParse({ ...ok, value: { amount: '5' } }).success).toBe(false);
    expect(s.safeParse({ ...ok, value: { amount: 1.5 } }).success).toBe(false);
    const proof = resultSchemaOf('getMultipleCompressedAccountProofs');
    const p = { proof: [], root: '1'.repeat(32), leafIndex: 0, hash: '1'.repeat(32), merkleTree: AMT1, rootSeq: 0 };
    expect(proof.safeParse({ context: { slot: 0 }, value: [p] }).success).toBe(true);
    expect(proof.safeParse({ context: { slot: 0 }, value: [{ ...p, hash: '0'.repeat(32) }] }).success).toBe(false);
    expect(proof.safeParse({ context: { slot: 0 }, value: [{ ...p, hash: bs58.encode(new Uint8Array(32).fill(255)) }] }).success).toBe(false);
    expect(proof.safeParse({ context: { slot: 0 }, value: [{ ...p, merkleTree: bs58.encode(new Uint8Array(31).fill(1)) }] }).success).toBe(false);
  });
});

/** The snapshot files and the method whose result each holds (`items` = a concatenated signature list). */
const SNAPSHOT_METHODS: readonly [RegExp, string, 'result' | 'items'][] = [
  [/e2e_mint_and_transfer_transactions-\w+-accounts\.snap$/, 'getCompressedTokenAccountsByOwner', 'result'],
  [/e2e_mint_and_transfer_transactions-\w+-accounts-v2\.snap$/, 'getCompressedTokenAccountsByOwnerV2', 'result'],
  [/lamport_transfers-\w+-accounts\.snap$/, 'getCompressedAccountsByOwner', 'result'],
  [/-proofs\.snap$/, 'getMultipleCompressedAccountProofs', 'result'],
  [/-validity-proof\.snap$/, 'getValidityProof', 'result'],
  [/-validity-proof-v2\.snap$/, 'getValidityProofV2', 'result'],
  [/-token-balances\.snap$/, 'getCompressedTokenBalancesByOwner', 'result'],
  [/-token-signatures\.snap$/, 'getCompressionSignaturesForTokenOwner', 'items'],
  [/-latest-signatures\.snap$/, 'getLatestCompressionSignatures', 'items'],
  [/-(mint|transfer)-transaction\.snap$/, 'getTransactionWithCompressionInfo', 'result'],
  [/-(mint|transfer)-transaction-v2\.snap$/, 'getTransactionWithCompressionInfoV2', 'result'],
  [/-lamport_transfers-signatures\.snap$/, 'getCompressionSignaturesForOwner', 'result'],
  [/get_lanon_voting_signatures-non-voting-transactions\.snap$/, 'getLatestNonVotingSignatures', 'result'],
  [/get_multiple_new_address_proofs\.snap$/, 'getMultipleNewAddressProofs', 'result'],
];

describe('the reference snapshots (test/fixtures/photon/snapshots)', () => {
  const dir = join(PHOTON_DIR, 'snapshots');
  const files = readdirSync(dir).filter((f) => f.endsWith('.snap'));

  it('each validates against its method result schema', () => {
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const matches = SNAPSHOT_METHODS.filter(([re]) => re.test(f));
      expect(matches.map(([, m]) => m), `${f}: exactly one method`).toHaveLength(1);
      const [, method, kind] = matches[0]!;
      const body = JSON.parse(readFileSync(join(dir, f), 'utf8').split(/^---$/m).slice(2).join('---'));
      let result = kind === 'items' ? { context: { slot: 0 }, value: { items: body, cursor: null } } : body;
      if (/validity-proof/.test(f)) {
        // The reference blanks the randomised proof (`{a: [], b: [], c: []}`); a real one has 32, 64, 32 bytes.
        expect(body.value.compressedProof).toEqual({ a: [], b: [], c: [] });
        result = { ...body, value: { ...body.value, compressedProof: { a: Array(32).fill(0), b: Array(64).fill(0), c: Array(32).fill(0) } } };
      }
      expectValid(method, result, f);
      if (method === 'getMultipleNewAddressProofs') expectValid('getMultipleNewAddressProofsV2', result, f);
    }
  });
});

describe('responses on the legacy fixtures (LMDB): every golden call and every other method', () => {
  let store: Store;
  let app: FastifyInstance;
  let solana: Awaited<ReturnType<typeof fakeSolana>>;
  beforeAll(async () => {
    store = fixtureStore('e2e');
    solana = await fakeSolana([txDir('e2e_mint_and_transfer_transactions')]);
    app = lmdbServer(store, { dataOptions: { solana: new SolanaRpc(solana.url) }, prover: stubProver }).app;
  });
  afterAll(async () => {
    await app.close();
    await solana.close();
    await store.close();
  });

  it('e2e_mint_and_transfer_transactions', async () => {
    for (const owner of ['EU57rQxcmFhJ24ApVdUy3y4MxFXcTUN3uiVeWvGgtWXu', 'CHvwuTvTiwRSNBwAnrCG14V8YTJ6wwhHQrifxdFzHzsX']) {
      const accounts = await call(app, 'getCompressedTokenAccountsByOwner', { owner });
      await call(app, 'getCompressedTokenAccountsByOwnerV2', { owner });
      const page = await call(app, 'getCompressedTokenAccountsByOwner', { owner, limit: 1 });
      expect(page.value.cursor).not.toBeNull();
      await call(app, 'getCompressedTokenAccountsByOwnerV2', { owner, limit: 1, cursor: page.value.cursor });
      await call(app, 'getCompressedTokenAccountsByDelegate', { delegate: owner });
      await call(app, 'getCompressedTokenAccountsByDelegateV2', { delegate: owner });
      const hashes = accounts.value.items.map((i: any) => i.account.hash);
      await call(app, 'getMultipleCompressedAccountProofs', hashes);
      await call(app, 'getMultipleCompressedAccountProofsV2', hashes);
      await call(app, 'getCompressedAccountProof', { hash: hashes[0] });
      await call(app, 'getCompressedAccountProofV2', { hash: hashes[0] });
      await call(app, 'getCompressedTokenBalancesByOwner', { owner });
      await call(app, 'getCompressedTokenBalancesByOwnerV2', { owner, limit: 1 });
      await call(app, 'getValidityProof', { hashes });
      await call(app, 'getValidityProofV2', { hashes });
      await call(app, 'getCompressionSignaturesForTokenOwner', { owner, limit: 1 });
      await call(app, 'getCompressionSignaturesForTokenOwner', { owner });
      await call(app, 'getCompressedTokenAccountBalance', { hash: hashes[0] });
      await call(app, 'getCompressedTokenAccountBalance', { address: owner });
      const mint = accounts.value.items[0].tokenData.mint;
      const holders = await call(app, 'getCompressedMintTokenHolders', { mint, limit: 1 });
      await call(app, 'getCompressedMintTokenHolders', { mint, cursor: holders.value.cursor });
      for (const hash of hashes) {
        for (const m of ['getCompressedAccount', 'getCompressedAccountV2', 'getCompressedBalance', 'getCompressedAccountBalance', 'getCompressionSignaturesForAccount']) {
          await call(app, m, { hash });
        }
      }
      for (const m of ['getMultipleCompressedAccounts', 'getMultipleCompressedAccountsV2']) await call(app, m, { hashes: [...hashes, '11111111111111111111111111111111'] });
    }
    await call(app, 'getLatestCompressionSignatures', { limit: 1 });
    await call(app, 'getLatestCompressionSignatures', {});
    await call(app, 'getLatestNonVotingSignatures', {});
    for (const signature of [
      '64jFxW4xxife8UqpEQyYdA589rzFKWx8rT4vun6soCpWXmDermr588UKX2261YYZ8ZSzcu2NUJY2aCfee64FvTW4',
      '5UZuijpSnqBpgMpqnggxZ58bzZ8aJtqqVjtvzx2Pg2C58jXph1rdrXyHdTxJfsHawNJyr8syU4U1MEYccDUQeTSV',
    ]) {
      await call(app, 'getTransactionWithCompressionInfo', { signature });
      await call(app, 'getTransactionWithCompressionInfoV2', { signature });
    }
    // A spent account: null value, balance 0.
    await call(app, 'getCompressedAccount', { hash: '38eTBdRT4kdFELvNfbJbFZNvGWUvXbn3DdJn3PzMtsqJ' });
    await call(app, 'getCompressedBalance', { hash: '38eTBdRT4kdFELvNfbJbFZNvGWUvXbn3DdJn3PzMtsqJ' });
    // New addresses: alone (V1 through the deprecated newAddresses, V2 with their tree) and combined with an account.
    const address = 'Fi6AXBGuGs7DRXP428hwhJJfTpJ4BVZD8DiUcX1cj35W';
    await call(app, 'getValidityProof', { newAddresses: [address] });
    await call(app, 'getValidityProofV2', { newAddressesWithTrees: [{ address, tree: AMT1 }] });
    await call(app, 'getValidityProofV2', {});
    await call(app, 'getIndexerSlot');
    await call(app, 'getIndexerHealth');
    await call(app, 'liveness');
    await call(app, 'readiness');
  });

  it('lamport_transfers', async () => {
    const s = fixtureStore('lamports');
    const { app: a } = lmdbServer(s, { prover: stubProver });
    for (const owner of ['J6ULJViDpQTRntYTmfkpUZZ71KTVkZNJFSDcQhFCo5Ef', 'FLkMEA7eA82Cvp7MqamqFKsRN3E2Vfg3Xa8NRyVARq5n']) {
      const accounts = await call(a, 'getCompressedAccountsByOwner', { owner });
      await call(a, 'getCompressedAccountsByOwnerV2', { owner });
      const page = await call(a, 'getCompressedAccountsByOwner', { owner, limit: 1 });
      await call(a, 'getCompressedAccountsByOwner', { owner, limit: 1, cursor: page.value.cursor });
      await call(a, 'getCompressedAccountsByOwner', { owner, dataSlice: { offset: 0, length: 0 } });
      const hashes = accounts.value.items.map((x: any) => x.hash);
      await call(a, 'getMultipleCompressedAccountProofs', hashes);
      await call(a, 'getValidityProof', { hashes });
      for (const hash of hashes) await call(a, 'getCompressedAccountProof', { hash });
      await call(a, 'getCompressionSignaturesForOwner', { owner });
      await call(a, 'getCompressionSignaturesForOwner', { owner, limit: 1 });
      await call(a, 'getCompressedBalanceByOwner', { owner });
      await call(a, 'getCompressionSignaturesForAddress', { address: owner });
    }
    await a.close();
    await s.close();
  });

  it('the getBlock fixture and an empty store', async () => {
    const block = fixtureStore('block');
    const b = lmdbServer(block).app;
    await call(b, 'getLatestNonVotingSignatures', {});
    await call(b, 'getLatestNonVotingSignatures', { limit: 2 });
    await b.close();
    await block.close();
    const empty = fixtureStore('empty');
    const e = lmdbServer(empty).app;
    const addresses = ['Fi6AXBGuGs7DRXP428hwhJJfTpJ4BVZD8DiUcX1cj35W', 'sH8ux4csv8wxiRejuHjpTCkrfGgeNtg6Y55AJJ9GJSd'];
    await call(e, 'getMultipleNewAddressProofs', addresses);
    await call(e, 'getMultipleNewAddressProofsV2', addresses.map((address) => ({ address, tree: AMT1 })));
    await call(e, 'getQueueInfo', {});
    await e.close();
    await empty.close();
  });
});

describe('responses on the v2 fixtures (LMDB)', () => {
  const block = (f: TransactionFile): BlockInfo => ({ slot: f.slot, parentSlot: 0, blockTime: 0, blockHeight: 0, blockhash: '', previousBlockhash: '', transactions: [f.transaction] });
  const isBatch = (f: TransactionFile) => parseTransaction(f.transaction, f.slot).events.some((e) => e.kind === 'batch');

  /** A store with `files` indexed one per block, an API over it (stub prover, fake Solana over `folder`). */
  async function v2Api(folder: string, files: TransactionFile[]) {
    const store = new Store({ path: tempDir('refract-rpc-schemas-') });
    const indexer = new Indexer(store, registry);
    for (const f of files) expect(indexer.indexBlocks([block(f)]).rejected).toEqual([]);
    const solana = await fakeSolana([txDir(folder)]);
    const { app } = lmdbServer(store, { dataOptions: { solana: new SolanaRpc(solana.url) }, prover: stubProver });
    return {
      app,
      index: (more: TransactionFile[]) => more.forEach((f) => expect(indexer.indexBlocks([block(f)]).rejected).toEqual([])),
      async close() {
        await app.close();
        await solana.close();
        await store.close();
      },
    };
  }

  /** Transactions, their compression info (V1 and V2) and the accounts they opened, newest first. */
  async function transactions(app: FastifyInstance, limit: number) {
    const sigs = (await call(app, 'getLatestCompressionSignatures', { limit })).value.items.map((s: any) => s.signature);
    const opened: any[] = [];
    for (const signature of sigs) {
      await call(app, 'getTransactionWithCompressionInfo', { signature });
      const v2 = await call(app, 'getTransactionWithCompressionInfoV2', { signature });
      opened.push(...v2.compressionInfo.openedAccounts);
    }
    return opened;
  }

  it('batched_tree_transactions: queued accounts (proved by index), queues, then after the batch events', async () => {
    const files = loadTransactionFiles([txDir('batched_tree_transactions')]);
    const api = await v2Api('batched_tree_transactions', files.filter((f) => !isBatch(f)));
    const opened = await transactions(api.app, 6);
    const hashes = opened.map((o) => o.account.hash);
    expect(opened.some((o) => o.account.proveByIndex)).toBe(true);
    // getValidityProofV2 refuses spent accounts: prove the live ones.
    const live: string[] = [];
    for (const h of hashes) if ((await call(api.app, 'getCompressedAccountV2', { hash: h })).value !== null) live.push(h);
    expect(live.length).toBeGreaterThan(0);
    const check = async () => {
      for (const o of opened) {
        await call(api.app, 'getCompressedAccountV2', { hash: o.account.hash });
        await call(api.app, 'getCompressedAccount', { hash: o.account.hash });
        await call(api.app, 'getCompressedAccountsByOwnerV2', { owner: o.account.owner });
        await call(api.app, 'getCompressedAccountProofV2', { hash: o.account.hash });
      }
      await call(api.app, 'getMultipleCompressedAccountsV2', { hashes });
      await call(api.app, 'getMultipleCompressedAccountProofsV2', hashes);
      await call(api.app, 'getValidityProofV2', { hashes: live.slice(0, 4) });
      await call(api.app, 'getQueueElements', { tree: HLKS5, outputQueueLimit: 100, outputQueueZkpBatchSize: 10, inputQueueLimit: 100, inputQueueZkpBatchSize: 10 });
      await call(api.app, 'getQueueElements', { tree: HLKS5, outputQueue: { limit: 10 } });
      await call(api.app, 'getQueueInfo', {});
      await call(api.app, 'getQueueInfo', { trees: [HLKS5] });
    };
    await check();
    api.index(files.filter(isBatch));
    await check();
    await api.close();
  });

  it('batched_address_transactions: the address queue, new-address proofs and validity proofs on EzKE8', async () => {
    const files = loadTransactionFiles([txDir('batched_address_transactions')]);
    const api = await v2Api('batched_address_transactions', files.filter((f) => !isBatch(f)));
    const fresh = bs58.encode(Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 0 : 7)));
    const check = async () => {
      await call(api.app, 'getQueueElements', { tree: EZKE8, addressQueueLimit: 100 });
      await call(api.app, 'getQueueInfo', { trees: [EZKE8] });
      await call(api.app, 'getMultipleNewAddressProofsV2', [{ address: fresh, tree: EZKE8 }]);
      await call(api.app, 'getValidityProofV2', { newAddressesWithTrees: [{ address: fresh, tree: EZKE8 }] });
      await call(api.app, 'getValidityProof', { newAddressesWithTrees: [{ address: fresh, tree: EZKE8 }] });
    };
    await check();
    await transactions(api.app, 3);
    api.index(files.filter(isBatch));
    await check();
    await api.close();
  });

  it('cToken transfers on HLKs5 and the compress-and-close with TLV: token accounts, balances, holders', async () => {
    for (const folder of ['batched_tree_token_transactions', 'index_compress_and_close_with_tlv']) {
      const api = await v2Api(folder, loadTransactionFiles([txDir(folder)]));
      const opened = await transactions(api.app, 10);
      const tokens = opened.filter((o) => o.optionalTokenData);
      expect(tokens.length, folder).toBeGreaterThan(0);
      if (folder === 'index_compress_and_close_with_tlv') expect(tokens.some((o) => o.optionalTokenData.tlv !== null)).toBe(true);
      for (const { optionalTokenData: t } of tokens) {
        await call(api.app, 'getCompressedTokenAccountsByOwner', { owner: t.owner });
        await call(api.app, 'getCompressedTokenAccountsByOwnerV2', { owner: t.owner });
        await call(api.app, 'getCompressedTokenBalancesByOwner', { owner: t.owner });
        await call(api.app, 'getCompressedTokenBalancesByOwnerV2', { owner: t.owner });
        await call(api.app, 'getCompressedMintTokenHolders', { mint: t.mint });
        await call(api.app, 'getCompressionSignaturesForTokenOwner', { owner: t.owner });
      }
      await api.close();
    }
  });
});

describe('coverage', () => {
  it('every method had responses checked', () => {
    expect([...exercised].sort()).toEqual(METHODS.map((m) => m.name).sort());
  });
});

describe('openapi.json', () => {
  /** Schema nodes (in schema positions) that say nothing: no keyword but annotations. */
  function untyped(schema: unknown, path: string, out: string[]): void {
    if (schema === null || typeof schema !== 'object') return;
    if (Array.isArray(schema)) return schema.forEach((s, i) => untyped(s, `${path}[${i}]`, out));
    const s = schema as Record<string, unknown>;
    if (Object.keys(s).every((k) => k === 'description' || k === 'title')) out.push(path);
    for (const k of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) if (Array.isArray(s[k])) (s[k] as unknown[]).forEach((x, i) => untyped(x, `${path}.${k}[${i}]`, out));
    if (s.items && typeof s.items === 'object') untyped(s.items, `${path}.items`, out);
    if (s.properties) for (const [k, v] of Object.entries(s.properties as object)) untyped(v, `${path}.properties.${k}`, out);
  }

  it('documents a result for every method and alias, none of them `{}`, each resolving to a component', () => {
    expect(Object.keys(doc.paths).filter((p) => p !== '/' && p !== '/health').map((p) => p.slice(1)).sort()).toEqual([...METHOD_NAMES]);
    const schemas = doc.components.schemas as Record<string, unknown>;
    for (const name of METHOD_NAMES) {
      const result = doc.paths[`/${name}`].post.responses['200'].content['application/json'].schema.properties.result;
      expect(result, name).not.toEqual({});
      const id = result.$ref.replace('#/components/schemas/', '');
      expect(schemas[id], name).toBeDefined();
      expect(schemas[id], name).not.toEqual({});
    }
    // Every `$ref` in the document points at a component that exists.
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    for (const r of refs) expect(schemas[r.slice(8, -1).replace('#/components/schemas/', '')], r).toBeDefined();
    // No untyped schema inside any result, except Solana's transaction error (its own open JSON, passed through).
    const found: string[] = [];
    for (const [id, s] of Object.entries(schemas)) untyped(s, id, found);
    expect(found).toEqual(['SolanaTransaction.properties.meta.anyOf[0].properties.err']);
    // The batch endpoint documents its replies too.
    const root = doc.paths['/'].post.responses['200'].content['application/json'].schema.anyOf;
    expect(root).toHaveLength(METHODS.length + 1);
    expect(root.at(-1)).toMatchObject({ type: 'array', minItems: 1 });
  });

  it('GET /openapi.json serves the same document', async () => {
    const store = fixtureStore('empty');
    const { app } = lmdbServer(store);
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toEqual(doc);
    await app.close();
    await store.close();
  });
});
