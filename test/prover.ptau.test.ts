// Where `refract setup` gets its powers of tau when none is given: the public Hermez ceremony file,
// downloaded (from a local HTTP server here), verified against its published BLAKE2b-512 hash and
// cached; an unreachable server falls back to the INSECURE development ptau, a wrong file is
// refused. Also: the build order (most used circuits first) and the snarkjs logger shape.
import { rejection } from './helpers/rejection.ts';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CIRCUIT_IDS, getCircuit, PRIORITY_CIRCUIT_IDS, setupOrder } from '../src/prover/keys/circuits.ts';
import { ProverError } from '../src/prover/errors.ts';
import {
  ceremonyPtauUrl,
  DEFAULT_PTAU_URL,
  fetchCeremonyPtau,
  HERMEZ_PTAU_BLAKE2B,
  hermezPtauName,
  resolvePtau,
} from '../src/prover/keys/keySetup.ts';
import { snarkLogger } from '../src/prover/engine/snark.ts';
import { DEV_PTAU, ensureDevPtau } from './helpers/devPtau.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DEV_PTAU_16 = DEV_PTAU;
const b2 = (buf: Buffer) => createHash('blake2b512').update(buf).digest('hex');
const b2File = async (f: string) => {
  const h = createHash('blake2b512');
  for await (const c of createReadStream(f)) h.update(c as Buffer);
  return h.digest('hex');
};

/** A local HTTP server: `files` maps a path to a file on disk or bytes; `hang` paths never answer. */
class TestServer {
  requests: string[] = [];
  files = new Map<string, Buffer | string>();
  hang = new Set<string>();
  private server!: Server;
  url = '';
  async start() {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      this.requests.push(req.url!);
      if (this.hang.has(req.url!)) return;
      const body = this.files.get(req.url!);
      if (body === undefined) {
        res.writeHead(404).end('not found');
      } else if (typeof body === 'string') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        createReadStream(body).pipe(res);
      } else {
        res.writeHead(200, { 'content-length': body.length }).end(body);
      }
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/ptau/`;
  }
  async stop() {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** A port nothing listens on (bound, then released). */
async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return `http://127.0.0.1:${port}/`;
}

let dir: string;
const srv = new TestServer();
const name8 = hermezPtauName(8);
const bytes8 = randomBytes(1 << 20);
const hashes8 = { 8: b2(bytes8) };

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'refract-ptau-'));
  await srv.start();
  srv.files.set(`/ptau/${name8}`, bytes8);
});
afterAll(async () => {
  await srv.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('the published hash table', () => {
  test('file names and hashes as in the snarkjs README', () => {
    expect(hermezPtauName(8)).toBe('powersOfTau28_hez_final_08.ptau');
    expect(hermezPtauName(16)).toBe('powersOfTau28_hez_final_16.ptau');
    expect(hermezPtauName(28)).toBe('powersOfTau28_hez_final.ptau');
    expect(Object.keys(HERMEZ_PTAU_BLAKE2B).map(Number)).toEqual(Array.from({ length: 21 }, (_, i) => i + 8));
    for (const h of Object.values(HERMEZ_PTAU_BLAKE2B)) expect(h).toMatch(/^[0-9a-f]{128}$/);
    // Cross-check against the README shipped with the installed snarkjs.
    const readme = readFileSync(path.join(REPO, 'node_modules/snarkjs/README.md'), 'utf8');
    for (const [k, h] of Object.entries(HERMEZ_PTAU_BLAKE2B)) {
      expect(readme).toContain(`[${hermezPtauName(Number(k))}](${DEFAULT_PTAU_URL}${hermezPtauName(Number(k))})  | ${h} |`);
    }
  });

  test('REFRACT_PTAU_URL: default, off, trailing slash, and bad values named', () => {
    expect(ceremonyPtauUrl({})).toBe(DEFAULT_PTAU_URL);
    expect(ceremonyPtauUrl({ REFRACT_PTAU_URL: 'off' })).toBeUndefined();
    expect(ceremonyPtauUrl({ REFRACT_PTAU_URL: 'http://mirror.local:8080/ptau' })).toBe('http://mirror.local:8080/ptau/');
    expect(() => ceremonyPtauUrl({ REFRACT_PTAU_URL: 'mirror.local/ptau' })).toThrow(/REFRACT_PTAU_URL "mirror.local\/ptau" is not a URL/);
    expect(() => ceremonyPtauUrl({ REFRACT_PTAU_URL: 'file:///tmp/ptau/' })).toThrow(/REFRACT_PTAU_URL "file:\/\/\/tmp\/ptau\/" must be http\(s\), not file:/);
  });
});

describe('fetchCeremonyPtau', () => {
  test('downloads, verifies and caches the file; the cached file is re-verified, not re-downloaded', async () => {
    const d = path.join(dir, 'ok');
    const lines: string[] = [];
    const file = await fetchCeremonyPtau({ power: 8, dir: d, baseUrl: srv.url, hashes: hashes8, log: (_l, m) => lines.push(m) });
    expect(file).toBe(path.join(d, name8));
    expect(readFileSync(file).equals(bytes8)).toBe(true);
    expect(await readdir(d)).toEqual([name8]); // no temp file left
    expect(srv.requests.filter((r) => r.endsWith(name8))).toHaveLength(1);
    expect(lines.join('\n')).toContain(`downloading the public ceremony powers of tau ${srv.url}${name8} (1 MiB)`);

    expect(await fetchCeremonyPtau({ power: 8, dir: d, baseUrl: srv.url, hashes: hashes8 })).toBe(file);
    expect(srv.requests.filter((r) => r.endsWith(name8))).toHaveLength(1);

    // A corrupted cached copy is replaced.
    await writeFile(file, Buffer.concat([bytes8.subarray(0, 100), Buffer.from('x')]));
    expect(await fetchCeremonyPtau({ power: 8, dir: d, baseUrl: srv.url, hashes: hashes8 })).toBe(file);
    expect(srv.requests.filter((r) => r.endsWith(name8))).toHaveLength(2);
    expect(readFileSync(file).equals(bytes8)).toBe(true);
  });

  test('a file that does not match its published hash is refused and deleted', async () => {
    const d = path.join(dir, 'mismatch');
    const bad = Buffer.from(bytes8);
    bad[12345] ^= 1;
    srv.files.set(`/ptau/${hermezPtauName(9)}`, bad);
    const e = await rejection(fetchCeremonyPtau({ power: 9, dir: d, baseUrl: srv.url, hashes: { 9: hashes8[8] } }), ProverError);
    expect(e.code).toBe('setup_failed');
    expect(e.details).toMatchObject({ reason: 'mismatch', expected: hashes8[8], got: b2(bad) });
    expect(e.message).toContain(`refusing ${srv.url}${hermezPtauName(9)}: its BLAKE2b-512 is ${b2(bad)}, the published hash of ${hermezPtauName(9)} is ${hashes8[8]}`);
    expect(await readdir(d)).toEqual([]);
  });

  test('unreachable servers fail fast with the reason: connection refused, no answer, HTTP 404', async () => {
    const d = path.join(dir, 'unreachable');
    let t0 = performance.now();
    const closed = await closedPortUrl();
    let e = await rejection(fetchCeremonyPtau({ power: 8, dir: d, baseUrl: closed, hashes: hashes8 }), ProverError);
    expect(e.details?.reason).toBe('unreachable');
    expect(e.message).toBe(`cannot download the public ceremony ptau ${closed}${name8}: ECONNREFUSED`);
    expect(performance.now() - t0).toBeLessThan(3000);

    srv.hang.add(`/hang/${name8}`);
    t0 = performance.now();
    e = await rejection(fetchCeremonyPtau({ power: 8, dir: d, baseUrl: srv.url.replace('/ptau/', '/hang/'), hashes: hashes8, connectTimeoutMs: 300 }), ProverError);
    expect(e.details?.reason).toBe('unreachable');
    expect(e.message).toMatch(/: no response within 300 ms$/);
    expect(performance.now() - t0).toBeLessThan(3000);

    e = await rejection(fetchCeremonyPtau({ power: 10, dir: d, baseUrl: srv.url, hashes: { 10: hashes8[8] } }), ProverError);
    expect(e.message).toBe(`cannot download the public ceremony ptau ${srv.url}${hermezPtauName(10)}: HTTP 404 Not Found`);

    e = await rejection(fetchCeremonyPtau({ power: 7, dir: d, baseUrl: srv.url }), ProverError);
    expect(e.details?.reason).toBe('unknown_power');
    expect(e.message).toMatch(/no published hash for a 2\^7 ceremony ptau \(known powers: 8, 9, .*, 28\)/);
  });
});

describe('resolvePtau (setup without --ptau)', () => {
  // The tests' development ptau stands in for powersOfTau28_hez_final_16.ptau (its hash passed as the table).
  const name16 = hermezPtauName(16);
  let hash16: string;
  beforeAll(async () => {
    await ensureDevPtau();
    hash16 = await b2File(DEV_PTAU_16);
    srv.files.set(`/ptau/${name16}`, DEV_PTAU_16);
  });

  test('uses the downloaded ceremony file (power 16 for inclusion_26_1, not insecure)', async () => {
    const keysDir = path.join(dir, 'keys-fetch');
    const progress: string[] = [];
    const choice = await resolvePtau({ keysDir, ceremony: { baseUrl: srv.url, hashes: { 16: hash16 } } }, 13, () => {}, (m) => progress.push(m));
    expect(choice).toMatchObject({ file: path.join(keysDir, 'ptau', name16), power: 16, insecureDev: false });
    expect(choice.sha256).toBe(createHash('sha256').update(readFileSync(DEV_PTAU_16)).digest('hex'));
    expect(progress[0]).toBe(`downloading the public ceremony powers of tau ${srv.url}${name16} to ${choice.file}`);
    expect(progress.at(-1)).toBe(`using the public ceremony powers of tau ${choice.file} (BLAKE2b-512 verified)`);
  });

  test('unreachable → falls back to the INSECURE development ptau, and says so', async () => {
    const keysDir = path.join(dir, 'keys-offline');
    // An existing development ptau, so nothing is generated here (the generation itself is covered by setup.fresh.test.ts).
    await mkdir(path.join(keysDir, 'ptau'), { recursive: true });
    await symlink(DEV_PTAU_16, path.join(keysDir, 'ptau', 'dev_pot16.ptau'));
    const warnings: string[] = [];
    const closed = await closedPortUrl();
    const choice = await resolvePtau({ keysDir, ceremony: { baseUrl: closed, hashes: { 16: hash16 } } }, 13, (l, m) => l === 'warn' && warnings.push(m));
    expect(choice).toMatchObject({ file: path.join(keysDir, 'ptau', 'dev_pot16.ptau'), power: 16, insecureDev: true });
    expect(warnings[0]).toBe(`cannot download the public ceremony ptau ${closed}${name16}: ECONNREFUSED; falling back to an INSECURE development powers of tau`);
    expect(warnings[1]).toMatch(/^using an INSECURE development powers of tau \(2\^16\)/);
  });

  test('a mismatching download is an error, not a fallback', async () => {
    const keysDir = path.join(dir, 'keys-mismatch');
    const e = await rejection(resolvePtau({ keysDir, ceremony: { baseUrl: srv.url, hashes: { 16: hashes8[8] } } }, 13, () => {}), ProverError);
    expect(e.details?.reason).toBe('mismatch');
    expect(e.message).toMatch(/Check REFRACT_PTAU_URL, or download the file yourself and pass --ptau <file>$/);
  });

  test('--dev-ptau-power or ceremony: false skip the download', async () => {
    const before = srv.requests.length;
    const keysDir = path.join(dir, 'keys-offline'); // has dev_pot16.ptau
    for (const o of [{ devPtauPower: 16 }, { ceremony: false as const }]) {
      const choice = await resolvePtau({ keysDir, ...o }, 13, () => {});
      expect(choice.insecureDev).toBe(true);
    }
    expect(srv.requests.length).toBe(before);
  });
});

describe('build order', () => {
  test('the most used circuits first, then the rest cheapest first', () => {
    const order = setupOrder([...CIRCUIT_IDS].reverse());
    expect(order.slice(0, 3)).toEqual([...PRIORITY_CIRCUIT_IDS]);
    expect(PRIORITY_CIRCUIT_IDS).toEqual(['inclusion_26_1', 'non-inclusion_26_1', 'combined_26_26_1_1']);
    expect([...order].sort()).toEqual([...CIRCUIT_IDS].sort());
    const rest = order.slice(3).map((id) => getCircuit(id).constraints);
    expect(rest).toEqual([...rest].sort((a, b) => a - b));
    expect(setupOrder(['combined_26_26_4_2', 'inclusion_26_2', 'combined_26_26_1_1', 'inclusion_26_2'])).toEqual(['combined_26_26_1_1', 'inclusion_26_2', 'combined_26_26_4_2']);
    expect(() => setupOrder(['inclusion_26_5'])).toThrow(/unknown circuit id "inclusion_26_5"/);
  });
});

describe('snarkjs logger', () => {
  test('has every method the installed snarkjs calls on it (newAccumulator calls logger.log)', () => {
    const src = readFileSync(path.join(REPO, 'node_modules/snarkjs/build/main.cjs'), 'utf8');
    const called = new Set([...src.matchAll(/\blogger\.(\w+)\(/g)].map((m) => m[1]!));
    expect(called).toContain('log');
    const lines: string[] = [];
    const logger = snarkLogger((level, m) => lines.push(`${level}:${m}`)) as Record<string, (m: string) => void>;
    for (const m of called) {
      expect(typeof logger[m], `logger.${m}`).toBe('function');
      logger[m]!('x');
    }
    expect(lines).toContain('info:x');
  });
});
