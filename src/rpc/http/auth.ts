/**
 * API keys: where a request carries one, how keys are configured, constant-time matching, and which
 * methods a key may call (the check itself is the protocol's: `authorizeMethod`, dispatch.ts).
 *
 * A key is read from the `x-api-key` header, then `Authorization: Bearer <key>`, then the `api-key`
 * query parameter (the official client can only use the query form). Keys come from the server
 * options: `refract start` passes the config's `apiKeys`, which `loadConfig` (src/config/config.ts)
 * fills from the config file or env `REFRACT_API_KEYS` — the one place that variable is read. With no
 * key configured the API is open (the server logs it at start).
 *
 * Keys are never stored or logged in clear: each is kept as its SHA-256 digest, and a presented key
 * is hashed and compared with every configured digest with `crypto.timingSafeEqual` (no early exit).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { parseEnvList } from '../../config/config.ts';
import type { Caller } from '../dispatch.ts';
import { RpcError } from '../errors.ts';
import { checkRateLimitConfig, type RateLimitConfig } from './rateLimit.ts';
import { resolveRateLimit } from './options.ts';

/** One configured key. */
export interface ApiKeyConfig {
  /** The secret itself. */
  key: string;
  /** A label for logs, metrics and the rate-limit bucket (default `key-<first 8 hex of sha256>`). */
  name?: string;
  /** Methods (canonical names or aliases) this key may call; absent = all. */
  methods?: readonly string[];
  /** Per-key rate limit overriding the server default; `false` = unlimited. */
  rateLimit?: RateLimitConfig | false;
}

/**
 * Who is calling: a key's identity (never the secret) or, when the API is open, the client IP. A
 * protocol `Caller` (dispatch.ts: id, allowed methods) with the transport's rate limit.
 */
export interface Principal extends Caller {
  /** Rate-limit bucket id and log label: the key's name, or `ip:<address>` when open. */
  id: string;
  /** Per-key override (undefined = server default). */
  rateLimit?: RateLimitConfig | false;
}

/** The rate limit that applies to `principal`: its own override, else `fallback` (false / undefined: none). */
export function rateLimitFor(principal: Principal, fallback: RateLimitConfig | false | undefined): RateLimitConfig | false | undefined {
  return principal.rateLimit === undefined ? fallback : principal.rateLimit;
}

interface StoredKey {
  digest: Buffer;
  principal: Principal;
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/**
 * The keys a server uses: `configured` (strings become unrestricted keys), plus the comma-separated
 * `REFRACT_API_KEYS` of `env` when an environment record is given explicitly (tests, embedding
 * without `loadConfig`; nothing reads `process.env` here — `refract start` has the variable in its
 * config's `apiKeys` already). Throws on an empty key, or on a key given twice (naming its label and
 * where the copies came from).
 */
export function loadApiKeys(
  configured: readonly (string | ApiKeyConfig)[] | undefined,
  env?: Record<string, string | undefined>,
): ApiKeyConfig[] {
  const fromEnv = env?.REFRACT_API_KEYS ? parseEnvList(env.REFRACT_API_KEYS, 'REFRACT_API_KEYS') : [];
  const n = configured?.length ?? 0;
  const where = (i: number) => (i < n ? 'apiKeys' : "the env option's REFRACT_API_KEYS");
  const all = [...(configured ?? []), ...fromEnv].map((k) => (typeof k === 'string' ? { key: k } : k));
  const seen = new Map<string, number>();
  all.forEach((k, i) => {
    if (!k.key) throw new Error(`empty API key in configuration (entry ${i + 1} of apiKeys)`);
    const d = sha256(k.key).toString('hex');
    const first = seen.get(d);
    if (first !== undefined) {
      const places = where(first) === where(i) ? `twice in ${where(i)}` : `in ${where(first)} and in ${where(i)}`;
      throw new Error(`duplicate API key (${k.name ?? `key-${d.slice(0, 8)}`}): configured ${places}`);
    }
    seen.set(d, i);
  });
  return all;
}

/** Configured keys in hashed form; `authenticate` maps a presented key to its principal. */
export class ApiKeyStore {
  private readonly keys: StoredKey[];

  /** `keys`: from `loadApiKeys`. */
  constructor(keys: readonly ApiKeyConfig[]) {
    this.keys = keys.map((k) => {
      const digest = sha256(k.key);
      return {
        digest,
        principal: {
          id: k.name ?? `key-${digest.toString('hex').slice(0, 8)}`,
          methods: k.methods ? new Set(k.methods) : null,
          rateLimit: k.rateLimit,
        },
      };
    });
  }

  /** True when no key is configured: every request is allowed. */
  get open(): boolean {
    return this.keys.length === 0;
  }

  /**
   * The principal of a request. Open API → `ip:<ip>`. Otherwise the presented key must match a
   * configured key: missing → `Unauthorized: missing API key`, unknown → `Unauthorized: invalid API key`
   * (both HTTP 401).
   */
  authenticate(presented: string | undefined, ip: string): Principal {
    if (this.open) return { id: `ip:${ip}`, methods: null };
    if (presented === undefined || presented === '') throw RpcError.unauthorized('missing API key');
    const digest = sha256(presented);
    let match: StoredKey | undefined;
    for (const k of this.keys) {
      // Every configured digest is compared; no early exit.
      if (timingSafeEqual(k.digest, digest) && match === undefined) match = k;
    }
    if (!match) throw RpcError.unauthorized('invalid API key');
    return match.principal;
  }
}

/** Minimal view of a request for key extraction. */
export interface KeyCarrier {
  headers: Record<string, string | string[] | undefined>;
  query?: unknown;
}

function first(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && typeof v[0] === 'string') return v[0];
  return undefined;
}

/** The key a request carries: `x-api-key`, else `Authorization: Bearer …`, else `?api-key=`. */
export function extractApiKey(req: KeyCarrier): string | undefined {
  const header = first(req.headers['x-api-key']);
  if (header) return header.trim();
  const auth = first(req.headers.authorization);
  if (auth) {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (m) return m[1]!.trim();
  }
  const q = req.query as Record<string, unknown> | undefined;
  return q && typeof q === 'object' ? first(q['api-key']) : undefined;
}

/**
 * `url` with the value of any `api-key` query parameter replaced by `***` (for logs). Names are
 * compared percent-decoded (`api%2Dkey` is the same parameter to the query parser); a name that does
 * not decode is redacted too.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const hash = url.indexOf('#', q);
  const end = hash < 0 ? url.length : hash;
  const params = url.slice(q + 1, end).split('&').map((part) => {
    const eq = part.indexOf('=');
    if (eq < 0) return part;
    const raw = part.slice(0, eq);
    let name: string | null;
    try {
      name = decodeURIComponent(raw.replace(/\+/g, ' ')).toLowerCase();
    } catch {
      name = null;
    }
    return name === null || name === 'api-key' ? `${raw}=***` : part;
  });
  return `${url.slice(0, q + 1)}${params.join('&')}${url.slice(end)}`;
}

/** A server's API keys and default bucket, checked (see {@link loadKeysAndLimit}). */
export interface KeysAndLimit {
  /** Every key with its label, rights and own bucket. */
  keyConfigs: ApiKeyConfig[];
  keys: ApiKeyStore;
  /** The default bucket (`resolveRateLimit`), or false for none. */
  defaultLimit: RateLimitConfig | false;
}

/**
 * The API keys (`apiKeys` plus `REFRACT_API_KEYS` of `env`) and the default bucket of a server (the
 * JSON-RPC API, `POST /prove`, `GET /snapshot`), every bucket checked. Throws on an empty or duplicate
 * key or invalid rate-limit numbers (the start-up error names it).
 */
export function loadKeysAndLimit(opts: { apiKeys?: readonly (string | ApiKeyConfig)[]; env?: Record<string, string | undefined>; rateLimit?: RateLimitConfig | false }): KeysAndLimit {
  const keyConfigs = loadApiKeys(opts.apiKeys, opts.env);
  for (const k of keyConfigs) if (k.rateLimit) checkRateLimitConfig(k.rateLimit);
  const keys = new ApiKeyStore(keyConfigs);
  const defaultLimit = resolveRateLimit(opts.rateLimit, keys.open);
  if (defaultLimit) checkRateLimitConfig(defaultLimit);
  return { keyConfigs, keys, defaultLimit };
}
