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
 * | 400 | `invalid_job_id` | `GET /prove/status`: `job_id` is not a UUID (no `job_id` at all: `malformed_body`) |
 * | 404 | `job_not_found` | `GET /prove/status`: no such job, or it finished more than an hour ago |
 * | 401 | `unauthorized` | API keys are configured and the request has none or a wrong one (`X-API-Key` or `Authorization: Bearer`) |
 * | 403 | `forbidden` | the key's `methods` list has neither `getValidityProof` nor `getValidityProofV2` (a proof by any route is the same work) |
 * | 429 | `rate_limited` | the key's (or the default) rate limit, with `Retry-After`; /prove has its own buckets. As on the JSON-RPC API, requests with a missing or wrong key spend their client IP's tokens (a burst of them gets 429 instead of 401) |
 * | 405 | (empty body) | any method other than POST |
 * | 408 | `proof_timeout` | the proof did not finish within the per-request timeout |
 * | 500 | `unexpected_error` | the proof did not verify, a prover thread crashed, a bug |
 * | 503 | `queue_unavailable` | the queue is full, Redis or the external prover is down, keys are still being built or failed to build (`setup_failed`) |
 *
 * Async (spec prover.md §2.3, §5.3; the reference's `server.go`): with header `X-Async: true` or
 * query `?async=true` (it wins over `X-Sync: true`, as in the reference; without it the route is
 * synchronous), the inputs are checked (input errors answer at once, as above), the job is queued
 * and the answer is 202
 * `{job_id, status: "queued", circuit_type, queue, estimated_time, status_url, message}`; identical
 * inputs already queued, proving or proved give `status: "already_queued", deduplicated: true` and
 * the same `job_id` (a UUID-shaped hash of the inputs). `GET /prove/status?job_id=<id>` answers
 * 200 `{job_id, status: "completed", result: {proof: {ar, bs, krs}, proof_duration_ms}}`, or 202
 * `{job_id, status: "queued" | "processing", message, created_at, circuit_type}`, or 202
 * `{job_id, status: "failed", message, error, code, failed_at, created_at, circuit_type}` (`code` is
 * the error's code as the sync route would answer it); 400 `malformed_body` without `job_id`, 400
 * `invalid_job_id` when it is not a UUID, 404 `job_not_found` for an unknown job or one that finished
 * more than an hour ago. Jobs live in the BullMQ queue (any API replica answers their status) or,
 * without Redis, in this process (the reference has async only with Redis). Both routes take the same API keys, method rights and rate limit as the sync
 * route (status polls have a bucket of their own, so polling does not use up the proof budget).
 *
 * The route lives in its own fastify plugin context, with its own body parser and error handler,
 * so JSON-RPC handling on the same server is untouched. It is registered on the app returned by
 * `buildServer` (src/commands/start.ts) before the server listens.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authorizeMethod } from '../dispatch.ts';
import { extractApiKey, loadKeysAndLimit, rateLimitFor, type ApiKeyConfig } from './auth.ts';
import { MemoryRateLimiter, type RateLimitConfig } from './rateLimit.ts';
import { JOB_ID_PATTERN } from '../../prover/run/proofJobs.ts';
import { keyShape } from '../../prover/keys/lightKeys.ts';
import { ProverError, type ProverErrorCode } from '../../prover/errors.ts';
import { OWN_CIRCUIT_WARNING, type AsyncJobStatus, type ProofService } from '../../prover/run/proofService.ts';
import { fromProverRequest } from '../../prover/engine/witness.ts';

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
  setup_failed: { status: 503, code: 'queue_unavailable' },
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
  /** Route path (default `/prove`); the async status route is `<path>/status`. */
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

function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/** The reference's `{code, message}` answer for a proving-core error (500s are logged). */
function sendProverError(req: FastifyRequest, reply: FastifyReply, e: unknown): FastifyReply {
  if (e instanceof ProverError) {
    const m = PROVE_HTTP_ERRORS[e.code] ?? { status: 500, code: 'unexpected_error' };
    if (m.status >= 500) req.log.error({ err: e }, `${req.method} ${req.url} failed`);
    return sendError(reply, m.status, m.code, e.message);
  }
  req.log.error({ err: e }, `${req.method} ${req.url} failed`);
  return sendError(reply, 500, 'unexpected_error', 'unexpected error');
}

/** True when header `name` or query parameter `param` is `true` (the reference compares exactly). */
function flag(req: FastifyRequest, name: string, param: string): boolean {
  const q = req.query as Record<string, unknown> | undefined;
  return req.headers[name] === 'true' || q?.[param] === 'true';
}

/** Rough time of one proof by input count (snarkjs, spec prover.md §6.1), for the 202's `estimated_time`. */
function estimatedTime(circuitId: string): string {
  const c = keyShape(circuitId);
  const n = c.nAccounts + c.nAddresses;
  return n <= 1 ? '1-3 seconds' : n <= 4 ? '3-10 seconds' : '10-30 seconds';
}

/** The status route's body and HTTP status for a job (module comment). */
function statusBody(j: AsyncJobStatus): { status: number; body: Record<string, unknown> } {
  const circuit_type = keyShape(j.circuitId).kind;
  const created_at = new Date(j.createdAt).toISOString();
  if (j.state === 'completed' && j.proof) {
    const t = j.proof.timings;
    return { status: 200, body: { job_id: j.jobId, status: 'completed', result: { proof: j.proof.gnark, proof_duration_ms: Math.round(t.witnessMs + t.proveMs) } } };
  }
  if (j.state === 'failed') {
    const err = j.error ?? new ProverError('internal', 'the job failed without an error');
    const code = (PROVE_HTTP_ERRORS[err.code] ?? { code: 'unexpected_error' }).code;
    const failed_at = new Date(j.finishedAt ?? Date.now()).toISOString();
    return { status: 202, body: { job_id: j.jobId, status: 'failed', message: `Job processing failed: ${err.message}`, error: err.message, code, failed_at, created_at, circuit_type } };
  }
  const message = j.state === 'processing' ? 'Job is currently being processed' : 'Job is queued and waiting to be processed';
  return { status: 202, body: { job_id: j.jobId, status: j.state, message, created_at, circuit_type } };
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
 * Registers `POST /prove` and `GET /prove/status` (and 405 for other methods) on `app`, as a
 * fastify plugin loaded on `ready`. Call before `app.listen()`.
 */
export function registerProveRoute(app: FastifyInstance, opts: ProveRouteOptions): void {
  const { keys, defaultLimit } = loadKeysAndLimit(opts);
  const route = opts.path ?? '/prove';
  const statusRoute = `${route}/status`;
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
    child.route({
      method: ['POST', 'PUT', 'DELETE', 'PATCH'],
      url: statusRoute,
      handler: async (_req, reply) => reply.code(405).send(''),
    });

    /**
     * API key, method rights and rate limit (bucket `<principal>` for proofs, `<principal>:status`
     * for status polls). Returns false after sending the 401 / 403 / 429.
     */
    const guard = (req: FastifyRequest, reply: FastifyReply, bucket: '' | ':status'): boolean => {
      let principal;
      try {
        principal = keys.authenticate(extractApiKey(req), req.ip);
      } catch {
        // Failed logins spend the client IP's tokens, as on the JSON-RPC API (access.ts).
        if (defaultLimit && takeOr429(limiter, reply, `unauthenticated:${req.ip}`, defaultLimit)) return false;
        sendError(reply, 401, 'unauthorized', 'Invalid or missing API key. Send it as X-API-Key or Authorization: Bearer <key>.');
        return false;
      }
      try {
        authorizeMethod(principal, 'getValidityProofV2', 'getValidityProof'); // either name allows proofs
      } catch {
        sendError(reply, 403, 'forbidden', `API key '${principal.id}' may not request proofs (neither getValidityProof nor getValidityProofV2 is among its methods)`);
        return false;
      }
      const limit = rateLimitFor(principal, defaultLimit);
      if (limit) {
        if (takeOr429(limiter, reply, principal.id + bucket, limit)) return false;
      }
      return true;
    };

    child.get(statusRoute, async (req: FastifyRequest, reply: FastifyReply) => {
      if (!guard(req, reply, ':status')) return reply;
      const raw = (req.query as Record<string, unknown> | undefined)?.job_id;
      const jobId = Array.isArray(raw) ? raw[0] : raw;
      if (typeof jobId !== 'string' || jobId === '') return sendError(reply, 400, 'malformed_body', 'job_id parameter required');
      if (!JOB_ID_PATTERN.test(jobId)) return sendError(reply, 400, 'invalid_job_id', 'Invalid job ID format. Job ID must be a valid UUID.');
      const service = getService();
      if (!service) return sendError(reply, 503, 'queue_unavailable', `prover not available: ${opts.unavailableReason?.() ?? 'not enabled on this server'}`);
      let job: AsyncJobStatus | undefined;
      try {
        job = await service.status(jobId.toLowerCase());
      } catch (e) {
        return sendProverError(req, reply, e);
      }
      if (!job) return sendError(reply, 404, 'job_not_found', `Job with ID ${jobId} not found. It may have expired or never existed.`);
      const { status, body } = statusBody(job);
      return sendJson(reply, status, body);
    });

    child.post(route, async (req: FastifyRequest, reply: FastifyReply) => {
      if (!guard(req, reply, '')) return reply;
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
        if (flag(req, 'x-async', 'async')) {
          const sub = await service.submit(inputs);
          const circuitType = keyShape(sub.circuitId).kind;
          return sendJson(reply, 202, {
            job_id: sub.jobId,
            status: sub.deduplicated ? 'already_queued' : 'queued',
            ...(sub.deduplicated ? { deduplicated: true } : {}),
            circuit_type: circuitType,
            queue: sub.queue,
            estimated_time: estimatedTime(sub.circuitId),
            status_url: `${statusRoute}?job_id=${sub.jobId}`,
            message: sub.deduplicated
              ? `An identical ${circuitType} proof job is already queued, proving or proved. Use status_url to check progress.`
              : `Proof generation queued for ${circuitType} circuit. Use status_url to check progress.`,
          });
        }
        const proof = await service.prove(inputs);
        if (proof.keys === 'own') reply.header('x-refract-warning', OWN_CIRCUIT_WARNING);
        return reply.code(200).type('application/json; charset=utf-8').send(JSON.stringify(proof.gnark));
      } catch (e) {
        return sendProverError(req, reply, e);
      }
    });
  });
}
