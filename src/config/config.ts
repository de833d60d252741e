/**
 * Refract configuration: defaults < config file (JSON) < environment (REFRACT_*) < command-line flags.
 * One schema validates the merged result; an invalid value fails start-up with the key and reason.
 */
import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';

const treeEntry = z.object({
  tree: z.string(),
  queue: z.string(),
  type: z.enum(['StateV1', 'AddressV1', 'StateV2', 'AddressV2']),
  height: z.number().int(),
  rootHistoryCapacity: z.number().int(),
});

/** Values of `logFormat` / `REFRACT_LOG_FORMAT` / `--log-format`. */
export const LOG_FORMATS = ['auto', 'pretty', 'json'] as const;
/** A log format (src/log.ts). */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Upper bound of `minContextWaitMs`. */
export const MAX_MIN_CONTEXT_WAIT_MS = 60_000;
/** The message of an invalid `minContextWaitMs`, naming where it is set. */
function minContextWaitMessage(iss: { input?: unknown }): string {
  return `expected an integer from 0 to ${MAX_MIN_CONTEXT_WAIT_MS} ms (REFRACT_MIN_CONTEXT_WAIT_MS, --min-context-wait-ms, config minContextWaitMs), got ${typeof iss.input === 'string' ? JSON.stringify(iss.input) : String(iss.input)}`;
}

/** The validated configuration. */
export const configSchema = z
  .object({
    db: z.string().default('./data'),
    lmdbWritemap: z.boolean().default(true),
    rpcUrl: z.string().url().default('http://127.0.0.1:8899'),
    /**
     * Yellowstone gRPC endpoint (http(s)://host:port) to follow the chain with: Light transactions and
     * slot updates streamed, the RPC poller as fallback (src/ingest/sources/live.ts); its token comes
     * from REFRACT_GRPC_X_TOKEN only. Absent: the poller alone.
     */
    grpcUrl: z.string().url().optional(),
    host: z.string().default('0.0.0.0'),
    port: z.number().int().min(0).max(65535).default(8784),
    ingest: z.boolean().default(true),
    /** `refract start`: run the ingest loop on a worker thread (src/ingest/threads/ingestThread.ts); false = on the main thread. */
    ingestThread: z.boolean().default(true),
    /** Poll, decode and validate on a second thread while the ingest thread commits (src/ingest/threads/prepareThread.ts); absent = when the machine has more than two cores. */
    prepareThread: z.boolean().optional(),
    startSlot: z.number().int().min(0).optional(),
    /** `refract start`: seed the empty store from this snapshot first (file path or http(s) URL; src/commands/snapshot.ts). */
    snapshot: z.string().min(1).optional(),
    /**
     * Signature backfill (src/ingest/sources/backfill.ts): when the node's tip is at least this many
     * slots past where indexing would start (an empty store, or one after downtime), find the Light
     * transactions through getSignaturesForAddress and fetch only those; 0 = always block by block.
     */
    backfillThresholdSlots: z.number().int().min(0).default(5000),
    /** Backfill (and gap healing) requests per second at most; 0 = no cap (adaptive to 429 / Retry-After either way). */
    backfillRps: z.number().min(0).default(0),
    /** The provider bills each call of a JSON-RPC batch: backfillRps counts calls (a batch of 100 = 100), not HTTP requests. */
    backfillRpsPerCall: z.boolean().default(false),
    /** Backfill requests in flight at most. */
    backfillConcurrency: z.number().int().min(1).max(256).default(8),
    /** getTransaction requests per JSON-RPC batch (1 = no batches; providers allow up to 100). */
    backfillBatchSize: z.number().int().min(1).max(1000).default(100),
    /** Check every batch from the node against the trees' numbered changes; a gap holds ingest until healed (src/state/sequence.ts). */
    sequenceCheck: z.boolean().default(true),
    fetchConcurrency: z.number().int().min(1).max(500).default(20),
    maxBatchBlocks: z.number().int().min(1).max(10_000).default(100),
    keysDir: z.string().default('./keys'),
    prover: z.boolean().default(true),
    /** Prove with Light Protocol's own proving keys (`<keysDir>/light/`, converted from Light's CLI packages by `refract setup --light-keys`); missing ones are converted in the background. */
    lightKeys: z.boolean().default(true),
    /** With lightKeys: prove shapes Light ships no key for (or whose key is not ready) with Refract's own circuits — such proofs do NOT verify on chain. */
    ownCircuits: z.boolean().default(false),
    /** With lightKeys: where the background conversion takes Light's `.key` files (e.g. an installed Light CLI's `bin/proving-keys`); absent = the CLI packages from the npm registry. */
    lightKeysSource: z.string().min(1).optional(),
    proverThreads: z.number().int().min(1).max(256).optional(),
    proverCurve: z.enum(['auto', 'multi', 'single']).default('auto'),
    /** MSM and FFT kernels under snarkjs in the prover threads; absent = native when the addon is built. */
    proverKernels: z.enum(['native', 'wasm']).optional(),
    /** Groth16 prover in the prover threads: Refract's native C prover or snarkjs; absent = native when the addon is built. */
    proverBackend: z.enum(['native', 'snarkjs']).optional(),
    /** Native prover: fixed-base MSM tables for a key whose four tables fit this many MiB (all or none, once per process); absent = 96 (v1 circuits of up to 2 accounts or addresses, 1-account / 1-address v2 circuits). */
    proverTableMb: z.number().int().min(0).max(65536).optional(),
    /** Native prover: directory of the fixed-base tables' files (`<dir>/<circuit>.tables`), or `off` (built at every load, never written); absent = the keys directory. */
    proverTableFiles: z.string().min(1, 'a directory, or "off"').optional(),
    proverUrl: z.string().url().optional(),
    ptau: z.string().optional(),
    redisUrl: z.string().optional(),
    apiKeys: z.array(z.string().min(1)).default([]),
    /**
     * Default token bucket: per key once keys are configured, per client IP while the API is open;
     * `false` = none. Absent = none while no key is configured, 100/s burst 200 per key once keys are
     * (src/rpc/http/options.ts `resolveRateLimit`).
     */
    rateLimit: z.union([z.literal(false), z.object({ ratePerSecond: z.number().positive().finite(), burst: z.number().int().positive() }).strict()]).optional(),
    bodyLimitBytes: z.number().int().positive().default(1024 * 1024),
    /**
     * Answer JSON-RPC errors with HTTP 200 and the error in the body (default), as Photon does and as
     * JSON-RPC clients read them: `@lightprotocol/stateless.js` reads no body on a non-200 status and
     * shows only `HTTP error! status: N`. `false`: the statuses of docs/api.md#errors (401, 429, 503…).
     */
    httpErrorsAs200: z.boolean().default(true),
    corsOrigins: z.array(z.string().min(1)).default(['*']),
    healthMaxSlotLag: z.number().int().min(0).default(20),
    /** Longest wait of a request for its `minContextSlot` to be indexed, ms (src/rpc/slotWatcher.ts); 0 = never wait. */
    minContextWaitMs: z
      .number({ error: minContextWaitMessage })
      .int({ error: minContextWaitMessage })
      .min(0, { error: minContextWaitMessage })
      .max(MAX_MIN_CONTEXT_WAIT_MS, { error: minContextWaitMessage })
      .default(2000),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Log format (src/log.ts): `auto` = human-readable on a terminal, JSON otherwise; `pretty`; `json`. */
    logFormat: z.enum(LOG_FORMATS).default('auto'),
    trees: z.array(treeEntry).default([]),
    /** `refract start`: load trees from the chain (getProgramAccounts on the account-compression program) over `trees` (src/ingest/treeSync.ts). */
    treeSync: z.boolean().default(true),
    /** Keep only trees whose AccessMetadata.owner is this (base58); Photon's expected tree owner by default. */
    treeOwner: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'must be a base58 pubkey').default('24rt4RgeyjUCWGS2eF7L7gyNMuz6JWdqYpAvb1KRoHxs'),
    /** An unknown tree met during ingest that is not on chain is looked up again after this many seconds. */
    treeLookupTtlSeconds: z.number().int().min(0).default(600),
  })
  .strict();

/** Refract's configuration after merging and validation. */
export type Config = z.infer<typeof configSchema>;

/** Environment variables and the config keys they set. */
export const ENV_KEYS: Record<string, { key: keyof Config; type: 'string' | 'number' | 'boolean' | 'list' | 'rateLimit' }> = {
  REFRACT_DB: { key: 'db', type: 'string' },
  REFRACT_LMDB_WRITEMAP: { key: 'lmdbWritemap', type: 'boolean' },
  REFRACT_RPC_URL: { key: 'rpcUrl', type: 'string' },
  REFRACT_GRPC_URL: { key: 'grpcUrl', type: 'string' },
  REFRACT_SNAPSHOT: { key: 'snapshot', type: 'string' },
  REFRACT_HOST: { key: 'host', type: 'string' },
  REFRACT_PORT: { key: 'port', type: 'number' },
  REFRACT_KEYS_DIR: { key: 'keysDir', type: 'string' },
  REFRACT_PROVER_URL: { key: 'proverUrl', type: 'string' },
  REFRACT_LIGHT_KEYS: { key: 'lightKeys', type: 'boolean' },
  REFRACT_OWN_CIRCUITS: { key: 'ownCircuits', type: 'boolean' },
  REFRACT_LIGHT_KEYS_SOURCE: { key: 'lightKeysSource', type: 'string' },
  REFRACT_PROVER_THREADS: { key: 'proverThreads', type: 'number' },
  REFRACT_PROVER_CURVE: { key: 'proverCurve', type: 'string' },
  REFRACT_PROVER_KERNELS: { key: 'proverKernels', type: 'string' },
  REFRACT_PROVER_BACKEND: { key: 'proverBackend', type: 'string' },
  REFRACT_PROVER_TABLE_MB: { key: 'proverTableMb', type: 'number' },
  REFRACT_PROVER_TABLE_FILES: { key: 'proverTableFiles', type: 'string' },
  REFRACT_REDIS_URL: { key: 'redisUrl', type: 'string' },
  REDIS_URL: { key: 'redisUrl', type: 'string' },
  // The only place REFRACT_API_KEYS is read: the server and POST /prove get the keys from the config.
  REFRACT_API_KEYS: { key: 'apiKeys', type: 'list' },
  REFRACT_RATE_LIMIT: { key: 'rateLimit', type: 'rateLimit' },
  REFRACT_HTTP_ERRORS_AS_200: { key: 'httpErrorsAs200', type: 'boolean' },
  REFRACT_CORS_ORIGINS: { key: 'corsOrigins', type: 'list' },
  REFRACT_LOG_LEVEL: { key: 'logLevel', type: 'string' },
  REFRACT_LOG_FORMAT: { key: 'logFormat', type: 'string' },
  REFRACT_FETCH_CONCURRENCY: { key: 'fetchConcurrency', type: 'number' },
  REFRACT_BACKFILL_THRESHOLD_SLOTS: { key: 'backfillThresholdSlots', type: 'number' },
  REFRACT_BACKFILL_RPS: { key: 'backfillRps', type: 'number' },
  REFRACT_BACKFILL_RPS_PER_CALL: { key: 'backfillRpsPerCall', type: 'boolean' },
  REFRACT_BACKFILL_CONCURRENCY: { key: 'backfillConcurrency', type: 'number' },
  REFRACT_BACKFILL_BATCH_SIZE: { key: 'backfillBatchSize', type: 'number' },
  REFRACT_SEQUENCE_CHECK: { key: 'sequenceCheck', type: 'boolean' },
  REFRACT_INGEST_THREAD: { key: 'ingestThread', type: 'boolean' },
  REFRACT_PREPARE_THREAD: { key: 'prepareThread', type: 'boolean' },
  REFRACT_TREE_SYNC: { key: 'treeSync', type: 'boolean' },
  REFRACT_TREE_OWNER: { key: 'treeOwner', type: 'string' },
  REFRACT_TREE_LOOKUP_TTL_SECONDS: { key: 'treeLookupTtlSeconds', type: 'number' },
  REFRACT_MIN_CONTEXT_WAIT_MS: { key: 'minContextWaitMs', type: 'number' },
};

/**
 * Environment variables read outside `loadConfig`, name → what it does (docs/operations.md has each).
 * They are process-wide: worker threads and `refract setup` children share the environment, so a
 * switch a thread needs before any config reaches it lives here; secrets that must never be config
 * keys or flags (REFRACT_GRPC_X_TOKEN) too. {@link envValue} is their only reader: config.ts is the
 * only module of src/ and workers/ that touches `process.env` (test/architecture.env.test.ts).
 */
export const ENV_SWITCHES = {
  REFRACT_BASE58: '`js`: the JavaScript base58 decoder instead of the native addon (benchmarks, tests)',
  REFRACT_POSEIDON: '`js`: the JavaScript Poseidon instead of the native addon (benchmarks, tests)',
  REFRACT_FAST_LANE: '`0`: POST / through fastify\'s whole pipeline instead of the hot lane',
  REFRACT_LIGHT_CACHE: "where `refract setup --light-keys` keeps the npm packages it fetched (default <keys>/light/cache)",
  REFRACT_LIGHT_TABLE_MB: "fixed-base table budget of each of Light's keys in a prover thread, MiB",
  REFRACT_PROVER_BACKEND: 'prover threads: native or snarkjs (the config key proverBackend, for threads and `refract prover`)',
  REFRACT_PROVER_KERNELS: 'prover threads: native or wasm MSM/FFT kernels under snarkjs (config proverKernels)',
  REFRACT_PROVER_TABLE_MB: 'prover threads: fixed-base table budget per key, MiB (config proverTableMb)',
  REFRACT_PROVER_TABLE_FILES: 'prover threads: where table files are kept, or `off` (config proverTableFiles)',
  REFRACT_NODE_NAME: 'the `node` label of refract_proofs_by_node_total (default: the host name)',
  REFRACT_DEV_PTAU: 'an INSECURE development powers-of-tau file used when no --ptau is given',
  REFRACT_PTAU_URL: 'base URL of the public ceremony ptau files, or `off`',
  REFRACT_GRPC_X_TOKEN: 'the Yellowstone gRPC x-token (a secret: never a flag or config key)',
  REFRACT_LOG_FORMAT: 'auto, pretty or json (every logger of the process, its threads and children)',
  REFRACT_LOG_LEVEL: 'pino level of loggers made before the config is read (threads, children)',
  REFRACT_LMDB_WRITEMAP: '`0`: LMDB without the write map (also for `refract index`)',
  REFRACT_REDIS_URL: 'Redis for `refract prover` (also the config key redisUrl of `refract start`)',
  REDIS_URL: 'Redis for `refract prover` when REFRACT_REDIS_URL is unset',
} as const;
/** A name of {@link ENV_SWITCHES}. */
export type EnvSwitch = keyof typeof ENV_SWITCHES;
/** An environment: this process's, or a test's record. */
export type Env = Record<string, string | undefined>;

/** The value of environment switch `name` in `env` (default: this process's environment), or undefined when unset. */
export function envValue(name: EnvSwitch, env: Env = process.env): string | undefined {
  return env[name];
}

/**
 * The environment for a child process: a copy of this process's, without NODE_OPTIONS (a test
 * runner's loader must not reach `refract setup` or circom), with `extra` set on top.
 */
export function childEnv(extra: Env = {}, env: Env = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  delete out.NODE_OPTIONS;
  return Object.assign(out, extra);
}

/** Sets REFRACT_LOG_FORMAT for this process, its threads and children (`--log-format`). */
export function setLogFormat(format: string): void {
  process.env.REFRACT_LOG_FORMAT = format;
}

/**
 * The Yellowstone gRPC `x-token` (REFRACT_GRPC_X_TOKEN), or undefined when unset or empty: a secret,
 * so an environment variable only (never a config key, flag or log field). `refract start` sends it;
 * `refract simulate --grpc-port` requires it of clients.
 */
export function grpcXToken(env: Env = process.env): string | undefined {
  return envValue('REFRACT_GRPC_X_TOKEN', env) || undefined;
}

/**
 * The log format every logger of the process uses (src/log.ts), from REFRACT_LOG_FORMAT: `auto` when
 * unset or empty. Read here, not through `loadConfig`, because loggers exist before the config (and in
 * worker threads and `refract setup` children); `--log-format` sets the variable for all of them.
 * Throws Error naming the variable for an unknown value.
 */
export function logFormat(env: Env = process.env): LogFormat {
  const v = envValue('REFRACT_LOG_FORMAT', env)?.trim().toLowerCase();
  if (!v) return 'auto';
  if (!(LOG_FORMATS as readonly string[]).includes(v)) throw new Error(`REFRACT_LOG_FORMAT: expected ${LOG_FORMATS.join(', ')}, got ${JSON.stringify(env.REFRACT_LOG_FORMAT)}`);
  return v as LogFormat;
}

const ENV_TRUE = new Set(['1', 'true', 'yes', 'on']);
const ENV_FALSE = new Set(['0', 'false', 'no', 'off']);

/**
 * Reads a boolean environment variable: 1/true/yes/on and 0/false/no/off (any case); unset or empty →
 * undefined. Throws Error naming the variable for any other value, so a typo cannot silently flip a
 * switch.
 */
export function parseEnvBoolean(name: string, v: string | undefined): boolean | undefined {
  if (v === undefined || v.trim() === '') return undefined;
  const t = v.trim().toLowerCase();
  if (ENV_TRUE.has(t)) return true;
  if (ENV_FALSE.has(t)) return false;
  throw new Error(`${name}: expected 1/true/yes/on or 0/false/no/off, got ${JSON.stringify(v)}`);
}

/**
 * A comma-separated list as environment variables hold it: entries trimmed, blank ones dropped;
 * `none` (any case) is the empty list (an empty variable means "not set" and is skipped before this).
 * Throws Error naming the variable when it holds only separators or blanks (`","`, `" "`): for
 * `REFRACT_API_KEYS` that would silently open the API, so the empty list must be asked for as `none`.
 */
export function parseEnvList(v: string, name = 'list'): string[] {
  if (v.trim().toLowerCase() === 'none') return [];
  const items = v.split(',').map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) throw new Error(`${name}: ${JSON.stringify(v)} lists nothing; write none for the empty list`);
  return items;
}

/**
 * Parses a rate-limit setting as written in `REFRACT_RATE_LIMIT` or `--rate-limit`: `off` (no limit),
 * or `<rps>[,<burst>]` — sustained requests per second (a positive number, fractions allowed) and
 * the bucket size (a positive integer; default 2 × rps rounded up). Throws Error naming `name`
 * (the variable or flag) and saying why for anything else.
 */
export function parseRateLimit(name: string, v: string): { ratePerSecond: number; burst: number } | false {
  const t = v.trim().toLowerCase();
  const usage = 'expected off or <requests per second>[,<burst>], e.g. 100,200';
  if (t === 'off') return false;
  const parts = t.split(',').map((s) => s.trim());
  if (parts.length > 2) throw new Error(`${name}: ${usage}, got ${JSON.stringify(v)}`);
  const number = (s: string) => (/^(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/.test(s) ? Number(s) : NaN);
  const ratePerSecond = number(parts[0]!);
  if (!(ratePerSecond > 0) || !Number.isFinite(ratePerSecond)) {
    throw new Error(`${name}: requests per second must be a positive number (${usage}), got ${JSON.stringify(parts[0])}`);
  }
  if (parts.length === 1) return { ratePerSecond, burst: Math.max(1, Math.ceil(2 * ratePerSecond)) };
  const burst = number(parts[1]!);
  if (!Number.isSafeInteger(burst) || burst < 1) throw new Error(`${name}: burst must be a positive integer (${usage}), got ${JSON.stringify(parts[1])}`);
  return { ratePerSecond, burst };
}

function fromEnv(env: Record<string, string | undefined>): Partial<Record<keyof Config, unknown>> {
  const out: Partial<Record<keyof Config, unknown>> = {};
  for (const [name, { key, type }] of Object.entries(ENV_KEYS)) {
    const v = env[name];
    if (v === undefined || v === '') continue;
    if (type === 'number') out[key] = Number(v);
    else if (type === 'boolean') out[key] = parseEnvBoolean(name, v);
    else if (type === 'rateLimit') out[key] = parseRateLimit(name, v);
    else if (type === 'list') out[key] = parseEnvList(v, name);
    else out[key] = v;
  }
  return out;
}

/**
 * Loads the configuration. `file` (JSON) is optional; when absent, `config/refract.json` is read if it exists.
 * `flags` are command-line values already parsed (undefined entries are ignored).
 * Throws Error listing every invalid key with its reason.
 */
export function loadConfig(opts: { file?: string; env?: Record<string, string | undefined>; flags?: Partial<Record<keyof Config, unknown>> } = {}): Config {
  const path = opts.file ?? (existsSync('config/refract.json') ? 'config/refract.json' : undefined);
  let fileValues: Record<string, unknown> = {};
  if (path) {
    try {
      fileValues = JSON.parse(readFileSync(path, 'utf8'));
    } catch (err) {
      throw new Error(`config file ${path}: ${(err as Error).message}`);
    }
  }
  const flags = Object.fromEntries(Object.entries(opts.flags ?? {}).filter(([, v]) => v !== undefined));
  const merged = { ...fileValues, ...fromEnv(opts.env ?? process.env), ...flags };
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) throw new Error(`invalid configuration: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}
