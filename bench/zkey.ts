/**
 * The initial Groth16 key of own circuits: Refract's (`newZKeyNative`, src/prover/engine/zkeyNew.ts: one
 * native MSM per signal) against snarkjs `zKey.newZKey` on the same r1cs and ptau, in one run, with
 * stages: each circuit is compiled first (cached in `--build`), then both make its key in turn, `--n`
 * times; the files must be equal byte for byte (checked every round).
 *
 *   npm run bench:zkey -- [--circuits v2_inclusion_32_1,inclusion_26_1] [--n 1] [--ptau FILE]
 *                         [--build .refract-test-keys-v2/build] [--out bench/results/zkey.json]
 *
 * CPU is the process's user + system time (snarkjs runs on its worker threads, Refract on one thread);
 * wall is the elapsed time. The ptau defaults to REFRACT_DEV_PTAU (the development 2^16 file).
 */
import { readFile, rm } from 'node:fs/promises';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { nativeAddon, nativeAddonError } from '../src/native.ts';
import { loadSnarkjs, terminateCurve } from '../src/prover/engine/snark.ts';
import { newZKeyNative } from '../src/prover/engine/zkeyNew.ts';
import { compileCached } from '../src/prover/keys/keySetup.ts';

const { values } = parseArgs({
  options: {
    circuits: { type: 'string', default: 'v2_inclusion_32_1,inclusion_26_1' },
    n: { type: 'string', default: '1' },
    ptau: { type: 'string', default: process.env.REFRACT_DEV_PTAU ?? '' },
    build: { type: 'string', default: '.refract-test-keys-v2/build' },
    out: { type: 'string', default: 'bench/results/zkey.json' },
  },
});
const addon = nativeAddon;
if (!addon?.msmG1 || !addon.msmG2) {
  console.error(`bench:zkey needs the native addon (${nativeAddonError ?? 'no msmG1/msmG2'})`);
  process.exit(1);
}
if (!values.ptau) {
  console.error('bench:zkey needs --ptau FILE or REFRACT_DEV_PTAU (a prepared phase-2 ptau, e.g. ../shared/dev-ptau/pot16_dev.ptau)');
  process.exit(1);
}
const ptau = values.ptau;
const rounds = Number(values.n);
const tmp = path.join(os.tmpdir(), `refract-bench-zkey-${process.pid}`);
mkdirSync(tmp, { recursive: true });

/** CPU seconds (user + system, all threads) and wall ms of `f`. */
async function measure(f: () => Promise<unknown>): Promise<{ cpuS: number; wallMs: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await f();
  const c = process.cpuUsage(c0);
  return { cpuS: +((c.user + c.system) / 1e6).toFixed(2), wallMs: Math.round(performance.now() - t0) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const snarkjs = await loadSnarkjs();
const results = [];
for (const id of values.circuits!.split(',')) {
  const c = await compileCached(id, path.resolve(values.build!), { wasm: false });
  const ours = path.join(tmp, `${id}.native.zkey`);
  const theirs = path.join(tmp, `${id}.snarkjs.zkey`);
  const native: { cpuS: number; wallMs: number }[] = [];
  const reference: { cpuS: number; wallMs: number }[] = [];
  for (let r = 0; r < rounds; r++) {
    native.push(await measure(() => newZKeyNative(addon, c.r1csFile, ptau, ours)));
    reference.push(await measure(() => snarkjs.zKey.newZKey(c.r1csFile, ptau, theirs)));
    if (!(await readFile(ours)).equals(await readFile(theirs))) throw new Error(`${id}: the native key differs from snarkjs's`);
  }
  const row = {
    circuit: id,
    constraints: c.constraints,
    native: { cpuS: median(native.map((m) => m.cpuS)), wallMs: median(native.map((m) => m.wallMs)) },
    snarkjs: { cpuS: median(reference.map((m) => m.cpuS)), wallMs: median(reference.map((m) => m.wallMs)) },
    rounds: { native, snarkjs: reference },
  };
  const ratio = { cpu: +(row.native.cpuS / row.snarkjs.cpuS).toFixed(3), wall: +(row.native.wallMs / row.snarkjs.wallMs).toFixed(3) };
  results.push({ ...row, nativeOverSnarkjs: ratio });
  process.stderr.write(`[bench:zkey] ${id} (${c.constraints} constraints): native ${row.native.cpuS} CPU-s ${row.native.wallMs} ms | snarkjs ${row.snarkjs.cpuS} CPU-s ${row.snarkjs.wallMs} ms | ×${ratio.cpu} CPU, ×${ratio.wall} wall; equal bytes\n`);
}
await terminateCurve();
await rm(tmp, { recursive: true, force: true });
mkdirSync(path.dirname(values.out!), { recursive: true });
writeFileSync(
  values.out!,
  `${JSON.stringify({ bench: 'zkey', date: new Date().toISOString(), machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, msmImpl: addon.msmImpl?.() }, ptau, results }, null, 2)}\n`,
);
process.stderr.write(`[bench:zkey] written ${values.out}\n`);
process.exit(0);
