/**
 * src/sim/encodeV2.ts round-trips through the v2 parser: an `invoke` + `insert_into_queues` group
 * decodes (parserV2) to the event it was built from, and a BatchEvent decodes (events.ts) to itself.
 */
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { TREE_TYPE_U64, type V2LightTransaction, encodeBatchEvent, encodeInsertIntoQueues, v2InstructionGroup } from '../src/sim/encodeV2.ts';
import { decodeMerkleTreeEvent } from '../src/light/events.ts';
import { compressedAccountHash, nullifierHash } from '../src/light/hashing.ts';
import { decodeInsertIntoQueues, eventsFromLightInstructions } from '../src/light/parserV2.ts';
import type { BatchEvent, CompressedAccount } from '../src/types.ts';

const registry = loadTreeRegistry();
const HLKS5 = registry.get('HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu')!;
const b58 = (b: Uint8Array) => bs58.encode(b);
const key = (n: number) => new Uint8Array(32).fill(n).map((x, i) => (i === 0 ? 0 : x));

function sample(): { t: V2LightTransaction; inAcc: CompressedAccount; inHash: Uint8Array } {
  const inAcc: CompressedAccount = { owner: key(1), lamports: 500n, address: null, data: null };
  const inHash = compressedAccountHash(inAcc, HLKS5.treeBytes, 3, 'v2');
  const outs = [300n, 200n].map((lamports, i) => {
    const account: CompressedAccount = { owner: key(2 + i), lamports, address: null, data: null };
    return { account, merkleTreeIndex: 1, hash: compressedAccountHash(account, HLKS5.treeBytes, 7 + i, 'v2'), leafIndex: 7 + i, iiqIndex: 0 };
  });
  const t: V2LightTransaction = {
    txHash: key(9),
    remaining: [HLKS5.tree, HLKS5.queue],
    inputs: [{ account: inAcc, treeIndex: 0, queueIndex: 1, leafIndex: 3, proveByIndex: true }],
    outputs: outs,
    iiqAccounts: [HLKS5.queue, HLKS5.tree],
    nullifiers: [{ accountHash: inHash, leafIndex: 3, treeIndex: 1, queueIndex: 0, proveByIndex: true }],
    outputSeqs: [{ tree: HLKS5.treeBytes, queue: HLKS5.queueBytes, treeType: TREE_TYPE_U64.StateV2, seq: 7n }],
    inputSeqs: [{ tree: HLKS5.treeBytes, queue: HLKS5.queueBytes, treeType: TREE_TYPE_U64.StateV2, seq: 4n }],
  };
  return { t, inAcc, inHash };
}

describe('encodeV2', () => {
  it('insert_into_queues decodes to its fields', () => {
    const { t, inHash } = sample();
    const d = decodeInsertIntoQueues(encodeInsertIntoQueues(t));
    expect(b58(d.txHash)).toBe(b58(t.txHash));
    expect(d.leaves.map((l) => ({ i: l.accountIndex, h: b58(l.leaf) }))).toEqual(t.outputs.map((o) => ({ i: 0, h: b58(o.hash) })));
    expect(d.nullifiers.map((n) => ({ ...n, accountHash: b58(n.accountHash) }))).toEqual([{ accountHash: b58(inHash), leafIndex: 3, proveByIndex: true, treeIndex: 1, queueIndex: 0 }]);
    expect(d.outputLeafIndices).toEqual([7, 8]);
    expect(d.outputSequenceNumbers.filter((s) => s.seq || s.treeType).map((s) => s.seq)).toEqual([7n]);
    expect(d.inputSequenceNumbers.filter((s) => s.seq || s.treeType).map((s) => s.seq)).toEqual([4n]);
    expect(d.addresses).toEqual([]);
    expect(d.cpiContextOutputs).toEqual([]);
  });

  it('the invoke + insert_into_queues group parses to the event: outputs, inputs, batch input with nullifier and queue index', () => {
    const { t, inHash } = sample();
    const g = v2InstructionGroup({ ...t, isCompress: true, compressOrDecompressLamports: 12n });
    const evs = eventsFromLightInstructions([g.outer, ...g.inner])!;
    expect(evs).toHaveLength(1);
    const { event, txHash, batchInputAccounts, newAddresses } = evs[0]!;
    expect(b58(txHash)).toBe(b58(t.txHash));
    expect(event.pubkeyArray.map(b58)).toEqual(t.remaining);
    expect(event.outputCompressedAccountHashes.map(b58)).toEqual(t.outputs.map((o) => b58(o.hash)));
    expect(event.outputCompressedAccounts.map((o) => ({ owner: b58(o.compressedAccount.owner), lamports: o.compressedAccount.lamports, address: o.compressedAccount.address, data: o.compressedAccount.data, tree: o.merkleTreeIndex }))).toEqual(
      t.outputs.map((o) => ({ owner: b58(o.account.owner), lamports: o.account.lamports, address: null, data: null, tree: 1 })),
    );
    expect(event.outputLeafIndices).toEqual([7, 8]);
    expect(event.inputCompressedAccountHashes.map(b58)).toEqual([b58(inHash)]);
    expect(event.sequenceNumbers.map((s) => ({ tree: b58(s.treePubkey), seq: s.seq }))).toEqual([{ tree: HLKS5.tree, seq: 7n }]);
    expect(event.isCompress).toBe(true);
    expect(event.compressOrDecompressLamports).toBe(12n);
    expect(newAddresses).toEqual([]);
    expect(batchInputAccounts.map((b) => ({ hash: b58(b.accountHash), tree: b58(b.tree), leaf: b.leafIndex, q: b.queueIndex, n: b58(b.nullifier) }))).toEqual([
      { hash: b58(inHash), tree: HLKS5.tree, leaf: 3, q: 4n, n: b58(nullifierHash(inHash, 3, t.txHash)) },
    ]);
  });

  it('BatchEvent (append with queue, nullify without) decodes to itself; sizes 150 / 118 bytes', () => {
    const base = { merkleTreePubkey: HLKS5.treeBytes, batchIndex: 1n, zkpBatchIndex: 2n, zkpBatchSize: 10n, oldNextIndex: 20n, newNextIndex: 30n, newRoot: key(5), rootIndex: 3, sequenceNumber: 3n };
    const events: BatchEvent[] = [
      { kind: 'batchAppend', ...base, outputQueuePubkey: HLKS5.queueBytes },
      { kind: 'batchNullify', ...base, outputQueuePubkey: null },
      { kind: 'batchAddressAppend', ...base, outputQueuePubkey: null },
    ];
    for (const e of events) {
      const bytes = encodeBatchEvent(e);
      expect(bytes.length).toBe(e.outputQueuePubkey ? 150 : 118);
      const d = decodeMerkleTreeEvent(bytes);
      expect(d?.kind).toBe('batch');
      if (d?.kind !== 'batch') continue;
      expect({ ...d.event, merkleTreePubkey: b58(d.event.merkleTreePubkey), newRoot: b58(d.event.newRoot), outputQueuePubkey: d.event.outputQueuePubkey && b58(d.event.outputQueuePubkey) }).toEqual({
        ...e,
        merkleTreePubkey: HLKS5.tree,
        newRoot: b58(key(5)),
        outputQueuePubkey: e.outputQueuePubkey && HLKS5.queue,
      });
    }
  });

  it('refuses values that do not fit the layout, naming the field', () => {
    const { t } = sample();
    expect(() => encodeInsertIntoQueues({ ...t, outputs: [{ ...t.outputs[0]!, iiqIndex: 256 }] })).toThrow('outputs[0].iiqIndex: 256 does not fit a u8');
    expect(() => encodeInsertIntoQueues({ ...t, txHash: new Uint8Array(31) })).toThrow('txHash: 31 bytes, need 32');
  });
  it('new addresses in a batched address tree: invoke new_address_params and insert_into_queues addresses decode; queue indices follow the address sequence number', () => {
    const { t } = sample();
    const EZKE8 = registry.get('EzKE84aVTkCUhDHLELqyJaq1Y7UVVmqxXqZjVHwHY3rK')!;
    const withAddr: V2LightTransaction = {
      ...t,
      remaining: [...t.remaining, EZKE8.tree],
      iiqAccounts: [...t.iiqAccounts, EZKE8.tree],
      newAddresses: [key(21), key(22)].map((address, i) => ({ seed: key(30 + i), address, remainingQueueIndex: 2, remainingTreeIndex: 2, iiqTreeIndex: 2, iiqQueueIndex: 2 })),
      addressSeqs: [{ tree: EZKE8.treeBytes, queue: EZKE8.treeBytes, treeType: TREE_TYPE_U64.AddressV2, seq: 40n }],
    };
    const d = decodeInsertIntoQueues(encodeInsertIntoQueues(withAddr));
    expect(d.numAddressQueues).toBe(1);
    expect(d.addresses.map((a) => [b58(a.address), a.treeIndex, a.queueIndex])).toEqual([[b58(key(21)), 2, 2], [b58(key(22)), 2, 2]]);
    const g = v2InstructionGroup(withAddr);
    const [ev] = eventsFromLightInstructions([g.outer, ...g.inner])!;
    expect(ev!.newAddresses.map((a) => [b58(a.address), b58(a.tree), a.queueIndex])).toEqual([
      [b58(key(21)), EZKE8.tree, 40n],
      [b58(key(22)), EZKE8.tree, 41n],
    ]);
  });
});
