/**
 * Light Protocol's released programs (CLI 0.27.0) in LiteSVM, and the few encodings a test needs to
 * talk to them: the light-system-program `invoke` instruction (borsh `InstructionDataInvoke`), a
 * local copy of a v1 state tree (height 26, Poseidon) and a reader of the on-chain concurrent Merkle
 * tree header (next index, sequence number, current root and its index).
 *
 * Sources (facts only; the code is ours): Lightprotocol/light-protocol at 5ca22ae (the commit that
 * sets the CLI to 0.27.0, light-keys.md §0 LP): `programs/system/src/lib.rs` (`invoke`: 8-byte
 * discriminator, a 4-byte vec length, then the borsh struct), `constants.rs` (discriminators, the
 * `cpi_authority` PDA, bump 255), `invoke/instruction.rs` (the 9 accounts of `invoke`),
 * `accounts/account_checks.rs` (an optional account is passed as the system program's own id when
 * absent), `processor/sol_compression.rs` (the `sol_pool_pda` PDA, bump 255),
 * `program-libs/compressed-account/src/instruction_data/data.rs` and `compressed_account.rs`
 * (the borsh structs), `program-libs/concurrent-merkle-tree/src/{lib,zero_copy}.rs` (tree layout;
 * an append of k leaves pushes k roots, the first k−1 of them zero, the current root is
 * `roots[roots.last_index]`), `processor/verify_proof.rs` (`root_index` indexes the roots buffer).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  AccountRole,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getProgramDerivedAddress,
  getTransactionEncoder,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type Transaction,
} from '@solana/kit';
import { FailedTransactionMetadata, LiteSVM, type TransactionMetadata } from 'litesvm';
import { poseidon2 } from '../../src/merkle/poseidon.ts';
import { ZERO_BYTES } from '../../src/merkle/zeroValues.ts';
import type { CompressedProof } from '../../src/prover/engine/proofEncoding.ts';
import * as base58 from '../../src/solana/base58.ts';

export const LIGHT_SYSTEM_PROGRAM = 'SySTEM1eSU2p4BGQfQpimFEWWSC1XDFeun3Nqzz3rT7' as Address;
export const ACCOUNT_COMPRESSION_PROGRAM = 'compr6CUsB5m2jS4Y3831ztGSTnDpnKJTKS95d64XVq' as Address;
export const NOOP_PROGRAM = 'noopb9bkMVfRPU8AsbpTUg8AQkHtKwMYZiFUjNRtMmV' as Address;
export const REGISTERED_PROGRAM_PDA = '35hkDgaAKwMCaxRz2ocSZ6NaUrtKkyNqU6c4RV3tYJRh' as Address;
export const SYSTEM_PROGRAM = '11111111111111111111111111111111' as Address;
export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111' as Address;
/** v1 state tree and its nullifier queue; v1 address tree and its queue (genesis accounts of the CLI). */
export const STATE_TREE_V1 = 'smt1NamzXdq4AMqS2fS2F1i5KTYPZRhoHgWx38d8WsT' as Address;
export const NULLIFIER_QUEUE_V1 = 'nfq1NvQDJ2GEgnS8zt9prAe8rjjpAW1zFkrvZoBR148' as Address;
export const ADDRESS_TREE_V1 = 'amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2' as Address;
export const ADDRESS_QUEUE_V1 = 'aq1S9z4reTSQAdgWHGD2zDaS39sjGrAxbR31vxJ2F4F' as Address;

/** Program id → file in the CLI package's `bin/` (what `light test-validator` deploys, 0.27.0; unpacked by ensureLightKeys, LIGHT_PACKAGE_EXTRA). */
export const LIGHT_PROGRAMS: Readonly<Record<string, string>> = {
  [LIGHT_SYSTEM_PROGRAM]: 'light_system_program_pinocchio.so',
  [ACCOUNT_COMPRESSION_PROGRAM]: 'account_compression.so',
  cTokenmWW8bLPjZEBAUgYy3zKxQZW6VKi7bqNFEVv3m: 'light_compressed_token.so',
  Lighton6oQpVkeewmo2mcPTQQp7kYHr4fWpAgJyEmDX: 'light_registry.so',
  [NOOP_PROGRAM]: 'spl_noop.so',
};

/** `invoke` discriminator (light-system-program constants.rs `INVOKE_INSTRUCTION`). */
export const INVOKE_DISCRIMINATOR = Uint8Array.from([26, 16, 169, 7, 21, 202, 242, 25]);
/** SystemProgramError::ProofVerificationFailed as a custom program error code (errors.rs). */
export const PROOF_VERIFICATION_FAILED = 6043;
/** light-hash-set HashSetError::ElementAlreadyExists: a nullifier or address already in its queue (hash-set/src/lib.rs). */
export const ELEMENT_ALREADY_EXISTS = 9002;
/**
 * The first line the system program logs when `verify_proof` returned an error (processor/process.rs:
 * `msg!("proof  {:?}")`, then the public inputs, then every input account, then the error).
 */
export const VERIFY_FAILED_LOG = 'Program log: proof  ';
/** The packet limit a transaction must fit on a real cluster (LiteSVM does not enforce it: a 1672-byte transaction executes there). */
export const PACKET_DATA_SIZE = 1232;

/**
 * A LiteSVM with Light's released programs and every genesis account of `package/accounts/`
 * (`pkgDir` = the `package/` directory that ensureLightKeys returns)
 * (`solana account --output json` files: pubkey, lamports, base64 data, owner, executable), loaded
 * as the files say.
 * @returns the svm and the pubkeys of the accounts loaded
 */
export function lightSvm(pkgDir: string): { svm: LiteSVM; accounts: string[] } {
  const svm = new LiteSVM();
  for (const [id, file] of Object.entries(LIGHT_PROGRAMS)) svm.addProgramFromFile(id as Address, path.join(pkgDir, 'bin', file));
  const accounts: string[] = [];
  const dir = path.join(pkgDir, 'accounts');
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.json')).sort()) {
    const j = JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as { pubkey: string; account: { lamports: number; data: [string, string]; owner: string; executable: boolean; space?: number } };
    const data = new Uint8Array(Buffer.from(j.account.data[0], 'base64'));
    svm.setAccount({ address: j.pubkey as Address, lamports: lamports(BigInt(j.account.lamports)), data, programAddress: j.account.owner as Address, executable: j.account.executable, space: BigInt(data.length) });
    if (!accounts.includes(j.pubkey)) accounts.push(j.pubkey);
  }
  return { svm, accounts };
}

/** `sol_pool_pda` (seeds [b"sol_pool_pda"], bump 255) and the account-compression CPI authority (`cpi_authority`, bump 255), both PDAs of the light system program. */
export async function lightPdas(): Promise<{ solPool: Address; cpiAuthority: Address }> {
  const enc = new TextEncoder();
  const [solPool, b1] = await getProgramDerivedAddress({ programAddress: LIGHT_SYSTEM_PROGRAM, seeds: [enc.encode('sol_pool_pda')] });
  const [cpiAuthority, b2] = await getProgramDerivedAddress({ programAddress: LIGHT_SYSTEM_PROGRAM, seeds: [enc.encode('cpi_authority')] });
  if (b1 !== 255 || b2 !== 255) throw new Error(`PDA bumps ${b1}/${b2}, the program hard-codes 255`);
  return { solPool, cpiAuthority };
}

// ---------------------------------------------------------------------------------------------
// borsh InstructionDataInvoke

/** A compressed account without data (the only kind these tests create): owner 32 B, lamports u64, optional 32-byte address. */
export interface PlainCompressedAccount {
  owner: Uint8Array;
  lamports: bigint;
  address: Uint8Array | null;
}

/** An input: the account, its tree and queue as indices into the remaining accounts, leaf index, root index (into the tree's roots buffer). */
export interface PackedInput {
  account: PlainCompressedAccount;
  merkleTreeIndex: number;
  queueIndex: number;
  leafIndex: number;
  rootIndex: number;
}

/** An output: the account and the index of its (v1) state tree in the remaining accounts. */
export interface PackedOutput {
  account: PlainCompressedAccount;
  merkleTreeIndex: number;
}

/** A new v1 address: seed (address = hashToField(tree ‖ seed)), queue and tree indices, the address tree's root index. */
export interface PackedNewAddress {
  seed: Uint8Array;
  queueIndex: number;
  treeIndex: number;
  rootIndex: number;
}

/** `InstructionDataInvoke` fields (data.rs). `relay_fee` is always None. */
export interface InvokeData {
  proof: CompressedProof | null;
  inputs: PackedInput[];
  outputs: PackedOutput[];
  newAddresses: PackedNewAddress[];
  /** Some(lamports) with isCompress: the fee payer moves them into the sol pool. */
  compressOrDecompressLamports: bigint | null;
  isCompress: boolean;
}

class Borsh {
  private parts: number[] = [];
  u8(v: number): this {
    this.parts.push(v & 0xff);
    return this;
  }
  bool(v: boolean): this {
    return this.u8(v ? 1 : 0);
  }
  u16(v: number): this {
    return this.u8(v).u8(v >> 8);
  }
  u32(v: number): this {
    for (let i = 0; i < 4; i++) this.u8(Math.floor(v / 2 ** (8 * i)));
    return this;
  }
  u64(v: bigint): this {
    for (let i = 0n; i < 8n; i++) this.u8(Number((v >> (8n * i)) & 0xffn));
    return this;
  }
  bytes(b: ArrayLike<number>, len?: number): this {
    if (len !== undefined && b.length !== len) throw new RangeError(`expected ${len} bytes, got ${b.length}`);
    for (let i = 0; i < b.length; i++) this.parts.push(b[i]!);
    return this;
  }
  account(a: PlainCompressedAccount): this {
    this.bytes(a.owner, 32).u64(a.lamports);
    if (a.address) this.u8(1).bytes(a.address, 32);
    else this.u8(0);
    return this.u8(0); // data: None
  }
  done(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

/**
 * The `invoke` instruction data: discriminator (8) ‖ u32 LE length ‖ borsh InstructionDataInvoke
 * {proof: Option<{a[32], b[64], c[32]}>, input_compressed_accounts_with_merkle_context:
 * Vec<{compressed_account, merkle_context {tree u8, queue u8, leaf_index u32, prove_by_index bool},
 * root_index u16, read_only bool}>, output_compressed_accounts: Vec<{compressed_account,
 * merkle_tree_index u8}>, relay_fee: Option<u64>, new_address_params: Vec<{seed[32], queue u8,
 * tree u8, root_index u16}>, compress_or_decompress_lamports: Option<u64>, is_compress: bool}.
 */
export function encodeInvokeData(d: InvokeData): Uint8Array {
  const w = new Borsh();
  if (d.proof) w.u8(1).bytes(d.proof.a, 32).bytes(d.proof.b, 64).bytes(d.proof.c, 32);
  else w.u8(0);
  w.u32(d.inputs.length);
  for (const i of d.inputs) w.account(i.account).u8(i.merkleTreeIndex).u8(i.queueIndex).u32(i.leafIndex).bool(false).u16(i.rootIndex).bool(false);
  w.u32(d.outputs.length);
  for (const o of d.outputs) w.account(o.account).u8(o.merkleTreeIndex);
  w.u8(0); // relay_fee None
  w.u32(d.newAddresses.length);
  for (const a of d.newAddresses) w.bytes(a.seed, 32).u8(a.queueIndex).u8(a.treeIndex).u16(a.rootIndex);
  if (d.compressOrDecompressLamports !== null) w.u8(1).u64(d.compressOrDecompressLamports);
  else w.u8(0);
  w.bool(d.isCompress);
  const body = w.done();
  const out = new Uint8Array(12 + body.length);
  out.set(INVOKE_DISCRIMINATOR, 0);
  new DataView(out.buffer).setUint32(8, body.length, true);
  out.set(body, 12);
  return out;
}

/**
 * The light-system-program `invoke` instruction. Accounts (invoke/instruction.rs): fee payer
 * (writable signer), authority (signer; the owner of every input), registered program PDA, an
 * unused slot (once the noop program), account-compression CPI authority, account-compression
 * program, sol pool PDA or the system program's own id for None (writable when present),
 * decompression recipient (None here), the system program; then `remaining` (trees and queues,
 * writable) that the data's indices point into.
 */
export function invokeInstruction(o: { payer: KeyPairSigner; pdas: { solPool: Address; cpiAuthority: Address }; withSolPool: boolean; remaining: Address[]; data: InvokeData }): Instruction {
  const ro = (address: Address) => ({ address, role: AccountRole.READONLY });
  return {
    programAddress: LIGHT_SYSTEM_PROGRAM,
    accounts: [
      { address: o.payer.address, role: AccountRole.WRITABLE_SIGNER, signer: o.payer },
      { address: o.payer.address, role: AccountRole.WRITABLE_SIGNER, signer: o.payer },
      ro(REGISTERED_PROGRAM_PDA),
      ro(NOOP_PROGRAM),
      ro(o.pdas.cpiAuthority),
      ro(ACCOUNT_COMPRESSION_PROGRAM),
      o.withSolPool ? { address: o.pdas.solPool, role: AccountRole.WRITABLE } : ro(LIGHT_SYSTEM_PROGRAM),
      ro(LIGHT_SYSTEM_PROGRAM),
      ro(SYSTEM_PROGRAM),
      ...o.remaining.map((address) => ({ address, role: AccountRole.WRITABLE })),
    ],
    data: encodeInvokeData(o.data),
  } as Instruction;
}

/** ComputeBudget `SetComputeUnitLimit` (tag 2, u32 LE units). */
export function computeUnitLimitInstruction(units: number): Instruction {
  const data = new Uint8Array(5);
  data[0] = 2;
  new DataView(data.buffer).setUint32(1, units, true);
  return { programAddress: COMPUTE_BUDGET_PROGRAM, accounts: [], data } as Instruction;
}

/** A signed v0 transaction (no lookup tables) with the svm's latest blockhash, and its wire size in bytes. */
export async function buildTransaction(svm: LiteSVM, payer: KeyPairSigner, instructions: Instruction[]): Promise<{ tx: Transaction; wireBytes: number }> {
  const tx = await pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => svm.setTransactionMessageLifetimeUsingLatestBlockhash(m),
    (m) => appendTransactionMessageInstructions(instructions, m),
    (m) => signTransactionMessageWithSigners(m),
  );
  return { tx, wireBytes: getTransactionEncoder().encode(tx).length };
}

/** The outcome of a transaction: ok, compute units, logs, and for a failure the custom error code (or the error text). */
export interface TxOutcome {
  ok: boolean;
  computeUnits: bigint;
  logs: string[];
  customCode?: number;
  error?: string;
}

/** Sends `tx` to the svm. */
export function send(svm: LiteSVM, tx: Transaction): TxOutcome {
  const r = svm.sendTransaction(tx);
  if (r instanceof FailedTransactionMetadata) {
    const meta = r.meta();
    const err = r.err();
    let customCode: number | undefined;
    // TransactionErrorInstructionError {index, err()} → InstructionErrorCustom {code} (classes not exported by the package index)
    if (typeof err === 'object' && err !== null && 'index' in err && typeof (err as { err?: unknown }).err === 'function') {
      const inner = (err as { err(): unknown }).err();
      if (typeof inner === 'object' && inner !== null && typeof (inner as { code?: unknown }).code === 'number') customCode = (inner as { code: number }).code;
    }
    return { ok: false, computeUnits: meta.computeUnitsConsumed(), logs: meta.logs(), customCode, error: String(err) };
  }
  const m = r as TransactionMetadata;
  return { ok: true, computeUnits: m.computeUnitsConsumed(), logs: m.logs() };
}

// ---------------------------------------------------------------------------------------------
// v1 trees

/** A v1 state tree kept locally: append-only, height 26, Poseidon2 parents, ZERO_BYTES for empty subtrees. */
export class LocalTreeV1 {
  /** levels[0] = leaves, levels[k] = the filled nodes of level k (left to right). */
  private readonly levels: Uint8Array[][];
  constructor(readonly height = 26) {
    this.levels = Array.from({ length: height + 1 }, () => []);
  }
  get size(): number {
    return this.levels[0]!.length;
  }
  /** Appends a leaf; returns its index. */
  append(leaf: Uint8Array): number {
    const index = this.size;
    this.levels[0]!.push(leaf);
    let i = index;
    for (let k = 0; k < this.height; k++) {
      const parent = i >> 1;
      const left = this.node(k, parent * 2);
      const right = this.node(k, parent * 2 + 1);
      this.levels[k + 1]![parent] = poseidon2(left, right);
      i = parent;
    }
    return index;
  }
  private node(level: number, index: number): Uint8Array {
    return this.levels[level]![index] ?? ZERO_BYTES[level]!;
  }
  root(): Uint8Array {
    return this.node(this.height, 0);
  }
  /** Siblings of leaf `index`, leaf level first. */
  path(index: number): Uint8Array[] {
    return Array.from({ length: this.height }, (_, k) => this.node(k, (index >> k) ^ 1));
  }
}

/** The concurrent Merkle tree header of a v1 tree account (state or address). */
export interface ConcurrentTreeState {
  height: number;
  nextIndex: number;
  sequenceNumber: number;
  /** roots.last_index: the root index a proof against the current root names. */
  rootIndex: number;
  /** roots[rootIndex]. */
  root: Uint8Array;
  /** roots[i] (the root history: a proof may name any root still in it). */
  rootAt(i: number): Uint8Array;
}

/**
 * Reads a v1 tree account (StateMerkleTreeAccount / AddressMerkleTreeAccount): the 8-byte
 * discriminator and 216-byte MerkleTreeMetadata, then the ConcurrentMerkleTree at 224: height,
 * canopy_depth, next_index, sequence_number (u64), rightmost_leaf[32], filled_subtrees {capacity,
 * length}, changelog {capacity, length, first, last}, roots {capacity, length, first, last}, canopy
 * {capacity, length} (384 bytes in all), then filled_subtrees (height × 32), changelog (capacity ×
 * entry: [Option<[u8;32]>; height] padded to 8, then u64 index), roots (capacity × 32), canopy.
 */
export function readConcurrentTree(data: Uint8Array): ConcurrentTreeState {
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const u = (o: number) => Number(v.getBigUint64(o, true));
  const height = u(224);
  const changelogCap = u(304);
  const rootsCap = u(336);
  const rootIndex = u(360);
  const entry = Math.ceil((height * 33) / 8) * 8 + 8;
  const rootsAt = 384 + height * 32 + changelogCap * entry;
  if (rootIndex >= rootsCap || rootsAt + rootsCap * 32 > data.length) throw new Error(`tree layout: roots at ${rootsAt} × ${rootsCap} does not fit ${data.length} bytes`);
  const rootAt = (i: number) => {
    if (!Number.isInteger(i) || i < 0 || i >= rootsCap) throw new RangeError(`root index ${i} outside the ${rootsCap} roots`);
    return data.slice(rootsAt + i * 32, rootsAt + i * 32 + 32);
  };
  return { height, nextIndex: u(240), sequenceNumber: u(248), rootIndex, root: rootAt(rootIndex), rootAt };
}

/** base58 of 32 bytes (for messages). */
export const b58 = (b: Uint8Array): string => base58.encode(b);
