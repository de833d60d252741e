/**
 * Store snapshots in process (src/store/snapshot.ts, src/rpc/http/snapshotRoute.ts): a snapshot
 * restores byte for byte (every sub-database), its manifest names the last block, the genesis hash
 * and each tree's root and root seq as the API answers them; a snapshot taken while blocks are being
 * written is one consistent read snapshot; `GET /snapshot` takes API keys scoped to the `snapshot`
 * method and leaves no work files behind.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { pathAndRoot } from '../src/query/merkleProofs.ts';
import { registerSnapshotRoute } from '../src/rpc/http/snapshotRoute.ts';
import * as base58 from '../src/solana/base58.ts';
import { prepareSnapshot, readSnapshotManifest, restoreSnapshot, SNAPSHOT_MAGIC, type PreparedSnapshot } from '../src/store/snapshot.ts';
import { SCHEMA_VERSION, Store } from '../src/store/store.ts';
import { tempDir } from './helpers/photon.ts';
import { fixtureStore, registry } from './helpers/rpcLmdb.ts';
import { dumpStore } from './helpers/store.ts';

const stores: Store[] = [];
afterAll(async () => {
  for (const s of stores) await s.close().catch(() => {});
});

/** The whole snapshot file of `p` in memory (small test stores only). */
async function bytesOf(p: PreparedSnapshot): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of p.stream()) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('snapshot of a store', () => {
  it('restores every sub-database byte for byte; the manifest has last block, genesis, roots as the API answers them', async () => {
    const src = fixtureStore('e2e');
    stores.push(src);
    src.write((w) => w.setGenesisHash('4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn'));
    const work = tempDir('refract-snapwork-');
    const p = await prepareSnapshot(src, { workDir: work });
    const file = await bytesOf(p);
    await p.dispose();
    expect(readdirSync(work)).toEqual([]); // the work directory is gone

    expect(file.subarray(0, SNAPSHOT_MAGIC.length + 1).toString()).toBe(`${SNAPSHOT_MAGIC}\n`);
    expect(file.length).toBe(p.totalBytes);
    const m = p.manifest;
    expect(m).toMatchObject({ format: 1, schemaVersion: SCHEMA_VERSION, genesisHash: '4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn', lastBlock: { slot: 0, blockhash: null } });
    expect(m.payload.bytes).toBe(file.length - p.header.length);
    expect(await readSnapshotManifest(Readable.from([file]))).toEqual(m);
    // Each tree's root and seq = what a proof of that tree answers (query/merkleProofs.ts pathAndRoot).
    expect(m.trees.length).toBeGreaterThan(0);
    src.read((r) => {
      for (const t of m.trees) {
        const info = registry.get(t.tree)!;
        const { root, rootSeq } = pathAndRoot(r, base58.decode(t.tree), info.height, 0);
        expect({ root: base58.encode(root), rootSeq: rootSeq.toString() }).toEqual({ root: t.root, rootSeq: t.rootSeq });
      }
    });

    const target = join(tempDir('refract-snaptarget-'), 'db');
    const restored = await restoreSnapshot({ source: Readable.from([file]), target });
    expect(restored).toEqual(m);
    expect(readdirSync(join(target, '..'))).toEqual(['db']); // no temporary directory left
    const copy = new Store({ path: target, readOnly: true });
    stores.push(copy);
    expect(dumpStore(copy)).toEqual(dumpStore(src));
  });

  it('restores into an existing empty directory (a mounted volume) and leaves it empty on failure', async () => {
    const src = fixtureStore('lamports');
    stores.push(src);
    const p = await prepareSnapshot(src, { workDir: tempDir('refract-snapwork-') });
    const file = await bytesOf(p);
    await p.dispose();
    const target = tempDir('refract-snaptarget-');
    await expect(restoreSnapshot({ source: Readable.from([file.subarray(0, file.length - 10)]), target })).rejects.toMatchObject({ check: 'truncated' });
    expect(readdirSync(target)).toEqual([]);
    await restoreSnapshot({ source: Readable.from([file]), target });
    expect(readdirSync(target).sort()).toEqual(['data.mdb', 'lock.mdb']);
    const copy = new Store({ path: target, readOnly: true });
    stores.push(copy);
    expect(dumpStore(copy)).toEqual(dumpStore(src));
  });

  it('taken while blocks are written: the manifest and the payload are the same read snapshot', async () => {
    const src = new Store({ path: tempDir('refract-snapsrc-') });
    stores.push(src);
    const block = (slot: number) => ({ slot, parentSlot: slot - 1, blockTime: 0, blockHeight: slot, blockhash: base58.encode(Buffer.alloc(32, slot % 256)), previousBlockhash: '' });
    // Some bulk so the copy takes a moment.
    src.write((w) => {
      for (let s = 1; s <= 20_000; s++) w.insertBlock(block(s));
    });
    let slot = 20_000;
    let writing = true;
    const writer = (async () => {
      while (writing) {
        src.write((w) => {
          for (let i = 0; i < 50; i++) w.insertBlock(block(++slot));
        });
        await new Promise((r) => setImmediate(r));
      }
    })();
    const p = await prepareSnapshot(src, { workDir: tempDir('refract-snapwork-') });
    writing = false;
    await writer;
    const file = await bytesOf(p);
    await p.dispose();
    const m = p.manifest;
    expect(m.lastBlock!.slot).toBeGreaterThanOrEqual(20_000);
    expect(m.lastBlock!.blockhash).toBe(block(m.lastBlock!.slot).blockhash);
    expect(slot).toBeGreaterThan(m.lastBlock!.slot); // the store moved on while the snapshot was made
    // restoreSnapshot compares the restored store's last block with the manifest.
    const target = join(tempDir('refract-snaptarget-'), 'db');
    await restoreSnapshot({ source: Readable.from([file]), target });
    const copy = new Store({ path: target, readOnly: true });
    stores.push(copy);
    expect(copy.read((r) => r.lastSlot())).toBe(m.lastBlock!.slot);
  });
});

describe('GET /snapshot', () => {
  it('API keys: none → 401, a key without the snapshot method → 403, with it → the snapshot; no HEAD; work files removed', async () => {
    const src = fixtureStore('lamports');
    stores.push(src);
    const work = tempDir('refract-snapwork-');
    const app = Fastify({ logger: false });
    registerSnapshotRoute(app, {
      store: src,
      workDir: work,
      apiKeys: [{ key: 'rpc-only', name: 'rpc', methods: ['getIndexerSlot'] }, { key: 'snap', name: 'snap', methods: ['snapshot'] }, 'all-methods'],
      rateLimit: false,
    });
    await app.ready();
    try {
      const none = await app.inject({ method: 'GET', url: '/snapshot' });
      expect(none.statusCode).toBe(401);
      expect(none.json()).toMatchObject({ code: 'unauthorized' });
      const rpc = await app.inject({ method: 'GET', url: '/snapshot', headers: { 'x-api-key': 'rpc-only' } });
      expect(rpc.statusCode).toBe(403);
      expect(rpc.json()).toEqual({ code: 'forbidden', message: "API key 'rpc' may not download snapshots ('snapshot' is not among its methods)" });
      expect((await app.inject({ method: 'HEAD', url: '/snapshot', headers: { 'x-api-key': 'snap' } })).statusCode).toBe(404);

      for (const auth of [{ 'x-api-key': 'snap' }, { authorization: 'Bearer all-methods' }]) {
        const ok = await app.inject({ method: 'GET', url: '/snapshot', headers: auth });
        expect(ok.statusCode).toBe(200);
        expect(ok.headers['content-type']).toBe('application/vnd.refract.snapshot');
        expect(Number(ok.headers['content-length'])).toBe(ok.rawPayload.length);
        expect(ok.headers['x-refract-snapshot-slot']).toBe('0');
        const target = join(tempDir('refract-snaptarget-'), 'db');
        const m = await restoreSnapshot({ source: Readable.from([ok.rawPayload]), target });
        expect(m.lastBlock).toEqual({ slot: 0, blockhash: null });
        const copy = new Store({ path: target, readOnly: true });
        stores.push(copy);
        expect(dumpStore(copy)).toEqual(dumpStore(src));
      }
      const q = await app.inject({ method: 'GET', url: '/snapshot?api-key=snap' });
      expect(q.statusCode).toBe(200);
      // The answer's end removes the work directory (on 'close', just after inject resolves).
      await new Promise((r) => setTimeout(r, 50));
      expect(readdirSync(work)).toEqual([]);
    } finally {
      await app.close();
    }
    expect(existsSync(work)).toBe(true);
  });

  it('one snapshot at a time (503 snapshot_busy with Retry-After); a client that goes away frees the route and its files', async () => {
    const src = fixtureStore('e2e');
    stores.push(src);
    const work = tempDir('refract-snapwork-');
    const app = Fastify({ logger: false });
    registerSnapshotRoute(app, { store: src, workDir: work, rateLimit: false });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/snapshot`;
    try {
      const [a, b] = await Promise.all([fetch(url), fetch(url)]);
      const statuses = [a.status, b.status].sort();
      expect(statuses).toEqual([200, 503]);
      const busy = a.status === 503 ? a : b;
      expect(busy.headers.get('retry-after')).toBe('30');
      expect(await busy.json()).toMatchObject({ code: 'snapshot_busy' });
      await (a.status === 200 ? a : b).arrayBuffer();

      // Gone while the snapshot is made (or sent).
      for (const ms of [1, 20, 60]) {
        const ctl = new AbortController();
        const gone = fetch(url, { signal: ctl.signal }).then((r) => r.arrayBuffer());
        setTimeout(() => ctl.abort(), ms);
        await gone.catch(() => {});
        let ok: Response | undefined;
        for (let i = 0; i < 100 && ok?.status !== 200; i++) {
          await new Promise((r) => setTimeout(r, 20));
          ok = await fetch(url);
          if (ok.status !== 200) await ok.arrayBuffer();
        }
        expect(ok!.status).toBe(200);
        await ok!.arrayBuffer();
      }
      await new Promise((r) => setTimeout(r, 100));
      expect(readdirSync(work)).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
