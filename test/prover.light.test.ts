/**
 * Proofs with Light Protocol's own proving keys (CLI 0.27.0 + 0.18.0) through `LightProver`: bad keys
 * and bad inputs give errors naming the file / the circuit, never a proof; the two-thread solve and
 * MSMs give the one-thread proof. That every one of the 24 keys proves valid inputs, and that the
 * proof passes Light's on-chain equation (and fails it with a byte changed or A not negated), is
 * checked once, beside Light's own prover, in prover.light.differential.test.ts.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeAddon } from '../src/native.ts';
import { ProverError } from '../src/prover/errors.ts';
import { residentFile, setupLightKeys } from '../src/prover/keys/lightKeySetup.ts';
import { convertLightKey, foldPaths, lightKeyByName, lightWitness, r1csBlob, r1csBlobFast, r1csBlobGeneral, type LightKeyAddon } from '../src/prover/keys/lightKeys.ts';
import { LightProver } from '../src/prover/run/lightProver.ts';
import { fold, lightInputsFor, seeded } from './helpers/lightInputs.ts';
import { ensureLightKeys, LIGHT_TEST_KEYS } from './helpers/lightKeys.ts';
import { lightVerifyingKey, pinocchioProgram, verifyOnChain, type NobleVk } from './helpers/lightVerify.ts';
import { REPO_ROOT } from './helpers/proverFixtures.ts';

let pkgDir: string;
let so: Uint8Array;
let prover: LightProver;
const addon = nativeAddon as unknown as LightKeyAddon & { lightKeyLoad(b: Uint8Array): unknown; lightKeyVk(h: unknown): Uint8Array };

const vkOf = (name: string, nPublics: number): NobleVk => lightVerifyingKey(so, LIGHT_TEST_KEYS, name, nPublics);

function proverError(e: unknown): ProverError {
  expect(e).toBeInstanceOf(ProverError);
  return e as ProverError;
}

beforeAll(async () => {
  pkgDir = await ensureLightKeys();
  so = pinocchioProgram(pkgDir);
  prover = new LightProver({ keysDir: LIGHT_TEST_KEYS, size: 2 });
}, 3_600_000);

afterAll(async () => {
  await prover?.close();
});

describe('Light keys: bad key files', () => {
  const dir = path.join(REPO_ROOT, '.refract-test-keys', 'light-bad');
  const src = () => path.join(pkgDir, 'bin', 'proving-keys', 'mainnet_inclusion_26_1.key');

  it('wrong hash, truncated, foreign: setup names the file and the circuit', async () => {
    for (const [what, mutate] of [
      ['one byte changed', (b: Buffer) => (b[5000]! ^= 1, b)],
      ['truncated', (b: Buffer) => b.subarray(0, 1_000_000)],
      ['foreign', () => Buffer.from('not a gnark key at all\n'.repeat(100))],
    ] as const) {
      const d = path.join(dir, what.replace(/ /g, '-'));
      mkdirSync(d, { recursive: true });
      writeFileSync(path.join(d, 'mainnet_inclusion_26_1.key'), mutate(Buffer.from(readFileSync(src()))));
      const e = proverError(await setupLightKeys({ keysDir: path.join(d, 'keys'), sourceDir: d, names: ['mainnet_inclusion_26_1'] }).catch((x: unknown) => x));
      expect(e.code).toBe('keys_missing');
      expect(e.message).toContain(path.join(d, 'mainnet_inclusion_26_1.key'));
      expect(e.message).toContain('mainnet_inclusion_26_1');
      expect(e.message).toContain('not the pinned');
    }
  });

  it('a truncated or foreign file that got past the hash check: the decoder names the file, no crash', () => {
    const spec = lightKeyByName('mainnet_inclusion_26_1')!;
    const full = readFileSync(src());
    for (const bytes of [full.subarray(0, 500_000), full.subarray(0, full.length - 10), Buffer.alloc(4096, 0xab), full.subarray(0, 10)]) {
      const e = proverError((() => { try { convertLightKey(addon, new Uint8Array(bytes), spec, '/x/foreign.key'); } catch (x) { return x; } })());
      expect(e.code).toBe('keys_missing');
      expect(e.message).toContain('/x/foreign.key');
    }
  });

  it('a directory without some keys: only those are missing', async () => {
    const d = path.join(dir, 'partial');
    rmSync(d, { recursive: true, force: true }); // a fresh keys directory every run
    mkdirSync(d, { recursive: true });
    copyFileSync(src(), path.join(d, 'mainnet_inclusion_26_1.key'));
    const r = await setupLightKeys({ keysDir: path.join(d, 'keys'), sourceDir: d, names: ['mainnet_inclusion_26_1', 'inclusion_32_1'] });
    expect(r.map((x) => `${x.name}:${x.status}`)).toEqual(['mainnet_inclusion_26_1:converted', 'inclusion_32_1:missing']);
    const again = await setupLightKeys({ keysDir: path.join(d, 'keys'), sourceDir: d, names: ['mainnet_inclusion_26_1'] });
    expect(again[0]!.status).toBe('cached');
  });
});

describe('Light keys: the R1CS of a key file', () => {
  const keyFile = (name: string) => {
    const spec = lightKeyByName(name)!;
    return path.join(pkgDir, '..', '..', spec.pkg, 'package', 'bin', 'proving-keys', spec.file);
  };

  it('the one-pass reader gives the general CBOR reader\'s blob and summary (keys with 1, 3 and 1 hints, heights 26, 26 and 32)', () => {
    for (const name of ['mainnet_inclusion_26_1', 'non-inclusion_26_1', 'inclusion_32_1']) {
      const key = new Uint8Array(readFileSync(keyFile(name)));
      const { r1csOffset } = addon.lightKeyDecode(key);
      const fast = r1csBlobFast(key, r1csOffset);
      expect(fast, name).not.toBeNull();
      const general = r1csBlobGeneral(key, r1csOffset, name);
      expect(fast!.summary).toEqual(general.summary);
      expect(Buffer.from(fast!.blob).equals(Buffer.from(general.blob)), name).toBe(true);
    }
  });

  it('what the one-pass reader does not expect goes to the general reader, whose error names the file and the fault', () => {
    const key = Buffer.from(readFileSync(keyFile('mainnet_inclusion_26_1')));
    const { r1csOffset } = addon.lightKeyDecode(new Uint8Array(key));
    const at = (needle: Buffer, from = r1csOffset) => {
      const i = key.indexOf(needle, from);
      expect(i).toBeGreaterThan(0);
      return i + needle.length - 1;
    };
    // another gnark version: the last byte of "GnarkVersion": "0.8.0"
    const version = Buffer.from(key);
    version[at(Buffer.concat([Buffer.from([0x6c]), Buffer.from('GnarkVersion'), Buffer.from([0x65]), Buffer.from('0.8.0')]))] = 0x31;
    // the first constraint's O key renamed X (its terms then missing)
    const renamed = Buffer.from(key);
    renamed[at(Buffer.from([0x61, 0x4f]), at(Buffer.concat([Buffer.from([0x6b]), Buffer.from('Constraints')])))] = 0x58;
    for (const [bytes, fault] of [
      [version, /R1CS GnarkVersion "0\.8\.1", expected "0\.8\.0"/],
      [renamed, /constraint 0 O is not an array of terms/],
    ] as const) {
      const u8 = new Uint8Array(bytes);
      expect(r1csBlobFast(u8, r1csOffset)).toBeNull();
      expect(() => r1csBlob(u8, r1csOffset, '/x/key.key')).toThrow(fault);
      expect(() => r1csBlob(u8, r1csOffset, '/x/key.key')).toThrow(/\/x\/key\.key/);
    }
  });
});

describe('Light keys: resident files loaded by path', () => {
  const dir = path.join(REPO_ROOT, '.refract-test-keys', 'light-bad-resident');
  const k = lightKeyByName('mainnet_inclusion_26_1')!;
  const loadError = (x: unknown) => {
    try {
      addon.lightKeyLoad(x as Uint8Array);
    } catch (e) {
      return e as { code?: string; message?: string };
    }
    return undefined;
  };

  it('a path maps the file: the same key as its bytes (shared, one verifying key), and a damaged file names itself, never a key', () => {
    const file = residentFile(LIGHT_TEST_KEYS, k);
    const byPath = addon.lightKeyLoad(file as unknown as Uint8Array);
    const byBytes = addon.lightKeyLoad(readFileSync(file));
    expect(Buffer.from(addon.lightKeyVk(byPath)).equals(Buffer.from(addon.lightKeyVk(byBytes)))).toBe(true);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const truncated = path.join(dir, 'truncated.lkr');
    writeFileSync(truncated, readFileSync(file).subarray(0, 1_000_000));
    const empty = path.join(dir, 'empty.lkr');
    writeFileSync(empty, '');
    const foreign = path.join(dir, 'foreign.lkr');
    writeFileSync(foreign, 'not a resident key\n'.repeat(10));
    const cases: [string, RegExp][] = [
      [path.join(dir, 'missing.lkr'), /cannot open .*missing\.lkr: No such file/],
      [dir, /light-bad-resident is not a regular file/],
      [empty, /empty\.lkr is empty/],
      [truncated, /section lengths .* do not match the file's 1000000 bytes \(truncated\?\)/],
      [foreign, /magic RFLKEY01 missing/],
    ];
    for (const [p, msg] of cases) {
      const e = loadError(p);
      expect(e?.code, p).toBe('ERR_LIGHT_KEY');
      expect(e?.message, p).toMatch(msg);
    }
  });

  it('a damaged resident file in the keys directory: keys_missing naming the file and the fix; the pool keeps serving', async () => {
    const keysDir = path.join(dir, 'keys');
    rmSync(keysDir, { recursive: true, force: true });
    mkdirSync(path.dirname(residentFile(keysDir, k)), { recursive: true });
    writeFileSync(residentFile(keysDir, k), readFileSync(residentFile(LIGHT_TEST_KEYS, k)).subarray(0, 1_000_000));
    copyFileSync(residentFile(LIGHT_TEST_KEYS, k).replace(/\.lkr$/, '.json'), residentFile(keysDir, k).replace(/\.lkr$/, '.json'));
    const damaged = new LightProver({ keysDir, size: 1 });
    try {
      const e = proverError(await damaged.prove(lightInputsFor(k, 8)).catch((x: unknown) => x));
      expect(e.code).toBe('keys_missing');
      expect(e.message).toContain(residentFile(keysDir, k));
      expect(e.message).toContain('truncated');
      expect(e.message).toContain('refract setup --light-keys');
      // the same pool, the file mended: the next request loads it and proves
      copyFileSync(residentFile(LIGHT_TEST_KEYS, k), residentFile(keysDir, k));
      const ok = await damaged.prove(lightInputsFor(k, 9));
      expect(verifyOnChain(vkOf(k.name, ok.publics.length), ok.compressedProof, ok.publics)).toBe(true);
    } finally {
      await damaged.close();
    }
  }, 120_000);
});

describe('Light keys: inputs that do not satisfy the circuit', () => {
  const k = lightKeyByName('mainnet_inclusion_26_1')!;

  it('wrong root: witness_failed naming the circuit and constraint, never a proof; the pool keeps working', async () => {
    const inputs = lightInputsFor(k, 3);
    inputs.accounts[0]!.root = seeded(99);
    const e = proverError(await prover.prove(inputs).catch((x: unknown) => x));
    expect(e.code).toBe('witness_failed');
    expect(e.message).toMatch(/^accounts\[0\]: leaf 0x[0-9a-f]{64} at index \d+ with its 26 path elements folds to root 0x[0-9a-f]{64}, not the given root 0x[0-9a-f]{64} \(circuit mainnet_inclusion_26_1, mainnet_inclusion_26_1\.key\)/);
    const ok = await prover.prove(lightInputsFor(k, 4));
    expect(verifyOnChain(vkOf(k.name, ok.publics.length), ok.compressedProof, ok.publics)).toBe(true);
  }, 120_000);

  it('a path that does not fold, a wrong nextIndex, a wrong v2 publicInputHash', async () => {
    const a = lightInputsFor(k, 5);
    a.accounts[0]!.pathElements[7] = seeded(1234);
    expect(proverError(await prover.prove(a).catch((x: unknown) => x)).code).toBe('witness_failed');
    const ni = lightInputsFor(lightKeyByName('non-inclusion_26_1')!, 5);
    ni.addresses[0]!.nextIndex = ni.addresses[0]!.nextIndex! + 1;
    const e = proverError(await prover.prove(ni).catch((x: unknown) => x));
    expect(e.code).toBe('witness_failed');
    expect(e.message).toContain('non-inclusion_26_1');
    const v2 = { ...lightInputsFor(lightKeyByName('inclusion_32_1')!, 5), publicInputHash: seeded(5) };
    const e2 = proverError((() => { try { lightWitness(v2); } catch (x) { return x; } })());
    expect(e2.code).toBe('invalid_input');
    expect(e2.message).toContain('publicInputHash');
  }, 120_000);

  it('the MSMs on two threads (KZ split to balance them) give the same proof as one after the other, and the eight-lane IFMA coset chain the same as the scalar one, for fixed r, s', () => {
    type Prove = (h: unknown, i: Uint8Array, o: Uint8Array, rs: Uint8Array | null, t: Float64Array) => void;
    const prove = (addon as unknown as { lightKeyProve: Prove }).lightKeyProve.bind(addon);
    const rs = new Uint8Array(64);
    rs[0] = 7;
    rs[32] = 11;
    for (const name of ['mainnet_inclusion_26_2', 'combined_26_1_2']) {
      const key = lightKeyByName(name)!;
      const h = addon.lightKeyLoad(readFileSync(residentFile(LIGHT_TEST_KEYS, key))); // no tables: the split path
      const inputs = lightWitness(lightInputsFor(key, 5)).inputs;
      const split = new Uint8Array(256);
      prove(h, inputs, split, rs, new Float64Array(4));
      const serial = new Uint8Array(256);
      process.env.REFRACT_LIGHT_MSM_SERIAL = '1';
      try {
        prove(h, inputs, serial, rs, new Float64Array(4));
      } finally {
        delete process.env.REFRACT_LIGHT_MSM_SERIAL;
      }
      expect(split.some((b) => b !== 0), name).toBe(true);
      expect(Buffer.from(split).toString('hex'), name).toBe(Buffer.from(serial).toString('hex'));
      // every field-arithmetic path this CPU has (ifma: the eight-lane coset chain; adx; c): the same proof
      const native = nativeAddon as unknown as { msmImpl(): string; msmSelectImpl(i: string): boolean };
      const def = native.msmImpl();
      try {
        for (const impl of ['ifma', 'adx', 'c'].filter((i) => native.msmSelectImpl(i))) {
          const out = new Uint8Array(256);
          prove(h, inputs, out, rs, new Float64Array(4));
          expect(Buffer.from(out).toString('hex'), `${name} ${impl}`).toBe(Buffer.from(split).toString('hex'));
        }
      } finally {
        native.msmSelectImpl(def);
      }
    }
  });

  it('the solve on two threads (the independent accounts of a key apart) gives the proof and the error of the solve on one', () => {
    type Prove = (h: unknown, i: Uint8Array, o: Uint8Array, rs: Uint8Array | null, t: Float64Array) => void;
    const native = addon as unknown as { lightKeyProve: Prove; lightKeyInfo(h: unknown): { m: number; nbPub: number; solveThreads: [number, number] } };
    const rs = new Uint8Array(64);
    rs[0] = 5;
    rs[32] = 9;
    /** proof bytes, or the error message, with REFRACT_LIGHT_SOLVE_SERIAL as given */
    const run = (h: unknown, inputs: Uint8Array, serial: boolean): string => {
      if (serial) process.env.REFRACT_LIGHT_SOLVE_SERIAL = '1';
      try {
        const out = new Uint8Array(256);
        native.lightKeyProve(h, inputs, out, rs, new Float64Array(4));
        return Buffer.from(out).toString('hex');
      } catch (e) {
        return `error ${(e as { code?: string }).code}: ${(e as Error).message}`;
      } finally {
        delete process.env.REFRACT_LIGHT_SOLVE_SERIAL;
      }
    };
    for (const name of ['mainnet_inclusion_26_4', 'inclusion_26_8', 'combined_26_2_2', 'non-inclusion_26_2', 'inclusion_32_4', 'combined_32_40_2_1']) {
      const key = lightKeyByName(name)!;
      const h = addon.lightKeyLoad(readFileSync(residentFile(LIGHT_TEST_KEYS, key)));
      const info = native.lightKeyInfo(h);
      // the accounts (and addresses) share no solved wire: both threads get at least a quarter
      expect(info.solveThreads[0] + info.solveThreads[1], name).toBe(info.m);
      expect(Math.min(...info.solveThreads), name).toBeGreaterThanOrEqual(info.m / 4);
      const inputs = lightWitness(lightInputsFor(key, 21)).inputs;
      const proof = run(h, inputs, false);
      expect(proof, name).toMatch(/^[0-9a-f]{512}$/);
      expect(proof, name).toBe(run(h, inputs, true));
      // a wrong first public input (a root) fails; so does the last on the inclusion keys (a leaf, in the other
      // thread's part), while an address value off by one may still lie in its range: as on one thread
      for (const at of [0, info.nbPub - 2]) {
        const bad = Uint8Array.from(inputs);
        bad[at * 32]! ^= 1;
        const e = run(h, bad, false);
        if (at === 0 || /^(mainnet_)?inclusion_26/.test(name)) expect(e, `${name} public input ${at}`).toMatch(/^error ERR_LIGHT_INPUT: .*constraint #\d+ is not satisfied/);
        expect(e, `${name} public input ${at}`).toBe(run(h, bad, true));
      }
    }
  });

  it('the C solver itself refuses a witness that does not satisfy the circuit (no proof, no crash)', () => {
    const w = lightWitness(lightInputsFor(k, 30));
    const bad = Uint8Array.from(w.inputs);
    bad[0]! ^= 1; // the root (public input 0), LE
    const h = (addon as unknown as { lightKeyLoad(b: Uint8Array): unknown }).lightKeyLoad(readFileSync(residentFile(LIGHT_TEST_KEYS, k)));
    const out = new Uint8Array(256);
    let err: { code?: string; message?: string } | undefined;
    try {
      (addon as unknown as { lightKeyProve(h: unknown, i: Uint8Array, o: Uint8Array, rs: null, t: Float64Array): void }).lightKeyProve(h, bad, out, null, new Float64Array(4));
    } catch (e) {
      err = e as { code?: string; message?: string };
    }
    expect(err?.code).toBe('ERR_LIGHT_INPUT');
    expect(err?.message).toMatch(/constraint #\d+ is not satisfied/);
    expect(out.every((b) => b === 0)).toBe(true);
  });

  it('a shape Light ships no key for: unsupported_shape listing the keys', () => {
    const inputs = { accounts: Array.from({ length: 5 }, () => lightInputsFor(k, 1).accounts[0]!), addresses: [] };
    const e = proverError((() => { try { lightWitness(inputs); } catch (x) { return x; } })());
    expect(e.code).toBe('unsupported_shape');
    expect(e.message).toContain('mainnet_inclusion_26_4');
  });

  it('foldPaths (one Poseidon batch per level) equals folding each path alone, for paths of 26, 32 and 40 levels side by side', () => {
    const paths = [26, 40, 32, 26, 40].map((h, i) => ({
      leaf: seeded(1000 * i),
      index: (0x9e3779b97 * (i + 1)) % 2 ** Math.min(h, 40),
      path: Array.from({ length: h }, (_, k) => seeded(1000 * i + k + 1)),
    }));
    const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
    expect(foldPaths(paths).map(hex)).toEqual(paths.map((p) => hex(fold(p.leaf, p.index, p.path))));
    expect(foldPaths([])).toEqual([]);
  });

  it('a value ≥ r and a path index ≥ 2^26: invalid_input', () => {
    const a = lightInputsFor(k, 6);
    a.accounts[0]!.leaf = new Uint8Array(32).fill(0xff);
    expect(proverError((() => { try { lightWitness(a); } catch (x) { return x; } })()).code).toBe('invalid_input');
    const b = lightInputsFor(k, 6);
    b.accounts[0]!.leafIndex = 2 ** 26;
    expect(proverError((() => { try { lightWitness(b); } catch (x) { return x; } })()).code).toBe('invalid_input');
  });
});
