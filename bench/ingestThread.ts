/**
 * The body of bench:ingest (bench/ingest.ts starts it on an import thread, as `refract index` runs
 * its import). Ingest benchmark: synthetic valid legacy-format Light transactions (their hashes pass the
 * indexer's recomputation) → decode → parse → state update → LMDB, one write transaction per
 * batch of blocks, all on one core. Reports compressed outputs/s and Poseidon hashes/s (same run)
 * and writes bench/results/ingest.json. Blocks are committed in batches of the file importer's default
 * size (`DEFAULT_BATCH_TRANSACTIONS` transactions, whole blocks), as `refract index` does. The `ingest` figures are the mean of the default kernel's
 * passes; `kernelComparison` sets them beside the scalar Poseidon batch kernel's (alternating passes);
 * `breakdown` times decoding alone and the same LMDB writes replayed alone, against the whole.
 * `formats` sets the legacy mix beside as many instruction-based (v2) transactions on the batched tree
 * HLKs5 (with the forester's BatchAppend / BatchNullify events), outputs per CPU-second for each.
 * `v2Breakdown` splits the v2 passes' CPU per output into decode, parse, state rules, the store writes
 * replayed, the batch events' root recomputation and the rest; `v2RootHashing` alternates the v2 passes
 * with passes hashing every batch event's root on its own (the A/B of the level-by-level run hashing).
 *
 * Usage: npm run bench:ingest [-- --blocks N --txs-per-block N --batch-blocks N --out FILE]
 * (`--batch-blocks` defaults to DEFAULT_BATCH_TRANSACTIONS ÷ txs-per-block; `--out` defaults to
 * bench/results/ingest.json, e.g. `--out /tmp/ingest-smoke.json` for a smoke run with small N.)
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { resourceLimits, workerData } from 'node:worker_threads';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { DEFAULT_BATCH_TRANSACTIONS } from '../src/ingest/importFiles.ts';
import { selectBatchRootHashing } from '../src/state/batchedTree.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { parseBlocks } from '../src/ingest/prepareBatch.ts';
import { deriveStateUpdates } from '../src/state/stateUpdate.ts';
import { nativeAddon, poseidon2, poseidonBackend } from '../src/merkle/poseidon.ts';
import { LightTxGenerator } from '../src/sim/generator.ts';
import { decodeBlockJson } from '../src/solana/decode.ts';
import { type RecordedWrite, Store, type StoreOptions } from '../src/store/store.ts';

const { values } = parseArgs({
  args: (workerData as { args?: string[] } | null)?.args ?? process.argv.slice(2),
  options: {
    blocks: { type: 'string', default: '300' },
    'txs-per-block': { type: 'string', default: '50' },
    'batch-blocks': { type: 'string' },
    'compress-outputs': { type: 'string', default: '4' },
    out: { type: 'string' },
  },
});
const nBlocks = Number(values.blocks);
const txsPerBlock = Number(values['txs-per-block']);
const batchBlocks = values['batch-blocks'] ? Number(values['batch-blocks']) : Math.max(1, Math.floor(DEFAULT_BATCH_TRANSACTIONS / txsPerBlock));

// 1. Generate (not timed): JSON text as it would arrive from an RPC node.
const gen = new LightTxGenerator({ owners: 5000, seed: 7, compressOutputs: Number(values['compress-outputs']) });
const blocks: { slot: number; text: string }[] = [];
let generatedOutputs = 0;
for (let s = 1; s <= nBlocks; s++) {
  const b = gen.block(s, txsPerBlock);
  generatedOutputs += b.outputs;
  blocks.push({ slot: s, text: JSON.stringify(b.json) });
}
// The same number of blocks and transactions, all in the instruction-based (v2) format on HLKs5:
// compress (1–2 outputs) and transfer (1 in, 2 out) into its queues, and the forester's batch events.
const noLegacy = { compress: 0, transfer: 0, tokenMint: 0, tokenTransfer: 0, createAddress: 0 };
const genV2 = new LightTxGenerator({ owners: 5000, seed: 7, weights: noLegacy, v2Weight: 1, maxV2Leaves: 2 * nBlocks * txsPerBlock + 64 });
const blocksV2: { slot: number; text: string }[] = [];
for (let s = 1; s <= nBlocks; s++) blocksV2.push({ slot: s, text: JSON.stringify(genV2.block(s, txsPerBlock).json) });

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

// 3. Ingest (timed): JSON.parse + decode + parse + validate (hash recomputation) + persist, into a
//    fresh store. Where the CPU has AVX-512 IFMA the run alternates the eight-lane batch kernel
//    (default) with the scalar one, 2 passes each after a warm-up, so their ratio comes from one run.
interface Pass {
  outputs: number;
  treeHashes: number;
  rejected: number;
  txs: number;
  seconds: number;
  cpuSeconds: number;
  /** Batch events' root recomputation (src/state/batchedTree.ts): Poseidon hashes and seconds. */
  rootHashes: number;
  rootSeconds: number;
}
/** Runs `fn` on a store in a fresh temporary directory (options `opts`), then closes and removes it. */
async function withTempStore<T>(opts: Omit<StoreOptions, 'path'>, fn: (store: Store) => T): Promise<T> {
  const dir = mkdtempSync(join(os.tmpdir(), 'refract-bench-ingest-'));
  const store = new Store({ ...opts, path: dir });
  try {
    return fn(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
/**
 * One ingest of the first `upTo` blocks into a fresh store. With `record`, every batch's LMDB writes
 * are appended to it (one array per batch) for the breakdown's replay.
 */
function ingestPass(upTo = blocks.length, record?: RecordedWrite[][], src = blocks): Promise<Pass> {
  let current: RecordedWrite[] = [];
  const onWrite = record ? (db: string, key: Uint8Array, value: Uint8Array | null) => current.push({ db, key: key.slice(), value: value ? value.slice() : null }) : undefined;
  return withTempStore({ onWrite }, (store) => {
    const indexer = new Indexer(store, loadTreeRegistry());
    const p: Pass = { outputs: 0, treeHashes: 0, rejected: 0, txs: 0, seconds: 0, cpuSeconds: 0, rootHashes: 0, rootSeconds: 0 };
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < upTo; i += batchBlocks) {
      const batch = src.slice(i, Math.min(i + batchBlocks, upTo)).map((x) => decodeBlockJson(JSON.parse(x.text), x.slot));
      if (record) record.push((current = []));
      const r = indexer.indexBlocks(batch);
      p.outputs += r.outputsInserted;
      p.treeHashes += r.treeHashes;
      p.rejected += r.rejected.length;
      p.rootHashes += r.batchEvents.rootHashes;
      p.rootSeconds += r.batchEvents.rootSeconds;
      p.txs += batch.reduce((s, x) => s + x.transactions.length, 0);
    }
    p.seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    p.cpuSeconds = (cpu.user + cpu.system) / 1e6;
    return p;
  });
}
const addon = nativeAddon;
const kernels: ('ifma' | 'scalar' | null)[] = addon?.batchImpl?.() === 'ifma' ? ['ifma', 'scalar', 'ifma', 'scalar'] : [null, null];
const passes: { kernel: string | null; pass: Pass }[] = [];
// Warm-up (not recorded): the first fifth of the blocks with each kernel, so JIT tiers settle.
for (const k of new Set(kernels)) {
  if (k) addon!.selectBatchImpl!(k);
  await ingestPass(Math.ceil(blocks.length / 5));
}
for (const k of kernels) {
  if (k) addon!.selectBatchImpl!(k);
  passes.push({ kernel: k, pass: await ingestPass() });
}
if (addon?.selectBatchImpl) addon.selectBatchImpl(kernels[0] ?? 'scalar');

// 4. Breakdown (same run): what two floors cost alone, per output, against the full pipeline above.
//    - decode: JSON.parse + decodeBlockJson of every block, nothing else;
//    - storeWrites: the LMDB puts and deletes one ingest pass made, recorded (Store `onWrite`) and
//      replayed alone into a fresh store, one write transaction per batch as recorded.
//    Passes alternate (decode, replay, decode, replay) so drift hits both alike.
function decodePass(src = blocks): number {
  const cpu0 = process.cpuUsage();
  let n = 0;
  for (const x of src) n += decodeBlockJson(JSON.parse(x.text), x.slot).transactions.length;
  const cpu = process.cpuUsage(cpu0);
  if (n === 0) throw new Error('no transactions decoded');
  return (cpu.user + cpu.system) / 1e6;
}
const recorded: RecordedWrite[][] = [];
await ingestPass(blocks.length, recorded);
function replayPass(rec = recorded): Promise<number> {
  return withTempStore({}, (store) => {
    const cpu0 = process.cpuUsage();
    for (const batch of rec) store.applyRecordedWrites(batch);
    const cpu = process.cpuUsage(cpu0);
    return (cpu.user + cpu.system) / 1e6;
  });
}
decodePass();
await replayPass();
const decodeCpu: number[] = [];
const replayCpu: number[] = [];
for (let i = 0; i < 2; i++) {
  decodeCpu.push(decodePass());
  replayCpu.push(await replayPass());
}
// 5. Formats (same run): the v2 blocks, a warm-up on their first fifth, then two passes with the default kernel.
await ingestPass(Math.ceil(blocksV2.length / 5), undefined, blocksV2);
// Alternating with the per-event root hashing (the A/B of `v2RootHashing`): run, event, run, event.
const v2Passes: Pass[] = [];
const v2EventPasses: Pass[] = [];
for (let i = 0; i < 2; i++) {
  v2Passes.push(await ingestPass(blocksV2.length, undefined, blocksV2));
  selectBatchRootHashing('event');
  v2EventPasses.push(await ingestPass(blocksV2.length, undefined, blocksV2));
  selectBatchRootHashing('run');
}

// 6. v2 breakdown (same run), as `breakdown` for the legacy mix, plus the stages between:
//    - parse: parseBlocks (legacy + instruction-based parsers) of each batch, decoded beforehand (not timed);
//    - stateRules: deriveStateUpdates on the parsed transactions (output hashes recomputed, queue entries), timed alone;
//    - storeWrites: the v2 pass's LMDB puts and deletes replayed alone;
//    - batchEventRoots: the batch events' root recomputation inside the v2 passes above (stored-node reads + Poseidon);
//    - rest: total − all of the above (account / queue / node record reads and encoding, event planning, GC).
function parsePass(src = blocksV2): { parse: number; stateRules: number } {
  const registry = loadTreeRegistry();
  let parse = 0;
  let stateRules = 0;
  for (let i = 0; i < src.length; i += batchBlocks) {
    const batch = src.slice(i, i + batchBlocks).map((x) => decodeBlockJson(JSON.parse(x.text), x.slot));
    let c0 = process.cpuUsage();
    const { parsed } = parseBlocks(batch);
    if (parsed.length === 0) throw new Error('no transactions parsed');
    let c = process.cpuUsage(c0);
    parse += (c.user + c.system) / 1e6;
    // The state rules on the parsed transactions (prepareBatch's second half), timed alone.
    c0 = process.cpuUsage();
    if (deriveStateUpdates(parsed, registry).some((o) => o.rejected)) throw new Error('v2 transactions rejected');
    c = process.cpuUsage(c0);
    stateRules += (c.user + c.system) / 1e6;
  }
  return { parse, stateRules };
}
const recordedV2: RecordedWrite[][] = [];
await ingestPass(blocksV2.length, recordedV2, blocksV2);
parsePass();
const v2Decode: number[] = [];
const v2Parse: number[] = [];
const v2StateRules: number[] = [];
const v2Replay: number[] = [];
for (let i = 0; i < 2; i++) {
  v2Decode.push(decodePass(blocksV2));
  const pp = parsePass();
  v2Parse.push(pp.parse);
  v2StateRules.push(pp.stateRules);
  v2Replay.push(await replayPass(recordedV2));
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const summary = (ps: Pass[]) => ({
  outputsPerSecond: Math.round(mean(ps.map((p) => p.outputs / p.seconds))),
  outputsPerCpuSecond: Math.round(mean(ps.map((p) => p.outputs / p.cpuSeconds))),
  passes: ps.map((p) => ({ seconds: +p.seconds.toFixed(3), cpuSeconds: +p.cpuSeconds.toFixed(3) })),
});
const main = passes.filter((x) => x.kernel === kernels[0]).map((x) => x.pass);
const first = main[0]!;
const outputs = first.outputs;
const treeHashes = first.treeHashes;
const rejected = passes.reduce((a, x) => a + x.pass.rejected, 0) + [...v2Passes, ...v2EventPasses].reduce((a, p) => a + p.rejected, 0);
const formatSummary = (ps: Pass[]) => ({
  transactions: ps[0]!.txs,
  outputs: ps[0]!.outputs,
  rejected: ps.reduce((a, p) => a + p.rejected, 0),
  cpuSeconds: +mean(ps.map((p) => p.cpuSeconds)).toFixed(3),
  outputsPerCpuSecond: Math.round(mean(ps.map((p) => p.outputs / p.cpuSeconds))),
});
/** The v2 breakdown (section 6) in CPU µs per output of the v2 passes `ps`. */
function v2BreakdownOf(ps: Pass[]) {
  const n = ps[0]!.outputs;
  const us = (sec: number) => +((sec / n) * 1e6).toFixed(1);
  const total = mean(ps.map((p) => p.cpuSeconds));
  const decode = mean(v2Decode);
  const parse = mean(v2Parse);
  const stateRules = mean(v2StateRules);
  const storeWrites = mean(v2Replay);
  const roots = mean(ps.map((p) => p.rootSeconds));
  return {
    about:
      'CPU µs per output of the v2 passes of `formats`, same run. decode: JSON.parse + decodeBlockJson alone. parse: parseBlocks alone (instruction-based and noop parsers). stateRules: deriveStateUpdates on the parsed transactions, timed alone (output hashes recomputed in one batched Poseidon pass, queue entries). storeWrites: the LMDB puts and deletes of one v2 pass replayed alone. batchEventRoots: the batch events\' root recomputation (stored-node reads + Poseidon, every new_root checked), timed inside the passes (wall ≈ CPU, one thread). rest: total − the others (store reads, record encoding, event planning, GC).',
    totalUsPerOutput: us(total),
    decodeUsPerOutput: us(decode),
    parseUsPerOutput: us(parse),
    stateRulesUsPerOutput: us(stateRules),
    storeWritesUsPerOutput: us(storeWrites),
    batchEventRootsUsPerOutput: us(roots),
    restUsPerOutput: us(total - decode - parse - stateRules - storeWrites - roots),
    rootHashesPerOutput: +(ps[0]!.rootHashes / n).toFixed(2),
    writesPerOutput: +(recordedV2.reduce((a, b) => a + b.length, 0) / n).toFixed(2),
  };
}
const txs = first.txs;
const seconds = mean(main.map((p) => p.seconds));
const cpuSeconds = mean(main.map((p) => p.cpuSeconds));
const scalar = passes.filter((x) => x.kernel === 'scalar').map((x) => x.pass);
const kernelComparison = scalar.length
  ? {
      batchKernel: 'ifma',
      ifma: summary(main),
      scalar: summary(scalar),
      cpuRatioIfmaOverScalar: +(mean(main.map((p) => p.outputs / p.cpuSeconds)) / mean(scalar.map((p) => p.outputs / p.cpuSeconds))).toFixed(2),
    }
  : { batchKernel: addon?.batchImpl?.() ?? null };

const result = {
  bench: 'ingest',
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, loadavg: os.loadavg(), node: process.version },
  // The thread's young generation (MiB), as `refract index` sets it (src/ingest/threads/thread.ts).
  youngGenerationMb: resourceLimits.maxYoungGenerationSizeMb ?? null,
  params: { blocks: nBlocks, txsPerBlock, batchBlocks, batchTransactions: batchBlocks * txsPerBlock, compressOutputs: Number(values['compress-outputs']) },
  poseidon: { backend: poseidonBackend, hashesPerSecond: Math.round(pN / poseidonSeconds), usPerHash: +((poseidonSeconds * 1e6) / pN).toFixed(2) },
  ingest: {
    transactions: txs,
    outputs,
    generatedOutputs,
    rejected,
    seconds: +seconds.toFixed(3),
    cpuSeconds: +cpuSeconds.toFixed(3),
    outputsPerSecond: Math.round(outputs / seconds),
    outputsPerCpuSecond: Math.round(outputs / cpuSeconds),
    transactionsPerSecond: Math.round(txs / seconds),
    treeHashesPerOutput: +(treeHashes / outputs).toFixed(2),
    poseidonHashesPerSecondDuringIngest: Math.round((treeHashes + outputs) / seconds),
  },
  kernelComparison,
  breakdown: {
    about:
      'CPU µs per output, same run. decode: JSON.parse + decodeBlockJson alone. storeWrites: the LMDB puts and deletes of one pass replayed alone (one write transaction per batch). rest: total − decode − storeWrites (hash recomputation, tree hashing, state rules, store reads, key and record encoding, GC). floorOutputsPerCpuSecond: 1e6 ÷ (decode + storeWrites), what decode and the store alone would allow. Both floors are lower bounds: decode drops each block as soon as it is decoded (an import keeps a whole batch alive), and the replay writes prepared keys and values.',
    totalUsPerOutput: +((cpuSeconds / outputs) * 1e6).toFixed(1),
    decodeUsPerOutput: +((mean(decodeCpu) / outputs) * 1e6).toFixed(1),
    storeWritesUsPerOutput: +((mean(replayCpu) / outputs) * 1e6).toFixed(1),
    restUsPerOutput: +(((cpuSeconds - mean(decodeCpu) - mean(replayCpu)) / outputs) * 1e6).toFixed(1),
    writesPerOutput: +(recorded.reduce((a, b) => a + b.length, 0) / outputs).toFixed(2),
    floorOutputsPerCpuSecond: Math.round(outputs / (mean(decodeCpu) + mean(replayCpu))),
    passes: { decodeCpuSeconds: decodeCpu.map((x) => +x.toFixed(3)), storeWritesCpuSeconds: replayCpu.map((x) => +x.toFixed(3)) },
  },
  formats: {
    about:
      'Outputs per CPU-second by transaction format, same run, same blocks × transactions per block, default kernel, mean of 2 passes each. legacy: the mix of `ingest` (noop events on the v1 trees smt1/amt1). v2: instruction-based transactions only (light-system invoke + insert_into_queues) on the batched tree HLKs5 — compress (1–2 outputs) and transfer (1 input, 2 outputs) into its output / input queues — with the forester BatchAppend / BatchNullify events (zkp batch 10, new_root checked) among them.',
    legacy: formatSummary(main),
    v2: formatSummary(v2Passes),
  },
  v2Breakdown: v2BreakdownOf(v2Passes),
  v2RootHashing: {
    about:
      'The v2 passes of `formats` (run: a StateV2 tree\'s in-sequence batch events of one block batch hashed level by level together, the default) alternated with as many passes hashing each event\'s root on its own (event: the previous code path). Same blocks, same roots and writes.',
    run: { ...formatSummary(v2Passes), batchEventRootsUsPerOutput: +((mean(v2Passes.map((p) => p.rootSeconds)) / v2Passes[0]!.outputs) * 1e6).toFixed(1) },
    event: { ...formatSummary(v2EventPasses), batchEventRootsUsPerOutput: +((mean(v2EventPasses.map((p) => p.rootSeconds)) / v2EventPasses[0]!.outputs) * 1e6).toFixed(1) },
    cpuRatioRunOverEvent: +(mean(v2Passes.map((p) => p.outputs / p.cpuSeconds)) / mean(v2EventPasses.map((p) => p.outputs / p.cpuSeconds))).toFixed(2),
  },
  target: { outputsPerSecondPerCore: 20_000, usPerOutput: 50 },
};
const outFile = values.out ?? new URL('./results/ingest.json', import.meta.url).pathname;
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
if (rejected) process.exitCode = 1;
