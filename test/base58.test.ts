/**
 * src/solana/base58.ts, Refract's one base58 module, held equal to the `bs58` package on random and
 * edge-case inputs (empty, leading zero bytes / leading `1`s, all-zero and all-0xff values, views
 * into larger buffers, memo-slot collisions), on both decoding backends (the native addon and the
 * pure-JS path of `REFRACT_BASE58=js`), and checked to reject every character outside the alphabet
 * with a DecodeError that names it.
 */
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { afterAll, describe, expect, it, vi } from 'vitest';
import * as base58 from '../src/solana/base58.ts';
import { DecodeError } from '../src/solana/errors.ts';
import { mulberry32 as rng } from './helpers/rng.ts';

/** Random bytes of `len` with edge shapes chosen by `i`: leading zero bytes, whole zero limbs, all 0 / all 0xff. */
function sample(len: number, i: number): Buffer {
  const b = randomBytes(len);
  if (i % 4 === 1) b.fill(0, 0, Math.min(len, 1 + (i % 9)));
  if (i % 4 === 2) b.fill(0, 0, Math.min(len, 4 * (1 + (i % 3))));
  if (i % 13 === 0) b.fill(0);
  if (i % 17 === 0) b.fill(0xff);
  return b;
}

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** Characters outside the alphabet, including look-alikes and code units above 0xff (U+0131 truncates to '1' as latin1). */
const INVALID = ['0', 'O', 'I', 'l', '+', '/', '=', ' ', '\n', '\u00e9', '\u0131', '\u0231', '\ud83d'];

describe('base58.ALPHABET', () => {
  it('is the Bitcoin alphabet bs58 uses', () => {
    expect(base58.ALPHABET).toBe(ALPHABET);
    expect(bs58.encode(Uint8Array.from({ length: 58 }, (_, i) => i)).length).toBeGreaterThan(0);
  });
});

describe('base58.encode / encode32', () => {
  it('encode equals bs58.encode on every length 0..100 (limb path and bs58 path), with leading zeros and extremes', () => {
    for (let len = 0; len <= 100; len++) {
      for (let i = 0; i < 40; i++) {
        const b = sample(len, i);
        expect(base58.encode(b), `${len} bytes ${b.toString('hex')}`).toBe(bs58.encode(b));
      }
      expect(base58.encode(new Uint8Array(len))).toBe('1'.repeat(len));
    }
    // A view into a larger buffer (signatures and keys are read in place).
    const big = randomBytes(200);
    expect(base58.encode(big.subarray(7, 71))).toBe(bs58.encode(big.subarray(7, 71)));
    expect(base58.encode(big.subarray(3, 35))).toBe(bs58.encode(big.subarray(3, 35)));
  });

  it('encode32 equals bs58.encode, also for values that share a memo slot, and passes other lengths through', () => {
    const base = randomBytes(32);
    for (let i = 0; i < 20000; i++) {
      const b = i % 2 ? randomBytes(32) : Buffer.from(base); // even: same slot as `base`, other middle bytes
      if (i % 2 === 0) b[1 + (i % 29)] ^= 1 + (i % 255);
      for (let j = 0; j < i % 35 && j < 32 && i % 3 === 0; j++) b[j] = 0;
      if (i % 7 === 0) b.fill(0xff, 0, i % 33);
      expect(base58.encode32(b)).toBe(bs58.encode(b));
      expect(base58.encode32(b)).toBe(bs58.encode(b)); // memo hit
    }
    expect(base58.encode32(new Uint8Array(32))).toBe('1'.repeat(32));
    for (const len of [0, 1, 31, 33, 64, 72]) {
      const b = sample(len, len);
      expect(base58.encode32(b)).toBe(bs58.encode(b));
    }
  });
});

describe('base58.decode / tryDecode / decodeValidated', () => {
  it('equal bs58.decode on random byte strings of lengths 0..1200 with leading zeros', () => {
    for (let i = 0; i < 400; i++) {
      const len = i < 100 ? i : Math.floor(Math.random() * 1200);
      const b = sample(len, i);
      const s = bs58.encode(b);
      const want = Buffer.from(bs58.decode(s));
      expect(Buffer.from(base58.decode(s)).equals(want), s).toBe(true);
      expect(Buffer.from(base58.tryDecode(s)!).equals(want), s).toBe(true);
      expect(Buffer.from(base58.decodeValidated(s)).equals(want), s).toBe(true);
      expect(Buffer.from(base58.decodeBigInt(s)).equals(want), s).toBe(true);
    }
  });

  it('edge inputs: empty, only `1`s, `1`s before digits', () => {
    for (const s of ['', '1', '111', '1'.repeat(64), '2', 'z', '11z', '1112', 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz']) {
      const want = Buffer.from(bs58.decode(s));
      expect(Buffer.from(base58.decode(s)).equals(want), JSON.stringify(s)).toBe(true);
      expect(Buffer.from(base58.tryDecode(s)!).equals(want), JSON.stringify(s)).toBe(true);
      expect(Buffer.from(base58.decodeBigInt(s)).equals(want), JSON.stringify(s)).toBe(true);
    }
  });

  it('an invalid character is a DecodeError naming the field, the character and its index; tryDecode is undefined as bs58.decodeUnsafe', () => {
    for (const c of INVALID) {
      for (const at of [0, 1, 40]) {
        const s = `${'2'.repeat(at)}${c}${'3'.repeat(5)}`;
        let err: unknown;
        try {
          base58.decode(s, 'x.y');
        } catch (e) {
          err = e;
        }
        expect(err, JSON.stringify(s)).toBeInstanceOf(DecodeError);
        expect((err as DecodeError).message).toBe(`x.y: invalid base58 character ${JSON.stringify(c)} at index ${at}`);
        expect((err as DecodeError).field).toBe('x.y');
        expect(base58.tryDecode(s), JSON.stringify(s)).toBeUndefined();
        expect(bs58.decodeUnsafe(s), JSON.stringify(s)).toBeUndefined();
        expect(base58.firstInvalidChar(s)).toBe(at);
      }
    }
    expect(() => base58.decode('abcl')).toThrow('base58: invalid base58 character "l" at index 3');
    expect(base58.firstInvalidChar(ALPHABET)).toBe(-1);
  });
});

describe('base58.decode32', () => {
  it('equals bs58 on 32-byte values and declines everything else', () => {
    const r = rng(5);
    for (let i = 0; i < 5000; i++) {
      const b = sample(32, i);
      expect(base58.decode32(bs58.encode(b))).toEqual(new Uint8Array(b));
      let s = '';
      const n = Math.floor(r() * 50);
      for (let j = 0; j < n; j++) s += j < i % 5 ? '1' : ALPHABET[Math.floor(r() * 58)];
      if (i % 11 === 0) s += INVALID[i % INVALID.length];
      const ref = bs58.decodeUnsafe(s);
      const got = base58.decode32(s);
      if (ref && ref.length === 32) expect(got).toEqual(ref);
      else expect(got).toBeUndefined();
    }
    for (const len of [0, 31, 33, 64]) expect(base58.decode32(bs58.encode(sample(len, 1)))).toBeUndefined();
    expect(base58.decode32('')).toBeUndefined();
  });
});

describe('the native decoder', () => {
  it('is built, and reports the index of the first character it rejects', async () => {
    const { nativeAddon } = await import('../src/native.ts');
    expect(nativeAddon, 'native addon built by npm install').not.toBeNull();
    expect(nativeAddon!.base58Decode!('11abc0')).toBe(5);
    expect(nativeAddon!.base58Decode!('1\u00e9')).toBe(1);
    expect(nativeAddon!.base58Decode!('')).toEqual(new Uint8Array(0));
    expect(nativeAddon!.base58Decode!('111')).toEqual(new Uint8Array(3));
  });

  it('decodes strings of many leading 1s (the output is sized by characters, not by the digit bound)', async () => {
    const { nativeAddon } = await import('../src/native.ts');
    for (const zeros of [4, 8, 64, 5000]) {
      const b = Buffer.concat([Buffer.alloc(zeros), Buffer.from([1, 2, 3, 250])]);
      expect(Buffer.from(nativeAddon!.base58Decode!(bs58.encode(b)) as Uint8Array).equals(b)).toBe(true);
      expect(nativeAddon!.base58Decode!('1'.repeat(zeros))).toEqual(new Uint8Array(zeros));
    }
  });

  it('rejects characters above 0xff at their own index, never as the ASCII digit latin1 would fold them to', async () => {
    const { nativeAddon } = await import('../src/native.ts');
    expect(nativeAddon!.base58Decode!('2\u0131')).toBe(1); // U+0131 truncates to '1' in latin1
    expect(nativeAddon!.base58Decode!('abc\u{1F600}x')).toBe(3);
  });
});

describe('without the addon (REFRACT_BASE58=js)', () => {
  const saved = process.env.REFRACT_BASE58;
  afterAll(() => {
    if (saved === undefined) delete process.env.REFRACT_BASE58;
    else process.env.REFRACT_BASE58 = saved;
    vi.resetModules();
  });

  it('decode, tryDecode and decodeValidated give the same bytes through bs58 / the BigInt decoder', async () => {
    process.env.REFRACT_BASE58 = 'js';
    vi.resetModules();
    const js = await import('../src/solana/base58.ts');
    expect(js).not.toBe(base58);
    for (let i = 0; i < 200; i++) {
      const b = sample(i < 100 ? i : 100 + Math.floor(Math.random() * 900), i);
      const s = bs58.encode(b);
      expect(Buffer.from(js.decode(s)).equals(b)).toBe(true);
      expect(Buffer.from(js.tryDecode(s)!).equals(b)).toBe(true);
      expect(Buffer.from(js.decodeValidated(s)).equals(b)).toBe(true);
    }
    expect(() => js.decode('2\u0131')).toThrow('base58: invalid base58 character "ı" at index 1');
  });
});

/**
 * Files of src/ and workers/ that still use `bs58` directly, with why. Each must still import it (a
 * stale entry fails), so this list only shrinks.
 */
const BS58_IMPORTERS: Readonly<Record<string, string>> = {
  'src/config/trees.ts': 'config sits below the codecs and may not import src/solana/',
  'src/query/validityProofPaths.ts': 'validity-proof path, being reworked separately: migrate after it lands',
  'src/rpc/methods/getValidityProof.ts': 'validity-proof path, being reworked separately: migrate after it lands',
};

describe('one base58 module', () => {
  it('src/ and workers/ use bs58 only through src/solana/base58.ts (and the listed files)', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const { join, relative } = await import('node:path');
    const ts = (await import('typescript')).default;
    const root = join(import.meta.dirname, '..');
    const files = ['src', 'workers'].flatMap((d) =>
      (readdirSync(join(root, d), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => join(root, d, f)),
    );
    const importers = files
      .filter((f) => ts.preProcessFile(readFileSync(f, 'utf8'), true, true).importedFiles.some((i) => i.fileName === 'bs58'))
      .map((f) => relative(root, f).split('\\').join('/'))
      .sort();
    expect(importers).toEqual(['src/solana/base58.ts', ...Object.keys(BS58_IMPORTERS)].sort());
  });
});
