/**
 * Refract configuration: defaults < config file (JSON) < environment (REFRACT_*) < command-line flags.
 * One schema validates the merged result; an invalid value fails start-up with the key and reason.
 */
import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';

import { LOG_FORMATS, type LogFormat, type EnvType, type SettingKey, type SettingsShape, settingEntries } from './settings.ts';

export { LOG_FORMATS, type LogFormat, MAX_MIN_CONTEXT_WAIT_MS } from './settings.ts';

/** The validated configuration, derived from the settings table (src/config/settings.ts). */
export const configSchema = z.object(Object.fromEntries(settingEntries().map(([key, s]) => [key, s.schema])) as SettingsShape).strict();

/** Refract's configuration after merging and validation. */
export type Config = z.infer<typeof configSchema>;

let defaults: Readonly<Config> | undefined;
/** The defaults: what `loadConfig` gives with no file, variable or flag (parsed once, on first use). */
export function configDefaults(): Readonly<Config> {
  return (defaults ??= configSchema.parse({}));
}

/**
 * Environment variables and the config keys they set, derived from the settings table; where several
 * variables set one key (REFRACT_REDIS_URL, REDIS_URL) the first set one wins.
 */
export const ENV_KEYS: Record<string, { key: SettingKey; type: EnvType }> = Object.fromEntries(
  settingEntries().flatMap(([key, s]) => (s.env ?? []).map((name) => [name, { key, type: s.envType ?? 'string' }])),
);

/**
 * Environment variables read outside `loadConfig`, name → meaning and default (markdown; the generated
 * table of docs/operations.md lists those that are not also a setting's variable).
 * They are process-wide: worker threads and `refract setup` children share the environment, so a
 * switch a thread needs before any config reaches it lives here; secrets that must never be config
 * keys or flags (REFRACT_GRPC_X_TOKEN) too. {@link envValue} is their only reader: config.ts is the
 * only module of src/ and workers/ that touches `process.env` (test/architecture.env.test.ts).
 */
export const ENV_SWITCHES = {
  REFRACT_GRPC_X_TOKEN: { doc: 'the Yellowstone gRPC `x-token` of `refract start` (a secret: never a flag, config key or log field); `refract simulate --grpc-port` requires it of clients when set' },
  REFRACT_NODE_NAME: { doc: "this process's name in `refract_proofs_by_node_total` and in its node id (`name:pid:random`); give prover nodes a name that survives restarts (pod or machine name)", default: 'the host name' },
  REFRACT_LIGHT_CACHE: { doc: 'where `refract setup --light-keys` keeps the two CLI tarballs (151 MB each) it fetches with `npm pack` and unpacks', default: '`<keys>/light/cache`' },
  REFRACT_LIGHT_TABLE_MB: { doc: "fixed-base MSM table budget of each of Light's keys in a prover thread, MiB (the one-account / one-address keys fit; `<keys>/light/<name>.tables`); `0` = none", default: '`48`' },
  REFRACT_PTAU_URL: { doc: 'where the public ceremony ptau is downloaded from (a mirror must serve the same files: each is checked against its published hash and refused otherwise); `off` disables the download', default: '`https://storage.googleapis.com/zkevm/ptau/`' },
  REFRACT_DEV_PTAU: { doc: 'the development (INSECURE) ptau used when no `--ptau` is given', default: '`../shared/dev-ptau/pot16_dev.ptau` when it exists' },
  REFRACT_FAST_LANE: { doc: "`0`: serve `POST /` through fastify's pipeline only (no [hot lane](architecture.md#notes-by-module))", default: '`1`' },
  REFRACT_POSEIDON: { doc: '`js`: the JavaScript Poseidon (circomlibjs) instead of the native addon (benchmarks, tests)', default: 'native' },
  REFRACT_BASE58: { doc: '`js`: decode base58 with `bs58` instead of the native addon (benchmarks, tests)', default: 'native' },
  // Also settings (ENV_KEYS), read here by threads and children before any config reaches them.
  REFRACT_PROVER_BACKEND: { doc: 'prover threads: native or snarkjs (the setting proverBackend, for threads and `refract prover`)' },
  REFRACT_PROVER_KERNELS: { doc: 'prover threads: native or wasm MSM/FFT kernels under snarkjs (the setting proverKernels)' },
  REFRACT_PROVER_TABLE_MB: { doc: 'prover threads: fixed-base table budget per key, MiB (the setting proverTableMb)' },
  REFRACT_PROVER_TABLE_FILES: { doc: 'prover threads: where table files are kept, or `off` (the setting proverTableFiles)' },
  REFRACT_LOG_FORMAT: { doc: 'auto, pretty or json: every logger of the process, its threads and children (the setting logFormat)' },
  REFRACT_LOG_LEVEL: { doc: 'pino level of loggers made before the config is read: threads, children (the setting logLevel)' },
  REFRACT_LMDB_WRITEMAP: { doc: '`0`: LMDB without the write map, also for `refract index` (the setting lmdbWritemap)' },
  REFRACT_REDIS_URL: { doc: 'Redis for `refract prover` (the setting redisUrl)' },
  REDIS_URL: { doc: 'Redis for `refract prover` when REFRACT_REDIS_URL is unset (the setting redisUrl)' },
} as const satisfies Record<string, { doc: string; default?: string }>; // doc and default: markdown, for docs/operations.md#the-table
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

/**
 * A numeric environment variable's value (decimal, `0x` hex or exponent notation, as `Number` reads it).
 * @throws Error naming the variable and quoting the text when it is not a number (e.g. `abc`)
 */
function envNumber(name: string, v: string): number {
  const n = Number(v);
  if (v.trim() === '' || Number.isNaN(n)) throw new Error(`invalid configuration: ${name}: expected a number, got ${JSON.stringify(v)}`);
  return n;
}

function fromEnv(env: Record<string, string | undefined>): Partial<Record<keyof Config, unknown>> {
  const out: Partial<Record<keyof Config, unknown>> = {};
  for (const [name, { key, type }] of Object.entries(ENV_KEYS)) {
    const v = env[name];
    if (v === undefined || v === '' || key in out) continue;
    if (type === 'number') out[key] = envNumber(name, v);
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
