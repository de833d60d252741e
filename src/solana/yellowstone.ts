/**
 * Yellowstone (Dragon's Mouth) gRPC messages → Refract's types: a `SubscribeUpdateTransactionInfo`
 * becomes the same {@link TransactionInfo} that decode.ts makes of that transaction in getBlock JSON,
 * a `SubscribeUpdateBlock` / `SubscribeUpdateBlockMeta` the same {@link BlockHeader} / {@link BlockInfo}
 * (test/grpc.convert.test.ts checks both on fixtures). Pure, no I/O; the message types come from the
 * codecs of `@triton-one/yellowstone-grpc` (types only here).
 *
 * What the JSON path reads, and where it is in the protobuf messages:
 * - signature: `transaction.signatures[0]` (64 bytes; the update's `signature` is the same value);
 * - error: `meta.err.err` is the bincode serialisation of agave's `TransactionError`, turned here into
 *   the JSON value the RPC shows (`{"InstructionError":[0,{"Custom":6000}]}`; see
 *   {@link transactionErrorToJson}), then `JSON.stringify`ed as decode.ts does with `meta.err`;
 * - account list: `message.accountKeys` (static, 32 bytes each), then `meta.loadedWritableAddresses`,
 *   then `meta.loadedReadonlyAddresses` (only when the message has address-table lookups, whose index
 *   counts they must match, as decode.ts checks);
 * - outer instructions: `message.instructions` (`programIdIndex`, `accounts` as bytes, `data`);
 *   inner ones: `meta.innerInstructions[k]` appended to group `index`;
 * - the skim (skim.ts): a transaction whose account list names none of the skim's programs is reduced to
 *   `{signature, error, isVote: false, groups: []}`, as `decodeBlockJson` does. decode.ts looks for the
 *   32 bytes anywhere in the wire transaction, so a transaction that carries a program id only inside
 *   instruction data (by chance) is decoded in full there and skimmed here: same signature, error and
 *   vote flag, and neither can hold a Light event (the parser reads instructions of those programs).
 * Instruction data is copied out of the protobuf buffer into a plain Uint8Array (the decoder's views are
 * Buffers over the whole update: they would keep it alive, and `postMessage` would copy it whole).
 */
import type {
  SubscribeUpdateBlock,
  SubscribeUpdateBlockMeta,
  SubscribeUpdateTransactionInfo,
} from '@triton-one/yellowstone-grpc';
import type { BlockHeader, BlockInfo, InstructionGroup, InstructionInfo, TransactionInfo } from '../types.ts';
import * as base58 from './base58.ts';
import { DecodeError } from './errors.ts';
import { VOTE_PROGRAM_ID } from './programIds.ts';
import { DEFAULT_SKIM, type SkimFilter } from './skim.ts';

// ---------------------------------------------------------------------------------------------
// TransactionError: bincode ↔ the RPC's JSON value
// ---------------------------------------------------------------------------------------------

/**
 * agave `TransactionError` variants by bincode tag (u32), as the Yellowstone client's own decoder
 * (`txErrDecode`, agave 3.x types) names them. `u8` / `{account_index: u8}` / `ix` mark the variants
 * with data; the others are units (JSON: the bare name).
 */
const TX_ERRORS: readonly (string | [string, 'u8' | 'account_index' | 'ix'])[] = [
  'AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound', 'InsufficientFundsForFee',
  'InvalidAccountForFee', 'AlreadyProcessed', 'BlockhashNotFound', ['InstructionError', 'ix'], 'CallChainTooDeep',
  'MissingSignatureForFee', 'InvalidAccountIndex', 'SignatureFailure', 'InvalidProgramForExecution', 'SanitizeFailure',
  'ClusterMaintenance', 'AccountBorrowOutstanding', 'WouldExceedMaxBlockCostLimit', 'UnsupportedVersion', 'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit', 'WouldExceedAccountDataBlockLimit', 'TooManyAccountLocks', 'AddressLookupTableNotFound',
  'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData', 'InvalidAddressLookupTableIndex', 'InvalidRentPayingAccount',
  'WouldExceedMaxVoteCostLimit', 'WouldExceedAccountDataTotalLimit', ['DuplicateInstruction', 'u8'],
  ['InsufficientFundsForRent', 'account_index'], 'MaxLoadedAccountsDataSizeExceeded', 'InvalidLoadedAccountsDataSizeLimit',
  'ResanitizationNeeded', ['ProgramExecutionTemporarilyRestricted', 'account_index'], 'UnbalancedTransaction',
  'ProgramCacheHitMaxLimit', 'CommitCancelled',
];

/** agave `InstructionError` variants by bincode tag; `Custom` carries a u32, `BorshIoError` a string before agave 3. */
const IX_ERRORS: readonly string[] = [
  'GenericError', 'InvalidArgument', 'InvalidInstructionData', 'InvalidAccountData', 'AccountDataTooSmall', 'InsufficientFunds',
  'IncorrectProgramId', 'MissingRequiredSignature', 'AccountAlreadyInitialized', 'UninitializedAccount', 'UnbalancedInstruction',
  'ModifiedProgramId', 'ExternalAccountLamportSpend', 'ExternalAccountDataModified', 'ReadonlyLamportChange', 'ReadonlyDataModified',
  'DuplicateAccountIndex', 'ExecutableModified', 'RentEpochModified', 'NotEnoughAccountKeys', 'AccountDataSizeChanged',
  'AccountNotExecutable', 'AccountBorrowFailed', 'AccountBorrowOutstanding', 'DuplicateAccountOutOfSync', 'Custom', 'InvalidError',
  'ExecutableDataModified', 'ExecutableLamportChange', 'ExecutableAccountNotRentExempt', 'UnsupportedProgramId', 'CallDepth',
  'MissingAccount', 'ReentrancyNotAllowed', 'MaxSeedLengthExceeded', 'InvalidSeeds', 'InvalidRealloc', 'ComputationalBudgetExceeded',
  'PrivilegeEscalation', 'ProgramEnvironmentSetupFailure', 'ProgramFailedToComplete', 'ProgramFailedToCompile', 'Immutable',
  'IncorrectAuthority', 'BorshIoError', 'AccountNotRentExempt', 'InvalidAccountOwner', 'ArithmeticOverflow', 'UnsupportedSysvar',
  'IllegalOwner', 'MaxAccountsDataAllocationsExceeded', 'MaxAccountsExceeded', 'MaxInstructionTraceLengthExceeded',
  'BuiltinProgramsMustConsumeComputeUnits',
];
const IX_CUSTOM = IX_ERRORS.indexOf('Custom');
const IX_BORSH_IO = IX_ERRORS.indexOf('BorshIoError');

/**
 * The JSON value the RPC shows for a bincode-serialised agave `TransactionError` (Yellowstone's
 * `TransactionStatusMeta.err.err`): `"AccountInUse"`, `{"InstructionError":[2,{"Custom":6000}]}`,
 * `{"InsufficientFundsForRent":{"account_index":3}}`, … A `BorshIoError` with a message (agave before 3.0)
 * reads as `{"BorshIoError":"<message>"}`.
 * @throws DecodeError(`meta.err`) on an unknown variant, a truncated value or trailing bytes: a variant
 * newer than this table must not become a wrong error string.
 */
export function transactionErrorToJson(bytes: Uint8Array): unknown {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const need = (n: number) => {
    if (at + n > bytes.length) throw new DecodeError('meta.err', `truncated bincode TransactionError (${bytes.length} bytes)`);
  };
  const u8 = () => (need(1), bytes[at++]!);
  const u32 = () => (need(4), (at += 4), view.getUint32(at - 4, true));
  const tag = u32();
  const variant = TX_ERRORS[tag];
  if (variant === undefined) throw new DecodeError('meta.err', `unknown TransactionError variant ${tag}`);
  let value: unknown;
  if (typeof variant === 'string') value = variant;
  else {
    const [name, kind] = variant;
    if (kind === 'u8') value = { [name]: u8() };
    else if (kind === 'account_index') value = { [name]: { account_index: u8() } };
    else {
      const index = u8();
      const ixTag = u32();
      const ixName = IX_ERRORS[ixTag];
      if (ixName === undefined) throw new DecodeError('meta.err', `unknown InstructionError variant ${ixTag}`);
      let ix: unknown = ixName;
      if (ixTag === IX_CUSTOM) ix = { Custom: u32() };
      else if (ixTag === IX_BORSH_IO && bytes.length - at >= 8) {
        const len = Number(view.getBigUint64(at, true));
        at += 8;
        need(len);
        ix = { BorshIoError: Buffer.from(bytes.subarray(at, at + len)).toString('utf8') };
        at += len;
      }
      value = { [name]: [index, ix] };
    }
  }
  if (at !== bytes.length) throw new DecodeError('meta.err', `${bytes.length - at} bytes after the TransactionError`);
  return value;
}

/**
 * The bincode serialisation of the agave `TransactionError` whose RPC JSON value is `err` (the inverse
 * of {@link transactionErrorToJson}; for servers and tests). `{"BorshIoError": "…"}` keeps its message.
 * @throws Error on a value that names no known variant.
 */
export function transactionErrorFromJson(err: unknown): Uint8Array {
  const out: number[] = [];
  const u32 = (n: number) => out.push(n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff);
  const bad = () => new Error(`not a TransactionError JSON value: ${JSON.stringify(err)}`);
  const tagOf = (name: string) => TX_ERRORS.findIndex((v) => (typeof v === 'string' ? v : v[0]) === name);
  if (typeof err === 'string') {
    const tag = tagOf(err);
    if (tag < 0 || typeof TX_ERRORS[tag] !== 'string') throw bad();
    u32(tag);
    return Uint8Array.from(out);
  }
  if (typeof err !== 'object' || err === null || Array.isArray(err)) throw bad();
  const keys = Object.keys(err);
  if (keys.length !== 1) throw bad();
  const name = keys[0]!;
  const v = (err as Record<string, unknown>)[name];
  const tag = tagOf(name);
  const variant = TX_ERRORS[tag];
  if (variant === undefined || typeof variant === 'string') throw bad();
  u32(tag);
  const byte = (x: unknown) => {
    if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > 255) throw bad();
    out.push(x);
  };
  if (variant[1] === 'u8') byte(v);
  else if (variant[1] === 'account_index') byte((v as { account_index?: unknown } | null)?.account_index);
  else {
    if (!Array.isArray(v) || v.length !== 2) throw bad();
    byte(v[0]);
    const ix = v[1];
    if (typeof ix === 'string') {
      const ixTag = IX_ERRORS.indexOf(ix);
      if (ixTag < 0 || ixTag === IX_CUSTOM) throw bad();
      u32(ixTag);
    } else if (typeof ix === 'object' && ix !== null && 'Custom' in ix) {
      const code = (ix as { Custom: unknown }).Custom;
      if (typeof code !== 'number' || !Number.isInteger(code) || code < 0 || code > 0xffff_ffff) throw bad();
      u32(IX_CUSTOM);
      u32(code);
    } else if (typeof ix === 'object' && ix !== null && typeof (ix as { BorshIoError?: unknown }).BorshIoError === 'string') {
      u32(IX_BORSH_IO);
      const text = Buffer.from((ix as { BorshIoError: string }).BorshIoError, 'utf8');
      u32(text.length);
      u32(0);
      out.push(...text);
    } else throw bad();
  }
  return Uint8Array.from(out);
}

// ---------------------------------------------------------------------------------------------
// Transactions and blocks
// ---------------------------------------------------------------------------------------------

/** 32-byte keys as base58 (memoised: programs and trees recur). @throws DecodeError on another length. */
function keysOf(list: readonly Uint8Array[], field: string, sig: string): string[] {
  const out = new Array<string>(list.length);
  for (let i = 0; i < list.length; i++) {
    const k = list[i]!;
    if (k.length !== 32) throw new DecodeError(`${field}[${i}]`, `expected a 32-byte key, got ${k.length} bytes`, { signature: sig });
    out[i] = base58.encode32(k);
  }
  return out;
}

/** The accounts at the indices `idx` (bytes) of `accounts`. @throws DecodeError(`field`) on an index out of range. */
function resolve(accounts: readonly string[], idx: Uint8Array, field: string, sig: string): string[] {
  const out = new Array<string>(idx.length);
  for (let i = 0; i < idx.length; i++) {
    const a = accounts[idx[i]!];
    if (a === undefined) throw new DecodeError(field, `account index ${idx[i]} out of range (${accounts.length} accounts)`, { signature: sig });
    out[i] = a;
  }
  return out;
}

/**
 * The {@link TransactionInfo} of a Yellowstone transaction: the same value `decodeTransactionEnvelope`
 * (decode.ts) gives for that transaction's getBlock JSON with the same `skim` (module comment).
 * @param field prefix of error fields (e.g. `transactions[3]`).
 * @param skim as for `decodeBlockJson` (default: the account-compression and vote programs); null: decode in full.
 * @throws DecodeError for a missing or malformed part (a message a real server never sends).
 */
export function transactionFromYellowstone(info: SubscribeUpdateTransactionInfo, field = '', skim: SkimFilter | null = DEFAULT_SKIM): TransactionInfo {
  const at = (f: string): string => (field ? `${field}.${f}` : f);
  const tx = info.transaction;
  const msg = tx?.message;
  const sigBytes = tx?.signatures[0] ?? info.signature;
  if (!sigBytes || sigBytes.length !== 64) throw new DecodeError(at('transaction.signatures'), 'missing the first 64-byte signature');
  const sig = base58.encode(sigBytes);
  if (!msg) throw new DecodeError(at('transaction.message'), 'missing', { signature: sig });
  const meta = info.meta;
  if (!meta) throw new DecodeError(at('meta'), 'missing', { signature: sig });
  let error: string | null = null;
  if (meta.err !== undefined) {
    try {
      error = JSON.stringify(transactionErrorToJson(meta.err.err));
    } catch (e) {
      throw e instanceof DecodeError ? e.within(field || null, sig) : e;
    }
  }

  let accounts = keysOf(msg.accountKeys, at('transaction.message.accountKeys'), sig);
  if (msg.addressTableLookups.length > 0) {
    let writable = 0;
    let readonly = 0;
    for (const l of msg.addressTableLookups) {
      writable += l.writableIndexes.length;
      readonly += l.readonlyIndexes.length;
    }
    if (meta.loadedWritableAddresses.length !== writable || meta.loadedReadonlyAddresses.length !== readonly) {
      throw new DecodeError(
        at('meta.loadedAddresses'),
        `has ${meta.loadedWritableAddresses.length} writable + ${meta.loadedReadonlyAddresses.length} readonly addresses, the message's lookups select ${writable} + ${readonly}`,
        { signature: sig },
      );
    }
    accounts = accounts.concat(
      keysOf(meta.loadedWritableAddresses, at('meta.loadedWritableAddresses'), sig),
      keysOf(meta.loadedReadonlyAddresses, at('meta.loadedReadonlyAddresses'), sig),
    );
  }
  if (skim && !accounts.some((a) => skim.ids.includes(a))) return { signature: sig, error, isVote: false, groups: [] };

  let isVote = false;
  const groups = new Array<InstructionGroup>(msg.instructions.length);
  for (let k = 0; k < msg.instructions.length; k++) {
    const ix = msg.instructions[k]!;
    const f = at(`transaction.message.instructions[${k}]`);
    const programId = accounts[ix.programIdIndex];
    if (programId === undefined) {
      throw new DecodeError(`${f}.programIdIndex`, `account index ${ix.programIdIndex} out of range (${accounts.length} accounts)`, { signature: sig });
    }
    if (programId === VOTE_PROGRAM_ID) isVote = true;
    const outer: InstructionInfo = { programId, data: new Uint8Array(ix.data), accounts: resolve(accounts, ix.accounts, `${f}.accounts`, sig) };
    groups[k] = { outer, inner: [] };
  }
  if (!meta.innerInstructionsNone) {
    for (let g = 0; g < meta.innerInstructions.length; g++) {
      const entry = meta.innerInstructions[g]!;
      const gf = at(`meta.innerInstructions[${g}]`);
      const group = groups[entry.index];
      if (group === undefined) throw new DecodeError(`${gf}.index`, `${entry.index} out of range (${groups.length} outer instructions)`, { signature: sig });
      for (let i = 0; i < entry.instructions.length; i++) {
        const ui = entry.instructions[i]!;
        const f = `${gf}.instructions[${i}]`;
        const programId = accounts[ui.programIdIndex];
        if (programId === undefined) {
          throw new DecodeError(`${f}.programIdIndex`, `account index ${ui.programIdIndex} out of range (${accounts.length} accounts)`, { signature: sig });
        }
        group.inner.push({ programId, data: new Uint8Array(ui.data), accounts: resolve(accounts, ui.accounts, `${f}.accounts`, sig) });
      }
    }
  }
  return { signature: sig, error, isVote, groups };
}

/** A u64 carried as a decimal string (ts-proto `forceLong=string`) as a safe integer. @throws DecodeError. */
function u64(v: string | undefined, field: string): number {
  const n = Number(v);
  if (v === undefined || v === '' || !Number.isSafeInteger(n) || n < 0) throw new DecodeError(field, `expected a u64 below 2^53, got ${JSON.stringify(v)}`);
  return n;
}

/**
 * The {@link BlockHeader} of a Yellowstone block or block meta: slot, `parentSlot`, `blockTime`
 * (`blockTime.timestamp`; 0 when absent), `blockHeight` (0 when absent), `blockhash`, and
 * `previousBlockhash` = `parentBlockhash`. The same values getBlock gives for the slot.
 * @throws DecodeError on a malformed number or hash.
 */
export function blockHeaderFromYellowstone(m: SubscribeUpdateBlockMeta | SubscribeUpdateBlock): BlockHeader {
  const slot = u64(m.slot, 'slot');
  const header: BlockHeader = {
    slot,
    parentSlot: u64(m.parentSlot, 'parentSlot'),
    blockTime: m.blockTime ? u64(m.blockTime.timestamp, 'blockTime') : 0,
    blockHeight: m.blockHeight ? u64(m.blockHeight.blockHeight, 'blockHeight') : 0,
    blockhash: m.blockhash,
    previousBlockhash: m.parentBlockhash,
  };
  for (const f of ['blockhash', 'previousBlockhash'] as const) {
    if (base58.tryDecode(header[f])?.length !== 32) throw new DecodeError(f, `expected 32 bytes, got ${JSON.stringify(header[f])}`);
  }
  return header;
}

/**
 * A {@link BlockInfo} from a block header and the block's transactions as Yellowstone sent them (a
 * `SubscribeUpdateBlock`'s list, or the `SubscribeUpdateTransaction`s of the slot): sorted by their
 * index in the block, converted with {@link transactionFromYellowstone}. Unlike `decodeBlockJson`, a
 * transaction that does not convert fails the whole block (a real server sends none such, and the
 * caller can read the block over RPC instead): the DecodeError is thrown, its field prefixed
 * `transactions[<index in block>]`.
 */
export function blockFromYellowstone(header: BlockHeader, txs: readonly SubscribeUpdateTransactionInfo[], skim: SkimFilter | null = DEFAULT_SKIM): BlockInfo {
  const sorted = txs.length > 1 ? [...txs].sort((a, b) => Number(a.index) - Number(b.index)) : txs;
  const transactions = sorted.map((t) => transactionFromYellowstone(t, `transactions[${t.index}]`, skim));
  return { ...header, transactions };
}
