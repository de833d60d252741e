/**
 * The protocol's one request path (src/rpc/answer.ts `answerRpc`), without HTTP: what the fastify
 * routes and the hot lane both write. Synchronous where nothing waits (errors, synchronous methods),
 * a never-rejecting promise otherwise; a batch's charge runs before its elements; an unexpected
 * error is logged and answers `Internal server error`.
 */
import { describe, expect, it } from 'vitest';
import { answerRpc, errorAnswer, parseRpcBody } from '../src/rpc/answer.ts';
import type { RpcAnswer } from '../src/rpc/answer.ts';
import type { RpcContext } from '../src/rpc/context.ts';
import { DEFAULT_METHOD_CONFIG, isThenable } from '../src/rpc/context.ts';
import { ANONYMOUS } from '../src/rpc/dispatch.ts';
import { RpcError } from '../src/rpc/errors.ts';
import { MemoryDataSource } from './helpers/memoryDataSource.ts';

function ctxWith(data: MemoryDataSource): RpcContext {
  return { data, getSolanaSlot: async () => 50, config: { ...DEFAULT_METHOD_CONFIG } };
}
function makeCtx(): RpcContext {
  const data = new MemoryDataSource();
  data.slot = 42n;
  return ctxWith(data);
}
const rpc = (method: string, id: number | string = 1, params?: unknown) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
/** Collects what is logged. */
function logSink(): { errors: unknown[]; log: { error(o: { err: unknown }, msg: string): void } } {
  const errors: unknown[] = [];
  return { errors, log: { error: (o) => void errors.push(o.err) } };
}

describe('answerRpc', () => {
  it('answers a request with its result envelope, HTTP 200 and the method as label', async () => {
    const { log } = logSink();
    const out = answerRpc(makeCtx(), rpc('getIndexerSlot', 'a'), ANONYMOUS, undefined, undefined, log);
    expect(isThenable(out)).toBe(true); // the memory source's methods are asynchronous
    expect(await out).toEqual({ text: '{"jsonrpc":"2.0","id":"a","result":42}', status: 200, headers: undefined, rpcErrorCode: null, method: 'getIndexerSlot' });
  });

  it('answers a refused request synchronously, echoing its id, with the error status and code', () => {
    const { log, errors } = logSink();
    const unknown = answerRpc(makeCtx(), rpc('getEverything', 7), ANONYMOUS, undefined, undefined, log) as RpcAnswer;
    expect(unknown).toMatchObject({ status: 404, rpcErrorCode: -32601, method: '(unknown)' });
    expect(JSON.parse(unknown.text)).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32601, message: 'Method not found: getEverything' } });
    const path = answerRpc(makeCtx(), rpc('getIndexerSlot', 8), ANONYMOUS, 'getIndexerHealth', undefined, log) as RpcAnswer;
    expect(path).toMatchObject({ status: 400, method: '(unknown)' });
    expect(JSON.parse(path.text).error.message).toBe('Invalid request: path /getIndexerHealth does not match method getIndexerSlot');
    const forbidden = answerRpc(makeCtx(), rpc('getIndexerSlot', 9), { id: 'k', methods: new Set(['getIndexerHealth']) }, undefined, undefined, log) as RpcAnswer;
    expect(forbidden).toMatchObject({ status: 403, method: 'getIndexerSlot' });
    const empty = answerRpc(makeCtx(), undefined, ANONYMOUS, undefined, undefined, log) as RpcAnswer;
    expect(JSON.parse(empty.text).error.message).toBe('Parse error: empty body');
    expect(errors).toEqual([]);
  });

  it('answers a batch with the array of its answers (HTTP 200), after charging its size to the caller', async () => {
    const { log } = logSink();
    const charged: [unknown, number][] = [];
    const caller = { id: 'k', methods: null };
    const out = await answerRpc(makeCtx(), [rpc('getIndexerSlot', 1), rpc('nope', 2)], caller, undefined, (c, n) => void charged.push([c, n]), log);
    expect(charged).toEqual([[caller, 2]]);
    expect(out).toMatchObject({ status: 200, rpcErrorCode: null, method: '(batch)' });
    expect(JSON.parse(out.text)).toEqual([
      { jsonrpc: '2.0', id: 1, result: 42 },
      { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found: nope' } },
    ]);
  });

  it('refuses a whole batch when its charge does (synchronously or not) and never runs it', async () => {
    const { log } = logSink();
    const sync = answerRpc(makeCtx(), [rpc('getIndexerSlot'), rpc('getIndexerSlot')], ANONYMOUS, undefined, () => {
      throw RpcError.rateLimited(2);
    }, log) as RpcAnswer;
    expect(sync).toMatchObject({ status: 429, rpcErrorCode: -32005, headers: { 'retry-after': '2' }, method: '(batch)' });
    expect(JSON.parse(sync.text).id).toBeNull();
    const later = await answerRpc(makeCtx(), [rpc('getIndexerSlot'), rpc('getIndexerSlot')], ANONYMOUS, undefined, async () => {
      throw RpcError.rateLimited(3);
    }, log);
    expect(later).toMatchObject({ status: 429, headers: { 'retry-after': '3' }, method: '(batch)' });
    const empty = answerRpc(makeCtx(), [], ANONYMOUS, undefined, () => {
      throw new Error('an empty batch is refused before its charge');
    }, log) as RpcAnswer;
    expect(JSON.parse(empty.text).error.message).toBe('Invalid request: empty batch');
  });

  it('logs an unexpected failure and answers Internal server error (500) with the request id', async () => {
    const { log, errors } = logSink();
    const data = new MemoryDataSource();
    data.getIndexedSlot = () => {
      throw new Error('disk on fire');
    };
    const out = await answerRpc(ctxWith(data), rpc('getIndexerSlot', 5), ANONYMOUS, undefined, undefined, log);
    expect(out).toMatchObject({ status: 500, rpcErrorCode: -32000, method: 'getIndexerSlot' });
    expect(JSON.parse(out.text)).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32000, message: 'Internal server error' } });
    expect(errors.map((e) => (e as Error).message)).toEqual(['disk on fire']);
  });
});

describe('parseRpcBody and errorAnswer', () => {
  it('parse errors name an empty body or the JSON error; the 413 names the limit', () => {
    expect(parseRpcBody('[1]')).toEqual([1]);
    expect(() => parseRpcBody(' \n')).toThrow('Parse error: empty body');
    expect(() => parseRpcBody('{')).toThrow(/^Parse error: invalid JSON \(/);
    // fastify's own body-too-large error, worded with the server's limit.
    const a = errorAnswer(Object.assign(new Error('too large'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE' }), null, '(unknown)', logSink().log, 10);
    expect(a).toMatchObject({ status: 413, method: '(unknown)' });
    expect(JSON.parse(a.text).error.message).toMatch(/body exceeds 10 bytes/);
  });
});
