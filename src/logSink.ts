/**
 * The stderr writer behind the JSON logs (src/log.ts): never blocks the thread that logs, never
 * hangs its exit, and counts what it could not write.
 *
 * Why not `pino.destination(2)` (sonic-boom 4): its exit flush (`flushSync`, registered by pino for
 * every asynchronous destination of the main thread) retries a failed write forever, sleeping 100 ms
 * between tries, for EPIPE as for EAGAIN. A daemon whose stderr reader had gone (`refract start 2>&1 |
 * head -2`) or stopped reading therefore never exited on SIGTERM: the signal handler's
 * `process.exit` spun in that loop. Here:
 *
 * - a line is queued and written from the logging thread itself, lines coalesced until the next turn
 *   of its event loop, in a write that cannot block (below); a full pipe or socket (EAGAIN) keeps
 *   what is left, tried again every 20 ms on an unref'd timer;
 * - at most `maxPendingBytes` (4 MiB) wait: a line beyond that is dropped and counted;
 * - any other write error (EPIPE: the reader is gone; EBADF) makes the sink drop every line from
 *   then on, counted;
 * - `flushSync()` (called on the thread's `exit` event) writes what waits and gives up on the first
 *   error (EAGAIN included), counting the rest as dropped.
 *
 * A write that cannot block. O_NONBLOCK belongs to the open file description, which fd 2 shares with
 * every child spawned with an inherited stderr, and libuv makes fd 0–2 *blocking* in each such child
 * (`uv__process_child_init`): tsx's esbuild service is one, spawned whenever sources changed since the
 * last run. With fd 2 blocking and its reader not reading, a write to it blocked its thread for good
 * (a thread-pool thread, which `process.exit` then joined: SIGTERM hung the daemon). So:
 * - a pipe (`| less`, `| head`, a container runtime's) is opened again through `/proc/self/fd/<fd>`
 *   with O_NONBLOCK (close-on-exec): an open file description of its own, that no child shares;
 * - a socket (systemd's journal, a parent's `spawn(…, {stdio: 'pipe'})`) gets `send(MSG_DONTWAIT)`,
 *   non-blocking per call, from the native addon (`writeNonBlocking`, src/native.ts);
 * - a regular file or terminal is written with `fs.write` on libuv's thread pool, one write in flight;
 * - without /proc or the addon, a pipe or socket is written that way too, and its exit flush first
 *   makes fd 2 non-blocking through `process.stderr` (main thread) or drops what waits (elsewhere):
 *   a child that clears O_NONBLOCK can then still block a thread-pool thread.
 *
 * `logLinesDropped()` is the process-wide count (exported as `refract_log_lines_dropped_total`).
 */
import fs from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { nativeAddon } from './native.ts';

let dropped = 0;

/** Log lines this thread's sinks have dropped since it started (a count of `write` calls). */
export function logLinesDropped(): number {
  return dropped;
}

/** Options of a LogSink (defaults in brackets). */
export interface LogSinkOptions {
  /** Bytes that may wait for the file descriptor before new lines are dropped [4 MiB]. */
  maxPendingBytes?: number;
  /** Milliseconds between tries while the descriptor answers EAGAIN [20]. */
  retryMs?: number;
}

/** How a sink writes (module comment): one call that cannot block, or `fs.write` on the thread pool. */
export type LogSinkMode = 'nonblocking' | 'threadpool';

/** A write that cannot block: bytes written, or −1 when the descriptor is full (EAGAIN); throws on other errors. */
type TryWrite = (buf: Buffer) => number;

const EAGAIN = 11;

/**
 * A pino destination (an object with `write(line)`) on a file descriptor; see the module comment.
 * Never throws from `write`, `flushSync` or `close`.
 */
export class LogSink {
  /** How this sink writes. */
  readonly mode: LogSinkMode;
  private pending: string[] = [];
  private pendingBytes = 0;
  private pendingLines = 0;
  /** What is being written: in flight on the thread pool, or left over by a full descriptor. */
  private head: { buf: Buffer; lines: number } | null = null;
  private scheduled = false;
  private broken = false;
  private readonly exitWriteSafe: boolean;
  private readonly maxPendingBytes: number;
  private readonly retryMs: number;
  /** The descriptor written to: `fd` itself, or this sink's own non-blocking description of its pipe. */
  private readonly out: number;
  private readonly ownOut: boolean;
  private readonly tryWrite: TryWrite | null;

  /**
   * @param fd an open descriptor (2 for stderr); a pipe is opened again non-blocking (module comment).
   * @param opts limits (defaults in {@link LogSinkOptions}).
   */
  constructor(fd: number, opts: LogSinkOptions = {}) {
    this.maxPendingBytes = opts.maxPendingBytes ?? 4 * 1024 * 1024;
    this.retryMs = opts.retryMs ?? 20;
    let kind: 'file' | 'pipe' | 'socket' = 'file';
    try {
      const st = fs.fstatSync(fd);
      kind = st.isFIFO() ? 'pipe' : st.isSocket() ? 'socket' : 'file';
    } catch {
      // not a descriptor (EBADF): the first write fails and the sink drops, counted
    }
    let out = fd;
    let tryWrite: TryWrite | null = null;
    if (kind === 'pipe') {
      try {
        out = fs.openSync(`/proc/self/fd/${fd}`, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
        const own = out;
        tryWrite = (buf) => {
          try {
            return fs.writeSync(own, buf);
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code === 'EAGAIN') return -1;
            throw e;
          }
        };
      } catch {
        // no /proc, or the reader has gone (ENXIO): the thread pool, and writes report EPIPE
      }
    } else if (kind === 'socket' && nativeAddon?.writeNonBlocking) {
      const send = nativeAddon.writeNonBlocking;
      tryWrite = (buf) => {
        const n = send(fd, buf);
        if (n >= 0) return n;
        if (n === -EAGAIN) return -1;
        throw Object.assign(new Error(`write to fd ${fd}: errno ${-n}`), { errno: -n });
      };
    }
    this.out = out;
    this.ownOut = out !== fd;
    this.tryWrite = tryWrite;
    this.mode = tryWrite ? 'nonblocking' : 'threadpool';
    this.exitWriteSafe = kind === 'file' || tryWrite !== null || (fd === 2 && isMainThread);
  }

  /** Queues one log line (pino passes it newline-terminated); drops and counts it when it cannot. */
  write(line: string): boolean {
    if (this.broken || this.pendingBytes + (this.head?.buf.length ?? 0) + line.length > this.maxPendingBytes) {
      dropped++;
      return true;
    }
    this.pending.push(line);
    this.pendingBytes += line.length;
    this.pendingLines++;
    if (this.head || this.scheduled) return true;
    if (this.tryWrite) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.writeNext();
      }).unref();
    } else this.writeNext();
    return true;
  }

  /** Writes what waits without blocking (see the module comment); for the exit event. */
  flushSync(): void {
    if (this.broken || !this.exitWriteSafe) return this.dropPending();
    if (this.tryWrite) {
      // what a full descriptor left first, then the queue; the first EAGAIN or error drops the rest
      const parts = [this.head, this.takePending()].filter((p): p is { buf: Buffer; lines: number } => !!p && p.buf.length > 0);
      this.head = null;
      for (const part of parts) {
        let written = false;
        try {
          written = this.writeOut(part);
        } catch {
          // counted below
        }
        if (!written) {
          dropped += part.lines;
          return this.dropPending();
        }
      }
      return;
    }
    if (!this.ownOut && this.out === 2) nonBlockingStderr();
    const { buf, lines } = this.takePending(); // the thread pool's write in flight is not touched
    try {
      for (let rest = buf; rest.length; ) rest = rest.subarray(fs.writeSync(this.out, rest));
    } catch {
      dropped += lines;
    }
  }

  /** Closes the sink's own description of its pipe (unless a write is in flight); the sink drops from then on. */
  close(): void {
    const inFlight = this.head !== null && this.mode === 'threadpool';
    if (this.ownOut && !inFlight && !this.broken) fs.closeSync(this.out);
    this.broken = true;
  }

  /** Empties the queue: what waited, as one buffer, and how many lines it holds. */
  private takePending(): { buf: Buffer; lines: number } {
    const taken = { buf: Buffer.from(this.pending.join('')), lines: this.pendingLines };
    this.pending = [];
    this.pendingBytes = 0;
    this.pendingLines = 0;
    return taken;
  }

  private dropPending(): void {
    dropped += this.takePending().lines;
  }

  /** Counts what is being written and what waits as dropped, and drops from then on. */
  private fail(): void {
    dropped += this.head?.lines ?? 0;
    this.head = null;
    this.broken = true;
    this.dropPending();
  }

  private writeNext(): void {
    if (this.broken || this.head || !this.pending.length) return;
    this.head = this.takePending();
    if (this.tryWrite) this.writeHeadNow();
    else this.writeHeadInPool();
  }

  /** Non-blocking mode: writes the head until done, full (tried again after `retryMs`) or failed. */
  private writeHeadNow(): void {
    const head = this.head;
    if (!head) return; // taken by the exit flush while a retry waited
    try {
      if (!this.writeOut(head)) {
        setTimeout(() => (this.broken ? this.fail() : this.writeHeadNow()), this.retryMs).unref();
        return;
      }
    } catch {
      return this.fail();
    }
    this.head = null;
    this.writeNext();
  }

  /** Non-blocking mode: writes `part.buf` (advancing it) until done (true) or the descriptor is full (false); throws on other errors. */
  private writeOut(part: { buf: Buffer }): boolean {
    while (part.buf.length) {
      const n = this.tryWrite!(part.buf);
      if (n < 0) return false;
      part.buf = part.buf.subarray(n);
    }
    return true;
  }

  /** Thread-pool mode: one `fs.write` in flight; EAGAIN tried again after `retryMs`. */
  private writeHeadInPool(): void {
    const head = this.head!;
    fs.write(this.out, head.buf, 0, head.buf.length, null, (err, n) => {
      if (err) {
        if ((err.code === 'EAGAIN' || err.code === 'EBUSY') && !this.broken) {
          setTimeout(() => this.writeHeadInPool(), this.retryMs).unref();
          return;
        }
        return this.fail();
      }
      head.buf = head.buf.subarray(n);
      if (head.buf.length) return this.writeHeadInPool();
      this.head = null;
      this.writeNext();
    });
  }
}

/** Sets O_NONBLOCK on fd 2 through the main thread's `process.stderr` pipe handle (libuv), where it has one. */
function nonBlockingStderr(): void {
  try {
    (process.stderr as unknown as { _handle?: { setBlocking?: (b: boolean) => number } })._handle?.setBlocking?.(false);
  } catch {
    // not a pipe or socket handle: nothing to do
  }
}
