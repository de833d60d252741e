/**
 * The native BN254 multi-scalar multiplication (native/kernels/src/msm.c) that serves snarkjs'
 * `G1/G2.multiExpAffine`: results must equal ffjavascript's wasm MSM for the same buffers, for
 * both field-multiplication backends, any thread count and the edge cases Pippenger gets wrong
 * most easily (points at infinity, zero / one / r−1 scalars, equal points meeting in a bucket, a
 * sum that is infinity, short scalars), for every bucket algorithm (`msmSelectAlgorithm`: "glv",
 * the default: batch-affine with its scalar-1 pass and the GLV split on G1; "affine", the same
 * without GLV; "xyzz", the previous one). The native NTT (native/kernels/src/fft.c) that serves
 * `Fr.fft` / `Fr.ifft` must give ffjavascript's bytes. Proofs through both kernels verify
 * (test/prover.test.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { nativeAddon, nativeAddonError } from '../src/native.ts';
import { loadSnarkjs, proverKernels, terminateCurve, useCurve } from '../src/prover/engine/snark.ts';
import { REQUIRE_NATIVE } from './helpers/required.ts';

type Bytes = Uint8Array;
interface WasmGroup {
  g: Bytes;
  zero: Bytes;
  timesFr(p: Bytes, s: Bytes): Bytes;
  add(a: Bytes, b: Bytes): Bytes;
  double(a: Bytes): Bytes;
  neg(a: Bytes): Bytes;
  toAffine(p: Bytes): Bytes;
  eq(a: Bytes, b: Bytes): boolean;
  isZero(a: Bytes): boolean;
  multiExpAffine(bases: Bytes, scalars: Bytes): Promise<Bytes>;
}
type Fft = (b: Bytes) => Promise<Bytes>;
interface WasmCurve {
  G1: WasmGroup;
  G2: WasmGroup;
  Fr: {
    random(): Bytes;
    e(n: number | bigint): Bytes;
    neg(a: Bytes): Bytes;
    inv(a: Bytes): Bytes;
    fromMontgomery(a: Bytes): Bytes;
    fft: Fft;
    ifft: Fft;
    w: Bytes[];
    s: number;
  };
  terminate(): Promise<void>;
}

const addon = nativeAddon;
const ALGORITHMS = ['glv', 'affine', 'xyzz'] as const;
// Without the addon (no compiler at install) the prover uses the wasm MSM and these tests are
// skipped, unless REFRACT_REQUIRE_NATIVE=1 (CI) makes that a failure.
if (!addon?.msmG1 && !REQUIRE_NATIVE) console.warn(`native addon without MSM (${nativeAddonError ?? 'older build'}): MSM tests skipped (the prover uses the wasm MSM)`);
const describeNative = addon?.msmG1 || REQUIRE_NATIVE ? describe : describe.skip;

describeNative('native MSM equals ffjavascript', () => {
  let curve: WasmCurve;
  beforeAll(async () => {
    expect(addon?.msmG1, `native addon MSM required (REFRACT_REQUIRE_NATIVE=1): ${nativeAddonError ?? 'built without msmG1'}`).toBeTypeOf('function');
    const snarkjs = await loadSnarkjs();
    // A single-threaded curve is built fresh (never the patched, cached one).
    curve = (await snarkjs.curves.getCurveFromName('bn128', { singleThread: true })) as unknown as WasmCurve;
  });

  const groups = [
    { name: 'G1', point: 64, out: 96, msm: (b: Bytes, s: Bytes, o: Bytes, t?: number) => addon!.msmG1!(b, s, o, t), group: () => curve.G1 },
    { name: 'G2', point: 128, out: 192, msm: (b: Bytes, s: Bytes, o: Bytes, t?: number) => addon!.msmG2!(b, s, o, t), group: () => curve.G2 },
  ];

  /** n affine bases: multiples of a random point; every 11th is the point at infinity, bases 3 and 4 equal. */
  function bases(G: WasmGroup, point: number, n: number): Bytes {
    const out = new Uint8Array(n * point);
    let P = G.timesFr(G.g, curve.Fr.random());
    for (let i = 0; i < n; i++) {
      if (i % 11 !== 7) out.set(G.toAffine(P), i * point);
      if (i !== 3) P = i % 3 ? G.add(P, G.g) : G.double(P);
    }
    return out;
  }

  /** Mixed scalars: random, 0, 1, r−1, small, and 2^k. */
  function scalars(n: number, size = 32): Bytes {
    const out = new Uint8Array(n * size);
    for (let i = 0; i < n; i++) {
      let s: Bytes;
      switch (i % 6) {
        case 0: s = curve.Fr.fromMontgomery(curve.Fr.random()); break;
        case 1: s = new Uint8Array(0); break;
        case 2: s = Uint8Array.of(1); break;
        case 3: s = curve.Fr.fromMontgomery(curve.Fr.neg(curve.Fr.e(1))); break;
        case 4: s = Uint8Array.of(i & 255, (i >> 8) & 255); break;
        default: { s = new Uint8Array(size); s[i % size] = 1 << (i % 8); }
      }
      out.set(s.subarray(0, size), i * size);
    }
    return out;
  }

  /** Runs `body` once per (field multiplication, bucket algorithm), restoring the defaults after. */
  async function eachPath(body: (path: string) => Promise<void> | void) {
    // 'ifma' (ADX + the eight-lane batch-affine flush) where the CPU has AVX-512 IFMA, the default there
    const impls = (['ifma', 'adx', 'c'] as const).filter((i) => addon!.msmSelectImpl!(i));
    try {
      for (const impl of impls)
        for (const alg of ALGORITHMS) {
          addon!.msmSelectImpl!(impl);
          expect(addon!.msmSelectAlgorithm!(alg)).toBe(true);
          await body(`${impl}/${alg}`);
        }
    } finally {
      addon!.msmSelectImpl!(impls[0]!);
      addon!.msmSelectAlgorithm!('glv');
    }
  }

  /** Merkle-witness-like scalars: mostly 0 and 1, every 17th full-size, one r−1. */
  function bitScalars(n: number): Bytes {
    const out = new Uint8Array(n * 32);
    for (let i = 0; i < n; i++) {
      if (i % 17 === 3) out.set(curve.Fr.fromMontgomery(curve.Fr.random()), i * 32);
      else if (i === 5) out.set(curve.Fr.fromMontgomery(curve.Fr.neg(curve.Fr.e(1))), i * 32);
      else out[i * 32] = (i * 7919) % 3 === 0 ? 0 : 1;
    }
    return out;
  }

  it('msmSelectAlgorithm: "glv" by default, "affine" and "xyzz" on request, unknown names refused', () => {
    expect(addon!.msmAlgorithm!()).toBe('glv');
    expect(addon!.msmSelectAlgorithm!('affine')).toBe(true);
    expect(addon!.msmAlgorithm!()).toBe('affine');
    try {
      expect(addon!.msmSelectAlgorithm!('xyzz')).toBe(true);
      expect(addon!.msmAlgorithm!()).toBe('xyzz');
      expect(addon!.msmSelectAlgorithm!('nope')).toBe(false);
      expect(addon!.msmAlgorithm!()).toBe('xyzz');
    } finally {
      addon!.msmSelectAlgorithm!('glv');
    }
    expect(() => addon!.msmSelectAlgorithm!(3 as unknown as string)).toThrow(/takes a string/);
  });

  for (const grp of groups) {
    it(`${grp.name}: random and edge-case inputs, n = 1 … 3000, both backends, both algorithms, 1–3 threads`, async () => {
      const G = grp.group();
      for (const n of [1, 2, 5, 64, 700, 3000]) {
        const b = bases(G, grp.point, n);
        const s = scalars(n);
        const expected = await G.multiExpAffine(b, s);
        await eachPath((path) => {
          for (const threads of [1, 2, 3]) {
            const out = new Uint8Array(grp.out);
            const finite = grp.msm(b, s, out, threads);
            expect(G.eq(finite ? out : G.zero, expected), `${grp.name} n=${n} ${path} ${threads} threads`).toBe(true);
            expect(finite).toBe(!G.isZero(expected));
          }
        });
      }
    });

    it(`${grp.name}: Merkle-like scalars (mostly 0/1), uniform scalars, n not a power of two, both algorithms`, async () => {
      const G = grp.group();
      for (const n of [3, 33, 1000, 4099]) {
        const b = bases(G, grp.point, n);
        const uniform = new Uint8Array(n * 32);
        for (let i = 0; i < n; i++) uniform.set(curve.Fr.fromMontgomery(curve.Fr.random()), i * 32);
        for (const [kind, s] of [['bits', bitScalars(n)], ['uniform', uniform]] as const) {
          const expected = await G.multiExpAffine(b, s);
          await eachPath((path) => {
            for (const threads of [1, 2]) {
              const out = new Uint8Array(grp.out);
              const finite = grp.msm(b, s, out, threads);
              expect(G.eq(finite ? out : G.zero, expected), `${grp.name} n=${n} ${kind} ${path} ${threads} threads`).toBe(true);
            }
          });
        }
      }
    });

    it(`${grp.name}: buckets meeting P, −P and P again; duplicates; all scalars 1, r−1 or equal; all bases at infinity`, async () => {
      const G = grp.group();
      const Fr = curve.Fr;
      const P = G.toAffine(G.timesFr(G.g, Fr.random()));
      const Q = G.toAffine(G.timesFr(G.g, Fr.random()));
      const negP = G.toAffine(G.neg(P));
      const n = 600;
      const rMinus1 = Fr.fromMontgomery(Fr.neg(Fr.e(1)));
      const two = Fr.fromMontgomery(Fr.e(2));
      // bases: P, −P, P, Q, P, −P, … (the same bucket sees a point, its negation, then doublings)
      const b = new Uint8Array(n * grp.point);
      for (let i = 0; i < n; i++) b.set(i % 4 === 3 ? Q : i % 2 ? negP : P, i * grp.point);
      const cases: [string, Bytes, Bytes][] = [];
      const fill = (f: (i: number) => Bytes) => {
        const s = new Uint8Array(n * 32);
        for (let i = 0; i < n; i++) s.set(f(i), i * 32);
        return s;
      };
      cases.push(['all 1', b, fill(() => Uint8Array.of(1))]);
      cases.push(['all 2', b, fill(() => two)]);
      cases.push(['all r−1', b, fill(() => rMinus1)]);
      cases.push(['equal random', b, fill(() => rMinus1.map((x, k) => (k === 31 ? x : x ^ 0x5a)))]);
      cases.push(['mixed 0/1/2/r−1', b, fill((i) => [new Uint8Array(32), Uint8Array.of(1), two, rMinus1][(i * 5) % 4]!)]);
      cases.push(['random', b, fill(() => Fr.fromMontgomery(Fr.random()))]);
      // scalars ≥ r (r, r + 1, 2^256 − 1: taken as integers) and around the GLV split (λ, r − λ, 2^127 ± 1)
      const le = (v: bigint) => Uint8Array.from({ length: 32 }, (_, k) => Number((v >> BigInt(8 * k)) & 0xffn));
      const r = 0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001n;
      const lambda = 0xb3c4d79d41a917585bfc41088d8daaa78b17ea66b99c90ddn;
      const special = [r, r + 1n, (1n << 256n) - 1n, lambda, r - lambda, lambda + 1n, (1n << 127n) - 1n, 1n << 127n, (1n << 127n) + 1n, 1n << 128n, r - 2n];
      cases.push(['≥ r and GLV edges', b, fill((i) => le(special[i % special.length]!))]);
      cases.push(['all at infinity', new Uint8Array(n * grp.point), fill(() => Fr.fromMontgomery(Fr.random()))]);
      // P·s + (−P)·s for every pair: infinity
      const pairs = new Uint8Array(n * grp.point);
      for (let i = 0; i < n; i++) pairs.set(i % 2 ? negP : P, i * grp.point);
      cases.push(['P·s + (−P)·s', pairs, fill((i) => Fr.fromMontgomery(Fr.e(1000 + (i >> 1))))]);
      cases.push(['one point, r−1', P, rMinus1]);
      cases.push(['one point, 0', P, new Uint8Array(32)]);
      cases.push(['one point at infinity, 1', new Uint8Array(grp.point), Uint8Array.of(1, ...new Uint8Array(31))]);
      for (const [name, bs, s] of cases) {
        // ffjavascript's wasm MSM gives a finite point when every base is all-zero; msm.h: infinity
        const expected = bs.every((x) => x === 0) ? G.zero : await G.multiExpAffine(bs, s);
        await eachPath((path) => {
          for (const threads of [1, 3]) {
            const out = new Uint8Array(grp.out);
            const finite = grp.msm(bs, s, out, threads);
            expect(finite, `${grp.name} ${name} ${path} finite`).toBe(!G.isZero(expected));
            expect(G.eq(finite ? out : G.zero, expected), `${grp.name} ${name} ${path} ${threads} threads`).toBe(true);
          }
        });
      }
    });

    it(`${grp.name}: fixed-base tables (msmTable / msmFixed) equal ffjavascript: random, edge, bit-like and ≥ r scalars, infinity, every impl, 1–3 threads`, async () => {
      const G = grp.group();
      const Fr = curve.Fr;
      const group = grp.name === 'G1' ? 1 : 2;
      const le = (v: bigint) => Uint8Array.from({ length: 32 }, (_, k) => Number((v >> BigInt(8 * k)) & 0xffn));
      const r = 0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001n;
      const special = [r - 1n, r, (1n << 256n) - 1n, 1n << 255n, 2n, (1n << 13n) - 1n, 1n << 14n];
      const P = G.toAffine(G.timesFr(G.g, Fr.random()));
      const negP = G.toAffine(G.neg(P));
      const cases: [string, Bytes, Bytes][] = [];
      for (const n of [1, 2, 64, 700, 3000]) {
        cases.push([`mixed n=${n}`, bases(G, grp.point, n), scalars(n)]);
        cases.push([`bits n=${n}`, bases(G, grp.point, n), bitScalars(n)]);
      }
      const n = 300;
      const fill = (f: (i: number) => Bytes) => {
        const out = new Uint8Array(n * 32);
        for (let i = 0; i < n; i++) out.set(f(i), i * 32);
        return out;
      };
      cases.push(['special (≥ r, 2^256 − 1, window edges)', bases(G, grp.point, n), fill((i) => le(special[i % special.length]!))]);
      cases.push(['all at infinity', new Uint8Array(n * grp.point), fill(() => Fr.fromMontgomery(Fr.random()))]);
      const pairs = new Uint8Array(n * grp.point);
      for (let i = 0; i < n; i++) pairs.set(i % 2 ? negP : P, i * grp.point);
      cases.push(['P·s + (−P)·s', pairs, fill((i) => Fr.fromMontgomery(Fr.e(1000 + (i >> 1))))]);
      cases.push(['all P, equal scalars (one bucket, doublings)', pairs.map((_, k) => P[k % grp.point]!), fill(() => le(r - 2n))]);
      const impls = (['ifma', 'adx', 'c'] as const).filter((i) => addon!.msmSelectImpl!(i));
      try {
        for (const [name, b, s] of cases) {
          const expected = b.every((x) => x === 0) ? G.zero : await G.multiExpAffine(b, s);
          for (const impl of impls) {
            addon!.msmSelectImpl!(impl); // the table is built with this impl too
            const table = addon!.msmTable!(group, b);
            expect(addon!.msmTableBytes!(table)).toBeGreaterThanOrEqual(b.length * 17); // ≥ 17 rows (c ≤ 15) of the bases
            for (const threads of [1, 3]) {
              const out = new Uint8Array(grp.out);
              const finite = addon!.msmFixed!(table, s, out, threads);
              expect(finite, `${grp.name} ${name} ${impl} finite`).toBe(!G.isZero(expected));
              expect(G.eq(finite ? out : G.zero, expected), `${grp.name} ${name} ${impl} ${threads} threads`).toBe(true);
            }
          }
        }
      } finally {
        addon!.msmSelectImpl!(impls[0]!);
      }
      expect(() => addon!.msmFixed!({}, new Uint8Array(32), new Uint8Array(grp.out))).toThrow(/table must come from msmTable/);
      expect(() => addon!.msmTable!(3 as 1, new Uint8Array(64))).toThrow(/group must be 1/);
    });

    it(`${grp.name}: short scalars (2 bytes), a sum that is infinity, no points`, async () => {
      const G = grp.group();
      const b = bases(G, grp.point, 300);
      const s2 = scalars(300, 2);
      const out = new Uint8Array(grp.out);
      expect(G.eq(grp.msm(b, s2, out) ? out : G.zero, await G.multiExpAffine(b, s2))).toBe(true);

      // P·1 + P·(r−1) = infinity: false, out untouched
      const P = G.toAffine(G.timesFr(G.g, curve.Fr.random()));
      const two = new Uint8Array(2 * grp.point);
      two.set(P, 0);
      two.set(P, grp.point);
      const sc = new Uint8Array(64);
      sc[0] = 1;
      sc.set(curve.Fr.fromMontgomery(curve.Fr.neg(curve.Fr.e(1))), 32);
      const untouched = new Uint8Array(grp.out).fill(7);
      expect(grp.msm(two, sc, untouched)).toBe(false);
      expect(untouched.every((x) => x === 7)).toBe(true);
      // P·1 + P·1 = 2P (the bucket meets an equal point: doubling path)
      sc.fill(0);
      sc[0] = 1;
      sc[32] = 1;
      expect(grp.msm(two, sc, out)).toBe(true);
      expect(G.eq(out, await G.multiExpAffine(two, sc))).toBe(true);

      expect(grp.msm(new Uint8Array(0), new Uint8Array(0), out)).toBe(false);
    });

    it(`${grp.name}: wrong shapes are TypeErrors naming the argument`, () => {
      const out = new Uint8Array(grp.out);
      expect(() => grp.msm(new Uint8Array(grp.point + 1), new Uint8Array(32), out)).toThrow(/bases length/);
      expect(() => grp.msm(new Uint8Array(2 * grp.point), new Uint8Array(33), out)).toThrow(/scalars length/);
      expect(() => grp.msm(new Uint8Array(grp.point), new Uint8Array(64), out)).toThrow(/scalars length/);
      expect(() => grp.msm(new Uint8Array(grp.point), new Uint8Array(32), new Uint8Array(8))).toThrow(/out must have/);
      expect(() => grp.msm('x' as unknown as Bytes, new Uint8Array(32), out)).toThrow(/bases must be a Uint8Array/);
    });
  }

  it("the curve's multiExpAffine as useCurve installs it: native for snarkjs' 32-byte scalars, wasm for what the addon does not take", async () => {
    await useCurve({ singleThread: true, kernels: 'native' });
    try {
      const patched = (globalThis as unknown as { curve_bn128: WasmCurve }).curve_bn128;
      expect(patched.G1.multiExpAffine).not.toBe(curve.G1.multiExpAffine);
      for (const [name, point] of [['G1', 64], ['G2', 128]] as const) {
        const b = bases(curve[name], point, 40);
        for (const width of [32, 8, 40]) {
          const s = new Uint8Array(40 * width).map((_, i) => (i * 37 + width) & (i % width === width - 1 && width >= 32 ? 0x0f : 0xff));
          expect(patched[name].eq(await patched[name].multiExpAffine(b, s), await curve[name].multiExpAffine(b, s)), `${name} width ${width}`).toBe(true);
        }
        expect(patched[name].isZero(await patched[name].multiExpAffine(new Uint8Array(0), new Uint8Array(0)))).toBe(true);
      }
    } finally {
      await terminateCurve();
    }
  });

  it("FFT: frFft gives ffjavascript's fft and ifft bytes for n = 2 … 2^14, both backends; wrong shapes are TypeErrors", async () => {
    const Fr = curve.Fr;
    const impls = (['adx', 'c'] as const).filter((i) => addon!.msmSelectImpl!(i));
    try {
      // ffjavascript's answers once per size (the costly part), each backend's against them
      for (const bits of [1, 2, 3, 7, 10, 14]) {
        const n = 1 << bits;
        const buf = new Uint8Array(n * 32);
        for (let i = 0; i < n; i++) buf.set(i % 9 === 4 ? Fr.e(0) : i % 9 === 5 ? Fr.neg(Fr.e(1)) : Fr.random(), i * 32);
        const before = buf.slice();
        const [fwd, inv] = [await Fr.fft(buf), await Fr.ifft(buf)];
        expect(buf).toEqual(before);
        for (const impl of impls) {
          addon!.msmSelectImpl!(impl);
          expect(Buffer.from(addon!.frFft!(buf.slice(), Fr.w[bits]!)), `${impl} fft 2^${bits}`).toEqual(Buffer.from(fwd));
          expect(Buffer.from(addon!.frFft!(buf.slice(), Fr.inv(Fr.w[bits]!), Fr.inv(Fr.e(n)))), `${impl} ifft 2^${bits}`).toEqual(Buffer.from(inv));
        }
      }
    } finally {
      addon!.msmSelectImpl!(impls[0]!);
    }
    const one = new Uint8Array(32);
    expect(() => addon!.frFft!(new Uint8Array(96), one)).toThrow(/power of two/);
    expect(() => addon!.frFft!(new Uint8Array(32), one)).toThrow(/power of two/);
    expect(() => addon!.frFft!(new Uint8Array(65).subarray(1), one)).toThrow(/aligned/);
    expect(() => addon!.frFft!(new Uint8Array(64), new Uint8Array(31))).toThrow(/32 bytes/);
  });

  it("the curve's Fr.fft / Fr.ifft as useCurve installs them: ffjavascript's bytes, input untouched; arrays go to the original", async () => {
    await useCurve({ singleThread: true, kernels: 'native' });
    try {
      const Fr = (globalThis as unknown as { curve_bn128: WasmCurve }).curve_bn128.Fr;
      expect(Fr.fft).not.toBe(curve.Fr.fft);
      const buf = new Uint8Array(1024 * 32);
      for (let i = 0; i < 1024; i++) buf.set(curve.Fr.random(), i * 32);
      const before = buf.slice();
      expect(Buffer.from(await Fr.fft(buf))).toEqual(Buffer.from(await curve.Fr.fft(buf)));
      expect(Buffer.from(await Fr.ifft(buf))).toEqual(Buffer.from(await curve.Fr.ifft(buf)));
      expect(buf).toEqual(before);
      const arr = [curve.Fr.e(1), curve.Fr.e(2)] as unknown as Bytes;
      expect((await Fr.fft(arr)) as unknown as Bytes[]).toHaveLength(2);
    } finally {
      await terminateCurve();
    }
  });

  it('engine choice: native by default, wasm on request or via REFRACT_PROVER_KERNELS=wasm', () => {
    expect(proverKernels()).toBe('native');
    expect(proverKernels('wasm')).toBe('wasm');
    const saved = process.env.REFRACT_PROVER_KERNELS;
    process.env.REFRACT_PROVER_KERNELS = 'wasm';
    try {
      expect(proverKernels()).toBe('wasm');
      expect(proverKernels('native')).toBe('native');
    } finally {
      if (saved === undefined) delete process.env.REFRACT_PROVER_KERNELS;
      else process.env.REFRACT_PROVER_KERNELS = saved;
    }
  });
});

describeNative('msmJobs across threads', () => {
  it('jobs a terminated worker left open are taken off the process-wide count', async () => {
    const { Worker } = await import('node:worker_threads');
    const { fileURLToPath } = await import('node:url');
    const addonFile = fileURLToPath(new URL('../native/kernels/build/Release/refract_native.node', import.meta.url));
    const before = addon!.msmJobs!(0);
    // The worker opens two jobs (as two proofs in flight would) and hangs, as a stuck proof does.
    const w = new Worker(`const a = require(${JSON.stringify(addonFile)}); a.msmJobs(2); require('node:worker_threads').parentPort.postMessage('open'); setInterval(() => {}, 1000);`, { eval: true });
    await new Promise((resolve) => w.once('message', resolve));
    expect(addon!.msmJobs!(0)).toBe(before + 2);
    await w.terminate();
    expect(addon!.msmJobs!(0)).toBe(before);
  });
});
