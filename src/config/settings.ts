/**
 * Every setting of `refract start`, declared once (issue #34, point 2): its schema (type, bounds and
 * default), its environment variables, its command-line flag, its help line and its documentation.
 * Derived from this table, nowhere written again:
 * - the zod schema `configSchema` and the environment mapping `ENV_KEYS` (src/config/config.ts);
 * - the commander options and the flags → config mapping (src/commands/program.ts `settingOption`,
 *   `settingFlags`), their `--help` lines with the default and the variables;
 * - the table of docs/operations.md#the-table (src/commands/settingsDoc.ts; `npm run docs:settings`
 *   writes it, test/config.settings.test.ts fails when it is stale).
 * Declarative only: no parsing of values here (config.ts reads the environment, commander the flags).
 */
import { z } from 'zod';

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

const treeEntry = z.object({
  tree: z.string(),
  queue: z.string(),
  type: z.enum(['StateV1', 'AddressV1', 'StateV2', 'AddressV2']),
  height: z.number().int(),
  rootHistoryCapacity: z.number().int(),
});

/** How an environment variable's text becomes a value (config.ts `fromEnv`). */
export type EnvType = 'string' | 'number' | 'boolean' | 'list' | 'rateLimit';
/**
 * How a flag's text becomes a value (src/commands/program.ts): `int` = integer ≥ 0, `positive` =
 * integer 1..2^31−1, `number` = finite number ≥ 0, `rateLimit` = `off` or `<rps>[,<burst>]`; absent =
 * the text as is (the schema checks it). A bad value is a usage error naming the flag.
 */
export type FlagValue = 'int' | 'positive' | 'number' | 'rateLimit';
/** The sections of the documentation table, in order. */
export const SETTING_SECTIONS = ['Store and ingest', 'HTTP API', 'Prover', 'Redis and the proof queue'] as const;

/** One setting. `S` is its zod schema (with its default, if any). */
export interface Setting<S extends z.ZodType = z.ZodType> {
  readonly schema: S;
  /** Environment variables that set it, the first set one wins; absent = none. */
  readonly env?: readonly string[];
  /** How the variables are read (default `string`). */
  readonly envType?: EnvType;
  /**
   * The flag of `refract start`, in commander's syntax: `--db <dir>`, a switch `--own-circuits`, or a
   * negation `--no-ingest` (which can only turn the setting off). Absent = no flag.
   */
  readonly flag?: string;
  /** How the flag's value is parsed. */
  readonly flagValue?: FlagValue;
  /** commander choices of the flag (a usage error names the allowed values). */
  readonly choices?: readonly string[];
  /** Other commands that take the same flag: `prover` and `setup` drop a `--prover-` prefix (`--threads`). */
  readonly alsoOn?: readonly ('index' | 'setup' | 'prover' | 'simulate')[];
  /** The `--help` line (the default and the variables are appended). */
  readonly help: string;
  /** The `--help` line on another command (`alsoOn`) where the flag does something narrower. */
  readonly helpOn?: Partial<Record<'index' | 'setup' | 'prover' | 'simulate', string>>;
  /** The default in words, where the schema's value does not say it (absent, or computed). */
  readonly defaultText?: string;
  /** The documentation's meaning column (markdown); absent = `help`. */
  readonly doc?: string;
  readonly section: (typeof SETTING_SECTIONS)[number];
}
const setting = <S extends z.ZodType>(s: Setting<S>): Setting<S> => s;

const PROVER_PREFIX = 'prover-';
/** The prefix of `refract start`'s prover-thread flags, which `refract prover` and `setup` take without it. */
export { PROVER_PREFIX };

/** The settings, in documentation order. */
export const SETTINGS = {
  db: setting({
    schema: z.string().default('./data'),
    env: ['REFRACT_DB'],
    flag: '--db <dir>',
    alsoOn: ['index'],
    help: 'LMDB directory',
    doc: 'LMDB directory. `--db` is always a directory, even with a dot in its name',
    section: 'Store and ingest',
  }),
  lmdbWritemap: setting({
    schema: z.boolean().default(true),
    env: ['REFRACT_LMDB_WRITEMAP'],
    envType: 'boolean',
    help: "write through LMDB's write map",
    doc: "write through LMDB's write map (also `refract index`): ≈1.8× less ingest CPU on a 1M-account store. The data file's apparent size is the map size (64 GiB, sparse). A full disk kills the process (SIGBUS) instead of failing the batch, with nothing committed lost. `false` / `0` turns it off",
    section: 'Store and ingest',
  }),
  rpcUrl: setting({
    schema: z.string().url().default('http://127.0.0.1:8899'),
    env: ['REFRACT_RPC_URL'],
    flag: '--rpc-url <url>',
    help: 'Solana JSON-RPC URL',
    doc: 'Solana JSON-RPC to poll. A `user:password@` in it is sent as HTTP Basic auth (fetch refuses such URLs). Messages, `/health` and logs show only its scheme, host and port',
    section: 'Store and ingest',
  }),
  ingest: setting({
    schema: z.boolean().default(true),
    flag: '--no-ingest',
    help: 'serve an existing store without polling',
    doc: 'poll the RPC; off = serve an existing store',
    section: 'Store and ingest',
  }),
  /** `refract start`: run the ingest loop on a worker thread (src/ingest/threads/ingestThread.ts); false = on the main thread. */
  ingestThread: setting({
    schema: z.boolean().default(true),
    env: ['REFRACT_INGEST_THREAD'],
    envType: 'boolean',
    help: 'index on a worker thread',
    doc: "`refract start` indexes on its own worker thread, so a batch's write transaction never holds up API requests; `false` / `0` runs the loop on the main thread",
    section: 'Store and ingest',
  }),
  /** Poll, decode and validate on a second thread while the ingest thread commits (src/ingest/threads/prepareThread.ts); absent = when the machine has more than two cores. */
  prepareThread: setting({
    schema: z.boolean().optional(),
    env: ['REFRACT_PREPARE_THREAD'],
    envType: 'boolean',
    help: 'poll, decode and validate on a second thread',
    defaultText: 'on with > 2 cores',
    doc: "poll, decode and validate batches on a second thread while the loop's thread commits the previous one (faster catch-up for ≈0.5 more core; on 2 cores under API load it gained nothing, the cores being full)",
    section: 'Store and ingest',
  }),
  startSlot: setting({
    schema: z.number().int().min(0).optional(),
    flag: '--start-slot <n>',
    flagValue: 'int',
    help: 'first slot to index when the store is behind it',
    defaultText: "the store's last slot + 1; empty: after Light's start slot on mainnet-beta and devnet, else the node's first block",
    doc: 'where an empty (or older) store starts: [where indexing starts](#where-indexing-starts)',
    section: 'Store and ingest',
  }),
  /**
   * Signature backfill (src/ingest/sources/backfill.ts): when the node's tip is at least this many
   * slots past where indexing would start (an empty store, or one after downtime), find the Light
   * transactions through getSignaturesForAddress and fetch only those; 0 = always block by block.
   */
  backfillThresholdSlots: setting({
    schema: z.number().int().min(0).default(5000),
    env: ['REFRACT_BACKFILL_THRESHOLD_SLOTS'],
    envType: 'number',
    flag: '--backfill-threshold-slots <n>',
    flagValue: 'int',
    help: "signature backfill when the node's tip is at least this many slots past where indexing would start (an empty store, or after downtime): list the account-compression program's signatures and fetch only the Light transactions; 0 = always block by block",
    doc: "signature backfill when the node's tip is at least this many slots past where indexing would start (an empty store, or after downtime); `0` = never, block by block: [backfill](#signature-backfill)",
    section: 'Store and ingest',
  }),
  /** Backfill (and gap healing) requests per second at most; 0 = no cap (adaptive to 429 / Retry-After either way). */
  backfillRps: setting({
    schema: z.number().min(0).default(0),
    env: ['REFRACT_BACKFILL_RPS'],
    envType: 'number',
    flag: '--backfill-rps <n>',
    flagValue: 'number',
    help: "backfill requests per second at most, for a hosted RPC's rate limit; 0 = no cap; 429 / Retry-After slow it down either way",
    doc: 'backfill and gap-healing requests per second at most (a JSON-RPC batch counts once; fractions allowed); `0` = no cap; 429 / `Retry-After` slow it down either way',
    section: 'Store and ingest',
  }),
  /** The provider bills each call of a JSON-RPC batch: backfillRps counts calls (a batch of 100 = 100), not HTTP requests. */
  backfillRpsPerCall: setting({
    schema: z.boolean().default(false),
    env: ['REFRACT_BACKFILL_RPS_PER_CALL'],
    envType: 'boolean',
    flag: '--backfill-rps-per-call',
    help: 'the provider bills each call of a JSON-RPC batch: --backfill-rps counts calls (a batch of 100 = 100), not HTTP requests',
    doc: '`backfillRps` counts each call of a JSON-RPC batch (a batch of 100 = 100), for providers that bill per call',
    section: 'Store and ingest',
  }),
  backfillConcurrency: setting({
    schema: z.number().int().min(1).max(256).default(8),
    env: ['REFRACT_BACKFILL_CONCURRENCY'],
    envType: 'number',
    flag: '--backfill-concurrency <n>',
    flagValue: 'positive',
    help: 'backfill requests in flight at most, 1–256',
    doc: 'backfill and gap-healing requests in flight, 1–256',
    section: 'Store and ingest',
  }),
  backfillBatchSize: setting({
    schema: z.number().int().min(1).max(1000).default(100),
    env: ['REFRACT_BACKFILL_BATCH_SIZE'],
    envType: 'number',
    flag: '--backfill-batch-size <n>',
    flagValue: 'positive',
    help: 'getTransaction requests per JSON-RPC batch, 1–1000; 1 = no batches',
    section: 'Store and ingest',
  }),
  /** Check every batch from the node against the trees' numbered changes; a gap holds ingest until healed (src/ingest/guard/guard.ts). */
  sequenceCheck: setting({
    schema: z.boolean().default(true),
    env: ['REFRACT_SEQUENCE_CHECK'],
    envType: 'boolean',
    flag: '--no-sequence-check',
    help: "do not check batches against the trees' numbered changes (a gap is then indexed past, only logged)",
    doc: "check every batch from the node against the trees' numbered changes; a gap holds ingest until the missing transactions are found: [sequence check](#nothing-missed-the-tree-sequence-check). Off: gaps are indexed past, logged",
    section: 'Store and ingest',
  }),
  /**
   * Yellowstone gRPC endpoint (http(s)://host:port) to follow the chain with: Light transactions and
   * slot updates streamed, the RPC poller as fallback (src/ingest/sources/live.ts); its token comes
   * from REFRACT_GRPC_X_TOKEN only. Absent: the poller alone.
   */
  grpcUrl: setting({
    schema: z.string().url().optional(),
    env: ['REFRACT_GRPC_URL'],
    flag: '--grpc-url <url>',
    help: 'Yellowstone gRPC endpoint to follow the chain with (Light transactions and slots streamed; the RPC poller as fallback); token from $REFRACT_GRPC_X_TOKEN',
    defaultText: "none, or the built-in simulator's",
    doc: 'Yellowstone gRPC endpoint (`http(s)://host:port`) to follow the chain with, the RPC poller as fallback: [gRPC](#yellowstone-grpc); its token from `REFRACT_GRPC_X_TOKEN`',
    section: 'Store and ingest',
  }),
  /** `refract start`: seed the empty store from this snapshot first (file path or http(s) URL; src/commands/snapshot.ts). */
  snapshot: setting({
    schema: z.string().min(1).optional(),
    env: ['REFRACT_SNAPSHOT'],
    flag: '--snapshot <file|url>',
    help: "seed the empty --db from a snapshot first (a file of `refract snapshot create`, or a peer's http(s)://…/snapshot URL), checked against the node at --rpc-url; then index on from its last block",
    doc: "restore an empty `--db` from a snapshot file or a peer's `GET /snapshot` URL first, then index on: [snapshots](#snapshots)",
    section: 'Store and ingest',
  }),
  fetchConcurrency: setting({
    schema: z.number().int().min(1).max(500).default(20),
    env: ['REFRACT_FETCH_CONCURRENCY'],
    envType: 'number',
    help: 'getBlock calls in flight, 1–500',
    section: 'Store and ingest',
  }),
  maxBatchBlocks: setting({
    schema: z.number().int().min(1).max(10_000).default(100),
    help: 'blocks per LMDB write transaction, 1–10,000',
    doc: 'blocks per LMDB write transaction, 1–10,000. While catching up, ready blocks wait up to 100 ms for the next one to fill a batch; at the tip each block commits as soon as it is ready',
    section: 'Store and ingest',
  }),
  trees: setting({
    schema: z.array(treeEntry).default([]),
    help: 'extra trees',
    defaultText: "[] (plus Light's trees from config/trees.json)",
    doc: 'extra trees `{tree, queue, type, height, rootHistoryCapacity}`, `type` one of `StateV1`, `AddressV1`, `StateV2`, `AddressV2`',
    section: 'Store and ingest',
  }),
  /** `refract start`: load trees from the chain (getProgramAccounts on the account-compression program) over `trees` (src/ingest/treeSync.ts). */
  treeSync: setting({
    schema: z.boolean().default(true),
    env: ['REFRACT_TREE_SYNC'],
    envType: 'boolean',
    flag: '--no-tree-sync',
    help: 'take trees from config/trees.json and config `trees` only (no getProgramAccounts at start)',
    doc: 'load the trees from the chain at start: [trees](#which-trees)',
    section: 'Store and ingest',
  }),
  /** Keep only trees whose AccessMetadata.owner is this (base58); Photon's expected tree owner by default. */
  treeOwner: setting({
    schema: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'must be a base58 pubkey').default('24rt4RgeyjUCWGS2eF7L7gyNMuz6JWdqYpAvb1KRoHxs'),
    env: ['REFRACT_TREE_OWNER'],
    flag: '--tree-owner <pubkey>',
    help: 'keep only trees of this owner',
    doc: "keep only trees whose access-metadata owner is this (Photon's expected tree owner: Light's trees on mainnet, devnet and the local CLI validator)",
    section: 'Store and ingest',
  }),
  /** An unknown tree met during ingest that is not on chain is looked up again after this many seconds. */
  treeLookupTtlSeconds: setting({
    schema: z.number().int().min(0).default(600),
    env: ['REFRACT_TREE_LOOKUP_TTL_SECONDS'],
    envType: 'number',
    help: 'seconds before a tree lookup that missed is asked again',
    doc: 'a tree met during ingest that the registry does not know is looked up with `getAccountInfo` (a queue leads to its tree) before its outputs are skipped; a miss (no account, not a tree, another owner, an RPC error) is asked again only after this many seconds',
    section: 'Store and ingest',
  }),

  host: setting({
    schema: z.string().default('0.0.0.0'),
    env: ['REFRACT_HOST'],
    flag: '--host <host>',
    help: 'HTTP bind address',
    section: 'HTTP API',
  }),
  port: setting({
    schema: z.number().int().min(0).max(65535).default(8784),
    env: ['REFRACT_PORT'],
    envType: 'number',
    flag: '--port <n>',
    flagValue: 'int',
    help: 'HTTP port',
    section: 'HTTP API',
  }),
  apiKeys: setting({
    schema: z.array(z.string().min(1)).default([]),
    env: ['REFRACT_API_KEYS'],
    envType: 'list',
    help: 'API keys for the JSON-RPC API and POST /prove',
    defaultText: 'none: open and unlimited, logged once at start',
    doc: "API keys for the JSON-RPC API and `POST /prove`: [API keys](#api-keys-and-rate-limits). The variable (comma-separated; `none` = the empty list) replaces the config file's list (read once, by the config loader)",
    section: 'HTTP API',
  }),
  /**
   * Default token bucket: per key once keys are configured, per client IP while the API is open;
   * `false` = none. Absent = none while no key is configured, 100/s burst 200 per key once keys are
   * (src/rpc/http/options.ts `resolveRateLimit`).
   */
  rateLimit: setting({
    schema: z.union([z.literal(false), z.object({ ratePerSecond: z.number().positive().finite(), burst: z.number().int().positive() }).strict()]).optional(),
    env: ['REFRACT_RATE_LIMIT'],
    envType: 'rateLimit',
    flag: '--rate-limit <spec>',
    flagValue: 'rateLimit',
    help: 'off, or <rps>[,<burst>] (burst default 2×rps): per API key, or per client IP while no key is configured',
    defaultText: 'off while no key is configured, 100,200 per key once keys are',
    doc: 'token bucket per key, or per client IP while no key is configured: `off` or `<rps>[,<burst>]`, burst defaults to 2×rps; file form `{"ratePerSecond": 100, "burst": 200}` or `false`',
    section: 'HTTP API',
  }),
  bodyLimitBytes: setting({
    schema: z.number().int().positive().default(1024 * 1024),
    help: 'request body limit, bytes',
    doc: 'request body limit, bytes: [HTTP limits](#http-limits-and-cors)',
    section: 'HTTP API',
  }),
  /**
   * Answer JSON-RPC errors with HTTP 200 and the error in the body (default), as Photon does and as
   * JSON-RPC clients read them: `@lightprotocol/stateless.js` reads no body on a non-200 status and
   * shows only `HTTP error! status: N`. `false`: the statuses of docs/api.md#errors (401, 429, 503…).
   */
  httpErrorsAs200: setting({
    schema: z.boolean().default(true),
    env: ['REFRACT_HTTP_ERRORS_AS_200'],
    envType: 'boolean',
    help: 'JSON-RPC errors with HTTP 200 and the error in the body',
    doc: 'JSON-RPC errors with HTTP 200 and the error in the body, which JSON-RPC clients such as `@lightprotocol/stateless.js` read; `false`: HTTP statuses 400/401/404/429/503… ([api.md](api.md#errors))',
    section: 'HTTP API',
  }),
  corsOrigins: setting({
    schema: z.array(z.string().min(1)).default(['*']),
    env: ['REFRACT_CORS_ORIGINS'],
    envType: 'list',
    help: 'origins a browser page may call the API from',
    doc: 'origins a browser page may call the API and `/prove` from (`*`: any, as Photon); the variable is comma-separated, `none` = the empty list: [CORS](#http-limits-and-cors)',
    section: 'HTTP API',
  }),
  healthMaxSlotLag: setting({
    schema: z.number().int().min(0).default(20),
    help: 'getIndexerHealth fails beyond this lag, slots',
    section: 'HTTP API',
  }),
  /** Longest wait of a request for its `minContextSlot` to be indexed, ms (src/rpc/slotWatcher.ts); 0 = never wait. */
  minContextWaitMs: setting({
    schema: z
      .number({ error: minContextWaitMessage })
      .int({ error: minContextWaitMessage })
      .min(0, { error: minContextWaitMessage })
      .max(MAX_MIN_CONTEXT_WAIT_MS, { error: minContextWaitMessage })
      .default(2000),
    env: ['REFRACT_MIN_CONTEXT_WAIT_MS'],
    envType: 'number',
    flag: '--min-context-wait-ms <n>',
    flagValue: 'int',
    help: `longest wait of a request for its minContextSlot to be indexed, 0..${MAX_MIN_CONTEXT_WAIT_MS} ms`,
    doc: "longest wait of a request for its `minContextSlot` to be indexed, 0–60,000 ms (a request's `maxWaitMs` can only shorten it); `0` = never wait: [read-your-writes](api.md#read-your-writes-mincontextslot)",
    section: 'HTTP API',
  }),
  logLevel: setting({
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    env: ['REFRACT_LOG_LEVEL'],
    flag: '--log-level <level>',
    alsoOn: ['prover'],
    help: 'fatal|error|warn|info|debug|trace|silent',
    doc: 'pino level `fatal` … `trace`, `silent`; logs go to stderr. The variable serves every command',
    section: 'HTTP API',
  }),
  /** Log format (src/log.ts): `auto` = human-readable on a terminal, JSON otherwise; `pretty`; `json`. */
  logFormat: setting({
    schema: z.enum(LOG_FORMATS).default('auto'),
    env: ['REFRACT_LOG_FORMAT'],
    flag: '--log-format <format>',
    choices: LOG_FORMATS,
    alsoOn: ['prover', 'simulate'],
    help: 'auto (human-readable on a terminal, JSON otherwise), pretty or json',
    doc: '`auto`: human-readable lines (pino-pretty) when stderr is a terminal, JSON lines otherwise; `pretty`; `json`. The variable (which the flag sets) serves every command, its threads and `refract setup` children',
    section: 'HTTP API',
  }),

  prover: setting({
    schema: z.boolean().default(true),
    flag: '--no-prover',
    help: 'no validity proofs (getValidityProof answers "Prover not available")',
    doc: 'serve validity proofs (off: `getValidityProof` answers `Prover not available`)',
    section: 'Prover',
  }),
  /** Prove with Light Protocol's own proving keys (`<keysDir>/light/`, converted from Light's CLI packages by `refract setup --light-keys`); missing ones are converted in the background. */
  lightKeys: setting({
    schema: z.boolean().default(true),
    env: ['REFRACT_LIGHT_KEYS'],
    envType: 'boolean',
    flag: '--no-light-keys',
    help: "prove with Refract's own circuit keys only (their proofs do NOT verify on chain; default: Light's keys, converted in the background)",
    doc: "prove with Light Protocol's own proving keys (`<keys>/light/*.lkr`, converted from the `@lightprotocol/zk-compression-cli` 0.27.0 / 0.18.0 packages; missing ones are converted in the background): proofs Light's on-chain verifier accepts. Off: Refract's own circuits only (their proofs do not verify on chain)",
    section: 'Prover',
  }),
  /** With lightKeys: prove shapes Light ships no key for (or whose key is not ready) with Refract's own circuits — such proofs do NOT verify on chain. */
  ownCircuits: setting({
    schema: z.boolean().default(false),
    env: ['REFRACT_OWN_CIRCUITS'],
    envType: 'boolean',
    flag: '--own-circuits',
    help: "with Light's keys: prove shapes Light ships no key for with Refract's own circuits (marked: such proofs do NOT verify on chain)",
    doc: "with `lightKeys`: prove shapes Light ships no key for (or whose key is not converted yet) with Refract's own circuits; such answers carry `X-Refract-Warning` on `/prove`, a warning in the log and count in `refract_proofs_own_circuit_total`: **they do not verify on chain**",
    section: 'Prover',
  }),
  /** With lightKeys: where the background conversion takes Light's `.key` files (e.g. an installed Light CLI's `bin/proving-keys`); absent = the CLI packages from the npm registry. */
  lightKeysSource: setting({
    schema: z.string().min(1).optional(),
    env: ['REFRACT_LIGHT_KEYS_SOURCE'],
    flag: '--light-keys-source <dir>',
    help: "the background conversion takes Light's .key files from DIR (e.g. an installed Light CLI's bin/proving-keys) instead of fetching the CLI packages from the npm registry",
    doc: "with `lightKeys`: the background conversion takes Light's `.key` files from DIR (e.g. an installed Light CLI's `bin/proving-keys`, offline) instead of fetching the CLI packages; keys DIR lacks stay missing (`/health` `prover.lightKeys.missing`)",
    section: 'Prover',
  }),
  keysDir: setting({
    schema: z.string().default('./keys'),
    env: ['REFRACT_KEYS_DIR'],
    flag: '--keys <dir>',
    alsoOn: ['setup', 'prover'],
    help: 'proving keys directory (refract start builds missing ones in the background)',
    helpOn: { setup: 'keys directory', prover: 'proving keys directory (the same keys as the API server)' },
    doc: 'proving keys (`refract start` builds missing ones in the background) and, unless `proverTableFiles` says otherwise, the native prover\'s table files `<circuit>.tables` (as much disk as the tables: 343 MB for the six warmed circuits)',
    section: 'Prover',
  }),
  ptau: setting({
    schema: z.string().optional(),
    flag: '--ptau <file>',
    alsoOn: ['setup'],
    help: 'powers of tau (prepared, phase 2) for building missing keys',
    defaultText: 'the INSECURE dev ptau if present, else the public Hermez file (downloaded from $REFRACT_PTAU_URL, verified), else a generated INSECURE one',
    doc: 'powers of tau for building keys: [keys and ceremonies](prover.md#keys-and-the-powers-of-tau). The public file is `powersOfTau28_hez_final_16.ptau`, BLAKE2b-512 verified and cached in `<keys>/ptau/`',
    section: 'Prover',
  }),
  proverThreads: setting({
    schema: z.number().int().min(1).max(256).optional(),
    env: ['REFRACT_PROVER_THREADS'],
    envType: 'number',
    flag: '--prover-threads <n>',
    flagValue: 'positive',
    alsoOn: ['prover'],
    help: 'prover threads = proofs in flight at once, 1–256',
    defaultText: 'cores',
    doc: 'prover worker threads (= concurrent jobs on a prover node), 1–256',
    section: 'Prover',
  }),
  proverCurve: setting({
    schema: z.enum(['auto', 'multi', 'single']).default('auto'),
    env: ['REFRACT_PROVER_CURVE'],
    flag: '--prover-curve <kind>',
    alsoOn: ['prover'],
    help: 'auto|multi|single: multi- or single-threaded curves in the prover threads; auto = multi on ≤ 4 cores',
    doc: '`multi` / `single`: ffjavascript curves of the prover threads; `auto` = single-threaded with the native kernels; with the wasm ones multi-threaded on ≤ 4 cores, single-threaded above',
    section: 'Prover',
  }),
  /** MSM and FFT kernels under snarkjs in the prover threads; absent = native when the addon is built. */
  proverKernels: setting({
    schema: z.enum(['native', 'wasm']).optional(),
    env: ['REFRACT_PROVER_KERNELS'],
    flag: '--prover-kernels <kind>',
    alsoOn: ['prover'],
    help: 'native|wasm: MSM and FFT kernels under snarkjs in the prover threads',
    defaultText: 'native when the addon is built, else wasm',
    doc: "arithmetic kernels under snarkjs (MSM, FFT): Refract's native ones or ffjavascript's wasm",
    section: 'Prover',
  }),
  /** Groth16 prover in the prover threads: Refract's native C prover or snarkjs; absent = native when the addon is built. */
  proverBackend: setting({
    schema: z.enum(['native', 'snarkjs']).optional(),
    env: ['REFRACT_PROVER_BACKEND'],
    flag: '--prover-backend <kind>',
    alsoOn: ['prover'],
    help: "native|snarkjs: Groth16 prover in the prover threads, Refract's C prover or snarkjs (every proof is verified either way)",
    defaultText: 'native when the addon is built, else snarkjs',
    doc: "Groth16 prover in the prover threads: Refract's C prover and verifier, or snarkjs' `groth16.prove` and `groth16.verify` (every proof is verified either way)",
    section: 'Prover',
  }),
  /** Native prover: fixed-base MSM tables for a key whose four tables fit this many MiB (all or none, once per process); absent = 96 (v1 circuits of up to 2 accounts or addresses, 1-account / 1-address v2 circuits). */
  proverTableMb: setting({
    schema: z.number().int().min(0).max(65536).optional(),
    env: ['REFRACT_PROVER_TABLE_MB'],
    envType: 'number',
    flag: '--prover-table-mb <n>',
    flagValue: 'int',
    alsoOn: ['setup', 'prover'],
    help: 'native prover: fixed-base MSM tables (≈1.3× faster MSMs) for a circuit whose tables fit this many MiB, all or none, once per process, shared by the threads; 0 = none',
    helpOn: { setup: 'native prover: write the fixed-base table files of the circuits whose tables fit this many MiB; 0 = none' },
    defaultText: '96: the v1 circuits of up to two accounts or addresses and the one-account / one-address v2 circuits, 38–81 MiB each',
    doc: 'native prover: fixed-base MSM tables for a circuit whose four tables fit this many MiB, all or none, once per process (shared by the prover threads). 96 covers the v1 circuits of up to two accounts or addresses and the one-account / one-address v2 circuits (38–81 MiB each, 1.2–3.2 s each to build at warm-up on 2 cores, then read from their table files at later starts, ≈ 50 ms); proofs ×1.2–1.34 cheaper; other sizes in [prover.md](prover.md#fixed-base-tables). `0` = none. Not an integer ≥ 0 stops start-up naming it',
    section: 'Prover',
  }),
  /** Native prover: directory of the fixed-base tables' files (`<dir>/<circuit>.tables`), or `off` (built at every load, never written); absent = the keys directory. */
  proverTableFiles: setting({
    schema: z.string().min(1, 'a directory, or "off"').optional(),
    env: ['REFRACT_PROVER_TABLE_FILES'],
    flag: '--prover-table-files <dir>',
    alsoOn: ['setup', 'prover'],
    help: 'native prover: where the fixed-base tables are kept between starts (<dir>/<circuit>.tables, read at load, written after a build), or "off" to build them at every start',
    helpOn: { setup: 'native prover: where the table files go, or "off"' },
    defaultText: 'the keys directory',
    doc: 'native prover: where those tables are kept between starts (`<dir>/<circuit>.tables`, read at load, written after a build; made when missing), e.g. a local disk when the keys are mounted read-only; `off` = built at every start, never written. `GET /health` shows it as `prover.pool.tableFiles`. An empty value stops start-up naming it',
    section: 'Prover',
  }),
  proverUrl: setting({
    schema: z.string().url().optional(),
    env: ['REFRACT_PROVER_URL'],
    flag: '--prover-url <url>',
    help: 'send proofs to an external (Light-compatible) prover instead',
    doc: "send proofs to an external Light-compatible prover instead (its `{ar, bs, krs}` answer is converted)",
    section: 'Prover',
  }),

  redisUrl: setting({
    schema: z.string().optional(),
    env: ['REFRACT_REDIS_URL', 'REDIS_URL'],
    flag: '--redis-url <url>',
    alsoOn: ['prover'],
    help: 'Redis: the proof queue (BullMQ) and shared rate limits',
    doc: 'Redis: the proof queue (BullMQ) and shared rate limits; required by `refract prover`. With both variables set, `REFRACT_REDIS_URL` wins (an empty one counts as unset)',
    section: 'Redis and the proof queue',
  }),
} as const;

/** The config keys. */
export type SettingKey = keyof typeof SETTINGS;
/** The zod shape of the settings: key → schema. */
export type SettingsShape = { -readonly [K in SettingKey]: (typeof SETTINGS)[K]['schema'] };

/** Each setting as `[key, setting]`, in documentation order. */
export function settingEntries(): [SettingKey, Setting][] {
  return Object.entries(SETTINGS) as [SettingKey, Setting][];
}

/** Setting `key` of the table, as the general {@link Setting} shape. */
export function settingOf(key: SettingKey): Setting {
  return SETTINGS[key] as Setting;
}
