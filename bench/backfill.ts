/**
 * Backfill benchmark (issue #26 part 6): `refract start` (the binary, `--no-prover --no-tree-sync
 * --no-simulator`, an empty --db) reaching the tip of a mainnet-like history by signatures (the
 * signature backfill, src/ingest/sources/backfill.ts) against reaching it block by block (the RPC
 * poller, `--backfill-threshold-slots 0`).
 *
 * The node is `refract simulate --profile sparse` (a child process): `--history-slots` slots (1M), Light
 * transactions in about one slot of `--light-every` (1 to 4 each), 1,000 padding transactions per block
 * (≈1.1 MB of getBlock JSON, what a mainnet block costs), one slot in 20 skipped, and a tip that stands
 * still (one slot per 2^31 − 1 ms), so every run has the same fixed end. Request counts come from the
 * simulator's `GET /stats` (diffed per phase; it counts each request of a JSON-RPC batch) and from the
 * daemon's own count (`/health` backfill.requests: a batch counts once, as one HTTP request).
 *
 * Phases, in order:
 * 1. local, backfill: the whole history by signatures, to the hand-over (`/health` backfill phase
 *    `done`); per stage (daemon start, planning, listing, fetching + indexing) from the daemon's log
 *    timestamps, with CPU seconds of the daemon (its main and busiest other thread: the ingest thread)
 *    and of the simulator, and the indexing time (refract_ingest_batch_duration_seconds) within it.
 * 2. local, block polling: from `tip − --poll-slice` for `--poll-seconds` after `--poll-warmup`,
 *    slots per second, extrapolated to the whole history.
 * 3. 50 requests/s where a batch of 100 counts as one request (a token bucket per HTTP request in a
 *    proxy in this process, in front of the same simulator), daemon `--backfill-rps 50`: whole backfill.
 * 4. the simulator restarted with `--rps 50` (each request of a batch counts: a batch of 100 costs 100),
 *    daemon `--backfill-rps 50`: the backfill for at most `--limited-seconds` (its fetch rate, in
 *    getTransaction answers per second, extrapolated to the rest when it does not finish), then block
 *    polling as in 2 (getBlock is never batched, so this one limit serves both billing models).
 * Then a projection for mainnet (see `mainnetProjection`: every assumption is in the JSON).
 *
 * Results: bench/results/backfill.json; a summary table on stdout.
 *
 * Usage: npm run bench:backfill [-- --history-slots 1000000 --light-every 100 --poll-seconds 60
 *   --limited-seconds 150 --rps 50 --mainnet-light-txs 10000000,40000000,150000000]
 */
import { type ChildProcess, execSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    'history-slots': { type: 'string', default: '1000000' },
    'light-every': { type: 'string', default: '100' },
    'padding-txs': { type: 'string', default: '1000' },
    'skip-every': { type: 'string', default: '20' },
    seed: { type: 'string', default: '1' },
    'poll-slice': { type: 'string', default: '20000' },
    'poll-seconds': { type: 'string', default: '60' },
    'poll-warmup': { type: 'string', default: '10' },
    'limited-poll-seconds': { type: 'string', default: '45' },
    rps: { type: 'string', default: '50' },
    'limited-seconds': { type: 'string', default: '150' },
    'batch-size': { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '8' },
    'min-light-txs': { type: 'string', default: '20000' },
    'mainnet-slots': { type: 'string', default: '170000000' },
    'mainnet-light-txs': { type: 'string', default: '10000000,40000000,150000000' },
    'skip-proxy': { type: 'boolean', default: false },
    'skip-limited': { type: 'boolean', default: false },
    /** Recompute only the mainnet projection of the saved bench/results/backfill.json (its measured rates), nothing measured. */
    reproject: { type: 'boolean', default: false },
  },
});
const P = {
  historySlots: Number(values['history-slots']),
  lightEvery: Number(values['light-every']),
  paddingTxs: Number(values['padding-txs']),
  skipEvery: Number(values['skip-every']),
  seed: Number(values.seed),
  slotMs: 2 ** 31 - 1,
  pollSlice: Number(values['poll-slice']),
  pollSeconds: Number(values['poll-seconds']),
  pollWarmup: Number(values['poll-warmup']),
  limitedPollSeconds: Number(values['limited-poll-seconds']),
  rps: Number(values.rps),
  limitedSeconds: Number(values['limited-seconds']),
  batchSize: Number(values['batch-size']),
  concurrency: Number(values.concurrency),
  minLightTxs: Number(values['min-light-txs']),
};
const root = new URL('..', import.meta.url).pathname;
const BIN = join(root, 'bin/refract.mjs');
const benchStart = Date.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (x: number, d = 0) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : x);
const say = (s: string) => console.error(`[${((Date.now() - benchStart) / 1000).toFixed(0).padStart(4)} s] ${s}`);

// ---------------------------------------------------------------------------------------------
// Processes

interface Proc {
  child: ChildProcess;
  /** Parsed pino lines (JSON) of its standard error, with `time` (Unix ms). */
  lines: { time: number; msg: string; level: number; [k: string]: unknown }[];
  warnCount: number;
  text: () => string;
}
const procs = new Set<ChildProcess>();
function refract(args: string[]): Proc {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('REFRACT_')) delete env[k];
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [BIN, ...args], { cwd: mkdtempSync(join(os.tmpdir(), 'refract-bf-cwd-')), stdio: ['ignore', 'ignore', 'pipe'], env: { ...env, REFRACT_LOG_LEVEL: 'info' } });
  procs.add(child);
  child.once('exit', () => procs.delete(child));
  const p: Proc = { child, lines: [], warnCount: 0, text: () => tail.join('\n') };
  const tail: string[] = [];
  let buf = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    buf += d;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      tail.push(line);
      if (tail.length > 40) tail.shift();
      if (line.startsWith('{')) {
        try {
          const j = JSON.parse(line);
          if (j.level >= 40) p.warnCount++;
          // Keep what the stages are cut from, and the first few warnings / errors.
          if (/backfill|listening|ingest starting/.test(j.msg) || (j.level >= 40 && p.warnCount <= 20)) p.lines.push(j);
        } catch {}
      }
    }
  });
  return p;
}
const exited = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));
async function stop(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  c.kill('SIGTERM');
  const t = setTimeout(() => c.kill('SIGKILL'), 20_000);
  await exited(c);
  clearTimeout(t);
}
process.on('exit', () => {
  for (const c of procs) c.kill('SIGKILL');
});
for (const s of ['SIGINT', 'SIGTERM'] as const) process.once(s, () => process.exit(130));

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createNetServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** CPU seconds of a process (all threads), and per thread (tid → seconds). */
function cpu(pid: number): { total: number; threads: Map<number, number> } {
  const parse = (path: string) => {
    const f = readFileSync(path, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  };
  const threads = new Map<number, number>();
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      try {
        threads.set(Number(t), parse(`/proc/${pid}/task/${t}/stat`));
      } catch {}
    }
    return { total: parse(`/proc/${pid}/stat`), threads };
  } catch {
    return { total: NaN, threads };
  }
}
/** CPU used between two samples: total, main thread (tid = pid), busiest other thread, the rest. */
function cpuDelta(pid: number, a: ReturnType<typeof cpu>, b: ReturnType<typeof cpu>) {
  let busiest = 0;
  for (const [tid, s] of b.threads) if (tid !== pid) busiest = Math.max(busiest, s - (a.threads.get(tid) ?? 0));
  const main = (b.threads.get(pid) ?? 0) - (a.threads.get(pid) ?? 0);
  const total = b.total - a.total;
  return { total: round(total, 2), main: round(main, 2), busiestOther: round(busiest, 2), rest: round(total - main - busiest, 2) };
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers

async function rpc(port: number, method: string, params?: unknown): Promise<any> {
  const r = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params === undefined ? {} : { params }) }) });
  return r.json();
}
interface SimStats {
  slot: number;
  requests: Record<string, number>;
  totalRequests: number;
  batches: number;
  rateLimited: number;
  chain: { lightTransactions: number; keptBlocks: number; historyMs: number; generatedUpTo: number };
}
const simStats = async (port: number): Promise<SimStats> => (await fetch(`http://127.0.0.1:${port}/stats`)).json() as Promise<SimStats>;
function statsDelta(a: SimStats, b: SimStats) {
  const requests: Record<string, number> = {};
  for (const k of new Set([...Object.keys(a.requests), ...Object.keys(b.requests)])) {
    const d = (b.requests[k] ?? 0) - (a.requests[k] ?? 0);
    if (d) requests[k] = d;
  }
  return { requests, totalRequests: b.totalRequests - a.totalRequests, batches: b.batches - a.batches, rateLimited: b.rateLimited - a.rateLimited };
}
async function health(port: number): Promise<any> {
  return fetch(`http://127.0.0.1:${port}/health`).then((r) => r.json(), () => null);
}
async function metrics(port: number): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const l of text.split('\n')) {
    if (!l || l.startsWith('#')) continue;
    const i = l.lastIndexOf(' ');
    out[l.slice(0, i)] = Number(l.slice(i + 1));
  }
  return out;
}
const metric = (m: Record<string, number>, name: string) => {
  let s = 0;
  for (const [k, v] of Object.entries(m)) if (k === name || k.startsWith(`${name}{`)) s += v;
  return s;
};

// ---------------------------------------------------------------------------------------------
// The simulator

interface Sim {
  proc: Proc;
  port: number;
  tip: number;
  lightTxs: number;
  lightSlots: number;
  historyMs: number;
  startSeconds: number;
}
async function startSim(extra: string[] = []): Promise<Sim> {
  const port = await freePort();
  const t0 = Date.now();
  const proc = refract(['simulate', '--profile', 'sparse', '--port', String(port), '--slot-ms', String(P.slotMs), '--history-slots', String(P.historySlots), '--light-every', String(P.lightEvery), '--padding-txs', String(P.paddingTxs), '--skip-every', String(P.skipEvery), '--seed', String(P.seed), ...extra]);
  for (;;) {
    const r = await rpc(port, 'getSlot').catch(() => null);
    if (typeof r?.result === 'number') break;
    if (proc.child.exitCode !== null) throw new Error(`refract simulate exited: ${proc.text()}`);
    if (Date.now() - t0 > 300_000) throw new Error('refract simulate did not come up in 5 minutes');
    await sleep(250);
  }
  const st = await simStats(port);
  return { proc, port, tip: st.slot, lightTxs: st.chain.lightTransactions, lightSlots: st.chain.keptBlocks, historyMs: st.chain.historyMs, startSeconds: round((Date.now() - t0) / 1000, 1) };
}

/**
 * A rate limit in front of the simulator where one HTTP request (a JSON-RPC batch too) costs one
 * token: a bucket of `rps` (capacity `rps`), else HTTP 429 with Retry-After, as the simulator does.
 */
async function startProxy(target: number, rps: number): Promise<{ server: Server; port: number; stats: { forwarded: number; rateLimited: number } }> {
  const stats = { forwarded: 0, rateLimited: 0 };
  let tokens = rps;
  let last = performance.now();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const now = performance.now();
      tokens = Math.min(rps, tokens + ((now - last) / 1000) * rps);
      last = now;
      if (tokens < 1) {
        stats.rateLimited++;
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(Math.max(1, Math.ceil((1 - tokens) / rps))) });
        res.end('{"jsonrpc":"2.0","error":{"code":-32005,"message":"Too many requests"},"id":null}');
        return;
      }
      tokens -= 1;
      stats.forwarded++;
      fetch(`http://127.0.0.1:${target}${req.url ?? '/'}`, { method: req.method, headers: { 'content-type': 'application/json' }, body: req.method === 'POST' ? Buffer.concat(chunks) : undefined }).then(
        async (r) => {
          const body = Buffer.from(await r.arrayBuffer());
          res.writeHead(r.status, { 'content-type': 'application/json' });
          res.end(body);
        },
        (err) => {
          res.writeHead(502);
          res.end(String(err));
        },
      );
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { server, port, stats };
}

// ---------------------------------------------------------------------------------------------
// The daemon

async function startDaemon(rpcPort: number, extra: string[]): Promise<{ proc: Proc; port: number; spawnedAt: number; db: string }> {
  const port = await freePort();
  const db = mkdtempSync(join(os.tmpdir(), 'refract-bf-db-'));
  const spawnedAt = Date.now();
  const proc = refract(['start', '--db', join(db, 'data'), '--rpc-url', `http://127.0.0.1:${rpcPort}`, '--no-prover', '--no-tree-sync', '--no-simulator', '--host', '127.0.0.1', '--port', String(port), ...extra]);
  for (;;) {
    if (await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false)) break;
    if (proc.child.exitCode !== null) throw new Error(`refract start exited ${proc.child.exitCode}: ${proc.text()}`);
    if (Date.now() - spawnedAt > 120_000) throw new Error('refract start did not come up');
    await sleep(50);
  }
  return { proc, port, spawnedAt, db };
}
async function stopDaemon(d: { proc: Proc; db: string }): Promise<void> {
  await stop(d.proc.child);
  rmSync(d.db, { recursive: true, force: true });
}
const logTime = (p: Proc, re: RegExp) => p.lines.find((l) => re.test(l.msg))?.time ?? null;

/**
 * One backfill from an empty store through the daemon, until the hand-over (or `capSeconds`). The
 * node's counts come from `simPort`'s /stats (the simulator behind a proxy, if any).
 */
async function backfillRun(label: string, rpcPort: number, simPort: number, simPid: number, extra: string[], capSeconds: number) {
  say(`${label}: backfill starting`);
  const load0 = round(os.loadavg()[0]!, 2);
  const s0 = await simStats(simPort);
  const simCpu0 = cpu(simPid);
  const d = await startDaemon(rpcPort, ['--backfill-threshold-slots', '5000', '--backfill-batch-size', String(P.batchSize), '--backfill-concurrency', String(P.concurrency), ...extra]);
  const pid = d.proc.child.pid!;
  let listingDone: { at: number; sim: SimStats; simCpu: ReturnType<typeof cpu>; cpu: ReturnType<typeof cpu>; m: Record<string, number> } | null = null;
  let last: any = null;
  let lastPrint = Date.now();
  let capped = false;
  for (;;) {
    const h = await health(d.port);
    const b = h?.backfill;
    if (b) last = b;
    // The listing's end from the daemon's log line (its /health phase stays "listing" until the first chunk commits).
    if (!listingDone && (logTime(d.proc, /^backfill listing done/) !== null || b?.phase === 'done')) {
      listingDone = { at: Date.now(), sim: await simStats(simPort), simCpu: cpu(simPid), cpu: cpu(pid), m: await metrics(d.port) };
    }
    if (b?.phase === 'done') break;
    if (h?.ingestError) throw new Error(`${label}: ${h.ingestError}`);
    if ((Date.now() - d.spawnedAt) / 1000 > capSeconds) {
      capped = true;
      break;
    }
    if (Date.now() - lastPrint > 15_000) {
      lastPrint = Date.now();
      say(`${label}: ${b?.phase ?? 'starting'}, listed ${b?.listed ?? 0}, indexed ${b?.indexed ?? 0}`);
    }
    await sleep(100);
  }
  const endAt = Date.now();
  const s1 = await simStats(simPort);
  const simCpu1 = cpu(simPid);
  const cpu1 = cpu(pid);
  const m1 = await metrics(d.port);
  const h1 = await health(d.port);
  await stopDaemon(d);
  const t = {
    listening: logTime(d.proc, /^refract listening/),
    planned: logTime(d.proc, /^backfill planned/),
    listingDone: logTime(d.proc, /^backfill listing done/),
    done: logTime(d.proc, /^backfill done/),
  };
  const sec = (a: number | null, b: number | null) => (a !== null && b !== null ? round((b - a) / 1000, 2) : null);
  const all = statsDelta(s0, s1);
  const listed: number = last?.listed ?? 0;
  const indexed: number = last?.indexed ?? 0;
  // The daemon's own count (its /health is updated after each committed chunk: behind in a capped run).
  const daemonRequests: Record<string, number> = h1?.backfill?.requests ?? last?.requests ?? {};
  // HTTP requests the node answered (startup's included): every call but getTransaction, plus the batches
  // (the backfill sends getTransaction only in batches of ≥ 2).
  const httpRequests = all.totalRequests - (all.requests.getTransaction ?? 0) + all.batches;
  // Stages (seconds, from the daemon's log timestamps; the spawn from this process's clock).
  const stages = {
    daemonStart: sec(d.spawnedAt, t.listening),
    planning: sec(t.listening, t.planned),
    listing: sec(t.planned, t.listingDone),
    fetchingAndIndexing: capped ? sec(t.listingDone, endAt) : sec(t.listingDone, t.done),
  };
  let fetchPhase: Record<string, unknown> | null = null;
  if (listingDone) {
    const window = ((capped ? endAt : (t.done ?? endAt)) - (t.listingDone ?? listingDone.at)) / 1000;
    const indexSeconds = metric(m1, 'refract_ingest_batch_duration_seconds_sum') - metric(listingDone.m, 'refract_ingest_batch_duration_seconds_sum');
    const fetchedCalls = (s1.requests.getTransaction ?? 0) - (listingDone.sim.requests.getTransaction ?? 0);
    const dCpu = cpuDelta(pid, listingDone.cpu, cpu1);
    fetchPhase = {
      seconds: round(window, 2),
      getTransactionAnswered: fetchedCalls,
      getTransactionPerSec: round(fetchedCalls / window),
      // The ingest thread's commit work (prepareBatch + LMDB write transaction) within the phase.
      indexingSeconds: round(indexSeconds, 2),
      indexingShare: round(indexSeconds / window, 2),
      // Light transactions per second of indexing work alone (what the node's speed does not bound).
      indexingOnlyTxPerSec: round(indexed / Math.max(1e-9, indexSeconds)),
      daemonCpuSeconds: dCpu,
      simulatorCpuSeconds: round(simCpu1.total - listingDone.simCpu.total, 2),
      simulatorRequests: statsDelta(listingDone.sim, s1),
    };
  }
  const listingPhase = listingDone
    ? {
        simulatorRequests: statsDelta(s0, listingDone.sim),
        simulatorCpuSeconds: round(listingDone.simCpu.total - simCpu0.total, 2),
      }
    : null;
  // Extrapolation when capped: the rest at the fetch phase's pace (getTransaction answers per second).
  let wallSeconds = round((endAt - d.spawnedAt) / 1000, 2);
  let extrapolated = false;
  if (capped) {
    const rate = (fetchPhase?.getTransactionPerSec as number) || 0;
    const fetchedCalls = (fetchPhase?.getTransactionAnswered as number) || 0;
    if (!listingDone || rate <= 0) throw new Error(`${label}: capped at ${capSeconds} s before the fetch phase ran`);
    wallSeconds = round(wallSeconds + Math.max(0, listed - fetchedCalls) / rate, 1);
    extrapolated = true;
  }
  const res = {
    label,
    loadavg1mAtStart: load0,
    finished: !capped,
    extrapolated,
    wallSeconds,
    measuredSeconds: round((endAt - d.spawnedAt) / 1000, 2),
    listed,
    failedListed: last?.failed ?? 0,
    indexed,
    stages,
    listingPhase,
    fetchPhase,
    lightTxPerSec: {
      endToEnd: round(listed / wallSeconds),
      backfill: !capped && t.planned && t.done ? round(listed / ((t.done - t.planned) / 1000)) : null,
      fetchPhase: fetchPhase ? round(indexed / (fetchPhase.seconds as number)) : null,
    },
    // HTTP requests as the daemon counts them (a JSON-RPC batch once): the backfill's own.
    daemonRequests,
    httpRequests,
    // Every JSON-RPC call the node answered during the run (a batch of 100 is 100), and the 429s.
    simulator: all,
    rateLimitedDaemonSide: h1?.backfill?.rateLimited ?? last?.rateLimited ?? 0,
    httpRequestsPerLightTx: round(httpRequests / Math.max(1, listed), 4),
    callsPerLightTx: round(all.totalRequests / Math.max(1, capped ? (fetchPhase?.getTransactionAnswered as number) : listed), 3),
    daemonCpuSeconds: cpuDelta(pid, { total: 0, threads: new Map() }, cpu1),
    simulatorCpuSeconds: round(simCpu1.total - simCpu0.total, 2),
    warnings: d.proc.warnCount,
    firstWarnings: d.proc.lines.filter((l) => l.level >= 40).slice(0, 3).map((l) => l.msg),
  };
  say(`${label}: ${capped ? `capped at ${capSeconds} s, extrapolated` : 'done'}: ${res.wallSeconds} s, ${listed} listed, ${httpRequests} HTTP requests, ${all.totalRequests} calls, ${all.rateLimited} 429s`);
  return res;
}

/** Block polling from `tip − slice` (threshold 0), measured for `seconds` after `warmup`. */
async function pollRun(label: string, sim: Sim, seconds: number, warmup: number) {
  const start = Math.max(0, sim.tip - P.pollSlice);
  say(`${label}: block polling from slot ${start}`);
  const load0 = round(os.loadavg()[0]!, 2);
  const d = await startDaemon(sim.port, ['--backfill-threshold-slots', '0', '--start-slot', String(start)]);
  const pid = d.proc.child.pid!;
  const deadline = Date.now() + 120_000;
  while ((metric(await metrics(d.port), 'refract_indexer_slot') || 0) < start) {
    if (Date.now() > deadline) throw new Error(`${label}: nothing indexed in 2 minutes: ${d.proc.text()}`);
    await sleep(200);
  }
  await sleep(warmup * 1000);
  const at0 = Date.now();
  const m0 = await metrics(d.port);
  const s0 = await simStats(sim.port);
  const c0 = cpu(pid);
  const sc0 = cpu(sim.proc.child.pid!);
  let m1 = m0;
  while (Date.now() - at0 < seconds * 1000) {
    await sleep(1000);
    m1 = await metrics(d.port);
    if (metric(m1, 'refract_indexer_slot') >= sim.tip) break;
  }
  const at1 = Date.now();
  const s1 = await simStats(sim.port);
  const c1 = cpu(pid);
  const sc1 = cpu(sim.proc.child.pid!);
  await stopDaemon(d);
  const dt = (at1 - at0) / 1000;
  const slots = metric(m1, 'refract_indexer_slot') - metric(m0, 'refract_indexer_slot');
  const blocks = metric(m1, 'refract_ingest_blocks_total') - metric(m0, 'refract_ingest_blocks_total');
  const st = statsDelta(s0, s1);
  const slotsPerSec = slots / dt;
  const res = {
    label,
    loadavg1mAtStart: load0,
    startSlot: start,
    measuredSeconds: round(dt, 1),
    slots,
    blocks,
    slotsPerSec: round(slotsPerSec, 1),
    blocksPerSec: round(blocks / dt, 1),
    simulator: st,
    callsPerSlot: round(st.totalRequests / Math.max(1, slots), 3),
    attemptsPerSlot: round((st.totalRequests + st.rateLimited) / Math.max(1, slots), 3),
    // The whole history (slots 0 … tip) at this pace.
    wholeHistorySeconds: round((sim.tip + 1) / slotsPerSec),
    wholeHistoryRequests: round(((sim.tip + 1) * st.totalRequests) / Math.max(1, slots)),
    daemonCpu: round((c1.total - c0.total) / dt, 2),
    daemonThreads: cpuDelta(pid, c0, c1),
    simulatorCpu: round((sc1.total - sc0.total) / dt, 2),
    indexingShare: round((metric(m1, 'refract_ingest_batch_duration_seconds_sum') - metric(m0, 'refract_ingest_batch_duration_seconds_sum')) / dt, 2),
    warnings: d.proc.warnCount,
  };
  say(`${label}: ${res.slotsPerSec} slots/s (${res.blocksPerSec} blocks/s) over ${res.measuredSeconds} s; whole history ≈ ${res.wholeHistorySeconds} s`);
  return res;
}

// ---------------------------------------------------------------------------------------------
// Mainnet projection

/**
 * Mainnet wall time and requests for the signature backfill and for block polling at a provider's
 * rate, from the measured local rates and stated assumptions.
 */
function mainnetProjection(local: { indexTxPerSec: number; pollSlotsPerSec: number }) {
  const slots = Number(values['mainnet-slots']);
  const [low, mid, high] = String(values['mainnet-light-txs']).split(',').map(Number) as [number, number, number];
  const A = {
    fromSlot: 286_193_745,
    toDate: new Date().toISOString().slice(0, 10),
    slots,
    slotsHow: 'slot 286,193,745 is about late August 2024 (Light Protocol\'s mainnet start); mainnet makes ≈2.4 slots/s (≈400–420 ms a slot) ≈ 6.3M slots a month; ≈27 months to late November 2026 ≈ 170M slots (±5%)',
    lightTxs: { low, mid, high },
    lightTxsHow:
      'not measured (no mainnet access here): successful account-compression program transactions (user transactions + forester nullify / address-update / batch transactions) averaging ≈12k (low) / ≈50k (mid) / ≈180k (high) a day over ≈820 days. Measure it before relying on it: one getSignaturesForAddress(compr6…, limit 1000) page spans 1000 / (transactions per slot) slots, so (its slot span) gives the density, × 170M slots the count',
    failedShare: 0.05,
    failedShareHow: 'failed transactions are listed (they cost listing pages) but never fetched; 5% assumed',
    listPageLatencySeconds: 0.4,
    listPageLatencyHow: 'the listing is sequential (each page starts `before` the previous page\'s last signature): one getSignaturesForAddress page of 1000 at a hosted provider ≈0.4 s assumed; locally it took the measured time',
    batchLatencySeconds: 1.0,
    batchLatencyHow: 'a getTransaction batch of 100 (≈0.5–1 MB of JSON on mainnet) ≈1 s at a provider, assumed; with --backfill-concurrency 8 that caps fetching at 800 transactions/s whatever the rate limit (raise the concurrency for a fast provider)',
    concurrency: P.concurrency,
    batchSize: P.batchSize,
    localIndexTxPerSec: local.indexTxPerSec,
    localIndexHow: 'the daemon\'s fetch-phase indexing rate measured here against the local simulator (mainnet transactions are larger: decode costs more per transaction, so this is optimistic)',
    pollLocalSlotsPerSec: local.pollSlotsPerSec,
    pollHow: 'block polling: one getBlock per slot (skipped slots too) plus a getSlot per 400 ms; each getBlock is one request in both billing models (never batched); bound by the rate, by the local decode rate measured here (1,000-transaction blocks), and by fetchConcurrency (20) / getBlock latency',
    blockLatencySeconds: 0.5,
    blockLatencyHow: 'a full getBlock (≈1–5 MB of JSON on mainnet) ≈0.5 s at a provider, assumed: with the poller\'s 20 in flight, ≤ 40 slots/s',
    pollConcurrency: 20,
    billing: {
      batchCountsOnce: 'a JSON-RPC batch of 100 getTransaction is one request (run the daemon with --backfill-rps = the provider\'s rate)',
      perCall: 'each getTransaction in a batch counts (the simulator\'s --rps model): run the daemon with --backfill-rps = rate / batch size, or rely on 429 / Retry-After',
    },
  };
  const rows: Record<string, unknown>[] = [];
  for (const rate of [10, 50, 200, 500]) {
    for (const [name, n] of [['low', low], ['mid', mid], ['high', high]] as const) {
      const pages = n / (1 - A.failedShare) / 1000;
      const listSec = Math.max(pages / rate, pages * A.listPageLatencySeconds);
      const latencyBound = n / ((A.concurrency * A.batchSize) / A.batchLatencySeconds);
      const indexBound = n / A.localIndexTxPerSec;
      const onceReq = pages + n / A.batchSize;
      const perCallReq = pages + n;
      const onceSec = listSec + Math.max(n / A.batchSize / rate, latencyBound, indexBound);
      // The same with --backfill-concurrency 32 (4× the batches in flight).
      const latency32 = n / ((32 * A.batchSize) / A.batchLatencySeconds);
      const once32Sec = listSec + Math.max(n / A.batchSize / rate, latency32, indexBound);
      const perCallSec = listSec + Math.max(n / rate, latencyBound, indexBound);
      const pollSec = Math.max(slots / rate, slots / A.pollLocalSlotsPerSec, slots / (A.pollConcurrency / A.blockLatencySeconds));
      /** Which term sets a time: the provider's rate, the request latency × concurrency, or local indexing. */
      const bound = (rateTerm: number, lat: number, idx: number) => (rateTerm >= lat && rateTerm >= idx ? 'rate' : lat >= idx ? 'latency' : 'local indexing');
      rows.push({
        rps: rate,
        lightTxs: name,
        backfillBatchCountsOnce: { requests: Math.round(onceReq), hours: round(onceSec / 3600, 1), listingHours: round(listSec / 3600, 1), fetchBound: bound(n / A.batchSize / rate, latencyBound, indexBound) },
        backfillBatchCountsOnceConcurrency32: { hours: round(once32Sec / 3600, 1), fetchBound: bound(n / A.batchSize / rate, latency32, indexBound) },
        backfillPerCall: { requests: Math.round(perCallReq), hours: round(perCallSec / 3600, 1), listingHours: round(listSec / 3600, 1), fetchBound: bound(n / rate, latencyBound, indexBound) },
        blockPolling: { requests: Math.round(slots + pollSec * 2.5), hours: round(pollSec / 3600, 1), bound: bound(slots / rate, slots / (A.pollConcurrency / A.blockLatencySeconds), slots / A.pollLocalSlotsPerSec) },
        speedupBatchCountsOnce: round(pollSec / onceSec, 1),
        speedupPerCall: round(pollSec / perCallSec, 1),
      });
    }
  }
  return { assumptions: A, rows };
}

// ---------------------------------------------------------------------------------------------
// Run

const git = (cmd: string) => {
  try {
    return execSync(`git ${cmd}`, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
};
const code = { commit: git('rev-parse HEAD'), srcDirty: (git('status --porcelain src bin') ?? '') !== '' };
if (values.reproject) {
  const file = join(root, 'bench/results/backfill.json');
  const saved = JSON.parse(readFileSync(file, 'utf8'));
  const a = saved.mainnet.assumptions;
  saved.mainnet = mainnetProjection({ indexTxPerSec: a.localIndexTxPerSec, pollSlotsPerSec: a.pollLocalSlotsPerSec });
  saved.mainnet.reprojected = new Date().toISOString();
  writeFileSync(file, `${JSON.stringify(saved, null, 2)}\n`);
  console.log(JSON.stringify(saved.mainnet.rows.filter((r: { lightTxs: string }) => r.lightTxs === 'mid'), null, 1));
  process.exit(0);
}
const machine = { cpuModel: os.cpus()[0]?.model, cores: os.cpus().length, memGb: round(os.totalmem() / 2 ** 30, 1), loadavgBefore: os.loadavg().map((x) => round(x, 2)), node: process.version, platform: `${os.platform()} ${os.release()}` };
say(`sparse simulator: ${P.historySlots} slots, Light in one slot of ${P.lightEvery}, ${P.paddingTxs} padding transactions a block`);
const simA = await startSim();
say(`simulator up in ${simA.startSeconds} s: tip ${simA.tip}, ${simA.lightTxs} Light transactions in ${simA.lightSlots} slots`);
if (simA.lightTxs < P.minLightTxs) throw new Error(`only ${simA.lightTxs} Light transactions (< ${P.minLightTxs}): lower --light-every`);

const localBackfill = await backfillRun('local backfill', simA.port, simA.port, simA.proc.child.pid!, [], 600);
const localPoll = await pollRun('local block polling', simA, P.pollSeconds, P.pollWarmup);

let proxyBackfill: Awaited<ReturnType<typeof backfillRun>> | null = null;
let proxyStats: { forwarded: number; rateLimited: number } | null = null;
if (!values['skip-proxy']) {
  const proxy = await startProxy(simA.port, P.rps);
  proxyBackfill = await backfillRun(`${P.rps} req/s, batch = 1 request`, proxy.port, simA.port, simA.proc.child.pid!, ['--backfill-rps', String(P.rps)], 600);
  proxyStats = { ...proxy.stats };
  await new Promise((r) => proxy.server.close(r));
  proxy.server.closeAllConnections?.();
}
await stop(simA.proc.child);

let limitedBackfill: Awaited<ReturnType<typeof backfillRun>> | null = null;
let limitedPoll: Awaited<ReturnType<typeof pollRun>> | null = null;
let simB: Sim | null = null;
if (!values['skip-limited']) {
  say(`simulator with --rps ${P.rps} (each request of a batch counts)`);
  simB = await startSim(['--rps', String(P.rps)]);
  limitedBackfill = await backfillRun(`${P.rps} req/s, batch = ${P.batchSize} requests`, simB.port, simB.port, simB.proc.child.pid!, ['--backfill-rps', String(P.rps)], P.limitedSeconds);
  limitedPoll = await pollRun(`${P.rps} req/s block polling`, simB, P.limitedPollSeconds, P.pollWarmup);
  await stop(simB.proc.child);
}

// ---------------------------------------------------------------------------------------------
// Summary

const lb = localBackfill;
const fetchIdx = (lb.fetchPhase?.indexingOnlyTxPerSec as number) ?? NaN;
const projection = mainnetProjection({ indexTxPerSec: (lb.lightTxPerSec.fetchPhase as number) ?? fetchIdx, pollSlotsPerSec: localPoll.slotsPerSec });
const targets = {
  wallTimeRatio: { target: '≥ 100× less wall time than block polling (sparse profile, local node)', measured: round(localPoll.wholeHistorySeconds / lb.wallSeconds, 0) },
  requestsPerLightTx: { target: '≤ 0.05 RPC requests per Light transaction', measuredHttp: lb.httpRequestsPerLightTx, measuredCalls: lb.callsPerLightTx },
  lightTxPerSec: { target: '≥ 2,000 Light transactions per second indexed against a local node', measuredEndToEnd: lb.lightTxPerSec.endToEnd, measuredBackfill: lb.lightTxPerSec.backfill, measuredFetchPhase: lb.lightTxPerSec.fetchPhase },
};
const met = {
  wallTimeRatio: targets.wallTimeRatio.measured >= 100,
  requestsPerLightTx: lb.httpRequestsPerLightTx <= 0.05,
  lightTxPerSec: (lb.lightTxPerSec.backfill ?? 0) >= 2000,
};
const comparisons = {
  local: { backfillSeconds: lb.wallSeconds, blockPollingSeconds: localPoll.wholeHistorySeconds, ratio: targets.wallTimeRatio.measured, backfillRequests: { http: lb.httpRequests, calls: lb.simulator.totalRequests }, blockPollingRequests: localPoll.wholeHistoryRequests },
  ...(proxyBackfill && limitedPoll
    ? { [`rps${P.rps}BatchCountsOnce`]: { backfillSeconds: proxyBackfill.wallSeconds, blockPollingSeconds: limitedPoll.wholeHistorySeconds, ratio: round(limitedPoll.wholeHistorySeconds / proxyBackfill.wallSeconds, 0), backfillRequests: { http: proxyBackfill.httpRequests, calls: proxyBackfill.simulator.totalRequests }, rateLimited: proxyStats?.rateLimited } }
    : {}),
  ...(limitedBackfill && limitedPoll
    ? { [`rps${P.rps}PerCall`]: { backfillSeconds: limitedBackfill.wallSeconds, backfillExtrapolated: limitedBackfill.extrapolated, blockPollingSeconds: limitedPoll.wholeHistorySeconds, ratio: round(limitedPoll.wholeHistorySeconds / limitedBackfill.wallSeconds, 0), rateLimited: limitedBackfill.simulator.rateLimited } }
    : {}),
};
const out = {
  bench: 'backfill',
  date: new Date().toISOString(),
  machine: { ...machine, loadavgAfter: os.loadavg().map((x) => round(x, 2)) },
  benchSeconds: round((Date.now() - benchStart) / 1000),
  code,
  params: P,
  chain: { tip: simA.tip, lightTransactions: simA.lightTxs, lightSlots: simA.lightSlots, simulatorStartSeconds: simA.startSeconds, historyGenerationMs: simA.historyMs },
  about:
    'One run (the machine is noisy: 2 shared cores; the simulator and the daemon share them). Backfill: `refract start` from an empty store to the hand-over (/health backfill done). Block polling: a time-bounded slice from tip − pollSlice, extrapolated to slots 0 … tip. "calls": JSON-RPC calls the simulator answered (a batch of 100 is 100); "http": HTTP requests (a batch is one; the daemon\'s own count). Stages from the daemon\'s log timestamps; CPU from /proc (daemon busiestOther = its ingest thread).',
  targets,
  met,
  comparisons,
  runs: { localBackfill, localPoll, proxyBackfill, proxyStats, limitedBackfill, limitedPoll },
  mainnet: projection,
};
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/backfill.json'), `${JSON.stringify(out, null, 2)}\n`);

const fmt = (n: number | null | undefined) => (n === null || n === undefined || !Number.isFinite(n) ? '—' : n >= 10_000 ? Math.round(n).toLocaleString('en-US') : String(round(n, n < 10 ? 2 : 1)));
const table = (head: string[], rows: (string | number | null | undefined)[][]) => {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? fmt(c) : (c ?? '—'))));
  const w = head.map((h, i) => Math.max(h.length, ...cells.map((r) => String(r[i]).length)));
  const line = (r: (string | number)[]) => `| ${r.map((c, i) => String(c).padEnd(w[i]!)).join(' | ')} |`;
  return [line(head), `|${w.map((x) => '-'.repeat(x + 2)).join('|')}|`, ...cells.map(line)].join('\n');
};
const rowsOut: (string | number | null | undefined)[][] = [
  ['local: backfill', lb.wallSeconds, lb.httpRequests, lb.simulator.totalRequests, lb.simulator.rateLimited, lb.lightTxPerSec.endToEnd],
  ['local: block polling (extrapolated)', localPoll.wholeHistorySeconds, localPoll.wholeHistoryRequests, localPoll.wholeHistoryRequests, null, round((simA.lightTxs / localPoll.wholeHistorySeconds) * 1, 1)],
];
if (proxyBackfill) rowsOut.push([`${P.rps}/s, batch = 1: backfill`, proxyBackfill.wallSeconds, proxyBackfill.httpRequests, proxyBackfill.simulator.totalRequests, proxyStats?.rateLimited, proxyBackfill.lightTxPerSec.endToEnd]);
if (limitedBackfill) rowsOut.push([`${P.rps}/s, batch = ${P.batchSize}: backfill${limitedBackfill.extrapolated ? ' (extrapolated)' : ''}`, limitedBackfill.wallSeconds, limitedBackfill.httpRequests, limitedBackfill.simulator.totalRequests, limitedBackfill.simulator.rateLimited, limitedBackfill.lightTxPerSec.endToEnd]);
if (limitedPoll) rowsOut.push([`${P.rps}/s: block polling (extrapolated)`, limitedPoll.wholeHistorySeconds, limitedPoll.wholeHistoryRequests, limitedPoll.wholeHistoryRequests, limitedPoll.simulator.rateLimited, round(simA.lightTxs / limitedPoll.wholeHistorySeconds, 2)]);
console.log(`\nbench:backfill — ${P.historySlots.toLocaleString('en-US')} slots, ${simA.lightTxs.toLocaleString('en-US')} Light transactions, ${P.paddingTxs} padding/block (${machine.cpuModel}, ${machine.cores} cores)\n`);
console.log(table(['run', 'wall s', 'HTTP req', 'calls', '429s', 'Light tx/s'], rowsOut));
console.log('\nstages of the local backfill (s):');
console.log(table(['daemon start', 'planning', 'listing', 'fetch + index', 'of which indexing', 'simulator CPU in fetch', 'ingest thread CPU in fetch'], [[lb.stages.daemonStart, lb.stages.planning, lb.stages.listing, lb.stages.fetchingAndIndexing, lb.fetchPhase?.indexingSeconds as number, lb.fetchPhase?.simulatorCpuSeconds as number, (lb.fetchPhase?.daemonCpuSeconds as { busiestOther: number })?.busiestOther]]));
console.log('\ntargets:');
console.log(table(['target', 'measured', 'met'], [
  [targets.wallTimeRatio.target, `${targets.wallTimeRatio.measured}×`, met.wallTimeRatio ? 'yes' : 'no'],
  [targets.requestsPerLightTx.target, `${lb.httpRequestsPerLightTx} (HTTP) / ${lb.callsPerLightTx} (calls)`, met.requestsPerLightTx ? 'yes (HTTP)' : 'no'],
  [targets.lightTxPerSec.target, `${lb.lightTxPerSec.backfill} (plan → done), ${lb.lightTxPerSec.endToEnd} (spawn → done)`, met.lightTxPerSec ? 'yes' : 'no'],
]));
console.log('\nmainnet projection (hours; mid estimate of Light transactions):');
console.log(table(['req/s', 'backfill, batch = 1', 'backfill, per call', 'block polling'], projection.rows.filter((r) => r.lightTxs === 'mid').map((r: any) => [r.rps, r.backfillBatchCountsOnce.hours, r.backfillPerCall.hours, r.blockPolling.hours])));
console.log(`\nbench/results/backfill.json written (${out.benchSeconds} s)`);
process.exit(0);
