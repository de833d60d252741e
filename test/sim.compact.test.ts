/**
 * The simulator's codecs (src/sim/compactTx.ts, src/sim/padding.ts): the hand-written legacy wire
 * encoder gives @solana/kit's bytes, the long base58 encoder bs58's text, the packed form round-trips,
 * and the padding transactions are valid wire transactions that the indexer's decoder reads and skims
 * (no Light event), whose signatures name their slot and index.
 */
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { type Address, getCompiledTransactionMessageEncoder, getTransactionEncoder } from '@solana/kit';
import { describe, expect, it } from 'vitest';
import { parseTransaction } from '../src/light/parser.ts';
import { compactTxJson, encodeLegacyTransaction, packCompact, staticAccountKeys, unpackCompact } from '../src/sim/compactTx.ts';
import { LightTxGenerator } from '../src/sim/generator.ts';
import { PaddingSource } from '../src/sim/padding.ts';
import { encodeLong } from '../src/solana/base58.ts';
import { decodeBlockJson } from '../src/solana/decode.ts';
import { decodeWireTransaction } from '../src/solana/wire.ts';

describe('simulator codecs', () => {
  it('encodeLong gives bs58 text for every length 0..700, leading zeros included', () => {
    for (let len = 0; len <= 700; len += len < 80 ? 1 : 37) {
      for (const zeros of [0, 1, 3]) {
        const b = randomBytes(len);
        for (let i = 0; i < Math.min(zeros, len); i++) b[i] = 0;
        expect(encodeLong(b), `len ${len} zeros ${zeros}`).toBe(bs58.encode(b));
      }
    }
    expect(encodeLong(new Uint8Array(5))).toBe(bs58.encode(new Uint8Array(5)));
  });

  it('encodeLegacyTransaction gives @solana/kit bytes', () => {
    const keys = Array.from({ length: 6 }, () => randomBytes(32));
    const sig = randomBytes(64);
    const bh = randomBytes(32);
    const ixs = [
      { programAddressIndex: 2, accountIndices: [0, 1], data: randomBytes(300) },
      { programAddressIndex: 5, accountIndices: [], data: randomBytes(3) },
    ];
    const mine = encodeLegacyTransaction(sig, { readonlySigned: 0, readonlyUnsigned: 3 }, keys, bh, ixs);
    const messageBytes = getCompiledTransactionMessageEncoder().encode({
      version: 'legacy',
      header: { numSignerAccounts: 1, numReadonlySignerAccounts: 0, numReadonlyNonSignerAccounts: 3 },
      staticAccounts: keys.map((k) => bs58.encode(k)) as Address[],
      lifetimeToken: bs58.encode(bh),
      instructions: ixs,
    } as never);
    const kit = getTransactionEncoder().encode({ messageBytes, signatures: { [bs58.encode(keys[0]!)]: sig } } as never);
    expect(Buffer.from(mine).equals(Buffer.from(kit))).toBe(true);
    expect(staticAccountKeys(mine)).toEqual(keys.map((k) => bs58.encode(k)));
  });

  it('packCompact / unpackCompact round-trip a generated transaction; the JSON is the generator next()', () => {
    const a = new LightTxGenerator({ owners: 20, seed: 4, v2Weight: 3 });
    const b = new LightTxGenerator({ owners: 20, seed: 4, v2Weight: 3 });
    for (let i = 0; i < 60; i++) {
      const { tx } = a.nextCompact(10 + i);
      const back = unpackCompact(packCompact(tx));
      expect(compactTxJson(10 + i, back)).toEqual(b.next(10 + i).json);
    }
  });

  it('padding transactions: valid wire, decoded and skimmed by the indexer (no Light event), signatures locate them', () => {
    const p = new PaddingSource(9);
    const bh = randomBytes(32);
    const txs = Array.from({ length: 300 }, (_, j) => p.tx(1234, j, bh));
    const kinds = new Set<string>();
    for (const t of txs) {
      const w = decodeWireTransaction(t.wire);
      expect(w.signature).toBe(bs58.encode(t.signature));
      kinds.add(w.staticKeys.find((k) => k.startsWith('Vote') || k.startsWith('Tokenkeg') || k === '11111111111111111111111111111111') ?? '?');
      expect(w.staticKeys).not.toContain('compr6CUsB5m2jS4Y3831ztGSTnDpnKJTKS95d64XVq');
      expect(JSON.parse(t.entry)).toMatchObject({ transaction: [t.wire.toString('base64'), 'base64'], version: 'legacy', meta: { err: null } });
    }
    expect(kinds).toEqual(new Set(['Vote111111111111111111111111111111111111111', 'Tokenkeg' + 'QfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', '11111111111111111111111111111111']));
    // The same (seed, slot, index) gives the same transaction; a signature names its slot and index.
    expect(p.tx(1234, 7, bh).entry).toBe(txs[7]!.entry);
    expect(new PaddingSource(9).signature(1234, 7).equals(txs[7]!.signature)).toBe(true);
    expect(p.locate(txs[299]!.signature)).toEqual({ slot: 1234, index: 299 });
    expect(p.locate(p.signature(5_000_000_000, 65_535))).toEqual({ slot: 5_000_000_000, index: 65_535 });
    expect(p.locate(randomBytes(64))).toBeNull();
    expect(new PaddingSource(10).locate(txs[0]!.signature)).toBeNull();
    // Through the indexer's block decoder: every transaction skimmed, nothing to parse.
    const json = JSON.parse(`{"blockHeight":5,"blockTime":1,"blockhash":"${bs58.encode(bh)}","parentSlot":4,"previousBlockhash":"${bs58.encode(bh)}","transactions":[${txs.map((t) => t.entry).join(',')}]}`);
    const block = decodeBlockJson(json, 5);
    for (const tx of block.transactions) expect(parseTransaction(tx, 5).events).toEqual([]);
  });
});
