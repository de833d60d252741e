/**
 * End-to-end golden tests: the reference fixtures are indexed into LMDB stores the way Photon's
 * harness does it (slot 0, one fresh store per Photon test), served over HTTP (fastify.inject) by
 * the real method handlers on `LmdbDataSource`, and EVERY snapshot in test/fixtures/photon/snapshots is
 * compared with the response.
 *
 * - Responses are compared as JSON text (same keys, same order, same values) wherever Photon's key
 *   order is ours; validity proofs structurally (Photon writes `value` before `context` there).
 * - `compressedProof` is not compared: the Groth16 prover is not wired into the API yet, so
 *   getValidityProof(V2) runs on a stub prover that reads every public input from the store
 *   (roots, rootIndices, leafIndices, leaves, merkleTrees / merkleContext) and returns a dummy proof.
 * - Slot fields (`context.slot`, `slotCreated`, signature `slot`/`blockTime`) are 0 in the snapshots
 *   because the harness indexes at slot 0; we index the same way, so they compare exactly.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SolanaRpc } from '../src/solana/rpcClient.ts';
import type { Store } from '../src/store/store.ts';
import { PHOTON_DIR, snapshot as readSnapshot, txDir } from './helpers/photon.ts';
import { fakeSolana, fixtureStore, lmdbServer, pageAll, rpcCall, rpcResult, stubProver } from './helpers/rpcLmdb.ts';

const E2E = 'e2e_mint_and_transfer_transactions';
const PEOPLE = { bob: 'EU57rQxcmFhJ24ApVdUy3y4MxFXcTUN3uiVeWvGgtWXu', charles: 'CHvwuTvTiwRSNBwAnrCG14V8YTJ6wwhHQrifxdFzHzsX' } as const;
const OWNERS = { payer: 'J6ULJViDpQTRntYTmfkpUZZ71KTVkZNJFSDcQhFCo5Ef', receiver: 'FLkMEA7eA82Cvp7MqamqFKsRN3E2Vfg3Xa8NRyVARq5n' } as const;
const MINT_TX = '64jFxW4xxife8UqpEQyYdA589rzFKWx8rT4vun6soCpWXmDermr588UKX2261YYZ8ZSzcu2NUJY2aCfee64FvTW4';
const TRANSFER_TX = '5UZuijpSnqBpgMpqnggxZ58bzZ8aJtqqVjtvzx2Pg2C58jXph1rdrXyHdTxJfsHawNJyr8syU4U1MEYccDUQeTSV';

/** Snapshot files read by this suite (checked against the directory at the end). */
const used = new Set<string>();
function snapshot(name: string, module = 'e2e_tests'): any {
  used.add(`integration_tests__${module}__${name}.snap`);
  return readSnapshot(name, module);
}

/** Text of `result` must equal the snapshot's JSON text (Photon's key order). */
async function expectSnapshotText(app: FastifyInstance, method: string, params: unknown, snap: unknown) {
  const r = await rpcCall(app, method, params);
  expect(r.status, r.text).toBe(200);
  expect(r.resultText).toBe(JSON.stringify(snap));
  return r.body.result;
}

/** A validity-proof result without `compressedProof`. */
function withoutProof(v: any) {
  const { compressedProof: _p, ...rest } = v.value;
  return { context: v.context, value: rest };
}

describe('e2e_mint_and_transfer_transactions on LMDB', () => {
  let store: Store;
  let app: FastifyInstance;
  let solana: Awaited<ReturnType<typeof fakeSolana>>;

  beforeAll(async () => {
    store = fixtureStore('e2e');
    solana = await fakeSolana([txDir(E2E)]);
    app = lmdbServer(store, { dataOptions: { solana: new SolanaRpc(solana.url) }, prover: stubProver }).app;
  });
  afterAll(async () => {
    await app.close();
    await solana.close();
    await store.close();
  });

  for (const [who, owner] of Object.entries(PEOPLE)) {
    it(`${who}: token accounts (V1, V2), proofs, token balances`, async () => {
      const accounts = await expectSnapshotText(app, 'getCompressedTokenAccountsByOwner', { owner }, snapshot(`${E2E}-${who}-accounts`));
      await expectSnapshotText(app, 'getCompressedTokenAccountsByOwnerV2', { owner }, snapshot(`${E2E}-${who}-accounts-v2`));
      const hashes = accounts.value.items.map((i: any) => i.account.hash);
      await expectSnapshotText(app, 'getMultipleCompressedAccountProofs', hashes, snapshot(`${E2E}-${who}-proofs`));
      await expectSnapshotText(app, 'getCompressedTokenBalancesByOwner', { owner }, snapshot(`${E2E}-${who}-token-balances`));
    });

    it(`${who}: validity proofs V1 and V2 (stub prover: everything but compressedProof)`, async () => {
      const hashes = (await rpcResult(app, 'getCompressedTokenAccountsByOwner', { owner })).value.items.map((i: any) => i.account.hash);
      const v1 = await rpcResult(app, 'getValidityProof', { hashes });
      expect(withoutProof(v1)).toEqual(withoutProof(snapshot(`${E2E}-${who}-validity-proof`)));
      const v2 = await rpcResult(app, 'getValidityProofV2', { hashes });
      expect(withoutProof(v2)).toEqual(withoutProof(snapshot(`${E2E}-${who}-validity-proof-v2`)));
    });

    it(`${who}: token-owner signatures paged with limit 1 equal the snapshot and the unpaged call`, async () => {
      const paged = await pageAll(app, 'getCompressionSignaturesForTokenOwner', { owner }, 1);
      expect(paged).toEqual(snapshot(`${E2E}-${who}-token-signatures`));
      expect((await rpcResult(app, 'getCompressionSignaturesForTokenOwner', { owner })).value.items).toEqual(paged);
    });
  }

  it('latest compression signatures: limit-1 paging = snapshot = unpaged = non-voting minus error', async () => {
    const paged = await pageAll(app, 'getLatestCompressionSignatures', {}, 1);
    expect(paged).toEqual(snapshot(`${E2E}-latest-signatures`));
    const all = await rpcResult(app, 'getLatestCompressionSignatures', {});
    expect(all.value).toEqual({ items: paged, cursor: null });
    const nonVoting = await rpcResult(app, 'getLatestNonVotingSignatures', {});
    expect(nonVoting.value.items.map(({ error: _e, ...s }: any) => s)).toEqual(paged);
    expect(nonVoting.value.items.every((s: any) => s.error === null)).toBe(true);
  });

  for (const [name, sig] of [['mint', MINT_TX], ['transfer', TRANSFER_TX]] as const) {
    it(`getTransactionWithCompressionInfo(V2) for the ${name}: snapshot, transaction = the fixture JSON exactly`, async () => {
      const fixtureText = readFileSync(join(txDir(E2E), sig), 'utf8').trim();
      for (const [method, suffix] of [['getTransactionWithCompressionInfo', ''], ['getTransactionWithCompressionInfoV2', '-v2']] as const) {
        const r = await rpcCall(app, method, { signature: sig });
        expect(r.status, r.text).toBe(200);
        const snap = snapshot(`${E2E}-${name}-transaction${suffix}`);
        expect(r.body.result).toEqual(snap);
        expect(r.body.result.transaction).toEqual(JSON.parse(fixtureText));
        // Byte for byte: Photon's key order, and the fixture text verbatim (e.g. `"uiAmount":10.0`).
        expect(r.resultText).toBe(`{"transaction":${fixtureText},"compressionInfo":${JSON.stringify(snap.compressionInfo)}}`);
      }
    });
  }

  it('token balances with a mint filter: that row only (none for another mint)', async () => {
    const rows = snapshot(`${E2E}-bob-token-balances`).value.token_balances;
    const one = await rpcResult(app, 'getCompressedTokenBalancesByOwnerV2', { owner: PEOPLE.bob, mint: rows[0].mint });
    expect(one.value).toEqual({ items: [rows[0]], cursor: null });
    const none = await rpcResult(app, 'getCompressedTokenBalancesByOwnerV2', { owner: PEOPLE.bob, mint: PEOPLE.charles });
    expect(none.value).toEqual({ items: [], cursor: null });
  });

  it('getCompressionSignaturesForAccount: the creating and the spending transaction, newest first, for every account of the fixture', async () => {
    const { decodeTransactionJson } = await import('../src/solana/decode.ts');
    const { parseTransaction } = await import('../src/light/parser.ts');
    const bs58 = (await import('bs58')).default;
    const touched = new Map<string, { signature: string; slot: number }[]>();
    for (const f of readdirSync(txDir(E2E))) {
      const d = decodeTransactionJson(JSON.parse(readFileSync(join(txDir(E2E), f), 'utf8')));
      const tx = parseTransaction(d.transaction, d.slot);
      for (const ev of tx.events) {
        if (ev.kind !== 'publicTransaction') continue;
        for (const h of [...ev.event.outputCompressedAccountHashes, ...ev.event.inputCompressedAccountHashes]) {
          const k = bs58.encode(h);
          touched.set(k, [...(touched.get(k) ?? []), { signature: tx.signature, slot: d.slot }]);
        }
      }
    }
    // (The fixture store indexes every transaction at the slot the test harness uses, so slots come from the store.)
    const slotOf = (signature: string) => store.read((r) => r.transaction(signature)!.slot);
    const sigOrder = (a: string, b: string) => Buffer.compare(Buffer.from(bs58.decode(b)), Buffer.from(bs58.decode(a)));
    let spent = 0;
    for (const [hash, sigs] of touched) {
      const want = sigs.map((x) => ({ signature: x.signature, slot: slotOf(x.signature) })).sort((a, b) => b.slot - a.slot || sigOrder(a.signature, b.signature));
      const got = (await rpcResult(app, 'getCompressionSignaturesForAccount', { hash })).value.items;
      expect(got.map((x: { signature: string; slot: number }) => ({ signature: x.signature, slot: x.slot })), hash).toEqual(want);
      if (sigs.length === 2) spent++;
    }
    expect(spent).toBeGreaterThan(0);
  });

  it('getTransactionWithCompressionInfo: unknown signature → Record Not Found', async () => {
    const r = await rpcCall(app, 'getTransactionWithCompressionInfo', { signature: '1'.repeat(64) });
    expect(r.body.error).toEqual({ code: -32000, message: 'Record Not Found: Transaction not found' });
  });

  it('other account methods agree with the token-account snapshots', async () => {
    const bob = snapshot(`${E2E}-bob-accounts`).value.items;
    const charles = snapshot(`${E2E}-charles-accounts`).value.items;
    const all = [...bob, ...charles];
    for (const item of all) {
      const hash = item.account.hash;
      expect((await rpcResult(app, 'getCompressedAccount', { hash })).value).toEqual(item.account);
      expect((await rpcResult(app, 'getCompressedBalance', { hash })).value).toBe(item.account.lamports);
      expect((await rpcResult(app, 'getCompressedTokenAccountBalance', { hash })).value).toEqual({ amount: item.tokenData.amount });
      const sigs = (await rpcResult(app, 'getCompressionSignaturesForAccount', { hash })).value.items;
      expect(sigs.length).toBeGreaterThanOrEqual(1);
      expect(sigs.length).toBeLessThanOrEqual(2);
    }
    const multi = await rpcResult(app, 'getMultipleCompressedAccounts', { hashes: [...all.map((i: any) => i.account.hash), '11111111111111111111111111111111'] });
    expect(multi.value.items).toEqual([...all.map((i: any) => i.account), null]);
    // Spent: the mint output 38eTBd… was spent by the first transfer.
    expect((await rpcResult(app, 'getCompressedAccount', { hash: '38eTBdRT4kdFELvNfbJbFZNvGWUvXbn3DdJn3PzMtsqJ' })).value).toBeNull();
    // getCompressedAccountProof has no spent check in Photon, but a spent V1 leaf is still a leaf only until nullified.
    const mint = bob[0].tokenData.mint;
    const holders = (await rpcResult(app, 'getCompressedMintTokenHolders', { mint })).value;
    const balances = Object.entries(PEOPLE).map(([who, owner]) => ({ owner, balance: snapshot(`${E2E}-${who}-token-balances`).value.token_balances[0].balance }));
    expect(holders).toEqual({ items: balances.sort((a, b) => b.balance - a.balance || (a.owner < b.owner ? -1 : 1)), cursor: null });
  });
});

describe('getTransactionWithCompressionInfo before the inputs are indexed', () => {
  it('a transfer whose input is unknown → Record Not Found: Account not found; a mint still works', async () => {
    const store = fixtureStore('empty');
    const solana = await fakeSolana([txDir(E2E)]);
    const { app } = lmdbServer(store, { dataOptions: { solana: new SolanaRpc(solana.url) } });
    const r = await rpcCall(app, 'getTransactionWithCompressionInfo', { signature: TRANSFER_TX });
    expect(r.body.error).toEqual({ code: -32000, message: 'Record Not Found: Account not found' });
    const mint = await rpcResult(app, 'getTransactionWithCompressionInfo', { signature: MINT_TX });
    expect(mint.compressionInfo.openedAccounts).toHaveLength(1);
    const noSolana = lmdbServer(store).app;
    expect((await rpcCall(noSolana, 'getTransactionWithCompressionInfo', { signature: MINT_TX })).status).toBe(503);
    await Promise.all([app.close(), noSolana.close(), solana.close()]);
    await store.close();
  });
});

describe('lamport_transfers on LMDB', () => {
  let store: Store;
  let app: FastifyInstance;
  beforeAll(() => {
    store = fixtureStore('lamports');
    app = lmdbServer(store, { prover: stubProver }).app;
  });
  afterAll(async () => {
    await app.close();
    await store.close();
  });

  for (const [who, owner] of Object.entries(OWNERS)) {
    it(`${who}: accounts, proofs, validity proof`, async () => {
      const accounts = await expectSnapshotText(app, 'getCompressedAccountsByOwner', { owner }, snapshot(`lamport_transfers-${who}-accounts`));
      const hashes = accounts.value.items.map((a: any) => a.hash);
      await expectSnapshotText(app, 'getMultipleCompressedAccountProofs', hashes, snapshot(`lamport_transfers-${who}-proofs`));
      const vp = await rpcResult(app, 'getValidityProof', { hashes });
      expect(withoutProof(vp)).toEqual(withoutProof(snapshot(`lamport_transfers-${who}-validity-proof`)));
      for (const h of hashes) {
        const single = await rpcResult(app, 'getCompressedAccountProof', { hash: h });
        expect(single.value).toEqual(snapshot(`lamport_transfers-${who}-proofs`).value.find((p: any) => p.hash === h));
      }
    });

    it(`${who}: owner signatures = snapshot = limit-1 paging; balance = sum of lamports`, async () => {
      const snap = snapshot(`${who}-lamport_transfers-signatures`);
      await expectSnapshotText(app, 'getCompressionSignaturesForOwner', { owner }, snap);
      expect(await pageAll(app, 'getCompressionSignaturesForOwner', { owner }, 1)).toEqual(snap.value.items);
      const sum = snapshot(`lamport_transfers-${who}-accounts`).value.items.reduce((s: number, a: any) => s + a.lamports, 0);
      expect((await rpcResult(app, 'getCompressedBalanceByOwner', { owner })).value).toBe(sum);
    });
  }
});

describe('get_lanon_voting_signatures block on LMDB', () => {
  it('getLatestNonVotingSignatures {} equals the snapshot (46 items)', async () => {
    const store = fixtureStore('block');
    const { app } = lmdbServer(store);
    const result = await expectSnapshotText(app, 'getLatestNonVotingSignatures', {}, snapshot('get_lanon_voting_signatures-non-voting-transactions'));
    expect(result.value.items).toHaveLength(46);
    await app.close();
    await store.close();
  });
});

describe('new-address proofs on an empty amt1 tree (LMDB)', () => {
  it('getMultipleNewAddressProofs and V2 equal mock_tests__get_multiple_new_address_proofs', async () => {
    const store = fixtureStore('empty');
    const { app } = lmdbServer(store);
    const snap = snapshot('get_multiple_new_address_proofs', 'mock_tests');
    const addresses = ['Fi6AXBGuGs7DRXP428hwhJJfTpJ4BVZD8DiUcX1cj35W', 'sH8ux4csv8wxiRejuHjpTCkrfGgeNtg6Y55AJJ9GJSd'];
    await expectSnapshotText(app, 'getMultipleNewAddressProofs', addresses, snap);
    await expectSnapshotText(app, 'getMultipleNewAddressProofsV2', addresses.map((address) => ({ address, tree: 'amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2' })), snap);
    await app.close();
    await store.close();
  });
});

describe('coverage', () => {
  it('every snapshot in test/fixtures/photon/snapshots was compared', () => {
    expect([...used].sort()).toEqual(readdirSync(join(PHOTON_DIR, 'snapshots')).filter((f) => f.endsWith('.snap')).sort());
  });
});
