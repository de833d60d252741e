/**
 * The instruction-based (v2) Light event parser (spec photon.md §1.5; light-event
 * `sdk-libs/event/src/parse.rs::event_from_light_transaction`). Nothing is read from a noop: each
 * event is rebuilt from a light-system instruction (`invoke`, `invoke_cpi`,
 * `invoke_cpi_with_read_only`, `invoke_cpi_with_account_info`) and the account-compression
 * `insert_into_queues` CPI it makes, found by a backwards pattern search over the group.
 * Pure: no state, no I/O (Poseidon for the nullifiers only).
 */
import type {
  BatchInputAccount,
  BatchPublicTransactionEvent,
  Bytes32,
  CompressedAccount,
  InstructionInfo,
  NewAddress,
  OutputCompressedAccount,
  PublicTransactionEvent,
} from '../types.ts';
import { DecodeError } from '../solana/errors.ts';
import * as base58 from '../solana/base58.ts';
import { BorshReader } from './borsh.ts';
import {
  ACCOUNT_COMPRESSION_PROGRAM_ID,
  COMPRESSED_TOKEN_PROGRAM_ID,
  LIGHT_REGISTRY_PROGRAM_ID,
  LIGHT_SYSTEM_PROGRAM_ID,
  REGISTERED_PROGRAM_PDA,
  SYSTEM_PROGRAM_ID,
} from './constants.ts';
import { nullifierHash } from './hashing.ts';

/** Anchor discriminators (first 8 bytes, `sha256("global:<name>")[..8]`), photon.md §0. */
export const DISCRIMINATORS = {
  insertIntoQueues: 'b48f9f99232ef8a3',
  invoke: '1a10a90715caf219',
  invokeCpi: '31d4bf8127c22bc4',
  invokeCpiWithReadOnly: '562fa3a615df5c08',
  invokeCpiWithAccountInfo: 'e42280542f8b56f0',
  createCpiContextAccount: Buffer.from([233, 112, 71, 66, 121, 33, 178, 188]).toString('hex'),
} as const;

/** cToken `Transfer2` instruction: first data byte. */
export const TRANSFER2_DISCRIMINATOR = 101;

/** The role of one instruction in the pattern search (§1.5 step 1). */
export type V2ProgramTag = 'LightSystem' | 'AccountCompression' | 'SolanaSystem' | 'LightToken' | 'Registry' | 'Unknown';

/** Program ids the v2 parser recognises (overridable for the ACP, as `--compression-program-id`). */
export interface V2ProgramIds {
  accountCompression: string;
  lightSystem: string;
  compressedToken: string;
  registry: string;
  registeredProgramPda: string;
}

/** Light's current program ids. */
export const DEFAULT_V2_PROGRAM_IDS: V2ProgramIds = {
  accountCompression: ACCOUNT_COMPRESSION_PROGRAM_ID,
  lightSystem: LIGHT_SYSTEM_PROGRAM_ID,
  compressedToken: COMPRESSED_TOKEN_PROGRAM_ID,
  registry: LIGHT_REGISTRY_PROGRAM_ID,
  registeredProgramPda: REGISTERED_PROGRAM_PDA,
};

const disc8 = (data: Uint8Array): string => Buffer.from(data.buffer, data.byteOffset, 8).toString('hex');

/**
 * Tags each instruction (§1.5 step 1): data under 12 bytes → Unknown; the Solana system program →
 * SolanaSystem; light-system → LightSystem unless it creates a CPI context account; the ACP →
 * AccountCompression only for `insert_into_queues` with more than 2 accounts and accounts[1] = the
 * registered-program PDA; cToken → LightToken for Transfer2 (data[0] = 101); the registry → Registry.
 * Reads only the first 8 data bytes of light-system / ACP instructions.
 */
export function tagInstructions(ordered: readonly InstructionInfo[], ids: V2ProgramIds = DEFAULT_V2_PROGRAM_IDS): V2ProgramTag[] {
  return ordered.map((ix): V2ProgramTag => {
    const p = ix.programId;
    if (p !== SYSTEM_PROGRAM_ID && p !== ids.lightSystem && p !== ids.accountCompression && p !== ids.compressedToken && p !== ids.registry) return 'Unknown';
    const data = ix.data;
    if (data.length < 12) return 'Unknown';
    if (p === SYSTEM_PROGRAM_ID) return 'SolanaSystem';
    if (p === ids.lightSystem) return disc8(data) === DISCRIMINATORS.createCpiContextAccount ? 'Unknown' : 'LightSystem';
    if (p === ids.accountCompression) {
      return disc8(data) === DISCRIMINATORS.insertIntoQueues && ix.accounts.length > 2 && ix.accounts[1] === ids.registeredProgramPda ? 'AccountCompression' : 'Unknown';
    }
    if (p === ids.compressedToken) return data[0] === TRANSFER2_DISCRIMINATOR ? 'LightToken' : 'Unknown';
    return 'Registry';
  });
}

/** One light transaction found in a group: instruction indices into `ordered`. */
export interface V2Pattern {
  /** The executing light-system instruction. */
  system: number;
  /** The `insert_into_queues` CPI. */
  insertIntoQueues: number;
  /** Earlier light-system instructions of the same chain (CPI-context writes). */
  cpi: number[];
  /** The cToken Transfer2 instruction, only when the registry called it (ATA owners). */
  token: number | null;
}

/** §1.5 step 2 for the ACP instruction at `start`: the pattern (if any) and where the next search starts. */
function findPattern(start: number, tags: readonly V2ProgramTag[]): { pattern: V2Pattern | null; next: number } {
  let foundSol = false;
  let system = -1;
  const cpi: number[] = [];
  let tentativeToken: number | null = null;
  let token: number | null = null;
  for (let j = start - 1; j >= 0; j--) {
    const t = tags[j]!;
    if (t === 'SolanaSystem') {
      foundSol = true;
      continue;
    }
    if (t === 'LightSystem' && foundSol && system < 0) system = j;
    else if (system >= 0 && t === 'LightSystem') cpi.push(j);
    else if (system >= 0 && t === 'LightToken') tentativeToken ??= j;
    else if (system >= 0 && t === 'Registry') token ??= tentativeToken;
    else if (system >= 0 && t === 'AccountCompression') return { pattern: { system, insertIntoQueues: start, cpi, token }, next: j };
    else if (system < 0) return { pattern: null, next: j };
  }
  return { pattern: system >= 0 ? { system, insertIntoQueues: start, cpi, token } : null, next: 0 };
}

/**
 * The light transactions of a group (§1.5 step 2): from the last instruction backwards, each
 * AccountCompression instruction not yet consumed starts a backwards walk that needs a Solana system
 * instruction, then a light-system instruction; several patterns per group are possible
 * (four_cpi_events). Returned in instruction order.
 */
export function findV2Patterns(tags: readonly V2ProgramTag[]): V2Pattern[] {
  const out: V2Pattern[] = [];
  let next = Number.MAX_SAFE_INTEGER;
  for (let i = tags.length - 1; i >= 0; i--) {
    if (i > next) continue;
    if (tags[i] !== 'AccountCompression') continue;
    const r = findPattern(i, tags);
    next = r.next;
    if (r.pattern) out.push(r.pattern);
  }
  return out.reverse();
}

// ---------------------------------------------------------------------------------------------
// insert_into_queues (zero-copy layout, u8 length prefixes, no padding)

/** A `MerkleTreeSequenceNumber` of `insert_into_queues` (all-zero tree = empty slot). */
export interface QueueSequenceNumber {
  tree: Bytes32;
  queue: Bytes32;
  treeType: bigint;
  seq: bigint;
}

/** Decoded `InsertIntoQueuesInstructionData` plus the CPI-context outputs that follow it. */
export interface InsertIntoQueuesData {
  isInvokedByProgram: boolean;
  bump: number;
  numQueues: number;
  numOutputQueues: number;
  startOutputAppends: number;
  numAddressQueues: number;
  txHash: Bytes32;
  leaves: { accountIndex: number; leaf: Bytes32 }[];
  nullifiers: { accountHash: Bytes32; leafIndex: number; proveByIndex: boolean; treeIndex: number; queueIndex: number }[];
  addresses: { address: Bytes32; treeIndex: number; queueIndex: number }[];
  /** Raw slices, empty entries included (sized to capacity). */
  outputSequenceNumbers: QueueSequenceNumber[];
  inputSequenceNumbers: QueueSequenceNumber[];
  addressSequenceNumbers: QueueSequenceNumber[];
  outputLeafIndices: number[];
  /** Borsh `Vec<OutputCompressedAccountWithPackedContext>` after the zero-copy part. */
  cpiContextOutputs: OutputCompressedAccount[];
}

const IIQ = 'insert_into_queues';

/** A u8-length-prefixed zero-copy slice of `size`-byte items. */
function slice<T>(r: BorshReader, field: string, size: number, read: (r: BorshReader) => T): T[] {
  const n = r.u8(`${field}.len`);
  r.need(n * size, field);
  const out: T[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = read(r);
  return out;
}

function readSeqNumber(r: BorshReader, field: string): QueueSequenceNumber {
  return { tree: r.bytes32(`${field}.tree`), queue: r.bytes32(`${field}.queue`), treeType: r.u64(`${field}.treeType`), seq: r.u64(`${field}.seq`) };
}

/**
 * Decodes `insert_into_queues` instruction data (§1.5 step 3): skips the 8-byte discriminator and the
 * 4-byte Vec length, then meta (38 B), leaves (33 B each), nullifiers (39 B), addresses (34 B), three
 * sequence-number slices (80 B), output leaf indices (u32 LE), each slice with a u8 length prefix; the
 * rest is a Borsh Vec of CPI-context outputs.
 * @throws DecodeError naming the field (`insert_into_queues.<part>`) on short or malformed data.
 */
export function decodeInsertIntoQueues(data: Uint8Array): InsertIntoQueuesData {
  if (data.length < 12) throw new DecodeError(IIQ, `instruction data has ${data.length} bytes, need at least 12`);
  if (disc8(data) !== DISCRIMINATORS.insertIntoQueues) throw new DecodeError(IIQ, `discriminator ${disc8(data)} is not insert_into_queues`);
  const r = new BorshReader(data, 12);
  const isInvokedByProgram = r.bool(`${IIQ}.isInvokedByProgram`);
  const bump = r.u8(`${IIQ}.bump`);
  const numQueues = r.u8(`${IIQ}.numQueues`);
  const numOutputQueues = r.u8(`${IIQ}.numOutputQueues`);
  const startOutputAppends = r.u8(`${IIQ}.startOutputAppends`);
  const numAddressQueues = r.u8(`${IIQ}.numAddressQueues`);
  const txHash = r.bytes32(`${IIQ}.txHash`);
  const leaves = slice(r, `${IIQ}.leaves`, 33, (x) => ({ accountIndex: x.u8(`${IIQ}.leaves.accountIndex`), leaf: x.bytes32(`${IIQ}.leaves.leaf`) }));
  const nullifiers = slice(r, `${IIQ}.nullifiers`, 39, (x) => ({
    accountHash: x.bytes32(`${IIQ}.nullifiers.accountHash`),
    leafIndex: x.u32(`${IIQ}.nullifiers.leafIndex`),
    proveByIndex: x.bool(`${IIQ}.nullifiers.proveByIndex`),
    treeIndex: x.u8(`${IIQ}.nullifiers.treeIndex`),
    queueIndex: x.u8(`${IIQ}.nullifiers.queueIndex`),
  }));
  const addresses = slice(r, `${IIQ}.addresses`, 34, (x) => ({ address: x.bytes32(`${IIQ}.addresses.address`), treeIndex: x.u8(`${IIQ}.addresses.treeIndex`), queueIndex: x.u8(`${IIQ}.addresses.queueIndex`) }));
  const outputSequenceNumbers = slice(r, `${IIQ}.outputSequenceNumbers`, 80, (x) => readSeqNumber(x, `${IIQ}.outputSequenceNumbers`));
  const inputSequenceNumbers = slice(r, `${IIQ}.inputSequenceNumbers`, 80, (x) => readSeqNumber(x, `${IIQ}.inputSequenceNumbers`));
  const addressSequenceNumbers = slice(r, `${IIQ}.addressSequenceNumbers`, 80, (x) => readSeqNumber(x, `${IIQ}.addressSequenceNumbers`));
  const outputLeafIndices = slice(r, `${IIQ}.outputLeafIndices`, 4, (x) => x.u32(`${IIQ}.outputLeafIndices`));
  const cpiContextOutputs = r.vec(`${IIQ}.cpiContextOutputs`, (x) => readOutput(x, `${IIQ}.cpiContextOutputs`), 43);
  return {
    isInvokedByProgram,
    bump,
    numQueues,
    numOutputQueues,
    startOutputAppends,
    numAddressQueues,
    txHash,
    leaves,
    nullifiers,
    addresses,
    outputSequenceNumbers,
    inputSequenceNumbers,
    addressSequenceNumbers,
    outputLeafIndices,
    cpiContextOutputs,
  };
}

// ---------------------------------------------------------------------------------------------
// light-system instructions (Borsh)

function readCompressedAccount(r: BorshReader, f: string): CompressedAccount {
  const owner = r.bytes32(`${f}.owner`);
  const lamports = r.u64(`${f}.lamports`);
  const address = r.option(`${f}.address`, (x) => x.bytes32(`${f}.address`));
  const data = r.option(`${f}.data`, (x) => ({
    discriminator: x.fixed(8, `${f}.data.discriminator`),
    data: x.byteVec(`${f}.data.data`),
    dataHash: x.bytes32(`${f}.data.dataHash`),
  }));
  return { owner, lamports, address, data };
}

function readOutput(r: BorshReader, f: string): OutputCompressedAccount {
  const compressedAccount = readCompressedAccount(r, `${f}.compressedAccount`);
  return { compressedAccount, merkleTreeIndex: r.u8(`${f}.merkleTreeIndex`) };
}

/** `PackedMerkleContext` (7 B): tree index u8, queue index u8, leaf index u32, prove_by_index bool. */
function readMerkleContext(r: BorshReader, f: string) {
  return { merkleTreeIndex: r.u8(`${f}.merkleTreePubkeyIndex`), queueIndex: r.u8(`${f}.queuePubkeyIndex`), leafIndex: r.u32(`${f}.leafIndex`), proveByIndex: r.bool(`${f}.proveByIndex`) };
}

const skipProof = (r: BorshReader, f: string) => r.option(`${f}.proof`, (x) => x.fixed(128, `${f}.proof`));

/** What the event needs of the executing light-system instruction. */
export interface SystemInstructionData {
  variant: 'invoke' | 'invokeCpi' | 'invokeCpiWithReadOnly' | 'invokeCpiWithAccountInfo';
  outputs: OutputCompressedAccount[];
  /** `pubkey_array` index of each input account's state tree, in input order. */
  inputTreeIndices: number[];
  isCompress: boolean;
  relayFee: bigint | null;
  compressOrDecompressLamports: bigint | null;
  /** Accounts after the system accounts (the event's `pubkey_array`), base58. */
  remainingAccounts: string[];
}

function readInvokeInputs(r: BorshReader, f: string): number[] {
  return r.vec(
    f,
    (x) => {
      readCompressedAccount(x, `${f}.compressedAccount`);
      const mc = readMerkleContext(x, `${f}.merkleContext`);
      x.u16(`${f}.rootIndex`);
      x.bool(`${f}.readOnly`);
      return mc.merkleTreeIndex;
    },
    41,
  );
}

function skipNewAddressParams(r: BorshReader, f: string, size: number): void {
  const n = r.u32(`${f}.len`);
  r.need(n * size, f);
  r.offset += n * size;
}

/** Accounts that `invoke_cpi_with_read_only` / `_with_account_info` skip (§1.5 step 4). */
function smallModeSystemAccounts(mode: number, cl: bigint, isCompress: boolean, withCpiContext: boolean): number {
  if (mode === 0) return 11;
  return 6 + (cl > 0n ? 1 : 0) + (!isCompress && cl > 0n ? 1 : 0) + (withCpiContext ? 1 : 0);
}

function remaining(accounts: readonly string[], n: number, variant: string): string[] {
  if (accounts.length < n) throw new DecodeError(`${variant}.accounts`, `has ${accounts.length} accounts, needs at least ${n} system accounts`);
  return accounts.slice(n);
}

/**
 * Decodes the executing light-system instruction (§1.5 step 4): `invoke` and `invoke_cpi` read Borsh
 * from `data[12..]` and skip 9 / 11 system accounts; `invoke_cpi_with_read_only` and
 * `_with_account_info` read from `data[8..]` and skip 11 (mode 0) or 6 + extras accounts.
 * @throws DecodeError naming the variant and field on malformed data, too few accounts or an unknown discriminator.
 */
export function decodeSystemInstruction(data: Uint8Array, accounts: readonly string[]): SystemInstructionData {
  if (data.length < 12) throw new DecodeError('lightSystem', `instruction data has ${data.length} bytes, need at least 12`);
  const d = disc8(data);
  if (d === DISCRIMINATORS.invoke) {
    const f = 'invoke';
    const rest = remaining(accounts, 9, f);
    const r = new BorshReader(data, 12);
    skipProof(r, f);
    const inputTreeIndices = readInvokeInputs(r, `${f}.inputCompressedAccounts`);
    const outputs = r.vec(`${f}.outputCompressedAccounts`, (x) => readOutput(x, `${f}.outputCompressedAccounts`), 43);
    const relayFee = r.option(`${f}.relayFee`, (x) => x.u64(`${f}.relayFee`));
    skipNewAddressParams(r, `${f}.newAddressParams`, 36);
    const compressOrDecompressLamports = r.option(`${f}.compressOrDecompressLamports`, (x) => x.u64(`${f}.compressOrDecompressLamports`));
    const isCompress = r.bool(`${f}.isCompress`);
    return { variant: 'invoke', outputs, inputTreeIndices, isCompress, relayFee, compressOrDecompressLamports, remainingAccounts: rest };
  }
  if (d === DISCRIMINATORS.invokeCpi) {
    const f = 'invokeCpi';
    const rest = remaining(accounts, 11, f);
    const r = new BorshReader(data, 12);
    skipProof(r, f);
    skipNewAddressParams(r, `${f}.newAddressParams`, 36);
    const inputTreeIndices = readInvokeInputs(r, `${f}.inputCompressedAccounts`);
    const outputs = r.vec(`${f}.outputCompressedAccounts`, (x) => readOutput(x, `${f}.outputCompressedAccounts`), 43);
    const relayFee = r.option(`${f}.relayFee`, (x) => x.u64(`${f}.relayFee`));
    const compressOrDecompressLamports = r.option(`${f}.compressOrDecompressLamports`, (x) => x.u64(`${f}.compressOrDecompressLamports`));
    const isCompress = r.bool(`${f}.isCompress`);
    r.option(`${f}.cpiContext`, (x) => x.fixed(3, `${f}.cpiContext`));
    return { variant: 'invokeCpi', outputs, inputTreeIndices, isCompress, relayFee, compressOrDecompressLamports, remainingAccounts: rest };
  }
  if (d === DISCRIMINATORS.invokeCpiWithReadOnly || d === DISCRIMINATORS.invokeCpiWithAccountInfo) {
    const ro = d === DISCRIMINATORS.invokeCpiWithReadOnly;
    const f = ro ? 'invokeCpiWithReadOnly' : 'invokeCpiWithAccountInfo';
    if (accounts.length < 5) throw new DecodeError(`${f}.accounts`, `has ${accounts.length} accounts, needs at least 5`);
    const r = new BorshReader(data, 8);
    const mode = r.u8(`${f}.mode`);
    r.u8(`${f}.bump`);
    const invokingProgramId = r.bytes32(`${f}.invokingProgramId`);
    const cl = r.u64(`${f}.compressOrDecompressLamports`);
    const isCompressRaw = r.bool(`${f}.isCompress`);
    const withCpiContext = r.bool(`${f}.withCpiContext`);
    r.bool(`${f}.withTransactionHash`);
    r.fixed(3, `${f}.cpiContext`);
    skipProof(r, f);
    skipNewAddressParams(r, `${f}.newAddressParams`, 38);
    let outputs: OutputCompressedAccount[];
    let inputTreeIndices: number[];
    if (ro) {
      inputTreeIndices = r.vec(
        `${f}.inputCompressedAccounts`,
        (x) => {
          const g = `${f}.inputCompressedAccounts`;
          x.fixed(8, `${g}.discriminator`);
          x.bytes32(`${g}.dataHash`);
          const mc = readMerkleContext(x, `${g}.merkleContext`);
          x.u16(`${g}.rootIndex`);
          x.u64(`${g}.lamports`);
          x.option(`${g}.address`, (y) => y.bytes32(`${g}.address`));
          return mc.merkleTreeIndex;
        },
        58,
      );
      outputs = r.vec(`${f}.outputCompressedAccounts`, (x) => readOutput(x, `${f}.outputCompressedAccounts`), 43);
    } else {
      outputs = [];
      inputTreeIndices = [];
      r.vec(
        `${f}.accountInfos`,
        (x) => {
          const g = `${f}.accountInfos`;
          const address = x.option(`${g}.address`, (y) => y.bytes32(`${g}.address`));
          const input = x.option(`${g}.input`, (y) => {
            y.fixed(8, `${g}.input.discriminator`);
            y.bytes32(`${g}.input.dataHash`);
            const mc = readMerkleContext(y, `${g}.input.merkleContext`);
            y.u16(`${g}.input.rootIndex`);
            y.u64(`${g}.input.lamports`);
            return mc.merkleTreeIndex;
          });
          const output = x.option(`${g}.output`, (y) => ({
            discriminator: y.fixed(8, `${g}.output.discriminator`),
            dataHash: y.bytes32(`${g}.output.dataHash`),
            merkleTreeIndex: y.u8(`${g}.output.outputMerkleTreeIndex`),
            lamports: y.u64(`${g}.output.lamports`),
            data: y.byteVec(`${g}.output.data`),
          }));
          if (input !== null) inputTreeIndices.push(input);
          if (output !== null) {
            outputs.push({
              compressedAccount: { owner: invokingProgramId, lamports: output.lamports, address, data: { discriminator: output.discriminator, data: output.data, dataHash: output.dataHash } },
              merkleTreeIndex: output.merkleTreeIndex,
            });
          }
        },
        3,
      );
    }
    // The read-only address / account vecs follow; nothing of them enters the event.
    const n = smallModeSystemAccounts(mode, cl, isCompressRaw, withCpiContext);
    return {
      variant: ro ? 'invokeCpiWithReadOnly' : 'invokeCpiWithAccountInfo',
      outputs,
      inputTreeIndices,
      isCompress: isCompressRaw && cl > 0n,
      relayFee: null,
      compressOrDecompressLamports: cl === 0n ? null : cl,
      remainingAccounts: remaining(accounts, n, f),
    };
  }
  throw new DecodeError('lightSystem', `unknown light-system discriminator ${d}`);
}

// ---------------------------------------------------------------------------------------------
// cToken Transfer2: ATA owners from the output TLV

/**
 * ATA wallet owners of a cToken `Transfer2` instruction (§1.5 `ata_owners`): for each output TLV entry
 * holding `CompressedOnly { is_ata: true, owner_index }`, the wallet is `accounts[owner_index + 7]`.
 * Data that does not decode yields no owners (as the reference).
 */
export function transfer2AtaOwners(data: Uint8Array, accounts: readonly string[]): { outputIndex: number; walletOwner: Bytes32 }[] {
  try {
    return readTransfer2AtaOwners(data, accounts);
  } catch (e) {
    if (e instanceof DecodeError) return [];
    throw e;
  }
}

/** Borsh layout of `CompressedTokenInstructionDataTransfer2` up to `out_tlv` (light-token-interface). */
function readTransfer2AtaOwners(data: Uint8Array, accounts: readonly string[]): { outputIndex: number; walletOwner: Bytes32 }[] {
  if (data[0] !== TRANSFER2_DISCRIMINATOR) return [];
  const f = 'transfer2';
  const r = new BorshReader(data, 1);
  r.bool(`${f}.withTransactionHash`);
  r.bool(`${f}.withLamportsChangeAccountMerkleTreeIndex`);
  r.u8(`${f}.lamportsChangeAccountMerkleTreeIndex`);
  r.u8(`${f}.lamportsChangeAccountOwnerIndex`);
  r.u8(`${f}.outputQueue`);
  r.u16(`${f}.maxTopUp`);
  r.option(`${f}.cpiContext`, (x) => x.fixed(3, `${f}.cpiContext`));
  r.option(`${f}.compressions`, (x) => x.vec(`${f}.compressions`, (y) => y.fixed(16, `${f}.compressions`), 16));
  r.option(`${f}.proof`, (x) => x.fixed(128, `${f}.proof`));
  // in_token_data: Vec<MultiInputTokenDataWithContext>
  r.vec(`${f}.inTokenData`, (x) => x.fixed(22, `${f}.inTokenData`), 22);
  // out_token_data: Vec<MultiTokenTransferOutputData> (owner u8, amount u64, has_delegate bool, delegate u8, mint u8, version u8)
  r.vec(`${f}.outTokenData`, (x) => x.fixed(13, `${f}.outTokenData`), 13);
  r.option(`${f}.inLamports`, (x) => x.vec(`${f}.inLamports`, (y) => y.u64(`${f}.inLamports`), 8));
  r.option(`${f}.outLamports`, (x) => x.vec(`${f}.outLamports`, (y) => y.u64(`${f}.outLamports`), 8));
  r.option(`${f}.inTlv`, (x) => x.vec(`${f}.inTlv`, (y) => y.vec(`${f}.inTlv[]`, (z) => readExtension(z, `${f}.inTlv`), 1), 4));
  const outTlv = r.option(`${f}.outTlv`, (x) => x.vec(`${f}.outTlv`, (y) => y.vec(`${f}.outTlv[]`, (z) => readExtension(z, `${f}.outTlv`), 1), 4));
  const owners: { outputIndex: number; walletOwner: Bytes32 }[] = [];
  (outTlv ?? []).forEach((exts, outputIndex) => {
    for (const e of exts) {
      if (e && e.isAta) {
        const wallet = accounts[e.ownerIndex + 7];
        if (wallet !== undefined) owners.push({ outputIndex, walletOwner: base58.decode(wallet, `${f}.accounts[${e.ownerIndex + 7}]`) });
      }
    }
  });
  return owners;
}

/** Extension tags of `ExtensionInstructionData` whose payload this parser can size; only CompressedOnly is kept. */
function readExtension(r: BorshReader, f: string): { isAta: boolean; ownerIndex: number } | null {
  const tag = r.u8(`${f}.tag`);
  if (tag === COMPRESSED_ONLY_TAG) {
    // CompressedOnlyExtensionInstructionData: delegated_amount u64, withheld_transfer_fee u64, is_frozen bool,
    // compression_index u8, is_ata bool, bump u8, owner_index u8
    r.u64(`${f}.compressedOnly.delegatedAmount`);
    r.u64(`${f}.compressedOnly.withheldTransferFee`);
    r.bool(`${f}.compressedOnly.isFrozen`);
    r.u8(`${f}.compressedOnly.compressionIndex`);
    const isAta = r.bool(`${f}.compressedOnly.isAta`);
    r.u8(`${f}.compressedOnly.bump`);
    const ownerIndex = r.u8(`${f}.compressedOnly.ownerIndex`);
    return { isAta, ownerIndex };
  }
  if (tag === COMPRESSIBLE_TAG) {
    // CompressionInfo: fixed 96 bytes (versions, lamports_per_write, authority, rent sponsor, slots, rent config)
    r.fixed(COMPRESSION_INFO_SIZE, `${f}.compressible`);
    return null;
  }
  throw new DecodeError(`${f}.tag`, `extension tag ${tag} is not decoded`);
}

/** `ExtensionInstructionData::CompressedOnly` variant index. */
const COMPRESSED_ONLY_TAG = 31;
/** `ExtensionInstructionData::Compressible` variant index and its fixed payload size. */
const COMPRESSIBLE_TAG = 32;
const COMPRESSION_INFO_SIZE = 2 + 1 + 1 + 4 + 32 + 32 + 8 + 4 + 4 + 8;

// ---------------------------------------------------------------------------------------------
// event assembly

const isZero = (b: Uint8Array) => b.every((x) => x === 0);
const eq = (a: Uint8Array, b: Uint8Array) => Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length)) === 0;

function accountAt(list: readonly string[], i: number, field: string): Bytes32 {
  const k = list[i];
  if (k === undefined) throw new DecodeError(field, `account index ${i} is outside the ${list.length} accounts`);
  return base58.decode(k, field);
}

/**
 * Builds one event from a pattern (§1.5 step 5): inputs = IIQ nullifier hashes; outputs = CPI-context
 * outputs then the system instruction's outputs, hashes and leaf indices from IIQ; sequence numbers =
 * non-empty output sequence numbers; new addresses with queue indices from the address sequence
 * numbers; batch input accounts (nullifiers of trees with an input sequence number) with nullifier
 * and input-queue index.
 * @throws DecodeError naming the field on malformed instructions or out-of-range account indices.
 */
export function buildV2Event(ordered: readonly InstructionInfo[], p: V2Pattern): BatchPublicTransactionEvent {
  const iiqIx = ordered[p.insertIntoQueues]!;
  const iiq = decodeInsertIntoQueues(iiqIx.data);
  const sysIx = ordered[p.system]!;
  const sys = decodeSystemInstruction(sysIx.data, sysIx.accounts);
  const iiqAccounts = iiqIx.accounts.slice(2);
  const pubkeyArray = sys.remainingAccounts.map((k, i) => base58.decode(k, `lightSystem.accounts[${i}]`));

  const outputSeqs = iiq.outputSequenceNumbers.filter((s) => !isZero(s.tree));
  const inputSeqs = iiq.inputSequenceNumbers.filter((s) => !isZero(s.tree));

  const newAddresses: NewAddress[] = iiq.addresses.map((a, i) => ({ address: a.address, tree: accountAt(iiqAccounts, a.treeIndex, `${IIQ}.addresses[${i}].treeIndex`), queueIndex: null }));
  for (const s of iiq.addressSequenceNumbers) {
    let seq = s.seq;
    for (const a of newAddresses) if (eq(a.tree, s.tree)) a.queueIndex = seq++;
  }

  const batchInputAccounts: BatchInputAccount[] = [];
  iiq.nullifiers.forEach((n, i) => {
    const tree = accountAt(iiqAccounts, n.treeIndex, `${IIQ}.nullifiers[${i}].treeIndex`);
    if (!inputSeqs.some((s) => eq(s.tree, tree))) return;
    batchInputAccounts.push({ accountHash: n.accountHash, leafIndex: n.leafIndex, tree, nullifier: nullifierHash(n.accountHash, n.leafIndex, iiq.txHash), queueIndex: null });
  });
  // Input-queue indices: walk the system instruction's inputs in order; each input whose tree has an
  // input sequence number fills the next batch slot with that entry's next index. Inputs of other
  // trees (v1) take no slot, so with mixed inputs slot k is the k-th batched input, not input k.
  const nextSeq = iiq.inputSequenceNumbers.map((s) => s.seq);
  let slot = 0;
  sys.inputTreeIndices.forEach((ti, i) => {
    const tree = accountAt(sys.remainingAccounts, ti, `lightSystem.inputCompressedAccounts[${i}].merkleTreePubkeyIndex`);
    const k = iiq.inputSequenceNumbers.findIndex((s) => eq(s.tree, tree));
    if (k < 0) return;
    const b = batchInputAccounts[slot++];
    if (b) b.queueIndex = nextSeq[k]!;
    nextSeq[k]!++;
  });

  const ataOwners = p.token !== null ? transfer2AtaOwners(ordered[p.token]!.data, ordered[p.token]!.accounts) : [];
  const event: PublicTransactionEvent = {
    inputCompressedAccountHashes: iiq.nullifiers.map((n) => n.accountHash),
    outputCompressedAccountHashes: iiq.leaves.map((l) => l.leaf),
    outputCompressedAccounts: [...iiq.cpiContextOutputs, ...sys.outputs],
    outputLeafIndices: iiq.outputLeafIndices,
    sequenceNumbers: outputSeqs.map((s) => ({ treePubkey: s.tree, seq: s.seq })),
    relayFee: sys.relayFee,
    isCompress: sys.isCompress,
    compressOrDecompressLamports: sys.compressOrDecompressLamports,
    pubkeyArray,
    message: null,
    ataOwners,
  };
  return { event, txHash: iiq.txHash, newAddresses, batchInputAccounts };
}

/**
 * `event_from_light_transaction` for one instruction group: tags the instructions, finds the patterns
 * and builds one event per pattern, in instruction order.
 * @returns null when the group holds no pattern (the legacy scan then runs).
 * @throws DecodeError when a pattern's instructions do not decode (the caller treats it as "no match", as the reference does).
 */
export function eventsFromLightInstructions(ordered: readonly InstructionInfo[], ids: V2ProgramIds = DEFAULT_V2_PROGRAM_IDS): BatchPublicTransactionEvent[] | null {
  // Cheap pre-check: no ACP instruction, no pattern (avoids touching the lazily decoded data).
  if (!ordered.some((ix) => ix.programId === ids.accountCompression)) return null;
  const patterns = findV2Patterns(tagInstructions(ordered, ids));
  if (patterns.length === 0) return null;
  return patterns.map((p) => buildV2Event(ordered, p));
}
