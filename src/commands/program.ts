/**
 * The `refract` command line (commander): index, start, snapshot, setup, prover, simulate. Built here,
 * run by src/cli.ts; src/commands/settingsDoc.ts reads the same program for the documentation.
 * The options of a setting come from the settings table (src/config/settings.ts) through
 * {@link settingOption}; `refract start` maps them back to config keys with {@link settingFlags}.
 */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { runIndexCommand } from './indexFiles.ts';
import { DEFAULT_BATCH_TRANSACTIONS } from '../ingest/importFiles.ts';
import { CIRCUIT_IDS, DEFAULT_V2_CIRCUIT_IDS, V2_CIRCUIT_IDS } from '../prover/keys/circuits.ts';
import { configDefaults, type EnvSwitch, ENV_SWITCHES, envValue, grpcXToken, loadConfig, parseRateLimit, setLogFormat } from '../config/config.ts';
import { type FlagValue, PROVER_PREFIX, type SettingKey, settingEntries, settingOf } from '../config/settings.ts';

const int = (name: string) => (v: string) => {
  const n = v.trim() === '' ? NaN : Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
  return n;
};
/** A count or duration that must be ≥ 1 and fit a timer (≤ 2^31 − 1: setTimeout fires at once beyond). */
const positive = (name: string) => (v: string) => {
  const n = v.trim() === '' ? NaN : Number(v);
  if (!Number.isSafeInteger(n) || n < 1 || n > 2 ** 31 - 1) throw new InvalidArgumentError(`${name} must be an integer from 1 to 2147483647`);
  return n;
};
const collect = (v: string, prev: string[] = []) => [...prev, v];
/**
 * Signal handling for the long-running commands (start, prover, simulate), installed before the
 * command starts: the returned function hands over its `close()`. On SIGTERM or SIGINT: `close()`,
 * then exit 0. A signal during startup (before the hand-over) is kept and acted on as soon as the
 * command is up, so a Ctrl-C right after the first log lines is still a clean stop; a second signal
 * while stopping or starting exits at once (130 for SIGINT, 143 for SIGTERM).
 */
const exitOnSignal = () => {
  let close: (() => Promise<unknown>) | null = null;
  let pending = false;
  let stopping = false;
  const stop = () => {
    stopping = true;
    void close!().then(() => process.exit(0));
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping || pending) process.exit(signal === 'SIGINT' ? 130 : 143);
    if (close) stop();
    else pending = true;
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return (c: () => Promise<unknown>) => {
    close = c;
    if (pending) stop();
  };
};
/** `--rate-limit`: `off` or `<rps>[,<burst>]` (config.ts parseRateLimit), else a usage error naming the flag. */
const rateLimitArg = (name: string) => (v: string) => {
  try {
    return parseRateLimit(name, v);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
};
/** A finite number ≥ 0 (fractions allowed), else a usage error naming the flag. */
const nonNegative = (name: string) => (v: string) => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative number`);
  return n;
};
/** The flag parsers of the settings table's `flagValue`, by kind; each takes the flag's name for its error. */
const FLAG_PARSERS: Record<FlagValue, (name: string) => (v: string) => unknown> = { int, positive, number: nonNegative, rateLimit: rateLimitArg };

/** A command that takes setting flags: `refract start`, or another that shares some (`alsoOn`). */
export type SettingCommand = 'start' | 'index' | 'setup' | 'prover' | 'simulate';
/** The flag of setting `key` on `command`: `refract start`'s, without the `--prover-` prefix elsewhere. */
export function settingFlag(key: SettingKey, command: SettingCommand): string {
  const flag = settingOf(key).flag;
  if (!flag) throw new Error(`setting ${key} has no flag`);
  return command === 'start' ? flag : flag.replace(`--${PROVER_PREFIX}`, '--');
}
/** Options made by {@link settingOption} → their setting: the documentation lists the others as the commands' own flags. */
export const SETTING_OPTIONS = new Map<Option, SettingKey>();

/**
 * The commander option of setting `key` on `command`, from the settings table: its flag, parser and
 * choices, and a help line that ends with the default and the environment variables that set it (on
 * `refract start`; elsewhere those read process-wide, ENV_SWITCHES). `withDefault`: commander fills in
 * the table's default (for commands that read no config, e.g. `refract index --db`). Throws Error
 * when the setting has no flag or `command` is not one it is on.
 */
export function settingOption(key: SettingKey, command: SettingCommand = 'start', withDefault = false): Option {
  const s = settingOf(key);
  if (command !== 'start' && !s.alsoOn?.includes(command)) throw new Error(`setting ${key} is not a flag of refract ${command}`);
  const opt = new Option(settingFlag(key, command), '');
  const takesValue = !opt.negate && !opt.isBoolean();
  const value = configDefaults()[key];
  const defaultText = s.defaultText ?? (takesValue && value !== undefined ? (typeof value === 'string' ? value : JSON.stringify(value)) : undefined);
  const env = (s.env ?? []).filter((name) => command === 'start' || name in ENV_SWITCHES);
  // With a commander default, commander's help shows it.
  const notes = [defaultText !== undefined && !(withDefault && value !== undefined) ? `default ${defaultText}` : '', env.length ? env.map((n) => `$${n}`).join(' or ') : ''].filter(Boolean);
  const help = (command !== 'start' && s.helpOn?.[command]) || s.help;
  opt.description = notes.length ? `${help} (${notes.join('; ')})` : help;
  if (s.flagValue) opt.argParser(FLAG_PARSERS[s.flagValue](opt.long!));
  if (s.choices) opt.choices(s.choices);
  if (withDefault && value !== undefined) opt.default(value);
  SETTING_OPTIONS.set(opt, key);
  return opt;
}

/**
 * `refract start`'s parsed options → the config values its setting flags give (loadConfig's
 * `flags`): a value flag as given, a switch (`--own-circuits`) as true, a negation (`--no-ingest`) as
 * false; a flag not given is undefined, so the environment and the config file decide. Reads the
 * options `cmd` registered with {@link settingOption}, each under its own attribute name.
 */
export function settingFlags(cmd: Command, o: Record<string, unknown>): Partial<Record<SettingKey, unknown>> {
  const out: Partial<Record<SettingKey, unknown>> = {};
  for (const opt of cmd.options as Option[]) {
    const key = SETTING_OPTIONS.get(opt);
    if (key === undefined) continue;
    const v = o[opt.attributeName()];
    out[key] = opt.negate ? (v === false ? false : undefined) : opt.isBoolean() ? (v ? true : undefined) : v;
  }
  return out;
}

/** The package version (package.json), for `refract --version`. */
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The `refract` program: parse with `program.parseAsync(argv)` (src/cli.ts). */
export const program = new Command('refract')
  .description('Indexer and Groth16 proving daemon for Light Protocol ZK-compressed state')
  .version(VERSION, '-V, --version', 'print the version')
  // A usage error is the error and one line, not the whole help (inherited by every command).
  .showHelpAfterError('(run with --help for usage)');
// --log-format sets REFRACT_LOG_FORMAT before the command runs, so worker threads and `refract setup` children log alike.
program.hook('preAction', (_program, command) => {
  const f = command.opts().logFormat as string | undefined;
  if (f) setLogFormat(f);
});

program
  .command('index')
  .description('import getTransaction/getBlock JSON files into the store (ascending slot, ties by file name)')
  .addOption(settingOption('db', 'index', true))
  .option('--transactions <dir...>', 'directories (or files) of getTransaction JSON', collect)
  .option('--blocks <dir...>', 'directories of getBlock JSON files named by slot', collect)
  .option('--batch-transactions <n>', 'transactions per write transaction (whole slots)', positive('--batch-transactions'), DEFAULT_BATCH_TRANSACTIONS)
  .option('--no-progress', 'no progress bar')
  .action(async (o) => {
    if (!o.transactions?.length && !o.blocks?.length) program.error('index: give --transactions DIR and/or --blocks DIR');
    await runIndexCommand({ db: o.db, transactions: o.transactions?.flat(), blocks: o.blocks?.flat(), batchTransactions: o.batchTransactions, progress: o.progress });
  });

/** The prover-thread settings: `refract start` takes them as --prover-threads, --prover-curve, …, `refract prover` as --threads, --curve, … */
const PROVER_THREAD_SETTINGS = ['proverThreads', 'proverCurve', 'proverKernels', 'proverBackend', 'proverTableMb', 'proverTableFiles'] as const;
/** The prover-thread flags of `command` and `--queue` (the BullMQ queue name), which `refract start` and `refract prover` share. */
function proverThreadOptions(cmd: Command, command: 'start' | 'prover'): Command {
  for (const key of PROVER_THREAD_SETTINGS) cmd.addOption(settingOption(key, command));
  return cmd.option('--queue <name>', 'BullMQ queue name (default refract-proofs)');
}

const startCommand = program
  .command('start')
  .description('run the daemon: indexer (RPC poller), JSON-RPC API and prover')
  .option('--config <file>', 'JSON config file (default config/refract.json when present)');
// The setting flags, from the settings table (the prover-thread ones with --queue, shared with `refract prover`).
for (const [key, s] of settingEntries()) if (s.flag && !(PROVER_THREAD_SETTINGS as readonly string[]).includes(key)) startCommand.addOption(settingOption(key));
proverThreadOptions(startCommand, 'start')
  .option('--no-simulator', 'do not start the built-in simulator when nothing answers at the default --rpc-url (a getHealth within 1 s)')
  .option('--no-build-keys', 'do not build missing keys in the background')
  .option('--circuits <ids>', `serve (and build) only these comma-separated circuit ids (default: every v1 circuit and ${DEFAULT_V2_CIRCUIT_IDS.join(',')}; docs/prover.md#circuits)`, (v: string) => v.split(',').map((s) => s.trim()).filter(Boolean))
  .option('--proof-timeout-ms <n>', 'per-request proof timeout (default 60000)', positive('--proof-timeout-ms'))
  .option('--max-queued-proofs <n>', 'proof queue bound: proofs pending in process, or jobs waiting in the BullMQ queue across replicas; beyond it, "Prover busy" (default 64)', positive('--max-queued-proofs'))
  .option('--no-local-prover', 'with --redis-url: only enqueue; `refract prover` nodes prove')
  .option('--prover-api-key <key>', 'API key for --prover-url (sent as Authorization: Bearer)')
  .action(async (o) => {
    const config = loadConfig({ file: o.config, flags: settingFlags(startCommand, o) });
    const onStop = exitOnSignal();
    const { startDaemon } = await import('./start.ts');
    const daemon = await startDaemon(config, {
      simulatorFallback: o.simulator !== false && !o.rpcUrl,
      prover: {
        localWorker: o.localProver !== false,
        timeoutMs: o.proofTimeoutMs,
        maxPending: o.maxQueuedProofs,
        queueName: o.queue,
        autoSetup: o.buildKeys !== false,
        circuits: o.circuits,
        proverApiKey: o.proverApiKey,
      },
    });
    onStop(() => daemon.stop());
  });

const snapshotCommand = program.command('snapshot').description('store snapshots, to seed a replica (restore one with `refract start --snapshot`)');
snapshotCommand
  .command('create')
  .description('write a consistent, compacted, compressed copy of a store with its manifest (also while a daemon writes to it)')
  .requiredOption('--db <dir>', 'LMDB directory of the store')
  .requiredOption('--out <file>', 'snapshot file to write (through <file>.partial), or - for standard output')
  .action(async (o) => {
    const { runSnapshotCreate } = await import('./snapshot.ts');
    try {
      await runSnapshotCreate({ db: o.db, out: o.out });
    } catch (e) {
      process.stderr.write(`refract snapshot create: ${(e as Error).message}\n`);
      process.exit(1);
    }
  });

program
  .command('setup')
  .description('compile the validity-proof circuits and create their Groth16 keys (cached, resumable)')
  .addOption(settingOption('keysDir', 'setup', true))
  .addOption(settingOption('ptau', 'setup'))
  .option('--insecure-ptau', 'the --ptau file is a development one (recorded and announced as INSECURE)')
  .option('--circuits <ids>', `comma-separated circuit ids (default: all v1, ${CIRCUIT_IDS.join(',')}, and v2 ${DEFAULT_V2_CIRCUIT_IDS.join(',')}; other v2 on request: ${V2_CIRCUIT_IDS.filter((id) => !DEFAULT_V2_CIRCUIT_IDS.includes(id)).join(',')})`, (v: string) => v.split(',').map((s) => s.trim()).filter(Boolean))
  .option('--dev-ptau-power <n>', 'use an INSECURE development ptau of 2^N (generated when missing) when no --ptau is given, instead of downloading the public one', int('--dev-ptau-power'))
  .option('--force', 'rebuild even when cached')
  .option('--no-progress', 'log lines instead of a progress bar')
  .addOption(settingOption('proverTableMb', 'setup'))
  .addOption(settingOption('proverTableFiles', 'setup'))
  .option('--exit-on-stdin-close', 'exit when standard input closes (used by `refract start`\'s background setup, so it dies with its parent)')
  .option('--light-keys [dir]', "convert Light Protocol's proving keys (the .key files in DIR, or without DIR the @lightprotocol/zk-compression-cli 0.27.0 and 0.18.0 packages fetched from the npm registry, integrity-checked) into <keys>/light/, each key checked against its pinned sha256, instead of building Refract's own circuits; keys already converted are skipped (--force redoes them)")
  .action(async (o) => {
    // Through process.exit, so the circom compilers it started are killed with it (snark.ts). A signal
    // is a normal stop: what is finished is kept (keys, compiled circuits, the dev ptau's finished
    // stages) and the next run resumes. Run by `refract start` (--exit-on-stdin-close), it exits
    // 130/143 so the daemon tells a stop from a finished setup; run by hand, 0.
    const stopped = (signal: NodeJS.Signals, code: number) => () => {
      if (!o.exitOnStdinClose) process.stderr.write(`refract setup: stopped (${signal}); finished keys, compiled circuits and finished powers-of-tau stages are kept: run the same command again to resume\n`);
      process.exit(o.exitOnStdinClose ? code : 0);
    };
    process.once('SIGTERM', stopped('SIGTERM', 143));
    process.once('SIGINT', stopped('SIGINT', 130));
    if (o.exitOnStdinClose) {
      process.stdin.on('end', () => process.exit(1));
      process.stdin.on('error', () => process.exit(1));
      process.stdin.resume();
    }
    const { runSetupCommand, runLightSetupCommand } = await import('./setup.ts');
    try {
      if (o.lightKeys !== undefined) {
        await runLightSetupCommand({ keys: o.keys, source: typeof o.lightKeys === 'string' ? o.lightKeys : undefined, force: !!o.force, progress: o.progress });
        process.exit(0);
      }
      await runSetupCommand({ keys: o.keys, ptau: o.ptau, insecurePtau: !!o.insecurePtau, circuits: o.circuits, devPtauPower: o.devPtauPower, force: !!o.force, progress: o.progress, tableMb: o.tableMb, tableFiles: o.tableFiles });
    } catch (e) {
      process.stderr.write(`refract setup: ${(e as Error).message}\n`);
      process.exit(1);
    }
    process.exit(0);
  });

const proverCommand = program
  .command('prover')
  .description('run a proving node that drains the BullMQ proof queue')
  .addOption(settingOption('redisUrl', 'prover'))
  .addOption(settingOption('keysDir', 'prover', true));
proverThreadOptions(proverCommand, 'prover')
  .option('--lock-duration-ms <n>', 'job lock; a dead node\'s job is retried after about this plus the stalled interval (default 30000)', positive('--lock-duration-ms'))
  .option('--stalled-interval-ms <n>', 'stalled-job check interval (default 15000)', positive('--stalled-interval-ms'))
  .option('--warm <ids>', 'comma-separated circuits to load at start (default: those of inclusion_26_1, non-inclusion_26_1 that are ready)', (v: string) => v.split(',').map((s) => s.trim()).filter(Boolean))
  .option('--events', 'print one JSON line per job event on stdout (ready, active, completed, failed)')
  .addOption(settingOption('logLevel', 'prover'))
  .addOption(settingOption('logFormat', 'prover'))
  .action(async (o) => {
    const redisUrl = o.redisUrl || settingOf('redisUrl').env!.map((name) => envValue(name as EnvSwitch)).find(Boolean); // in the settings table's order
    if (!redisUrl) program.error('prover: give --redis-url URL (or set REDIS_URL)');
    const onStop = exitOnSignal();
    const { runProverCommand } = await import('./prover.ts');
    let node;
    try {
      node = await runProverCommand({ redisUrl, keys: o.keys, threads: o.threads, curve: o.curve, kernels: o.kernels, backend: o.backend, tableMb: o.tableMb, tableFiles: o.tableFiles, queue: o.queue, lockDurationMs: o.lockDurationMs, stalledIntervalMs: o.stalledIntervalMs, warm: o.warm, events: !!o.events, logLevel: o.logLevel });
    } catch (e) {
      process.stderr.write(`refract prover: ${(e as Error).message}\n`);
      process.exit(1);
    }
    onStop(() => node.close());
  });

/** `refract simulate --profile`: default or sparse. */
const simProfile = (v: string) => {
  if (v !== 'default' && v !== 'sparse') throw new InvalidArgumentError('--profile must be default or sparse');
  return v;
};
program
  .command('simulate')
  .description('serve a local Solana JSON-RPC endpoint with Light transactions (generated, or replayed from files first; --profile sparse: a mainnet-like history); POST /pause and /resume on --port stop and restart the slot clock')
  .option('--port <n>', 'port', int('--port'), 8899)
  .option('--host <host>', 'bind address', '127.0.0.1')
  .option('--profile <name>', 'default (a pruned window of generated blocks, one per slot) or sparse (a mainnet-like history: Light transactions in about one slot of --light-every, padding, skipped slots)', simProfile, 'default')
  .option('--slot-ms <n>', 'milliseconds per slot', positive('--slot-ms'), 400)
  .option('--txs-per-block <n>', 'generated transactions per block (default 8); with --profile sparse the most Light transactions of a Light slot, which holds 1 to N (default 4)', int('--txs-per-block'))
  .option('--replay <dir...>', 'default profile: getTransaction JSON directories to serve first, in slot order', collect)
  .option('--replay-only', 'default profile: serve empty blocks after the replay instead of generating')
  .option('--seed <n>', 'generator seed', int('--seed'), 1)
  .option('--keep-slots <n>', 'default profile: newest generated blocks kept; older slots answer as on a pruned node (default 3000)', positive('--keep-slots'))
  .option('--v2-weight <n>', 'weight of instruction-based (v2) transactions on the batched state tree bmt1 and the batched address tree amt2 (trees the official client knows on a local URL) beside the legacy kinds (total 11); 0 = legacy only (default 1)', int('--v2-weight'))
  .option('--history-slots <n>', 'sparse: slots of history at start, the tip then (default 2000000)', positive('--history-slots'))
  .option('--light-every <n>', 'sparse: about one slot in N holds Light transactions (default 50)', positive('--light-every'))
  .option('--padding-txs <n>', 'sparse: non-Light transactions (votes, transfers) per block, derived when asked, never stored (default 1000: about 1.1 MB of getBlock JSON, like a mainnet block)', int('--padding-txs'))
  .option('--skip-every <n>', 'sparse: about one slot in N is skipped (getBlock -32007); 0 = none (default 20)', int('--skip-every'))
  .option('--rps <n>', 'rate limit: N requests per second (a token bucket; each request of a batch counts), else HTTP 429 with Retry-After (default: none)', positive('--rps'))
  .option('--no-transaction-index', 'getTransaction without agave 4.x\'s transactionIndex (an older node)')
  .option('--grpc-port <n>', 'also serve Yellowstone gRPC (the Geyser Subscribe service: Light transactions, slots, blocks meta, fromSlot replay of the newest 150 slots) on this port; 0 = any free port (default: none). Faults for tests: POST /geyser/faults on --port, e.g. {"dropAfter":1}, {"skip":{"kind":"block"}}, {"stall":{"after":1,"ms":8000}}, {"replayUnavailable":true}, {"replayStartsLater":3}, {"clear":true}; GET /geyser/faults lists the pending ones (src/sim/geyser.ts)', int('--grpc-port'))
  .addOption(settingOption('logFormat', 'simulate'))
  .option('--hide-program-signatures <n>', 'fault switch for tests: one Light transaction in N is left out of getSignaturesForAddress of the account-compression program (default: none)', positive('--hide-program-signatures'))
  .action(async (o) => {
    const sparseOnly = ['historySlots', 'lightEvery', 'paddingTxs', 'skipEvery'].filter((k) => o[k] !== undefined);
    if (o.profile !== 'sparse' && sparseOnly.length) program.error('simulate: --history-slots, --light-every, --padding-txs and --skip-every need --profile sparse');
    if (o.profile === 'sparse' && (o.replay || o.replayOnly || o.keepSlots !== undefined)) program.error('simulate: --replay, --replay-only and --keep-slots are for the default profile, not --profile sparse');
    if (o.skipEvery === 1) program.error('simulate: --skip-every must be 0 (no skipped slots) or at least 2');
    const onStop = exitOnSignal();
    const { startSimulator } = await import('../sim/simulator.ts');
    const { DEFAULT_SIM_V2_WEIGHT } = await import('../sim/generator.ts');
    const { createLogger } = await import('../log.ts');
    const sim = await startSimulator({
      port: o.port,
      host: o.host,
      profile: o.profile,
      slotMs: o.slotMs,
      txsPerBlock: o.txsPerBlock,
      replay: o.replay?.flat(),
      replayOnly: !!o.replayOnly,
      seed: o.seed,
      keepSlots: o.keepSlots,
      v2Weight: o.v2Weight ?? DEFAULT_SIM_V2_WEIGHT,
      historySlots: o.historySlots,
      lightEvery: o.lightEvery,
      paddingTxs: o.paddingTxs,
      skipEvery: o.skipEvery,
      rps: o.rps,
      transactionIndex: o.transactionIndex !== false,
      hideFromProgramListing: o.hideProgramSignatures,
      log: createLogger('refract-simulate'),
    });
    let geyser: { close(): Promise<void> } | null = null;
    if (o.grpcPort !== undefined) {
      const { startGeyserServer } = await import('../sim/geyser.ts');
      const log = createLogger('refract-simulate');
      const { applyFaultRequest } = await import('../sim/geyser.ts');
      const g = await startGeyserServer({ port: o.grpcPort, host: o.host, source: sim, log, ...(grpcXToken() ? { xToken: grpcXToken() } : {}) });
      // Fault injection over the simulator's HTTP port (geyser.ts module comment).
      sim.route('POST', '/geyser/faults', (body) => {
        const r = applyFaultRequest(g, body);
        log.info({ faults: r.pending }, 'geyser: faults set');
        return r;
      });
      sim.route('GET', '/geyser/faults', () => applyFaultRequest(g, {}));
      log.info({ grpcUrl: g.url }, 'Yellowstone gRPC listening');
      geyser = g;
    }
    onStop(async () => {
      await geyser?.close();
      await sim.close();
    });
  });

