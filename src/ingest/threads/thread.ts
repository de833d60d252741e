/**
 * Worker-thread wiring of ingest, in one place: how an indexing thread is spawned, how it and its
 * parent talk, and how its errors and its exit reach the parent. The ingest thread
 * (ingestThread.ts), the prepare thread (prepareThread.ts) and the import thread (importThread.ts)
 * are each a message type, a command type and a few lines over this module; bench:ingest starts
 * its thread with {@link startIndexingWorker}.
 *
 * The protocol, both directions structured-clone plain data:
 * - thread → parent: messages `{type: …}` of the thread's own kinds, and `{type: 'failed', message,
 *   stack}` ({@link FailedMessage}) for the error that ended it, posted just before it exits;
 * - parent → thread: commands `{type: …}`; `{type: 'stop'}` ({@link StopCommand}) asks it to finish
 *   what it is doing and exit.
 * The parent side is {@link startIndexingThread}, the thread side {@link serveThread}.
 *
 * Why a thread of its own with a big young generation: indexing a batch keeps its decoded
 * transactions alive while it allocates ≈25 KB per compressed output, and with Node's default young
 * generation (16 MiB semi-spaces) every scavenge copies that live batch again. A young generation of
 * 384 MiB (128 MiB semi-spaces) took ≈12% less CPU per output (alternating process runs of the same
 * import: 138.6 vs 121.8 µs per output, 6 pairs). Only the thread's heap gets it: `node
 * --max-semi-space-size` would apply to every thread of the process (prover threads included) and
 * cannot be set after start-up.
 */
import { fileURLToPath } from 'node:url';
import { type Worker, parentPort, workerData } from 'node:worker_threads';
import { startTsxWorker } from '../../tsxWorker.ts';

/** Young-generation size (MiB; V8 `maxYoungGenerationSizeMb` = 3 semi-spaces) of indexing threads. */
export const INGEST_YOUNG_GENERATION_MB = 384;

/**
 * Starts a thread that indexes (the import, ingest and prepare threads, bench:ingest's) on the
 * TypeScript module `module` (a file URL, e.g. `new URL('../../../workers/ingest.ts', import.meta.url)`),
 * with a young generation of INGEST_YOUNG_GENERATION_MB. Bare: no protocol (see startIndexingThread).
 */
export function startIndexingWorker(module: URL, data: unknown): Worker {
  return startTsxWorker(fileURLToPath(module), { workerData: data, resourceLimits: { maxYoungGenerationSizeMb: INGEST_YOUNG_GENERATION_MB } });
}

/** A worker's report of the error that ended it: its message and, when it had one, its stack. */
export interface ThreadFailure {
  message: string;
  stack?: string;
}

/** `err` (anything thrown in a worker) as a ThreadFailure to post to the parent. */
export function threadFailure(err: unknown): ThreadFailure {
  return { message: (err as Error)?.message ?? String(err), stack: (err as Error)?.stack };
}

/**
 * The Error to raise in the parent for a worker's failure: a reported one (message, with the
 * worker's stack for the log line) or what the Worker's `error` event gave (made an Error if it is not one).
 */
export function threadError(f: ThreadFailure | unknown): Error {
  if (f instanceof Error) return f;
  if (f && typeof f === 'object' && typeof (f as ThreadFailure).message === 'string') {
    const e = new Error((f as ThreadFailure).message);
    if ((f as ThreadFailure).stack) e.stack = (f as ThreadFailure).stack;
    return e;
  }
  return new Error(String(f));
}

/** The message a thread posts for the error that ended it (then it exits). */
export type FailedMessage = { type: 'failed' } & ThreadFailure;

/** The command that asks a thread to stop. */
export type StopCommand = { type: 'stop' };

/** What {@link startIndexingThread} needs to start one. */
export interface ThreadSpec<M extends { type: string }> {
  /** Names the thread in errors: `Error('<name> thread exited with code N')`. */
  name: string;
  /** The thread's entry point (a file URL of a module under workers/). */
  module: URL;
  /** Its workerData (structured-clone safe). */
  workerData: unknown;
  /** Hears each message the thread posts, except `failed` (which becomes `failure`). */
  onMessage(m: Exclude<M, FailedMessage>): void;
  /** Called after every message, error and the exit: wakes a consumer that waits on the thread. */
  onChange?(): void;
}

/** A running thread, from the parent's side. */
export interface IndexingThread<C extends { type: string }> {
  readonly worker: Worker;
  /** The error the thread reported (`failed`) or raised (the Worker's `error` event); null so far. */
  readonly failure: Error | null;
  /** True once the thread has exited. */
  readonly exited: boolean;
  /**
   * Settles when the thread has exited: resolves on exit code 0 without a failure; rejects with the
   * failure, else with `Error('<name> thread exited with code N')` (`… while stopping` after `stop()`).
   * A rejection nobody awaits does not end the process.
   */
  readonly done: Promise<void>;
  /** Posts `c` to the thread; nothing once it has exited. */
  send(c: C | StopCommand): void;
  /** Posts `{type: 'stop'}` (once; later calls only wait), then waits for `done`. */
  stop(): Promise<void>;
}

/**
 * Starts `spec.module` on an indexing thread (startIndexingWorker) and wires its protocol: `failed`
 * messages and `error` events become `failure` (a reported failure wins over an error event that
 * comes after it), other messages go to `onMessage`, the exit settles `done`.
 * @returns the thread handle; the thread's errors arrive through `failure` and `done`.
 */
export function startIndexingThread<M extends { type: string }, C extends { type: string } = StopCommand>(spec: ThreadSpec<M>): IndexingThread<C> {
  const worker = startIndexingWorker(spec.module, spec.workerData);
  let failure: Error | null = null;
  let exited = false;
  let stopping = false;
  const changed = () => spec.onChange?.();
  const done = new Promise<void>((resolve, reject) => {
    worker.on('message', (m: M) => {
      if (m.type === 'failed') failure = threadError(m);
      else spec.onMessage(m as Exclude<M, FailedMessage>);
      changed();
    });
    worker.on('error', (e) => {
      failure ??= threadError(e);
      changed();
    });
    worker.on('exit', (code) => {
      exited = true;
      if (failure) reject(failure);
      else if (code === 0) resolve();
      else reject(new Error(`${spec.name} thread exited with code ${code}${stopping ? ' while stopping' : ''}`));
      changed();
    });
  });
  // The caller awaits `done` or `stop()`; an unobserved rejection must not kill the process.
  done.catch(() => {});
  const send = (c: C | StopCommand) => {
    if (!exited) worker.postMessage(c);
  };
  return {
    worker,
    done,
    get failure() {
      return failure;
    },
    get exited() {
      return exited;
    },
    send,
    stop() {
      if (!stopping) {
        stopping = true;
        send({ type: 'stop' });
      }
      return done;
    },
  };
}

/** What {@link serveThread} gives the thread's body. */
export interface ThreadContext<D, M, C> {
  /** The thread's workerData. */
  data: D;
  /** Posts a message to the parent. */
  post(m: M): void;
  /** Aborted by the parent's `{type: 'stop'}`. */
  signal: AbortSignal;
  /** Hears every command of the parent (`stop` included, after `signal` has aborted). */
  onCommand(f: (c: C | StopCommand) => void): void;
}

/**
 * The thread side of the protocol, for the entry points under workers/: runs `main` with the
 * thread's workerData, a typed `post`, a signal the parent's `stop` aborts and its other commands.
 * An error `main` throws (let it close what it opened in a `finally`) is posted as `failed`; then
 * the parent port is closed and the thread exits.
 * @throws Error when not on a worker thread.
 */
export async function serveThread<D, M, C extends { type: string } = StopCommand>(main: (t: ThreadContext<D, M, C>) => Promise<void>): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('serveThread: not on a worker thread');
  const abort = new AbortController();
  const listeners: ((c: C | StopCommand) => void)[] = [];
  port.on('message', (c: C | StopCommand) => {
    if (c.type === 'stop') abort.abort();
    for (const f of listeners) f(c);
  });
  try {
    await main({ data: workerData as D, post: (m) => port.postMessage(m), signal: abort.signal, onCommand: (f) => listeners.push(f) });
  } catch (err) {
    port.postMessage({ type: 'failed', ...threadFailure(err) } satisfies FailedMessage);
  } finally {
    port.close();
    // The work is done and what it opened is closed, yet some handle a library keeps (not listed by
    // process.getActiveResourcesInfo) held the ingest thread 1–9 s past this point, and `refract start`'s
    // Ctrl-C with it: the thread ends within 1 s regardless (unref'd: a natural exit comes first).
    setTimeout(() => process.exit(0), 1000).unref();
  }
}
