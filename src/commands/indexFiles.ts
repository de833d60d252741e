/**
 * `refract index --db DIR --transactions DIR... [--blocks DIR...]`: file import with a progress bar.
 */
import cliProgress from 'cli-progress';
import { envValue, parseEnvBoolean } from '../config/config.ts';
import { planFiles } from '../ingest/sources/files.ts';
import { runImportThread } from '../ingest/threads/importThread.ts';

/** Options of the index command. */
export interface IndexCommandOptions {
  db: string;
  transactions?: string[];
  blocks?: string[];
  batchTransactions?: number;
  progress?: boolean;
}

/**
 * Runs the file import on an import thread (src/ingest/threads/importThread.ts) and prints a JSON summary on
 * stdout. Throws on unreadable input or store errors.
 */
export async function runIndexCommand(opts: IndexCommandOptions): Promise<void> {
  // Listed (and slot-sorted) up front; each file is read and decoded when its batch comes.
  const plan = planFiles(opts.transactions ?? [], opts.blocks ?? []);
  // Same switch, read the same way, as `refract start` (config lmdbWritemap): REFRACT_LMDB_WRITEMAP=0 turns the write map off.
  const writemap = parseEnvBoolean('REFRACT_LMDB_WRITEMAP', envValue('REFRACT_LMDB_WRITEMAP')) ?? true;
  const bar = opts.progress !== false && process.stderr.isTTY ? new cliProgress.SingleBar({ format: 'indexing [{bar}] {value}/{total} blocks | {eta_formatted} left', stream: process.stderr }, cliProgress.Presets.shades_classic) : null;
  bar?.start(plan.blocks, 0);
  try {
    const { summary, lastSlot } = await runImportThread({ db: opts.db, plan, batchTransactions: opts.batchTransactions, writemap }, (done) => bar?.update(done));
    bar?.update(plan.blocks);
    bar?.stop();
    process.stdout.write(`${JSON.stringify({ ...summary, lastSlot, db: opts.db }, null, 2)}\n`);
  } finally {
    bar?.stop();
  }
}
