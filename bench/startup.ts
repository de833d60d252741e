/**
 * bench:startup — what starting the `refract` binary costs, in CPU seconds of its process (all its
 * threads: /proc/<pid>/stat utime + stime) and wall time, the way the tests and an operator start it:
 *
 * - `api`: `refract start --no-ingest --no-prover` until GET /health answers;
 * - `indexing`: `refract start --no-prover --no-simulator --rpc-url <a simulator>` until getIndexerSlot ≥ 5
 *   (the simulator, `refract simulate --slot-ms 100`, is started first and not counted).
 *
 * Each case runs `--n` times (default 6), one after the other (the api case before the simulator
 * starts); p50 and min of each. The test suite
 * starts the binary a few hundred times and is CPU-bound, so this is CI time as well as start time.
 * With `--baseline <checkout>` (another checkout with its node_modules and native build), every run is
 * made by both binaries in turn, this checkout's first, and the JSON holds both and their ratios.
 * Results: bench/results/startup.json (`--out`).
 * Usage: npm run bench:startup -- [--n 6] [--baseline ../other-checkout] [--out bench/results/startup.json]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
import { tempDir } from '../test/helpers/photon.ts';
import { childEnv, freePort, processCpuSeconds } from '../test/helpers/refractBin.ts';
import { jsonRpc, sleep } from '../test/helpers/jsonRpc.ts';
import { REPO_ROOT } from '../test/helpers/proverFixtures.ts';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '6' },
    baseline: { type: 'string' },
    out: { type: 'string', default: path.join(REPO_ROOT, 'bench/results/startup.json') },
  },
});
const N = Number(values.n);

const bins: Record<string, string> = { head: REFRACT_BIN, ...(values.baseline ? { baseline: path.resolve(values.baseline, 'bin/refract.mjs') } : {}) };

/** Spawns a binary (default this checkout's) with JSON logs and no REFRACT_ settings of this shell. */
function refract(args: string[], bin = REFRACT_BIN): ChildProcess {
  const env = childEnv({ REFRACT_LIGHT_KEYS: 'false' });
  return spawn(process.execPath, [bin, ...args], { stdio: 'ignore', env, cwd: tempDir('refract-startup-cwd-') });
}

/** Polls `ready` every 20 ms until it is true (60 s at most); then the child's CPU and the wall ms since `t0`. */
async function until(child: ChildProcess, t0: number, ready: () => Promise<boolean>): Promise<{ cpuS: number; wallMs: number }> {
  const deadline = Date.now() + 60_000;
  while (!(await ready().catch(() => false))) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`refract did not get ready (exit ${child.exitCode})`);
    await sleep(20);
  }
  return { cpuS: processCpuSeconds(child.pid!), wallMs: Math.round(performance.now() - t0) };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

async function api(bin: string): Promise<{ cpuS: number; wallMs: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const d = refract(['start', '--no-ingest', '--no-prover', '--db', tempDir('refract-startup-'), '--host', '127.0.0.1', '--port', String(port)], bin);
  try {
    return await until(d, t0, async () => (await fetch(`http://127.0.0.1:${port}/health`)).ok);
  } finally {
    await stop(d);
  }
}

async function indexing(bin: string, simPort: number): Promise<{ cpuS: number; wallMs: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const d = refract(['start', '--no-prover', '--no-simulator', '--rpc-url', `http://127.0.0.1:${simPort}`, '--db', tempDir('refract-startup-'), '--host', '127.0.0.1', '--port', String(port)], bin);
  try {
    return await until(d, t0, async () => {
      const s = (await jsonRpc(port, 'getIndexerSlot')).result;
      return typeof s === 'number' && s >= 5;
    });
  } finally {
    await stop(d);
  }
}

const summary = (xs: { cpuS: number; wallMs: number }[]) => {
  const p50 = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor((v.length - 1) / 2)]!;
  const cpu = xs.map((x) => x.cpuS);
  const wall = xs.map((x) => x.wallMs);
  return { cpuSecondsP50: p50(cpu), cpuSecondsMin: Math.min(...cpu), wallMsP50: p50(wall), wallMsMin: Math.min(...wall), runs: xs };
};

// the api case first, alone on the machine; then the simulator (its CPU shares the cores with the
// daemon, as in the tests that index it)
type Run = { cpuS: number; wallMs: number };
const cases: Record<string, Record<string, Run[]>> = Object.fromEntries(Object.keys(bins).map((b) => [b, { api: [], indexing: [] }]));
for (let i = 0; i < N; i++) for (const [b, bin] of Object.entries(bins)) cases[b]!.api!.push(await api(bin));
const simPort = await freePort();
const sim = refract(['simulate', '--port', String(simPort), '--slot-ms', '100']);
try {
  await until(sim, performance.now(), async () => typeof (await jsonRpc(simPort, 'getSlot')).result === 'number');
  for (let i = 0; i < N; i++) for (const [b, bin] of Object.entries(bins)) cases[b]!.indexing!.push(await indexing(bin, simPort));
  const of = (b: string) => ({ bin: bins[b], api: summary(cases[b]!.api!), indexing: summary(cases[b]!.indexing!) });
  const head = of('head');
  const base = values.baseline ? of('baseline') : null;
  const ratio = (k: 'api' | 'indexing') => (base ? { cpu: Number((head[k].cpuSecondsP50 / base[k].cpuSecondsP50).toFixed(3)), wall: Number((head[k].wallMsP50 / base[k].wallMsP50).toFixed(3)) } : null);
  const result = {
    date: new Date().toISOString(),
    machine: { cores: cpus().length, cpu: cpus()[0]?.model ?? null, loadavgEnd: loadavg() },
    node: process.version,
    iterations: N,
    head,
    baseline: base,
    headOverBaselineP50: base ? { api: ratio('api'), indexing: ratio('indexing') } : null,
  };
  mkdirSync(path.dirname(values.out!), { recursive: true });
  writeFileSync(values.out!, JSON.stringify(result, null, 2) + '\n');
  for (const [b, r] of Object.entries({ head, ...(base ? { baseline: base } : {}) })) {
    process.stderr.write(`[bench:startup] ${b}: api p50 ${r.api.cpuSecondsP50} CPU-s, ${r.api.wallMsP50} ms | indexing to slot 5 p50 ${r.indexing.cpuSecondsP50} CPU-s, ${r.indexing.wallMsP50} ms\n`);
  }
  process.stderr.write(`[bench:startup] written ${values.out}${base ? `; head/baseline ${JSON.stringify(result.headOverBaselineP50)}` : ''}\n`);
} finally {
  await stop(sim);
}
