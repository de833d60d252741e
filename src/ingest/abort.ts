/** An abort controller tied to a caller's signal (the gRPC and live sources' own stop). */

/**
 * A controller of one's own that also aborts when `parent` does, for a source that must stop both
 * on its caller's signal and on its own decision. `dispose()` unhooks it from `parent` and aborts it
 * (call it when done, in a `finally`). When `parent` has already aborted, `stop` is aborted at once.
 */
export function childAbort(parent?: AbortSignal): { stop: AbortController; dispose(): void } {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  if (parent?.aborted) stop.abort();
  else parent?.addEventListener('abort', onAbort, { once: true });
  return {
    stop,
    dispose() {
      parent?.removeEventListener('abort', onAbort);
      stop.abort();
    },
  };
}
