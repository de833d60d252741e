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
 * - lines are written with `fs.write` (libuv's thread pool), one write in flight at a time, lines
 *   coalesced while it runs; EAGAIN (a full non-blocking pipe) is retried after 20 ms on a timer;
 * - at most `maxPendingBytes` (4 MiB) wait: a line beyond that is dropped and counted;
 * - any other write error (EPIPE: the reader is gone; EBADF) makes the sink drop every line from
 *   then on, counted;
 * - `flushSync()` (called on the process's `exit` event) writes what waits with `fs.writeSync` and
 *   gives up on the first error (EAGAIN included), counting the rest as dropped. A synchronous write
 *   to a blocking pipe that is not read would block forever, so a sink on a pipe or socket first
 *   makes the descriptor non-blocking (for fd 2, by opening `process.stderr`, whose libuv pipe sets
 *   O_NONBLOCK); where it cannot, `flushSync` drops what waits instead of writing it.
 *   Known defect: fd 2 was seen blocking anyway (no O_NONBLOCK) after tsx had spawned its esbuild
 *   child, and the daemon then hung at exit in a write to a full pipe; see the session note.
 *
 * `logLinesDropped()` is the process-wide count (exported as `refract_log_lines_dropped_total`).
 */
import fs from 'node:fs';
import { isMainThread } from 'node:worker_threads';

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

/**
 * A pino destination (an object with `write(line)`) on a file descriptor; see the module comment.
 * `fd`: an open descriptor (2 for stderr). Never throws from `write` or `flushSync`.
 */
export class LogSink {
  private pending: string[] = [];
  private pendingBytes = 0;
  private pendingLines = 0;
  private inFlight = false;
  private broken = false;
  private readonly exitWriteSafe: boolean;
  private readonly maxPendingBytes: number;
  private readonly retryMs: number;

  constructor(
    private readonly fd: number,
    opts: LogSinkOptions = {},
  ) {
    this.maxPendingBytes = opts.maxPendingBytes ?? 4 * 1024 * 1024;
    this.retryMs = opts.retryMs ?? 20;
    let stream = false;
    try {
      const st = fs.fstatSync(fd);
      stream = st.isFIFO() || st.isSocket();
    } catch {
      stream = true;
    }
    if (stream && fd === 2 && isMainThread) void process.stderr; // libuv opens the pipe non-blocking
    this.exitWriteSafe = !stream || (fd === 2 && isMainThread);
  }

  /** Queues one log line (pino passes it newline-terminated); drops and counts it when it cannot. */
  write(line: string): boolean {
    if (this.broken || this.pendingBytes + line.length > this.maxPendingBytes) {
      dropped++;
      return true;
    }
    this.pending.push(line);
    this.pendingBytes += line.length;
    this.pendingLines++;
    if (!this.inFlight) this.writeNext();
    return true;
  }

  /** Writes what waits without blocking for long (see the module comment); for the exit event. */
  flushSync(): void {
    if (this.broken || !this.exitWriteSafe) return this.dropPending();
    const { buf, lines } = this.takePending();
    try {
      for (let rest = buf; rest.length; ) rest = rest.subarray(fs.writeSync(this.fd, rest));
    } catch {
      dropped += lines;
    }
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

  private writeNext(): void {
    if (this.broken || !this.pending.length) return;
    const { buf, lines } = this.takePending();
    this.inFlight = true;
    this.writeChunk(buf, lines);
  }

  private writeChunk(buf: Buffer, lines: number): void {
    fs.write(this.fd, buf, 0, buf.length, null, (err, n) => {
      if (err) {
        if (err.code === 'EAGAIN' || err.code === 'EBUSY') {
          setTimeout(() => this.writeChunk(buf, lines), this.retryMs).unref();
          return;
        }
        this.inFlight = false;
        this.broken = true;
        dropped += lines;
        this.dropPending();
        return;
      }
      if (n < buf.length) return this.writeChunk(buf.subarray(n), lines);
      this.inFlight = false;
      if (this.pending.length) this.writeNext();
    });
  }
}
