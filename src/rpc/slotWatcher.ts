/**
 * The one slot watcher of an API process: what `minContextSlot` requests wait on (read-your-writes,
 * issue #27). It knows the last committed slot — the store's at start, then every `batch` event of
 * the ingest loop (posted by the ingest thread after each commit, or called in-thread when
 * `ingestThread: false`) — and holds the requests waiting for a later slot.
 *
 * Cost model (thousands of waiters must not slow the other requests):
 * - no thread and no polling: a waiter is an object in a map by target slot, plus one timer (its
 *   deadline) and, per connection, one `close` listener;
 * - targets are kept in a sorted array of distinct slots: an advance looks only at its front, and wakes
 *   exactly the waiters whose slot is now reached, in slot order; waiters of later slots cost nothing;
 * - a wake runs in a `setImmediate` after the event (coalesced: one per turn), after dropping the
 *   cached LMDB read snapshot (`onAdvance`), so the woken requests read a snapshot that holds the commit;
 * - a connection that closes releases its waiters at once (their answers could not be written).
 */

/** What a waiter is told when it ends. */
export type WaitOutcome = 'reached' | 'timeout' | 'closed';

/**
 * The connection of a request, as far as waiting needs it: node's `ServerResponse` is one ('close'
 * when the client goes away or the reply has gone out; `destroyed` once the socket is gone).
 */
export interface Closable {
  readonly destroyed: boolean;
  once(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
}

/** Hooks for the metrics (src/metrics.ts). */
export interface SlotWatcherMetrics {
  /** The number of waiting requests changed. */
  waiting(n: number): void;
  /** A request that waited has answered, `seconds` after the event that announced its slot. */
  answered(seconds: number): void;
}

/** Options of {@link SlotWatcher}. */
export interface SlotWatcherOptions {
  /** The store's last committed slot at start (null or absent: nothing indexed). */
  initialSlot?: number | null;
  /**
   * The longest a request may wait for its `minContextSlot`, ms (`minContextWaitMs`, default 2000);
   * a request's own `maxWaitMs` can only shorten it.
   */
  maxWaitMs?: number;
  /**
   * Called at once when a new slot arrives, before anyone is woken: drop cached read snapshots so the
   * next read sees the commit (`refract start`: lmdb-js `root.resetReadTxn()`).
   */
  onAdvance?: () => void;
  metrics?: SlotWatcherMetrics;
  /** Most requests waiting at once; beyond it a request is answered at once as not reached (default 100 000). */
  maxWaiters?: number;
}

/** The default of `minContextWaitMs` (REFRACT_MIN_CONTEXT_WAIT_MS, `--min-context-wait-ms`). */
export const DEFAULT_MIN_CONTEXT_WAIT_MS = 2000;

/** How soon a waiter told "reached" whose read still showed an older slot is tried again, ms. */
const RECHECK_MS = 1;

interface Waiter {
  target: number;
  cb: (outcome: WaitOutcome, since: number) => void;
  timer: ReturnType<typeof setTimeout> | null;
  conn: Closable | undefined;
  /** Where it is listed: under its slot, among the rechecks, or nowhere (ended or being woken). */
  listed: 'slot' | 'recheck' | null;
}

/** The waiters of one connection and its one `close` listener. */
interface Connection {
  waiters: Set<Waiter>;
  onClose: () => void;
}

/**
 * Knows the last committed slot and wakes the requests waiting for one (see the module comment).
 * One per process, on the main thread.
 */
export class SlotWatcher {
  /** The last committed slot known, -1 before anything is indexed. */
  private last: number;
  /** `performance.now()` of the last advance (the start of the latency histogram). */
  private advancedAt = performance.now();
  /** Waiters by target slot. */
  private readonly bySlot = new Map<number, Set<Waiter>>();
  /** The keys of `bySlot`, ascending. */
  private readonly slots: number[] = [];
  private readonly connections = new Map<Closable, Connection>();
  /** Waiters told "reached" again after a read that still showed an older snapshot (rare). */
  private rechecks: Waiter[] = [];
  private recheckTimer: ReturnType<typeof setTimeout> | null = null;
  private wakeQueued = false;
  private count = 0;
  private closed = false;
  /** The longest wait for a `minContextSlot`, ms. */
  readonly maxWaitMs: number;
  private readonly maxWaiters: number;
  private readonly onAdvance: (() => void) | undefined;
  private readonly metrics: SlotWatcherMetrics | undefined;

  constructor(opts: SlotWatcherOptions = {}) {
    this.last = opts.initialSlot ?? -1;
    this.maxWaitMs = opts.maxWaitMs ?? DEFAULT_MIN_CONTEXT_WAIT_MS;
    this.maxWaiters = opts.maxWaiters ?? 100_000;
    this.onAdvance = opts.onAdvance;
    this.metrics = opts.metrics;
  }

  /** The last committed slot known, or null before anything is indexed. */
  get slot(): number | null {
    return this.last < 0 ? null : this.last;
  }

  /** Requests waiting now. */
  get waiting(): number {
    return this.count;
  }

  /**
   * A slot was committed (the ingest loop's `batch` event, or `resumed`). Slots at or below the known
   * one are ignored. Wakes the waiters it satisfies at the end of the turn, in slot order.
   */
  advance(slot: number): void {
    if (!(slot > this.last)) return;
    this.last = slot;
    this.advancedAt = performance.now();
    this.onAdvance?.();
    if (!this.wakeQueued && this.slots.length > 0 && this.slots[0]! <= slot) {
      this.wakeQueued = true;
      setImmediate(this.wake);
    }
  }

  /**
   * Waits until `target` is committed, `deadline` (a `performance.now()` time) passes or `conn` closes,
   * then calls `cb` once with the outcome and the `performance.now()` of the event that announced the
   * slot. A target already known to be committed is 'reached' shortly (this is how a caller whose read
   * still showed an older snapshot tries again). Past `maxWaiters`, or once closed, 'timeout' at once.
   */
  wait(target: number, deadline: number, conn: Closable | undefined, cb: (outcome: WaitOutcome, since: number) => void): void {
    if (this.closed || this.count >= this.maxWaiters) {
      cb('timeout', this.advancedAt);
      return;
    }
    if (conn?.destroyed) {
      cb('closed', this.advancedAt);
      return;
    }
    const w: Waiter = { target, cb, timer: null, conn, listed: null };
    this.count++;
    this.metrics?.waiting(this.count);
    w.timer = setTimeout(() => this.settle(w, 'timeout'), Math.max(0, deadline - performance.now()));
    if (conn) {
      let c = this.connections.get(conn);
      if (!c) {
        const waiters = new Set<Waiter>();
        const onClose = () => {
          this.connections.delete(conn);
          for (const x of waiters) this.settle(x, 'closed');
        };
        c = { waiters, onClose };
        this.connections.set(conn, c);
        conn.once('close', onClose);
      }
      c.waiters.add(w);
    }
    if (target <= this.last) {
      w.listed = 'recheck';
      this.rechecks.push(w);
      this.recheckTimer ??= setTimeout(this.recheck, RECHECK_MS);
      return;
    }
    let set = this.bySlot.get(target);
    if (!set) {
      set = new Set();
      this.bySlot.set(target, set);
      this.slots.splice(lowerBound(this.slots, target), 0, target);
    }
    w.listed = 'slot';
    set.add(w);
  }

  /** Feeds the latency histogram: a woken request answered, `since` being its `wait` callback's second argument. */
  answered(since: number): void {
    this.metrics?.answered((performance.now() - since) / 1000);
  }

  /**
   * Ends every wait at once ('timeout': the requests answer -32016) and refuses new ones: for shutdown,
   * so waiting requests do not hold the server open.
   */
  close(): void {
    this.closed = true;
    const all = [...this.rechecks.splice(0)];
    for (const set of this.bySlot.values()) all.push(...set);
    this.bySlot.clear();
    this.slots.length = 0;
    for (const w of all) this.unlistAndSettle(w, 'timeout');
  }

  /** Wakes the waiters of every slot now reached, lowest slot first. */
  private readonly wake = () => {
    this.wakeQueued = false;
    const slots = this.slots;
    let n = 0;
    while (n < slots.length && slots[n]! <= this.last) n++;
    if (n === 0) return;
    const due = slots.splice(0, n);
    for (const s of due) {
      const set = this.bySlot.get(s)!;
      this.bySlot.delete(s);
      for (const w of set) this.unlistAndSettle(w, 'reached');
    }
  };

  private readonly recheck = () => {
    this.recheckTimer = null;
    this.onAdvance?.();
    for (const w of this.rechecks.splice(0)) this.unlistAndSettle(w, 'reached');
  };

  /** Settles `w`, already taken out of `bySlot` / `rechecks` by the caller. */
  private unlistAndSettle(w: Waiter, outcome: WaitOutcome): void {
    w.listed = null;
    this.settle(w, outcome);
  }

  /** Ends `w` (once): its timer, connection and slot or recheck entry go, then its callback runs. */
  private settle(w: Waiter, outcome: WaitOutcome): void {
    if (w.timer === null) return; // ended already
    clearTimeout(w.timer);
    w.timer = null;
    if (w.conn) {
      const c = this.connections.get(w.conn);
      if (c) {
        c.waiters.delete(w);
        if (c.waiters.size === 0) {
          this.connections.delete(w.conn);
          w.conn.off('close', c.onClose);
        }
      }
    }
    if (w.listed === 'slot') {
      const set = this.bySlot.get(w.target)!;
      set.delete(w);
      if (set.size === 0) {
        this.bySlot.delete(w.target);
        const i = lowerBound(this.slots, w.target);
        if (this.slots[i] === w.target) this.slots.splice(i, 1);
      }
    } else if (w.listed === 'recheck') {
      const i = this.rechecks.indexOf(w);
      if (i >= 0) this.rechecks.splice(i, 1);
    }
    w.listed = null;
    this.count--;
    this.metrics?.waiting(this.count);
    try {
      w.cb(outcome, this.advancedAt);
    } catch {
      // A waiter's callback reports its own failures (the request's answer); nothing to do here.
    }
  }
}

/** The first index of ascending `a` whose value is ≥ `x`. */
function lowerBound(a: readonly number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
