/**
 * Poseidon benchmark: µs/hash and hashes/s on one core, all candidates in the same run.
 *
 *   node --import tsx bench/poseidon.ts [--n 20000] [--rounds 3]
 *
 * Candidates: circomlibjs buildPoseidon (`F.toObject(p([a, b]))`), poseidon-lite `poseidon2([a, b])`,
 * @lightprotocol/hasher.rs `poseidonHash([s, s])`, and Refract's src/merkle/poseidon.ts (native single
 * call, native batch call (eight-lane AVX-512 IFMA kernel where the CPU has it, and the scalar kernel
 * beside it), Poseidon(3), Poseidon(6), the portable-C multiply, and the circomlibjs
 * fallback with the byte API). Each round runs every candidate once (interleaved, so load changes
 * hit all of them alike) after a warm-up; the table reports the median round, both as wall-clock
 * time and as process CPU time (user + sys, which is less inflated when the machine is shared;
 * ratios use CPU time). Writes bench/results/poseidon.json with machine info.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';

import * as lite from 'poseidon-lite';
import { WasmFactory } from '@lightprotocol/hasher.rs';

import {
  BN254_R,
  createCircomlibjsBackend,
  nativeAddon,
  poseidon,
  poseidon2,
  poseidon2Batch,
  poseidon3,
  poseidonBackend,
} from '../src/merkle/poseidon.ts';

const args = process.argv.slice(2);
const argNum = (name: string, def: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const N = argNum('n', 20_000);
const ROUNDS = argNum('rounds', 3);
const WARMUP = 2_000;

const here = path.dirname(fileURLToPath(import.meta.url));

// ---- inputs: ~254-bit random field elements, as bytes, bigints and decimal strings
const POOL = 1024;
const feBytes: Uint8Array[] = [];
const feBig: bigint[] = [];
for (let i = 0; i < POOL; i++) {
  const v = BigInt('0x' + randomBytes(32).toString('hex')) % BN254_R;
  feBig.push(v);
  feBytes.push(Uint8Array.from(Buffer.from(v.toString(16).padStart(64, '0'), 'hex')));
}
const feStr = feBig.map((v) => v.toString());
const pairs = new Uint8Array(64 * N);
for (let i = 0; i < 2 * N; i++) pairs.set(feBytes[i % POOL]!, 32 * i);

// ---- candidates
interface Candidate {
  name: string;
  call: string;
  arity: number;
  /** Runs `n` hashes; returns something derived from the output so the work is not elided. */
  run(n: number): unknown;
}

const spec: string = 'circomlibjs';
const { buildPoseidon } = (await import(spec)) as { buildPoseidon: () => Promise<any> };
const circom = await buildPoseidon();
const hasher = await WasmFactory.getInstance();
const fallback = await createCircomlibjsBackend();
const lite2 = (lite as unknown as Record<string, (x: bigint[]) => bigint>).poseidon2!;

let sink = 0;
const candidates: Candidate[] = [
  {
    name: 'circomlibjs 0.1.7',
    call: 'F.toObject(p([a, b])) (bigint in/out)',
    arity: 2,
    run(n) {
      for (let i = 0; i < n; i++) sink ^= Number(circom.F.toObject(circom([feBig[i % POOL], feBig[(i + 1) % POOL]])) & 1n);
    },
  },
  {
    name: 'poseidon-lite 0.3.0',
    call: 'poseidon2([a, b]) (bigint in/out)',
    arity: 2,
    run(n) {
      for (let i = 0; i < n; i++) sink ^= Number(lite2([feBig[i % POOL]!, feBig[(i + 1) % POOL]!]) & 1n);
    },
  },
  {
    name: '@lightprotocol/hasher.rs 0.2.1',
    call: 'poseidonHash([s, s]) (decimal strings in, bytes out)',
    arity: 2,
    run(n) {
      for (let i = 0; i < n; i++) sink ^= hasher.poseidonHash([feStr[i % POOL]!, feStr[(i + 1) % POOL]!])[31]!;
    },
  },
  {
    name: `refract ${poseidonBackend} single`,
    call: 'poseidon2(a, b) (32 B BE in/out)',
    arity: 2,
    run(n) {
      for (let i = 0; i < n; i++) sink ^= poseidon2(feBytes[i % POOL]!, feBytes[(i + 1) % POOL]!)[31]!;
    },
  },
  {
    name: `refract ${poseidonBackend} batch`,
    call: 'poseidon2Batch(n × 64 B) → n × 32 B',
    arity: 2,
    run(n) {
      sink ^= poseidon2Batch(n === N ? pairs : pairs.subarray(0, 64 * n))[31]!;
    },
  },
  {
    name: `refract ${poseidonBackend} Poseidon(3)`,
    call: 'poseidon3(a, b, c)',
    arity: 3,
    run(n) {
      for (let i = 0; i < n; i++) sink ^= poseidon3(feBytes[i % POOL]!, feBytes[(i + 1) % POOL]!, feBytes[(i + 2) % POOL]!)[31]!;
    },
  },
  {
    name: `refract ${poseidonBackend} Poseidon(6)`,
    call: 'poseidon([a, b, c, d, e, f])',
    arity: 6,
    run(n) {
      for (let i = 0; i < n; i++) {
        const j = i % (POOL - 6);
        sink ^= poseidon([feBytes[j]!, feBytes[j + 1]!, feBytes[j + 2]!, feBytes[j + 3]!, feBytes[j + 4]!, feBytes[j + 5]!])[31]!;
      }
    },
  },
  {
    name: 'refract fallback (circomlibjs, byte API)',
    call: 'backend.hash2(a, b) (32 B BE in/out)',
    arity: 2,
    run(n) {
      for (let i = 0; i < n; i++) sink ^= fallback.hash2(feBytes[i % POOL]!, feBytes[(i + 1) % POOL]!)[31]!;
    },
  },
];

if (nativeAddon && nativeAddon.impl() === 'adx') {
  const addon = nativeAddon;
  candidates.push({
    name: 'refract native single, portable C multiply',
    call: "poseidon2(a, b) with selectImpl('c')",
    arity: 2,
    run(n) {
      addon.selectImpl('c');
      try {
        for (let i = 0; i < n; i++) sink ^= poseidon2(feBytes[i % POOL]!, feBytes[(i + 1) % POOL]!)[31]!;
      } finally {
        addon.selectImpl('adx');
      }
    },
  });
}

if (nativeAddon?.batchImpl?.() === 'ifma') {
  const addon = nativeAddon;
  candidates.push({
    name: 'refract native batch, scalar kernel',
    call: "poseidon2Batch(n × 64 B) with selectBatchImpl('scalar') (one tuple at a time)",
    arity: 2,
    run(n) {
      addon.selectBatchImpl!('scalar');
      try {
        sink ^= poseidon2Batch(n === N ? pairs : pairs.subarray(0, 64 * n))[31]!;
      } finally {
        addon.selectBatchImpl!('ifma');
      }
    },
  });
}

// ---- sanity: every candidate computes the same poseidon2([1, 2])
{
  const one = new Uint8Array(32);
  one[31] = 1;
  const two = new Uint8Array(32);
  two[31] = 2;
  const want = '115cc0f5e7d690413df64c6b9662e9cf2a3617f2743245519e19607a4417189a';
  const got = {
    circomlibjs: (circom.F.toObject(circom([1n, 2n])) as bigint).toString(16).padStart(64, '0'),
    lite: lite2([1n, 2n]).toString(16).padStart(64, '0'),
    hasher: Buffer.from(hasher.poseidonHash(['1', '2'])).toString('hex'),
    refract: Buffer.from(poseidon2(one, two)).toString('hex'),
    fallback: Buffer.from(fallback.hash2(one, two)).toString('hex'),
  };
  for (const [k, v] of Object.entries(got)) if (v !== want) throw new Error(`${k} poseidon2([1,2]) = ${v}, want ${want}`);
}

// ---- measure
const loadBefore = os.loadavg();
const samples = new Map<string, number[]>(candidates.map((c) => [c.name, []]));
const cpuSamples = new Map<string, number[]>(candidates.map((c) => [c.name, []]));
for (const c of candidates) c.run(WARMUP);
for (let r = 0; r < ROUNDS; r++) {
  for (const c of candidates) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    c.run(N);
    const dt = Number(process.hrtime.bigint() - t0) / 1e3; // µs
    const cpu = process.cpuUsage(c0);
    samples.get(c.name)!.push(dt / N);
    cpuSamples.get(c.name)!.push((cpu.user + cpu.system) / N);
  }
}
const loadAfter = os.loadavg();

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const ours = median(cpuSamples.get(`refract ${poseidonBackend} single`)!);
const oursBatch = median(cpuSamples.get(`refract ${poseidonBackend} batch`)!);

const results = candidates.map((c) => {
  const xs = samples.get(c.name)!;
  const cs = cpuSamples.get(c.name)!;
  const us = median(xs);
  const cpu = median(cs);
  return {
    name: c.name,
    call: c.call,
    arity: c.arity,
    hashesPerRound: N,
    rounds: ROUNDS,
    wallUsPerHashMedian: +us.toFixed(3),
    wallUsPerHashMin: +Math.min(...xs).toFixed(3),
    wallUsPerHashAll: xs.map((x) => +x.toFixed(3)),
    cpuUsPerHashMedian: +cpu.toFixed(3),
    cpuUsPerHashMin: +Math.min(...cs).toFixed(3),
    cpuUsPerHashAll: cs.map((x) => +x.toFixed(3)),
    hashesPerSecWall: Math.round(1e6 / us),
    hashesPerCpuSec: Math.round(1e6 / cpu),
    slowerThanOursSingle: c.arity === 2 ? +(cpu / ours).toFixed(2) : null,
    slowerThanOursBatch: c.arity === 2 ? +(cpu / oursBatch).toFixed(2) : null,
  };
});

const cpus = os.cpus();
const report = {
  benchmark: 'poseidon',
  date: new Date().toISOString(),
  machine: {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpuCount: cpus.length,
    cpuMHz: cpus[0]?.speed ?? null,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    totalMemGB: +(os.totalmem() / 2 ** 30).toFixed(1),
    loadavgBefore: loadBefore.map((x) => +x.toFixed(2)),
    loadavgAfter: loadAfter.map((x) => +x.toFixed(2)),
  },
  config: {
    hashesPerRound: N,
    rounds: ROUNDS,
    warmup: WARMUP,
    statistic: 'median of rounds; wall clock and process CPU time (user+sys); one JS thread; ratios use CPU time',
  },
  refract: { backend: poseidonBackend, nativeMultiply: nativeAddon?.impl() ?? null, batchKernel: nativeAddon?.batchImpl?.() ?? null },
  results,
  sink,
};

const outDir = path.join(here, 'results');
mkdirSync(outDir, { recursive: true });
writeFileSync(path.join(outDir, 'poseidon.json'), JSON.stringify(report, null, 2) + '\n');

const pad = (s: string, n: number) => s.padEnd(n);
console.log(`Poseidon on ${report.machine.cpuModel} ×${report.machine.cpuCount}, ${process.version}, load ${loadBefore.map((x) => x.toFixed(2)).join('/')} → ${loadAfter.map((x) => x.toFixed(2)).join('/')}`);
console.log(`${N} hashes × ${ROUNDS} rounds per candidate; median round (min); ratios = CPU µs / ours\n`);
console.log(
  `${pad('candidate', 44)} ${pad('CPU µs/hash', 16)} ${pad('wall µs/hash', 16)} ${pad('hashes/CPU-s', 13)} ${pad('× ours 1', 9)} × ours batch`,
);
for (const r of results) {
  console.log(
    `${pad(r.name, 44)} ${pad(`${r.cpuUsPerHashMedian.toFixed(2)} (${r.cpuUsPerHashMin.toFixed(2)})`, 16)} ${pad(`${r.wallUsPerHashMedian.toFixed(2)} (${r.wallUsPerHashMin.toFixed(2)})`, 16)} ${pad(String(r.hashesPerCpuSec), 13)} ${pad(r.slowerThanOursSingle?.toFixed(2) ?? '-', 9)} ${r.slowerThanOursBatch?.toFixed(2) ?? '-'}`,
  );
}
console.log(`\nwrote ${path.relative(process.cwd(), path.join(outDir, 'poseidon.json'))}`);
