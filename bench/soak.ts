/**
 * Soak run: `refract start` ingesting the simulator's stream while this process sends a mixed load
 * (account reads, by-owner pages, Merkle proofs and validity proofs) for several minutes. Samples the
 * daemon's RSS and heap from its own /metrics every 10 s and reports whether memory is stable.
 * Writes bench/results/soak.json.
 *
 * Usage: [REFRACT_PREPARE_THREAD=1] npm run bench:soak [-- --minutes 5 --keys DIR --read-rps 200 --proof-every-ms 3000]
 * (the daemon inherits the environment, so REFRACT_* variables choose its configuration)
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import bs58 from 'bs58';
import { LightTxGenerator } from '../src/sim/generator.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '5' },
    keys: { type: 'string', default: './keys' },
    'read-rps': { type: 'string', default: '200' },
    'proof-every-ms': { type: 'string', default: '3000' },
  },
});
const minutes = Number(values.minutes);
const root = new URL('..', import.meta.url).pathname;
const simPort = 18898;
const apiPort = 18884;
const url = `http://127.0.0.1:${apiPort}/`;
const db = mkdtempSync(join(os.tmpdir(), 'refract-soak-'));

const sim = spawn(process.execPath, [join(root, 'bin/refract.mjs'), 'simulate', '--port', String(simPort), '--slot-ms', '400', '--txs-per-block', '20'], { stdio: 'ignore' });
const configFile = join(db, 'config.json');
writeFileSync(configFile, JSON.stringify({ rateLimit: false, logLevel: 'warn' }));
const daemon = spawn(process.execPath, [join(root, 'bin/refract.mjs'), 'start', '--db', join(db, 'data'), '--rpc-url', `http://127.0.0.1:${simPort}`, '--port', String(apiPort), '--host', '127.0.0.1', '--keys', values.keys!, '--config', configFile, '--no-simulator'], { stdio: ['ignore', 'ignore', 'inherit'] });

const call = async (method: string, params: unknown) => {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return (await r.json()) as { result?: any; error?: { message: string } };
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
for (let i = 0; i < 100; i++) {
  try {
    if ((await call('getIndexerSlot', {})).result !== undefined) break;
  } catch {}
  await sleep(300);
}

const gen = new LightTxGenerator({ owners: 200, seed: 1 });
const owners = Array.from({ length: 200 }, (_, i) => bs58.encode(gen.owner(i)));
const counts = { reads: 0, readErrors: 0, proofs: 0, proofErrors: 0 } as Record<string, number>;
const proofErrors = new Map<string, number>();
const samples: { t: number; slot: number; rssMB: number; heapMB: number; ingestHeapMB: number }[] = [];
const end = Date.now() + minutes * 60_000;
const t0 = Date.now();

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${apiPort}/metrics`)).text();
  const m = new RegExp(`^${name} ([0-9.e+]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

const readLoop = async () => {
  const gap = 1000 / Number(values['read-rps']);
  while (Date.now() < end) {
    const owner = owners[Math.floor(Math.random() * owners.length)]!;
    try {
      const page = await call('getCompressedAccountsByOwner', { owner, limit: 10 });
      const items = page.result?.value?.items ?? [];
      if (items.length) {
        await call('getCompressedAccount', { hash: items[0].hash });
        await call('getMultipleCompressedAccountProofs', items.slice(0, 4).map((a: { hash: string }) => a.hash));
      }
      counts.reads!++;
    } catch {
      counts.readErrors!++;
    }
    await sleep(gap);
  }
};
const proofLoop = async () => {
  while (Date.now() < end) {
    const owner = owners[Math.floor(Math.random() * owners.length)]!;
    const page = await call('getCompressedAccountsByOwner', { owner, limit: 1 }).catch(() => null);
    const hash = page?.result?.value?.items?.[0]?.hash;
    if (hash) {
      const r = await call('getValidityProof', { hashes: [hash] }).catch((e: Error) => ({ error: { message: e.message } }));
      if (r.error) {
        counts.proofErrors!++;
        const k = r.error.message.slice(0, 80);
        proofErrors.set(k, (proofErrors.get(k) ?? 0) + 1);
      } else counts.proofs!++;
    }
    await sleep(Number(values['proof-every-ms']));
  }
};
const sampleLoop = async () => {
  while (Date.now() < end) {
    try {
      samples.push({
        t: Math.round((Date.now() - t0) / 1000),
        slot: await metric('refract_indexer_slot'),
        rssMB: +((await metric('refract_process_resident_memory_bytes')) / 2 ** 20).toFixed(1),
        heapMB: +((await metric('refract_nodejs_heap_size_used_bytes')) / 2 ** 20).toFixed(1),
        // The committing thread's heap (the ingest thread by default); the main thread's is heapMB.
        ingestHeapMB: +((await metric('refract_ingest_thread_heap_bytes')) / 2 ** 20).toFixed(1),
      });
    } catch {}
    await sleep(10_000);
  }
};
await Promise.all([readLoop(), readLoop(), proofLoop(), sampleLoop()]);
daemon.kill('SIGTERM');
sim.kill('SIGTERM');

// Memory trend: compare the mean RSS of the second quarter with the last quarter (after warm-up).
const q = Math.max(1, Math.floor(samples.length / 4));
const mean = (xs: typeof samples) => xs.reduce((s, x) => s + x.rssMB, 0) / Math.max(1, xs.length);
const early = mean(samples.slice(q, 2 * q));
const late = mean(samples.slice(-q));
const out = {
  bench: 'soak',
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, loadavg: os.loadavg(), node: process.version },
  params: {
    minutes,
    readRps: Number(values['read-rps']),
    proofEveryMs: Number(values['proof-every-ms']),
    // Loop layout of the daemon (inherited environment; unset = the defaults for this machine).
    ingestThread: process.env.REFRACT_INGEST_THREAD ?? 'default',
    prepareThread: process.env.REFRACT_PREPARE_THREAD ?? 'default',
  },
  counts,
  proofErrors: Object.fromEntries(proofErrors),
  memory: { rssEarlyMB: +early.toFixed(1), rssLateMB: +late.toFixed(1), growthPct: +(((late - early) / early) * 100).toFixed(1) },
  samples,
};
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/soak.json'), `${JSON.stringify(out, null, 2)}\n`);
console.log(JSON.stringify({ ...out, samples: `${samples.length} samples` }, null, 2));
process.exit(0);
