/**
 * Balance rows (photon.md §2.3 steps 3–4): changes of zero are dropped, so a zero-amount token output
 * makes no token-balance or holder row, while a balance that falls to zero keeps its row (Photon
 * never deletes balance rows). And a batch applied out of execution order (outputs first, then spends)
 * keeps the address index on the live account.
 */
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { persistBatch } from '../src/state/persist.ts';
import type { StateUpdate } from '../src/state/stateUpdate.ts';
import type { AccountRecord } from '../src/store/records.ts';
import { Store } from '../src/store/store.ts';
import { asHash, asPubkey } from '../src/types.ts';
import { tempDir } from './helpers/photon.ts';

const key = (n: number) => new Uint8Array(32).fill(n);
const OWNER = key(7);
const MINT = key(9);
const account = (n: number): AccountRecord => ({
  hash: asHash(key(n)),
  tree: asPubkey(key(1)),
  owner: asPubkey(key(2)), // the token program's account owner is irrelevant here: the token owner is OWNER
  lamports: 0n,
  leafIndex: n,
  seq: BigInt(n),
  slotCreated: 1,
  spent: false,
  address: null,
  data: null,
  treeType: 1,
});

describe('token balances', () => {
  it('a zero-amount output makes no row; spending down to zero keeps the row at 0', async () => {
    const store = new Store({ path: tempDir() });
    store.write((w) => w.insertAccount(account(20), { owner: OWNER, mint: MINT, delegate: null, amount: 0n }));
    expect(store.read((r) => [...r.tokenBalances(OWNER)])).toEqual([]);
    expect(store.read((r) => [...r.mintHolders(MINT)])).toEqual([]);

    store.write((w) => w.insertAccount(account(21), { owner: OWNER, mint: MINT, delegate: null, amount: 5n }));
    const balances = () => store.read((r) => [...r.tokenBalances(OWNER)].map((b) => b.balance));
    expect(balances()).toEqual([5n]);
    store.write((w) => w.spendAccount(key(21), () => ({ owner: OWNER, mint: MINT, delegate: null, amount: 5n })));
    expect(balances()).toEqual([0n]);
    expect(store.read((r) => [...r.mintHolders(MINT)].map((h) => h.balance))).toEqual([0n]);
    await store.close();
  });
});

describe('a batch whose transactions come out of execution order (persistBatch)', () => {
  const update = (name: string, outputs: AccountRecord[], inputs: Uint8Array[]): StateUpdate => ({
    signature: bs58.encode(new Uint8Array(64).fill(name.charCodeAt(0))),
    slot: 1,
    recordTransaction: false,
    usesCompression: true,
    error: null,
    outputs: outputs.map((account) => ({ account, token: null })),
    inputs,
    leaves: [],
    indexedEvents: [],
    batchEvents: [],
    unknownTrees: [],
  });

  it('an address that moves h1 → h2 → h3 within the batch ends on the live account in either order', async () => {
    const Q = key(50);
    const at = (n: number): AccountRecord => ({ ...account(n), address: Q });
    const b = update('B', [at(2)], [key(1)]); // spends h1, creates h2 at Q
    const c = update('C', [at(3)], [key(2)]); // spends h2, creates h3 at Q
    const orders = [
      [b, c],
      [c, b],
    ];
    for (const order of orders) {
      const store = new Store({ path: tempDir() });
      store.write((w) => persistBatch(w, [], [update('A', [at(1)], [])]));
      store.write((w) => persistBatch(w, [], order));
      const live = store.read((r) => r.accountByAddress(Q));
      expect(live && Buffer.from(live.hash).equals(Buffer.from(key(3))), order === orders[0] ? 'B, C' : 'C, B').toBe(true);
      expect(store.read((r) => [key(1), key(2), key(3)].map((h) => r.account(h)!.spent))).toEqual([true, true, false]);
      await store.close();
    }
  });
});
