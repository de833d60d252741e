/**
 * The tree/queue account codec (src/light/treeAccounts.ts) on the REAL account dumps in
 * test/fixtures/light-accounts: every file decodes to its type, height, queue pairing, root-history
 * capacity and next index read from the data; cross-checked with test/fixtures/photon/trees.json where
 * it names the same tree; bad input gives a specific TreeAccountError; encode → decode round-trips.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeTreeAccount, encodeTreeAccount, TREE_ACCOUNT_HEADER_BYTES, TreeAccountError, type DecodedTree, type DecodedTreeAccount } from '../src/light/treeAccounts.ts';
import { loadLightAccounts } from './helpers/lightAccounts.ts';

const ACP = 'compr6CUsB5m2jS4Y3831ztGSTnDpnKJTKS95d64XVq';
const OWNER = '24rt4RgeyjUCWGS2eF7L7gyNMuz6JWdqYpAvb1KRoHxs';
const dumps = loadLightAccounts();
const decode = (pubkey: string, data?: Uint8Array): DecodedTreeAccount => {
  const a = dumps.get(pubkey)!;
  return decodeTreeAccount({ pubkey, data: data ?? a.account.data[0], owner: a.account.owner });
};
const raw = (pubkey: string) => Buffer.from(dumps.get(pubkey)!.account.data[0], 'base64');

// What each dump is, per the README of test/fixtures/light-accounts (type, height, queue pairing).
const TREES = [
  { tree: 'HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu', queue: '6L7SzhYB3anwEQ9cphpJ1U7Scwj57bx2xueReg7R9cKU', type: 'StateV2', height: 32 },
  { tree: 'bmt1LryLZUMmF7ZtqESaw7wifBXLfXHQYoE4GAmrahU', queue: 'oq1na8gojfdUhsfCpyjNt6h4JaDWtHf1yQj4koBWfto', type: 'StateV2', height: 32 },
  { tree: 'EzKE84aVTkCUhDHLELqyJaq1Y7UVVmqxXqZjVHwHY3rK', queue: 'EzKE84aVTkCUhDHLELqyJaq1Y7UVVmqxXqZjVHwHY3rK', type: 'AddressV2', height: 40 },
  { tree: 'amt2kaJA14v3urZbZvnc5v2np8jqvc4Z8zDep5wbtzx', queue: 'amt2kaJA14v3urZbZvnc5v2np8jqvc4Z8zDep5wbtzx', type: 'AddressV2', height: 40 },
  { tree: 'smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT', queue: 'nfq1NvQDJ2GEgnS8zt9prAe8rjjpAW1zFkrvZoBR148', type: 'StateV1', height: 26 },
  { tree: 'amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2', queue: 'aq1S9z4reTSQAdgWHGD2zDaS39sjGrAxbR31vxJ2F4F', type: 'AddressV1', height: 26 },
] as const;
const QUEUES = [
  { queue: '6L7SzhYB3anwEQ9cphpJ1U7Scwj57bx2xueReg7R9cKU', tree: 'HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu', queueType: 'OutputV2' },
  { queue: 'oq1na8gojfdUhsfCpyjNt6h4JaDWtHf1yQj4koBWfto', tree: 'bmt1LryLZUMmF7ZtqESaw7wifBXLfXHQYoE4GAmrahU', queueType: 'OutputV2' },
  { queue: 'nfq1NvQDJ2GEgnS8zt9prAe8rjjpAW1zFkrvZoBR148', tree: 'smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT', queueType: 'NullifierV1' },
  { queue: 'aq1S9z4reTSQAdgWHGD2zDaS39sjGrAxbR31vxJ2F4F', tree: 'amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2', queueType: 'AddressV1' },
] as const;

describe('decodeTreeAccount on the real dumps', () => {
  it('has all 10 dumps, all owned by the account-compression program', () => {
    expect(dumps.size).toBe(10);
    for (const a of dumps.values()) expect(a.account.owner).toBe(ACP);
    expect(new Set([...TREES.map((t) => t.tree), ...QUEUES.map((q) => q.queue)])).toEqual(new Set(dumps.keys()));
  });

  it.each(TREES)('tree $tree → $type, height $height, queue $queue', (t) => {
    const d = decode(t.tree);
    expect(d).toMatchObject({ kind: 'tree', tree: t.tree, queue: t.queue, type: t.type, height: t.height, owner: OWNER });
  });

  it.each(QUEUES)('queue $queue → $queueType of tree $tree', (q) => {
    expect(decode(q.queue)).toMatchObject({ kind: 'queue', queue: q.queue, tree: q.tree, queueType: q.queueType, owner: OWNER });
  });

  it('reads root-history capacity, next index and sequence number from the data (u32/u64 fields)', () => {
    for (const t of TREES) {
      const d = decode(t.tree) as DecodedTree;
      const b = raw(t.tree);
      if (t.type.endsWith('V2')) {
        expect(d.rootHistoryCapacity).toBe(b.readUInt32LE(252));
        expect(d.nextIndex).toBe(Number(b.readBigUInt64LE(240)));
        expect(d.sequenceNumber).toBe(Number(b.readBigUInt64LE(232)));
        expect(Number(b.readBigUInt64LE(256))).toBe(2 ** t.height); // capacity = 2^height confirms the offsets
      } else {
        expect(d.rootHistoryCapacity).toBe(Number(b.readBigUInt64LE(336)));
        // roots length ≤ capacity, and changelog/canopy headers around it are plausible
        expect(Number(b.readBigUInt64LE(344))).toBeLessThanOrEqual(d.rootHistoryCapacity);
        expect(Number(b.readBigUInt64LE(368))).toBe(2 ** (Number(b.readBigUInt64LE(232)) + 1) - 2); // canopy capacity for canopy depth
      }
    }
    // What the local CLI's dumps hold (not mainnet's: mainnet bmt1 keeps 60 roots).
    const caps = Object.fromEntries(TREES.map((t) => [t.tree.slice(0, 5), (decode(t.tree) as DecodedTree).rootHistoryCapacity]));
    expect(caps).toEqual({ HLKs5: 20, bmt1L: 200, EzKE8: 200, amt2k: 200, smt1N: 2400, amt1A: 2400 });
    expect((decode('amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2') as DecodedTree).nextIndex).toBe(2); // indexed tree: 0 and max elements
    expect((decode('EzKE84aVTkCUhDHLELqyJaq1Y7UVVmqxXqZjVHwHY3rK') as DecodedTree).nextIndex).toBe(1); // batched address tree starts at 1
  });

  it('agrees with test/fixtures/photon/trees.json where it names the same tree', () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
    const seed = JSON.parse(readFileSync(path.resolve(root, 'test/fixtures/photon/trees.json'), 'utf8')) as { tree: string; queue: string; type: string; height: number; rootHistoryCapacity: number }[];
    let shared = 0;
    for (const s of seed) {
      if (!dumps.has(s.tree)) continue;
      shared++;
      const d = decode(s.tree) as DecodedTree;
      expect({ tree: d.tree, queue: d.queue, type: d.type, height: d.height, rootHistoryCapacity: d.rootHistoryCapacity }).toEqual(s);
    }
    expect(shared).toBe(2); // smt1 and amt1 (smt2 has no dump)
  });

  it('decodes a header-only prefix (getProgramAccounts dataSlice) to the same result', () => {
    for (const pubkey of dumps.keys()) {
      const prefix = raw(pubkey).subarray(0, TREE_ACCOUNT_HEADER_BYTES);
      expect(decode(pubkey, prefix)).toEqual(decode(pubkey));
    }
  });
});

describe('decodeTreeAccount errors', () => {
  const smt1 = 'smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT';
  const bmt1 = 'bmt1LryLZUMmF7ZtqESaw7wifBXLfXHQYoE4GAmrahU';
  const err = (f: () => unknown): TreeAccountError => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(TreeAccountError);
      return e as TreeAccountError;
    }
    throw new Error('expected a TreeAccountError');
  };

  it('unknown discriminator → names it, never guesses', () => {
    const data = Buffer.from(raw(smt1));
    data.write('ffffffffffffffff', 0, 'hex');
    const e = err(() => decode(smt1, data));
    expect(e.reason).toBe('unknown-discriminator');
    expect(e.message).toContain(`account ${smt1}: discriminator ffffffffffffffff is not a Light tree or queue account`);
  });

  it('short data → says how long it is and how long the header is', () => {
    expect(err(() => decode(smt1, raw(smt1).subarray(0, 300))).message).toBe(`account ${smt1}: StateV1 Merkle tree data is 300 bytes, its header needs 344`);
    expect(err(() => decode(bmt1, raw(bmt1).subarray(0, 100))).reason).toBe('short');
    expect(err(() => decode(bmt1, raw(bmt1).subarray(0, 5))).message).toBe(`account ${bmt1}: account data is 5 bytes, its header needs 8`);
  });

  it('another program\'s account, a bad tree type, height or queue type → invalid with the field', () => {
    expect(err(() => decodeTreeAccount({ pubkey: smt1, data: raw(smt1), owner: '11111111111111111111111111111111' })).reason).toBe('not-acp');
    const badType = Buffer.from(raw(bmt1));
    badType.writeBigUInt64LE(7n, 8);
    expect(err(() => decode(bmt1, badType)).message).toBe(`account ${bmt1}: batched Merkle tree type 7 (@8) is neither StateV2 (3) nor AddressV2 (4)`);
    const badHeight = Buffer.from(raw(bmt1));
    badHeight.writeUInt32LE(0, 248);
    expect(err(() => decode(bmt1, badHeight)).message).toContain('StateV2 height 0 (@248) is not in 1..40');
    const badCap = Buffer.from(raw(smt1));
    badCap.writeBigUInt64LE(0n, 336);
    expect(err(() => decode(smt1, badCap)).message).toContain('StateV1 root history capacity 0 (@336) must be at least 1');
    const nfq = 'nfq1NvQDJ2GEgnS8zt9prAe8rjjpAW1zFkrvZoBR148';
    const badQueue = Buffer.from(raw(nfq));
    badQueue.writeBigUInt64LE(3n, 224);
    expect(err(() => decode(nfq, badQueue)).message).toBe(`account ${nfq}: v1 queue type 3 (@224) is not nullifier (1) or address (2)`);
  });
});

describe('encodeTreeAccount', () => {
  it('round-trips every dump through encode → decode', () => {
    for (const pubkey of dumps.keys()) {
      const d = decode(pubkey);
      const { kind, ...rest } = d;
      const bytes = encodeTreeAccount({ kind, ...rest } as never);
      expect(bytes.length).toBeLessThanOrEqual(TREE_ACCOUNT_HEADER_BYTES);
      expect(decodeTreeAccount({ pubkey, data: Buffer.from(bytes).toString('base64'), owner: ACP })).toEqual(d);
      // the header bytes the decoder reads are the real account's
      expect(Buffer.from(bytes.subarray(0, 8))).toEqual(raw(pubkey).subarray(0, 8));
    }
  });

  it('encodes a mainnet-like bmt1 with 60 roots, and rejects what the decoder would', () => {
    const bmt1 = 'bmt1LryLZUMmF7ZtqESaw7wifBXLfXHQYoE4GAmrahU';
    const oq1 = 'oq1na8gojfdUhsfCpyjNt6h4JaDWtHf1yQj4koBWfto';
    const bytes = encodeTreeAccount({ kind: 'tree', tree: bmt1, queue: oq1, type: 'StateV2', height: 32, rootHistoryCapacity: 60, nextIndex: 123, sequenceNumber: 7, owner: OWNER });
    expect(decodeTreeAccount({ pubkey: bmt1, data: bytes, owner: ACP })).toMatchObject({ type: 'StateV2', queue: oq1, rootHistoryCapacity: 60, nextIndex: 123, sequenceNumber: 7 });
    expect(() => encodeTreeAccount({ kind: 'tree', tree: bmt1, queue: oq1, type: 'StateV2', height: 41, rootHistoryCapacity: 60, nextIndex: 0, sequenceNumber: 0, owner: OWNER })).toThrow('height 41 is not in 1..40');
    expect(() => encodeTreeAccount({ kind: 'queue', queue: oq1, tree: 'n0pe', queueType: 'OutputV2', owner: OWNER })).toThrow("tree 'n0pe' is not base58");
  });
});
