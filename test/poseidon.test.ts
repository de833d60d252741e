/**
 * Poseidon vectors (spec prover.md §3–4), native vs fallback agreement, batch, range checks.
 * The native part is skipped when the addon is not built (`node-gyp rebuild -C native/kernels`);
 * set REFRACT_REQUIRE_NATIVE=1 to make that a failure instead.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import * as lite from 'poseidon-lite';

import {
  BN254_R,
  POSEIDON_MAX_INPUTS,
  createCircomlibjsBackend,
  nativeAddon,
  nativeLoadError,
  poseidon,
  poseidon2,
  poseidon2Batch,
  poseidon3,
  poseidonBackend,
  poseidonBatch,
  poseidonTuples,
  type PoseidonBackend,
} from '../src/merkle/poseidon.ts';
import { ZERO_BYTES } from '../src/merkle/zeroValues.ts';
import { indexedLeafHashV1, indexedLeafHashV2, nullifierHash } from '../src/light/hashing.ts';
import { REQUIRE_NATIVE } from './helpers/required.ts';

/** poseidon-lite reference (pure BigInt JS, independent of circomlibjs). */
const liteHash = (xs: bigint[]): bigint =>
  (lite as unknown as Record<string, (x: bigint[]) => bigint>)[`poseidon${xs.length}`]!(xs);
const hex = (b: Uint8Array) => '0x' + Buffer.from(b).toString('hex');
const fromBig = (v: bigint) => Uint8Array.from(Buffer.from(v.toString(16).padStart(64, '0'), 'hex'));
const toBig = (b: Uint8Array) => BigInt(hex(b));
const fe = (v: number | bigint) => fromBig(BigInt(v));
const Z32 = new Uint8Array(32);
/** 2^248 − 1: HIGHEST_ADDRESS_PLUS_ONE. */
const HIGHEST = fromBig((1n << 248n) - 1n);

/** A random field element; biased towards edge values (0, 1, r−1, big limbs) 1 time in 4. */
function randomFe(): Uint8Array {
  const edge = [0n, 1n, BN254_R - 1n, BN254_R - 2n, (1n << 253n) + 12345n, (1n << 192n) - 1n, (1n << 64n) - 1n, BN254_R >> 1n];
  const roll = randomBytes(1)[0]!;
  if (roll < 64) return fromBig(edge[roll % edge.length]!);
  return fromBig(toBig(randomBytes(32)) % BN254_R);
}

if (!nativeAddon) console.warn(`[poseidon.test] native addon not loaded (${nativeLoadError}); native cases skipped`);

describe('poseidon backend', () => {
  it('reports the active backend', () => {
    expect(['native', 'circomlibjs']).toContain(poseidonBackend);
    if (REQUIRE_NATIVE) expect(poseidonBackend).toBe('native');
  });
});

describe('spec vectors (prover.md §3)', () => {
  it('P1(0), P1(1), P2(0,0), P3(0,0,0)', () => {
    expect(hex(poseidon([fe(0)]))).toBe('0x2a09a9fd93c590c26b91effbb2499f07e8f7aa12e2b4940a3aed2411cb65e11c');
    expect(hex(poseidon([fe(1)]))).toBe('0x29176100eaa962bdc1fe6c654d6a3c130e96a4d1168b33848b897dc502820133');
    expect(hex(poseidon2(Z32, Z32))).toBe('0x2098f5fb9e239eab3ceac3f27b81e481dc3124d55ffed523a839ee8446b64864');
    expect(hex(poseidon3(Z32, Z32, Z32))).toBe('0x0bc188d27dcceadc1dcfb6af0a7af08fe2864eecec96c5ae7cee6db31ba599aa');
  });

  it('poseidon-lite agrees on poseidon2([1, 2])', () => {
    expect(toBig(poseidon2(fe(1), fe(2)))).toBe(liteHash([1n, 2n]));
  });
});

describe('zero values (prover.md §4.1)', () => {
  const expected: Record<number, string> = {
    1: '0x2098f5fb9e239eab3ceac3f27b81e481dc3124d55ffed523a839ee8446b64864',
    2: '0x1069673dcdb12263df301a6ff584a7ec261a44cb9dc68df067a4774460b1f1e1',
    3: '0x18f43331537ee2af2e3d758d50f72106467c6eea50371dd528d57eb2b856d238',
    25: '0x2ff6650540f629fd5711a0bc74fc0d28dcb230b9392583e5f8d59696dde6ae21',
    26: '0x120c58f143d491e95902f7f5277778a2e0ad5168f6add75669932630ce611518',
    32: '0x2f68a1c58e257e42a17a6c61dff5551ed560b9922ab119d5ac8e184c9734ead9',
    40: '0x1334fa4b552f00ef403361c935c1abcf896851003c40daa93bb0fd0a0bb9a881',
  };
  it('has 41 entries, Z[0] = 0', () => {
    expect(ZERO_BYTES).toHaveLength(41);
    expect(ZERO_BYTES[0]).toEqual(Z32);
    expect([...ZERO_BYTES[1]!.subarray(0, 4)]).toEqual([32, 152, 245, 251]);
  });
  for (const [i, h] of Object.entries(expected)) {
    it(`Z[${i}]`, () => expect(hex(ZERO_BYTES[Number(i)]!)).toBe(h));
  }
});

describe('indexed (address) trees (prover.md §4.2)', () => {
  const leaf0 = () => indexedLeafHashV1(Z32, 1n, HIGHEST);
  const leaf1 = () => indexedLeafHashV1(HIGHEST, 0n, Z32);

  it('HIGHEST_ADDRESS_PLUS_ONE is 2^248 − 1', () => {
    expect(toBig(HIGHEST)).toBe(452312848583266388373324160190187140051835877600158453279131187530910662655n);
  });

  it('v1 leaf hashes', () => {
    expect(hex(leaf0())).toBe('0x2808c0864bc64dbb81f9857936bdf21c7547ff209b3488c46392ccaea0ee006e');
    expect(hex(leaf1())).toBe('0x1ea416eeb40218b540c1cfb8dbe91f6d54e8a29edc30a39e326b4057a7d963f5');
    expect(hex(indexedLeafHashV1(Z32, 0n, Z32))).toBe('0x0bc188d27dcceadc1dcfb6af0a7af08fe2864eecec96c5ae7cee6db31ba599aa');
  });

  it('v1 initial root (height 26) by folding = 0x2185…0f', () => {
    let cur = poseidon2(leaf0(), leaf1());
    for (let level = 1; level < 26; level++) cur = poseidon2(cur, ZERO_BYTES[level]!);
    expect(hex(cur)).toBe('0x218538b88ea66ea1048ca9f773210fb54c59307e3a56cc511079b94d4b982b0f');
    expect([...cur.subarray(0, 4)]).toEqual([33, 133, 56, 184]);
  });

  it('v2 single leaf and root (height 40)', () => {
    const leaf = indexedLeafHashV2(Z32, HIGHEST);
    expect(hex(leaf)).toBe('0x143c0bece1879a8393a02d085835680cd3f13306f64a95784334be7d33b1cce7');
    let cur = leaf;
    for (let level = 0; level < 40; level++) cur = poseidon2(cur, ZERO_BYTES[level]!);
    expect(hex(cur)).toBe('0x1c416bffd0ea3303835f3e82cab1b01ad85140b8c8195f7cf8812c6de5926a4c');
  });

  it('nullifierHash = Poseidon3(hash, be32(leafIndex), txHash)', () => {
    const a = randomFe();
    const t = randomFe();
    const idx = new Uint8Array(32);
    idx[31] = 7;
    expect(nullifierHash(a, 7, t)).toEqual(poseidon3(a, idx, t));
    expect(nullifierHash(a, 7n, t)).toEqual(poseidon3(a, idx, t));
  });
});

describe('fallback (circomlibjs) vs poseidon-lite vs active backend', () => {
  let js: PoseidonBackend;
  beforeAll(async () => {
    js = await createCircomlibjsBackend();
  });

  it('every arity 1..7 on random and edge inputs', () => {
    for (let n = 1; n <= POSEIDON_MAX_INPUTS; n++) {
      for (let k = 0; k < 12; k++) {
        const xs = Array.from({ length: n }, randomFe);
        const ref = liteHash(xs.map(toBig));
        expect(toBig(js.hash(xs)), `circomlibjs n=${n}`).toBe(ref);
        expect(toBig(poseidon(xs)), `${poseidonBackend} n=${n}`).toBe(ref);
      }
    }
  });

  it('fallback batch and errors match', () => {
    const pairs = new Uint8Array(64 * 5);
    for (let i = 0; i < 10; i++) pairs.set(randomFe(), 32 * i);
    const out = js.hashBatch(pairs, 2);
    for (let i = 0; i < 5; i++) {
      expect(out.subarray(32 * i, 32 * i + 32)).toEqual(poseidon2(pairs.subarray(64 * i, 64 * i + 32), pairs.subarray(64 * i + 32, 64 * i + 64)));
    }
    expect(() => js.hash([Z32, fromBig(BN254_R)])).toThrow(/input 1 .*< r/);
    expect(() => js.hash([new Uint8Array(31)])).toThrow(RangeError);
    const bad = pairs.slice();
    bad.set(fromBig(BN254_R), 64 * 3);
    expect(() => js.hashBatch(bad, 2)).toThrow(/batch item 3 input 0/);
  });
});

describe.skipIf(!nativeAddon && !REQUIRE_NATIVE)('native addon', () => {
  let js: PoseidonBackend;
  beforeAll(async () => {
    js = await createCircomlibjsBackend();
  });

  it('is loaded and active', () => {
    expect(nativeAddon, String(nativeLoadError)).not.toBeNull();
    expect(poseidonBackend).toBe('native');
  });

  it('C and ADX multiplication backends agree with circomlibjs for every arity', () => {
    const addon = nativeAddon!;
    const impls = (['c', 'adx'] as const).filter((name) => {
      const ok = addon.selectImpl(name);
      return ok;
    });
    expect(impls).toContain('c');
    const def = process.arch === 'x64' ? undefined : 'c';
    try {
      for (const impl of impls) {
        expect(addon.selectImpl(impl)).toBe(true);
        expect(addon.impl()).toBe(impl);
        for (let n = 1; n <= POSEIDON_MAX_INPUTS; n++) {
          for (let k = 0; k < 40; k++) {
            const xs = Array.from({ length: n }, randomFe);
            expect(hex(poseidon(xs)), `${impl} n=${n} ${xs.map(hex).join(',')}`).toBe(hex(js.hash(xs)));
          }
        }
      }
    } finally {
      // restore the default choice (ADX when the CPU has it)
      if (!addon.selectImpl('adx')) addon.selectImpl(def ?? 'c');
    }
  });

  it('batch = single (arity 2, and generic arities)', () => {
    const n = 257;
    const pairs = new Uint8Array(64 * n);
    for (let i = 0; i < 2 * n; i++) pairs.set(randomFe(), 32 * i);
    const out = poseidon2Batch(pairs);
    expect(out).toHaveLength(32 * n);
    for (let i = 0; i < n; i++) {
      const l = pairs.subarray(64 * i, 64 * i + 32);
      const r = pairs.subarray(64 * i + 32, 64 * i + 64);
      expect(hex(out.subarray(32 * i, 32 * i + 32))).toBe(hex(poseidon2(l, r)));
    }
    for (let arity = 1; arity <= POSEIDON_MAX_INPUTS; arity++) {
      const input = new Uint8Array(32 * arity * 3);
      for (let i = 0; i < 3 * arity; i++) input.set(randomFe(), 32 * i);
      const got = poseidonBatch(input, arity);
      for (let k = 0; k < 3; k++) {
        const xs = Array.from({ length: arity }, (_, i) => input.subarray(32 * (k * arity + i), 32 * (k * arity + i) + 32));
        expect(got.subarray(32 * k, 32 * k + 32)).toEqual(poseidon(xs));
      }
    }
    expect(poseidon2Batch(new Uint8Array(0))).toHaveLength(0);
  });

  it('the eight-lane IFMA batch kernel gives the scalar bytes for every arity and group shape', () => {
    const addon = nativeAddon!;
    const ifma = addon.selectBatchImpl!('ifma');
    if (!ifma) {
      // Not this CPU (no AVX-512 IFMA): the scalar kernel is the one in use.
      expect(addon.batchImpl!()).toBe('scalar');
      return;
    }
    // Values that stress the lazy reduction: r − 1 everywhere drives every lane to its bounds.
    const RM1 = fromBig(BN254_R - 1n);
    try {
      for (let arity = 1; arity <= POSEIDON_MAX_INPUTS; arity++) {
        for (const count of [2, 3, 7, 8, 9, 15, 16, 17, 64, 203]) {
          const input = new Uint8Array(32 * arity * count);
          for (let i = 0; i < arity * count; i++) input.set(i % 11 === 0 ? RM1 : randomFe(), 32 * i);
          expect(addon.selectBatchImpl!('ifma')).toBe(true);
          expect(addon.batchImpl!()).toBe('ifma');
          const got = poseidonBatch(input, arity);
          expect(addon.selectBatchImpl!('scalar')).toBe(true);
          const want = poseidonBatch(input, arity);
          expect(hex(got), `arity ${arity} count ${count}`).toBe(hex(want));
        }
        // all inputs r − 1, and all zero
        for (const v of [RM1, Z32]) {
          const input = new Uint8Array(32 * arity * 8);
          for (let i = 0; i < arity * 8; i++) input.set(v, 32 * i);
          addon.selectBatchImpl!('ifma');
          const got = poseidonBatch(input, arity);
          const xs = Array.from({ length: arity }, () => v);
          for (let k = 0; k < 8; k++) expect(hex(got.subarray(32 * k, 32 * k + 32))).toBe(hex(js.hash(xs)));
        }
      }
      addon.selectBatchImpl!('ifma');
      // in place (out = input), as the binding allows
      const input = new Uint8Array(32 * 3 * 20);
      for (let i = 0; i < 60; i++) input.set(randomFe(), 32 * i);
      const want = poseidonBatch(input, 3);
      addon.hashBatch(input, 3, input);
      expect(hex(input.subarray(0, 32 * 20))).toBe(hex(want));
      // a bad input inside a group: named exactly, the tuples before it written
      const bad = new Uint8Array(32 * 2 * 20);
      for (let i = 0; i < 40; i++) bad.set(randomFe(), 32 * i);
      bad.set(fromBig(BN254_R), 32 * (2 * 11 + 1));
      const out = new Uint8Array(32 * 20);
      expect(() => addon.hashBatch(bad, 2, out)).toThrow(/batch item 11 input 1 /);
      const okPart = poseidonBatch(bad.subarray(0, 32 * 2 * 11), 2);
      expect(hex(out.subarray(0, 32 * 11))).toBe(hex(okPart));
    } finally {
      addon.selectBatchImpl!('ifma');
    }
  });
});

describe('poseidonTuples (mixed arities, active backend)', () => {
  it('equals one poseidon() per tuple, in order', () => {
    const tuples = Array.from({ length: 90 }, (_, k) => Array.from({ length: 1 + ((k * 5) % POSEIDON_MAX_INPUTS) }, randomFe));
    const got = poseidonTuples(tuples);
    expect(got).toHaveLength(90);
    tuples.forEach((xs, k) => expect(hex(got[k]!)).toBe(hex(poseidon(xs))));
    expect(poseidonTuples([])).toEqual([]);
  });

  it('rejects a bad arity, size or element', () => {
    expect(() => poseidonTuples([[Z32], []])).toThrow(RangeError);
    expect(() => poseidonTuples([[Z32, new Uint8Array(31)]])).toThrow(/batch item 0 input 1 must be 32 bytes/);
    expect(() => poseidonTuples([[Z32], [Z32, Z32], [Z32, fromBig(BN254_R)]])).toThrow(/batch item 1 input 1 /);
  });
});

describe('input validation (active backend)', () => {
  const R = fromBig(BN254_R);
  const RM1 = fromBig(BN254_R - 1n);
  const MAX = new Uint8Array(32).fill(0xff);

  it('accepts r − 1, rejects r and 2^256 − 1 naming the index', () => {
    expect(() => poseidon([RM1, RM1])).not.toThrow();
    expect(() => poseidon([R])).toThrow(RangeError);
    expect(() => poseidon([Z32, Z32, R])).toThrow(/input 2 /);
    expect(() => poseidon2(MAX, Z32)).toThrow(/input 0 /);
    expect(() => poseidon2(Z32, R)).toThrow(/input 1 /);
    expect(() => poseidon3(Z32, MAX, Z32)).toThrow(/input 1 /);
  });

  it('rejects wrong sizes and arities', () => {
    expect(() => poseidon([])).toThrow(RangeError);
    expect(() => poseidon(Array.from({ length: POSEIDON_MAX_INPUTS + 1 }, () => Z32))).toThrow(RangeError);
    expect(() => poseidon2(new Uint8Array(33), Z32)).toThrow(/input 0 must be 32 bytes/);
    expect(() => poseidon([Z32, new Uint8Array(31)])).toThrow(/input 1 must be 32 bytes/);
    expect(() => poseidon2Batch(new Uint8Array(65))).toThrow(RangeError);
    expect(() => poseidonBatch(new Uint8Array(32), 0)).toThrow(RangeError);
  });

  it('batch names the pair and side', () => {
    const pairs = new Uint8Array(64 * 4);
    pairs.set(R, 64 * 2 + 32);
    expect(() => poseidon2Batch(pairs)).toThrow(/batch item 2 input 1 /);
    try {
      poseidon2Batch(pairs);
    } catch (e) {
      expect(e).toBeInstanceOf(RangeError);
    }
  });
});
