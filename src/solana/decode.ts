/**
 * Pure decoding of Solana RPC results into {@link TransactionInfo} / {@link BlockInfo}
 * (spec photon.md §1.2, Photon `src/ingester/typedefs/block_info.rs`). No I/O.
 *
 * - Wire format: the legacy and v0 layouts (signatures first) are declared with @solana/kit's
 *   codec primitives (`getArrayDecoder`, `getStructDecoder`, `getShortU16Decoder`,
 *   `addDecoderSizePrefix`, `getUnionDecoder` over kit's `getTransactionVersionDecoder`…), with
 *   leaf decoders for bytes and fixed-size byte runs built on kit's `createDecoder` and its length
 *   assertions that read in place instead of copying (kit's `getU8Decoder` and
 *   `fixDecoderSize(getBytesDecoder(), n)` allocate per read). Static keys are read as raw 32-byte
 *   arrays and base58-encoded through a memo, never through kit's address decoder: kit's full transaction/message decoders
 *   base58-encode every key twice (~200 µs per transaction). The thin wrappers below only name
 *   what was being read when a codec fails, and add what kit's codecs do not check: canonical
 *   compact-u16 lengths and a length pre-check on runs of fixed-size items, so a truncation
 *   names the whole run ("need 480 bytes for 15 account keys"). The message-first v1 envelope
 *   goes through kit's `getTransactionDecoder` + `getCompiledTransactionMessageDecoder`.
 * - Base58: keys and signatures are encoded by base58Fixed.ts (same text as `bs58`, without its
 *   quadratic loop), keys through a memo (they recur in almost every transaction); other decoding
 *   uses the `bs58` package, long strings base58Long.ts. Inner
 *   instruction data is validated eagerly and converted on first read (see
 *   {@link decodeTransactionEnvelope}): bs58 decoding is quadratic in the string length, so
 *   instructions nobody reads must cost no conversion.
 */
import bs58 from 'bs58';
import { base58EncodeFixed } from './base58Fixed.ts';
import { base58DecodeLong } from './base58Long.ts';

/** Above this many characters inner data is decoded with base58DecodeLong (bs58 is quadratic). */
const LONG_BASE58 = 100;
import {
  addDecoderSizePrefix,
  assertByteArrayHasEnoughBytesForCodec,
  assertByteArrayIsNotEmptyForCodec,
  createDecoder,
  createDecoderThatConsumesEntireByteArray,
  getArrayDecoder,
  getCompiledTransactionMessageDecoder,
  getShortU16Decoder,
  getShortU16Encoder,
  getStructDecoder,
  getTransactionDecoder,
  getTransactionVersionDecoder,
  getUnionDecoder,
  isSolanaError,
  SOLANA_ERROR__CODECS__CANNOT_DECODE_EMPTY_BYTE_ARRAY,
  SOLANA_ERROR__CODECS__EXPECTED_DECODER_TO_CONSUME_ENTIRE_BYTE_ARRAY,
  SOLANA_ERROR__CODECS__INVALID_BYTE_LENGTH,
  SOLANA_ERROR__CODECS__NUMBER_OUT_OF_RANGE,
  SOLANA_ERROR__TRANSACTION__VERSION_NUMBER_NOT_SUPPORTED,
  type CompiledTransactionMessage,
  type Decoder,
  type ReadonlyUint8Array,
  type VariableSizeDecoder,
} from '@solana/kit';
import type { BlockInfo, InstructionGroup, InstructionInfo, TransactionInfo, UndecodableTransaction } from '../types.ts';
import { DecodeError } from './errors.ts';
import { ACCOUNT_COMPRESSION_PROGRAM_ID, VOTE_PROGRAM_ID } from './programIds.ts';

// ---------------------------------------------------------------------------------------------
// Base58
// ---------------------------------------------------------------------------------------------

/** Base58-encodes `bytes` (leading zero bytes → leading '1'); same text as `bs58.encode` (base58Fixed.ts). */
export { base58EncodeFixed as base58Encode };

const KEY_CACHE_LIMIT = 1 << 15;
/** Two generations: a full `keys` map becomes `oldKeys`, so a key in use survives the swap. */
let keys = new Map<string, string>();
let oldKeys = new Map<string, string>();

/**
 * Base58 of a 32-byte key, memoised: program ids, trees, queues and PDAs recur in almost every
 * transaction. Keyed by the latin1 image of the bytes; at most 2 × 32k entries (≈10 MB). (Evicting
 * the oldest entry of a single Map instead costs O(deleted entries) per eviction in V8.)
 */
function keyToBase58(key: ReadonlyUint8Array): string {
  const k = Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');
  let v = keys.get(k);
  if (v === undefined) {
    v = oldKeys.get(k) ?? base58EncodeFixed(key as Uint8Array);
    if (keys.size >= KEY_CACHE_LIMIT) {
      oldKeys = keys;
      keys = new Map();
    }
    keys.set(k, v);
  }
  return v;
}

const NON_B58 = /[^1-9A-HJ-NP-Za-km-z]/;

/** Index of the first character of `s` outside the base58 alphabet, or -1. */
function firstNonBase58(s: string): number {
  return s.search(NON_B58);
}

/**
 * Base58-decodes `s`; `bs58.decode` behind a validation that names the bad character.
 * @throws DecodeError(`field`, "invalid base58 character 'x' at index i") on a bad string.
 */
export function base58Decode(s: string, field = 'base58'): Uint8Array {
  const bad = firstNonBase58(s);
  if (bad >= 0) throw new DecodeError(field, `invalid base58 character ${JSON.stringify(s[bad])} at index ${bad}`);
  return bs58.decode(s);
}

// ---------------------------------------------------------------------------------------------
// Small JSON helpers (all throw DecodeError naming the field)
// ---------------------------------------------------------------------------------------------

type Json = Record<string, unknown>;

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)?.slice(0, 40)}`;
}

function asObject(v: unknown, field: string, sig?: string): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new DecodeError(field, v === undefined ? 'missing' : `expected an object, got ${describe(v)}`, { signature: sig });
  }
  return v as Json;
}

function asArray(v: unknown, field: string, sig?: string): unknown[] {
  if (!Array.isArray(v)) {
    throw new DecodeError(field, v === undefined ? 'missing' : `expected an array, got ${describe(v)}`, { signature: sig });
  }
  return v;
}

function asUint(v: unknown, field: string, sig?: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) {
    throw new DecodeError(
      field,
      v === undefined ? 'missing' : `expected an integer in [0, ${max}], got ${describe(v)}`,
      { signature: sig },
    );
  }
  return v;
}

function asString(v: unknown, field: string, sig?: string): string {
  if (typeof v !== 'string') {
    throw new DecodeError(field, v === undefined ? 'missing' : `expected a string, got ${describe(v)}`, { signature: sig });
  }
  return v;
}

/**
 * Strict base64 → bytes: Node's decoder silently skips bad characters, so the length must be a
 * multiple of 4 and the output length must match it. (Node also reads '-' and '_' as 62/63.)
 */
function base64Decode(s: string, field: string): Uint8Array {
  if (s.length % 4 !== 0) throw new DecodeError(field, `invalid base64: length ${s.length} is not a multiple of 4`);
  const buf = Buffer.from(s, 'base64');
  let pad = 0;
  if (s.length > 0 && s.charCodeAt(s.length - 1) === 61) pad = s.charCodeAt(s.length - 2) === 61 ? 2 : 1;
  if (buf.length !== (s.length / 4) * 3 - pad) {
    throw new DecodeError(field, 'invalid base64: bad character or misplaced padding');
  }
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
}

// ---------------------------------------------------------------------------------------------
// Wire transaction (legacy / v0 signatures-first; v1 message-first through @solana/kit)
// ---------------------------------------------------------------------------------------------

/** One compiled instruction: indices into the transaction's account list. */
interface CompiledIx {
  programIndex: number;
  accountIndices: ArrayLike<number>;
  data: Uint8Array;
}

/** A decoded wire transaction before account resolution. */
interface WireTransaction {
  signature: string;
  /** Static account keys, base58. */
  staticKeys: string[];
  instructions: CompiledIx[];
  /** Sizes of the address-table-lookup index lists, or null when the message has no lookups. */
  lookups: { writable: number; readonly: number } | null;
}

const MSG = 'transaction.message';

/**
 * A codec failure at byte `at` while reading `what` (a path such as `instructions[1].data`, built
 * up by the labelling wrappers as the fault propagates). Becomes a {@link DecodeError} at the top.
 */
class WireFault {
  constructor(
    readonly at: number,
    public what: string,
    readonly kind: 'truncated' | 'overflow' | 'non-canonical' | 'other',
    readonly need = 0,
    readonly left = 0,
    readonly text = '',
  ) {}

  under(prefix: string): this {
    this.what = this.what ? `${prefix}.${this.what}` : prefix;
    return this;
  }

  reason(): string {
    switch (this.kind) {
      case 'truncated':
        return `truncated at byte ${this.at} (need ${this.need} byte${this.need === 1 ? '' : 's'}${this.what ? ` for ${this.what}` : ''}, ${this.left} left)`;
      case 'overflow':
        return `compact-u16 overflow at byte ${this.at} (${this.what})`;
      case 'non-canonical':
        return `non-canonical compact-u16 at byte ${this.at} (${this.what})`;
      default:
        return this.what ? `${this.text} at byte ${this.at} (${this.what})` : this.text;
    }
  }
}

/**
 * Translates an error thrown by a kit codec that started reading `what` at `offset` of `bytes`.
 * Kit's length errors carry the bytes left from the failing read (`bytesLength`), and every codec
 * below reads the whole transaction buffer, so the failing byte is `bytes.length - bytesLength`.
 */
function toFault(e: unknown, what: string, offset: number, bytes: ReadonlyUint8Array): WireFault {
  if (e instanceof WireFault) return e.under(what);
  if (isSolanaError(e, SOLANA_ERROR__CODECS__INVALID_BYTE_LENGTH)) {
    const { bytesLength, expected } = e.context;
    // shortU16 reports a 4th continuation byte as bytesLength 4 > expected 3.
    if (bytesLength >= expected) return new WireFault(offset, what, 'overflow');
    return new WireFault(bytes.length - bytesLength, what, 'truncated', expected, bytesLength);
  }
  if (isSolanaError(e, SOLANA_ERROR__CODECS__CANNOT_DECODE_EMPTY_BYTE_ARRAY)) {
    return new WireFault(offset, what, 'truncated', 1, 0);
  }
  if (isSolanaError(e, SOLANA_ERROR__CODECS__NUMBER_OUT_OF_RANGE)) return new WireFault(offset, what, 'overflow');
  return new WireFault(offset, what, 'other', 0, 0, e instanceof Error ? e.message : String(e));
}

/** `decoder`, with its failures named `what`. */
function named<T>(what: string, decoder: Decoder<T>): Decoder<T> {
  const read = decoder.read;
  return createDecoder({
    ...decoder,
    read(bytes, offset) {
      try {
        return read(bytes, offset);
      } catch (e) {
        throw toFault(e, what, offset, bytes);
      }
    },
  } as Decoder<T>);
}

const shortU16 = getShortU16Decoder();
const shortU16Size = getShortU16Encoder();

/**
 * A compact-u16 length prefix named `what`. Solana rejects non-canonical encodings (`0x80 0x00`),
 * kit's decoder does not, hence the size check. With `run`, the prefix also checks that
 * `length × run.itemSize` bytes follow and otherwise fails naming the whole run, which is
 * cheaper and clearer than failing on the k-th item.
 */
function lengthPrefix(what: string, run?: { itemSize: number; name: (n: number) => string }): VariableSizeDecoder<number> {
  return createDecoder({
    maxSize: 3,
    read(bytes, offset) {
      let n: number;
      let end: number;
      try {
        [n, end] = shortU16.read(bytes, offset);
      } catch (e) {
        const f = toFault(e, what, offset, bytes);
        // Kit checks 1, 2, then 3 bytes from the start: name the first missing byte instead.
        throw f.kind === 'truncated' ? new WireFault(bytes.length, what, 'truncated', 1, 0) : f;
      }
      if (end - offset !== shortU16Size.getSizeFromValue(n)) throw new WireFault(offset, what, 'non-canonical');
      if (run && n * run.itemSize > bytes.length - end) {
        throw new WireFault(end, run.name(n), 'truncated', n * run.itemSize, bytes.length - end);
      }
      return [n, end];
    },
  });
}

/*
 * Leaf decoders that read in place. Kit's `getU8Decoder` copies each byte into a new ArrayBuffer for
 * a DataView, and `fixDecoderSize(getBytesDecoder(), n)` copies the bytes twice (the fixed-size
 * slice, then the bytes decoder's own slice): allocations that were a fifth of decoding. These run
 * kit's own length assertions with the same codec names, so a failure is the same SolanaError
 * (and the same DecodeError text) as with kit's decoders.
 */

/** One byte; `getU8Decoder` without the copy. */
const u8Byte: Decoder<number> = createDecoder({
  fixedSize: 1,
  read(bytes, offset = 0) {
    assertByteArrayIsNotEmptyForCodec('u8', bytes, offset);
    assertByteArrayHasEnoughBytesForCodec('u8', 1, bytes, offset);
    return [bytes[offset]!, offset + 1];
  },
});

/** `fixDecoderSize(getBytesDecoder(), size)` mapped through `map`, which gets a view (no copy). */
function fixedBytesAs<T>(size: number, map: (view: ReadonlyUint8Array) => T): Decoder<T> {
  return createDecoder({
    fixedSize: size,
    read(bytes, offset = 0) {
      assertByteArrayHasEnoughBytesForCodec('fixCodecSize', size, bytes, offset);
      return [map(bytes.subarray(offset, offset + size)), offset + size];
    },
  });
}

/**
 * The rest of the bytes it is given, as a view. Under `addDecoderSizePrefix` (which already hands
 * it a fresh slice of exactly the prefixed size) the result is that copy, as with getBytesDecoder.
 */
const restOfBytes: Decoder<ReadonlyUint8Array> = createDecoder({ read: (bytes, offset) => [bytes.subarray(offset), bytes.length] });

/** Bytes behind a compact-u16 length (`<what> length`), e.g. instruction data or account indices. */
const shortVecBytes = (what: string) => addDecoderSizePrefix(restOfBytes, lengthPrefix(`${what} length`, { itemSize: 1, name: () => what }));

/**
 * `getArrayDecoder(item)` behind a compact-u16 count, whose item failures are named
 * `<name>[i].<field>` (the count is named by `size`). Decoding is synchronous and the decoder is
 * not nested in itself, so one counter per array decoder suffices.
 */
function indexedArray<T>(name: string, item: Decoder<T>, size: VariableSizeDecoder<number>): Decoder<T[]> {
  let index = -1;
  const counted = createDecoder({
    ...item,
    read(bytes, offset) {
      index++;
      return item.read(bytes, offset);
    },
  } as Decoder<T>);
  const array = getArrayDecoder(counted, { size, requireSizePrefix: true });
  return createDecoder({
    ...array,
    read(bytes, offset) {
      index = -1;
      try {
        return array.read(bytes, offset);
      } catch (e) {
        if (index < 0) throw e; // the count itself
        throw toFault(e, `${name}[${index}]`, offset, bytes);
      }
    },
  } as Decoder<T[]>);
}

const u8 = (what: string) => named(what, u8Byte);
/** 32 bytes (a view into the transaction's bytes: read, not kept). */
const bytes32 = fixedBytesAs(32, (v) => v);

/** `shortvec<[u8; 64]>`: the signatures of a legacy / v0 transaction. */
const SIGNATURES = getArrayDecoder(fixedBytesAs(64, (v) => v), {
  size: lengthPrefix('signature count', { itemSize: 64, name: (n) => `${n} signatures` }),
  requireSizePrefix: true,
});

/** The fields shared by the legacy and v0 message layouts. */
const MESSAGE_BODY = [
  [
    'header',
    getStructDecoder([
      ['numSignerAccounts', u8('header')],
      // numReadonlySignerAccounts, numReadonlyNonSignerAccounts (unused here)
      ['readonlyCounts', named('header', fixedBytesAs(2, (v) => [v[0]!, v[1]!]))],
    ]),
  ],
  [
    'staticKeys',
    getArrayDecoder(fixedBytesAs(32, keyToBase58), {
      size: lengthPrefix('account key count', { itemSize: 32, name: (n) => `${n} account keys` }),
      requireSizePrefix: true,
    }),
  ],
  ['blockhash', named('recent blockhash', bytes32)],
  [
    'instructions',
    indexedArray(
      'instructions',
      getStructDecoder([
        ['programIndex', u8('programIdIndex')],
        ['accountIndices', shortVecBytes('accounts')],
        ['data', shortVecBytes('data')],
      ]),
      lengthPrefix('instruction count'),
    ),
  ],
] as const;

const LOOKUPS = indexedArray(
  'addressTableLookups',
  getStructDecoder([
    ['accountKey', named('accountKey', bytes32)],
    ['writableIndexes', shortVecBytes('writableIndexes')],
    ['readonlyIndexes', shortVecBytes('readonlyIndexes')],
  ]),
  lengthPrefix('address table lookup count'),
);

const VERSION = getTransactionVersionDecoder();

/** Index into the message variants (0 legacy, 1 v0) from the version prefix, if any. */
function messageVariant(bytes: ReadonlyUint8Array, offset: number): number {
  // Kit's version decoder reads an empty buffer as 'legacy'.
  if (offset >= bytes.length) throw new WireFault(offset, 'version/header', 'truncated', 1, 0);
  let version: ReturnType<typeof VERSION.decode> | number;
  try {
    [version] = VERSION.read(bytes, offset);
  } catch (e) {
    if (!isSolanaError(e, SOLANA_ERROR__TRANSACTION__VERSION_NUMBER_NOT_SUPPORTED)) throw e;
    version = e.context.unsupportedVersion;
  }
  if (version === 'legacy') return 0;
  if (version === 0) return 1;
  throw new WireFault(offset, '', 'other', 0, 0, `unsupported message version ${version} in a signatures-first transaction`);
}

/** A legacy message, or a v0 message (version prefix 0x80, then address-table lookups) to the end of the buffer. */
const SIGNATURES_FIRST_MESSAGE = createDecoderThatConsumesEntireByteArray(
  getUnionDecoder(
    [
      getStructDecoder([...MESSAGE_BODY]),
      getStructDecoder([['version', VERSION], ...MESSAGE_BODY, ['lookups', LOOKUPS]]),
    ],
    messageVariant,
  ),
);

/** The version prefix and header alone, or undefined if they do not decode. */
const MESSAGE_PREFIX = getUnionDecoder(
  [getStructDecoder([MESSAGE_BODY[0]]), getStructDecoder([['version', VERSION], MESSAGE_BODY[0]])],
  messageVariant,
);
function readHeader(bytes: Uint8Array, offset: number): { numSignerAccounts: number } | undefined {
  try {
    return MESSAGE_PREFIX.read(bytes, offset)[0].header;
  } catch {
    return undefined;
  }
}

/** Converts whatever the wire decoders threw while reading `bytes` into a DecodeError on `field`. */
function wireError(e: unknown, field: string, bytes: Uint8Array, signature?: string): DecodeError {
  if (e instanceof DecodeError) return e.within(null, signature);
  if (isSolanaError(e, SOLANA_ERROR__CODECS__EXPECTED_DECODER_TO_CONSUME_ENTIRE_BYTE_ARRAY)) {
    const { expectedLength, numExcessBytes } = e.context;
    return new DecodeError(field, `${numExcessBytes} trailing bytes after byte ${expectedLength}`, {
      offset: expectedLength,
      signature,
    });
  }
  const f = e instanceof WireFault ? e : toFault(e, '', 0, bytes);
  return new DecodeError(field, f.reason(), { offset: f.at, signature, cause: e instanceof WireFault ? undefined : e });
}

function decodeSignaturesFirst(bytes: Uint8Array): WireTransaction {
  let signatures: ReadonlyUint8Array[];
  let messageStart: number;
  try {
    [signatures, messageStart] = SIGNATURES.read(bytes, 0);
  } catch (e) {
    throw wireError(e, 'transaction.signatures', bytes);
  }
  if (signatures.length === 0) throw new DecodeError('transaction.signatures', 'no signatures');
  const signature = base58EncodeFixed(signatures[0] as Uint8Array);
  const headerMismatch = (header: { numSignerAccounts: number } | undefined): DecodeError | null =>
    header && header.numSignerAccounts !== signatures.length
      ? new DecodeError(MSG, `header requires ${header.numSignerAccounts} signatures but the transaction carries ${signatures.length}`, {
          offset: messageStart,
          signature,
        })
      : null;
  let msg: ReturnType<typeof SIGNATURES_FIRST_MESSAGE.decode>;
  try {
    [msg] = SIGNATURES_FIRST_MESSAGE.read(bytes, messageStart);
  } catch (e) {
    // A header that contradicts the signatures is reported before anything that follows it.
    throw headerMismatch(readHeader(bytes, messageStart)) ?? wireError(e, MSG, bytes, signature);
  }
  const mismatch = headerMismatch(msg.header);
  if (mismatch) throw mismatch;
  let lookups: WireTransaction['lookups'] = null;
  if ('lookups' in msg && msg.lookups.length > 0) {
    let writable = 0;
    let readonly = 0;
    for (const l of msg.lookups) {
      writable += l.writableIndexes.length;
      readonly += l.readonlyIndexes.length;
    }
    lookups = { writable, readonly };
  }
  return {
    signature,
    staticKeys: msg.staticKeys,
    // The codecs return fresh copies (`Uint8Array#slice`), so handing them out is safe.
    instructions: msg.instructions as unknown as CompiledIx[],
    lookups,
  };
}

let kitTxDecoder: ReturnType<typeof getTransactionDecoder> | undefined;
let kitMsgDecoder: ReturnType<typeof getCompiledTransactionMessageDecoder> | undefined;

/** The v1 (message-first) envelope, decoded with @solana/kit. */
function decodeMessageFirst(bytes: Uint8Array): WireTransaction {
  kitTxDecoder ??= getTransactionDecoder();
  kitMsgDecoder ??= getCompiledTransactionMessageDecoder();
  let msg: CompiledTransactionMessage;
  let messageBytes: Uint8Array;
  try {
    messageBytes = kitTxDecoder.decode(bytes).messageBytes as unknown as Uint8Array;
    const [m, end] = kitMsgDecoder.read(messageBytes, 0);
    if (end !== messageBytes.length) throw new Error(`${messageBytes.length - end} trailing bytes in the message`);
    msg = m;
  } catch (e) {
    throw new DecodeError(MSG, `invalid v1 transaction: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  if (msg.version !== 1) throw new DecodeError(MSG, `unexpected message version ${String(msg.version)} in a message-first envelope`);
  const numSignatures = msg.header.numSignerAccounts;
  if (numSignatures === 0) throw new DecodeError('transaction.signatures', 'no signatures');
  const sigStart = messageBytes.length;
  const signature = base58EncodeFixed(bytes.subarray(sigStart, sigStart + 64));
  const instructions: CompiledIx[] = msg.instructionHeaders.map((h, k) => ({
    programIndex: h.programAccountIndex,
    accountIndices: msg.instructionPayloads[k]!.instructionAccountIndices,
    data: Uint8Array.from(msg.instructionPayloads[k]!.instructionData),
  }));
  return { signature, staticKeys: msg.staticAccounts.slice(), instructions, lookups: null };
}

/**
 * Decodes a serialized Solana transaction: legacy or v0 (shortvec signature count first), or the
 * v1 envelope (message first, first byte has the high bit set).
 * @throws DecodeError `transaction.signatures` / `transaction.message` with the byte offset.
 */
function decodeWireTransaction(bytes: Uint8Array): WireTransaction {
  if (bytes.length === 0) throw new DecodeError('transaction', 'empty');
  // Buffer#slice is a view; work on a plain Uint8Array so the codecs' `.slice()` copies.
  if (Buffer.isBuffer(bytes)) bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return bytes[0]! & 0x80 ? decodeMessageFirst(bytes) : decodeSignaturesFirst(bytes);
}

// ---------------------------------------------------------------------------------------------
// getTransaction / getBlock JSON → TransactionInfo / BlockInfo
// ---------------------------------------------------------------------------------------------

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
      return (bytes ??= dataB58.length > LONG_BASE58 ? base58DecodeLong(dataB58) : bs58.decode(dataB58));
    },
    set data(v: Uint8Array) {
      bytes = v;
    },
  };
}

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
    const b = base58Decode(id, `programs[${i}]`);
    if (b.length !== 32) throw new DecodeError(`programs[${i}]`, `expected a 32-byte program id, got ${JSON.stringify(id)}`);
    return Buffer.from(b);
  });
  return { ids, raw };
}

const DEFAULT_SKIM = skimFilter();

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
function skimTransaction(bytes: Uint8Array, meta: unknown, filter: SkimFilter): TransactionInfo | null {
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
    signature: base58EncodeFixed(bytes.subarray(1, 65)),
    error: m.err === null ? null : JSON.stringify(m.err),
    isVote: false,
    groups: [],
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
  else if (encoding === 'base58') bytes = base58Decode(payload, at('transaction[0]'));
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
        if (a.length < 32 || a.length > 44 || firstNonBase58(a) >= 0) {
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
        const bad = firstNonBase58(data);
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
    if (base58Decode(v, f).length !== 32) throw new DecodeError(f, `expected 32 bytes, got ${JSON.stringify(v)}`);
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
