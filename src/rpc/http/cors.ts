/**
 * CORS (browser clients, as Photon's server allows): the options of @fastify/cors for the API, and
 * the header lists the hot lane (fastLane.ts) writes itself for any-origin servers.
 */
import type { FastifyCorsOptions } from '@fastify/cors';

/** Request headers a browser page may send (preflight `Access-Control-Allow-Headers`): the API's and the reference prover's. */
export const CORS_ALLOWED_HEADERS = ['Content-Type', 'Authorization', 'X-API-Key', 'X-Requested-With', 'X-Async', 'X-Sync'];
/** Reply headers a page may read beside the simple ones (429's Retry-After). */
export const CORS_EXPOSED_HEADERS = 'Retry-After';

/**
 * @fastify/cors options for `origins` (non-empty): `'*'` among them allows any origin, else only
 * those listed. Preflights are cached for a day.
 */
export function corsOptions(origins: readonly string[]): FastifyCorsOptions {
  return {
    origin: origins.includes('*') ? '*' : [...origins],
    methods: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 86_400,
  };
}
