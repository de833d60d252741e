/**
 * Native MSM benchmark (native/kernels/src/msm.c): ns per point of `msmG1` / `msmG2` on ONE thread,
 * every bucket algorithm of the addon (`msmSelectAlgorithm`: "xyzz", the previous one,
 * "affine" and "glv" (affine with the GLV endomorphism, on G1 and G2)) on the scalar field
 * multiplication (ADX, or portable C), and "glv+ifma" (`msmSelectImpl('ifma')`: glv with the
 * batch-affine additions on eight AVX-512 IFMA lanes, the default where the CPU has it) in the same
 * run, so the ratio is measured under the same load; and "fixed" (`msmTable` / `msmFixed`: the
 * fixed-base tables the native prover keeps for small keys, built once per (group, n) before the
 * rounds, its build time and size in `tables`; "fixed+ifma" on IFMA CPUs).
 *
 *   node --import tsx bench/msm.ts [--from 13] [--to 17] [--rounds 3] [--groups G1,G2]
 *
 * Inputs: n = 2^from … 2^to affine bases (random multiples of the generator from ffjavascript's
 * batchApplyKey: 2^15 distinct G1 and 2^13 distinct G2 points, repeated, alternately negated,
 * beyond that) with two scalar sets:
 *   random   uniform in [0, r) (the H polynomial's coefficients)
 *   merkle   as a Merkle-proof witness: 48 % zero, 48 % one, 4 % uniform full-size
 * Each round runs every algorithm once per (group, n, scalars) after a warm-up call; the table gives
 * the median round as process CPU time (user + sys; the machine is shared, so ratios use CPU time)
 * and wall time, per point. All algorithms must return the same point (checked every call).
 * Writes bench/results/msm.json with machine info.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';

import { nativeAddon, nativeAddonError } from '../src/native.ts';
import { BN254_P, BN254_R } from '../src/prover/engine/proofEncoding.ts';
import { loadSnarkjs } from '../src/prover/engine/snark.ts';


const args = process.argv.slice(2);
const argStr = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? String(args[i + 1]) : def;
};
const FROM = Number(argStr('from', '13'));
const TO = Number(argStr('to', '17'));
const ROUNDS = Number(argStr('rounds', '3'));
const GROUPS = argStr('groups', 'G1,G2').split(',') as ('G1' | 'G2')[];

const addon = nativeAddon;
if (!addon?.msmG1 || !addon.msmSelectAlgorithm) {
  console.error(`bench:msm needs the native addon with msmSelectAlgorithm (${nativeAddonError ?? 'older build'})`);
  process.exit(1);
}
const defaultAlgorithm = 'glv';
const defaultImpl = addon.msmImpl!();
/** Scalar field multiplication (the ADX one where the CPU has it, else portable C) for every algorithm. */
const scalarImpl = (['adx', 'c'] as const).find((i) => addon.msmSelectImpl!(i))!;
/** The paths timed in one run: each bucket algorithm on the scalar multiplication, then "glv+ifma"
 * (glv with the batch-affine flush on eight AVX-512 IFMA lanes) where the CPU has IFMA. */
const hasIfma = addon.msmSelectImpl!('ifma');
const hasTables = typeof addon.msmTable === 'function';
const PATHS = [
  ...['xyzz', 'affine', 'glv'].filter((a) => addon.msmSelectAlgorithm!(a)).map((a) => ({ name: a, impl: scalarImpl, algorithm: a })),
  ...(hasIfma ? [{ name: 'glv+ifma', impl: 'ifma' as const, algorithm: 'glv' }] : []),
  ...(hasTables ? [{ name: 'fixed', impl: scalarImpl, algorithm: 'glv' }] : []),
  ...(hasTables && hasIfma ? [{ name: 'fixed+ifma', impl: 'ifma' as const, algorithm: 'glv' }] : []),
];
const ALGORITHMS = PATHS.map((p) => p.name);
/** The path msm_g1 / msm_g2 take by default here (the speedup column). */
const defaultPath = PATHS.some((p) => p.name === 'glv+ifma') && defaultImpl === 'ifma' ? 'glv+ifma' : defaultAlgorithm;
function selectPath(name: string) {
  const p = PATHS.find((x) => x.name === name)!;
  addon!.msmSelectImpl!(p.impl);
  addon!.msmSelectAlgorithm!(p.algorithm);
}

const here = path.dirname(fileURLToPath(import.meta.url));

/** One uniform scalar in [0, r), 32 bytes little-endian, written at out[at]. */
function randomScalar(out: Uint8Array, at: number) {
  const v = BigInt('0x' + randomBytes(32).toString('hex')) % BN254_R;
  let x = v;
  for (let k = 0; k < 32; k++) {
    out[at + k] = Number(x & 0xffn);
    x >>= 8n;
  }
}
function scalarSet(kind: 'random' | 'merkle', n: number): Uint8Array {
  const s = new Uint8Array(n * 32);
  for (let i = 0; i < n; i++) {
    if (kind === 'random') randomScalar(s, i * 32);
    else {
      const u = Math.random();
      if (u < 0.04) randomScalar(s, i * 32);
      else if (u < 0.52) s[i * 32] = 1;
    }
  }
  return s;
}

interface Curve {
  Fr: { random(): Uint8Array; e(n: number): Uint8Array };
  G1: { g: Uint8Array; toAffine(p: Uint8Array): Uint8Array; eq(a: Uint8Array, b: Uint8Array): boolean; batchApplyKey(b: Uint8Array, first: Uint8Array, inc: Uint8Array, inT: string, outT: string): Promise<Uint8Array> };
  G2: Curve['G1'];
  terminate(): Promise<void>;
}

/** q − a for a 32-byte LE Montgomery Fq element (0 stays 0). */
function negFq(a: Uint8Array): Uint8Array {
  let v = 0n;
  for (let k = 31; k >= 0; k--) v = (v << 8n) | BigInt(a[k]!);
  let x = v === 0n ? 0n : BN254_P - v;
  const out = new Uint8Array(32);
  for (let k = 0; k < 32; k++) {
    out[k] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}
// ffjavascript makes distinct bases slowly (2^17 G2 points: minutes under load), so the larger sizes
// repeat them; Pippenger's cost does not depend on the points' values.
const DISTINCT_G1 = 1 << 15;
const DISTINCT_G2 = 1 << 13;

const snarkjs = await loadSnarkjs();
const curve = (await snarkjs.curves.getCurveFromName('bn128')) as unknown as Curve;
const NMAX = 1 << TO;

interface Row {
  group: string;
  n: number;
  scalars: string;
  algorithm: string;
  cpuNsPerPointMedian: number;
  cpuNsPerPointMin: number;
  wallNsPerPointMedian: number;
  cpuMsMedian: number;
  speedupVsXyzz: number | null;
}
const rows: Row[] = [];
/** Per (group, n): the fixed-base table's build (wall ms, every CPU) and size. */
const tables: { group: string; n: number; buildWallMs: number; mib: number }[] = [];
const loadBefore = os.loadavg();

for (const group of GROUPS) {
  const G = curve[group];
  const point = group === 'G1' ? 64 : 128;
  const outLen = group === 'G1' ? 96 : 192;
  const t0 = Date.now();
  const distinct = Math.min(NMAX, group === 'G1' ? DISTINCT_G1 : DISTINCT_G2);
  const gens = new Uint8Array(distinct * point);
  const g = G.toAffine(G.g);
  for (let i = 0; i < distinct; i++) gens.set(g, i * point);
  const bases = new Uint8Array(NMAX * point);
  bases.set(await G.batchApplyKey(gens, curve.Fr.random(), curve.Fr.random(), 'affine', 'affine'));
  // beyond `distinct`: the same points again, every other copy negated (q − y per coordinate)
  for (let i = distinct; i < NMAX; i++) {
    const src = bases.subarray((i % distinct) * point, (i % distinct + 1) * point);
    bases.set(src, i * point);
    if (Math.floor(i / distinct) % 2) for (let c = point / 2; c < point; c += 32) bases.set(negFq(src.subarray(c, c + 32)), i * point + c);
  }
  console.error(`${group}: ${NMAX} bases (${distinct} distinct) in ${Date.now() - t0} ms`);
  const msm = (b: Uint8Array, s: Uint8Array, o: Uint8Array) => (group === 'G1' ? addon.msmG1!(b, s, o, 1) : addon.msmG2!(b, s, o, 1));

  for (let bits = FROM; bits <= TO; bits++) {
    const n = 1 << bits;
    const b = bases.subarray(0, n * point);
    let table: unknown = null;
    if (hasTables) {
      const t1 = performance.now();
      table = addon.msmTable!(group === 'G1' ? 1 : 2, b);
      const buildWallMs = performance.now() - t1;
      tables.push({ group, n, buildWallMs: Math.round(buildWallMs), mib: +(addon.msmTableBytes!(table) / 2 ** 20).toFixed(1) });
      console.error(`${group} 2^${bits} fixed-base table: ${Math.round(buildWallMs)} ms to build, ${tables[tables.length - 1]!.mib} MiB`);
    }
    const run = (a: string, sc: Uint8Array, o: Uint8Array) => (a.startsWith('fixed') ? addon.msmFixed!(table, sc, o, 1) : msm(b, sc, o));
    for (const kind of ['random', 'merkle'] as const) {
      const s = scalarSet(kind, n);
      const cpu: Record<string, number[]> = {};
      const wall: Record<string, number[]> = {};
      let reference: Uint8Array | null = null;
      for (const a of ALGORITHMS) {
        selectPath(a);
        run(a, s, new Uint8Array(outLen)); // warm-up
        cpu[a] = [];
        wall[a] = [];
      }
      for (let r = 0; r < ROUNDS; r++) {
        for (const a of ALGORITHMS) {
          selectPath(a);
          const out = new Uint8Array(outLen);
          const c0 = process.cpuUsage();
          const w0 = process.hrtime.bigint();
          run(a, s, out);
          const w = Number(process.hrtime.bigint() - w0);
          const c = process.cpuUsage(c0);
          cpu[a]!.push(((c.user + c.system) * 1000) / n);
          wall[a]!.push(w / n);
          if (!reference) reference = out;
          else if (!G.eq(reference, out)) throw new Error(`${group} n=${n} ${kind}: ${a} disagrees with ${ALGORITHMS[0]}`);
        }
      }
      const med = (v: number[]) => [...v].sort((x, y) => x - y)[v.length >> 1]!;
      const base = med(cpu.xyzz ?? [NaN]);
      for (const a of ALGORITHMS) {
        const m = med(cpu[a]!);
        rows.push({
          group,
          n,
          scalars: kind,
          algorithm: a,
          cpuNsPerPointMedian: Math.round(m),
          cpuNsPerPointMin: Math.round(Math.min(...cpu[a]!)),
          wallNsPerPointMedian: Math.round(med(wall[a]!)),
          cpuMsMedian: +((m * n) / 1e6).toFixed(2),
          speedupVsXyzz: Number.isFinite(base) ? +(base / m).toFixed(2) : null,
        });
        const r = rows[rows.length - 1]!;
        console.error(`${group} 2^${bits} ${kind.padEnd(6)} ${a.padEnd(8)} ${String(r.cpuNsPerPointMedian).padStart(6)} ns/pt CPU  ${r.cpuMsMedian} ms  ×${r.speedupVsXyzz}`);
      }
    }
  }
}
addon.msmSelectAlgorithm(defaultAlgorithm);
addon.msmSelectImpl!(defaultImpl);
await curve.terminate();

const cpus = os.cpus();
const report = {
  benchmark: 'msm',
  date: new Date().toISOString(),
  machine: {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpuCount: cpus.length,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    loadavgBefore: loadBefore.map((x) => +x.toFixed(2)),
    loadavgAfter: os.loadavg().map((x) => +x.toFixed(2)),
  },
  config: {
    sizes: `2^${FROM}..2^${TO}`,
    rounds: ROUNDS,
    threads: 1,
    scalars: { random: 'uniform in [0, r)', merkle: '48% zero, 48% one, 4% uniform' },
    statistic: 'median of rounds of process CPU time (user+sys) per point; speedup = xyzz CPU / algorithm CPU',
  },
  refract: { fieldMultiply: scalarImpl, paths: PATHS, default: `${defaultAlgorithm} on ${defaultImpl}` },
  results: rows,
  tables,
};
const outDir = path.join(here, 'results');
mkdirSync(outDir, { recursive: true });
writeFileSync(path.join(outDir, 'msm.json'), JSON.stringify(report, null, 2) + '\n');

const pad = (s: string, k: number) => s.padEnd(k);
console.log(`MSM on ${report.machine.cpuModel} ×${report.machine.cpuCount}, ${scalarImpl} multiply (glv+ifma: IFMA flush), 1 thread, median of ${ROUNDS} rounds (CPU ns per point)`);
console.log(`${pad('group', 6)}${pad('n', 8)}${pad('scalars', 9)}${ALGORITHMS.map((a) => pad(a, 11)).join('')}${defaultPath} vs xyzz`);
for (const group of GROUPS)
  for (let bits = FROM; bits <= TO; bits++)
    for (const kind of ['random', 'merkle']) {
      const rs = rows.filter((r) => r.group === group && r.n === 1 << bits && r.scalars === kind);
      const best = rs.find((r) => r.algorithm === defaultPath);
      console.log(`${pad(group, 6)}${pad(`2^${bits}`, 8)}${pad(kind, 9)}${rs.map((r) => pad(String(r.cpuNsPerPointMedian), 11)).join('')}×${best?.speedupVsXyzz}`);
    }
console.log(`\nwrote ${path.relative(process.cwd(), path.join(outDir, 'msm.json'))}`);
