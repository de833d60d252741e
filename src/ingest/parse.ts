/**
 * The decode and parse stage of ingest: the one module of src/ingest that calls the transaction
 * codecs. The sources (sources/poller.ts, sources/files.ts) decode what they read with
 * {@link decodeBlockJson} / {@link decodeTransactionJson} (src/solana/decode.ts: the wire format and
 * the skim, pure); {@link parseBlocks} finds the Light events of a batch's transactions
 * (src/light/parser.ts `parseTransaction`: the instruction-based parser, then the legacy noop scan;
 * pure). The state rules come next (prepareBatch.ts).
 */
import { lightProgramLabel, parseTransaction } from '../light/parser.ts';
import { DecodeError } from '../solana/errors.ts';
import type { BlockInfo, ParsedTransaction } from '../types.ts';

/**
 * The wire decoders the sources use: getBlock JSON → BlockInfo (undecodable transactions listed in
 * `undecodable`, non-Light ones skimmed), getTransaction JSON → `{slot, blockTime, transaction}`
 * (throws DecodeError). See src/solana/decode.ts.
 */
export { decodeBlockJson, decodeTransactionJson } from '../solana/decode.ts';
export { DecodeError } from '../solana/errors.ts';
export { blockFromYellowstone, blockHeaderFromYellowstone } from '../solana/yellowstone.ts';
export { encode as encodeBase58 } from '../solana/base58.ts';

/**
 * A transaction left out of a batch, and why (a decode failure, a hash mismatch, a refused batch
 * event, …). `signature` is null for a block's transaction whose bytes did not get as far as its
 * signature.
 */
export interface Rejection {
  signature: string | null;
  slot: number;
  reason: string;
}

/** A successful Light transaction that yielded no event. */
export interface UnparsedLightTransaction {
  signature: string;
  slot: number;
  /** 'light-system' | 'account-compression' | 'obsolete-light-system' | 'obsolete-account-compression'. */
  program: string;
}

/** What {@link parseBlocks} found in a batch of blocks. */
export interface ParsedBlocks {
  /** Every transaction that decoded and parsed, in block order (with or without Light events). */
  parsed: ParsedTransaction[];
  /**
   * Transactions that did not decode (the block's `undecodable`, or a DecodeError of the parser),
   * by position: `failuresBefore[i]` came before `parsed[i]` in block order
   * (`failuresBefore[parsed.length]`: after the last one). Sparse.
   */
  failuresBefore: Rejection[][];
  /**
   * Successful transactions that invoke a Light program (light-system, account-compression or a
   * retired id) but yielded no event, in block order, with the program label (`lightProgramLabel`).
   */
  unparsed: UnparsedLightTransaction[];
}

/**
 * Parses every transaction of `blocks` (ascending slots) in the node's order: decoded ones with
 * `parseTransaction`, undecodable ones (and those the parser fails with a DecodeError) recorded at
 * their position. Pure. Throws only on bugs (an error other than DecodeError).
 */
export function parseBlocks(blocks: readonly BlockInfo[]): ParsedBlocks {
  const parsed: ParsedTransaction[] = [];
  const unparsed: UnparsedLightTransaction[] = [];
  const failuresBefore: Rejection[][] = [];
  for (const block of blocks) {
    // The block's transactions in the node's order: decoded ones, and undecodable ones at their index.
    const undecodable = block.undecodable ?? [];
    for (let i = 0, t = 0, u = 0; i < block.transactions.length + undecodable.length; i++) {
      if (undecodable[u]?.index === i) {
        const bad = undecodable[u++]!;
        (failuresBefore[parsed.length] ??= []).push({ signature: bad.signature, slot: block.slot, reason: bad.reason });
        continue;
      }
      const tx = block.transactions[t++]!;
      try {
        const p = parseTransaction(tx, block.slot);
        parsed.push(p);
        if (p.error === null && p.events.length === 0) {
          const program = lightProgramLabel(tx);
          if (program) unparsed.push({ signature: tx.signature, slot: block.slot, program });
        }
      } catch (err) {
        if (!(err instanceof DecodeError)) throw err;
        (failuresBefore[parsed.length] ??= []).push({ signature: tx.signature, slot: block.slot, reason: err.message });
      }
    }
  }
  return { parsed, failuresBefore, unparsed };
}
