/**
 * Importing packages built on ffjavascript (snarkjs, circomlibjs) inside a worker thread.
 *
 * ffjavascript 0.3.x imports web-worker 1.2.0, which runs `isMainThread ? mainThread() :
 * workerThread()` at import time. In a worker thread it did not spawn itself, `workerThread()`
 * requires `workerData.mod` (undefined: a TypeError printed raw to stderr, or `Cannot destructure
 * property 'mod'`), replaces the thread's global prototype and listens on `parentPort`, where
 * Refract's own thread protocol runs (spec perf.md §2.4). {@link importAsMainThread} makes
 * `worker_threads.isMainThread` read `true` while the import runs and restores it afterwards, so the
 * package sees a main thread and web-worker installs nothing.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * `import(specifier)`, with `worker_threads.isMainThread` reading `true` during the import when
 * called in a worker thread (a plain import in the main thread).
 * @param specifier a package name or URL, as `import()` takes it.
 * @returns the module namespace; rejects as `import()` does.
 */
export async function importAsMainThread<T = unknown>(specifier: string): Promise<T> {
  const threads = require('node:worker_threads') as typeof import('node:worker_threads');
  if (threads.isMainThread) return (await import(specifier)) as T;
  const desc = Object.getOwnPropertyDescriptor(threads, 'isMainThread');
  Object.defineProperty(threads, 'isMainThread', { value: true, configurable: true, writable: true });
  try {
    return (await import(specifier)) as T;
  } finally {
    if (desc) Object.defineProperty(threads, 'isMainThread', desc);
    else Object.defineProperty(threads, 'isMainThread', { value: false, configurable: true, writable: true });
  }
}
