/**
 * A fresh daemon answers new-address proofs (issue 15, defect 4): `refract start` on an empty --db
 * (its Solana node unreachable, so nothing is ever indexed) answers getMultipleNewAddressProofs(V2)
 * with the empty tree's proof at context slot 0, as the reference does (photon.md §2.6), for the V1
 * tree amt1 (the reference snapshot) and for an AddressV2 tree from the config (amt2: its root is the
 * one in the real on-chain account's root history). getValidityProof with only new addresses proves
 * against the same empty tree (a real non-inclusion proof, checked with the verification key).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDevPtau, TEST_KEYS_DIR, verifyCompressedProof } from './helpers/proverFixtures.ts';
import { setupCircuits } from '../src/prover/keys/keySetup.ts';
import { ZERO_BYTES } from '../src/merkle/zeroValues.ts';
import { PHOTON_DIR, snapshot, tempDir } from './helpers/photon.ts';
import { freePort, postRpc, startRefract, stopAll } from './helpers/refractBin.ts';

const AMT1 = 'amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2';
const AMT2 = 'amt2kaJA14v3urZbZvnc5v2np8jqvc4Z8zDep5wbtzx';
const SNAP = snapshot('get_multiple_new_address_proofs', 'mock_tests');
const ADDRESSES: string[] = SNAP.value.map((p: { address: string }) => p.address);
/** A valid new address (below 2^248; the snapshot's addresses are not BN254 field elements, so no circuit takes them). */
const NEW_ADDRESS = bs58.encode(Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 0 : i * 7 + 1)));
/** 2^248 − 1, the highest address (the zeroeth element's next value). */
const HIGHEST = bs58.encode(Buffer.concat([Buffer.alloc(1), Buffer.alloc(31, 0xff)]));

let port: number;

beforeAll(async () => {
  // The key this daemon serves (cached in TEST_KEYS_DIR; built here when this file runs alone, e.g. on a fresh clone).
  await setupCircuits({ keysDir: TEST_KEYS_DIR, ptau: await ensureDevPtau(), ptauInsecure: true, circuits: ['non-inclusion_26_1'], log: () => {} });
  const dir = tempDir('refract-empty-');
  const config = join(dir, 'refract.json');
  // amt2 as Light's stateless.js names it: a batched address tree whose queue is the tree itself.
  writeFileSync(config, JSON.stringify({ trees: [{ tree: AMT2, queue: AMT2, type: 'AddressV2', height: 40, rootHistoryCapacity: 200 }] }));
  const closed = await freePort();
  ({ port } = await startRefract([
    '--config', config, '--db', join(dir, 'db'), '--rpc-url', `http://127.0.0.1:${closed}`, '--keys', TEST_KEYS_DIR, '--no-build-keys', '--circuits', 'non-inclusion_26_1',
  ]));
}, 90_000);

afterAll(stopAll);

describe('refract start on an empty --db', () => {
  it('nothing is indexed', async () => {
    const r = await postRpc(port, 'getIndexerSlot');
    expect([r.status, r.body.error?.message]).toEqual([200, 'Record Not Found: No data has been indexed']);
  });

  it('getMultipleNewAddressProofs: exactly the reference snapshot (empty amt1, context slot 0)', async () => {
    const r = await postRpc(port, 'getMultipleNewAddressProofs', ADDRESSES);
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual(SNAP);
  });

  it('getMultipleNewAddressProofsV2 with amt1: the same', async () => {
    const r = await postRpc(port, 'getMultipleNewAddressProofsV2', ADDRESSES.map((address) => ({ address, tree: AMT1 })));
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual(SNAP);
  });

  it('getMultipleNewAddressProofsV2 with the AddressV2 tree amt2: zeroeth V2 leaf, Z0..Z39, rootSeq 0, the on-chain initial root', async () => {
    const items = [{ address: ADDRESSES[0], tree: AMT2 }, { address: ADDRESSES[1], tree: AMT1 }, { address: ADDRESSES[1], tree: AMT2 }];
    const r = await postRpc(port, 'getMultipleNewAddressProofsV2', items);
    expect(r.status).toBe(200);
    expect(r.body.result.context).toEqual({ slot: 0 });
    const [a, b, c] = r.body.result.value;
    expect(b).toEqual(SNAP.value[1]); // request order, each with its own tree
    for (const [p, address] of [[a, ADDRESSES[0]], [c, ADDRESSES[1]]] as const) {
      expect(p).toEqual({
        root: a.root,
        address,
        lowerRangeAddress: '11111111111111111111111111111111',
        higherRangeAddress: HIGHEST,
        nextIndex: 0,
        proof: ZERO_BYTES.slice(0, 40).map((z) => bs58.encode(z)),
        merkleTree: AMT2,
        rootSeq: 0,
        lowElementLeafIndex: 0,
      });
    }
    // The root of a freshly created batched address tree is in its account's root history.
    const account = JSON.parse(readFileSync(join(PHOTON_DIR, '../light-accounts', `batch_address_merkle_tree_${AMT2}.json`), 'utf8'));
    const data = Buffer.from(account.account.data[0], 'base64');
    expect(data.indexOf(Buffer.from(bs58.decode(a.root)))).toBeGreaterThan(0);
  });

  it('getValidityProof with only new addresses: a verifying non-inclusion proof over the empty amt1, context slot 0', async () => {
    const r = await postRpc(port, 'getValidityProof', { newAddresses: [NEW_ADDRESS] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const { context, value } = r.body.result;
    expect(context).toEqual({ slot: 0 });
    expect(value.roots).toEqual([SNAP.value[0].root]);
    expect(value.rootIndices).toEqual([3]); // rootSeq 3 mod 2400
    expect(value.leafIndices).toEqual([0]);
    expect(value.leaves).toEqual([NEW_ADDRESS]);
    expect(value.merkleTrees).toEqual([AMT1]);
    expect(await verifyCompressedProof(TEST_KEYS_DIR, 'non-inclusion_26_1', value.compressedProof, [bs58.decode(value.roots[0]), bs58.decode(NEW_ADDRESS)])).toBe(true);
  }, 120_000);

  it('getValidityProof with account hashes still needs indexed data; the amt2 address needs v2_non-inclusion_40_1, which this daemon does not serve', async () => {
    const hashes = await postRpc(port, 'getValidityProof', { hashes: [NEW_ADDRESS], newAddresses: [NEW_ADDRESS] });
    expect([hashes.status, hashes.body.error]).toEqual([200, { code: -32000, message: 'Record Not Found: No data has been indexed' }]);
    const v2 = await postRpc(port, 'getValidityProofV2', { newAddressesWithTrees: [{ address: NEW_ADDRESS, tree: AMT2 }] });
    expect(v2.status).toBe(200); // JSON-RPC errors answer HTTP 200 by default (docs/api.md#errors)
    expect(v2.body.error.message).toMatch(
      /^Prover not available: proving keys for v2_non-inclusion_40_1 are not ready: this server does not serve v2_non-inclusion_40_1 \(1 of 1 circuits ready\); add it to --circuits/,
    );
  });

  it('getIndexerHealth names the unreachable node (and that nothing is indexed)', async () => {
    const r = await postRpc(port, 'getIndexerHealth');
    expect(r.status).toBe(200);
    expect(r.body.error.code).toBe(-32000);
    expect(r.body.error.message).toMatch(/^Solana RPC unavailable: getSlot: http:\/\/127\.0\.0\.1:\d+ unreachable \(.+\); no data has been indexed yet$/);
  });
});
