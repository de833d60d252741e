/**
 * Decoding of Solana RPC results into {@link TransactionInfo} / {@link BlockInfo} (spec photon.md
 * §1.2, Photon `src/ingester/typedefs/block_info.rs`): the JSON envelope of `getTransaction` and
 * `getBlock` (`[<payload>, "base64"]` plus `meta`), account resolution through
 * `meta.loadedAddresses`, and the inner instructions. Pure, no I/O.
 *
 * The parts it builds on, one job each, in src/solana/:
 * - wire.ts: the wire-transaction codec (legacy, v0, v1 envelope) → keys and compiled instructions;
 * - skim.ts: the cheap signature-and-error reading of transactions that name none of the programs
 *   that matter;
 * - json.ts: checked reads of JSON values, strict base64;
 * - base58.ts: all base58. Inner-instruction data is validated eagerly and converted on first read
 *   (see `lazyInstruction`): instructions nobody reads cost no conversion.
 */
import type { BlockInfo, InstructionGroup, InstructionInfo, TransactionInfo, UndecodableTransaction } from '../types.ts';
import * as base58 from './base58.ts';
import { DecodeError } from './errors.ts';
import { asArray, asObject, asString, asUint, base64Decode, describe } from './json.ts';
import { VOTE_PROGRAM_ID } from './programIds.ts';
import { DEFAULT_SKIM, skimTransaction, type SkimFilter } from './skim.ts';
import { decodeWireTransaction, MSG, type WireTransaction } from './wire.ts';

/** The accounts at `idx` of `accounts`. @throws DecodeError(`field`) on an index out of range. */
function resolve(accounts: string[], idx: ArrayLike<number>, field: string, sig: string): string[] {
  const out = new Array<string>(idx.length);
  for (let i = 0; i < idx.length; i++) {
    const a = accounts[idx[i]!];
    if (a === undefined) {
      throw new DecodeError(field, `account index ${idx[i]} out of range (${accounts.length} accounts)`, { signature: sig });
    }
    out[i] = a;
  }
  return out;
}

/**
 * An inner instruction whose base58 `data` was validated but is converted on first read and then
 * cached. `data` is an own enumerable accessor, so spreading, `structuredClone` and
 * `postMessage` see the bytes.
 */
function lazyInstruction(programId: string, accounts: string[], dataB58: string): InstructionInfo {
  let bytes: Uint8Array | undefined;
  return {
    programId,
    accounts,
    get data(): Uint8Array {
      return (bytes ??= base58.decodeValidated(dataB58));
    },
    set data(v: Uint8Array) {
      bytes = v;
    },
  };
}

/**
 * Decodes the `[<payload>, <encoding>]` pair of a JSON transaction (`base64`, or `base58` for
 * old nodes) plus its `meta` into a {@link TransactionInfo} (spec §1.2):
 * - `signature` = first signature; `error` = `JSON.stringify(meta.err)` or null;
 * - account list = static keys, then `meta.loadedAddresses.writable`, then `.readonly` (only when
 *   the message has address-table lookups; their sizes must match the lookups);
 * - one group per outer instruction; `meta.innerInstructions[k].instructions` appended to group
 *   `meta.innerInstructions[k].index` in order; inner `data` is base58;
 * - `isVote` = any outer instruction owned by the vote program.
 * Inner-instruction `data` is materialised lazily (see {@link lazyInstruction}); every string is
 * validated before returning, so a later read cannot fail.
 * @param field prefix for error fields (e.g. `transactions[3]`); '' for a top-level transaction.
 * @param skim when given, a transaction that names none of its programs is only skimmed
 *   (`skimTransaction`: signature and error, `groups` empty) instead of decoded in full.
 * @throws DecodeError for any malformed part; it carries the signature once that is known.
 */
export function decodeTransactionEnvelope(transaction: unknown, meta: unknown, field = '', skim: SkimFilter | null = null): TransactionInfo {
  const at = (f: string): string => (field ? `${field}.${f}` : f);
  const encoded = asArray(transaction, at('transaction'));
  if (encoded.length !== 2) throw new DecodeError(at('transaction'), `expected [payload, encoding], got ${encoded.length} items`);
  const encoding = encoded[1];
  const payload = asString(encoded[0], at('transaction[0]'));
  let bytes: Uint8Array;
  if (encoding === 'base64') bytes = base64Decode(payload, at('transaction[0]'));
  else if (encoding === 'base58') bytes = base58.decode(payload, at('transaction[0]'));
  else throw new DecodeError(at('transaction[1]'), `unsupported encoding ${describe(encoding)} (expected "base64")`);
  if (skim) {
    const skimmed = skimTransaction(bytes, meta, skim);
    if (skimmed) return skimmed;
  }

  let wire: WireTransaction;
  try {
    wire = decodeWireTransaction(bytes);
  } catch (e) {
    throw e instanceof DecodeError && field ? e.within(field) : e;
  }
  const sig = wire.signature;
  const m = asObject(meta, at('meta'), sig);

  if (!('err' in m)) throw new DecodeError(at('meta.err'), 'missing', { signature: sig });
  const error = m.err === null ? null : JSON.stringify(m.err);

  let accounts = wire.staticKeys;
  if (wire.lookups) {
    const loaded = asObject(m.loadedAddresses, at('meta.loadedAddresses'), sig);
    const writable = asArray(loaded.writable, at('meta.loadedAddresses.writable'), sig);
    const readonly = asArray(loaded.readonly, at('meta.loadedAddresses.readonly'), sig);
    if (writable.length !== wire.lookups.writable || readonly.length !== wire.lookups.readonly) {
      throw new DecodeError(
        at('meta.loadedAddresses'),
        `has ${writable.length} writable + ${readonly.length} readonly addresses, the message's lookups select ${wire.lookups.writable} + ${wire.lookups.readonly}`,
        { signature: sig },
      );
    }
    accounts = accounts.slice();
    for (const [list, name] of [
      [writable, 'writable'],
      [readonly, 'readonly'],
    ] as const) {
      for (let i = 0; i < list.length; i++) {
        const f = at(`meta.loadedAddresses.${name}[${i}]`);
        const a = asString(list[i], f, sig);
        if (a.length < 32 || a.length > 44 || base58.firstInvalidChar(a) >= 0) {
          throw new DecodeError(f, `not a base58 pubkey: ${JSON.stringify(a.slice(0, 50))}`, { signature: sig });
        }
        accounts.push(a);
      }
    }
  }

  let isVote = false;
  const groups = new Array<InstructionGroup>(wire.instructions.length);
  for (let k = 0; k < wire.instructions.length; k++) {
    const ix = wire.instructions[k]!;
    const programId = accounts[ix.programIndex];
    if (programId === undefined) {
      throw new DecodeError(
        at(`${MSG}.instructions[${k}].programIdIndex`),
        `account index ${ix.programIndex} out of range (${accounts.length} accounts)`,
        { signature: sig },
      );
    }
    if (programId === VOTE_PROGRAM_ID) isVote = true;
    const accs = resolve(accounts, ix.accountIndices, at(`${MSG}.instructions[${k}].accounts`), sig);
    groups[k] = { outer: { programId, data: ix.data, accounts: accs }, inner: [] };
  }

  const innerList = m.innerInstructions;
  if (innerList !== undefined && innerList !== null) {
    const list = asArray(innerList, at('meta.innerInstructions'), sig);
    for (let g = 0; g < list.length; g++) {
      const gf = at(`meta.innerInstructions[${g}]`);
      const entry = asObject(list[g], gf, sig);
      const index = asUint(entry.index, `${gf}.index`, sig);
      const group = groups[index];
      if (group === undefined) {
        throw new DecodeError(`${gf}.index`, `${index} out of range (${groups.length} outer instructions)`, { signature: sig });
      }
      const ixs = asArray(entry.instructions, `${gf}.instructions`, sig);
      for (let i = 0; i < ixs.length; i++) {
        const f = `${gf}.instructions[${i}]`;
        const ui = asObject(ixs[i], f, sig);
        if (ui.data === undefined && ('parsed' in ui || 'program' in ui)) {
          throw new DecodeError(f, 'parsed inner instructions are not supported (request base64 encoding)', { signature: sig });
        }
        const pIndex = asUint(ui.programIdIndex, `${f}.programIdIndex`, sig, 255);
        const programId = accounts[pIndex];
        if (programId === undefined) {
          throw new DecodeError(`${f}.programIdIndex`, `account index ${pIndex} out of range (${accounts.length} accounts)`, {
            signature: sig,
          });
        }
        const idx = asArray(ui.accounts, `${f}.accounts`, sig);
        const accs = new Array<string>(idx.length);
        for (let j = 0; j < idx.length; j++) {
          const a = accounts[asUint(idx[j], `${f}.accounts[${j}]`, sig, 255)];
          if (a === undefined) {
            throw new DecodeError(`${f}.accounts[${j}]`, `account index ${idx[j] as number} out of range (${accounts.length} accounts)`, {
              signature: sig,
            });
          }
          accs[j] = a;
        }
        const data = asString(ui.data, `${f}.data`, sig);
        const bad = base58.firstInvalidChar(data);
        if (bad >= 0) {
          throw new DecodeError(`${f}.data`, `invalid base58 character ${JSON.stringify(data[bad])} at index ${bad}`, {
            signature: sig,
          });
        }
        group.inner.push(lazyInstruction(programId, accs, data));
      }
    }
  }

  return { signature: sig, error, isVote, groups };
}

/**
 * Decodes one `getTransaction` result (`encoding: "base64"`, spec §1.2):
 * `{slot, blockTime, transaction: [<base64>, "base64"], meta: {err, innerInstructions, loadedAddresses, …}, version}`.
 * `blockTime` null/absent → 0.
 * @throws DecodeError naming the field and the reason, e.g. `transaction.message: truncated at byte 311 (…)`.
 */
export function decodeTransactionJson(json: unknown): { slot: number; blockTime: number; transaction: TransactionInfo } {
  const o = asObject(json, 'getTransaction result');
  const slot = asUint(o.slot, 'slot');
  const blockTime = o.blockTime === null || o.blockTime === undefined ? 0 : asUint(o.blockTime, 'blockTime');
  const transaction = decodeTransactionEnvelope(o.transaction, o.meta);
  return { slot, blockTime, transaction };
}

/**
 * Decodes one `getBlock` result (`encoding: "base64"`, `transactionDetails: "full"`):
 * `{parentSlot, blockTime, blockHeight, blockhash, previousBlockhash, transactions: [{transaction, meta, version}]}`.
 * Like Photon, a missing `blockTime` or `blockHeight` is an error and a missing `transactions`
 * list means no transactions. `blockhash`/`previousBlockhash` must be 32-byte base58 values.
 * A transaction that does not decode does not fail the block: it goes to `undecodable` (its
 * DecodeError message, prefixed `transactions[i].`), so the indexer can reject it alone.
 * Transactions that name neither the account-compression nor the vote program (most of a mainnet
 * block that is not votes) are only skimmed for their signature and error (see `skimTransaction`):
 * same result for the indexer, without decoding their messages.
 * @param slot the slot the block was requested for (not part of the result).
 * @param skim which transactions are decoded in full ({@link skimFilter}); null: all of them.
 * @throws DecodeError for the block's own fields.
 */
export function decodeBlockJson(json: unknown, slot: number, skim: SkimFilter | null = DEFAULT_SKIM): BlockInfo {
  const o = asObject(json, 'getBlock result');
  const parentSlot = asUint(o.parentSlot, 'parentSlot');
  const blockTime = asUint(o.blockTime, 'blockTime');
  const blockHeight = asUint(o.blockHeight, 'blockHeight');
  const blockhash = asString(o.blockhash, 'blockhash');
  const previousBlockhash = asString(o.previousBlockhash, 'previousBlockhash');
  for (const [v, f] of [
    [blockhash, 'blockhash'],
    [previousBlockhash, 'previousBlockhash'],
  ] as const) {
    if (base58.decode(v, f).length !== 32) throw new DecodeError(f, `expected 32 bytes, got ${JSON.stringify(v)}`);
  }
  const list = o.transactions === undefined || o.transactions === null ? [] : asArray(o.transactions, 'transactions');
  const transactions: TransactionInfo[] = [];
  let undecodable: UndecodableTransaction[] | undefined;
  for (let i = 0; i < list.length; i++) {
    try {
      const t = asObject(list[i], `transactions[${i}]`);
      transactions.push(decodeTransactionEnvelope(t.transaction, t.meta, `transactions[${i}]`, skim));
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      (undecodable ??= []).push({ index: i, signature: e.signature ?? null, reason: e.message });
    }
  }
  const block: BlockInfo = { slot, parentSlot, blockTime, blockHeight, blockhash, previousBlockhash, transactions };
  if (undecodable) block.undecodable = undecodable;
  return block;
}
