/**
 * Malformed transactions: a specific rejection, never a crash, never partial state.
 */
import { describe, expect, it } from 'vitest';
import bs58 from 'bs58';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { parseTransaction } from '../src/light/parser.ts';
import { LightTxGenerator } from '../src/sim/generator.ts';
import { TransactionRejected, deriveStateUpdate, deriveStateUpdates } from '../src/state/stateUpdate.ts';
import { decodeBlockJson, decodeTransactionJson } from '../src/solana/decode.ts';
import { Store } from '../src/store/store.ts';
import type { BlockInfo, ParsedTransaction } from '../src/types.ts';
import { tempDir } from './helpers/photon.ts';

type TxJson = { meta: { innerInstructions: { instructions: { data: string }[] }[] }; transaction: [string, string] };

/** Rewrites the noop (last inner instruction) data of a generated transaction. */
function mutateEvent(json: TxJson, f: (b: Uint8Array) => Uint8Array): TxJson {
  const copy = structuredClone(json);
  const ixs = copy.meta.innerInstructions[0]!.instructions;
  const last = ixs[ixs.length - 1]!;
  last.data = bs58.encode(f(bs58.decode(last.data)));
  return copy;
}

function blockOf(slot: number, txs: object[]): BlockInfo {
  return { slot, parentSlot: slot - 1, blockTime: 0, blockHeight: slot, blockhash: '', previousBlockhash: '', transactions: txs.map((t) => decodeTransactionJson(t).transaction) };
}

describe('malformed transactions', () => {
  const registry = loadTreeRegistry();

  it('rejects truncated event bytes and a wrong output hash, keeps the rest of the batch', () => {
    const gen = new LightTxGenerator({ owners: 10, seed: 3 });
    const good = gen.next(1, 'compress').json as unknown as TxJson;
    const truncated = mutateEvent(gen.next(1, 'compress').json as unknown as TxJson, (b) => b.subarray(0, b.length - 20));
    const wrongHash = mutateEvent(gen.next(1, 'compress').json as unknown as TxJson, (b) => {
      const c = Uint8Array.from(b);
      c[10] = c[10]! ^ 0x01; // inside the first output hash (no inputs: 4 + 4 bytes of vec lengths)
      return c;
    });
    const store = new Store({ path: tempDir() });
    const indexer = new Indexer(store, registry);
    const r = indexer.indexBlocks([blockOf(1, [good, truncated, wrongHash])]);

    const sigOf = (t: TxJson) => decodeTransactionJson(t).transaction.signature;
    expect(r.rejected.map((x) => x.signature)).toEqual([sigOf(truncated), sigOf(wrongHash)]);
    expect(r.rejected[0]!.reason).toMatch(/PublicTransactionEvent/);
    expect(r.rejected[0]!.reason).toMatch(/exceeds the \d+ bytes left|end of data/);
    expect(r.rejected[1]!.reason).toMatch(/differs from the recomputed compressed-account hash/);
    expect(r.outputsInserted).toBe(1);

    store.read((v) => {
      expect(v.transaction(sigOf(good))).toBeDefined();
      expect(v.transaction(sigOf(truncated))).toBeUndefined();
      expect(v.transaction(sigOf(wrongHash))).toBeUndefined();
      expect(v.rejection(sigOf(wrongHash))).toMatch(/differs/);
    });

    // Rejections come in transaction order, whichever stage refused them (decode or hash check).
    const again = new Indexer(new Store({ path: tempDir() }), registry).indexBlocks([blockOf(1, [wrongHash, good, truncated])]);
    expect(again.rejected.map((x) => x.signature)).toEqual([sigOf(wrongHash), sigOf(truncated)]);
  });

  it('an address or data hash that is not a field element rejects the transaction (batch and single paths agree)', () => {
    const gen = new LightTxGenerator({ owners: 10, seed: 5 });
    const parse = (kind: 'compress' | 'tokenMint') => {
      const d = decodeTransactionJson(gen.next(1, kind).json);
      return parseTransaction(d.transaction, d.slot);
    };
    const good = parse('compress');
    const badAddress = parse('compress');
    const badDataHash = parse('tokenMint');
    const outputOf = (tx: typeof good) => {
      const ev = tx.events.find((e) => e.kind === 'publicTransaction')!;
      if (ev.kind !== 'publicTransaction') throw new Error('unreachable');
      return ev.event.outputCompressedAccounts[0]!.compressedAccount;
    };
    outputOf(badAddress).address = new Uint8Array(32).fill(0xff);
    outputOf(badDataHash).data!.dataHash = new Uint8Array(32).fill(0xff);
    const wrongHash = parse('compress');
    const ev = wrongHash.events.find((e) => e.kind === 'publicTransaction')!;
    if (ev.kind === 'publicTransaction') ev.event.outputCompressedAccountHashes[0]![31] ^= 1;

    const batch = deriveStateUpdates([good, badAddress, badDataHash, wrongHash, good], registry);
    expect(batch.map((p) => (p.rejected ? 'rejected' : 'ok'))).toEqual(['ok', 'rejected', 'rejected', 'rejected', 'ok']);
    expect(batch[1]!.rejected!.reason).toMatch(/^output 0: address is not a BN254 field element/);
    expect(batch[2]!.rejected!.reason).toMatch(/^output 0: dataHash is not a BN254 field element/);
    expect(batch[3]!.rejected!.reason).toMatch(/^output 0: event hash .* differs from the recomputed compressed-account hash/);
    [good, badAddress, badDataHash, wrongHash].forEach((tx, i) => {
      if (batch[i]!.update) expect(deriveStateUpdate(tx, registry)).toEqual(batch[i]!.update);
      else {
        expect(() => deriveStateUpdate(tx, registry)).toThrow(TransactionRejected);
        expect(() => deriveStateUpdate(tx, registry)).toThrow(batch[i]!.rejected!.reason);
      }
    });
  });

  it('with two faults in one transaction, an output hash mismatch found first is the reason (as checked output by output)', () => {
    const gen = new LightTxGenerator({ owners: 10, seed: 6 });
    const d = decodeTransactionJson(gen.next(1, 'compress').json);
    const tx = parseTransaction(d.transaction, d.slot);
    const ev = tx.events.find((e) => e.kind === 'publicTransaction')!;
    if (ev.kind !== 'publicTransaction') throw new Error('unreachable');
    ev.event.outputCompressedAccountHashes[0]![31] ^= 1; // fault 1: output 0's hash
    ev.event.sequenceNumbers = []; // fault 2: output 0's sequence number, checked after its hash
    const [p] = deriveStateUpdates([tx], registry);
    expect(p!.rejected!.reason).toMatch(/^output 0: event hash .* differs from the recomputed compressed-account hash/);
    expect(() => deriveStateUpdate(tx, registry)).toThrow(/output 0: event hash .* differs/);
    // Without the first fault, the second is the reason.
    ev.event.outputCompressedAccountHashes[0]![31] ^= 1;
    expect(deriveStateUpdates([tx], registry)[0]!.rejected!.reason).toMatch(/^output 0: missing sequence number/);
  });

  it('a block that is not a getBlock result is a specific decode error, not a crash', () => {
    expect(() => decodeBlockJson({ transactions: 'nope' }, 5)).toThrow(/parentSlot: missing/);
    expect(() => decodeBlockJson({ parentSlot: 4, blockTime: 1, blockHeight: 1, blockhash: '11111111111111111111111111111111', previousBlockhash: '11111111111111111111111111111111', transactions: 'nope' }, 5)).toThrow(/transactions/);
    expect(() => decodeTransactionJson({ slot: 1, transaction: ['!!!', 'base64'], meta: {} })).toThrow(/base64/);
  });

  it('re-indexing the same batch changes nothing (idempotent)', () => {
    const gen = new LightTxGenerator({ owners: 10, seed: 4 });
    const blocks = [1, 2, 3].map((s) => decodeBlockJson(gen.block(s, 10).json, s));
    const a = new Store({ path: tempDir() });
    const ia = new Indexer(a, registry);
    for (const b of blocks) ia.indexBlocks([b]);
    const rootBefore = a.read((v) => Buffer.from(v.node(bs58.decode('smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT'), 1n)!.hash).toString('hex'));
    const again = ia.indexBlocks(blocks);
    expect(again.outputsInserted).toBe(0);
    expect(again.accountsSpent).toBe(0);
    expect(again.transactions).toBe(0);
    const rootAfter = a.read((v) => Buffer.from(v.node(bs58.decode('smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT'), 1n)!.hash).toString('hex'));
    expect(rootAfter).toBe(rootBefore);
  });
});

describe('event indices outside the tree', () => {
  const registry = loadTreeRegistry();
  const SMT1 = bs58.decode('smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT');
  const AMT1 = bs58.decode('amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2');
  const sig = bs58.encode(new Uint8Array(64).fill(9));
  const tx = (events: ParsedTransaction['events']): ParsedTransaction => ({ signature: sig, slot: 5, error: null, isVote: false, usesCompression: true, events });
  const element = (index: bigint, nextIndex = 1n) => ({ value: new Uint8Array(32), nextIndex, nextValue: new Uint8Array(32), index });

  it('a nullifier leaf index ≥ 2^26 (or 2^64−1) rejects the transaction; the batch and the tree are untouched', () => {
    for (const bad of [1n << 26n, (1n << 64n) - 1n]) {
      const [p] = deriveStateUpdates([tx([{ kind: 'nullifier', event: { tree: SMT1, nullifiedLeavesIndices: [0n, bad], seq: 100n } }])], registry);
      expect(p!.rejected!.reason).toBe(`nullifier event: leaf index ${bad} is outside tree smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT (height 26: leaves 0..2^26−1)`);
    }
    const [ok] = deriveStateUpdates([tx([{ kind: 'nullifier', event: { tree: SMT1, nullifiedLeavesIndices: [(1n << 26n) - 1n], seq: 100n } }])], registry);
    expect(ok!.update!.leaves[0]!.leaf.leafIndex).toBe(2 ** 26 - 1);
  });

  it('Merkle-tree events naming a queue pubkey (not a tree) are skipped as unknown trees, as Photon drops them', () => {
    const NFQ1 = bs58.decode('nfq1NvQDJ2GEgnS8zt9prAe8rjjpAW1zFkrvZoBR148');
    const AQ1 = bs58.decode('aq1S9z4reTSQAdgWHGD2zDaS39sjGrAxbR31vxJ2F4F');
    const [n] = deriveStateUpdates([tx([{ kind: 'nullifier', event: { tree: NFQ1, nullifiedLeavesIndices: [0n], seq: 100n } }])], registry);
    expect(n!.update!.leaves).toEqual([]);
    expect(n!.update!.unknownTrees).toEqual(['nfq1NvQDJ2GEgnS8zt9prAe8rjjpAW1zFkrvZoBR148']);
    const low = element(0n);
    const [a] = deriveStateUpdates([tx([{ kind: 'indexedTreeUpdate', event: { tree: AQ1, updates: [{ newLowElement: low, newLowElementHash: new Uint8Array(32), newHighElement: element(2n), newHighElementHash: new Uint8Array(32) }], seq: 2n } }])], registry);
    expect(a!.update!.indexedEvents).toEqual([]);
    expect(a!.update!.unknownTrees).toEqual(['aq1S9z4reTSQAdgWHGD2zDaS39sjGrAxbR31vxJ2F4F']);
  });

  it('a nullifier event for an address tree is rejected', () => {
    const [p] = deriveStateUpdates([tx([{ kind: 'nullifier', event: { tree: AMT1, nullifiedLeavesIndices: [0n], seq: 1n } }])], registry);
    expect(p!.rejected!.reason).toMatch(/^nullifier event for amt1\w+, which is AddressV1$/);
  });

  it('an indexed-tree update whose element index or next index is ≥ 2^26 is rejected', () => {
    const update = (low: bigint, highNext: bigint) => ({ newLowElement: element(low), newLowElementHash: new Uint8Array(32), newHighElement: element(3n, highNext), newHighElementHash: new Uint8Array(32) });
    const [a] = deriveStateUpdates([tx([{ kind: 'indexedTreeUpdate', event: { tree: AMT1, updates: [update((1n << 64n) - 1n, 0n)], seq: 2n } }])], registry);
    expect(a!.rejected!.reason).toMatch(/^indexed tree update 0: low element index 18446744073709551615 is outside tree amt1\w+ \(height 26/);
    const [b] = deriveStateUpdates([tx([{ kind: 'indexedTreeUpdate', event: { tree: AMT1, updates: [update(0n, 1n << 26n)], seq: 2n } }])], registry);
    expect(b!.rejected!.reason).toMatch(/^indexed tree update 0: high element next index 67108864 is outside tree/);
  });

  it('an output leaf index ≥ 2^26 is rejected; the largest leaf index is accepted', () => {
    const gen = new LightTxGenerator({ owners: 10, seed: 8 });
    const badTx = parseTransaction(decodeTransactionJson(gen.next(1, 'compress').json).transaction, 1);
    const ev = badTx.events.find((e) => e.kind === 'publicTransaction')!;
    if (ev.kind !== 'publicTransaction') throw new Error('unreachable');
    ev.event.outputLeafIndices[0] = 2 ** 26;
    const [p] = deriveStateUpdates([badTx], registry);
    expect(p!.rejected!.reason).toMatch(/^output 0: leaf index 67108864 is outside tree smt1\w+ \(height 26/);
    ev.event.outputLeafIndices[0] = 2 ** 26 - 1; // in range: now only the hash (over the leaf index) differs
    expect(deriveStateUpdates([badTx], registry)[0]!.rejected!.reason).toMatch(/^output 0: event hash .* differs/);
  });
});

describe('a block with an undecodable transaction', () => {
  const registry = loadTreeRegistry();
  const HASH = '11111111111111111111111111111111';

  it('rejects that transaction alone (by signature, in block order) and indexes the others', () => {
    const gen = new LightTxGenerator({ owners: 10, seed: 9 });
    const json = gen.block(7, 3).json as { transactions: { transaction: [string, string]; meta: unknown }[] };
    const sigOfEntry = (t: { transaction: [string, string] }) => bs58.encode(Buffer.from(t.transaction[0], 'base64').subarray(1, 65));
    const badSig = sigOfEntry(json.transactions[1]!);
    json.transactions[1]!.meta = null; // decodes as far as the signature
    json.transactions.push({ transaction: ['AAAA', 'base64'], meta: {} }); // no signature at all
    const block = decodeBlockJson({ ...json, blockhash: HASH, previousBlockhash: HASH }, 7);
    expect(block.transactions).toHaveLength(2);
    expect(block.undecodable).toEqual([
      { index: 1, signature: badSig, reason: expect.stringMatching(/^transactions\[1\]\.meta: .*null/) },
      { index: 3, signature: null, reason: expect.stringMatching(/^transactions\[3\]\.transaction/) },
    ]);
    const store = new Store({ path: tempDir() });
    const r = new Indexer(store, registry).indexBlocks([block]);
    expect(r.rejected.map((x) => [x.signature, x.slot])).toEqual([
      [badSig, 7],
      [null, 7],
    ]);
    expect(r.outputsInserted).toBeGreaterThan(0);
    expect(store.read((v) => v.rejection(badSig))).toMatch(/meta/);
    expect(store.read((v) => v.lastSlot())).toBe(7);
  });
});
