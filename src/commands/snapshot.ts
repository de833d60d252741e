/**
 * Store snapshots at the command line (issue #26, "seed a replica from a peer"):
 * - `refract snapshot create --db DIR --out FILE|-` (`runSnapshotCreate`): a consistent, compacted,
 *   compressed copy of a store, also while a daemon writes to it (format: src/store/snapshot.ts);
 * - `refract start --snapshot FILE|URL` / `REFRACT_SNAPSHOT` (`seedFromSnapshot`, called by
 *   `startDaemon` before it opens the store): read or download a snapshot, check it (checksums,
 *   schema, cluster against the node at `--rpc-url`, tree roots) and restore it into the empty
 *   `--db`; the daemon then follows the chain from the snapshot's last block as usual;
 * - `recordGenesisHash`: `refract start` records the cluster's genesis hash in the store when it
 *   first talks to the node, so snapshots of the store name their cluster.
 */
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { displayUrl } from '../displayUrl.ts';
import type { SolanaRpc } from '../solana/rpcClient.ts';
import { createSnapshotFile, restoreSnapshot, SnapshotError, type SnapshotManifest } from '../store/snapshot.ts';
import type { Store } from '../store/store.ts';

/** How long `refract start` waits for getGenesisHash (recording it, or checking a snapshot's cluster). */
const GENESIS_TIMEOUT_MS = 15_000;
/** Redirects followed when downloading a snapshot. */
const MAX_REDIRECTS = 5;
/** A snapshot download that receives nothing for this long fails. */
const IDLE_TIMEOUT_MS = 300_000;
/** Progress of a snapshot download is logged at most this often. */
const PROGRESS_LOG_MS = 10_000;

/** Options of `refract snapshot create`. */
export interface SnapshotCreateOptions {
  /** The store directory (a daemon may be running on it). */
  db: string;
  /** The snapshot file to write, or `-` for standard output. */
  out: string;
}

/**
 * `refract snapshot create`: writes the snapshot of `db` to `out` (through `<out>.partial`, renamed
 * when complete; the work directory goes next to it) or to stdout (`-`; work directory: the current
 * one), then prints a JSON summary on stdout (stderr when the snapshot itself went to stdout):
 * `{out, bytes, slot, blockhash, genesisHash, trees, schemaVersion, sha256}`.
 * @throws Error for a missing store, a store of another schema version, I/O failures
 */
export async function runSnapshotCreate(opts: SnapshotCreateOptions): Promise<void> {
  const toStdout = opts.out === '-';
  const { manifest, bytes } = await createSnapshotFile(opts.db, toStdout ? process.stdout : opts.out);
  const summary = {
    out: toStdout ? '-' : opts.out,
    bytes,
    slot: manifest.lastBlock?.slot ?? null,
    blockhash: manifest.lastBlock?.blockhash ?? null,
    genesisHash: manifest.genesisHash,
    trees: manifest.trees.length,
    schemaVersion: manifest.schemaVersion,
    sha256: manifest.payload.sha256,
  };
  (toStdout ? process.stderr : process.stdout).write(`${JSON.stringify(summary, null, 2)}\n`);
}

/** True when `source` is an http(s) URL rather than a file path. */
export function isSnapshotUrl(source: string): boolean {
  return /^https?:\/\//i.test(source);
}

/** GET `url`, following up to MAX_REDIRECTS redirects; resolves with a 200 response. */
function download(url: string, redirects = 0): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      reject(new SnapshotError('source', `the snapshot URL ${displayUrl(url)} is not a valid URL`));
      return;
    }
    const get = u.protocol === 'https:' ? httpsGet : httpGet;
    const req = get(u, { headers: { accept: 'application/vnd.refract.snapshot, application/octet-stream' } }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location && redirects < MAX_REDIRECTS) {
        res.resume();
        resolve(download(new URL(res.headers.location, u).toString(), redirects + 1));
        return;
      }
      if (status !== 200) {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          if (body.length < 500) body += d;
        });
        res.on('end', () => reject(new SnapshotError('source', `GET ${displayUrl(url)} answered HTTP ${status}${body ? `: ${body.slice(0, 300).trim()}` : ''}`)));
        res.on('error', () => reject(new SnapshotError('source', `GET ${displayUrl(url)} answered HTTP ${status}`)));
        return;
      }
      // Once the peer answers, a stalled transfer is cut off (the wait for the answer itself is not
      // bounded: the peer makes the whole snapshot before its first byte).
      res.socket.setTimeout(IDLE_TIMEOUT_MS, () => res.destroy(new Error(`no data for ${IDLE_TIMEOUT_MS / 1000} s`)));
      resolve(res);
    });
    req.on('error', (e) => reject(new SnapshotError('source', `cannot download the snapshot from ${displayUrl(url)}: ${e.message}`)));
  });
}

/**
 * Opens a snapshot for reading: an http(s) URL is downloaded (GET, redirects followed, API key in the
 * URL's `api-key` query parameter when the peer needs one), anything else is a file path.
 * @throws SnapshotError `source` when the file cannot be opened or the server does not answer 200
 */
export async function openSnapshotSource(source: string): Promise<Readable> {
  if (isSnapshotUrl(source)) return download(source);
  try {
    const fh = await open(source, 'r');
    return fh.createReadStream();
  } catch (e) {
    throw new SnapshotError('source', `cannot read the snapshot file ${source}: ${(e as Error).message}`);
  }
}

/** Options of {@link seedFromSnapshot}. */
export interface SeedOptions {
  /** File path or http(s) URL of the snapshot. */
  source: string;
  /** The store directory (must not exist or be empty). */
  db: string;
  /** The node to check the snapshot's cluster against, or null to skip the check (no ingest). */
  solana: SolanaRpc | null;
  log: Logger;
}

/** How a snapshot source is named in logs and errors (a URL without its path and query: they may hold a key). */
const sourceLabel = (source: string) => (isSnapshotUrl(source) ? displayUrl(source) : source);

/**
 * Seeds the empty store `db` from a snapshot (`refract start --snapshot`): opens the source, checks
 * the header (format, manifest checksum, schema), the cluster (the manifest's genesis hash against
 * the node's getGenesisHash; a snapshot without one, or `solana` null, skips that check with a
 * warning), then streams, verifies and restores the payload and checks every tree root
 * (src/store/snapshot.ts `restoreSnapshot`). Logs progress of long downloads and one line when done.
 * @returns the restored snapshot's manifest
 * @throws SnapshotError naming the failed check (message prefixed with the source); `db` is untouched
 */
export async function seedFromSnapshot(opts: SeedOptions): Promise<SnapshotManifest> {
  const { log } = opts;
  const label = sourceLabel(opts.source);
  const started = Date.now();
  log.info({ snapshot: label, db: opts.db }, 'restoring the store from a snapshot');
  let lastLog = started;
  try {
    const source = await openSnapshotSource(opts.source);
    const manifest = await restoreSnapshot({
      source,
      target: opts.db,
      checkManifest: async (m) => {
        log.info({ slot: m.lastBlock?.slot ?? null, trees: m.trees.length, payloadBytes: m.payload.bytes, createdAt: m.createdAt }, 'snapshot manifest read');
        await checkCluster(m, opts.solana, log);
      },
      onPayloadBytes: (bytes, m) => {
        const now = Date.now();
        if (now - lastLog < PROGRESS_LOG_MS) return;
        lastLog = now;
        log.info({ bytes, of: m.payload.bytes, percent: Math.floor((100 * bytes) / Math.max(1, m.payload.bytes)) }, 'reading the snapshot');
      },
    });
    log.info(
      { snapshot: label, db: opts.db, slot: manifest.lastBlock?.slot ?? null, blockhash: manifest.lastBlock?.blockhash ?? null, trees: manifest.trees.length, bytes: manifest.payload.bytes, ms: Date.now() - started },
      'store restored from the snapshot; ingest resumes after its last block',
    );
    return manifest;
  } catch (e) {
    if (e instanceof SnapshotError) throw new SnapshotError(e.check, `snapshot ${label} refused (${e.check}): ${e.message}; the store at ${opts.db} was left untouched`);
    throw new Error(`snapshot ${label}: ${(e as Error).message}; the store at ${opts.db} was left untouched`);
  }
}

/**
 * The cluster check of a restore: the manifest's genesis hash must be the node's. A manifest without
 * one, or no node to ask (`solana` null: no ingest), is let through with a warning.
 * @throws SnapshotError `genesis` when the node answers another genesis hash or cannot be asked
 */
async function checkCluster(m: SnapshotManifest, solana: SolanaRpc | null, log: Logger): Promise<void> {
  if (m.genesisHash === null) {
    log.warn('the snapshot records no genesis hash (its store never recorded its cluster): the cluster check is skipped; make sure --rpc-url serves the cluster the snapshot was taken from');
    return;
  }
  if (!solana) {
    log.warn({ genesisHash: m.genesisHash }, 'ingest is off: the snapshot\'s cluster is not checked against a node');
    return;
  }
  let node: string;
  try {
    node = await solana.getGenesisHash(AbortSignal.timeout(GENESIS_TIMEOUT_MS));
  } catch (e) {
    throw new SnapshotError('genesis', `cannot check the snapshot's cluster: getGenesisHash at ${displayUrl(solana.url)} failed (${(e as Error).message})`);
  }
  if (node !== m.genesisHash) {
    throw new SnapshotError('genesis', `wrong cluster: the snapshot was taken on the cluster with genesis hash ${m.genesisHash}, but ${displayUrl(solana.url)} serves genesis hash ${node}`);
  }
}

/**
 * Records the node's genesis hash in the store (`refract start`, once ingest is on) when the store
 * has none yet. A node that does not answer (or answers no string) is logged and skipped: ingest
 * retries its own calls, and the next start records it.
 * @throws Error when the store already records another genesis hash: it was indexed from another
 *   cluster than `--rpc-url` serves
 */
export async function recordGenesisHash(store: Store, solana: SolanaRpc, log: Logger): Promise<void> {
  let hash: unknown;
  try {
    hash = await solana.getGenesisHash(AbortSignal.timeout(GENESIS_TIMEOUT_MS));
  } catch (e) {
    log.warn({ err: (e as Error).message, rpc: displayUrl(solana.url) }, 'cannot record the cluster\'s genesis hash in the store (getGenesisHash failed); snapshots of this store will not name their cluster until a later start records it');
    return;
  }
  if (typeof hash !== 'string' || !/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(hash)) {
    log.warn({ rpc: displayUrl(solana.url) }, 'getGenesisHash answered no base58 hash: the cluster is not recorded in the store');
    return;
  }
  const recorded = store.read((r) => r.genesisHash());
  if (recorded === hash) return;
  if (recorded !== null) {
    throw new Error(`the store at this --db indexes the cluster with genesis hash ${recorded}, but ${displayUrl(solana.url)} serves genesis hash ${hash}: use a --rpc-url of that cluster, or another --db`);
  }
  store.write((w) => w.setGenesisHash(hash as string));
  log.info({ genesisHash: hash }, 'recorded the cluster\'s genesis hash in the store');
}
