/**
 * bench:prove-light — Refract's prover vs Light's own prover binary (`package/bin/prover-linux-x64`,
 * gnark v0.8.0: CLI 0.27.0's for its 18 keys, CLI 0.18.0's for the six keys only that release ships),
 * the same Light keys and the same requests, in one run:
 *
 * - restart: time until every converted key is loaded in the prover threads (tables included), and
 *   the resident memory with all keys loaded (VmHWM of this process vs Light's prover after it
 *   has served every circuit);
 * - per circuit, concurrency 1: p50 / p99 latency (Refract: LightProver.prove, witness vector to a
 *   verified proof; Light: HTTP POST /prove on 127.0.0.1, JSON included), with Refract's per-stage
 *   breakdown (witness, solve, h, msm, verify);
 * - both Light provers run side by side (their RSS is reported apiece);
 * - throughput at concurrency = cores for the `--throughput` circuits;
 * - the daemon as an operator runs it (unless `--no-daemon`): `refract start --no-ingest` with all 24
 *   keys, its RSS once it logs them loaded and its peak (VmHWM) after one POST /prove per circuit;
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
import { ensureLightKeys, LIGHT_TEST_KEYS, lightPackage018 } from '../test/helpers/lightKeys.ts';
import { startReferenceProver, type ReferenceProver } from '../test/helpers/lightReferenceProver.ts';
import { lightVerifyingKey, pinocchioProgram, verifyOnChain } from '../test/helpers/lightVerify.ts';
import { REPO_ROOT } from '../test/helpers/proverFixtures.ts';
import { startRefract, stopAll } from '../test/helpers/refractBin.ts';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '10' },
    circuits: { type: 'string' },
    throughput: { type: 'string', default: 'mainnet_inclusion_26_1' },
    'throughput-n': { type: 'string', default: '40' },
    keys: { type: 'string', default: LIGHT_TEST_KEYS },
    out: { type: 'string', default: path.join(REPO_ROOT, 'bench/results/prove-light.json') },
    'no-daemon': { type: 'boolean', default: false },
  },
});
const N = Number(values.n);
const cores = availableParallelism();
const keysDir = path.resolve(values.keys!);
const names = (list: string | undefined) => (list ?? '').split(',').filter(Boolean);
const circuitNames = names(values.circuits);
const throughputNames = names(values.throughput);
const selected = circuitNames.length ? LIGHT_KEYS.filter((k) => circuitNames.includes(k.name)) : LIGHT_KEYS;
const unknown = [...circuitNames, ...throughputNames].filter((n) => !LIGHT_KEYS.some((k) => k.name === n));
if (unknown.length) {
  process.stderr.write(`[bench:prove-light] unknown key name(s): ${unknown.join(', ')}; Light's keys: ${LIGHT_KEYS.map((k) => k.name).join(', ')}\n`);
  process.exit(2);
}

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

// Light's prover of the release that ships each key, started when a raced key needs it (the bodies
// are built before the clock starts)
const needs = new Set([...selected, ...LIGHT_KEYS.filter((k) => throughputNames.includes(k.name))].map((k) => k.pkg));
const refs: Partial<Record<string, ReferenceProver>> = {};
if (needs.has('0.27.0')) refs['0.27.0'] = await startReferenceProver(pkg);
if (needs.has('0.18.0')) refs['0.18.0'] = await startReferenceProver(lightPackage018(), '0.18.0');
// both answer /health before their keys are loaded and then load them on every core: measuring before
// they are idle would slow both provers' first circuits (seen: Refract's second circuit ×1.7 slower)
const lightIdleMs: Record<string, number> = {};
for (const [release, ref] of Object.entries(refs)) lightIdleMs[release] = await ref!.idle();
process.stderr.write(`[bench:prove-light] Light's provers idle (keys loaded) after ${JSON.stringify(lightIdleMs)} ms\n`);
const refProve = async (ref: ReferenceProver, body: string) => {
  const t = performance.now();
  const r = await fetch(`${ref.url}/prove`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`Light's prover ${ref.release}: ${r.status} ${text}`);
  return { ms: performance.now() - t, json: JSON.parse(text) };
};

const circuits: Record<string, unknown> = {};
const stageNames = ['witnessMs', 'solveMs', 'hMs', 'msmMs', 'verifyMs'] as const;
for (const k of selected) {
  const ref = refs[k.pkg]!;
  const inputs = Array.from({ length: N + 1 }, (_, i) => lightInputsFor(k, 100 + i));
  const bodies = inputs.map((x) => ref.body(toProverRequest(x)));
  const publics = lightWitness(inputs[0]!).publics;
  // the VK from the released 0.27.0 program (its 18 keys), else from the key (0.18.0's six: no known offset)
  const vk = lightVerifyingKey(so, keysDir, k.name, publics.length);
  const ours: number[] = [];
  const stages: Record<string, number[]> = Object.fromEntries(stageNames.map((s) => [s, []]));
  let oursValid = false;
  for (let i = 0; i <= N; i++) {
    const t = performance.now();
    const p = await prover.prove(inputs[i]!);
    const ms = performance.now() - t;
    if (i === 0) {
      oursValid = verifyOnChain(vk, p.compressedProof, publics);
      continue; // warm-up
    }
    ours.push(ms);
    for (const s of stageNames) stages[s]!.push(p.timings[s]);
  }
  const theirs: number[] = [];
  let theirsValid = false;
  for (let i = 0; i <= N; i++) {
    const r = await refProve(ref, bodies[i]!);
    if (i === 0) {
      theirsValid = verifyOnChain(vk, compressGnarkProof(r.json), publics);
      continue;
    }
    theirs.push(r.ms);
  }
  const row = {
    refract: { p50: pct(ours, 50), p99: pct(ours, 99), validOnChain: oursValid, stagesP50: Object.fromEntries(stageNames.map((s) => [s, pct(stages[s]!, 50)])) },
    light: { release: k.pkg, p50: pct(theirs, 50), p99: pct(theirs, 99), validOnChain: theirsValid },
    speedupP50: Number((pct(theirs, 50) / pct(ours, 50)).toFixed(2)),
  };
  circuits[k.name] = row;
  process.stderr.write(`[bench:prove-light] ${k.name.padEnd(24)} refract p50 ${row.refract.p50} p99 ${row.refract.p99} ms | light ${k.pkg} p50 ${row.light.p50} p99 ${row.light.p99} ms | ×${row.speedupP50}\n`);
}

// --- throughput at concurrency = cores
const throughput: Record<string, unknown> = {};
for (const name of throughputNames) {
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
  const ref = refs[k.pkg]!;
  const bodies = inputs.map((x) => ref.body(toProverRequest(x)));
  const theirs = await run((i) => refProve(ref, bodies[i]!));
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

const lightRss = refs['0.27.0']?.rss() ?? null;
const light018Rss = refs['0.18.0']?.rss() ?? null;
await Promise.all(Object.values(refs).map((r) => r!.stop()));
await prover.close();
const rssPeak = hwm('self');

// --- the daemon: `refract start` with every key, alone in its process (as Light's prover is in its)
const daemon = values['no-daemon'] ? null : await measureDaemon();
process.stderr.write(daemon ? `[bench:prove-light] refract start: ${daemon.keysLoaded} keys loaded in ${daemon.loadMs} ms (log), RSS ${daemon.rssLoadedMiB} MiB; peak ${daemon.peakRssMiB} MiB after one proof per circuit\n` : '');

/**
 * Starts `refract start --no-ingest` on the keys (all ready), waits for its "Light keys loaded" line,
 * reads its RSS, proves every key once over POST /prove (each answer must be 200) and reads its VmHWM.
 * @returns MiB and the load time the daemon logs; throws when a proof fails or the keys do not load in 60 s
 */
async function measureDaemon() {
  const d = await startRefract(['--keys', keysDir], { REFRACT_LIGHT_KEYS: 'true', REFRACT_LOG_LEVEL: 'info' });
  try {
    const pid = d.child.pid!;
    const rss = () => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/)![1]) * 1024;
    const deadline = Date.now() + 60_000;
    let line: { ms: number; circuits: string[] } | undefined;
    while (!line && Date.now() < deadline) {
      const l = d.stderr().split('\n').find((x) => x.includes('Light keys loaded into the prover threads'));
      if (l) line = JSON.parse(l);
      else await new Promise((r) => setTimeout(r, 100));
    }
    if (!line) throw new Error(`refract start did not load the Light keys in 60 s:\n${d.stderr()}`);
    const rssLoaded = rss();
    for (const k of LIGHT_KEYS) {
      const r = await fetch(`${d.url}/prove`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(toProverRequest(lightInputsFor(k, 900))) });
      if (r.status !== 200) throw new Error(`refract start POST /prove ${k.name}: ${r.status} ${await r.text()}`);
    }
    return { keysLoaded: line.circuits.length, loadMs: line.ms, rssLoadedMiB: mib(rssLoaded), peakRssMiB: mib(hwm(pid)) };
  } finally {
    await stopAll();
  }
}
type Row = { refract: { p50: number }; speedupP50: number };
const inc1 = circuits.mainnet_inclusion_26_1 as Row | undefined;
const inc8 = circuits.inclusion_26_8 as Row | undefined;
const speedups = Object.values(circuits as Record<string, Row>).map((r) => r.speedupP50);
const tp = Object.values(throughput as Record<string, { refractPerSec: number; lightPerSec: number }>);
const result = {
  date: new Date().toISOString(),
  machine: { cores, cpu: cpus()[0]?.model ?? null, avx512ifma: cpuHasIfma(), loadavgEnd: loadavg() },
  iterations: N,
  restart: { keys: LIGHT_KEYS.length, allKeysLoadedMs: Math.round(restartMs), warmMs: Math.round(loadMs), lightIdleAfterStartMs: lightIdleMs },
  memory: { daemon, refractRssAllKeysMiB: mib(rssAllKeys), refractRssBeforeKeysMiB: mib(rss0), refractPeakRssMiB: mib(rssPeak), lightPeakRssMiB: lightRss === null ? null : mib(lightRss), light018PeakRssMiB: light018Rss === null ? null : mib(light018Rss), note: "daemon: `refract start --no-ingest` alone with all 24 keys (RSS once loaded, peak after one proof per circuit); Refract: this bench process (prover threads with all 24 keys + the bench's own heap); Light: its 0.27.0 prover process after serving the circuits it loads (18 keys); light018: its 0.18.0 prover (15 v1 keys), which served the six keys only 0.18.0 ships" },
  circuits,
  throughput,
  targets: {
    inclusion1SpeedupAtLeast3x: inc1?.speedupP50 != null ? inc1.speedupP50 >= 3 : null,
    inclusion1P50Ms: inc1?.refract.p50 ?? null,
    inclusion8SpeedupAtLeast3x: inc8 ? inc8.speedupP50 >= 3 : null,
    throughputAtLeast3x: tp.length ? tp.every((t) => t.refractPerSec >= 3 * t.lightPerSec) : null,
    noCircuitSlowerThan2x: speedups.length ? Math.min(...speedups) >= 2 : null,
    slowestSpeedupP50: speedups.length ? Math.min(...speedups) : null,
    // the target is the peak, not the RSS right after the load: of the daemon alone (as Light's prover
    // is measured) and of this whole bench process (the prover threads through every proof, plus the
    // bench's own inputs)
    daemonPeakRssUnder960MB: daemon ? daemon.peakRssMiB * 2 ** 20 < 0.96e9 : null,
    peakRssUnder960MB: rssPeak < 0.96e9,
    allKeysLoadedRssUnder960MB: rssAllKeys < 0.96e9,
    restartUnder5s: restartMs <= 5000,
  },
};
mkdirSync(path.dirname(values.out!), { recursive: true });
writeFileSync(values.out!, JSON.stringify(result, null, 2) + '\n');
process.stderr.write(`[bench:prove-light] written ${values.out}\n${JSON.stringify(result.targets)}\n`);
