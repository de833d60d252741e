/**
 * The API over real sockets (the other RPC tests use fastify.inject): many concurrent requests —
 * whose replies are written in batches at the end of each event-loop turn — each get exactly the
 * reply inject gives for the same body (status, content type and length, bytes), for synchronous
 * methods, asynchronous ones and errors alike; and a connection's pipelined requests are answered
 * in order.
 */
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import bs58 from 'bs58';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../src/store/store.ts';
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
