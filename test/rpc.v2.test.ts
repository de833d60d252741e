/**
 * The JSON-RPC API over batched (v2) state indexed from the reference's batched_tree_transactions
 * (test/fixtures/photon): queued accounts are proved by index (getValidityProofV2 answers
 * without a prover, compressedProof null), appended ones carry their leaf's proof, and a count no v2
 * circuit serves gets a specific error (proofs themselves: test/validityProof.v2.test.ts).
 */
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { Indexer } from '../src/ingest/indexer.ts';
import { loadTransactionFiles } from '../src/ingest/sources/files.ts';
import { parseTransaction } from '../src/light/parser.ts';
import type { ProofService } from '../src/prover/run/proofService.ts';
import { RefractValidityProver } from '../src/rpc/validityProver.ts';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { getValidityProofPaths } from '../src/query/validityProofPaths.ts';
import { Store } from '../src/store/store.ts';
import type { BlockInfo } from '../src/types.ts';
import { tempDir, txDir } from './helpers/photon.ts';
import { lmdbServer, registry, rpcCall, rpcResult } from './helpers/rpcLmdb.ts';

const HLKS5 = 'HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu';
const files = loadTransactionFiles([txDir('batched_tree_transactions')]);
const isBatch = (f: (typeof files)[number]) => parseTransaction(f.transaction, f.slot).events.some((e) => e.kind === 'batch');
const userFiles = files.filter((f) => !isBatch(f));
const block = (f: (typeof files)[number]): BlockInfo => ({ slot: f.slot, parentSlot: 0, blockTime: 0, blockHeight: 0, blockhash: '', previousBlockhash: '', transactions: [f.transaction] });
/** Live outputs (never spent): hash and owner, from the decoded events. */
const live = (() => {
  const evs = userFiles.flatMap((f) => parseTransaction(f.transaction, f.slot).events.flatMap((e) => (e.kind === 'batchPublicTransaction' ? [e.event] : [])));
  const spent = new Set(evs.flatMap((e) => e.batchInputAccounts.map((b) => bs58.encode(b.accountHash))));
  return evs.flatMap((e) => e.event.outputCompressedAccountHashes.map((h, i) => ({ hash: bs58.encode(h), owner: bs58.encode(e.event.outputCompressedAccounts[i]!.compressedAccount.owner) }))).filter((o) => !spent.has(o.hash));
})();

function server(store: Store) {
  // The proof service is never reached here: queued accounts need no proof, unserved counts are refused first.
  return lmdbServer(store, { prover: (data) => new RefractValidityProver({ data, service: {} as ProofService }) });
}

function indexed(which: typeof files): Store {
  const store = new Store({ path: tempDir('refract-rpc-v2-') });
  const indexer = new Indexer(store, registry);
  for (const f of which) expect(indexer.indexBlocks([block(f)]).rejected).toEqual([]);
  return store;
}

describe('v2 accounts through the API', () => {
  it('before any batch event: every live account is proved by index, in chunks of 4, without a prover', async () => {
    const { app } = server(indexed(userFiles));
    expect(live).toHaveLength(50);
    for (let i = 0; i < live.length; i += 4) {
      const hashes = live.slice(i, i + 4).map((o) => o.hash);
      const v = await rpcResult(app, 'getValidityProofV2', { hashes });
      expect(v.value.compressedProof).toBeNull();
      expect(v.value.accounts.map((a: any) => [a.hash, a.root, a.rootIndex, a.merkleContext.tree])).toEqual(
        hashes.map((h) => [h, '11111111111111111111111111111111', { rootIndex: 0, proveByIndex: true }, HLKS5]),
      );
    }
    const acc = await rpcResult(app, 'getCompressedAccountV2', { hash: live[0]!.hash });
    expect(acc.value).toMatchObject({ hash: live[0]!.hash, seq: null, lamports: 1000000, proveByIndex: true });
    await app.close();
  });

  it('after the batch events: accounts are appended (proveByIndex false, root = the chain root); an unserved v2 count is refused with the served counts', async () => {
    const store = indexed(files);
    const { app } = server(store);
    const root = store.read((r) => r.batchTree(bs58.decode(HLKS5)))!;
    const byOwner = await rpcResult(app, 'getCompressedAccountsByOwnerV2', { owner: live[0]!.owner });
    expect(byOwner.value.items.map((a: any) => [a.hash, a.lamports, a.proveByIndex])).toEqual([[live[0]!.hash, 1000000, false]]);
    const proofs = await rpcResult(app, 'getMultipleCompressedAccountProofsV2', [live[0]!.hash]);
    expect(proofs.value[0]).toMatchObject({ hash: live[0]!.hash, root: bs58.encode(root.root), proveByIndex: false });
    expect(proofs.value[0].proof).toHaveLength(32);
    // Proofs over appended accounts: test/validityProof.v2.test.ts (real prover). Here: a count no
    // v2 circuit serves is refused before the prover, naming the served v2 counts.
    const r = await rpcCall(app, 'getValidityProofV2', { hashes: live.slice(0, 5).map((o) => o.hash) });
    expect(r.body.error.message).toMatch(/^Validation Error: no v2 validity-proof circuit for 5 account\(s\) and 0 address\(es\); supported v2 shapes: accounts only: 1, 2, 3, 4 or 8;/);
    await app.close();
  });
});

describe('root index of a batched tree', () => {
  it("is the last batch event's root_index (the chain's slot), not rootSeq % a configured capacity", () => {
    const store = indexed(files);
    const last = files.filter(isBatch).map((f) => parseTransaction(f.transaction, f.slot).events.find((e) => e.kind === 'batch')!).pop()!;
    const rootIndex = (last as { event: { rootIndex: number } }).event.rootIndex;
    const skewed = loadTreeRegistry([{ tree: HLKS5, queue: '6L7SzhYB3anwEQ9cphpJ1U7Scwj57bx2xueReg7R9cKU', type: 'StateV2', height: 32, rootHistoryCapacity: 7 }]);
    const inputs = store.read((r) => getValidityProofPaths(r, skewed, { hashes: [bs58.decode(live[0]!.hash)], newAddresses: [] }, 'v2'));
    expect(inputs.accounts[0]!.proveByIndex).toBe(false);
    expect(inputs.accounts[0]!.proof!.rootSeq).toBe(15n);
    expect(inputs.accounts[0]!.rootIndex).toBe(rootIndex);
    expect(rootIndex).not.toBe(15 % 7);
  });
});
