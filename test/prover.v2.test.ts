// v2 (batched-tree) validity proofs end to end (spec prover.md §1.6, §2.2, §4): keys for
// v2_inclusion_32_1, v2_non-inclusion_40_1 and v2_combined_32_40_1_1 from the 2^16 dev ptau in
// $REFRACT_TEST_KEYS_V2 (default .refract-test-keys-v2 in the repo, ignored by git; cached: only the first run builds,
// ~8 min on 2 cores), real trees built here with src/merkle Poseidon (a height-32 state tree with a
// few leaves; height-40 v2 address trees, empty and after inserts), requests in the reference
// prover's v2 JSON through `POST /prove`, proofs verified with the vkey against a publicInputHash
// recomputed independently (poseidon-lite). Bad statements: 400 proving_error.
import Fastify, { type FastifyInstance } from 'fastify';
import path from 'node:path';
import { poseidon2 as p2, poseidon3 as p3 } from 'poseidon-lite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { poseidon2 } from '../src/merkle/poseidon.ts';
import { ZERO_BYTES } from '../src/merkle/zeroValues.ts';
import { LocalBackend } from '../src/prover/run/backend.ts';
import { beToBigint, bigintToBe32, compressGnarkProof, type GnarkProofJson } from '../src/prover/engine/proofEncoding.ts';
import { DEV_PTAU, ensureDevPtau, verifyCompressedProof } from './helpers/proverFixtures.ts';
import { registerProveRoute } from '../src/rpc/http/proveRoute.ts';
import { ProverPool } from '../src/prover/run/pool.ts';
import { ProofService } from '../src/prover/run/proofService.ts';
import { setupCircuits } from '../src/prover/keys/keySetup.ts';
import { terminateCurve } from '../src/prover/engine/snark.ts';
import { fromProverRequest, toProverRequest } from '../src/prover/engine/witness.ts';
import { REPO_ROOT } from './helpers/photon.ts';
import { runRefract, startRefract, stopAll } from './helpers/refractBin.ts';

const KEYS = process.env.REFRACT_TEST_KEYS_V2 ?? path.join(REPO_ROOT, '.refract-test-keys-v2');
const IDS = ['v2_inclusion_32_1', 'v2_non-inclusion_40_1', 'v2_combined_32_40_1_1'];
const HIGHEST = (1n << 248n) - 1n;
/** Spec prover.md §4.1 (Z[32]) and §4.2 (ADDRESS_TREE_INIT_ROOT_40). */
const EMPTY_STATE_ROOT_32 = 0x2f68a1c58e257e42a17a6c61dff5551ed560b9922ab119d5ac8e184c9734ead9n;
const ADDRESS_TREE_INIT_ROOT_40 = 0x1c416bffd0ea3303835f3e82cab1b01ad85140b8c8195f7cf8812c6de5926a4cn;

const be = bigintToBe32;
const hex = (b: Uint8Array | bigint) => `0x${(typeof b === 'bigint' ? b : beToBigint(b)).toString(16).padStart(64, '0')}`;

/** A sparse Poseidon Merkle tree of height h (src/merkle Poseidon; empty subtrees are ZERO_BYTES). */
class SparseTree {
  private readonly levels: Map<number, Uint8Array>[];
  constructor(readonly height: number) {
    this.levels = Array.from({ length: height + 1 }, () => new Map());
  }
  private node(level: number, i: number): Uint8Array {
    return this.levels[level]!.get(i) ?? ZERO_BYTES[level]!;
  }
  set(index: number, leaf: Uint8Array): void {
    this.levels[0]!.set(index, leaf);
    let i = index;
    for (let l = 0; l < this.height; l++) {
      const p = Math.floor(i / 2);
      this.levels[l + 1]!.set(p, poseidon2(this.node(l, 2 * p), this.node(l, 2 * p + 1)));
      i = p;
    }
  }
  root(): Uint8Array {
    return this.node(this.height, 0);
  }
  /** Siblings bottom-up. */
  path(index: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    let i = index;
    for (let l = 0; l < this.height; l++) {
      out.push(this.node(l, i % 2 === 0 ? i + 1 : i - 1));
      i = Math.floor(i / 2);
    }
    return out;
  }
}

/** A v2 indexed (address) tree of height 40: leaf = Poseidon2(value, nextValue); starts with (0, 2^248−1) at 0. */
class AddressTreeV2 {
  readonly tree = new SparseTree(40);
  readonly elements: { value: bigint; next: bigint }[] = [];
  constructor() {
    this.put(0, { value: 0n, next: HIGHEST });
  }
  private put(i: number, e: { value: bigint; next: bigint }) {
    this.elements[i] = e;
    this.tree.set(i, poseidon2(be(e.value), be(e.next)));
  }
  low(v: bigint): number {
    return this.elements.findIndex((e) => e.value < v && v < e.next);
  }
  insert(v: bigint): void {
    const li = this.low(v);
    const low = this.elements[li]!;
    const ni = this.elements.length;
    this.put(li, { value: low.value, next: v });
    this.put(ni, { value: v, next: low.next });
  }
  /** The reference v2 `newAddresses` entry proving `v` absent (no nextIndex). */
  proofJson(v: bigint) {
    const li = this.low(v);
    const low = this.elements[li]!;
    return { root: hex(this.tree.root()), value: hex(v), pathIndex: li, pathElements: this.tree.path(li).map(hex), leafLowerRangeValue: hex(low.value), leafHigherRangeValue: hex(low.next) };
  }
}

/** Independent TwoInputsHashChain (poseidon-lite over bigints). */
const chain = (a: bigint[], b: bigint[]) => a.slice(1).reduce((h, x, i) => p3([h, x, b[i + 1]!]), p2([a[0]!, b[0]!]));
const big = (h: string) => BigInt(h);

// A height-32 state tree with five leaves (indices 0..3 and 2^31 + 5).
const state = new SparseTree(32);
const LEAF_INDICES = [0, 1, 2, 3, 2 ** 31 + 5];
const leafAt = (i: number) => be(p2([0xacc0n, BigInt(i)]));
const accountJson = (i: number) => ({ root: hex(state.root()), pathIndex: i, pathElements: state.path(i).map(hex), leaf: hex(leafAt(i)) });

let pool: ProverPool;
let app: FastifyInstance;

beforeAll(async () => {
  expect(beToBigint(state.root())).toBe(EMPTY_STATE_ROOT_32);
  for (const i of LEAF_INDICES) state.set(i, leafAt(i));
  await setupCircuits({ keysDir: KEYS, ptau: await ensureDevPtau(), ptauInsecure: true, circuits: IDS, log: () => {} });
  pool = new ProverPool({ keysDir: KEYS, size: 1 });
  await pool.warm(IDS);
  const service = new ProofService({ backend: new LocalBackend(pool), timeoutMs: 120_000 });
  app = Fastify();
  registerProveRoute(app, { service, env: {} });
  await app.ready();
}, 1_200_000);

afterAll(async () => {
  await stopAll();
  await app?.close();
  await pool?.close();
  await terminateCurve();
});

async function prove(body: unknown) {
  const res = await app.inject({ method: 'POST', url: '/prove', payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return { status: res.statusCode, body: JSON.parse(res.body) };
}

async function expectVerifies(id: string, proof: GnarkProofJson, publicInputHash: bigint): Promise<void> {
  expect(proof).toEqual({ ar: [expect.any(String), expect.any(String)], bs: [expect.any(Array), expect.any(Array)], krs: [expect.any(String), expect.any(String)] });
  expect(await verifyCompressedProof(KEYS, id, compressGnarkProof(proof), [publicInputHash.toString()])).toBe(true);
  // The same proof does not verify for another public input.
  expect(await verifyCompressedProof(KEYS, id, compressGnarkProof(proof), [(publicInputHash + 1n).toString()])).toBe(false);
}

describe('v2 proofs through POST /prove (reference v2 JSON)', () => {
  test('inclusion ×1 in a height-32 tree: verifies against the vkey with the independently computed publicInputHash', async () => {
    const acc = accountJson(2 ** 31 + 5);
    const pih = chain([big(acc.root)], [big(acc.leaf)]);
    const r = await prove({ circuitType: 'inclusion', stateTreeHeight: 32, publicInputHash: hex(pih), inputCompressedAccounts: [acc] });
    expect(r.status).toBe(200);
    await expectVerifies('v2_inclusion_32_1', r.body, pih);
  }, 120_000);

  test('non-inclusion ×1 in the empty height-40 address tree (init root) and in a tree after inserts', async () => {
    const addr = new AddressTreeV2();
    expect(big(hex(addr.tree.root()))).toBe(ADDRESS_TREE_INIT_ROOT_40);
    const a0 = addr.proofJson(0x1234n);
    const pih0 = chain([big(a0.root)], [big(a0.value)]);
    const r0 = await prove({ circuitType: 'non-inclusion', addressTreeHeight: 40, publicInputHash: hex(pih0), newAddresses: [a0] });
    expect(r0.status).toBe(200);
    await expectVerifies('v2_non-inclusion_40_1', r0.body, pih0);

    addr.insert(1000n);
    addr.insert(HIGHEST - 5n);
    // 5000 lies between element 1 (1000 → 2^248−6): its low element is leaf 1, not leaf 0.
    const a1 = { ...addr.proofJson(5000n), nextIndex: 2 }; // Photon sends nextIndex for v2 too; ignored
    expect(a1.pathIndex).toBe(1);
    const pih1 = chain([big(a1.root)], [big(a1.value)]);
    const r1 = await prove({ circuitType: 'non-inclusion', addressTreeHeight: 40, publicInputHash: hex(pih1), newAddresses: [a1] });
    expect(r1.status).toBe(200);
    await expectVerifies('v2_non-inclusion_40_1', r1.body, pih1);
  }, 180_000);

  test('combined 1×1: publicInputHash = Poseidon2(chain(roots, leaves), chain(addrRoots, values))', async () => {
    const acc = accountJson(3);
    const addr = new AddressTreeV2();
    addr.insert(777n);
    const a = addr.proofJson(776n); // low element is leaf 0 (0 → 777)
    expect(a.pathIndex).toBe(0);
    const pih = p2([chain([big(acc.root)], [big(acc.leaf)]), chain([big(a.root)], [big(a.value)])]);
    const req = { circuitType: 'combined', stateTreeHeight: 32, addressTreeHeight: 40, publicInputHash: hex(pih), inputCompressedAccounts: [acc], newAddresses: [a] };
    const r = await prove(req);
    expect(r.status).toBe(200);
    await expectVerifies('v2_combined_32_40_1_1', r.body, pih);
    // toProverRequest writes the same v2 JSON back (no nextIndex).
    expect(toProverRequest(fromProverRequest(req))).toEqual(req);
  }, 120_000);
});

describe('refract setup / start (bin) with v2 circuits', () => {
  test('refract setup --circuits <v2 ids> takes v2 ids and finds the keys built here cached', async () => {
    const r = await runRefract(['setup', '--keys', KEYS, '--ptau', DEV_PTAU, '--insecure-ptau', '--no-progress', '--circuits', IDS.join(',')]);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ built: [], cached: IDS });
  }, 60_000);

  test('--circuits v2_inclusion_32_1 --keys <v2 keys>: POST /prove with v2 JSON proves; a v1 request answers that its keys are not served; /metrics shows the v2 circuit ready', async () => {
    const d = await startRefract(['--keys', KEYS, '--circuits', 'v2_inclusion_32_1', '--no-build-keys', '--prover-threads', '1', '--log-level', 'warn']);
    const post = async (body: unknown) => {
      const res = await fetch(`${d.url}/prove`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const acc = accountJson(1);
    const pih = chain([big(acc.root)], [big(acc.leaf)]);
    const req = { circuitType: 'inclusion', stateTreeHeight: 32, publicInputHash: hex(pih), inputCompressedAccounts: [acc] };
    const r = await post(req);
    expect(r.status).toBe(200);
    await expectVerifies('v2_inclusion_32_1', r.body, pih);
    const v1 = await post(toProverRequest({ accounts: [{ ...fromProverRequest(req).accounts[0]!, pathElements: Array(26).fill(new Uint8Array(32)) }], addresses: [] }));
    expect(v1.status).toBe(503);
    expect(v1.body.message).toMatch(/proving keys for inclusion_26_1 are not ready/);
    const metrics = await (await fetch(`${d.url}/metrics`)).text();
    expect(metrics).toContain('refract_prover_circuit_ready{circuit="v2_inclusion_32_1"} 1');
    expect(metrics).toContain('refract_prover_circuit_ready{circuit="inclusion_26_1"} 0');
  }, 180_000);
});

describe('bad v2 requests: specific 400s', () => {
  test('a wrong root (publicInputHash computed over it) → 400 proving_error from the circuit', async () => {
    const acc = { ...accountJson(1), root: hex(p2([1n, 2n])) };
    const pih = chain([big(acc.root)], [big(acc.leaf)]);
    const r = await prove({ circuitType: 'inclusion', stateTreeHeight: 32, publicInputHash: hex(pih), inputCompressedAccounts: [acc] });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('proving_error');
    expect(r.body.message).toMatch(/do not fold to the given state root/);
  }, 60_000);

  test('a publicInputHash that does not match the inputs → 400 proving_error naming publicInputHash and the expected value', async () => {
    const acc = accountJson(0);
    const good = chain([big(acc.root)], [big(acc.leaf)]);
    const r = await prove({ circuitType: 'inclusion', stateTreeHeight: 32, publicInputHash: hex(good + 1n), inputCompressedAccounts: [acc] });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      code: 'proving_error',
      message: `publicInputHash: ${hex(good + 1n)} does not match the inputs: TwoInputsHashChain(roots, leaves) is ${hex(good)}`,
    });
  });

  test('heights, shapes and ranges', async () => {
    const acc = accountJson(0);
    const pih = hex(chain([big(acc.root)], [big(acc.leaf)]));
    const r26 = await prove({ circuitType: 'inclusion', stateTreeHeight: 26, publicInputHash: pih, inputCompressedAccounts: [acc] });
    expect(r26).toEqual({ status: 400, body: { code: 'proving_error', message: expect.stringMatching(/^stateTreeHeight 26 is not supported \(v2 .*: 32\)$/) } });
    const noHash = await prove({ circuitType: 'non-inclusion', addressTreeHeight: 40, newAddresses: [new AddressTreeV2().proofJson(5n)] });
    expect(noHash).toEqual({ status: 400, body: { code: 'malformed_body', message: expect.stringMatching(/^publicInputHash: required in v2 requests/) } });
    const shortPath = await prove({ circuitType: 'inclusion', stateTreeHeight: 32, publicInputHash: pih, inputCompressedAccounts: [{ ...acc, pathElements: acc.pathElements.slice(0, 26) }] });
    expect(shortPath).toEqual({ status: 400, body: { code: 'proving_error', message: 'accounts[0].pathElements: expected 32 path elements, got 26' } });
    const five = await prove({ circuitType: 'inclusion', stateTreeHeight: 32, publicInputHash: pih, inputCompressedAccounts: [acc, acc, acc, acc, acc] });
    expect(five.status).toBe(400);
    expect(five.body.message).toMatch(/^no v2 validity-proof circuit for 5 account\(s\) and 0 address\(es\)/);
    // The address already exists (value = low element value): rejected before any witness.
    const addr = new AddressTreeV2();
    addr.insert(42n);
    const a = { ...addr.proofJson(43n), value: hex(42n) };
    const r = await prove({ circuitType: 'non-inclusion', addressTreeHeight: 40, publicInputHash: hex(chain([big(a.root)], [42n])), newAddresses: [a] });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('proving_error');
    expect(r.body.message).toMatch(/^addresses\[0\]: value .* is not strictly between/);
  });
});
