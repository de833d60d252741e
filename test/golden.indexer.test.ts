/**
 * Golden tests of the indexer core against the reference indexer's snapshots, through the query
 * layer (not HTTP): account hashes, leaf indices, seqs, roots, root seqs, proofs, balances,
 * for four indexing methodologies (photon.md §4.2).
 */
import { describe, expect, it } from 'vitest';
import bs58 from 'bs58';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { loadTransactionFiles } from '../src/ingest/sources/files.ts';
import { getLeafProofs } from '../src/query/merkleProofs.ts';
import { getNewAddressProof } from '../src/query/addressProofs.ts';
import { Store } from '../src/store/store.ts';
import type { AccountRecord } from '../src/store/records.ts';
import { parseTokenData } from '../src/light/tokenData.ts';
import type { BlockInfo, TransactionInfo } from '../src/types.ts';
import { snapshot, tempDir, txFiles } from './helpers/photon.ts';
import { dumpStore } from './helpers/store.ts';

const registry = loadTreeRegistry();
const b58 = (b: Uint8Array) => bs58.encode(b);

function accountJson(a: AccountRecord) {
  return {
    hash: b58(a.hash),
    address: a.address ? b58(a.address) : null,
    data: a.data
      ? { discriminator: Number(Buffer.from(a.data.discriminator).readBigUInt64LE(0)), data: Buffer.from(a.data.data).toString('base64'), dataHash: b58(a.data.dataHash) }
      : null,
    owner: b58(a.owner),
    lamports: Number(a.lamports),
    tree: b58(a.tree),
    leafIndex: a.leafIndex,
    seq: a.seq === null ? null : Number(a.seq),
    slotCreated: a.slotCreated,
  };
}

function tokenJson(a: AccountRecord) {
  const t = parseTokenData(a.data!.data);
  return { mint: b58(t.mint), owner: b58(t.owner), amount: Number(t.amount), delegate: t.delegate ? b58(t.delegate) : null, state: t.state, tlv: t.tlv ? Buffer.from(t.tlv).toString('base64') : null };
}

const slot0 = (txs: TransactionInfo[]): BlockInfo => ({ slot: 0, parentSlot: 0, blockTime: 0, blockHeight: 0, blockhash: '', previousBlockhash: '', transactions: txs });

/** Indexes `txs` at slot 0 like Photon's harness, one of the four methodologies. */
function indexWith(txs: TransactionInfo[], individually: boolean, replay: boolean): Store {
  const store = new Store({ path: tempDir() });
  const indexer = new Indexer(store, registry);
  indexer.indexBlocks([slot0([])]);
  const all = replay ? [...txs, ...txs.slice(0, txs.length - 1)] : txs;
  if (individually) for (const tx of all) indexer.indexBlocks([slot0([tx])]);
  else indexer.indexBlocks([slot0(all)]);
  return store;
}

const METHODS = [
  [true, false],
  [false, false],
  [true, true],
  [false, true],
] as const;

function checkProofs(store: Store, hashes: string[], snap: any) {
  const proofs = store.read((r) => getLeafProofs(r, registry, hashes.map((h) => bs58.decode(h))));
  expect(
    proofs.map((p) => ({ proof: p.proof.map(b58), root: b58(p.root), leafIndex: p.leafIndex, hash: b58(p.hash), merkleTree: b58(p.merkleTree), rootSeq: Number(p.rootSeq) })),
  ).toEqual(snap.value);
  return proofs;
}

function checkValidityFields(store: Store, hashes: string[], snap: any) {
  const proofs = store.read((r) => getLeafProofs(r, registry, hashes.map((h) => bs58.decode(h))));
  const v = snap.value;
  expect(proofs.map((p) => b58(p.root))).toEqual(v.roots);
  expect(proofs.map((p) => Number(p.rootSeq % BigInt(registry.getBytes(p.merkleTree)!.rootHistoryCapacity)))).toEqual(v.rootIndices);
  expect(proofs.map((p) => p.leafIndex)).toEqual(v.leafIndices);
  expect(proofs.map((p) => b58(p.hash))).toEqual(v.leaves);
  expect(proofs.map((p) => b58(p.merkleTree))).toEqual(v.merkleTrees);
}

describe('e2e_mint_and_transfer_transactions', () => {
  const txs = loadTransactionFiles(txFiles('e2e_mint_and_transfer_transactions')).map((f) => f.transaction);
  const name = 'e2e_mint_and_transfer_transactions';
  const people = { bob: 'EU57rQxcmFhJ24ApVdUy3y4MxFXcTUN3uiVeWvGgtWXu', charles: 'CHvwuTvTiwRSNBwAnrCG14V8YTJ6wwhHQrifxdFzHzsX' };

  for (const [individually, replay] of METHODS) {
    it(`matches the snapshots (individually=${individually}, replay=${replay})`, () => {
      const store = indexWith(txs, individually, replay);
      for (const [who, owner] of Object.entries(people)) {
        const accounts = store.read((r) => [...r.tokenAccountsBy('owner', bs58.decode(owner), null)]);
        const snap = snapshot(`${name}-${who}-accounts`);
        const got = accounts.map((a) => ({ account: accountJson(a), tokenData: tokenJson(a) }));
        expect(got).toEqual(snap.value.items);
        const hashes = got.map((g) => g.account.hash);
        checkProofs(store, hashes, snapshot(`${name}-${who}-proofs`));
        checkValidityFields(store, hashes, snapshot(`${name}-${who}-validity-proof`));
        const balances = store.read((r) => [...r.tokenBalances(bs58.decode(owner))]).map((b) => ({ mint: b58(b.mint), balance: Number(b.balance) }));
        expect(balances).toEqual(snapshot(`${name}-${who}-token-balances`).value.token_balances);
      }
    });
  }

  it('one batch in reverse order (spends before the outputs they spend, as a file import of one slot may sort them) builds the same store', () => {
    // Photon persists a batch's outputs before its spends (photon.md §2.3 steps 3–4).
    expect(dumpStore(indexWith([...txs].reverse(), false, false))).toEqual(dumpStore(indexWith(txs, false, false)));
  });
});

describe('lamport_transfers', () => {
  const txs = loadTransactionFiles(txFiles('lamport_transfers', ['5NLdbq', '4TFBPy', 'QBrbAZ'])).map((f) => f.transaction);
  const owners = { payer: 'J6ULJViDpQTRntYTmfkpUZZ71KTVkZNJFSDcQhFCo5Ef', receiver: 'FLkMEA7eA82Cvp7MqamqFKsRN3E2Vfg3Xa8NRyVARq5n' };

  for (const [individually, replay] of METHODS) {
    it(`matches the snapshots (individually=${individually}, replay=${replay})`, () => {
      const store = indexWith(txs, individually, replay);
      for (const [who, owner] of Object.entries(owners)) {
        const accounts = store.read((r) => [...r.accountsByOwner(bs58.decode(owner))]);
        const snap = snapshot(`lamport_transfers-${who}-accounts`);
        expect(accounts.map(accountJson)).toEqual(snap.value.items);
        const hashes = accounts.map((a) => b58(a.hash));
        checkProofs(store, hashes, snapshot(`lamport_transfers-${who}-proofs`));
        checkValidityFields(store, hashes, snapshot(`lamport_transfers-${who}-validity-proof`));
        const sum = accounts.reduce((s, a) => s + a.lamports, 0n);
        expect(store.read((r) => r.balance(bs58.decode(owner)))).toBe(sum);
      }
    });
  }
});

describe('transaction_with_tree_rollover_fee', () => {
  it('indexes without error or rejection', () => {
    const txs = loadTransactionFiles(txFiles('transaction_with_tree_rollover_fee')).map((f) => f.transaction);
    const store = new Store({ path: tempDir() });
    const result = new Indexer(store, registry).indexBlocks([slot0(txs)]);
    expect(result.rejected).toEqual([]);
    expect(result.outputsInserted).toBeGreaterThan(0);
  });
});

describe('new-address proofs on an empty amt1 tree', () => {
  it('equal mock_tests__get_multiple_new_address_proofs', () => {
    const store = new Store({ path: tempDir() });
    new Indexer(store, registry).indexBlocks([slot0([])]);
    const amt1 = registry.get('amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2')!;
    const addresses = ['Fi6AXBGuGs7DRXP428hwhJJfTpJ4BVZD8DiUcX1cj35W', 'sH8ux4csv8wxiRejuHjpTCkrfGgeNtg6Y55AJJ9GJSd'];
    const got = store.read((r) => addresses.map((a) => getNewAddressProof(r, amt1, bs58.decode(a))));
    expect(
      got.map((p) => ({
        root: b58(p.root),
        address: b58(p.address),
        lowerRangeAddress: b58(p.lowerRangeAddress),
        higherRangeAddress: b58(p.higherRangeAddress),
        nextIndex: p.nextIndex,
        proof: p.proof.map(b58),
        merkleTree: b58(p.merkleTree),
        rootSeq: Number(p.rootSeq),
        lowElementLeafIndex: p.lowElementLeafIndex,
      })),
    ).toEqual(snapshot('get_multiple_new_address_proofs', 'mock_tests').value);
  });
});

describe('tree registry lookups', () => {
  it('finds a tree by tree or queue pubkey, as base58 or raw bytes; unknown is undefined', () => {
    for (const info of registry.all()) {
      expect(registry.get(info.tree)).toBe(info);
      expect(registry.getBytes(info.treeBytes)).toBe(info);
      expect(registry.get(info.queue)).toBe(info);
      expect(registry.getBytes(Uint8Array.from(info.queueBytes))).toBe(info);
    }
    expect(registry.getBytes(new Uint8Array(32).fill(7))).toBeUndefined();
    expect(registry.getBytes(registry.all()[0]!.treeBytes.subarray(0, 31))).toBeUndefined();
  });
});

describe('a configured state tree of another height', () => {
  it('proofs of its leaves use the registry height (the store does not assume 26)', async () => {
    const { TreeRegistry, defaultTreeEntries } = await import('../src/config/trees.ts');
    const { LightTxGenerator } = await import('../src/sim/generator.ts');
    const { decodeBlockJson } = await import('../src/solana/decode.ts');
    const registry = new TreeRegistry(defaultTreeEntries().map((e) => (e.tree.startsWith('smt1') ? { ...e, height: 20 } : e)));
    const store = new Store({ path: tempDir() });
    const gen = new LightTxGenerator({ owners: 5, seed: 11, weights: { compress: 1, transfer: 0, tokenMint: 0, tokenTransfer: 0, createAddress: 0 } });
    const r = new Indexer(store, registry).indexBlocks([decodeBlockJson(gen.block(1, 3).json, 1)]);
    expect(r.rejected).toEqual([]);
    const smt1 = bs58.decode('smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT');
    store.read((v) => {
      const hashes = [...v.accountsByOwner(gen.owner(0)), ...v.accountsByOwner(gen.owner(1)), ...v.accountsByOwner(gen.owner(2)), ...v.accountsByOwner(gen.owner(3)), ...v.accountsByOwner(gen.owner(4))].map((a) => a.hash);
      expect(hashes.length).toBeGreaterThan(0);
      const proofs = getLeafProofs(v, registry, hashes);
      for (const p of proofs) {
        expect(p.proof).toHaveLength(20);
        expect(Buffer.from(p.root).equals(Buffer.from(v.node(smt1, 1n)!.hash))).toBe(true);
      }
    });
  });
});
