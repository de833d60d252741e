/**
 * `POST /prove`: the Light-prover-compatible endpoint (spec prover.md §2.1–2.3) on the API server.
 *
 * Body: the reference prover's v1 JSON (`circuitType`, heights, `inputCompressedAccounts`,
 * `newAddresses`; hex values). 200 → `{ar, bs, krs}` (`"0x%064x"`, G2 imaginary part first).
 * Errors are `{code, message}`:
 *
 * | HTTP | code | when |
 * |---|---|---|
 * | 400 | `malformed_body` | unreadable body, bad JSON or hex, missing circuitType / height, circuitType not matching the entries |
 * | 400 | `proving_error` | no circuit for the counts or heights, values out of range, unsatisfied constraints (wrong root, address out of range), keys missing |
 * | 401 | `unauthorized` | API keys are configured and the request has none or a wrong one (`X-API-Key` or `Authorization: Bearer`) |
 * | 403 | `forbidden` | the key's `methods` list has neither `getValidityProof` nor `getValidityProofV2` (a proof by any route is the same work) |
 * | 429 | `rate_limited` | the key's (or the default) rate limit, with `Retry-After`; /prove has its own buckets. As on the JSON-RPC API, requests with a missing or wrong key spend their client IP's tokens (a burst of them gets 429 instead of 401) |
 * | 405 | (empty body) | any method other than POST |
 * | 408 | `proof_timeout` | the proof did not finish within the per-request timeout |
 * | 500 | `unexpected_error` | the proof did not verify, a prover thread crashed, a bug |
 * | 503 | `queue_unavailable` | the queue is full, Redis or the external prover is down, keys are still being built |
 *
 * The route lives in its own fastify plugin context, with its own body parser and error handler,
 * so JSON-RPC handling on the same server is untouched. It is registered on the app returned by
 * `buildServer` (src/commands/start.ts) before the server listens.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiKeyStore, authorizeMethod, extractApiKey, loadApiKeys, rateLimitFor, type ApiKeyConfig } from '../rpc/auth.ts';
import { resolveRateLimit } from '../rpc/config.ts';
import { MemoryRateLimiter, checkRateLimitConfig, type RateLimitConfig } from '../rpc/rateLimit.ts';
import { ProverError, type ProverErrorCode } from './errors.ts';
import type { ProofService } from './service.ts';
import { fromProverRequest } from './witness.ts';

/** HTTP status and reference-prover error code of a ProverError code (table in the module comment). */
export const PROVE_HTTP_ERRORS: Record<ProverErrorCode, { status: number; code: string }> = {
  malformed_request: { status: 400, code: 'malformed_body' },
  unsupported_shape: { status: 400, code: 'proving_error' },
  invalid_input: { status: 400, code: 'proving_error' },
  witness_failed: { status: 400, code: 'proving_error' },
  keys_missing: { status: 400, code: 'proving_error' },
  timeout: { status: 408, code: 'proof_timeout' },
  queue_full: { status: 503, code: 'queue_unavailable' },
  queue_unavailable: { status: 503, code: 'queue_unavailable' },
  not_ready: { status: 503, code: 'queue_unavailable' },
  remote_failed: { status: 500, code: 'unexpected_error' },
  remote_refused: { status: 400, code: 'proving_error' },
  verify_failed: { status: 500, code: 'unexpected_error' },
  worker_crashed: { status: 500, code: 'unexpected_error' },
  setup_failed: { status: 500, code: 'unexpected_error' },
  internal: { status: 500, code: 'unexpected_error' },
};

/** Options of `registerProveRoute`. */
export interface ProveRouteOptions {
  /** The proof service, or a getter (undefined → 503 `queue_unavailable`: prover not available). */
  service: ProofService | (() => ProofService | undefined);
  /** API keys (as `buildServer`'s `apiKeys`: `refract start` passes the config's); none → open. */
  apiKeys?: readonly (string | ApiKeyConfig)[];
  /** As `buildServer`'s `env`: a record whose `REFRACT_API_KEYS` adds keys; default none (`process.env` is not read). */
  env?: Record<string, string | undefined>;
  /** Route path (default `/prove`). */
  path?: string;
  /** Why the service getter has nothing (default "prover not available on this server"); shown in the 503. */
  unavailableReason?: () => string;
  /**
   * Default rate limit, as the JSON-RPC API's (`resolveRateLimit`): per key (a key's own `rateLimit`
   * wins), or per client IP while open; `false`: none; undefined: none while open, 100/s burst 200
   * per key once keys are configured. Buckets are this route's own (in memory).
   */
  rateLimit?: RateLimitConfig | false;
}

function sendError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify({ code, message }));
}

/** Takes a token of bucket `id`: null when there was one, else the 429 `rate_limited` reply (with Retry-After, whole seconds ≥ 1). */
function takeOr429(limiter: MemoryRateLimiter, reply: FastifyReply, id: string, limit: RateLimitConfig): FastifyReply | null {
  const d = limiter.takeSync(id, limit);
  if (d.allowed) return null;
  const retry = Math.max(1, Math.ceil(d.retryAfterMs / 1000));
  reply.header('retry-after', String(retry));
  return sendError(reply, 429, 'rate_limited', `rate limit exceeded for '${id}': retry in ${retry} s`);
}

/**
 * Registers `POST /prove` (and 405 for other methods) on `app`, as a fastify plugin loaded on
 * `ready`. Call before `app.listen()`.
 */
export function registerProveRoute(app: FastifyInstance, opts: ProveRouteOptions): void {
  const keyConfigs = loadApiKeys(opts.apiKeys, opts.env);
  for (const k of keyConfigs) if (k.rateLimit) checkRateLimitConfig(k.rateLimit);
  const keys = new ApiKeyStore(keyConfigs);
  const defaultLimit = resolveRateLimit(opts.rateLimit, keys.open);
  if (defaultLimit) checkRateLimitConfig(defaultLimit);
  const route = opts.path ?? '/prove';
  const getService = () => (typeof opts.service === 'function' ? opts.service() : opts.service);
  const limiter = new MemoryRateLimiter();

  app.register(async (child) => {
    child.removeAllContentTypeParsers();
    child.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, typeof body === 'string' ? body : body.toString('utf8')));
    child.setErrorHandler((err, req, reply) => {
      const e = err as { statusCode?: number; code?: string; message?: string };
      if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(reply, 400, 'malformed_body', `body too large: ${e.message}`);
      if (typeof e.statusCode === 'number' && e.statusCode < 500) return sendError(reply, 400, 'malformed_body', e.message ?? 'unreadable body');
      req.log.error({ err }, 'POST /prove failed');
      return sendError(reply, 500, 'unexpected_error', 'unexpected error');
    });

    child.route({
      method: ['GET', 'PUT', 'DELETE', 'PATCH'],
      url: route,
      handler: async (_req, reply) => reply.code(405).send(''),
    });

    child.post(route, async (req: FastifyRequest, reply: FastifyReply) => {
      let principal;
      try {
        principal = keys.authenticate(extractApiKey(req), req.ip);
      } catch {
        // Failed logins spend the client IP's tokens, as on the JSON-RPC API (server.ts).
        if (defaultLimit) {
          const refused = takeOr429(limiter, reply, `unauthenticated:${req.ip}`, defaultLimit);
          if (refused) return refused;
        }
        return sendError(reply, 401, 'unauthorized', 'Invalid or missing API key. Send it as X-API-Key or Authorization: Bearer <key>.');
      }
      try {
        authorizeMethod(principal, 'getValidityProofV2', 'getValidityProof'); // either name allows proofs
      } catch {
        return sendError(reply, 403, 'forbidden', `API key '${principal.id}' may not request proofs (neither getValidityProof nor getValidityProofV2 is among its methods)`);
      }
      const limit = rateLimitFor(principal, defaultLimit);
      if (limit) {
        const refused = takeOr429(limiter, reply, principal.id, limit);
        if (refused) return refused;
      }
      const text = typeof req.body === 'string' ? req.body : '';
      let body: unknown;
      try {
        if (text.trim() === '') throw new Error('empty body');
        body = JSON.parse(text);
      } catch (e) {
        return sendError(reply, 400, 'malformed_body', `request body is not JSON: ${(e as Error).message}`);
      }
      const o = body as Record<string, unknown> | null;
      const heights = ['stateTreeHeight', 'addressTreeHeight', 'treeHeight', 'height'];
      if (o && typeof o === 'object' && !Array.isArray(o) && !heights.some((k) => typeof o[k] === 'number' && (o[k] as number) > 0)) {
        return sendError(reply, 400, 'malformed_body', 'one of stateTreeHeight, addressTreeHeight, treeHeight or height must be > 0');
      }
      const service = getService();
      if (!service) return sendError(reply, 503, 'queue_unavailable', `prover not available: ${opts.unavailableReason?.() ?? 'not enabled on this server'}`);
      try {
        const inputs = fromProverRequest(body);
        const proof = await service.prove(inputs);
        return reply.code(200).type('application/json; charset=utf-8').send(JSON.stringify(proof.gnark));
      } catch (e) {
        if (e instanceof ProverError) {
          const m = PROVE_HTTP_ERRORS[e.code] ?? { status: 500, code: 'unexpected_error' };
          if (m.status >= 500) req.log.error({ err: e }, 'POST /prove failed');
          return sendError(reply, m.status, m.code, e.message);
        }
        req.log.error({ err: e }, 'POST /prove failed');
        return sendError(reply, 500, 'unexpected_error', 'unexpected error');
      }
    });
  });
}
