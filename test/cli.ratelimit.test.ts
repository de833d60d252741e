/**
 * Rate limits of `refract start`, through the real binary. With no API key configured there is no
 * limit by default (the operator's own clients: a relayer on localhost must not get 429s), and the
 * start-up log says so once; `REFRACT_RATE_LIMIT` / `--rate-limit` (`off` or `<rps>[,<burst>]`) set
 * one without a config file — per client IP while open, per key once keys exist — on the hot lane
 * (`POST /`), fastify's routes (`POST /<method>`) and `POST /prove` alike; failed logins spend the
 * client IP's tokens; a bad value is a start-up error naming the variable or flag.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, parseRateLimit } from '../src/config/config.ts';
import { tempDir } from './helpers/photon.ts';
import { type RefractDaemon, runRefract, slotZeroDb, startRefract } from './helpers/refractBin.ts';

const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'getIndexerSlot' });
/** An external prover URL registers POST /prove without a proving pool; `{}` is answered 400 by its body check. */
const PROVE_ROUTE = ['--prover-url', 'http://127.0.0.1:9'];

function poster(d: () => RefractDaemon) {
  return async (path: string, headers: Record<string, string> = {}, body: string = JSON.stringify(call(1))) => {
    const r = await fetch(`${d().url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    return { status: r.status, retryAfter: r.headers.get('retry-after'), json: await r.json() };
  };
}
/** `n` requests at once; their HTTP statuses. */
async function burst(n: number, send: () => Promise<{ status: number }>): Promise<number[]> {
  return (await Promise.all(Array.from({ length: n }, send))).map((r) => r.status);
}
const count = (xs: number[], v: number) => xs.filter((x) => x === v).length;

/** Bad settings: [env, flags, expected stderr] (more cases below, on parseRateLimit itself: each start costs seconds here). */
const BAD: [Record<string, string>, string[], RegExp][] = [
  [{ REFRACT_RATE_LIMIT: 'fast' }, [], /REFRACT_RATE_LIMIT: requests per second must be a positive number .*got "fast"/],
  [{}, ['--rate-limit', '5,0'], /--rate-limit: burst must be a positive integer .*got "0"/],
];

// The processes of this file, started one after the other (on a loaded machine, starting them at
// once is no faster and can starve them past the time limit).
let open: RefractDaemon;
let perIp: RefractDaemon;
let off: RefractDaemon;
let tight: RefractDaemon;
const bad: Awaited<ReturnType<typeof runRefract>>[] = [];
beforeAll(async () => {
  for (const [env, args] of BAD) bad.push(await runRefract(['start', '--no-ingest', '--no-prover', '--db', tempDir(), '--host', '127.0.0.1', '--port', '0', ...args], env));
  // The HTTP statuses of docs/api.md#errors (429, 401, 400), which this file checks: not the default (HTTP 200 for JSON-RPC errors).
  const STATUSES = { REFRACT_HTTP_ERRORS_AS_200: '0' };
  open = await startRefract(['--db', await slotZeroDb(), ...PROVE_ROUTE], STATUSES);
  perIp = await startRefract(['--db', await slotZeroDb(), ...PROVE_ROUTE], { ...STATUSES, REFRACT_RATE_LIMIT: '1,5' });
  off = await startRefract(['--db', await slotZeroDb(), '--rate-limit', 'off', ...PROVE_ROUTE], { ...STATUSES, REFRACT_API_KEYS: 'k1' });
  // The flag wins over the variable (flags > environment > config file).
  tight = await startRefract(['--db', await slotZeroDb(), '--rate-limit', '0.2,3', ...PROVE_ROUTE], { ...STATUSES, REFRACT_API_KEYS: 'k1,k2', REFRACT_RATE_LIMIT: '1000' });
});
afterAll(async () => {
  await Promise.all([open, perIp, off, tight].map((x) => x?.stop()));
});

describe('open mode (no API key): unlimited by default', () => {
  const d = () => open;
  const post = poster(d);

  it('logs once that the API is open and unlimited', () => {
    const lines = d().stderr().split('\n').filter((l) => l.includes('no API keys configured'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, msg: expect.stringMatching(/open to everyone and unlimited/) });
  });

  it('a burst of 500 requests on the hot lane, 220 on a fastify route and 220 on /prove (the old default burst was 200): no 429', async () => {
    expect(await burst(500, () => post('/'))).toEqual(Array(500).fill(200));
    expect(await burst(220, () => post('/getIndexerSlot'))).toEqual(Array(220).fill(200));
    // 400: `{}` names no tree height (the body check runs after the key check and the rate limit).
    expect(await burst(220, () => post('/prove', {}, '{}'))).toEqual(Array(220).fill(400));
  });

  it('a batch of 500 is answered whole (a limit would cap a batch at its burst)', async () => {
    const r = await post('/', {}, JSON.stringify(Array.from({ length: 500 }, (_, i) => call(i))));
    expect(r.status).toBe(200);
    expect((r.json as { result: number }[]).map((x) => x.result)).toEqual(Array(500).fill(0));
  });
});

describe('REFRACT_RATE_LIMIT=1,5 in open mode: per client IP', () => {
  const post = poster(() => perIp);

  it('logs the per-IP limit', () => {
    expect(perIp.stderr()).toMatch(/open to everyone, rate-limited per client IP \(1 req\/s, burst 5\)/);
  });

  it('30 requests at once, half on the hot lane, half on a fastify route: one bucket, the burst of 5 passes, the rest get 429 with Retry-After', async () => {
    const t0 = performance.now();
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => post(i % 2 ? '/getIndexerSlot' : '/').then((r) => ({ ...r, lane: i % 2 === 0 }))));
    const seconds = (performance.now() - t0) / 1000;
    const statuses = results.map((r) => r.status);
    expect(count(statuses, 200) + count(statuses, 429)).toBe(30);
    expect(count(statuses, 200)).toBeGreaterThanOrEqual(5);
    // One bucket for both paths: at most the burst plus 1 token a second went through (two buckets would let 10 through at once).
    expect(count(statuses, 200)).toBeLessThanOrEqual(5 + Math.ceil(seconds));
    expect(count(statuses, 429)).toBeGreaterThanOrEqual(15);
    for (const lane of [true, false]) {
      const refused = results.find((r) => r.status === 429 && r.lane === lane)!;
      expect(refused, lane ? 'lane' : 'fastify').toBeDefined();
      expect(refused.json.error).toMatchObject({ code: -32005 });
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    }
  });

  it('/prove: its own bucket with the same limit', async () => {
    const results = await Promise.all(Array.from({ length: 30 }, () => post('/prove', {}, '{}')));
    const statuses = results.map((r) => r.status);
    expect(count(statuses, 400)).toBeGreaterThanOrEqual(5);
    expect(count(statuses, 400) + count(statuses, 429)).toBe(30);
    expect(count(statuses, 429)).toBeGreaterThanOrEqual(15);
    const refused = results.find((r) => r.status === 429)!;
    expect(refused.json).toMatchObject({ code: 'rate_limited', message: expect.stringMatching(/^rate limit exceeded for 'ip:127\.0\.0\.1'/) });
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
  });
});

describe('with API keys', () => {
  const postOff = poster(() => off);
  const postTight = poster(() => tight);

  it('--rate-limit off: no 429 for a key (220 at once, a batch of 500, 220 proofs) nor for wrong keys (220)', async () => {
    expect(off.stderr()).not.toMatch(/open to everyone/);
    // 220 > the default burst of 200.
    expect(await burst(220, () => postOff('/', { 'x-api-key': 'k1' }))).toEqual(Array(220).fill(200));
    const batch = await postOff('/', { 'x-api-key': 'k1' }, JSON.stringify(Array.from({ length: 500 }, (_, i) => call(i))));
    expect(batch.status).toBe(200);
    expect(await burst(220, () => postOff('/prove', { 'x-api-key': 'k1' }, '{}'))).toEqual(Array(220).fill(400));
    expect(await burst(220, () => postOff('/', { 'x-api-key': 'wrong' }))).toEqual(Array(220).fill(401));
  });

  it('--rate-limit 0.2,3: per key on the lane and fastify routes; wrong keys spend the client IP’s own tokens', async () => {
    const seq = async (n: number, send: () => Promise<{ status: number }>) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await send()).status);
      return out;
    };
    // k1: 3 then 429 (one token back every 5 s), whichever route.
    expect([...(await seq(2, () => postTight('/', { 'x-api-key': 'k1' }))), ...(await seq(2, () => postTight('/getIndexerSlot', { authorization: 'Bearer k1' })))]).toEqual([200, 200, 200, 429]);
    // Wrong keys: 401 while the IP's bucket has tokens, then 429.
    expect(await seq(4, () => postTight('/?api-key=wrong'))).toEqual([401, 401, 401, 429]);
    // k2's bucket is its own.
    expect(await seq(4, () => postTight('/', { 'x-api-key': 'k2' }))).toEqual([200, 200, 200, 429]);
  });

  it('/prove: the same per-key limit and failed-login charge, in its own buckets', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await postTight('/prove', { 'x-api-key': 'k1' }, '{}')).status);
    expect(statuses).toEqual([400, 400, 400, 429]);
    const wrong: number[] = [];
    for (let i = 0; i < 4; i++) wrong.push((await postTight('/prove', { 'x-api-key': 'nope' }, '{}')).status);
    expect(wrong).toEqual([401, 401, 401, 429]);
  });
});

describe('bad values stop start-up with the variable or flag and why', () => {
  it.each(BAD.map((c, i) => [i, ...c] as const))('#%i %j %j', (i, _env, _args, message) => {
    expect(bad[i]!.status).toBe(1);
    expect(bad[i]!.stderr).toMatch(message);
  });
});

describe('the setting (parseRateLimit, loadConfig)', () => {
  it('off, <rps> (burst 2 × rps, rounded up), <rps>,<burst>', () => {
    expect(parseRateLimit('X', 'off')).toBe(false);
    expect(parseRateLimit('X', ' OFF ')).toBe(false);
    expect(parseRateLimit('X', '100')).toEqual({ ratePerSecond: 100, burst: 200 });
    expect(parseRateLimit('X', '0.3')).toEqual({ ratePerSecond: 0.3, burst: 1 });
    expect(parseRateLimit('X', '5, 5')).toEqual({ ratePerSecond: 5, burst: 5 });
    for (const v of ['', '-1', '0', 'Infinity', '1e999', '5,', '5,-1', '5,0', '5,2.5', '0x10', 'on', '1,2,3']) expect(() => parseRateLimit('X', v), v).toThrow(/^X: /);
    expect(() => parseRateLimit('X', '0')).toThrow(/X: requests per second must be a positive number .*got "0"/);
    expect(() => parseRateLimit('X', '5,2.5')).toThrow(/X: burst must be a positive integer .*got "2\.5"/);
    expect(() => parseRateLimit('X', '1,2,3')).toThrow(/X: expected off or <requests per second>\[,<burst>\], e\.g\. 100,200, got "1,2,3"/);
  });

  it('absent by default; the config file form still works; env over file, flags over env', () => {
    expect(loadConfig({ env: {} }).rateLimit).toBeUndefined();
    const file = join(tempDir(), 'refract.json');
    writeFileSync(file, JSON.stringify({ rateLimit: { ratePerSecond: 2, burst: 4 } }));
    expect(loadConfig({ file, env: {} }).rateLimit).toEqual({ ratePerSecond: 2, burst: 4 });
    expect(loadConfig({ file, env: { REFRACT_RATE_LIMIT: 'off' } }).rateLimit).toBe(false);
    expect(loadConfig({ file, env: { REFRACT_RATE_LIMIT: 'off' }, flags: { rateLimit: { ratePerSecond: 1, burst: 1 } } }).rateLimit).toEqual({ ratePerSecond: 1, burst: 1 });
    writeFileSync(file, JSON.stringify({ rateLimit: false }));
    expect(loadConfig({ file, env: {} }).rateLimit).toBe(false);
    writeFileSync(file, JSON.stringify({ rateLimit: { ratePerSecond: 0, burst: 4 } }));
    expect(() => loadConfig({ file, env: {} })).toThrow(/rateLimit\.ratePerSecond/);
  });
});
