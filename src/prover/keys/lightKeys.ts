/**
 * Light Protocol's proving keys (gnark v0.8.0 `.key` files from `@lightprotocol/zk-compression-cli`)
 * as Refract uses them: the pinned key table, the conversion of a key into Refract's resident form
 * and the witness vector of each circuit. Facts from /work/shared/spec/light-keys.md (§ below).
 *
 * Conversion (`convertLightKey`, once per key): the addon's `lightKeyDecode` parses the header, the
 * proving key and the verifying key (§1, §2; compressed points decompressed), this module parses the
 * R1CS (one CBOR object, §3.1) into a flat table, and the three are written as one resident file
 * (`<keysDir>/light/<name>.lkr`, layout in native/kernels/src/lightkey.h) that a prover thread reads
 * with one `readFile` and loads with `lightKeyLoad` (no square roots, no CBOR at start).
 */
import { createHash } from 'node:crypto';
import type { Bytes32 } from '../../types.ts';
import { ProverError } from '../errors.ts';
import { BN254_R, beToBigint, toHex32, writeLe32 } from '../engine/proofEncoding.ts';
import { v2PublicInputHash, type ValidityProofInputs } from '../engine/witness.ts';
import { poseidon2, poseidon2Batch, poseidon3 } from '../../merkle/poseidon.ts';
import { LIGHT_CLI_PACKAGES, LIGHT_KEYS, lightKeyFor, type LightCliVersion, type LightKeySpec } from './lightKeyTable.ts';
import { TypedList } from '../../typedList.ts';

export * from './lightKeyTable.ts';

/** sha256 of bytes, hex. */
export function sha256Hex(b: Uint8Array): string {
  return createHash('sha256').update(b).digest('hex');
}

// ---------------------------------------------------------------------------------------------
// Minimal CBOR (RFC 8949) reader for the R1CS object (§3.1): uints (numbers, or bigint above
// 2^53), negative ints, byte and text strings, arrays, maps (plain objects keyed by String(key)),
// simple values; definite lengths only (fxamacker's deterministic encoding).

type Cbor = number | bigint | string | Uint8Array | boolean | null | undefined | Cbor[] | { [k: string]: Cbor };

class CborReader {
  off: number;
  constructor(
    private readonly b: Uint8Array,
    off: number,
    private readonly what: string,
  ) {
    this.off = off;
  }
  private fail(msg: string): never {
    throw new ProverError('keys_missing', `${this.what}: R1CS CBOR at byte ${this.off}: ${msg}`);
  }
  private arg(ai: number): number | bigint {
    const b = this.b;
    if (ai < 24) return ai;
    const need = ai === 24 ? 1 : ai === 25 ? 2 : ai === 26 ? 4 : ai === 27 ? 8 : -1;
    if (need < 0) this.fail(`unsupported additional info ${ai} (indefinite length?)`);
    if (this.off + need > b.length) this.fail('truncated');
    let v = 0n;
    for (let i = 0; i < need; i++) v = (v << 8n) | BigInt(b[this.off + i]!);
    this.off += need;
    return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  }
  private len(ai: number): number {
    const v = this.arg(ai);
    if (typeof v !== 'number' || v > 134_217_728) this.fail(`length ${v} too large`);
    return v;
  }
  read(): Cbor {
    if (this.off >= this.b.length) this.fail('truncated');
    const ib = this.b[this.off++]!;
    const mt = ib >> 5;
    const ai = ib & 31;
    switch (mt) {
      case 0:
        return this.arg(ai);
      case 1: {
        const v = this.arg(ai);
        return typeof v === 'number' ? -1 - v : -1n - v;
      }
      case 2:
      case 3: {
        const n = this.len(ai);
        if (this.off + n > this.b.length) this.fail('truncated string');
        const s = this.b.subarray(this.off, this.off + n);
        this.off += n;
        return mt === 2 ? s : Buffer.from(s).toString('utf8');
      }
      case 4: {
        const n = this.len(ai);
        const a: Cbor[] = new Array(n);
        for (let i = 0; i < n; i++) a[i] = this.read();
        return a;
      }
      case 5: {
        const n = this.len(ai);
        const o: { [k: string]: Cbor } = {};
        for (let i = 0; i < n; i++) {
          const k = this.read();
          o[String(k)] = this.read();
        }
        return o;
      }
      case 6:
        this.arg(ai);
        return this.read();
      default:
        if (ai === 20) return false;
        if (ai === 21) return true;
        if (ai === 22) return null;
        if (ai === 23) return undefined;
        return this.fail(`unsupported simple/float value ${ai}`);
    }
  }
}

/** The R1CS facts a proof needs, in the resident layout's order (lightkey.h r1cs blob). */
export interface LightR1csSummary {
  nbPublic: number;
  nbSecret: number;
  nbInternal: number;
  constraints: number;
  coefficients: number;
  hints: number;
  gnarkVersion: string;
}

const NBITS_ID = 2224041163;

/**
 * Parses gnark v0.8.0's R1CS CBOR (§3.1) at `offset` of a key file into the resident R1CS blob
 * (u32 LE; layout in lightkey.h). Hints are deduplicated by their output wires (MHints repeats
 * each hint once per output wire).
 * @throws ProverError `keys_missing` naming `what` for malformed CBOR, a non-0.8.0 system, a
 *   BSB22 commitment, a constant term (VID 0xFFFFFFFF) or a hint other than bits.NBits
 */
export function r1csBlob(key: Uint8Array, offset: number, what: string): { blob: Uint8Array; summary: LightR1csSummary } {
  // The common case (a well-formed key in gnark's deterministic encoding) without building a JS
  // object per term; anything it does not expect goes through the general reader below, which
  // gives the same blob or the error naming what is wrong.
  const fast = r1csBlobFast(key, offset);
  if (fast) return fast;
  return r1csBlobGeneral(key, offset, what);
}

/**
 * `r1csBlob` through the general CBOR reader (a JS value for every CBOR item): what the one-pass
 * reader falls back to, and the reference it must equal. Same parameters, result and errors as `r1csBlob`.
 */
export function r1csBlobGeneral(key: Uint8Array, offset: number, what: string): { blob: Uint8Array; summary: LightR1csSummary } {
  const rd = new CborReader(key, offset, what);
  const cs = rd.read() as { [k: string]: Cbor };
  if (rd.off !== key.length) throw new ProverError('keys_missing', `${what}: ${key.length - rd.off} bytes after the R1CS (not a Light key file)`);
  const fail = (m: string): never => {
    throw new ProverError('keys_missing', `${what}: ${m}`);
  };
  if (!cs || typeof cs !== 'object' || Array.isArray(cs)) fail('R1CS is not a CBOR map');
  const version = cs.GnarkVersion;
  if (version !== '0.8.0') fail(`R1CS GnarkVersion ${JSON.stringify(version)}, expected "0.8.0"`);
  const pub = cs.Public as Cbor[];
  const sec = cs.Secret as Cbor[];
  const nInt = cs.NbInternalVariables as number;
  const cons = cs.Constraints as Cbor[];
  const coefs = cs.Coefficients as Cbor[];
  const hintsMap = (cs.MHints ?? {}) as { [k: string]: Cbor };
  if (!Array.isArray(pub) || !Array.isArray(sec) || typeof nInt !== 'number' || !Array.isArray(cons) || !Array.isArray(coefs)) {
    fail('R1CS lacks Public / Secret / NbInternalVariables / Constraints / Coefficients');
  }
  const ci = cs.CommitmentInfo as { [k: string]: Cbor } | null | undefined;
  if (ci && ci.Committed !== null && ci.Committed !== undefined && Array.isArray(ci.Committed) && ci.Committed.length > 0) {
    fail('R1CS has a BSB22 commitment (not supported; Light 0.27.0 keys have none)');
  }
  const out: number[] = [pub.length, sec.length, nInt, cons.length, coefs.length, 0];
  for (const c of coefs) {
    if (!Array.isArray(c) || c.length !== 4) fail('coefficient is not 4 uint64 limbs');
    for (const limb of c as Cbor[]) {
      const v = typeof limb === 'number' ? BigInt(limb) : (limb as bigint);
      if (typeof v !== 'bigint' || v < 0n || v >= 1n << 64n) fail('coefficient limb is not a uint64');
      out.push(Number(v & 0xffffffffn), Number(v >> 32n));
    }
  }
  const terms = (lst: Cbor, where: string): number[] => {
    if (!Array.isArray(lst)) fail(`${where} is not an array of terms`);
    const r: number[] = [];
    for (const t of lst as Cbor[]) {
      const o = t as { CID?: Cbor; VID?: Cbor };
      if (typeof o?.CID !== 'number' || typeof o.VID !== 'number') fail(`${where}: term is not {CID, VID}`);
      if (o.VID === 0xffffffff) fail(`${where}: constant term (VID 0xFFFFFFFF) not supported`);
      r.push(o.CID as number, o.VID as number);
    }
    return r;
  };
  cons.forEach((c, i) => {
    const o = c as { L?: Cbor; R?: Cbor; O?: Cbor };
    const l = terms(o?.L, `constraint ${i} L`);
    const r = terms(o?.R, `constraint ${i} R`);
    const oo = terms(o?.O, `constraint ${i} O`);
    out.push(l.length / 2, r.length / 2, oo.length / 2, ...l, ...r, ...oo);
  });
  const seen = new Set<string>();
  let nHints = 0;
  for (const h of Object.values(hintsMap)) {
    const o = h as { ID?: Cbor; Inputs?: Cbor; Wires?: Cbor };
    if (typeof o?.ID !== 'number' || !Array.isArray(o.Wires) || !Array.isArray(o.Inputs)) fail('hint is not {ID, Inputs, Wires}');
    if (o.ID !== NBITS_ID) fail(`hint id ${o.ID} is not gnark's bits.NBits (${NBITS_ID}); unsupported key`);
    const wires = o.Wires as number[];
    const k = wires.join(',');
    if (seen.has(k)) continue;
    seen.add(k);
    nHints++;
    out.push(o.ID as number, wires.length, ...wires, (o.Inputs as Cbor[]).length);
    (o.Inputs as Cbor[]).forEach((inp, j) => {
      const t = terms(inp, `hint ${k} input ${j}`);
      out.push(t.length / 2, ...t);
    });
  }
  out[5] = nHints;
  const blob = new Uint8Array(out.length * 4);
  const dv = new DataView(blob.buffer);
  for (let i = 0; i < out.length; i++) dv.setUint32(i * 4, out[i]! >>> 0, true);
  return {
    blob,
    summary: { nbPublic: pub.length, nbSecret: sec.length, nbInternal: nInt, constraints: cons.length, coefficients: coefs.length, hints: nHints, gnarkVersion: '0.8.0' },
  };
}

/** Thrown inside `r1csBlobFast` at anything it does not expect; the general reader then decides. */
class NotFast extends Error {}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * `r1csBlob` in one pass over the bytes, for gnark v0.8.0's deterministic CBOR (keys sorted, definite
 * lengths): terms, coefficients and hints go straight into u32 arrays. Returns null (and the caller
 * uses the general reader) at the first thing it does not expect: another key order, a constant term,
 * a bigint, a non-NBits hint, a commitment, trailing bytes, malformed CBOR. The 20.3 MB R1CS of
 * inclusion of 8: 0.26 s against the general reader's 4.1 s (2-core AMD EPYC Zen 3); the 24 keys'
 * conversion went from 95 to about 55 CPU-s. prover.light.test.ts holds the two readers equal.
 * @param b a Light key file's bytes; `start` the R1CS offset (`lightKeyDecode`'s `r1csOffset`)
 * @returns the blob and summary `r1csBlob` returns, or null for the general reader to decide
 */
export function r1csBlobFast(b: Uint8Array, start: number): { blob: Uint8Array; summary: LightR1csSummary } | null {
  if (!LITTLE_ENDIAN) return null;
  let off = start;
  const end = b.length;
  const bail = (): never => {
    throw new NotFast();
  };
  const byte = (): number => (off < end ? b[off++]! : bail());
  /** The argument of an initial byte whose value fits in 32 bits. */
  const arg32 = (ai: number): number => {
    if (ai < 24) return ai;
    if (ai === 24) return byte();
    if (ai === 25) {
      if (off + 2 > end) bail();
      const v = (b[off]! << 8) | b[off + 1]!;
      off += 2;
      return v;
    }
    if (ai === 26) {
      if (off + 4 > end) bail();
      const v = b[off]! * 0x1000000 + ((b[off + 1]! << 16) | (b[off + 2]! << 8) | b[off + 3]!);
      off += 4;
      return v;
    }
    return bail();
  };
  const uint = (): number => {
    const ib = byte();
    if (ib >> 5 !== 0) bail();
    return arg32(ib & 31);
  };
  const header = (major: number): number => {
    const ib = byte();
    if (ib >> 5 !== major) bail();
    const n = arg32(ib & 31);
    if (n > 134_217_728) bail();
    return n;
  };
  const text = (): string => {
    const n = header(3);
    if (off + n > end) bail();
    let s = '';
    for (let i = 0; i < n; i++) {
      const c = b[off + i]!;
      if (c >= 0x80) bail();
      s += String.fromCharCode(c);
    }
    off += n;
    return s;
  };
  /** Skips one well-formed value as the general reader would accept it (no floats, no indefinite lengths). */
  const skip = (): void => {
    const ib = byte();
    const mt = ib >> 5;
    const ai = ib & 31;
    if (mt === 7) {
      if (ai < 20 || ai > 23) bail();
      return;
    }
    let n: number;
    if (ai === 27) {
      if (mt !== 0 && mt !== 1 && mt !== 6) bail();
      if (off + 8 > end) bail();
      off += 8;
      n = 0;
    } else n = arg32(ai);
    if (mt === 2 || mt === 3) {
      if (n > 134_217_728 || off + n > end) bail();
      off += n;
    } else if (mt === 4) {
      if (n > 134_217_728) bail();
      for (let i = 0; i < n; i++) skip();
    } else if (mt === 5) {
      if (n > 134_217_728) bail();
      for (let i = 0; i < 2 * n; i++) skip();
    } else if (mt === 6) skip();
  };
  // a term {CID, VID}: a2 63 'CID' uint 63 'VID' uint
  const term = (into: number[]): void => {
    if (off + 5 > end || b[off] !== 0xa2 || b[off + 1] !== 0x63 || b[off + 2] !== 0x43 || b[off + 3] !== 0x49 || b[off + 4] !== 0x44) bail();
    off += 5;
    const cid = uint();
    if (off + 4 > end || b[off] !== 0x63 || b[off + 1] !== 0x56 || b[off + 2] !== 0x49 || b[off + 3] !== 0x44) bail();
    off += 4;
    const vid = uint();
    if (vid === 0xffffffff) bail();
    into.push(cid, vid);
  };
  const terms = (into: number[]): void => {
    into.length = 0;
    const n = header(4);
    for (let i = 0; i < n; i++) term(into);
  };

  try {
    const nTop = header(5);
    const seen = new Set<string>();
    let version: unknown;
    let nPub = -1;
    let nSec = -1;
    let nInt = -1;
    let nCons = -1;
    let nCoefs = -1;
    let nHints = 0;
    const coefs = new TypedList((n) => new Uint32Array(n), 1 << 16);
    const cons = new TypedList((n) => new Uint32Array(n), 1 << 16);
    const hints = new TypedList((n) => new Uint32Array(n), 1 << 16);
    const L: number[] = [];
    const R: number[] = [];
    const O: number[] = [];
    for (let k = 0; k < nTop; k++) {
      const name = text();
      if (seen.has(name)) bail();
      seen.add(name);
      switch (name) {
        case 'GnarkVersion':
          version = text();
          break;
        case 'Public':
          nPub = header(4);
          for (let i = 0; i < nPub; i++) skip();
          break;
        case 'Secret':
          nSec = header(4);
          for (let i = 0; i < nSec; i++) skip();
          break;
        case 'NbInternalVariables':
          nInt = uint();
          break;
        case 'CommitmentInfo': {
          // {Committed: null | [], …} passes; anything committed is the general reader's error
          const ib = b[off];
          if (ib === 0xf6) {
            off++;
            break;
          }
          const m = header(5);
          for (let i = 0; i < m; i++) {
            const key = text();
            if (key === 'Committed') {
              if (b[off] === 0xf6 || b[off] === 0x80) off++;
              else bail();
            } else skip();
          }
          break;
        }
        case 'Coefficients':
          nCoefs = header(4);
          for (let i = 0; i < nCoefs; i++) {
            if (byte() !== 0x84) bail();
            for (let l = 0; l < 4; l++) {
              const ib = byte();
              if (ib >> 5 !== 0) bail();
              if ((ib & 31) === 27) {
                if (off + 8 > end) bail();
                const hi = ((b[off]! << 24) | (b[off + 1]! << 16) | (b[off + 2]! << 8) | b[off + 3]!) >>> 0;
                const lo = ((b[off + 4]! << 24) | (b[off + 5]! << 16) | (b[off + 6]! << 8) | b[off + 7]!) >>> 0;
                off += 8;
                coefs.push(lo);
                coefs.push(hi);
              } else {
                coefs.push(arg32(ib & 31));
                coefs.push(0);
              }
            }
          }
          break;
        case 'Constraints':
          nCons = header(4);
          for (let i = 0; i < nCons; i++) {
            // {L, O, R} in this order (one-letter keys sorted)
            if (off + 3 > end || b[off] !== 0xa3 || b[off + 1] !== 0x61 || b[off + 2] !== 0x4c) bail();
            off += 3;
            terms(L);
            if (off + 2 > end || b[off] !== 0x61 || b[off + 1] !== 0x4f) bail();
            off += 2;
            terms(O);
            if (off + 2 > end || b[off] !== 0x61 || b[off + 1] !== 0x52) bail();
            off += 2;
            terms(R);
            cons.push(L.length / 2);
            cons.push(R.length / 2);
            cons.push(O.length / 2);
            for (const v of L) cons.push(v);
            for (const v of R) cons.push(v);
            for (const v of O) cons.push(v);
          }
          break;
        case 'MHints': {
          const m = header(5);
          const dedup = new Set<string>();
          let lastKey = -1;
          const wires: number[] = [];
          const t: number[] = [];
          for (let i = 0; i < m; i++) {
            // keys: wire ids, ascending (the general reader's Object.values order)
            const key = uint();
            if (key <= lastKey || key > 0xfffffffe) bail();
            lastKey = key;
            // {ID, Wires, Inputs} in this order (keys sorted by length)
            if (byte() !== 0xa3 || text() !== 'ID') bail();
            if (uint() !== NBITS_ID) bail();
            if (text() !== 'Wires') bail();
            wires.length = 0;
            const nw = header(4);
            for (let j = 0; j < nw; j++) wires.push(uint());
            if (text() !== 'Inputs') bail();
            const nIn = header(4);
            const k2 = wires.join(',');
            const dup = dedup.has(k2);
            if (!dup) {
              dedup.add(k2);
              nHints++;
              hints.push(NBITS_ID);
              hints.push(wires.length);
              for (const w of wires) hints.push(w);
              hints.push(nIn);
            }
            for (let j = 0; j < nIn; j++) {
              terms(t);
              if (dup) continue;
              hints.push(t.length / 2);
              for (const v of t) hints.push(v);
            }
          }
          break;
        }
        default:
          skip();
      }
    }
    if (off !== end) bail();
    if (version !== '0.8.0' || nPub < 0 || nSec < 0 || nInt < 0 || nCons < 0 || nCoefs < 0) bail();
    const head = [nPub, nSec, nInt, nCons, nCoefs, nHints];
    const c = coefs.view();
    const r = cons.view();
    const h = hints.view();
    const all = new Uint32Array(head.length + c.length + r.length + h.length);
    all.set(head, 0);
    all.set(c, head.length);
    all.set(r, head.length + c.length);
    all.set(h, head.length + c.length + r.length);
    return {
      blob: new Uint8Array(all.buffer),
      summary: { nbPublic: nPub, nbSecret: nSec, nbInternal: nInt, constraints: nCons, coefficients: nCoefs, hints: nHints, gnarkVersion: '0.8.0' },
    };
  } catch (e) {
    if (e instanceof NotFast) return null;
    throw e;
  }
}

/** What `lightKeyDecode` in the addon returns. */
export interface LightKeyDecoded {
  header: number[];
  points: Uint8Array;
  vk: Uint8Array;
  r1csOffset: number;
}

/** The addon functions this module needs (native/kernels/src/binding.c). */
export interface LightKeyAddon {
  lightKeyDecode(key: Uint8Array): LightKeyDecoded;
}

/**
 * Converts a Light `.key` file into Refract's resident form ("RFLKEY01" ‖ u64 LE lengths ‖ points ‖
 * vk ‖ r1cs; lightkey.h). Checks the header against the file name's shape (§1).
 * @param key the file's bytes; `spec` its pinned entry (the caller checks the sha256 first)
 * @returns the resident bytes and the R1CS summary
 * @throws ProverError `keys_missing` naming the file for a malformed, truncated or foreign file
 */
export function convertLightKey(addon: LightKeyAddon, key: Uint8Array, s: LightKeySpec, path: string): { resident: Uint8Array; summary: LightR1csSummary } {
  let d: LightKeyDecoded;
  try {
    d = addon.lightKeyDecode(key);
  } catch (e) {
    throw new ProverError('keys_missing', `${path} (${s.file}): not a gnark v0.8.0 BN254 Light key: ${(e as Error).message}`);
  }
  const want = [s.nAccounts ? s.stateTreeHeight : 0, s.nAccounts, s.nAddresses ? s.addressTreeHeight : 0, s.nAddresses];
  if (d.header.join(',') !== want.join(',')) {
    throw new ProverError('keys_missing', `${path}: header (${d.header.join(',')}) is not ${s.file}'s (${want.join(',')})`);
  }
  const { blob, summary } = r1csBlob(key, d.r1csOffset, path);
  const resident = new Uint8Array(32 + d.points.length + d.vk.length + blob.length);
  resident.set(Buffer.from('RFLKEY01', 'ascii'), 0);
  const dv = new DataView(resident.buffer);
  dv.setBigUint64(8, BigInt(d.points.length), true);
  dv.setBigUint64(16, BigInt(d.vk.length), true);
  dv.setBigUint64(24, BigInt(blob.length), true);
  resident.set(d.points, 32);
  resident.set(d.vk, 32 + d.points.length);
  resident.set(blob, 32 + d.points.length + d.vk.length);
  return { resident, summary };
}

/** A non-negative integer < 2^256 as 32 bytes big-endian. */
function be32(v: bigint): Uint8Array {
  const b = new Uint8Array(32);
  for (let i = 31; i >= 0; i--, v >>= 8n) b[i] = Number(v & 0xffn);
  return b;
}

// ---------------------------------------------------------------------------------------------
// Witness vectors (§5): [public without ONE | secret], each value 32 bytes little-endian.

const TWO_248 = 1n << 248n;

function fe(b: Bytes32, what: string): bigint {
  if (!(b instanceof Uint8Array) || b.length !== 32) throw new ProverError('invalid_input', `${what}: expected 32 bytes`);
  const v = beToBigint(b);
  if (v >= BN254_R) throw new ProverError('invalid_input', `${what}: ${toHex32(v)} is not < the BN254 scalar field modulus`);
  return v;
}

/** A circuit's witness: the key it needs, the inputs in order, and the public inputs (BE hex). */
export interface LightWitness {
  key: LightKeySpec;
  /** (nbPub − 1 + nbSec) × 32 bytes, LE, in gnark's order. */
  inputs: Uint8Array;
  /** The public inputs the verifier takes, in order (§7), as bigints. */
  publics: bigint[];
}

/**
 * The roots that Merkle paths fold to, all paths one level at a time: one Poseidon2 batch per level
 * (eight hashes per call on IFMA lanes; `lightWitness` for 8 accounts 2.9 → 1.2 ms against 208 single
 * calls, Zen 4), one call per level for a single path. Bit k of `index` = 1 → Poseidon2(path[k], node),
 * else Poseidon2(node, path[k]).
 * @param paths leaf (32-byte BE < r), leaf index (< 2^path.length), path elements (32-byte BE < r, leaf level first)
 * @returns one 32-byte BE root per path, in order
 * @throws RangeError (from Poseidon) for an element ≥ r
 */
export function foldPaths(paths: readonly { leaf: Bytes32; index: number; path: readonly Bytes32[] }[]): Bytes32[] {
  const nodes = paths.map((p) => p.leaf);
  const levels = Math.max(0, ...paths.map((p) => p.path.length));
  for (let k = 0; k < levels; k++) {
    const at = paths.flatMap((p, i) => (k < p.path.length ? [i] : []));
    const pair = (i: number): [Bytes32, Bytes32] => {
      const { index, path } = paths[i]!;
      return Math.floor(index / 2 ** k) % 2 === 1 ? [path[k]!, nodes[i]!] : [nodes[i]!, path[k]!];
    };
    if (at.length === 1) {
      nodes[at[0]!] = poseidon2(...pair(at[0]!)); // one path: a single call is cheaper than a batch of one
      continue;
    }
    const pairs = new Uint8Array(at.length * 64);
    at.forEach((i, j) => {
      const [left, right] = pair(i);
      pairs.set(left, j * 64);
      pairs.set(right, j * 64 + 32);
    });
    const out = poseidon2Batch(pairs);
    at.forEach((i, j) => (nodes[i] = out.subarray(j * 32, j * 32 + 32)));
  }
  return nodes;
}

/**
 * The witness vector of the Light circuit serving `inputs` (§5.1 table), with publicInputHash for
 * v2 (§5.3: checked against a given `publicInputHash`).
 * @throws ProverError `unsupported_shape` when Light ships no key for the shape (message names the
 *   missing file), `invalid_input` for wrong lengths, values ≥ r, indices ≥ 2^h, a missing v1
 *   nextIndex, an address outside (low, high), or a publicInputHash that does not match;
 *   `witness_failed` naming the input (`accounts[i]` / `addresses[i]`), the circuit and the key file
 *   when a path does not fold to its root (wrong root, sibling, leaf or nextIndex)
 */
export function lightWitness(inputs: ValidityProofInputs): LightWitness {
  const version = inputs.version ?? 1;
  const { accounts, addresses } = inputs;
  const key = lightKeyFor(accounts.length, addresses.length, version);
  if (!key) {
    const kind = addresses.length === 0 ? 'inclusion' : accounts.length === 0 ? 'non-inclusion' : 'combined';
    throw new ProverError(
      'unsupported_shape',
      `Light ships no proving key for ${kind} with ${accounts.length} account(s) and ${addresses.length} address(es) (v${version}); ` +
        `keys exist for: ${LIGHT_KEYS.filter((k) => k.version === version).map((k) => k.name).join(', ')}`,
    );
  }
  const sh = key.stateTreeHeight;
  const ah = key.addressTreeHeight;
  const vals: bigint[] = [];
  const path = (p: Bytes32[], h: number, w: string): bigint[] => {
    if (!Array.isArray(p) || p.length !== h) throw new ProverError('invalid_input', `${w}.pathElements: expected ${h} elements for ${key.file}, got ${Array.isArray(p) ? p.length : typeof p}`);
    return p.map((e, i) => fe(e, `${w}.pathElements[${i}]`));
  };
  const idx = (n: number, h: number, w: string): bigint => {
    if (!Number.isSafeInteger(n) || n < 0 || n >= 2 ** h) throw new ProverError('invalid_input', `${w}: ${n} is not an integer in [0, 2^${h}) for ${key.file}`);
    return BigInt(n);
  };
  const accRoots = accounts.map((a, i) => fe(a.root, `accounts[${i}].root`));
  const accLeaves = accounts.map((a, i) => fe(a.leaf, `accounts[${i}].leaf`));
  const accIdx = accounts.map((a, i) => idx(a.leafIndex, sh, `accounts[${i}].leafIndex`));
  const accPath = accounts.flatMap((a, i) => path(a.pathElements, sh, `accounts[${i}]`));
  const adRoots = addresses.map((a, i) => fe(a.root, `addresses[${i}].root`));
  const adValues = addresses.map((a, i) => fe(a.value, `addresses[${i}].value`));
  const adLow = addresses.map((a, i) => fe(a.lowValue, `addresses[${i}].lowValue`));
  const adHigh = addresses.map((a, i) => fe(a.highValue, `addresses[${i}].highValue`));
  addresses.forEach((_, i) => {
    const lo = adLow[i]!, v = adValues[i]!, hi = adHigh[i]!;
    const ok = (x: bigint, y: bigint) => x < y && y - x <= TWO_248 && x < TWO_248 && y < TWO_248;
    if (!ok(lo, v) || !ok(v, hi)) {
      throw new ProverError('invalid_input', `addresses[${i}]: value ${toHex32(v)} is not strictly between low ${toHex32(lo)} and high ${toHex32(hi)} (< 2^248) for ${key.file}`);
    }
  });
  const adNext =
    version === 1
      ? addresses.map((a, i) => {
          if (a.nextIndex === undefined) throw new ProverError('invalid_input', `addresses[${i}].nextIndex is required by ${key.file} (legacy leaf Poseidon3(low, nextIndex, high))`);
          return idx(a.nextIndex, 53, `addresses[${i}].nextIndex`);
        })
      : [];
  const adIdx = addresses.map((a, i) => idx(a.lowLeafIndex, ah, `addresses[${i}].lowLeafIndex`));
  const adPath = addresses.flatMap((a, i) => path(a.pathElements, ah, `addresses[${i}]`));
  // The circuit's Merkle check, done here first so that a bad input is named (the solver would only
  // say which constraint fails): bit k of the index = 1 → Poseidon2(sibling, node) (§5.2)
  const hex = (b: Bytes32) => toHex32(beToBigint(b));
  const leaves = [
    ...accounts.map((a) => a.leaf),
    ...addresses.map((a) => (version === 1 ? poseidon3(a.lowValue, be32(BigInt(a.nextIndex!)), a.highValue) : poseidon2(a.lowValue, a.highValue))),
  ];
  const roots = foldPaths([
    ...accounts.map((a, i) => ({ leaf: leaves[i]!, index: a.leafIndex, path: a.pathElements })),
    ...addresses.map((a, i) => ({ leaf: leaves[accounts.length + i]!, index: a.lowLeafIndex, path: a.pathElements })),
  ]);
  accounts.forEach((a, i) => {
    const got = roots[i]!;
    if (beToBigint(got) !== accRoots[i]) {
      throw new ProverError('witness_failed', `accounts[${i}]: leaf ${hex(a.leaf)} at index ${a.leafIndex} with its ${sh} path elements folds to root ${hex(got)}, not the given root ${hex(a.root)} (circuit ${key.name}, ${key.file})`, { circuit: key.name, input: `accounts[${i}]` });
    }
  });
  addresses.forEach((a, i) => {
    const got = roots[accounts.length + i]!;
    if (beToBigint(got) !== adRoots[i]) {
      const what = version === 1 ? 'Poseidon3(low, nextIndex, high)' : 'Poseidon2(low, high)';
      throw new ProverError('witness_failed', `addresses[${i}]: the low element's leaf ${what} at index ${a.lowLeafIndex} with its ${ah} path elements folds to root ${hex(got)}, not the given root ${hex(a.root)} (circuit ${key.name}, ${key.file})`, { circuit: key.name, input: `addresses[${i}]` });
    }
  });
  let publics: bigint[];
  if (version === 1) {
    publics = [...accRoots, ...accLeaves, ...adRoots, ...adValues];
    vals.push(...publics, ...accIdx, ...accPath, ...adLow, ...adHigh, ...adNext, ...adIdx, ...adPath);
  } else {
    const pih = beToBigint(v2PublicInputHash(inputs));
    if (inputs.publicInputHash !== undefined) {
      const given = fe(inputs.publicInputHash, 'publicInputHash');
      if (given !== pih) throw new ProverError('invalid_input', `publicInputHash ${toHex32(given)} does not match the inputs (${toHex32(pih)}) for ${key.file}`);
    }
    publics = [pih];
    vals.push(pih, ...accRoots, ...accLeaves, ...accIdx, ...accPath, ...adRoots, ...adValues, ...adLow, ...adHigh, ...adIdx, ...adPath);
  }
  const buf = new Uint8Array(vals.length * 32);
  vals.forEach((v, i) => writeLe32(buf, i * 32, v));
  return { key, inputs: buf, publics };
}
