/**
 * A daemon's state as its JSON-RPC API shows it, for comparing two stores byte for byte: every
 * compression signature and its transaction info, and for every owner met there its accounts
 * (V2), balance, token balances and signatures, and the Merkle proofs (with roots and root seqs)
 * of every unspent account. Answers are kept as the raw JSON text the daemon sent, in a fixed order;
 * the transaction infos (8 a batch) and the owners' one-page answers and new-address proofs (100 a
 * batch) are asked in JSON-RPC batches (one digest entry per batch: the whole response text), the rest
 * one request each.
 */

import { createHash } from 'node:crypto';
import bs58 from 'bs58';

/** POSTs one JSON-RPC request (or a batch: an array of them) to `http://127.0.0.1:<port>/`: the HTTP status and the raw body text. */
async function rawCall(port: number, method: string | object[], params?: unknown): Promise<{ status: number; text: string }> {
  const body = typeof method === 'string' ? { jsonrpc: '2.0', id: 1, method, params } : method;
  const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

/** Calls per JSON-RPC batch of the digest (the daemon takes up to 1000). */
const BATCH = 100;

/** `items` in consecutive groups of at most `n`. */
function chunks<T>(items: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += n) out.push(items.slice(i, i + n));
  return out;
}

/** Every value of `key` (strings) found anywhere in `v`. */
function collect(v: unknown, key: string, out: Set<string>): Set<string> {
  if (Array.isArray(v)) for (const x of v) collect(x, key, out);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === key && typeof x === 'string') out.add(x);
      else collect(x, key, out);
    }
  }
  return out;
}

/** The digest: method-and-params → raw answer, and what it was built from. */
export interface ApiDigest {
  answers: Map<string, string>;
  signatures: string[];
  owners: string[];
  unspent: string[];
  /** Addresses met in the transaction infos (only with `DigestExtras.addressTrees`). */
  addresses: string[];
}

/** More of the API in the digest (all opt-in). */
export interface DigestExtras {
  /** Every page of getCompressedTokenAccountsByOwnerV2 of every owner, and every page of the owner's accounts and token balances. */
  tokenAccounts?: boolean;
  /** Also getMultipleCompressedAccountProofs (the V1 method) for the unspent accounts of these (V1) state trees. */
  v1StateTrees?: readonly string[];
  /**
   * New-address proofs (getMultipleNewAddressProofsV2) in each of these address trees: for every
   * address met in the transaction infos (one call each, in batches: those already there answer an
   * error, kept in the digest) and for `freshAddresses` derived addresses (one call per 50).
   */
  addressTrees?: readonly string[];
  freshAddresses?: number;
  /**
   * At most this many transaction infos (getTransactionWithCompressionInfoV2): every k-th signature
   * of the full list (which is compared whole), so that the digest of a long chain stays minutes
   * on a loaded machine; owners and addresses are then those met in the sampled ones. Default: all.
   */
  maxTransactions?: number;
}

/** Runs `f` over `items` with at most `n` calls in flight (each daemon answers many requests at once). */
async function eachLimited<T>(items: readonly T[], n: number, f: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) await f(items[next++]!);
  }));
}

/** `n` deterministic 32-byte addresses below the BN254 field (first byte 0), base58. */
function freshAddresses(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const b = createHash('sha256').update(`refract-digest-address-${i}`).digest();
    b[0] = 0;
    out.push(bs58.encode(b));
  }
  return out;
}

/**
 * Reads the digest of the daemon at `port` (see the module comment). `only` limits the owners (the
 * same list must be used for both daemons to compare; default: every owner met).
 */
export async function apiDigest(port: number, only?: readonly string[], extras: DigestExtras = {}): Promise<ApiDigest> {
  const answers = new Map<string, string>();
  // Error answers are part of the digest too (status and body); only the listing calls must succeed.
  const ask = async (method: string, params: unknown) => {
    const { status, text } = await rawCall(port, method, params);
    answers.set(`${method} ${JSON.stringify(params)}`, `${status} ${text}`);
    return JSON.parse(text);
  };
  /**
   * One JSON-RPC batch (the daemon answers each call as it would alone, in order): the whole raw
   * response is one digest entry, so the two daemons' answers are still compared byte for byte.
   */
  const askBatch = async (calls: [string, unknown][]) => {
    const { status, text } = await rawCall(port, calls.map(([method, params], id) => ({ jsonrpc: '2.0', id, method, params })));
    answers.set(`batch ${JSON.stringify(calls)}`, `${status} ${text}`);
    const r = JSON.parse(text);
    if (!Array.isArray(r) || r.length !== calls.length) throw new Error(`batch of ${calls.length} answered ${status} ${text.slice(0, 300)}`);
    return r as { result?: any }[];
  };
  await ask('getIndexerSlot', []);
  const signatures: string[] = [];
  let cursor: string | null = null;
  for (;;) {
    const r = await ask('getLatestCompressionSignatures', { limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const item of r.result.value.items) signatures.push(item.signature);
    cursor = r.result.value.cursor;
    if (!cursor || r.result.value.items.length === 0) break;
  }
  const owners = new Set<string>();
  const addresses = new Set<string>();
  const step = extras.maxTransactions ? Math.max(1, Math.ceil(signatures.length / extras.maxTransactions)) : 1;
  const sampled = signatures.filter((_, i) => i % step === 0);
  // A transaction info is read from the node (getTransaction): 8 calls a batch, one batch at a time,
  // so that the daemon asks the node at most 8 at once, as eight single requests in flight did.
  for (const sigs of chunks(sampled, 8)) {
    for (const r of await askBatch(sigs.map((signature) => ['getTransactionWithCompressionInfoV2', { signature }]))) {
      collect(r.result, 'owner', owners);
      if (extras.addressTrees) collect(r.result, 'address', addresses);
    }
  }
  const ownerList = only ? [...only] : [...owners].sort();
  const unspent = new Set<string>();
  const v1Trees = new Set(extras.v1StateTrees ?? []);
  const v1Unspent = new Set<string>();
  /** Every page of a paginated method (cursor in `value.cursor`); each page is in the digest. */
  const pages = async (method: string, params: Record<string, unknown>, each: (item: any) => void = () => {}) => {
    let c: string | null = null;
    for (;;) {
      const r = await ask(method, { ...params, limit: 1000, ...(c ? { cursor: c } : {}) });
      if (!r.result) break; // an error answer (kept in the digest)
      for (const it of r.result.value.items) each(it);
      c = r.result.value.cursor;
      if (!c || r.result.value.items.length === 0) break;
    }
  };
  for (const owner of ownerList) {
    await pages('getCompressedAccountsByOwnerV2', { owner }, (it) => {
      unspent.add(it.hash);
      if (v1Trees.has(it.merkleContext?.tree)) v1Unspent.add(it.hash);
    });
    if (extras.tokenAccounts) {
      await pages('getCompressedTokenBalancesByOwnerV2', { owner });
      await pages('getCompressedTokenAccountsByOwnerV2', { owner });
    }
  }
  // The owners' one-page answers, 25 owners a batch.
  for (const group of chunks(ownerList, BATCH / 4)) {
    await askBatch(group.flatMap((owner): [string, unknown][] => [
      ['getCompressedBalanceByOwner', { owner }],
      ...(extras.tokenAccounts ? [] : [['getCompressedTokenBalancesByOwnerV2', { owner, limit: 1000 }] as [string, unknown]]),
      ['getCompressionSignaturesForOwner', { owner, limit: 1000 }],
      ['getCompressionSignaturesForTokenOwner', { owner, limit: 1000 }],
    ]));
  }
  const hashes = [...unspent].sort();
  for (let i = 0; i < hashes.length; i += 100) await ask('getMultipleCompressedAccountProofsV2', hashes.slice(i, i + 100));
  const v1Hashes = [...v1Unspent].sort();
  for (let i = 0; i < v1Hashes.length; i += 100) await ask('getMultipleCompressedAccountProofs', v1Hashes.slice(i, i + 100));
  const addressList = [...addresses].sort();
  for (const tree of extras.addressTrees ?? []) {
    // one call per address (those already in the tree answer an error), 100 calls a batch
    await eachLimited(chunks(addressList, BATCH), 4, (group) => askBatch(group.map((address) => ['getMultipleNewAddressProofsV2', [{ address, tree }]])).then(() => {}));
    const fresh = freshAddresses(extras.freshAddresses ?? 0);
    for (let i = 0; i < fresh.length; i += 50) await ask('getMultipleNewAddressProofsV2', fresh.slice(i, i + 50).map((address) => ({ address, tree })));
  }
  return { answers, signatures, owners: ownerList, unspent: hashes, addresses: addressList };
}

/** The keys whose answers differ between two digests (both directions), at most `max`. */
export function digestDifferences(a: ApiDigest, b: ApiDigest, max = 10): string[] {
  const out: string[] = [];
  for (const k of new Set([...a.answers.keys(), ...b.answers.keys()])) {
    if (a.answers.get(k) !== b.answers.get(k)) out.push(`${k.slice(0, 160)}\n  A: ${(a.answers.get(k) ?? '(missing)').slice(0, 400)}\n  B: ${(b.answers.get(k) ?? '(missing)').slice(0, 400)}`);
    if (out.length >= max) break;
  }
  return out;
}
