/**
 * getBlock JSON (`encoding: "base64"`, `transactionDetails: "full"`) → the messages a Yellowstone
 * (Dragon's Mouth) server sends for that block: `SubscribeUpdateTransactionInfo` per transaction (wire
 * message split into its protobuf fields, `meta` converted, the error bincode-serialised) and the block
 * meta. The inverse of yellowstone.ts, for the simulator's gRPC server (src/sim/geyser.ts) and tests.
 * Legacy and v0 messages (the message-first v1 envelope is refused). Pure, no I/O.
 */
import type { SubscribeUpdateBlockMeta, SubscribeUpdateTransactionInfo } from '@triton-one/yellowstone-grpc';
import * as base58 from '../solana/base58.ts';
import { VOTE_PROGRAM_ID } from '../solana/programIds.ts';
import { transactionErrorFromJson } from '../solana/yellowstone.ts';

type Json = Record<string, any>;

/** One transaction of a block, ready for a Yellowstone server's filters. */
export interface GeyserTransaction {
  /** The message as Yellowstone sends it (`index` = position in the block). */
  info: SubscribeUpdateTransactionInfo;
  /** Account keys, base58: static, then loaded writable, then loaded readonly (what filters match). */
  accountKeys: string[];
  /** An outer instruction of the vote program (decode.ts's `isVote`). */
  isVote: boolean;
  /** `meta.err` was not null. */
  failed: boolean;
  /** First signature, base58. */
  signature: string;
}

/** A block as a Yellowstone server holds it. */
export interface GeyserBlock {
  meta: SubscribeUpdateBlockMeta;
  transactions: GeyserTransaction[];
}

/** Reads a wire transaction (legacy or v0), keeping every field Yellowstone's `Transaction` message has. */
function parseWire(bytes: Uint8Array) {
  let at = 0;
  const fail = (what: string): never => {
    throw new Error(`wire transaction: ${what} at byte ${at} of ${bytes.length}`);
  };
  const u8 = () => (at < bytes.length ? bytes[at++]! : fail('truncated'));
  const shortvec = () => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      const b = u8();
      v |= (b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      if (shift >= 14) fail('compact-u16 overflow');
    }
  };
  const take = (n: number) => (at + n <= bytes.length ? bytes.subarray((at += n) - n, at) : fail(`truncated (need ${n})`));
  if (bytes[0]! & 0x80) fail('message-first (v1) envelope not supported');
  const signatures = Array.from({ length: shortvec() }, () => take(64).slice());
  let versioned = false;
  if (bytes[at]! & 0x80) {
    if ((bytes[at]! & 0x7f) !== 0) fail(`message version ${bytes[at]! & 0x7f}`);
    versioned = true;
    at++;
  }
  const header = { numRequiredSignatures: u8(), numReadonlySignedAccounts: u8(), numReadonlyUnsignedAccounts: u8() };
  const accountKeys = Array.from({ length: shortvec() }, () => take(32).slice());
  const recentBlockhash = take(32).slice();
  const instructions = Array.from({ length: shortvec() }, () => {
    const programIdIndex = u8();
    const accounts = take(shortvec()).slice();
    const data = take(shortvec()).slice();
    return { programIdIndex, accounts, data };
  });
  const addressTableLookups = versioned
    ? Array.from({ length: shortvec() }, () => {
        const accountKey = take(32).slice();
        const writableIndexes = take(shortvec()).slice();
        const readonlyIndexes = take(shortvec()).slice();
        return { accountKey, writableIndexes, readonlyIndexes };
      })
    : [];
  if (at !== bytes.length) fail('trailing bytes');
  return { signatures, message: { header, accountKeys, recentBlockhash, instructions, versioned, addressTableLookups } };
}

const str = (v: unknown) => String(v);
const tokenBalance = (b: Json) => ({
  accountIndex: b.accountIndex,
  mint: b.mint,
  uiTokenAmount: {
    uiAmount: b.uiTokenAmount?.uiAmount ?? 0,
    decimals: b.uiTokenAmount?.decimals ?? 0,
    amount: b.uiTokenAmount?.amount ?? '0',
    uiAmountString: b.uiTokenAmount?.uiAmountString ?? '0',
  },
  owner: b.owner ?? '',
  programId: b.programId ?? '',
});

/**
 * A getBlock JSON transaction `{transaction: [<base64>, "base64"], meta, version}` as the Yellowstone
 * message a server streams, at position `index` of its block.
 * @throws Error on anything but a well-formed base64 legacy/v0 transaction with its meta.
 */
export function geyserTransactionFromJson(t: Json, index: number): GeyserTransaction {
  const [payload, encoding] = t.transaction as [string, string];
  if (encoding !== 'base64') throw new Error(`transaction encoding ${encoding} (expected base64)`);
  const wire = parseWire(new Uint8Array(Buffer.from(payload, 'base64')));
  const m = t.meta as Json;
  const loadedW: string[] = m.loadedAddresses?.writable ?? [];
  const loadedR: string[] = m.loadedAddresses?.readonly ?? [];
  const staticKeys = wire.message.accountKeys.map((k) => base58.encode32(k));
  const accountKeys = [...staticKeys, ...loadedW, ...loadedR];
  const isVote = wire.message.instructions.some((ix) => accountKeys[ix.programIdIndex] === VOTE_PROGRAM_ID);
  const inner = m.innerInstructions as Json[] | null | undefined;
  const info: SubscribeUpdateTransactionInfo = {
    signature: wire.signatures[0]!,
    isVote,
    transaction: wire,
    meta: {
      err: m.err === null || m.err === undefined ? undefined : { err: transactionErrorFromJson(m.err) },
      fee: str(m.fee ?? 0),
      preBalances: (m.preBalances ?? []).map(str),
      postBalances: (m.postBalances ?? []).map(str),
      innerInstructions: (inner ?? []).map((g) => ({
        index: g.index,
        instructions: (g.instructions as Json[]).map((ix) => ({
          programIdIndex: ix.programIdIndex,
          accounts: Uint8Array.from(ix.accounts as number[]),
          data: base58.decode(ix.data as string),
          stackHeight: ix.stackHeight ?? undefined,
        })),
      })),
      innerInstructionsNone: inner === null || inner === undefined,
      logMessages: m.logMessages ?? [],
      logMessagesNone: m.logMessages === null || m.logMessages === undefined,
      preTokenBalances: (m.preTokenBalances ?? []).map(tokenBalance),
      postTokenBalances: (m.postTokenBalances ?? []).map(tokenBalance),
      rewards: [],
      loadedWritableAddresses: loadedW.map((a) => base58.decode(a)),
      loadedReadonlyAddresses: loadedR.map((a) => base58.decode(a)),
      returnData: m.returnData ? { programId: base58.decode(m.returnData.programId), data: Buffer.from(m.returnData.data[0], 'base64') } : undefined,
      returnDataNone: !m.returnData,
      computeUnitsConsumed: m.computeUnitsConsumed === undefined || m.computeUnitsConsumed === null ? undefined : str(m.computeUnitsConsumed),
      costUnits: m.costUnits === undefined || m.costUnits === null ? undefined : str(m.costUnits),
    },
    index: str(index),
  };
  return { info, accountKeys, isVote, failed: info.meta!.err !== undefined, signature: base58.encode(wire.signatures[0]!) };
}

/**
 * A getBlock JSON result at `slot` as a Yellowstone server holds it: the block meta (`parentBlockhash` =
 * `previousBlockhash`, `executedTransactionCount` = every transaction of the block, `entriesCount` 0)
 * and every transaction, in block order.
 */
export function geyserBlockFromJson(slot: number, json: Json): GeyserBlock {
  const txs = ((json.transactions ?? []) as Json[]).map((t, i) => geyserTransactionFromJson(t, i));
  const meta: SubscribeUpdateBlockMeta = {
    slot: str(slot),
    blockhash: json.blockhash,
    rewards: { rewards: [], numPartitions: undefined },
    blockTime: json.blockTime === null || json.blockTime === undefined ? undefined : { timestamp: str(json.blockTime) },
    blockHeight: json.blockHeight === null || json.blockHeight === undefined ? undefined : { blockHeight: str(json.blockHeight) },
    parentSlot: str(json.parentSlot),
    parentBlockhash: json.previousBlockhash,
    executedTransactionCount: str(txs.length),
    entriesCount: '0',
  };
  return { meta, transactions: txs };
}
