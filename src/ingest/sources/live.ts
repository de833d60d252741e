/**
 * The live block source: Yellowstone gRPC (grpc.ts) while it is healthy, the RPC poller (poller.ts)
 * while it is not, switching between them without releasing a slot twice or skipping one. A drop-in for
 * `pollBlocks`: the same batches of consecutive blocks in slot order along the parent chain (holding, from
 * gRPC, only the transactions that name the account-compression program; see grpc.ts).
 *
 * - Start: a gRPC subscription from the first wanted slot (`fromSlot` = last indexed + 1).
 * - A gRPC fault (any `GrpcSourceFault`: the stream failed, closed, went silent, a block's parent never
 *   came, the replay window did not reach back, …) ends it; the blocks it yielded before stay released.
 *   The poller starts from the last released slot + 1, anchored at it.
 * - While polling, a gRPC probe subscribes every `retryGrpcMs` (doubling on each failure up to
 *   `maxRetryGrpcMs`) from the poller's position at that moment and keeps what it receives — unless the
 *   node's slot is below that position (a restarted node, another chain): then no probe is made. Once it has
 *   delivered a block (so its replay started where asked, chained to the anchor) and its newest block is
 *   within `switchWithinSlots` of the last released slot, the poller is stopped (what it fetched but
 *   did not yield is dropped) and the probe becomes the source: its blocks up to the last released slot
 *   are dropped, the next one must have the last released slot as parent and its blockhash as
 *   previousBlockhash (else a `fork` fault, and back to the poller).
 * - Every released block is checked against the last released one (parentSlot, and previousBlockhash
 *   for gRPC blocks): the sources' own chain checks, enforced once more where they meet.
 *
 * Reports for metrics: {@link LiveSourceOptions.onSourceChange} (which source is live, and why it changed:
 * `start`, a fault reason for a fallback, `recovered`), `onProbe` (each probe's outcome), `onRelease`
 * (per batch: the source, the lag behind the tip in slots, and in ms since the slot was first heard of
 * on gRPC, else since its blockTime).
 */
import { setMaxListeners } from 'node:events';
import type { SolanaRpc } from '../../solana/rpcClient.ts';
import type { BlockInfo } from '../../types.ts';
import type { GrpcSourceOptions } from './grpc.ts';
import { type GrpcFaultReason, GrpcSourceFault } from './grpcFault.ts';
import { type PollerOptions, pollBlocks } from './poller.ts';
import { childAbort } from '../abort.ts';

/** Which source is live. */
export type LiveSourceName = 'grpc' | 'rpc';

/** A change of the live source. */
export interface SourceChange {
  source: LiveSourceName;
  previous: LiveSourceName | null;
  /** `start`, `recovered` (back on gRPC), or the fault that made gRPC give up. */
  reason: 'start' | 'recovered' | GrpcFaultReason;
  /** The fault's message, when there is one. */
  detail?: string;
  /** Slot of the last released block at the change (null: none yet, unanchored). */
  lastReleasedSlot: number | null;
}

/** How a gRPC probe (an attempt to return from the poller) ended. */
export interface ProbeOutcome {
  outcome: 'switched' | 'failed';
  reason?: GrpcFaultReason;
  detail?: string;
  /** Slot the probe subscribed from. */
  fromSlot: number;
}

/** One released batch. */
export interface ReleaseInfo {
  source: LiveSourceName;
  blocks: number;
  lastSlot: number;
  /** Newest slot heard of (either source), or null. */
  tipSlot: number | null;
  /** tipSlot − lastSlot (≥ 0), or null. */
  lagSlots: number | null;
  /** ms since the last block's slot was first heard of on gRPC, else since its blockTime; null when neither is known. */
  lagMs: number | null;
}

/** Live source options: the poller's, plus where gRPC is and how to come back to it. */
export interface LiveSourceOptions extends PollerOptions {
  /** Yellowstone gRPC URL. */
  grpcUrl: string;
  /** `x-token` (REFRACT_GRPC_X_TOKEN). */
  xToken?: string;
  /** gRPC source settings (mode, commitment, silenceMs, reorderMs, transport, …). */
  grpc?: Omit<Partial<GrpcSourceOptions>, 'url' | 'xToken' | 'startSlot' | 'lastIndexedSlot' | 'lastIndexedBlockhash' | 'signal' | 'log' | 'onTip'>;
  /** First wait before a gRPC probe after a fallback or a failed probe (ms, default 3000) … */
  retryGrpcMs?: number;
  /** … doubling per failed probe up to this (ms, default 15000). */
  maxRetryGrpcMs?: number;
  /** Switch back once the probe's newest block is at most this many slots behind the last released one (default 2). */
  switchWithinSlots?: number;
  /** Blocks a probe may hold while the poller runs before it is given up (default 10000). */
  maxProbeBlocks?: number;
  onSourceChange?(change: SourceChange): void;
  onProbe?(outcome: ProbeOutcome): void;
  onRelease?(info: ReleaseInfo): void;
}

/** A generator read ahead into a queue by a loop of its own, so the consumer can watch two at once. */
class Pump {
  readonly batches: BlockInfo[][] = [];
  error: unknown = null;
  done = false;
  /** Blocks received so far, and waiting now. */
  received = 0;
  waiting = 0;
  /** Slot of the newest block received. */
  head: number | null = null;
  private readonly abort = new AbortController();
  private readonly gen: AsyncGenerator<BlockInfo[]>;
  private readonly running: Promise<void>;
  private space: (() => void) | null = null;

  constructor(
    make: (signal: AbortSignal) => AsyncGenerator<BlockInfo[]>,
    private readonly capacity: number,
    private readonly onChange: () => void,
  ) {
    setMaxListeners(50, this.abort.signal);
    this.gen = make(this.abort.signal);
    this.running = this.run();
  }

  private async run(): Promise<void> {
    try {
      while (!this.abort.signal.aborted) {
        if (this.batches.length >= this.capacity) {
          await new Promise<void>((resolve) => (this.space = resolve));
          continue;
        }
        const r = await this.gen.next();
        if (r.done) break;
        if (this.abort.signal.aborted) break; // a batch fetched while stopping: never released
        this.batches.push(r.value);
        this.received += r.value.length;
        this.waiting += r.value.length;
        if (r.value.length) this.head = r.value[r.value.length - 1]!.slot;
        this.onChange();
      }
    } catch (err) {
      this.error = err;
    } finally {
      this.done = true;
      this.onChange();
    }
  }

  take(): BlockInfo[] | undefined {
    const b = this.batches.shift();
    if (b) {
      this.waiting -= b.length;
      this.space?.();
      this.space = null;
    }
    return b;
  }

  /** Stops the generator (its pending fetches are cancelled) and waits for it. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.space?.();
    await this.running;
    await this.gen.return(undefined).catch(() => {});
  }
}

/**
 * grpc.ts `grpcBlocks`, its module (and the Yellowstone client with @grpc/grpc-js) loaded on the first
 * subscription: a daemon that never follows gRPC does not pay for it at start.
 */
async function* lazyGrpcBlocks(o: GrpcSourceOptions): AsyncGenerator<BlockInfo[]> {
  const { grpcBlocks } = await import('./grpc.ts');
  yield* grpcBlocks(o);
}

/** The fault of a gRPC pump that ended (a clean end without abort counts as `stream-closed`). */
function faultOf(p: Pump): GrpcSourceFault {
  if (p.error instanceof GrpcSourceFault) return p.error;
  if (p.error) return new GrpcSourceFault('stream-error', (p.error as Error).message ?? String(p.error));
  return new GrpcSourceFault('stream-closed', 'the gRPC source ended');
}

/**
 * Yields batches of consecutive blocks in slot order from gRPC, falling back to the poller and back
 * (module comment), until `signal` aborts or the consumer stops.
 */
export async function* liveBlocks(rpc: SolanaRpc, opts: LiveSourceOptions): AsyncGenerator<BlockInfo[]> {
  const { log, retryGrpcMs: retryMs = 3_000, maxRetryGrpcMs: maxRetryMs = 15_000, switchWithinSlots: switchWithin = 2, maxProbeBlocks = 10_000 } = opts;
  const { stop, dispose } = childAbort(opts.signal);
  if (stop.signal.aborted) return;

  let lastSlot = opts.lastIndexedSlot;
  let lastHash: string | null = null;
  let tip: number | null = null;
  /** The node's slot as last reported (may go down: a restarted node); gRPC probes wait while it is below where they would start. */
  let nodeSlot: number | null = null;
  const seenAt = new Map<number, number>();
  const onTip = (slot: number) => {
    nodeSlot = slot;
    if (tip === null || slot > tip) {
      tip = slot;
      opts.onTip?.(slot);
    }
  };
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  stop.signal.addEventListener('abort', notify, { once: true });

  const fromSlot = () => (lastSlot === null ? opts.startSlot : lastSlot + 1);
  const grpcPump = (capacity: number) => {
    const startSlot = fromSlot();
    const anchor = lastSlot;
    const anchorHash = lastHash;
    return new Pump(
      (signal) =>
        lazyGrpcBlocks({
          maxBatchBlocks: opts.maxBatchBlocks,
          ...opts.grpc,
          url: opts.grpcUrl,
          xToken: opts.xToken,
          startSlot,
          lastIndexedSlot: anchor,
          lastIndexedBlockhash: anchorHash,
          signal,
          log,
          onTip,
          onSlotSeen: (slot, at) => {
            if (!seenAt.has(slot)) seenAt.set(slot, at);
            if (seenAt.size > 4096) for (const s of seenAt.keys()) if (s < slot - 2048) seenAt.delete(s);
          },
        }),
      capacity,
      notify,
    );
  };
  const pollerPump = () => {
    const startSlot = fromSlot();
    const anchor = lastSlot;
    return new Pump((signal) => pollBlocks(rpc, { ...opts, startSlot, lastIndexedSlot: anchor, signal, onTip }), 2, notify);
  };

  let source = 'grpc' as LiveSourceName; // changed through change()
  let live = grpcPump(4);
  let liveFrom = fromSlot();
  let probe: Pump | null = null;
  let probeFrom = 0;
  let probeFailures = 0;
  let nextProbeAt = 0;
  const change = (next: LiveSourceName, reason: SourceChange['reason'], detail?: string) => {
    const c: SourceChange = { source: next, previous: reason === 'start' ? null : source, reason, lastReleasedSlot: lastSlot, ...(detail ? { detail } : {}) };
    source = next;
    log?.[reason === 'start' || reason === 'recovered' ? 'info' : 'warn'](c, `live source: ${next}${reason === 'start' ? '' : ` (${reason})`}`);
    opts.onSourceChange?.(c);
  };
  change('grpc', 'start');
  const fallBack = async (fault: GrpcSourceFault) => {
    await live.stop();
    live = pollerPump();
    liveFrom = fromSlot();
    change('rpc', fault.reason, fault.message);
    probeFailures = 0;
    nextProbeAt = performance.now() + retryMs;
  };
  const endProbe = async (fault: GrpcSourceFault) => {
    const p = probe!;
    probe = null;
    await p.stop();
    probeFailures++;
    nextProbeAt = performance.now() + Math.min(maxRetryMs, retryMs * 2 ** Math.min(probeFailures, 10));
    log?.info({ reason: fault.reason, err: fault.message, fromSlot: probeFrom, retryInMs: Math.round(nextProbeAt - performance.now()) }, 'live source: gRPC probe failed; polling on');
    opts.onProbe?.({ outcome: 'failed', reason: fault.reason, detail: fault.message, fromSlot: probeFrom });
  };

  try {
    while (!stop.signal.aborted) {
      const batch = live.take();
      if (batch) {
        // Drop what is released already; the rest must extend the chain.
        let i = 0;
        while (i < batch.length && lastSlot !== null && batch[i]!.slot <= lastSlot) i++;
        const out = i ? batch.slice(i) : batch;
        if (!out.length) continue;
        let broken: GrpcSourceFault | null = null;
        let n = 0;
        for (const b of out) {
          // Unanchored, the first block must start at or after startSlot with its parent before it; the genesis block is its own parent.
          if (lastSlot !== null ? b.parentSlot !== lastSlot : b.slot < opts.startSlot || (b.parentSlot >= opts.startSlot && b.parentSlot !== b.slot)) {
            broken = new GrpcSourceFault('gap', `block ${b.slot} has parent ${b.parentSlot}, the last released block is ${lastSlot}`, b.slot);
            break;
          }
          if (source === 'grpc' && lastHash !== null && b.previousBlockhash !== lastHash) {
            broken = new GrpcSourceFault('fork', `block ${b.slot} names ${b.previousBlockhash} as previous blockhash, the last released block's is ${lastHash}`, b.slot);
            break;
          }
          lastSlot = b.slot;
          lastHash = b.blockhash;
          n++;
        }
        if (n) {
          const released = n === out.length ? out : out.slice(0, n);
          const last = released[released.length - 1]!;
          const seen = seenAt.get(last.slot);
          opts.onRelease?.({
            source,
            blocks: released.length,
            lastSlot: last.slot,
            tipSlot: tip,
            lagSlots: tip === null ? null : Math.max(0, tip - last.slot),
            lagMs: seen !== undefined ? performance.now() - seen : last.blockTime > 0 ? Math.max(0, Date.now() - last.blockTime * 1000) : null,
          });
          yield released;
        }
        if (broken) {
          if (source === 'rpc') throw new Error(`live source: the poller released a block off the chain (${broken.message})`);
          await fallBack(broken);
        }
        continue;
      }
      if (live.done) {
        if (source === 'rpc') {
          if (live.error) throw live.error;
          return; // aborted
        }
        if (stop.signal.aborted) return;
        await fallBack(faultOf(live));
        continue;
      }
      if (source === 'rpc') {
        const now = performance.now();
        if (probe?.done) await endProbe(faultOf(probe));
        else if (probe && probe.waiting > maxProbeBlocks) {
          await endProbe(new GrpcSourceFault('backlog', `the probe holds ${probe.waiting} blocks while the poller is at ${lastSlot}`, lastSlot));
        }
        if (!probe && now >= nextProbeAt && nodeSlot !== null && nodeSlot < fromSlot() - 1) {
          // The node is behind the store (restarted, or another chain): a subscription from fromSlot would
          // only go silent and fail. Wait for the node instead of churning (GET /health names the state).
          nextProbeAt = now + retryMs;
        } else if (!probe && now >= nextProbeAt) {
          probeFrom = fromSlot();
          log?.debug({ fromSlot: probeFrom }, 'live source: probing gRPC');
          probe = grpcPump(Infinity);
        }
        if (probe && probe.received > 0 && probe.head !== null && (lastSlot === null || probe.head >= lastSlot - switchWithin)) {
          await live.stop(); // nothing more of the poller is released
          live = probe;
          liveFrom = probeFrom;
          probe = null;
          probeFailures = 0;
          opts.onProbe?.({ outcome: 'switched', fromSlot: liveFrom });
          change('grpc', 'recovered', `probe from slot ${liveFrom} reached slot ${live.head}`);
          continue;
        }
      }
      const waitMs = source === 'rpc' && !probe ? Math.max(1, nextProbeAt - performance.now()) : 1_000;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(1_000, waitMs));
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  } finally {
    dispose();
    await Promise.all([live.stop(), probe?.stop()]);
  }
}
