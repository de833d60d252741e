/**
 * Yellowstone messages ↔ Refract's types: a transaction converted from a Yellowstone message equals the
 * same transaction decoded from getBlock JSON (decode.ts), for real fixtures (test/fixtures/photon: a mainnet
 * block with votes, the Light getTransaction cases) and made ones (failed, v0 with loaded addresses,
 * no inner instructions); the Yellowstone messages the simulator's server makes agree with the
 * Yellowstone client's own (agave) encoder; the TransactionError bincode table agrees with the client's
 * decoder for every variant.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SubscribeUpdateBlock, SubscribeUpdateTransactionInfo, txEncode, txErrDecode } from '@triton-one/yellowstone-grpc';
import { decodeBlockJson, decodeTransactionEnvelope } from '../src/solana/decode.ts';
import { DecodeError } from '../src/solana/errors.ts';
import { DEFAULT_SKIM } from '../src/solana/skim.ts';
import { blockFromYellowstone, blockHeaderFromYellowstone, transactionErrorFromJson, transactionErrorToJson, transactionFromYellowstone } from '../src/solana/yellowstone.ts';
import { geyserBlockFromJson, geyserTransactionFromJson } from '../src/sim/yellowstoneFromJson.ts';
import { updatesForBlock } from '../src/sim/geyser.ts';
import { SubscribeRequest } from '@triton-one/yellowstone-grpc';
import { ACCOUNT_COMPRESSION_PROGRAM_ID } from '../src/solana/programIds.ts';
import { PHOTON_DIR } from './helpers/photon.ts';
import { type RawTx, TestChain, key, lookupLightTx, makeTx, namesProgram, transferTx, voteTx } from './grpc.chain.ts';

/** Through the wire: encode and decode the protobuf message, as the client receives it. */
const overWire = (info: SubscribeUpdateTransactionInfo) => SubscribeUpdateTransactionInfo.decode(SubscribeUpdateTransactionInfo.encode(info).finish());

/** Every transaction to compare: the mainnet block's, the Light cases', and made ones. */
function cases(): { name: string; tx: RawTx }[] {
  const out: { name: string; tx: RawTx }[] = [];
  const blockDir = join(PHOTON_DIR, 'blocks');
  for (const d of readdirSync(blockDir)) {
    for (const f of readdirSync(join(blockDir, d))) {
      const j = JSON.parse(readFileSync(join(blockDir, d, f), 'utf8'));
      ((j.result ?? j).transactions as RawTx[]).forEach((tx, i) => out.push({ name: `block ${f} tx ${i}`, tx }));
    }
  }
  const txDir = join(PHOTON_DIR, 'transactions');
  for (const d of readdirSync(txDir)) {
    for (const f of readdirSync(join(txDir, d))) {
      const j = JSON.parse(readFileSync(join(txDir, d, f), 'utf8'));
      const r = j.result ?? j;
      out.push({ name: `${d}/${f}`, tx: { transaction: r.transaction, meta: r.meta, version: r.version } });
    }
  }
  const light = out.find((c) => c.name.startsWith('batched_tree_transactions'))!.tx;
  const errors: unknown[] = [
    'AccountInUse',
    { InstructionError: [3, { Custom: 6001 }] },
    { InstructionError: [0, 'ProgramFailedToComplete'] },
    { InstructionError: [1, { BorshIoError: 'Unexpected length of input' }] },
    { InsufficientFundsForRent: { account_index: 2 } },
    { DuplicateInstruction: 4 },
    'CommitCancelled',
  ];
  errors.forEach((err, i) => out.push({ name: `failed ${JSON.stringify(err)}`, tx: { ...light, meta: { ...light.meta, err, status: { Err: err } } } }));
  out.push({ name: 'v0 with loaded ACP', tx: lookupLightTx('a') });
  out.push({ name: 'v0 with loaded ACP, failed', tx: lookupLightTx('b', { InstructionError: [0, { Custom: 1 }] }) });
  out.push({ name: 'vote', tx: voteTx('c') });
  out.push({ name: 'transfer', tx: transferTx('d') });
  out.push({ name: 'innerInstructions null', tx: { ...light, meta: { ...light.meta, innerInstructions: null } } });
  out.push({
    name: 'ACP outer, no inner, stackHeight null',
    tx: makeTx({ tag: 'e', keys: [key('e'), key('tree-e'), ACCOUNT_COMPRESSION_PROGRAM_ID], instructions: [{ program: 2, accounts: [1, 0], data: [1] }], inner: [{ index: 0, instructions: [{ programIdIndex: 2, accounts: [], data: [], stackHeight: null }] }], logMessages: null }),
  });
  return out;
}

describe('Yellowstone transaction → TransactionInfo', () => {
  const all = cases();

  it('equals the getBlock JSON decode, with and without the skim (every fixture and made transaction)', () => {
    expect(all.length).toBeGreaterThan(250);
    let full = 0;
    for (const { name, tx } of all) {
      const g = geyserTransactionFromJson(tx, 5);
      const info = overWire(g.info);
      for (const skim of [DEFAULT_SKIM, null]) {
        const fromJson = decodeTransactionEnvelope(tx.transaction, tx.meta, 'transactions[5]', skim);
        const fromGrpc = transactionFromYellowstone(info, 'transactions[5]', skim);
        expect(fromGrpc, `${name} (skim ${skim ? 'on' : 'off'})`).toEqual(fromJson);
        if (skim && fromJson.groups.length) full++;
      }
    }
    expect(full).toBeGreaterThan(200); // most are decoded in full (Light), the others skimmed alike
  });

  it('agrees with the Yellowstone client\'s own encoder (agave\'s UiTransaction): the same wire bytes, error, inner instructions, loaded addresses', () => {
    for (const { name, tx } of all) {
      // agave 3 made BorshIoError a unit: its decoder drops the message older servers send.
      if (name.includes('BorshIoError')) continue;
      const info = overWire(geyserTransactionFromJson(tx, 0).info);
      const ui = txEncode.encode(info, txEncode.encoding.Base64, 0, false) as any;
      expect(ui.transaction[0], name).toBe(tx.transaction[0]);
      expect(ui.meta.err, name).toEqual(tx.meta.err);
      const inner = (tx.meta.innerInstructions as any[] | null) ?? null;
      expect(ui.meta.innerInstructions ?? null, name).toEqual(inner === null ? null : inner.map((g) => ({ ...g, instructions: g.instructions.map((i: any) => ({ ...i, stackHeight: i.stackHeight ?? null })) })));
      expect(ui.meta.loadedAddresses, name).toEqual(tx.meta.loadedAddresses ?? { writable: [], readonly: [] });
    }
  });

  it('a block converted from Yellowstone equals decodeBlockJson (header, transactions in block order, whatever order they came in)', () => {
    const chain = new TestChain({ first: 100, tip: 140 });
    let compared = 0;
    for (let s = 100; s <= 140; s++) {
      const json = chain.block(s);
      if (!json) continue;
      const gb = geyserBlockFromJson(s, json);
      // As a `blocks` subscription gets it (filtered to ACP), transactions shuffled.
      const [u] = updatesForBlock(gb, SubscribeRequest.fromPartial({ blocks: { b: { accountInclude: [ACCOUNT_COMPRESSION_PROGRAM_ID] } } }));
      const block = SubscribeUpdateBlock.decode(SubscribeUpdateBlock.encode(u!.block!).finish());
      block.transactions.reverse();
      const fromGrpc = blockFromYellowstone(blockHeaderFromYellowstone(block), block.transactions);
      const light = { ...json, transactions: (json.transactions as RawTx[]).filter((t) => namesProgram(t)) };
      expect(fromGrpc).toEqual(decodeBlockJson(light, s));
      // All transactions (accountInclude empty): the whole getBlock decode, skimmed ones included.
      const [all] = updatesForBlock(gb, SubscribeRequest.fromPartial({ blocks: { b: {} } }));
      expect(blockFromYellowstone(blockHeaderFromYellowstone(all!.block!), all!.block!.transactions)).toEqual(decodeBlockJson(json, s));
      compared++;
    }
    expect(compared).toBeGreaterThan(25);
  });

  it('refuses what it cannot convert faithfully: an unknown error variant, a lookup count mismatch', () => {
    const tx = lookupLightTx('x');
    const info = overWire(geyserTransactionFromJson(tx, 0).info);
    expect(() => transactionFromYellowstone({ ...info, meta: { ...info.meta!, err: { err: Uint8Array.from([99, 0, 0, 0]) } } })).toThrow(DecodeError);
    expect(() => transactionFromYellowstone({ ...info, meta: { ...info.meta!, loadedReadonlyAddresses: [] } })).toThrow(/loadedAddresses/);
  });
});

describe('TransactionError bincode', () => {
  it('every variant reads as the Yellowstone client\'s decoder reads it, and writes back to the same bytes', () => {
    const le32 = (n: number) => [n & 255, (n >> 8) & 255, (n >> 16) & 255, (n >> 24) & 255];
    const samples: number[][] = [];
    for (let t = 0; t < 39; t++) samples.push([...le32(t)], [...le32(t), 3]);
    for (let i = 0; i < 54; i++) samples.push([...le32(8), 2, ...le32(i), ...(i === 25 ? le32(6001) : [])]);
    let checked = 0;
    for (const bytes of samples) {
      let theirs: unknown;
      try {
        theirs = txErrDecode.decode(Uint8Array.from(bytes));
      } catch {
        continue; // not a whole value (a unit variant with a trailing byte, …)
      }
      const exact = transactionErrorFromJson(theirs);
      if (exact.length < bytes.length) {
        // Their decoder ignores trailing bytes; ours refuses them.
        expect(() => transactionErrorToJson(Uint8Array.from(bytes))).toThrow(/after the TransactionError/);
        continue;
      }
      expect(transactionErrorToJson(Uint8Array.from(bytes)), JSON.stringify(bytes)).toEqual(theirs);
      expect([...exact]).toEqual(bytes);
      checked++;
    }
    expect(checked).toBe(35 + 3 + 54); // the 35 units, the three u8 variants, every InstructionError
    expect(transactionErrorToJson(transactionErrorFromJson({ InstructionError: [1, { BorshIoError: 'abc' }] }))).toEqual({ InstructionError: [1, { BorshIoError: 'abc' }] });
  });
});
