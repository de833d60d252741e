/**
 * Transactions by signature as the backfill and gap healing fetch them (src/ingest/fetchTransactions.ts),
 * against a local node on 127.0.0.1 that refuses JSON-RPC batches, fails one request with HTTP 500 and
 * does not know one transaction yet: the batch is asked once and then one by one, the failure is
 * retried by the request governor (logged), the unknown one is asked again (logged), and the answers
 * come back in the order asked.
 */
import type { Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchTransactions } from '../src/ingest/fetchTransactions.ts';
import { RequestGovernor } from '../src/solana/requestGovernor.ts';
import { SolanaRpc } from '../src/solana/rpcClient.ts';
import { type LocalNode, sendJson, startLocalNode } from './helpers/localNode.ts';

/** What the node was asked, in order: 'batch' or the single getTransaction's signature. */
const asked: string[] = [];
let node: LocalNode;
beforeAll(async () => {
  node = await startLocalNode((msg, res) => {
    if (Array.isArray(msg)) {
      asked.push('batch');
      return sendJson(res, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch requests are not supported' } });
    }
    const sig = msg.params[0] as string;
    asked.push(sig);
    const times = asked.filter((a) => a === sig).length;
    if (sig === 'B' && times === 1) return void res.writeHead(500, { 'content-type': 'text/plain' }).end('upstream hiccup');
    if (sig === 'C' && times === 1) return sendJson(res, { jsonrpc: '2.0', id: msg.id, result: null });
    sendJson(res, { jsonrpc: '2.0', id: msg.id, result: { slot: 7, signature: sig } });
  });
});
afterAll(async () => {
  await node.close();
});

describe('fetchTransactions', () => {
  it('a node without batches is asked one by one; a failed request is retried, an unknown transaction asked again; answers in the order asked', async () => {
    const warned: { obj: Record<string, unknown>; msg: string }[] = [];
    const log = { warn: (obj: Record<string, unknown>, msg: string) => warned.push({ obj, msg }) } as unknown as Logger;
    const batchSupport = { ok: true };
    const gov = new RequestGovernor({ concurrency: 1 });
    const out = await fetchTransactions(new SolanaRpc(node.url), gov, ['A', 'B', 'C'], batchSupport, { batchSize: 3, signal: new AbortController().signal, log });
    expect(out).toEqual(['A', 'B', 'C'].map((signature) => ({ slot: 7, signature })));
    expect(batchSupport.ok).toBe(false);
    // The refused batch is not retried; B's HTTP 500 is (after 250 ms, its slot given up: C goes first); C is asked again once listed-but-unknown.
    expect(asked).toEqual(['batch', 'A', 'B', 'C', 'B', 'C']);
    expect(warned.map((w) => w.msg)).toEqual([
      'the node does not take JSON-RPC batches: fetching transactions one by one',
      'getTransaction failed; retrying',
      'the node does not have listed transactions (yet); asking again',
    ]);
    expect(warned[1]!.obj).toMatchObject({ err: expect.stringContaining('answered HTTP 500'), retryInMs: 250 });
    expect(warned[2]!.obj).toMatchObject({ missing: ['C'], count: 1, attempt: 1 });
    expect(gov.stats.requests).toEqual({ 'getTransaction[batch]': 1, getTransaction: 5 });
  });
});
