/**
 * One `Subscribe` stream of the Yellowstone server over a simulated chain (src/sim/geyser.ts): its
 * filters (the latest request), its cursor through the published slots (replay from `fromSlot`, then
 * live), the messages of each block in the real server's order ({@link updatesForBlock}), server pings
 * and pongs, back-pressure, and the one-shot faults ({@link GeyserFaults}) applied as it sends.
 */
import grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { CommitmentLevel, SlotStatus, type SubscribeRequest, type SubscribeRequestFilterTransactions, SubscribeUpdate } from '@triton-one/yellowstone-grpc';
import type { GeyserFaults, GeyserServerStats } from './geyser.ts';
import type { GeyserPublisher } from './geyserPublisher.ts';
import type { GeyserBlock, GeyserTransaction } from './yellowstoneFromJson.ts';

/** Does `tx` pass a `transactions` filter (yellowstone-grpc `FilterTransactions`)? */
function matchesTransaction(tx: GeyserTransaction, f: SubscribeRequestFilterTransactions): boolean {
  if (f.vote !== undefined && f.vote !== tx.isVote) return false;
  if (f.failed !== undefined && f.failed !== tx.failed) return false;
  if (f.signature !== undefined && f.signature !== tx.signature) return false;
  if (f.accountInclude.length && !tx.accountKeys.some((k) => f.accountInclude.includes(k))) return false;
  if (f.accountExclude.length && tx.accountKeys.some((k) => f.accountExclude.includes(k))) return false;
  if (f.accountRequired.length && !f.accountRequired.every((k) => tx.accountKeys.includes(k))) return false;
  return true;
}

const STATUS_OF: Record<number, SlotStatus> = {
  [CommitmentLevel.PROCESSED]: SlotStatus.SLOT_PROCESSED,
  [CommitmentLevel.CONFIRMED]: SlotStatus.SLOT_CONFIRMED,
  [CommitmentLevel.FINALIZED]: SlotStatus.SLOT_FINALIZED,
};

/** The messages a subscription with `req`'s filters gets for block `b` (geyser.ts module comment: order). */
export function updatesForBlock(b: GeyserBlock, req: SubscribeRequest): SubscribeUpdate[] {
  const out: SubscribeUpdate[] = [];
  const createdAt = new Date();
  const slot = b.meta.slot;
  const parent = b.meta.parentSlot;
  const commitment = req.commitment ?? CommitmentLevel.PROCESSED;
  const slotAll = Object.entries(req.slots).filter(([, f]) => f.filterByCommitment !== true).map(([n]) => n);
  const slotNames = Object.keys(req.slots);
  const processedNames = commitment === CommitmentLevel.PROCESSED ? slotNames : slotAll;
  if (processedNames.length) out.push(SubscribeUpdate.fromPartial({ filters: processedNames, slot: { slot, parent, status: SlotStatus.SLOT_PROCESSED }, createdAt }));
  const txFilters = Object.entries(req.transactions);
  if (txFilters.length) {
    for (const tx of b.transactions) {
      const names = txFilters.filter(([, f]) => matchesTransaction(tx, f)).map(([n]) => n);
      if (names.length) out.push({ filters: names, transaction: { transaction: tx.info, slot }, createdAt });
    }
  }
  const metaNames = Object.keys(req.blocksMeta);
  if (metaNames.length) out.push({ filters: metaNames, blockMeta: b.meta, createdAt });
  for (const [name, f] of Object.entries(req.blocks)) {
    const txs =
      f.includeTransactions === false ? [] : b.transactions.filter((t) => !f.accountInclude.length || t.accountKeys.some((k) => f.accountInclude.includes(k))).map((t) => t.info);
    out.push({
      filters: [name],
      block: {
        slot,
        blockhash: b.meta.blockhash,
        rewards: b.meta.rewards,
        blockTime: b.meta.blockTime,
        blockHeight: b.meta.blockHeight,
        parentSlot: parent,
        parentBlockhash: b.meta.parentBlockhash,
        executedTransactionCount: b.meta.executedTransactionCount,
        transactions: txs,
        updatedAccountCount: '0',
        accounts: [],
        entriesCount: '0',
        entries: [],
      },
      createdAt,
    });
  }
  if (commitment !== CommitmentLevel.PROCESSED && slotNames.length) {
    out.push(SubscribeUpdate.fromPartial({ filters: slotNames, slot: { slot, parent, status: STATUS_OF[commitment] ?? SlotStatus.SLOT_CONFIRMED }, createdAt }));
  }
  return out;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** What the server shares with its subscriptions. */
export interface GeyserServerState {
  publisher: GeyserPublisher;
  /** The fault switches (one-shot; a subscription consumes those it meets). */
  faults: GeyserFaults;
  stats: GeyserServerStats;
  pingIntervalMs: number;
  /** Whether a call's metadata carries the required `x-token` (or none is required). */
  tokenOk(md: grpc.Metadata): boolean;
  /** The ids (order of subscription) of the open subscriptions. */
  openIds: Set<number>;
  /** The open subscriptions' shutdown functions (the server's close calls them). */
  sessions: Set<() => void>;
  log?: Logger;
}

/** The stream of one `Subscribe` call, from its start to its end (cancel, error, close or shutdown). */
export class GeyserSubscription {
  private readonly id: number;
  private ended = false;
  private req: SubscribeRequest | null = null;
  /** The next slot to send. */
  private cursor = 0;
  /** Data messages sent (pings and pongs not counted). */
  private sent = 0;
  private stalled = false;
  private wake: (() => void) | null = null;
  /** Writes waiting for 'drain'. */
  private readonly drains = new Set<() => void>();
  private pinger: ReturnType<typeof setInterval> | undefined;
  private readonly poke = () => {
    this.wake?.();
    this.wake = null;
  };
  private readonly end = () => {
    if (this.ended) return;
    this.ended = true;
    this.s.stats.open--;
    clearInterval(this.pinger);
    for (const d of [...this.drains]) d();
    this.s.sessions.delete(this.shutdown);
    this.s.openIds.delete(this.id);
    this.s.publisher.offNextPublish(this.poke);
    this.poke();
  };
  private readonly shutdown = () => {
    if (!this.ended) this.call.end();
    this.end();
  };

  /** Serves `call` (the server's `Subscribe` handler); refuses it with UNAUTHENTICATED without a valid token. */
  constructor(
    private readonly call: grpc.ServerDuplexStream<SubscribeRequest, SubscribeUpdate>,
    private readonly s: GeyserServerState,
  ) {
    s.stats.subscriptions++;
    this.id = s.stats.subscriptions;
    s.openIds.add(this.id);
    s.stats.open++;
    call.sendMetadata(new grpc.Metadata()); // as tonic does at once: the client's subscribe() waits for the headers
    s.sessions.add(this.shutdown);
    call.on('cancelled', this.end);
    call.on('error', this.end);
    call.on('close', this.end);
    if (!s.tokenOk(call.metadata)) {
      this.fail(grpc.status.UNAUTHENTICATED, 'No valid auth token');
      return;
    }
    this.pinger = setInterval(() => {
      if (this.stalled || this.ended) return;
      s.stats.pings++;
      void this.write(SubscribeUpdate.fromPartial({ filters: [], ping: {}, createdAt: new Date() }));
    }, s.pingIntervalMs);
    call.on('data', (r: SubscribeRequest) => this.onRequest(r));
    this.pump().catch((err) => {
      s.log?.error({ err }, 'geyser: session failed');
      this.fail(grpc.status.INTERNAL, (err as Error).message);
    });
  }

  /** Whether this is the newest open subscription (the client's current one). */
  private newest(): boolean {
    let n = 0;
    for (const x of this.s.openIds) if (x > n) n = x;
    return n === this.id;
  }

  /** Ends the stream with a gRPC error. */
  private fail(code: grpc.status, details: string): void {
    if (this.ended) return;
    this.call.emit('error', { code, details, metadata: new grpc.Metadata() });
    this.end();
  }

  /** Writes one message, waiting for 'drain' when the stream pushes back. */
  private async write(u: SubscribeUpdate): Promise<void> {
    if (this.ended) return;
    if (!this.call.write(u) && !this.ended) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.call.off('drain', done);
          this.call.off('close', done);
          this.drains.delete(done);
          resolve();
        };
        this.call.on('drain', done);
        this.call.on('close', done);
        this.drains.add(done);
      });
    }
  }

  /** Sends a data message, applying the faults. */
  private async send(u: SubscribeUpdate): Promise<void> {
    const { faults, stats } = this.s;
    const counted = !faults.newestOnly || this.newest();
    if (counted && faults.skip?.(u)) {
      delete faults.skip;
      stats.faults.push('skip');
      return;
    }
    await this.write(u);
    this.sent++;
    stats.messages++;
    // The relative forms become this subscription's absolute ones once their count is reached.
    if (counted && faults.dropIn !== undefined && --faults.dropIn <= 0) {
      delete faults.dropIn;
      faults.dropAfter = 0;
    }
    if (counted && faults.stallIn !== undefined && --faults.stallIn <= 0) {
      delete faults.stallIn;
      faults.stallAfter = 0;
    }
    if (faults.dropAfter !== undefined && this.sent >= faults.dropAfter) {
      delete faults.dropAfter;
      stats.faults.push('drop');
      this.fail(grpc.status.UNAVAILABLE, 'simulated drop');
      return;
    }
    if (faults.stallAfter !== undefined && this.sent >= faults.stallAfter) {
      const ms = faults.stallMs;
      delete faults.stallAfter;
      delete faults.stallMs;
      stats.faults.push('stall');
      this.stalled = true;
      const until = ms === undefined ? Infinity : performance.now() + ms;
      while (!this.ended && performance.now() < until) await sleep(Math.min(50, until - performance.now()));
      this.stalled = false;
    }
  }

  /** A request on the stream: a ping (answered with a pong, the filters kept) or new filters (and a fromSlot). */
  private onRequest(r: SubscribeRequest): void {
    if (this.ended) return;
    const { faults, stats, publisher } = this.s;
    if (r.ping) {
      stats.pongs++;
      void this.write(SubscribeUpdate.fromPartial({ filters: [], pong: { id: r.ping.id }, createdAt: new Date() }));
      return;
    }
    const first = this.req === null;
    this.req = r;
    if (r.fromSlot !== undefined) {
      const from = Number(r.fromSlot);
      stats.lastFromSlot = from;
      if (faults.replayUnavailable) {
        delete faults.replayUnavailable;
        stats.faults.push('replay-unavailable');
        this.fail(grpc.status.INTERNAL, `broadcast from ${from} is not available, last available: ${Math.max(publisher.firstAvailable(), from + 1)}`);
        return;
      }
      if (from < publisher.firstAvailable()) {
        stats.faults.push('replay-window');
        this.fail(grpc.status.INTERNAL, `broadcast from ${from} is not available, last available: ${publisher.firstAvailable()}`);
        return;
      }
      this.cursor = from;
      if (faults.replayStartsLater) {
        this.cursor += faults.replayStartsLater;
        delete faults.replayStartsLater;
        stats.faults.push('replay-late');
      }
    } else if (first) this.cursor = publisher.published + 1;
    this.poke();
  }

  /** The session's pump: the slots from the cursor on, as they are published, until the stream or the server ends. */
  private async pump(): Promise<void> {
    const { publisher } = this.s;
    while (!this.ended && !publisher.isClosed) {
      if (this.req && this.cursor <= publisher.published && !this.stalled) {
        const slot = this.cursor++;
        const b = await publisher.blockAt(slot);
        if (b) {
          for (const u of updatesForBlock(b, this.req)) {
            if (this.ended) break;
            await this.send(u);
          }
        }
        continue;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        publisher.onNextPublish(this.poke);
      });
    }
  }
}
