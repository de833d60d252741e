/**
 * Trees from the chain (src/ingest/treeSync.ts) against a tiny local JSON-RPC node (node:http)
 * serving the REAL account dumps of test/fixtures/light-accounts: the registry gets the dumps' trees with
 * their own root-history capacities (chain over config, differences logged once); a validity proof's
 * root index uses the chain's capacity; a node refusing getProgramAccounts → warning + the config;
 * an unknown tree met during ingest is looked up with getAccountInfo once (negative cache, TTL).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import bs58 from 'bs58';
import type { Logger } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeTreeAccount } from '../src/light/treeAccounts.ts';
import { DEFAULT_TREE_OWNER } from '../src/light/constants.ts';
import { TreeResolver, syncTreeRegistry } from '../src/ingest/treeSync.ts';
import { TreeRegistry, loadTreeRegistry } from '../src/config/trees.ts';
import { getValidityProofPaths } from '../src/query/validityProofPaths.ts';
import { SolanaRpc } from '../src/solana/rpcClient.ts';
import { fixtureFiles, fixtureStore } from './helpers/rpcLmdb.ts';
import { runIngest } from '../src/ingest/loop.ts';
import { pollPreparedBatches } from '../src/ingest/preparedBatches.ts';
import type { IngestEvent } from '../src/ingest/progress.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { Store } from '../src/store/store.ts';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../src/config/config.ts';
import { snapshot, tempDir } from './helpers/photon.ts';
import { loadLightAccounts } from './helpers/lightAccounts.ts';

const ACP = 'compr6CUsB5m2jS4Y3831ztGSTnDpnKJTKS95d64XVq';
const SMT1 = 'smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT';
const NFQ1 = 'nfq1NvQDJ2GEgnS8zt9prAe8rjjpAW1zFkrvZoBR148';
const HLKS5 = 'HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu';
const OQ1 = 'oq1na8gojfdUhsfCpyjNt6h4JaDWtHf1yQj4koBWfto';
const BMT1 = 'bmt1LryLZUMmF7ZtqESaw7wifBXLfXHQYoE4GAmrahU';
const key = (n: number) => bs58.encode(Uint8Array.from({ length: 32 }, (_, i) => (i * 13 + n) & 0xff));
const FOREIGN_TREE = key(1);
const FOREIGN_OWNER = key(2);
const NOT_LIGHT = key(3);

type Acc = { data: [string, 'base64']; owner: string; lamports: number; executable: boolean; space: number };
const accounts = new Map<string, Acc>();
for (const d of loadLightAccounts().values()) accounts.set(d.pubkey, { data: d.account.data, owner: d.account.owner, lamports: d.account.lamports, executable: false, space: d.account.space });
const b64acc = (bytes: Uint8Array, owner = ACP): Acc => ({ data: [Buffer.from(bytes).toString('base64'), 'base64'], owner, lamports: 1, executable: false, space: bytes.length });
// A tree of another owner (dropped by the sync), and an ACP account of another kind (not a tree).
accounts.set(FOREIGN_TREE, b64acc(encodeTreeAccount({ kind: 'tree', tree: FOREIGN_TREE, queue: FOREIGN_TREE, type: 'AddressV2', height: 40, rootHistoryCapacity: 7, nextIndex: 1, sequenceNumber: 0, owner: FOREIGN_OWNER })));
accounts.set(NOT_LIGHT, b64acc(Buffer.alloc(64, 9)));

// Blocks 1 (Photon's e2e transactions on smt1, v1) and 2 (empty) for the ingest-time lookup.
const e2eTxs = fixtureFiles('e2e').map((f) => JSON.parse(readFileSync(f, 'utf8')) as { transaction: unknown; meta: unknown; version: unknown });
const block = (slot: number, txs: typeof e2eTxs) => ({
  blockHeight: slot, blockTime: 1_700_000_000 + slot, blockhash: bs58.encode(Buffer.alloc(32, slot)), previousBlockhash: bs58.encode(Buffer.alloc(32, slot - 1)), parentSlot: slot - 1, rewards: [],
  transactions: txs.map((t) => ({ transaction: t.transaction, meta: t.meta, version: t.version })),
});
const blocks: Record<number, object> = { 1: block(1, e2eTxs), 2: block(2, []) };

let server: Server;
let url: string;
let refuse = false;
const calls: { method: string; params: unknown[] }[] = [];
const slice = (a: Acc, s?: { offset: number; length: number }): Acc =>
  s ? { ...a, data: [Buffer.from(a.data[0], 'base64').subarray(s.offset, s.offset + s.length).toString('base64'), 'base64'] } : a;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const msg = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      calls.push({ method: msg.method, params: msg.params });
      const reply = (o: object) => res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...o }));
      const cfg = (msg.params[1] ?? {}) as { dataSlice?: { offset: number; length: number } };
      if (msg.method === 'getProgramAccounts') {
        if (refuse) return reply({ error: { code: -32010, message: `${ACP} excluded from account secondary indexes; this RPC method unavailable for key` } });
        return reply({ result: [...accounts].filter(([, a]) => a.owner === msg.params[0]).map(([pubkey, a]) => ({ pubkey, account: slice(a, cfg.dataSlice) })) });
      }
      if (msg.method === 'getSlot') return reply({ result: 2 });
      if (msg.method === 'getFirstAvailableBlock') return reply({ result: 1 });
      if (msg.method === 'getBlock') return reply({ result: blocks[Number(msg.params[0])] ?? null });
      if (msg.method === 'getAccountInfo') {
        const a = accounts.get(String(msg.params[0]));
        return reply({ result: { context: { slot: 1 }, value: a ? slice(a, cfg.dataSlice) : null } });
      }
      reply({ error: { code: -32601, message: 'Method not found' } });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  refuse = false;
  calls.length = 0;
});

/** A pino-shaped logger recording (level, message, fields). */
function recordingLog() {
  const lines: { level: string; msg: string; obj: Record<string, unknown> }[] = [];
  const at = (level: string) => (obj: unknown, msg?: string) => lines.push(typeof obj === 'string' ? { level, msg: obj, obj: {} } : { level, msg: msg ?? '', obj: obj as Record<string, unknown> });
  return { lines, log: { warn: at('warn'), info: at('info'), debug: at('debug'), error: at('error') } as unknown as Logger };
}

describe('syncTreeRegistry', () => {
  it('fills the registry with the dumps\' trees and their own capacities (one getProgramAccounts, header slice only)', async () => {
    const { log, lines } = recordingLog();
    const s = await syncTreeRegistry(new SolanaRpc(url), [], { log });
    expect(s.source).toBe('chain');
    expect(s.chainTrees).toBe(6);
    const got = Object.fromEntries(s.registry.all().map((t) => [t.tree, [t.type, t.height, t.rootHistoryCapacity, t.queue]]));
    expect(got).toMatchObject({
      [HLKS5]: ['StateV2', 32, 20, '6L7SzhYB3anwEQ9cphpJ1U7Scwj57bx2xueReg7R9cKU'],
      [BMT1]: ['StateV2', 32, 200, OQ1],
      EzKE84aVTkCUhDHLELqyJaq1Y7UVVmqxXqZjVHwHY3rK: ['AddressV2', 40, 200, 'EzKE84aVTkCUhDHLELqyJaq1Y7UVVmqxXqZjVHwHY3rK'],
      amt2kaJA14v3urZbZvnc5v2np8jqvc4Z8zDep5wbtzx: ['AddressV2', 40, 200, 'amt2kaJA14v3urZbZvnc5v2np8jqvc4Z8zDep5wbtzx'],
      [SMT1]: ['StateV1', 26, 2400, NFQ1],
      amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2: ['AddressV1', 26, 2400, 'aq1S9z4reTSQAdgWHGD2zDaS39sjGrAxbR31vxJ2F4F'],
    });
    // config/trees.json's smt2 (not on this chain) is kept; the other owner's tree is not taken.
    expect(s.registry.get('smt2rJAFdyJJupwMKAqTNAJwvjhmiZ4JYGZmbVRw1Ho')?.type).toBe('StateV1');
    expect(s.registry.get(FOREIGN_TREE)).toBeUndefined();
    expect(s.registry.get(OQ1)?.tree).toBe(BMT1); // outputs naming the output queue find their tree
    expect(calls.map((c) => c.method)).toEqual(['getProgramAccounts']);
    expect(calls[0]!.params).toEqual([ACP, { encoding: 'base64', commitment: 'confirmed', dataSlice: { offset: 0, length: 344 } }]);
    expect(lines.filter((l) => l.level === 'warn')).toEqual([]); // the dumps agree with config/trees.json
    expect(lines.find((l) => l.msg.includes('trees of other owners'))?.obj).toMatchObject({ others: { [FOREIGN_TREE]: FOREIGN_OWNER } });
  });

  it('the chain wins over the config, the difference is logged once, and a root index uses the chain\'s capacity', async () => {
    // A chain whose smt1 keeps 5 roots (like mainnet's bmt1 keeps 60, not 200): config says 2400.
    const real = accounts.get(SMT1)!;
    accounts.set(SMT1, b64acc(encodeTreeAccount({ kind: 'tree', tree: SMT1, queue: NFQ1, type: 'StateV1', height: 26, rootHistoryCapacity: 5, nextIndex: 8, sequenceNumber: 9, owner: DEFAULT_TREE_OWNER })));
    try {
      const { log, lines } = recordingLog();
      const s = await syncTreeRegistry(new SolanaRpc(url), [{ tree: SMT1, queue: NFQ1, type: 'StateV1', height: 26, rootHistoryCapacity: 2400 }], { log });
      expect(s.registry.get(SMT1)?.rootHistoryCapacity).toBe(5);
      const warns = lines.filter((l) => l.level === 'warn');
      expect(warns).toHaveLength(1);
      expect(warns[0]!.msg).toBe(`tree ${SMT1}: chain and config differ in rootHistoryCapacity; using the chain's`);
      expect(warns[0]!.obj).toMatchObject({ config: { rootHistoryCapacity: 2400 }, chain: { rootHistoryCapacity: 5 } });

      // Bob's accounts of Photon's e2e fixture: rootSeq 7 → root index 7 with 2400 roots (the snapshot), 7 % 5 = 2 with the chain's.
      const snap = snapshot('e2e_mint_and_transfer_transactions-bob-validity-proof');
      const store = fixtureStore('e2e');
      try {
        const hashes = (snap.value.leaves as string[]).map((h) => bs58.decode(h));
        const withConfig = store.read((r) => getValidityProofPaths(r, loadTreeRegistry(), { hashes, newAddresses: [] }, 'v1'));
        expect(withConfig.accounts.map((a) => a.rootIndex)).toEqual(snap.value.rootIndices);
        const withChain = store.read((r) => getValidityProofPaths(r, s.registry, { hashes, newAddresses: [] }, 'v1'));
        expect(withChain.accounts.map((a) => a.rootIndex)).toEqual((snap.value.rootIndices as number[]).map((i) => i % 5));
        expect(withChain.accounts[0]!.rootIndex).toBe(2);
      } finally {
        await store.close();
      }
    } finally {
      accounts.set(SMT1, real);
    }
  });

  it('a node refusing getProgramAccounts → a warning naming the error, and config/trees.json + config trees', async () => {
    refuse = true;
    const { log, lines } = recordingLog();
    const extra = { tree: BMT1, queue: OQ1, type: 'StateV2' as const, height: 32, rootHistoryCapacity: 60 };
    const s = await syncTreeRegistry(new SolanaRpc(url), [extra], { log });
    expect(s.source).toBe('config');
    // config/trees.json's trees, with the config's `trees` entry over its bmt1.
    expect(s.registry.all().map((t) => t.tree).sort()).toEqual([...new Set([...loadTreeRegistry().all().map((t) => t.tree), BMT1])].sort());
    expect(s.registry.get(BMT1)?.rootHistoryCapacity).toBe(60);
    const warn = lines.find((l) => l.level === 'warn');
    expect(warn?.msg).toContain('the node did not answer getProgramAccounts');
    expect(String(warn?.obj.err)).toContain('excluded from account secondary indexes');
  });

  it('an unreachable node → the same fallback; no rpc (treeSync off / no ingest) → config without a request', async () => {
    const { log, lines } = recordingLog();
    const s = await syncTreeRegistry(new SolanaRpc('http://127.0.0.1:1', { timeoutMs: 2000 }), [], { log });
    expect(s.source).toBe('config');
    expect(String(lines.find((l) => l.level === 'warn')?.obj.err)).toMatch(/getProgramAccounts: http:\/\/127\.0\.0\.1:1 unreachable/);
    const off = await syncTreeRegistry(null, [], { log });
    expect([off.source, off.registry.all().length]).toEqual(['config', loadTreeRegistry().all().length]);
  });
});

/** config/trees.json's registry without HLKs5 and bmt1, so that the resolver meets them as unknown trees. */
function withoutBatchedStateTrees(): TreeRegistry {
  return new TreeRegistry(loadTreeRegistry().all().filter((t) => t.tree !== HLKS5 && t.tree !== BMT1).map(({ tree, queue, type, height, rootHistoryCapacity }) => ({ tree, queue, type, height, rootHistoryCapacity })));
}

describe('TreeResolver (unknown tree met during ingest)', () => {
  it('an unknown tree pubkey → getAccountInfo once; found trees join the registry, a queue leads to its tree', async () => {
    const registry = withoutBatchedStateTrees();
    const resolver = new TreeResolver(new SolanaRpc(url), registry, { owner: DEFAULT_TREE_OWNER });
    const added = await resolver.resolve([HLKS5, OQ1]);
    expect(added).toEqual([
      { tree: HLKS5, queue: '6L7SzhYB3anwEQ9cphpJ1U7Scwj57bx2xueReg7R9cKU', type: 'StateV2', height: 32, rootHistoryCapacity: 20 },
      { tree: BMT1, queue: OQ1, type: 'StateV2', height: 32, rootHistoryCapacity: 200 },
    ]);
    expect(registry.get(BMT1)?.rootHistoryCapacity).toBe(200);
    expect(calls.map((c) => `${c.method} ${String(c.params[0]).slice(0, 5)}`)).toEqual(['getAccountInfo HLKs5', 'getAccountInfo oq1na', 'getAccountInfo bmt1L']);
    calls.length = 0;
    expect(await resolver.resolve([HLKS5, OQ1, SMT1])).toEqual([]); // all known now: no request
    expect(calls).toEqual([]);
  });

  it('misses (no account, not a tree, another owner) are cached for the TTL, then asked again', async () => {
    let now = 1_000;
    const { log, lines } = recordingLog();
    const registry = loadTreeRegistry();
    const resolver = new TreeResolver(new SolanaRpc(url), registry, { owner: DEFAULT_TREE_OWNER, negativeTtlMs: 60_000, log, now: () => now });
    const missing = key(4);
    for (let i = 0; i < 3; i++) expect(await resolver.resolve([missing, NOT_LIGHT, FOREIGN_TREE])).toEqual([]);
    expect(calls.map((c) => c.method)).toEqual(['getAccountInfo', 'getAccountInfo', 'getAccountInfo']); // once each
    const reasons = lines.filter((l) => l.level === 'warn').map((l) => `${String(l.obj.pubkey).slice(0, 4)}: ${String(l.obj.reason)}`);
    expect(reasons).toEqual([
      `${missing.slice(0, 4)}: no account ${missing}`,
      `${NOT_LIGHT.slice(0, 4)}: account ${NOT_LIGHT}: discriminator 0909090909090909 is not a Light tree or queue account (known: batchedTree 42617463684d7461, batchedQueue 7175657565616363, stateTreeV1 ac2bacba1d49db54, addressTreeV1 0ba1af09d4e54949, queueV1 a4c86c3e573f7b41)`,
      `${FOREIGN_TREE.slice(0, 4)}: tree of owner ${FOREIGN_OWNER}, not the expected ${DEFAULT_TREE_OWNER}`,
    ]);
    now += 59_999;
    await resolver.resolve([missing]);
    expect(calls).toHaveLength(3);
    now += 1;
    await resolver.resolve([missing]);
    expect(calls).toHaveLength(4); // TTL over: asked again
    expect(registry.get(FOREIGN_TREE)).toBeUndefined();
  });

  it('an RPC failure is a cached miss too (no request storm), never a throw', async () => {
    const { log, lines } = recordingLog();
    const resolver = new TreeResolver(new SolanaRpc('http://127.0.0.1:1', { timeoutMs: 2000 }), withoutBatchedStateTrees(), { owner: DEFAULT_TREE_OWNER, log });
    expect(await resolver.resolve([HLKS5])).toEqual([]);
    expect(await resolver.resolve([HLKS5])).toEqual([]);
    const warns = lines.filter((l) => l.level === 'warn');
    expect(warns).toHaveLength(1);
    expect(String(warns[0]!.obj.reason)).toMatch(/^getAccountInfo failed: getAccountInfo: http:\/\/127\.0\.0\.1:1 unreachable/);
  });
});

describe('the simulator serves its trees (refract simulate → refract start exercises the sync)', () => {
  it('getProgramAccounts / getAccountInfo answer config/trees.json\'s trees and queues in the real layout', async () => {
    const { startSimulator } = await import('../src/sim/simulator.ts');
    const sim = await startSimulator({ port: 0, slotMs: 50 });
    try {
      const { log, lines } = recordingLog();
      const rpc = new SolanaRpc(sim.url);
      const s = await syncTreeRegistry(rpc, [], { log });
      expect([s.source, s.chainTrees]).toEqual(['chain', loadTreeRegistry().all().length]);
      expect(s.registry.all().map(({ tree, queue, type, height, rootHistoryCapacity }) => ({ tree, queue, type, height, rootHistoryCapacity }))).toEqual(loadTreeRegistry().all().map(({ tree, queue, type, height, rootHistoryCapacity }) => ({ tree, queue, type, height, rootHistoryCapacity })));
      expect(lines.filter((l) => l.level === 'warn')).toEqual([]);
      const resolver = new TreeResolver(rpc, new TreeRegistry([]), { owner: DEFAULT_TREE_OWNER });
      expect(await resolver.resolve([NFQ1, key(5)])).toEqual([{ tree: SMT1, queue: NFQ1, type: 'StateV1', height: 26, rootHistoryCapacity: 2400 }]);
      expect((await rpc.call<{ value: unknown }>('getAccountInfo', [key(5), { encoding: 'base64' }])).value).toBeNull();
      await expect(rpc.call('getAccountInfo', ['x0', { encoding: 'base64' }])).rejects.toThrow('getAccountInfo: Invalid params: pubkey (params[0]) must be a base58 32-byte pubkey, got "x0"');
      await expect(rpc.call('getProgramAccounts', [ACP, { encoding: 'jsonParsed' }])).rejects.toThrow('the simulator serves encoding "base64" only');
      expect(await rpc.getProgramAccounts(NOT_LIGHT)).toEqual([]);
    } finally {
      await sim.close();
    }
  });
});

describe('ingest meets a tree the registry does not know (pollPreparedBatches with a TreeResolver)', () => {
  const firstBatch = async (registry: TreeRegistry, resolver?: TreeResolver) => {
    const abort = new AbortController();
    const rpc = new SolanaRpc(url);
    for await (const item of pollPreparedBatches(rpc, { startSlot: 1, lastIndexedSlot: null, maxBatchBlocks: 10, lingerMs: 0, signal: abort.signal }, registry, resolver)) {
      abort.abort();
      return item;
    }
    throw new Error('no batch');
  };

  it('without a lookup its outputs are skipped; with one, getAccountInfo finds it and the batch is prepared with it', async () => {
    const skipped = await firstBatch(new TreeRegistry([]));
    expect(skipped.batch.records.length).toBeGreaterThan(0);
    expect([...skipped.batch.unknownTrees.keys()]).toContain(SMT1);
    expect(skipped.trees).toBeUndefined();

    calls.length = 0;
    const registry = new TreeRegistry([]);
    const item = await firstBatch(registry, new TreeResolver(new SolanaRpc(url), registry, { owner: DEFAULT_TREE_OWNER }));
    const lookups = calls.filter((c) => c.method === 'getAccountInfo').map((c) => c.params[0]);
    expect(lookups).toEqual([...skipped.batch.unknownTrees.keys()]); // one request per unknown tree
    expect(item.trees).toEqual([{ tree: SMT1, queue: NFQ1, type: 'StateV1', height: 26, rootHistoryCapacity: 2400 }]);
    expect([...item.batch.unknownTrees.keys()]).not.toContain(SMT1);
    expect(item.batch.outputs).toBeGreaterThan(skipped.batch.outputs);
    expect(registry.get(SMT1)?.rootHistoryCapacity).toBe(2400);
  });
});

describe('runIngest with treeLookup', () => {
  it('adds the found tree to the indexer\'s registry, reports it as a `trees` event, and indexes its outputs', async () => {
    const store = new Store({ path: tempDir('refract-treesync-') });
    const registry = new TreeRegistry([]);
    const events: IngestEvent[] = [];
    const abort = new AbortController();
    try {
      await runIngest(new Indexer(store, registry), new SolanaRpc(url), {
        concurrency: 2, maxBatchBlocks: 10, signal: abort.signal, log: recordingLog().log, treeLookup: { owner: DEFAULT_TREE_OWNER },
        onEvent: (e) => {
          events.push(e);
          if (e.kind === 'batch') abort.abort();
        },
      });
      const kinds = events.map((e) => e.kind).filter((k) => k !== 'tip' && k !== 'source'); // 'source': the live source at start (rpc)
      expect(kinds.slice(0, 2)).toEqual(['trees', 'batch']);
      expect(events.find((e) => e.kind === 'trees')).toEqual({ kind: 'trees', trees: [{ tree: SMT1, queue: NFQ1, type: 'StateV1', height: 26, rootHistoryCapacity: 2400 }] });
      const batch = events.find((e) => e.kind === 'batch') as Extract<IngestEvent, { kind: 'batch' }>;
      expect(batch.outputs).toBeGreaterThan(0);
      expect(batch.unknownTrees.map(([t]) => t)).not.toContain(SMT1);
      expect(registry.get(SMT1)?.rootHistoryCapacity).toBe(2400);
    } finally {
      await store.close();
    }
  });
});

describe('config: treeSync, treeOwner, treeLookupTtlSeconds', () => {
  it('defaults to syncing with Photon\'s expected owner; env and flags set them; a bad owner is named', () => {
    const file = join(tempDir('refract-cfg-'), 'refract.json');
    writeFileSync(file, '{}');
    expect(loadConfig({ file, env: {} })).toMatchObject({ treeSync: true, treeOwner: DEFAULT_TREE_OWNER, treeLookupTtlSeconds: 600 });
    expect(loadConfig({ file, env: { REFRACT_TREE_SYNC: 'off', REFRACT_TREE_OWNER: FOREIGN_OWNER, REFRACT_TREE_LOOKUP_TTL_SECONDS: '5' } })).toMatchObject({ treeSync: false, treeOwner: FOREIGN_OWNER, treeLookupTtlSeconds: 5 });
    expect(() => loadConfig({ file, env: {}, flags: { treeOwner: 'not-a-key' } })).toThrow(/treeOwner.*must be a base58 pubkey/);
  });
});
