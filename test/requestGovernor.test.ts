/**
 * The backfill's throughput control (src/solana/requestGovernor.ts): the rate cap spaces starts, a
 * rate-limited answer pauses for its Retry-After and slows the rate, the request is tried again in
 * its place, with billPerCall a batch weighs its size, and with `retry` other failures are retried
 * after a capped pause.
 */
import { describe, expect, it } from 'vitest';
import { RequestGovernor } from '../src/solana/requestGovernor.ts';
import { SolanaRateLimitedError, isRateLimitAnswer, retryAfterMs } from '../src/solana/rpcClient.ts';

describe('RequestGovernor', () => {
  it('starts no more than rps requests a second', async () => {
    const gov = new RequestGovernor({ rps: 20, concurrency: 8 });
    const starts: number[] = [];
    const t0 = Date.now();
    await Promise.all(Array.from({ length: 10 }, () => gov.run('getTransaction', async () => starts.push(Date.now() - t0))));
    expect(starts.length).toBe(10);
    expect(Math.max(...starts)).toBeGreaterThanOrEqual(9 * 50 - 15); // 50 ms apart
    expect(gov.stats.requests.getTransaction).toBe(10);
  });

  it('a 429 pauses every start for its Retry-After, lowers the rate, and the request is tried again', async () => {
    const seen: { at: number; limited: boolean }[] = [];
    const limits: number[] = [];
    const gov = new RequestGovernor({ rps: 100, concurrency: 1, onRateLimited: (ms, rps) => limits.push(ms, rps ?? -1) });
    let calls = 0;
    const t0 = Date.now();
    const v = await gov.run('getSignaturesForAddress', async () => {
      calls++;
      const limited = calls === 1;
      seen.push({ at: Date.now() - t0, limited });
      if (limited) throw new SolanaRateLimitedError('getSignaturesForAddress', 'HTTP 429', 300);
      return 'page';
    });
    expect(v).toBe('page');
    expect(calls).toBe(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(290);
    expect(gov.stats.rateLimited).toBe(1);
    expect(limits).toEqual([300, 70]);
    expect(gov.stats.rps).toBe(70);
  });

  it('with billPerCall a batch of n calls takes n requests of the rate', async () => {
    const gov = new RequestGovernor({ rps: 100, concurrency: 4, billPerCall: true });
    const starts: number[] = [];
    const t0 = Date.now();
    await Promise.all([0, 1, 2].map(() => gov.run('getTransaction[batch]', async () => starts.push(Date.now() - t0), { calls: 20 })));
    expect(Math.max(...starts)).toBeGreaterThanOrEqual(2 * 200 - 15); // 20 calls at 100/s = 200 ms apart
  });

  it('with retry, other failures are logged and tried again after 250 ms doubling, giving up their slot meanwhile; without it, or when not retryable, they are thrown', async () => {
    const gov = new RequestGovernor({ concurrency: 1 });
    const warned: { obj: any; msg: string }[] = [];
    const log = { warn: (obj: object, msg: string) => warned.push({ obj, msg }) };
    const at: number[] = [];
    const order: string[] = [];
    const t0 = Date.now();
    const failing = gov.run('getTransaction', async () => {
      at.push(Date.now() - t0);
      order.push('failing');
      if (at.length < 3) throw new Error('fetch failed');
      return 'tx';
    }, { retry: { log, what: 'getTransaction (test)' } });
    // While the failing request waits out its pause, another one gets the only slot.
    await new Promise((r) => setTimeout(r, 50));
    expect(await gov.run('getSlot', async () => (order.push('other'), 7))).toBe(7);
    expect(await failing).toBe('tx');
    expect(order).toEqual(['failing', 'other', 'failing', 'failing']);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(240);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(490);
    expect(warned).toEqual([
      { obj: { err: 'fetch failed', retryInMs: 250 }, msg: 'getTransaction (test) failed; retrying' },
      { obj: { err: 'fetch failed', retryInMs: 500 }, msg: 'getTransaction (test) failed; retrying' },
    ]);
    expect(gov.stats.requests).toEqual({ getTransaction: 3, getSlot: 1 });
    await expect(gov.run('getSlot', async () => { throw new Error('no retry'); })).rejects.toThrow('no retry');
    await expect(gov.run('getSlot', async () => { throw new Error('refused'); }, { retry: { log, retryable: (e) => (e as Error).message !== 'refused' } })).rejects.toThrow('refused');
    // A stop ends the pause and the request with Error('stopped').
    const ac = new AbortController();
    const stopped = gov.run('getSlot', async () => { throw new Error('down'); }, { signal: ac.signal, retry: { log } });
    setTimeout(() => ac.abort(), 20);
    await expect(stopped).rejects.toThrow('stopped');
    expect(warned).toHaveLength(3);
  });

  it('reads rate-limit answers and Retry-After as providers send them', () => {
    expect(isRateLimitAnswer(-32005, 'Too many requests')).toBe(true);
    expect(isRateLimitAnswer(-32429, 'slow down')).toBe(true);
    expect(isRateLimitAnswer(-32600, 'rate limit exceeded for method getTransaction')).toBe(true);
    expect(isRateLimitAnswer(-32005, 'Node is behind by 42 slots')).toBe(false);
    expect(isRateLimitAnswer(-32602, 'Invalid params')).toBe(false);
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs('0.5')).toBe(500);
    expect(retryAfterMs(new Date(Date.now() + 3000).toUTCString(), Date.now())).toBeGreaterThan(1000);
    expect(retryAfterMs(null)).toBeNull();
    expect(retryAfterMs('soon')).toBeNull();
  });
});

describe('SolanaRpc against a provider-like node', () => {
  it('429 with Retry-After and -32005 answers are SolanaRateLimitedError; batches answer in request order; a node without batches is told apart', async () => {
    const { createServer } = await import('node:http');
    const { SolanaRpc, SolanaUnavailableError } = await import('../src/solana/rpcClient.ts');
    let mode: 'limit' | 'rpcLimit' | 'ok' | 'noBatch' = 'limit';
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const msg = JSON.parse(body);
        if (mode === 'limit') return void res.writeHead(429, { 'retry-after': '3', 'content-type': 'text/plain' }).end('Too Many Requests');
        if (mode === 'rpcLimit') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32005, message: 'Too many requests for a specific RPC call' } }));
        if (Array.isArray(msg)) {
          if (mode === 'noBatch') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch requests are not supported' } }));
          // Answered out of order, one with an error: matched by id.
          const answers = msg.map((m: { id: number; params: [string] }) => (m.params[0] === 'bad' ? { jsonrpc: '2.0', id: m.id, error: { code: -32602, message: 'Invalid param' } } : { jsonrpc: '2.0', id: m.id, result: { slot: 7, sig: m.params[0] } }));
          return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers.reverse()));
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: 42 }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    const rpc = new SolanaRpc(`http://127.0.0.1:${port}`);
    try {
      await expect(rpc.getSlot()).rejects.toMatchObject({ name: 'SolanaRateLimitedError', retryAfterMs: 3000 });
      mode = 'rpcLimit';
      await expect(rpc.getSlot()).rejects.toMatchObject({ name: 'SolanaRateLimitedError', retryAfterMs: null });
      mode = 'ok';
      expect(await rpc.getSlot()).toBe(42);
      const answers = await rpc.batch<{ sig: string }>(['a', 'bad', 'c'].map((s) => ({ method: 'getTransaction', params: [s] })));
      expect(answers.map((a) => (a.ok ? a.result.sig : `error ${a.error.code}`))).toEqual(['a', 'error -32602', 'c']);
      mode = 'noBatch';
      const err = await rpc.batch([{ method: 'getTransaction', params: ['a'] }]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SolanaUnavailableError);
      expect((err as Error).message).toMatch(/did not answer the batch with an array/);
    } finally {
      server.close();
    }
  });
});
