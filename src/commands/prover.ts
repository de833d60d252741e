/**
 * `refract prover --redis-url URL [--keys DIR] [--threads N]`: a proving node that drains the
 * BullMQ proof queue (src/prover/run/bullmq.ts) with `concurrency = threads`, each job awaiting the
 * Piscina pool. Results go back through Redis with the node's timings, so the API process's
 * /metrics counts them. SIGTERM/SIGINT: stop taking jobs, finish running ones, exit.
 *
 * `--events` prints one JSON line per job event on stdout (`{"event":"ready"|"active"|"completed"|"failed",…}`),
 * for scripts and tests.
 */
import { createLogger } from '../log.ts';
import type { ProverNode } from '../prover/run/bullmq.ts';
import { ProverError } from '../prover/errors.ts';
import { logTableLoad, type CurveThreading } from '../prover/run/pool.ts';
import type { ProverKernels } from '../prover/engine/snark.ts';
import type { ProverBackendKind } from '../prover/engine/groth16Native.ts';
import { KeyReadiness } from '../prover/keys/keyReadiness.ts';
import { readyLightKeys } from '../prover/keys/lightKeySetup.ts';
import { LIGHT_KEY_ID_PREFIX } from '../prover/keys/lightKeyTable.ts';

/** Light keys a node loads at start when they are set up (the shapes most requests have). */
const DEFAULT_LIGHT_WARM = ['mainnet_inclusion_26_1', 'non-inclusion_26_1', 'inclusion_32_1', 'non-inclusion_40_1'];

/** Options of the prover command. */
export interface ProverCommandOptions {
  redisUrl: string;
  keys: string;
  threads?: number;
  /** auto | multi | single (default auto). */
  curve?: string;
  /** native | wasm (default: native when the addon is built). */
  kernels?: string;
  /** native | snarkjs (default: $REFRACT_PROVER_BACKEND, else native when the addon is built). */
  backend?: string;
  /** Fixed-base MSM table budget per key, MiB (default: $REFRACT_PROVER_TABLE_MB, else 96). */
  tableMb?: number;
  /** The table files' directory, or `off` (default: $REFRACT_PROVER_TABLE_FILES, else the keys directory). */
  tableFiles?: string;
  queue?: string;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /**
   * Keys to load at start: own circuit ids, or Light keys as `light/<name>` (default: the ready
   * ones among Light's mainnet_inclusion_26_1, non-inclusion_26_1, inclusion_32_1 and
   * non-inclusion_40_1, and the own inclusion_26_1 and non-inclusion_26_1).
   */
  warm?: string[];
  events?: boolean;
  logLevel?: string;
}

/**
 * Starts the node and resolves with it once it takes jobs.
 * @throws ProverError `keys_missing` when no circuit has keys, `queue_unavailable` when Redis is unreachable
 */
export async function runProverCommand(opts: ProverCommandOptions): Promise<ProverNode> {
  const log = createLogger('refract-prover', opts.logLevel);
  const keys = new KeyReadiness(opts.keys);
  await keys.refresh();
  const ownReady = keys.readyIds();
  // Light's keys (jobs `light/<name>`) come first: the API proves every shape Light ships a key for with them
  const lightReady = readyLightKeys(keys.keysDir);
  const ready = [...lightReady.map((n) => LIGHT_KEY_ID_PREFIX + n), ...ownReady];
  if (ready.length === 0) {
    throw new ProverError(
      'keys_missing',
      `no proving keys in ${keys.keysDir}; run \`refract setup --light-keys --keys ${keys.keysDir}\` first (Light's keys; and \`refract setup --keys ${keys.keysDir}\` for Refract's own circuits if the API uses --own-circuits)`,
    );
  }
  if (lightReady.length === 0) log.warn({ keysDir: keys.keysDir }, "no Light keys here: jobs for Light's keys are handed back to the queue for a node that has them (run `refract setup --light-keys`)");
  if (ownReady.length > 0 && ownReady.length < keys.circuits.length) log.warn({ ready, missing: keys.circuits.filter((id) => !ready.includes(id)) }, 'some circuits have no keys here: their jobs are handed back to the queue for a node that has them (keys_missing after 5 handbacks)');
  const print = (o: Record<string, unknown>) => {
    if (opts.events) process.stdout.write(`${JSON.stringify({ ...o, pid: process.pid })}\n`);
  };
  const warm = opts.warm ?? [...DEFAULT_LIGHT_WARM.map((n) => LIGHT_KEY_ID_PREFIX + n), 'inclusion_26_1', 'non-inclusion_26_1'].filter((id) => ready.includes(id));
  // BullMQ and ioredis are loaded by this command only, not by every `refract` run
  const { startProverNode } = await import('../prover/run/bullmq.ts');
  const node = await startProverNode({
    redisUrl: opts.redisUrl,
    keysDir: keys.keysDir,
    threads: opts.threads,
    curve: parseChoice<CurveThreading>('--curve', opts.curve, ['auto', 'multi', 'single']),
    kernels: parseChoice<ProverKernels>('--kernels', opts.kernels, ['native', 'wasm']),
    backend: parseChoice<ProverBackendKind>('--backend', opts.backend, ['native', 'snarkjs']),
    tableMb: opts.tableMb,
    tableFiles: opts.tableFiles,
    queueName: opts.queue,
    lockDurationMs: opts.lockDurationMs,
    stalledIntervalMs: opts.stalledIntervalMs,
    warm,
    onTableLoad: (t) => logTableLoad(log, t),
    onEvent: (e) => {
      print({ event: e.type, ...e, type: undefined });
      if (e.type === 'failed') log.warn({ jobId: e.jobId, circuit: e.circuitId, code: e.code, retry: e.retry }, e.message);
      else log.debug({ jobId: e.jobId, circuit: e.circuitId }, e.type);
    },
  });
  const threads = node.pool.stats().size;
  log.info({ node: node.nodeId, threads, keysDir: keys.keysDir, ready: ready.length, warm }, 'prover node taking jobs');
  print({ event: 'ready', node: node.nodeId, threads });
  return node;
}

/**
 * A flag value that must be one of `allowed` (undefined passes through); throws
 * "`flag` must be a, b or c, got 'v'" otherwise (the CLI reports it).
 */
function parseChoice<T extends string>(flag: string, v: string | undefined, allowed: readonly T[]): T | undefined {
  if (v === undefined) return undefined;
  if ((allowed as readonly string[]).includes(v)) return v as T;
  throw new Error(`${flag} must be ${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}, got '${v}'`);
}
