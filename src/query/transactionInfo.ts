/**
 * The compression info of one Solana transaction (photon.md §3.1 getTransactionWithCompressionInfo):
 * the accounts it opened, re-parsed from the transaction itself at its own slot, and the accounts it
 * closed, read from the store.
 */
import type { TreeRegistry } from '../config/trees.ts';
import { parseTransaction } from '../light/parser.ts';
import { type TokenData, isTokenAccount, parseTokenData } from '../light/tokenData.ts';
import { DecodeError } from '../solana/errors.ts';
import { decodeTransactionJson } from '../solana/decode.ts';
import { type OutputAccount, TransactionRejected, deriveStateUpdate } from '../state/stateUpdate.ts';
import type { AccountRecord } from '../store/records.ts';
import type { ReadView } from '../store/store.ts';
import type { Bytes32 } from '../types.ts';
import { QueryError, recordNotFound } from './errors.ts';

/** A closed (input) account as stored, with its token data when it is a token account. */
export interface ClosedAccount {
  account: AccountRecord;
  token: TokenData | null;
  /**
   * Batched (StateV2) tree accounts: the nullifier the input queue holds for this account,
   * Poseidon(accountHash, leafIndex as 32-byte BE, txHash) (photon.md §1.5), kept after its
   * BatchNullify. Null for V1 trees (the API shows 1111…1111 there, as Photon does).
   */
  nullifier: Bytes32 | null;
  /** Batched tree accounts: the spending transaction's tx hash from its insert_into_queues; null for V1 trees. */
  txHash: Bytes32 | null;
}

/** A parsed transaction's compression effects. */
export interface ParsedCompressionInfo {
  /** The transaction's own slot (`slot` of the getTransaction result). */
  slot: number;
  /** Output accounts in event order; `slotCreated` = `slot`. Outputs of unknown trees are left out. */
  opened: OutputAccount[];
  /** Input account hashes in event order. */
  inputs: Bytes32[];
}

/**
 * Decodes a `getTransaction` result (base64 encoding, photon.md §1.2) and parses its Light events at
 * the transaction's own slot. A failed transaction has no effects (empty lists).
 * Throws QueryError `Unexpected` (→ `Internal server error`) naming the signature when the JSON does
 * not decode or the events are inconsistent (the indexer would reject the transaction too).
 */
export function parseCompressionInfo(json: unknown, registry: TreeRegistry): ParsedCompressionInfo {
  let decoded: ReturnType<typeof decodeTransactionJson>;
  try {
    decoded = decodeTransactionJson(json);
  } catch (err) {
    if (err instanceof DecodeError) throw new QueryError('Unexpected', `getTransaction result does not decode: ${err.message}`);
    throw err;
  }
  try {
    const u = deriveStateUpdate(parseTransaction(decoded.transaction, decoded.slot), registry);
    return { slot: decoded.slot, opened: u.outputs, inputs: u.inputs };
  } catch (err) {
    if (err instanceof TransactionRejected) throw new QueryError('Unexpected', err.message);
    if (err instanceof DecodeError) throw new QueryError('Unexpected', `transaction ${decoded.transaction.signature}: ${err.message}`);
    throw err;
  }
}

/**
 * The stored rows of `inputs` (in input order), which must exist and be spent, as Photon looks them
 * up with `spent = true`, with the nullifier and tx hash a batched tree's input queue holds for each
 * (null for V1 trees). A missing (or not yet spent, i.e. not yet indexed) input is RecordNotFound
 * `Account not found`.
 */
export function closedAccounts(r: ReadView, inputs: readonly Bytes32[]): ClosedAccount[] {
  return inputs.map((h) => {
    const a = r.account(h);
    if (!a || !a.spent) throw recordNotFound('Account not found');
    return { account: a, token: isTokenAccount(a) ? parseTokenData(a.data!.data) : null, nullifier: a.v2?.nullifier ?? null, txHash: a.v2?.txHash ?? null };
  });
}
