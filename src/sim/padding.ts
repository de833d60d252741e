/**
 * The sparse profile's padding: the non-Light transactions of a block (votes, system transfers with
 * compute-budget instructions, SPL-token transfers), each derived from (seed, slot, index) when asked
 * and never stored. They are valid legacy wire transactions (base64, as getBlock with
 * `encoding: 'base64'` serves them) with a plausible `meta` (fee, balances, log messages, token
 * balances), and they never touch a Light account or program.
 *
 * A padding signature carries its slot and index (XOR-masked with bytes derived from its first four
 * bytes and the seed), so getTransaction can find and rebuild it without any index:
 * {@link PaddingSource.locate}.
 */
import { createHash } from 'node:crypto';
import * as base58 from '../solana/base58.ts';
import { encodeLegacyTransaction, type OuterIx } from './compactTx.ts';

const VOTE_PROGRAM = 'Vote111111111111111111111111111111111111111';
const SYSTEM_PROGRAM = '11111111111111111111111111111111';
const COMPUTE_BUDGET = 'ComputeBudget111111111111111111111111111111';
const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';

/** 32-bit mix (murmur3 finaliser) of a few integers: the simulator's cheap seeded hash. */
export function mix32(...xs: number[]): number {
  let h = 0x9e3779b9;
  for (const x of xs) {
    let k = Math.imul(x | 0, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, 0x1b873593);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
    // Slots and indexes may exceed 2^32 in principle: fold the high part in too.
    const hi = Math.floor(x / 4294967296);
    if (hi) h ^= Math.imul(hi, 0x85ebca6b);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** sfc32: a small fast PRNG of 32-bit outputs. */
class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d = 1;
  constructor(a: number, b: number, c: number) {
    this.a = a | 0;
    this.b = b | 0;
    this.c = c | 0;
    for (let i = 0; i < 12; i++) this.u32();
  }
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor((this.u32() / 4294967296) * n);
  }
  fill(b: Uint8Array, from = 0, to = b.length): void {
    for (let i = from; i < to; i += 4) {
      const v = this.u32();
      for (let k = 0; k < 4 && i + k < to; k++) b[i + k] = (v >>> (8 * k)) & 0xff;
    }
  }
}

/** A pooled account: its bytes and base58 text. */
interface Key {
  bytes: Uint8Array;
  b58: string;
}

/** One padding transaction: wire bytes and its getBlock entry as JSON text. */
export interface PaddingTx {
  signature: Uint8Array;
  wire: Buffer;
  /** `{"transaction":[…,"base64"],"meta":{…},"version":"legacy"}`. */
  entry: string;
}

const BUDGET_LOGS = [`Program ${COMPUTE_BUDGET} invoke [1]`, `Program ${COMPUTE_BUDGET} success`, `Program ${COMPUTE_BUDGET} invoke [1]`, `Program ${COMPUTE_BUDGET} success`];
/** The log messages of each padding kind (constant: made once). */
const VOTE_LOGS = JSON.stringify([`Program ${VOTE_PROGRAM} invoke [1]`, `Program ${VOTE_PROGRAM} success`]);
const TRANSFER_LOGS = JSON.stringify([...BUDGET_LOGS, `Program ${SYSTEM_PROGRAM} invoke [1]`, `Program ${SYSTEM_PROGRAM} success`]);
const TOKEN_LOGS = JSON.stringify([
  ...BUDGET_LOGS,
  `Program ${TOKEN_PROGRAM} invoke [1]`,
  'Program log: Instruction: TransferChecked',
  `Program ${TOKEN_PROGRAM} consumed 6200 of 1399700 compute units`,
  `Program ${TOKEN_PROGRAM} success`,
]);

const u64le = (v: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return b;
};

/** Derives padding transactions of a seed (pools of validators, wallets and mints made once, ≈1 MB). */
export class PaddingSource {
  private readonly validators: Key[];
  private readonly voteAccounts: Key[];
  private readonly wallets: Key[];
  private readonly tokenAccounts: Key[];
  private readonly mints: Key[];
  private readonly program: Record<'vote' | 'system' | 'budget' | 'token', Uint8Array>;

  constructor(private readonly seed: number) {
    const key = (label: string): Key => {
      const bytes = createHash('sha256').update(`refract-padding-${seed}-${label}`).digest();
      return { bytes, b58: base58.encode32(bytes) };
    };
    this.validators = Array.from({ length: 1500 }, (_, i) => key(`validator-${i}`));
    this.voteAccounts = Array.from({ length: 1500 }, (_, i) => key(`vote-${i}`));
    this.wallets = Array.from({ length: 4096 }, (_, i) => key(`wallet-${i}`));
    this.tokenAccounts = Array.from({ length: 4096 }, (_, i) => key(`token-account-${i}`));
    this.mints = Array.from({ length: 64 }, (_, i) => key(`mint-${i}`));
    this.program = { vote: base58.decode(VOTE_PROGRAM), system: base58.decode(SYSTEM_PROGRAM), budget: base58.decode(COMPUTE_BUDGET), token: base58.decode(TOKEN_PROGRAM) };
  }

  /** The mask of the slot and index bytes of a signature whose first four bytes are `w0`. */
  private mask(w0: number): [number, number] {
    return [mix32(this.seed, w0, 0x51a7), mix32(this.seed, w0, 0x1dec)];
  }

  /** The PRNG of transaction `j` of `slot`. */
  private rng(slot: number, j: number): Rng {
    return new Rng(mix32(this.seed, slot, j, 1), mix32(this.seed, slot, j, 2), mix32(this.seed, slot, j, 3));
  }

  /** The 64-byte signature of padding transaction `j` of `slot` (the first thing its PRNG makes). */
  private signatureFrom(rng: Rng, slot: number, j: number): Buffer {
    const sig = Buffer.allocUnsafe(64);
    rng.fill(sig, 0, 56);
    const [m0, m1] = this.mask(sig.readUInt32LE(0));
    // bytes 56..61: slot (48 bits) ^ mask; bytes 62..63: index (16 bits) ^ mask.
    sig.writeUInt32LE((slot % 4294967296 ^ m0) >>> 0, 56);
    sig.writeUInt16LE((Math.floor(slot / 4294967296) ^ m1) & 0xffff, 60);
    sig.writeUInt16LE((j ^ (m1 >>> 16)) & 0xffff, 62);
    return sig;
  }

  /** The signature of padding transaction `j` of `slot`, without building the rest. */
  signature(slot: number, j: number): Buffer {
    return this.signatureFrom(this.rng(slot, j), slot, j);
  }

  /**
   * The slot and index a padding signature names, or null when `sig` cannot be one of this seed's
   * (the caller still compares it with {@link signature} of that slot and index).
   */
  locate(sig: Uint8Array): { slot: number; index: number } | null {
    if (sig.length !== 64) return null;
    const b = Buffer.from(sig.buffer, sig.byteOffset, 64);
    const [m0, m1] = this.mask(b.readUInt32LE(0));
    const slot = ((b.readUInt32LE(56) ^ m0) >>> 0) + ((b.readUInt16LE(60) ^ m1) & 0xffff) * 4294967296;
    const index = (b.readUInt16LE(62) ^ (m1 >>> 16)) & 0xffff;
    const again = this.signature(slot, index);
    return again.equals(b) ? { slot, index } : null;
  }

  /**
   * Padding transaction `j` of `slot` (j < 65,536), whose recent blockhash is `recentBlockhash` (the
   * parent block's). About 70% votes, 20% system transfers with compute-budget instructions, 10%
   * SPL-token `TransferChecked`.
   */
  tx(slot: number, j: number, recentBlockhash: Uint8Array): PaddingTx {
    const rng = this.rng(slot, j);
    const signature = this.signatureFrom(rng, slot, j);
    const kind = rng.int(100);
    if (kind < 70) return this.vote(rng, signature, recentBlockhash);
    if (kind < 90) return this.transfer(rng, signature, recentBlockhash);
    return this.tokenTransfer(rng, signature, recentBlockhash);
  }

  private entry(wire: Buffer, meta: string): string {
    return `{"transaction":["${wire.toString('base64')}","base64"],"meta":${meta},"version":"legacy"}`;
  }


  private vote(rng: Rng, signature: Buffer, bh: Uint8Array): PaddingTx {
    const v = rng.int(this.validators.length);
    const identity = this.validators[v]!;
    const voteAccount = this.voteAccounts[v]!;
    // TowerSync (instruction 14) with lockouts, root, hash, timestamp, block id: 100..160 bytes.
    const data = Buffer.allocUnsafe(100 + rng.int(61));
    data.writeUInt32LE(14, 0);
    rng.fill(data, 4);
    const wire = encodeLegacyTransaction(signature, { readonlySigned: 0, readonlyUnsigned: 1 }, [identity.bytes, voteAccount.bytes, this.program.vote], bh, [{ programAddressIndex: 2, accountIndices: [1, 0], data }]);
    const bal = 1_000_000_000 + rng.int(2 ** 31);
    const voteBal = 27_000_000_000 + rng.int(2 ** 31);
    const meta =
      `{"err":null,"status":{"Ok":null},"fee":5000,"preBalances":[${bal},${voteBal},1],"postBalances":[${bal - 5000},${voteBal},1],` +
      `"innerInstructions":[],"logMessages":${VOTE_LOGS},` +
      `"preTokenBalances":[],"postTokenBalances":[],"rewards":[],"loadedAddresses":{"writable":[],"readonly":[]},"computeUnitsConsumed":2100}`;
    return { signature, wire, entry: this.entry(wire, meta) };
  }

  private budgetIxs(rng: Rng, budgetIndex: number): { ixs: OuterIx[]; priorityFee: number } {
    const limit = 200_000 + rng.int(1_200_000);
    const price = 1 + rng.int(500_000); // micro-lamports per compute unit
    const limitData = Buffer.alloc(5);
    limitData[0] = 2;
    limitData.writeUInt32LE(limit, 1);
    const priceData = Buffer.alloc(9);
    priceData[0] = 3;
    priceData.writeBigUInt64LE(BigInt(price), 1);
    return {
      ixs: [
        { programAddressIndex: budgetIndex, accountIndices: [], data: limitData },
        { programAddressIndex: budgetIndex, accountIndices: [], data: priceData },
      ],
      priorityFee: Math.ceil((limit * price) / 1e6),
    };
  }

  private transfer(rng: Rng, signature: Buffer, bh: Uint8Array): PaddingTx {
    const from = this.wallets[rng.int(this.wallets.length)]!;
    let to = this.wallets[rng.int(this.wallets.length)]!;
    if (to === from) to = this.wallets[(this.wallets.indexOf(from) + 1) % this.wallets.length]!;
    const lamports = 1 + rng.int(5_000_000_000);
    const budget = this.budgetIxs(rng, 3);
    const data = Buffer.concat([Buffer.from([2, 0, 0, 0]), u64le(BigInt(lamports))]);
    const wire = encodeLegacyTransaction(signature, { readonlySigned: 0, readonlyUnsigned: 2 }, [from.bytes, to.bytes, this.program.system, this.program.budget], bh, [
      ...budget.ixs,
      { programAddressIndex: 2, accountIndices: [0, 1], data },
    ]);
    const fee = 5000 + budget.priorityFee;
    const a = 10_000_000_000 + rng.int(2 ** 31);
    const b = rng.int(2 ** 31);
    const meta =
      `{"err":null,"status":{"Ok":null},"fee":${fee},"preBalances":[${a},${b},1,1],"postBalances":[${a - lamports - fee},${b + lamports},1,1],` +
      `"innerInstructions":[],"logMessages":${TRANSFER_LOGS},` +
      `"preTokenBalances":[],"postTokenBalances":[],"rewards":[],"loadedAddresses":{"writable":[],"readonly":[]},"computeUnitsConsumed":450}`;
    return { signature, wire, entry: this.entry(wire, meta) };
  }

  private tokenTransfer(rng: Rng, signature: Buffer, bh: Uint8Array): PaddingTx {
    const w = rng.int(this.wallets.length);
    const owner = this.wallets[w]!;
    const d = (w + 1 + rng.int(this.wallets.length - 1)) % this.wallets.length;
    const destOwner = this.wallets[d]!;
    const source = this.tokenAccounts[w]!;
    const dest = this.tokenAccounts[d]!;
    const mint = this.mints[rng.int(this.mints.length)]!;
    const decimals = 6;
    const amount = 1 + rng.int(1_000_000_000);
    const before = amount + rng.int(2 ** 31);
    const destBefore = rng.int(2 ** 31);
    const budget = this.budgetIxs(rng, 5);
    const data = Buffer.concat([Buffer.from([12]), u64le(BigInt(amount)), Buffer.from([decimals])]);
    // Keys: owner (signer), source, destination (writable); mint, token program, compute budget (readonly).
    const wire = encodeLegacyTransaction(signature, { readonlySigned: 0, readonlyUnsigned: 3 }, [owner.bytes, source.bytes, dest.bytes, mint.bytes, this.program.token, this.program.budget], bh, [
      ...budget.ixs,
      { programAddressIndex: 4, accountIndices: [1, 3, 2, 0], data },
    ]);
    const fee = 5000 + budget.priorityFee;
    const lamports = 50_000_000 + rng.int(2 ** 30);
    const ui = (v: number) => `{"amount":"${v}","decimals":${decimals},"uiAmount":${v / 10 ** decimals},"uiAmountString":"${v / 10 ** decimals}"}`;
    const tb = (index: number, who: Key, v: number) => `{"accountIndex":${index},"mint":"${mint.b58}","owner":"${who.b58}","programId":"${TOKEN_PROGRAM}","uiTokenAmount":${ui(v)}}`;
    const meta =
      `{"err":null,"status":{"Ok":null},"fee":${fee},"preBalances":[${lamports},2039280,2039280,1461600,934087680,1],"postBalances":[${lamports - fee},2039280,2039280,1461600,934087680,1],` +
      `"innerInstructions":[],"logMessages":${TOKEN_LOGS},` +
      `"preTokenBalances":[${tb(1, owner, before)},${tb(2, destOwner, destBefore)}],"postTokenBalances":[${tb(1, owner, before - amount)},${tb(2, destOwner, destBefore + amount)}],` +
      `"rewards":[],"loadedAddresses":{"writable":[],"readonly":[]},"computeUnitsConsumed":6500}`;
    return { signature, wire, entry: this.entry(wire, meta) };
  }
}
