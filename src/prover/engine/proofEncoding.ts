/**
 * Proof and verification-key encodings (spec prover.md §2.3, §2.4).
 *
 * - snarkjs proof (decimal strings, `pi_b[k] = [c0, c1]`) ↔ gnark JSON `{ar, bs, krs}` as the
 *   reference prover returns it (`"0x%064x"`, G2 imaginary part first: `bs = [[x.c1, x.c0], [y.c1, y.c0]]`).
 * - gnark JSON → `compressedProof {a: 32 B, b: 64 B, c: 32 B}` as Photon returns it
 *   (`P:.../prover/helpers.rs::proof_from_json_struct`, `gnark.rs::{negate_g1, compress_proof}`):
 *   A is negated (the Solana verifier wants −A), points are compressed the arkworks way with the
 *   endianness flipped to big-endian, the sign flag (0x80) is decided against the BASE field p.
 * - `decompressProof` inverts the compression (sqrt in Fp / Fp2), for checks and tests.
 * - `vkeyToSolana`: snarkjs verification key → the big-endian byte layout of groth16-solana's
 *   `Groth16Verifyingkey` (G1 = x‖y, G2 = x.c1‖x.c0‖y.c1‖y.c0, 32 B each, BE).
 * Pure BigInt arithmetic; no snarkjs.
 */
import type { Groth16Proof, VerificationKey } from './snark.ts';
import { ProverError } from '../errors.ts';

/** BN254 base field modulus p (coordinates of curve points). */
export const BN254_P = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;
/** BN254 scalar field modulus r (public signals, circuit values). */
export const BN254_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
/** (p − 1) / 2: a coordinate above it is "negative" in arkworks' order. */
const HALF_P = (BN254_P - 1n) / 2n;

/** The reference prover's proof JSON (gnark `Proof.MarshalJSON`). Every element is `0x` + 64 lowercase hex. */
export interface GnarkProofJson {
  ar: [string, string];
  bs: [[string, string], [string, string]];
  krs: [string, string];
}

/** A compressed Groth16 proof as the Light system program takes it (`CompressedProof`). */
export interface CompressedProof {
  /** −A compressed: x BE with flag bit 0x80 (32 bytes). */
  a: Uint8Array;
  /** B compressed: x.c1 BE ‖ x.c0 BE with flag bit 0x80 on byte 0 (64 bytes). */
  b: Uint8Array;
  /** C compressed: x BE with flag bit 0x80 (32 bytes). */
  c: Uint8Array;
}

// ---------------------------------------------------------------------------------------------
// Scalars and bytes

/** `0x` + 64 lowercase hex digits of a non-negative integer < 2^256 (gnark `"0x%064x"`). */
export function toHex32(v: bigint | string): string {
  const n = typeof v === 'bigint' ? v : BigInt(v);
  if (n < 0n || n >> 256n !== 0n) throw new ProverError('invalid_input', `value out of 32-byte range: ${n}`);
  return '0x' + n.toString(16).padStart(64, '0');
}

/** Parses a hex string (optional `0x`, any length ≤ 64 digits, as Go's `common.FromHex`). */
export function parseHex(s: string): bigint {
  const h = s.startsWith('0x') || s.startsWith('0X') ? s.slice(2) : s;
  if (h.length === 0 || h.length > 64 || !/^[0-9a-fA-F]+$/.test(h)) {
    throw new ProverError('malformed_request', `not a hex number of at most 32 bytes: "${s}"`);
  }
  return BigInt('0x' + h);
}

/** 32-byte big-endian encoding of a non-negative integer < 2^256. */
export function bigintToBe32(v: bigint): Uint8Array {
  if (v < 0n || v >> 256n !== 0n) throw new ProverError('invalid_input', `value out of 32-byte range: ${v}`);
  const out = new Uint8Array(32);
  for (let i = 31; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** Big-endian bytes → integer. */
export function beToBigint(b: Uint8Array): bigint {
  let v = 0n;
  for (const x of b) v = (v << 8n) | BigInt(x);
  return v;
}

// ---------------------------------------------------------------------------------------------
// snarkjs ↔ gnark JSON

/**
 * snarkjs proof → the reference prover's JSON (spec §2.4 mapping).
 * `ar = [A.x, A.y]`, `bs = [[B.x.c1, B.x.c0], [B.y.c1, B.y.c0]]`, `krs = [C.x, C.y]`.
 */
export function snarkjsToGnark(proof: Groth16Proof): GnarkProofJson {
  const h = toHex32;
  return {
    ar: [h(proof.pi_a[0]), h(proof.pi_a[1])],
    bs: [
      [h(proof.pi_b[0][1]), h(proof.pi_b[0][0])],
      [h(proof.pi_b[1][1]), h(proof.pi_b[1][0])],
    ],
    krs: [h(proof.pi_c[0]), h(proof.pi_c[1])],
  };
}

/** The reference prover's JSON → snarkjs proof (inverse of `snarkjsToGnark`). */
export function gnarkToSnarkjs(json: GnarkProofJson): Groth16Proof {
  const d = (s: string) => parseHex(s).toString();
  return {
    pi_a: [d(json.ar[0]), d(json.ar[1]), '1'],
    pi_b: [
      [d(json.bs[0][1]), d(json.bs[0][0])],
      [d(json.bs[1][1]), d(json.bs[1][0])],
      ['1', '0'],
    ],
    pi_c: [d(json.krs[0]), d(json.krs[1]), '1'],
    protocol: 'groth16',
    curve: 'bn128',
  };
}

// ---------------------------------------------------------------------------------------------
// The C prover's 256-byte proof (native/kernels/src/lightkey.h)

/** The 32 bytes at `off` of `b`, little-endian (the C prover's field element layout, lightkey.h) → bigint. */
export function le32ToBigint(b: Uint8Array, off: number): bigint {
  let v = 0n;
  for (let i = 31; i >= 0; i--) v = (v << 8n) | BigInt(b[off + i]!);
  return v;
}

/**
 * Writes `v` as 32 bytes little-endian at `off` of `b` (inverse of `le32ToBigint`).
 * @throws RangeError when `v` is negative or not below 2^256
 */
export function writeLe32(b: Uint8Array, off: number, v: bigint): void {
  if (v < 0n || v >> 256n) throw new RangeError(`${v} is not a 256-bit value`);
  for (let j = 0; j < 32; j++, v >>= 8n) b[off + j] = Number(v & 0xffn);
}

/**
 * 256 bytes Ar (x, y) ‖ Bs (x.c0, x.c1, y.c0, y.c1) ‖ Krs (x, y), each coordinate 32 bytes
 * little-endian (lightkey.h `lk_prove` output) → Light's prover JSON (light-keys §6): `ar = [x, y]`,
 * `bs = [[x.A1, x.A0], [y.A1, y.A0]]`, `krs = [x, y]`, `0x` + 64 hex.
 * @throws RangeError when `out` is shorter than 256 bytes
 */
export function lightProofJson(out: Uint8Array): GnarkProofJson {
  if (out.length < 256) throw new RangeError(`a proof is 256 bytes, got ${out.length}`);
  const c = (i: number) => toHex32(le32ToBigint(out, i * 32));
  return { ar: [c(0), c(1)], bs: [[c(3), c(2)], [c(5), c(4)]], krs: [c(6), c(7)] };
}

/**
 * snarkjs proof → the C prover's 256-byte form (inverse of `lightProofJson` after `gnarkToSnarkjs`),
 * for `lightKeyVerify` of a proof made elsewhere (a prover node).
 * @throws RangeError when a coordinate is not below 2^256
 */
export function lightProofBytes(proof: Groth16Proof): Uint8Array {
  const out = new Uint8Array(256);
  const coords = [proof.pi_a[0], proof.pi_a[1], proof.pi_b[0][0], proof.pi_b[0][1], proof.pi_b[1][0], proof.pi_b[1][1], proof.pi_c[0], proof.pi_c[1]];
  coords.forEach((c, i) => writeLe32(out, i * 32, BigInt(c)));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Compression

/** Negates a G1 point (x, y) → (x, p − y); the point at infinity (0, 0) stays (0, 0). */
export function negateG1(x: bigint, y: bigint): [bigint, bigint] {
  return [x, y === 0n ? 0n : BN254_P - y];
}

function flagged(x: bigint, negative: boolean): Uint8Array {
  const b = bigintToBe32(x);
  if (negative) b[0]! |= 0x80;
  return b;
}

/** arkworks "y is the larger root" test for Fp2, comparing c1 first (spec §2.4). */
function fp2Negative(c0: bigint, c1: bigint): boolean {
  return c1 !== 0n ? c1 > HALF_P : c0 > HALF_P;
}

/**
 * gnark JSON → `compressedProof` (spec §2.4): a = compress(−A), b = compress(B), c = compress(C).
 * Flags use the base field p; an all-zero (infinity) input compresses to zeros.
 */
export function compressGnarkProof(json: GnarkProofJson): CompressedProof {
  const [ax, ay] = negateG1(parseHex(json.ar[0]), parseHex(json.ar[1]));
  const bx1 = parseHex(json.bs[0][0]);
  const bx0 = parseHex(json.bs[0][1]);
  const by1 = parseHex(json.bs[1][0]);
  const by0 = parseHex(json.bs[1][1]);
  const cx = parseHex(json.krs[0]);
  const cy = parseHex(json.krs[1]);
  const b = new Uint8Array(64);
  b.set(bigintToBe32(bx1), 0);
  b.set(bigintToBe32(bx0), 32);
  if (fp2Negative(by0, by1)) b[0]! |= 0x80;
  return { a: flagged(ax, ay > HALF_P), b, c: flagged(cx, cy > HALF_P) };
}

/** snarkjs proof → `compressedProof` (via the gnark JSON). */
export function compressProof(proof: Groth16Proof): CompressedProof {
  return compressGnarkProof(snarkjsToGnark(proof));
}

/** `compressedProof` as Photon serialises it: JSON arrays of byte values. */
export function compressedProofToJson(p: CompressedProof): { a: number[]; b: number[]; c: number[] } {
  return { a: Array.from(p.a), b: Array.from(p.b), c: Array.from(p.c) };
}

// ---------------------------------------------------------------------------------------------
// Decompression (Fp / Fp2 square roots)

const mod = (a: bigint, m = BN254_P) => ((a % m) + m) % m;

function powmod(b: bigint, e: bigint, m = BN254_P): bigint {
  let r = 1n;
  b = mod(b, m);
  while (e > 0n) {
    if (e & 1n) r = (r * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return r;
}

const inv = (a: bigint) => powmod(a, BN254_P - 2n);

/** Square root in Fp (p ≡ 3 mod 4), or undefined when a is not a square. */
function sqrtFp(a: bigint): bigint | undefined {
  a = mod(a);
  const s = powmod(a, (BN254_P + 1n) / 4n);
  return (s * s) % BN254_P === a ? s : undefined;
}

/** Square root in Fp2 = Fp[u]/(u² + 1) by the norm ("complex") method, or undefined. */
function sqrtFp2(a0: bigint, a1: bigint): [bigint, bigint] | undefined {
  a0 = mod(a0);
  a1 = mod(a1);
  if (a1 === 0n) {
    const r = sqrtFp(a0);
    if (r !== undefined) return [r, 0n];
    const i = sqrtFp(mod(-a0));
    return i === undefined ? undefined : [0n, i];
  }
  const s = sqrtFp(a0 * a0 + a1 * a1);
  if (s === undefined) return undefined;
  const half = inv(2n);
  let x0 = sqrtFp(mod((a0 + s) * half));
  if (x0 === undefined) x0 = sqrtFp(mod((a0 - s) * half));
  if (x0 === undefined || x0 === 0n) return undefined;
  const x1 = mod(a1 * inv(2n * x0));
  return [x0, x1];
}

/** b' of the BN254 G2 twist y² = x³ + 3/(9+u). */
const TWIST_B: [bigint, bigint] = [
  19485874751759354771024239261021720505790618469301721065564631296452457478373n,
  266929791119991161246907387137283842545076965332900288569378510910307636690n,
];

function decompressG1(bytes: Uint8Array): [bigint, bigint] {
  const neg = (bytes[0]! & 0x80) !== 0;
  const inf = (bytes[0]! & 0x40) !== 0;
  const xb = bytes.slice();
  xb[0]! &= 0x3f;
  const x = beToBigint(xb);
  if (inf || (x === 0n && !neg)) return [0n, 0n];
  let y = sqrtFp(x * x * x + 3n);
  if (y === undefined) throw new ProverError('invalid_input', 'compressed G1 point is not on the curve');
  if (y > HALF_P !== neg) y = BN254_P - y;
  return [x, y];
}

function decompressG2(bytes: Uint8Array): [[bigint, bigint], [bigint, bigint]] {
  const neg = (bytes[0]! & 0x80) !== 0;
  const xb = bytes.slice();
  xb[0]! &= 0x3f;
  const x1 = beToBigint(xb.subarray(0, 32));
  const x0 = beToBigint(xb.subarray(32, 64));
  if ((bytes[0]! & 0x40) !== 0 || (x0 === 0n && x1 === 0n && !neg)) return [[0n, 0n], [0n, 0n]];
  // x³ in Fp2
  const sq0 = mod(x0 * x0 - x1 * x1);
  const sq1 = mod(2n * x0 * x1);
  const cu0 = mod(sq0 * x0 - sq1 * x1);
  const cu1 = mod(sq0 * x1 + sq1 * x0);
  const r = sqrtFp2(cu0 + TWIST_B[0], cu1 + TWIST_B[1]);
  if (!r) throw new ProverError('invalid_input', 'compressed G2 point is not on the curve');
  let [y0, y1] = r;
  if (fp2Negative(y0, y1) !== neg) {
    y0 = mod(-y0);
    y1 = mod(-y1);
  }
  return [
    [x0, x1],
    [y0, y1],
  ];
}

/**
 * Inverse of `compressProof`: affine points with Fp2 coordinates as [c0, c1].
 * `negA` is −A as the verifier receives it (negate it again to get the prover's A).
 * @throws ProverError `invalid_input` when a point is not on the curve
 */
export function decompressProof(p: CompressedProof): {
  negA: [bigint, bigint];
  b: [[bigint, bigint], [bigint, bigint]];
  c: [bigint, bigint];
} {
  if (p.a.length !== 32 || p.b.length !== 64 || p.c.length !== 32) {
    throw new ProverError('invalid_input', 'compressed proof must be a: 32, b: 64, c: 32 bytes');
  }
  return { negA: decompressG1(p.a), b: decompressG2(p.b), c: decompressG1(p.c) };
}

// ---------------------------------------------------------------------------------------------
// Verification key for groth16-solana

/** groth16-solana `Groth16Verifyingkey` bytes (all big-endian). */
export interface SolanaVerifyingKey {
  nPublic: number;
  /** α ∈ G1: x ‖ y, 64 bytes. */
  alpha_g1: Uint8Array;
  /** β ∈ G2: x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0, 128 bytes. (groth16-solana spells the γ field `vk_gamme_g2`.) */
  beta_g2: Uint8Array;
  gamma_g2: Uint8Array;
  delta_g2: Uint8Array;
  /** IC[0..nPublic], 64 bytes each. */
  ic: Uint8Array[];
}

function g1Bytes(p: readonly string[]): Uint8Array {
  const out = new Uint8Array(64);
  out.set(bigintToBe32(BigInt(p[0]!)), 0);
  out.set(bigintToBe32(BigInt(p[1]!)), 32);
  return out;
}

function g2Bytes(p: readonly (readonly string[])[]): Uint8Array {
  const out = new Uint8Array(128);
  out.set(bigintToBe32(BigInt(p[0]![1]!)), 0);
  out.set(bigintToBe32(BigInt(p[0]![0]!)), 32);
  out.set(bigintToBe32(BigInt(p[1]![1]!)), 64);
  out.set(bigintToBe32(BigInt(p[1]![0]!)), 96);
  return out;
}

/**
 * snarkjs verification key → groth16-solana layout (same conversion as groth16-solana's
 * `parse_vk_to_rust.js`: G2 with the imaginary part first, nothing negated; the proof's A is).
 */
export function vkeyToSolana(vk: VerificationKey): SolanaVerifyingKey {
  return {
    nPublic: vk.nPublic,
    alpha_g1: g1Bytes(vk.vk_alpha_1),
    beta_g2: g2Bytes(vk.vk_beta_2),
    gamma_g2: g2Bytes(vk.vk_gamma_2),
    delta_g2: g2Bytes(vk.vk_delta_2),
    ic: vk.IC.map(g1Bytes),
  };
}

const hex = (b: Uint8Array) => '0x' + Buffer.from(b).toString('hex');

/**
 * The `<id>.vkey.solana.json` document: every field a `0x` hex string of the bytes above, plus
 * `format` naming the layout. Byte arrays for a Rust constant: `Buffer.from(s.slice(2), 'hex')`.
 */
export function solanaVkeyToJson(vk: SolanaVerifyingKey): Record<string, unknown> {
  return {
    format: 'groth16-solana Groth16Verifyingkey, big-endian; G1 = x||y, G2 = x.c1||x.c0||y.c1||y.c0',
    nPublic: vk.nPublic,
    alpha_g1: hex(vk.alpha_g1),
    beta_g2: hex(vk.beta_g2),
    gamma_g2: hex(vk.gamma_g2),
    delta_g2: hex(vk.delta_g2),
    ic: vk.ic.map(hex),
  };
}

