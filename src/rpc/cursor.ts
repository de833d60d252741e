/**
 * Pagination cursors (photon.md §3.1). All are base58 of fixed-layout bytes:
 * - token accounts: mint[32] ‖ hash[32] (64 bytes)
 * - token balances by owner: mint[32]
 * - mint holders: balance u64 LE ‖ owner[32] (40 bytes)
 * - signatures: slot u64 LE ‖ signature[64] (72 bytes)
 * - accounts by owner: the last hash (32 bytes, validated by the params schema)
 * Decoders throw `RpcError.validation` with Photon's messages.
 */
import * as base58 from '../solana/base58.ts';
import type { Bytes32 } from '../types.ts';
import { RpcError } from './errors.ts';

function expectLength(bytes: Uint8Array, n: number): void {
  if (bytes.length !== n) {
    throw RpcError.validation(`Invalid cursor length. Expected ${n}. Received ${bytes.length}.`);
  }
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function u64le(v: bigint): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, v, true);
  return b;
}

function readU64le(b: Uint8Array, offset: number): bigint {
  return new DataView(b.buffer, b.byteOffset, b.byteLength).getBigUint64(offset, true);
}

/** Token-account cursor bytes (64) → `{mint, hash}`. */
export function decodeTokenAccountCursor(bytes: Uint8Array): { mint: Bytes32; hash: Bytes32 } {
  expectLength(bytes, 64);
  return { mint: bytes.slice(0, 32), hash: bytes.slice(32, 64) };
}

/** `{mint, hash}` → base58 token-account cursor. */
export function encodeTokenAccountCursor(mint: Bytes32, hash: Bytes32): string {
  return base58.encode(concat(mint, hash));
}

/** Token-balance cursor bytes (32) → mint. */
export function decodeMintCursor(bytes: Uint8Array): Bytes32 {
  expectLength(bytes, 32);
  return bytes;
}

/** Mint-holder cursor bytes (40: balance u64 LE ‖ owner) → `{balance, owner}`. */
export function decodeHolderCursor(bytes: Uint8Array): { balance: bigint; owner: Bytes32 } {
  expectLength(bytes, 40);
  return { balance: readU64le(bytes, 0), owner: bytes.slice(8, 40) };
}

/** `{balance, owner}` → base58 mint-holder cursor. */
export function encodeHolderCursor(balance: bigint, owner: Bytes32): string {
  return base58.encode(concat(u64le(balance), owner));
}

/** Signature cursor text → `{slot, signature}`; `Invalid cursor {c}` when not base58. */
export function decodeSignatureCursor(cursor: string): { slot: bigint; signature: Uint8Array } {
  const bytes = base58.tryDecode(cursor);
  if (!bytes) throw RpcError.validation(`Invalid cursor ${cursor}`);
  expectLength(bytes, 72);
  return { slot: readU64le(bytes, 0), signature: bytes.slice(8, 72) };
}

/** `{slot, signature}` → base58 signature cursor. */
export function encodeSignatureCursor(slot: bigint, signature: Uint8Array): string {
  return base58.encode(concat(u64le(slot), signature));
}
