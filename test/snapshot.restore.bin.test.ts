/**
 * Snapshots through the binary (bin/refract.mjs), from files: `refract snapshot create` of a store
 * written by `refract index`, restored by `refract start --snapshot FILE` into an empty --db, answers
 * the API byte for byte like the original; and every bad input is refused with exit status 1, a
 * message naming the failed check, and the target store untouched: a truncated file (in the header,
 * in the payload), a corrupted payload byte, a corrupted manifest, a wrong cluster (genesis hash
 * differs from the node's), a newer store schema, a manifest whose tree roots the payload does not
 * have, a non-empty target. `refract start` records the node's genesis hash and refuses a store
 * recorded for another cluster.
 *
 * The wrong-cluster snapshot is made by editing the manifest (and its checksum) in the test: the
 * simulator's genesis hash is one constant (it does not depend on `--seed`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
import { SCHEMA_VERSION, Store } from '../src/store/store.ts';
import { dumpStore } from './helpers/store.ts';
import { tempDir, txDir } from './helpers/photon.ts';
import { runRefract, startRefract, stopAll } from './helpers/refractBin.ts';

/** Owners of the e2e fixture: the compressed token program (owner of the token accounts), two token owners. */
const TOKEN_PROGRAM = 'cTokenmWW8bLPjZEBAUgYy3zKxQZW6VKi7bqNFEVv3m';
const BOB = 'EU57rQxcmFhJ24ApVdUy3y4MxFXcTUN3uiVeWvGgtWXu';
const CHARLES = 'CHvwuTvTiwRSNBwAnrCG14V8YTJ6wwhHQrifxdFzHzsX';
const GENESIS_A = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d';
const GENESIS_B = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';

const servers: Server[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  await stopAll();
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const s of servers) s.close();
});

/** A Solana node answering getGenesisHash with `genesis` (changeable) and "Method not found" otherwise. */
async function genesisNode(genesis: string): Promise<{ url: string; set(g: string): void }> {
  let g = genesis;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const m = JSON.parse(body) as { id: number; method: string };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(m.method === 'getGenesisHash' ? { jsonrpc: '2.0', id: m.id, result: g } : { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } }));
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, set: (x) => (g = x) };
}

/** The raw text of one JSON-RPC call's answer. */
async function rawRpc(url: string, method: string, params: unknown): Promise<string> {
  const res = await fetch(`${url}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return `${res.status} ${await res.text()}`;
}

/** Snapshot file parts: header lines, manifest (parsed), payload. */
function parts(file: Buffer): { magic: Buffer; manifest: any; payload: Buffer; manifestStart: number } {
  const nl1 = file.indexOf(10);
  const nl2 = file.indexOf(10, nl1 + 1);
  const length = Number(file.subarray(nl1 + 1, nl2).toString().split(' ')[0]);
  const manifestStart = nl2 + 1;
  return { magic: file.subarray(0, nl1 + 1), manifest: JSON.parse(file.subarray(manifestStart, manifestStart + length).toString()), payload: file.subarray(manifestStart + length + 1), manifestStart };
}

/** `file` with its manifest edited by `edit` and the manifest checksum recomputed (a well-formed file). */
function withManifest(file: Buffer, edit: (m: any) => void): Buffer {
  const p = parts(file);
  edit(p.manifest);
  const json = Buffer.from(JSON.stringify(p.manifest));
  return Buffer.concat([p.magic, Buffer.from(`${json.length} ${createHash('sha256').update(json).digest('hex')}\n`), json, Buffer.from('\n'), p.payload]);
}

/**
 * `refract start --snapshot FILE …args` expected to fail: its exit status and stderr (killed after
 * 60 s if it comes up instead).
 */
async function failingStart(args: string[]): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [REFRACT_BIN, 'start', '--host', '127.0.0.1', '--port', '0', '--no-prover', '--no-tree-sync', ...args], {
    cwd: tempDir('refract-cwd-'),
    env: Object.fromEntries(Object.entries({ ...process.env, REFRACT_LOG_LEVEL: 'info' }).filter(([k]) => !k.startsWith('REFRACT_') || k === 'REFRACT_LOG_LEVEL')),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const status = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  clearTimeout(timer);
  return { status, stderr };
}

/**
 * A store directory as files (name → size and modification time, recursively; the lock file's size) and contents (every
 * sub-database, `dumpStore`), to tell it was not touched. The data file is sparse (the write map's
 * size), so its bytes are compared through LMDB.
 */
async function storeState(dir: string): Promise<{ files: Record<string, string>; dump: Record<string, string[]> }> {
  const files: Record<string, string> = {};
  const walk = (d: string, prefix: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p, `${prefix}${e.name}/`);
      else {
        const st = statSync(p);
        // lock.mdb changes with every reader (this function's too): its size only.
        files[`${prefix}${e.name}`] = e.name === 'lock.mdb' ? `${st.size}` : `${st.size} ${st.mtimeMs}`;
      }
    }
  };
  walk(dir, '');
  const store = new Store({ path: dir, readOnly: true });
  try {
    return { files, dump: dumpStore(store) };
  } finally {
    await store.close();
  }
}

let db: string;
let file: Buffer;
let snapshotPath: string;

beforeAll(async () => {
  db = join(tempDir('refract-snapsrc-'), 'db');
  const idx = await runRefract(['index', '--db', db, '--transactions', txDir('e2e_mint_and_transfer_transactions'), '--no-progress']);
  expect(idx.status, idx.stderr).toBe(0);
  snapshotPath = join(tempDir('refract-snapfile-'), 'store.snapshot');
  const created = await runRefract(['snapshot', 'create', '--db', db, '--out', snapshotPath]);
  expect(created.status, created.stderr).toBe(0);
  expect(JSON.parse(created.stdout)).toMatchObject({ out: snapshotPath, slot: JSON.parse(idx.stdout).lastSlot, blockhash: null, genesisHash: null, schemaVersion: SCHEMA_VERSION });
  expect(readdirSync(join(snapshotPath, '..'))).toEqual(['store.snapshot']); // no .partial, no work directory
  file = readFileSync(snapshotPath);
}, 120_000);

describe('refract snapshot create → refract start --snapshot FILE', () => {
  it('the restored store answers the API byte for byte like the original (no genesis recorded: the cluster check is skipped with a warning)', async () => {
    const target = join(tempDir('refract-snaptarget-'), 'db');
    const original = await startRefract(['--db', db, '--no-prover']);
    const restored = await startRefract(['--db', target, '--no-prover', '--snapshot', snapshotPath]);
    expect(restored.stderr()).toContain('store restored from the snapshot');
    expect(restored.stderr()).toContain('the snapshot records no genesis hash');

    const hash = JSON.parse((await rawRpc(original.url, 'getCompressedTokenAccountsByOwner', { owner: BOB })).slice(4)).result.value.items[0].account.hash as string;
    const calls: [string, unknown][] = [
      ['getIndexerSlot', []],
      ...[TOKEN_PROGRAM, BOB, CHARLES].flatMap((owner): [string, unknown][] => [
        ['getCompressedAccountsByOwner', { owner }],
        ['getCompressedBalanceByOwner', { owner }],
        ['getCompressedTokenBalancesByOwner', { owner }],
        ['getCompressedTokenAccountsByOwner', { owner }],
        ['getCompressionSignaturesForOwner', { owner }],
      ]),
      ['getCompressedAccountProof', { hash }],
      ['getMultipleCompressedAccounts', { hashes: [hash] }],
    ];
    for (const [method, params] of calls) {
      const [a, b] = await Promise.all([rawRpc(original.url, method, params), rawRpc(restored.url, method, params)]);
      expect(a.startsWith('200 ') && !a.includes('"error"'), `${method}: ${a}`).toBe(true);
      expect(b, method).toBe(a);
    }
    // The proof's root is the manifest's root of that tree.
    const proof = JSON.parse((await rawRpc(restored.url, 'getCompressedAccountProof', { hash })).slice(4)).result.value;
    expect(parts(file).manifest.trees).toContainEqual({ tree: proof.merkleTree, root: proof.root, rootSeq: String(proof.rootSeq) });
  }, 120_000);

  it('REFRACT_SNAPSHOT does the same as --snapshot', async () => {
    const target = join(tempDir('refract-snaptarget-'), 'db');
    const d = await startRefract(['--db', target, '--no-prover'], { REFRACT_SNAPSHOT: snapshotPath });
    expect(d.stderr()).toContain('store restored from the snapshot');
    expect(JSON.parse((await rawRpc(d.url, 'getIndexerSlot', [])).slice(4)).result).toBe(parts(file).manifest.lastBlock.slot);
    await d.stop();
  }, 60_000);
});

describe('refract start --snapshot: bad input is refused, the target untouched', () => {
  const write = (name: string, bytes: Buffer) => {
    const p = join(tempDir('refract-badsnap-'), name);
    writeFileSync(p, bytes);
    return p;
  };

  /** Starts on a fresh target (missing, or an existing empty directory): exit 1, message, nothing left behind. */
  async function refused(snapshot: Buffer, extra: string[], expected: RegExp[], targetKind: 'missing' | 'empty' = 'missing'): Promise<string> {
    const parent = tempDir('refract-snaptarget-');
    const target = join(parent, 'db');
    if (targetKind === 'empty') mkdirSync(target);
    const r = await failingStart(['--db', target, '--snapshot', write('bad.snapshot', snapshot), ...extra]);
    expect(r.status, r.stderr).toBe(1);
    const line = r.stderr.split('\n').find((l) => l.startsWith('refract: '))!;
    expect(line, r.stderr).toBeDefined();
    for (const re of expected) expect(line).toMatch(re);
    expect(line).toContain(`the store at ${target} was left untouched`);
    expect(readdirSync(parent)).toEqual(targetKind === 'missing' ? [] : ['db']);
    if (targetKind === 'empty') expect(readdirSync(target)).toEqual([]);
    return line;
  }

  it('truncated: inside the header, inside the payload', async () => {
    await refused(file.subarray(0, 40), ['--no-ingest'], [/refused \(truncated\)/, /ends inside its header/]);
    const half = file.subarray(0, file.length - Math.floor(parts(file).payload.length / 2));
    await refused(half, ['--no-ingest'], [/refused \(truncated\)/, /its payload has \d+ of the \d+ bytes the manifest announces/], 'empty');
  }, 120_000);

  it('corrupted: a payload byte (payload checksum), a manifest byte (manifest checksum), not a snapshot at all', async () => {
    const bad = Buffer.from(file);
    bad[bad.length - 100] ^= 0x01;
    await refused(bad, ['--no-ingest'], [/refused \(checksum\)/, /payload checksum mismatch: the payload's SHA-256 is [0-9a-f]{64}, the manifest says [0-9a-f]{64} \(the file is corrupted\)/]);
    const badManifest = Buffer.from(file);
    badManifest[parts(file).manifestStart + 10] ^= 0x01;
    await refused(badManifest, ['--no-ingest'], [/refused \(checksum\)/, /manifest checksum mismatch/]);
    await refused(Buffer.from('{"jsonrpc":"2.0","error":{"code":-32601}}\n'), ['--no-ingest'], [/refused \(format\)/, /not a Refract snapshot/]);
  }, 120_000);

  it('wrong cluster: the manifest names genesis A, the node at --rpc-url serves B', async () => {
    const node = await genesisNode(GENESIS_B);
    const onA = withManifest(file, (m) => (m.genesisHash = GENESIS_A));
    await refused(onA, ['--rpc-url', node.url], [/refused \(genesis\)/, new RegExp(`wrong cluster: the snapshot was taken on the cluster with genesis hash ${GENESIS_A}, but http://127\\.0\\.0\\.1:\\d+ serves genesis hash ${GENESIS_B}`)]);
  }, 60_000);

  it('a newer store schema; roots the payload does not have', async () => {
    await refused(withManifest(file, (m) => (m.schemaVersion = SCHEMA_VERSION + 1)), ['--no-ingest'], [/refused \(schema\)/, new RegExp(`store schema version ${SCHEMA_VERSION + 1} is newer than this Refract's \\(${SCHEMA_VERSION}\\)`)]);
    const wrongRoot = withManifest(file, (m) => (m.trees[0].root = '11111111111111111111111111111111'));
    await refused(wrongRoot, ['--no-ingest'], [/refused \(contents\)/, /the restored store does not match the snapshot's manifest: tree \w+ has root \w+ seq \d+, the manifest says root 11111111111111111111111111111111/]);
  }, 120_000);

  it('a non-empty target store: refused, left as it was', async () => {
    const target = join(tempDir('refract-snaptarget-'), 'db');
    const idx = await runRefract(['index', '--db', target, '--transactions', txDir('lamport_transfers'), '--no-progress']);
    expect(idx.status, idx.stderr).toBe(0);
    const before = await storeState(target);
    const r = await failingStart(['--db', target, '--snapshot', snapshotPath, '--no-ingest']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/refused \(target\): the store directory \S+ is not empty \(it holds data\.mdb, lock\.mdb\): a snapshot is restored only into an empty store/);
    expect(r.stderr).toContain(`the store at ${target} was left untouched`);
    const after = await storeState(target);
    expect(after.files).toEqual(before.files);
    expect(after.dump).toEqual(before.dump);
    expect(after.dump.blocks!.length).toBeGreaterThan(0);
    expect(readdirSync(join(target, '..'))).toEqual(['db']);
  }, 60_000);
});

describe('refract start records the cluster', () => {
  it('writes the node\'s genesis hash into the store, snapshots carry it, and a node of another cluster is refused', async () => {
    const node = await genesisNode(GENESIS_A);
    const target = join(tempDir('refract-genesis-'), 'db');
    // startRefract passes --no-ingest: nothing is recorded without ingest.
    const d = await startRefract(['--db', target, '--no-prover', '--no-tree-sync', '--rpc-url', node.url]);
    await d.stop();
    let snap = await runRefract(['snapshot', 'create', '--db', target, '--out', '-']);
    expect(snap.status, snap.stderr).toBe(0);
    expect(JSON.parse(snap.stderr).genesisHash).toBeNull();

    const child = spawn(process.execPath, [REFRACT_BIN, 'start', '--db', target, '--host', '127.0.0.1', '--port', '0', '--no-prover', '--no-tree-sync', '--rpc-url', node.url], {
      cwd: tempDir('refract-cwd-'),
      env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('REFRACT_'))), REFRACT_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
    const deadline = Date.now() + 60_000;
    while (!err.includes('refract listening') && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(err).toContain(`"genesisHash":"${GENESIS_A}","msg":"recorded the cluster's genesis hash in the store"`);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));

    snap = await runRefract(['snapshot', 'create', '--db', target, '--out', '-']);
    expect(JSON.parse(snap.stderr).genesisHash).toBe(GENESIS_A);
    expect(parts(Buffer.from(snap.stdout, 'latin1')).manifest.genesisHash).toBe(GENESIS_A);

    node.set(GENESIS_B);
    const r = await failingStart(['--db', target, '--rpc-url', node.url]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`refract: the store at this --db indexes the cluster with genesis hash ${GENESIS_A}, but http://127.0.0.1:`);
  }, 120_000);
});
