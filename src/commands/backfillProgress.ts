/**
 * `refract start`'s view of a signature backfill (src/ingest/sources/backfill.ts): progress lines (a log
 * line every 10 s and at each phase; `refract start`), or a progress bar on standard error when it is a
 * terminal (cli-progress; listing: slots covered from the tip down, fetching: transactions indexed of
 * those listed), and the `backfill` object of GET /health.
 */
import cliProgress from 'cli-progress';
import type { BackfillProgress } from '../ingest/sources/backfill.ts';

/** The /health `backfill` object: the progress (ETA in whole seconds), what is left, the start as ISO time, the requests sent. */
export interface BackfillHealth extends Omit<BackfillProgress, 'startedAt'> {
  remaining: number;
  startedAt: string;
  requests: Record<string, number>;
  rateLimited: number;
}

/** Follows backfill events; `bar` draws on standard error when it is a terminal and `progress` is not off. */
export class BackfillView {
  private last: BackfillHealth | null = null;
  private bar: cliProgress.SingleBar | null = null;
  private barPhase: string | null = null;

  private lastLine = 0;

  /**
   * @param tty draw the bar (standard error is a terminal and nothing else writes there)
   * @param line instead of a bar: called with one progress line at most every `lineEveryMs` (and at
   *   each change of phase), e.g. a log line — `refract start` logs, so a bar would be torn by log lines
   */
  constructor(
    private readonly tty: boolean = process.stderr.isTTY === true,
    private readonly line?: (text: string, progress: BackfillHealth) => void,
    private readonly lineEveryMs = 10_000,
  ) {}

  /** The progress line of `h` (phase, counts, ETA). */
  static describe(h: BackfillHealth): string {
    const n = (v: number) => v.toLocaleString('en-US');
    const eta = h.etaSeconds === null ? '' : `, about ${h.etaSeconds >= 90 ? `${Math.round(h.etaSeconds / 60)} min` : `${h.etaSeconds} s`} left`;
    const span = Math.max(1, h.targetSlot - h.afterSlot);
    if (h.phase === 'planning') return `backfill: planning slots ${n(h.afterSlot + 1)}..${n(h.targetSlot)}`;
    if (h.phase === 'listing') return `backfill: listing the account-compression program's signatures, ${Math.floor((100 * (h.targetSlot - h.listedDownTo)) / span)}% of ${n(span)} slots, ${n(h.listed)} Light transactions listed${eta}`;
    if (h.phase === 'fetching') return `backfill: indexing ${n(h.indexed)} of ${n(h.listed)} Light transactions (${Math.floor((100 * h.indexed) / Math.max(1, h.listed))}%)${eta}`;
    return `backfill: done, ${n(h.indexed)} Light transactions indexed up to slot ${n(h.targetSlot)}; following the chain`;
  }

  /** Takes one backfill event (IngestEvent `backfill`). */
  update(p: BackfillProgress, requests: Record<string, number>, rateLimited: number): void {
    this.last = {
      ...p,
      remaining: Math.max(0, p.listed - p.indexed),
      etaSeconds: p.etaSeconds === null ? null : Math.round(p.etaSeconds),
      startedAt: new Date(p.startedAt).toISOString(),
      requests,
      rateLimited,
    };
    if (this.line) {
      const now = Date.now();
      const phaseChanged = this.barPhase !== p.phase;
      this.barPhase = p.phase;
      if (phaseChanged || now - this.lastLine >= this.lineEveryMs) {
        this.lastLine = now;
        this.line(BackfillView.describe(this.last), this.last);
      }
      return;
    }
    if (!this.tty) return;
    if (p.phase === 'done') {
      this.stopBar();
      return;
    }
    if (this.barPhase !== p.phase) {
      this.stopBar();
      this.barPhase = p.phase;
      const format = p.phase === 'listing'
        ? 'backfill: listing signatures [{bar}] {percentage}% of slots | {listed} listed | ETA {eta_formatted}'
        : 'backfill: indexing [{bar}] {value}/{total} Light transactions | ETA {eta_formatted}';
      this.bar = new cliProgress.SingleBar({ format, stream: process.stderr, etaBuffer: 50 }, cliProgress.Presets.shades_classic);
      const total = p.phase === 'listing' ? Math.max(1, p.targetSlot - p.afterSlot) : Math.max(1, p.listed);
      this.bar.start(total, 0, { listed: p.listed });
    }
    const value = p.phase === 'listing' ? p.targetSlot - p.listedDownTo : p.indexed;
    this.bar?.update(value, { listed: p.listed });
  }

  /** The /health object, or null when no backfill ran in this process. */
  health(): BackfillHealth | null {
    return this.last;
  }

  /** Removes the bar (daemon stop). */
  stopBar(): void {
    this.bar?.stop();
    this.bar = null;
    this.barPhase = null;
  }
}
