// Refract's native Groth16 prover (native/kernels/src/groth16.c, src/prover/engine/groth16Native.ts):
// proofs verify under the circuits' vkeys; for fixed r, s they are the very proof snarkjs makes
// (snarkjs' Fr.random stubbed to hand out the same r, s); malformed witnesses and keys give specific
// errors, never a proof; the pool proves with either backend; the backend is chosen by config
// (REFRACT_PROVER_BACKEND / --prover-backend, checked through the real binary).
// Keys: the v1 test keys (.refract-test-keys, built by setup on first use, ~1 min) and v2_inclusion_32_1's
// (.refract-test-keys-v2, built here when missing: compared with snarkjs on a random witness).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config/config.ts';
import { ProverError } from '../src/prover/errors.ts';
import { DEV_PTAU, ensureDevPtau, initialAddressTreeProof, syntheticAccount, TEST_KEYS_DIR, thrownProverError } from './helpers/proverFixtures.ts';
import { nativeAddon } from '../src/native.ts';
import { DEFAULT_TABLE_MB, loadNativeKey, nativeProverAvailable, nativeTableSets, proveNative, proverBackend, proverTableMb, type NativeGroth16Key } from '../src/prover/engine/groth16Native.ts';
import { keyFiles } from '../src/prover/keys/layout.ts';
import { ProverPool } from '../src/prover/run/pool.ts';
import { setupCircuits } from '../src/prover/keys/keySetup.ts';
import { prove, terminateCurve, useCurve, verify, WitnessCalculator, type VerificationKey } from '../src/prover/engine/snark.ts';
import { buildCircuitInput, type ValidityProofInputs } from '../src/prover/engine/witness.ts';
import { REPO_ROOT, tempDir } from './helpers/photon.ts';
import { runRefract, startRefract, stopAll } from './helpers/refractBin.ts';
import { runCommand } from './helpers/runCommand.ts';
import { REQUIRE_NATIVE } from './helpers/required.ts';

const R = 0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001n;
const IDS = ['inclusion_26_1', 'non-inclusion_26_1'] as const;
const KEYS_V2 = process.env.REFRACT_TEST_KEYS_V2 ?? path.join(REPO_ROOT, '.refract-test-keys-v2');
const INPUTS: Record<(typeof IDS)[number], ValidityProofInputs> = {
  inclusion_26_1: { accounts: [syntheticAccount(42, 5)], addresses: [] },
  'non-inclusion_26_1': { accounts: [], addresses: [initialAddressTreeProof(0x0102030405060708090an)] },
};

interface Circuit {
  zkey: Uint8Array;
  key: NativeGroth16Key;
  vkey: VerificationKey;
  wtns: Uint8Array;
  publicSignals: string[];
}
const circuits: Record<string, Circuit> = {};

const le32 = (v: bigint) => {
  const b = new Uint8Array(32);
  for (let i = 0; i < 32; i++, v >>= 8n) b[i] = Number(v & 0xffn);
  return b;
};
const randomScalar = () => BigInt(`0x${randomBytes(32).toString('hex')}`) % R;

const thrown = thrownProverError;

/** The addon's table checksum (msm.c table_checksum): four multiply-xor lanes over 8-byte words, folded, plus the length. */
function tableChecksum(b: Buffer): bigint {
  const M = 0x100000001b3n;
  const h = [0x9e3779b97f4a7c15n, 0xc2b2ae3d27d4eb4fn, 0x165667b19e3779f9n, 0x27d4eb2f165667c5n];
  for (let i = 0; i + 32 <= b.length; i += 32)
    for (let l = 0; l < 4; l++) {
      const v = BigInt.asUintN(64, (h[l]! ^ b.readBigUInt64LE(i + 8 * l)) * M);
      h[l] = v ^ (v >> 29n);
    }
  return BigInt.asUintN(64, (h[0]! ^ BigInt.asUintN(64, h[1]! << 1n) ^ BigInt.asUintN(64, h[2]! << 2n) ^ BigInt.asUintN(64, h[3]! << 3n)) + BigInt(b.length));
}

/** snarkjs' proof with its two `curve.Fr.random()` calls answering r then s. */
async function snarkjsProofWith(zkey: Uint8Array, wtns: Uint8Array, r: bigint, s: bigint) {
  await useCurve({ singleThread: true });
  const curve = (globalThis as unknown as { curve_bn128: { Fr: { random(): Uint8Array; e(v: bigint): Uint8Array } } }).curve_bn128;
  const original = curve.Fr.random;
  const queue = [curve.Fr.e(r), curve.Fr.e(s)];
  curve.Fr.random = () => queue.shift() ?? original.call(curve.Fr);
  try {
    return await prove(zkey, wtns);
  } finally {
    curve.Fr.random = original;
  }
}

/** A `.wtns` (v2) of `nVars` values that fits a key (constant 1, then random values < r): no valid statement. */
function randomWtns(nVars: number): Uint8Array {
  const out = new Uint8Array(12 + 12 + 40 + 12 + nVars * 32);
  const dv = new DataView(out.buffer);
  out.set([0x77, 0x74, 0x6e, 0x73]);
  dv.setUint32(4, 2, true);
  dv.setUint32(8, 2, true);
  dv.setUint32(12, 1, true);
  dv.setBigUint64(16, 40n, true);
  dv.setUint32(24, 32, true);
  out.set(le32(R), 28);
  dv.setUint32(60, nVars, true);
  dv.setUint32(64, 2, true);
  dv.setBigUint64(68, BigInt(nVars * 32), true);
  for (let i = 0; i < nVars; i++) out.set(le32(i === 0 ? 1n : randomScalar()), 76 + 32 * i);
  return out;
}

describe.skipIf(!nativeProverAvailable() && !REQUIRE_NATIVE)('native Groth16 prover', () => {
  beforeAll(async () => {
    await setupCircuits({ keysDir: TEST_KEYS_DIR, ptau: await ensureDevPtau(), circuits: [...IDS], log: () => {} });
    for (const id of IDS) {
      const f = keyFiles(TEST_KEYS_DIR, id);
      const zkey = new Uint8Array(await readFile(f.zkey));
      const wc = await WitnessCalculator.create(await readFile(f.wasm));
      const w = buildCircuitInput(INPUTS[id]);
      circuits[id] = {
        zkey,
        key: loadNativeKey(zkey, id),
        vkey: JSON.parse(await readFile(f.vkey, 'utf8')),
        wtns: await wc.calculateWtns(w.input),
        publicSignals: w.publicSignals,
      };
    }
  }, 600_000);

  afterAll(async () => {
    await stopAll();
    await terminateCurve();
  });

  test.each(IDS)('%s: a native proof verifies under the vkey, for the witness public signals only', async (id) => {
    const c = circuits[id]!;
    expect(c.key.nPublic).toBe(c.vkey.nPublic);
    const { proof, publicSignals, stages } = proveNative(c.key, c.wtns, { threads: 1, stages: true });
    expect(publicSignals).toEqual(c.publicSignals);
    expect(await verify(c.vkey, publicSignals, proof)).toBe(true);
    expect(await verify(c.vkey, [publicSignals[0]!, '1'], proof)).toBe(false);
    expect(proof.pi_a[2]).toBe('1');
    expect(proof.pi_b[2]).toEqual(['1', '0']);
    expect(Object.keys(stages!.cpu)).toEqual(['witness', 'abc', 'fft', 'msmA', 'msmB1', 'msmB2', 'msmCH', 'finish']);
    console.log(`${id} native single-thread CPU ms`, Object.fromEntries(Object.entries(stages!.cpu).map(([k, v]) => [k, Number(v.toFixed(1))])));
    // fresh r, s every time: same statement, another proof, still valid
    const again = proveNative(c.key, c.wtns);
    expect(again.proof.pi_a).not.toEqual(proof.pi_a);
    expect(await verify(c.vkey, again.publicSignals, again.proof)).toBe(true);
  });

  test.each(IDS)('%s: for fixed r, s the native A, B, C are snarkjs\' A, B, C', async (id) => {
    const c = circuits[id]!;
    // threads 1 / 0 (automatic: 2 here) / 3: everything in turn; the FFT chains and MSMs as tasks on two and three threads
    for (const [r, s, threads] of [
      [randomScalar(), randomScalar(), 1],
      [0n, 0n, 0],
      [1n, R - 1n, 3],
    ] as const) {
      const ours = proveNative(c.key, c.wtns, { rs: new Uint8Array([...le32(r), ...le32(s)]), threads });
      const theirs = await snarkjsProofWith(c.zkey, c.wtns, r, s);
      expect(ours.proof).toEqual(theirs.proof);
      expect(ours.publicSignals).toEqual(theirs.publicSignals);
    }
  });

  test('every field-arithmetic path of the addon (ifma: eight-lane MSM flush and coset FFT; adx; portable C) gives snarkjs\' proof for fixed r, s', async () => {
    const c = circuits.inclusion_26_1!;
    const impls = (['ifma', 'adx', 'c'] as const).filter((i) => nativeAddon!.msmSelectImpl!(i));
    const def = impls[0]!;
    expect(impls).toContain('c');
    const [r, s] = [randomScalar(), randomScalar()];
    const theirs = await snarkjsProofWith(c.zkey, c.wtns, r, s);
    try {
      for (const impl of impls)
        for (const threads of [1, 2]) {
          nativeAddon!.msmSelectImpl!(impl);
          const ours = proveNative(c.key, c.wtns, { rs: new Uint8Array([...le32(r), ...le32(s)]), threads });
          expect(ours.proof, `${impl}, ${threads} thread(s)`).toEqual(theirs.proof);
        }
    } finally {
      nativeAddon!.msmSelectImpl!(def);
    }
  });

  test('fixed-base MSM tables: all four built by default for inclusion_26_1, none with tableMb 0 or a budget they exceed; the same proof either way', () => {
    const c = circuits.inclusion_26_1!;
    expect(c.key.tableBytes).toBeGreaterThan(30 * 2 ** 20);
    expect(c.key.tableBytes).toBeLessThanOrEqual(DEFAULT_TABLE_MB * 2 ** 20);
    expect(c.key.bytes).toBeGreaterThan(c.key.tableBytes);
    // another load of the same key (another prover thread) shares the process's set instead of building one
    const before = nativeTableSets()!;
    expect(before.sets).toBeGreaterThanOrEqual(1);
    const again = loadNativeKey(c.zkey, 'again');
    expect(again.tableBytes).toBe(c.key.tableBytes);
    expect(nativeTableSets()).toEqual(before);
    const plain = loadNativeKey(c.zkey, 'plain', { tableMb: 0 });
    expect(plain.tableBytes).toBe(0);
    expect(loadNativeKey(c.zkey, 'small budget', { tableMb: 16 }).tableBytes).toBe(0); // all or none
    const rs = new Uint8Array([...le32(randomScalar()), ...le32(randomScalar())]);
    for (const threads of [1, 2]) {
      const want = proveNative(plain, c.wtns, { rs, threads }).proof;
      expect(proveNative(c.key, c.wtns, { rs, threads }).proof, `${threads} thread(s)`).toEqual(want);
      expect(proveNative(again, c.wtns, { rs, threads }).proof, `${threads} thread(s), shared tables`).toEqual(want);
    }
  });

  test('v2_inclusion_32_1: same proof as snarkjs for fixed r, s on a random witness', async () => {
    // the v2 test keys (cached in KEYS_V2, shared with prover.v2.test.ts under setup's lock; ~1 min the first time)
    await setupCircuits({ keysDir: KEYS_V2, ptau: await ensureDevPtau(), ptauInsecure: true, circuits: ['v2_inclusion_32_1'], log: () => {} });
    const zkey = new Uint8Array(await readFile(path.join(KEYS_V2, 'v2_inclusion_32_1.zkey')));
    const key = loadNativeKey(zkey, 'v2_inclusion_32_1');
    const wtns = randomWtns(key.nVars);
    const r = randomScalar();
    const s = randomScalar();
    const ours = proveNative(key, wtns, { rs: new Uint8Array([...le32(r), ...le32(s)]) });
    expect(ours.proof).toEqual((await snarkjsProofWith(zkey, wtns, r, s)).proof);
  }, 600_000);

  test('table files: built and written at a process\'s first load, read back by the next process (same proof); a damaged, truncated, foreign or inconsistent (rows swapped) file is named in tableNote and the tables are built; an unwritable path too', async () => {
    const c = circuits.inclusion_26_1!;
    const dir = tempDir('refract-tables-');
    try {
      const wtns = path.join(dir, 'w.wtns');
      writeFileSync(wtns, c.wtns);
      const wtnsNonInclusion = path.join(dir, 'n.wtns');
      writeFileSync(wtnsNonInclusion, circuits['non-inclusion_26_1']!.wtns);
      const rs = Buffer.from([...le32(randomScalar()), ...le32(randomScalar())]).toString('hex');
      const file = path.join(dir, 'inclusion_26_1.tables');
      // each run is a process that loads the key and builds or reads its tables: spawned, not spawnSync
      // (nine in a row would hold this worker's event loop past vitest's 60 s RPC timeout under load)
      const run = async (tableFile: string, id = 'inclusion_26_1', w = wtns) => {
        const r = await runCommand(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'test/helpers/tableFileLoad.ts'), keyFiles(TEST_KEYS_DIR, id).zkey, tableFile, w, rs], { cwd: REPO_ROOT, timeoutMs: 60_000 });
        expect(r.status, r.stderr).toBe(0);
        return JSON.parse(r.stdout) as { source: string; note: string | null; mib: number; proof: unknown };
      };
      const built = await run(file);
      expect([built.source, built.note]).toEqual(['built', null]);
      expect(built.mib).toBeGreaterThan(30);
      expect(statSync(file).size).toBeGreaterThan(30 * 2 ** 20);
      const read = await run(file);
      expect([read.source, read.note, read.mib]).toEqual(['file', null, built.mib]);
      expect(read.proof).toEqual(built.proof);
      // one flipped byte deep in a table: the checksum catches it; the rebuilt tables are written again
      const bytes = readFileSync(file);
      bytes[bytes.length >> 1] ^= 1;
      writeFileSync(file, bytes);
      const damaged = await run(file);
      expect(damaged.source).toBe('built');
      expect(damaged.note).toMatch(/checksum does not match \(damaged file\), rebuilt: table file /);
      expect(damaged.proof).toEqual(built.proof);
      expect((await run(file)).source).toBe('file');
      // rows 1 and 2 of the first table swapped and its checksum made right again: the rows' spot check refuses it
      const f2 = readFileSync(file);
      const rec = 16; // magic, mask, 0; then group u32, c u32, n u64, bytes u64, checksum u64, points
      const group = f2.readUInt32LE(rec);
      const n = Number(f2.readBigUInt64LE(rec + 8));
      const tableBytes = Number(f2.readBigUInt64LE(rec + 16));
      const pts = rec + 32;
      const row = n * (group === 1 ? 64 : 128);
      const row1 = Buffer.from(f2.subarray(pts + row, pts + 2 * row));
      f2.copy(f2, pts + row, pts + 2 * row, pts + 3 * row);
      row1.copy(f2, pts + 2 * row);
      f2.writeBigUInt64LE(tableChecksum(f2.subarray(pts, pts + tableBytes)), rec + 24);
      writeFileSync(file, f2);
      const swapped = await run(file);
      expect(swapped.source).toBe('built');
      expect(swapped.note).toMatch(/rows are not 2\^c multiples of each other/);
      expect(swapped.proof).toEqual(built.proof);
      truncateSync(file, 1000);
      expect((await run(file)).note).toMatch(/short file/);
      // another key's file (non-inclusion_26_1 reads inclusion_26_1's)
      const foreign = await run(file, 'non-inclusion_26_1', wtnsNonInclusion);
      expect(foreign.source).toBe('built');
      expect(foreign.note).toMatch(/for other points|not the key's points/);
      const unwritable = await run(path.join(dir, 'missing-dir', 'x.tables'));
      expect(unwritable.source).toBe('built');
      expect(unwritable.note).toMatch(/not written \(No such file or directory\)/);
      expect(unwritable.proof).toEqual(built.proof);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  test('malformed witnesses: a specific witness_failed error, never a proof', () => {
    const { key, wtns } = circuits.inclusion_26_1!;
    const base = wtns.length - key.nVars * 32;
    const cases: [string, Uint8Array, RegExp][] = [
      ['empty', new Uint8Array(0), /not a wtns file/],
      ['bad magic', Uint8Array.from(wtns, (b, i) => (i === 0 ? 0x78 : b)), /not a wtns file/],
      ['truncated', wtns.subarray(0, wtns.length - 1), /section 2 claims/],
      ['other circuit', circuits['non-inclusion_26_1']!.wtns, /values .* the circuit has 6320/],
      ['value ≥ r', (() => { const w = wtns.slice(); w.set(le32(R), base + 32 * 7); return w; })(), /value 7 is not < r/],
      ['w[0] ≠ 1', (() => { const w = wtns.slice(); w[base] = 2; return w; })(), /value 0 must be the constant 1/],
      ['other field', (() => { const w = wtns.slice(); w[28] ^= 1; return w; })(), /not BN254 Fr/],
    ];
    for (const [what, w, message] of cases) {
      const e = thrown(() => proveNative(key, w));
      expect(e.code, what).toBe('witness_failed');
      expect(e.message, what).toMatch(message);
    }
    const e = thrown(() => proveNative(key, wtns, { rs: new Uint8Array([...le32(R), ...le32(1n)]) }));
    expect(e.code).toBe('internal');
    expect(e.message).toMatch(/r and s must be < r/);
  });

  test('malformed keys: keys_missing naming what is wrong', () => {
    const { zkey } = circuits.inclusion_26_1!;
    const dv = new DataView(zkey.buffer, zkey.byteOffset, zkey.byteLength);
    // locate section 5 (A points) to damage a point
    let pos = 12;
    let sec5 = -1;
    for (let i = 0; i < dv.getUint32(8, true); i++) {
      const type = dv.getUint32(pos, true);
      const size = Number(dv.getBigUint64(pos + 4, true));
      if (type === 5) sec5 = pos + 12;
      pos += 12 + size;
    }
    const offCurve = zkey.slice();
    offCurve[sec5 + 64 * 3 + 5]! ^= 0x10; // A[3].x, non-zero point (A[0..2] are the constant and public ones)
    const cases: [string, Uint8Array, RegExp][] = [
      ['not a zkey', new Uint8Array(100), /not a zkey file/],
      ['truncated', zkey.subarray(0, zkey.length - 100), /claims .* bytes/],
      ['point off the curve', offCurve, /section 5 point 3 is not on BN254 G1/],
    ];
    for (const [what, z, message] of cases) {
      const e = thrown(() => loadNativeKey(z, 'test key'));
      expect(e.code, what).toBe('keys_missing');
      expect(e.message, what).toMatch(message);
      expect(e.message, what).toMatch(/^test key: /);
    }
  });

  test('the pool proves with either backend (native by default) and verifies each proof', async () => {
    expect(proverBackend()).toBe('native');
    for (const backend of ['native', 'snarkjs'] as const) {
      const pool = new ProverPool({ keysDir: TEST_KEYS_DIR, size: 1, singleThread: true, backend });
      try {
        expect(pool.stats().backend).toBe(backend);
        const w = buildCircuitInput(INPUTS.inclusion_26_1);
        const r = await pool.prove(w.circuitId, w.input);
        expect(r.publicSignals).toEqual(w.publicSignals);
        expect(await verify(circuits.inclusion_26_1!.vkey, r.publicSignals, r.proof)).toBe(true);
        console.log(`pool ${backend}: prove ${r.proveMs.toFixed(0)} ms, verify ${r.verifyMs.toFixed(0)} ms`);
      } finally {
        await pool.close();
      }
    }
  }, 300_000);
});

describe('proverBackend configuration', () => {
  test('comes from env or flags (native | snarkjs), absent by default, and rejects other values', () => {
    expect(loadConfig({ env: {} }).proverBackend).toBeUndefined();
    expect(loadConfig({ env: { REFRACT_PROVER_BACKEND: 'snarkjs' } }).proverBackend).toBe('snarkjs');
    expect(loadConfig({ env: { REFRACT_PROVER_BACKEND: 'snarkjs' }, flags: { proverBackend: 'native' } }).proverBackend).toBe('native');
    expect(() => loadConfig({ env: {}, flags: { proverBackend: 'gpu' } })).toThrow(/proverBackend/);
    expect(proverBackend('snarkjs')).toBe('snarkjs');
  });

  test('proverTableMb comes from env or flags, 96 by default, and rejects what is not a MiB count', () => {
    expect(loadConfig({ env: {} }).proverTableMb).toBeUndefined();
    expect(loadConfig({ env: { REFRACT_PROVER_TABLE_MB: '0' } }).proverTableMb).toBe(0);
    expect(loadConfig({ env: { REFRACT_PROVER_TABLE_MB: '8' }, flags: { proverTableMb: 128 } }).proverTableMb).toBe(128);
    expect(() => loadConfig({ env: { REFRACT_PROVER_TABLE_MB: '-1' } })).toThrow(/proverTableMb/);
    const saved = process.env.REFRACT_PROVER_TABLE_MB;
    try {
      delete process.env.REFRACT_PROVER_TABLE_MB;
      expect(proverTableMb()).toBe(96);
      expect(proverTableMb(0)).toBe(0);
      process.env.REFRACT_PROVER_TABLE_MB = '32';
      expect(proverTableMb()).toBe(32);
      process.env.REFRACT_PROVER_TABLE_MB = 'lots';
      expect(() => proverTableMb()).toThrow(/REFRACT_PROVER_TABLE_MB must be an integer number of MiB in \[0, 65536\], got "lots"/);
    } finally {
      if (saved === undefined) delete process.env.REFRACT_PROVER_TABLE_MB;
      else process.env.REFRACT_PROVER_TABLE_MB = saved;
    }
  });

  test.skipIf(!nativeProverAvailable() && !REQUIRE_NATIVE)('the binary: --prover-backend and REFRACT_PROVER_BACKEND reach the pool (GET /health); the tables\' source per circuit, read from the table file at the next start', async () => {
    const args = ['--keys', TEST_KEYS_DIR, '--circuits', 'inclusion_26_1', '--no-build-keys', '--prover-threads', '1'];
    const backendOf = async (d: { url: string }) => ((await (await fetch(`${d.url}/health`)).json()) as { prover: { pool: { backend: string } } }).prover.pool.backend;
    const a = await startRefract([...args, '--prover-backend', 'snarkjs']);
    expect(await backendOf(a)).toBe('snarkjs');
    await a.stop();
    const b = await startRefract(args, { REFRACT_PROVER_BACKEND: 'native', REFRACT_PROVER_TABLE_MB: '48' });
    expect(await backendOf(b)).toBe('native');
    // the budget, and once warm the sets built (inclusion_26_1's, 38 MiB, fits 48; one set for the process)
    const poolOf = async () => ((await (await fetch(`${b.url}/health`)).json()) as { prover: { pool: { tableMb: number; tables: { sets: number; mib: number } } } }).prover.pool;
    expect((await poolOf()).tableMb).toBe(48);
    const deadline = Date.now() + 60_000;
    while ((await poolOf()).tables.sets === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    expect((await poolOf()).tables.sets).toBe(1);
    expect((await poolOf()).tables.mib).toBeGreaterThan(30);
    const metrics = await (await fetch(`${b.url}/metrics`)).text();
    expect(Number(/^refract_prover_table_bytes (\d+)/m.exec(metrics)?.[1])).toBeGreaterThan(30 * 2 ** 20);
    // the field arithmetic the native kernels run, the same the addon reports in-process
    const pool = ((await (await fetch(`${b.url}/health`)).json()) as { prover: { pool: { fieldArithmetic: string } } }).prover.pool;
    expect(pool.fieldArithmetic).toBe(nativeAddon!.msmImpl!());
    // where the tables came from: built and written to the keys dir (or read, when an earlier run wrote the file)
    type ByCircuit = Record<string, { source: string; mib: number; note: string | null }>;
    const byCircuit = async (d: { url: string }) => ((await (await fetch(`${d.url}/health`)).json()) as { prover: { pool: { tables: { byCircuit: ByCircuit } } } }).prover.pool.tables.byCircuit;
    const first = (await byCircuit(b)).inclusion_26_1!;
    expect(['built', 'file']).toContain(first.source);
    expect(first.note).toBeNull();
    expect(existsSync(keyFiles(TEST_KEYS_DIR, 'inclusion_26_1').tables)).toBe(true);
    await b.stop();
    // the next start reads them from the table file
    const c = await startRefract(args, { REFRACT_PROVER_TABLE_MB: '48' });
    const until = Date.now() + 60_000;
    while (!(await byCircuit(c)).inclusion_26_1 && Date.now() < until) await new Promise((r) => setTimeout(r, 250));
    expect((await byCircuit(c)).inclusion_26_1).toMatchObject({ source: 'file', mib: first.mib, note: null });
    await c.stop();
    const bad = await runRefract(['start', '--no-ingest', '--prover-backend', 'gpu']);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/proverBackend/);
    const badTable = await runRefract(['start', '--no-ingest', '--prover-table-mb', 'lots']);
    expect(badTable.status).not.toBe(0);
    expect(badTable.stderr).toMatch(/--prover-table-mb must be a non-negative integer/);
    await stopAll();
  }, 180_000);
});
