/**
 * Per-request metrics on fastify: an `onResponse` hook calling the server's `onMetrics` once per
 * response with the method label, HTTP status, duration and JSON-RPC error code (`RequestMetrics`).
 * The hot lane (fastLane.ts) reports its requests to the same callback itself.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { peekState } from './access.ts';
import type { RequestMetrics } from './options.ts';

/**
 * fastify plugin: the metrics hook (a callback hook: no promise per request). Registered only when
 * there is a callback. A throwing callback is logged, never fails the request.
 */
export const metricsPlugin = fp(
  async (app: FastifyInstance, { onMetrics }: { onMetrics: (m: RequestMetrics) => void }) => {
    app.addHook('onResponse', (req, reply, done) => {
      const s = peekState(req);
      // The JSON-RPC handler always sets a label; without one, look at the route (`routeOptions`
      // builds a fresh object per access: not on the hot path).
      let method = s?.label;
      if (method === undefined) {
        const routeUrl = req.routeOptions.url;
        const isRpc = req.method === 'POST' && (routeUrl === '/' || routeUrl === '/:method');
        method = isRpc ? '(unknown)' : `${req.method} ${routeUrl ?? '(no route)'}`;
      }
      try {
        onMetrics({ method, status: reply.statusCode, durationMs: reply.elapsedTime, rpcErrorCode: s?.rpcErrorCode ?? null });
      } catch (err) {
        req.log.error({ err }, 'metrics callback failed');
      }
      done();
    });
  },
  { name: 'refract-metrics', fastify: '5.x', dependencies: ['refract-access'] },
);
