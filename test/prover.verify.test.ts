// Refract's native Groth16 verifier (native/kernels/src/pairing.c, `verifyNative` in
// src/prover/engine/groth16Native.ts): the pairing equals ffjavascript's byte for byte; verification agrees
// with snarkjs' groth16.verify on real proofs of the test circuits and on damaged ones; malformed
// proofs, signals and keys get errors naming the field; π_B must lie in G2 (a twist point outside
// it is refused, which snarkjs does not check); the pool verifies with it, foreign proofs too.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { nativeAddon } from '../src/native.ts';
import { ProverError } from '../src/prover/errors.ts';
import { encodeNativeVkey, loadNativeKey, nativeVerifierAvailable, proveNative, verifyNative } from '../src/prover/engine/groth16Native.ts';
import { keyFiles } from '../src/prover/keys/layout.ts';
import { setupCircuits } from '../src/prover/keys/keySetup.ts';
import { ProverPool } from '../src/prover/run/pool.ts';
import { loadSnarkjs, terminateCurve, verify, WitnessCalculator, type Groth16Proof, type VerificationKey } from '../src/prover/engine/snark.ts';
import { buildCircuitInput, type ValidityProofInputs } from '../src/prover/engine/witness.ts';
import { DEV_PTAU, ensureDevPtau, initialAddressTreeProof, syntheticAccount, TEST_KEYS_DIR, thrownProverError } from './helpers/proverFixtures.ts';
import { REQUIRE_NATIVE } from './helpers/required.ts';

const R = 0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001n;
const Q = 0x30644e72e131a029b85045b68181585d97816a916871ca8d3c208c16d87cfd47n;
const IDS = ['inclusion_26_1', 'non-inclusion_26_1'] as const;
const INPUTS: Record<(typeof IDS)[number], ValidityProofInputs> = {
  inclusion_26_1: { accounts: [syntheticAccount(7, 3)], addresses: [] },
  'non-inclusion_26_1': { accounts: [], addresses: [initialAddressTreeProof(0x0a0b0c0d0e0fn)] },
};

const le32 = (v: bigint) => {
  const b = new Uint8Array(32);
  for (let i = 0; i < 32; i++, v >>= 8n) b[i] = Number(v & 0xffn);
  return b;
};
const readLe = (b: Uint8Array, o: number) => {
  let v = 0n;
  for (let k = 31; k >= 0; k--) v = (v << 8n) | BigInt(b[o + k]!);
  return v;
};
const cat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));

const thrown = thrownProverError;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Curve = any;

describe.skipIf(!nativeVerifierAvailable() && !REQUIRE_NATIVE)('native BN254 pairing', () => {
  let curve: Curve;
  beforeAll(async () => {
    // a fresh single-threaded curve (never the one the prover patches)
    curve = await (await loadSnarkjs()).curves.getCurveFromName('bn128', { singleThread: true });
  });

  const g1Bytes = (P: unknown) => {
    const [x, y] = curve.G1.toObject(curve.G1.toAffine(P)) as bigint[];
    return cat(le32(x!), le32(y!));
  };
  const g2Bytes = (P: unknown) => {
    const [[x0, x1], [y0, y1]] = curve.G2.toObject(curve.G2.toAffine(P)) as bigint[][];
    return cat(le32(x0!), le32(x1!), le32(y0!), le32(y1!));
  };
  const pairing = (p: Uint8Array, q: Uint8Array) => {
    const out = nativeAddon!.bn254Pairing!(p, q, new Uint8Array(384));
    return Array.from({ length: 12 }, (_, k) => readLe(out, 32 * k));
  };
  const pairingError = (p: Uint8Array, q: Uint8Array): string => {
    try {
      nativeAddon!.bn254Pairing!(p, q, new Uint8Array(384));
    } catch (e) {
      expect((e as { code?: string }).code).toBe('ERR_GROTH16_VERIFY_INPUT');
      return (e as Error).message;
    }
    throw new Error('expected an error');
  };

  test('e(P, Q) equals ffjavascript\'s pairing byte for byte (random points, the generators, infinity)', () => {
    const cases: [unknown, unknown][] = [[curve.G1.g, curve.G2.g]];
    for (let i = 0; i < 6; i++) cases.push([curve.G1.timesFr(curve.G1.g, curve.Fr.random()), curve.G2.timesFr(curve.G2.g, curve.Fr.random())]);
    for (const [P, Qp] of cases) {
      const want = (curve.F12.toObject(curve.pairing(P, Qp)) as unknown[]).flat(3);
      expect(pairing(g1Bytes(P), g2Bytes(Qp))).toEqual(want);
    }
    const one = [1n, ...Array<bigint>(11).fill(0n)];
    expect(pairing(new Uint8Array(64), g2Bytes(curve.G2.g))).toEqual(one);
    expect(pairing(g1Bytes(curve.G1.g), new Uint8Array(128))).toEqual(one);
  });

  test('malformed points: an error naming the point and why', () => {
    const g1 = g1Bytes(curve.G1.g);
    const g2 = g2Bytes(curve.G2.g);
    const offCurve = g1.slice();
    offCurve[40]! ^= 1;
    expect(pairingError(offCurve, g2)).toBe('G1 point: point is not on the curve y^2 = x^3 + 3');
    expect(pairingError(cat(le32(Q), g1.subarray(32)), g2)).toBe('G1 point: coordinate is not below the base field modulus q');
    const offTwist = g2.slice();
    offTwist[70]! ^= 1;
    expect(pairingError(g1, offTwist)).toBe('G2 point: point is not on the twist y^2 = x^3 + 3/(9+u)');
    // a point of the twist outside G2 (the twist's cofactor is ≈ 2^254): x chosen until x³ + b' is a square
    const F2 = curve.F2;
    let x = F2.fromObject([1n, 0n]);
    let y: unknown = null;
    while (!y) {
      x = F2.add(x, F2.one);
      const rhs = F2.add(F2.mul(F2.square(x), x), curve.G2.b);
      if (F2.isSquare(rhs)) y = F2.sqrt(rhs);
    }
    const [x0, x1] = F2.toObject(x) as bigint[];
    const [y0, y1] = F2.toObject(y) as bigint[];
    const outside = cat(le32(x0!), le32(x1!), le32(y0!), le32(y1!));
    expect(curve.G2.isValid(curve.G2.fromObject([[x0, x1], [y0, y1], [1n, 0n]]))).toBe(true); // on the twist: what snarkjs checks
    expect(curve.G2.isZero(curve.G2.timesScalar(curve.G2.fromObject([[x0, x1], [y0, y1], [1n, 0n]]), R))).toBe(false); // [r]P ≠ O
    expect(pairingError(g1, outside)).toBe('G2 point: point is not in the order-r subgroup G2');
  });
});

describe.skipIf(!nativeVerifierAvailable() && !REQUIRE_NATIVE)('native Groth16 verifier', () => {
  const circuits: Record<string, { vkey: VerificationKey; vk: Uint8Array; proof: Groth16Proof; publicSignals: string[] }> = {};
  beforeAll(async () => {
    await setupCircuits({ keysDir: TEST_KEYS_DIR, ptau: await ensureDevPtau(), circuits: [...IDS], log: () => {} });
    for (const id of IDS) {
      const f = keyFiles(TEST_KEYS_DIR, id);
      const vkey = JSON.parse(await readFile(f.vkey, 'utf8')) as VerificationKey;
      const wc = await WitnessCalculator.create(await readFile(f.wasm));
      const w = buildCircuitInput(INPUTS[id]);
      const key = loadNativeKey(new Uint8Array(await readFile(f.zkey)), id);
      const { proof, publicSignals } = proveNative(key, await wc.calculateWtns(w.input), { threads: 1 });
      circuits[id] = { vkey, vk: encodeNativeVkey(vkey, id), proof, publicSignals };
    }
  }, 600_000);
  afterAll(async () => {
    await terminateCurve();
  });

  test.each(IDS)('%s: agrees with snarkjs on the proof and on damaged proofs and signals', async (id) => {
    const { vkey, vk, proof, publicSignals } = circuits[id]!;
    const other = circuits[id === 'inclusion_26_1' ? 'non-inclusion_26_1' : 'inclusion_26_1']!.proof;
    const signal = BigInt(publicSignals[0]!);
    const cases: [string, Groth16Proof, string[]][] = [
      ['the proof', proof, publicSignals],
      ['another public signal', proof, [((signal + 1n) % R).toString(), publicSignals[1]!]],
      ['π_A of another proof', { ...proof, pi_a: other.pi_a }, publicSignals],
      ['π_B of another proof', { ...proof, pi_b: other.pi_b }, publicSignals],
      ['π_C of another proof', { ...proof, pi_c: other.pi_c }, publicSignals],
      ['π_A and π_C swapped', { ...proof, pi_a: proof.pi_c, pi_c: proof.pi_a }, publicSignals],
      ['π_A at infinity', { ...proof, pi_a: ['0', '1', '0'] }, publicSignals],
    ];
    for (const [what, p, s] of cases) {
      const want = await verify(vkey, s, p);
      expect(verifyNative(vk, p, s), what).toBe(want);
      expect(want, what).toBe(what === 'the proof');
    }
  });

  test('malformed proofs and signals: verify_failed naming the field; a malformed key: keys_missing', () => {
    const { vkey, vk, proof, publicSignals } = circuits.inclusion_26_1!;
    const cases: [string, () => unknown, RegExp][] = [
      ['signal ≥ r', () => verifyNative(vk, proof, [publicSignals[0]!, R.toString()]), /public signal 1: not below the scalar field modulus r/],
      ['signal not a number', () => verifyNative(vk, proof, ['12abc', publicSignals[1]!]), /public signal 0: "12abc" is not an integer/],
      ['signal count', () => verifyNative(vk, proof, [...publicSignals, '1']), /3 public signals, the key has 2/],
      ['π_A off the curve', () => verifyNative(vk, { ...proof, pi_a: [proof.pi_a[0], '5', '1'] }, publicSignals), /pi_a: point is not on the curve/],
      ['π_C coordinate ≥ q', () => verifyNative(vk, { ...proof, pi_c: [Q.toString(), proof.pi_c[1], '1'] }, publicSignals), /pi_c: coordinate is not below the base field modulus q/],
      ['π_B projective', () => verifyNative(vk, { ...proof, pi_b: [proof.pi_b[0], proof.pi_b[1], ['2', '0']] }, publicSignals), /pi_b: z = \["2","0"\], expected/],
      ['π_B off the twist', () => verifyNative(vk, { ...proof, pi_b: [proof.pi_b[0], [proof.pi_b[1][0], '7'], ['1', '0']] }, publicSignals), /pi_b: point is not on the twist/],
      ['π_A not a list', () => verifyNative(vk, { ...proof, pi_a: 'x' as never }, publicSignals), /pi_a: expected \[x, y, z\]/],
    ];
    for (const [what, f, message] of cases) {
      const e = thrown(f);
      expect(e.code, what).toBe('verify_failed');
      expect(e.message, what).toMatch(message);
    }
    const badIc = structuredClone(vkey);
    badIc.IC[1] = [badIc.IC[1]![0]!, '5', '1'];
    const e = thrown(() => verifyNative(encodeNativeVkey(badIc), proof, publicSignals));
    expect(e.code).toBe('keys_missing');
    expect(e.message).toMatch(/verification key IC\[1\]: point is not on the curve/);
    // a key without α1 (all zero) would accept anything: refused; so is an absurd signal count
    const zeroAlpha = encodeNativeVkey(vkey);
    zeroAlpha.fill(0, 0, 64);
    const za = thrown(() => verifyNative(zeroAlpha, proof, publicSignals));
    expect(za.code).toBe('keys_missing');
    expect(za.message).toMatch(/verification key alpha_1: point at infinity/);
    const many = 70_000;
    expect(() => nativeAddon!.groth16Verify!(new Uint8Array(64 + 3 * 128 + (many + 1) * 64), new Uint8Array(256), new Uint8Array(32 * many))).toThrow(/70000 public signals, at most 65536/);
    const short = thrown(() => encodeNativeVkey({ ...vkey, IC: vkey.IC.slice(0, 1) }, 'k'));
    expect(short.code).toBe('keys_missing');
    expect(short.message).toMatch(/^k: IC has 1 points for nPublic 2/);
  });

  test('the pool verifies with it: its own proofs, and foreign ones (verify tasks) good and bad', async () => {
    const pool = new ProverPool({ keysDir: TEST_KEYS_DIR, size: 1, singleThread: true, backend: 'native' });
    try {
      const w = buildCircuitInput(INPUTS.inclusion_26_1);
      const r = await pool.prove(w.circuitId, w.input);
      expect(verifyNative(circuits.inclusion_26_1!.vk, r.proof, r.publicSignals)).toBe(true);
      expect(r.verifyMs).toBeGreaterThan(0);
      const { proof, publicSignals } = circuits.inclusion_26_1!;
      expect(await pool.verify('inclusion_26_1', proof, publicSignals)).toBe(true);
      expect(await pool.verify('inclusion_26_1', proof, [publicSignals[0]!, '1'])).toBe(false);
      const bad = await pool.verify('inclusion_26_1', { ...proof, pi_a: [proof.pi_a[0], '5', '1'] }, publicSignals).catch((e: unknown) => e);
      expect(bad).toBeInstanceOf(ProverError);
      expect((bad as ProverError).code).toBe('verify_failed');
      expect((bad as ProverError).message).toMatch(/pi_a: point is not on the curve/);
    } finally {
      await pool.close();
    }
  }, 300_000);
});
