/**
 * `setupCircuits`: compile the v1 circuits and create their Groth16 keys in a keys directory
 * (layout in layout.ts), cached and resumable.
 *
 * Per circuit: generate the main file from the registry (circuits.ts) → compile with npm circom2
 * (`--O2 --r1cs --wasm`, cached under `<keysDir>/build/<id>/` by source hash) → `zKey.newZKey`
 * against the ptau + one random contribution → export the verification key (snarkjs JSON and the
 * groth16-solana byte layout) → copy the wasm → record hashes in `manifest.json`.
 *
 * ptau (`resolvePtau`): the given file, else the public Hermez ceremony file (downloaded, verified
 * against its published BLAKE2b-512 hash, cached in `<keysDir>/ptau/`), else — offline — a
 * generated INSECURE development one. Circuits are built in `setupOrder` (most used first), each
 * one's key made as soon as its compile is done.
 *
 * Caching: a circuit is skipped when the manifest has the same source hash and ptau hash and its
 * files exist with the recorded sizes. Resumability: every output is written under a temporary
 * name and renamed; the manifest (the commit point) is rewritten after each circuit, so a killed
 * run redoes at most the circuit it was on. Leftover `*.tmp-*` files are removed at start.
 *
 * Timings on the 2-core development VM: compile 7 s (1 account) to 28 s (inclusion ×8); zkey
 * with the 2^16 dev ptau ~20 s for inclusion_26_1.
 */
import { type Env, envValue } from '../../config/config.ts';
import { availableParallelism } from 'node:os';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CIRCUIT_IDS, getCircuit, mainSource, setupOrder, type CircuitSpec } from './circuits.ts';
import { solanaVkeyToJson, vkeyToSolana } from '../engine/proofEncoding.ts';
import { ProverError } from '../errors.ts';
import {
  digestFile,
  keyFiles,
  MANIFEST_VERSION,
  readManifest,
  removeTableFiles,
  writeManifest,
  type KeysManifest,
  type ManifestCircuit,
} from './layout.ts';
import {
  compileCircuit,
  createDevPtau,
  createZKey,
  exportVerificationKey,
  readPtauInfo,
  readR1csInfo,
  requiredPtauPower,
  terminateCurve,
  type SnarkLog,
} from '../engine/snark.ts';

const require = createRequire(import.meta.url);

/** Directory of the circom sources (repo `circuits/`). */
export const CIRCUITS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../circuits');
/** Directory that contains the `circomlib` package (for `include "circomlib/circuits/…"`). */
export const CIRCOMLIB_INCLUDE_DIR = path.resolve(path.dirname(require.resolve('circomlib/package.json')), '..');

/** Progress of `setupCircuits` / `compileCircuits`, for cli-progress bars or logs. */
export interface SetupProgress {
  /** Circuit being worked on; null for the ptau stage. */
  circuitId: string | null;
  /** 0-based position of the circuit in this run, and the number of circuits. */
  index: number;
  total: number;
  /** `cached`: nothing to do; `done`: circuit finished; others: the step about to start. */
  stage: 'ptau' | 'compile' | 'compiled' | 'zkey' | 'vkey' | 'cached' | 'done';
  /** Overall fraction of the run completed, 0..1 (weights: compile 0.3, zkey 0.65, vkey 0.05 per circuit). */
  fraction: number;
  message?: string;
}

/** Options of `setupCircuits`. */
export interface SetupOptions {
  /** Output directory (created). */
  keysDir: string;
  /**
   * A prepared (phase-2) bn128 powers-of-tau file, e.g. Hermez `powersOfTau28_hez_final_16.ptau`.
   * When omitted: the public Hermez ceremony file (downloaded, verified) or, offline, a generated development ptau (INSECURE: one known contributor).
   */
  ptau?: string;
  /**
   * The given `ptau` is a development file with one known contributor (e.g. the shared
   * `pot16_dev.ptau`): recorded as `insecureDev` in the manifest and announced loudly.
   */
  ptauInsecure?: boolean;
  /**
   * Power of a generated development ptau (default 16: every v1 circuit; 13 is enough for ×1 circuits).
   * Given explicitly, setup wants the development ptau: no public ceremony file is fetched.
   */
  devPtauPower?: number;
  /**
   * Without `ptau`: fetch the public Hermez ceremony file first (see `fetchCeremonyPtau`), falling
   * back to a development ptau when it cannot be downloaded. `false` skips the fetch.
   * Default: `{ baseUrl: ceremonyPtauUrl() }` (`$REFRACT_PTAU_URL`, `off` disables).
   */
  ceremony?: CeremonyPtauOptions | false;
  /** Circuit ids (default: all of `CIRCUIT_IDS`). */
  circuits?: readonly string[];
  /** Redo every circuit even when cached. */
  force?: boolean;
  /** Parallel circom compilations (default min(2, cores)). zkey creation is sequential (it is multi-threaded). */
  compileConcurrency?: number;
  /** Build cache dir (default `<keysDir>/build`). */
  buildDir?: string;
  onProgress?: (p: SetupProgress) => void;
  /** snarkjs / compiler log lines; default prints `warn` and `error` to stderr. */
  log?: SnarkLog;
}

/** Result of `setupCircuits`. */
export interface SetupResult {
  manifest: KeysManifest;
  /** Ids (re)built in this run, and ids found cached. */
  built: string[];
  cached: string[];
  /** Wall time per built circuit, ms. */
  timingsMs: Record<string, { compile: number; zkey: number; vkey: number }>;
}

const defaultLog: SnarkLog = (level, msg) => {
  if (level === 'warn' || level === 'error') console.error(`[refract setup] ${level}: ${msg}`);
};

// ---------------------------------------------------------------------------------------------
// Source hash and compile cache

function packageVersion(name: string): string {
  return (require(`${name}/package.json`) as { version: string }).version;
}

/**
 * SHA-256 identifying a circuit's compiled output: the generated main file, every local circom
 * file it includes (transitively, by content), the circomlib and circom2 versions and the flags.
 */
export async function circuitSourceHash(spec: CircuitSpec): Promise<string> {
  const h = createHash('sha256');
  h.update(`refract-circuit/1 flags=--O2 circom2=${packageVersion('circom2')} circomlib=${packageVersion('circomlib')}\n`);
  h.update(mainSource(spec));
  const seen = new Set<string>();
  const visit = async (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    let text: string;
    try {
      text = await readFile(path.join(CIRCUITS_DIR, name), 'utf8');
    } catch {
      return; // a circomlib include: covered by the package version
    }
    h.update(`\n--- ${name}\n${text}`);
    for (const m of text.matchAll(/^\s*include\s+"([^"]+)"/gm)) await visit(m[1]!);
  };
  await visit(spec.sourceFile);
  return h.digest('hex');
}

/** A compiled circuit in the build cache. */
export interface CompiledCircuit {
  id: string;
  sourceHash: string;
  r1csFile: string;
  /** The witness calculator; not written by an r1cs-only compile (`wasm: false`), unless an earlier build has it. */
  wasmFile: string;
  /** Constraints from the r1cs header (non-linear with --O2). */
  constraints: number;
  nPubInputs: number;
  nPubOutputs: number;
  compileMs: number;
  cached: boolean;
}

interface BuildStamp {
  sourceHash: string;
  constraints: number;
  compileMs: number;
}

async function exists(f: string): Promise<boolean> {
  try {
    await stat(f);
    return true;
  } catch {
    return false;
  }
}

/**
 * Compiles one circuit into `<buildDir>/<id>/` unless a build with the same source hash is there.
 * Written to `<buildDir>/<id>.tmp-<pid>/` and renamed, so a killed compile leaves no half build.
 * With `opts.wasm: false` only the r1cs is needed (constraint counts): a cached build without the
 * witness calculator serves then, and a compile writes none; a later call that needs the wasm compiles again.
 * @throws ProverError `setup_failed` with circom's output on a compile error
 */
export async function compileCached(id: string, buildDir: string, opts: { force?: boolean; wasm?: boolean } = {}): Promise<CompiledCircuit> {
  const spec = getCircuit(id);
  const sourceHash = await circuitSourceHash(spec);
  const dir = path.join(buildDir, id);
  const r1csFile = path.join(dir, `${id}.r1cs`);
  const wasmFile = path.join(dir, `${id}_js`, `${id}.wasm`);
  const stampFile = path.join(dir, 'build.json');
  const wasm = opts.wasm !== false;
  if (!opts.force && (await exists(r1csFile)) && (!wasm || (await exists(wasmFile)))) {
    try {
      const stamp = JSON.parse(await readFile(stampFile, 'utf8')) as BuildStamp;
      if (stamp.sourceHash === sourceHash) {
        const info = await readR1csInfo(r1csFile);
        return { id, sourceHash, r1csFile, wasmFile, constraints: info.nConstraints, nPubInputs: info.nPubInputs, nPubOutputs: info.nPubOutputs, compileMs: stamp.compileMs, cached: true };
      }
    } catch {
      /* no or bad stamp: rebuild */
    }
  }
  const tmp = `${dir}.tmp-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  const mainFile = path.join(tmp, `${id}.circom`);
  await writeFile(mainFile, mainSource(spec));
  const res = await compileCircuit({ mainFile, outDir: tmp, includeDirs: [CIRCOMLIB_INCLUDE_DIR, CIRCUITS_DIR], wasm });
  const info = await readR1csInfo(path.join(tmp, `${id}.r1cs`));
  const stamp: BuildStamp = { sourceHash, constraints: info.nConstraints, compileMs: Math.round(res.durationMs) };
  await writeFile(path.join(tmp, 'build.json'), JSON.stringify(stamp, null, 2));
  await rm(dir, { recursive: true, force: true });
  try {
    await rename(tmp, dir);
  } catch (e) {
    // Another process (e.g. a parallel test file) installed the same build meanwhile: keep theirs.
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
    await rm(tmp, { recursive: true, force: true });
  }
  return { id, sourceHash, r1csFile, wasmFile, constraints: info.nConstraints, nPubInputs: info.nPubInputs, nPubOutputs: info.nPubOutputs, compileMs: res.durationMs, cached: false };
}

/**
 * Compiles several circuits (cached, `concurrency` at a time).
 * @param opts.buildDir build cache directory
 * @param opts.circuits ids (default all)
 * @param opts.concurrency parallel compiler processes (default min(2, cores))
 * @param opts.wasm false: r1cs only (see {@link compileCached})
 * @returns one entry per id, in input order
 */
export async function compileCircuits(opts: {
  buildDir: string;
  circuits?: readonly string[];
  concurrency?: number;
  force?: boolean;
  wasm?: boolean;
  onCompiled?: (c: CompiledCircuit, index: number) => void;
}): Promise<CompiledCircuit[]> {
  const ids = opts.circuits ?? CIRCUIT_IDS;
  ids.forEach((id) => getCircuit(id));
  await mkdir(opts.buildDir, { recursive: true });
  await removeTemps(opts.buildDir);
  const out: CompiledCircuit[] = new Array(ids.length);
  // Largest first, so the lanes finish together.
  const order = ids.map((_, i) => i).sort((a, b) => getCircuit(ids[b]!).constraints - getCircuit(ids[a]!).constraints);
  let next = 0;
  const lanes = Math.max(1, Math.min(opts.concurrency ?? Math.min(2, availableParallelism()), ids.length));
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < order.length) {
        const i = order[next++]!;
        out[i] = await compileCached(ids[i]!, opts.buildDir, { force: opts.force, wasm: opts.wasm });
        opts.onCompiled?.(out[i]!, i);
      }
    }),
  );
  return out;
}

/**
 * Starts compiling `circuits` in the given order, `concurrency` at a time (default min(2, cores)),
 * without waiting: `results[k]` settles when circuit k is compiled. After a failure no new compile
 * starts (the later results then never settle; a caller awaiting in order stops at the failure).
 * `stop()` starts no more compiles and resolves once the running ones have ended.
 */
function compileAhead(opts: {
  buildDir: string;
  circuits: readonly string[];
  concurrency?: number;
  force?: boolean;
  onCompiled?: (c: CompiledCircuit, index: number) => void;
}): { results: Promise<CompiledCircuit>[]; stop: () => Promise<void> } {
  const settle: { resolve: (c: CompiledCircuit) => void; reject: (e: unknown) => void }[] = [];
  const results = opts.circuits.map((_, k) => {
    const p = new Promise<CompiledCircuit>((resolve, reject) => (settle[k] = { resolve, reject }));
    p.catch(() => {}); // rejections are seen by the caller's await; never unhandled
    return p;
  });
  let next = 0;
  let stopped = false;
  const lanes = Math.max(1, Math.min(opts.concurrency ?? Math.min(2, availableParallelism()), opts.circuits.length));
  const ready = (async () => {
    await mkdir(opts.buildDir, { recursive: true });
    await removeTemps(opts.buildDir);
  })();
  const running = Promise.all(
    Array.from({ length: lanes }, async () => {
      try {
        await ready;
      } catch (e) {
        stopped = true;
        settle.forEach((s) => s.reject(e));
        return;
      }
      while (!stopped && next < opts.circuits.length) {
        const k = next++;
        try {
          const c = await compileCached(opts.circuits[k]!, opts.buildDir, { force: opts.force });
          opts.onCompiled?.(c, k);
          settle[k]!.resolve(c);
        } catch (e) {
          stopped = true;
          settle[k]!.reject(e);
        }
      }
    }),
  );
  return {
    results,
    stop: async () => {
      stopped = true;
      await running;
    },
  };
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes `*.tmp-<pid>[.init|.0|.1]` leftovers of processes that are no longer running. */
async function removeTemps(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  const stale = names.filter((n) => {
    const m = /\.tmp-(\d+)(?:\.\w+)?$/.exec(n);
    return m && Number(m[1]) !== process.pid && !pidAlive(Number(m[1]));
  });
  await Promise.all(stale.map((n) => rm(path.join(dir, n), { recursive: true, force: true })));
}

// ---------------------------------------------------------------------------------------------
// Public ceremony ptau (Hermez / Polygon zkEVM)

/** Default power of the ptau setup fetches or generates: 2^16 serves every v1 circuit (combined 4×2 needs 16), so keys of a subset stay valid when more circuits are added. */
export const DEFAULT_PTAU_POWER = 16;

/** Where the Hermez prepared phase-2 files are published (snarkjs README, "7. Prepare phase 2"). */
export const DEFAULT_PTAU_URL = 'https://storage.googleapis.com/zkevm/ptau/';

/**
 * Published BLAKE2b-512 hashes of the Hermez prepared (phase 2) bn128 ptau files, by power
 * (`powersOfTau28_hez_final_<kk>.ptau`, 54 contributions and a beacon), copied from the snarkjs
 * README table. Each is the hash of the whole file, as `b2sum <file>` prints it.
 */
export const HERMEZ_PTAU_BLAKE2B: Readonly<Record<number, string>> = Object.freeze({
  8: 'd6a8fb3a04feb600096c3b791f936a578c4e664d262e4aa24beed1b7a9a96aa5eb72864d628db247e9293384b74b36ffb52ca8d148d6e1b8b51e279fdf57b583',
  9: '94f108a80e81b5d932d8e8c9e8fd7f46cf32457e31462deeeef37af1b71c2c1b3c71fb0d9b59c654ec266b042735f50311f9fd1d4cadce47ab234ad163157cb5',
  10: '6cfeb8cda92453099d20120bdd0e8a5c4e7706c2da9a8f09ccc157ed2464d921fd0437fb70db42104769efd7d6f3c1f964bcf448c455eab6f6c7d863e88a5849',
  11: '47c282116b892e5ac92ca238578006e31a47e7c7e70f0baa8b687f0a5203e28ea07bbbec765a98dcd654bad618475d4661bfaec3bd9ad2ed12e7abc251d94d33',
  12: 'ded2694169b7b08e898f736d5de95af87c3f1a64594013351b1a796dbee393bd825f88f9468c84505ddd11eb0b1465ac9b43b9064aa8ec97f2b73e04758b8a4a',
  13: '58efc8bf2834d04768a3d7ffcd8e1e23d461561729beaac4e3e7a47829a1c9066d5320241e124a1a8e8aa6c75be0ba66f65bc8239a0542ed38e11276f6fdb4d9',
  14: 'eeefbcf7c3803b523c94112023c7ff89558f9b8e0cf5d6cdcba3ade60f168af4a181c9c21774b94fbae6c90411995f7d854d02ebd93fb66043dbb06f17a831c1',
  15: '982372c867d229c236091f767e703253249a9b432c1710b4f326306bfa2428a17b06240359606cfe4d580b10a5a1f63fbed499527069c18ae17060472969ae6e',
  16: '6a6277a2f74e1073601b4f9fed6e1e55226917efb0f0db8a07d98ab01df1ccf43eb0e8c3159432acd4960e2f29fe84a4198501fa54c8dad9e43297453efec125',
  17: '6247a3433948b35fbfae414fa5a9355bfb45f56efa7ab4929e669264a0258976741dfbe3288bfb49828e5df02c2e633df38d2245e30162ae7e3bcca5b8b49345',
  18: '7e6a9c2e5f05179ddfc923f38f917c9e6831d16922a902b0b4758b8e79c2ab8a81bb5f29952e16ee6c5067ed044d7857b5de120a90704c1d3b637fd94b95b13e',
  19: 'bca9d8b04242f175189872c42ceaa21e2951e0f0f272a0cc54fc37193ff6648600eaf1c555c70cdedfaf9fb74927de7aa1d33dc1e2a7f1a50619484989da0887',
  20: '89a66eb5590a1c94e3f1ee0e72acf49b1669e050bb5f93c73b066b564dca4e0c7556a52b323178269d64af325d8fdddb33da3a27c34409b821de82aa2bf1a27b',
  21: '9aef0573cef4ded9c4a75f148709056bf989f80dad96876aadeb6f1c6d062391f07a394a9e756d16f7eb233198d5b69407cca44594c763ab4a5b67ae73254678',
  22: '0d64f63dba1a6f11139df765cb690da69d9b2f469a1ddd0de5e4aa628abb28f787f04c6a5fb84a235ec5ea7f41d0548746653ecab0559add658a83502d1cb21b',
  23: '3063a0bd81d68711197c8820a92466d51aeac93e915f5136d74f63c394ee6d88c5e8016231ea6580bec02e25d491f319d92e77f5c7f46a9caa8f3b53c0ea544f',
  24: 'fa404d140d5819d39984833ca5ec3632cd4995f81e82db402371a4de7c2eae8687c62bc632a95b0c6aadba3fb02680a94e09174b7233ccd26d78baca2647c733',
  25: '0377d860cdb09a8a31ea1b0b8c04335614c8206357181573bf294c25d5ca7dff72387224fbd868897e6769f7805b3dab02854aec6d69d7492883b5e4e5f35eeb',
  26: '418dee4a74b9592198bd8fd02ad1aea76f9cf3085f206dfd7d594c9e264ae919611b1459a1cc920c2f143417744ba9edd7b8d51e44be9452344a225ff7eead19',
  27: '10ffd99837c512ef99752436a54b9810d1ac8878d368fb4b806267bdd664b4abf276c9cd3c4b9039a1fa4315a0c326c0e8e9e8fe0eb588ffd4f9021bf7eae1a1',
  28: '55c77ce8562366c91e7cda394cf7b7c15a06c12d8c905e8b36ba9cf5e13eb37d1a429c589e8eaba4c591bc4b88a0e2828745a53e170eac300236f5c1a326f41a',
});

/** File name of the Hermez ptau of `power` (8..28; 28 is the complete file, without a suffix). */
export function hermezPtauName(power: number): string {
  return power === 28 ? 'powersOfTau28_hez_final.ptau' : `powersOfTau28_hez_final_${String(power).padStart(2, '0')}.ptau`;
}

/**
 * Base URL of the public ceremony files: `$REFRACT_PTAU_URL` (must be http(s); `off` disables the
 * download → undefined), else `DEFAULT_PTAU_URL`. Always ends with `/`.
 * @throws ProverError `setup_failed` when `$REFRACT_PTAU_URL` is not an http(s) URL
 */
export function ceremonyPtauUrl(env?: Env): string | undefined {
  const v = envValue('REFRACT_PTAU_URL', env)?.trim();
  if (v === undefined || v === '') return DEFAULT_PTAU_URL;
  if (v.toLowerCase() === 'off') return undefined;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ProverError('setup_failed', `REFRACT_PTAU_URL "${v}" is not a URL (expected an http(s) base URL such as ${DEFAULT_PTAU_URL}, or "off")`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new ProverError('setup_failed', `REFRACT_PTAU_URL "${v}" must be http(s), not ${u.protocol}`);
  }
  return u.href.endsWith('/') ? u.href : `${u.href}/`;
}

/** Options of `fetchCeremonyPtau` that callers of `setupCircuits` may set. */
export interface CeremonyPtauOptions {
  /** Base URL the file name is appended to (default `ceremonyPtauUrl()`). */
  baseUrl?: string;
  /** Time allowed until the response headers arrive (DNS + connect + first byte), ms (default 5000). */
  connectTimeoutMs?: number;
  /** The download is abandoned when no data arrives for this long, ms (default 30000). */
  stallTimeoutMs?: number;
  /** power → expected BLAKE2b-512 hex (default `HERMEZ_PTAU_BLAKE2B`). */
  hashes?: Readonly<Record<number, string>>;
}

async function blake2bFile(file: string): Promise<string> {
  const h = createHash('blake2b512');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/**
 * The public ceremony ptau of `power` in `dir`: reused when already there and its BLAKE2b-512 still
 * matches, else downloaded from `<baseUrl><hermezPtauName(power)>` to `<name>.tmp-<pid>` while
 * hashing, and renamed into place only when the hash matches the published one.
 * @returns the absolute file path
 * @throws ProverError `setup_failed` with `details.reason`:
 *   `unreachable` — no response within `connectTimeoutMs`, connection/DNS error, HTTP status ≠ 200,
 *   or the transfer stalled or broke off (callers fall back to a development ptau);
 *   `mismatch` — the downloaded file's hash differs from the published one (file deleted, refused);
 *   `unknown_power` — no published hash for `power`
 */
export async function fetchCeremonyPtau(opts: CeremonyPtauOptions & {
  power: number;
  dir: string;
  log?: SnarkLog;
  progress?: (message: string) => void;
}): Promise<string> {
  const hashes = opts.hashes ?? HERMEZ_PTAU_BLAKE2B;
  const expected = hashes[opts.power];
  const name = hermezPtauName(opts.power);
  if (!expected) {
    throw new ProverError('setup_failed', `no published hash for a 2^${opts.power} ceremony ptau (known powers: ${Object.keys(hashes).join(', ')})`, { reason: 'unknown_power' });
  }
  const log = opts.log ?? (() => {});
  const dir = path.resolve(opts.dir);
  const file = path.join(dir, name);
  if (await exists(file)) {
    opts.progress?.(`verifying ${name}`);
    if ((await blake2bFile(file)) === expected) {
      log('info', `using the public ceremony powers of tau ${file} (BLAKE2b-512 verified)`);
      return file;
    }
    log('warn', `${file} does not match its published BLAKE2b-512 hash (corrupt?): downloading it again`);
    await rm(file, { force: true });
  }
  const baseUrl = opts.baseUrl ?? ceremonyPtauUrl();
  if (baseUrl === undefined) throw new ProverError('setup_failed', 'downloading the ceremony ptau is off (REFRACT_PTAU_URL=off)', { reason: 'unreachable' });
  const url = new URL(name, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).href;
  const unreachable = (why: string) => new ProverError('setup_failed', `cannot download the public ceremony ptau ${url}: ${why}`, { reason: 'unreachable', url });

  const ac = new AbortController();
  const connectMs = opts.connectTimeoutMs ?? 5000;
  let timer = setTimeout(() => ac.abort(), connectMs);
  let res: Response;
  try {
    res = await fetch(url, { signal: ac.signal });
  } catch (e) {
    clearTimeout(timer);
    const err = e as Error & { cause?: { code?: string; message?: string } };
    throw unreachable(ac.signal.aborted ? `no response within ${connectMs} ms` : (err.cause?.code ?? err.cause?.message ?? err.message));
  }
  clearTimeout(timer);
  if (res.status !== 200 || !res.body) {
    await res.body?.cancel().catch(() => {});
    throw unreachable(`HTTP ${res.status} ${res.statusText}`.trim());
  }
  const total = Number(res.headers.get('content-length')) || undefined;
  const what = `downloading the public ceremony powers of tau ${url}${total ? ` (${(total / 2 ** 20).toFixed(0)} MiB)` : ''} to ${file}`;
  log('info', what);
  opts.progress?.(what);
  await mkdir(dir, { recursive: true });
  await removeTemps(dir);
  const tmp = `${file}.tmp-${process.pid}`;
  const h = createHash('blake2b512');
  const fh = await open(tmp, 'w');
  const stallMs = opts.stallTimeoutMs ?? 30_000;
  let stalled = false;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      stalled = true;
      ac.abort();
    }, stallMs);
  };
  let bytes = 0;
  let shownPct = -1;
  try {
    arm();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      arm();
      h.update(chunk);
      await fh.write(chunk);
      bytes += chunk.length;
      const pct = total ? Math.floor((bytes / total) * 10) * 10 : -1;
      if (pct > shownPct) {
        shownPct = pct;
        opts.progress?.(`downloading ${name}: ${pct}%`);
      }
    }
  } catch (e) {
    await fh.close();
    await rm(tmp, { force: true });
    throw unreachable(stalled ? `no data for ${stallMs} ms after ${bytes} bytes` : `transfer broke off after ${bytes} bytes (${(e as Error).message})`);
  } finally {
    clearTimeout(timer);
  }
  await fh.close();
  const got = h.digest('hex');
  if (got !== expected) {
    await rm(tmp, { force: true });
    throw new ProverError(
      'setup_failed',
      `refusing ${url}: its BLAKE2b-512 is ${got}, the published hash of ${name} is ${expected} (${bytes} bytes received). ` +
        `Check REFRACT_PTAU_URL, or download the file yourself and pass --ptau <file>`,
      { reason: 'mismatch', url, expected, got },
    );
  }
  await rename(tmp, file);
  log('info', `verified ${file} against its published BLAKE2b-512 hash`);
  return file;
}

// ---------------------------------------------------------------------------------------------
// ptau

/** The ptau `setupCircuits` uses (recorded in the manifest). */
export interface PtauChoice {
  file: string;
  sha256: string;
  power: number;
  insecureDev: boolean;
}

/**
 * Which of `specs` need a ptau larger than 2^power, e.g. `v2_combined_32_40_3_4 needs 2^17`.
 * @returns a text for error messages, listing every circuit that does not fit
 */
export function ptauShortfall(specs: readonly CircuitSpec[], power: number): string {
  const over = specs.filter((s) => s.ptauPower > power);
  const max = Math.max(...over.map((s) => s.ptauPower));
  return `the selected circuits need ≥ ${max} (a 2^${max} ptau): ${over.map((s) => `${s.id} needs 2^${s.ptauPower}`).join(', ')}`;
}

/**
 * Which ptau setup uses, in this order: `opts.ptau` (checked: prepared, large enough); else, unless
 * `opts.devPtauPower` is given or `opts.ceremony` is false, the public Hermez file of power
 * max(needPower, 16) fetched into `<keysDir>/ptau/` (or found there, re-verified); else — the
 * download failed (offline, unreachable, HTTP error; logged as a warning) — the INSECURE development
 * ptau `<keysDir>/ptau/dev_pot<N>.ptau`, generated when missing.
 * @param need smallest power the selected circuits need, or the circuits (their `ptauPower`s; errors then name each that does not fit)
 * @throws ProverError `setup_failed` for an unusable `opts.ptau`, a too small `devPtauPower`, or a
 *   downloaded file that does not match its published hash (refused, not a fallback)
 */
export async function resolvePtau(
  opts: SetupOptions,
  need: number | readonly CircuitSpec[],
  log: SnarkLog,
  progress: (m: string) => void = () => {},
): Promise<PtauChoice> {
  const specs = typeof need === 'number' ? [] : need;
  const needPower = typeof need === 'number' ? need : Math.max(...need.map((s) => s.ptauPower));
  /** What the selected circuits need, for errors: each circuit that does not fit when known. */
  const shortfall = (power: number) => (specs.length ? ptauShortfall(specs, power) : `the selected circuits need ≥ ${needPower}`);
  if (opts.ptau) {
    const info = await readPtauInfo(opts.ptau);
    if (!info.preparedPhase2) {
      throw new ProverError('setup_failed', `${opts.ptau} is not prepared for phase 2 (run \`snarkjs powersoftau prepare phase2\`)`);
    }
    if (info.power < needPower) {
      throw new ProverError('setup_failed', `${opts.ptau} has power ${info.power}; ${shortfall(info.power)}`, { needPower });
    }
    if (opts.ptauInsecure) {
      log('warn', `using the INSECURE development powers of tau ${opts.ptau}: one party knew its toxic waste, so anyone holding it can forge proofs. Development and tests only; pass --ptau <file> from a public ceremony for real keys.`);
    }
    progress(`hashing ${opts.ptau}`);
    return { file: path.resolve(opts.ptau), sha256: (await digestFile(opts.ptau)).sha256, power: info.power, insecureDev: !!opts.ptauInsecure };
  }
  if (opts.devPtauPower === undefined && opts.ceremony !== false) {
    const c = opts.ceremony ?? {};
    const baseUrl = c.baseUrl ?? ceremonyPtauUrl();
    if (baseUrl !== undefined) {
      const power = Math.max(needPower, DEFAULT_PTAU_POWER);
      try {
        const file = await fetchCeremonyPtau({ ...c, baseUrl, power, dir: path.join(opts.keysDir, 'ptau'), log, progress });
        const info = await readPtauInfo(file);
        if (!info.preparedPhase2 || info.power < needPower) {
          throw new ProverError('setup_failed', `${file} is not a prepared 2^${power} ptau (power ${info.power}, prepared: ${info.preparedPhase2})`);
        }
        progress(`using the public ceremony powers of tau ${file} (BLAKE2b-512 verified)`);
        return { file, sha256: (await digestFile(file)).sha256, power: info.power, insecureDev: false };
      } catch (e) {
        if (!(e instanceof ProverError) || e.details?.reason !== 'unreachable') throw e;
        log('warn', `${e.message}; falling back to an INSECURE development powers of tau`);
      }
    }
  }
  const power = opts.devPtauPower ?? DEFAULT_PTAU_POWER;
  if (power < needPower) {
    throw new ProverError('setup_failed', `devPtauPower ${power} is too small; ${shortfall(power)}`, { needPower });
  }
  const dir = path.join(opts.keysDir, 'ptau');
  const file = path.join(dir, `dev_pot${power}.ptau`);
  const banner =
    `INSECURE development powers of tau (2^${power}) at ${file}: one party (this machine) knew its toxic ` +
    `waste, so anyone holding it can forge proofs. Use only for development and tests; pass --ptau <file> ` +
    `from a public ceremony for real keys.`;
  if (!(await exists(file))) {
    await mkdir(dir, { recursive: true });
    await removeTemps(dir);
    log('warn', `creating an ${banner} This takes minutes (about 20 min for 2^16 on 2 cores); a stopped run resumes from its last finished stage.`);
    progress(`creating INSECURE dev ptau 2^${power}`);
    // Stage files are named after the final file (not the pid), so the next run finds them (snark.ts createDevPtau).
    await createDevPtau(file, power, log, (stage) =>
      progress(stage === 'contributed'
        ? `resuming the development powers of tau ${file}: its accumulator and contribution are done (kept from an earlier run); the phase-2 preparation, the longest stage, starts over (snarkjs cannot resume within a stage)`
        : `resuming the development powers of tau ${file}: its accumulator is done (kept from an earlier run); the contribution and the phase-2 preparation start over`),
    );
  } else {
    log('warn', `using an ${banner}`);
  }
  return { file, sha256: (await digestFile(file)).sha256, power, insecureDev: true };
}

// ---------------------------------------------------------------------------------------------
// setup

async function cachedEntry(keysDir: string, e: ManifestCircuit | undefined, sourceHash: string, ptauSha256: string): Promise<boolean> {
  if (!e || e.sourceHash !== sourceHash || e.ptauSha256 !== ptauSha256) return false;
  const files = keyFiles(keysDir, e.id);
  for (const k of ['wasm', 'zkey', 'vkey', 'vkeySolana'] as const) {
    try {
      if ((await stat(files[k])).size !== e.files[k].bytes) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * Compiles the circuits and creates their keys in `opts.keysDir` (see the module comment).
 * Terminates the snarkjs curve at the end so the process can exit.
 * @throws ProverError `unsupported_shape` for an unknown id, `setup_failed` for compile errors or an
 *   unusable ptau (not prepared, power too small, a download that does not match its published hash)
 * @returns `built` and `cached` in the caller's order of `opts.circuits` (building follows `setupOrder`)
 */
export async function setupCircuits(opts: SetupOptions): Promise<SetupResult> {
  const ids = [...(opts.circuits ?? CIRCUIT_IDS)];
  ids.forEach(getCircuit);
  const log = opts.log ?? defaultLog;
  const keysDir = path.resolve(opts.keysDir);
  await mkdir(keysDir, { recursive: true });
  const release = await acquireSetupLock(keysDir, log);
  try {
    return await setupLocked(opts, ids, keysDir, log);
  } finally {
    await release();
  }
}

// ---------------------------------------------------------------------------------------------
// One setup per keys directory at a time (parallel test files, `refract start`'s background setup
// and a manual `refract setup` may target the same directory).

/** Lock file inside a keys directory, holding the pid of the process running setup there. */
export const SETUP_LOCK_FILE = '.setup.lock';
const inProcessLocks = new Map<string, Promise<void>>();

/**
 * Takes the setup lock of `keysDir`: first within this process (a promise chain), then across
 * processes (`<keysDir>/.setup.lock` created with O_EXCL, holding the pid). A lock whose process no
 * longer runs, or an empty lock file older than 10 s, is stale and taken over. The directory is
 * created when missing.
 * @returns the release function
 * @throws the file-system error when the directory cannot be created or the lock file written
 */
export async function acquireSetupLock(keysDir: string, log: SnarkLog = defaultLog): Promise<() => Promise<void>> {
  const prev = inProcessLocks.get(keysDir) ?? Promise.resolve();
  let releaseLocal!: () => void;
  const mine = new Promise<void>((r) => (releaseLocal = r));
  const chained = prev.then(() => mine);
  inProcessLocks.set(keysDir, chained);
  await prev;
  const file = path.join(keysDir, SETUP_LOCK_FILE);
  let warned = false;
  try {
    await mkdir(keysDir, { recursive: true }); // a fresh keys directory: the lock file is its first entry
    for (;;) {
      try {
        const fh = await open(file, 'wx');
        await fh.writeFile(String(process.pid));
        await fh.close();
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      let text = '';
      let mtimeMs = Date.now();
      try {
        text = (await readFile(file, 'utf8')).trim();
        mtimeMs = (await stat(file)).mtimeMs;
      } catch {
        continue; // released meanwhile
      }
      const pid = Number(text);
      const stale = text === '' ? Date.now() - mtimeMs > 10_000 : !Number.isInteger(pid) || pid <= 0 || (pid !== process.pid && !pidAlive(pid));
      if (stale) {
        await rm(file, { force: true });
        continue;
      }
      if (!warned) {
        log('info', `waiting for another \`refract setup\` (pid ${text || '?'}) to finish with ${keysDir}`);
        warned = true;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  } catch (e) {
    releaseLocal();
    if (inProcessLocks.get(keysDir) === chained) inProcessLocks.delete(keysDir);
    throw e;
  }
  return async () => {
    await rm(file, { force: true });
    releaseLocal();
    if (inProcessLocks.get(keysDir) === chained) inProcessLocks.delete(keysDir);
  };
}

async function setupLocked(opts: SetupOptions, ids: string[], keysDir: string, log: SnarkLog): Promise<SetupResult> {
  const specs = ids.map(getCircuit);
  const buildDir = path.resolve(opts.buildDir ?? path.join(keysDir, 'build'));
  await removeTemps(keysDir);
  const total = ids.length;
  const emit = (p: Omit<SetupProgress, 'total'>) => opts.onProgress?.({ ...p, total });
  const done = new Array<number>(total).fill(0);
  const frac = () => done.reduce((a, b) => a + b, 0) / Math.max(1, total);

  const manifest: KeysManifest = (await readManifest(keysDir)) ?? { version: MANIFEST_VERSION, circuits: {} };
  const built: string[] = [];
  const cached: string[] = [];
  const timingsMs: SetupResult['timingsMs'] = {};

  try {
    // Which circuits are already complete? (needs the ptau hash, so resolve the ptau first when
    // it is given or exists; generating a dev ptau is deferred until something must be built.)
    const hashes = await Promise.all(specs.map(circuitSourceHash));
    emit({ circuitId: null, index: 0, stage: 'ptau', fraction: 0, message: 'resolving powers of tau' });
    const ptau = await resolvePtau(opts, specs, log, (m) => emit({ circuitId: null, index: 0, stage: 'ptau', fraction: 0, message: m }));
    manifest.ptau = ptau;

    const todo: number[] = [];
    for (let i = 0; i < total; i++) {
      if (!opts.force && (await cachedEntry(keysDir, manifest.circuits[ids[i]!], hashes[i]!, ptau.sha256))) {
        cached.push(ids[i]!);
        done[i] = 1;
        emit({ circuitId: ids[i]!, index: i, stage: 'cached', fraction: frac() });
      } else {
        todo.push(i);
      }
    }

    // Build order (circuits.ts setupOrder): the most used circuits first. Compiles run ahead in
    // that order (`compileConcurrency` at a time) while keys are made one circuit at a time (snarkjs
    // uses every core) as soon as each compile is done, so the first circuits are usable long before
    // the last one is compiled.
    const rank = new Map(setupOrder(ids).map((id, r) => [id, r]));
    todo.sort((a, b) => rank.get(ids[a]!)! - rank.get(ids[b]!)!);
    for (const i of todo) emit({ circuitId: ids[i]!, index: i, stage: 'compile', fraction: frac() });
    const compiles = compileAhead({
      buildDir,
      circuits: todo.map((i) => ids[i]!),
      concurrency: opts.compileConcurrency,
      force: opts.force,
      onCompiled: (c, k) => {
        const i = todo[k]!;
        done[i] = 0.3;
        const spec = specs[i]!;
        if (c.constraints !== spec.constraints) {
          log('warn', `${c.id}: ${c.constraints} constraints, the registry expects ${spec.constraints} (circom/circomlib changed?)`);
        }
        emit({ circuitId: c.id, index: i, stage: 'compiled', fraction: frac(), message: `${c.constraints} constraints${c.cached ? ' (cached build)' : ''}` });
      },
    });
    try {
      for (let k = 0; k < todo.length; k++) {
        const i = todo[k]!;
        const id = ids[i]!;
        const spec = specs[i]!;
        const c = await compiles.results[k]!;
        const files = keyFiles(keysDir, id);
        const tmp = (f: string) => `${f}.tmp-${process.pid}`;
        const need = requiredPtauPower({ nConstraints: c.constraints, nPubInputs: c.nPubInputs, nPubOutputs: c.nPubOutputs });
        if (need > ptau.power) {
          throw new ProverError('setup_failed', `${id} needs a 2^${need} ptau; ${ptau.file} is 2^${ptau.power}`);
        }

        emit({ circuitId: id, index: i, stage: 'zkey', fraction: frac(), message: 'newZKey + contribution' });
        let t = performance.now();
        const contributionHash = await createZKey(c.r1csFile, ptau.file, tmp(files.zkey), log);
        const zkeyMs = performance.now() - t;
        done[i] = 0.95;

        emit({ circuitId: id, index: i, stage: 'vkey', fraction: frac() });
        t = performance.now();
        const vkey = await exportVerificationKey(tmp(files.zkey), log);
        if (vkey.nPublic !== spec.nPublic) {
          throw new ProverError('setup_failed', `${id}: verification key has ${vkey.nPublic} public inputs, expected ${spec.nPublic}`);
        }
        await writeFile(tmp(files.vkey), JSON.stringify(vkey, null, 1) + '\n');
        await writeFile(tmp(files.vkeySolana), JSON.stringify(solanaVkeyToJson(vkeyToSolana(vkey)), null, 1) + '\n');
        await copyFile(c.wasmFile, tmp(files.wasm));
        const vkeyMs = performance.now() - t;

        for (const f of [files.wasm, files.vkey, files.vkeySolana, files.zkey]) await rename(tmp(f), f);
        // the native prover's tables of an earlier zkey (a load would find them stale and rebuild anyway), and the
        // temporary files of a prover killed while writing them
        await removeTableFiles(keysDir, id);
        const timings = { compile: Math.round(c.compileMs), zkey: Math.round(zkeyMs), vkey: Math.round(vkeyMs) };
        manifest.circuits[id] = {
          id,
          kind: spec.kind,
          nAccounts: spec.nAccounts,
          nAddresses: spec.nAddresses,
          sourceHash: c.sourceHash,
          constraints: c.constraints,
          nPublic: spec.nPublic,
          ptauSha256: ptau.sha256,
          ptauPower: ptau.power,
          contributionHash,
          files: {
            wasm: await digestFile(files.wasm),
            zkey: await digestFile(files.zkey),
            vkey: await digestFile(files.vkey),
            vkeySolana: await digestFile(files.vkeySolana),
          },
          timingsMs: timings,
          createdAt: new Date().toISOString(),
        };
        await writeManifest(keysDir, manifest);
        built.push(id);
        timingsMs[id] = timings;
        done[i] = 1;
        emit({ circuitId: id, index: i, stage: 'done', fraction: frac(), message: `zkey ${(zkeyMs / 1000).toFixed(1)} s` });
      }
    } finally {
      await compiles.stop(); // after a failure: no compiler outlives this call
    }
    built.sort((a, b) => ids.indexOf(a) - ids.indexOf(b));
    if (todo.length === 0) await writeManifest(keysDir, manifest);
  } finally {
    await terminateCurve();
  }
  return { manifest, built, cached, timingsMs };
}

