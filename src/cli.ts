/**
 * The `refract` command line (commander): index, start, setup, prover, simulate.
 */
import { Command, InvalidArgumentError } from 'commander';
import { runIndexCommand } from './commands/index.ts';
import { loadConfig } from './config/config.ts';

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

program
  .command('start')
  .description('run the daemon: indexer (RPC poller), JSON-RPC API and prover')
  .option('--config <file>', 'JSON config file (default config/refract.json when present)')
  .option('--db <dir>', 'LMDB directory (default ./data)')
  .option('--rpc-url <url>', 'Solana JSON-RPC URL (default http://127.0.0.1:8899)')
  .option('--port <n>', 'HTTP port (default 8784)', int('--port'))
  .option('--host <host>', 'HTTP bind address (default 0.0.0.0)')
  .option('--start-slot <n>', 'first slot to index when the store is behind it', int('--start-slot'))
  .option('--no-ingest', 'serve an existing store without polling')
  .option('--keys <dir>', 'proving keys directory (default ./keys)')
  .option('--redis-url <url>', 'Redis for the proof queue and shared rate limits')
  .option('--prover-url <url>', 'send proofs to an external (Light-compatible) prover instead')
  .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent')
  .option('--no-simulator', 'do not start the built-in simulator when nothing answers at the default --rpc-url')
  .action(async (o) => {
    const config = loadConfig({
      file: o.config,
      flags: { db: o.db, rpcUrl: o.rpcUrl, port: o.port, host: o.host, startSlot: o.startSlot, ingest: o.ingest === false ? false : undefined, keysDir: o.keys, redisUrl: o.redisUrl, proverUrl: o.proverUrl, logLevel: o.logLevel },
    });
    const { startDaemon } = await import('./commands/start.ts');
    const daemon = await startDaemon(config, { simulatorFallback: o.simulator !== false && !o.rpcUrl });
    const onSignal = () => void daemon.stop().then(() => process.exit(0));
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });

program
  .command('simulate')
  .description('serve a local Solana JSON-RPC endpoint with Light transactions (generated, or replayed from files first)')
  .option('--port <n>', 'port', int('--port'), 8899)
  .option('--host <host>', 'bind address', '127.0.0.1')
  .option('--slot-ms <n>', 'milliseconds per slot', int('--slot-ms'), 400)
  .option('--txs-per-block <n>', 'generated transactions per block', int('--txs-per-block'), 8)
  .option('--replay <dir...>', 'getTransaction JSON directories to serve first, in slot order', collect)
  .option('--replay-only', 'serve empty blocks after the replay instead of generating')
  .option('--seed <n>', 'generator seed', int('--seed'), 1)
  .action(async (o) => {
    const { startSimulator } = await import('./sim/simulator.ts');
    const { createLogger } = await import('./log.ts');
    const sim = await startSimulator({ port: o.port, host: o.host, slotMs: o.slotMs, txsPerBlock: o.txsPerBlock, replay: o.replay?.flat(), replayOnly: !!o.replayOnly, seed: o.seed, log: createLogger('refract-simulate') });
    const stop = () => void sim.close().then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });

await program.parseAsync(process.argv);
