/**
 * Store snapshots (issue #26, "seed a replica from a peer"): a consistent, compacted, gzip-compressed
 * copy of an LMDB store with a manifest, as one file that can be written and read as a stream —
 * `refract snapshot create`, a daemon's `GET /snapshot`, and `refract start --snapshot FILE|URL`.
 *
 * ## File format (version 1)
 *
 * ```
 * REFRACT-SNAPSHOT 1\n                      magic line: format name, space, format version
 * <m> <manifest sha256, 64 hex>\n           manifest length in bytes (decimal, ≤ 16 MiB) and its SHA-256
 * <manifest: m bytes of UTF-8 JSON>\n
 * <payload: manifest.payload.bytes bytes>   gzip (RFC 1952) of the LMDB data file (data.mdb) of a compacted copy
 * ```
 *
 * Nothing follows the payload. The header comes first, so a reader refuses a wrong schema or cluster
 * before it reads the payload, and streams the payload to disk without holding it in memory. The
 * manifest (JSON, {@link SnapshotManifest}):
 *
 * ```
 * { "format": 1, "createdAt": "2025-…Z", "schemaVersion": 4,
 *   "lastBlock": { "slot": 1234, "blockhash": "<base58>" | null } | null,
 *   "genesisHash": "<base58>" | null,
 *   "trees": [ { "tree": "<base58>", "root": "<base58>", "rootSeq": "<decimal u64>" }, … ],
 *   "payload": { "encoding": "gzip", "content": "lmdb-data", "bytes": <n>, "sha256": "<hex>", "dataBytes": <n> } }
 * ```
 *
 * - `schemaVersion`: the store's key layout and codec version (`SCHEMA_VERSION`, store.ts); a reader
 *   restores only its own (a newer one is refused with "upgrade", an older one with "re-index").
 * - `lastBlock`: the copy's highest block (the replica's ingest resumes after it, anchored on its
 *   blockhash; null blockhash: a block from transaction files, which has none).
 * - `genesisHash`: the cluster the store indexes (meta key written by `refract start`), or null when
 *   the store never recorded one (the reader then skips the cluster check with a warning).
 * - `trees`: every tree's root and root seq as the API answers them (store.ts `treeRoots`), in
 *   ascending tree order; checked against the restored store before it is used.
 * - `payload`: `bytes` and `sha256` (lowercase hex) of the compressed payload as it is in the file;
 *   `dataBytes` the size of the decompressed data file.
 *
 * Every value in the manifest is read from the copy itself (not the live store), so the manifest and
 * the payload describe the same LMDB read snapshot even while a daemon writes to the store.
 *
 * Errors are {@link SnapshotError}s whose `check` names what failed (`format`, `truncated`,
 * `checksum`, `schema`, `genesis`, `target`, `contents`, `writable`, `source`) and whose message says why.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { z } from 'zod';
import * as base58 from '../solana/base58.ts';
import { SCHEMA_VERSION, SchemaMismatchError, Store } from './store.ts';
import { probeStoreWritable } from './writeProbe.ts';

/** The snapshot format version this build writes and reads. */
export const SNAPSHOT_FORMAT = 1;
/** First line of a snapshot file (without its `\n`). */
export const SNAPSHOT_MAGIC = `REFRACT-SNAPSHOT ${SNAPSHOT_FORMAT}`;
/** Largest manifest accepted (bytes). */
const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;
/** Longest header line before the manifest (bytes, without `\n`). */
const MAX_LINE_BYTES = 200;

/** Which check of a snapshot failed (see the module comment). */
export type SnapshotCheck = 'format' | 'truncated' | 'checksum' | 'schema' | 'genesis' | 'target' | 'contents' | 'writable' | 'source';

/** A snapshot refused or not readable: `check` names the check that failed; the message says why. */
export class SnapshotError extends Error {
  constructor(
    readonly check: SnapshotCheck,
    message: string,
  ) {
    super(message);
    this.name = 'SnapshotError';
  }
}

/** One tree's root in a manifest. */
export interface ManifestTree {
  /** Tree pubkey, base58. */
  tree: string;
  /** Root hash, base58 (as the API answers `root`). */
  root: string;
  /** Root seq, decimal u64 (as a string: exact above 2^53). */
  rootSeq: string;
}

/** The manifest of a snapshot (module comment). */
export interface SnapshotManifest {
  format: 1;
  /** ISO 8601 time the copy was made. */
  createdAt: string;
  /** `SCHEMA_VERSION` of the store the payload holds. */
  schemaVersion: number;
  /** The store's highest block, or null when it has none. */
  lastBlock: { slot: number; blockhash: string | null } | null;
  /** The cluster's genesis hash (base58), or null when the store never recorded one. */
  genesisHash: string | null;
  /** Every tree that has a root node, ascending by pubkey bytes. */
  trees: ManifestTree[];
  payload: {
    encoding: 'gzip';
    /** What the payload decompresses to: the LMDB data file (`data.mdb`). */
    content: 'lmdb-data';
    /** Compressed payload size in bytes. */
    bytes: number;
    /** SHA-256 of the compressed payload, lowercase hex. */
    sha256: string;
    /** Decompressed size (the data file) in bytes. */
    dataBytes: number;
  };
}

const manifestSchema = z.object({
  format: z.literal(1),
  createdAt: z.string(),
  schemaVersion: z.number().int().positive(),
  lastBlock: z.object({ slot: z.number().int().min(0), blockhash: z.string().min(1).nullable() }).nullable(),
  genesisHash: z.string().min(1).nullable(),
  trees: z.array(z.object({ tree: z.string().min(1), root: z.string().min(1), rootSeq: z.string().regex(/^\d+$/) })),
  payload: z.object({
    encoding: z.literal('gzip'),
    content: z.literal('lmdb-data'),
    bytes: z.number().int().min(0),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    dataBytes: z.number().int().min(0),
  }),
});

/** What the manifest says about a store's contents, as read from an open store (one read snapshot). */
function describeStore(store: Store): Pick<SnapshotManifest, 'schemaVersion' | 'lastBlock' | 'genesisHash' | 'trees'> {
  return store.read((r) => {
    const slot = r.lastSlot();
    const block = slot === null ? undefined : r.block(slot);
    return {
      schemaVersion: r.schemaVersion() ?? SCHEMA_VERSION,
      lastBlock: slot === null ? null : { slot, blockhash: block?.blockhash ? block.blockhash : null },
      genesisHash: r.genesisHash(),
      trees: r.treeRoots().map((t) => ({ tree: base58.encode(t.tree), root: base58.encode(t.hash), rootSeq: t.seq.toString() })),
    };
  });
}

/**
 * {@link describeStore} of the store at `dir`, opened read-only without the write map (opening must
 * not grow or touch its data file) and closed again.
 */
async function describeStoreAt(dir: string): Promise<ReturnType<typeof describeStore>> {
  const store = new Store({ path: dir, readOnly: true, writemap: false });
  try {
    return describeStore(store);
  } finally {
    await store.close();
  }
}

/** The bytes before the payload: magic line, manifest length and checksum, manifest, newline. */
export function encodeSnapshotHeader(manifest: SnapshotManifest): Buffer {
  const json = Buffer.from(JSON.stringify(manifest), 'utf8');
  const sum = createHash('sha256').update(json).digest('hex');
  return Buffer.concat([Buffer.from(`${SNAPSHOT_MAGIC}\n${json.length} ${sum}\n`, 'utf8'), json, Buffer.from('\n')]);
}

/** A snapshot made and ready to be sent or written: its manifest, header, and the payload in a work directory. */
export interface PreparedSnapshot {
  manifest: SnapshotManifest;
  /** {@link encodeSnapshotHeader} of the manifest. */
  header: Buffer;
  /** Size of the whole file in bytes (header + payload). */
  totalBytes: number;
  /**
   * The whole file, header then payload, as a byte stream read from disk (nothing is held in
   * memory but the stream's buffers). Call once.
   */
  stream(): Readable;
  /** Removes the work directory (idempotent; call when the stream is done or abandoned). */
  dispose(): Promise<void>;
}

/** Options of {@link prepareSnapshot}. */
export interface PrepareSnapshotOptions {
  /**
   * Directory that receives a temporary work directory (`.refract-snapshot-XXXXXX`: the LMDB copy,
   * then the compressed payload). Needs room for the compacted store plus its compressed copy; put
   * it on the store's or the output's file system.
   */
  workDir: string;
  /** gzip level 1–9 (default 6, zlib's default). */
  level?: number;
}

/**
 * Makes a snapshot of an open store: a logical copy (`Store.copyTo`: every sub-database read in one
 * read transaction — consistent while other threads or processes write — and written into a fresh,
 * compact LMDB environment by LMDB's ordinary write path, so it takes writes like any store), then
 * the manifest read from that copy, then the copy gzipped (zlib on
 * the thread pool) into the work directory and hashed. The copy is removed once compressed.
 * LMDB's own copy (lmdb-js `backup`) is not used: its compacting mode wrote files whose first write
 * aborts the replica (issue #31, see `Store.copyTo`).
 * @returns the prepared snapshot; the caller streams it and then calls `dispose()`
 * @throws Error when the work directory cannot be written (disk full, permissions) or the copy fails
 */
export async function prepareSnapshot(store: Store, opts: PrepareSnapshotOptions): Promise<PreparedSnapshot> {
  await mkdir(opts.workDir, { recursive: true });
  const work = await mkdtemp(join(opts.workDir, '.refract-snapshot-'));
  let disposed = false;
  const dispose = async () => {
    if (disposed) return;
    disposed = true;
    await rm(work, { recursive: true, force: true });
  };
  try {
    const copyDir = join(work, 'copy');
    await mkdir(copyDir);
    // A fresh environment written by LMDB's ordinary write path: it takes writes like any store
    // (the replica's restore still checks that, `probeStoreWritable`).
    await store.copyTo(copyDir);
    const described = await describeStoreAt(copyDir);
    const dataPath = join(copyDir, 'data.mdb');
    const dataBytes = (await stat(dataPath)).size;
    const payloadPath = join(work, 'payload.gz');
    const hash = createHash('sha256');
    let bytes = 0;
    await pipeline(
      createReadStream(dataPath),
      createGzip({ level: opts.level ?? 6 }),
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          hash.update(chunk);
          bytes += chunk.length;
          yield chunk;
        }
      },
      createWriteStream(payloadPath),
    );
    await rm(copyDir, { recursive: true, force: true });
    const manifest: SnapshotManifest = {
      format: 1,
      createdAt: new Date().toISOString(),
      ...described,
      payload: { encoding: 'gzip', content: 'lmdb-data', bytes, sha256: hash.digest('hex'), dataBytes },
    };
    const header = encodeSnapshotHeader(manifest);
    return {
      manifest,
      header,
      totalBytes: header.length + bytes,
      stream: () =>
        Readable.from(
          (async function* () {
            yield header;
            yield* createReadStream(payloadPath);
          })(),
          { objectMode: false },
        ),
      dispose,
    };
  } catch (e) {
    await dispose();
    throw e;
  }
}

/**
 * `prepareSnapshot` of the store at `db` (opened read-only; a daemon may be writing to it), written to
 * `out` (through `<out>.partial`, renamed when complete) — or to `out` as a stream (e.g. stdout) when
 * `out` is a writable stream. The work directory goes next to the output file (the current
 * directory for a stream) unless `workDir` says otherwise.
 * @returns the manifest and the file's size in bytes
 * @throws Error `no store at <db>` when the directory holds no LMDB data file; SchemaMismatchError
 *   for a store of another schema version; I/O errors
 */
export async function createSnapshotFile(db: string, out: string | NodeJS.WritableStream, opts: { workDir?: string; level?: number } = {}): Promise<{ manifest: SnapshotManifest; bytes: number }> {
  const dataFile = join(db, 'data.mdb');
  try {
    await stat(dataFile);
  } catch {
    throw new Error(`no store at ${db} (no ${dataFile})`);
  }
  const store = new Store({ path: db, readOnly: true });
  const workDir = opts.workDir ?? (typeof out === 'string' ? dirname(resolve(out)) : process.cwd());
  let prepared: PreparedSnapshot;
  try {
    prepared = await prepareSnapshot(store, { workDir, level: opts.level });
  } finally {
    await store.close();
  }
  try {
    if (typeof out === 'string') {
      const partial = `${out}.partial`;
      await pipeline(prepared.stream(), createWriteStream(partial));
      await rename(partial, out);
    } else {
      await pipeline(prepared.stream(), out);
    }
    return { manifest: prepared.manifest, bytes: prepared.totalBytes };
  } finally {
    await prepared.dispose();
  }
}

/** Reads a byte stream as header lines, exact-length blocks, then the rest. */
class ByteReader {
  private buf: Buffer = Buffer.alloc(0);
  /** Bytes consumed from the source so far. */
  consumed = 0;

  constructor(private readonly it: AsyncIterator<Buffer | string>) {}

  private async more(): Promise<boolean> {
    let r: IteratorResult<Buffer | string>;
    try {
      r = await this.it.next();
    } catch (e) {
      throw new SnapshotError('source', `reading the snapshot failed after ${this.consumed + this.buf.length} bytes: ${(e as Error).message}`);
    }
    if (r.done) return false;
    const chunk = typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    return true;
  }

  /** The next line without its `\n`, at most `max` bytes; null when the stream ends first. */
  async line(max: number): Promise<Buffer | null> {
    for (;;) {
      const nl = this.buf.indexOf(0x0a);
      if (nl >= 0 && nl <= max) {
        const line = this.buf.subarray(0, nl);
        this.take(nl + 1);
        return line;
      }
      if (nl > max || (nl < 0 && this.buf.length > max)) return this.buf.subarray(0, max + 1); // too long: caller reports
      if (!(await this.more())) return null;
    }
  }

  /** Exactly `n` bytes; null when the stream ends first. */
  async exact(n: number): Promise<Buffer | null> {
    while (this.buf.length < n) if (!(await this.more())) return null;
    const out = this.buf.subarray(0, n);
    this.take(n);
    return out;
  }

  private take(n: number): void {
    this.buf = this.buf.subarray(n);
    this.consumed += n;
  }

  /** Everything after what was read, chunk by chunk. */
  async *rest(): AsyncGenerator<Buffer> {
    if (this.buf.length) {
      const b = this.buf;
      this.take(b.length);
      yield b;
    }
    while (await this.more()) {
      const b = this.buf;
      this.take(b.length);
      yield b;
    }
  }
}

const printable = (b: Buffer) => JSON.stringify(b.subarray(0, 40).toString('latin1'));

/**
 * Reads and checks a snapshot's header (magic line, manifest length and checksum, manifest) from
 * `reader`, then its schema version against this build's.
 * @throws SnapshotError `format` (not a snapshot, unknown format version, bad manifest), `truncated`
 *   (the stream ends inside the header), `checksum` (the manifest does not match its checksum),
 *   `schema` (a store schema other than `SCHEMA_VERSION`: newer → upgrade, older → re-index)
 */
async function readHeader(reader: ByteReader): Promise<SnapshotManifest> {
  const truncated = () => new SnapshotError('truncated', `the snapshot is truncated: it ends inside its header (after ${reader.consumed} bytes)`);
  const magic = await reader.line(MAX_LINE_BYTES);
  if (magic === null && reader.consumed === 0) throw new SnapshotError('truncated', 'the snapshot is empty (0 bytes)');
  if (magic === null) throw truncated();
  const m = /^REFRACT-SNAPSHOT (\d+)$/.exec(magic.toString('latin1'));
  if (!m) throw new SnapshotError('format', `not a Refract snapshot: it starts with ${printable(magic)}, expected "${SNAPSHOT_MAGIC}"`);
  if (Number(m[1]) !== SNAPSHOT_FORMAT) throw new SnapshotError('format', `snapshot format version ${m[1]} is not readable by this Refract (it reads version ${SNAPSHOT_FORMAT})`);
  const sizeLine = await reader.line(MAX_LINE_BYTES);
  if (sizeLine === null) throw truncated();
  const s = /^(\d{1,9}) ([0-9a-f]{64})$/.exec(sizeLine.toString('latin1'));
  if (!s) throw new SnapshotError('format', `bad snapshot header: the line after the magic line should be "<manifest bytes> <sha256 hex>", got ${printable(sizeLine)}`);
  const length = Number(s[1]);
  if (length > MAX_MANIFEST_BYTES) throw new SnapshotError('format', `bad snapshot header: a manifest of ${length} bytes is larger than the ${MAX_MANIFEST_BYTES} allowed`);
  const json = await reader.exact(length + 1);
  if (json === null) throw truncated();
  if (json[length] !== 0x0a) throw new SnapshotError('format', 'bad snapshot header: the manifest is not followed by a newline (wrong manifest length)');
  const body = json.subarray(0, length);
  const sum = createHash('sha256').update(body).digest('hex');
  if (sum !== s[2]) throw new SnapshotError('checksum', `manifest checksum mismatch: the manifest's SHA-256 is ${sum}, the header says ${s[2]} (the file is corrupted)`);
  let raw: unknown;
  try {
    raw = JSON.parse(body.toString('utf8'));
  } catch (e) {
    throw new SnapshotError('format', `bad snapshot manifest: not JSON (${(e as Error).message})`);
  }
  // The schema first: a newer Refract's manifest may differ in other fields, and "upgrade" is the useful answer.
  const schema = (raw as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (typeof schema === 'number' && Number.isSafeInteger(schema) && schema !== SCHEMA_VERSION) {
    if (schema > SCHEMA_VERSION) {
      throw new SnapshotError('schema', `the snapshot's store schema version ${schema} is newer than this Refract's (${SCHEMA_VERSION}): restore it with a Refract release that uses schema ${schema}`);
    }
    throw new SnapshotError('schema', `the snapshot's store schema version ${schema} is older than this Refract's (${SCHEMA_VERSION}): take the snapshot from a peer running this release, or index from scratch`);
  }
  const parsed = manifestSchema.safeParse(raw);
  if (!parsed.success) {
    throw new SnapshotError('format', `bad snapshot manifest: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  }
  return parsed.data as SnapshotManifest;
}

/**
 * Reads only the header of a snapshot stream and returns its manifest (the stream is left part-read:
 * destroy it). Same checks and errors as the header part of {@link restoreSnapshot}.
 */
export async function readSnapshotManifest(source: AsyncIterable<Buffer | string>): Promise<SnapshotManifest> {
  return readHeader(new ByteReader(source[Symbol.asyncIterator]()));
}

/**
 * Why `target` cannot receive a restore, or null when it can: it does not exist, or is an empty
 * directory (entry `ignore` aside: the restore's own work directory inside it).
 */
async function targetProblem(target: string, ignore?: string): Promise<string | null> {
  let entries: string[];
  try {
    const st = await stat(target);
    if (!st.isDirectory()) return `${target} exists and is not a directory`;
    entries = (await readdir(target)).filter((e) => e !== ignore);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return `${target} cannot be read: ${(e as Error).message}`;
  }
  if (entries.length === 0) return null;
  const shown = entries.slice(0, 5).join(', ') + (entries.length > 5 ? `, … (${entries.length} entries)` : '');
  return `the store directory ${target} is not empty (it holds ${shown}): a snapshot is restored only into an empty store; remove that directory or choose another --db, or start without --snapshot to keep the store`;
}

/** Options of {@link restoreSnapshot}. */
export interface RestoreSnapshotOptions {
  /** The snapshot's bytes (a file or an HTTP response body). Destroyed on failure. */
  source: Readable;
  /** The store directory to create: must not exist, or be an empty directory. */
  target: string;
  /**
   * Called with the manifest once the header passed the format, checksum and schema checks, before
   * the payload is read: throw (a SnapshotError `genesis`) to refuse the snapshot (the cluster check).
   */
  checkManifest?: (manifest: SnapshotManifest) => Promise<void> | void;
  /** Hears the count of payload bytes read so far (every chunk). */
  onPayloadBytes?: (bytes: number, manifest: SnapshotManifest) => void;
}

/**
 * Restores a snapshot into the empty store directory `target`, all or nothing:
 * 1. `target` must not exist or be an empty directory (`target`);
 * 2. the header: magic, manifest checksum, manifest, schema version (`format`, `truncated`,
 *    `checksum`, `schema`), then `checkManifest` (the caller's cluster check);
 * 3. the payload is streamed to a temporary directory while counted and hashed: fewer bytes than
 *    the manifest says → `truncated`, more → `format`, another SHA-256 → `checksum`; then it is
 *    decompressed (a failure, or another size than `dataBytes` → `checksum`);
 * 4. the decompressed data file is opened read-only (its schema is checked on open) and rebuilt into
 *    a fresh environment (`Store.copyTo`): the file that goes into place is one LMDB wrote itself,
 *    so snapshots whose data file LMDB cannot write to (issue #31: compacting copies of earlier
 *    releases) restore too; the rebuilt store must then accept writes in a child process
 *    (`probeStoreWritable`, `writable`);
 * 5. its last block, genesis hash and every tree's root and root seq are compared with the manifest
 *    (`contents`);
 * 6. only then is it moved into place: the temporary directory is `.<name>.restore-XXXXXX` next to
 *    `target` when `target` does not exist (renamed to `target`), or `.refract-restore-XXXXXX`
 *    inside an existing empty `target` (whose files are then renamed into it). On any failure the
 *    temporary directory is removed and `target` is left as it was.
 * Disk: the compressed payload plus the data file, then the data file and its rebuilt copy, in the
 * temporary directory.
 * @returns the manifest of the restored snapshot
 * @throws SnapshotError naming the failed check; Error for I/O failures (disk full, permissions)
 */
export async function restoreSnapshot(opts: RestoreSnapshotOptions): Promise<SnapshotManifest> {
  const target = resolve(opts.target);
  const { source } = opts;
  try {
    const problem = await targetProblem(target);
    if (problem) throw new SnapshotError('target', problem);
    const reader = new ByteReader(source[Symbol.asyncIterator]());
    const manifest = await readHeader(reader);
    await opts.checkManifest?.(manifest);

    const targetExists = await stat(target).then(
      () => true,
      () => false,
    );
    if (!targetExists) await mkdir(dirname(target), { recursive: true });
    const work = targetExists ? await mkdtemp(join(target, '.refract-restore-')) : await mkdtemp(join(dirname(target), `.${basename(target)}.restore-`));
    try {
      // 3. Payload → disk, counted and hashed.
      const gzPath = join(work, 'payload.gz');
      const hash = createHash('sha256');
      const expected = manifest.payload.bytes;
      let bytes = 0;
      await pipeline(
        async function* () {
          for await (const chunk of reader.rest()) {
            if (bytes + chunk.length > expected) {
              throw new SnapshotError('format', `the snapshot has data after its payload (the manifest says ${expected} payload bytes): not a snapshot file as written, or files joined together`);
            }
            bytes += chunk.length;
            hash.update(chunk);
            opts.onPayloadBytes?.(bytes, manifest);
            yield chunk;
          }
        },
        createWriteStream(gzPath),
      );
      if (bytes < expected) {
        throw new SnapshotError('truncated', `the snapshot is truncated: its payload has ${bytes} of the ${expected} bytes the manifest announces (an interrupted download or copy)`);
      }
      const sum = hash.digest('hex');
      if (sum !== manifest.payload.sha256) {
        throw new SnapshotError('checksum', `payload checksum mismatch: the payload's SHA-256 is ${sum}, the manifest says ${manifest.payload.sha256} (the file is corrupted)`);
      }
      const rawDir = join(work, 'raw');
      await mkdir(rawDir);
      const dataPath = join(rawDir, 'data.mdb');
      try {
        await pipeline(createReadStream(gzPath), createGunzip(), createWriteStream(dataPath));
      } catch (e) {
        throw new SnapshotError('checksum', `the payload matches its checksum but does not decompress (${(e as Error).message}): the snapshot was written corrupted`);
      }
      await rm(gzPath);
      const dataBytes = (await stat(dataPath)).size;
      if (dataBytes !== manifest.payload.dataBytes) {
        throw new SnapshotError('checksum', `the payload decompresses to ${dataBytes} bytes, the manifest says ${manifest.payload.dataBytes}`);
      }

      // 4. Rebuild: the payload's data file is read, never written; the store that goes into place is
      // written anew by LMDB (Store.copyTo), so a data file whose free-page list LMDB cannot walk on
      // its first write (issue #31: compacting copies made by earlier releases) still restores.
      let raw: Store;
      try {
        raw = new Store({ path: rawDir, readOnly: true, writemap: false });
      } catch (e) {
        if (e instanceof SchemaMismatchError) throw new SnapshotError('schema', `the restored store: ${e.message}`);
        throw new SnapshotError('contents', `the restored store does not open: ${(e as Error).message}`);
      }
      const dbDir = join(work, 'db');
      try {
        await raw.copyTo(dbDir);
      } catch (e) {
        throw new SnapshotError('contents', `the snapshot's store cannot be read in full: ${(e as Error).message}`);
      } finally {
        await raw.close();
      }
      await rm(rawDir, { recursive: true, force: true });
      const probe = await probeStoreWritable(dbDir);
      if (!probe.ok) throw new SnapshotError('writable', `the restored store does not accept writes (${probe.reason}); --db was left untouched`);

      // 5. Open and compare with the manifest.
      const found = await describeStoreAt(dbDir);
      const mismatch = compareContents(manifest, found);
      if (mismatch) throw new SnapshotError('contents', `the restored store does not match the snapshot's manifest: ${mismatch}`);

      // 6. Into place.
      const again = await targetProblem(target, targetExists ? basename(work) : undefined);
      if (again) throw new SnapshotError('target', again);
      if (targetExists) {
        for (const f of await readdir(dbDir)) await rename(join(dbDir, f), join(target, f));
      } else {
        await rename(dbDir, target);
      }
      return manifest;
    } finally {
      // On failure nothing else was written: `target` is still missing, or still empty.
      await rm(work, { recursive: true, force: true });
    }
  } finally {
    source.destroy();
  }
}

/** The first difference between a manifest and a restored store's contents, or null. */
function compareContents(m: SnapshotManifest, found: ReturnType<typeof describeStore>): string | null {
  const slot = (b: SnapshotManifest['lastBlock']) => (b ? `slot ${b.slot} (blockhash ${b.blockhash ?? 'none'})` : 'no block');
  if (found.lastBlock?.slot !== m.lastBlock?.slot || found.lastBlock?.blockhash !== m.lastBlock?.blockhash) {
    return `its last block is ${slot(found.lastBlock)}, the manifest says ${slot(m.lastBlock)}`;
  }
  if (found.genesisHash !== m.genesisHash) return `its genesis hash is ${found.genesisHash ?? 'none'}, the manifest says ${m.genesisHash ?? 'none'}`;
  const want = new Map(m.trees.map((t) => [t.tree, t]));
  for (const t of found.trees) {
    const w = want.get(t.tree);
    if (!w) return `tree ${t.tree} (root ${t.root}, seq ${t.rootSeq}) is not in the manifest`;
    if (w.root !== t.root || w.rootSeq !== t.rootSeq) return `tree ${t.tree} has root ${t.root} seq ${t.rootSeq}, the manifest says root ${w.root} seq ${w.rootSeq}`;
    want.delete(t.tree);
  }
  for (const w of want.values()) return `tree ${w.tree} of the manifest (root ${w.root}, seq ${w.rootSeq}) has no root in the store`;
  return null;
}
