/**
 * Issue 17: a transaction whose inputs mix a batched (StateV2, HLKs5) tree and a v1 tree (smt1), as at
 * mainnet slot 407265370 where the reference indexer panicked building nullifier queue indices.
 * No fixture holds such a transaction, so the test crafts instruction-based (v2) transactions —
 * light-system `invoke` → Solana system transfer → ACP `insert_into_queues` (photon.md §1.5) — with a
 * v2 encoder (src/sim/encodeV2.ts), and indexes them into a fresh store:
 *   1. a tx creating two accounts in HLKs5 (via its output queue) and one in smt1;
 *   2. the mixed tx spending them (inputs in several orders), creating one HLKs5 output;
 *   3. a forester tx carrying the v1 NullifierEvent of the smt1 leaf.
 * Only inputs of trees with an input sequence number get an input-queue slot (§1.5
 * `batch_input_accounts`); the v1 input is spent the v1 way (§2.3, §2.5).
 */
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { ACCOUNT_COMPRESSION_PROGRAM_ID, LIGHT_REGISTRY_PROGRAM_ID, NOOP_PROGRAM_ID } from '../src/light/constants.ts';
import { encodeNullifierEvent } from '../src/sim/encodeEvents.ts';
import { compressedAccountHash, nullifierHash } from '../src/light/hashing.ts';
import { parseTransaction } from '../src/light/parser.ts';
import { TREE_TYPE_U64 as TREE_TYPE, type V2LightTransaction, v2InstructionGroup } from '../src/sim/encodeV2.ts';
import { Store } from '../src/store/store.ts';
import type { BlockInfo, Bytes32, CompressedAccount, TransactionInfo } from '../src/types.ts';
import { tempDir } from './helpers/photon.ts';
import { dumpStore } from './helpers/store.ts';

const registry = loadTreeRegistry();
const HLKS5 = registry.get('HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu')!;
const SMT1 = registry.get('smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT')!;
const b58 = (b: Uint8Array) => bs58.encode(b);

// ---------------------------------------------------------------------------------------------
// v2 transactions, built with src/sim/encodeV2.ts

type LightTx = V2LightTransaction & { signature: string };

/** One group: outer light-system `invoke` (9 system accounts + remaining), inner fee transfer and ACP `insert_into_queues`. */
function lightTransaction(t: LightTx): TransactionInfo {
  return { signature: t.signature, error: null, isVote: false, groups: [v2InstructionGroup(t)] };
}

/** A forester v1 nullify: registry → ACP nullify_leaves → NOOP(MerkleTreeEvent::V2 NullifierEvent). */
function nullifyTransaction(signature: string, tree: Bytes32, leaves: bigint[], seq: bigint): TransactionInfo {
  return {
    signature,
    error: null,
    isVote: false,
    groups: [
      {
        outer: { programId: LIGHT_REGISTRY_PROGRAM_ID, data: new Uint8Array(16), accounts: [] },
        inner: [
          { programId: ACCOUNT_COMPRESSION_PROGRAM_ID, data: new Uint8Array(16), accounts: [] },
          { programId: NOOP_PROGRAM_ID, data: encodeNullifierEvent({ tree, nullifiedLeavesIndices: leaves, seq }), accounts: [] },
        ],
      },
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// the scenario

const key = (n: number) => {
  const k = new Uint8Array(32);
  k[0] = n;
  k[31] = 7;
  return k;
};
const sig = (n: number) => b58(new Uint8Array(64).fill(n));
/** A tx hash below the field modulus (first byte 0). */
const txHash = (n: number) => {
  const h = new Uint8Array(32).fill(n);
  h[0] = 0;
  return h;
};
const account = (owner: Uint8Array, lamports: bigint): CompressedAccount => ({ owner, lamports, address: null, data: null });

const OWNER_A = key(1);
const OWNER_B = key(2);
const OWNER_C = key(3);
const OWNER_D = key(4);
const SMT1_SEQ = 41n; // smt1's sequence number when tx 1 appends its leaf

/** Tx 1 (slot 10): X1 (A, 100) and X2 (B, 20) into HLKs5's output queue at leaves 0 and 1, Y (C, 300) into smt1 at leaf 5. */
function createTx() {
  const X1 = { account: account(OWNER_A, 100n), leafIndex: 0, hash: compressedAccountHash(account(OWNER_A, 100n), HLKS5.treeBytes, 0, 'v2') };
  const X2 = { account: account(OWNER_B, 20n), leafIndex: 1, hash: compressedAccountHash(account(OWNER_B, 20n), HLKS5.treeBytes, 1, 'v2') };
  const Y = { account: account(OWNER_C, 300n), leafIndex: 5, hash: compressedAccountHash(account(OWNER_C, 300n), SMT1.treeBytes, 5, 'v1') };
  const t: LightTx = {
    signature: sig(1),
    txHash: txHash(1),
    remaining: [HLKS5.queue, SMT1.tree],
    inputs: [],
    outputs: [
      { ...X1, merkleTreeIndex: 0, iiqIndex: 0 },
      { ...X2, merkleTreeIndex: 0, iiqIndex: 0 },
      { ...Y, merkleTreeIndex: 1, iiqIndex: 1 },
    ],
    iiqAccounts: [HLKS5.queue, SMT1.tree],
    nullifiers: [],
    outputSeqs: [
      { tree: HLKS5.treeBytes, queue: HLKS5.queueBytes, treeType: TREE_TYPE.StateV2, seq: 0n },
      { tree: SMT1.treeBytes, queue: SMT1.queueBytes, treeType: TREE_TYPE.StateV1, seq: SMT1_SEQ },
    ],
    inputSeqs: [],
  };
  return { X1, X2, Y, tx: lightTransaction(t) };
}

type Created = ReturnType<typeof createTx>;
type Which = 'X1' | 'X2' | 'Y';
const INPUT_QUEUE_START = 7n; // HLKs5's input-queue sequence number at the mixed tx

/**
 * Tx 2 (slot 11): spends `order` (light-system inputs in that order; nullifiers in the same order),
 * (`systemOrder`: the light-system inputs when they differ from the nullifiers), one output Z (D, sum of the inputs) into HLKs5's output queue at leaf 2. Remaining accounts:
 * [HLKs5, its output queue, smt1, nfq1]; IIQ accounts: [output queue, HLKs5, smt1, nfq1].
 */
function mixedTx(c: Created, order: Which[], systemOrder: Which[] = order) {
  const ins = order.map((w) => c[w]);
  const lamports = ins.reduce((s, i) => s + i.account.lamports, 0n);
  const Z = { account: account(OWNER_D, lamports), leafIndex: 2, hash: compressedAccountHash(account(OWNER_D, lamports), HLKS5.treeBytes, 2, 'v2') };
  const isV2 = (w: Which) => w !== 'Y';
  const t: LightTx = {
    signature: sig(2),
    txHash: txHash(2),
    remaining: [HLKS5.tree, HLKS5.queue, SMT1.tree, SMT1.queue],
    inputs: systemOrder.map((w) => ({ account: c[w].account, leafIndex: c[w].leafIndex, treeIndex: isV2(w) ? 0 : 2, queueIndex: isV2(w) ? 1 : 3 })),
    outputs: [{ ...Z, merkleTreeIndex: 1, iiqIndex: 0 }],
    iiqAccounts: [HLKS5.queue, HLKS5.tree, SMT1.tree, SMT1.queue],
    nullifiers: order.map((w) => ({ accountHash: c[w].hash, leafIndex: c[w].leafIndex, treeIndex: isV2(w) ? 1 : 2, queueIndex: isV2(w) ? 0 : 3 })),
    outputSeqs: [{ tree: HLKS5.treeBytes, queue: HLKS5.queueBytes, treeType: TREE_TYPE.StateV2, seq: 2n }],
    inputSeqs: [{ tree: HLKS5.treeBytes, queue: HLKS5.queueBytes, treeType: TREE_TYPE.StateV2, seq: INPUT_QUEUE_START }],
  };
  return { Z, tx: lightTransaction(t), txHash: t.txHash };
}

const block = (slot: number, tx: TransactionInfo): BlockInfo => ({ slot, parentSlot: slot - 1, blockTime: 0, blockHeight: slot, blockhash: '', previousBlockhash: '', transactions: [tx] });
/** Heap index of leaf `i` of a tree of height `h`. */
const leafNode = (h: number, i: number) => (1n << BigInt(h)) + BigInt(i);

const ORDERS: { name: string; order: Which[] }[] = [
  { name: 'v2 then v1', order: ['X1', 'Y'] },
  { name: 'v1 then v2 (the reverse)', order: ['Y', 'X1'] },
  { name: 'v2, v1, v2 (the v1 input between two batch slots)', order: ['X1', 'Y', 'X2'] },
  { name: 'v1, v2, v2', order: ['Y', 'X2', 'X1'] },
];

describe('a transaction whose inputs mix a batched tree (HLKs5) and a v1 tree (smt1)', () => {
  for (const { name, order } of ORDERS) {
    it(`${name}: indexes, queues only the v2 inputs (slots in input order), spends the v1 input the v1 way, re-index changes nothing`, async () => {
      const c = createTx();
      const m = mixedTx(c, order);
      const v2Inputs = order.filter((w) => w !== 'Y');
      const expectedQueue = v2Inputs.map((w, k) => ({ w, queueIndex: INPUT_QUEUE_START + BigInt(k), nullifier: nullifierHash(c[w].hash, c[w].leafIndex, m.txHash) }));

      // Parser: every input's hash is an input; only the HLKs5 ones are batch inputs.
      const [ev] = parseTransaction(m.tx, 11).events;
      expect(ev?.kind).toBe('batchPublicTransaction');
      if (ev?.kind !== 'batchPublicTransaction') return;
      expect(ev.event.event.inputCompressedAccountHashes.map(b58)).toEqual(order.map((w) => b58(c[w].hash)));
      expect(
        ev.event.batchInputAccounts.map((b) => ({ hash: b58(b.accountHash), tree: b58(b.tree), queueIndex: b.queueIndex, nullifier: b58(b.nullifier) })),
      ).toEqual(expectedQueue.map((q) => ({ hash: b58(c[q.w].hash), tree: HLKS5.tree, queueIndex: q.queueIndex, nullifier: b58(q.nullifier) })));

      const store = new Store({ path: tempDir('refract-mixed-') });
      const indexer = new Indexer(store, registry);
      const blocks = [block(10, c.tx), block(11, m.tx)];
      for (const b of blocks) {
        const r = indexer.indexBlocks([b]);
        expect(r.rejected).toEqual([]);
        expect(r.unknownTrees.size).toBe(0);
        expect(r.unknownBatchInputs).toEqual([]);
      }

      store.read((r) => {
        // v2 inputs: spent, in HLKs5's input queue at their slot, with nullifier = Poseidon(hash, leaf index, tx hash).
        for (const q of expectedQueue) {
          const a = r.account(c[q.w].hash)!;
          expect(a.spent).toBe(true);
          expect(a.v2).toMatchObject({ nullifierQueueIndex: q.queueIndex, nullifiedInTree: false });
          expect(b58(a.v2!.nullifier!)).toBe(b58(q.nullifier));
          expect(b58(a.v2!.txHash!)).toBe(b58(m.txHash));
        }
        expect([...r.inputQueue(HLKS5.treeBytes)].map((e) => ({ queueIndex: e.queueIndex, hash: b58(e.hash) }))).toEqual(
          expectedQueue.map((q) => ({ queueIndex: q.queueIndex, hash: b58(c[q.w].hash) })),
        );
        // An unspent v2 account (X2 when not an input) stays out of the input queue.
        if (!order.includes('X2')) expect(r.account(c.X2.hash)!).toMatchObject({ spent: false, v2: { nullifierQueueIndex: null } });
        // v1 input: spent, no queue state, its leaf still in smt1 until the forester's NullifierEvent.
        const y = r.account(c.Y.hash)!;
        expect(y.spent).toBe(true);
        expect(y.v2).toBeUndefined();
        expect(b58(r.node(SMT1.treeBytes, leafNode(SMT1.height, 5))!.hash)).toBe(b58(c.Y.hash));
        // The output Z waits in HLKs5's output queue.
        expect(r.account(m.Z.hash)).toMatchObject({ spent: false, leafIndex: 2, v2: { inOutputQueue: true, nullifierQueueIndex: null } });
        // Balances and owners follow the spends.
        expect(r.balance(OWNER_A)).toBe(order.includes('X1') ? 0n : 100n);
        expect(r.balance(OWNER_B)).toBe(order.includes('X2') ? 0n : 20n);
        expect(r.balance(OWNER_C)).toBe(0n);
        expect(r.balance(OWNER_D)).toBe(m.Z.account.lamports);
        expect([...r.accountsByOwner(OWNER_D)].map((a) => b58(a.hash))).toEqual([b58(m.Z.hash)]);
        expect([...r.accountsByOwner(OWNER_C)]).toEqual([]);
      });

      // Tx 3: the v1 NullifierEvent zeroes smt1's leaf 5 (seq after the output's).
      const r3 = indexer.indexBlocks([block(12, nullifyTransaction(sig(3), SMT1.treeBytes, [5n], SMT1_SEQ + 1n))]);
      expect(r3.rejected).toEqual([]);
      store.read((r) => {
        const leaf = r.node(SMT1.treeBytes, leafNode(SMT1.height, 5))!;
        expect(b58(leaf.hash)).toBe(b58(new Uint8Array(32)));
        expect(leaf.seq).toBe(SMT1_SEQ + 1n);
        expect(r.account(c.Y.hash)!.spent).toBe(true);
        expect([...r.inputQueue(HLKS5.treeBytes)]).toHaveLength(v2Inputs.length);
      });

      // Re-indexing all three blocks changes nothing.
      const before = dumpStore(store);
      for (const b of [...blocks, block(12, nullifyTransaction(sig(3), SMT1.treeBytes, [5n], SMT1_SEQ + 1n))]) expect(indexer.indexBlocks([b]).rejected).toEqual([]);
      expect(dumpStore(store)).toEqual(before);
      await store.close();
    });
  }

  it('a batched nullifier without a matching light-system input in a batched tree is rejected with the reason, nothing stored', async () => {
    const c = createTx();
    // insert_into_queues nullifies X1 (HLKs5) and Y (smt1) but the invoke lists only Y: X1 gets no batch slot.
    const m = mixedTx(c, ['Y', 'X1'], ['Y']);
    const store = new Store({ path: tempDir('refract-mixed-') });
    const indexer = new Indexer(store, registry);
    expect(indexer.indexBlocks([block(10, c.tx)]).rejected).toEqual([]);
    const before = dumpStore(store);
    const r = indexer.indexBlocks([block(11, m.tx)]);
    expect(r.rejected).toHaveLength(1);
    expect(r.rejected[0]!.signature).toBe(sig(2));
    expect(r.rejected[0]!.reason).toContain(`batch input 0 (${b58(c.X1.hash)}): no input-queue index`);
    expect(r.rejected[0]!.reason).toContain(`this one is in tree ${HLKS5.tree}`);
    const after = dumpStore(store);
    // Only the block, the progress metadata and the rejection record change: no account spent, no queue entry, no transaction row.
    expect(after.rejected).toHaveLength(before.rejected!.length + 1);
    store.read((x) => {
      expect(x.account(c.X1.hash)!.spent).toBe(false);
      expect(x.account(c.Y.hash)!.spent).toBe(false);
      expect([...x.inputQueue(HLKS5.treeBytes)]).toEqual([]);
    });
    for (const db of Object.keys(before).filter((k) => !['blocks', 'meta', 'rejected'].includes(k))) expect(after[db], db).toEqual(before[db]);
    await store.close();
  });
});
