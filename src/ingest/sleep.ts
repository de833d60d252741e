/** The ingest's one abortable pause (sources, backfill, gap healing, the loop's retries). */

/** Resolves after `ms` or as soon as `signal` aborts (the abort listener is removed either way). */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
