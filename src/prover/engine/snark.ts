/**
 * The one module that touches snarkjs (and the circom compiler) in Refract.
 *
 * - `loadSnarkjs()` imports snarkjs lazily, with the worker-thread workaround of spec perf.md §2.4:
 *   ffjavascript 0.3.1 → web-worker 1.2.0 runs `isMainThread ? mainThread() : workerThread()` at
 *   import time and crashes in any worker thread it did not spawn itself (`Cannot destructure
 *   property 'mod' of 'threads.workerData'`). We flip `worker_threads.isMainThread` to true for
 *   the duration of the import and restore it afterwards.
 * - Curves (perf.md §2.3): `groth16.prove` / `verify` / zkey tools get the bn128 curve from
 *   `globalThis.curve_bn128`, which ffjavascript caches only for multi-threaded curves; a
 *   `singleThread` prove rebuilds the curve (~250 ms) on every call. `useCurve({singleThread})`
 *   builds the chosen curve once and installs it in that global slot, so every later snarkjs call
 *   of this thread reuses it.
 * - Witness calculation runs the circom-generated wasm through our own resident
 *   `WitnessCalculator` (one compiled + instantiated module per circuit, re-`init`ed per input),
 *   a TypeScript port of circom 2.2's generated `witness_calculator.js` / circom_runtime
 *   (snarkjs' `wtns.calculate` re-instantiates the wasm on every call). It needs no ffjavascript,
 *   so it is safe in any thread.
 * - Arithmetic kernels: `useCurve` replaces the curve's `G1.multiExpAffine` /
 *   `G2.multiExpAffine` (the multi-scalar multiplications, about 90% of a wasm proof) and
 *   `Fr.fft` / `Fr.ifft` with the native addon's (native/kernels/src/msm.c, fft.c: same inputs,
 *   same outputs — the FFT byte for byte — about 5× and 7× faster single-threaded) unless
 *   `kernels: 'wasm'` or REFRACT_PROVER_KERNELS=wasm. On this path (the `snarkjs` prover backend)
 *   snarkjs still runs the whole Groth16 algorithm (QAP, randomisation, encoding); the default
 *   `native` backend proves (and verifies) with Refract's own C code instead (groth16Native.ts). Either
 *   way every proof is verified before it is returned (workers/prove.ts). Without the addon
 *   ffjavascript's wasm serves.
 * - Compilation spawns the npm `circom2` compiler (circom 2.2.3 as WASI) in a child process.
 */
import { childEnv, envValue } from '../../config/config.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { open, mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import v8 from 'node:v8';
import { ProverError } from '../errors.ts';
import { importAsMainThread } from '../../mainThreadImport.ts';
import { nativeAddon } from '../../native.ts';
import { ptauPowerFor } from '../keys/circuits.ts';
import { newZKeyNative } from './zkeyNew.ts';

const require = createRequire(import.meta.url);

// ---------------------------------------------------------------------------------------------
// Types

/** A snarkjs Groth16 proof (decimal strings, projective with z = 1; pi_b[k] = [c0, c1]). */
export interface Groth16Proof {
  pi_a: [string, string, string];
  pi_b: [[string, string], [string, string], [string, string]];
  pi_c: [string, string, string];
  protocol: 'groth16';
  curve: 'bn128';
}

/** A snarkjs Groth16 verification key (`zkey export verificationkey` JSON). */
export interface VerificationKey {
  protocol: 'groth16';
  curve: 'bn128';
  nPublic: number;
  vk_alpha_1: string[];
  vk_beta_2: string[][];
  vk_gamma_2: string[][];
  vk_delta_2: string[][];
  vk_alphabeta_12?: unknown;
  IC: string[][];
}

/** A circom input value: decimal/hex string, number or bigint, or nested arrays of them. */
export type SignalValue = string | number | bigint | readonly SignalValue[];
/** circom input JSON: signal name → value(s). */
export type CircuitInput = Record<string, SignalValue>;

/** Receives snarkjs' log lines (level, message). */
export type SnarkLog = (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;

type Snarkjs = typeof import('snarkjs');

// ---------------------------------------------------------------------------------------------
// snarkjs import (worker-thread safe)

let snarkjsPromise: Promise<Snarkjs> | undefined;

/**
 * Imports snarkjs once per thread. In a worker thread, `worker_threads.isMainThread` reads `true`
 * while the import runs (perf.md §2.4 workaround, src/mainThreadImport.ts).
 * @returns the snarkjs module namespace
 */
export function loadSnarkjs(): Promise<Snarkjs> {
  snarkjsPromise ??= importAsMainThread<Snarkjs>('snarkjs');
  return snarkjsPromise;
}

/**
 * The logger object snarkjs expects, forwarding to `log`. It must have every method snarkjs calls:
 * besides debug/info/warn/error, `powersOfTau.newAccumulator` calls `logger.log` every 100,000
 * points (so from power 16 up), which crashed a generated 2^16 dev ptau when it was missing.
 * @returns undefined when `log` is undefined (snarkjs then logs nothing)
 */
export function snarkLogger(log?: SnarkLog) {
  if (!log) return undefined;
  return {
    log: (m: string) => log('info', String(m)),
    debug: (m: string) => log('debug', String(m)),
    info: (m: string) => log('info', String(m)),
    warn: (m: string) => log('warn', String(m)),
    error: (m: string) => log('error', String(m)),
  };
}

// ---------------------------------------------------------------------------------------------
// Curve management

/** Arithmetic kernels under snarkjs (MSM, FFT): `native` = the addon's (default when built), `wasm` = ffjavascript's. */
export type ProverKernels = 'native' | 'wasm';

type MultiExpAffine = (bases: Uint8Array, scalars: Uint8Array, logger?: unknown, logText?: string) => Promise<Uint8Array>;
interface Group {
  multiExpAffine: MultiExpAffine;
  zero: Uint8Array;
}
type Fft = (buff: Uint8Array, inType?: string, outType?: string, logger?: unknown, loggerTxt?: string) => Promise<Uint8Array>;
interface ScalarField {
  fft: Fft;
  ifft: Fft;
  /** w[k]: primitive 2^k-th root of unity (Montgomery bytes), k ≤ s */
  w: Uint8Array[];
  s: number;
  e(n: number): Uint8Array;
  inv(a: Uint8Array): Uint8Array;
}
interface Curve {
  terminate(): Promise<void>;
  G1: Group;
  G2: Group;
  Fr: ScalarField;
}
const g = globalThis as unknown as { curve_bn128: Curve | null };
let resident: { curve: Curve; singleThread: boolean; kernels: ProverKernels; msmThreads: number } | undefined;

/**
 * The kernels this thread would use: `requested` (else REFRACT_PROVER_KERNELS, else `native`),
 * downgraded to `wasm` when the addon is not built (or predates the MSM and FFT).
 */
export function proverKernels(requested?: ProverKernels): ProverKernels {
  const want = requested ?? (envValue('REFRACT_PROVER_KERNELS') === 'wasm' ? 'wasm' : 'native');
  return want === 'native' && typeof nativeAddon?.msmG1 === 'function' && typeof nativeAddon.frFft === 'function' ? 'native' : 'wasm';
}

/**
 * Serves `curve.G1/G2.multiExpAffine` with the native addon (same contract as ffjavascript's:
 * affine Montgomery bases, plain little-endian scalars of equal size, Jacobian Montgomery result,
 * `G.zero` for infinity). Calls the addon does not take go to the original wasm implementation:
 * buffers that are not plain Uint8Arrays (ffjavascript BigBuffers, over 1 GiB) and scalars wider
 * than 32 bytes or not an exact share of the scalar buffer per point (ffjavascript accepts any
 * width; snarkjs' prover passes 32 bytes). `threads` 0 = CPUs shared by the MSMs running.
 */
function installNativeMsm(curve: Curve, threads = 0): void {
  const addon = nativeAddon!;
  const groups: [Group, NonNullable<typeof addon.msmG1>, number, number][] = [
    [curve.G1, addon.msmG1!, 64, 96],
    [curve.G2, addon.msmG2!, 128, 192],
  ];
  for (const [G, native, pointBytes, outBytes] of groups) {
    const wasm = G.multiExpAffine;
    G.multiExpAffine = async (bases, scalars, logger, logText) => {
      const n = bases instanceof Uint8Array ? bases.length / pointBytes : 0;
      const width = n > 0 && scalars instanceof Uint8Array ? scalars.length / n : 0;
      if (!Number.isInteger(n) || n === 0 || !Number.isInteger(width) || width < 1 || width > 32) return wasm.call(G, bases, scalars, logger, logText);
      const out = new Uint8Array(outBytes);
      return native(bases, scalars, out, threads) ? out : G.zero;
    };
  }
}

/**
 * Serves `Fr.fft` / `Fr.ifft` with the addon's radix-2 NTT (`frFft`): same contract as
 * ffjavascript's for a Uint8Array of n = 2^k Montgomery elements, 2 ≤ n ≤ 2^s (a new buffer in
 * natural order; the input is not modified; ifft = root⁻¹ and scale n⁻¹), the same bytes
 * (test/prover.msm.test.ts). Arrays, BigBuffers, other group types and sizes go to the original.
 */
function installNativeFft(Fr: ScalarField): void {
  const frFft = nativeAddon!.frFft!;
  const wrap = (wasm: Fft, inverse: boolean): Fft =>
    async (buff, inType, outType, logger, loggerTxt) => {
      const n = buff instanceof Uint8Array ? buff.length / 32 : 0;
      const bits = Math.log2(n);
      if (!Number.isInteger(bits) || bits < 1 || bits > Fr.s) return wasm.call(Fr, buff, inType, outType, logger, loggerTxt);
      const out = buff.slice();
      return inverse ? frFft(out, Fr.inv(Fr.w[bits]!), Fr.inv(Fr.e(n))) : frFft(out, Fr.w[bits]!);
    };
  Fr.fft = wrap(Fr.fft, false);
  Fr.ifft = wrap(Fr.ifft, true);
}

/**
 * Builds the bn128 curve once for this thread and makes every later snarkjs call reuse it.
 * @param opts.singleThread true: a curve without nested worker threads (use one pool thread per
 *   core); false (default): ffjavascript's multi-threaded curve with `os.cpus().length` nested
 *   threads (use one pool thread in total). Calling again with another mode replaces the curve.
 * @param opts.kernels MSM and FFT kernels (see `proverKernels`; default native when the addon is built)
 * @param opts.msmThreads native MSM threads per call (default 0: the CPUs, shared by the MSMs
 *   running at the same time in this process; 1 = strictly single-threaded)
 * @returns build time in ms (0 when already built)
 */
export async function useCurve(opts: { singleThread?: boolean; kernels?: ProverKernels; msmThreads?: number } = {}): Promise<number> {
  const singleThread = opts.singleThread ?? false;
  const kernels = proverKernels(opts.kernels ?? resident?.kernels);
  const msmThreads = opts.msmThreads ?? resident?.msmThreads ?? 0;
  if (resident && resident.singleThread === singleThread && resident.kernels === kernels && resident.msmThreads === msmThreads) {
    // Another ffjavascript copy evaluated later resets the global slot to null; re-install.
    if (g.curve_bn128 !== resident.curve) g.curve_bn128 = resident.curve;
    return 0;
  }
  if (resident) await terminateCurve();
  const t0 = performance.now();
  const snarkjs = await loadSnarkjs();
  const curve = (await snarkjs.curves.getCurveFromName('bn128', { singleThread })) as unknown as Curve;
  if (kernels === 'native') {
    installNativeMsm(curve, msmThreads);
    installNativeFft(curve.Fr);
  }
  g.curve_bn128 = curve;
  resident = { curve, singleThread, kernels, msmThreads };
  return performance.now() - t0;
}

/**
 * Terminates this thread's bn128 curve (its nested worker threads keep a process alive,
 * snarkjs#152) and clears the cache. Safe to call when no curve was built.
 */
export async function terminateCurve(): Promise<void> {
  const c = resident?.curve ?? g.curve_bn128;
  resident = undefined;
  if (c) {
    // A single-threaded curve's terminate() is a no-op; a multi-threaded one clears the global.
    await c.terminate();
  }
  g.curve_bn128 = null;
}

// ---------------------------------------------------------------------------------------------
// Groth16 prove / verify

/**
 * Groth16 proof from a zkey and a `.wtns` buffer, both in memory (`{type:'mem'}`; snarkjs
 * re-reads a zkey file on every call otherwise). Uses the thread's resident curve
 * (`useCurve`, built on first use with default options).
 * @param zkey zkey file bytes (kept by the caller; snarkjs does not modify them)
 * @param wtns witness in `.wtns` format (`WitnessCalculator.calculateWtns`)
 * @returns the proof and the public signals (decimal strings) taken from the witness
 */
export async function prove(
  zkey: Uint8Array,
  wtns: Uint8Array,
): Promise<{ proof: Groth16Proof; publicSignals: string[] }> {
  await useCurve(resident ?? {});
  const snarkjs = await loadSnarkjs();
  // Open job for the native MSM's automatic thread count: while two proofs run, each MSM takes
  // one core instead of both (measured: oversubscribing costs ≈20% CPU per proof at concurrency 8).
  const jobs = resident?.kernels === 'native' ? nativeAddon?.msmJobs : undefined;
  jobs?.(1);
  try {
    return await snarkjs.groth16.prove({ type: 'mem', data: zkey }, { type: 'mem', data: wtns });
  } finally {
    jobs?.(-1);
  }
}

/**
 * Verifies a Groth16 proof against a verification key (about 30–50 ms on a cached curve).
 * @returns true when `e(A,B) = e(α,β)·e(vk_x,γ)·e(C,δ)` holds and the public signals are < r
 */
export async function verify(
  vkey: VerificationKey,
  publicSignals: readonly string[],
  proof: Groth16Proof,
): Promise<boolean> {
  await useCurve(resident ?? {});
  const snarkjs = await loadSnarkjs();
  return snarkjs.groth16.verify(vkey, publicSignals, proof);
}

// ---------------------------------------------------------------------------------------------
// Setup: powers of tau, zkey, verification key

/**
 * The stage files of an unfinished {@link createDevPtau} of `outFile`, if any: `accumulator` (the
 * fresh accumulator, stage 1 done) and `contributed` (its random contribution, stage 2 done).
 */
export function devPtauStages(outFile: string): { accumulator: string; contributed: string } {
  return { accumulator: `${outFile}.stage1-accumulator`, contributed: `${outFile}.stage2-contributed` };
}

/**
 * Creates a fresh bn128 powers-of-tau accumulator with one random contribution and prepares
 * phase 2. INSECURE (the caller knows the toxic waste): development and tests only.
 * Cost grows ~2^power: power 16 takes about 20 minutes on 2 cores, power 13 a few minutes.
 * Resumable between stages: each finished stage is kept as a file ({@link devPtauStages}, written
 * through `.tmp-<pid>` and renamed), so a run stopped (Ctrl-C, SIGTERM, a crash) goes on from the
 * last finished stage; the stage that was running starts over (snarkjs cannot resume within one;
 * phase-2 preparation is the longest). The stage files are removed once `outFile` is written.
 * @param outFile final prepared ptau path (written through `<outFile>.tmp-<pid>`: it exists only complete)
 * @param power log2 of the maximum constraints (+ public inputs + 1) the file can serve
 * @param onResume called with the stage resumed after, when a stage file was found
 */
export async function createDevPtau(outFile: string, power: number, log?: SnarkLog, onResume?: (stage: 'accumulator' | 'contributed') => void): Promise<void> {
  const { rm, rename, access } = await import('node:fs/promises');
  const have = (f: string) => access(f).then(() => true, () => false);
  const snarkjs = await loadSnarkjs();
  const logger = snarkLogger(log);
  const curve = await snarkjs.curves.getCurveFromName('bn128');
  const { accumulator, contributed } = devPtauStages(outFile);
  const tmp = (f: string) => `${f}.tmp-${process.pid}`;
  if (await have(contributed)) onResume?.('contributed');
  else {
    if (await have(accumulator)) onResume?.('accumulator');
    else {
      await snarkjs.powersOfTau.newAccumulator(curve, power, tmp(accumulator), logger);
      await rename(tmp(accumulator), accumulator);
    }
    await snarkjs.powersOfTau.contribute(accumulator, tmp(contributed), 'refract dev (INSECURE)', randomBytes(32).toString('hex'), logger);
    await rename(tmp(contributed), contributed);
  }
  await snarkjs.powersOfTau.preparePhase2(contributed, tmp(outFile), logger);
  await rename(tmp(outFile), outFile);
  await rm(accumulator, { force: true });
  await rm(contributed, { force: true });
}

/**
 * Groth16 phase-2 setup: the initial key (`zkeyNew.ts` with the native addon's MSM, the same bytes
 * as snarkjs `zKey.newZKey(r1cs, ptau)` in about a fifth of its CPU, bench:zkey; snarkjs's where the addon is not built)
 * then one random contribution (`zKey.contribute`). Writes `<outFile>.init` on the way and removes it.
 * @throws ProverError `setup_failed` when snarkjs rejects the inputs (ptau too small or not
 *   prepared for phase 2, curve mismatch); snarkjs reports those through the log and a -1 return.
 * @returns the contribution hash (hex) printed by snarkjs
 */
export async function createZKey(
  r1csFile: string,
  ptauFile: string,
  outFile: string,
  log?: SnarkLog,
): Promise<string> {
  const { rm } = await import('node:fs/promises');
  const snarkjs = await loadSnarkjs();
  const errors: string[] = [];
  const logger = snarkLogger((level, msg) => {
    if (level === 'error') errors.push(msg);
    log?.(level, msg);
  });
  const init = `${outFile}.init`;
  let r: unknown;
  if (nativeAddon?.msmG1 && nativeAddon.msmG2) {
    log?.('info', `newZKey (native MSM): ${r1csFile}`);
    r = await newZKeyNative(nativeAddon, r1csFile, ptauFile, init).catch((e: unknown) => {
      errors.push(e instanceof Error ? e.message : String(e));
      return -1;
    });
  } else {
    r = await snarkjs.zKey.newZKey(r1csFile, ptauFile, init, logger);
  }
  if (r === -1 || errors.length) {
    await rm(init, { force: true });
    throw new ProverError('setup_failed', `snarkjs newZKey failed for ${r1csFile}: ${errors.join('; ') || 'unknown error'}`);
  }
  const hash = await snarkjs.zKey.contribute(init, outFile, 'refract setup', randomBytes(32).toString('hex'), logger);
  await rm(init, { force: true });
  if (hash === -1 || !(hash instanceof Uint8Array) || errors.length) {
    throw new ProverError('setup_failed', `snarkjs zkey contribute failed for ${r1csFile}: ${errors.join('; ') || 'unknown error'}`);
  }
  return Buffer.from(hash).toString('hex');
}

/** `zKey.exportVerificationKey`: the snarkjs verification-key JSON of a zkey file. */
export async function exportVerificationKey(zkeyFile: string, log?: SnarkLog): Promise<VerificationKey> {
  const snarkjs = await loadSnarkjs();
  return snarkjs.zKey.exportVerificationKey(zkeyFile, snarkLogger(log));
}

// ---------------------------------------------------------------------------------------------
// Binary headers (read without snarkjs: no curve is built)

/**
 * The header section (type 1) of an iden3 binary file (`r1cs`, `ptau`: 4-byte magic, version,
 * section table) and the ids of all its sections; the file is closed before this returns.
 * @throws ProverError `keys_missing` when the file is not a `magic` file, is truncated, or has no header section
 */
async function readHeaderSection(file: string, magic: string): Promise<{ header: Buffer; sectionIds: Set<number> }> {
  const fh = await open(file, 'r');
  const read = async (pos: number, len: number) => {
    const b = Buffer.alloc(len);
    const { bytesRead } = await fh.read(b, 0, len, pos);
    if (bytesRead !== len) throw new ProverError('keys_missing', `${file}: truncated (wanted ${len} bytes at ${pos})`);
    return b;
  };
  try {
    const head = await read(0, 12);
    if (head.subarray(0, 4).toString('latin1') !== magic) {
      throw new ProverError('keys_missing', `${file}: not a ${magic} file`);
    }
    const nSections = head.readUInt32LE(8);
    const sections = new Map<number, { pos: number; size: number }>();
    let pos = 12;
    for (let i = 0; i < nSections; i++) {
      const h = await read(pos, 12);
      const type = h.readUInt32LE(0);
      const size = Number(h.readBigUInt64LE(4));
      sections.set(type, { pos: pos + 12, size });
      pos += 12 + size;
    }
    const s = sections.get(1);
    if (!s) throw new ProverError('keys_missing', `${file}: ${magic} has no header section`);
    return { header: await read(s.pos, s.size), sectionIds: new Set(sections.keys()) };
  } finally {
    await fh.close();
  }
}

/** Header of an `.r1cs` file (circom/iden3 binary format, section 1). */
export interface R1csInfo {
  /** Number of constraints (with `--O2`: the non-linear ones). */
  nConstraints: number;
  nWires: number;
  nPubOutputs: number;
  nPubInputs: number;
  nPrvInputs: number;
  nLabels: number;
  /** Field modulus (BN254 r for our circuits). */
  prime: bigint;
}

/**
 * Reads the header of an r1cs file without loading constraints or building a curve (the same
 * numbers `snarkjs r1cs info` prints).
 * @throws ProverError `keys_missing` when the file is not an r1cs file
 */
export async function readR1csInfo(file: string): Promise<R1csInfo> {
  const { header: h } = await readHeaderSection(file, 'r1cs');
  const n8 = h.readUInt32LE(0);
  let prime = 0n;
  for (let i = n8 - 1; i >= 0; i--) prime = (prime << 8n) | BigInt(h[4 + i]!);
  const o = 4 + n8;
  const nWires = h.readUInt32LE(o);
  const nPubOutputs = h.readUInt32LE(o + 4);
  const nPubInputs = h.readUInt32LE(o + 8);
  const nPrvInputs = h.readUInt32LE(o + 12);
  const nLabels = Number(h.readBigUInt64LE(o + 16));
  const nConstraints = h.readUInt32LE(o + 24);
  return { nConstraints, nWires, nPubOutputs, nPubInputs, nPrvInputs, nLabels, prime };
}

/** Header of a `.ptau` file. */
export interface PtauInfo {
  /** log2 of the number of tau powers in the file. */
  power: number;
  ceremonyPower: number;
  /** True when `powersoftau prepare phase2` was run (sections 12–15 present): required by newZKey. */
  preparedPhase2: boolean;
}

/**
 * Reads the header of a powers-of-tau file (no curve built).
 * @throws ProverError `keys_missing` when the file is not a ptau file
 */
export async function readPtauInfo(file: string): Promise<PtauInfo> {
  const { header: h, sectionIds } = await readHeaderSection(file, 'ptau');
  const n8 = h.readUInt32LE(0);
  return { power: h.readUInt32LE(4 + n8), ceremonyPower: h.readUInt32LE(8 + n8), preparedPhase2: sectionIds.has(12) };
}

/**
 * The smallest ptau power that can serve a circuit, as snarkjs newZKey computes it:
 * `floor(log2(nConstraints + nPubInputs + nOutputs)) + 1`.
 */
export function requiredPtauPower(info: Pick<R1csInfo, 'nConstraints' | 'nPubInputs' | 'nPubOutputs'>): number {
  return ptauPowerFor(info.nConstraints, info.nPubInputs + info.nPubOutputs);
}

// ---------------------------------------------------------------------------------------------
// Compile (npm circom2)

/** Result of one circom compilation. */
export interface CompileResult {
  r1csFile: string;
  wasmFile: string;
  /** "non-linear constraints" printed by circom. */
  nonLinearConstraints: number;
  /** "linear constraints" printed by circom (0 with --O2). */
  linearConstraints: number;
  durationMs: number;
  output: string;
}

/**
 * Compiles a circom main file with the npm `circom2` compiler (circom 2.2.3 in WASI) in a child
 * process: `circom2 <main> --O2 --r1cs --wasm -l <dirs…> -o <outDir>` (`--wasm` left out with
 * `wasm: false`: the witness calculator's output costs about a quarter of a compile).
 * circom2's WASI sandbox only sees the working directory and its descendants, so the child runs
 * with cwd `/` and every path is given relative to it.
 * @param opts.mainFile absolute path of the `.circom` main file
 * @param opts.outDir absolute output dir; the wasm lands in `<outDir>/<name>_js/<name>.wasm`
 * @param opts.includeDirs absolute include dirs (`-l`), e.g. node_modules (for `circomlib/…`) and circuits/
 * @param opts.wasm also write the witness calculator (default true)
 * @throws ProverError `setup_failed` with the compiler output when circom fails
 */
/** Compiler processes running now: killed when this process exits, so none outlives a stopped setup. */
const compilers = new Set<ChildProcess>();
let killOnExit = false;

export async function compileCircuit(opts: {
  mainFile: string;
  outDir: string;
  includeDirs: string[];
  wasm?: boolean;
}): Promise<CompileResult> {
  const cli = require.resolve('circom2/cli.js');
  const rel = (p: string) => path.relative('/', path.resolve(p)) || '.';
  // --single-threaded: V8 without its background compile and GC threads; circom runs on one thread
  // anyway, and the compiler's 9 MB of wasm then costs about an eighth less CPU per compile.
  const args = ['--single-threaded', cli, rel(opts.mainFile), '--O2', '--r1cs', ...(opts.wasm === false ? [] : ['--wasm']), '-o', rel(opts.outDir)];
  for (const d of opts.includeDirs) args.push('-l', rel(d));
  await mkdir(opts.outDir, { recursive: true });
  const env = childEnv({ NO_COLOR: '1' });
  const t0 = performance.now();
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: '/', env, stdio: ['ignore', 'pipe', 'pipe'] });
    compilers.add(child);
    if (!killOnExit) {
      killOnExit = true;
      // 'exit' runs on process.exit() and a normal end (the setup command turns SIGTERM/SIGINT and
      // its --exit-on-stdin-close into process.exit); a compile left running would burn a core for
      // minutes after its daemon stopped.
      process.once('exit', () => {
        for (const c of compilers) c.kill('SIGKILL');
      });
    }
    child.on('close', () => compilers.delete(child));
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (c) => resolve({ code: c, output: out }));
  });
  // eslint-disable-next-line no-control-regex
  const clean = output.replace(/\x1b\[[0-9;]*m/g, '');
  if (code !== 0 || !/Everything went okay/.test(clean)) {
    throw new ProverError('setup_failed', `circom failed on ${opts.mainFile} (exit ${code}):\n${clean.trim()}`);
  }
  const name = path.basename(opts.mainFile, '.circom');
  const num = (re: RegExp) => Number(re.exec(clean)?.[1] ?? NaN);
  return {
    r1csFile: path.join(opts.outDir, `${name}.r1cs`),
    wasmFile: path.join(opts.outDir, `${name}_js`, `${name}.wasm`),
    nonLinearConstraints: num(/non-linear constraints: (\d+)/),
    linearConstraints: num(/(?:^|\n)linear constraints: (\d+)/),
    durationMs: performance.now() - t0,
    output: clean,
  };
}

// ---------------------------------------------------------------------------------------------
// Witness calculation (resident wasm instance)

function fnv1a64(str: string): { msb: number; lsb: number } {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < str.length; i++) {
    h ^= BigInt(str.charCodeAt(i));
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return { msb: Number(h >> 32n), lsb: Number(h & 0xffffffffn) };
}

function flatten(v: SignalValue, out: SignalValue[]): void {
  if (Array.isArray(v)) for (const x of v as readonly SignalValue[]) flatten(x, out);
  else out.push(v);
}

interface CircomWasmExports {
  memory: WebAssembly.Memory;
  getVersion(): number;
  getFieldNumLen32(): number;
  getRawPrime(): void;
  readSharedRWMemory(i: number): number;
  writeSharedRWMemory(i: number, v: number): void;
  init(sanityCheck: number): void;
  setInputSignal(hMSB: number, hLSB: number, i: number): void;
  getInputSignalSize(hMSB: number, hLSB: number): number;
  getInputSize(): number;
  getWitnessSize(): number;
  getWitness(i: number): void;
  getMessageChar(): number;
}

let wasmOptimizedAtCompile = false;

/**
 * Makes V8 compile WebAssembly modules with its optimizing compiler (TurboFan), every function at
 * `WebAssembly.compile` time (`--no-liftoff --no-wasm-lazy-compilation`), instead of its default: the
 * baseline compiler (Liftoff), function by function on first call, then TurboFan in the background
 * for the functions that get hot. For a resident witness calculator that moves the compile work to
 * key load: measured for inclusion_26_1 (1.8 MB of wasm, one thread) the compile takes 355 ms instead
 * of 6, and every witness runs at the steady 6.2–6.4 ms from the first one, where by default the
 * first ~60 ran at 7–16 ms of wall time and 13–32 ms of CPU (the background compiles) before
 * settling at the same 6.2. A pool of 2 threads warming two circuits: 0.9 s instead of 0.3 s, and its
 * first ten proofs 764 ms of CPU instead of 1,009.
 * The flags are the process's: every module compiled afterwards, in any thread, is compiled this
 * way (snarkjs' curve wasm too); modules compiled before keep their code. Idempotent.
 */
export function optimizeWasmAtCompile(): void {
  if (wasmOptimizedAtCompile) return;
  v8.setFlagsFromString('--no-liftoff');
  v8.setFlagsFromString('--no-wasm-lazy-compilation');
  wasmOptimizedAtCompile = true;
}

/**
 * A resident witness calculator for one circom 2 circuit: the wasm is compiled and instantiated
 * once; each `calculateWtns` re-initialises the instance and fills in the inputs.
 * Errors: a failing constraint throws `ProverError('witness_failed')` whose message carries the
 * circom diagnostics ("Assert Failed. Error in template Inclusion_283 line: 20"); a missing or
 * mis-sized input throws `ProverError('invalid_input')`.
 */
export class WitnessCalculator {
  private errStr = '';
  private msgStr = '';
  private constructor(
    private readonly module: WebAssembly.Module,
    private ex: CircomWasmExports,
    readonly prime: bigint,
    readonly n32: number,
    readonly witnessSize: number,
  ) {}

  /** Compiles and instantiates circuit wasm bytes (circom ≥ 2.0). */
  static async create(wasm: Uint8Array): Promise<WitnessCalculator> {
    const module = await WebAssembly.compile(wasm as Uint8Array<ArrayBuffer>);
    const holder: { wc?: WitnessCalculator } = {};
    const ex = await WitnessCalculator.instantiate(module, holder);
    const n32 = ex.getFieldNumLen32();
    ex.getRawPrime();
    let prime = 0n;
    for (let j = n32 - 1; j >= 0; j--) prime = (prime << 32n) | BigInt(ex.readSharedRWMemory(j) >>> 0);
    const wc = new WitnessCalculator(module, ex, prime, n32, ex.getWitnessSize());
    holder.wc = wc;
    return wc;
  }

  private static async instantiate(module: WebAssembly.Module, holder: { wc?: WitnessCalculator }): Promise<CircomWasmExports> {
    let ex: CircomWasmExports | undefined;
    const getMessage = () => {
      let s = '';
      for (let c = ex!.getMessageChar(); c !== 0; c = ex!.getMessageChar()) s += String.fromCharCode(c);
      return s;
    };
    const codes: Record<number, string> = {
      1: 'Signal not found.',
      2: 'Too many signals set.',
      3: 'Signal already set.',
      4: 'Assert Failed.',
      5: 'Not enough memory.',
      6: 'Input signal array access exceeds the size.',
      7: 'Out of bounds array access.',
    };
    const instance = await WebAssembly.instantiate(module, {
      runtime: {
        exceptionHandler(code: number) {
          const wc = holder.wc;
          const msg = `${codes[code] ?? 'Unknown error.'} ${wc ? wc.errStr.trim() : ''}`.trim();
          throw new ProverError('witness_failed', msg, { circomCode: code });
        },
        printErrorMessage() {
          if (holder.wc) holder.wc.errStr += getMessage() + '\n';
        },
        writeBufferMessage() {
          // circom `log()` output; kept (not printed) so a prover thread stays quiet.
          const wc = holder.wc;
          if (!wc) return;
          const m = getMessage();
          wc.msgStr = m === '\n' ? '' : wc.msgStr + m;
        },
        showSharedRWMemory() {},
      },
    });
    ex = instance.exports as unknown as CircomWasmExports;
    return ex;
  }

  /**
   * Computes the witness in snarkjs' `.wtns` binary format (version 2).
   * @param input signal name → value(s); every input signal of the circuit must be present with
   *   exactly its size. Values are reduced mod r (negative values allowed, as circom does).
   * @throws ProverError `invalid_input` (unknown signal / wrong size / missing inputs) or
   *   `witness_failed` (a constraint does not hold)
   */
  async calculateWtns(input: CircuitInput): Promise<Uint8Array> {
    try {
      this.fill(input);
    } catch (e) {
      // A trap can leave the instance mid-computation; start the next call on a fresh one.
      await this.reset();
      throw e;
    }
    const { n32, witnessSize: W, ex } = this;
    const n8 = n32 * 4;
    const bytes = new Uint8Array(44 + n8 + n8 * W);
    const dv = new DataView(bytes.buffer);
    bytes.set([0x77, 0x74, 0x6e, 0x73]); // "wtns"
    dv.setUint32(4, 2, true); // version
    dv.setUint32(8, 2, true); // sections
    dv.setUint32(12, 1, true); // section 1: header
    dv.setBigUint64(16, BigInt(8 + n8), true);
    dv.setUint32(24, n8, true);
    ex.getRawPrime();
    let pos = 28;
    for (let j = 0; j < n32; j++, pos += 4) dv.setUint32(pos, ex.readSharedRWMemory(j) >>> 0, true);
    dv.setUint32(pos, W, true);
    pos += 4;
    dv.setUint32(pos, 2, true); // section 2: witness
    dv.setBigUint64(pos + 4, BigInt(n8 * W), true);
    pos += 12;
    for (let i = 0; i < W; i++) {
      ex.getWitness(i);
      for (let j = 0; j < n32; j++, pos += 4) dv.setUint32(pos, ex.readSharedRWMemory(j) >>> 0, true);
    }
    return bytes;
  }

  /**
   * Public signals of a `.wtns` buffer: witness entries 1..nPublic (entry 0 is the constant 1),
   * as decimal strings, in the circuit's public order.
   */
  publicSignals(wtns: Uint8Array, nPublic: number): string[] {
    const n8 = this.n32 * 4;
    const base = 44 + n8;
    const out: string[] = [];
    for (let i = 1; i <= nPublic; i++) {
      let v = 0n;
      for (let k = n8 - 1; k >= 0; k--) v = (v << 8n) | BigInt(wtns[base + i * n8 + k]!);
      out.push(v.toString());
    }
    return out;
  }

  private async reset(): Promise<void> {
    this.errStr = '';
    this.msgStr = '';
    this.ex = await WitnessCalculator.instantiate(this.module, { wc: this });
  }

  private fill(input: CircuitInput): void {
    const { ex, prime, n32 } = this;
    this.errStr = '';
    ex.init(0);
    let count = 0;
    for (const [name, value] of Object.entries(input)) {
      const { msb, lsb } = fnv1a64(name);
      const values: SignalValue[] = [];
      flatten(value, values);
      const size = ex.getInputSignalSize(msb, lsb);
      if (size < 0) throw new ProverError('invalid_input', `signal "${name}" is not an input of the circuit`);
      if (values.length !== size) {
        throw new ProverError('invalid_input', `signal "${name}" needs ${size} value(s), got ${values.length}`);
      }
      for (let i = 0; i < values.length; i++) {
        let v: bigint;
        try {
          v = BigInt(values[i] as string | number | bigint);
        } catch {
          throw new ProverError('invalid_input', `signal "${name}"[${i}]: not an integer: ${String(values[i])}`);
        }
        v %= prime;
        if (v < 0n) v += prime;
        for (let j = 0; j < n32; j++) {
          ex.writeSharedRWMemory(j, Number(v & 0xffffffffn));
          v >>= 32n;
        }
        ex.setInputSignal(msb, lsb, i);
        count++;
      }
    }
    const total = ex.getInputSize();
    if (count < total) throw new ProverError('invalid_input', `only ${count} of ${total} input values were given`);
  }
}
