/**
 * `parseTransaction`: finds the Light events of one decoded transaction (spec photon.md §1.3,
 * Photon `src/ingester/parser/mod.rs::parse_transaction`). Pure: no state, no I/O.
 *
 * Each instruction group is handed to a chain of {@link GroupParser}s; the first one that
 * claims the group produces its events. Today the chain is just the legacy noop scan. The v2
 * instruction-based format (§1.5, light-event `event_from_light_transaction`) belongs in
 * {@link GROUP_PARSERS} *before* {@link legacyGroupParser}.
 */
import type { InstructionInfo, LightEvent, ParsedTransaction, TransactionInfo } from '../types.ts';
import { ACCOUNT_COMPRESSION_PROGRAM_ID, LIGHT_SYSTEM_PROGRAM_ID, NOOP_PROGRAM_ID, OBSOLETE_LIGHT_PROGRAMS, SYSTEM_PROGRAM_ID } from './constants.ts';
import { DecodeError } from '../solana/errors.ts';
import { decodeMerkleTreeEvent, decodePublicTransactionEvent } from './events.ts';
import { DEFAULT_V2_PROGRAM_IDS, eventsFromLightInstructions } from './parserV2.ts';

/** Options of {@link parseTransaction}. */
export interface ParseOptions {
  /** Account compression program id (Photon CLI `--compression-program-id`); default ACP. */
  compressionProgramId?: string;
}

/** What a {@link GroupParser} gets besides the instructions. */
export interface GroupContext {
  /** Transaction signature, base58 (for error messages). */
  signature: string;
  slot: number;
  /** Index of the group (= its outer instruction) in the transaction. */
  groupIndex: number;
  /** Effective account compression program id. */
  compressionProgramId: string;
}

/**
 * One per-group strategy. `ordered` = `[outer, ...inner]` of the group.
 * - Return `null` when the group is not in this parser's format: the next parser is tried.
 * - Return an array (possibly empty) to claim the group: no later parser sees it.
 * - Throw `DecodeError` only for a hard error that must fail the whole transaction (Photon
 *   fails the block batch). Per §1.3 a v2-parser error counts as "no match", so a v2 parser
 *   must catch its own decode errors and return null.
 * Read `InstructionInfo.data` only where needed: inner-instruction data is base58-decoded
 * lazily on first access (e.g. a v2 parser should look for an ACP `insert_into_queues`
 * discriminator before touching the large Light-system-program data).
 */
export type GroupParser = (ordered: readonly InstructionInfo[], ctx: GroupContext) => LightEvent[] | null;

/**
 * The legacy (v1, noop) scan of §1.3 step 2b; always claims the group. For each index i with at
 * least one instruction after it, where `ordered[i]` is the ACP:
 * 1. Scan forward: NOOP → stop; Solana system program → count (more than 2 → no match); any other
 *    program → no match. A noop after 1 or 2 system instructions carries a
 *    `PublicTransactionEvent`; if it does not decode that is a hard `DecodeError`.
 * 2. If `ordered[i+1]` is the noop, decode a `MerkleTreeEvent` from it (undecodable → ignored,
 *    V1 changelog → hard error).
 * Both checks run for every i, so events come out in instruction order.
 */
export const legacyGroupParser: GroupParser = (ordered, ctx) => {
  const events: LightEvent[] = [];
  const acp = ctx.compressionProgramId;
  const n = ordered.length;
  for (let i = 0; i + 1 < n; i++) {
    if (ordered[i]!.programId !== acp) continue;

    let sys = 0;
    let noop = -1;
    for (let j = i + 1; j < n; j++) {
      const p = ordered[j]!.programId;
      if (p === NOOP_PROGRAM_ID) {
        noop = j;
        break;
      }
      if (p !== SYSTEM_PROGRAM_ID || ++sys > 2) break;
    }
    if (noop >= 0 && sys >= 1 && sys <= 2) {
      const data = ordered[noop]!.data;
      try {
        events.push({ kind: 'publicTransaction', event: decodePublicTransactionEvent(data) });
      } catch (e) {
        throw e instanceof DecodeError ? e.within(where(ctx, noop), ctx.signature) : e;
      }
    }

    const next = ordered[i + 1]!;
    if (next.programId === NOOP_PROGRAM_ID) {
      let ev: LightEvent | null;
      try {
        ev = decodeMerkleTreeEvent(next.data);
      } catch (e) {
        throw e instanceof DecodeError ? e.within(where(ctx, i + 1), ctx.signature) : e;
      }
      if (ev) events.push(ev);
    }
  }
  return events;
};

function where(ctx: GroupContext, index: number): string {
  return `groups[${ctx.groupIndex}].ordered[${index}].data`;
}

/**
 * The instruction-based (v2) parser of §1.5 (src/light/parserV2.ts): claims the group when it holds at
 * least one light-system → Solana system → `insert_into_queues` pattern, with one
 * `batchPublicTransaction` event per pattern. A decode error counts as "no match" (the reference's
 * `Err` → None), so the legacy scan then runs.
 */
export const v2GroupParser: GroupParser = (ordered, ctx) => {
  try {
    const events = eventsFromLightInstructions(ordered, { ...DEFAULT_V2_PROGRAM_IDS, accountCompression: ctx.compressionProgramId });
    return events ? events.map((event): LightEvent => ({ kind: 'batchPublicTransaction', event })) : null;
  } catch (e) {
    if (e instanceof DecodeError) return null;
    throw e;
  }
};

/** The per-group strategies, tried in order (the reference's order): v2 first, then the legacy scan. */
export const GROUP_PARSERS: readonly GroupParser[] = [v2GroupParser, legacyGroupParser];

/**
 * Parses one transaction into its Light events (spec §1.3).
 * - A failed transaction (`tx.error !== null`) yields no events and `usesCompression: false`;
 *   Photon does not record it at all, which the caller decides from `error`.
 * - Otherwise every group `[outer, ...inner]` goes through `parsers` (default
 *   {@link GROUP_PARSERS}); events are returned in instruction order.
 * - `usesCompression` = at least one event; `isVote`/`error` are copied from `tx`. Photon records
 *   the transaction when `!isVote || usesCompression`.
 * @throws DecodeError (with `signature`) when a noop's PublicTransactionEvent does not decode or a
 *   MerkleTreeEvent is a V1 changelog — Photon fails the whole block batch in both cases.
 */
export function parseTransaction(
  tx: TransactionInfo,
  slot: number,
  options: ParseOptions = {},
  parsers: readonly GroupParser[] = GROUP_PARSERS,
): ParsedTransaction {
  const events: LightEvent[] = [];
  if (tx.error === null) {
    const compressionProgramId = options.compressionProgramId ?? ACCOUNT_COMPRESSION_PROGRAM_ID;
    for (let g = 0; g < tx.groups.length; g++) {
      const group = tx.groups[g]!;
      const ordered = group.inner.length === 0 ? [group.outer] : [group.outer, ...group.inner];
      if (ordered.length < 2) continue; // every format needs at least two instructions
      const ctx: GroupContext = { signature: tx.signature, slot, groupIndex: g, compressionProgramId };
      for (const parse of parsers) {
        const found = parse(ordered, ctx);
        if (found !== null) {
          for (const e of found) events.push(e);
          break;
        }
      }
    }
  }
  return {
    signature: tx.signature,
    slot,
    error: tx.error,
    isVote: tx.isVote,
    usesCompression: events.length > 0,
    events,
  };
}

/**
 * Which Light program a transaction invokes (any outer or inner instruction), as the `program` label of
 * `refract_ingest_unparsed_light_transactions_total`: 'light-system' (the light-system program), else
 * 'account-compression' (`compressionProgramId`, default the ACP), else the label of a retired id
 * ('obsolete-light-system' / 'obsolete-account-compression'), else null. Reads program ids only.
 */
export function lightProgramLabel(tx: TransactionInfo, compressionProgramId: string = ACCOUNT_COMPRESSION_PROGRAM_ID): string | null {
  let acp = false;
  let obsolete: string | null = null;
  for (const g of tx.groups) {
    for (const ix of g.inner.length ? [g.outer, ...g.inner] : [g.outer]) {
      const p = ix.programId;
      if (p === LIGHT_SYSTEM_PROGRAM_ID) return 'light-system';
      if (p === compressionProgramId) acp = true;
      else if (obsolete === null || obsolete === 'obsolete-account-compression') obsolete = OBSOLETE_LIGHT_PROGRAMS[p] ?? obsolete;
    }
  }
  return acp ? 'account-compression' : obsolete;
}
