/**
 * Golden tests of the v2 (instruction-based events, batched trees) indexing path over the reference's
 * six v2 fixture folders (test/fixtures/photon/transactions), reproducing what the reference
 * tests assert (test/fixtures/photon/README.md "v2 cases"): queue contents and indices, account states, tree
 * roots equal to the chain's `new_root` after every batch event and to a reference tree built here,
 * token balances, re-indexing idempotence, and a corrupted `new_root` refused with nothing stored.
 */
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer, type BatchResult } from '../src/ingest/indexer.ts';
import { loadTransactionFiles, type TransactionFile } from '../src/ingest/sources/files.ts';
import { indexedLeafHashV2 } from '../src/light/hashing.ts';
import { parseTransaction } from '../src/light/parser.ts';
import { parseTokenData } from '../src/light/tokenData.ts';
import { poseidon2 } from '../src/merkle/poseidon.ts';
import { ZERO_BYTES } from '../src/merkle/zeroValues.ts';
import { HIGHEST_ADDRESS_PLUS_ONE } from '../src/merkle/indexedConstants.ts';
import { getNewAddressProof } from '../src/query/addressProofs.ts';
import { getLeafProofs } from '../src/query/merkleProofs.ts';
import { deriveStateUpdate } from '../src/state/stateUpdate.ts';
import { Store } from '../src/store/store.ts';
import type { BatchEvent, BatchPublicTransactionEvent, BlockInfo, LightEvent } from '../src/types.ts';
import { tempDir, txDir } from './helpers/photon.ts';
import { dumpStore } from './helpers/store.ts';

const registry = loadTreeRegistry();
const b58 = (b: Uint8Array) => bs58.encode(b);
const HLKS5 = registry.get('HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu')!;
const EZKE8 = registry.get('EzKE84aVTkCUhDHLELqyJaq1Y7UVVmqxXqZjVHwHY3rK')!;

const load = (name: string): TransactionFile[] => loadTransactionFiles([txDir(name)]);
const block = (f: TransactionFile): BlockInfo => ({ slot: f.slot, parentSlot: 0, blockTime: 0, blockHeight: 0, blockhash: '', previousBlockhash: '', transactions: [f.transaction] });
const eventsOf = (f: TransactionFile): LightEvent[] => parseTransaction(f.transaction, f.slot).events;
const batchEventOf = (f: TransactionFile): BatchEvent | undefined => eventsOf(f).flatMap((e) => (e.kind === 'batch' ? [e.event] : []))[0];
const v2EventsOf = (f: TransactionFile): BatchPublicTransactionEvent[] => eventsOf(f).flatMap((e) => (e.kind === 'batchPublicTransaction' ? [e.event] : []));

function newIndexer() {
  const store = new Store({ path: tempDir('refract-v2-') });
  return { store, indexer: new Indexer(store, registry) };
}

/** Root of a sparse Poseidon Merkle tree of depth `depth` (leaf index → leaf), computed level by level. */
function referenceRoot(leaves: Map<number, Uint8Array>, depth: number): Uint8Array {
  let level = new Map(leaves);
  for (let d = 0; d < depth; d++) {
    const up = new Map<number, Uint8Array>();
    for (const i of level.keys()) {
      const p = Math.floor(i / 2);
      if (up.has(p)) continue;
      up.set(p, poseidon2(level.get(2 * p) ?? ZERO_BYTES[d]!, level.get(2 * p + 1) ?? ZERO_BYTES[d]!));
    }
    level = up;
  }
  return level.get(0) ?? ZERO_BYTES[depth]!;
}

const rootOf = (store: Store, tree: Uint8Array) => store.read((r) => r.node(tree, 1n));

/** Indexes `files` one transaction per batch; after every batch event checks the stored root against the event. */
function indexEach(files: TransactionFile[], onEvent?: (e: BatchEvent, store: Store, r: BatchResult) => void) {
  const { store, indexer } = newIndexer();
  const results: BatchResult[] = [];
  for (const f of files) {
    const r = indexer.indexBlocks([block(f)]);
    results.push(r);
    expect(r.rejected).toEqual([]);
    const e = batchEventOf(f);
    if (e) {
      expect(r.batchEvents.applied).toBe(1);
      const root = rootOf(store, e.merkleTreePubkey)!;
      expect(b58(root.hash)).toBe(b58(e.newRoot));
      expect(root.seq).toBe(e.sequenceNumber);
      expect(store.read((x) => x.batchTree(e.merkleTreePubkey))).toMatchObject({ seq: e.sequenceNumber, rootIndex: e.rootIndex });
      onEvent?.(e, store, r);
    }
  }
  return { store, indexer, results };
}

function queueSizes(store: Store, tree = HLKS5.treeBytes) {
  return store.read((r) => ({ output: [...r.outputQueue(tree)].length, input: [...r.inputQueue(tree)].length }));
}

describe('batched_tree_transactions (115: 100 user transactions into HLKs5, then 15 batch events)', () => {
  const files = load('batched_tree_transactions');
  const userFiles = files.filter((f) => !batchEventOf(f));
  const events = userFiles.flatMap(v2EventsOf);
  const outputs = events.flatMap((e) => e.event.outputCompressedAccountHashes.map((h, i) => ({ hash: h, leafIndex: e.event.outputLeafIndices[i]!, owner: e.event.outputCompressedAccounts[i]!.compressedAccount.owner })));
  const inputs = events.flatMap((e) => e.batchInputAccounts);
  const spent = new Set(inputs.map((b) => b58(b.accountHash)));
  const live = outputs.filter((o) => !spent.has(b58(o.hash)));

  /** The reference tree after the applied appends / nullifies: appended accounts' hashes, then nullifiers. */
  function expectedRoot(nextIndex: bigint, nullifiedNext: bigint): Uint8Array {
    const leaves = new Map<number, Uint8Array>();
    for (const o of outputs) if (BigInt(o.leafIndex) < nextIndex) leaves.set(o.leafIndex, o.hash);
    for (const b of inputs) if (b.queueIndex! < nullifiedNext) leaves.set(b.leafIndex, b.nullifier);
    return referenceRoot(leaves, HLKS5.height);
  }

  it('before any batch event: 100 accounts in the output queue, 50 spent in the input queue, each proved by index', () => {
    expect(userFiles).toHaveLength(100);
    expect(outputs).toHaveLength(100);
    expect(inputs).toHaveLength(50);
    expect(live).toHaveLength(50);
    const { store } = indexEach(userFiles);
    expect(queueSizes(store)).toEqual({ output: 100, input: 50 });
    store.read((r) => {
      for (const o of outputs) {
        const a = r.account(o.hash)!;
        expect(a.treeType).toBe(3);
        expect(a.seq).toBeNull();
        expect(b58(a.tree)).toBe(HLKS5.tree);
        expect(a.v2!.inOutputQueue).toBe(true);
        expect(b58(a.v2!.queue)).toBe(HLKS5.queue);
        expect(r.leafByHash(o.hash)).toBeUndefined(); // no leaf yet: proved by index
      }
      expect([...r.inputQueue(HLKS5.treeBytes)].map((q) => q.queueIndex)).toEqual([...Array(50).keys()].map(BigInt));
      for (const b of inputs) {
        const a = r.account(b.accountHash)!;
        expect(a.spent).toBe(true);
        expect(a.v2!.nullifierQueueIndex).toBe(b.queueIndex);
        expect(b58(a.v2!.nullifier!)).toBe(b58(b.nullifier));
      }
      // 50 live accounts of 1,000,000 lamports, each with its own owner
      expect(new Set(live.map((o) => b58(o.owner))).size).toBe(50);
      for (const o of live) {
        const mine = [...r.accountsByOwner(o.owner)];
        expect(mine.map((a) => [b58(a.hash), a.lamports])).toEqual([[b58(o.hash), 1_000_000n]]);
      }
    });
  });

  it('one transaction per batch: after every event the root is the chain new_root and the reference tree root; the queues drain by 10 per event; re-indexing changes nothing', () => {
    let prev = { output: 100, input: 50 };
    const { store, indexer } = indexEach(files, (e, s) => {
      const bt = s.read((r) => r.batchTree(HLKS5.treeBytes))!;
      expect(b58(expectedRoot(bt.nextIndex, bt.nullifiedNextIndex))).toBe(b58(e.newRoot));
      const now = queueSizes(s);
      expect(now).toEqual(e.kind === 'batchAppend' ? { output: prev.output - 10, input: prev.input } : { output: prev.output, input: prev.input - 10 });
      prev = now;
    });
    expect(queueSizes(store)).toEqual({ output: 0, input: 0 });
    // live owners: one appended account of 1,000,000 lamports whose proof ends at the reference root
    const finalRoot = expectedRoot(100n, 50n);
    store.read((r) => {
      for (const o of live) {
        const [a] = [...r.accountsByOwner(o.owner)];
        expect(a!.v2!.inOutputQueue).toBe(false);
        expect(r.leafByHash(o.hash, () => 32)).toEqual({ tree: Buffer.from(HLKS5.treeBytes), leafIndex: o.leafIndex });
        const [p] = getLeafProofs(r, registry, [o.hash]);
        expect(b58(p!.root)).toBe(b58(finalRoot));
        expect(p!.proof).toHaveLength(32);
      }
    });
    const before = dumpStore(store);
    for (const f of files) expect(indexer.indexBlocks([block(f)]).rejected).toEqual([]);
    expect(dumpStore(store)).toEqual(before);
  });

  it('all 115 in one batch builds the same store as one per batch', () => {
    const a = newIndexer();
    const r = a.indexer.indexBlocks(files.map(block)); // one write transaction
    expect(r.rejected).toEqual([]);
    expect(r.batchEvents).toMatchObject({ applied: 15, refused: [], held: [] });
    expect(b58(rootOf(a.store, HLKS5.treeBytes)!.hash)).toBe(b58(expectedRoot(100n, 50n)));
    const b = indexEach(files);
    const [da, db] = [dumpStore(a.store), dumpStore(b.store)];
    for (const k of Object.keys(db)) expect([k, da[k]]).toEqual([k, db[k]]);
  });
});

describe('batch_append_nullify (45: outputs to HLKs5 and smt1, BatchAppend 1, 2, BatchNullify 3, BatchAppend 4)', () => {
  const files = load('batch_append_nullify');
  const HISTORY = [
    '4C4hXkTeb81GhLj8GBTwDxRxvBy2xZxVFh4YfthKA6XJ',
    '433kYLWvdMNY8SVGamZakDQFNZRu569gR37RxrM4Q4Vk',
    '3SgZfe7CoZEfYP1YbEyqKpK3qkoTypobm2oXsqsNLQKL',
    '4D1x7SoCWSu6KTTDwyKsphwNCb4er7wr5Rw3qAv2o1wg',
    'et9ihtqjKu8uszGmNDQA9ErNzT8tbyVzmN1833fGrUF',
  ];

  it('the empty height-32 tree is the on-chain root history [0]', () => {
    expect(b58(ZERO_BYTES[32]!)).toBe(HISTORY[0]);
  });

  it('root and root seq after each event equal the on-chain root history; accounts spent while still in the output queue are appended with their hash and nullified later', () => {
    const seen: string[] = [];
    const seq4 = files.findIndex((f) => batchEventOf(f)?.sequenceNumber === 4n);
    const prefix = indexEach(files.slice(0, seq4));
    const spentQueued = prefix.store.read((r) => [...r.outputQueue(HLKS5.treeBytes)].filter((q) => r.account(q.hash)!.spent).map((q) => q.hash));
    const { store } = indexEach(files, (e, s) => {
      seen.push(b58(rootOf(s, HLKS5.treeBytes)!.hash));
    });
    expect(seen).toEqual(HISTORY.slice(1));
    expect(spentQueued.length).toBeGreaterThan(0);
    expect(rootOf(store, HLKS5.treeBytes)!.seq).toBe(4n);
    store.read((r) => {
      // spent before seq 4 but not nullified: appended by seq 4 as their account hash, still in the input queue
      for (const h of spentQueued) {
        const a = r.account(h)!;
        expect(a.v2!.inOutputQueue).toBe(false);
        expect(a.v2!.nullifiedInTree).toBe(false);
        expect(b58(r.node(HLKS5.treeBytes, BigInt(2 ** 32 + a.leafIndex))!.hash)).toBe(b58(h));
      }
      // the 10 nullified accounts' leaves hold their nullifiers
      let nullified = 0;
      for (const f of files) {
        for (const e of v2EventsOf(f)) {
          for (const b of e.batchInputAccounts) {
            const a = r.account(b.accountHash)!;
            if (!a.v2!.nullifiedInTree) continue;
            nullified++;
            expect(b58(r.node(HLKS5.treeBytes, BigInt(2 ** 32 + a.leafIndex))!.hash)).toBe(b58(b.nullifier));
          }
        }
      }
      expect(nullified).toBe(10);
      expect([...r.inputQueue(HLKS5.treeBytes)].map((q) => q.queueIndex)).toEqual([...Array(10).keys()].map((i) => BigInt(i + 10)));
      // the smt1 (StateV1) output of the v2-format transaction is an ordinary v1 leaf
      const smt1 = registry.get('smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT')!;
      expect(rootOf(store, smt1.treeBytes)!.seq).toBe(1n);
    });
  });

  it('all in one batch reaches the final on-chain root', () => {
    const { store, indexer } = newIndexer();
    const r = indexer.indexBlocks(files.map(block));
    expect(r.rejected).toEqual([]);
    expect(r.batchEvents.applied).toBe(4);
    expect(b58(rootOf(store, HLKS5.treeBytes)!.hash)).toBe(HISTORY[4]);
  });

  it('a corrupted new_root is refused: nothing of the event is stored, later events are held back until it comes right', () => {
    const first = files.findIndex((f) => batchEventOf(f));
    const bad = structuredClone(files[first]!);
    const noop = bad.transaction.groups.flatMap((g) => [g.outer, ...g.inner]).find((ix) => ix.programId.startsWith('noop'))!;
    const data = new Uint8Array(noop.data);
    data[73 + 31] ^= 1; // new_root = bytes 73..105 (after tag, tree and five u64)
    noop.data = data;
    const { store, indexer } = newIndexer();
    for (const f of files.slice(0, first)) indexer.indexBlocks([block(f)]);
    const before = dumpStore(store);
    const r = indexer.indexBlocks([block(bad)]);
    expect(r.rejected).toHaveLength(1);
    expect(r.rejected[0]!.reason).toMatch(/^batchAppend seq 1: computed root 433kYLWvdMNY8SVGamZakDQFNZRu569gR37RxrM4Q4Vk of HLKs5\S+ differs from the event's new_root /);
    expect(r.rootMismatches).toEqual(new Map([[HLKS5.tree, 1]]));
    const after = dumpStore(store);
    expect({ ...after, rejected: [] }).toEqual({ ...before, rejected: [], blocks: after.blocks });
    expect(store.read((x) => x.transaction(bad.transaction.signature))).toBeUndefined();
    expect(store.read((x) => x.rejection(bad.transaction.signature))).toMatch(/differs from the event's new_root/);
    // the next event (seq 2) has a gap: held back, not guessed
    const second = files.findIndex((f, i) => i > first && batchEventOf(f));
    for (const f of files.slice(first + 1, second + 1)) indexer.indexBlocks([block(f)]);
    expect(rootOf(store, HLKS5.treeBytes)).toBeUndefined();
    expect(store.read((x) => [...x.pendingBatchEvents(HLKS5.treeBytes)].map((p) => p.event.sequenceNumber))).toEqual([2n]);
    // the genuine seq 1 arrives: seq 1 and the held seq 2 apply
    const r2 = indexer.indexBlocks([block(files[first]!)]);
    expect(r2.batchEvents.applied).toBe(2);
    expect(b58(rootOf(store, HLKS5.treeBytes)!.hash)).toBe(HISTORY[2]);
    expect(store.read((x) => [...x.pendingBatchEvents(HLKS5.treeBytes)])).toEqual([]);
  });
});

describe('batched_address_transactions (55: 50 addresses created in EzKE8, then BatchAddressAppend)', () => {
  const files = load('batched_address_transactions');
  const userFiles = files.filter((f) => !batchEventOf(f));
  const addresses = userFiles.flatMap(v2EventsOf).flatMap((e) => e.newAddresses.map((a) => a.address));

  /** Reference AddressV2 tree: zeroeth element (0 → 2^248−1) at leaf 0, then the values in order. */
  function referenceAddressRoot(values: Uint8Array[]): Uint8Array {
    const els = [{ value: new Uint8Array(32) as Uint8Array, next: HIGHEST_ADDRESS_PLUS_ONE }];
    for (const v of values) {
      let low = 0;
      for (let i = 0; i < els.length; i++) if (Buffer.compare(Buffer.from(els[i]!.value), Buffer.from(v)) < 0 && Buffer.compare(Buffer.from(els[i]!.value), Buffer.from(els[low]!.value)) > 0) low = i;
      els.push({ value: v, next: els[low]!.next });
      els[low]!.next = v;
    }
    return referenceRoot(new Map(els.map((e, i) => [i, indexedLeafHashV2(e.value, e.next)])), 40);
  }

  it('the address queue holds the 50 addresses in creation order with queue indices 0..49; after the update it is empty and the root equals the reference indexed tree', () => {
    expect(addresses).toHaveLength(50);
    const { store } = indexEach(userFiles);
    expect(store.read((r) => [...r.addressQueue(EZKE8.treeBytes)].map((q) => [q.queueIndex, b58(q.address)]))).toEqual(addresses.map((a, i) => [BigInt(i), b58(a)]));
    const appended: Uint8Array[] = [];
    const all = indexEach(files, (e, s) => {
      const q = s.read((r) => [...r.addressQueue(EZKE8.treeBytes)]).length;
      for (let i = Number(e.oldNextIndex) - 1; i < Number(e.newNextIndex) - 1; i++) appended.push(addresses[i]!);
      expect(q).toBe(50 - appended.length);
      expect(b58(referenceAddressRoot(appended))).toBe(b58(e.newRoot));
    });
    expect(appended).toHaveLength(50);
    const root = rootOf(all.store, EZKE8.treeBytes)!;
    expect(b58(root.hash)).toBe(b58(referenceAddressRoot(addresses)));
    // a fresh address: non-inclusion proof against that root (40 siblings, V2 leaf hash)
    const fresh = new Uint8Array(32).fill(7);
    fresh[0] = 0;
    const p = all.store.read((r) => getNewAddressProof(r, EZKE8, fresh));
    expect(p.proof).toHaveLength(40);
    let cur: Uint8Array = indexedLeafHashV2(p.lowerRangeAddress, p.higherRangeAddress);
    p.proof.forEach((sib, level) => (cur = Math.floor(p.lowElementLeafIndex / 2 ** level) % 2 ? poseidon2(sib, cur) : poseidon2(cur, sib)));
    expect(b58(cur)).toBe(b58(root.hash));
    expect(Buffer.compare(Buffer.from(p.lowerRangeAddress), Buffer.from(fresh))).toBeLessThan(0);
    expect(Buffer.compare(Buffer.from(fresh), Buffer.from(p.higherRangeAddress))).toBeLessThan(0);
    // re-indexing changes nothing (queue rows are not re-added)
    const before = dumpStore(all.store);
    for (const f of files) all.indexer.indexBlocks([block(f)]);
    expect(dumpStore(all.store)).toEqual(before);
  });
});

describe('batched_tree_token_transactions (2 cToken transfers on HLKs5)', () => {
  const files = load('batched_tree_token_transactions');
  const SENDER = 'En9a97stB3Ek2n6Ey3NJwCUJnmTzLMMEA5C69upGDuQP';
  // The token data says: mint FcygLm…, recipients DyRWDm…, 3Yzfc…, 2ShDK… (9,255 each) and 24fLJv… (9,258).
  // (test/fixtures/photon/README.md lists FcygLm… as a recipient and 24fLJv… as the mint: the data disagrees.)
  const MINT = 'FcygLmSjsnEc9v5GDbFBoGRoAx7zuYPTp8CRhKB8snQ4';
  const RECIPIENTS = { DyRWDm81iYePWsdw1Yn2ue8CPcp7Lba6XsB8DVSGM7HK: 9255n, '3YzfcCyqUPE9oubX2Ct9xWn1u5urqmGu6wfcFavHsCQZ': 9255n, '2ShDKqkcMmacgYeSsEjwjLVJcoERZ9jgZ8tFyssxd82S': 9255n, '24fLJv6tHmsxQg5vDD7XWy85TMhFzJdkqZ9Ta3LtVReU': 9258n };

  it('first: the sender holds 3 token accounts of 12,341 (1,000,000 lamports, no address, leaves 0–2, seq null); second: 3 closed, 5 opened, recipients get their amounts', () => {
    const { store, indexer } = newIndexer();
    expect(indexer.indexBlocks([block(files[0]!)]).rejected).toEqual([]);
    store.read((r) => {
      const accs = [...r.tokenAccountsBy('owner', bs58.decode(SENDER), null)];
      expect(accs.map((a) => [parseTokenData(a.data!.data).amount, a.lamports, a.address, a.leafIndex, a.seq])).toEqual([
        [12341n, 1_000_000n, null, 0, null],
        [12341n, 1_000_000n, null, 1, null],
        [12341n, 1_000_000n, null, 2, null],
      ]);
      expect(accs.every((a) => b58(parseTokenData(a.data!.data).mint) === MINT)).toBe(true);
      expect([...r.tokenBalances(bs58.decode(SENDER))].map((b) => [b58(b.mint), b.balance])).toEqual([[MINT, 3n * 12341n]]);
    });
    const r2 = indexer.indexBlocks([block(files[1]!)]);
    expect(r2.rejected).toEqual([]);
    expect(r2.outputsInserted).toBe(5);
    expect(r2.accountsSpent).toBe(3);
    store.read((r) => {
      expect([...r.tokenAccountsBy('owner', bs58.decode(SENDER), null)]).toEqual([]);
      for (const [owner, amount] of Object.entries(RECIPIENTS)) {
        const accs = [...r.tokenAccountsBy('owner', bs58.decode(owner), null)];
        expect(accs.map((a) => parseTokenData(a.data!.data).amount)).toEqual([amount]);
        expect(r.tokenBalance(bs58.decode(owner), bs58.decode(MINT))).toBe(amount);
      }
      expect([...r.inputQueue(HLKS5.treeBytes)].length).toBe(3);
      expect([...r.outputQueue(HLKS5.treeBytes)].length).toBe(8);
    });
  });
});

describe('four_cpi_events and index_compress_and_close_with_tlv', () => {
  it('four_cpi_events: all four events are indexed (four accounts in the output queue)', () => {
    const files = load('four_cpi_events');
    const { store, indexer } = newIndexer();
    const r = indexer.indexBlocks([block(files[0]!)]);
    expect(r.rejected).toEqual([]);
    expect(r.outputsInserted).toBe(4);
    expect(store.read((x) => [...x.outputQueue(HLKS5.treeBytes)].length)).toBe(4);
  });

  it('index_compress_and_close_with_tlv: parses, stores its 5 outputs in bmt2, at least one a token account with TLV; the ATA wallet owner is decoded', () => {
    const files = load('index_compress_and_close_with_tlv');
    const bmt2 = registry.get('bmt2UxoBxB9xWev4BkLvkGdapsz6sZGkzViPNph7VFi')!;
    const { store, indexer } = newIndexer();
    const r = indexer.indexBlocks([block(files[0]!)]);
    expect(r.rejected).toEqual([]);
    expect(r.outputsInserted).toBe(5);
    const [ev] = v2EventsOf(files[0]!);
    store.read((x) => {
      const accs = ev!.event.outputCompressedAccountHashes.map((h) => x.account(h)!);
      expect(accs.every((a) => b58(a.tree) === bmt2.tree && a.v2?.inOutputQueue)).toBe(true);
      const withTlv = accs.filter((a) => b58(a.owner) === 'cTokenmWW8bLPjZEBAUgYy3zKxQZW6VKi7bqNFEVv3m' && a.data && parseTokenData(a.data.data).tlv);
      expect(withTlv.length).toBeGreaterThan(0);
    });
    expect(ev!.event.ataOwners.length).toBeGreaterThan(0);
    // the ATA wallet owners are stored with their token accounts (Photon token_accounts.ata_owner) and indexed by wallet
    const wallets = ['2F7Zim9m5svq2M8pVXUQPDXme6nSji8Vvj8D2vhh3dvj', '2F7Zim9m5svq2M8pVXUQPDXme6nSji8Vvj8D2vhh3dvj', '2F7Zim9m5svq2M8pVXUQPDXme6nSji8Vvj8D2vhh3dvj', '2F7Zim9m5svq2M8pVXUQPDXme6nSji8Vvj8D2vhh3dvj', 'DgTcTnDcHGUcApj2RjhRpezRPSCyK7PRVmHL4SFD1zRD'];
    expect(ev!.event.ataOwners.map((o) => [o.outputIndex, b58(o.walletOwner)])).toEqual(wallets.map((w, i) => [i, w]));
    store.read((x) => {
      const hashes = ev!.event.outputCompressedAccountHashes;
      expect(hashes.map((h) => b58(x.account(h)!.ataOwner!))).toEqual(wallets);
      // the token owner is the ATA itself, not the wallet
      expect(hashes.every((h) => b58(parseTokenData(x.account(h)!.data!.data).owner) !== b58(x.account(h)!.ataOwner!))).toBe(true);
      const byWallet = (w: string) => [...x.tokenAccountsBy('ataOwner', bs58.decode(w), null)].map((a) => b58(a.hash)).sort();
      expect(byWallet(wallets[0]!)).toEqual(hashes.slice(0, 4).map(b58).sort());
      expect(byWallet(wallets[4]!)).toEqual([b58(hashes[4]!)]);
      const mint = parseTokenData(x.account(hashes[4]!)!.data!.data).mint;
      expect([...x.tokenAccountsBy('ataOwner', bs58.decode(wallets[4]!), mint)].map((a) => b58(a.hash))).toEqual([b58(hashes[4]!)]);
    });
    // spending an ATA's token account drops it from the wallet's index
    store.write((w) => w.spendAccount(ev!.event.outputCompressedAccountHashes[4]!, (a) => {
      const t = parseTokenData(a.data!.data);
      return { owner: t.owner, mint: t.mint, delegate: t.delegate, amount: t.amount };
    }));
    store.read((x) => expect([...x.tokenAccountsBy('ataOwner', bs58.decode(wallets[4]!), null)]).toEqual([]));
  });
});

describe('no silent drops', () => {
  it('a light-system transaction whose insert_into_queues is missing yields no event and is reported as unparsed', () => {
    const [f] = load('four_cpi_events');
    const tx = structuredClone(f!.transaction);
    for (const g of tx.groups) g.inner = g.inner.filter((ix) => !ix.programId.startsWith('compr'));
    const { indexer } = newIndexer();
    const r = indexer.indexBlocks([{ ...block(f!), transactions: [tx] }]);
    expect(r.unparsed).toEqual([{ signature: tx.signature, slot: f!.slot, program: 'light-system' }]);
    expect(r.rejected).toEqual([]);
  });
});

describe('indexing methodologies on every v2 folder', () => {
  for (const name of ['batch_append_nullify', 'batched_address_transactions', 'batched_tree_token_transactions', 'four_cpi_events', 'index_compress_and_close_with_tlv']) {
    it(`${name}: one transaction per batch = all in one batch; re-indexing either way changes nothing`, () => {
      const files = load(name);
      const each = indexEach(files);
      const all = newIndexer();
      expect(all.indexer.indexBlocks(files.map(block)).rejected).toEqual([]);
      const d = dumpStore(each.store);
      expect(dumpStore(all.store)).toEqual(d);
      expect(all.indexer.indexBlocks(files.map(block)).rejected).toEqual([]);
      for (const f of files) each.indexer.indexBlocks([block(f)]);
      expect(dumpStore(all.store)).toEqual(d);
      expect(dumpStore(each.store)).toEqual(d);
    });
  }
});

describe('v2 validation (deriveStateUpdate)', () => {
  it('an output whose recomputed v2 hash differs from the insert_into_queues leaf rejects the transaction, naming output, tree and leaf', () => {
    const [f] = load('four_cpi_events');
    const parsed = parseTransaction(f!.transaction, f!.slot);
    const ev = parsed.events[2] as Extract<LightEvent, { kind: 'batchPublicTransaction' }>;
    ev.event.event.outputCompressedAccounts[0]!.compressedAccount.lamports += 1n;
    expect(() => deriveStateUpdate(parsed, registry)).toThrow(
      new RegExp(`^transaction ${f!.transaction.signature} rejected: output 0: event hash \\S+ differs from the recomputed compressed-account hash \\S+ \\(tree ${HLKS5.tree}, leaf \\d+\\)$`),
    );
  });

  it('a batch event for a tree of the wrong type is rejected; one for an unknown tree is skipped and reported', () => {
    const files = load('batch_append_nullify');
    const f = files.find((x) => batchEventOf(x))!;
    const parsed = parseTransaction(f.transaction, f.slot);
    const ev = parsed.events.find((e) => e.kind === 'batch') as Extract<LightEvent, { kind: 'batch' }>;
    const smt1 = registry.get('smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT')!;
    ev.event.merkleTreePubkey = smt1.treeBytes;
    expect(() => deriveStateUpdate(parsed, registry)).toThrow(`batchAppend event for ${smt1.tree}, which is StateV1 (expected StateV2)`);
    ev.event.merkleTreePubkey = new Uint8Array(32).fill(9);
    expect(deriveStateUpdate(parsed, registry).unknownTrees).toEqual([b58(new Uint8Array(32).fill(9))]);
  });
});
