// The v2 (batched-tree) circuits (spec prover.md §1.6, §6): registry ids and shapes, constraint
// counts pinned (compiled for inclusion 1, 2, non-inclusion 1, 2 and combined 1×1 — one and two slots of
// each kind, the two points of each per-slot formula, and the combined overhead; the other shapes by
// the same per-slot formula the compiled ones confirm. Inclusion 4 and combined 2×2 were compiled too
// until CI outgrew 30 minutes on a slow 2-core machine: 48% of these constraints), the single public input publicInputHash,
// the hash chain against an independent Poseidon (poseidon-lite), and `refract setup` naming the
// ptau size a shape needs (through the bin). Builds are cached in $REFRACT_TEST_KEYS_V2/build
// (default .refract-test-keys-v2 in the repo, ignored by git), shared with test/prover.v2.test.ts.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { poseidon2, poseidon3 } from 'poseidon-lite';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  CIRCUIT_IDS,
  circuitIdFor,
  explainConstraintFailure,
  getCircuit,
  mainSource,
  V2_CIRCUIT_IDS,
  V2_CIRCUITS,
  V2_CONSTRAINTS_PER_ACCOUNT,
  V2_CONSTRAINTS_PER_ADDRESS,
  v2ChainConstraints,
} from '../src/prover/keys/circuits.ts';
import { beToBigint, bigintToBe32 } from '../src/prover/engine/proofEncoding.ts';
import { ProverError } from '../src/prover/errors.ts';
import { DEV_PTAU, ensureDevPtau } from './helpers/proverFixtures.ts';
import { compileCircuits, type CompiledCircuit } from '../src/prover/keys/keySetup.ts';
import { readR1csInfo, WitnessCalculator } from '../src/prover/engine/snark.ts';
import { buildCircuitInput, fromProverRequest, toProverRequest, twoInputsHashChain, v2PublicInputHash } from '../src/prover/engine/witness.ts';
import { REPO_ROOT, tempDir } from './helpers/photon.ts';
import { runRefract } from './helpers/refractBin.ts';

const KEYS = process.env.REFRACT_TEST_KEYS_V2 ?? path.join(REPO_ROOT, '.refract-test-keys-v2');

/** [constraints, ptau power]: compiled ones measured with circom 2.2.3 --O2 (= spec prover.md §6 table). */
const PINNED: Record<string, [number, number]> = {
  v2_inclusion_32_1: [7984, 13],
  v2_inclusion_32_2: [15989, 14],
  v2_inclusion_32_3: [23994, 15],
  v2_inclusion_32_4: [31999, 15],
  v2_inclusion_32_8: [64019, 16],
  'v2_non-inclusion_40_1': [10656, 14],
  'v2_non-inclusion_40_2': [21333, 15],
  'v2_non-inclusion_40_3': [32010, 15],
  'v2_non-inclusion_40_4': [42687, 16],
  v2_combined_32_40_1_1: [18880, 15],
  v2_combined_32_40_1_2: [29557, 15],
  v2_combined_32_40_1_3: [40234, 16],
  v2_combined_32_40_1_4: [50911, 16],
  v2_combined_32_40_2_1: [26885, 15],
  v2_combined_32_40_2_2: [37562, 16],
  v2_combined_32_40_2_3: [48239, 16],
  v2_combined_32_40_2_4: [58916, 16],
  v2_combined_32_40_3_1: [34890, 16],
  v2_combined_32_40_3_2: [45567, 16],
  v2_combined_32_40_3_3: [56244, 16],
  v2_combined_32_40_3_4: [66921, 17],
  v2_combined_32_40_4_1: [42895, 16],
  v2_combined_32_40_4_2: [53572, 16],
  v2_combined_32_40_4_3: [64249, 16],
  v2_combined_32_40_4_4: [74926, 17],
};
const COMPILED = ['v2_inclusion_32_1', 'v2_inclusion_32_2', 'v2_non-inclusion_40_1', 'v2_non-inclusion_40_2', 'v2_combined_32_40_1_1'];

/** Independent TwoInputsHashChain over bigints (poseidon-lite, not src/merkle). */
const chain = (a: bigint[], b: bigint[]) => a.slice(1).reduce((h, x, i) => poseidon3([h, x, b[i + 1]!]), poseidon2([a[0]!, b[0]!]));

describe('v2 circuit registry', () => {
  test('ids are the reference key names (v2_ prefix), shapes and counts pinned, no collision with v1', () => {
    expect(V2_CIRCUIT_IDS).toEqual(Object.keys(PINNED));
    for (const c of V2_CIRCUITS) {
      expect(c.id.startsWith('v2_')).toBe(true);
      expect(CIRCUIT_IDS).not.toContain(c.id);
      expect([c.constraints, c.ptauPower]).toEqual(PINNED[c.id]);
      expect(c).toMatchObject({ version: 2, nPublic: 1, publicSignals: ['publicInputHash'] });
      const inc = c.nAccounts ? c.nAccounts * V2_CONSTRAINTS_PER_ACCOUNT + v2ChainConstraints(c.nAccounts) : 0;
      const non = c.nAddresses ? c.nAddresses * V2_CONSTRAINTS_PER_ADDRESS + v2ChainConstraints(c.nAddresses) : 0;
      expect(c.constraints).toBe(inc + non + (c.kind === 'combined' ? 240 : 0));
      expect(c.stateTreeHeight).toBe(c.nAccounts ? 32 : 0);
      expect(c.addressTreeHeight).toBe(c.nAddresses ? 40 : 0);
      expect(circuitIdFor(c.nAccounts, c.nAddresses, 2)).toBe(c.id);
    }
    expect(circuitIdFor(1, 0)).toBe('inclusion_26_1');
    expect(getCircuit('v2_non-inclusion_40_3').kind).toBe('non-inclusion');
    // Every v2 shape but combined 3_4 and 4_4 fits the 2^16 development ptau.
    expect(V2_CIRCUITS.filter((c) => c.ptauPower > 16).map((c) => c.id)).toEqual(['v2_combined_32_40_3_4', 'v2_combined_32_40_4_4']);
  });

  test('unsupported v2 shapes throw unsupported_shape listing the v2 shapes', () => {
    for (const [n, m] of [[5, 0], [0, 5], [0, 0], [5, 1], [1, 5]] as const) {
      let err: unknown;
      try {
        circuitIdFor(n, m, 2);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ProverError);
      expect((err as ProverError).code).toBe('unsupported_shape');
      expect((err as ProverError).message).toMatch(/^no v2 validity-proof circuit for .*; supported v2 shapes: accounts only: 1, 2, 3, 4 or 8; addresses only: 1, 2, 3 or 4/);
    }
  });

  test('generated main files make publicInputHash the only public input', () => {
    expect(mainSource(getCircuit('v2_inclusion_32_1'))).toContain('component main {public [publicInputHash]} = InclusionV2(32, 1);');
    expect(mainSource(getCircuit('v2_non-inclusion_40_2'))).toContain('component main {public [publicInputHash]} = NonInclusionV2(40, 2);');
    expect(mainSource(getCircuit('v2_combined_32_40_3_4'))).toContain('component main {public [publicInputHash]} = CombinedV2(32, 40, 3, 4);');
    expect(explainConstraintFailure('Assert Failed. Error in template InclusionV2_12 line: 22')).toMatch(/publicInputHash does not equal/);
    expect(explainConstraintFailure('Error in template NonInclusionProofV2_3 line: 50')).toMatch(/do not fold to the given address root/);
  });

  test('hash chain and public input hash match an independent Poseidon', () => {
    const a = [11n, 22n, 33n];
    const b = [44n, 55n, 66n];
    const be = (xs: bigint[]) => xs.map(bigintToBe32);
    expect(beToBigint(twoInputsHashChain(be(a), be(b)))).toBe(chain(a, b));
    expect(beToBigint(twoInputsHashChain(be([a[0]!]), be([b[0]!])))).toBe(poseidon2([11n, 44n]));
    expect(twoInputsHashChain([], [])).toEqual(new Uint8Array(32));
    const acc = (r: bigint, l: bigint) => ({ root: bigintToBe32(r), leaf: bigintToBe32(l), leafIndex: 0, pathElements: [] });
    const adr = (r: bigint, v: bigint) => ({ root: bigintToBe32(r), value: bigintToBe32(v), lowValue: bigintToBe32(0n), highValue: bigintToBe32(0n), lowLeafIndex: 0, pathElements: [] });
    // One side only: that side's chain alone (Photon get_public_input_hash); both: Poseidon2 of the two chains.
    expect(beToBigint(v2PublicInputHash({ accounts: [acc(1n, 2n), acc(3n, 4n)], addresses: [] }))).toBe(chain([1n, 3n], [2n, 4n]));
    expect(beToBigint(v2PublicInputHash({ accounts: [], addresses: [adr(5n, 6n)] }))).toBe(chain([5n], [6n]));
    expect(beToBigint(v2PublicInputHash({ accounts: [acc(1n, 2n)], addresses: [adr(5n, 6n)] }))).toBe(poseidon2([chain([1n], [2n]), chain([5n], [6n])]));
  });
});

describe('v2 request JSON (reference /prove body)', () => {
  const z = (n: number) => Array.from({ length: n }, (_, i) => `0x${(i + 1).toString(16)}`);
  const address = { root: '0x0a', value: '0x05', pathIndex: 2 ** 39 + 3, pathElements: z(40), leafLowerRangeValue: '0x01', leafHigherRangeValue: '0x09' };

  test('parsed into version-2 inputs: heights 32/40, 40-bit address path index, nextIndex ignored, hash kept', () => {
    const req = { circuitType: 'non-inclusion', addressTreeHeight: 40, publicInputHash: '0x77', newAddresses: [{ ...address, nextIndex: 9 }] };
    const inputs = fromProverRequest(req);
    expect(inputs.version).toBe(2);
    expect(beToBigint(inputs.publicInputHash!)).toBe(0x77n);
    expect(inputs.addresses[0]).toMatchObject({ lowLeafIndex: 2 ** 39 + 3 });
    expect(inputs.addresses[0]!.nextIndex).toBeUndefined();
    // Written back as Photon does: 0x + 64 hex, no nextIndex.
    const back = toProverRequest(inputs);
    expect(back).toEqual({
      circuitType: 'non-inclusion',
      publicInputHash: `0x${'77'.padStart(64, '0')}`,
      addressTreeHeight: 40,
      newAddresses: [{ ...address, root: `0x${'0a'.padStart(64, '0')}`, value: `0x${'05'.padStart(64, '0')}`, leafLowerRangeValue: `0x${'01'.padStart(64, '0')}`, leafHigherRangeValue: `0x${'09'.padStart(64, '0')}`, pathElements: z(40).map((h) => `0x${h.slice(2).padStart(64, '0')}`) }],
    });
    // A stale hash is caught before any witness, naming the field and the value the inputs give.
    expect(() => buildCircuitInput(inputs)).toThrow(new RegExp(`^publicInputHash: 0x0+77 does not match the inputs: TwoInputsHashChain\\(roots, values\\) is 0x${chain([10n], [5n]).toString(16).padStart(64, '0')}$`));
    const ok = buildCircuitInput({ ...inputs, publicInputHash: undefined });
    expect(ok.circuitId).toBe('v2_non-inclusion_40_1');
    expect(ok.publicSignals).toEqual([chain([10n], [5n]).toString()]);
    expect(ok.input).not.toHaveProperty('nextIndex');
  });

  test('version detection and height errors', () => {
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return `${(e as ProverError).code}: ${(e as Error).message}`;
      }
      return 'ok';
    };
    // addressTreeHeight 40 without publicInputHash: v2 by height, and the hash is required.
    expect(code(() => fromProverRequest({ circuitType: 'non-inclusion', addressTreeHeight: 40, newAddresses: [address] }))).toMatch(/^malformed_request: publicInputHash: required in v2 requests/);
    expect(code(() => fromProverRequest({ circuitType: 'non-inclusion', addressTreeHeight: 40, publicInputHash: 7, newAddresses: [address] }))).toBe('malformed_request: publicInputHash: expected a hex string');
    // combined with a v1 state tree and a v2 address tree: no such key in the reference either.
    const acc = { root: '0x1', pathIndex: 0, pathElements: z(26), leaf: '0x2' };
    expect(code(() => fromProverRequest({ circuitType: 'combined', stateTreeHeight: 26, addressTreeHeight: 40, publicInputHash: '0x1', inputCompressedAccounts: [acc], newAddresses: [address] }))).toMatch(
      /^unsupported_shape: stateTreeHeight 26 is not supported \(v2 \(publicInputHash, state height 32, address height 40\): 32\)$/,
    );
    // A v1 request (no hash, height 26) stays v1.
    expect(fromProverRequest({ circuitType: 'inclusion', stateTreeHeight: 26, inputCompressedAccounts: [acc] }).version).toBeUndefined();
    // Path index beyond the tree: 2^32 in a height-32 state tree.
    const big = fromProverRequest({ circuitType: 'inclusion', stateTreeHeight: 32, publicInputHash: '0x1', inputCompressedAccounts: [{ ...acc, pathIndex: 2 ** 32, pathElements: z(32) }] });
    expect(code(() => buildCircuitInput(big))).toBe(`invalid_input: accounts[0].leafIndex: ${2 ** 32} is not an integer in [0, ${2 ** 32})`);
  });
});

describe('compiled v2 circuits', () => {
  const built = new Map<string, CompiledCircuit>();
  beforeAll(async () => {
    // v2_non-inclusion_40_2's witness calculator is never run: its r1cs alone (circuits.test.ts WITH_WASM)
    const r1csOnly = ['v2_non-inclusion_40_2'];
    const buildDir = path.join(KEYS, 'build');
    const res = [
      ...(await compileCircuits({ buildDir, circuits: COMPILED.filter((id) => !r1csOnly.includes(id)), concurrency: 1 })),
      ...(await compileCircuits({ buildDir, circuits: r1csOnly, concurrency: 1, wasm: false })),
    ];
    for (const c of res) built.set(c.id, c);
  }, 900_000);

  test.each(COMPILED)('%s compiles to its pinned constraint count with one public input', async (id) => {
    const c = built.get(id)!;
    const spec = getCircuit(id);
    expect(c.constraints).toBe(PINNED[id]![0]);
    const info = await readR1csInfo(c.r1csFile);
    expect(info.nConstraints).toBe(spec.constraints);
    expect(info.nPubInputs).toBe(1);
    expect(info.nPubOutputs).toBe(0);
    // roots, leaves, path indices + 32 siblings per account; roots, values, low, high, path index + 40 siblings per address.
    expect(info.nPrvInputs).toBe(spec.nAccounts * 35 + spec.nAddresses * 45);
  });

  test('the witness public signal is the hash chain; a wrong publicInputHash fails in the circuit', async () => {
    const path32 = Array.from({ length: 32 }, (_, i) => bigintToBe32(BigInt(i + 7)));
    // Two accounts whose paths fold to their roots.
    const fold = (leaf: bigint, idx: number) => path32.reduce((cur, sib, i) => ((idx >> i) & 1 ? poseidon2([beToBigint(sib), cur]) : poseidon2([cur, beToBigint(sib)])), leaf);
    const accounts = [
      { root: bigintToBe32(fold(101n, 3)), leaf: bigintToBe32(101n), leafIndex: 3, pathElements: path32 },
      { root: bigintToBe32(fold(202n, 2 ** 31 + 1)), leaf: bigintToBe32(202n), leafIndex: 2 ** 31 + 1, pathElements: path32 },
    ];
    const w = buildCircuitInput({ accounts, addresses: [], version: 2 });
    expect(w.circuitId).toBe('v2_inclusion_32_2');
    const expected = chain([fold(101n, 3), fold(202n, 2 ** 31 + 1)], [101n, 202n]).toString();
    expect(w.publicSignals).toEqual([expected]);
    const wc = await WitnessCalculator.create(await readFile(built.get(w.circuitId)!.wasmFile));
    expect(wc.publicSignals(await wc.calculateWtns(w.input), 1)).toEqual([expected]);
    await expect(wc.calculateWtns({ ...w.input, publicInputHash: '5' })).rejects.toThrow(/Error in template InclusionV2_\d+/);
  });
});

describe('refract setup (bin)', () => {
  test('a v2 shape larger than the ptau: exits non-zero naming the circuit and the ptau power it needs', async () => {
    const keys = tempDir('refract-v2-setup-');
    const r = await runRefract(['setup', '--keys', keys, '--ptau', await ensureDevPtau(), '--insecure-ptau', '--no-progress', '--circuits', 'v2_inclusion_32_1,v2_combined_32_40_4_4,v2_combined_32_40_3_4']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('has power 16; the selected circuits need ≥ 17 (a 2^17 ptau): v2_combined_32_40_4_4 needs 2^17, v2_combined_32_40_3_4 needs 2^17');
    expect(r.stderr).not.toContain('v2_inclusion_32_1 needs');
    const dev = await runRefract(['setup', '--keys', keys, '--dev-ptau-power', '13', '--no-progress', '--circuits', 'v2_non-inclusion_40_1']);
    expect(dev.status).not.toBe(0);
    expect(dev.stderr).toContain('devPtauPower 13 is too small; the selected circuits need ≥ 14 (a 2^14 ptau): v2_non-inclusion_40_1 needs 2^14');
  }, 60_000);
});
