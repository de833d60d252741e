/**
 * Token-bucket rate limits: the in-memory bucket (with a fake clock), and the Redis bucket shared
 * by two server instances (a throwaway redis-server on a free port; skipped without the binary).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_METHOD_CONFIG } from '../src/rpc/context.ts';
import { MemoryDataSource } from './helpers/memoryDataSource.ts';
import { MemoryRateLimiter } from '../src/rpc/http/rateLimit.ts';
import { RedisRateLimiter } from '../src/rpc/http/rateLimitRedis.ts';
import { buildServer } from '../src/rpc/http/server.ts';
import { haveTool, REQUIRE_TOOLS, skipWithout } from './helpers/required.ts';
import { freePort } from './helpers/refractBin.ts';

function ctx() {
  const data = new MemoryDataSource();
  data.slot = 7n;
  return { data, getSolanaSlot: async () => 7, config: { ...DEFAULT_METHOD_CONFIG } };
}

const body = JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'getIndexerSlot' });
async function hit(app: FastifyInstance, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/json', ...headers }, payload: body });
}

describe('MemoryRateLimiter', () => {
  it('allows a burst, refuses with the time to the next token, refills at the rate', () => {
    let now = 0;
    const l = new MemoryRateLimiter({ now: () => now });
    const cfg = { ratePerSecond: 2, burst: 3 };
    expect([1, 2, 3].map(() => l.takeSync('k', cfg).allowed)).toEqual([true, true, true]);
    expect(l.takeSync('k', cfg)).toEqual({ allowed: false, retryAfterMs: 500 });
    now = 499;
    expect(l.takeSync('k', cfg).allowed).toBe(false);
    now = 500;
    expect(l.takeSync('k', cfg).allowed).toBe(true);
    now = 100_000; // long idle: full burst again, never more
    expect([1, 2, 3, 4].map(() => l.takeSync('k', cfg).allowed)).toEqual([true, true, true, false]);
    expect(l.takeSync('other', cfg).allowed).toBe(true); // buckets are per id
  });

  it('bounds memory: idle buckets are swept when the map is full', () => {
    let now = 0;
    const l = new MemoryRateLimiter({ now: () => now, maxBuckets: 10 });
    const cfg = { ratePerSecond: 1, burst: 1 };
    for (let i = 0; i < 100; i++) {
      now += 10;
      l.takeSync(`ip:${i}`, cfg);
    }
    expect((l as unknown as { buckets: Map<string, unknown> }).buckets.size).toBeLessThanOrEqual(10);
  });

  it('limits per IP when the API is open, and per key when keys are configured', async () => {
    const open = buildServer(ctx(), { logLevel: 'silent', env: {}, rateLimit: { ratePerSecond: 1, burst: 1 } });
    const a = await open.inject({ method: 'POST', url: '/', remoteAddress: '10.0.0.1', headers: { 'content-type': 'application/json' }, payload: body });
    const b = await open.inject({ method: 'POST', url: '/', remoteAddress: '10.0.0.2', headers: { 'content-type': 'application/json' }, payload: body });
    const a2 = await open.inject({ method: 'POST', url: '/', remoteAddress: '10.0.0.1', headers: { 'content-type': 'application/json' }, payload: body });
    expect([a.statusCode, b.statusCode, a2.statusCode]).toEqual([200, 200, 429]);
    await open.close();

    const keyed = buildServer(ctx(), {
      logLevel: 'silent',
      env: {},
      rateLimit: { ratePerSecond: 1, burst: 1 },
      apiKeys: [{ key: 'k1', name: 'one' }, { key: 'k2', name: 'unlimited', rateLimit: false }],
    });
    expect((await hit(keyed, { 'x-api-key': 'k1' })).statusCode).toBe(200);
    expect((await hit(keyed, { 'x-api-key': 'k1' })).statusCode).toBe(429);
    for (let i = 0; i < 5; i++) expect((await hit(keyed, { 'x-api-key': 'k2' })).statusCode).toBe(200);
    await keyed.close();

    // Default off, one key limited: only that key is throttled.
    const mixed = buildServer(ctx(), {
      logLevel: 'silent',
      env: {},
      rateLimit: false,
      apiKeys: [{ key: 'k1', rateLimit: { ratePerSecond: 1, burst: 1 } }, 'k2'],
    });
    expect((await hit(mixed, { 'x-api-key': 'k1' })).statusCode).toBe(200);
    expect((await hit(mixed, { 'x-api-key': 'k1' })).statusCode).toBe(429);
    for (let i = 0; i < 3; i++) expect((await hit(mixed, { 'x-api-key': 'k2' })).statusCode).toBe(200);
    await mixed.close();
    expect(() => buildServer(ctx(), { logLevel: 'silent', env: {}, rateLimit: { ratePerSecond: 0, burst: 1 } })).toThrow(/ratePerSecond/);
  });
});

const haveRedis = haveTool('redis-server');

describe.skipIf(skipWithout(haveRedis, 'redis-server', REQUIRE_TOOLS))('RedisRateLimiter (shared by replicas)', () => {
  let proc: ChildProcess;
  let url: string;

  beforeAll(async () => {
    const port = await freePort();
    url = `redis://127.0.0.1:${port}`;
    proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {}); // refused until redis-server listens: expected while polling
    for (let i = 0; i < 100; i++) {
      try {
        await probe.connect();
        await probe.ping();
        break;
      } catch {
        probe.disconnect();
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    probe.disconnect();
  });

  afterAll(() => {
    proc?.kill('SIGTERM');
  });

  it('two servers on the same Redis share one bucket per key', async () => {
    const opts = { logLevel: 'silent', env: {}, apiKeys: ['shared-key'], redisUrl: url, rateLimit: { ratePerSecond: 0.5, burst: 3 } };
    const s1 = buildServer(ctx(), opts);
    const s2 = buildServer(ctx(), opts);
    await Promise.all([s1.ready(), s2.ready()]);
    const statuses: number[] = [];
    let last;
    for (const s of [s1, s2, s1, s2]) {
      last = await hit(s, { 'x-api-key': 'shared-key' });
      statuses.push(last.statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(['1', '2']).toContain(last!.headers['retry-after']); // 2 s for a token at 0.5/s, less the time the four hits took
    expect(JSON.parse(last!.body).error.code).toBe(-32005);
    await Promise.all([s1.close(), s2.close()]);
  });

  it('a batch of n requests takes n tokens from the shared bucket', async () => {
    const opts = { logLevel: 'silent', env: {}, apiKeys: ['batch-key'], redisUrl: url, rateLimit: { ratePerSecond: 0.5, burst: 3 } };
    const s1 = buildServer(ctx(), opts);
    const s2 = buildServer(ctx(), opts);
    await Promise.all([s1.ready(), s2.ready()]);
    const batch = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getIndexerSlot' })));
    const post = (s: FastifyInstance, payload: string) => s.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/json', 'x-api-key': 'batch-key' }, payload });
    const two = await post(s1, batch(2));
    expect(two.statusCode).toBe(200);
    expect(JSON.parse(two.body)).toHaveLength(2);
    expect((await post(s2, batch(2))).statusCode).toBe(429); // 1 token left of 3: the guard takes it, the batch is refused
    expect((await hit(s2, { 'x-api-key': 'batch-key' })).statusCode).toBe(429);
    await Promise.all([s1.close(), s2.close()]);
  });

  it('keeps no secret in Redis keys and expires buckets', async () => {
    const client = new Redis(url);
    const l = new RedisRateLimiter({ client, keyPrefix: 'test:rl:' });
    const d = await l.take('key-abc', { ratePerSecond: 10, burst: 5 });
    expect(d).toEqual({ allowed: true, retryAfterMs: 0 });
    const ttl = await client.pttl('test:rl:key-abc');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1500);
    await l.close();
    await client.quit();
  });

  it('fails open when Redis is unreachable', async () => {
    const deadPort = await freePort();
    const errors: unknown[] = [];
    const limiter = new RedisRateLimiter({ url: `redis://127.0.0.1:${deadPort}`, onError: (e) => errors.push(e) });
    const s = buildServer(ctx(), { logLevel: 'silent', env: {}, rateLimiter: limiter, rateLimit: { ratePerSecond: 1, burst: 1 } });
    expect((await hit(s)).statusCode).toBe(200);
    expect((await hit(s)).statusCode).toBe(200);
    expect(errors.length).toBeGreaterThan(0);
    await s.close();
  });
});
