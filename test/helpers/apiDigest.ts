/**
 * A daemon's state as its JSON-RPC API shows it, for comparing two stores byte for byte: every
 * compression signature and its transaction info, and for every owner met there its accounts
 * (V2), balance, token balances and signatures, and the Merkle proofs (with roots and root seqs)
 * of every unspent account. Answers are kept as the raw JSON text the daemon sent, in a fixed order.
 */

/** POSTs one JSON-RPC request to `http://127.0.0.1:<port>/`: the HTTP status and the raw body text. */
async function rawCall(port: number, method: string, params: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return { status: res.status, text: await res.text() };
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
}

/**
 * Reads the digest of the daemon at `port` (see the module comment). `only` limits the owners (the
 * same list must be used for both daemons to compare; default: every owner met).
 */
export async function apiDigest(port: number, only?: readonly string[]): Promise<ApiDigest> {
  const answers = new Map<string, string>();
  // Error answers are part of the digest too (status and body); only the listing calls must succeed.
  const ask = async (method: string, params: unknown) => {
    const { status, text } = await rawCall(port, method, params);
    answers.set(`${method} ${JSON.stringify(params)}`, `${status} ${text}`);
    return JSON.parse(text);
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
  for (const sig of signatures) {
    const r = await ask('getTransactionWithCompressionInfoV2', { signature: sig });
    collect(r.result, 'owner', owners);
  }
  const ownerList = only ? [...only] : [...owners].sort();
  const unspent = new Set<string>();
  for (const owner of ownerList) {
    let c: string | null = null;
    for (;;) {
      const r = await ask('getCompressedAccountsByOwnerV2', { owner, limit: 1000, ...(c ? { cursor: c } : {}) });
      for (const it of r.result.value.items) unspent.add(it.hash);
      c = r.result.value.cursor;
      if (!c || r.result.value.items.length === 0) break;
    }
    await ask('getCompressedBalanceByOwner', { owner });
    await ask('getCompressedTokenBalancesByOwnerV2', { owner, limit: 1000 });
    await ask('getCompressionSignaturesForOwner', { owner, limit: 1000 });
    await ask('getCompressionSignaturesForTokenOwner', { owner, limit: 1000 });
  }
  const hashes = [...unspent].sort();
  for (let i = 0; i < hashes.length; i += 100) await ask('getMultipleCompressedAccountProofsV2', hashes.slice(i, i + 100));
  return { answers, signatures, owners: ownerList, unspent: hashes };
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
