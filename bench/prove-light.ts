/**
 * bench:prove-light — Refract's prover vs Light's own prover binary (CLI 0.27.0
 * `package/bin/prover-linux-x64`, gnark v0.8.0), the same Light keys and the same requests, in one run:
 *
 * - restart: time until every converted key is loaded in the prover threads (tables included), and
 *   the resident memory with all keys loaded (VmHWM of this process vs Light's prover after it
 *   has served every circuit);
 * - per circuit, concurrency 1: p50 / p99 latency (Refract: LightProver.prove, witness vector to a
 *   verified proof; Light: HTTP POST /prove on 127.0.0.1, JSON included), with Refract's per-stage
 *   breakdown (witness, solve, h, msm, verify);
 * - throughput at concurrency = cores for the `--throughput` circuits;
 * - every proof of both is checked with the on-chain equation (noble) for the first request.
 *
 * Keys: `refract setup --light-keys` output in `--keys` (default .refract-test-keys/light-keys, the
 * tests' dir, fetched and converted when missing). Results: bench/results/prove-light.json.
 * Usage: npm run bench:prove-light -- [--n 10] [--circuits a,b] [--throughput mainnet_inclusion_26_1]
 *   [--throughput-n 40] [--out bench/results/prove-light.json]
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { LIGHT_KEYS, lightWitness } from '../src/prover/keys/lightKeys.ts';
import { LightProver } from '../src/prover/run/lightProver.ts';
import { compressGnarkProof } from '../src/prover/engine/proofEncoding.ts';
import { toProverRequest } from '../src/prover/engine/witness.ts';
import { lightInputsFor } from '../test/helpers/lightInputs.ts';
import { ensureLightKeys, LIGHT_TEST_KEYS } from '../test/helpers/lightKeys.ts';
import { startReferenceProver } from '../test/helpers/lightReferenceProver.ts';
import { pinocchioProgram, verifyOnChain, vkFromProgram } from '../test/helpers/lightVerify.ts';
import { REPO_ROOT } from '../test/helpers/proverFixtures.ts';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '10' },
    circuits: { type: 'string' },
    throughput: { type: 'string', default: 'mainnet_inclusion_26_1' },
    'throughput-n': { type: 'string', default: '40' },
    keys: { type: 'string', default: LIGHT_TEST_KEYS },
    out: { type: 'string', default: path.join(REPO_ROOT, 'bench/results/prove-light.json') },
  },
});
const N = Number(values.n);
const cores = availableParallelism();
const keysDir = path.resolve(values.keys!);
const selected = values.circuits ? LIGHT_KEYS.filter((k) => values.circuits!.split(',').includes(k.name)) : LIGHT_KEYS;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Number(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!.toFixed(1));
};
const hwm = (pid: number | 'self') => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmHWM:\s+(\d+) kB/)![1]) * 1024;
const rssNow = () => Number(readFileSync('/proc/self/status', 'utf8').match(/VmRSS:\s+(\d+) kB/)![1]) * 1024;
const mib = (b: number) => Number((b / 2 ** 20).toFixed(1));

process.stderr.write(`[bench:prove-light] keys ${keysDir}; ${cores} cores; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
const pkg = await ensureLightKeys();
const so = pinocchioProgram(pkg);

// --- restart: all converted keys into the threads
const rss0 = rssNow();
const t0 = performance.now();
const prover = new LightProver({ keysDir, size: cores });
const loadMs = await prover.warm(LIGHT_KEYS);
const restartMs = performance.now() - t0;
const rssAllKeys = rssNow();
process.stderr.write(`[bench:prove-light] all ${LIGHT_KEYS.length} keys loaded in ${restartMs.toFixed(0)} ms; RSS ${mib(rssAllKeys)} MiB (before ${mib(rss0)})\n`);

const ref = await startReferenceProver(pkg);
const refProve = async (body: string) => {
  const t = performance.now();
  const r = await fetch(`${ref.url}/prove`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`Light's prover: ${r.status} ${text}`);
  return { ms: performance.now() - t, json: JSON.parse(text) };
};

const circuits: Record<string, unknown> = {};
const stageNames = ['witnessMs', 'solveMs', 'hMs', 'msmMs', 'verifyMs'] as const;
for (const k of selected) {
  const inputs = Array.from({ length: N + 1 }, (_, i) => lightInputsFor(k, 100 + i));
  const bodies = inputs.map((x) => JSON.stringify(toProverRequest(x)));
  const publics = lightWitness(inputs[0]!).publics;
  const ours: number[] = [];
  const stages: Record<string, number[]> = Object.fromEntries(stageNames.map((s) => [s, []]));
  let oursValid: boolean | 'key VK (addon)' = false;
  for (let i = 0; i <= N; i++) {
    const t = performance.now();
    const p = await prover.prove(inputs[i]!);
    const ms = performance.now() - t;
    if (i === 0) {
      // 0.18.0 keys: no known offset in the program; every proof is checked against the key's VK in the addon
      oursValid = k.pkg === '0.27.0' ? verifyOnChain(vkFromProgram(so, k.name, publics.length + 1), p.compressedProof, publics) : 'key VK (addon)';
      continue; // warm-up
    }
    ours.push(ms);
    for (const s of stageNames) stages[s]!.push(p.timings[s]);
  }
  let theirs: number[] | null = null;
  let theirsValid: boolean | null = null;
  if (k.pkg === '0.27.0') {
    theirs = [];
    for (let i = 0; i <= N; i++) {
      const r = await refProve(bodies[i]!);
      if (i === 0) {
        theirsValid = verifyOnChain(vkFromProgram(so, k.name, publics.length + 1), compressGnarkProof(r.json), publics);
        continue;
      }
      theirs.push(r.ms);
    }
  }
  const row = {
    refract: { p50: pct(ours, 50), p99: pct(ours, 99), validOnChain: oursValid, stagesP50: Object.fromEntries(stageNames.map((s) => [s, pct(stages[s]!, 50)])) },
    light: theirs ? { p50: pct(theirs, 50), p99: pct(theirs, 99), validOnChain: theirsValid } : null,
    speedupP50: theirs ? Number((pct(theirs, 50) / pct(ours, 50)).toFixed(2)) : null,
  };
  circuits[k.name] = row;
  process.stderr.write(`[bench:prove-light] ${k.name.padEnd(24)} refract p50 ${row.refract.p50} p99 ${row.refract.p99} ms | light ${row.light ? `p50 ${row.light.p50} p99 ${row.light.p99} ms | ×${row.speedupP50}` : '—'}\n`);
}

// --- throughput at concurrency = cores
const throughput: Record<string, unknown> = {};
for (const name of values.throughput!.split(',').filter(Boolean)) {
  const k = LIGHT_KEYS.find((x) => x.name === name)!;
  const total = Number(values['throughput-n']);
  const inputs = Array.from({ length: total }, (_, i) => lightInputsFor(k, 500 + i));
  const run = async (f: (i: number) => Promise<unknown>) => {
    let next = 0;
    const t = performance.now();
    await Promise.all(Array.from({ length: cores }, async () => {
      while (next < total) await f(next++);
    }));
    return Number((total / ((performance.now() - t) / 1000)).toFixed(2));
  };
  const ours = await run((i) => prover.prove(inputs[i]!));
  const theirs = k.pkg === '0.27.0' ? await run((i) => refProve(JSON.stringify(toProverRequest(inputs[i]!)))) : null;
  throughput[name] = { concurrency: cores, requests: total, refractPerSec: ours, lightPerSec: theirs };
  process.stderr.write(`[bench:prove-light] throughput ${name}: refract ${ours}/s, light ${theirs}/s at concurrency ${cores}\n`);
}

/** True when the CPU has AVX-512 IFMA (the MSM's fastest path uses it); null where /proc/cpuinfo cannot be read. */
function cpuHasIfma(): boolean | null {
  try {
    return /\bavx512ifma\b/.test(readFileSync('/proc/cpuinfo', 'utf8'));
  } catch {
    return null;
  }
}

const lightRss = ref.rss();
await ref.stop();
await prover.close();
const rssPeak = hwm('self');
const inc1 = circuits.mainnet_inclusion_26_1 as { refract: { p50: number }; light: { p50: number } | null; speedupP50: number | null } | undefined;
const result = {
  date: new Date().toISOString(),
  machine: { cores, cpu: cpus()[0]?.model ?? null, avx512ifma: cpuHasIfma(), loadavgEnd: loadavg() },
  iterations: N,
  restart: { keys: LIGHT_KEYS.length, allKeysLoadedMs: Math.round(restartMs), warmMs: Math.round(loadMs) },
  memory: { refractRssAllKeysMiB: mib(rssAllKeys), refractRssBeforeKeysMiB: mib(rss0), refractPeakRssMiB: mib(rssPeak), lightPeakRssMiB: mib(lightRss), note: "Refract: this bench process (prover threads with all 24 keys + the bench's own heap); Light: its prover process after serving the 18 circuits it loads" },
  circuits,
  throughput,
  targets: {
    inclusion1SpeedupAtLeast3x: inc1?.speedupP50 != null ? inc1.speedupP50 >= 3 : null,
    inclusion1P50Ms: inc1?.refract.p50 ?? null,
    allKeysResidentUnder960MB: rssAllKeys < 0.96e9,
    restartUnder5s: restartMs <= 5000,
  },
};
mkdirSync(path.dirname(values.out!), { recursive: true });
writeFileSync(values.out!, JSON.stringify(result, null, 2) + '\n');
process.stderr.write(`[bench:prove-light] written ${values.out}\n${JSON.stringify(result.targets)}\n`);
