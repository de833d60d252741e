/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of the API (../openapi.ts builds it from the method
 * definitions), built on first request and then served from memory.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { METHODS } from '../methods/index.ts';
import { buildOpenApi } from '../openapi.ts';
import { JSON_TYPE } from './jsonRpcRoutes.ts';

/** fastify plugin: the `GET /openapi.json` route. */
export const openApiPlugin = fp(
  async (app: FastifyInstance) => {
    let text: string | undefined;
    app.get('/openapi.json', async (_req, reply) => {
      text ??= JSON.stringify(buildOpenApi(METHODS));
      return reply.type(JSON_TYPE).send(text);
    });
  },
  { name: 'refract-openapi', fastify: '5.x' },
);
