/**
 * The Solana wire-transaction codec: serialized transaction bytes → {@link WireTransaction}
 * (first signature, static account keys as base58, compiled instructions, the sizes of the
 * address-table lookups). Pure, no I/O; spec photon.md §1.2.
 *
 * - The legacy and v0 layouts (signatures first) are declared with @solana/kit's codec primitives
 *   (`getArrayDecoder`, `getStructDecoder`, `getShortU16Decoder`, `addDecoderSizePrefix`,
 *   `getUnionDecoder` over kit's `getTransactionVersionDecoder`…), with leaf decoders for bytes and
 *   fixed-size byte runs built on kit's `createDecoder` and its length assertions that read in
 *   place instead of copying (kit's `getU8Decoder` and `fixDecoderSize(getBytesDecoder(), n)`
 *   allocate per read). Static keys are read as raw 32-byte arrays and base58-encoded through a
 *   memo, never through kit's address decoder: kit's full transaction/message decoders base58-encode
 *   every key twice (~200 µs per transaction).
 * - The thin wrappers below only name what was being read when a codec fails, and add what kit's
 *   codecs do not check: canonical compact-u16 lengths and a length pre-check on runs of
 *   fixed-size items, so a truncation names the whole run ("need 480 bytes for 15 account keys").
 * - The message-first v1 envelope goes through kit's `getTransactionDecoder` +
 *   `getCompiledTransactionMessageDecoder`.
 */
// @solana/kit's own packages, not the kit: its root also loads RPC, subscriptions and ws (≈0.08 CPU-s in
// every thread that decodes)
import {
  addDecoderSizePrefix,
  assertByteArrayHasEnoughBytesForCodec,
  assertByteArrayIsNotEmptyForCodec,
  createDecoder,
  createDecoderThatConsumesEntireByteArray,
  getArrayDecoder,
  getShortU16Decoder,
  getShortU16Encoder,
  getStructDecoder,
  getUnionDecoder,
  type Decoder,
  type ReadonlyUint8Array,
  type VariableSizeDecoder,
} from '@solana/codecs';
import {
  getTransactionDecoder,
} from '@solana/transactions';
import {
  getCompiledTransactionMessageDecoder,
  getTransactionVersionDecoder,
  type CompiledTransactionMessage,
} from '@solana/transaction-messages';
import {
  isSolanaError,
  SOLANA_ERROR__CODECS__CANNOT_DECODE_EMPTY_BYTE_ARRAY,
  SOLANA_ERROR__CODECS__EXPECTED_DECODER_TO_CONSUME_ENTIRE_BYTE_ARRAY,
  SOLANA_ERROR__CODECS__INVALID_BYTE_LENGTH,
  SOLANA_ERROR__CODECS__NUMBER_OUT_OF_RANGE,
  SOLANA_ERROR__TRANSACTION__VERSION_NUMBER_NOT_SUPPORTED,
} from '@solana/errors';
import * as base58 from './base58.ts';
import { DecodeError } from './errors.ts';

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
    v = oldKeys.get(k) ?? base58.encode(key as Uint8Array);
    if (keys.size >= KEY_CACHE_LIMIT) {
      oldKeys = keys;
      keys = new Map();
    }
    keys.set(k, v);
  }
  return v;
}

/** One compiled instruction: indices into the transaction's account list. */
export interface CompiledIx {
  programIndex: number;
  accountIndices: ArrayLike<number>;
  data: Uint8Array;
}

/** A decoded wire transaction before account resolution. */
export interface WireTransaction {
  /** The first signature, base58. */
  signature: string;
  /** Static account keys, base58. */
  staticKeys: string[];
  instructions: CompiledIx[];
  /** Sizes of the address-table-lookup index lists, or null when the message has no lookups. */
  lookups: { writable: number; readonly: number } | null;
}

/** Field name of the message in errors (`transaction.message: …`). */
export const MSG = 'transaction.message';

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
  const signature = base58.encode(signatures[0] as Uint8Array);
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
  const signature = base58.encode(bytes.subarray(sigStart, sigStart + 64));
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
export function decodeWireTransaction(bytes: Uint8Array): WireTransaction {
  if (bytes.length === 0) throw new DecodeError('transaction', 'empty');
  // Buffer#slice is a view; work on a plain Uint8Array so the codecs' `.slice()` copies.
  if (Buffer.isBuffer(bytes)) bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return bytes[0]! & 0x80 ? decodeMessageFirst(bytes) : decodeSignaturesFirst(bytes);
}

