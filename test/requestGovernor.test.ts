/**
 * The backfill's throughput control (src/solana/requestGovernor.ts): the rate cap spaces starts, a
 * rate-limited answer pauses for its Retry-After and slows the rate, the request is tried again in
 * its place, and with billPerCall a batch weighs its size.
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
    await Promise.all([0, 1, 2].map(() => gov.run('getTransaction[batch]', async () => starts.push(Date.now() - t0), undefined, 20)));
    expect(Math.max(...starts)).toBeGreaterThanOrEqual(2 * 200 - 15); // 20 calls at 100/s = 200 ms apart
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
