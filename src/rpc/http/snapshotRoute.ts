/**
 * `GET /snapshot`: the store's snapshot as a stream (issue #26, "seed a replica from a peer"), for
 * `refract start --snapshot http://peer:8784/snapshot` on a replica. The body is the snapshot file
 * (format: src/store/snapshot.ts): LMDB's compacting copy made from one read transaction while the
 * daemon keeps indexing, gzip-compressed and hashed into a temporary directory inside the store's
 * directory (`.refract-snapshot-XXXXXX`, removed once the answer ends), then sent from disk — the
 * header (with the payload's SHA-256) first, so the copy is complete before the first byte goes out.
 *
 * Headers: `content-type: application/vnd.refract.snapshot`, `content-length`,
 * `x-refract-snapshot-slot` (the copy's last slot, or `none`), `content-disposition` with a file name.
 *
 * Access, as the JSON-RPC methods: with API keys configured a request needs a key (`X-API-Key`,
 * `Authorization: Bearer`, or `?api-key=`) whose allowed methods include `snapshot` (an
 * unrestricted key may); one token of the key's (or the default) rate limit per request, in buckets
 * of this route's own. Errors are `{code, message}` JSON:
 *
 * | HTTP | code | when |
 * |---|---|---|
 * | 401 | `unauthorized` | keys are configured and the request has none or a wrong one |
 * | 403 | `forbidden` | the key's methods do not include `snapshot` |
 * | 429 | `rate_limited` | the key's (or the default) rate limit, with `Retry-After` |
 * | 503 | `snapshot_busy` | another snapshot of this daemon is being made or sent (one at a time), with `Retry-After` |
 * | 500 | `snapshot_failed` | the copy or its compression failed (disk full, permissions) |
 *
 * No CORS (a browser page has no business downloading the store) and no HEAD route (it would make a
 * copy to answer headers).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { authorizeMethod } from '../dispatch.ts';
import { extractApiKey, loadKeysAndLimit, rateLimitFor, type ApiKeyConfig } from './auth.ts';
import { MemoryRateLimiter, type RateLimitConfig } from './rateLimit.ts';
import { prepareSnapshot, type PreparedSnapshot } from '../../store/snapshot.ts';
import type { Store } from '../../store/store.ts';

/** The method name a key's `methods` must list to download snapshots. */
export const SNAPSHOT_METHOD = 'snapshot';
/** Retry-After (seconds) of a 503 `snapshot_busy`. */
const BUSY_RETRY_S = 30;

/** Options of {@link registerSnapshotRoute}. */
export interface SnapshotRouteOptions {
  /** The daemon's store. */
  store: Store;
  /**
   * Where the temporary work directory goes (`refract start`: the store's own directory, so the copy
   * lands on the store's file system). Needs room for the compacted store and its compressed copy.
   */
  workDir: string;
  /** API keys (as `buildServer`'s `apiKeys`: `refract start` passes the config's); none → open. */
  apiKeys?: readonly (string | ApiKeyConfig)[];
  /** As `buildServer`'s `env`: a record whose `REFRACT_API_KEYS` adds keys; default none. */
  env?: Record<string, string | undefined>;
  /** Default rate limit, as the JSON-RPC API's (`resolveRateLimit`); buckets are this route's own. */
  rateLimit?: RateLimitConfig | false;
  /** Route path (default `/snapshot`). */
  path?: string;
  /** Logs each snapshot served (default: the app's logger). */
  log?: Logger;
}

function sendError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify({ code, message }));
}

/**
 * Registers `GET /snapshot` on `app` (a fastify plugin context of its own; module comment). Call
 * before `app.listen()`. Throws on invalid key or rate-limit options.
 */
export function registerSnapshotRoute(app: FastifyInstance, opts: SnapshotRouteOptions): void {
  const { keys, defaultLimit } = loadKeysAndLimit(opts);
  const limiter = new MemoryRateLimiter();
  const route = opts.path ?? '/snapshot';
  const workDir = opts.workDir;
  let busy = false;

  /** Takes a token of bucket `id`: false after sending the 429. */
  const take = (reply: FastifyReply, id: string, limit: RateLimitConfig): boolean => {
    const d = limiter.takeSync(id, limit);
    if (d.allowed) return true;
    const retry = Math.max(1, Math.ceil(d.retryAfterMs / 1000));
    reply.header('retry-after', String(retry));
    sendError(reply, 429, 'rate_limited', `rate limit exceeded for '${id}': retry in ${retry} s`);
    return false;
  };

  /** API key, method right and rate limit; false after sending the 401 / 403 / 429. */
  const guard = (req: FastifyRequest, reply: FastifyReply): boolean => {
    let principal;
    try {
      principal = keys.authenticate(extractApiKey(req), req.ip);
    } catch {
      if (defaultLimit && !take(reply, `unauthenticated:${req.ip}`, defaultLimit)) return false;
      sendError(reply, 401, 'unauthorized', 'Invalid or missing API key. Send it as X-API-Key, Authorization: Bearer <key>, or ?api-key=<key>.');
      return false;
    }
    try {
      authorizeMethod(principal, SNAPSHOT_METHOD, SNAPSHOT_METHOD);
    } catch {
      sendError(reply, 403, 'forbidden', `API key '${principal.id}' may not download snapshots ('${SNAPSHOT_METHOD}' is not among its methods)`);
      return false;
    }
    const limit = rateLimitFor(principal, defaultLimit);
    return !limit || take(reply, `${principal.id}:snapshot`, limit);
  };

  app.register(async (child) => {
    child.get(route, { exposeHeadRoute: false, config: { cors: false } } as never, async (req: FastifyRequest, reply: FastifyReply) => {
      if (!guard(req, reply)) return reply;
      if (busy) {
        reply.header('retry-after', String(BUSY_RETRY_S));
        return sendError(reply, 503, 'snapshot_busy', 'a snapshot of this store is being made or sent already (one at a time): retry later');
      }
      busy = true;
      const log = opts.log ?? req.log;
      const started = Date.now();
      let prepared: PreparedSnapshot | null = null;
      let closed = false;
      let finished = false;
      reply.raw.once('finish', () => (finished = true));
      // The answer ended (sent, or the client went away, possibly while the snapshot was being made).
      reply.raw.once('close', () => {
        closed = true;
        if (!finished) log.warn('GET /snapshot: the client went away before the snapshot was sent');
        if (prepared) {
          busy = false;
          void prepared.dispose();
        }
      });
      log.info('GET /snapshot: making a snapshot (compacting copy, then gzip)');
      try {
        prepared = await prepareSnapshot(opts.store, { workDir });
      } catch (err) {
        busy = false;
        log.error({ err }, 'GET /snapshot: making the snapshot failed');
        return sendError(reply, 500, 'snapshot_failed', `making the snapshot failed: ${(err as Error).message}`);
      }
      if (closed) {
        busy = false;
        await prepared.dispose();
        return reply;
      }
      const m = prepared.manifest;
      const slot = m.lastBlock?.slot;
      log.info({ slot: slot ?? null, trees: m.trees.length, bytes: prepared.totalBytes, prepareMs: Date.now() - started }, 'GET /snapshot: sending a snapshot');
      reply
        .code(200)
        .header('content-type', 'application/vnd.refract.snapshot')
        .header('content-length', String(prepared.totalBytes))
        .header('content-disposition', `attachment; filename="refract-${slot ?? 'empty'}.snapshot"`)
        .header('x-refract-snapshot-slot', slot === undefined ? 'none' : String(slot));
      return reply.send(prepared.stream());
    });
  });
}
