/**
 * getValidityProofV2 on batched (v2) state, end to end over the reference's real fixtures
 * (test/fixtures/photon): batched_tree_transactions (HLKs5, StateV2 height 32) and
 * batched_address_transactions (EzKE8, AddressV2 height 40), plus e2e_mint_and_transfer (v1) for
 * the mixed refusals. Proofs come from the real prover (keys for v2_inclusion_32_1,
 * v2_non-inclusion_40_1, v2_combined_32_40_1_1 from the 2^16 dev ptau, cached in
 * $REFRACT_TEST_KEYS_V2, default .refract-test-keys-v2) and each is verified here against the vkey
 * with the public input hash recomputed IN THIS FILE (poseidon-lite) from the roots the chain
 * published in its batch events, the account hashes and the addresses: the production hash-chain
 * helper is not used for the expected value.
 */
import bs58 from 'bs58';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { poseidon2 as p2, poseidon3 as p3 } from 'poseidon-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Indexer } from '../src/ingest/indexer.ts';
import { loadTransactionFiles, type TransactionFile } from '../src/ingest/sources/files.ts';
import { parseTransaction } from '../src/light/parser.ts';
import { LocalBackend } from '../src/prover/run/backend.ts';
import { solanaVkeyToJson, vkeyToSolana } from '../src/prover/engine/proofEncoding.ts';
import { DEV_PTAU, ensureDevPtau, verifyCompressedProof } from './helpers/proverFixtures.ts';
import { checkKeys, keyFiles } from '../src/prover/keys/layout.ts';
import { ProverPool } from '../src/prover/run/pool.ts';
import { ProofService } from '../src/prover/run/proofService.ts';
import { setupCircuits } from '../src/prover/keys/keySetup.ts';
import { terminateCurve } from '../src/prover/engine/snark.ts';
import { RefractValidityProver } from '../src/rpc/validityProver.ts';
import { Store } from '../src/store/store.ts';
import type { BatchEvent, BatchPublicTransactionEvent, BlockInfo } from '../src/types.ts';
import { REPO_ROOT, tempDir, txDir } from './helpers/photon.ts';
import { startRefract, stopAll } from './helpers/refractBin.ts';
import { lmdbServer, registry, rpcCall, rpcResult } from './helpers/rpcLmdb.ts';

const KEYS = process.env.REFRACT_TEST_KEYS_V2 ?? path.join(REPO_ROOT, '.refract-test-keys-v2');
const IDS = ['v2_inclusion_32_1', 'v2_non-inclusion_40_1', 'v2_combined_32_40_1_1'];
const HLKS5 = 'HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu';
const EZKE8 = 'EzKE84aVTkCUhDHLELqyJaq1Y7UVVmqxXqZjVHwHY3rK';
const SMT1 = 'smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT';
const AMT1 = 'amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2';
const ZERO_ROOT = '11111111111111111111111111111111';

type File = TransactionFile;
const load = (name: string): File[] => loadTransactionFiles([txDir(name)]);
const block = (f: File): BlockInfo => ({ slot: f.slot, parentSlot: 0, blockTime: 0, blockHeight: 0, blockhash: '', previousBlockhash: '', transactions: [f.transaction] });
const batchEventOf = (f: File): BatchEvent | undefined => parseTransaction(f.transaction, f.slot).events.flatMap((e) => (e.kind === 'batch' ? [e.event] : []))[0];
const v2EventsOf = (f: File): BatchPublicTransactionEvent[] => parseTransaction(f.transaction, f.slot).events.flatMap((e) => (e.kind === 'batchPublicTransaction' ? [e.event] : []));

// ---- independent public-input hash (spec prover.md §1.6), poseidon-lite over field elements ----
const fe = (b58s: string) => BigInt(`0x${Buffer.from(bs58.decode(b58s)).toString('hex') || '0'}`);
/** TwoInputsHashChain(a, b): Poseidon2(a0, b0), then Poseidon3(h, a_i, b_i). */
const chain = (a: bigint[], b: bigint[]) => a.slice(1).reduce((h, x, i) => p3([h, x, b[i + 1]!]), p2([a[0]!, b[0]!]));

const stateFiles = load('batched_tree_transactions');
const addressFiles = load('batched_address_transactions');
const v1Files = load('e2e_mint_and_transfer_transactions');

/** Live (never spent) and spent outputs of the state fixture, from the decoded events. */
const stateEvents = stateFiles.filter((f) => !batchEventOf(f)).flatMap(v2EventsOf);
const spentHashes = new Set(stateEvents.flatMap((e) => e.batchInputAccounts.map((b) => bs58.encode(b.accountHash))));
const allOutputs = stateEvents.flatMap((e) => e.event.outputCompressedAccountHashes.map((h) => bs58.encode(h)));
const liveHashes = allOutputs.filter((h) => !spentHashes.has(h));
const addresses = addressFiles.filter((f) => !batchEventOf(f)).flatMap(v2EventsOf).flatMap((e) => e.newAddresses.map((a) => bs58.encode(a.address)));

/** The last batch event the chain published for `tree` among `files`. */
const lastBatchEvent = (files: File[], tree: string) => files.map(batchEventOf).filter((e): e is BatchEvent => !!e && bs58.encode(e.merkleTreePubkey) === tree).pop()!;

function indexed(files: File[]): Store {
  const store = new Store({ path: tempDir('refract-vp-v2-') });
  const indexer = new Indexer(store, registry);
  for (const f of files) expect(indexer.indexBlocks([block(f)]).rejected).toEqual([]);
  return store;
}

let pool: ProverPool;
let service: ProofService;
let proveCalls = 0;

beforeAll(async () => {
  await setupCircuits({ keysDir: KEYS, ptau: await ensureDevPtau(), ptauInsecure: true, circuits: IDS, log: () => {} });
  pool = new ProverPool({ keysDir: KEYS, size: 1 });
  await pool.warm(IDS);
  const real = new ProofService({ backend: new LocalBackend(pool), timeoutMs: 180_000 });
  // Counts the calls that reach the prover (refusals must not).
  service = new Proxy(real, {
    get(t, k) {
      if (k === 'prove') return (...a: Parameters<ProofService['prove']>) => (proveCalls++, t.prove(...a));
      const v = Reflect.get(t, k);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}, 1_200_000);

afterAll(async () => {
  await stopAll();
  await pool?.close();
  await terminateCurve();
});

function server(store: Store) {
  return lmdbServer(store, { prover: (data) => new RefractValidityProver({ data, service }) });
}

async function expectVerifies(id: string, compressedProof: { a: number[]; b: number[]; c: number[] }, publicInputHash: bigint): Promise<void> {
  expect(compressedProof.a).toHaveLength(32);
  expect(compressedProof.b).toHaveLength(64);
  expect(compressedProof.c).toHaveLength(32);
  expect(await verifyCompressedProof(KEYS, id, compressedProof, [publicInputHash.toString()])).toBe(true);
  expect(await verifyCompressedProof(KEYS, id, compressedProof, [(publicInputHash + 1n).toString()])).toBe(false);
}

describe('v2 keys', () => {
  it('exported as for v1: snarkjs vkey JSON (1 public input) and the groth16-solana layout (2 IC points); manifest entries check out', async () => {
    const entries = await checkKeys(KEYS, IDS, { deep: true });
    expect(entries.map((e) => [e.id, e.constraints, e.nPublic])).toEqual([
      ['v2_inclusion_32_1', 7984, 1],
      ['v2_non-inclusion_40_1', 10656, 1],
      ['v2_combined_32_40_1_1', 18880, 1],
    ]);
    for (const id of IDS) {
      const vkey = JSON.parse(await readFile(keyFiles(KEYS, id).vkey, 'utf8'));
      expect([vkey.protocol, vkey.curve, vkey.nPublic, vkey.IC.length]).toEqual(['groth16', 'bn128', 1, 2]);
      const sol = JSON.parse(await readFile(keyFiles(KEYS, id).vkeySolana, 'utf8'));
      expect(sol).toEqual(solanaVkeyToJson(vkeyToSolana(vkey)));
      expect(sol.ic).toHaveLength(2);
      expect(sol.alpha_g1).toMatch(/^0x[0-9a-f]{128}$/);
    }
  });

  it('refract start serves the default v2 circuits: /health lists them (ready or not), /metrics has their readiness gauges', async () => {
    // Default circuits (no --circuits), keys dir holding only the three built here, no background build.
    const d = await startRefract(['--keys', KEYS, '--no-build-keys', '--prover-threads', '1', '--log-level', 'warn']);
    const health = (await (await fetch(`${d.url}/health`)).json()) as any;
    expect(health.prover.keys.circuits).toMatchObject({
      inclusion_26_1: false,
      v2_inclusion_32_1: true,
      v2_inclusion_32_2: false,
      'v2_non-inclusion_40_1': true,
      v2_combined_32_40_1_1: true,
    });
    expect(health.prover.keys).toMatchObject({ ready: 3, total: 19 });
    const metrics = await (await fetch(`${d.url}/metrics`)).text();
    expect(metrics).toContain('refract_prover_circuit_ready{circuit="v2_inclusion_32_1"} 1');
    expect(metrics).toContain('refract_prover_circuit_ready{circuit="v2_inclusion_32_2"} 0');
    await d.stop();
  }, 90_000);
});

describe('getValidityProofV2 on batched_tree_transactions (HLKs5, height 32)', () => {
  // Everything indexed: all live accounts appended, the tree root = the last BatchEvent.new_root.
  let appended: Store;
  // Prefix up to and including the first batch append: some live accounts appended, the rest queued.
  let partial: Store;
  const firstAppend = stateFiles.findIndex((f) => batchEventOf(f)?.kind === 'batchAppend');
  const firstEvent = batchEventOf(stateFiles[firstAppend]!)!;

  beforeAll(() => {
    appended = indexed(stateFiles);
    partial = indexed(stateFiles.slice(0, firstAppend + 1));
  });

  it('queued accounts only: proveByIndex, root 1111…1111, root index 0, compressedProof null, the prover not called', async () => {
    const { app } = server(indexed(stateFiles.filter((f) => !batchEventOf(f))));
    const hashes = liveHashes.slice(0, 4);
    const before = proveCalls;
    const v = await rpcResult(app, 'getValidityProofV2', { hashes });
    expect(proveCalls).toBe(before);
    expect(v.value.compressedProof).toBeNull();
    expect(v.value.accounts.map((a: any) => [a.hash, a.root, a.rootIndex, a.merkleContext.tree])).toEqual(hashes.map((h) => [h, ZERO_ROOT, { rootIndex: 0, proveByIndex: true }, HLKS5]));
    await app.close();
  });

  it('one appended account: v2_inclusion_32_1 proof against the chain root and root index; verifies with Poseidon2(root, hash)', async () => {
    const { app } = server(appended);
    const last = lastBatchEvent(stateFiles, HLKS5);
    const hash = liveHashes[0]!;
    const v = await rpcResult(app, 'getValidityProofV2', { hashes: [hash] });
    const [acc] = v.value.accounts;
    expect(acc).toMatchObject({ hash, root: bs58.encode(last.newRoot), rootIndex: { rootIndex: last.rootIndex, proveByIndex: false }, merkleContext: { tree: HLKS5 } });
    await expectVerifies('v2_inclusion_32_1', v.value.compressedProof, chain([fe(bs58.encode(last.newRoot))], [fe(hash)]));
    await app.close();
  }, 180_000);

  it('a mix of queued and appended accounts: the queued ones by index, the appended one proved (inclusion ×1) in request order', async () => {
    const { app } = server(partial);
    // Which live accounts the first append moved into the tree (leaf index < new next index).
    const states = await Promise.all(liveHashes.map(async (h) => (await rpcResult(app, 'getCompressedAccountV2', { hash: h })).value));
    const queued = states.filter((a: any) => a?.proveByIndex === true).map((a: any) => a.hash);
    const inTree = states.filter((a: any) => a && a.proveByIndex === false && a.leafIndex < Number(firstEvent.newNextIndex)).map((a: any) => a.hash);
    expect(queued.length).toBeGreaterThanOrEqual(2);
    expect(inTree.length).toBeGreaterThanOrEqual(1);
    const hashes = [queued[0]!, inTree[0]!, queued[1]!];
    const v = await rpcResult(app, 'getValidityProofV2', { hashes });
    expect(v.value.accounts.map((a: any) => [a.hash, a.root, a.rootIndex])).toEqual([
      [queued[0], ZERO_ROOT, { rootIndex: 0, proveByIndex: true }],
      [inTree[0], bs58.encode(firstEvent.newRoot), { rootIndex: firstEvent.rootIndex, proveByIndex: false }],
      [queued[1], ZERO_ROOT, { rootIndex: 0, proveByIndex: true }],
    ]);
    await expectVerifies('v2_inclusion_32_1', v.value.compressedProof, chain([fe(bs58.encode(firstEvent.newRoot))], [fe(inTree[0]!)]));
    await app.close();
  }, 180_000);

  it('refusals, no proof: a spent account, an unknown one, and 5 appended accounts (no v2 circuit) name what is wrong', async () => {
    const { app } = server(appended);
    const before = proveCalls;
    const spent = [...spentHashes][0]!;
    const r1 = await rpcCall(app, 'getValidityProofV2', { hashes: [spent] });
    expect(r1.body.result).toBeUndefined();
    expect(r1.body.error.message).toBe(`Validation Error: Account ${spent} is spent: a validity proof can only cover unspent accounts`);
    const unknown = bs58.encode(new Uint8Array(32).fill(3));
    const r2 = await rpcCall(app, 'getValidityProofV2', { hashes: [unknown] });
    expect(r2.body.error.message).toMatch(new RegExp(`^Record Not Found: Account ${unknown} does not exist`));
    const r3 = await rpcCall(app, 'getValidityProofV2', { hashes: liveHashes.slice(0, 5) });
    expect(r3.body.result).toBeUndefined();
    expect(r3.body.error.message).toBe(
      'Validation Error: no v2 validity-proof circuit for 5 account(s) and 0 address(es); supported v2 shapes: accounts only: 1, 2, 3, 4 or 8; addresses only: 1, 2, 3 or 4; accounts and addresses: 1–4 accounts with 1–4 addresses',
    );
    expect(proveCalls).toBe(before);
    await app.close();
  });
});

describe('getValidityProofV2 on batched_address_transactions (EzKE8, height 40)', () => {
  let store: Store;
  const fresh = (() => {
    const b = new Uint8Array(32).fill(7);
    b[0] = 0; // < 2^248
    return bs58.encode(b);
  })();

  beforeAll(() => {
    // Both v2 fixtures (different trees) and the v1 e2e fixture in one store.
    store = indexed([...stateFiles, ...addressFiles, ...v1Files]);
  });

  it('a new address: v2_non-inclusion_40_1 proof against the chain root and root index; verifies with Poseidon2(root, address)', async () => {
    const { app } = server(store);
    const last = lastBatchEvent(addressFiles, EZKE8);
    const before = proveCalls;
    const v = await rpcResult(app, 'getValidityProofV2', { newAddressesWithTrees: [{ address: fresh, tree: EZKE8 }] });
    expect(proveCalls).toBe(before + 1);
    expect(v.value.accounts).toEqual([]);
    expect(v.value.addresses).toEqual([{ address: fresh, root: bs58.encode(last.newRoot), rootIndex: last.rootIndex, merkleContext: expect.objectContaining({ tree: EZKE8 }) }]);
    await expectVerifies('v2_non-inclusion_40_1', v.value.compressedProof, chain([fe(bs58.encode(last.newRoot))], [fe(fresh)]));
    await app.close();
  }, 180_000);

  it('an appended account with a new address: v2_combined_32_40_1_1, publicInputHash = Poseidon2(chain(roots, hashes), chain(addrRoots, addresses))', async () => {
    const { app } = server(store);
    const s = lastBatchEvent(stateFiles, HLKS5);
    const a = lastBatchEvent(addressFiles, EZKE8);
    const hash = liveHashes[1]!;
    const v = await rpcResult(app, 'getValidityProofV2', { hashes: [hash], newAddressesWithTrees: [{ address: fresh, tree: EZKE8 }] });
    expect(v.value.accounts[0]).toMatchObject({ hash, root: bs58.encode(s.newRoot), rootIndex: { rootIndex: s.rootIndex, proveByIndex: false } });
    expect(v.value.addresses[0]).toMatchObject({ address: fresh, root: bs58.encode(a.newRoot), rootIndex: a.rootIndex });
    const pih = p2([chain([fe(bs58.encode(s.newRoot))], [fe(hash)]), chain([fe(bs58.encode(a.newRoot))], [fe(fresh)])]);
    await expectVerifies('v2_combined_32_40_1_1', v.value.compressedProof, pih);
    await app.close();
  }, 180_000);

  it('refusals, no proof: an address in the tree, an address still in the queue, 5 new addresses, v1 + v2 state, v1 state + v2 address', async () => {
    const { app } = server(store);
    const before = proveCalls;
    const existing = addresses[0]!;
    const r1 = await rpcCall(app, 'getValidityProofV2', { newAddressesWithTrees: [{ address: existing, tree: EZKE8 }] });
    expect(r1.body.result).toBeUndefined();
    expect(r1.body.error.message).toMatch(new RegExp(`^Validation Error: Address ${existing} already exists in address tree ${EZKE8} \\(leaf \\d+\\)`));

    const many = [1, 2, 3, 4, 5].map((i) => {
      const b = new Uint8Array(32).fill(i + 10);
      b[0] = 0;
      return { address: bs58.encode(b), tree: EZKE8 };
    });
    const r3 = await rpcCall(app, 'getValidityProofV2', { newAddressesWithTrees: many });
    expect(r3.body.error.message).toMatch(/^Validation Error: no v2 validity-proof circuit for 0 account\(s\) and 5 address\(es\); supported v2 shapes: /);

    // v1 (smt1, height 26) and v2 (HLKs5, height 32) accounts in one proof: refused as the reference does.
    const v1Hash = (await rpcResult(app, 'getCompressedAccountsByOwner', { owner: v1Owner() })).value.items.find((a: any) => a.tree === SMT1)?.hash;
    expect(v1Hash).toBeTruthy();
    // (Photon's paths all take the first tree's height, quirk 5, so it asks the prover and answers
    // `Internal server error`; Refract refuses with Photon's height message and names both.)
    for (const hashes of [[v1Hash, liveHashes[0]], [liveHashes[0], v1Hash]]) {
      const r4 = await rpcCall(app, 'getValidityProofV2', { hashes });
      expect(r4.body.error.message).toMatch(/^Validation Error: All state trees for account proofs must have the same height: account \S+ is in State(V1|V2) tree \S+ \(height (26|32)\), account \S+ in State(V1|V2) tree/);
    }
    // A v1 account with an AddressV2 address: no circuit for heights 26/40.
    const r5 = await rpcCall(app, 'getValidityProofV2', { hashes: [v1Hash], newAddressesWithTrees: [{ address: fresh, tree: EZKE8 }] });
    expect(r5.body.error.message).toMatch(/^Validation Error: no circuit combines accounts in StateV1 trees \(height 26\) with new addresses in AddressV2 trees \(height 40\)/);
    // And a v2 account with a v1 (amt1) address: heights 32/26.
    const r6 = await rpcCall(app, 'getValidityProofV2', { hashes: [liveHashes[0]], newAddressesWithTrees: [{ address: fresh, tree: AMT1 }] });
    expect(r6.body.error.message).toMatch(/^Validation Error: no circuit combines accounts in StateV2 trees \(height 32\) with new addresses in AddressV1 trees \(height 26\)/);
    expect(proveCalls).toBe(before);
    await app.close();
  });

  it('a queued account with a new address: the account by index, only the address proved (v2_non-inclusion_40_1)', async () => {
    const { app } = server(indexed([...stateFiles.filter((f) => !batchEventOf(f)), ...addressFiles]));
    const a = lastBatchEvent(addressFiles, EZKE8);
    const hash = liveHashes[2]!;
    const v = await rpcResult(app, 'getValidityProofV2', { hashes: [hash], newAddressesWithTrees: [{ address: fresh, tree: EZKE8 }] });
    expect(v.value.accounts.map((x: any) => [x.hash, x.root, x.rootIndex])).toEqual([[hash, ZERO_ROOT, { rootIndex: 0, proveByIndex: true }]]);
    expect(v.value.addresses[0]).toMatchObject({ address: fresh, root: bs58.encode(a.newRoot), rootIndex: a.rootIndex });
    await expectVerifies('v2_non-inclusion_40_1', v.value.compressedProof, chain([fe(bs58.encode(a.newRoot))], [fe(fresh)]));
    await app.close();
  }, 180_000);

  it('an address still in the address queue (before the BatchAddressAppend) is refused as existing', async () => {
    const { app } = server(indexed(addressFiles.filter((f) => !batchEventOf(f))));
    const queued = addresses[3]!;
    const r = await rpcCall(app, 'getValidityProofV2', { newAddressesWithTrees: [{ address: queued, tree: EZKE8 }] });
    expect(r.body.result).toBeUndefined();
    expect(r.body.error.message).toMatch(new RegExp(`^Validation Error: Address ${queued} already exists in the queue of address tree ${EZKE8} \\(queue index 3\\)`));
    await app.close();
  });
});

/** An owner of an unspent account of the v1 e2e fixture (smt1). */
function v1Owner(): string {
  const evs = v1Files.flatMap((f) => parseTransaction(f.transaction, f.slot).events.flatMap((e) => (e.kind === 'publicTransaction' ? [e.event] : [])));
  const spent = new Set(evs.flatMap((e: any) => (e.inputCompressedAccountHashes ?? []).map((h: Uint8Array) => bs58.encode(h))));
  for (const e of evs as any[]) {
    for (let i = 0; i < e.outputCompressedAccountHashes.length; i++) {
      if (!spent.has(bs58.encode(e.outputCompressedAccountHashes[i]))) return bs58.encode(e.outputCompressedAccounts[i].compressedAccount.owner);
    }
  }
  throw new Error('no live v1 account');
}
