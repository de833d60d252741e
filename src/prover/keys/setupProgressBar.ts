/**
 * A cli-progress bar for `setupCircuits` (for the `refract setup` command):
 *
 * ```ts
 * const bar = setupProgressBar();
 * try { await setupCircuits({ keysDir, ptau, onProgress: bar.onProgress }); } finally { bar.stop(); }
 * ```
 * One bar for the whole run (weighted by stage, see `SetupProgress.fraction`), with the current
 * circuit, stage and circuits done.
 */
import cliProgress from 'cli-progress';
import type { SetupProgress } from './keySetup.ts';

/**
 * Creates (but does not start) a progress bar; it starts on the first event.
 * @param opts.stream output stream (default stderr, so stdout stays machine-readable)
 * @returns `onProgress` for `SetupOptions`, and `stop()` to call when setup ends (success or not)
 */
export function setupProgressBar(opts: { stream?: NodeJS.WritableStream } = {}): {
  onProgress: (p: SetupProgress) => void;
  stop: () => void;
} {
  const bar = new cliProgress.SingleBar(
    {
      format: 'setup |{bar}| {percentage}% | {done}/{count} circuits | {circuit} {stage} {message}',
      stream: opts.stream ?? process.stderr,
      hideCursor: true,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  const finished = new Set<string>();
  return {
    onProgress(p) {
      if (p.circuitId && (p.stage === 'done' || p.stage === 'cached')) finished.add(p.circuitId);
      const payload = {
        done: finished.size,
        count: p.total,
        circuit: p.circuitId ?? 'ptau',
        stage: p.stage,
        message: p.message ?? '',
      };
      const value = Math.round(p.fraction * 1000);
      if (!started) {
        bar.start(1000, value, payload);
        started = true;
      } else {
        bar.update(value, payload);
      }
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
