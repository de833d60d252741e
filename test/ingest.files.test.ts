/**
 * The streaming file import (`refract index`): files are listed first and read batch by batch; the
 * result equals loading everything up front, and a resumed import does not read what is indexed.
 */
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { blocksFromTransactionFiles, loadBlockFiles, loadTransactionFiles, planFiles } from '../src/ingest/sources/files.ts';
import { importBlocks, importFilePlan } from '../src/ingest/importFiles.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { Store } from '../src/store/store.ts';
import { PHOTON_DIR, tempDir } from './helpers/photon.ts';

const TX_DIRS = ['e2e_mint_and_transfer_transactions', 'lamport_transfers', 'transaction_with_tree_rollover_fee'].map((d) => join(PHOTON_DIR, 'transactions', d));
const BLOCK_DIRS = [join(PHOTON_DIR, 'blocks', 'get_lanon_voting_signatures')];
const registry = loadTreeRegistry();

/** Roots of every registered tree, all signatures, the last slot. */
function digest(store: Store) {
  return store.read((r) => ({
    roots: registry.all().map((t) => {
      const n = r.node(t.treeBytes, 1n);
      return n ? `${Buffer.from(n.hash).toString('hex')}@${n.seq}` : null;
    }),
    signatures: [...r.signatures('all', null)].map((s) => `${s.slot}:${s.signature}`),
    lastSlot: r.lastSlot(),
  }));
}

describe('refract index: files read batch by batch', () => {
  it('plans files in slot order (transaction files before a block file of the same slot) and counts their blocks', () => {
    const plan = planFiles(TX_DIRS, BLOCK_DIRS);
    expect(plan.files.filter((f) => f.kind === 'block')).toHaveLength(1);
    const slots = plan.files.map((f) => f.slot);
    expect(slots).toEqual([...slots].sort((a, b) => a - b));
    const txFiles = loadTransactionFiles(TX_DIRS);
    expect(plan.files.filter((f) => f.kind === 'transaction')).toHaveLength(txFiles.length);
    expect(plan.blocks).toBe(blocksFromTransactionFiles(txFiles).length + loadBlockFiles(BLOCK_DIRS).length);
  });

  it('equals loading every file up front, for any batch size', () => {
    const upFront = [...blocksFromTransactionFiles(loadTransactionFiles(TX_DIRS)), ...loadBlockFiles(BLOCK_DIRS)].sort((a, b) => a.slot - b.slot);
    const reference = new Store({ path: tempDir() });
    const refSummary = importBlocks(new Indexer(reference, registry), upFront);
    const want = digest(reference);
    expect(want.signatures.length).toBeGreaterThan(5);
    for (const batchTransactions of [1, 7, 2000]) {
      const store = new Store({ path: tempDir() });
      const progress: number[] = [];
      const plan = planFiles(TX_DIRS, BLOCK_DIRS);
      const summary = importFilePlan(new Indexer(store, registry), plan, { batchTransactions, onProgress: (done) => progress.push(done) });
      expect({ ...summary, seconds: 0 }).toEqual({ ...refSummary, seconds: 0 });
      expect(digest(store)).toEqual(want);
      expect(progress[progress.length - 1]).toBe(plan.blocks);
    }
  });

  it('a resumed import does not read the files it has indexed (a now-corrupt early file is passed over)', () => {
    const dir = tempDir();
    const txDir = join(dir, 'txs');
    mkdirSync(txDir);
    for (const f of readdirSync(TX_DIRS[0]!)) copyFileSync(join(TX_DIRS[0]!, f), join(txDir, f));
    const store = new Store({ path: tempDir() });
    const first = importFilePlan(new Indexer(store, registry), planFiles([txDir], []), { batchTransactions: 3 });
    expect(first.skippedBlocks).toBe(0);
    const plan = planFiles([txDir], []);
    // Corrupt the earliest file's content (still JSON with its slot, so it can be planned): it must not be decoded again.
    const earliest = plan.files[0]!;
    writeFileSync(earliest.file, JSON.stringify({ slot: earliest.slot, transaction: ['!!!', 'base64'], meta: {} }));
    const again = importFilePlan(new Indexer(store, registry), planFiles([txDir], []));
    expect(again).toMatchObject({ blocks: 0, transactions: 0, skippedBlocks: plan.blocks });
    // A fresh store does read it, and names the file.
    expect(() => importFilePlan(new Indexer(new Store({ path: tempDir() }), registry), planFiles([txDir], []))).toThrow(new RegExp(`^${earliest.file}: transaction\\[0\\]`));
  });

  it('blocks of one slot (transaction files and a block file) always share a batch, so a resume cannot drop one', () => {
    const dir = tempDir();
    const [blockFile] = readdirSync(BLOCK_DIRS[0]!);
    const slot = Number(blockFile);
    const txDir = join(dir, 'txs');
    mkdirSync(txDir);
    // One transaction file at the block file's slot.
    const src = loadTransactionFiles([TX_DIRS[1]!])[0]!;
    writeFileSync(join(txDir, 'a.json'), JSON.stringify({ ...JSON.parse(readFileSync(src.file, 'utf8')), slot }));
    const store = new Store({ path: tempDir() });
    const batches: number[][] = [];
    const indexer = new Indexer(store, registry);
    const orig = indexer.indexBlocks.bind(indexer);
    indexer.indexBlocks = (blocks) => (batches.push(blocks.map((b) => b.slot)), orig(blocks));
    importFilePlan(indexer, planFiles([txDir], BLOCK_DIRS), { batchTransactions: 1 });
    expect(batches).toEqual([[slot, slot]]);
  });

  it('a file that is not JSON, or has no slot, is named before anything is indexed', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.json'), '{nope');
    expect(() => planFiles([dir], [])).toThrow(/a\.json: not JSON/);
    writeFileSync(join(dir, 'a.json'), JSON.stringify({ transaction: [] }));
    expect(() => planFiles([dir], [])).toThrow(/a\.json: slot: expected a non-negative integer, got undefined/);
  });
});
