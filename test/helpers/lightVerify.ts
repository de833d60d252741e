/**
 * An independent check of Light proofs, as Light's on-chain verifier does it (light-keys §7):
 * decompress the 128-byte `compressedProof` with Solana's conventions (bit 7 = y is the larger root,
 * G2 compared c1 first), then e(a, b)·e(L, γ)·e(c, δ)·e(α, β) = 1 with L = IC₀ + Σ xᵢ·IC_{i+1},
 * over @noble/curves' bn254 pairing. The verifying key is read from the released program
 * (`light_system_program_pinocchio.so` of CLI 0.27.0, §8 offsets) — not from Refract's key parser —
 * for the 18 keys it holds at known offsets.
 */
import { readFileSync } from 'node:fs';
import { bn254 } from '@noble/curves/bn254';
import { nativeAddon } from '../../src/native.ts';
import { residentFile } from '../../src/prover/keys/lightKeySetup.ts';
import { lightKeyByName } from '../../src/prover/keys/lightKeys.ts';

const { Fp, Fp2, Fp12 } = bn254.fields;
const P = Fp.ORDER;
const HALF = (P - 1n) / 2n;
const R = bn254.fields.Fr.ORDER;

const be = (b: Uint8Array, off = 0, len = 32): bigint => {
  let v = 0n;
  for (let i = 0; i < len; i++) v = (v << 8n) | BigInt(b[off + i]!);
  return v;
};

/** A verifying key: α1, β2, γ2, δ2 and IC, as noble points. */
export interface NobleVk {
  alpha: InstanceType<typeof bn254.G1.Point>;
  beta: InstanceType<typeof bn254.G2.Point>;
  gamma: InstanceType<typeof bn254.G2.Point>;
  delta: InstanceType<typeof bn254.G2.Point>;
  ic: InstanceType<typeof bn254.G1.Point>[];
}

const g1 = (b: Uint8Array, off: number) => bn254.G1.Point.fromAffine({ x: be(b, off), y: be(b, off + 32) });
/** G2 uncompressed X.c1 | X.c0 | Y.c1 | Y.c0 (BE), the EIP-197 / Solana order. */
const g2 = (b: Uint8Array, off: number) =>
  bn254.G2.Point.fromAffine({ x: Fp2.create({ c0: be(b, off + 32), c1: be(b, off) }), y: Fp2.create({ c0: be(b, off + 96), c1: be(b, off + 64) }) });

/** Offsets in light_system_program_pinocchio.so (0.27.0) of vk_alpha_g1 and vk_ic (light-keys §8). */
export const PINOCCHIO_VK_OFFSETS: Record<string, [number, number]> = {
  mainnet_inclusion_26_1: [0x8e560, 0x860c9],
  mainnet_inclusion_26_2: [0x8e738, 0x86189],
  mainnet_inclusion_26_3: [0x8e910, 0x862c9],
  mainnet_inclusion_26_4: [0x8eae8, 0x86489],
  'non-inclusion_26_1': [0x8d2f0, 0x84cc9],
  'non-inclusion_26_2': [0x8d4c8, 0x84d89],
  combined_26_1_1: [0x8d6a0, 0x84ec9],
  combined_26_1_2: [0x8da50, 0x851c9],
  combined_26_2_1: [0x8d878, 0x85009],
  inclusion_32_1: [0x88c60, 0x82d27],
  inclusion_32_2: [0x89598, 0x82fa7],
  inclusion_32_3: [0x89ed0, 0x83227],
  inclusion_32_4: [0x8a808, 0x834a7],
  'non-inclusion_40_1': [0x8abb8, 0x835a7],
  'non-inclusion_40_2': [0x8ad90, 0x83627],
  combined_32_40_1_1: [0x88500, 0x82b27],
  combined_32_40_1_2: [0x886d8, 0x82ba7],
  combined_32_40_2_1: [0x88e38, 0x82da7],
};

/** The VK of `name` as deployed in the released program (`so` = the .so bytes), with nIc IC points. */
export function vkFromProgram(so: Uint8Array, name: string, nIc: number): NobleVk {
  const o = PINOCCHIO_VK_OFFSETS[name];
  if (!o) throw new Error(`no known VK offset for ${name}`);
  const [a, ic] = o;
  return {
    alpha: g1(so, a),
    beta: g2(so, a + 64),
    gamma: g2(so, a + 192),
    delta: g2(so, a + 320),
    ic: Array.from({ length: nIc }, (_, i) => g1(so, ic + 64 * i)),
  };
}

/** The VK from the addon's plain-LE layout (α1 ‖ β2 ‖ γ2 ‖ δ2 ‖ IC; G2 c0 before c1). */
export function vkFromAddonLayout(vk: Uint8Array): NobleVk {
  const le = (off: number) => {
    let v = 0n;
    for (let i = 31; i >= 0; i--) v = (v << 8n) | BigInt(vk[off + i]!);
    return v;
  };
  const G1 = (o: number) => bn254.G1.Point.fromAffine({ x: le(o), y: le(o + 32) });
  const G2 = (o: number) => bn254.G2.Point.fromAffine({ x: Fp2.create({ c0: le(o), c1: le(o + 32) }), y: Fp2.create({ c0: le(o + 64), c1: le(o + 96) }) });
  const n = (vk.length - 448) / 64;
  return { alpha: G1(0), beta: G2(64), gamma: G2(192), delta: G2(320), ic: Array.from({ length: n }, (_, i) => G1(448 + 64 * i)) };
}

/**
 * The verifying key a proof of Light's key `name` (with `nPublics` public inputs) is checked with:
 * read from the released program `so` where its offset is known (the 18 keys of 0.27.0), else the
 * VK inside the converted key in `keysDir` (the six keys only 0.18.0 ships).
 * @throws Error when the key is unknown or not converted in `keysDir`
 */
export function lightVerifyingKey(so: Uint8Array, keysDir: string, name: string, nPublics: number): NobleVk {
  if (PINOCCHIO_VK_OFFSETS[name]) return vkFromProgram(so, name, nPublics + 1);
  const spec = lightKeyByName(name);
  if (!spec) throw new Error(`no Light key named ${name}`);
  const addon = nativeAddon as unknown as { lightKeyLoad(b: Uint8Array): unknown; lightKeyVk(h: unknown): Uint8Array };
  return vkFromAddonLayout(addon.lightKeyVk(addon.lightKeyLoad(readFileSync(residentFile(keysDir, spec)))));
}

/** Reads the pinocchio program from an unpacked CLI 0.27.0 package directory. */
export function pinocchioProgram(pkgDir: string): Uint8Array {
  return readFileSync(`${pkgDir}/bin/light_system_program_pinocchio.so`);
}

function decompressG1(b: Uint8Array) {
  const neg = (b[0]! & 0x80) !== 0;
  if (b[0]! & 0x40) throw new Error('a/c: infinity flag');
  const x = be(Uint8Array.from([b[0]! & 0x3f, ...b.subarray(1, 32)]));
  if (x >= P) throw new Error('G1 x ≥ p');
  let y = Fp.sqrt(Fp.add(Fp.mul(Fp.sqr(x), x), 3n));
  if (y > HALF !== neg) y = Fp.neg(y);
  return bn254.G1.Point.fromAffine({ x, y });
}

function decompressG2(b: Uint8Array) {
  const neg = (b[0]! & 0x80) !== 0;
  const c1 = be(Uint8Array.from([b[0]! & 0x3f, ...b.subarray(1, 32)]));
  const c0 = be(b, 32);
  if (c0 >= P || c1 >= P) throw new Error('G2 x ≥ p');
  const x = Fp2.create({ c0, c1 });
  const bTwist = Fp2.div(Fp2.create({ c0: 3n, c1: 0n }), Fp2.create({ c0: 9n, c1: 1n }));
  let y = Fp2.sqrt(Fp2.add(Fp2.mul(Fp2.sqr(x), x), bTwist));
  const isNeg = y.c1 !== 0n ? y.c1 > HALF : y.c0 > HALF;
  if (isNeg !== neg) y = Fp2.neg(y);
  const p = bn254.G2.Point.fromAffine({ x, y });
  p.assertValidity();
  return p;
}

/**
 * Light's on-chain check of a 128-byte proof (a = −A, b, c compressed) with public inputs `publics`
 * (each < r, or the check fails as on chain).
 * @returns true when the pairing equation holds; false for any failure (bad encoding, off curve)
 */
export function verifyOnChain(vk: NobleVk, proof: { a: ArrayLike<number>; b: ArrayLike<number>; c: ArrayLike<number> }, publics: readonly bigint[]): boolean {
  try {
    if (publics.length + 1 !== vk.ic.length) return false;
    const a = decompressG1(Uint8Array.from(proof.a));
    const b = decompressG2(Uint8Array.from(proof.b));
    const c = decompressG1(Uint8Array.from(proof.c));
    let L = vk.ic[0]!;
    publics.forEach((x, i) => {
      if (x >= R) throw new Error('public input ≥ r');
      if (x !== 0n) L = L.add(vk.ic[i + 1]!.multiply(x));
    });
    const res = bn254.pairingBatch([
      { g1: a, g2: b },
      { g1: L, g2: vk.gamma },
      { g1: c, g2: vk.delta },
      { g1: vk.alpha, g2: vk.beta },
    ]);
    return Fp12.eql(res, Fp12.ONE);
  } catch {
    return false;
  }
}
