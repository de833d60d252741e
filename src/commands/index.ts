/**
 * `refract index --db DIR --transactions DIR... [--blocks DIR...]`: file import with a progress bar.
 */
import cliProgress from 'cli-progress';
import { loadTreeRegistry } from '../config/trees.ts';
import { planFiles } from '../ingest/files.ts';
import { importFilePlan } from '../ingest/importFiles.ts';
import { Indexer } from '../ingest/indexer.ts';
import { createLogger } from '../log.ts';
import { Store } from '../store/store.ts';

/** Options of the index command. */
export interface IndexCommandOptions {
  db: string;
  transactions?: string[];
  blocks?: string[];
  batchTransactions?: number;
  progress?: boolean;
}

/** Runs the file import and prints a JSON summary on stdout. Throws on unreadable input or store errors. */
export async function runIndexCommand(opts: IndexCommandOptions): Promise<void> {
  const log = createLogger('refract-index');
  // Listed (and slot-sorted) up front; each file is read and decoded when its batch comes.
  const plan = planFiles(opts.transactions ?? [], opts.blocks ?? []);
  // Same switch as `refract start` (config lmdbWritemap): REFRACT_LMDB_WRITEMAP=0 turns the write map off.
  const store = new Store({ path: opts.db, writemap: !['0', 'false'].includes((process.env.REFRACT_LMDB_WRITEMAP ?? '').toLowerCase()) });
  const indexer = new Indexer(store, loadTreeRegistry(), log);
  const bar = opts.progress !== false && process.stderr.isTTY ? new cliProgress.SingleBar({ format: 'indexing [{bar}] {value}/{total} blocks | {eta_formatted} left', stream: process.stderr }, cliProgress.Presets.shades_classic) : null;
  bar?.start(plan.blocks, 0);
  try {
    const summary = importFilePlan(indexer, plan, { batchTransactions: opts.batchTransactions, onProgress: (done) => bar?.update(done) });
    bar?.update(plan.blocks);
    bar?.stop();
    const lastSlot = store.read((r) => r.lastSlot());
    process.stdout.write(`${JSON.stringify({ ...summary, lastSlot, db: opts.db }, null, 2)}\n`);
  } finally {
    bar?.stop();
    await store.close();
  }
}
