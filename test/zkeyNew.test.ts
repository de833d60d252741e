// The initial Groth16 key from the native MSM (src/prover/engine/zkeyNew.ts) is snarkjs's, byte for byte:
// a small circuit with public inputs, an output, signals that appear in one matrix only (points at
// infinity) and constants, compiled here, through both. The keys the other prover tests build come from
// it too (createZKey), and their proofs verify: the big circuits are covered by those.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { nativeAddon } from '../src/native.ts';
import { compileCircuit, loadSnarkjs, terminateCurve } from '../src/prover/engine/snark.ts';
import { newZKeyNative } from '../src/prover/engine/zkeyNew.ts';
import { ProverError } from '../src/prover/errors.ts';
import { ensureDevPtau } from './helpers/devPtau.ts';
import { tempDir } from './helpers/photon.ts';
import { REQUIRE_NATIVE, skipWithout } from './helpers/required.ts';

const SOURCE = `pragma circom 2.0.0;
template T(n) {
  signal input a; signal input b; signal input d[n]; signal output c;
  signal m; signal k[n + 1];
  m <== a * b;
  k[0] <== m * m + 5;
  for (var i = 0; i < n; i++) k[i + 1] <== k[i] * d[i] + 21888242871839275222246405745257275088548364400416034343698204186575808495616 * a;
  c <== k[n] * b + 3 * m;
}
component main {public [a, d]} = T(3);
`;

let dir: string;
let r1cs: string;
let ptau: string;
beforeAll(async () => {
  dir = tempDir('refract-zkeynew-');
  await writeFile(path.join(dir, 't.circom'), SOURCE);
  r1cs = (await compileCircuit({ mainFile: path.join(dir, 't.circom'), outDir: dir, includeDirs: [], wasm: false })).r1csFile;
  ptau = await ensureDevPtau();
}, 120_000);
afterAll(terminateCurve);

describe.skipIf(skipWithout(!!(nativeAddon?.msmG1 && nativeAddon.msmG2), 'the native addon', REQUIRE_NATIVE))('newZKeyNative', () => {
  test("writes snarkjs newZKey's bytes and returns its circuit hash", async () => {
    const ours = path.join(dir, 'native.zkey');
    const theirs = path.join(dir, 'snarkjs.zkey');
    const hash = await newZKeyNative(nativeAddon!, r1cs, ptau, ours);
    const snarkjs = await loadSnarkjs();
    const theirHash = await snarkjs.zKey.newZKey(r1cs, ptau, theirs);
    const [a, b] = [await readFile(ours), await readFile(theirs)];
    expect(a.length).toBe(b.length);
    expect(a.equals(b)).toBe(true);
    expect(Buffer.from(hash).toString('hex')).toBe(Buffer.from(theirHash as Uint8Array).toString('hex'));
  });

  test('a file that is not an r1cs, or not a ptau: setup_failed naming it', async () => {
    const notR1cs = path.join(dir, 'x.bin');
    await writeFile(notR1cs, Buffer.alloc(64, 7));
    for (const [r, p, file] of [[notR1cs, ptau, notR1cs], [r1cs, notR1cs, notR1cs]] as const) {
      const err = await newZKeyNative(nativeAddon!, r, p, path.join(dir, 'bad.zkey')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProverError);
      expect((err as ProverError).code).toBe('setup_failed');
      expect((err as ProverError).message).toContain(file);
    }
  });
});
