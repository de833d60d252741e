/**
 * Compressed-token account data (photon.md §2.4). Pure.
 */
import { COMPRESSED_TOKEN_PROGRAM_ID } from './constants.ts';
import * as base58 from '../solana/base58.ts';
import type { CompressedAccount } from '../types.ts';

/** Parsed `TokenData` (Borsh): mint, owner, amount u64, delegate Option<Pubkey>, state u8, optional TLV. */
export interface TokenData {
  mint: Uint8Array;
  owner: Uint8Array;
  amount: bigint;
  delegate: Uint8Array | null;
  state: 'initialized' | 'frozen';
  /** All bytes after the TLV tag when the tag is 1 (base64 in JSON), else null. */
  tlv: Uint8Array | null;
}

const TOKEN_PROGRAM_BYTES = base58.decode(COMPRESSED_TOKEN_PROGRAM_ID);
/** Token discriminators as 8 raw bytes: V1 [2,0..], V2 [0..,3], V3/ShaFlat [0..,4]. */
function isTokenDiscriminator(d: Uint8Array): boolean {
  const zeroMid = d[1] === 0 && d[2] === 0 && d[3] === 0 && d[4] === 0 && d[5] === 0 && d[6] === 0;
  if (!zeroMid) return false;
  return (d[0] === 2 && d[7] === 0) || (d[0] === 0 && (d[7] === 3 || d[7] === 4));
}

/** True when the account is a compressed-token account: owner = cToken program and a token discriminator. */
export function isTokenAccount(account: Pick<CompressedAccount, 'owner' | 'data'>): boolean {
  if (!account.data) return false;
  const o = account.owner;
  for (let i = 0; i < 32; i++) if (o[i] !== TOKEN_PROGRAM_BYTES[i]) return false;
  return isTokenDiscriminator(account.data.discriminator);
}

/** Thrown for token data that does not parse; the message names the field. */
export class TokenDataError extends Error {}

/**
 * Parses TokenData bytes: mint 0..32, owner 32..64, amount u64 LE 64..72, delegate Option (1 or 33 B),
 * state u8 (0 initialized, 1 frozen; other values are an error), then optional TLV
 * (missing or tag 0 → null; tag 1 with ≥1 byte left → all remaining bytes). Throws TokenDataError.
 */
export function parseTokenData(data: Uint8Array): TokenData {
  if (data.length < 73) throw new TokenDataError(`token data: ${data.length} bytes, need at least 73`);
  const view = Buffer.from(data.buffer, data.byteOffset, data.length);
  const mint = data.subarray(0, 32);
  const owner = data.subarray(32, 64);
  const amount = view.readBigUInt64LE(64);
  let o = 72;
  let delegate: Uint8Array | null = null;
  const tag = data[o++];
  if (tag === 1) {
    if (data.length < o + 32) throw new TokenDataError('token data: delegate truncated');
    delegate = data.subarray(o, o + 32);
    o += 32;
  } else if (tag !== 0) throw new TokenDataError(`token data: delegate option tag ${tag}`);
  if (o >= data.length) throw new TokenDataError('token data: state missing');
  const s = data[o++];
  if (s !== 0 && s !== 1) throw new TokenDataError(`token data: state ${s} is not 0 (initialized) or 1 (frozen)`);
  let tlv: Uint8Array | null = null;
  if (o < data.length && data[o] === 1 && o + 1 < data.length) tlv = data.subarray(o + 1);
  return { mint, owner, amount, delegate, state: s === 0 ? 'initialized' : 'frozen', tlv };
}
