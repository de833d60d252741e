/**
 * A minimal Borsh reader over a `Uint8Array` (https://borsh.io): little-endian integers,
 * `bool` = one byte 0/1, `Option<T>` = tag byte 0/1 then T, `Vec<T>` = u32 LE length then the items,
 * fixed arrays = raw bytes. Every read names its field so a short buffer fails with
 * `DecodeError(<field>, "unexpected end of data at offset N (need K bytes, M left)")`.
 */
import { DecodeError } from '../solana/errors.ts';

/** Sequential Borsh reader. `offset` is the next byte to read. */
export class BorshReader {
  offset: number;
  readonly bytes: Uint8Array;
  private readonly view: DataView;

  /** @param bytes the buffer; @param offset where to start (default 0). */
  constructor(bytes: Uint8Array, offset = 0) {
    this.bytes = bytes;
    this.offset = offset;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Bytes not yet read. */
  get remaining(): number {
    return this.bytes.length - this.offset;
  }

  /** Throws unless `n` more bytes are available. */
  need(n: number, field: string): void {
    if (this.offset + n > this.bytes.length) {
      throw new DecodeError(
        field,
        `unexpected end of data at offset ${this.offset} (need ${n} byte${n === 1 ? '' : 's'}, ${this.bytes.length - this.offset} left)`,
        { offset: this.offset },
      );
    }
  }

  /** u8. */
  u8(field: string): number {
    this.need(1, field);
    return this.bytes[this.offset++]!;
  }

  /** u16 LE. */
  u16(field: string): number {
    this.need(2, field);
    const v = this.view.getUint16(this.offset, true);
    this.offset += 2;
    return v;
  }

  /** u32 LE. */
  u32(field: string): number {
    this.need(4, field);
    const v = this.view.getUint32(this.offset, true);
    this.offset += 4;
    return v;
  }

  /** u64 LE as a bigint (Rust `usize` is serialised as u64 too). */
  u64(field: string): bigint {
    this.need(8, field);
    const v = this.view.getBigUint64(this.offset, true);
    this.offset += 8;
    return v;
  }

  /** `bool`: one byte, 0 or 1; any other value is an error (as in borsh-rs). */
  bool(field: string): boolean {
    const at = this.offset;
    const b = this.u8(field);
    if (b > 1) throw new DecodeError(field, `invalid bool ${b} at offset ${at}`, { offset: at });
    return b === 1;
  }

  /** `[u8; n]`, copied out of the buffer. */
  fixed(n: number, field: string): Uint8Array {
    this.need(n, field);
    const out = this.bytes.slice(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }

  /** `[u8; 32]` (a pubkey or hash), copied. */
  bytes32(field: string): Uint8Array {
    return this.fixed(32, field);
  }

  /** `Vec<u8>`, copied. */
  byteVec(field: string): Uint8Array {
    const n = this.u32(field);
    return this.fixed(n, field);
  }

  /** `Option<T>`: tag 0 → null, 1 → `read(this)`, anything else is an error. */
  option<T>(field: string, read: (r: BorshReader) => T): T | null {
    const at = this.offset;
    const tag = this.u8(field);
    if (tag === 0) return null;
    if (tag !== 1) throw new DecodeError(field, `invalid Option tag ${tag} at offset ${at}`, { offset: at });
    return read(this);
  }

  /**
   * `Vec<T>`: u32 LE length, then `read` per item. A length that cannot fit in the remaining
   * bytes (each item takes at least `minItemSize` bytes) is rejected before allocating.
   */
  vec<T>(field: string, read: (r: BorshReader, index: number) => T, minItemSize = 1): T[] {
    const at = this.offset;
    const n = this.u32(field);
    if (n * minItemSize > this.remaining) {
      throw new DecodeError(field, `Vec length ${n} at offset ${at} exceeds the ${this.remaining} bytes left`, { offset: at });
    }
    const out = new Array<T>(n);
    for (let i = 0; i < n; i++) out[i] = read(this, i);
    return out;
  }

  /** Throws unless every byte was consumed. */
  expectEnd(field: string): void {
    if (this.offset !== this.bytes.length) {
      throw new DecodeError(field, `${this.bytes.length - this.offset} trailing bytes at offset ${this.offset}`, {
        offset: this.offset,
      });
    }
  }
}
