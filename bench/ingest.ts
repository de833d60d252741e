/**
 * Ingest benchmark: synthetic valid legacy-format Light transactions (their hashes pass the
 * indexer's recomputation) → decode → parse → state update → LMDB, one write transaction per
 * batch of blocks, all on one core. Reports compressed outputs/s and Poseidon hashes/s (same run)
 * and writes bench/results/ingest.json.
 *
 * Usage: npm run bench:ingest [-- --blocks N --txs-per-block N --batch-blocks N]
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { poseidon2, poseidonBackend } from '../src/merkle/poseidon.ts';
import { LightTxGenerator } from '../src/sim/generator.ts';
import { decodeBlockJson } from '../src/solana/decode.ts';
import { Store } from '../src/store/store.ts';

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '300' },
    'txs-per-block': { type: 'string', default: '50' },
    'batch-blocks': { type: 'string', default: '10' },
    'compress-outputs': { type: 'string', default: '4' },
  },
});
const nBlocks = Number(values.blocks);
const txsPerBlock = Number(values['txs-per-block']);
const batchBlocks = Number(values['batch-blocks']);

// 1. Generate (not timed): JSON text as it would arrive from an RPC node.
const gen = new LightTxGenerator({ owners: 5000, seed: 7, compressOutputs: Number(values['compress-outputs']) });
const blocks: { slot: number; text: string }[] = [];
let generatedOutputs = 0;
for (let s = 1; s <= nBlocks; s++) {
  const b = gen.block(s, txsPerBlock);
  generatedOutputs += b.outputs;
  blocks.push({ slot: s, text: JSON.stringify(b.json) });
}

// 2. Poseidon(2) throughput on this core, same run.
const a = new Uint8Array(32).fill(1);
const b = new Uint8Array(32).fill(2);
a[0] = 0;
b[0] = 0;
for (let i = 0; i < 5000; i++) poseidon2(a, b);
const pN = 50_000;
let t = performance.now();
let h: Uint8Array = a;
for (let i = 0; i < pN; i++) h = poseidon2(h, b);
const poseidonSeconds = (performance.now() - t) / 1000;

// 3. Ingest (timed): JSON.parse + decode + parse + validate (hash recomputation) + persist.
const dir = mkdtempSync(join(os.tmpdir(), 'refract-bench-ingest-'));
const store = new Store({ path: dir });
const indexer = new Indexer(store, loadTreeRegistry());
let outputs = 0;
let treeHashes = 0;
let rejected = 0;
let txs = 0;
const cpu0 = process.cpuUsage();
t = performance.now();
for (let i = 0; i < blocks.length; i += batchBlocks) {
  const batch = blocks.slice(i, i + batchBlocks).map((x) => decodeBlockJson(JSON.parse(x.text), x.slot));
  const r = indexer.indexBlocks(batch);
  outputs += r.outputsInserted;
  treeHashes += r.treeHashes;
  rejected += r.rejected.length;
  txs += batch.reduce((s, x) => s + x.transactions.length, 0);
}
const seconds = (performance.now() - t) / 1000;
const cpu = process.cpuUsage(cpu0);
await store.close();
rmSync(dir, { recursive: true, force: true });

const result = {
  bench: 'ingest',
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, loadavg: os.loadavg(), node: process.version },
  params: { blocks: nBlocks, txsPerBlock, batchBlocks, compressOutputs: Number(values['compress-outputs']) },
  poseidon: { backend: poseidonBackend, hashesPerSecond: Math.round(pN / poseidonSeconds), usPerHash: +((poseidonSeconds * 1e6) / pN).toFixed(2) },
  ingest: {
    transactions: txs,
    outputs,
    generatedOutputs,
    rejected,
    seconds: +seconds.toFixed(3),
    cpuSeconds: +((cpu.user + cpu.system) / 1e6).toFixed(3),
    outputsPerSecond: Math.round(outputs / seconds),
    outputsPerCpuSecond: Math.round(outputs / ((cpu.user + cpu.system) / 1e6)),
    transactionsPerSecond: Math.round(txs / seconds),
    treeHashesPerOutput: +(treeHashes / outputs).toFixed(2),
    poseidonHashesPerSecondDuringIngest: Math.round((treeHashes + outputs) / seconds),
  },
  target: { outputsPerSecondPerCore: 20_000 },
};
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/ingest.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
if (rejected) process.exitCode = 1;
