/**
 * Recomputes the `hash` of every compressed account in Photon's snapshot files
 * (test/fixtures/photon/snapshots/*accounts*.snap and *-transaction*.snap) with compressedAccountHash
 * and checks hashToField / the LE-vs-BE byte placement (spec photon.md §2.2).
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import bs58 from 'bs58';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { describe, expect, it } from 'vitest';

import { compressedAccountHash, hashToField, type HashableCompressedAccount } from '../src/light/hashing.ts';
import { poseidon } from '../src/merkle/poseidon.ts';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SNAP_DIR = path.join(path.resolve(REPO_ROOT, 'test/fixtures/photon'), 'snapshots');

interface SnapAccount {
  hash: string;
  owner: string;
  lamports: string;
  address: string | null;
  data: { discriminator: string; data: string; dataHash: string } | null;
  tree?: string;
  merkleContext?: { tree: string; treeType: number };
  leafIndex: number;
}

/** Parses a .snap file: YAML-ish header between `---` lines, then pretty JSON. */
function readSnap(file: string): unknown {
  const raw = readFileSync(path.join(SNAP_DIR, file), 'utf8');
  const m = /^---\n[\s\S]*?\n---\n/.exec(raw);
  if (!m) throw new Error(`${file}: no --- header`);
  // u64 fields may exceed 2^53: quote them before JSON.parse so no precision is lost.
  const json = raw.slice(m[0].length).replace(/"(discriminator|lamports)": (\d+)/g, '"$1": "$2"');
  return JSON.parse(json);
}

/** Every object that looks like a compressed account (hash, owner, lamports, leafIndex, tree). */
function collectAccounts(node: unknown, out: SnapAccount[]): SnapAccount[] {
  if (Array.isArray(node)) {
    for (const x of node) collectAccounts(x, out);
  } else if (node && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    if (typeof o.hash === 'string' && typeof o.owner === 'string' && 'lamports' in o && typeof o.leafIndex === 'number' && (o.tree || o.merkleContext)) {
      out.push(o as unknown as SnapAccount);
    }
    for (const v of Object.values(o)) collectAccounts(v, out);
  }
  return out;
}

function u64le(v: string): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(v), true);
  return b;
}

function toHashable(a: SnapAccount): HashableCompressedAccount {
  return {
    owner: bs58.decode(a.owner),
    lamports: BigInt(a.lamports),
    address: a.address ? bs58.decode(a.address) : null,
    data: a.data ? { discriminator: u64le(a.data.discriminator), dataHash: bs58.decode(a.data.dataHash) } : null,
  };
}

const files = readdirSync(SNAP_DIR)
  .filter((f) => f.endsWith('.snap') && (f.includes('accounts') || f.includes('-transaction')))
  .sort();

describe('compressedAccountHash against Photon snapshots', () => {
  it('finds the snapshot files', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
  });

  let total = 0;
  for (const file of files) {
    it(file.replace(/^integration_tests__e2e_tests__/, ''), () => {
      const accounts = collectAccounts(readSnap(file), []);
      for (const a of accounts) {
        const tree = bs58.decode(a.tree ?? a.merkleContext!.tree);
        const kind = a.merkleContext?.treeType === 3 ? 'v2' : 'v1';
        expect(kind).toBe('v1');
        const got = compressedAccountHash(toHashable(a), tree, a.leafIndex, kind);
        expect(bs58.encode(got), `${file} leaf ${a.leafIndex}`).toBe(a.hash);
      }
      total += accounts.length;
    });
  }

  it('hashed a meaningful number of accounts, including lamports-only and token accounts', () => {
    const all = files.flatMap((f) => collectAccounts(readSnap(f), []));
    expect(total).toBe(all.length);
    expect(all.length).toBeGreaterThanOrEqual(19); // 19 in the fixture set of March 2026
    expect(all.some((a) => a.data === null && a.lamports !== '0')).toBe(true);
    expect(all.some((a) => a.data !== null)).toBe(true);
  });
});

describe('hashToField', () => {
  it('is keccak256(bytes ‖ 0xff) with byte 0 cleared', () => {
    const pk = bs58.decode('cTokenmWW8bLPjZEBAUgYy3zKxQZW6VKi7bqNFEVv3m');
    const k = keccak_256(Uint8Array.from([...pk, 0xff]));
    k[0] = 0;
    expect(hashToField(pk)).toEqual(k);
    // cached path returns an equal, independent copy
    const again = hashToField(pk);
    expect(again).toEqual(k);
    again[5] ^= 1;
    expect(hashToField(pk)).toEqual(k);
    // non-32-byte input
    const k2 = keccak_256(Uint8Array.from([1, 2, 3, 0xff]));
    k2[0] = 0;
    expect(hashToField(Uint8Array.from([1, 2, 3]))).toEqual(k2);
  });
});

describe('compressedAccountHash input layout', () => {
  const owner = bs58.decode('cTokenmWW8bLPjZEBAUgYy3zKxQZW6VKi7bqNFEVv3m');
  const tree = bs58.decode('smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT');
  const address = new Uint8Array(32).fill(7);
  address[0] = 0;
  const dataHash = new Uint8Array(32).fill(9);
  dataHash[0] = 0;
  const discriminator = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
  const account: HashableCompressedAccount = { owner, lamports: 0x0102030405060708n, address, data: { discriminator, dataHash } };

  function manual(le: boolean): Uint8Array {
    const leaf = new Uint8Array(32);
    new DataView(leaf.buffer).setUint32(28, 300, le);
    const lam = new Uint8Array(32);
    lam[23] = 1;
    new DataView(lam.buffer).setBigUint64(24, account.lamports, le);
    const disc = new Uint8Array(32);
    disc[23] = 2;
    disc.set(discriminator, 24);
    return poseidon([hashToField(owner), leaf, hashToField(tree), lam, address, disc, dataHash]);
  }

  it('all 7 inputs, v1 little-endian and v2 big-endian', () => {
    expect(compressedAccountHash(account, tree, 300, 'v1')).toEqual(manual(true));
    expect(compressedAccountHash(account, tree, 300, 'v2')).toEqual(manual(false));
    expect(compressedAccountHash(account, tree, 300, 'v1')).not.toEqual(manual(false));
  });

  it('omits lamports when 0, address when null, data when null', () => {
    const leaf = new Uint8Array(32);
    leaf[28] = 5; // 5 LE in bytes[28..32]
    expect(compressedAccountHash({ owner, lamports: 0n, address: null, data: null }, tree, 5, 'v1')).toEqual(
      poseidon([hashToField(owner), leaf, hashToField(tree)]),
    );
  });

  it('rejects bad leaf indices and lamports', () => {
    expect(() => compressedAccountHash(account, tree, -1, 'v1')).toThrow(RangeError);
    expect(() => compressedAccountHash(account, tree, 2 ** 32, 'v1')).toThrow(RangeError);
    expect(() => compressedAccountHash({ ...account, lamports: 1n << 64n }, tree, 0, 'v1')).toThrow(RangeError);
  });
});
