/**
 * Test chain for the gRPC tests: one chain served both as a Solana JSON-RPC node (a `SolanaRpc` double
 * for the poller) and as a {@link GeyserSource} (for src/sim/geyser.ts), so both sources read the same
 * blocks. Blocks mix real Light transactions (LightTxGenerator), a failed one, a v0 transaction that
 * loads the account-compression program from a lookup table, votes and plain transfers; some slots are
 * skipped and some blocks have no Light transaction.
 */
import { createHash } from 'node:crypto';
import { type Address, getCompiledTransactionMessageEncoder, getTransactionEncoder } from '@solana/kit';
import { ACCOUNT_COMPRESSION_PROGRAM_ID, SYSTEM_PROGRAM_ID, VOTE_PROGRAM_ID } from '../src/solana/programIds.ts';
import * as base58 from '../src/solana/base58.ts';
import type { SolanaRpc } from '../src/solana/rpcClient.ts';
import { LightTxGenerator } from '../src/sim/generator.ts';
import type { GeyserSource } from '../src/sim/geyser.ts';

const sha = (s: string) => createHash('sha256').update(s).digest();
export const key = (s: string) => base58.encode(sha(`key-${s}`));
const msgEncoder = getCompiledTransactionMessageEncoder();
const txEncoder = getTransactionEncoder();

export interface RawTx {
  transaction: [string, 'base64'];
  meta: Record<string, unknown>;
  version: 'legacy' | 0;
}

/**
 * A transaction in getBlock JSON form. `keys[0]` signs; `lookups`/`loaded`: a v0 message whose
 * instructions may index the loaded addresses (after the static keys: writable, then readonly).
 */
export function makeTx(o: {
  tag: string;
  keys: string[];
  readonlyUnsigned?: number;
  instructions: { program: number; accounts: number[]; data: number[] }[];
  inner?: { index: number; instructions: { programIdIndex: number; accounts: number[]; data: number[]; stackHeight?: number | null }[] }[] | null;
  lookups?: { table: string; writable: number[]; readonly: number[] }[];
  loaded?: { writable: string[]; readonly: string[] };
  err?: unknown;
  logMessages?: string[] | null;
}): RawTx {
  const v0 = !!o.lookups;
  const messageBytes = msgEncoder.encode({
    version: v0 ? 0 : 'legacy',
    header: { numSignerAccounts: 1, numReadonlySignerAccounts: 0, numReadonlyNonSignerAccounts: o.readonlyUnsigned ?? 1 },
    staticAccounts: o.keys as Address[],
    lifetimeToken: base58.encode(sha(`bh-${o.tag}`)),
    instructions: o.instructions.map((ix) => ({ programAddressIndex: ix.program, accountIndices: ix.accounts, data: Uint8Array.from(ix.data) })),
    ...(v0 ? { addressTableLookups: o.lookups!.map((l) => ({ lookupTableAddress: l.table as Address, writableIndexes: l.writable, readonlyIndexes: l.readonly })) } : {}),
  } as never);
  const wire = txEncoder.encode({ messageBytes, signatures: { [o.keys[0]!]: Buffer.concat([sha(`sig-${o.tag}`), sha(`sig2-${o.tag}`)]) } } as never);
  return {
    transaction: [Buffer.from(wire).toString('base64'), 'base64'],
    meta: {
      err: o.err ?? null,
      status: o.err ? { Err: o.err } : { Ok: null },
      fee: 5000,
      preBalances: o.keys.map(() => 10),
      postBalances: o.keys.map(() => 9),
      innerInstructions:
        o.inner === null
          ? null
          : (o.inner ?? []).map((g) => ({ index: g.index, instructions: g.instructions.map((i) => ({ programIdIndex: i.programIdIndex, accounts: i.accounts, data: base58.encode(Uint8Array.from(i.data)), stackHeight: i.stackHeight === undefined ? 2 : i.stackHeight })) })),
      logMessages: o.logMessages === undefined ? ['Program log: hi'] : o.logMessages,
      preTokenBalances: [],
      postTokenBalances: [],
      rewards: [],
      loadedAddresses: o.loaded ?? { writable: [], readonly: [] },
      computeUnitsConsumed: 1234,
    },
    version: v0 ? 0 : 'legacy',
  };
}

/** A vote transaction (not Light). */
export const voteTx = (tag: string) =>
  makeTx({ tag: `vote-${tag}`, keys: [key(`voter-${tag}`), key('vote-account'), VOTE_PROGRAM_ID], instructions: [{ program: 2, accounts: [1, 0], data: [2, 0, 0, 0, 1] }] });

/** A system transfer (not Light). */
export const transferTx = (tag: string) =>
  makeTx({ tag: `xfer-${tag}`, keys: [key(`payer-${tag}`), key(`to-${tag}`), SYSTEM_PROGRAM_ID], instructions: [{ program: 2, accounts: [0, 1], data: [2, 0, 0, 0, 64, 66, 15, 0, 0, 0, 0, 0] }] });

/**
 * A v0 transaction that loads the account-compression program (readonly) and a tree (writable) from a
 * lookup table: outer instruction of a static program, inner instructions of ACP on loaded accounts.
 */
export const lookupLightTx = (tag: string, err: unknown = null) =>
  makeTx({
    tag: `alt-${tag}`,
    keys: [key(`alt-payer-${tag}`), key('light-system-ish')],
    readonlyUnsigned: 1,
    instructions: [{ program: 1, accounts: [0, 2, 3], data: [9, 9, 9] }],
    inner: [{ index: 0, instructions: [{ programIdIndex: 3, accounts: [2, 0], data: [1, 2, 3, 4, 5, 6, 7, 8, 42] }] }],
    lookups: [{ table: key('table'), writable: [4], readonly: [7] }],
    loaded: { writable: [key(`tree-${tag}`)], readonly: [ACCOUNT_COMPRESSION_PROGRAM_ID] },
    err,
  });

/** Does a getBlock JSON transaction name `program` among its static or loaded keys? */
export function namesProgram(t: RawTx, program = ACCOUNT_COMPRESSION_PROGRAM_ID): boolean {
  const loaded = t.meta.loadedAddresses as { writable: string[]; readonly: string[] } | undefined;
  if (loaded && [...loaded.writable, ...loaded.readonly].includes(program)) return true;
  return Buffer.from(t.transaction[0], 'base64').indexOf(Buffer.from(base58.decode(program))) >= 0;
}

/** Chain options. */
export interface ChainOptions {
  /** First slot of the chain (its parent is `first − 1`, with no block). */
  first?: number;
  /** Initial tip. */
  tip?: number;
  /** Slots without a block. */
  skipped?: (slot: number) => boolean;
  /** Blocks without any Light transaction. */
  noLight?: (slot: number) => boolean;
  /** Slots older than tip − keep are pruned (getBlock throws). */
  keep?: number;
}

/** The test chain (module comment). */
export class TestChain {
  readonly first: number;
  private tipSlot: number;
  private readonly gen = new LightTxGenerator({ owners: 20, seed: 7 });
  private readonly blocks = new Map<number, Record<string, unknown> | null>();
  private readonly listeners = new Set<(slot: number) => void>();
  private timer: NodeJS.Timeout | null = null;
  private lastBlockSlot: number;
  readonly getBlockCalls = new Map<number, number>();

  constructor(private readonly o: ChainOptions = {}) {
    this.first = o.first ?? 1000;
    this.lastBlockSlot = this.first - 1;
    this.tipSlot = this.first - 1;
    this.advanceTo(o.tip ?? this.first + 20);
  }

  tip(): number {
    return this.tipSlot;
  }

  private make(slot: number): Record<string, unknown> | null {
    if (this.o.skipped?.(slot) ?? slot % 7 === 3) return null;
    const txs: RawTx[] = [voteTx(`${slot}`)];
    if (!(this.o.noLight?.(slot) ?? slot % 5 === 1)) {
      const light = (this.gen.block(slot, 1 + (slot % 3)).json.transactions as RawTx[]).slice();
      txs.push(...light);
      if (slot % 4 === 0) txs.push(lookupLightTx(`${slot}`, slot % 8 === 0 ? { InstructionError: [0, { Custom: 6001 }] } : null));
    }
    txs.splice(1, 0, transferTx(`${slot}`));
    const parent = this.lastBlockSlot;
    this.lastBlockSlot = slot;
    return {
      blockHeight: slot,
      blockTime: 1_700_000_000 + slot,
      blockhash: base58.encode(sha(`blockhash-${slot}`)),
      parentSlot: parent,
      previousBlockhash: base58.encode(sha(`blockhash-${parent}`)),
      transactions: txs,
      rewards: [],
    };
  }

  /** Produces slots up to `slot`, telling the listeners of each. */
  advanceTo(slot: number): void {
    while (this.tipSlot < slot) {
      const s = ++this.tipSlot;
      this.blocks.set(s, this.make(s));
      for (const l of this.listeners) l(s);
    }
  }

  /** Produces a slot every `ms`. */
  run(ms: number): void {
    this.stop();
    this.timer = setInterval(() => this.advanceTo(this.tipSlot + 1), ms);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** getBlock JSON (null: skipped). @throws for a slot not produced yet, or pruned. */
  block(slot: number): Record<string, unknown> | null {
    if (slot > this.tipSlot || slot < this.first) throw new Error(`Block not available for slot ${slot}`);
    if (this.o.keep !== undefined && slot < this.tipSlot - this.o.keep) throw new Error(`Block ${slot} cleaned up`);
    const b = this.blocks.get(slot);
    return b === undefined ? null : b;
  }

  /** Slots with a block in [from, to]. */
  blockSlots(from: number, to: number): number[] {
    const out: number[] = [];
    for (let s = from; s <= to; s++) if (this.blocks.get(s)) out.push(s);
    return out;
  }

  /** A SolanaRpc double over the chain (getSlot, getBlock). */
  rpc(): SolanaRpc {
    return {
      url: 'test://chain',
      getSlot: async () => this.tipSlot,
      getBlock: async (slot: number) => {
        this.getBlockCalls.set(slot, (this.getBlockCalls.get(slot) ?? 0) + 1);
        return structuredClone(this.block(slot));
      },
    } as unknown as SolanaRpc;
  }

  /** The chain as the geyser server's source. */
  source(): GeyserSource {
    return {
      blockJson: async (slot) => this.block(slot),
      tipSlot: () => this.tipSlot,
      onSlot: (l) => {
        this.listeners.add(l);
        return () => this.listeners.delete(l);
      },
    };
  }
}
