/**
 * Refract's own Groth16 prover (native/kernels/src/groth16.c through the addon): the proof snarkjs'
 * `groth16.prove` makes, with every step in C — A·w, B·w from the zkey's coefficients, the coset
 * FFTs and H, the four MSMs over key tables kept resident in the addon, the randomisation with r, s
 * from the OS CSPRNG — and the same output (snarkjs' proof JSON, public signals from the witness).
 *
 * The zkey is parsed ONCE (`loadNativeKey`) into an addon-owned key behind an opaque handle; a proof
 * passes only the witness. The pool verifies every proof before returning it: with this backend by
 * `verifyNative` (the addon's pairing, native/kernels/src/pairing.c: 2.5 ms against snarkjs' 11 ms
 * for inclusion_26_1), against the vkey JSON, not the zkey, so a zkey/vkey mismatch still shows.
 * snarkjs stays for setup and as the test oracle; `proverBackend('snarkjs')` keeps its prover and
 * its verifier.
 */
import { envValue } from '../../config/config.ts';
import { existsSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { keyFiles, removeTableFiles, tableFile } from '../keys/layout.ts';
import { ProverError } from '../errors.ts';
import type { Groth16Proof, VerificationKey } from './snark.ts';
import { nativeAddon, type TableSource } from '../../native.ts';

/** Who computes a Groth16 proof in the pool threads: Refract's C prover or snarkjs' `groth16.prove`. */
export type ProverBackendKind = 'native' | 'snarkjs';

/** True when the addon is built with the native Groth16 prover. */
export function nativeProverAvailable(): boolean {
  return typeof nativeAddon?.groth16Load === 'function' && typeof nativeAddon.groth16Prove === 'function';
}

/**
 * The backend a thread would use: `requested` (else REFRACT_PROVER_BACKEND, else `native`),
 * downgraded to `snarkjs` when the addon is not built or predates the native prover.
 * @throws ProverError `invalid_input` when REFRACT_PROVER_BACKEND is set to anything else
 */
export function proverBackend(requested?: ProverBackendKind): ProverBackendKind {
  let want = requested;
  if (!want) {
    const env = envValue('REFRACT_PROVER_BACKEND');
    if (env === undefined || env === '') want = 'native';
    else if (env === 'native' || env === 'snarkjs') want = env;
    else throw new ProverError('invalid_input', `REFRACT_PROVER_BACKEND must be native or snarkjs, got "${env}"`);
  }
  return want === 'native' && nativeProverAvailable() ? 'native' : 'snarkjs';
}

/** A zkey loaded into the addon (resident until the object is garbage-collected). */
export interface NativeGroth16Key {
  /** Opaque addon handle. */
  readonly handle: unknown;
  /** Witness length (signals incl. the constant 1). */
  readonly nVars: number;
  /** Public signals (without the constant 1). */
  readonly nPublic: number;
  /** Evaluation domain (power of two ≥ constraints + public inputs + 1). */
  readonly domainSize: number;
  /** Bytes held by the addon for this key (its fixed-base tables included). */
  readonly bytes: number;
  /** Bytes of its fixed-base MSM tables (0: plain MSMs). */
  readonly tableBytes: number;
  /** Where the tables came from: none, built here (and written to the table file), read from the table file, or shared with another thread's key. */
  readonly tableSource: TableSource;
  /** What went wrong with the table file (unreadable, for another key, damaged, not writable), null when nothing did; the tables are then built. */
  readonly tableNote: string | null;
}

/**
 * Default budget of one key's fixed-base MSM tables, MiB (`proverTableMb`): the v1 circuits of up to
 * two accounts or addresses and the one-account / one-address v2 circuits fit (inclusion_26_1 38,
 * non-inclusion_26_1 42, v2_inclusion_32_1 46, v2_non-inclusion_40_1 65, inclusion_26_2 73,
 * combined_26_26_1_1 77, non-inclusion_26_2 81 MiB); inclusion_26_3 (119) and larger do not. The
 * tables make a proof ×1.2–1.34 cheaper (bench:prove stages; measured for each of these circuits).
 */
export const DEFAULT_TABLE_MB = 96;

/**
 * The fixed-base table budget per key, MiB: `requested`, else REFRACT_PROVER_TABLE_MB, else DEFAULT_TABLE_MB.
 * @throws ProverError `invalid_input` when the value is not an integer in [0, 65536]
 */
export function proverTableMb(requested?: number): number {
  const env = envValue('REFRACT_PROVER_TABLE_MB');
  const v = requested ?? (env === undefined || env === '' ? DEFAULT_TABLE_MB : Number(env));
  if (!Number.isInteger(v) || v < 0 || v > 65536) {
    const src = requested !== undefined ? 'proverTableMb' : 'REFRACT_PROVER_TABLE_MB';
    throw new ProverError('invalid_input', `${src} must be an integer number of MiB in [0, 65536], got ${JSON.stringify(requested ?? env)}`);
  }
  return v;
}

/**
 * Where the prover threads keep the fixed-base tables' files (`<dir>/<circuit>.tables`): `requested`
 * (a directory, or `off`), else REFRACT_PROVER_TABLE_FILES, else `keysDir`. `off` (or false): tables
 * are built at every load and never written, for a read-only keys directory without a writable one
 * beside it. Another directory: for keys mounted read-only, or on a disk without room for the
 * tables (38–81 MB per circuit within the default budget).
 * @returns the directory, resolved, or false for `off`
 * @throws ProverError `invalid_input` for an empty value
 */
export function proverTableFiles(keysDir: string, requested?: string | false): string | false {
  if (requested === false) return false;
  const v = (requested ?? envValue('REFRACT_PROVER_TABLE_FILES'))?.trim();
  if (v === undefined) return path.resolve(keysDir);
  if (v === '') {
    const src = requested !== undefined ? 'proverTableFiles' : 'REFRACT_PROVER_TABLE_FILES';
    throw new ProverError('invalid_input', `${src} must be a directory or "off", got an empty value`);
  }
  return v === 'off' ? false : path.resolve(v);
}

/** Where a loaded key's tables came from, their MiB (one decimal), the load's ms (tables and file included) and the table file's note. */
export interface TableReport {
  source: TableSource;
  mib: number;
  ms: number;
  note: string | null;
}

/** The `TableReport` of `key`, loaded since `t0` (performance.now() ms). */
export function tableReport(key: NativeGroth16Key, t0: number): TableReport {
  return { source: key.tableSource, mib: Math.round((key.tableBytes / 2 ** 20) * 10) / 10, ms: Math.round(performance.now() - t0), note: key.tableNote };
}

/** What `prepareTableFiles` did for one circuit (`built` and written, or `none`: over the budget; `note`: why the file was not written), and the file. */
export interface TableFilePrep extends TableReport {
  /** The table file (written when `source` is `built` and `note` is null). */
  file: string;
}

/**
 * Writes the table files of circuits `ids` whose keys are in `keysDir` and whose file is missing
 * (or listed in `opts.replace`: keys just made, whose files, and a killed writer's temporary ones, are
 * deleted first), as a prover thread's first load would (`loadNativeKey` with the file: built on every core, written
 * through a temporary file), so that the next start reads them instead of building (`refract setup`
 * runs it for the circuits it was given). A key whose tables exceed the budget gets none (`none`,
 * ≈ 0.1 s to find out for inclusion_26_8); a file that exists is left to the loads, which check it.
 * One key at a time: at most one circuit's tables (≤ the budget) are held at once, besides garbage
 * not yet collected.
 * @param opts.tableMb budget per key, MiB (default `proverTableMb()`); opts.tableFiles as in `proverTableFiles`
 * @returns per circuit handled; empty when the native prover is not built, the budget is 0 or table files are off.
 *   A directory that cannot be made or written is a `note` per circuit (`none` when nothing was built), not an error.
 * @throws ProverError `keys_missing` when a zkey cannot be read or parsed, `invalid_input` for a bad budget or directory value
 */
export async function prepareTableFiles(keysDir: string, ids: readonly string[], opts: { tableMb?: number; tableFiles?: string | false; replace?: readonly string[] } = {}): Promise<Record<string, TableFilePrep>> {
  const tableMb = proverTableMb(opts.tableMb);
  const dir = proverTableFiles(keysDir, opts.tableFiles);
  const out: Record<string, TableFilePrep> = {};
  if (!nativeProverAvailable() || tableMb === 0 || dir === false) return out;
  let dirError: string | undefined;
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    dirError = `cannot create ${dir}: ${(e as Error).message}`;
  }
  for (const id of ids) {
    const file = tableFile(dir, id);
    const zkeyFile = keyFiles(keysDir, id).zkey;
    if (!existsSync(zkeyFile)) continue;
    if (dirError) {
      out[id] = { source: 'none', mib: 0, ms: 0, note: dirError, file };
      continue;
    }
    if (opts.replace?.includes(id)) await removeTableFiles(dir, id);
    if (existsSync(file)) continue;
    const t0 = performance.now();
    let zkey: Buffer;
    try {
      zkey = await readFile(zkeyFile);
    } catch (e) {
      throw new ProverError('keys_missing', `circuit ${id}: cannot read ${zkeyFile} (${(e as Error).message})`);
    }
    const key = loadNativeKey(new Uint8Array(zkey.buffer, zkey.byteOffset, zkey.byteLength), `circuit ${id}: ${zkeyFile}`, { tableMb, tableFile: file });
    out[id] = { ...tableReport(key, t0), file };
  }
  return out;
}

/** Names of the stages `proveNative` times, in the addon's order. */
export const NATIVE_STAGES = ['witness', 'abc', 'fft', 'msmA', 'msmB1', 'msmB2', 'msmCH', 'finish'] as const;
export type NativeStage = (typeof NATIVE_STAGES)[number];
/**
 * Per-stage times of one native proof, ms: `cpu` = the calling thread's CPU (CLOCK_THREAD_CPUTIME_ID;
 * MSM helper threads not included, so exact only with threads = 1), `wall` = elapsed.
 * witness = .wtns parse and checks; abc = A·w, B·w from the coefficients and C = A·B; fft = three
 * iFFT → coset shift → FFT and H = A·B − C; msmA, msmB1 (G1), msmB2 (G2), msmCH (C over the private
 * signals and H in one G1 MSM); finish = affine conversions, the 4-point MSM for π_C and the output.
 */
export type NativeStageTimes = Record<'cpu' | 'wall', Record<NativeStage, number>>;

function addonError(e: unknown, what: string): ProverError {
  const err = e as { code?: string; message?: string };
  const message = `${what}: ${err?.message ?? String(e)}`;
  switch (err?.code) {
    case 'ERR_GROTH16_KEY':
      return new ProverError('keys_missing', `${message}; re-run \`refract setup\``, { native: err.code });
    case 'ERR_GROTH16_WITNESS':
      return new ProverError('witness_failed', message, { native: err.code });
    default:
      return new ProverError('internal', message, { native: err?.code });
  }
}

/**
 * Parses zkey bytes once into the addon (the bytes are not kept: release them afterwards), then
 * gives its four MSMs fixed-base tables when together they fit `opts.tableMb` (all or none: a
 * process may hold many keys, only the small, latency-bound ones get tables). Each MSM gets about
 * ×1.3 faster for ≈20× its points' memory. The tables exist once per process: the prover threads'
 * keys with the same points share them, the first load builds them on every core while the others
 * wait (inclusion_26_1: 38 MiB, ≈ 1.2 s on 2 cores; a later load ≈ 10 ms). With `opts.tableFile`
 * the first load of a process reads them from that file instead when it holds them for this key
 * (checked byte for byte against the key's points, and by a checksum), else builds them and writes
 * the file for the next start; a bad or unwritable file only costs the build (`tableNote` says why).
 * @param zkey snarkjs Groth16 zkey file bytes (BN254)
 * @param label names the key in errors (circuit id or file)
 * @param opts.tableMb table budget for this key, MiB (default `proverTableMb()`: REFRACT_PROVER_TABLE_MB, else DEFAULT_TABLE_MB; 0 = no tables)
 * @param opts.tableFile the key's table file (`keyFiles(dir, id).tables`); absent = build, no file
 * @throws ProverError `keys_missing` (malformed / not Groth16 / not BN254 / a point off the curve:
 *   the message names the section), `internal` when the addon lacks the prover or memory runs out
 */
export function loadNativeKey(zkey: Uint8Array, label = 'zkey', opts: { tableMb?: number; tableFile?: string } = {}): NativeGroth16Key {
  if (!nativeProverAvailable()) throw new ProverError('internal', `${label}: the native prover is not built (addon missing or older)`);
  let handle: unknown;
  try {
    handle = nativeAddon!.groth16Load!(zkey);
  } catch (e) {
    throw addonError(e, label);
  }
  const tableMb = proverTableMb(opts.tableMb);
  if (tableMb > 0) nativeAddon!.groth16Tables?.(handle, tableMb * 1024 * 1024, opts.tableFile);
  const info = nativeAddon!.groth16Info!(handle);
  return { handle, ...info, tableBytes: info.tableBytes ?? 0, tableSource: info.tableSource ?? 'none', tableNote: info.tableNote ?? null };
}

function leDecimal(b: Uint8Array, o: number): string {
  let v = 0n;
  for (let k = 31; k >= 0; k--) v = (v << 8n) | BigInt(b[o + k]!);
  return v.toString();
}

/**
 * One Groth16 proof with the native prover.
 * @param key from `loadNativeKey`
 * @param wtns the witness in snarkjs' `.wtns` format (`WitnessCalculator.calculateWtns`)
 * @param opts.threads MSM threads (0 / absent: the CPUs shared by the MSMs and open jobs of the process)
 * @param opts.rs 64 bytes, r then s as little-endian integers < r (tests: compare with snarkjs);
 *   absent: fresh uniform values from the OS CSPRNG (the only choice in production)
 * @param opts.stages also return the per-stage times
 * @returns the proof in snarkjs' JSON form (affine, z = 1) and the public signals (witness 1..nPublic)
 * @throws ProverError `witness_failed` (malformed witness: format, field, length, a value ≥ r,
 *   w[0] ≠ 1), `internal` (r or s ≥ r, out of memory)
 */
export function proveNative(
  key: NativeGroth16Key,
  wtns: Uint8Array,
  opts: { threads?: number; rs?: Uint8Array; stages?: boolean } = {},
): { proof: Groth16Proof; publicSignals: string[]; stages?: NativeStageTimes } {
  const out = new Uint8Array(256);
  const times = opts.stages ? new Float64Array(2 * NATIVE_STAGES.length) : undefined;
  let inf: number;
  // Open job for the MSMs' automatic thread count: while two proofs run, each MSM takes one core.
  const jobs = nativeAddon!.msmJobs;
  jobs?.(1);
  try {
    inf = nativeAddon!.groth16Prove!(key.handle, wtns, out, opts.threads ?? 0, opts.rs, times);
  } catch (e) {
    throw addonError(e, 'native prover');
  } finally {
    jobs?.(-1);
  }
  const c = (i: number) => leDecimal(out, 32 * i);
  const z = (bit: number) => ((inf & bit) !== 0 ? '0' : '1');
  const proof: Groth16Proof = {
    pi_a: [c(0), c(1), z(1)],
    pi_b: [
      [c(2), c(3)],
      [c(4), c(5)],
      [z(2), '0'],
    ],
    pi_c: [c(6), c(7), z(4)],
    protocol: 'groth16',
    curve: 'bn128',
  };
  // public signals: witness entries 1..nPublic (entry 0 is the constant 1); the addon checked the layout
  const base = wtns.length - key.nVars * 32;
  const publicSignals: string[] = [];
  for (let i = 1; i <= key.nPublic; i++) publicSignals.push(leDecimal(wtns, base + 32 * i));
  let stages: NativeStageTimes | undefined;
  if (times) {
    const pick = (off: number) => Object.fromEntries(NATIVE_STAGES.map((s, i) => [s, times[off + i]!])) as Record<NativeStage, number>;
    stages = { cpu: pick(0), wall: pick(NATIVE_STAGES.length) };
  }
  return { proof, publicSignals, stages };
}

/** The process's fixed-base table sets and their bytes (all prover threads together); null without the addon's tables. */
export function nativeTableSets(): { sets: number; bytes: number } | null {
  return nativeAddon?.groth16TableSets?.() ?? null;
}

/** True when the addon has the native Groth16 verifier (`groth16Verify`). */
export function nativeVerifierAvailable(): boolean {
  return typeof nativeAddon?.groth16Verify === 'function';
}

const FIELD_BYTES = 32;

/** A decimal (or 0x-hex) field coordinate → 32 plain little-endian bytes at `out[o..o+32)`; throws naming `what`. */
function putLe(out: Uint8Array, o: number, value: unknown, what: string): void {
  let v: bigint;
  try {
    if (typeof value !== 'string' && typeof value !== 'bigint' && typeof value !== 'number') throw new Error('not a number');
    v = BigInt(value);
  } catch {
    throw new Error(`${what}: ${JSON.stringify(value)} is not an integer`);
  }
  if (v < 0n || v >= 1n << 256n) throw new Error(`${what}: ${v} does not fit 32 bytes`);
  for (let k = 0; k < FIELD_BYTES; k++) {
    out[o + k] = Number(v & 0xffn);
    v >>= 8n;
  }
}

/** Projective z of a snarkjs point: true = finite (z = 1), false = infinity (z = 0); else throws. */
const ONE = new Set<unknown>(['1', 1, 1n]);
const ZERO = new Set<unknown>(['0', 0, 0n]);
function finite(z: unknown, what: string): boolean {
  if (ONE.has(z)) return true;
  if (ZERO.has(z)) return false;
  throw new Error(`${what}: z = ${JSON.stringify(z)}, expected an affine point (z 1) or infinity (z 0)`);
}

function putG1(out: Uint8Array, o: number, p: readonly unknown[] | undefined, what: string): void {
  if (!Array.isArray(p) || p.length !== 3) throw new Error(`${what}: expected [x, y, z]`);
  if (!finite(p[2], what)) return; // all-zero = infinity
  putLe(out, o, p[0], `${what}.x`);
  putLe(out, o + 32, p[1], `${what}.y`);
}

function putG2(out: Uint8Array, o: number, p: readonly unknown[] | undefined, what: string): void {
  if (!Array.isArray(p) || p.length !== 3 || !p.every((c) => Array.isArray(c) && c.length === 2)) {
    throw new Error(`${what}: expected [[x.c0, x.c1], [y.c0, y.c1], [z.c0, z.c1]]`);
  }
  const [x, y, z] = p as unknown[][];
  let isFinite: boolean;
  try {
    if (!ZERO.has(z![1])) throw new Error();
    isFinite = finite(z![0], what);
  } catch {
    throw new Error(`${what}: z = ${JSON.stringify(z)}, expected ["1", "0"] (affine) or ["0", "0"] (infinity)`);
  }
  if (!isFinite) return;
  putLe(out, o, x![0], `${what}.x.c0`);
  putLe(out, o + 32, x![1], `${what}.x.c1`);
  putLe(out, o + 64, y![0], `${what}.y.c0`);
  putLe(out, o + 96, y![1], `${what}.y.c1`);
}

/**
 * A snarkjs verification key in the addon's layout: α1 (64 B) ‖ β2 ‖ γ2 ‖ δ2 (128 B each) ‖
 * IC_0..IC_nPublic (64 B each), plain little-endian coordinates, infinity all zero. Built once per
 * loaded key.
 * @throws ProverError `keys_missing` naming the field (not a number, not affine, IC length ≠ nPublic + 1)
 */
export function encodeNativeVkey(vkey: VerificationKey, label = 'vkey'): Uint8Array {
  try {
    const n = vkey.nPublic;
    if (!Number.isInteger(n) || n < 0 || !Array.isArray(vkey.IC) || vkey.IC.length !== n + 1) {
      throw new Error(`IC has ${Array.isArray(vkey.IC) ? vkey.IC.length : 'no'} points for nPublic ${n}; expected nPublic + 1`);
    }
    const out = new Uint8Array(64 + 3 * 128 + (n + 1) * 64);
    putG1(out, 0, vkey.vk_alpha_1, 'vk_alpha_1');
    putG2(out, 64, vkey.vk_beta_2, 'vk_beta_2');
    putG2(out, 192, vkey.vk_gamma_2, 'vk_gamma_2');
    putG2(out, 320, vkey.vk_delta_2, 'vk_delta_2');
    vkey.IC.forEach((p, i) => putG1(out, 448 + 64 * i, p, `IC[${i}]`));
    return out;
  } catch (e) {
    throw new ProverError('keys_missing', `${label}: ${(e as Error).message}; re-run \`refract setup\``);
  }
}

/**
 * Verifies a Groth16 proof with the addon's pairing: e(−π_A, π_B)·e(α1, β2)·e(vk_x, γ2)·e(π_C, δ2) = 1,
 * vk_x = IC_0 + Σ public_i·IC_i (one multi-Miller loop, one final exponentiation; 2.5 ms for inclusion_26_1).
 * Stricter than snarkjs' `groth16.verify`: π_B must also lie in the order-r subgroup.
 * @param vk from `encodeNativeVkey`
 * @param proof snarkjs' proof JSON (affine: z = 1, or 0 for infinity)
 * @param publicSignals decimal strings, each < r, as many as the key's nPublic
 * @returns true when the proof verifies, false when the pairing check fails
 * @throws ProverError `verify_failed` naming the field for a malformed proof or public signal
 *   (not a number, not affine, a coordinate ≥ q, off the curve, π_B outside G2, a signal ≥ r, wrong count),
 *   `keys_missing` when the addon rejects the key's points, `internal` when the addon lacks the verifier
 */
export function verifyNative(vk: Uint8Array, proof: Groth16Proof, publicSignals: readonly string[]): boolean {
  if (!nativeVerifierAvailable()) throw new ProverError('internal', 'the native verifier is not built (addon missing or older)');
  const nPublic = (vk.length - 64 - 3 * 128) / 64 - 1;
  const proofBytes = new Uint8Array(256);
  const publics = new Uint8Array(FIELD_BYTES * publicSignals.length);
  try {
    if (publicSignals.length !== nPublic) throw new Error(`${publicSignals.length} public signals, the key has ${nPublic}`);
    putG1(proofBytes, 0, proof?.pi_a, 'pi_a');
    putG2(proofBytes, 64, proof?.pi_b, 'pi_b');
    putG1(proofBytes, 192, proof?.pi_c, 'pi_c');
    publicSignals.forEach((v, i) => putLe(publics, FIELD_BYTES * i, v, `public signal ${i}`));
  } catch (e) {
    throw new ProverError('verify_failed', `proof rejected: ${(e as Error).message}`);
  }
  try {
    return nativeAddon!.groth16Verify!(vk, proofBytes, publics);
  } catch (e) {
    const message = (e as Error)?.message ?? String(e);
    if (message.startsWith('verification key')) throw new ProverError('keys_missing', `${message}; re-run \`refract setup\``);
    throw new ProverError('verify_failed', `proof rejected: ${message}`);
  }
}
