/**
 * The account record's ATA wallet owner (schema 4): encode/decode round trips with and without the
 * v2 block, and a store written by schema 3 is refused with the re-index message.
 */
import { describe, expect, it } from 'vitest';
import { type AccountRecord, decodeAccount, encodeAccount } from '../src/store/records.ts';
import { SCHEMA_VERSION, SchemaMismatchError, Store } from '../src/store/store.ts';
import { asHash, asPubkey } from '../src/types.ts';
import { tempDir } from './helpers/photon.ts';

const b = (n: number) => new Uint8Array(32).fill(n);

function account(extra: Partial<AccountRecord>): AccountRecord {
  return {
    hash: asHash(b(1)),
    tree: asPubkey(b(2)),
    owner: asPubkey(b(3)),
    lamports: 5n,
    leafIndex: 7,
    seq: null,
    slotCreated: 9,
    spent: false,
    address: b(4),
    data: { discriminator: new Uint8Array(8).fill(5), dataHash: b(6), data: new Uint8Array([1, 2, 3]) },
    treeType: 3,
    ...extra,
  };
}

/** Byte arrays as hex (Buffer views and Uint8Arrays compare alike), bigints as text. */
function plain(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
  if (typeof v === 'bigint') return `${v}n`;
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

describe('account record: ATA wallet owner', () => {
  it('round trips with a v2 block, without one, and absent', () => {
    const v2 = { queue: b(8), inOutputQueue: true, nullifierQueueIndex: 4n, nullifier: b(9), txHash: b(10), nullifiedInTree: false };
    for (const a of [account({ v2, ataOwner: b(11) }), account({ ataOwner: b(12) }), account({ v2 }), account({})]) {
      const back = decodeAccount(a.hash, encodeAccount(a));
      expect(plain(back)).toEqual(plain(a));
      expect('ataOwner' in back).toBe(a.ataOwner !== undefined);
    }
  });

  it('a store of schema 3 (no ATA owners) is refused: re-index', () => {
    expect(SCHEMA_VERSION).toBe(4);
    const path = tempDir('refract-schema3-');
    const s = new Store({ path });
    s.write((w) => w.setSchemaVersion(3));
    s.root.close();
    expect(() => new Store({ path })).toThrow(SchemaMismatchError);
    expect(() => new Store({ path })).toThrow(/has schema version 3; this Refract needs 4\. Re-index/);
  });
});
