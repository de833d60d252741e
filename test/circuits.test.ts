// The v1 circuits: registry ids and shapes, and every one of the 15 compiled (npm circom2 --O2) with its
// constraint count pinned and its public-input layout checked; the per-slot formula the counts follow is
// checked too (as in circuits.v2.test.ts). Compiling all 15 costs about 125 CPU-s on a 2-core AMD EPYC
// Zen 5 (the six one- and two-slot shapes 22% of that); on a slow 2-core Ice Lake it took 740 s of a
// 33-minute CI run, and REFRACT_TEST_COMPILE_ALL=0 compiles only those six (see COMPILED).
// Builds are cached in .refract-test-keys/build by source hash (shared with test/prover.test.ts and
// `setupCircuits`), so only the first run compiles. Only the shapes whose witness calculator some test
// runs (WITH_WASM) are compiled with --wasm; the others need their r1cs alone (a quarter less compile).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  CIRCUIT_IDS,
  CIRCUITS,
  circuitIdFor,
  CONSTRAINTS_PER_ACCOUNT,
  CONSTRAINTS_PER_ADDRESS,
  explainConstraintFailure,
  getCircuit,
  mainSource,
} from '../src/prover/keys/circuits.ts';
import { ProverError } from '../src/prover/errors.ts';
import { initialAddressTreeProof, syntheticAccount, TEST_KEYS_DIR } from './helpers/proverFixtures.ts';
import { compileCached, compileCircuits, type CompiledCircuit } from '../src/prover/keys/keySetup.ts';
import { readR1csInfo, WitnessCalculator } from '../src/prover/engine/snark.ts';
import { buildCircuitInput } from '../src/prover/engine/witness.ts';

/** Constraint counts measured with circom 2.2.3 --O2 + circomlib 2.0.5 (spec perf.md §1.2). */
const PINNED: Record<string, number> = {
  inclusion_26_1: 6292,
  inclusion_26_2: 12584,
  inclusion_26_3: 18876,
  inclusion_26_4: 25168,
  inclusion_26_8: 50336,
  'non-inclusion_26_1': 7049,
  'non-inclusion_26_2': 14098,
  combined_26_26_1_1: 13341,
  combined_26_26_1_2: 20390,
  combined_26_26_2_1: 19633,
  combined_26_26_2_2: 26682,
  combined_26_26_3_1: 25925,
  combined_26_26_3_2: 32974,
  combined_26_26_4_1: 32217,
  combined_26_26_4_2: 39266,
};

describe('circuit registry', () => {
  test('ids and shapes follow the reference prover', () => {
    expect(CIRCUIT_IDS).toEqual(Object.keys(PINNED));
    expect(circuitIdFor(1, 0)).toBe('inclusion_26_1');
    expect(circuitIdFor(8, 0)).toBe('inclusion_26_8');
    expect(circuitIdFor(0, 2)).toBe('non-inclusion_26_2');
    expect(circuitIdFor(3, 2)).toBe('combined_26_26_3_2');
    for (const c of CIRCUITS) {
      expect(c.constraints).toBe(PINNED[c.id]);
      expect(c.constraints).toBe(c.nAccounts * CONSTRAINTS_PER_ACCOUNT + c.nAddresses * CONSTRAINTS_PER_ADDRESS);
      expect(c.nPublic).toBe(2 * (c.nAccounts + c.nAddresses));
      expect(circuitIdFor(c.nAccounts, c.nAddresses)).toBe(c.id);
    }
  });

  test('unsupported shapes throw unsupported_shape listing the supported shapes', () => {
    for (const [n, m] of [[5, 0], [0, 0], [0, 3], [5, 1], [1, 4], [9, 0]] as const) {
      let err: unknown;
      try {
        circuitIdFor(n, m);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ProverError);
      expect((err as ProverError).code).toBe('unsupported_shape');
      expect((err as ProverError).message).toMatch(/supported shapes: accounts only: 1, 2, 3, 4 or 8/);
    }
    expect(() => getCircuit('inclusion_26_5')).toThrow(/unknown circuit id "inclusion_26_5"; known ids: inclusion_26_1/);
  });

  test('generated main files declare the public inputs in [roots, leaves, addrRoots, values] order', () => {
    expect(mainSource(getCircuit('combined_26_26_2_1'))).toContain(
      'component main {public [roots, leaves, addrRoots, values]} = Combined(26, 26, 2, 1);',
    );
    expect(mainSource(getCircuit('non-inclusion_26_2'))).toContain('{public [roots, values]} = NonInclusion(26, 2);');
  });

  test('constraint failures are explained', () => {
    expect(explainConstraintFailure('Assert Failed. Error in template Inclusion_73 line: 21')).toMatch(/do not fold to the given state root/);
    expect(explainConstraintFailure('Assert Failed. Error in template Num2Bits_0 line: 38\nError in template AssertIsLess_1')).toMatch(/range check/);
  });
});

/**
 * The shapes compiled here: all 15; with REFRACT_TEST_COMPILE_ALL=0 (for a machine too slow for CI's 30
 * minutes) only one and two slots of each kind and the combined witness test's shape, whose counts confirm
 * the per-slot formula the other nine follow.
 */
const COMPILED =
  process.env.REFRACT_TEST_COMPILE_ALL === '0'
    ? ['inclusion_26_1', 'inclusion_26_2', 'non-inclusion_26_1', 'non-inclusion_26_2', 'combined_26_26_1_1', 'combined_26_26_2_1']
    : Object.keys(PINNED);

/** Shapes whose wasm is used: the combined witness test's here, the two with keys in other test files. */
const WITH_WASM = ['combined_26_26_2_1', 'inclusion_26_1', 'non-inclusion_26_1'];

describe('compiled circuits', () => {
  const built = new Map<string, CompiledCircuit>();
  const buildDir = path.join(TEST_KEYS_DIR, 'build');
  beforeAll(async () => {
    const [full, r1csOnly] = await Promise.all([
      compileCircuits({ buildDir, circuits: COMPILED.filter((id) => WITH_WASM.includes(id)), concurrency: 1 }),
      compileCircuits({ buildDir, circuits: COMPILED.filter((id) => !WITH_WASM.includes(id)), concurrency: 1, wasm: false }),
    ]);
    for (const c of [...full, ...r1csOnly]) built.set(c.id, c);
  }, 900_000);

  test('an r1cs-only request takes the cached build, with or without its wasm', async () => {
    for (const id of [COMPILED.find((i) => !WITH_WASM.includes(i))!, WITH_WASM[0]!]) {
      const again = await compileCached(id, buildDir, { wasm: false });
      expect(again).toMatchObject({ cached: true, constraints: PINNED[id], r1csFile: built.get(id)!.r1csFile });
    }
  });

  test.each(COMPILED.map((id) => [id, PINNED[id]!] as const))('%s has %i constraints and the expected public inputs', async (id, n) => {
    const c = built.get(id)!;
    const spec = getCircuit(id);
    expect(c.constraints).toBe(n);
    expect(spec.constraints).toBe(n);
    const info = await readR1csInfo(c.r1csFile);
    expect(info.nConstraints).toBe(n);
    expect(info.nPubInputs).toBe(spec.nPublic);
    expect(info.nPubOutputs).toBe(0);
    expect(info.nPrvInputs).toBe(spec.nAccounts * 27 + spec.nAddresses * 30);
  });

  test('combined witness carries public signals as [roots, leaves, addrRoots, values]', async () => {
    const acc = [syntheticAccount(7, 5), syntheticAccount(8, 1234567)];
    const addr = initialAddressTreeProof(0xabcdefn);
    const w = buildCircuitInput({ accounts: acc, addresses: [addr] });
    expect(w.circuitId).toBe('combined_26_26_2_1');
    const wc = await WitnessCalculator.create(await readFile(built.get(w.circuitId)!.wasmFile));
    const wtns = await wc.calculateWtns(w.input);
    expect(wc.publicSignals(wtns, 6)).toEqual(w.publicSignals);
    // The calculator is resident: a failing input does not poison the next one.
    await expect(wc.calculateWtns({ ...w.input, addrRoots: ['1'] })).rejects.toThrow(/Error in template NonInclusion_\d+/);
    expect(wc.publicSignals(await wc.calculateWtns(w.input), 6)).toEqual(w.publicSignals);
  });
});
