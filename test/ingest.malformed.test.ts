/**
 * Malformed transactions: a specific rejection, never a crash, never partial state.
 */
import { describe, expect, it } from 'vitest';
import bs58 from 'bs58';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { parseTransaction } from '../src/light/parser.ts';
import { LightTxGenerator } from '../src/sim/generator.ts';
import { TransactionRejected, prepareStateUpdate, prepareStateUpdates } from '../src/state/prepare.ts';
import { decodeBlockJson, decodeTransactionJson } from '../src/solana/decode.ts';
import { Store } from '../src/store/store.ts';
import type { BlockInfo } from '../src/types.ts';
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

    const batch = prepareStateUpdates([good, badAddress, badDataHash, wrongHash, good], registry);
    expect(batch.map((p) => (p.rejected ? 'rejected' : 'ok'))).toEqual(['ok', 'rejected', 'rejected', 'rejected', 'ok']);
    expect(batch[1]!.rejected!.reason).toMatch(/^output 0: address is not a BN254 field element/);
    expect(batch[2]!.rejected!.reason).toMatch(/^output 0: dataHash is not a BN254 field element/);
    expect(batch[3]!.rejected!.reason).toMatch(/^output 0: event hash .* differs from the recomputed compressed-account hash/);
    [good, badAddress, badDataHash, wrongHash].forEach((tx, i) => {
      if (batch[i]!.update) expect(prepareStateUpdate(tx, registry)).toEqual(batch[i]!.update);
      else {
        expect(() => prepareStateUpdate(tx, registry)).toThrow(TransactionRejected);
        expect(() => prepareStateUpdate(tx, registry)).toThrow(batch[i]!.rejected!.reason);
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
    const [p] = prepareStateUpdates([tx], registry);
    expect(p!.rejected!.reason).toMatch(/^output 0: event hash .* differs from the recomputed compressed-account hash/);
    expect(() => prepareStateUpdate(tx, registry)).toThrow(/output 0: event hash .* differs/);
    // Without the first fault, the second is the reason.
    ev.event.outputCompressedAccountHashes[0]![31] ^= 1;
    expect(prepareStateUpdates([tx], registry)[0]!.rejected!.reason).toMatch(/^output 0: missing sequence number/);
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
