/**
 * Yellowstone gRPC block source: one subscription to a Dragon's Mouth server (`@triton-one/yellowstone-grpc`),
 * yielding {@link BlockInfo} batches in slot order along the parent chain, like `pollBlocks` (poller.ts),
 * holding only the transactions that name the account-compression program (every Light event needs one
 * of its instructions; see the module comment of skim.ts). Any sign that data may be missing ends the
 * generator with a {@link GrpcSourceFault}; it never reconnects by itself: live.ts falls back to the RPC
 * poller and comes back.
 *
 * Subscription (one `SubscribeRequest`, `commitment` confirmed by default, `fromSlot` = startSlot):
 * - mode `blocks` (default): `blocks.refract = {accountInclude: [ACP], includeTransactions: true}`. The
 *   server sends one message per block of the chain, matched transactions inside, whether or not any
 *   matched (so slots without Light transactions advance too). It builds that message only once it holds
 *   as many transactions as the block meta's `executedTransactionCount` (yellowstone-grpc's block
 *   reconstruction, `try_seal`): the count that cannot be checked on the client is checked on the server,
 *   and the one way left to lose data is to lose a whole block message, which breaks the parent chain.
 * - mode `transactions`: `transactions.refract = {vote: false, accountInclude: [ACP]}` plus `blocksMeta`.
 *   A block is complete when its meta arrives (the server sends a slot's transactions before its meta).
 *   A lost block meta breaks the parent chain; a lost transaction message cannot be seen (the meta
 *   counts every transaction of the block, not the matched ones): prefer `blocks`.
 * - `slots` with `filterByCommitment: false`: every slot status; the newest slot is the tip (lag), and
 *   slot messages keep the stream audibly alive between blocks.
 *
 * Faults (the reason of the {@link GrpcSourceFault}):
 * - `connect`: the server could not be reached or the subscription opened (connectTimeoutMs);
 * - `replay-unavailable`: `fromSlot` is older than the server's replay window (SubscribeReplayInfo's
 *   `firstAvailable`, asked first, or the server's `broadcast from N is not available, last available: M`),
 *   or the server does not replay (`from_slot is not supported`);
 * - `stream-error` / `stream-closed`: the stream failed or ended;
 * - `silence`: no slot, block, block-meta or transaction message for `silenceMs` (server pings do not
 *   count; they are answered);
 * - `gap`: a block whose parent has not come `reorderMs` after it (or more than REORDER_MAX_BLOCKS such
 *   blocks), e.g. a lost block message, or a replay that started later than asked;
 * - `fork`: a block whose parent is older than the last block taken, or whose previousBlockhash is not
 *   that block's hash;
 * - `late-transaction` (mode transactions): a transaction of a slot whose meta came already;
 * - `lagging`: the tip stayed more than `maxLagSlots` past the last block taken for `lagGraceMs`;
 * - `decode`: a message that does not convert (yellowstone.ts), e.g. an error variant newer than its table;
 * - `backlog`: more than `maxBufferedBlocks` blocks wait for the consumer.
 * Blocks taken before the fault are yielded first; every yielded block extends the chain.
 */
import { setMaxListeners } from 'node:events';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import * as yellowstone from '@triton-one/yellowstone-grpc';
import { CommitmentLevel, SubscribeRequest, type SubscribeUpdate, type SubscribeUpdateTransactionInfo } from '@triton-one/yellowstone-grpc';
import { ACCOUNT_COMPRESSION_PROGRAM_ID } from '../../light/constants.ts';
import { DecodeError, blockFromYellowstone, blockHeaderFromYellowstone, encodeBase58 } from '../prepareBatch.ts';
import type { BlockInfo } from '../../types.ts';
import { childAbort } from '../abort.ts';
import { GrpcSourceFault, type GrpcFaultReason } from './grpcFault.ts';

/** What a subscription needs of a Yellowstone connection (the real client, or a test double). */
export interface GeyserTransport {
  /** Opens the Subscribe stream with its first request: a duplex of SubscribeRequest in, SubscribeUpdate out. */
  subscribe(request: SubscribeRequest): Promise<Duplex>;
  /** SubscribeReplayInfo's `firstAvailable` (null when the server has no replay or does not say). */
  firstAvailableSlot(): Promise<number | null>;
}

/** Connects to `url` (with `xToken` as the `x-token` header when given). */
export type GeyserTransportFactory = (url: string, xToken: string | undefined) => Promise<GeyserTransport>;

/**
 * The package's Client class. TypeScript reads the package's types as CommonJS (default = the whole
 * module, the class at `.default.default`); Node loads its ESM build, whose default export is the class.
 */
const YellowstoneClient = ((yellowstone as unknown as { default: { default?: unknown } }).default.default ?? yellowstone.default) as typeof yellowstone.default.default;

/** The default transport: `@triton-one/yellowstone-grpc`'s Client (its native reconnect off: faults are ours to see). */
export const yellowstoneTransport: GeyserTransportFactory = async (url, xToken) => {
  const client = new YellowstoneClient(url, xToken || undefined, { grpcMaxDecodingMessageSize: 512 * 1024 * 1024 }, { enabled: false });
  await client.connect();
  return {
    subscribe: (request) => client.subscribe(request),
    firstAvailableSlot: async () => {
      const r = await client.subscribeReplayInfo();
      // u64::MAX (the plugin's value before its first cleanup) or absent: unknown.
      const first = r.firstAvailable === undefined ? NaN : Number(r.firstAvailable);
      return Number.isSafeInteger(first) ? first : null;
    },
  };
};

/** gRPC source options. */
export interface GrpcSourceOptions {
  /** Server URL, e.g. `http://127.0.0.1:10000` or `https://…`. */
  url: string;
  /** `x-token` (REFRACT_GRPC_X_TOKEN). */
  xToken?: string;
  /** First slot wanted: the subscription's `fromSlot`. */
  startSlot: number;
  /** Slot of the last block already indexed (the first block's parent must be it), or null: not checked. */
  lastIndexedSlot: number | null;
  /** Hash of that block when known: the first block's previousBlockhash must be it. */
  lastIndexedBlockhash?: string | null;
  /** `blocks` (default) or `transactions` (module comment). */
  mode?: 'blocks' | 'transactions';
  /** Default `confirmed` (the poller's commitment); `processed` streams forks, which the chain checks turn into faults. */
  commitment?: 'processed' | 'confirmed' | 'finalized';
  /** Programs a transaction must name to be sent (default: the account-compression program). */
  programs?: readonly string[];
  /** Silence before the `silence` fault (ms, default 5000). */
  silenceMs?: number;
  /** How long a block waits for its parent's block before the `gap` fault (ms, default 2000). */
  reorderMs?: number;
  /** Tip − last block above which the `lagging` fault counts (default 64) … */
  maxLagSlots?: number;
  /** … once it has lasted this long (ms, default 10000). */
  lagGraceMs?: number;
  /** Most blocks per yielded batch (default 100). */
  maxBatchBlocks?: number;
  /** Blocks waiting for the consumer beyond which the `backlog` fault ends the stream (default 20000). */
  maxBufferedBlocks?: number;
  /** Limit on connecting and opening the subscription (ms, default 10000). */
  connectTimeoutMs?: number;
  /** Ask SubscribeReplayInfo before subscribing (default true; a server without it is asked nothing). */
  checkReplayWindow?: boolean;
  signal?: AbortSignal;
  log?: Logger;
  /** Every newer tip seen (slot messages of any status). */
  onTip?(slot: number): void;
  /** When a slot is first heard of (ms, `performance.now()`), for the lag in milliseconds. */
  onSlotSeen?(slot: number, at: number): void;
  /** Once the subscription is open (after SubscribeReplayInfo). */
  onSubscribed?(info: { fromSlot: number; firstAvailable: number | null }): void;
  /** The transport (default {@link yellowstoneTransport}). */
  transport?: GeyserTransportFactory;
}

/** Blocks that do not connect yet beyond which the gap is a fault at once. */
export const REORDER_MAX_BLOCKS = 64;

const COMMITMENT = { processed: CommitmentLevel.PROCESSED, confirmed: CommitmentLevel.CONFIRMED, finalized: CommitmentLevel.FINALIZED } as const;

/** The Subscribe request of a source (module comment). */
export function subscribeRequest(opts: Pick<GrpcSourceOptions, 'mode' | 'commitment' | 'programs'>, fromSlot: number | null): SubscribeRequest {
  const accountInclude = [...(opts.programs ?? [ACCOUNT_COMPRESSION_PROGRAM_ID])];
  return SubscribeRequest.fromPartial({
    slots: { refract: { filterByCommitment: false } },
    ...((opts.mode ?? 'blocks') === 'blocks'
      ? { blocks: { refract: { accountInclude, includeTransactions: true, includeAccounts: false, includeEntries: false } } }
      : { transactions: { refract: { vote: false, accountInclude } }, blocksMeta: { refract: {} } }),
    commitment: COMMITMENT[opts.commitment ?? 'confirmed'],
    ...(fromSlot === null ? {} : { fromSlot: String(fromSlot) }),
  });
}

/** The messages of an error and its causes (the native client puts the server's status text in `cause`). */
function errorText(err: unknown): string {
  const parts: string[] = [];
  for (let e = err as { message?: unknown; cause?: unknown } | undefined, i = 0; e && i < 8; e = e.cause as typeof e, i++) {
    parts.push(typeof e.message === 'string' ? e.message : String(e));
  }
  return parts.join(': ');
}

/** Rejects with a `connect` fault after `ms`. */
function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new GrpcSourceFault('connect', `${what}: no answer in ${ms} ms`)), ms);
    }),
  ]);
}

/**
 * Yields batches of consecutive blocks in slot order from one Yellowstone subscription, until `signal`
 * aborts or the consumer stops (then it returns), or a fault (then it throws a {@link GrpcSourceFault},
 * after yielding the blocks taken before it).
 */
export async function* grpcBlocks(opts: GrpcSourceOptions): AsyncGenerator<BlockInfo[]> {
  const { mode = 'blocks', silenceMs = 5_000, reorderMs = 2_000, maxLagSlots: maxLag = 64, lagGraceMs = 10_000 } = opts;
  const { maxBatchBlocks: maxBatch = 100, maxBufferedBlocks: maxBuffered = 20_000, connectTimeoutMs = 10_000 } = opts;
  const { stop, dispose } = childAbort(opts.signal);
  if (stop.signal.aborted) return;
  setMaxListeners(20, stop.signal);

  let fault: GrpcSourceFault | null = null;
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  stop.signal.addEventListener('abort', notify, { once: true });
  const fail = (f: GrpcSourceFault) => {
    if (!fault) {
      fault = f;
      opts.log?.warn({ reason: f.reason, slot: f.slot, err: f.message }, 'gRPC source: giving up the subscription');
    }
    notify();
  };

  // Chain state: the last block taken (released or waiting in `ready`).
  let lastSlot = opts.lastIndexedSlot;
  let lastHash = opts.lastIndexedBlockhash ?? null;
  const ready: BlockInfo[] = [];
  const pending = new Map<number, { block: BlockInfo; since: number }>(); // complete, parent not taken yet
  const txsBySlot = new Map<number, SubscribeUpdateTransactionInfo[]>(); // mode transactions: slots without their meta yet
  const sigsOfSlot = new Map<number, Set<string>>(); // mode transactions: signatures of the slots whose meta came
  let tip = -1;
  let laggingSince: number | null = null;
  const seen = new Set<number>();

  const take = (b: BlockInfo) => {
    ready.push(b);
    lastSlot = b.slot;
    lastHash = b.blockhash;
    if (ready.length > maxBuffered) fail(new GrpcSourceFault('backlog', `${ready.length} blocks wait for the consumer`, b.slot));
  };
  /** Moves every pending block that extends the chain to `ready`; a block off the chain is a fault. */
  const connect = () => {
    for (;;) {
      let next: BlockInfo | undefined;
      if (lastSlot === null) {
        // Unanchored: the lowest block at or after startSlot whose parent is before it (or the genesis block, its own parent).
        const first = [...pending.values()].map((p) => p.block).filter((b) => b.slot >= opts.startSlot).sort((a, b) => a.slot - b.slot)[0];
        if (first && (first.parentSlot < opts.startSlot || first.parentSlot === first.slot)) next = first;
      } else {
        for (const p of pending.values()) if (p.block.parentSlot === lastSlot) next = p.block;
      }
      if (!next) break;
      pending.delete(next.slot);
      if (lastHash !== null && next.previousBlockhash !== lastHash) {
        fail(new GrpcSourceFault('fork', `block ${next.slot} names ${next.previousBlockhash} as previous blockhash, the block of slot ${lastSlot} is ${lastHash}`, next.slot));
        return;
      }
      take(next);
    }
    for (const [slot, p] of pending) {
      if (slot <= (lastSlot ?? -1)) pending.delete(slot);
      else if (lastSlot !== null && p.block.parentSlot < lastSlot) {
        fail(new GrpcSourceFault('fork', `block ${slot} has parent ${p.block.parentSlot}, before the last block taken (${lastSlot})`, slot));
        return;
      }
    }
    if (pending.size > REORDER_MAX_BLOCKS) fail(new GrpcSourceFault('gap', `${pending.size} blocks wait for a missing parent after slot ${lastSlot}`, lastSlot));
  };
  const complete = (b: BlockInfo) => {
    if (lastSlot !== null && b.slot <= lastSlot) return; // replayed again (replay and live overlap)
    if (!pending.has(b.slot)) pending.set(b.slot, { block: b, since: performance.now() });
    const before = ready.length;
    connect();
    if (ready.length !== before) notify();
  };
  const seenSlot = (slot: number) => {
    if (seen.has(slot)) return;
    seen.add(slot);
    if (seen.size > 4096) for (const s of seen) if (s < slot - 2048) seen.delete(s);
    opts.onSlotSeen?.(slot, performance.now());
  };

  let stream: Duplex | null = null;
  let lastData = performance.now();
  let pingId = 0;
  const onUpdate = (u: SubscribeUpdate) => {
    if (fault || stop.signal.aborted) return;
    try {
      if (u.ping) {
        stream?.write(SubscribeRequest.fromPartial({ ping: { id: ++pingId } }));
        return;
      }
      if (u.pong) return;
      lastData = performance.now();
      if (u.slot) {
        const slot = Number(u.slot.slot);
        seenSlot(slot);
        if (slot > tip) {
          tip = slot;
          opts.onTip?.(slot);
        }
      } else if (u.block) {
        const header = blockHeaderFromYellowstone(u.block);
        seenSlot(header.slot);
        complete(blockFromYellowstone(header, u.block.transactions));
      } else if (u.transaction) {
        const slot = Number(u.transaction.slot);
        seenSlot(slot);
        const info = u.transaction.transaction;
        if (!info) return;
        const done = sigsOfSlot.get(slot);
        if (done) {
          // The slot's meta came already: a copy (replay and live overlap) or a transaction the block lacks.
          if (done.has(encodeBase58(info.signature))) return;
          fail(new GrpcSourceFault('late-transaction', `a transaction of slot ${slot} came after that slot's block meta`, slot));
          return;
        }
        if (lastSlot !== null && slot <= lastSlot) return;
        const list = txsBySlot.get(slot);
        if (list) list.push(info);
        else txsBySlot.set(slot, [info]);
      } else if (u.blockMeta) {
        const header = blockHeaderFromYellowstone(u.blockMeta);
        seenSlot(header.slot);
        if (sigsOfSlot.has(header.slot)) return; // a copy
        const block = blockFromYellowstone(header, txsBySlot.get(header.slot) ?? []);
        txsBySlot.delete(header.slot);
        for (const s of txsBySlot.keys()) if (s < header.slot - 1024) txsBySlot.delete(s);
        sigsOfSlot.set(header.slot, new Set(block.transactions.map((t) => t.signature)));
        for (const s of sigsOfSlot.keys()) if (s < header.slot - 1024) sigsOfSlot.delete(s);
        complete(block);
      }
    } catch (err) {
      if (err instanceof DecodeError) fail(new GrpcSourceFault('decode', err.message));
      else fail(new GrpcSourceFault('stream-error', `handling an update: ${(err as Error).message}`));
    }
  };

  // Watchdog: silence, the reorder wait, lag.
  const watchdog = setInterval(() => {
    if (fault) return;
    const now = performance.now();
    if (now - lastData > silenceMs) {
      fail(new GrpcSourceFault('silence', `no slot, block or transaction message for ${Math.round(now - lastData)} ms`, lastSlot));
      return;
    }
    for (const [slot, p] of pending) {
      if (now - p.since > reorderMs) {
        fail(new GrpcSourceFault('gap', `block ${slot} (parent ${p.block.parentSlot}) waited ${Math.round(now - p.since)} ms for its parent's block after slot ${lastSlot}`, slot));
        return;
      }
    }
    const behind = tip - (lastSlot ?? opts.startSlot - 1);
    if (tip >= 0 && behind > maxLag) {
      laggingSince ??= now;
      if (now - laggingSince > lagGraceMs) fail(new GrpcSourceFault('lagging', `${behind} slots behind the tip ${tip} for ${Math.round(now - laggingSince)} ms`, lastSlot));
    } else laggingSince = null;
  }, Math.max(20, Math.min(250, silenceMs / 4, reorderMs / 4)));

  try {
    const transportFactory = opts.transport ?? yellowstoneTransport;
    let transport: GeyserTransport;
    try {
      transport = await withTimeout(transportFactory(opts.url, opts.xToken), connectTimeoutMs, 'connect');
    } catch (err) {
      throw err instanceof GrpcSourceFault ? err : new GrpcSourceFault('connect', errorText(err));
    }
    if (stop.signal.aborted) return;
    let firstAvailable: number | null = null;
    if (opts.checkReplayWindow ?? true) {
      try {
        firstAvailable = await withTimeout(transport.firstAvailableSlot(), connectTimeoutMs, 'SubscribeReplayInfo');
      } catch (err) {
        opts.log?.debug({ err: errorText(err) }, 'gRPC source: SubscribeReplayInfo failed; subscribing without the check');
      }
      if (firstAvailable !== null && opts.startSlot < firstAvailable) {
        throw new GrpcSourceFault('replay-unavailable', `slot ${opts.startSlot} is before the server's replay window (first available ${firstAvailable})`, opts.startSlot);
      }
    }
    if (stop.signal.aborted) return;
    try {
      stream = await withTimeout(transport.subscribe(subscribeRequest(opts, opts.startSlot)), connectTimeoutMs, 'subscribe');
    } catch (err) {
      throw err instanceof GrpcSourceFault ? err : new GrpcSourceFault('connect', `subscribe: ${errorText(err)}`);
    }
    const s = stream;
    if (stop.signal.aborted) return;
    lastData = performance.now();
    s.on('data', onUpdate);
    s.on('error', (err: unknown) => {
      const text = errorText(err);
      if (/is not available|from_slot is not supported/.test(text)) fail(new GrpcSourceFault('replay-unavailable', text, opts.startSlot));
      else fail(new GrpcSourceFault('stream-error', text, lastSlot));
    });
    s.on('close', () => fail(new GrpcSourceFault('stream-closed', 'the server ended the stream', lastSlot)));
    opts.onSubscribed?.({ fromSlot: opts.startSlot, firstAvailable });
    opts.log?.info({ url: opts.url, fromSlot: opts.startSlot, mode, firstAvailable }, 'gRPC source: subscribed');

    while (!stop.signal.aborted) {
      if (ready.length) {
        yield ready.splice(0, maxBatch);
        continue;
      }
      if (fault) throw fault;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    clearInterval(watchdog);
    dispose();
    if (stream) {
      const s = stream;
      s.removeAllListeners('data');
      s.removeAllListeners('close');
      s.on('error', () => {}); // errors of a stream being torn down
      // The Yellowstone client's destroy() does not reset the HTTP/2 stream: the server would go on
      // pushing blocks to an abandoned subscription (and providers cap streams per token). First
      // replace its filters with none (the server then sends only pings), then destroy it.
      let destroyed = false;
      const destroy = () => {
        if (destroyed) return;
        destroyed = true;
        s.destroy();
      };
      try {
        s.write(SubscribeRequest.fromPartial({}), () => destroy());
        setTimeout(destroy, 1000).unref();
      } catch {
        destroy();
      }
    }
  }
}
