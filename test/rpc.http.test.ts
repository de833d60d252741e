/**
 * The API over real sockets (the other RPC tests use fastify.inject, which goes through fastify's
 * routes only): `POST /` over a socket is served by the hot lane (src/rpc/http/fastLane.ts), so these
 * tests hold the lane to fastify's behaviour. Many concurrent requests — whose replies are written
 * in batches at the end of each event-loop turn — each get exactly the reply inject gives for the
 * same body (status, content type and length, bytes), for synchronous methods, asynchronous ones and
 * errors alike; API keys, rate limits and the body limit answer as fastify does; and a connection's
 * pipelined requests are answered in order.
 */
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import bs58 from 'bs58';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../src/store/store.ts';
import { buildServer } from '../src/rpc/http/server.ts';
import { fixtureStore, lmdbServer } from './helpers/rpcLmdb.ts';

let store: Store;
let app: FastifyInstance;
let url: string;

beforeAll(async () => {
  store = fixtureStore('e2e');
  app = lmdbServer(store).app;
  await app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await app.close();
  await store.close();
});

const body = (id: number, method: string, params?: unknown) => JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

/** Request bodies covering the hot methods, an async method and errors. */
function bodies(): string[] {
  // The fixture's token holders (bob, charles): their token accounts and those accounts' owner.
  const hashes = store.read((r) => {
    const out: string[] = [];
    for (const who of ['EU57rQxcmFhJ24ApVdUy3y4MxFXcTUN3uiVeWvGgtWXu', 'CHvwuTvTiwRSNBwAnrCG14V8YTJ6wwhHQrifxdFzHzsX']) {
      for (const a of r.tokenAccountsBy('owner', bs58.decode(who), null)) out.push(bs58.encode(a.hash));
    }
    return out;
  });
  const owners = store.read((r) => {
    const seen = new Set<string>();
    for (const h of hashes) seen.add(bs58.encode(r.account(bs58.decode(h))!.owner));
    return [...seen];
  });
  const out: string[] = [];
  let id = 0;
  for (const h of hashes) out.push(body(++id, 'getCompressedAccount', { hash: h }), body(++id, 'getCompressedAccountV2', { hash: h }));
  for (const o of owners) out.push(body(++id, 'getCompressedAccountsByOwner', { owner: o, limit: 2 }));
  out.push(body(++id, 'getMultipleCompressedAccountProofs', hashes.slice(0, 2)));
  out.push(body(++id, 'getIndexerSlot')); // asynchronous handler
  out.push(body(++id, 'getCompressedAccount', { hash: '11111111111111111111111111111111' })); // value null
  out.push(body(++id, 'getCompressedAccount', { nope: 1 })); // invalid params
  out.push(body(++id, 'noSuchMethod'));
  out.push('{"jsonrpc":"2.0","id":99,'); // invalid JSON
  return out;
}

describe('over HTTP', () => {
  it('concurrent requests each get the reply inject gives', async () => {
    const all = bodies();
    expect(all.length).toBeGreaterThan(10);
    const expected = await Promise.all(
      all.map(async (b) => {
        const r = await app.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, payload: b });
        return { status: r.statusCode, type: r.headers['content-type'], length: r.headers['content-length'], text: r.body };
      }),
    );
    for (let round = 0; round < 3; round++) {
      const got = await Promise.all(
        [...all, ...all].map(async (b) => {
          const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: b });
          return { status: r.status, type: r.headers.get('content-type'), length: r.headers.get('content-length'), text: await r.text() };
        }),
      );
      expect(got).toEqual([...expected, ...expected]);
    }
  });

  it('answers pipelined requests on one connection in order', async () => {
    const all = bodies().filter((b) => !b.endsWith(',')); // valid JSON only: keep the connection open
    const raw = all.map((b) => `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`).join('');
    const { port } = app.server.address() as AddressInfo;
    const text = await new Promise<string>((resolve, reject) => {
      const sock = connect(port, '127.0.0.1');
      let buf = '';
      sock.on('data', (d) => {
        buf += d.toString('utf8');
        if ((buf.match(/HTTP\/1\.1 /g) ?? []).length === all.length && buf.endsWith('}')) sock.end();
      });
      sock.on('end', () => resolve(buf));
      sock.on('error', reject);
      sock.write(raw);
      setTimeout(() => reject(new Error(`timeout; got ${buf.length} bytes`)), 10_000).unref();
    });
    const ids = [...text.matchAll(/"jsonrpc":"2\.0","id":(\d+)/g)].map((m) => Number(m[1]));
    expect(ids).toEqual(all.map((b) => JSON.parse(b).id));
  });
});

describe('hot lane robustness', () => {
  it('survives clients that hang up mid-body or send garbage, and keeps serving', async () => {
    const { port } = app.server.address() as AddressInfo;
    const send = (raw: string, hangUp: boolean) =>
      new Promise<string>((resolve) => {
        const sock = connect(port, '127.0.0.1');
        let buf = '';
        sock.on('data', (d) => (buf += d.toString('utf8')));
        sock.on('close', () => resolve(buf));
        sock.on('error', () => resolve(buf));
        sock.write(raw, () => {
          if (hangUp) sock.destroy();
          else sock.end();
        });
      });
    await send('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"jsonrpc":"2.0"', true); // body cut short
    await send('POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"jso\r\n', true); // chunked, cut short
    const bad = await send('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n{{{', false);
    expect(bad).toMatch(/^HTTP\/1\.1 400/);
    expect(bad).toContain('Parse error');
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(1, 'getIndexerSlot') });
    expect(r.status).toBe(200);
  });
});

describe('hot lane with API keys, rate limits and a body limit', () => {
  it('answers like fastify: 401, 403, 413, parse errors, success, then 429 with Retry-After; reports metrics', async () => {
    const { ctx } = lmdbServer(store);
    const seen: { method: string; status: number; rpcErrorCode: number | null }[] = [];
    const server = buildServer(ctx, {
      onMetrics: (m) => seen.push({ method: m.method, status: m.status, rpcErrorCode: m.rpcErrorCode }),
      logLevel: 'silent',
      env: {},
      bodyLimitBytes: 2048,
      rateLimit: { ratePerSecond: 1000, burst: 1000 },
      apiKeys: [
        'good-key',
        { key: 'slot-only', methods: ['getIndexerSlot'] },
        { key: 'tight', rateLimit: { ratePerSecond: 0.01, burst: 1 } },
        { key: 'batch3', rateLimit: { ratePerSecond: 0.01, burst: 3 } },
      ],
    });
    await server.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}/`;
    try {
      const cases: { headers: Record<string, string>; payload: string }[] = [
        { headers: {}, payload: body(1, 'getIndexerSlot') }, // 401 missing key
        { headers: { 'x-api-key': 'nope' }, payload: body(2, 'getIndexerSlot') }, // 401 unknown key
        { headers: { authorization: 'Bearer slot-only' }, payload: body(3, 'getIndexerHealth') }, // 403
        { headers: { 'x-api-key': 'good-key' }, payload: body(4, 'getIndexerSlot') }, // 200
        { headers: { 'x-api-key': 'good-key' }, payload: body(5, 'getCompressedAccount', { hash: '11111111111111111111111111111111' }) },
        { headers: { 'x-api-key': 'good-key' }, payload: '' }, // empty body
        { headers: { 'x-api-key': 'good-key' }, payload: '[1]' }, // batch of a bad element
        { headers: { 'x-api-key': 'good-key' }, payload: '[]' }, // empty batch
        { headers: { 'x-api-key': 'good-key' }, payload: `[${body(10, 'getIndexerSlot')},${body(11, 'getIndexerHealth')},${body(12, 'nope')}]` }, // batch, one async element
        { headers: { authorization: 'Bearer slot-only' }, payload: `[${body(13, 'getIndexerSlot')},${body(14, 'getIndexerHealth')}]` }, // batch, one element forbidden
        { headers: { 'x-api-key': 'good-key' }, payload: JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'getIndexerSlot', pad: 'x'.repeat(3000) }) }, // 413
      ];
      for (const c of cases) {
        const headers = { 'content-type': 'application/json', origin: 'https://app.example', ...c.headers };
        const want = await server.inject({ method: 'POST', url: '/', headers, payload: c.payload });
        const got = await fetch(base, { method: 'POST', headers, body: c.payload });
        const text = await got.text();
        const cors = (h: (n: string) => unknown) => ({ origin: h('access-control-allow-origin'), expose: h('access-control-expose-headers') });
        expect({ status: got.status, type: got.headers.get('content-type'), length: got.headers.get('content-length'), ...cors((n) => got.headers.get(n)), text }, c.payload.slice(0, 60)).toEqual({
          status: want.statusCode,
          type: want.headers['content-type'],
          length: String(want.headers['content-length']),
          ...cors((n) => want.headers[n]),
          text: want.body,
        });
        expect(got.headers.get('access-control-allow-origin')).toBe('*');
      }
      // Batches on the lane spend one token per request: over the burst → 400 (its first token spent),
      // then 2 of the 2 left, then 429 at the guard.
      const batchOf = (n: number) => `[${Array.from({ length: n }, (_, i) => body(20 + i, 'getIndexerSlot')).join(',')}]`;
      const overBurst = await fetch(base, { method: 'POST', headers: { 'x-api-key': 'batch3' }, body: batchOf(4) });
      expect(overBurst.status).toBe(400);
      expect((await overBurst.json()).error.message).toBe("Invalid request: batch of 4 requests is more than the rate limit's burst of 3 requests");
      const two = await fetch(base, { method: 'POST', headers: { 'x-api-key': 'batch3' }, body: batchOf(2) });
      expect(two.status).toBe(200);
      expect(await two.json()).toHaveLength(2);
      const refused = await fetch(base, { method: 'POST', headers: { 'x-api-key': 'batch3' }, body: batchOf(2) });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await refused.json()).error.code).toBe(-32005);
      // A key with a burst of 1: the second call is throttled with Retry-After, like the fastify path.
      const first = await fetch(base, { method: 'POST', headers: { 'x-api-key': 'tight' }, body: body(7, 'getIndexerSlot') });
      expect(first.status).toBe(200);
      const second = await fetch(base, { method: 'POST', headers: { 'x-api-key': 'tight' }, body: body(8, 'getIndexerSlot') });
      expect(second.status).toBe(429);
      expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await second.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32005 } });
      const viaFastify = await server.inject({ method: 'POST', url: '/', headers: { 'x-api-key': 'tight' }, payload: body(9, 'getIndexerSlot') });
      expect(viaFastify.statusCode).toBe(429);
      expect(viaFastify.headers['retry-after']).toBe(second.headers.get('retry-after'));
      // Every request, lane or fastify, reached the metrics callback with its method and status.
      expect(seen).toHaveLength(cases.length * 2 + 3 + 3);
      expect(seen.filter((m) => m.method === 'getIndexerSlot' && m.status === 200).length).toBeGreaterThanOrEqual(3);
      expect(seen.filter((m) => m.status === 429).map((m) => m.rpcErrorCode)).toEqual([-32005, -32005, -32005]);
      // (The refused batch was stopped by the guard before its body was read: labelled (unknown).)
      expect(seen.filter((m) => m.method === '(batch)').map((m) => m.status)).toEqual(expect.arrayContaining([400, 200]));
    } finally {
      await server.close();
    }
  });
});

describe('uploads the server will not read, failed logins, socket timeouts, probes', () => {
  /** Sends `head`, then body chunks until the server closes the connection (or `ms`); returns what came back and how much was sent. */
  const upload = (port: number, head: string, ms = 3000) =>
    new Promise<{ reply: string; sentBytes: number; closedByServer: boolean }>((resolve) => {
      const sock = connect(port, '127.0.0.1');
      let reply = '';
      let sentBytes = 0;
      let closedByServer = false;
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const done = () => {
        clearInterval(pump);
        clearTimeout(timer);
        sock.destroy();
        resolve({ reply, sentBytes, closedByServer });
      };
      const pump = setInterval(() => {
        if (sock.destroyed || sock.writableEnded) return;
        sock.write(`${chunk.length.toString(16)}\r\n`);
        sock.write(chunk);
        sock.write('\r\n');
        sentBytes += chunk.length;
      }, 5);
      const timer = setTimeout(done, ms);
      sock.on('data', (d) => (reply += d.toString('latin1')));
      sock.on('end', () => {
        closedByServer = true;
        done();
      });
      sock.on('error', () => {
        closedByServer = true;
        done();
      });
      sock.write(head);
    });

  /**
   * `upload` until the reply is there (at most 3 tries): the server answers, then closes a connection
   * whose client is still writing, so the kernel resets it, and a reset can discard the reply before
   * the client reads it (seen under load). The server's answer and close are what is checked.
   */
  const uploadReplied = async (port: number, head: string, status: RegExp) => {
    let r = await upload(port, head);
    for (let i = 1; i < 3 && !status.test(r.reply); i++) r = await upload(port, head);
    return r;
  };

  it('a chunked upload past the body limit, or one sent without a valid key, gets its error; the rest is read up to the limit, then the connection is closed', async () => {
    const { ctx } = lmdbServer(store);
    for (const fastLane of [true, false]) {
      const server = buildServer(ctx, { logLevel: 'silent', env: {}, bodyLimitBytes: 4096, rateLimit: { ratePerSecond: 1000, burst: 1000 }, apiKeys: ['k'] });
      await server.listen({ port: 0, host: '127.0.0.1' });
      const { port } = server.server.address() as AddressInfo;
      // `POST /` goes through the lane; `POST /?x=1` through fastify.
      const path = fastLane ? '/' : '/?x=1';
      try {
        const tooLarge = await uploadReplied(port, `POST ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: k\r\nTransfer-Encoding: chunked\r\n\r\n`, /^HTTP\/1\.1 413/);
        expect(tooLarge.reply, path).toMatch(/^HTTP\/1\.1 413/);
        expect(tooLarge.closedByServer).toBe(true);
        expect(tooLarge.sentBytes).toBeLessThan(64 << 20);
        const noKey = await uploadReplied(port, `POST ${path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`, /^HTTP\/1\.1 401/);
        expect(noKey.reply, path).toMatch(/^HTTP\/1\.1 401/);
        expect(noKey.closedByServer).toBe(true);
        expect(noKey.sentBytes).toBeLessThan(64 << 20);
        // The server keeps serving.
        const ok = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'x-api-key': 'k' }, body: body(1, 'getIndexerSlot') });
        expect(ok.status).toBe(200);
      } finally {
        await server.close();
      }
    }
  });

  it('failed logins spend the client IP’s tokens: a burst of wrong keys ends in 429 with Retry-After (lane and fastify)', async () => {
    const { ctx } = lmdbServer(store);
    const server = buildServer(ctx, { logLevel: 'silent', env: {}, rateLimit: { ratePerSecond: 0.01, burst: 3 }, apiKeys: ['right-key'] });
    await server.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await fetch(`${base}/`, { method: 'POST', headers: { 'x-api-key': `wrong-${i}` }, body: body(i, 'getIndexerSlot') })).status);
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
      const viaFastify = await fetch(`${base}/getIndexerSlot`, { method: 'POST', headers: { 'x-api-key': 'wrong' }, body: body(9, 'getIndexerSlot') });
      expect(viaFastify.status).toBe(429);
      expect(Number(viaFastify.headers.get('retry-after'))).toBeGreaterThan(0);
      // The right key has its own bucket.
      expect((await fetch(`${base}/`, { method: 'POST', headers: { 'x-api-key': 'right-key' }, body: body(10, 'getIndexerSlot') })).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('keep-alive lasts 72 s with and without the lane', async () => {
    for (const env of [{}, { REFRACT_FAST_LANE: '0' }]) {
      const prev = process.env.REFRACT_FAST_LANE;
      Object.assign(process.env, env);
      const { ctx } = lmdbServer(store);
      const server = buildServer(ctx, { logLevel: 'silent', env: {}, rateLimit: false });
      if (prev === undefined) delete process.env.REFRACT_FAST_LANE;
      else process.env.REFRACT_FAST_LANE = prev;
      await server.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
      try {
        for (const path of ['/', '/getIndexerSlot']) {
          const r = await fetch(`${base}${path}`, { method: 'POST', body: body(1, 'getIndexerSlot') });
          expect(r.headers.get('keep-alive'), `${JSON.stringify(env)} ${path}`).toBe('timeout=72');
        }
      } finally {
        await server.close();
      }
    }
  });

  it('GET /liveness and GET /readiness answer null (Photon’s probes), without an API key; the methods too', async () => {
    const { ctx } = lmdbServer(store);
    const server = buildServer(ctx, { logLevel: 'silent', env: {}, rateLimit: false, apiKeys: ['k'] });
    await server.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
    try {
      for (const probe of ['liveness', 'readiness']) {
        const r = await fetch(`${base}/${probe}`);
        expect([r.status, r.headers.get('content-type'), await r.text()]).toEqual([200, 'application/json; charset=utf-8', 'null']);
        const m = await fetch(`${base}/`, { method: 'POST', headers: { 'x-api-key': 'k' }, body: body(3, probe) });
        expect(await m.json()).toEqual({ jsonrpc: '2.0', id: 3, result: null });
      }
    } finally {
      await server.close();
    }
  });
});
