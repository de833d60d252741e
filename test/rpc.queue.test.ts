/**
 * getQueueElements / getQueueInfo over the reference's v2 fixtures (test/fixtures/photon),
 * indexed one transaction per block like test/golden.v2.test.ts: the output, input and address queues
 * as the reference tests see them (batched_state_tree_tests / batched_address_tree_tests), shrinking
 * by the right amount after each batch event, and specific errors for what is not served.
 */
import bs58 from 'bs58';
import { poseidon2 as litePoseidon2 } from 'poseidon-lite';
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

/** Poseidon2 of two 32-byte big-endian values with poseidon-lite (not Refract's backend): an independent check. */
function ph(a: Uint8Array, b: Uint8Array): Uint8Array {
  const v = litePoseidon2([BigInt('0x' + Buffer.from(a).toString('hex')), BigInt('0x' + Buffer.from(b).toString('hex'))]);
  return Buffer.from(v.toString(16).padStart(64, '0'), 'hex');
}
/** Light's create_hash_chain_from_slice, recomputed here with poseidon-lite. */
const chain = (values: string[]): string => b58(values.map((v) => bs58.decode(v)).reduce((c, v) => ph(c, v)));
/** The hash chain of every whole batch of `size`. */
const chains = (values: string[], size: number): string[] => [...Array(Math.floor(values.length / size)).keys()].map((i) => chain(values.slice(i * size, (i + 1) * size)));
/** Decoded forester nodes: `(level << 56) | position` → hash. */
function nodeMap(nodes: unknown[], hashes: string[]): Map<string, string> {
  expect(nodes).toHaveLength(hashes.length);
  return new Map(nodes.map((n, i) => {
    const v = BigInt(String(n));
    return [`${v >> 56n}:${v & ((1n << 56n) - 1n)}`, hashes[i]!];
  }));
}
/** Walks `leafIndex` up to the root through `nodes` with poseidon-lite: every sibling and parent must be there, the parents must be the hashes of their children. */
function rootThroughNodes(nodes: Map<string, string>, leafIndex: number, height: number): string {
  let pos = leafIndex;
  let cur = nodes.get(`0:${pos}`)!;
  expect(cur, `leaf ${leafIndex}`).toBeDefined();
  for (let level = 0; level < height; level++) {
    const sib = nodes.get(`${level}:${pos % 2 ? pos - 1 : pos + 1}`)!;
    expect(sib, `sibling of ${level}:${pos}`).toBeDefined();
    const parent = b58(pos % 2 ? ph(bs58.decode(sib), bs58.decode(cur)) : ph(bs58.decode(cur), bs58.decode(sib)));
    pos = Math.floor(pos / 2);
    expect(nodes.get(`${level + 1}:${pos}`), `parent ${level + 1}:${pos}`).toBe(parent);
    cur = parent;
  }
  return cur;
}

/** `result` of a call with integers past 2^53 (the nodes' ids) kept exact, as decimal strings. */
async function rpcExact(app: Parameters<typeof rpcCall>[0], method: string, params: unknown): Promise<any> {
  const r = await rpcCall(app, method, params);
  const body = JSON.parse(r.text.replace(/([:[,])(\d{16,})(?=[,\]}])/g, '$1"$2"'));
  if (!('result' in body)) throw new Error(`${method}: ${r.status} ${r.text}`);
  return body.result;
}

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
    const r = await rpcExact(app, 'getQueueElements', stateRequest());
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
      leavesHashChains: chains(outputs.map((o) => o.hash), 10),
    });
    expect(s.outputQueue.leavesHashChains).toHaveLength(10);
    expect(outputs.map((o) => o.leafIndex)).toEqual([...Array(100).keys()]);
    expect(inputs.map((i) => i.queueIndex)).toEqual([...Array(50).keys()].map(BigInt));
    expect(s.inputQueue).toEqual({
      leafIndices: inputs.map((i) => i.leafIndex),
      accountHashes: inputs.map((i) => i.hash),
      leaves: inputs.map(() => ZERO), // none appended yet
      txHashes: inputs.map((i) => i.txHash),
      nullifiers: inputs.map((i) => i.nullifier),
      firstQueueIndex: 0,
      leavesHashChains: chains(inputs.map((i) => i.nullifier), 10),
    });
    expect(s.inputQueue.leavesHashChains).toHaveLength(5);
    // the forester's deduplicated nodes: every queued leaf's path up to the root (level 32), each parent the hash of its children
    expect(Object.keys(s)).toEqual(['nodes', 'nodeHashes', 'initialRoot', 'rootSeq', 'outputQueue', 'inputQueue']);
    const nodes = nodeMap(s.nodes, s.nodeHashes);
    for (const i of [...outputs.map((o) => o.leafIndex), ...inputs.map((x) => x.leafIndex)]) expect(rootThroughNodes(nodes, i, HLKS5.height)).toBe(s.initialRoot);
    // leaves 0..99: 100 leaves, their 100 siblings; then 50 + 50 at level 1, … ; the root alone at level 32
    expect(nodes.get('32:0')).toBe(s.initialRoot);
    expect([...nodes.keys()].filter((k) => k.startsWith('0:'))).toHaveLength(100);
    expect(new Set(s.nodes.map(String)).size).toBe(s.nodes.length);
    expect(s.nodes.map((n: unknown) => BigInt(String(n)))).toEqual([...s.nodes.map((n: unknown) => BigInt(String(n)))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));

    // Photon's nested request form gives the same answer
    const nested = await rpcExact(app, 'getQueueElements', { tree: HLKS5.tree, outputQueue: { limit: 100, zkpBatchSize: 10 }, inputQueue: { limit: 100, startIndex: 0, zkpBatchSize: 10 } });
    expect(nested).toEqual(r);
    // a page: start index and limit
    const page = await rpcResult(app, 'getQueueElements', { tree: HLKS5.tree, outputQueueStartIndex: 30, outputQueueLimit: 20, outputQueueZkpBatchSize: 10 });
    expect(page.stateQueue.outputQueue.leafIndices).toEqual([...Array(20).keys()].map((i) => 30 + i));
    expect(page.stateQueue.inputQueue).toBeUndefined();
    // only whole ZKP batches, as the reference: 25 → 20 with batch size 10; nothing with the default 500
    const cut = await rpcResult(app, 'getQueueElements', { tree: HLKS5.tree, inputQueueLimit: 25, inputQueueZkpBatchSize: 10 });
    expect(cut.stateQueue.inputQueue.nullifiers).toEqual(inputs.slice(0, 20).map((i) => i.nullifier));
    const dflt = await rpcResult(app, 'getQueueElements', { tree: HLKS5.tree, outputQueueLimit: 100 });
    expect(dflt.stateQueue.outputQueue).toEqual({ leafIndices: [], accountHashes: [], leaves: [], firstQueueIndex: 0, nextIndex: 0, leavesHashChains: [] });
    // nothing returned: no nodes (left out, as the reference)
    expect(Object.keys(dflt.stateQueue)).toEqual(['initialRoot', 'rootSeq', 'outputQueue']);

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
      const s = (await rpcExact(app, 'getQueueElements', stateRequest())).stateQueue;
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
      // hash chains recomputed here; the nodes lead every queued leaf to the chain's new_root
      expect(s.outputQueue.leavesHashChains).toEqual(chains(s.outputQueue.accountHashes, 10));
      expect(s.inputQueue.leavesHashChains).toEqual(chains(leftIn.map((i) => i.nullifier), 10));
      if (out + inp > 0) {
        const nodes = nodeMap(s.nodes, s.nodeHashes);
        for (const i of [...s.outputQueue.leafIndices, ...s.inputQueue.leafIndices]) expect(rootThroughNodes(nodes, i, HLKS5.height)).toBe(b58(e.newRoot));
        // a queued leaf already appended is its account hash in the nodes
        for (const [k, i] of s.inputQueue.leafIndices.entries()) expect(nodes.get(`0:${i}`)).toBe(s.inputQueue.leaves[k]);
      } else expect(s.nodes).toBeUndefined();
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

const HIGHEST = Uint8Array.from([0, ...Array(31).fill(255)]);
const EMPTY_SUBTREE_0 = [20, 60, 11, 236, 225, 135, 154, 131, 147, 160, 45, 8, 88, 53, 104, 12, 211, 241, 51, 6, 246, 74, 149, 120, 67, 52, 190, 125, 51, 177, 204, 231];
const EMPTY_SUBTREE_1 = [31, 158, 23, 142, 99, 175, 62, 243, 89, 151, 175, 72, 239, 185, 225, 179, 167, 48, 176, 66, 195, 189, 200, 52, 107, 214, 155, 69, 247, 250, 226, 202];

/**
 * Subtrees of a reference AddressV2 tree built here with poseidon-lite: leaf 0 the zeroeth element,
 * then `values` appended in order (leaf = Poseidon(value, next value)); per level the last node when
 * it is a left child, else its left neighbour.
 */
function referenceSubtrees(values: string[], height: number): string[] {
  const els = [{ value: new Uint8Array(32) as Uint8Array, next: HIGHEST as Uint8Array }];
  for (const v of values.map((x) => bs58.decode(x))) {
    let low = 0;
    for (let i = 0; i < els.length; i++) if (Buffer.compare(els[i]!.value, v) < 0 && Buffer.compare(els[i]!.value, els[low]!.value) > 0) low = i;
    els.push({ value: v, next: els[low]!.next });
    els[low]!.next = v;
  }
  let level = els.map((e) => ph(e.value, e.next));
  const out: string[] = [];
  for (let d = 0; d < height; d++) {
    const last = level.length - 1;
    out.push(b58(level[last % 2 === 0 ? last : last - 1]!));
    const up: Uint8Array[] = [];
    for (let p = 0; p < level.length; p += 2) up.push(ph(level[p]!, level[p + 1] ?? ZERO_BYTES[d]!));
    level = up;
  }
  return out;
}

/** Each queued address lies inside its low element's range, whose leaf (with its proof) folds to `root`; the nodes hold every proof's siblings and each low leaf. */
function checkAddressExtras(q: any, root: Uint8Array): void {
  expect(q.initialRoot).toBe(b58(root));
  const nodes = nodeMap(q.nodes, q.nodeHashes);
  for (const [i, a] of q.addresses.entries()) {
    const [lo, hi, idx] = [bs58.decode(q.lowElementValues[i]), bs58.decode(q.lowElementNextValues[i]), q.lowElementIndices[i]];
    expect(Buffer.compare(lo, bs58.decode(a))).toBeLessThan(0);
    expect(Buffer.compare(bs58.decode(a), hi)).toBeLessThan(0);
    let cur = ph(lo, hi);
    expect(nodes.get(`0:${idx}`)).toBe(b58(cur));
    expect(q.lowElementProofs[i]).toHaveLength(40);
    q.lowElementProofs[i].forEach((sib: string, level: number) => {
      const pos = Math.floor(idx / 2 ** level);
      expect(nodes.get(`${level}:${pos % 2 ? pos - 1 : pos + 1}`)).toBe(sib);
      cur = pos % 2 ? ph(bs58.decode(sib), cur) : ph(cur, bs58.decode(sib));
    });
    expect(b58(cur)).toBe(b58(root));
  }
}

describe('getQueueElements: batched_address_transactions (50 addresses created in EzKE8, then BatchAddressAppend)', () => {
  const files = load('batched_address_transactions');
  const userFiles = files.filter((f) => !batchEventOf(f));
  const batchFiles = files.filter((f) => batchEventOf(f));
  const addresses = userFiles.flatMap(v2EventsOf).flatMap((e) => e.newAddresses.map((a) => b58(a.address)));

  it('the address queue holds the 50 addresses in creation order with queue indices 0..49, then is empty after the BatchAddressAppend', async () => {
    expect(addresses).toHaveLength(50);
    const { index, app } = setup();
    for (const f of userFiles) index(f);
    const r = await rpcExact(app, 'getQueueElements', { tree: EZKE8.tree, addressQueueLimit: 100 });
    expect(Object.keys(r).sort()).toEqual(['addressQueue', 'context']);
    const emptyRoot = b58(emptyTreeAddressProof(EZKE8, new Uint8Array(32)).root);
    const { nodes, nodeHashes, lowElementProofs, subtrees, ...rest } = r.addressQueue;
    expect(rest).toEqual({
      addresses,
      queueIndices: [...Array(50).keys()],
      // the tree holds only its zeroeth element: every low element is it (0 → 2^248−1, next index 0)
      lowElementIndices: addresses.map(() => 0),
      lowElementValues: addresses.map(() => ZERO),
      lowElementNextIndices: addresses.map(() => 0),
      lowElementNextValues: addresses.map(() => b58(HIGHEST)),
      // default address ZKP batch size 250: no whole batch of 50
      leavesHashChains: [],
      initialRoot: emptyRoot,
      startIndex: 1,
      rootSeq: 0,
    });
    expect(Object.keys(r.addressQueue)).toEqual(['addresses', 'queueIndices', 'nodes', 'nodeHashes', 'lowElementIndices', 'lowElementValues', 'lowElementNextIndices', 'lowElementNextValues', 'lowElementProofs', 'leavesHashChains', 'initialRoot', 'startIndex', 'subtrees', 'rootSeq']);
    // Photon's EMPTY_SUBTREES (its first two values, persisted_state_tree.rs), 40 of them
    expect(subtrees).toHaveLength(40);
    expect(subtrees.slice(0, 2)).toEqual([EMPTY_SUBTREE_0, EMPTY_SUBTREE_1].map((v) => b58(Uint8Array.from(v))));
    expect(lowElementProofs).toEqual(addresses.map(() => ZERO_BYTES.slice(0, 40).map((z) => b58(z))));
    // nodes: the zeroeth element's leaf and the 40 siblings of its path
    const leaf0 = b58(ph(new Uint8Array(32), HIGHEST));
    expect(nodes.map(String)).toEqual([0n, 1n, ...[...Array(39).keys()].map((l) => (BigInt(l + 1) << 56n) | 1n)].map(String));
    expect(nodeHashes).toEqual([leaf0, ...ZERO_BYTES.slice(0, 40).map((z) => b58(z))]);
    // with ZKP batch size 10: five hash chains of ten addresses, recomputed here
    const z10 = await rpcResult(app, 'getQueueElements', { tree: EZKE8.tree, addressQueue: { limit: 100, zkpBatchSize: 10 } });
    expect(z10.addressQueue.leavesHashChains).toEqual(chains(addresses, 10));
    expect(z10.addressQueue.leavesHashChains).toHaveLength(5);
    const page = await rpcResult(app, 'getQueueElements', { tree: EZKE8.tree, addressQueueStartIndex: 45, addressQueueLimit: 3 });
    expect(page.addressQueue.queueIndices).toEqual([45, 46, 47]);
    expect(page.addressQueue.addresses).toEqual(addresses.slice(45, 48));
    expect((await rpcResult(app, 'getQueueInfo', { trees: [EZKE8.tree] })).queues).toEqual([{ tree: EZKE8.tree, queue: EZKE8.queue, queueType: 4, queueSize: 50 }]);

    let last: BatchEvent | undefined;
    for (const f of batchFiles) {
      index(f);
      last = batchEventOf(f)!;
      const mid = (await rpcExact(app, 'getQueueElements', { tree: EZKE8.tree, addressQueueLimit: 100 })).addressQueue;
      checkAddressExtras(mid, last.newRoot);
    }
    expect(last!.kind).toBe('batchAddressAppend');
    const after = await rpcExact(app, 'getQueueElements', { tree: EZKE8.tree, addressQueueLimit: 100 });
    const { subtrees: afterSubtrees, ...afterRest } = after.addressQueue;
    expect(afterRest).toEqual({
      addresses: [],
      queueIndices: [],
      nodes: [],
      nodeHashes: [],
      lowElementIndices: [],
      lowElementValues: [],
      lowElementNextIndices: [],
      lowElementNextValues: [],
      lowElementProofs: [],
      leavesHashChains: [],
      initialRoot: b58(last!.newRoot),
      startIndex: Number(last!.newNextIndex),
      rootSeq: Number(last!.sequenceNumber),
    });
    expect(after.addressQueue.startIndex).toBe(51);
    // subtrees of the reference indexed tree built here (zeroeth element, then the 50 addresses in queue order)
    expect(afterSubtrees).toEqual(referenceSubtrees(addresses, 40));
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
