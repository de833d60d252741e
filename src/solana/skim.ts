/**
 * The skim: the cheap reading of block transactions that cannot hold a Light event (most of a
 * mainnet block that is not votes). A transaction that names none of a {@link SkimFilter}'s
 * programs is read for its signature and error only, without decoding its message or its inner
 * instructions (photon.md §2.3: the reference records such a transaction by signature and error
 * alone). Pure, no I/O. Used by decode.ts (`decodeBlockJson`).
 */
import type { TransactionInfo } from '../types.ts';
import * as base58 from './base58.ts';
import { DecodeError } from './errors.ts';
import { ACCOUNT_COMPRESSION_PROGRAM_ID, VOTE_PROGRAM_ID } from './programIds.ts';

/**
 * Which transactions of a block are decoded in full: those that name one of `programs` (base58
 * program ids, the vote program always among them). Built once by {@link skimFilter}.
 */
export interface SkimFilter {
  /** The ids as base58 text (matched against `meta.loadedAddresses`). */
  readonly ids: readonly string[];
  /** The ids as 32 raw bytes (searched for in the wire bytes). */
  readonly raw: readonly Buffer[];
}

/**
 * The skim filter for `programs` plus the vote program. Default: the account-compression program,
 * whose instructions every Light event format needs (photon.md §1.3: the legacy noop pattern starts at
 * an ACP instruction; the v2 format is ACP `insert_into_queues`).
 * @throws DecodeError on an id that is not a 32-byte base58 value.
 */
export function skimFilter(programs: readonly string[] = [ACCOUNT_COMPRESSION_PROGRAM_ID]): SkimFilter {
  const ids = [...new Set([...programs, VOTE_PROGRAM_ID])];
  const raw = ids.map((id, i) => {
    const b = base58.decode(id, `programs[${i}]`);
    if (b.length !== 32) throw new DecodeError(`programs[${i}]`, `expected a 32-byte program id, got ${JSON.stringify(id)}`);
    return Buffer.from(b);
  });
  return { ids, raw };
}


/** The default filter: the account-compression and vote programs. */
export const DEFAULT_SKIM = skimFilter();

/**
 * The cheap reading of a transaction that cannot matter beyond its signature: one that names none of
 * `filter`'s programs, neither as a 32-byte run anywhere in its wire bytes (every static account key
 * is one) nor in `meta.loadedAddresses`. Such a transaction has no instruction, outer or inner, of the
 * account-compression program, so no Light event (usesCompression false), and no outer instruction of
 * the vote program (isVote false); Photon records it by signature and error alone (photon.md §2.3).
 * Result: `{signature, error, isVote: false, groups: []}`, the same signature, error and vote flag as
 * the full decode, without decoding the message or the inner instructions (on a real block ≈26 µs of
 * ≈28 per transaction). Null — decode in full — for anything else: a program named (a chance match in
 * other bytes only costs the full decode), a message-first (v1) envelope, 128 signatures or more, or a
 * transaction whose signatures, `meta.err`, `meta.innerInstructions` or `meta.loadedAddresses` are not
 * plainly well formed (a v0 message without both `loadedAddresses` lists included), so that the full
 * decode reports them. Not checked here: the message after its version byte, and that
 * `loadedAddresses` has as many entries as the message's lookups select.
 */
export function skimTransaction(bytes: Uint8Array, meta: unknown, filter: SkimFilter): TransactionInfo | null {
  if (bytes.length === 0 || bytes[0]! & 0x80) return null;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return null;
  const m = meta as Record<string, unknown>;
  if (!('err' in m)) return null;
  const inner = m.innerInstructions;
  if (inner !== undefined && inner !== null && !Array.isArray(inner)) return null;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (const needle of filter.raw) if (buf.indexOf(needle) >= 0) return null;
  // Legacy / v0: a signature count below 128 (one byte; more, or a v1 envelope, goes to the full
  // decode), then the 64-byte signatures, then the message.
  const count = bytes[0]!;
  const messageAt = 1 + 64 * count;
  if (count === 0 || bytes.length <= messageAt) return null;
  // A v0 message (version prefix byte) may load accounts, programs included, from lookup tables; they
  // are checked through meta.loadedAddresses, so for v0 both lists must be there (the full decode
  // also checks their sizes against the message's lookups, which this skim does not read).
  const v0 = (bytes[messageAt]! & 0x80) !== 0;
  const loaded = m.loadedAddresses;
  if (loaded === undefined || loaded === null) {
    if (v0) return null;
  } else {
    if (typeof loaded !== 'object') return null;
    for (const list of [(loaded as Record<string, unknown>).writable, (loaded as Record<string, unknown>).readonly]) {
      if (list === undefined && !v0) continue;
      if (!Array.isArray(list)) return null;
      for (const a of list) if (typeof a !== 'string' || filter.ids.includes(a)) return null;
    }
  }
  return {
    signature: base58.encode(bytes.subarray(1, 65)),
    error: m.err === null ? null : JSON.stringify(m.err),
    isVote: false,
    groups: [],
  };
}

