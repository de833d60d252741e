/**
 * The params fast paths (src/rpc/fastParams.ts) against zod itself: for every method schema, on
 * random inputs built from the schema's shape (valid and invalid leaves, missing, null and unknown
 * keys, wrong types, arrays over the limit), a fast parser must either decline (SLOW) or return
 * exactly zod's output (same keys — also `undefined`-valued ones — same values, same types).
 * Also: the JSON text encoders write exactly what stringifyJson writes for the object encoders.
 */
import bs58 from 'bs58';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { AccountView, MerkleProofRecord } from '../src/rpc/context.ts';
import { accountJson, encodeAccount, encodeMerkleProof, merkleProofJson, withContext, withContextJson } from '../src/rpc/resultEncoding.ts';
import { stringifyJson } from '../src/rpc/exactJson.ts';
import { SLOW, fastParserOf } from '../src/rpc/fastParams.ts';
import { METHODS } from '../src/rpc/methods/index.ts';
import { parseParams } from '../src/rpc/params.ts';
import { BN254_MODULUS } from '../src/rpc/schemas.ts';
import { mulberry32 as rng } from './helpers/rng.ts';

const MOD_BE = Buffer.from(BN254_MODULUS.toString(16).padStart(64, '0'), 'hex');
const below = (() => {
  const b = Buffer.from(MOD_BE);
  b[31]! -= 1;
  return b;
})();

function leafPool(r: () => number): unknown[] {
  const key = randomBytes(32);
  const small = randomBytes(32);
  small[0] = r() < 0.5 ? 0 : 0x1f;
  if (r() < 0.3) small[1] = 0;
  return [
    bs58.encode(key), // pubkey; a hash only when below the modulus
    bs58.encode(small), // a valid hash (and pubkey), maybe with leading zero bytes
    bs58.encode(MOD_BE), // = modulus: not a hash
    bs58.encode(below), // modulus − 1: a hash
    bs58.encode(new Uint8Array(32)), // 32 zero bytes: '1' × 32
    bs58.encode(randomBytes(31)),
    bs58.encode(randomBytes(33)),
    bs58.encode(randomBytes(64)), // a signature
    bs58.encode(randomBytes(1 + Math.floor(r() * 20))),
    `1${bs58.encode(small)}`,
    `${bs58.encode(key).slice(0, 20)}0${bs58.encode(key).slice(21)}`, // '0' is not base58
    '',
    'x'.repeat(600),
    0,
    1,
    7,
    1000,
    1001,
    -1,
    1.5,
    2 ** 53,
    null,
    true,
    [],
    {},
    [bs58.encode(small)],
  ];
}

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  in?: z.ZodType;
  innerType?: z.ZodType;
}
const defOf = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;

/** A random input for `schema`: mostly well-formed along its shape, with random damage. */
function gen(schema: z.ZodType, r: () => number, depth = 0): unknown {
  const def = defOf(schema);
  const pool = leafPool(r);
  const pick = () => pool[Math.floor(r() * pool.length)];
  if (r() < 0.05 || depth > 5) return pick();
  switch (def.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(def.shape!)) {
        const x = r();
        if (x < 0.15) continue; // absent
        out[k] = x < 0.22 ? null : gen(v, r, depth + 1);
      }
      if (r() < 0.05) out[r() < 0.5 ? 'unknownKey' : 'toString'] = pick();
      return out;
    }
    case 'array': {
      if (r() < 0.02) return Array.from({ length: 1001 }, () => pool[1]); // over the limit
      return Array.from({ length: Math.floor(r() * 4) }, () => gen(def.element!, r, depth + 1));
    }
    case 'pipe':
      return gen(def.in!, r, depth + 1);
    case 'optional':
    case 'nullable':
      return r() < 0.2 ? null : gen(def.innerType!, r, depth + 1);
    case 'string': // mostly well-formed base58 keys / hashes
      return r() < 0.7 ? pool[Math.floor(r() * 2)] : pick();
    case 'number': // mostly in range
      return r() < 0.7 ? [0, 1, 7, 1000][Math.floor(r() * 4)] : pick();
    default:
      return pick();
  }
}

describe('params fast paths', () => {
  const withFast = METHODS.filter((m) => fastParserOf(m.params));

  it('cover the hot methods', () => {
    const names = withFast.map((m) => m.name);
    for (const n of ['getCompressedAccount', 'getCompressedAccountV2', 'getCompressedAccountsByOwner', 'getMultipleCompressedAccountProofs', 'getMultipleCompressedAccounts', 'getCompressedBalance']) {
      expect(names).toContain(n);
    }
  });

  for (const m of withFast) {
    it(`${m.name}: fast output = zod output on random inputs`, () => {
      const r = rng(m.name.length * 7919 + m.name.charCodeAt(3));
      const fast = fastParserOf(m.params)!;
      let taken = 0;
      for (let i = 0; i < 600; i++) {
        const input = gen(m.params, r);
        const z = m.params.safeParse(input);
        const f = fast(input);
        if (f === SLOW) continue;
        taken++;
        if (!z.success) expect.fail(`fast path accepted what zod rejects: ${JSON.stringify(input)}`);
        expect(f).toStrictEqual(z.data);
        expect(parseParams(m.params, input)).toStrictEqual(z.data);
      }
      expect(taken).toBeGreaterThan(10);
    });
  }
});

describe('JSON text encoders', () => {
  const r = rng(77);
  const big = () => [0n, 1n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 63n + 5n, 2n ** 64n - 1n, BigInt(Math.floor(r() * 1e12))][Math.floor(r() * 7)]!;
  const key = () => {
    const b = randomBytes(32);
    if (r() < 0.2) b.fill(0, 0, Math.floor(r() * 33));
    return new Uint8Array(b);
  };
  const tree = { tree: key(), queue: key(), treeType: 1 as const };
  function account(): AccountView {
    return {
      hash: key(),
      address: r() < 0.5 ? null : key(),
      data: r() < 0.4 ? null : { discriminator: big(), data: new Uint8Array(randomBytes(Math.floor(r() * 40))), dataHash: key() },
      owner: key(),
      lamports: big(),
      leafIndex: Math.floor(r() * 2 ** 32),
      seq: r() < 0.3 ? null : big(),
      slotCreated: big(),
      treeInfo: tree,
      inOutputQueue: false,
    };
  }
  it('accountJson = stringifyJson(encodeAccount)', () => {
    for (let i = 0; i < 2000; i++) {
      const a = account();
      expect(accountJson(a)).toBe(stringifyJson(encodeAccount(a)));
    }
    expect(() => accountJson({ ...account(), lamports: -1n })).toThrow(RangeError);
  });
  it('merkleProofJson = stringifyJson(encodeMerkleProof); withContextJson = withContext', () => {
    for (let i = 0; i < 300; i++) {
      const p: MerkleProofRecord = { hash: key(), leafIndex: Math.floor(r() * 2 ** 26), treeInfo: tree, proof: Array.from({ length: Math.floor(r() * 27) }, key), root: key(), rootSeq: big(), proveByIndex: false };
      expect(merkleProofJson(p)).toBe(stringifyJson(encodeMerkleProof(p)));
      const slot = big();
      const value = r() < 0.5 ? null : encodeMerkleProof(p);
      expect(withContextJson(slot, stringifyJson(value)).text).toBe(stringifyJson(withContext(slot, value)));
      expect(stringifyJson({ id: 1, result: withContextJson(slot, 'null') })).toBe(stringifyJson({ id: 1, result: withContext(slot, null) }));
    }
  });
});
