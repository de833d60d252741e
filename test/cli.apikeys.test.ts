/**
 * API keys from the environment, through the real binary: `REFRACT_API_KEYS=k1,k2 refract start`
 * serves (it used to exit at once with "duplicate API key": the variable was read twice, by the
 * config and again by the server). No key → 401, a wrong key → 401, a right key in any of the three
 * places a client can put it → 200, on the hot lane (`POST /`) and fastify's routes alike; `POST
 * /prove` takes the same keys; once keys exist the default per-key limit (100/s, burst 200) applies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadApiKeys } from '../src/rpc/http/auth.ts';
import { loadConfig } from '../src/config/config.ts';
import { type RefractDaemon, slotZeroDb, startRefract } from './helpers/refractBin.ts';

const slotCall = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getIndexerSlot' });

describe('REFRACT_API_KEYS with refract start', () => {
  let d: RefractDaemon;
  beforeAll(async () => {
    // An external prover URL registers POST /prove without a proving pool; nothing is proved here
    // (a right key gets past the key check to the body check).
    d = await startRefract(['--db', await slotZeroDb(), '--prover-url', 'http://127.0.0.1:9'], { REFRACT_API_KEYS: 'k1,k2', REFRACT_HTTP_ERRORS_AS_200: '0' }); // the HTTP statuses of docs/api.md#errors (not the default)
  });
  afterAll(async () => {
    await d?.stop();
  });

  const post = (path: string, headers: Record<string, string> = {}, body = slotCall) =>
    fetch(`${d.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  it('starts and says nothing about an open API', () => {
    expect(d.child.exitCode).toBeNull();
    expect(d.stderr()).not.toMatch(/duplicate API key/);
    expect(d.stderr()).not.toMatch(/open to everyone/);
  });

  it('no key → 401 "missing API key", a wrong key → 401 "invalid API key" (hot lane and fastify route)', async () => {
    for (const path of ['/', '/getIndexerSlot']) {
      const none = await post(path);
      expect(none.status, path).toBe(401);
      expect((await none.json()).error.message).toMatch(/missing API key/);
      const wrong = await post(path, { 'x-api-key': 'k3' });
      expect(wrong.status, path).toBe(401);
      expect((await wrong.json()).error.message).toMatch(/invalid API key/);
    }
    expect((await post('/?api-key=nope')).status).toBe(401);
    expect((await post('/', { authorization: 'Bearer k1x' })).status).toBe(401);
  });

  it('either key, as ?api-key=, x-api-key or Authorization: Bearer → 200 with the slot', async () => {
    const ways: [string, Record<string, string>][] = [
      ['/?api-key=k1', {}],
      ['/?api-key=k2', {}],
      ['/', { 'x-api-key': 'k1' }],
      ['/', { 'x-api-key': 'k2' }],
      ['/', { authorization: 'Bearer k1' }],
      ['/', { authorization: 'Bearer k2' }],
      ['/getIndexerSlot', { 'x-api-key': 'k2' }],
    ];
    for (const [path, headers] of ways) {
      const r = await post(path, headers);
      expect(r.status, `${path} ${JSON.stringify(headers)}`).toBe(200);
      const j = await r.json();
      expect(j.error).toBeUndefined();
      expect(j.result).toBe(0);
    }
  });

  it('POST /prove takes the same keys: none or wrong → 401 unauthorized, right → past the check', async () => {
    const none = await post('/prove', {}, '{}');
    expect([none.status, (await none.json()).code]).toEqual([401, 'unauthorized']);
    const wrong = await post('/prove', { 'x-api-key': 'k3' }, '{}');
    expect([wrong.status, (await wrong.json()).code]).toEqual([401, 'unauthorized']);
    for (const headers of [{ 'x-api-key': 'k1' }, { authorization: 'Bearer k2' }] as Record<string, string>[]) {
      const ok = await post('/prove', headers, '{}');
      // Authenticated: the body check answers (no tree height given).
      expect([ok.status, (await ok.json()).code]).toEqual([400, 'malformed_body']);
    }
  });

  it('once keys exist, the default per-key limit applies (100/s, burst 200; a batch of n costs n tokens)', async () => {
    const batch = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getIndexerSlot' })));
    const tooBig = await post('/', { 'x-api-key': 'k1' }, batch(201));
    expect(tooBig.status).toBe(400);
    expect((await tooBig.json()).error.message).toMatch(/batch of 201 requests is more than the rate limit's burst of 200 requests/);
    // The earlier tests and the refused batch spent a few of k1's tokens: 2.1 s refill the bucket (100/s).
    await new Promise((r) => setTimeout(r, 2100));
    const full = await post('/', { 'x-api-key': 'k1' }, batch(200));
    expect(full.status).toBe(200);
    expect(((await full.json()) as unknown[]).length).toBe(200);
    // The bucket is (nearly) empty: 150 more would need 1.5 s of refill.
    const refused = await post('/', { 'x-api-key': 'k1' }, batch(150));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The other key has its own bucket.
    expect((await post('/', { 'x-api-key': 'k2' }, batch(150))).status).toBe(200);
  });
});

describe('where REFRACT_API_KEYS is read', () => {
  it('loadConfig reads it into apiKeys (env over the config file); the server does not read process.env again', () => {
    expect(loadConfig({ env: { REFRACT_API_KEYS: ' k1, k2 ,' } }).apiKeys).toEqual(['k1', 'k2']);
    expect(loadConfig({ env: { REFRACT_API_KEYS: 'none' } }).apiKeys).toEqual([]);
    // Only separators or blanks would silently open the API: an error naming the variable.
    for (const v of [',', ' , ', ' ']) expect(() => loadConfig({ env: { REFRACT_API_KEYS: v } })).toThrow(/REFRACT_API_KEYS: .* lists nothing; write none/);
    const saved = process.env.REFRACT_API_KEYS;
    process.env.REFRACT_API_KEYS = 'k1';
    try {
      // The config's keys as `refract start` passes them: no second copy from process.env.
      expect(loadApiKeys(loadConfig({ env: process.env }).apiKeys).map((k) => k.key)).toEqual(['k1']);
    } finally {
      if (saved === undefined) delete process.env.REFRACT_API_KEYS;
      else process.env.REFRACT_API_KEYS = saved;
    }
  });

  it('a key given twice is a start-up error saying where', () => {
    expect(() => loadApiKeys(['a', 'b', 'a'])).toThrow(/duplicate API key \(key-[0-9a-f]{8}\): configured twice in apiKeys/);
    expect(() => loadApiKeys(['a'], { REFRACT_API_KEYS: 'a' })).toThrow(/configured in apiKeys and in the env option's REFRACT_API_KEYS/);
    expect(() => loadApiKeys([''])).toThrow(/empty API key in configuration \(entry 1 of apiKeys\)/);
  });
});
