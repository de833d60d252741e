/**
 * The OpenAPI 3.1 document served at `GET /openapi.json`, generated from zod schemas with
 * `z.toJSONSchema`: requests from the same schemas that validate params (input side), responses from
 * the result schemas of src/rpc/resultSchemas.ts (output side). Every method (and alias) gets a path
 * `POST /<method>` whose body is the JSON-RPC envelope with that method's params and whose 200
 * response is the envelope with that method's `result`; `POST /` accepts any of them (and batches).
 * The shared result shapes (`Account`, `AccountV2`, `TokenData`, …) and each method's result
 * (`<method>Result`) are listed once under `components.schemas` and referred to with `$ref`.
 */
import { MAX_BATCH_REQUESTS } from './batch.ts';
import { z } from 'zod';
import type { MethodDefinition } from './methods/index.ts';
import { RESULT_REGISTRY, resultSchemaId, resultSchemaOf } from './resultSchemas.ts';

type JsonSchema = Record<string, unknown>;

/** `$ref` prefix of the schemas under `components.schemas`. */
const COMPONENTS = '#/components/schemas/';

/**
 * JSON Schemas of every registered result shape and method result, by component name (`$ref`s
 * between them point into `components.schemas`). Unrepresentable parts would become `{}`; none are
 * used (a test checks that no result is `{}`).
 */
export function resultComponents(): Record<string, JsonSchema> {
  const out = z.toJSONSchema(RESULT_REGISTRY, { io: 'output', unrepresentable: 'any', target: 'draft-2020-12', uri: (id) => `${COMPONENTS}${id}` }) as {
    schemas: Record<string, JsonSchema>;
  };
  for (const s of Object.values(out.schemas)) {
    delete s.$schema;
    delete s.$id;
  }
  return out.schemas;
}

/** `{$ref}` to the result component of `def` (canonical name). Throws when the method has no result schema. */
function resultRef(def: MethodDefinition): JsonSchema {
  resultSchemaOf(def.name);
  return { $ref: `${COMPONENTS}${resultSchemaId(def.name)}` };
}

/** The JSON-RPC success envelope `{jsonrpc, id, result}` with `result` as given. */
function resultEnvelope(result: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['jsonrpc', 'id', 'result'],
    properties: { jsonrpc: { const: '2.0' }, id: { type: ['string', 'number'], description: 'The request id' }, result },
    additionalProperties: false,
  };
}

/** JSON Schema of a method's params (what a client sends). Unrepresentable parts become `{}`. */
export function paramsJsonSchema(def: MethodDefinition): JsonSchema {
  const s = z.toJSONSchema(def.params, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete s.$schema;
  // Read-your-writes (contextSlot.ts): every params object also takes minContextSlot and maxWaitMs.
  if (s.type === 'object' && s.properties && typeof s.properties === 'object') s.properties = { ...(s.properties as JsonSchema), ...CONTEXT_SLOT_PROPERTIES };
  return s;
}

/** The read-your-writes options a params object may carry (for array params: a trailing `{minContextSlot, maxWaitMs}` object). */
const CONTEXT_SLOT_PROPERTIES: JsonSchema = {
  minContextSlot: { type: 'integer', minimum: 0, description: 'Answer only once the indexer has reached this slot (waiting for it), else error -32016 with data.contextSlot' },
  maxWaitMs: { type: 'integer', minimum: 0, description: 'How long to wait for minContextSlot, within the server bound (minContextWaitMs, default 2000); 0 = do not wait' },
};

const ERROR_RESPONSE = {
  type: 'object',
  required: ['jsonrpc', 'id', 'error'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'number', 'null'] },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'integer' }, message: { type: 'string' } },
    },
  },
};

function envelope(name: string, params: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['jsonrpc', 'id', 'method'],
    properties: {
      jsonrpc: { const: '2.0' },
      id: { type: ['string', 'number'], description: 'Echoed in the response' },
      method: { const: name },
      params,
    },
  };
}

function operation(name: string, def: MethodDefinition, params: JsonSchema, result: JsonSchema) {
  return {
    operationId: name,
    summary: name === def.name ? def.summary : `${def.summary} (alias of ${def.name})`,
    tags: ['ZK Compression'],
    requestBody: { required: true, content: { 'application/json': { schema: envelope(name, params) } } },
    responses: {
      '200': {
        description: 'JSON-RPC result',
        content: { 'application/json': { schema: resultEnvelope(result) } },
      },
      default: {
        description:
          'JSON-RPC error (400 invalid request/params, 401/403 API key, 404 unknown method or record, 413 body too large, 429 rate limited, 500 internal, 503 unavailable)',
        content: { 'application/json': { schema: ERROR_RESPONSE } },
      },
    },
  };
}

/** Build the document for `methods` (canonical definitions; aliases are expanded). */
export function buildOpenApi(methods: readonly MethodDefinition[], info: { title?: string; version?: string } = {}) {
  const paths: Record<string, unknown> = {};
  const rootBodies: JsonSchema[] = [];
  const rootReplies: JsonSchema[] = [];
  for (const def of methods) {
    const params = paramsJsonSchema(def);
    const result = resultRef(def);
    rootReplies.push(resultEnvelope(result));
    for (const name of [def.name, ...(def.aliases ?? [])]) {
      paths[`/${name}`] = { post: operation(name, def, params, result) };
      rootBodies.push(envelope(name, params));
    }
  }
  paths['/'] = {
    post: {
      operationId: 'jsonRpc',
      summary: 'JSON-RPC 2.0 endpoint for every method; a batch (array of up to 1000 requests) gets an array of responses in order',
      tags: ['ZK Compression'],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { oneOf: [...rootBodies, { type: 'array', minItems: 1, maxItems: MAX_BATCH_REQUESTS, items: { oneOf: rootBodies } }] } } },
      },
      responses: {
        '200': {
          description: "JSON-RPC result (the called method's result), or for a batch an array of results and errors in request order",
          content: {
            'application/json': {
              schema: { anyOf: [...rootReplies, { type: 'array', minItems: 1, maxItems: MAX_BATCH_REQUESTS, items: { anyOf: [...rootReplies, ERROR_RESPONSE] } }] },
            },
          },
        },
        default: { description: 'JSON-RPC error', content: { 'application/json': { schema: ERROR_RESPONSE } } },
      },
    },
  };
  paths['/health'] = { get: { operationId: 'health', summary: 'Liveness', responses: { '200': { description: 'Alive' } } } };
  return {
    openapi: '3.1.0',
    info: { title: info.title ?? 'Refract ZK Compression API', version: info.version ?? '0.1.0' },
    components: {
      schemas: resultComponents(),
      securitySchemes: {
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api-key' },
        bearer: { type: 'http', scheme: 'bearer' },
      },
    },
    security: [{ apiKeyHeader: [] }, { apiKeyQuery: [] }, { bearer: [] }, {}],
    paths,
  };
}
