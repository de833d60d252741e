/**
 * The instruction-based (v2) Light parser (src/light/parserV2.ts, photon.md §1.5) against the
 * reference's v2 fixtures in test/fixtures/photon, plus the pattern search on synthetic
 * instruction lists.
 */
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { loadTransactionFiles } from '../src/ingest/sources/files.ts';
import { compressedAccountHash, nullifierHash } from '../src/light/hashing.ts';
import { lightProgramLabel, parseTransaction } from '../src/light/parser.ts';
import { decodeInsertIntoQueues, findV2Patterns, type V2ProgramTag } from '../src/light/parserV2.ts';
import { DecodeError } from '../src/solana/errors.ts';
import type { BatchPublicTransactionEvent, BatchEvent, LightEvent } from '../src/types.ts';
import { txFiles } from './helpers/photon.ts';

const HLKS5 = 'HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu';
const OQ_HLKS5 = '6L7SzhYB3anwEQ9cphpJ1U7Scwj57bx2xueReg7R9cKU';
const BMT2 = 'bmt2UxoBxB9xWev4BkLvkGdapsz6sZGkzViPNph7VFi';
const OQ2 = 'oq2UkeMsJLfXt2QHzim242SUi3nvjJs8Pn7Eac9H9vg';
const EZKE8 = 'EzKE84aVTkCUhDHLELqyJaq1Y7UVVmqxXqZjVHwHY3rK';
const SMT1 = 'smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT';
/** Output queue → its batched tree (the hash uses the tree). */
const QUEUE_TREE: Record<string, string> = { [OQ_HLKS5]: HLKS5, [OQ2]: BMT2 };

function parsedCase(name: string) {
  return loadTransactionFiles([`${txFiles(name)[0]!.replace(/\/[^/]+$/, '')}`]).map((f) => ({ file: f, parsed: parseTransaction(f.transaction, f.slot) }));
}
const v2Events = (events: LightEvent[]) => events.filter((e): e is Extract<LightEvent, { kind: 'batchPublicTransaction' }> => e.kind === 'batchPublicTransaction').map((e) => e.event);
const batchEvents = (events: LightEvent[]) => events.filter((e): e is Extract<LightEvent, { kind: 'batch' }> => e.kind === 'batch').map((e) => e.event);

/** Every output hash of `e` recomputed: v2 (big-endian) for output queues of batched trees, v1 otherwise. */
function expectOutputHashesRecompute(e: BatchPublicTransactionEvent): number {
  const ev = e.event;
  expect(ev.outputCompressedAccountHashes).toHaveLength(ev.outputCompressedAccounts.length);
  expect(ev.outputLeafIndices).toHaveLength(ev.outputCompressedAccounts.length);
  ev.outputCompressedAccounts.forEach((o, i) => {
    const q = bs58.encode(ev.pubkeyArray[o.merkleTreeIndex]!);
    const tree = QUEUE_TREE[q] ?? q;
    const h = compressedAccountHash(o.compressedAccount, bs58.decode(tree), ev.outputLeafIndices[i]!, QUEUE_TREE[q] ? 'v2' : 'v1');
    expect(bs58.encode(h)).toBe(bs58.encode(ev.outputCompressedAccountHashes[i]!));
  });
  return ev.outputCompressedAccounts.length;
}

describe('pattern search (§1.5 step 2)', () => {
  const L: V2ProgramTag = 'LightSystem';
  const S: V2ProgramTag = 'SolanaSystem';
  const A: V2ProgramTag = 'AccountCompression';
  const U: V2ProgramTag = 'Unknown';

  it('finds light-system → Solana system → ACP, with Unknown instructions before the system instruction', () => {
    expect(findV2Patterns([U, L, S, S, A])).toEqual([{ system: 1, insertIntoQueues: 4, cpi: [], token: null }]);
  });

  it('needs a Solana system instruction between the light-system instruction and the ACP', () => {
    expect(findV2Patterns([L, A])).toEqual([]);
    expect(findV2Patterns([L, U, S, A])).toEqual([]); // Unknown before the system instruction aborts
  });

  it('finds several patterns in one group, in instruction order (four_cpi_events shape)', () => {
    const p = findV2Patterns([U, L, S, A, L, S, A, L, S, A, L, S, A]);
    expect(p.map((x) => [x.system, x.insertIntoQueues])).toEqual([
      [1, 3],
      [4, 6],
      [7, 9],
      [10, 12],
    ]);
  });

  it('collects earlier light-system instructions as CPI-context writes and a Transfer2 only when the registry called it', () => {
    expect(findV2Patterns([L, L, S, A])).toEqual([{ system: 1, insertIntoQueues: 3, cpi: [0], token: null }]);
    expect(findV2Patterns(['Registry', 'LightToken', L, S, A])[0]!.token).toBe(1);
    expect(findV2Patterns(['LightToken', L, S, A])[0]!.token).toBeNull();
  });
});

describe('insert_into_queues layout', () => {
  it('rejects a truncated instruction with the field that ran out', () => {
    const { file } = parsedCase('four_cpi_events')[0]!;
    const iiq = file.transaction.groups[1]!.inner.find((ix) => ix.programId.startsWith('compr'))!;
    const full = decodeInsertIntoQueues(iiq.data);
    expect(full.leaves).toHaveLength(1);
    expect(() => decodeInsertIntoQueues(iiq.data.subarray(0, 60))).toThrow(DecodeError);
    expect(() => decodeInsertIntoQueues(iiq.data.subarray(0, 60))).toThrow(/insert_into_queues\.leaves/);
    expect(() => decodeInsertIntoQueues(iiq.data.subarray(0, 8))).toThrow(/need at least 12/);
  });
});

describe('v2 fixtures', () => {
  it('batched_tree_transactions: 100 user events into 6L7Sz…, 50 batch inputs with nullifier and queue index 0..49, 15 batch events', () => {
    const cases = parsedCase('batched_tree_transactions');
    expect(cases).toHaveLength(115);
    const events = cases.flatMap((c) => v2Events(c.parsed.events));
    expect(events).toHaveLength(100);
    let outputs = 0;
    for (const e of events) outputs += expectOutputHashesRecompute(e);
    expect(outputs).toBe(100);
    for (const e of events) for (const o of e.event.outputCompressedAccounts) expect(bs58.encode(e.event.pubkeyArray[o.merkleTreeIndex]!)).toBe(OQ_HLKS5);
    const inputs = events.flatMap((e) => e.batchInputAccounts.map((b) => ({ b, txHash: e.txHash })));
    expect(inputs).toHaveLength(50);
    expect(inputs.map(({ b }) => b.queueIndex)).toEqual([...Array(50).keys()].map(BigInt));
    for (const { b, txHash } of inputs) {
      expect(bs58.encode(b.tree)).toBe(HLKS5);
      expect(bs58.encode(b.nullifier)).toBe(bs58.encode(nullifierHash(b.accountHash, b.leafIndex, txHash)));
    }
    const batches = cases.flatMap((c) => batchEvents(c.parsed.events));
    // In slot order the files hold 10 appends (seq 1–10, leaves 0–100) then 5 nullifies (seq 11–15, input queue 0–50).
    expect(batches.map((b) => [b.kind, b.sequenceNumber, b.oldNextIndex, b.newNextIndex])).toEqual([
      ...[...Array(10).keys()].map((i) => ['batchAppend', BigInt(i + 1), BigInt(10 * i), BigInt(10 * i + 10)]),
      ...[...Array(5).keys()].map((i) => ['batchNullify', BigInt(i + 11), BigInt(10 * i), BigInt(10 * i + 10)]),
    ]);
    expect(batches.every((b: BatchEvent) => b.zkpBatchSize === 10n && bs58.encode(b.merkleTreePubkey) === HLKS5)).toBe(true);
  });

  it('batch_append_nullify: outputs to HLKs5 and smt1, BatchAppend seq 1, 2, 4 and BatchNullify seq 3 with the chain roots', () => {
    const cases = parsedCase('batch_append_nullify');
    const events = cases.flatMap((c) => v2Events(c.parsed.events));
    expect(events).toHaveLength(41);
    for (const e of events) expectOutputHashesRecompute(e);
    const trees = new Set(events.flatMap((e) => e.event.outputCompressedAccounts.map((o) => bs58.encode(e.event.pubkeyArray[o.merkleTreeIndex]!))));
    expect([...trees].sort()).toEqual([OQ_HLKS5, SMT1].sort());
    const batches = cases.flatMap((c) => batchEvents(c.parsed.events));
    expect(batches.map((b) => [b.kind, b.sequenceNumber, b.oldNextIndex, b.newNextIndex, b.rootIndex, bs58.encode(b.newRoot)])).toEqual([
      ['batchAppend', 1n, 0n, 10n, 1, '433kYLWvdMNY8SVGamZakDQFNZRu569gR37RxrM4Q4Vk'],
      ['batchAppend', 2n, 10n, 20n, 2, '3SgZfe7CoZEfYP1YbEyqKpK3qkoTypobm2oXsqsNLQKL'],
      ['batchNullify', 3n, 0n, 10n, 3, '4D1x7SoCWSu6KTTDwyKsphwNCb4er7wr5Rw3qAv2o1wg'],
      ['batchAppend', 4n, 20n, 30n, 4, 'et9ihtqjKu8uszGmNDQA9ErNzT8tbyVzmN1833fGrUF'],
    ]);
    expect(batches[0]!.outputQueuePubkey && bs58.encode(batches[0]!.outputQueuePubkey)).toBe(OQ_HLKS5);
    expect(batches[2]!.outputQueuePubkey).toBeNull();
  });

  it('batched_address_transactions: 50 new addresses in EzKE8 with queue indices 0..49 in creation order, outputs to smt1', () => {
    const cases = parsedCase('batched_address_transactions');
    const events = cases.flatMap((c) => v2Events(c.parsed.events));
    expect(events).toHaveLength(50);
    for (const e of events) expectOutputHashesRecompute(e);
    const addrs = events.flatMap((e) => e.newAddresses);
    expect(addrs.map((a) => a.queueIndex)).toEqual([...Array(50).keys()].map(BigInt));
    expect(new Set(addrs.map((a) => bs58.encode(a.tree)))).toEqual(new Set([EZKE8]));
    // each created account carries its address
    for (const e of events) expect(e.event.outputCompressedAccounts.map((o) => o.compressedAccount.address && bs58.encode(o.compressedAccount.address))).toContain(bs58.encode(e.newAddresses[0]!.address));
    for (const e of events) for (const o of e.event.outputCompressedAccounts) expect(bs58.encode(e.event.pubkeyArray[o.merkleTreeIndex]!)).toBe(SMT1);
    const batches = cases.flatMap((c) => batchEvents(c.parsed.events));
    expect(batches.length).toBeGreaterThan(0);
    expect(batches.every((b) => b.kind === 'batchAddressAppend' && bs58.encode(b.merkleTreePubkey) === EZKE8)).toBe(true);
  });

  it('four_cpi_events: one group, four invoke_cpi_with_read_only patterns, four events', () => {
    const [c] = parsedCase('four_cpi_events');
    expect(c!.parsed.events.map((e) => e.kind)).toEqual(Array(4).fill('batchPublicTransaction'));
    for (const e of v2Events(c!.parsed.events)) expect(expectOutputHashesRecompute(e)).toBe(1);
  });

  it('batched_tree_token_transactions: invoke_cpi and invoke_cpi_with_read_only, 3 then 5 outputs, 3 inputs in the second', () => {
    const cases = parsedCase('batched_tree_token_transactions');
    const events = cases.map((c) => v2Events(c.parsed.events));
    expect(events.map((e) => e.length)).toEqual([1, 1]);
    expect(events.map((e) => expectOutputHashesRecompute(e[0]!))).toEqual([3, 5]);
    expect(events.map((e) => e[0]!.event.inputCompressedAccountHashes.length)).toEqual([0, 3]);
    expect(events[1]![0]!.batchInputAccounts.map((b) => b.queueIndex)).toEqual([0n, 1n, 2n]);
  });

  it('index_compress_and_close_with_tlv: registry → Transfer2 → invoke_cpi_with_read_only into oq2; ATA owners from the output TLV', () => {
    const [c] = parsedCase('index_compress_and_close_with_tlv');
    const [e] = v2Events(c!.parsed.events);
    expect(expectOutputHashesRecompute(e!)).toBe(5);
    expect(e!.event.ataOwners.length).toBeGreaterThan(0);
    const tokenIx = c!.file.transaction.groups[0]!.inner.find((ix) => ix.data[0] === 101)!;
    for (const a of e!.event.ataOwners) {
      expect(a.outputIndex).toBeLessThan(5);
      expect(tokenIx.accounts).toContain(bs58.encode(a.walletOwner));
    }
  });

  it('a light-system instruction that does not decode makes the v2 parser pass the group on (no event, no throw)', () => {
    const [c] = parsedCase('four_cpi_events');
    const tx = structuredClone(c!.file.transaction);
    for (const ix of tx.groups[1]!.inner) if (ix.programId.startsWith('SySTEM')) ix.data = ix.data.subarray(0, 20);
    expect(parseTransaction(tx, 1).events).toEqual([]);
  });
});

describe('lightProgramLabel (refract_ingest_unparsed_light_transactions_total{program})', () => {
  const ix = (programId: string) => ({ programId, data: new Uint8Array(0), accounts: [] });
  const tx = (...groups: string[][]) => ({ signature: 'S', error: null, isVote: false, groups: groups.map(([o, ...i]) => ({ outer: ix(o!), inner: i.map(ix) })) });
  it('prefers the light-system program, then the ACP, then a retired id; null for anything else', () => {
    expect(lightProgramLabel(tx(['X', 'compr6CUsB5m2jS4Y3831ztGSTnDpnKJTKS95d64XVq'], ['SySTEM1eSU2p4BGQfQpimFEWWSC1XDFeun3Nqzz3rT7']))).toBe('light-system');
    expect(lightProgramLabel(tx(['X', 'compr6CUsB5m2jS4Y3831ztGSTnDpnKJTKS95d64XVq']))).toBe('account-compression');
    expect(lightProgramLabel(tx(['H5sFv8VwWmjxHYS2GB4fTDsK7uTtnRT4WiixtHrET3bN', 'CbjvJc1SNx1aav8tU49dJGHu8EUdzQJSMtkjDmV8miqK']))).toBe('obsolete-light-system');
    expect(lightProgramLabel(tx(['5QPEJ5zDsVou9FQS3KCauKswM3VwBEBu4dpL9xTqkWwN']))).toBe('obsolete-account-compression');
    expect(lightProgramLabel(tx(['11111111111111111111111111111111']))).toBeNull();
  });
});
