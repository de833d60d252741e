/**
 * The `refract` command line (commander): index, start, setup, prover, simulate.
 */
import { Command, InvalidArgumentError } from 'commander';
import { runIndexCommand } from './commands/index.ts';

const int = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
  return n;
};
const collect = (v: string, prev: string[] = []) => [...prev, v];

const program = new Command('refract').description('Indexer and Groth16 proving daemon for Light Protocol ZK-compressed state').showHelpAfterError();

program
  .command('index')
  .description('import getTransaction/getBlock JSON files into the store (ascending slot, ties by file name)')
  .option('--db <dir>', 'LMDB directory', './data')
  .option('--transactions <dir...>', 'directories (or files) of getTransaction JSON', collect)
  .option('--blocks <dir...>', 'directories of getBlock JSON files named by slot', collect)
  .option('--batch-transactions <n>', 'transactions per write transaction', int('--batch-transactions'), 2000)
  .option('--no-progress', 'no progress bar')
  .action(async (o) => {
    if (!o.transactions?.length && !o.blocks?.length) program.error('index: give --transactions DIR and/or --blocks DIR');
    await runIndexCommand({ db: o.db, transactions: o.transactions?.flat(), blocks: o.blocks?.flat(), batchTransactions: o.batchTransactions, progress: o.progress });
  });

await program.parseAsync(process.argv);
