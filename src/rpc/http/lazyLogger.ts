/**
 * fastify `childLoggerFactory` that defers creating each request's child logger until the request
 * actually logs something at an enabled level.
 *
 * fastify builds a pino child (bindings `{reqId}`) for every request. At the default levels nothing
 * on a successful JSON-RPC call logs (request logging off or below the level), so that child is
 * pure per-request overhead on the hot path (bench/rpc.ts). Records that are written are the same
 * as with an eager child: same bindings, same options.
 */
import type { FastifyBaseLogger } from 'fastify';

/** pino loggers have `isLevelEnabled`; other fastify loggers may not (then: always log). */
const enabled = (l: FastifyBaseLogger, level: string): boolean => (l as unknown as { isLevelEnabled?(x: string): boolean }).isLevelEnabled?.(level) ?? true;
/** pino's level methods, each forwarded through `LazyChildLogger.log`. */
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
type Level = (typeof LEVELS)[number];

/** The level methods `fatal` … `trace`, one per entry of LEVELS, set on the prototype by the class's static block. */
interface LazyChildLogger extends Record<Level, (...args: unknown[]) => void> {}

/** A logger that becomes `parent.child(bindings, options)` on first enabled use. */
class LazyChildLogger {
  static {
    for (const level of LEVELS) {
      LazyChildLogger.prototype[level] = function (this: LazyChildLogger, ...args: unknown[]): void {
        this.log(level, args);
      };
    }
  }

  private real: FastifyBaseLogger | undefined;
  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: Record<string, unknown>,
  ) {}

  get level(): string {
    return this.real?.level ?? this.parent.level;
  }
  set level(l: string) {
    this.materialize().level = l;
  }
  silent(..._args: unknown[]): void {}

  private materialize(): FastifyBaseLogger {
    return (this.real ??= this.parent.child(this.bindings, this.options));
  }
  private log(level: Level, args: unknown[]): void {
    if (this.real) (this.real[level] as (...a: unknown[]) => void)(...args);
    else if (enabled(this.parent, level)) (this.materialize()[level] as (...a: unknown[]) => void)(...args);
  }
  child(bindings: Record<string, unknown>, options?: Record<string, unknown>): FastifyBaseLogger {
    return this.materialize().child(bindings, options);
  }
  isLevelEnabled(level: string): boolean {
    return enabled(this.real ?? this.parent, level);
  }
}

/**
 * For fastify's `childLoggerFactory` option: returns a lazy child of `logger` with `bindings` and
 * `options` (see the module comment).
 */
export function lazyChildLoggerFactory(logger: FastifyBaseLogger, bindings: Record<string, unknown>, options: Record<string, unknown>): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}
