/**
 * Catch-up benchmark: `refract start` indexing a node that is far ahead (the daemon catches up in
 * full batches), first alone, then while autocannon sends a steady read load. Variants, in
 * alternating rounds: the indexer on its own thread (src/ingest/threads/ingestThread.ts; the default on ≤ 2
 * cores), the same with batches prepared on a second thread (src/ingest/threads/prepareThread.ts; the
 * default on > 2 cores), and the loop on the main thread (`ingestThread: false`). Per variant: the
 * catch-up rate alone and under load (outputs and blocks indexed per second, from the daemon's own
 * /metrics) and the API's latency (p50, p99, max) and throughput.
 *
 * Why: indexing a batch is one synchronous write transaction; on the main thread every request that
 * arrives meanwhile waits for it.
 *
 * The Solana node is this process: it serves `--blocks` blocks of generated Light transactions
 * (LightTxGenerator, built and serialised once before the rounds, so serving them costs next to
 * nothing) and reports the last one as the tip, so the daemon starts far behind. Each round: a
 * fresh daemon child on an empty store; warm-up, `--seconds` of catching up alone, then `--seconds`
 * of catching up under a load of `--rate` req/s
 * (getCompressedBalanceByOwner and getCompressedAccountsByOwner (limit 10) for the generator's owners,
 * getIndexerSlot). Results go to bench/results/catchup.json.
 *
 * Usage: npm run bench:catchup [-- --rounds 2 --seconds 10 --rate 1000 --connections 16 --blocks 6000]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import bs58 from 'bs58';
import { LightTxGenerator } from '../src/sim/generator.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '10' },
    rate: { type: 'string', default: '1000' },
    connections: { type: 'string', default: '16' },
    'txs-per-block': { type: 'string', default: '30' },
    blocks: { type: 'string', default: '6000' },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const rate = Number(values.rate);
const connections = Number(values.connections);
const txsPerBlock = Number(values['txs-per-block']);
const blockCount = Number(values.blocks);
const root = new URL('..', import.meta.url).pathname;
const simPort = 18899;
const apiPort = 18885;
const api = `http://127.0.0.1:${apiPort}`;

// The node: blocks 1..blockCount, generated once; the tip is the last one.
const gen = new LightTxGenerator({ owners: 200, seed: 1 });
const blockTexts: string[] = [];
for (let slot = 1; slot <= blockCount; slot++) blockTexts.push(JSON.stringify(gen.block(slot, txsPerBlock).json));
const genesis = bs58.encode(Buffer.alloc(32, 7));
const node = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    const { id, method, params } = JSON.parse(body) as { id: number; method: string; params?: unknown[] };
    const reply = (result: string) => res.writeHead(200, { 'content-type': 'application/json' }).end(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`);
    if (method === 'getSlot') reply(String(blockCount));
    else if (method === 'getFirstAvailableBlock') reply('1');
    else if (method === 'getGenesisHash') reply(JSON.stringify(genesis));
    else if (method === 'getBlock') {
      const text = blockTexts[Number(params?.[0]) - 1];
      if (text) reply(text);
      else res.writeHead(200).end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32004, message: 'Block not available' } }));
    } else res.writeHead(200).end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } }));
  });
});
await new Promise<void>((r) => node.listen(simPort, '127.0.0.1', r));
console.error(`node: ${blockCount} blocks of ${txsPerBlock} transactions ready`);
const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
const bodies: string[] = [];
for (let i = 0; i < 200; i++) {
  const owner = bs58.encode(gen.owner(i));
  bodies.push(rpc('getCompressedBalanceByOwner', { owner }), rpc('getCompressedAccountsByOwner', { owner, limit: 10 }));
  if (i % 10 === 0) bodies.push(rpc('getIndexerSlot', {}));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const child = (args: string[]): ChildProcess => spawn(process.execPath, [join(root, 'bin/refract.mjs'), ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
async function metrics(): Promise<Record<string, number>> {
  const text = await (await fetch(`${api}/metrics`)).text();
  const out: Record<string, number> = {};
  // The event-loop delay gauges cover the time since the previous scrape.
  for (const name of ['refract_indexer_slot', 'refract_ingest_outputs_total', 'refract_ingest_blocks_total', 'refract_nodejs_eventloop_lag_p99_seconds', 'refract_nodejs_eventloop_lag_max_seconds']) {
    const m = new RegExp(`^${name} ([0-9.e+]+)$`, 'm').exec(text);
    out[name] = m ? Number(m[1]) : NaN;
  }
  return out;
}
function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** The daemon configurations compared. */
const VARIANTS = {
  /** The default on a machine of ≤ 2 cores. */
  thread: { ingestThread: true, prepareThread: false },
  /** The default on > 2 cores: batches prepared on a second thread. */
  threadPrepare: { ingestThread: true, prepareThread: true },
  /** The loop on the API's thread. */
  main: { ingestThread: false, prepareThread: false },
} as const;
type Variant = keyof typeof VARIANTS;

/** Outputs and blocks indexed per second between two scrapes `elapsed` seconds apart. */
const rates = (m0: Record<string, number>, m1: Record<string, number>, elapsed: number) => ({
  outputsPerSec: Math.round((m1.refract_ingest_outputs_total! - m0.refract_ingest_outputs_total!) / elapsed),
  blocksPerSec: Math.round((m1.refract_ingest_blocks_total! - m0.refract_ingest_blocks_total!) / elapsed),
});

async function round(variant: Variant) {
  const dir = mkdtempSync(join(os.tmpdir(), 'refract-catchup-'));
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ rateLimit: false, logLevel: 'warn', prover: false, ...VARIANTS[variant] }));
  const daemon = child(['start', '--db', join(dir, 'data'), '--rpc-url', `http://127.0.0.1:${simPort}`, '--port', String(apiPort), '--host', '127.0.0.1', '--config', config, '--no-simulator']);
  for (let i = 0; i < 100; i++) {
    try {
      if ((await metrics()).refract_indexer_slot! > 0) break;
    } catch {}
    await sleep(200);
  }
  await sleep(2000); // warm-up: the daemon is indexing full batches by now
  // 1. Catching up alone.
  const i0 = await metrics();
  let t0 = performance.now();
  let c0 = cpuSeconds(daemon.pid!);
  await sleep(seconds * 1000);
  let elapsed = (performance.now() - t0) / 1000;
  const idle = { ...rates(i0, await metrics(), elapsed), daemonCpu: +((cpuSeconds(daemon.pid!) - c0) / elapsed).toFixed(2) };
  // 2. Catching up under the read load.
  const m0 = await metrics();
  t0 = performance.now();
  c0 = cpuSeconds(daemon.pid!);
  const r = await autocannon({
    url: `${api}/`,
    connections,
    overallRate: rate,
    duration: seconds,
    requests: bodies.map((body) => ({ method: 'POST' as const, headers: { 'content-type': 'application/json' }, body })),
  });
  elapsed = (performance.now() - t0) / 1000;
  const c1 = cpuSeconds(daemon.pid!);
  const m1 = await metrics();
  daemon.kill('SIGTERM');
  await new Promise((res) => daemon.once('exit', res));
  rmSync(dir, { recursive: true, force: true });
  return {
    variant,
    idle,
    underLoad: {
      reqPerSec: Math.round(r.requests.average),
      p50Ms: r.latency.p50,
      p99Ms: r.latency.p99,
      maxMs: r.latency.max,
      non2xx: r.non2xx,
      errors: r.errors,
      ...rates(m0, m1, elapsed),
      // The API thread's event loop during the load (perf_hooks, 10 ms resolution).
      eventLoopDelayP99Ms: Math.round(m1.refract_nodejs_eventloop_lag_p99_seconds! * 1000),
      eventLoopDelayMaxMs: Math.round(m1.refract_nodejs_eventloop_lag_max_seconds! * 1000),
      daemonCpu: +((c1 - c0) / elapsed).toFixed(2),
    },
    blocksLeftAtEnd: blockCount - m1.refract_indexer_slot!,
  };
}

const results: Awaited<ReturnType<typeof round>>[] = [];
for (let i = 0; i < rounds; i++) {
  for (const variant of Object.keys(VARIANTS) as Variant[]) {
    const res = await round(variant);
    console.error(`round ${i + 1}/${rounds} ${variant}: ${JSON.stringify(res)}`);
    if (res.blocksLeftAtEnd <= 0) console.error('  the daemon caught up before the end: raise --blocks');
    results.push(res);
  }
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : Math.round(((s[m - 1]! + s[m]!) / 2) * 100) / 100;
};
const summary = (v: Variant) => {
  const rs = results.filter((r) => r.variant === v);
  const med = (f: (r: (typeof rs)[number]) => number) => median(rs.map(f));
  return {
    config: VARIANTS[v],
    idleOutputsPerSec: med((r) => r.idle.outputsPerSec),
    idleDaemonCpu: med((r) => r.idle.daemonCpu),
    underLoad: {
      reqPerSec: med((r) => r.underLoad.reqPerSec),
      p50Ms: med((r) => r.underLoad.p50Ms),
      p99Ms: med((r) => r.underLoad.p99Ms),
      maxMs: med((r) => r.underLoad.maxMs),
      outputsPerSec: med((r) => r.underLoad.outputsPerSec),
      eventLoopDelayMaxMs: med((r) => r.underLoad.eventLoopDelayMaxMs),
    },
  };
};
const byVariant = Object.fromEntries((Object.keys(VARIANTS) as Variant[]).map((v) => [v, summary(v)])) as Record<Variant, ReturnType<typeof summary>>;
const out = {
  bench: 'catchup',
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, loadavg: os.loadavg(), node: process.version },
  params: { rounds, seconds, rate, connections, txsPerBlock, blocks: blockCount },
  about: 'Medians over rounds (variants alternate). Each round: a fresh daemon on an empty store catching up; `seconds` of catching up alone (idle), then `seconds` under a steady read load. Ingest rates from its /metrics.',
  ...byVariant,
  ratios: {
    p99UnderLoadMainOverThread: +(byVariant.main.underLoad.p99Ms / byVariant.thread.underLoad.p99Ms).toFixed(2),
    idleOutputsThreadPrepareOverThread: +(byVariant.threadPrepare.idleOutputsPerSec / byVariant.thread.idleOutputsPerSec).toFixed(2),
    underLoadOutputsThreadPrepareOverThread: +(byVariant.threadPrepare.underLoad.outputsPerSec / byVariant.thread.underLoad.outputsPerSec).toFixed(2),
  },
  rounds: results,
};
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/catchup.json'), `${JSON.stringify(out, null, 2)}\n`);
console.log(JSON.stringify({ ...out, rounds: `${results.length} rounds` }, null, 2));
node.close();
process.exit(0);
