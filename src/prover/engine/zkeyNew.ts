/**
 * Groth16 phase-2 initial key (`snarkjs zkey new`) with the native MSM: the same `.zkey` bytes as
 * snarkjs 0.7's `zKey.newZKey(r1cs, ptau)` (layout and circuit hash from snarkjs src/zkey_new.js),
 * about twenty times faster. snarkjs composes each signal's points (A, B1, B2, C, IC: sums of the
 * ptau's Lagrange points weighted by the r1cs coefficients) with one wasm multi-exponentiation per
 * signal through its thread pool; here each is one `msmG1` / `msmG2` call of the addon, and the
 * projective sums are made affine with one batched inversion per section (BigInt).
 *
 * The key it writes has δ = 1 (γ = 1), as snarkjs's; `createZKey` (snark.ts) then adds the random
 * contribution with snarkjs. Points are written as snarkjs writes them: affine, Montgomery,
 * little-endian ("LEM"), infinity as zeros; the circuit hash (BLAKE2b-512, section 10) covers their
 * uncompressed big-endian form ("U") in snarkjs's order.
 */
import { open, readFile, writeFile, rename } from 'node:fs/promises';
import { blake2b } from '@noble/hashes/blake2.js';
import type { NativeAddon } from '../../native.ts';
import { ProverError } from '../errors.ts';
import { ptauPowerFor } from '../keys/circuits.ts';
/** BN254 base field modulus q and scalar field modulus r. */
import { BN254_P as Q, BN254_R as R } from './proofEncoding.ts';

const TWO_256 = 1n << 256n;
/** Montgomery factor of q (2^256 mod q) and its inverse. */
const MONT_Q = TWO_256 % Q;
const MONT_Q_INV = modPow(MONT_Q, Q - 2n, Q);
/** 2^256 mod r, squared: snarkjs stores each coefficient c as c·R² mod r (section 4). */
const R2_R = ((TWO_256 % R) * (TWO_256 % R)) % R;
/** Two-adicity of r: snarkjs's H section needs the circuit's power below it. */
const FR_S = 28;

const SG1 = 64;
const SG2 = 128;

function modPow(b: bigint, e: bigint, m: bigint): bigint {
  let r = 1n;
  b %= m;
  while (e > 0n) {
    if (e & 1n) r = (r * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return r;
}

const le = (buf: Uint8Array, off: number): bigint => {
  let v = 0n;
  for (let i = off + 31; i >= off; i--) v = (v << 8n) | BigInt(buf[i]!);
  return v;
};
function putLE(buf: Uint8Array, off: number, v: bigint): void {
  for (let i = 0; i < 32; i++, v >>= 8n) buf[off + i] = Number(v & 0xffn);
}
function putBE(buf: Uint8Array, off: number, v: bigint): void {
  for (let i = 31; i >= 0; i--, v >>= 8n) buf[off + i] = Number(v & 0xffn);
}
const fromMont = (m: bigint): bigint => (m * MONT_Q_INV) % Q;
const toMont = (v: bigint): bigint => (v * MONT_Q) % Q;

/** Fq or Fq2 (u² = −1) element arithmetic over BigInt, enough for Jacobian → affine and point addition. */
interface Field<T> {
  mul(a: T, b: T): T;
  sub(a: T, b: T): T;
  add(a: T, b: T): T;
  inv(a: T): T;
  isZero(a: T): boolean;
  one: T;
  zero: T;
}
const FQ: Field<bigint> = {
  mul: (a, b) => (a * b) % Q,
  sub: (a, b) => (a - b + Q) % Q,
  add: (a, b) => (a + b) % Q,
  inv: (a) => modPow(a, Q - 2n, Q),
  isZero: (a) => a === 0n,
  one: 1n,
  zero: 0n,
};
type Fq2 = [bigint, bigint];
const FQ2: Field<Fq2> = {
  mul: ([a, b], [c, d]) => [(a * c - b * d + Q * Q) % Q, (a * d + b * c) % Q],
  sub: ([a, b], [c, d]) => [(a - c + Q) % Q, (b - d + Q) % Q],
  add: ([a, b], [c, d]) => [(a + c) % Q, (b + d) % Q],
  inv: ([a, b]) => {
    const n = modPow((a * a + b * b) % Q, Q - 2n, Q);
    return [(a * n) % Q, ((Q - b) * n) % Q];
  },
  isZero: ([a, b]) => a === 0n && b === 0n,
  one: [1n, 0n],
  zero: [0n, 0n],
};

/** Inverts every non-zero element at once (Montgomery's trick: one inversion, 3 multiplications each). */
function batchInverse<T>(F: Field<T>, xs: T[]): T[] {
  const prefix: T[] = new Array(xs.length);
  let acc = F.one;
  for (let i = 0; i < xs.length; i++) {
    prefix[i] = acc;
    if (!F.isZero(xs[i]!)) acc = F.mul(acc, xs[i]!);
  }
  let inv = F.inv(acc);
  const out: T[] = new Array(xs.length);
  for (let i = xs.length - 1; i >= 0; i--) {
    if (F.isZero(xs[i]!)) {
      out[i] = xs[i]!;
      continue;
    }
    out[i] = F.mul(inv, prefix[i]!);
    inv = F.mul(inv, xs[i]!);
  }
  return out;
}

/** A group's element codecs: n coordinates of 32 bytes per field element (1 for G1, 2 for G2). */
interface Group<T> {
  F: Field<T>;
  size: number;
  /** Standard-form element from Montgomery LE bytes. */
  read(buf: Uint8Array, off: number): T;
  /** Writes Montgomery LE (LEM) and big-endian standard (U) forms of one affine coordinate. */
  write(lem: Uint8Array, u: Uint8Array, off: number, v: T): void;
  msm: 'msmG1' | 'msmG2';
}
const G1: Group<bigint> = {
  F: FQ,
  size: SG1,
  read: (b, o) => fromMont(le(b, o)),
  write: (lem, u, o, v) => {
    putLE(lem, o, toMont(v));
    putBE(u, o, v);
  },
  msm: 'msmG1',
};
const G2: Group<Fq2> = {
  F: FQ2,
  size: SG2,
  read: (b, o) => [fromMont(le(b, o)), fromMont(le(b, o + 32))],
  write: (lem, u, o, [c0, c1]) => {
    putLE(lem, o, toMont(c0));
    putLE(lem, o + 32, toMont(c1));
    // snarkjs's U form reverses the whole 64-byte element: c1 big-endian, then c0
    putBE(u, o, c1);
    putBE(u, o + 32, c0);
  },
  msm: 'msmG2',
};

/**
 * Jacobian Montgomery sums (X, Y, Z per point; null = infinity) → affine LEM bytes and U bytes
 * (both n·size; infinity stays zeros in both, as snarkjs writes it).
 */
function toAffine<T>(G: Group<T>, jac: (Uint8Array | null)[]): { lem: Uint8Array; u: Uint8Array } {
  const c = G.size / 2; // bytes of one coordinate
  const lem = new Uint8Array(jac.length * G.size);
  const u = new Uint8Array(jac.length * G.size);
  const zs = jac.map((p) => (p ? G.read(p, 2 * c) : G.F.zero));
  const zinv = batchInverse(G.F, zs);
  jac.forEach((p, i) => {
    if (!p || G.F.isZero(zs[i]!)) return;
    const zi2 = G.F.mul(zinv[i]!, zinv[i]!);
    G.write(lem, u, i * G.size, G.F.mul(G.read(p, 0), zi2));
    G.write(lem, u, i * G.size + c, G.F.mul(G.read(p, c), G.F.mul(zi2, zinv[i]!)));
  });
  return { lem, u };
}

/** One term of a signal's sum: the Lagrange point (source section, index) times a coefficient (byte offset in the r1cs constraints; −1 = one). */
type Term = [source: number, index: number, coef: number];

/** A binary file's sections (iden3 binfile: magic, version, count, then type u32 + size u64 + data). */
async function sectionsOf(file: string, magic: string): Promise<{
  read: (id: number, from: number, len: number) => Promise<Uint8Array>;
  size: (id: number) => number;
  /** File offset of the section's data. */
  pos: (id: number) => number;
  close: () => Promise<void>;
}> {
  const fh = await open(file, 'r');
  const at = new Map<number, { pos: number; size: number }>();
  try {
    const head = Buffer.alloc(12);
    await fh.read(head, 0, 12, 0);
    if (head.toString('latin1', 0, 4) !== magic) throw new ProverError('setup_failed', `${file} is not a ${magic} file`);
    let pos = 12;
    const nSections = head.readUInt32LE(8);
    const sh = Buffer.alloc(12);
    for (let i = 0; i < nSections; i++) {
      await fh.read(sh, 0, 12, pos);
      const size = Number(sh.readBigUInt64LE(4));
      if (!at.has(sh.readUInt32LE(0))) at.set(sh.readUInt32LE(0), { pos: pos + 12, size });
      pos += 12 + size;
    }
  } catch (e) {
    await fh.close();
    throw e;
  }
  const sec = (id: number) => {
    const s = at.get(id);
    if (!s) throw new ProverError('setup_failed', `${file}: no section ${id}${magic === 'ptau' && id >= 12 ? ' (the ptau is not prepared for phase 2)' : ''}`);
    return s;
  };
  return {
    size: (id) => sec(id).size,
    pos: (id) => sec(id).pos,
    read: async (id, from, len) => {
      const s = sec(id);
      if (from + len > s.size) throw new ProverError('setup_failed', `${file}: section ${id} is shorter than ${from + len} bytes`);
      const b = Buffer.alloc(len);
      await fh.read(b, 0, len, s.pos + from);
      return b;
    },
    close: () => fh.close(),
  };
}

/** The binfile writer's image: sections appended in call order, each type u32 + size u64 + data. */
class BinWriter {
  private parts: Uint8Array[] = [];
  constructor(magic: string, nSections: number) {
    const h = Buffer.alloc(12);
    h.write(magic, 0, 'latin1');
    h.writeUInt32LE(1, 4);
    h.writeUInt32LE(nSections, 8);
    this.parts.push(h);
  }
  section(id: number, ...data: Uint8Array[]): void {
    const h = Buffer.alloc(12);
    h.writeUInt32LE(id, 0);
    h.writeBigUInt64LE(BigInt(data.reduce((n, d) => n + d.length, 0)), 4);
    this.parts.push(h, ...data);
  }
  bytes(): Buffer {
    return Buffer.concat(this.parts);
  }
}

const u32le = (...vs: number[]) => {
  const b = Buffer.alloc(4 * vs.length);
  vs.forEach((v, i) => b.writeUInt32LE(v, 4 * i));
  return b;
};
const u32be = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v, 0);
  return b;
};
const bigLE = (v: bigint) => {
  const b = Buffer.alloc(32);
  putLE(b, 0, v);
  return b;
};

/**
 * Writes the initial Groth16 key of `r1csFile` over `ptauFile` (prepared for phase 2) to `zkeyFile`
 * (through `<zkeyFile>.tmp-<pid>` and a rename), byte for byte what snarkjs 0.7 `zKey.newZKey` writes.
 * @param addon the native addon with `msmG1` and `msmG2`
 * @returns the circuit hash (64 bytes, BLAKE2b-512), as snarkjs returns it
 * @throws ProverError `setup_failed`: not an r1cs / ptau file, a curve other than BN254, a ptau too
 *   small for the circuit or not prepared for phase 2
 */
export async function newZKeyNative(addon: Pick<NativeAddon, 'msmG1' | 'msmG2'>, r1csFile: string, ptauFile: string, zkeyFile: string): Promise<Uint8Array> {
  const r1csBytes = await readFile(r1csFile);
  const r1cs = await sectionsOf(r1csFile, 'r1cs');
  const ptau = await sectionsOf(ptauFile, 'ptau');
  try {
    // r1cs header (section 1): n8, prime, nWires, nPubOut, nPubIn, nPrvIn, nLabels (u64), nConstraints
    const h = Buffer.from(await r1cs.read(1, 0, r1cs.size(1)));
    const n8 = h.readUInt32LE(0);
    if (n8 !== 32 || le(h, 4) !== R) throw new ProverError('setup_failed', `${r1csFile}: not a BN254 circuit (r1cs prime differs from r)`);
    const nVars = h.readUInt32LE(36);
    const nPublic = h.readUInt32LE(40) + h.readUInt32LE(44);
    const nConstraints = h.readUInt32LE(60);
    const ph = Buffer.from(await ptau.read(1, 0, ptau.size(1)));
    if (ph.readUInt32LE(0) !== 32 || le(ph, 4) !== Q) throw new ProverError('setup_failed', `${ptauFile}: not a BN254 powers of tau`);
    const power = ph.readUInt32LE(36);
    const cirPower = ptauPowerFor(nConstraints, nPublic);
    if (cirPower > power) throw new ProverError('setup_failed', `circuit too big for this power of tau ceremony. ${nConstraints}*2 > 2**${power}`);
    if (cirPower >= FR_S) throw new ProverError('setup_failed', 'Circuit too big for this curve');
    const domainSize = 2 ** cirPower;
    const hasher = blake2b.create({ dkLen: 64 });

    // Lagrange points of the circuit's domain: sections 12 (τG1), 13 (τG2), 14 (ατG1), 15 (βτG1)
    const lagrange = [
      await ptau.read(12, (domainSize - 1) * SG1, domainSize * SG1),
      await ptau.read(13, (domainSize - 1) * SG2, domainSize * SG2),
      await ptau.read(14, (domainSize - 1) * SG1, domainSize * SG1),
      await ptau.read(15, (domainSize - 1) * SG1, domainSize * SG1),
    ];
    const [TAU_G1, TAU_G2, ALPHATAU_G1, BETATAU_G1] = [0, 1, 2, 3];

    // Section 2: the Groth header; α1, β1 from sections 4, 5 and β2 from 6 (their first points); γ2 = δ2 = g2, δ1 = g1.
    const alpha1 = await ptau.read(4, 0, SG1);
    const beta1 = await ptau.read(5, 0, SG1);
    const beta2 = await ptau.read(6, 0, SG2);
    const g1 = new Uint8Array(SG1);
    const g1u = new Uint8Array(SG1);
    G1.write(g1, g1u, 0, 1n);
    G1.write(g1, g1u, 32, 2n);
    const g2 = new Uint8Array(SG2);
    const g2u = new Uint8Array(SG2);
    G2.write(g2, g2u, 0, [0x1800deef121f1e76426a00665e5c4479674322d4f75edadd46debd5cd992f6edn, 0x198e9393920d483a7260bfb731fb5d25f1aa493335a9e71297e485b7aef312c2n]);
    G2.write(g2, g2u, 64, [0x12c85ea5db8c6deb4aab71808dcb408fe3d1e7690c43d37b4ce6cc0166fa7daan, 0x090689d0585ff075ec9e99ad690c3395bc4b313370b38ef355acdadcd122975bn]);
    /** U form of an affine LEM point (none of these is infinity). */
    const uOf = <T>(G: Group<T>, lemBytes: Uint8Array) => {
      const u = new Uint8Array(G.size);
      G.write(new Uint8Array(G.size), u, 0, G.read(lemBytes, 0));
      G.write(new Uint8Array(G.size), u, G.size / 2, G.read(lemBytes, G.size / 2));
      return u;
    };
    hasher.update(uOf(G1, alpha1));
    hasher.update(uOf(G1, beta1));
    hasher.update(uOf(G2, beta2));
    hasher.update(g2u); // γ2
    hasher.update(g1u); // δ1
    hasher.update(g2u); // δ2
    const out = new BinWriter('zkey', 10);
    out.section(1, u32le(1));
    out.section(2, u32le(32), bigLE(Q), u32le(32), bigLE(R), u32le(nVars, nPublic, domainSize), alpha1, beta1, beta2, g2, g1, g2);

    // The constraints (snarkjs processConstraints): the terms of every signal's A, B1, B2, C and IC sums, and section 4.
    const constraintsAt = r1cs.pos(2);
    const A: Term[][] = Array.from({ length: nVars }, () => []);
    const B1: Term[][] = Array.from({ length: nVars }, () => []);
    const B2: Term[][] = Array.from({ length: nVars }, () => []);
    const C: Term[][] = Array.from({ length: nVars - nPublic - 1 }, () => []);
    const IC: Term[][] = Array.from({ length: nPublic + 1 }, () => []);
    const coefs: [number, number, number, number][] = [];
    const pubOrC = (s: number): Term[] => (s <= nPublic ? IC[s]! : C[s - nPublic - 1]!);
    const rd = r1csBytes;
    let pos = constraintsAt;
    for (let c = 0; c < nConstraints; c++) {
      for (const m of [0, 1, 2]) {
        const n = rd.readUInt32LE(pos);
        pos += 4;
        for (let i = 0; i < n; i++) {
          const s = rd.readUInt32LE(pos);
          const coef = pos + 4;
          pos += 36;
          if (m === 0) {
            A[s]!.push([TAU_G1, c, coef]);
            pubOrC(s).push([BETATAU_G1, c, coef]);
            coefs.push([0, c, s, coef]);
          } else if (m === 1) {
            B1[s]!.push([TAU_G1, c, coef]);
            B2[s]!.push([TAU_G2, c, coef]);
            pubOrC(s).push([ALPHATAU_G1, c, coef]);
            coefs.push([1, c, s, coef]);
          } else {
            pubOrC(s).push([TAU_G1, c, coef]);
          }
        }
      }
    }
    for (let s = 0; s <= nPublic; s++) {
      A[s]!.push([TAU_G1, nConstraints + s, -1]);
      IC[s]!.push([BETATAU_G1, nConstraints + s, -1]);
      coefs.push([0, nConstraints + s, s, -1]);
    }
    const sec4 = Buffer.alloc(4 + coefs.length * 44);
    sec4.writeUInt32LE(coefs.length, 0);
    coefs.forEach(([m, c, s, coef], i) => {
      const o = 4 + i * 44;
      sec4.writeUInt32LE(m, o);
      sec4.writeUInt32LE(c, o + 4);
      sec4.writeUInt32LE(s, o + 8);
      putLE(sec4, o + 12, ((coef < 0 ? 1n : le(rd, coef)) * R2_R) % R);
    });
    out.section(4, sec4);

    const one = bigLE(1n);
    /** Each signal's sum (one MSM of its terms, on this thread), made affine; yields to the event loop every 20 ms. */
    const compose = async <T>(G: Group<T>, sums: Term[][]): Promise<{ lem: Uint8Array; u: Uint8Array }> => {
      const msm = addon[G.msm]!.bind(addon);
      const jacobian = new Uint8Array(G.size * 1.5);
      const jac: (Uint8Array | null)[] = [];
      let slice = performance.now();
      for (const terms of sums) {
        if (performance.now() - slice > 20) {
          await new Promise((r) => setImmediate(r));
          slice = performance.now();
        }
        if (!terms.length) {
          jac.push(null);
          continue;
        }
        const bases = new Uint8Array(terms.length * G.size);
        const scalars = new Uint8Array(terms.length * 32);
        terms.forEach(([src, idx, coef], k) => {
          bases.set(lagrange[src]!.subarray(idx * G.size, (idx + 1) * G.size), k * G.size);
          scalars.set(coef < 0 ? one : rd.subarray(coef, coef + 32), k * 32);
        });
        jac.push(msm(bases, scalars, jacobian, 1) ? jacobian.slice() : null);
      }
      return toAffine(G, jac);
    };
    const points = async <T>(G: Group<T>, id: number, sums: Term[][]) => {
      const { lem, u } = await compose(G, sums);
      hasher.update(u32be(sums.length));
      hasher.update(u);
      return [id, lem] as const;
    };

    out.section(...(await points(G1, 3, IC)));

    // Section 9 (H): the odd Lagrange points of the domain twice as large.
    const lag2 = await ptau.read(12, (domainSize * 2 - 1) * SG1, domainSize * 2 * SG1);
    const hPoints = new Uint8Array(domainSize * SG1);
    for (let i = 0; i < domainSize; i++) hPoints.set(lag2.subarray((2 * i + 1) * SG1, (2 * i + 2) * SG1), i * SG1);
    out.section(9, hPoints);

    // The circuit hash covers τ^(i+n)·G1 − τ^i·G1 (section 2 of the ptau), in snarkjs's chunks of 2^14
    // (each chunk min(n − 1, 2^14) points: for n > 2^14 that is n points in all, as snarkjs hashes them).
    const CHUNK = 1 << 14;
    hasher.update(u32be(domainSize - 1));
    for (let off = 0; off < domainSize - 1; off += CHUNK) {
      const n = Math.min(domainSize - 1, CHUNK);
      const hi = await ptau.read(2, (off + domainSize) * SG1, n * SG1);
      const lo = await ptau.read(2, off * SG1, n * SG1);
      const x1: bigint[] = [];
      const y1: bigint[] = [];
      const x2: bigint[] = [];
      const y2: bigint[] = [];
      for (let i = 0; i < n; i++) {
        x1.push(G1.read(hi, i * SG1));
        y1.push(G1.read(hi, i * SG1 + 32));
        x2.push(G1.read(lo, i * SG1));
        y2.push((Q - G1.read(lo, i * SG1 + 32)) % Q); // − τ^i·G1
      }
      const inv = batchInverse(FQ, x2.map((x, i) => FQ.sub(x, x1[i]!)));
      const u = new Uint8Array(n * SG1);
      const lem = new Uint8Array(n * SG1);
      for (let i = 0; i < n; i++) {
        const l = FQ.mul(FQ.sub(y2[i]!, y1[i]!), inv[i]!);
        const x3 = FQ.sub(FQ.sub(FQ.mul(l, l), x1[i]!), x2[i]!);
        const y3 = FQ.sub(FQ.mul(l, FQ.sub(x1[i]!, x3)), y1[i]!);
        G1.write(lem, u, i * SG1, x3);
        G1.write(lem, u, i * SG1 + 32, y3);
      }
      hasher.update(u);
    }

    out.section(...(await points(G1, 8, C)));
    out.section(...(await points(G1, 5, A)));
    out.section(...(await points(G1, 6, B1)));
    out.section(...(await points(G2, 7, B2)));
    const csHash = hasher.digest();
    out.section(10, csHash, u32le(0));
    const tmp = `${zkeyFile}.tmp-${process.pid}`;
    await writeFile(tmp, out.bytes());
    await rename(tmp, zkeyFile);
    return csHash;
  } finally {
    await r1cs.close();
    await ptau.close();
  }
}
