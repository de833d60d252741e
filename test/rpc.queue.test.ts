/**
 * getQueueElements / getQueueInfo over the reference's v2 fixtures (../shared/photon, read in place),
 * indexed one transaction per block like test/golden.v2.test.ts: the output, input and address queues
 * as the reference tests see them (batched_state_tree_tests / batched_address_tree_tests), shrinking
 * by the right amount after each batch event, and specific errors for what is not served.
 */
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { Indexer } from '../src/ingest/indexer.ts';
import { loadTransactionFiles, type TransactionFile } from '../src/ingest/sources/files.ts';
import { parseTransaction } from '../src/light/parser.ts';
import { ZERO_BYTES } from '../src/merkle/zeroValues.ts';
import { emptyTreeAddressProof } from '../src/query/addressProofs.ts';
import { Store } from '../src/store/store.ts';
import type { BatchEvent, BatchPublicTransactionEvent, BlockInfo, LightEvent } from '../src/types.ts';
import { tempDir, txDir } from './helpers/photon.ts';
import { lmdbServer, registry, rpcCall, rpcResult } from './helpers/rpcLmdb.ts';

const b58 = (b: Uint8Array) => bs58.encode(b);
const HLKS5 = registry.get('HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu')!;
const EZKE8 = registry.get('EzKE84aVTkCUhDHLELqyJaq1Y7UVVmqxXqZjVHwHY3rK')!;
const ZERO = b58(new Uint8Array(32));

const load = (name: string): TransactionFile[] => loadTransactionFiles([txDir(name)]);
const block = (f: TransactionFile): BlockInfo => ({ slot: f.slot, parentSlot: 0, blockTime: 0, blockHeight: 0, blockhash: '', previousBlockhash: '', transactions: [f.transaction] });
const eventsOf = (f: TransactionFile): LightEvent[] => parseTransaction(f.transaction, f.slot).events;
const batchEventOf = (f: TransactionFile): BatchEvent | undefined => eventsOf(f).flatMap((e) => (e.kind === 'batch' ? [e.event] : []))[0];
const v2EventsOf = (f: TransactionFile): BatchPublicTransactionEvent[] => eventsOf(f).flatMap((e) => (e.kind === 'batchPublicTransaction' ? [e.event] : []));

/** A fresh store with its indexer and an API server (fastify.inject) over it. */
function setup() {
  const store = new Store({ path: tempDir('refract-rpc-queue-') });
  const indexer = new Indexer(store, registry);
  const index = (f: TransactionFile) => expect(indexer.indexBlocks([block(f)]).rejected).toEqual([]);
  return { store, index, ...lmdbServer(store) };
}

/** The state-queue request of the reference tests: both queues, limit 100, the fixtures' ZKP batch size 10. */
const stateRequest = (extra: Record<string, unknown> = {}) => ({ tree: HLKS5.tree, outputQueueLimit: 100, outputQueueZkpBatchSize: 10, inputQueueLimit: 100, inputQueueZkpBatchSize: 10, ...extra });

describe('getQueueElements / getQueueInfo: batched_tree_transactions (100 user transactions into HLKs5, then 15 batch events)', () => {
  const files = load('batched_tree_transactions');
  const userFiles = files.filter((f) => !batchEventOf(f));
  const batchFiles = files.filter((f) => batchEventOf(f));
  const txEvents = userFiles.flatMap(v2EventsOf);
  const outputs = txEvents
    .flatMap((e) => e.event.outputCompressedAccountHashes.map((h, i) => ({ hash: b58(h), leafIndex: e.event.outputLeafIndices[i]! })))
    .sort((a, b) => a.leafIndex - b.leafIndex);
  const inputs = txEvents
    .flatMap((e) => e.batchInputAccounts.map((b) => ({ hash: b58(b.accountHash), leafIndex: b.leafIndex, nullifier: b58(b.nullifier), queueIndex: b.queueIndex!, txHash: b58(e.txHash) })))
    .sort((a, b) => (a.queueIndex < b.queueIndex ? -1 : 1));

  it('before the first batch event: output queue 100, input queue 50, with indices, hashes, leaves, tx hashes, nullifiers; queue sizes match', async () => {
    expect(batchFiles).toHaveLength(15);
    const { index, app } = setup();
    for (const f of userFiles) index(f);
    const r = await rpcResult(app, 'getQueueElements', stateRequest());
    expect(Object.keys(r).sort()).toEqual(['context', 'stateQueue']);
    expect(r.context.slot).toBe(Math.max(...userFiles.map((f) => f.slot)));
    const s = r.stateQueue;
    expect(s.initialRoot).toBe(b58(ZERO_BYTES[HLKS5.height]!));
    expect(s.rootSeq).toBe(0);
    expect(s.outputQueue).toEqual({
      leafIndices: outputs.map((o) => o.leafIndex),
      accountHashes: outputs.map((o) => o.hash),
      leaves: outputs.map(() => ZERO),
      firstQueueIndex: 0,
      nextIndex: 0,
    });
    expect(outputs.map((o) => o.leafIndex)).toEqual([...Array(100).keys()]);
    expect(inputs.map((i) => i.queueIndex)).toEqual([...Array(50).keys()].map(BigInt));
    expect(s.inputQueue).toEqual({
      leafIndices: inputs.map((i) => i.leafIndex),
      accountHashes: inputs.map((i) => i.hash),
      leaves: inputs.map(() => ZERO), // none appended yet
      txHashes: inputs.map((i) => i.txHash),
      nullifiers: inputs.map((i) => i.nullifier),
      firstQueueIndex: 0,
    });
    // forester extras are not served: no nodes, nodeHashes, leavesHashChains
    expect(Object.keys(s).sort()).toEqual(['initialRoot', 'inputQueue', 'outputQueue', 'rootSeq']);

    // Photon's nested request form gives the same answer
    const nested = await rpcResult(app, 'getQueueElements', { tree: HLKS5.tree, outputQueue: { limit: 100, zkpBatchSize: 10 }, inputQueue: { limit: 100, startIndex: 0, zkpBatchSize: 10 } });
    expect(nested).toEqual(r);
    // a page: start index and limit
    const page = await rpcResult(app, 'getQueueElements', { tree: HLKS5.tree, outputQueueStartIndex: 30, outputQueueLimit: 20, outputQueueZkpBatchSize: 10 });
    expect(page.stateQueue.outputQueue.leafIndices).toEqual([...Array(20).keys()].map((i) => 30 + i));
    expect(page.stateQueue.inputQueue).toBeUndefined();
    // only whole ZKP batches, as the reference: 25 → 20 with batch size 10; nothing with the default 500
    const cut = await rpcResult(app, 'getQueueElements', { tree: HLKS5.tree, inputQueueLimit: 25, inputQueueZkpBatchSize: 10 });
    expect(cut.stateQueue.inputQueue.nullifiers).toEqual(inputs.slice(0, 20).map((i) => i.nullifier));
    const dflt = await rpcResult(app, 'getQueueElements', { tree: HLKS5.tree, outputQueueLimit: 100 });
    expect(dflt.stateQueue.outputQueue).toEqual({ leafIndices: [], accountHashes: [], leaves: [], firstQueueIndex: 0, nextIndex: 0 });

    const info = await rpcResult(app, 'getQueueInfo', { trees: [HLKS5.tree] });
    expect(info).toEqual({
      queues: [
        { tree: HLKS5.tree, queue: HLKS5.queue, queueType: 3, queueSize: 50 },
        { tree: HLKS5.tree, queue: HLKS5.queue, queueType: 5, queueSize: 100 },
      ],
      slot: r.context.slot,
    });
    const all = await rpcResult(app, 'getQueueInfo');
    const v2Trees = registry.all().filter((t) => t.type === 'StateV2' || t.type === 'AddressV2');
    expect(all.queues).toHaveLength(v2Trees.reduce((n, t) => n + (t.type === 'StateV2' ? 2 : 1), 0));
    expect(all.queues.filter((q: any) => q.tree === HLKS5.tree)).toEqual(info.queues);
    expect(all.queues.filter((q: any) => q.tree !== HLKS5.tree).every((q: any) => q.queueSize === 0)).toBe(true);
    await app.close();
  });

  it('after each batch event 10 fewer elements in the right queue, root and seq those of the event; both empty at the end', async () => {
    const { index, app } = setup();
    for (const f of userFiles) index(f);
    let out = 100;
    let inp = 50;
    let appended = 0;
    const kinds: string[] = [];
    for (const f of batchFiles) {
      index(f);
      const e = batchEventOf(f)!;
      expect(b58(e.merkleTreePubkey)).toBe(HLKS5.tree);
      expect(e.newNextIndex - e.oldNextIndex).toBe(10n);
      kinds.push(e.kind);
      if (e.kind === 'batchAppend') {
        out -= 10;
        appended = Number(e.newNextIndex);
      } else inp -= 10;
      const s = (await rpcResult(app, 'getQueueElements', stateRequest())).stateQueue;
      expect([s.outputQueue.leafIndices.length, s.inputQueue.leafIndices.length]).toEqual([out, inp]);
      expect(s.initialRoot).toBe(b58(e.newRoot));
      expect(s.rootSeq).toBe(Number(e.sequenceNumber));
      const leftOut = outputs.slice(100 - out);
      expect(s.outputQueue.accountHashes).toEqual(leftOut.map((o) => o.hash));
      expect(s.outputQueue.firstQueueIndex).toBe(out ? 100 - out : 0);
      const leftIn = inputs.slice(50 - inp);
      expect(s.inputQueue.nullifiers).toEqual(leftIn.map((i) => i.nullifier));
      expect(s.inputQueue.firstQueueIndex).toBe(inp ? 50 - inp : 0);
      // an input-queue element's leaf is its account hash once appended, zeros before
      expect(s.inputQueue.leaves).toEqual(leftIn.map((i) => (i.leafIndex < appended ? i.hash : ZERO)));
      const sizes = (await rpcResult(app, 'getQueueInfo', { trees: [HLKS5.tree] })).queues.map((q: any) => [q.queueType, q.queueSize]);
      expect(sizes).toEqual([[3, inp], [5, out]]);
    }
    expect(kinds.filter((k) => k === 'batchAppend')).toHaveLength(10);
    expect(kinds.filter((k) => k === 'batchNullify')).toHaveLength(5);
    expect([out, inp]).toEqual([0, 0]);
    await app.close();
  });

  it('a start index before the first queued element is refused as pruned', async () => {
    const { index, app } = setup();
    for (const f of userFiles) index(f);
    const firstAppend = batchFiles.find((f) => batchEventOf(f)!.kind === 'batchAppend')!;
    index(firstAppend);
    const r = await rpcCall(app, 'getQueueElements', { tree: HLKS5.tree, outputQueueStartIndex: 0, outputQueueLimit: 10, outputQueueZkpBatchSize: 10 });
    expect(r.body.error).toMatchObject({ code: -32000, message: 'Validation Error: outputQueueStartIndex: Requested start_index 0 but first_queue_index 10 is later (possible pruning)' });
    await app.close();
  });
});

describe('getQueueElements: batched_address_transactions (50 addresses created in EzKE8, then BatchAddressAppend)', () => {
  const files = load('batched_address_transactions');
  const userFiles = files.filter((f) => !batchEventOf(f));
  const batchFiles = files.filter((f) => batchEventOf(f));
  const addresses = userFiles.flatMap(v2EventsOf).flatMap((e) => e.newAddresses.map((a) => b58(a.address)));

  it('the address queue holds the 50 addresses in creation order with queue indices 0..49, then is empty after the BatchAddressAppend', async () => {
    expect(addresses).toHaveLength(50);
    const { index, app } = setup();
    for (const f of userFiles) index(f);
    const r = await rpcResult(app, 'getQueueElements', { tree: EZKE8.tree, addressQueueLimit: 100 });
    expect(Object.keys(r).sort()).toEqual(['addressQueue', 'context']);
    expect(r.addressQueue).toEqual({
      addresses,
      queueIndices: [...Array(50).keys()],
      initialRoot: b58(emptyTreeAddressProof(EZKE8, new Uint8Array(32)).root),
      startIndex: 1,
      rootSeq: 0,
    });
    const page = await rpcResult(app, 'getQueueElements', { tree: EZKE8.tree, addressQueueStartIndex: 45, addressQueueLimit: 3 });
    expect(page.addressQueue.queueIndices).toEqual([45, 46, 47]);
    expect(page.addressQueue.addresses).toEqual(addresses.slice(45, 48));
    expect((await rpcResult(app, 'getQueueInfo', { trees: [EZKE8.tree] })).queues).toEqual([{ tree: EZKE8.tree, queue: EZKE8.queue, queueType: 4, queueSize: 50 }]);

    let last: BatchEvent | undefined;
    for (const f of batchFiles) {
      index(f);
      last = batchEventOf(f)!;
    }
    expect(last!.kind).toBe('batchAddressAppend');
    const after = await rpcResult(app, 'getQueueElements', { tree: EZKE8.tree, addressQueueLimit: 100 });
    expect(after.addressQueue).toEqual({ addresses: [], queueIndices: [], initialRoot: b58(last!.newRoot), startIndex: Number(last!.newNextIndex), rootSeq: Number(last!.sequenceNumber) });
    expect(after.addressQueue.startIndex).toBe(51);
    expect((await rpcResult(app, 'getQueueInfo', { trees: [EZKE8.tree] })).queues[0].queueSize).toBe(0);
    await app.close();
  });
});

describe('getQueueElements / getQueueInfo: requests that are not served get specific errors', () => {
  it('names the field and the reason', async () => {
    const { index, app } = setup();
    index(load('batched_address_transactions')[0]!);
    const smt1 = registry.get('smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT')!;
    const unknown = b58(new Uint8Array(32).fill(9));
    const cases: [string, unknown, string][] = [
      ['getQueueElements', { tree: HLKS5.tree }, 'Validation Error: At least one queue must be requested'],
      ['getQueueElements', { tree: HLKS5.tree, addressQueueLimit: 10 }, `Validation Error: tree ${HLKS5.tree} is a StateV2 tree: the address queue (addressQueueLimit) belongs to AddressV2 trees`],
      ['getQueueElements', { tree: EZKE8.tree, outputQueueLimit: 10 }, `Validation Error: tree ${EZKE8.tree} is an AddressV2 tree: output and input queues (outputQueueLimit, inputQueueLimit) belong to StateV2 trees`],
      ['getQueueElements', { tree: smt1.tree, inputQueueLimit: 10 }, `Validation Error: tree ${smt1.tree} is a StateV1 tree: output and input queues (outputQueueLimit, inputQueueLimit) belong to StateV2 trees`],
      ['getQueueElements', { tree: unknown, outputQueueLimit: 10 }, `Validation Error: tree ${unknown} is not a tree Refract indexes`],
      ['getQueueElements', { tree: HLKS5.queue, outputQueueLimit: 10 }, `Validation Error: tree ${HLKS5.queue} is not a tree Refract indexes (it is the queue of tree ${HLKS5.tree})`],
      ['getQueueElements', { tree: HLKS5.tree, outputQueueLimit: 30001 }, 'Validation Error: outputQueueLimit: Too many queue elements requested 30001. Maximum allowed: 30000'],
      ['getQueueElements', { tree: EZKE8.tree, addressQueueLimit: 1001 }, 'Validation Error: addressQueueLimit: Too many addresses requested 1001. Maximum allowed: 1000'],
      ['getQueueInfo', { trees: [smt1.tree] }, `Validation Error: trees[0]: ${smt1.tree} is a StateV1 tree, which has no batched queues`],
      ['getQueueInfo', { trees: [HLKS5.tree, unknown] }, `Validation Error: trees[1]: ${unknown} is not a tree Refract indexes`],
    ];
    for (const [method, params, message] of cases) {
      const r = await rpcCall(app, method, params);
      expect(r.body.error, JSON.stringify(params)).toEqual({ code: -32000, message });
    }
    // malformed params: the schema names the field
    const bad = await rpcCall(app, 'getQueueElements', { tree: HLKS5.tree, outputQueueLimit: 70000 });
    expect(bad.body.error.message).toBe('Invalid params: outputQueueLimit: expected an integer between 0 and 65535 (u16), got 70000');
    const extra = await rpcCall(app, 'getQueueElements', { tree: HLKS5.tree, outputQueueLimit: 1, proofs: true });
    expect(extra.body.error.message).toBe('Invalid params: proofs: unknown field');
    const both = await rpcCall(app, 'getQueueElements', { tree: HLKS5.tree, outputQueueLimit: 10, outputQueue: { limit: 10 } });
    expect(both.body.error.message).toBe('Invalid params: outputQueue: given both as an object and as outputQueueLimit; use one form');
    const noLimit = await rpcCall(app, 'getQueueElements', { tree: HLKS5.tree, inputQueueStartIndex: 5, addressQueueLimit: 1 });
    expect(noLimit.body.error.message).toBe('Invalid params: inputQueueStartIndex: given without inputQueueLimit (a queue is requested by its limit)');
    const nestedBad = await rpcCall(app, 'getQueueElements', { tree: EZKE8.tree, addressQueue: { startIndex: 0 } });
    expect(nestedBad.body.error.message).toMatch(/^Invalid params: addressQueue\.limit: /);
    // params absent: getQueueInfo lists every V2 tree; getQueueElements needs its object
    expect((await rpcResult(app, 'getQueueInfo')).queues.length).toBeGreaterThan(0);
    expect((await rpcCall(app, 'getQueueElements')).body.error.message).toMatch(/^Invalid params/);
    await app.close();
  });
});
