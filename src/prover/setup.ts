/**
 * `setupCircuits`: compile the v1 circuits and create their Groth16 keys in a keys directory
 * (layout in keys.ts), cached and resumable.
 *
 * Per circuit: generate the main file from the registry (circuits.ts) → compile with npm circom2
 * (`--O2 --r1cs --wasm`, cached under `<keysDir>/build/<id>/` by source hash) → `zKey.newZKey`
 * against the ptau + one random contribution → export the verification key (snarkjs JSON and the
 * groth16-solana byte layout) → copy the wasm → record hashes in `manifest.json`.
 *
 * Caching: a circuit is skipped when the manifest has the same source hash and ptau hash and its
 * files exist with the recorded sizes. Resumability: every output is written under a temporary
 * name and renamed; the manifest (the commit point) is rewritten after each circuit, so a killed
 * run redoes at most the circuit it was on. Leftover `*.tmp-*` files are removed at start.
 *
 * Timings on the 2-core development VM: compile 7 s (1 account) to 28 s (inclusion ×8); zkey
 * with the 2^16 dev ptau ~20 s for inclusion_26_1.
 */
import { availableParallelism } from 'node:os';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CIRCUIT_IDS, getCircuit, mainSource, type CircuitSpec } from './circuits.ts';
import { solanaVkeyToJson, vkeyToSolana } from './encode.ts';
import { ProverError } from './errors.ts';
import {
  digestFile,
  keyFiles,
  MANIFEST_VERSION,
  readManifest,
  writeManifest,
  type KeysManifest,
  type ManifestCircuit,
} from './keys.ts';
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
} from './snark.ts';

const require = createRequire(import.meta.url);

/** Directory of the circom sources (repo `circuits/`). */
export const CIRCUITS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../circuits');
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
   * When omitted a development ptau is generated (INSECURE: one known contributor).
   */
  ptau?: string;
  /**
   * The given `ptau` is a development file with one known contributor (e.g. the shared
   * `pot16_dev.ptau`): recorded as `insecureDev` in the manifest and announced loudly.
   */
  ptauInsecure?: boolean;
  /** Power of a generated development ptau (default 16: every v1 circuit; 13 is enough for ×1 circuits). */
  devPtauPower?: number;
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
 * @throws ProverError `setup_failed` with circom's output on a compile error
 */
export async function compileCached(id: string, buildDir: string, opts: { force?: boolean } = {}): Promise<CompiledCircuit> {
  const spec = getCircuit(id);
  const sourceHash = await circuitSourceHash(spec);
  const dir = path.join(buildDir, id);
  const r1csFile = path.join(dir, `${id}.r1cs`);
  const wasmFile = path.join(dir, `${id}_js`, `${id}.wasm`);
  const stampFile = path.join(dir, 'build.json');
  if (!opts.force && (await exists(r1csFile)) && (await exists(wasmFile))) {
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
  const res = await compileCircuit({ mainFile, outDir: tmp, includeDirs: [CIRCOMLIB_INCLUDE_DIR, CIRCUITS_DIR] });
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
 * @returns one entry per id, in input order
 */
export async function compileCircuits(opts: {
  buildDir: string;
  circuits?: readonly string[];
  concurrency?: number;
  force?: boolean;
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
        out[i] = await compileCached(ids[i]!, opts.buildDir, { force: opts.force });
        opts.onCompiled?.(out[i]!, i);
      }
    }),
  );
  return out;
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
// ptau

interface PtauChoice {
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

async function resolvePtau(opts: SetupOptions, specs: readonly CircuitSpec[], log: SnarkLog, progress: (m: string) => void): Promise<PtauChoice> {
  const needPower = Math.max(...specs.map((s) => s.ptauPower));
  if (opts.ptau) {
    const info = await readPtauInfo(opts.ptau);
    if (!info.preparedPhase2) {
      throw new ProverError('setup_failed', `${opts.ptau} is not prepared for phase 2 (run \`snarkjs powersoftau prepare phase2\`)`);
    }
    if (info.power < needPower) {
      throw new ProverError('setup_failed', `${opts.ptau} has power ${info.power}; ${ptauShortfall(specs, info.power)}`, { needPower });
    }
    if (opts.ptauInsecure) {
      log('warn', `using the INSECURE development powers of tau ${opts.ptau}: one party knew its toxic waste, so anyone holding it can forge proofs. Development and tests only; pass --ptau <file> from a public ceremony for real keys.`);
    }
    progress(`hashing ${opts.ptau}`);
    return { file: path.resolve(opts.ptau), sha256: (await digestFile(opts.ptau)).sha256, power: info.power, insecureDev: !!opts.ptauInsecure };
  }
  const power = opts.devPtauPower ?? 16;
  if (power < needPower) {
    throw new ProverError('setup_failed', `devPtauPower ${power} is too small; ${ptauShortfall(specs, power)}`, { needPower });
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
    log('warn', `creating an ${banner} This takes minutes (about 20 min for 2^16 on 2 cores).`);
    progress(`creating INSECURE dev ptau 2^${power}`);
    const tmp = `${file}.tmp-${process.pid}`;
    await createDevPtau(tmp, power, log);
    await rename(tmp, file);
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
 *   unusable ptau (not prepared, power too small)
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
 * longer runs, or an empty lock file older than 10 s, is stale and taken over.
 * @returns the release function
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

    // Phase 1: compile (parallel, cached by source hash).
    for (const i of todo) emit({ circuitId: ids[i]!, index: i, stage: 'compile', fraction: frac() });
    const compiled = await compileCircuits({
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

    // Phase 2: keys, one circuit at a time (snarkjs uses every core).
    for (let k = 0; k < todo.length; k++) {
      const i = todo[k]!;
      const id = ids[i]!;
      const spec = specs[i]!;
      const c = compiled[k]!;
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
    if (todo.length === 0) await writeManifest(keysDir, manifest);
  } finally {
    await terminateCurve();
  }
  return { manifest, built, cached, timingsMs };
}

