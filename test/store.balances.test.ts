/**
 * Balance rows (photon.md §2.3 steps 3–4): changes of zero are dropped, so a zero-amount token output
 * makes no token-balance or holder row, while a balance that falls to zero keeps its row (Photon
 * never deletes balance rows).
 */
import { describe, expect, it } from 'vitest';
import type { AccountRecord } from '../src/store/records.ts';
import { Store } from '../src/store/store.ts';
import { tempDir } from './helpers/photon.ts';

const key = (n: number) => new Uint8Array(32).fill(n);
const OWNER = key(7);
const MINT = key(9);
const account = (n: number): AccountRecord => ({
  hash: key(n),
  tree: key(1),
  owner: key(2), // the token program's account owner is irrelevant here: the token owner is OWNER
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
