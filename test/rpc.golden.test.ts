/**
 * Golden checks of the response encoding against Photon's own snapshots (test/fixtures/photon):
 * records are rebuilt from a snapshot, served through the real method handlers and HTTP server,
 * and the JSON text must equal the snapshot's (same keys, same order, same values).
 */
import bs58 from 'bs58';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { AccountView, RpcContext, TokenDataRecord, TreeInfoRecord, ValidityProofRecord } from '../src/rpc/context.ts';
import { DEFAULT_METHOD_CONFIG } from '../src/rpc/context.ts';
import { MemoryDataSource } from './helpers/memoryDataSource.ts';
import { buildServer } from '../src/rpc/http/server.ts';

const SNAPSHOTS = fileURLToPath(new URL('./fixtures/photon/snapshots/', import.meta.url));
const haveSnapshots = existsSync(SNAPSHOTS);
const E2E = 'integration_tests__e2e_tests__e2e_mint_and_transfer_transactions';

/** The JSON body of an insta snapshot (after the second `---`). */
function snapshot(name: string): any {
  const text = readFileSync(`${SNAPSHOTS}${name}.snap`, 'utf8');
  return JSON.parse(text.split('---').slice(2).join('---'));
}

const d58 = (s: string) => bs58.decode(s);
const TREES: TreeInfoRecord[] = [
  { tree: d58('smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT'), queue: d58('nfq1NvQDJ2GEgnS8zt9prAe8rjjpAW1zFkrvZoBR148'), treeType: 1, height: 26, rootHistoryCapacity: 2400 },
  { tree: d58('amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2'), queue: d58('aq1S9z4reTSQAdgWHGD2zDaS39sjGrAxbR31vxJ2F4F'), treeType: 2, height: 26, rootHistoryCapacity: 2400 },
];
function treeRef(tree: string) {
  const t = TREES.find((x) => bs58.encode(x.tree) === tree);
  if (!t) throw new Error(`unknown tree ${tree}`);
  return { tree: t.tree, queue: t.queue, treeType: t.treeType };
}

/** An AccountView from a V1 `Account` or V2 `AccountV2` JSON object. */
function accountFromJson(a: any): AccountView {
  return {
    hash: d58(a.hash),
    address: a.address === null ? null : d58(a.address),
    data: a.data === null ? null : { discriminator: BigInt(a.data.discriminator), data: Buffer.from(a.data.data, 'base64'), dataHash: d58(a.data.dataHash) },
    owner: d58(a.owner),
    lamports: BigInt(a.lamports),
    leafIndex: a.leafIndex,
    seq: a.seq === null ? null : BigInt(a.seq),
    slotCreated: BigInt(a.slotCreated),
    treeInfo: treeRef(a.tree ?? a.merkleContext.tree),
    inOutputQueue: a.proveByIndex ?? false,
  };
}

function tokenFromJson(t: any): TokenDataRecord {
  return {
    mint: d58(t.mint),
    owner: d58(t.owner),
    amount: BigInt(t.amount),
    delegate: t.delegate === null ? null : d58(t.delegate),
    state: t.state,
    tlv: t.tlv === null ? null : Buffer.from(t.tlv, 'base64'),
  };
}

async function call(app: FastifyInstance, method: string, params: unknown): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 'test-account', method, params }),
  });
  expect(res.statusCode, res.body).toBe(200);
  const body = JSON.parse(res.body);
  // Re-serialise only the envelope; `result` text is compared as produced.
  const start = res.body.indexOf('"result":') + '"result":'.length;
  expect(body.id).toBe('test-account');
  return res.body.slice(start, -1);
}

function server(data: MemoryDataSource, over: Partial<RpcContext> = {}): FastifyInstance {
  return buildServer({ data, getSolanaSlot: async () => 0, config: { ...DEFAULT_METHOD_CONFIG }, ...over }, { logLevel: 'silent', rateLimit: false, env: {} });
}

// the snapshots are part of the repository (test/fixtures/photon): never skipped
describe('responses equal Photon snapshots', () => {
  it('the snapshots are there', () => expect(haveSnapshots, SNAPSHOTS).toBe(true));
  for (const who of ['bob', 'charles'] as const) {
    it(`${who}: token accounts V1/V2, balances, proofs, validity proofs`, async () => {
      const v1 = snapshot(`${E2E}-${who}-accounts`);
      const v2 = snapshot(`${E2E}-${who}-accounts-v2`);
      const data = new MemoryDataSource();
      data.slot = 0n;
      data.trees = TREES;
      for (const item of v2.value.items) data.putAccount(accountFromJson(item.account), { tokenData: tokenFromJson(item.tokenData) });
      const owner = v2.value.items[0].tokenData.owner;
      const proofs = snapshot(`${E2E}-${who}-proofs`);
      for (const p of proofs.value) {
        data.proofs.set(Buffer.from(d58(p.hash)).toString('hex'), {
          hash: d58(p.hash),
          leafIndex: p.leafIndex,
          treeInfo: treeRef(p.merkleTree),
          proof: p.proof.map(d58),
          root: d58(p.root),
          rootSeq: BigInt(p.rootSeq),
          proveByIndex: false,
        });
      }
      const vp2 = snapshot(`${E2E}-${who}-validity-proof-v2`);
      const prover = {
        async getValidityProof(): Promise<ValidityProofRecord> {
          return {
            compressedProof: { a: new Uint8Array(0), b: new Uint8Array(0), c: new Uint8Array(0) },
            accounts: vp2.value.accounts.map((a: any) => ({
              hash: d58(a.hash),
              root: d58(a.root),
              rootIndex: a.rootIndex.rootIndex,
              proveByIndex: a.rootIndex.proveByIndex,
              leafIndex: a.leafIndex,
              treeInfo: treeRef(a.merkleContext.tree),
            })),
            addresses: [],
          };
        },
      };
      const app = server(data, { prover });
      expect(await call(app, 'getCompressedTokenAccountsByOwner', { owner })).toBe(JSON.stringify(v1));
      expect(await call(app, 'getCompressedTokenAccountsByOwnerV2', { owner })).toBe(JSON.stringify(v2));
      expect(await call(app, 'getCompressedTokenBalancesByOwner', { owner })).toBe(JSON.stringify(snapshot(`${E2E}-${who}-token-balances`)));
      const hashes = proofs.value.map((p: any) => p.hash);
      expect(await call(app, 'getMultipleCompressedAccountProofs', hashes)).toBe(JSON.stringify(proofs));
      const vp1 = snapshot(`${E2E}-${who}-validity-proof`);
      const sortKeys = (j: any) => ({ context: j.context, value: j.value }); // Photon writes value first here
      expect(await call(app, 'getValidityProof', { hashes })).toBe(JSON.stringify(sortKeys(vp1)));
      expect(await call(app, 'getValidityProofV2', { hashes })).toBe(JSON.stringify(sortKeys(vp2)));
      await app.close();
    });
  }

  it('getMultipleNewAddressProofs on the empty amt1 tree', async () => {
    const snap = snapshot('integration_tests__mock_tests__get_multiple_new_address_proofs');
    const data = new MemoryDataSource();
    data.slot = 0n;
    data.trees = TREES;
    data.newAddressProofs = (items) =>
      items.map((it, i) => {
        const p = snap.value[i];
        expect(bs58.encode(it.address)).toBe(p.address);
        return {
          address: it.address,
          tree: it.tree,
          root: d58(p.root),
          rootSeq: BigInt(p.rootSeq),
          proof: p.proof.map(d58),
          lowElementLeafIndex: p.lowElementLeafIndex,
          lowerRangeAddress: d58(p.lowerRangeAddress),
          higherRangeAddress: d58(p.higherRangeAddress),
          nextIndex: p.nextIndex,
        };
      });
    const app = server(data);
    const addresses = snap.value.map((p: any) => p.address);
    expect(await call(app, 'getMultipleNewAddressProofs', addresses)).toBe(JSON.stringify(snap));
    const withTrees = addresses.map((address: string) => ({ address, tree: 'amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2' }));
    expect(await call(app, 'getMultipleNewAddressProofsV2', withTrees)).toBe(JSON.stringify(snap));
    await app.close();
  });

  it('getTransactionWithCompressionInfo (V1 and V2), transaction passed through verbatim', async () => {
    for (const [suffix, method] of [['transfer-transaction', 'getTransactionWithCompressionInfo'], ['transfer-transaction-v2', 'getTransactionWithCompressionInfoV2']] as const) {
      const snap = snapshot(`${E2E}-${suffix}`);
      const ci = snap.compressionInfo;
      const data = new MemoryDataSource();
      data.slot = 0n;
      data.trees = TREES;
      const sig = bs58.encode(new Uint8Array(64).fill(5));
      data.compressionInfo.set(sig, {
        transaction: snap.transaction,
        closedAccounts: ci.closedAccounts.map((c: any) => ({
          account: accountFromJson(c.account.account ?? c.account),
          tokenData: c.optionalTokenData ? tokenFromJson(c.optionalTokenData) : null,
          nullifier: null,
          txHash: null,
        })),
        openedAccounts: ci.openedAccounts.map((o: any) => ({
          account: accountFromJson(o.account),
          tokenData: o.optionalTokenData ? tokenFromJson(o.optionalTokenData) : null,
        })),
      });
      const app = server(data);
      const text = await call(app, method, { signature: sig });
      expect(JSON.parse(text)).toEqual(snap);
      expect(JSON.stringify(JSON.parse(text).compressionInfo)).toBe(JSON.stringify(ci));
      await app.close();
    }
  });
});
