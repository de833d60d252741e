/**
 * Specific errors for expected failures of the daemon's dependencies (issue 15, defect 3): the Solana
 * node down, answering garbage or a JSON-RPC error; getTransactionWithCompressionInfo with the node
 * down; a closed store. None of them answers the bare `Internal server error`, and no message carries
 * the RPC URL's credentials or api-key value. getIndexerHealth with the node down is driven through
 * the real `refract start` binary.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import bs58 from 'bs58';
import { afterAll, describe, expect, it } from 'vitest';
import { Indexer } from '../src/ingest/indexer.ts';
import { ProverError, type ProverErrorCode } from '../src/prover/errors.ts';
import { proverErrorToRpc } from '../src/rpc/validityProver.ts';
import { describeError } from '../src/rpc/errors.ts';
import { SolanaRpc, SolanaUnavailableError, displayUrl, requestTarget } from '../src/solana/rpcClient.ts';
import { Store } from '../src/store/store.ts';
import { tempDir } from './helpers/photon.ts';
import { freePort, postRpc, startRefract, stopAll } from './helpers/refractBin.ts';
import { fixtureStore, lmdbServer, registry, rpcCall, slot0 } from './helpers/rpcLmdb.ts';

/** A fake Solana node on 127.0.0.1 answering every POST with `reply(method)`. */
async function fakeNode(reply: (method: string) => { status: number; body: string }): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const r = reply((JSON.parse(raw) as { method: string }).method);
      res.writeHead(r.status, { 'content-type': 'application/json' }).end(r.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

afterAll(stopAll);

describe('getIndexerHealth with the Solana node down (refract start)', () => {
  it('answers 503 -32000 naming getSlot and the redacted URL, not Internal server error', async () => {
    // A store with the slot-0 block indexed, so the health check gets as far as asking the node.
    const db = tempDir('refract-errors-');
    const store = new Store({ path: db });
    new Indexer(store, registry).indexBlocks([slot0()]);
    await store.close();

    const closed = await freePort();
    // Providers put keys in the path, in `api-key` or in another parameter: none may show.
    const rpcUrl = `http://127.0.0.1:${closed}/v2/SECRET-PATH-KEY?api-key=SECRET-KEY-123&token=SECRET-TOKEN`;
    const { port } = await startRefract(['--db', db, '--no-prover', '--rpc-url', rpcUrl]);

    const r = await postRpc(port, 'getIndexerHealth');
    expect(r.status).toBe(200); // the daemon's default: JSON-RPC errors with HTTP 200 (docs/api.md#errors)
    expect(r.body.error.code).toBe(-32000);
    expect(r.body.error.message).toMatch(
      new RegExp(`^Solana RPC unavailable: getSlot: http://127\\.0\\.0\\.1:${closed}/… unreachable \\(.+\\)$`),
    );
    for (const secret of ['SECRET-PATH-KEY', 'SECRET-KEY-123', 'SECRET-TOKEN']) expect(r.body.error.message).not.toContain(secret);
    expect(r.body.error.message).not.toBe('Internal server error');
    // The rest of the API still serves the indexed state.
    expect((await postRpc(port, 'getIndexerSlot')).body.result).toBe(0);
  }, 90_000);
});

describe('getIndexerHealth: each Solana failure has its own message (in process)', () => {
  const store = fixtureStore('empty'); // slot 0 indexed
  afterAll(() => store.close());

  async function health(getSolanaSlot: () => Promise<bigint | number>) {
    const { app, ctx } = lmdbServer(store);
    ctx.getSolanaSlot = getSolanaSlot;
    const r = await rpcCall(app, 'getIndexerHealth');
    await app.close();
    return r;
  }

  it('a JSON-RPC error of the node → 503 "Solana RPC error: getSlot: <its message>"', async () => {
    const node = await fakeNode(() => ({ status: 200, body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error: node is restarting"}}' }));
    const solana = new SolanaRpc(node.url);
    const r = await health(() => solana.getSlot());
    await node.close();
    expect([r.status, r.body.error]).toEqual([503, { code: -32000, message: 'Solana RPC error: getSlot: Internal error: node is restarting' }]);
  });

  it('a non-2xx answer that is not JSON → 503 naming the status and the URL', async () => {
    const node = await fakeNode(() => ({ status: 502, body: '<html>bad gateway</html>' }));
    const solana = new SolanaRpc(node.url);
    const r = await health(() => solana.getSlot());
    await node.close();
    expect([r.status, r.body.error]).toEqual([503, { code: -32000, message: `Solana RPC unavailable: getSlot: ${node.url} answered HTTP 502, body is not JSON` }]);
  });

  it('a timeout → 503 "… unreachable (…timeout…)"', async () => {
    const server = createServer(() => {}); // accepts, never answers
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const solana = new SolanaRpc(url, { timeoutMs: 200 });
    const r = await health(() => solana.getSlot());
    server.closeAllConnections();
    await new Promise<void>((res) => server.close(() => res()));
    expect(r.status).toBe(503);
    expect(r.body.error.message).toMatch(new RegExp(`^Solana RPC unavailable: getSlot: ${url.replace(/\./g, '\\.')} unreachable \\(.*timeout.*\\)$`, 'i'));
  });

  it('an answer that is not a slot → 503 "Solana RPC error: getSlot returned …"', async () => {
    const node = await fakeNode(() => ({ status: 200, body: '{"jsonrpc":"2.0","id":1,"result":"soon"}' }));
    const solana = new SolanaRpc(node.url);
    const r = await health(() => solana.getSlot());
    await node.close();
    expect([r.status, r.body.error]).toEqual([503, { code: -32000, message: 'Solana RPC error: getSlot returned "soon", not a slot number' }]);
  });

  it('nothing indexed: "No data has been indexed" when the node answers; the node error first when it does not', async () => {
    const empty = new Store({ path: tempDir('refract-errors-') });
    const { app, ctx } = lmdbServer(empty);
    ctx.getSolanaSlot = async () => 100;
    const ok = await rpcCall(app, 'getIndexerHealth');
    expect([ok.status, ok.body.error]).toEqual([404, { code: -32000, message: 'Record Not Found: No data has been indexed' }]);
    const closed = await freePort();
    const solana = new SolanaRpc(`http://127.0.0.1:${closed}`);
    ctx.getSolanaSlot = () => solana.getSlot();
    const down = await rpcCall(app, 'getIndexerHealth');
    expect(down.status).toBe(503);
    expect(down.body.error.message).toMatch(new RegExp(`^Solana RPC unavailable: getSlot: http://127\\.0\\.0\\.1:${closed} unreachable \\(.+\\); no data has been indexed yet$`));
    await app.close();
    await empty.close();
  });
});

describe('the Solana client names the failure without secrets', () => {
  it('displayUrl shows scheme, host and port only: user info, path and query (where providers put keys) are withheld', () => {
    expect(displayUrl('https://user:pa55@rpc.example.com:8899/path?api-key=abc&x=1')).toBe('https://rpc.example.com:8899/…');
    expect(displayUrl('http://127.0.0.1:8899')).toBe('http://127.0.0.1:8899');
    expect(displayUrl('http://127.0.0.1:8899/')).toBe('http://127.0.0.1:8899');
    expect(displayUrl('http://u:p@ss@node.example/?api-key=k')).toBe('http://node.example/…');
    expect(displayUrl('http://token@node.example/rpc')).toBe('http://node.example/…');
    expect(displayUrl('https://mainnet.example.com/v2/SECRETPATHKEY')).toBe('https://mainnet.example.com/…');
    expect(displayUrl('https://rpc.example.com/?token=SECRETTOKEN')).toBe('https://rpc.example.com/…');
    expect(displayUrl('not a url')).toBe('(invalid url)');
  });

  it('a raw % in the password (not an escape) is sent as written instead of failing start-up', () => {
    const t = requestTarget('http://bob:50%off@127.0.0.1:1/');
    expect(t.url).toBe('http://127.0.0.1:1/');
    expect(Buffer.from(t.headers.authorization.slice('Basic '.length), 'base64').toString()).toBe('bob:50%off');
  });

  it('an unreachable node with credentials in the URL: SolanaUnavailableError whose message has neither', async () => {
    const closed = await freePort();
    const solana = new SolanaRpc(`http://alice:pa55word@127.0.0.1:${closed}/?api-key=k3y`);
    const err = await solana.getSlot().then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(SolanaUnavailableError);
    const message = (err as Error).message;
    expect(message.startsWith(`getSlot: http://127.0.0.1:${closed}/… unreachable (`)).toBe(true);
    for (const secret of ['alice', 'pa55word', 'k3y']) expect(message).not.toContain(secret);
  });
});

describe('a Solana RPC URL with user:password', () => {
  it('is sent as HTTP Basic auth (fetch refuses such URLs), for getSlot and getTransaction', async () => {
    const seen: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers.authorization);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":null}'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://alice:pa%3A55@127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const store = fixtureStore('empty');
    const { app } = lmdbServer(store, { dataOptions: { solana: new SolanaRpc(url) } });
    expect(await new SolanaRpc(url).getSlot()).toBeNull();
    const r = await rpcCall(app, 'getTransactionWithCompressionInfo', { signature: bs58.encode(Buffer.alloc(64, 7)) });
    // The node answered null (unknown signature): the method's own not-found, so the request went through.
    expect([r.status, r.body.error]).toEqual([404, { code: -32000, message: 'Record Not Found: Transaction not found' }]);
    expect(seen).toEqual([`Basic ${Buffer.from('alice:pa:55').toString('base64')}`, `Basic ${Buffer.from('alice:pa:55').toString('base64')}`]);
    await app.close();
    await store.close();
    await new Promise<void>((res) => server.close(() => res()));
  });
});

describe('getTransactionWithCompressionInfo with the Solana node down', () => {
  it('503 "Solana RPC unavailable: getTransaction: <url> unreachable (…)"', async () => {
    const store = fixtureStore('empty');
    const closed = await freePort();
    const { app } = lmdbServer(store, { dataOptions: { solana: new SolanaRpc(`http://127.0.0.1:${closed}/?api-key=s3cret`) } });
    const sig = bs58.encode(Buffer.alloc(64, 7));
    for (const method of ['getTransactionWithCompressionInfo', 'getTransactionWithCompressionInfoV2']) {
      const r = await rpcCall(app, method, { signature: sig });
      expect(r.status, method).toBe(503);
      expect(r.body.error.code).toBe(-32000);
      expect(r.body.error.message).toMatch(new RegExp(`^Solana RPC unavailable: getTransaction: http://127\\.0\\.0\\.1:${closed}/… unreachable \\(.+\\)$`));
      expect(r.body.error.message).not.toContain('s3cret');
    }
    await app.close();
    await store.close();
  });
});

describe('a closed store', () => {
  it('503 "Store unavailable: …" for reads through the lane, the framework route and batches', async () => {
    const store = fixtureStore('empty');
    const { app } = lmdbServer(store);
    await app.ready();
    await store.close();
    const message = 'Store unavailable: the LMDB environment is closed (the server is shutting down)';
    for (const [method, params] of [
      ['getIndexerSlot', undefined],
      ['getCompressedAccount', { hash: '11111111111111111111111111111111' }],
      ['getCompressedBalanceByOwner', { owner: '11111111111111111111111111111111' }],
      ['getMultipleNewAddressProofs', ['Fi6AXBGuGs7DRXP428hwhJJfTpJ4BVZD8DiUcX1cj35W']],
    ] as const) {
      const r = await rpcCall(app, method, params);
      expect([method, r.status, r.body.error]).toEqual([method, 503, { code: -32000, message }]);
    }
    const batch = await app.inject({
      method: 'POST',
      url: '/',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'getIndexerSlot' }]),
    });
    expect(JSON.parse(batch.body)).toEqual([{ jsonrpc: '2.0', id: 1, error: { code: -32000, message } }]);
    await app.close();
  });

  it('every LMDB reader slot in use → 503 "Store unavailable: … retry"; other errors stay internal', () => {
    const full = describeError(new Error('MDB_READERS_FULL: Environment maxreaders limit reached'));
    expect([full.status, full.code, full.message, full.unexpected]).toEqual([503, -32000, 'Store unavailable: every LMDB reader slot is in use; retry', false]);
    const bug = describeError(new Error('MDB_CORRUPTED: Located page was wrong type'));
    expect([bug.status, bug.message, bug.unexpected]).toEqual([500, 'Internal server error', true]);
  });
});

describe('prover failures in JSON-RPC', () => {
  it('only a self-contradiction (and Photon\'s refused-statement case) stays Internal server error; the rest say why', () => {
    const codes: ProverErrorCode[] = [
      'unsupported_shape', 'invalid_input', 'malformed_request', 'witness_failed', 'keys_missing', 'verify_failed', 'worker_crashed',
      'setup_failed', 'queue_full', 'timeout', 'queue_unavailable', 'not_ready', 'remote_failed', 'remote_refused', 'internal',
    ];
    const internal = codes.filter((c) => describeError(proverErrorToRpc(new ProverError(c, 'why'))).unexpected);
    expect(internal).toEqual(['witness_failed', 'verify_failed', 'remote_refused', 'internal']);
    const setup = describeError(proverErrorToRpc(new ProverError('setup_failed', 'non-inclusion_26_1: circom exited with 1')));
    expect([setup.status, setup.code, setup.message]).toEqual([503, -32000, 'Prover not available: non-inclusion_26_1: circom exited with 1']);
  });
});
