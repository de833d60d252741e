/**
 * Decoding layer: RPC JSON → TransactionInfo/BlockInfo (src/solana/decode.ts), Borsh reader
 * (src/light/borsh.ts), Light noop events (src/light/events.ts) and parseTransaction
 * (src/light/parser.ts), against the reference fixtures in test/fixtures/photon.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import bs58 from 'bs58';
import {
  address,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getTransactionDecoder,
} from '@solana/kit';
import { describe, expect, it } from 'vitest';
import { BorshReader } from '../src/light/borsh.ts';
import {
  ACCOUNT_COMPRESSION_PROGRAM_ID,
  LIGHT_SYSTEM_PROGRAM_ID,
  NOOP_PROGRAM_ID,
  SYSTEM_PROGRAM_ID,
  VOTE_PROGRAM_ID,
} from '../src/light/constants.ts';
import { decodeMerkleTreeEvent, decodePublicTransactionEvent } from '../src/light/events.ts';
import { GROUP_PARSERS, legacyGroupParser, parseTransaction, v2GroupParser, type GroupParser } from '../src/light/parser.ts';
import { encode as base58Encode } from '../src/solana/base58.ts';
import { decodeBlockJson, decodeTransactionJson } from '../src/solana/decode.ts';
import { skimFilter } from '../src/solana/skim.ts';
import { DecodeError } from '../src/solana/errors.ts';
import type { InstructionInfo, LightEvent, PublicTransactionEvent, TransactionInfo } from '../src/types.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SHARED = path.resolve(REPO, 'test/fixtures/photon');
const TX_DIR = path.join(SHARED, 'transactions');
const BLOCK_FILE = path.join(SHARED, 'blocks/get_lanon_voting_signatures/270893658');

const OBSOLETE_ACP = 'CbjvJc1SNx1aav8tU49dJGHu8EUdzQJSMtkjDmV8miqK';
const OBSOLETE_LSP = 'H5sFv8VwWmjxHYS2GB4fTDsK7uTtnRT4WiixtHrET3bN';
const SMT1 = 'smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT';
const SMT2 = 'smt2rJAFdyJJupwMKAqTNAJwvjhmiZ4JYGZmbVRw1Ho';

// ----------------------------------------------------------------------------------------------
// helpers
// ----------------------------------------------------------------------------------------------

interface Fixture {
  folder: string;
  name: string;
  json: any;
}

// The legacy-format folders (noop-carried events); the v2 folders beside them in test/fixtures/photon are
// decoded and parsed by test/parser.v2.test.ts and test/golden.v2.test.ts.
const LEGACY_FOLDERS = ['e2e_mint_and_transfer_transactions', 'lamport_transfers', 'transaction_with_tree_rollover_fee'];
const fixtures: Fixture[] = LEGACY_FOLDERS.flatMap((folder) =>
  readdirSync(path.join(TX_DIR, folder))
    .sort()
    .map((name) => ({ folder, name, json: JSON.parse(readFileSync(path.join(TX_DIR, folder, name), 'utf8')) })),
);

function fixture(prefix: string): Fixture {
  const f = fixtures.filter((x) => x.name.startsWith(prefix));
  if (f.length !== 1) throw new Error(`fixture ${prefix}: ${f.length} matches`);
  return f[0]!;
}

const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

function snapshot(name: string): any {
  const text = readFileSync(path.join(SHARED, 'snapshots', `integration_tests__e2e_tests__${name}.snap`), 'utf8');
  return JSON.parse(text.slice(text.indexOf('---', 3) + 3));
}

/** The single PublicTransactionEvent of a fixture, via decode + parse. */
function publicEvents(prefix: string): PublicTransactionEvent[] {
  const { transaction } = decodeTransactionJson(fixture(prefix).json);
  const parsed = parseTransaction(transaction, 0);
  return parsed.events.map((e) => {
    if (e.kind !== 'publicTransaction') throw new Error(`unexpected ${e.kind}`);
    return e.event;
  });
}

/** Runs fn and returns the DecodeError it throws; fails on success or on any other exception. */
function decodeError(fn: () => unknown): DecodeError {
  let thrown: unknown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  if (thrown === undefined) throw new Error('expected a DecodeError, nothing was thrown');
  if (!(thrown instanceof DecodeError)) throw new Error(`expected a DecodeError, got ${String(thrown)}`);
  return thrown;
}

function wireBytes(json: any): Uint8Array {
  return new Uint8Array(Buffer.from(json.transaction[0], 'base64'));
}

function withWire(json: any, bytes: Uint8Array): any {
  const j = clone(json);
  j.transaction = [Buffer.from(bytes).toString('base64'), 'base64'];
  return j;
}

/** Replaces every occurrence of the 32-byte key `from` by `to` in the wire bytes. */
function replaceKey(bytes: Uint8Array, from: string, to: string): Uint8Array {
  const a = bs58.decode(from);
  const b = bs58.decode(to);
  const out = bytes.slice();
  let n = 0;
  for (let i = 0; i + 32 <= out.length; i++) {
    if (Buffer.from(out.subarray(i, i + 32)).equals(Buffer.from(a))) {
      out.set(b, i);
      n++;
    }
  }
  if (n === 0) throw new Error(`key ${from} not found`);
  return out;
}

/** Deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// little Borsh writers for synthetic events
const u8 = (v: number) => Uint8Array.of(v);
const u32 = (v: number) => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, v, true);
  return b;
};
const u64 = (v: bigint | number) => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(v), true);
  return b;
};
const key = (fill: number) => new Uint8Array(32).fill(fill);
const cat = (...parts: Uint8Array[]) => Uint8Array.from(Buffer.concat(parts));

/** A minimal legacy-layout PublicTransactionEvent with one output (no ata_owners). */
function legacyEventBytes(): Uint8Array {
  return cat(
    u32(0), // input hashes
    u32(1), key(7), // output hashes
    u32(1), key(1), u64(5), u8(0), u8(0), u8(0), // outputs: owner, lamports, address None, data None, tree index
    u32(1), u32(9), // leaf indices
    u32(1), key(2), u64(3), // sequence numbers
    u8(0), // relay fee None
    u8(0), // is_compress
    u8(0), // lamports None
    u32(1), key(2), // pubkey array
    u8(0), // message None
  );
}

function nullifierEventBytes(): Uint8Array {
  return cat(u8(1), key(3), u32(2), u64(10), u64(11), u64(40));
}

function ix(programId: string, data: Uint8Array = new Uint8Array(0), accounts: string[] = []): InstructionInfo {
  return { programId, data, accounts };
}

function txOf(groups: InstructionInfo[][], error: string | null = null): TransactionInfo {
  return {
    signature: 'SigTest1111111111111111111111111111111111111',
    error,
    isVote: false,
    groups: groups.map(([outer, ...inner]) => ({ outer: outer!, inner })),
  };
}

const ACP = ACCOUNT_COMPRESSION_PROGRAM_ID;
const NOOP = NOOP_PROGRAM_ID;
const SYS = SYSTEM_PROGRAM_ID;

// ----------------------------------------------------------------------------------------------
// fixtures
// ----------------------------------------------------------------------------------------------

describe('decodeTransactionJson on every fixture', () => {
  it('finds the fixtures', () => {
    expect(fixtures.length).toBe(8);
  });

  for (const f of fixtures) {
    it(`${f.folder}/${f.name.slice(0, 8)}… matches @solana/kit and bs58`, () => {
      const { slot, blockTime, transaction: tx } = decodeTransactionJson(f.json);
      expect(tx.signature).toBe(f.name);
      expect(slot).toBe(f.json.slot);
      expect(blockTime).toBe(f.json.blockTime ?? 0);
      expect(tx.error).toBeNull();
      expect(tx.isVote).toBe(false);

      // Outer instructions against kit's decoders.
      const kitTx = getTransactionDecoder().decode(wireBytes(f.json));
      const msg = getCompiledTransactionMessageDecoder().decode(kitTx.messageBytes);
      if (msg.version === 1) throw new Error('unexpected v1 fixture');
      expect(tx.groups).toHaveLength(msg.instructions.length);
      msg.instructions.forEach((ci, k) => {
        const outer = tx.groups[k]!.outer;
        expect(outer.programId).toBe(msg.staticAccounts[ci.programAddressIndex]);
        expect(outer.accounts).toEqual((ci.accountIndices ?? []).map((i) => msg.staticAccounts[i]));
        expect(Buffer.from(outer.data).equals(Buffer.from(ci.data ?? new Uint8Array()))).toBe(true);
      });

      // Inner instructions against the JSON and bs58.
      const inner = f.json.meta.innerInstructions as { index: number; instructions: any[] }[];
      for (const g of inner) {
        const got = tx.groups[g.index]!.inner;
        expect(got).toHaveLength(g.instructions.length);
        g.instructions.forEach((ui, i) => {
          expect(got[i]!.programId).toBe(msg.staticAccounts[ui.programIdIndex]);
          expect(got[i]!.accounts).toEqual(ui.accounts.map((a: number) => msg.staticAccounts[a]));
          expect(Buffer.from(got[i]!.data).equals(Buffer.from(bs58.decode(ui.data)))).toBe(true);
        });
      }
    });
  }

  it('lazily decoded inner data survives structuredClone and spreading', () => {
    const { transaction } = decodeTransactionJson(fixture('64jFxW').json);
    const cloned = structuredClone(transaction);
    const noop = cloned.groups[1]!.inner.at(-1)!;
    expect(noop.programId).toBe(NOOP);
    expect(noop.data).toBeInstanceOf(Uint8Array);
    expect(noop.data.length).toBe(298);
    expect({ ...transaction.groups[1]!.inner[0]! }.data.length).toBe(9);
  });
});

describe('Light events of the fixtures', () => {
  it('mint 64jFxW…: one event whose output is the snapshot token account', () => {
    const snap = snapshot('e2e_mint_and_transfer_transactions-mint-transaction');
    const opened = snap.compressionInfo.openedAccounts[0].account;
    const events = publicEvents('64jFxW');
    expect(events).toHaveLength(1);
    const ev = events[0]!;
    expect(ev.outputCompressedAccountHashes.map(base58Encode)).toEqual([opened.hash]);
    expect(opened.hash).toBe('38eTBdRT4kdFELvNfbJbFZNvGWUvXbn3DdJn3PzMtsqJ');
    expect(ev.inputCompressedAccountHashes).toEqual([]);
    expect(ev.outputLeafIndices).toEqual([opened.leafIndex]);
    expect(ev.sequenceNumbers.map((s) => [base58Encode(s.treePubkey), s.seq])).toEqual([[SMT1, 1n]]);
    expect(opened.seq).toBe(1);
    const out = ev.outputCompressedAccounts[0]!;
    expect(base58Encode(ev.pubkeyArray[out.merkleTreeIndex]!)).toBe(opened.tree);
    expect(base58Encode(out.compressedAccount.owner)).toBe(opened.owner);
    expect(out.compressedAccount.lamports).toBe(BigInt(opened.lamports));
    expect(out.compressedAccount.address).toBeNull();
    const data = out.compressedAccount.data!;
    expect(Buffer.from(data.discriminator).readBigUInt64LE(0)).toBe(BigInt(opened.data.discriminator));
    expect(Buffer.from(data.data).toString('base64')).toBe(opened.data.data);
    expect(base58Encode(data.dataHash)).toBe(opened.data.dataHash);
    expect(ev.ataOwners).toEqual([]);
    expect(ev.isCompress).toBe(false);
  });

  it('transfer 5UZuij…: outputs at leaves 1 and 2 with event seq 2, spending the mint output', () => {
    const snap = snapshot('e2e_mint_and_transfer_transactions-transfer-transaction').compressionInfo;
    const [ev] = publicEvents('5UZuij');
    expect(ev!.outputLeafIndices).toEqual([1, 2]);
    expect(ev!.sequenceNumbers.map((s) => [base58Encode(s.treePubkey), s.seq])).toEqual([[SMT1, 2n]]);
    expect(ev!.outputCompressedAccountHashes.map(base58Encode)).toEqual(snap.openedAccounts.map((a: any) => a.account.hash));
    expect(ev!.inputCompressedAccountHashes.map(base58Encode)).toEqual(snap.closedAccounts.map((a: any) => a.account.hash));
    expect(snap.openedAccounts.map((a: any) => [a.account.leafIndex, a.account.seq])).toEqual([
      [1, 2],
      [2, 3],
    ]);
  });

  it('lamport compress 5NLdbq…: one output spent by 4TFBPy…, whose outputs are in the snapshots', () => {
    const payer = snapshot('lamport_transfers-payer-accounts').value.items;
    const receiver = snapshot('lamport_transfers-receiver-accounts').value.items;
    const sigs = snapshot('payer-lamport_transfers-signatures').value.items.map((s: any) => s.signature);
    expect(sigs[0]).toBe(fixture('5NLdbq').name);

    const [compress] = publicEvents('5NLdbq');
    expect(compress!.isCompress).toBe(true);
    expect(compress!.compressOrDecompressLamports).toBe(1_000_000_000n);
    expect(compress!.outputLeafIndices).toEqual([0]);
    expect(compress!.sequenceNumbers.map((s) => [base58Encode(s.treePubkey), s.seq])).toEqual([[SMT1, 1n]]);
    const out = compress!.outputCompressedAccounts[0]!.compressedAccount;
    expect(base58Encode(out.owner)).toBe(payer[0].owner);
    expect(out.lamports).toBe(1_000_000_000n);
    expect(out.data).toBeNull();

    const [t1] = publicEvents('4TFBPy');
    const [t2] = publicEvents('QBrbAZ');
    expect(t1!.inputCompressedAccountHashes.map(base58Encode)).toEqual(compress!.outputCompressedAccountHashes.map(base58Encode));
    expect(t2!.inputCompressedAccountHashes.map(base58Encode)).toEqual([base58Encode(t1!.outputCompressedAccountHashes[0]!)]);
    // Unspent outputs = the snapshot accounts, with their leaf indices and lamports.
    const unspent = [
      { ev: t1!, i: 1 },
      { ev: t2!, i: 0 },
      { ev: t2!, i: 1 },
    ].map(({ ev, i }) => ({
      hash: base58Encode(ev.outputCompressedAccountHashes[i]!),
      leafIndex: ev.outputLeafIndices[i],
      lamports: Number(ev.outputCompressedAccounts[i]!.compressedAccount.lamports),
      owner: base58Encode(ev.outputCompressedAccounts[i]!.compressedAccount.owner),
    }));
    const expected = [...payer, ...receiver].map((a: any) => ({ hash: a.hash, leafIndex: a.leafIndex, lamports: a.lamports, owner: a.owner }));
    expect(unspent.sort((a, b) => a.leafIndex! - b.leafIndex!)).toEqual(expected.sort((a, b) => a.leafIndex - b.leafIndex));
  });

  it('rollover fee 2cBteg…: two system transfers between the append and the noop still match', () => {
    const f = fixtures.find((x) => x.folder === 'transaction_with_tree_rollover_fee')!;
    const { transaction } = decodeTransactionJson(f.json);
    const ordered = [transaction.groups[2]!.outer, ...transaction.groups[2]!.inner].map((i) => i.programId);
    const append = ordered.lastIndexOf(ACP);
    expect(ordered.slice(append + 1)).toEqual([SYS, SYS, NOOP]);
    const parsed = parseTransaction(transaction, 7);
    expect(parsed.usesCompression).toBe(true);
    expect(parsed.events).toHaveLength(1);
    const ev = (parsed.events[0] as Extract<LightEvent, { kind: 'publicTransaction' }>).event;
    expect(ev.outputCompressedAccountHashes).toHaveLength(2);
    expect(ev.sequenceNumbers.map((s) => base58Encode(s.treePubkey))).toEqual([SMT1, SMT2]);
    expect(ev.outputCompressedAccounts.map((o) => base58Encode(ev.pubkeyArray[o.merkleTreeIndex]!))).toEqual([SMT1, SMT2]);
  });

  it('every fixture parses to exactly one PublicTransactionEvent in the legacy layout', () => {
    for (const f of fixtures) {
      const parsed = parseTransaction(decodeTransactionJson(f.json).transaction, 1);
      expect(parsed.events.map((e) => e.kind)).toEqual(['publicTransaction']);
      expect(parsed).toMatchObject({ signature: f.name, slot: 1, error: null, isVote: false, usesCompression: true });
    }
  });

  it('obsolete program ids produce no events and no error', () => {
    for (const prefix of ['5UZuij', '5NLdbq', '2cBteg']) {
      const json = fixture(prefix).json;
      let bytes = replaceKey(wireBytes(json), ACCOUNT_COMPRESSION_PROGRAM_ID, OBSOLETE_ACP);
      bytes = replaceKey(bytes, LIGHT_SYSTEM_PROGRAM_ID, OBSOLETE_LSP);
      const { transaction } = decodeTransactionJson(withWire(json, bytes));
      expect(transaction.groups.some((g) => g.inner.some((i) => i.programId === OBSOLETE_ACP))).toBe(true);
      const parsed = parseTransaction(transaction, 0);
      expect(parsed.events).toEqual([]);
      expect(parsed.usesCompression).toBe(false);
      // …unless the compression program id is overridden (Photon --compression-program-id).
      expect(parseTransaction(transaction, 0, { compressionProgramId: OBSOLETE_ACP }).events).toHaveLength(1);
    }
  });
});

describe('decodeBlockJson on get_lanon_voting_signatures/270893658', () => {
  const json = JSON.parse(readFileSync(BLOCK_FILE, 'utf8'));
  const block = decodeBlockJson(json, 270893658);

  it('decodes the metadata', () => {
    expect(block).toMatchObject({
      slot: 270893658,
      parentSlot: 270893657,
      blockTime: 1704648198,
      blockHeight: 259197775,
      blockhash: '5VAKe1YDgfuJ2wsFEVtDAu9unRyvfDkB21Zn6Bfv9KW4',
      previousBlockhash: '9KfRY5iEqUTQfqoyUyDNefvCNANTohJvAXdLQPbfVeb4',
    });
    expect(block.transactions).toHaveLength(57);
  });

  it('46 non-vote transactions, exactly the snapshot getLatestNonVotingSignatures set', () => {
    const nonVote = block.transactions.filter((t) => !t.isVote);
    expect(nonVote).toHaveLength(46);
    const snap = snapshot('get_lanon_voting_signatures-non-voting-transactions').value.items.map((i: any) => i.signature);
    expect(snap).toHaveLength(46);
    expect(new Set(nonVote.map((t) => t.signature))).toEqual(new Set(snap));
    // Vote = an outer vote-program instruction.
    for (const t of block.transactions) expect(t.isVote).toBe(t.groups.some((g) => g.outer.programId === VOTE_PROGRAM_ID));
  });

  it('parses without Light events; recorded = !isVote || usesCompression', () => {
    const parsed = block.transactions.map((t) => parseTransaction(t, block.slot));
    expect(parsed.every((p) => p.events.length === 0 && !p.usesCompression)).toBe(true);
    expect(parsed.filter((p) => !p.isVote || p.usesCompression)).toHaveLength(46);
  });

  it('sets a transaction that does not decode aside (prefixed with its index) and decodes the rest', () => {
    const bad = clone(json);
    bad.transactions[3].meta.innerInstructions = 5;
    const b = decodeBlockJson(bad, 1);
    expect(b.transactions).toHaveLength(json.transactions.length - 1);
    expect(b.undecodable).toHaveLength(1);
    expect(b.undecodable![0]!.index).toBe(3);
    expect(b.undecodable![0]!.reason).toMatch(/^transactions\[3\]\.meta\.innerInstructions: expected an array, got number 5 \[signature \w+\]$/);
    expect(b.undecodable![0]!.signature).toBe(decodeBlockJson(json, 1).transactions[3]!.signature);
  });

  describe('skimming transactions that name neither the account-compression nor the vote program', () => {
    // The real block plus every Light fixture transaction, in one block.
    const mixed = { ...json, transactions: [...json.transactions, ...fixtures.map((f) => ({ transaction: f.json.transaction, meta: f.json.meta }))] };
    const full = decodeBlockJson(mixed, 1, null);
    const skimmed = decodeBlockJson(mixed, 1);
    const names = (t: { transaction: [string, string]; meta: any }, id: string) =>
      Buffer.from(t.transaction[0], 'base64').indexOf(Buffer.from(bs58.decode(id))) >= 0 ||
      [...(t.meta.loadedAddresses?.writable ?? []), ...(t.meta.loadedAddresses?.readonly ?? [])].includes(id);

    it('gives the indexer the same signatures, errors, vote flags, events and usesCompression as the full decode', () => {
      expect(skimmed.transactions).toHaveLength(full.transactions.length);
      expect(skimmed.undecodable).toBeUndefined();
      for (let i = 0; i < full.transactions.length; i++) {
        const a = full.transactions[i]!;
        const b = skimmed.transactions[i]!;
        expect({ signature: b.signature, error: b.error, isVote: b.isVote }).toEqual({ signature: a.signature, error: a.error, isVote: a.isVote });
        const pa = parseTransaction(a, 1);
        const pb = parseTransaction(b, 1);
        expect(pb.usesCompression).toBe(pa.usesCompression);
        expect(pb.events).toEqual(pa.events);
      }
    });

    it('skims exactly the transactions that name neither program; the rest are decoded in full', () => {
      let n = 0;
      for (let i = 0; i < mixed.transactions.length; i++) {
        const t = mixed.transactions[i];
        const plain = !names(t, ACCOUNT_COMPRESSION_PROGRAM_ID) && !names(t, VOTE_PROGRAM_ID);
        if (plain) n++;
        expect(skimmed.transactions[i]!.groups).toEqual(plain ? [] : full.transactions[i]!.groups);
      }
      expect(n).toBe(46); // the block's non-vote transactions; every Light fixture is decoded in full
      expect(full.transactions.slice(57).every((t) => t.groups.length > 0)).toBe(true);
    });

    it('a program named only in meta.loadedAddresses, or a program added to the filter, means a full decode', () => {
      const i = block.transactions.findIndex((t) => !t.isVote);
      const viaLookup = clone(json);
      viaLookup.transactions[i].meta.loadedAddresses = { writable: [], readonly: [ACCOUNT_COMPRESSION_PROGRAM_ID] };
      expect(decodeBlockJson(viaLookup, 1).transactions[i]!.groups).toEqual(decodeBlockJson(json, 1, null).transactions[i]!.groups);
      expect(decodeBlockJson(viaLookup, 1).transactions[i]!.groups.length).toBeGreaterThan(0);
      // A filter naming a program of that transaction decodes it in full.
      const program = decodeBlockJson(json, 1, null).transactions[i]!.groups[0]!.outer.programId;
      expect(decodeBlockJson(json, 1, skimFilter([program])).transactions[i]!.groups.length).toBeGreaterThan(0);
      expect(decodeBlockJson(json, 1).transactions[i]!.groups).toEqual([]);
      expect(() => skimFilter(['not-a-key'])).toThrow(DecodeError);
    });

    it('a v0 message without well-formed meta.loadedAddresses is decoded in full, so a lookup-loaded program cannot hide', () => {
      // A v0 Light fixture with the account-compression program's key replaced: a v0 transaction that
      // names neither program (its other instructions still decode).
      const f = fixtures.find((x) => x.json.version === 0)!;
      const bytes = Buffer.from(f.json.transaction[0], 'base64');
      const acp = Buffer.from(bs58.decode(ACCOUNT_COMPRESSION_PROGRAM_ID));
      for (let at = bytes.indexOf(acp); at >= 0; at = bytes.indexOf(acp)) bytes.fill(7, at, at + 32);
      expect(bytes[1 + 64 * bytes[0]!]! & 0x80).toBe(0x80);
      const tx = { transaction: [bytes.toString('base64'), 'base64'], meta: clone(f.json.meta) };
      const base = { ...json, transactions: [tx] };
      expect(decodeBlockJson(base, 1).transactions[0]!.groups).toEqual([]); // well formed: skimmed
      expect(decodeBlockJson(base, 1, null).transactions[0]!.groups.length).toBeGreaterThan(0);
      const v0 = 0;
      for (const broken of [undefined, null, {}, { writable: [] }, { writable: 'x', readonly: [] }]) {
        const bad = clone(base);
        if (broken === undefined) delete bad.transactions[v0].meta.loadedAddresses;
        else bad.transactions[v0].meta.loadedAddresses = broken;
        const skim = decodeBlockJson(bad, 1);
        const fullDecode = decodeBlockJson(bad, 1, null);
        // Same outcome as the full decode: rejected alike, or decoded alike (never a silent plain row).
        expect(skim.undecodable, JSON.stringify(broken)).toEqual(fullDecode.undecodable);
        expect(skim.transactions.map((t) => [t.signature, t.groups.length > 0])).toEqual(fullDecode.transactions.map((t) => [t.signature, t.groups.length > 0]));
      }
    });
  });

  it('rejects missing block fields like Photon', () => {
    for (const field of ['blockTime', 'blockHeight', 'parentSlot', 'blockhash']) {
      const bad = { ...json };
      delete bad[field];
      expect(decodeError(() => decodeBlockJson(bad, 1)).message).toBe(`${field}: missing`);
    }
    expect(decodeError(() => decodeBlockJson({ ...json, blockhash: 'O0' }, 1)).message).toBe(
      `blockhash: invalid base58 character "O" at index 0`,
    );
    expect(decodeBlockJson({ ...json, transactions: undefined }, 1).transactions).toEqual([]);
    expect(decodeError(() => decodeBlockJson(null, 1)).message).toBe('getBlock result: expected an object, got null');
  });
});

// ----------------------------------------------------------------------------------------------
// malformed input
// ----------------------------------------------------------------------------------------------

describe('malformed transactions → DecodeError', () => {
  const mint = fixture('64jFxW');
  const sig = mint.name;

  it('truncated base64 wire bytes name the byte offset', () => {
    const bytes = wireBytes(mint.json);
    expect(bytes.length).toBe(731);
    const e = decodeError(() => decodeTransactionJson(withWire(mint.json, bytes.subarray(0, 311))));
    expect(e.message).toBe(
      `transaction.message: truncated at byte 134 (need 480 bytes for 15 account keys, 177 left) [signature ${sig}]`,
    );
    expect(e.signature).toBe(sig);
    expect(e.offset).toBe(134);
    expect(decodeError(() => decodeTransactionJson(withWire(mint.json, bytes.subarray(0, 100)))).message).toBe(
      'transaction.signatures: truncated at byte 1 (need 128 bytes for 2 signatures, 99 left)',
    );
    expect(decodeError(() => decodeTransactionJson(withWire(mint.json, bytes.subarray(0, 700)))).message).toBe(
      `transaction.message: truncated at byte 673 (need 57 bytes for instructions[1].data, 27 left) [signature ${sig}]`,
    );
    expect(decodeError(() => decodeTransactionJson(withWire(mint.json, bytes.subarray(0, 730)))).message).toBe(
      `transaction.message: truncated at byte 730 (need 1 byte for address table lookup count, 0 left) [signature ${sig}]`,
    );
  });

  it('every truncation of every fixture is a DecodeError', () => {
    for (const f of fixtures) {
      const bytes = wireBytes(f.json);
      for (let n = 0; n < bytes.length; n++) {
        decodeError(() => decodeTransactionJson(withWire(f.json, bytes.subarray(0, n))));
      }
    }
  });

  it('random byte corruption either decodes or throws DecodeError', () => {
    const next = rng(42);
    for (const f of fixtures) {
      const bytes = wireBytes(f.json);
      for (let t = 0; t < 300; t++) {
        const b = bytes.slice();
        for (let k = 0; k < 3; k++) b[Math.floor(next() * b.length)] = Math.floor(next() * 256);
        try {
          parseTransaction(decodeTransactionJson(withWire(f.json, b)).transaction, 0);
        } catch (e) {
          expect(e).toBeInstanceOf(DecodeError);
        }
      }
    }
  });

  it('bad base64, trailing bytes and bad encodings', () => {
    const j = clone(mint.json);
    j.transaction[0] = j.transaction[0].slice(0, -1);
    expect(decodeError(() => decodeTransactionJson(j)).message).toBe('transaction[0]: invalid base64: length 975 is not a multiple of 4');
    j.transaction[0] = '!' + mint.json.transaction[0].slice(1);
    expect(decodeError(() => decodeTransactionJson(j)).message).toBe('transaction[0]: invalid base64: bad character or misplaced padding');
    const longer = cat(wireBytes(mint.json), u8(0));
    expect(decodeError(() => decodeTransactionJson(withWire(mint.json, longer))).message).toBe(
      `transaction.message: 1 trailing bytes after byte 731 [signature ${sig}]`,
    );
    j.transaction = [mint.json.transaction[0], 'json'];
    expect(decodeError(() => decodeTransactionJson(j)).message).toBe('transaction[1]: unsupported encoding string "json" (expected "base64")');
    j.transaction = { message: {} };
    expect(decodeError(() => decodeTransactionJson(j)).message).toBe('transaction: expected an array, got an object');
    // base58 payloads (old nodes) are accepted.
    j.transaction = [bs58.encode(wireBytes(mint.json)), 'base58'];
    expect(decodeTransactionJson(j).transaction.signature).toBe(sig);
  });

  it('header / signature count mismatch and unsupported versions', () => {
    const b = wireBytes(mint.json);
    const msgStart = 1 + 2 * 64;
    const wrongCount = b.slice();
    wrongCount[msgStart + 1] = 1; // v0: numRequiredSignatures
    expect(decodeError(() => decodeTransactionJson(withWire(mint.json, wrongCount))).message).toBe(
      `transaction.message: header requires 1 signatures but the transaction carries 2 [signature ${sig}]`,
    );
    // The header is checked before anything that follows it.
    expect(decodeError(() => decodeTransactionJson(withWire(mint.json, wrongCount.subarray(0, 300)))).message).toBe(
      `transaction.message: header requires 1 signatures but the transaction carries 2 [signature ${sig}]`,
    );
    for (const [byte, version] of [
      [0x82, 2],
      [0x81, 1], // v1 is only valid message-first
      [0xff, 127],
    ]) {
      const v = b.slice();
      v[msgStart] = byte;
      const e = decodeError(() => decodeTransactionJson(withWire(mint.json, v)));
      expect(e.message).toBe(`transaction.message: unsupported message version ${version} in a signatures-first transaction [signature ${sig}]`);
      expect(e.offset).toBe(msgStart);
    }
    expect(decodeError(() => decodeTransactionJson(withWire(mint.json, b.subarray(0, msgStart)))).message).toBe(
      `transaction.message: truncated at byte ${msgStart} (need 1 byte for version/header, 0 left) [signature ${sig}]`,
    );
    expect(decodeError(() => decodeTransactionJson(withWire(mint.json, new Uint8Array([0])))).message).toBe(
      'transaction.signatures: no signatures',
    );
    expect(decodeError(() => decodeTransactionJson(withWire(mint.json, new Uint8Array(0)))).message).toBe('transaction: empty');
  });

  it('garbage meta', () => {
    const cases: [(j: any) => void, string][] = [
      [(j) => (j.meta = 42), `meta: expected an object, got number 42`],
      [(j) => delete j.meta, `meta: missing`],
      [(j) => delete j.meta.err, `meta.err: missing`],
      [(j) => (j.meta.innerInstructions = 'x'), `meta.innerInstructions: expected an array, got string "x"`],
      [(j) => (j.meta.innerInstructions[0] = null), `meta.innerInstructions[0]: expected an object, got null`],
      [(j) => (j.meta.innerInstructions[0].index = 9), `meta.innerInstructions[0].index: 9 out of range (2 outer instructions)`],
      [(j) => (j.meta.innerInstructions[0].index = -1), `meta.innerInstructions[0].index: expected an integer in [0, 9007199254740991], got number -1`],
      [(j) => delete j.meta.innerInstructions[0].instructions, `meta.innerInstructions[0].instructions: missing`],
      [
        (j) => (j.meta.innerInstructions[0].instructions[2].data = 'abc0'),
        `meta.innerInstructions[0].instructions[2].data: invalid base58 character "0" at index 3`,
      ],
      [(j) => delete j.meta.innerInstructions[0].instructions[2].data, `meta.innerInstructions[0].instructions[2].data: missing`],
      [
        (j) => (j.meta.innerInstructions[0].instructions[1] = { program: 'spl-token', programId: 'x', parsed: { type: 'mintTo' }, stackHeight: 2 }),
        `meta.innerInstructions[0].instructions[1]: parsed inner instructions are not supported (request base64 encoding)`,
      ],
      [
        (j) => (j.meta.innerInstructions[0].instructions[0].accounts = [0, 99]),
        `meta.innerInstructions[0].instructions[0].accounts[1]: account index 99 out of range (15 accounts)`,
      ],
      [
        (j) => (j.meta.innerInstructions[0].instructions[0].programIdIndex = 15),
        `meta.innerInstructions[0].instructions[0].programIdIndex: account index 15 out of range (15 accounts)`,
      ],
      [
        (j) => (j.meta.innerInstructions[0].instructions[0].accounts = '012'),
        `meta.innerInstructions[0].instructions[0].accounts: expected an array, got string "012"`,
      ],
    ];
    for (const [mutate, message] of cases) {
      const j = clone(mint.json);
      mutate(j);
      expect(decodeError(() => decodeTransactionJson(j)).message).toBe(`${message} [signature ${sig}]`);
    }
    // null / absent innerInstructions = none (OptionSerializer::None / Skip).
    const j = clone(mint.json);
    j.meta.innerInstructions = null;
    expect(decodeTransactionJson(j).transaction.groups.every((g) => g.inner.length === 0)).toBe(true);
  });

  it('outer instruction account index out of range', () => {
    const b = wireBytes(mint.json);
    // Find instruction 1's first account index: the compiled instruction follows the blockhash.
    const { transaction } = decodeTransactionJson(mint.json);
    expect(transaction.groups[1]!.outer.accounts.length).toBe(15);
    const kit = getCompiledTransactionMessageDecoder().decode(getTransactionDecoder().decode(b).messageBytes);
    if (kit.version === 1) throw new Error('v1');
    const msgStart = 1 + 2 * 64;
    const ixStart = msgStart + 1 + 3 + 1 + 15 * 32 + 32 + 1; // version, header, key count, keys, blockhash, ix count
    const firstIxLen = 1 + 1 + (kit.instructions[0]!.accountIndices?.length ?? 0) + 1 + kit.instructions[0]!.data!.length;
    const acc0 = ixStart + firstIxLen + 1 + 1; // programIdIndex, accounts length (<128)
    expect(b[acc0]).toBe(kit.instructions[1]!.accountIndices![0]);
    const bad = b.slice();
    bad[acc0] = 200;
    expect(decodeError(() => decodeTransactionJson(withWire(mint.json, bad))).message).toBe(
      `transaction.message.instructions[1].accounts: account index 200 out of range (15 accounts) [signature ${sig}]`,
    );
  });

  it('non-canonical and overflowing compact-u16 lengths', () => {
    const b = wireBytes(mint.json);
    const kit = getCompiledTransactionMessageDecoder().decode(getTransactionDecoder().decode(b).messageBytes);
    if (kit.version === 1) throw new Error('v1');
    const ixStart = 1 + 2 * 64 + 1 + 3 + 1 + 15 * 32 + 32 + 1;
    const lenAt = ixStart + 1 + 1 + (kit.instructions[0]!.accountIndices?.length ?? 0); // instructions[0] data length
    const len = b[lenAt]!;
    expect(len).toBe(kit.instructions[0]!.data!.length);
    expect(len).toBeLessThan(0x80);
    const withLength = (...prefix: number[]) => cat(b.subarray(0, lenAt), Uint8Array.from(prefix), b.subarray(lenAt + 1));
    // Same value, two bytes: kit's shortU16 decoder accepts it, Solana does not.
    expect(decodeError(() => decodeTransactionJson(withWire(mint.json, withLength(len | 0x80, 0)))).message).toBe(
      `transaction.message: non-canonical compact-u16 at byte ${lenAt} (instructions[0].data length) [signature ${sig}]`,
    );
    for (const prefix of [
      [0xff, 0xff, 0x7f], // > 0xffff
      [0xff, 0xff, 0xff], // a 4th byte
    ]) {
      expect(decodeError(() => decodeTransactionJson(withWire(mint.json, withLength(...prefix)))).message).toBe(
        `transaction.message: compact-u16 overflow at byte ${lenAt} (instructions[0].data length) [signature ${sig}]`,
      );
    }
    // A length cut after its first byte names the missing byte.
    expect(decodeError(() => decodeTransactionJson(withWire(mint.json, withLength(0x80).subarray(0, lenAt + 1)))).message).toBe(
      `transaction.message: truncated at byte ${lenAt + 1} (need 1 byte for instructions[0].data length, 0 left) [signature ${sig}]`,
    );
  });

  it('missing / wrong top-level fields', () => {
    expect(decodeError(() => decodeTransactionJson(null)).message).toBe('getTransaction result: expected an object, got null');
    expect(decodeError(() => decodeTransactionJson([])).message).toBe('getTransaction result: expected an object, got an array');
    expect(decodeError(() => decodeTransactionJson('tx')).message).toBe('getTransaction result: expected an object, got string "tx"');
    const j = clone(mint.json);
    delete j.slot;
    expect(decodeError(() => decodeTransactionJson(j)).message).toBe('slot: missing');
    j.slot = 1.5;
    expect(decodeError(() => decodeTransactionJson(j)).message).toBe('slot: expected an integer in [0, 9007199254740991], got number 1.5');
    j.slot = 1;
    delete j.transaction;
    expect(decodeError(() => decodeTransactionJson(j)).message).toBe('transaction: missing');
    const k = clone(mint.json);
    k.blockTime = null;
    expect(decodeTransactionJson(k).blockTime).toBe(0);
  });

  it('meta.err is kept as JSON and the transaction yields no events', () => {
    const j = clone(mint.json);
    j.meta.err = { InstructionError: [1, { Custom: 6001 }] };
    const { transaction } = decodeTransactionJson(j);
    expect(transaction.error).toBe('{"InstructionError":[1,{"Custom":6001}]}');
    const parsed = parseTransaction(transaction, 3);
    expect(parsed).toEqual({ signature: sig, slot: 3, error: transaction.error, isVote: false, usesCompression: false, events: [] });
  });

  it('truncated noop event bytes are a hard DecodeError naming the signature', () => {
    const j = clone(fixture('5UZuij').json);
    const list = j.meta.innerInstructions[0].instructions;
    const noop = list[list.length - 1];
    const full = bs58.decode(noop.data);
    noop.data = bs58.encode(full.subarray(0, 300));
    const { transaction } = decodeTransactionJson(j); // decoding is fine…
    const e = decodeError(() => parseTransaction(transaction, 0)); // …the event is not
    expect(e.signature).toBe(fixture('5UZuij').name);
    expect(e.message).toBe(
      'groups[1].ordered[6].data.PublicTransactionEvent.outputCompressedAccounts.compressedAccount.owner: ' +
        'unexpected end of data at offset 270 (need 32 bytes, 30 left) (neither the current nor the legacy layout fits) ' +
        `[signature ${fixture('5UZuij').name}]`,
    );
    noop.data = bs58.encode(full.subarray(0, 100));
    expect(decodeError(() => parseTransaction(decodeTransactionJson(j).transaction, 0)).message).toBe(
      'groups[1].ordered[6].data.PublicTransactionEvent.outputCompressedAccountHashes: ' +
        'Vec length 2 at offset 36 exceeds the 60 bytes left (neither the current nor the legacy layout fits) ' +
        `[signature ${fixture('5UZuij').name}]`,
    );
    for (let n = 0; n < full.length; n++) {
      try {
        decodePublicTransactionEvent(full.subarray(0, n));
      } catch (err) {
        expect(err).toBeInstanceOf(DecodeError);
      }
    }
  });
});

// ----------------------------------------------------------------------------------------------
// v0 lookups and the v1 envelope (built with @solana/kit's encoder)
// ----------------------------------------------------------------------------------------------

describe('address-table lookups and the v1 envelope', () => {
  const keys = ['J6ULJViDpQTRntYTmfkpUZZ71KTVkZNJFSDcQhFCo5Ef', ACP, NOOP].map((k) => address(k));
  const blockhash = '4FAEhSGGMMQ9VpdQTPxHitnKj9DcCeDdQtNTCMbpfqm4';
  const enc = getCompiledTransactionMessageEncoder();
  const sigBytes = new Uint8Array(64).fill(7);
  const sig = bs58.encode(sigBytes);

  function v0Json(loaded: any) {
    const msg = enc.encode({
      version: 0,
      header: { numSignerAccounts: 1, numReadonlySignerAccounts: 0, numReadonlyNonSignerAccounts: 1 },
      lifetimeToken: blockhash,
      staticAccounts: keys.slice(0, 2),
      instructions: [{ programAddressIndex: 1, accountIndices: [0, 2, 3, 4], data: new Uint8Array([9]) }],
      addressTableLookups: [{ lookupTableAddress: keys[2]!, writableIndexes: [5], readonlyIndexes: [1, 2] }],
    } as any);
    const wire = cat(u8(1), sigBytes, new Uint8Array(msg));
    return { slot: 5, blockTime: 9, transaction: [Buffer.from(wire).toString('base64'), 'base64'], meta: { err: null, innerInstructions: [], loadedAddresses: loaded }, version: 0 };
  }

  it('resolves static keys, then loaded writable, then loaded readonly', () => {
    const w = 'FLkMEA7eA82Cvp7MqamqFKsRN3E2Vfg3Xa8NRyVARq5n';
    const r1 = SMT1;
    const r2 = SMT2;
    const { transaction } = decodeTransactionJson(v0Json({ writable: [w], readonly: [r1, r2] }));
    expect(transaction.signature).toBe(sig);
    expect(transaction.groups[0]!.outer).toEqual({ programId: ACP, data: new Uint8Array([9]), accounts: [keys[0], w, r1, r2] });
  });

  it('names truncations inside the lookups', () => {
    const json = v0Json({ writable: [], readonly: [] });
    const wire = Buffer.from(json.transaction[0], 'base64');
    const cut = (n: number) => ({ ...json, transaction: [wire.subarray(0, wire.length - n).toString('base64'), 'base64'] });
    expect(decodeError(() => decodeTransactionJson(cut(1))).message).toBe(
      `transaction.message: truncated at byte ${wire.length - 2} (need 2 bytes for addressTableLookups[0].readonlyIndexes, 1 left) [signature ${sig}]`,
    );
    expect(decodeError(() => decodeTransactionJson(cut(6))).message).toBe(
      `transaction.message: truncated at byte ${wire.length - 37} (need 32 bytes for addressTableLookups[0].accountKey, 31 left) [signature ${sig}]`,
    );
  });

  it('rejects loaded addresses that do not match the lookups', () => {
    expect(decodeError(() => decodeTransactionJson(v0Json({ writable: [], readonly: [SMT1, SMT2] }))).message).toBe(
      `meta.loadedAddresses: has 0 writable + 2 readonly addresses, the message's lookups select 1 + 2 [signature ${sig}]`,
    );
    expect(decodeError(() => decodeTransactionJson(v0Json(undefined))).message).toBe(`meta.loadedAddresses: missing [signature ${sig}]`);
    expect(decodeError(() => decodeTransactionJson(v0Json({ writable: ['0xdead'], readonly: [SMT1, SMT2] }))).message).toBe(
      `meta.loadedAddresses.writable[0]: not a base58 pubkey: "0xdead" [signature ${sig}]`,
    );
  });

  it('decodes a v1 (message-first) transaction through @solana/kit', () => {
    const msg = enc.encode({
      version: 1,
      header: { numSignerAccounts: 1, numReadonlySignerAccounts: 0, numReadonlyNonSignerAccounts: 2 },
      configMask: 0,
      configValues: [],
      lifetimeToken: blockhash,
      numInstructions: 1,
      numStaticAccounts: 3,
      staticAccounts: keys,
      instructionHeaders: [{ programAccountIndex: 1, numInstructionAccounts: 1, numInstructionDataBytes: 3 }],
      instructionPayloads: [{ instructionAccountIndices: [0], instructionData: new Uint8Array([1, 2, 3]) }],
    } as any);
    const wire = cat(new Uint8Array(msg), sigBytes);
    const json = { slot: 1, blockTime: 2, transaction: [Buffer.from(wire).toString('base64'), 'base64'], meta: { err: null, innerInstructions: [{ index: 0, instructions: [{ programIdIndex: 2, accounts: [1], data: '2VfUX' }] }] } };
    const { transaction } = decodeTransactionJson(json);
    expect(transaction.signature).toBe(sig);
    expect(transaction.groups).toEqual([
      { outer: { programId: ACP, data: new Uint8Array([1, 2, 3]), accounts: [keys[0]] }, inner: [{ programId: NOOP, data: bs58.decode('2VfUX'), accounts: [ACP] }] },
    ]);
    const e = decodeError(() => decodeTransactionJson({ ...json, transaction: [Buffer.from(wire.subarray(0, 60)).toString('base64'), 'base64'] }));
    expect(e.message).toMatch(/^transaction\.message: invalid v1 transaction: /);
  });
});

// ----------------------------------------------------------------------------------------------
// Borsh, events, parser
// ----------------------------------------------------------------------------------------------

describe('BorshReader', () => {
  it('reads little-endian scalars, options and vecs', () => {
    const r = new BorshReader(cat(u8(7), Uint8Array.of(1, 2), u32(0xdeadbeef), u64(2n ** 64n - 1n), u8(1), u8(1), u64(3), u32(2), u8(4), u8(5)));
    expect(r.u8('a')).toBe(7);
    expect(r.u16('b')).toBe(0x0201);
    expect(r.u32('c')).toBe(0xdeadbeef);
    expect(r.u64('d')).toBe(2n ** 64n - 1n);
    expect(r.bool('e')).toBe(true);
    expect(r.option('f', (x) => x.u64('f'))).toBe(3n);
    expect(r.vec('g', (x) => x.u8('g'))).toEqual([4, 5]);
    expect(r.remaining).toBe(0);
    r.expectEnd('end');
  });

  it('throws DecodeError with field and offset', () => {
    const r = new BorshReader(Uint8Array.of(1, 2, 3));
    r.u8('x');
    const e = decodeError(() => r.u32('event.count'));
    expect(e.message).toBe('event.count: unexpected end of data at offset 1 (need 4 bytes, 2 left)');
    expect(e.offset).toBe(1);
    expect(decodeError(() => new BorshReader(Uint8Array.of(2)).bool('flag')).message).toBe('flag: invalid bool 2 at offset 0');
    expect(decodeError(() => new BorshReader(Uint8Array.of(5)).option('opt', (x) => x.u8('v'))).message).toBe('opt: invalid Option tag 5 at offset 0');
    expect(decodeError(() => new BorshReader(cat(u32(1000), u8(0))).vec('list', (x) => x.bytes32('item'), 32)).message).toBe(
      'list: Vec length 1000 at offset 0 exceeds the 1 bytes left',
    );
    expect(decodeError(() => new BorshReader(Uint8Array.of(1, 2)).expectEnd('all')).message).toBe('all: 2 trailing bytes at offset 0');
  });
});

describe('decodePublicTransactionEvent', () => {
  it('legacy layout → ataOwners []', () => {
    const ev = decodePublicTransactionEvent(legacyEventBytes());
    expect(ev).toMatchObject({ outputLeafIndices: [9], relayFee: null, isCompress: false, compressOrDecompressLamports: null, message: null, ataOwners: [] });
    expect(ev.sequenceNumbers).toEqual([{ treePubkey: key(2), seq: 3n }]);
    expect(ev.outputCompressedAccounts).toEqual([{ compressedAccount: { owner: key(1), lamports: 5n, address: null, data: null }, merkleTreeIndex: 0 }]);
  });

  it('current layout (all bytes consumed) → ataOwners decoded', () => {
    const ev = decodePublicTransactionEvent(cat(legacyEventBytes(), u32(1), u8(0), key(9)));
    expect(ev.ataOwners).toEqual([{ outputIndex: 0, walletOwner: key(9) }]);
    expect(decodePublicTransactionEvent(cat(legacyEventBytes(), u32(0))).ataOwners).toEqual([]);
  });

  it('bytes after a would-be ata_owners vec fall back to the legacy layout', () => {
    const ev = decodePublicTransactionEvent(cat(legacyEventBytes(), u32(1), u8(0), key(9), u8(1)));
    expect(ev.ataOwners).toEqual([]);
    expect(ev.outputLeafIndices).toEqual([9]);
  });

  it('optional fields, compressed-account data and message', () => {
    const data = cat(
      u32(1), key(4), // inputs
      u32(1), key(7),
      u32(1), key(1), u64(5), u8(1), key(6), u8(1), Uint8Array.of(2, 0, 0, 0, 0, 0, 0, 0), u32(2), Uint8Array.of(8, 9), key(5), u8(1),
      u32(1), u32(0),
      u32(0),
      u8(1), u64(11), // relay fee
      u8(1), // is_compress
      u8(1), u64(12), // lamports
      u32(2), key(2), key(3),
      u8(1), u32(3), Uint8Array.of(1, 2, 3), // message
    );
    const ev = decodePublicTransactionEvent(data);
    expect(ev.inputCompressedAccountHashes).toEqual([key(4)]);
    expect(ev.relayFee).toBe(11n);
    expect(ev.isCompress).toBe(true);
    expect(ev.compressOrDecompressLamports).toBe(12n);
    expect(ev.message).toEqual(Uint8Array.of(1, 2, 3));
    expect(ev.outputCompressedAccounts[0]).toEqual({
      compressedAccount: { owner: key(1), lamports: 5n, address: key(6), data: { discriminator: Uint8Array.of(2, 0, 0, 0, 0, 0, 0, 0), data: Uint8Array.of(8, 9), dataHash: key(5) } },
      merkleTreeIndex: 1,
    });
  });
});

describe('decodeMerkleTreeEvent', () => {
  it('tag 1 nullifier, trailing bytes allowed', () => {
    expect(decodeMerkleTreeEvent(cat(nullifierEventBytes(), u8(99)))).toEqual({
      kind: 'nullifier',
      event: { tree: key(3), nullifiedLeavesIndices: [10n, 11n], seq: 40n },
    });
  });

  it('tag 2 indexed tree update', () => {
    const elem = (f: number) => cat(key(f), u64(f + 1), key(f + 2), u64(f + 3));
    const ev = decodeMerkleTreeEvent(cat(u8(2), key(1), u32(1), elem(10), key(11), elem(20), key(21), u64(7)));
    expect(ev).toEqual({
      kind: 'indexedTreeUpdate',
      event: {
        tree: key(1),
        updates: [
          {
            newLowElement: { value: key(10), nextIndex: 11n, nextValue: key(12), index: 13n },
            newLowElementHash: key(11),
            newHighElement: { value: key(20), nextIndex: 21n, nextValue: key(22), index: 23n },
            newHighElementHash: key(21),
          },
        ],
        seq: 7n,
      },
    });
  });

  it('tags 3/4/5 batch events', () => {
    const body = (q: Uint8Array) => cat(key(1), u64(2), u64(3), u64(4), u64(5), u64(6), key(7), u32(8), u64(9), q);
    const kinds = { 3: 'batchAppend', 4: 'batchNullify', 5: 'batchAddressAppend' } as const;
    for (const tag of [3, 4, 5] as const) {
      expect(decodeMerkleTreeEvent(cat(u8(tag), body(cat(u8(1), key(10)))))).toEqual({
        kind: 'batch',
        event: {
          kind: kinds[tag],
          merkleTreePubkey: key(1),
          batchIndex: 2n,
          zkpBatchIndex: 3n,
          zkpBatchSize: 4n,
          oldNextIndex: 5n,
          newNextIndex: 6n,
          newRoot: key(7),
          rootIndex: 8,
          sequenceNumber: 9n,
          outputQueuePubkey: key(10),
        },
      });
    }
    expect((decodeMerkleTreeEvent(cat(u8(3), body(u8(0))))!.event as any).outputQueuePubkey).toBeNull();
  });

  it('undecodable data → null; a real V1 changelog → DecodeError', () => {
    expect(decodeMerkleTreeEvent(new Uint8Array(0))).toBeNull();
    expect(decodeMerkleTreeEvent(Uint8Array.of(9, 1, 2))).toBeNull();
    expect(decodeMerkleTreeEvent(cat(u8(1), key(3)))).toBeNull();
    expect(decodeMerkleTreeEvent(Uint8Array.of(0, 1, 2))).toBeNull();
    const v1 = cat(u8(0), key(1), u32(1), u32(1), key(2), u32(0), u64(3), u32(4));
    expect(decodeError(() => decodeMerkleTreeEvent(v1)).message).toBe(
      'MerkleTreeEvent: Expected nullifier event or merkle tree update (got a V1 ChangelogEvent)',
    );
  });
});

describe('parseTransaction (legacy scan, §1.3)', () => {
  const pte = legacyEventBytes();
  const kinds = (tx: TransactionInfo) => parseTransaction(tx, 0).events.map((e) => e.kind);

  it('ACP → 1 or 2 SYS → NOOP is a PublicTransactionEvent; 0 or 3 SYS or another program is not', () => {
    expect(kinds(txOf([[ix('X'), ix(ACP), ix(SYS), ix(NOOP, pte)]]))).toEqual(['publicTransaction']);
    expect(kinds(txOf([[ix(ACP), ix(SYS), ix(SYS), ix(NOOP, pte)]]))).toEqual(['publicTransaction']);
    expect(kinds(txOf([[ix(ACP), ix(SYS), ix(SYS), ix(SYS), ix(NOOP, pte)]]))).toEqual([]);
    expect(kinds(txOf([[ix(ACP), ix(SYS), ix('Other'), ix(NOOP, pte)]]))).toEqual([]);
    expect(kinds(txOf([[ix(ACP), ix(SYS)]]))).toEqual([]);
    expect(kinds(txOf([[ix(ACP)]]))).toEqual([]);
  });

  it('ACP directly followed by NOOP is a MerkleTreeEvent; undecodable ones are ignored', () => {
    expect(kinds(txOf([[ix('R'), ix(ACP), ix(NOOP, nullifierEventBytes())]]))).toEqual(['nullifier']);
    expect(kinds(txOf([[ix(ACP), ix(NOOP, Uint8Array.of(42))]]))).toEqual([]);
    const parsed = parseTransaction(txOf([[ix(ACP), ix(NOOP, Uint8Array.of(42))]]), 0);
    expect(parsed.usesCompression).toBe(false);
  });

  it('keeps instruction order across and within groups', () => {
    const tx = txOf([
      [ix(ACP), ix(NOOP, nullifierEventBytes()), ix(ACP), ix(SYS), ix(NOOP, pte)],
      [ix('Y'), ix(ACP), ix(SYS), ix(NOOP, pte), ix(ACP), ix(NOOP, nullifierEventBytes())],
    ]);
    expect(kinds(tx)).toEqual(['nullifier', 'publicTransaction', 'publicTransaction', 'nullifier']);
  });

  it('an undecodable noop PublicTransactionEvent or a V1 changelog is a hard error', () => {
    const tx = txOf([[ix('Y')], [ix(ACP), ix(SYS), ix(NOOP, pte.subarray(0, pte.length - 1))]]);
    const e = decodeError(() => parseTransaction(tx, 0));
    expect(e.signature).toBe(tx.signature);
    expect(e.message).toBe(
      `groups[1].ordered[2].data.PublicTransactionEvent.message: unexpected end of data at offset ${pte.length - 1} (need 1 byte, 0 left) ` +
        `(neither the current nor the legacy layout fits) [signature ${tx.signature}]`,
    );
    const v1 = cat(u8(0), key(1), u32(0), u64(3), u32(4));
    expect(decodeError(() => parseTransaction(txOf([[ix(ACP), ix(NOOP, v1)]]), 0)).message).toBe(
      `groups[0].ordered[1].data.MerkleTreeEvent: Expected nullifier event or merkle tree update (got a V1 ChangelogEvent) [signature ${tx.signature}]`,
    );
  });

  it('failed transactions yield nothing; vote flag and error are passed through', () => {
    const tx = { ...txOf([[ix(ACP), ix(SYS), ix(NOOP, pte)]], '{"InstructionError":[0,"Custom"]}'), isVote: true };
    expect(parseTransaction(tx, 9)).toEqual({ signature: tx.signature, slot: 9, error: tx.error, isVote: true, usesCompression: false, events: [] });
  });

  it('group parsers: the first non-null result claims the group (the instruction-based parser first, then the legacy scan)', () => {
    expect(GROUP_PARSERS).toEqual([v2GroupParser, legacyGroupParser]);
    const tx = txOf([[ix(ACP), ix(SYS), ix(NOOP, pte)], [ix('V2'), ix(ACP), ix(SYS), ix(NOOP, pte)]]);
    const seen: number[] = [];
    const v2: GroupParser = (ordered, ctx) => {
      seen.push(ctx.groupIndex);
      expect(ctx.signature).toBe(tx.signature);
      return ordered[0]!.programId === 'V2' ? [] : null;
    };
    const parsed = parseTransaction(tx, 0, {}, [v2, legacyGroupParser]);
    expect(seen).toEqual([0, 1]);
    expect(parsed.events.map((e) => e.kind)).toEqual(['publicTransaction']); // group 1 claimed by "v2" with no events
  });
});
