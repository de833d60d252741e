/**
 * getMultipleNewAddressProofs(V2) refuse an address that already exists (issue #28): one already in
 * its address tree (V2: appended by a BatchAddressAppend; V1: inserted by an IndexedMerkleTreeEvent)
 * or still in an AddressV2 address queue, with `Validation Error: Address <base58> already exists`
 * (-32000, HTTP 400), the error getValidityProofV2 gives for the same addresses. A fresh address
 * still gets a proof. Over the reference fixture batched_address_transactions (test/fixtures/photon, read
 * in place: 50 addresses queued in EzKE8, then 5 BatchAddressAppend events) and, for V1 (no fixture
 * creates a v1 address), a store indexed from the generator's createAddress + addressUpdate
 * transactions. The in-memory test data source must answer the same.
 */
import bs58 from 'bs58';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Indexer } from '../src/ingest/indexer.ts';
import { loadTransactionFiles, type TransactionFile } from '../src/ingest/sources/files.ts';
import { indexedLeafHashV2 } from '../src/light/hashing.ts';
import { parseTransaction } from '../src/light/parser.ts';
import { poseidon2 } from '../src/merkle/poseidon.ts';
import { DEFAULT_METHOD_CONFIG } from '../src/rpc/context.ts';
import { buildServer } from '../src/rpc/http/server.ts';
import { LightTxGenerator } from '../src/sim/generator.ts';
import { decodeTransactionJson } from '../src/solana/decode.ts';
import { Store } from '../src/store/store.ts';
import type { BatchEvent, BlockInfo, TransactionInfo } from '../src/types.ts';
import { MemoryDataSource } from './helpers/memoryDataSource.ts';
import { tempDir, txDir } from './helpers/photon.ts';
import { lmdbServer, registry, rpcCall, rpcResult, type RpcReply } from './helpers/rpcLmdb.ts';
import type { ProofService } from '../src/prover/run/proofService.ts';
import type { LmdbDataSource } from '../src/rpc/lmdbDataSource.ts';
import { RefractValidityProver } from '../src/rpc/validityProver.ts';

const EZKE8 = 'EzKE84aVTkCUhDHLELqyJaq1Y7UVVmqxXqZjVHwHY3rK';
const AMT1 = 'amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2';

const files = loadTransactionFiles([txDir('batched_address_transactions')]);
const eventsOf = (f: TransactionFile) => parseTransaction(f.transaction, f.slot).events;
const batchEventOf = (f: TransactionFile): BatchEvent | undefined => eventsOf(f).flatMap((e) => (e.kind === 'batch' ? [e.event] : []))[0];
const userFiles = files.filter((f) => !batchEventOf(f));
/** The 50 addresses the user transactions queue in EzKE8, in queue order. */
const addresses = userFiles.flatMap((f) => eventsOf(f).flatMap((e) => (e.kind === 'batchPublicTransaction' ? e.event.newAddresses.map((a) => bs58.encode(a.address)) : [])));
const lastEvent = files.map(batchEventOf).filter((e): e is BatchEvent => !!e).pop()!;

/**
 * The production validity prover with a proof service that must never be reached: its store checks
 * (an existing address is refused) run before any proving.
 */
const checkingProver = (data: LmdbDataSource) =>
  new RefractValidityProver({
    data,
    service: new Proxy({}, { get: () => { throw new Error('the proof service was reached'); } }) as ProofService,
  });

/** An API server on `store` whose getValidityProof(V2) runs the production checks. */
const serve = (store: Store) => lmdbServer(store, { prover: checkingProver }).app;

const blockOf = (slot: number, tx: TransactionInfo): BlockInfo => ({ slot, parentSlot: 0, blockTime: 0, blockHeight: 0, blockhash: '', previousBlockhash: '', transactions: [tx] });

/** A store with `fs` indexed one transaction per block, each at its own slot. */
function indexed(fs: TransactionFile[]): Store {
  const store = new Store({ path: tempDir('refract-addr-exists-') });
  const indexer = new Indexer(store, registry);
  for (const f of fs) expect(indexer.indexBlocks([blockOf(f.slot, f.transaction)]).rejected).toEqual([]);
  return store;
}

/** A fresh address (byte 0 zero, so below 2^248). */
function freshAddress(fill: number): string {
  const b = new Uint8Array(32).fill(fill);
  b[0] = 0;
  return bs58.encode(b);
}

/** The refusal: Photon's validation error code and text, HTTP 400, no result. */
function expectExists(r: RpcReply, address: string): void {
  expect(r.status, r.text).toBe(400);
  expect(r.body.result).toBeUndefined();
  expect(r.body.error).toEqual({ code: -32000, message: `Validation Error: Address ${address} already exists` });
}

/** A proof item whose range strictly contains its address and whose path folds to its root (V2 leaf hash). */
function expectV2Proof(p: any, address: string, root: string): void {
  expect(p.address).toBe(address);
  expect(p.root).toBe(root);
  expect(p.proof).toHaveLength(40);
  const cmp = (a: string, b: string) => Buffer.compare(Buffer.from(bs58.decode(a)), Buffer.from(bs58.decode(b)));
  expect(cmp(p.lowerRangeAddress, address)).toBeLessThan(0);
  expect(cmp(address, p.higherRangeAddress)).toBeLessThan(0);
  let cur: Uint8Array = indexedLeafHashV2(bs58.decode(p.lowerRangeAddress), bs58.decode(p.higherRangeAddress));
  p.proof.forEach((sib: string, level: number) => {
    cur = Math.floor(p.lowElementLeafIndex / 2 ** level) % 2 ? poseidon2(bs58.decode(sib), cur) : poseidon2(cur, bs58.decode(sib));
  });
  expect(bs58.encode(cur)).toBe(root);
}

describe('batched_address_transactions: before the BatchAddressAppend events (50 addresses queued in EzKE8)', () => {
  let store: Store;
  let app: FastifyInstance;
  beforeAll(() => {
    expect(addresses).toHaveLength(50);
    store = indexed(userFiles);
    app = serve(store);
  });
  afterAll(async () => {
    await app.close();
    await store.close();
  });

  it('a queued address is refused by getMultipleNewAddressProofsV2, alone or after a fresh one; getValidityProofV2 refuses it too', async () => {
    const queued = addresses[3]!;
    expect(store.read((r) => r.queuedAddress(bs58.decode(queued)))?.queueIndex).toBe(3n);
    expectExists(await rpcCall(app, 'getMultipleNewAddressProofsV2', [{ address: queued, tree: EZKE8 }]), queued);
    expectExists(await rpcCall(app, 'getMultipleNewAddressProofsV2', [{ address: freshAddress(9), tree: EZKE8 }, { address: queued, tree: EZKE8 }]), queued);
    // the first existing address in request order is named
    expectExists(await rpcCall(app, 'getMultipleNewAddressProofsV2', [{ address: addresses[7]!, tree: EZKE8 }, { address: queued, tree: EZKE8 }]), addresses[7]!);
    // the queue check is by address, whatever the requested tree (as getValidityProofV2's)
    expectExists(await rpcCall(app, 'getMultipleNewAddressProofs', [queued]), queued);
    const vp = await rpcCall(app, 'getValidityProofV2', { newAddressesWithTrees: [{ address: queued, tree: EZKE8 }] });
    expect(vp.body.error.code).toBe(-32000);
    expect(vp.body.error.message.startsWith(`Validation Error: Address ${queued} already exists`)).toBe(true);
  });

  it('a fresh address still gets a proof against the initial tree (nothing appended yet)', async () => {
    const fresh = freshAddress(7);
    const res = await rpcResult(app, 'getMultipleNewAddressProofsV2', [{ address: fresh, tree: EZKE8 }]);
    expect(res.value).toHaveLength(1);
    expect(res.value[0]).toMatchObject({ lowElementLeafIndex: 0, lowerRangeAddress: '11111111111111111111111111111111', merkleTree: EZKE8 });
    // ADDRESS_TREE_INIT_ROOT_40 (test/fixtures/photon/README.md)
    expectV2Proof(res.value[0], fresh, '2uJGx1Up9Px37MGfTLg2kidGcRHP3vfcGm1rtEzQrChy');
  });
});

describe('batched_address_transactions: after the 5 BatchAddressAppend events (all 50 addresses in EzKE8)', () => {
  let store: Store;
  let app: FastifyInstance;
  beforeAll(() => {
    store = indexed(files);
    app = serve(store);
  });
  afterAll(async () => {
    await app.close();
    await store.close();
  });

  it('every appended address is refused (it is in the tree, no longer in the queue); getValidityProofV2 refuses the same ones', async () => {
    for (const [i, address] of addresses.entries()) {
      const leaf = store.read((r) => [r.indexedValueIndex(bs58.decode(EZKE8), bs58.decode(address)), r.queuedAddress(bs58.decode(address))]);
      expect(leaf).toEqual([i + 1, undefined]);
      expectExists(await rpcCall(app, 'getMultipleNewAddressProofsV2', [{ address, tree: EZKE8 }]), address);
    }
    // the reference's own case (its test asks for the first address): refused instead of the range (leaf 45 → the address)
    const first = addresses[0]!;
    expect(first).toBe('1Em4ajCFj5LZVXWyTZfF8MiCe82cr25yXWDYK18YXrG');
    expectExists(await rpcCall(app, 'getMultipleNewAddressProofsV2', [{ address: freshAddress(5), tree: EZKE8 }, { address: first, tree: EZKE8 }]), first);
    const vp = await rpcCall(app, 'getValidityProofV2', { newAddressesWithTrees: [{ address: first, tree: EZKE8 }] });
    expect(vp.body.error.code).toBe(-32000);
    expect(vp.body.error.message.startsWith(`Validation Error: Address ${first} already exists`)).toBe(true);
  });

  it('fresh addresses still get proofs against the final root (the last event new_root), in request order', async () => {
    const fresh = [freshAddress(7), freshAddress(200), freshAddress(1)];
    const res = await rpcResult(app, 'getMultipleNewAddressProofsV2', fresh.map((address) => ({ address, tree: EZKE8 })));
    expect(res.value).toHaveLength(3);
    fresh.forEach((a, i) => expectV2Proof(res.value[i], a, bs58.encode(lastEvent.newRoot)));
    expect(bs58.encode(lastEvent.newRoot)).toBe('25qK3bHT9VsBJKZtasMrzZNVMRda1CoJe4Mhs8Roc8E6');
  });
});

describe('V1 address tree amt1 (an address created by the generator and inserted by its IndexedMerkleTreeEvent)', () => {
  let store: Store;
  let app: FastifyInstance;
  let created: string;
  beforeAll(() => {
    store = new Store({ path: tempDir('refract-addr-exists-v1-') });
    const indexer = new Indexer(store, registry);
    const gen = new LightTxGenerator({ owners: 3, seed: 28 });
    const create = decodeTransactionJson(gen.next(1, 'createAddress').json);
    const update = decodeTransactionJson(gen.next(2, 'addressUpdate').json);
    for (const d of [create, update]) expect(indexer.indexBlocks([blockOf(d.slot, d.transaction)]).rejected).toEqual([]);
    const ev = parseTransaction(update.transaction, update.slot).events.find((e) => e.kind === 'indexedTreeUpdate');
    if (ev?.kind !== 'indexedTreeUpdate') throw new Error('the addressUpdate transaction has no IndexedMerkleTreeEvent');
    created = bs58.encode(ev.event.updates[0]!.newHighElement.value);
    app = serve(store);
  });
  afterAll(async () => {
    await app.close();
    await store.close();
  });

  it('the created address is refused by getMultipleNewAddressProofs and by V2 with tree amt1; getValidityProof refuses it too', async () => {
    expect(store.read((r) => r.indexedValueIndex(bs58.decode(AMT1), bs58.decode(created)))).toBe(2);
    expectExists(await rpcCall(app, 'getMultipleNewAddressProofs', [created]), created);
    expectExists(await rpcCall(app, 'getMultipleNewAddressProofs', [freshAddress(3), created]), created);
    expectExists(await rpcCall(app, 'getMultipleNewAddressProofsV2', [{ address: created, tree: AMT1 }]), created);
    const vp = await rpcCall(app, 'getValidityProof', { newAddressesWithTrees: [{ address: created, tree: AMT1 }] });
    expect(vp.body.error.code).toBe(-32000);
    expect(vp.body.error.message.startsWith(`Validation Error: Address ${created} already exists`)).toBe(true);
  });

  it('a fresh address still gets a proof (26 siblings; its range strictly contains it)', async () => {
    const fresh = freshAddress(3);
    const res = await rpcResult(app, 'getMultipleNewAddressProofs', [fresh]);
    expect(res.value).toHaveLength(1);
    const p = res.value[0];
    expect(p).toMatchObject({ address: fresh, merkleTree: AMT1 });
    expect(p.proof).toHaveLength(26);
    const cmp = (a: string, b: string) => Buffer.compare(Buffer.from(bs58.decode(a)), Buffer.from(bs58.decode(b)));
    expect(cmp(p.lowerRangeAddress, fresh)).toBeLessThan(0);
    expect(cmp(fresh, p.higherRangeAddress)).toBeLessThan(0);
  });
});

describe('MemoryDataSource answers the same as LmdbDataSource', () => {
  it('an address in its tree or in a queue: the same error text; others go to newAddressProofs', async () => {
    const d58 = (s: string) => bs58.decode(s);
    const data = new MemoryDataSource();
    data.slot = 0n;
    data.trees = [
      { tree: d58(EZKE8), queue: d58(EZKE8), treeType: 4, height: 40, rootHistoryCapacity: 2400 },
      { tree: d58(AMT1), queue: d58('aq1S9z4reTSQAdgWHGD2zDaS39sjGrAxbR31vxJ2F4F'), treeType: 2, height: 26, rootHistoryCapacity: 2400 },
    ];
    const inTree = addresses[0]!;
    const queued = addresses[1]!;
    data.putTreeAddress(d58(EZKE8), d58(inTree));
    data.putQueuedAddress(d58(queued));
    const asked: string[] = [];
    data.newAddressProofs = (items) =>
      items.map(({ address, tree }) => {
        asked.push(bs58.encode(address));
        const z = new Uint8Array(32);
        return { address, tree, root: z, rootSeq: 0n, proof: [], lowElementLeafIndex: 0, lowerRangeAddress: z, higherRangeAddress: z, nextIndex: 0 };
      });
    const app = buildServer({ data, getSolanaSlot: async () => 0, config: { ...DEFAULT_METHOD_CONFIG } }, { logLevel: 'silent', rateLimit: false, env: {} });
    try {
      expectExists(await rpcCall(app, 'getMultipleNewAddressProofsV2', [{ address: inTree, tree: EZKE8 }]), inTree);
      expectExists(await rpcCall(app, 'getMultipleNewAddressProofsV2', [{ address: freshAddress(4), tree: EZKE8 }, { address: queued, tree: EZKE8 }]), queued);
      expectExists(await rpcCall(app, 'getMultipleNewAddressProofs', [queued]), queued);
      // in EzKE8's tree only: not an element of amt1
      expect((await rpcResult(app, 'getMultipleNewAddressProofs', [inTree])).value).toHaveLength(1);
      expect(asked).toEqual([inTree]);

      // and the LMDB source's error text for the same addresses is identical
      const store = indexed(files);
      const lmdb = lmdbServer(store).app;
      try {
        const a = await rpcCall(lmdb, 'getMultipleNewAddressProofsV2', [{ address: inTree, tree: EZKE8 }]);
        const m = await rpcCall(app, 'getMultipleNewAddressProofsV2', [{ address: inTree, tree: EZKE8 }]);
        expect([m.status, m.text]).toEqual([a.status, a.text]);
      } finally {
        await lmdb.close();
        await store.close();
      }
    } finally {
      await app.close();
    }
  });
});
