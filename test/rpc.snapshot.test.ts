/**
 * The shared read snapshot of the API (`Store.readShared`) and the memoised last slot: one snapshot
 * per event-loop turn, dropped by a write, kept by a pinned (async) user; `ReadView.lastSlot` always
 * the snapshot's own MAX(blocks.slot), also when computed after newer blocks were committed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../src/store/store.ts';
import { tempDir } from './helpers/photon.ts';

const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

function store(): Store {
  const s = new Store({ path: tempDir('refract-snap-') });
  stores.push(s);
  return s;
}

function addBlock(s: Store, slot: number): void {
  s.write((w) => w.insertBlock({ slot, parentSlot: Math.max(0, slot - 1), blockTime: 1_700_000_000 + slot, blockHeight: slot, blockhash: `h${slot}`, previousBlockhash: '' }));
}

const turn = () => new Promise((r) => setImmediate(r));

describe('Store.readShared', () => {
  it('hands out one snapshot per turn, and a fresh one after a write or a turn', async () => {
    const s = store();
    expect(s.readShared((r) => r.lastSlot())).toBeNull();
    addBlock(s, 5);
    const v1 = s.readShared((r) => r);
    expect(s.readShared((r) => r)).toBe(v1);
    expect(v1.lastSlot()).toBe(5);
    addBlock(s, 9); // a write drops the shared snapshot
    const v2 = s.readShared((r) => r);
    expect(v2).not.toBe(v1);
    expect(v2.lastSlot()).toBe(9);
    await turn();
    expect(s.readShared((r) => r)).not.toBe(v2);
  });

  it('keeps the snapshot pinned for an async user, whatever is committed meanwhile', async () => {
    const s = store();
    addBlock(s, 3);
    let seen: (number | null)[] = [];
    const done = s.readShared(async (r) => {
      await turn();
      addBlock(s, 10);
      addBlock(s, 11);
      await turn();
      // First read of the last slot happens after the commits: still this snapshot's value.
      seen = [r.lastSlot(), r.lastSlot()];
      return r.block(10);
    });
    expect(await done).toBeUndefined();
    expect(seen).toEqual([3, 3]);
    expect(s.readShared((r) => r.lastSlot())).toBe(11);
  });

  it('lastSlot is the maximum, also when lower slots are inserted later', () => {
    const s = store();
    addBlock(s, 100);
    addBlock(s, 7);
    expect(s.readShared((r) => r.lastSlot())).toBe(100);
    expect(s.read((r) => r.lastSlot())).toBe(100);
    expect(s.write((w) => w.lastSlot())).toBe(100);
    expect(s.write((w) => (w.insertBlock({ slot: 200, parentSlot: 199, blockTime: 1, blockHeight: 200, blockhash: 'x', previousBlockhash: '' }), w.lastSlot()))).toBe(200);
  });

  it('releases the transaction of a failed or rejected call', async () => {
    const s = store();
    addBlock(s, 1);
    expect(() => s.readShared(() => {
      throw new Error('boom');
    })).toThrow('boom');
    await expect(s.readShared(async () => {
      throw new Error('later');
    })).rejects.toThrow('later');
    addBlock(s, 2);
    expect(s.readShared((r) => r.lastSlot())).toBe(2);
  });
});
