/**
 * Latency benchmark (issue #27, "the tip in milliseconds"): how soon after the node has a slot Refract
 * serves it, following the chain over Yellowstone gRPC and with the RPC poller, and how fast reads
 * stay while it ingests a busy stream. Everything runs through the binary: `refract simulate
 * --grpc-port` (the node and its Geyser server, child processes) and `refract start` daemons
 * (`--no-prover --no-tree-sync`, empty stores).
 *
 * Part A, tip latency (default: `--slot-ms 400 --txs-per-block 4`, `--seconds 90`): two daemons follow
 * one simulator at once, one over gRPC (`--grpc-url`), one with the poller (no `--grpc-url`; polls
 * getSlot every 400 ms). The client polls the simulator's getSlot every `--view-poll-ms` (5 ms): the
 * slot's *first view at the node* is the answer that first shows it (the true moment lies at most one
 * poll interval plus one round trip, ≈6 ms, before). At that moment, for each daemon, it sends
 *   - `getIndexerSlot [{minContextSlot: s}]`: answered once the slot is committed ("slot served");
 * then it fetches the block from the simulator (getBlock), takes an output of one of its Light
 * transactions (not spent in the same block) and asks each daemon
 *   - `getCompressedAccount {hash, minContextSlot: s}` ("account, minContextSlot"), and
 *   - `getCompressedAccount {hash}` every `--view-poll-ms` until it is not null ("account, polling"),
 * each measured from the first view. Only slots seen one after the other are counted (a poll that
 * jumps two slots gives no first view of the first). From each daemon's /metrics afterwards:
 * refract_ingest_latency_seconds (the daemon's own view: gRPC from when the stream named the slot to
 * the commit) and refract_min_context_slot_wake_seconds (commit event → answer of a waiting request).
 *
 * Part B, reads while ingesting (default: `--busy-txs 30 --busy-slot-ms 100`, 300 Light transactions
 * a second): one daemon follows a busy simulator; autocannon sends getCompressedAccount for existing
 * hashes (read from the daemon by owner first) at `--rate` (1000) req/s over `--connections` (16) for
 * `--read-seconds` (15) per phase:
 *   1. `paused`: the simulator paused (`POST /pause`), nothing to ingest: the baseline;
 *   2. `grpc`: resumed, the daemon following over gRPC;
 *   3. `rpc`: the same store, the daemon restarted without --grpc-url (the poller).
 * Per phase: client p50/p99/max (autocannon, 1 ms resolution), the server-side time of the method
 * (refract_rpc_request_duration_seconds, bucket bounds), the daemon's event-loop delay (p99 and max
 * over the phase: prom-client's monitorEventLoopDelay, reset at each scrape), its GC pauses
 * (refract_nodejs_gc_duration_seconds by kind), CPU of the daemon's main thread, of its other threads
 * (the ingest thread), of the simulator and of this process (autocannon), commits per second (every
 * commit resets lmdb-js's read transaction: src/rpc/slotWatcher.ts onAdvance →
 * `store.root.resetReadTxn()`), and a micro-measure of that reset: reads of a stored account with and
 * without a reset before each, in this process on the daemon's store (read-only).
 *
 * Results: bench/results/latency.json (machine, date, parameters, everything above); a summary on stdout.
 *
 * Usage: npm run bench:latency [-- --seconds 90 --slot-ms 400 --txs-per-block 4 --read-seconds 15
 *   --rate 1000 --connections 16 --busy-txs 30 --busy-slot-ms 100 --skip-tip --skip-reads]
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { Agent, type IncomingMessage, request } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import bs58 from 'bs58';
import { parseTransaction } from '../src/light/parser.ts';
import { decodeBlockJson } from '../src/solana/decode.ts';
import { LightTxGenerator } from '../src/sim/generator.ts';
import { Store } from '../src/store/store.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '90' },
    'slot-ms': { type: 'string', default: '400' },
    'txs-per-block': { type: 'string', default: '4' },
    'view-poll-ms': { type: 'string', default: '5' },
    'read-seconds': { type: 'string', default: '15' },
    rate: { type: 'string', default: '1000' },
    connections: { type: 'string', default: '16' },
    'busy-txs': { type: 'string', default: '30' },
    'busy-slot-ms': { type: 'string', default: '100' },
    'skip-tip': { type: 'boolean', default: false },
    'skip-reads': { type: 'boolean', default: false },
  },
});
const P = {
  seconds: Number(values.seconds),
  slotMs: Number(values['slot-ms']),
  txsPerBlock: Number(values['txs-per-block']),
  viewPollMs: Number(values['view-poll-ms']),
  readSeconds: Number(values['read-seconds']),
  rate: Number(values.rate),
  connections: Number(values.connections),
  busyTxs: Number(values['busy-txs']),
  busySlotMs: Number(values['busy-slot-ms']),
};
const root = new URL('..', import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (x: number, d = 1) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null);
const work = mkdtempSync(join(os.tmpdir(), 'refract-latency-'));

// ---------------------------------------------------------------------------------------------------
// Processes.

const children: ChildProcess[] = [];
const logs = new Map<ChildProcess, () => string>();
function refract(args: string[]): ChildProcess {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('REFRACT_')) delete env[k];
  delete env.NODE_OPTIONS;
  const c = spawn(process.execPath, [join(root, 'bin/refract.mjs'), ...args], { cwd: work, stdio: ['ignore', 'ignore', 'pipe'], env: { ...env, REFRACT_LOG_LEVEL: 'warn' } });
  let err = '';
  c.stderr!.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-20_000)));
  logs.set(c, () => err);
  children.push(c);
  return c;
}
async function stop(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  c.kill('SIGTERM');
  const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
  await new Promise((r) => c.once('exit', r));
  clearTimeout(t);
}
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createNetServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))));
    });
  });

// ---------------------------------------------------------------------------------------------------
// HTTP (keep-alive, low overhead: the timings are the point).

const agent = new Agent({ keepAlive: true, maxSockets: 256 });
function post(port: number, body: unknown, path = '/'): Promise<any> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res: IncomingMessage) => {
      let data = '';
      res.setEncoding('utf8').on('data', (d: string) => (data += d));
      res.on('end', () => {
        try {
          resolve(JSON.parse(data));
        } catch (e) {
          reject(e);
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(text);
  });
}
const rpc = (port: number, method: string, params?: unknown) => post(port, { jsonrpc: '2.0', id: 1, method, ...(params === undefined ? {} : { params }) });
const getText = async (port: number, path: string) => (await fetch(`http://127.0.0.1:${port}${path}`)).text();

/** Waits until `fn` gives a truthy value (or throws after `ms`). */
async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 120_000, child?: ChildProcess): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v as T;
    if (child && child.exitCode !== null) throw new Error(`${what}: the process exited: ${logs.get(child)!()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${child ? `\n${logs.get(child)!().slice(-3000)}` : ''}`);
    await sleep(100);
  }
}

async function simulator(slotMs: number, txsPerBlock: number) {
  const port = await freePort();
  const grpcPort = await freePort();
  const child = refract(['simulate', '--port', String(port), '--grpc-port', String(grpcPort), '--slot-ms', String(slotMs), '--txs-per-block', String(txsPerBlock)]);
  await until('the simulator', async () => typeof (await rpc(port, 'getSlot')).result === 'number', 60_000, child);
  return { port, grpcPort, child };
}
async function daemon(sim: { port: number; grpcPort: number }, grpc: boolean, db = mkdtempSync(join(work, 'db-'))) {
  const port = await freePort();
  const child = refract(['start', '--db', db, '--rpc-url', `http://127.0.0.1:${sim.port}`, ...(grpc ? ['--grpc-url', `http://127.0.0.1:${sim.grpcPort}`] : []), '--no-prover', '--no-tree-sync', '--host', '127.0.0.1', '--port', String(port)]);
  await until(`refract start (${grpc ? 'gRPC' : 'poller'})`, async () => typeof (await rpc(port, 'getIndexerSlot')).result === 'number', 120_000, child);
  return { port, db, child, grpc };
}
/** Waits until the daemon is within `slack` slots of the simulator's tip. */
async function caughtUp(simPort: number, d: { port: number; child: ChildProcess }, slack = 2) {
  await until('the daemon at the tip', async () => {
    const [tip, at] = await Promise.all([rpc(simPort, 'getSlot'), rpc(d.port, 'getIndexerSlot')]);
    return at.result >= tip.result - slack;
  }, 300_000, d.child);
}

// ---------------------------------------------------------------------------------------------------
// Metrics and statistics.

/** Every sample of a /metrics text: series text (name{labels}) → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of text.split('\n')) {
    if (!l || l.startsWith('#')) continue;
    const i = l.lastIndexOf(' ');
    out.set(l.slice(0, i), Number(l.slice(i + 1)));
  }
  return out;
}
/** A histogram's buckets (le → cumulative count) and count/sum, for `name` with labels matching `match`, as b − a. */
function histogram(a: Map<string, number>, b: Map<string, number>, name: string, match = ''): { buckets: [number, number][]; count: number; sum: number } {
  const buckets = new Map<number, number>();
  let count = 0;
  let sum = 0;
  for (const [k, v] of b) {
    if (!k.startsWith(name) || !k.includes(match)) continue;
    const d = v - (a.get(k) ?? 0);
    if (k.startsWith(`${name}_bucket`)) {
      const le = /le="([^"]+)"/.exec(k)![1]!;
      const x = le === '+Inf' ? Infinity : Number(le);
      buckets.set(x, (buckets.get(x) ?? 0) + d);
    } else if (k.startsWith(`${name}_count`)) count += d;
    else if (k.startsWith(`${name}_sum`)) sum += d;
  }
  return { buckets: [...buckets].sort((x, y) => x[0] - y[0]), count, sum };
}
/** The upper bound of the bucket holding quantile `q` (seconds → ms), or null without samples. */
function bucketQuantileMs(h: { buckets: [number, number][]; count: number }, q: number): number | null {
  if (!h.count) return null;
  for (const [le, c] of h.buckets) if (c >= q * h.count) return le === Infinity ? Infinity : round(le * 1000, 2);
  return null;
}
const within = (h: { buckets: [number, number][]; count: number }, seconds: number) => {
  const b = h.buckets.find(([le]) => Math.abs(le - seconds) < 1e-9);
  return b && h.count ? round((b[1] / h.count) * 100, 1) : null;
};
function pct(xs: number[], q: number): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
}
const stats = (xs: number[]) => ({ n: xs.length, p50: round(pct(xs, 0.5)!, 1), p90: round(pct(xs, 0.9)!, 1), p99: round(pct(xs, 0.99)!, 1), max: round(pct(xs, 1)!, 1) });

/** The machine's CPU time so far (/proc/stat, seconds): busy (all but idle and iowait), steal, total. */
function machineCpu(): { busy: number; steal: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: (total - f[3]! - f[4]!) / 100, steal: (f[7] ?? 0) / 100, total: total / 100 };
}

/** CPU seconds of each thread of a process, by thread name and id (`main` for the main thread). */
function threadCpu(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = Number(tid) === pid ? 'main' : `${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}#${tid}`;
      const x = stat.split(') ')[1]!.split(' ');
      out[name] = (out[name] ?? 0) + (Number(x[11]) + Number(x[12])) / 100;
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** CPU seconds of a process: its main thread and its other threads (from /proc; Linux only). */
function cpu(pid: number): { main: number; others: number; busiestOther: number } {
  const read = (f: string) => {
    const x = readFileSync(f, 'utf8').split(') ')[1]!.split(' ');
    return (Number(x[11]) + Number(x[12])) / 100; // utime + stime, in clock ticks of 1/100 s
  };
  let main = 0;
  let others = 0;
  let busiestOther = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let s = 0;
    try {
      s = read(`/proc/${pid}/task/${tid}/stat`);
    } catch {
      continue;
    }
    if (Number(tid) === pid) main = s;
    else {
      others += s;
      busiestOther = Math.max(busiestOther, s);
    }
  }
  return { main, others, busiestOther };
}

// ---------------------------------------------------------------------------------------------------
// Part A: tip latency.

interface DaemonTimes {
  slotServed?: number;
  accountMcs?: number;
  accountPoll?: number;
  accountMcsError?: string;
}
interface SlotRecord {
  slot: number;
  firstView: number;
  /** When the previous getSlot poll (that did not show the slot) was sent: the slot came after it. */
  notYet: number;
  d: Record<string, DaemonTimes>;
  hasAccount: boolean;
}

/** An output of a Light transaction of the block not spent in the same block, with the block's slot. */
function pickOutput(block: unknown, slot: number): string | null {
  const parsed = decodeBlockJson(block as never, slot).transactions.map((t) => parseTransaction(t, slot));
  const spent = new Set<string>();
  const inputs = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(inputs);
    else if (v && typeof v === 'object' && !(v instanceof Uint8Array)) {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'inputCompressedAccountHashes' && Array.isArray(x)) for (const h of x) spent.add(bs58.encode(h as Uint8Array));
        else inputs(x);
      }
    }
  };
  for (const p of parsed) inputs(p.events);
  for (const p of parsed) {
    if (p.error !== null) continue;
    for (const e of p.events) {
      if (e.kind !== 'publicTransaction') continue;
      for (const h of e.event.outputCompressedAccountHashes) {
        const s = bs58.encode(h);
        if (!spent.has(s)) return s;
      }
    }
  }
  return null;
}

async function tipLatency() {
  const sim = await simulator(P.slotMs, P.txsPerBlock);
  const daemons = { grpc: await daemon(sim, true), rpc: await daemon(sim, false) };
  const names = Object.keys(daemons) as (keyof typeof daemons)[];
  await Promise.all(names.map((n) => caughtUp(sim.port, daemons[n])));
  await sleep(5_000); // warm-up
  const mc0 = machineCpu();
  const runStart = performance.now();
  const m0 = Object.fromEntries(await Promise.all(names.map(async (n) => [n, samples(await getText(daemons[n].port, '/metrics'))] as const)));
  const records: SlotRecord[] = [];
  const pending: Promise<unknown>[] = [];

  const track = (rec: SlotRecord) => {
    const s = rec.slot;
    const since = () => performance.now() - rec.firstView;
    for (const n of names) {
      rec.d[n] = {};
      pending.push(
        rpc(daemons[n].port, 'getIndexerSlot', [{ minContextSlot: s }]).then((r) => {
          if (typeof r.result === 'number' && r.result >= s) rec.d[n]!.slotServed = since();
        }, () => {}),
      );
    }
    pending.push(
      (async () => {
        const block = (await rpc(sim.port, 'getBlock', [s, { encoding: 'base64', maxSupportedTransactionVersion: 0 }])).result;
        const hash = block ? pickOutput(block, s) : null;
        if (!hash) return;
        rec.hasAccount = true;
        await Promise.all(
          names.flatMap((n) => [
            rpc(daemons[n].port, 'getCompressedAccount', { hash, minContextSlot: s }).then((r) => {
              if (r.result?.value) rec.d[n]!.accountMcs = since();
              else rec.d[n]!.accountMcsError = JSON.stringify(r.error ?? r.result).slice(0, 200);
            }),
            (async () => {
              const deadline = performance.now() + 5_000;
              while (performance.now() < deadline) {
                const r = await rpc(daemons[n].port, 'getCompressedAccount', { hash });
                if (r.result?.value) {
                  rec.d[n]!.accountPoll = since();
                  return;
                }
                await sleep(P.viewPollMs);
              }
            })(),
          ]),
        );
      })().catch((e) => console.error(`slot ${s}: ${(e as Error).message}`)),
    );
  };

  console.error(`tip latency: ${P.seconds} s of ${P.slotMs} ms slots, ${P.txsPerBlock} Light transactions each; first view by getSlot every ${P.viewPollMs} ms`);
  let last: number = (await rpc(sim.port, 'getSlot')).result;
  let sentBefore = performance.now();
  const end = performance.now() + P.seconds * 1000;
  let jumps = 0;
  while (performance.now() < end) {
    const sent = performance.now();
    const s: number = (await rpc(sim.port, 'getSlot')).result;
    const at = performance.now();
    if (s > last) {
      if (s === last + 1) {
        const rec: SlotRecord = { slot: s, firstView: at, notYet: sentBefore, d: {}, hasAccount: false };
        records.push(rec);
        track(rec);
      } else jumps++;
      last = s;
    }
    sentBefore = sent;
    await sleep(P.viewPollMs);
  }
  await Promise.all(pending);
  const mc1 = machineCpu();
  const runSecs = (performance.now() - runStart) / 1000;
  const m1 = Object.fromEntries(await Promise.all(names.map(async (n) => [n, samples(await getText(daemons[n].port, '/metrics'))] as const)));
  const viewUncertainty = records.map((r) => r.firstView - r.notYet);

  const summarize = (n: (typeof names)[number]) => {
      const get = (f: keyof DaemonTimes) => records.map((r) => r.d[n]?.[f]).filter((x): x is number => typeof x === 'number');
      const ingest = histogram(m0[n]!, m1[n]!, 'refract_ingest_latency_seconds', `source="${n}"`);
      const wake = histogram(m0[n]!, m1[n]!, 'refract_min_context_slot_wake_seconds');
      const commit = histogram(m0[n]!, m1[n]!, 'refract_ingest_batch_duration_seconds');
      return {
          slotServedMs: stats(get('slotServed')),
          accountServedMinContextSlotMs: stats(get('accountMcs')),
          accountServedPollingMs: stats(get('accountPoll')),
          accountMcsFailures: records.filter((r) => r.hasAccount && r.d[n]?.accountMcs === undefined).length,
          daemonIngestLatency: n === 'rpc' ? {
            about: 'refract_ingest_latency_seconds{source="rpc"} counts from the block time (whole seconds); the simulator\'s block times are synthetic (1,700,000,000 + slot), so against it every poller batch lands in +Inf: not reported',
            batches: ingest.count,
          } : {
            about: 'refract_ingest_latency_seconds{source="grpc"}: from the stream naming the slot to its batch committed (bucket bounds)',
            batches: ingest.count,
            meanMs: ingest.count ? round((ingest.sum / ingest.count) * 1000, 1) : null,
            p50Ms: bucketQuantileMs(ingest, 0.5),
            p99Ms: bucketQuantileMs(ingest, 0.99),
            within10msPct: within(ingest, 0.01),
            within30msPct: within(ingest, 0.03),
            within100msPct: within(ingest, 0.1),
          },
          batchDuration: { batches: commit.count, meanMs: commit.count ? round((commit.sum / commit.count) * 1000, 1) : null, p99Ms: bucketQuantileMs(commit, 0.99) },
          minContextSlotWake: {
            about: 'refract_min_context_slot_wake_seconds: from the ingest event announcing the commit to the answer of a waiting request',
            woken: wake.count,
            within2_5msPct: within(wake, 0.0025),
            within10msPct: within(wake, 0.01),
            p99Ms: bucketQuantileMs(wake, 0.99),
          },
      };
  };
  const per = { grpc: summarize('grpc'), rpc: summarize('rpc') };
  await Promise.all([...names.map((n) => stop(daemons[n].child)), stop(sim.child)]);
  return {
    params: { seconds: P.seconds, slotMs: P.slotMs, txsPerBlock: P.txsPerBlock, viewPollMs: P.viewPollMs, pollerIntervalMs: 400 },
    slotsMeasured: records.length,
    slotsWithAccount: records.filter((r) => r.hasAccount).length,
    pollJumps: jumps,
    firstViewUncertaintyMs: stats(viewUncertainty),
    machine: { coresBusy: round((mc1.busy - mc0.busy) / runSecs, 2), stealCores: round((mc1.steal - mc0.steal) / runSecs, 2), loadavg: os.loadavg().map((x) => round(x, 2)) },
    ...per,
  };
}

// ---------------------------------------------------------------------------------------------------
// Part B: reads while ingesting.

async function readsWhileIngesting() {
  const sim = await simulator(P.busySlotMs, P.busyTxs);
  let d = await daemon(sim, true);
  await caughtUp(sim.port, d, 3);
  await sleep(3_000);
  // Existing hashes: the accounts of the generator's owners (the simulator's seed 1, 200 owners).
  const gen = new LightTxGenerator({ owners: 200, seed: 1 });
  const hashes: string[] = [];
  for (let i = 0; i < 200 && hashes.length < 4000; i++) {
    const r = await rpc(d.port, 'getCompressedAccountsByOwner', { owner: bs58.encode(gen.owner(i)), limit: 50 });
    for (const it of r.result?.value?.items ?? []) hashes.push(it.hash);
  }
  if (hashes.length < 100) throw new Error(`only ${hashes.length} hashes found`);
  const bodies = hashes.map((hash) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getCompressedAccount', params: { hash } }));

  type D = Awaited<ReturnType<typeof daemon>>;
  const load = (port: number, duration: number) =>
    autocannon({
      url: `http://127.0.0.1:${port}/`,
      connections: P.connections,
      overallRate: P.rate,
      duration,
      requests: [{ method: 'POST', headers: { 'content-type': 'application/json' }, setupRequest: (req: any) => ({ ...req, body: bodies[Math.floor(Math.random() * bodies.length)] }) }] as never,
    });
  /** `P.readSeconds` of load on `serve` while `ingest` (the same daemon, another one, or none) follows the chain. */
  const phase = async (name: string, note: string, serve: D, ingest: D | null) => {
    await load(serve.port, 3); // warm-up at the same rate (connections open, JIT), not measured
    const m0 = samples(await getText(serve.port, '/metrics')); // also resets the event-loop delay window
    const im0 = ingest && ingest !== serve ? samples(await getText(ingest.port, '/metrics')) : m0;
    const c0 = { serve: cpu(serve.child.pid!), ingest: ingest ? cpu(ingest.child.pid!) : null, sim: cpu(sim.child.pid!), self: process.cpuUsage(), machine: machineCpu(), threads: threadCpu(serve.child.pid!) };
    const t0 = performance.now();
    const r = await load(serve.port, P.readSeconds);
    const secs = (performance.now() - t0) / 1000;
    const m1 = samples(await getText(serve.port, '/metrics'));
    const im1 = ingest && ingest !== serve ? samples(await getText(ingest.port, '/metrics')) : m1;
    const c1 = { serve: cpu(serve.child.pid!), ingest: ingest ? cpu(ingest.child.pid!) : null, sim: cpu(sim.child.pid!), self: process.cpuUsage(c0.self), machine: machineCpu(), threads: threadCpu(serve.child.pid!) };
    const threads = Object.entries(c1.threads)
      .map(([k, v]) => [k, round((v - (c0.threads[k] ?? 0)) / secs, 3)!] as const)
      .filter(([, v]) => v >= 0.005)
      .sort((x, y) => y[1] - x[1]);
    const server = histogram(m0, m1, 'refract_rpc_request_duration_seconds', 'method="getCompressedAccount"');
    const gcKinds: Record<string, { count: number; totalMs: number; over10ms: number }> = {};
    for (const kind of ['minor', 'major', 'incremental', 'weakcb']) {
      const h = histogram(m0, m1, 'refract_nodejs_gc_duration_seconds', `kind="${kind}"`);
      if (!h.count) continue;
      const le10 = h.buckets.find(([le]) => Math.abs(le - 0.01) < 1e-9)?.[1] ?? h.count;
      gcKinds[kind] = { count: h.count, totalMs: round(h.sum * 1000, 1)!, over10ms: h.count - le10 };
    }
    const batches = histogram(im0, im1, 'refract_ingest_batch_duration_seconds');
    const blocks = (im1.get('refract_ingest_blocks_total') ?? 0) - (im0.get('refract_ingest_blocks_total') ?? 0);
    const perSec = (x: number) => round(x / secs, 2);
    const ingestCpu = c1.ingest && c0.ingest && ingest !== serve ? { daemonMain: perSec(c1.ingest.main - c0.ingest.main), daemonOtherThreads: perSec(c1.ingest.others - c0.ingest.others) } : null;
    const out = {
      phase: name,
      note,
      reqPerSec: round(r.requests.average, 0),
      client: { p50Ms: r.latency.p50, p90Ms: r.latency.p90, p99Ms: r.latency.p99, maxMs: r.latency.max, meanMs: round(r.latency.mean, 2) },
      non2xx: r.non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
      serverSide: { requests: server.count, meanMs: server.count ? round((server.sum / server.count) * 1000, 3) : null, p50Ms: bucketQuantileMs(server, 0.5), p99Ms: bucketQuantileMs(server, 0.99) },
      // prom-client samples the loop every 10 ms (monitorEventLoopDelay resolution) and records the whole interval: a free loop reads 10 ms.
      eventLoopDelay: {
        about: 'refract_nodejs_eventloop_lag_*_seconds of the serving daemon over the phase, minus the 10 ms sampling interval they include (0 = a free loop)',
        p50Ms: round((m1.get('refract_nodejs_eventloop_lag_p50_seconds') ?? NaN) * 1000 - 10, 1),
        p99Ms: round((m1.get('refract_nodejs_eventloop_lag_p99_seconds') ?? NaN) * 1000 - 10, 1),
        maxMs: round((m1.get('refract_nodejs_eventloop_lag_max_seconds') ?? NaN) * 1000 - 10, 1),
      },
      gc: gcKinds,
      ingest: { blocks, commits: batches.count, commitsPerSec: perSec(batches.count), batchMeanMs: batches.count ? round((batches.sum / batches.count) * 1000, 1) : null, batchP99Ms: bucketQuantileMs(batches, 0.99) },
      cpuCoresUsed: {
        daemonMain: perSec(c1.serve.main - c0.serve.main),
        daemonOtherThreads: perSec(c1.serve.others - c0.serve.others),
        daemonBusiestOther: perSec(c1.serve.busiestOther - c0.serve.busiestOther),
        ...(ingestCpu ? { ingestingNeighbour: ingestCpu } : {}),
        simulator: perSec(c1.sim.main + c1.sim.others - c0.sim.main - c0.sim.others),
        loadGenerator: perSec((c1.self.user + c1.self.system) / 1e6),
        daemonThreads: Object.fromEntries(threads.slice(0, 8)),
      },
      machine: {
        about: 'the whole VM over the phase (/proc/stat): cores busy (of os.cpus().length), of which not this bench\'s processes (other work on the shared machine), and steal',
        coresBusy: perSec(c1.machine.busy - c0.machine.busy),
        coresBusyOthers: null as number | null,
        stealCores: perSec(c1.machine.steal - c0.machine.steal),
      },
      loadavg: os.loadavg().map((x) => round(x, 2)),
    };
    const cu = out.cpuCoresUsed;
    const ours = (cu.daemonMain ?? 0) + (cu.daemonOtherThreads ?? 0) + (ingestCpu ? (ingestCpu.daemonMain ?? 0) + (ingestCpu.daemonOtherThreads ?? 0) : 0) + (cu.simulator ?? 0) + (cu.loadGenerator ?? 0);
    out.machine.coresBusyOthers = round((out.machine.coresBusy ?? 0) - ours, 2);
    console.error(`reads (${name}): ${JSON.stringify({ reqPerSec: out.reqPerSec, client: out.client, serverSide: out.serverSide, eventLoopDelay: { ...out.eventLoopDelay, about: undefined }, gc: out.gc, cpu: out.cpuCoresUsed, machine: { ...out.machine, about: undefined }, commitsPerSec: out.ingest.commitsPerSec })}`);
    return out;
  };
  /** The daemon's busiest thread besides its main one (the ingest thread), by CPU over `ms`. */
  const ingestThreadId = async (pid: number, ms = 2_000) => {
    const per = () => Object.fromEntries(readdirSync(`/proc/${pid}/task`).map((tid) => [tid, (() => { try { const x = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' '); return Number(x[11]) + Number(x[12]); } catch { return 0; } })()]));
    const a = per();
    await sleep(ms);
    const b = per();
    return Number(Object.keys(b).filter((t) => Number(t) !== pid).sort((x, y) => (b[y]! - (a[y] ?? 0)) - (b[x]! - (a[x] ?? 0)))[0]);
  };

  const phases = [];
  await post(sim.port, {}, '/pause');
  await sleep(1_000);
  phases.push(await phase('paused', 'simulator paused: nothing ingested (baseline)', d, null));
  // A copy of the store for a daemon that only serves (--no-ingest), taken while nothing is written.
  const copy = mkdtempSync(join(work, 'copy-'));
  execFileSync('cp', ['-r', '--sparse=always', `${d.db}/.`, copy]);
  await post(sim.port, {}, '/resume');
  await caughtUp(sim.port, d, 3);
  phases.push(await phase('grpc', `serving while ingesting ${P.busyTxs} Light transactions per ${P.busySlotMs} ms slot over gRPC`, d, d));
  const reader = await readOnlyDaemon(copy);
  phases.push(await phase('grpcNeighbour', 'a --no-ingest daemon on a copy of the store serves the reads while the first one ingests over gRPC beside it: the same CPU competition, no commits in the serving process', reader, d));
  await stop(reader.child);
  const tid = await ingestThreadId(d.child.pid!);
  os.setPriority(tid, 19);
  phases.push({ ...(await phase('grpcIngestNiced', `as grpc, with the daemon's busiest other thread (the ingest thread, tid ${tid}) at nice 19 (os.setPriority on its thread id)`, d, d)), nicedThread: tid });
  try {
    os.setPriority(tid, 0);
  } catch {
    // not allowed to raise the priority back: the next phase restarts the daemon anyway
  }
  // The read-transaction reset, measured alone on this store (read-only, in this process).
  const reset = resetCost(d.db, hashes);
  await stop(d.child);
  d = await daemon(sim, false, d.db);
  await caughtUp(sim.port, d, 5);
  phases.push(await phase('rpc', 'serving while ingesting the same stream with the RPC poller (the same store, restarted without --grpc-url)', d, d));
  await Promise.all([stop(d.child), stop(sim.child)]);
  return { params: { rate: P.rate, connections: P.connections, seconds: P.readSeconds, txsPerBlock: P.busyTxs, slotMs: P.busySlotMs, hashes: hashes.length }, phases, readTxnReset: reset };
}

/** `refract start --no-ingest` on `db`, serving only. */
async function readOnlyDaemon(db: string) {
  const port = await freePort();
  const child = refract(['start', '--db', db, '--no-ingest', '--no-prover', '--host', '127.0.0.1', '--port', String(port)]);
  await until('refract start --no-ingest', async () => typeof (await rpc(port, 'getIndexerSlot')).result === 'number', 60_000, child);
  return { port, db, child, grpc: false };
}

/** Reads of stored accounts with and without `resetReadTxn()` before each (the cost a commit adds to the next read). */
function resetCost(db: string, hashes: string[]) {
  const store = new Store({ path: db, readOnly: true });
  const keys = hashes.slice(0, 2000).map((h) => bs58.decode(h));
  const run = (reset: boolean) => {
    const t0 = performance.now();
    let n = 0;
    for (let rep = 0; rep < 5; rep++) {
      for (const k of keys) {
        if (reset) store.root.resetReadTxn();
        store.read((r) => r.account(k as never));
        n++;
      }
    }
    return ((performance.now() - t0) * 1000) / n;
  };
  run(false);
  run(true);
  const plain = run(false);
  const withReset = run(true);
  void store.close();
  return {
    about: 'µs per stored-account read in this process on the daemon\'s store (read-only), with and without lmdb-js resetReadTxn() before each read; a commit makes the API thread do one reset, so the cost per commit is the difference once',
    readUs: round(plain, 2),
    readAfterResetUs: round(withReset, 2),
    resetCostUs: round(withReset - plain, 2),
  };
}

// ---------------------------------------------------------------------------------------------------

const machine = { cpuModel: os.cpus()[0]?.model, cores: os.cpus().length, memGb: round(os.totalmem() / 2 ** 30, 1), node: process.version, platform: `${os.platform()} ${os.release()}`, loadavgBefore: os.loadavg().map((x) => round(x, 2)) };
const started = new Date().toISOString();
const tip = values['skip-tip'] ? null : await tipLatency();
const reads = values['skip-reads'] ? null : await readsWhileIngesting();

const targets = tip && {
  grpcP50: { targetMs: 30, measuredMs: tip.grpc.accountServedMinContextSlotMs.p50, met: (tip.grpc.accountServedMinContextSlotMs.p50 ?? Infinity) <= 30 },
  grpcP99: { targetMs: 100, measuredMs: tip.grpc.accountServedMinContextSlotMs.p99, met: (tip.grpc.accountServedMinContextSlotMs.p99 ?? Infinity) <= 100 },
  pollerP50: { targetMs: 'poll interval (400) + one block fetch', measuredMs: tip.rpc.accountServedMinContextSlotMs.p50, met: (tip.rpc.accountServedMinContextSlotMs.p50 ?? Infinity) <= 400 + 50 },
  minContextSlotWake: { target: 'answered within 10 ms of the commit', within10msPct: { grpc: tip.grpc.minContextSlotWake.within10msPct, rpc: tip.rpc.minContextSlotWake.within10msPct } },
  ...(reads
    ? {
        readsP99WhileIngesting: {
          targetMs: 10,
          measuredMs: Object.fromEntries(reads.phases.map((p) => [p.phase, p.client.p99Ms])),
          met: { grpc: reads.phases.find((p) => p.phase === 'grpc')!.client.p99Ms <= 10, rpc: reads.phases.find((p) => p.phase === 'rpc')!.client.p99Ms <= 10 },
        },
      }
    : {}),
};
const out = {
  bench: 'latency',
  date: started,
  machine: { ...machine, loadavgAfter: os.loadavg().map((x) => round(x, 2)) },
  about:
    'Through the binary: refract simulate --grpc-port (default profile) and refract start daemons. Tip latency: from the slot\'s first view at the node (the client\'s getSlot poll that first shows it) to Refract serving it (getIndexerSlot / getCompressedAccount with minContextSlot = the slot, sent at the first view or right after the client\'s getBlock; or polled without it every viewPollMs); one daemon over gRPC and one polling, at the same time on the same simulator. Reads while ingesting: autocannon getCompressedAccount at a fixed rate, simulator paused (baseline), following over gRPC, following with the poller. One run on a shared 2-core VM: the simulator, the daemons and the load generator share the cores.',
  tipLatency: tip,
  readsWhileIngesting: reads,
  targets,
};
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/latency.json'), `${JSON.stringify(out, null, 2)}\n`);

// Summary.
const line = (label: string, s: { p50: number | null; p99: number | null; max: number | null; n: number } | undefined) => (s ? `  ${label.padEnd(44)} p50 ${String(s.p50).padStart(6)}  p99 ${String(s.p99).padStart(6)}  max ${String(s.max).padStart(6)}  (n ${s.n})` : '');
console.log(`\nbench:latency (${machine.cpuModel}, ${machine.cores} cores, node ${machine.node})`);
if (tip) {
  console.log(`\nTip latency, ms from the node's first view (${tip.params.slotMs} ms slots, ${tip.params.txsPerBlock} tx/block, ${tip.slotsMeasured} slots; first view within ${tip.firstViewUncertaintyMs.p50} ms (p50) after the slot; machine ${tip.machine.coresBusy} cores busy):`);
  for (const n of ['grpc', 'rpc'] as const) {
    console.log(` ${n === 'grpc' ? 'gRPC' : 'RPC poller'}:`);
    console.log(line('slot served (getIndexerSlot minContextSlot)', tip[n].slotServedMs));
    console.log(line('account served (minContextSlot)', tip[n].accountServedMinContextSlotMs));
    console.log(line('account served (polling, no minContextSlot)', tip[n].accountServedPollingMs));
    const own = tip[n].daemonIngestLatency;
    console.log(`  daemon's own ingest latency: ${'meanMs' in own ? `mean ${own.meanMs} ms, ${own.within30msPct}% ≤ 30 ms` : 'n/a (synthetic block times)'}; batch mean ${tip[n].batchDuration.meanMs} ms; minContextSlot wake ≤ 10 ms: ${tip[n].minContextSlotWake.within10msPct}% of ${tip[n].minContextSlotWake.woken}`);
  }
}
if (reads) {
  console.log(`\nReads while ingesting: getCompressedAccount at ${reads.params.rate} req/s, ${reads.params.connections} connections, ${reads.params.seconds} s per phase (${reads.params.txsPerBlock} tx per ${reads.params.slotMs} ms slot):`);
  for (const p of reads.phases) {
    const gcMs = Object.values(p.gc).reduce((a, g) => a + g.totalMs, 0);
    console.log(`  ${p.phase.padEnd(15)} client p50 ${p.client.p50Ms} p99 ${p.client.p99Ms} max ${p.client.maxMs} ms | server p99 ≤ ${p.serverSide.p99Ms} ms | loop delay p99 ${p.eventLoopDelay.p99Ms} max ${p.eventLoopDelay.maxMs} ms | GC ${round(gcMs, 0)} ms | commits/s ${p.ingest.commitsPerSec} | cores: main ${p.cpuCoresUsed.daemonMain} other threads ${p.cpuCoresUsed.daemonOtherThreads} sim ${p.cpuCoresUsed.simulator} load ${p.cpuCoresUsed.loadGenerator}; machine ${p.machine.coresBusy} busy (${p.machine.coresBusyOthers} not ours)`);
  }
  console.log(`  resetReadTxn: a read ${reads.readTxnReset.readUs} µs, after a reset ${reads.readTxnReset.readAfterResetUs} µs`);
}
console.log(`\ntargets: ${JSON.stringify(targets, null, 2)}`);
console.log('\nresults: bench/results/latency.json');
process.exit(0);
