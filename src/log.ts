/**
 * Structured logging (pino). Level from REFRACT_LOG_LEVEL (default `info`); logs go to stderr so
 * stdout stays free for command output. Format (config.ts `logFormat`, `REFRACT_LOG_FORMAT` /
 * `--log-format`): `pretty` — one human-readable line per event (pino-pretty, synchronous, colours);
 * `json` — pino's JSON lines, for log shippers; `auto` (default) — pretty when stderr is a terminal,
 * JSON otherwise (pipes, files, systemd, containers without a TTY). Worker threads decide the same way
 * (the variable and fd 2 are theirs too), so one terminal never mixes the two.
 */
import { createRequire } from 'node:module';
import { isatty } from 'node:tty';
import { pino, type Logger } from 'pino';
import { isMainThread } from 'node:worker_threads';
import { type Env, envValue, logFormat } from './config/config.ts';
import { LogSink } from './logSink.ts';

/** True when log lines go out human-readable (see the module comment). */
export function prettyLogs(env?: Env): boolean {
  const f = logFormat(env);
  return f === 'pretty' || (f === 'auto' && isatty(2));
}

let jsonSink: LogSink | undefined;

/**
 * The thread's one JSON sink on stderr (src/logSink.ts). It writes what waits when the thread exits
 * (a worker's `exit` event comes when it ends by itself, not on `terminate()`), and a worker's sink then
 * closes its descriptor.
 */
function stderrSink(): LogSink {
  if (!jsonSink) {
    const sink = (jsonSink = new LogSink(2));
    process.on('exit', () => {
      sink.flushSync();
      if (!isMainThread) sink.close();
    });
  }
  return jsonSink;
}

/**
 * Creates the process logger (`name` becomes the `name` field of every line). JSON lines go through
 * a LogSink: a stderr that is not read, or whose reader is gone, costs dropped lines (counted,
 * `refract_log_lines_dropped_total`), never a blocked thread or a process that does not exit.
 */
export function createLogger(name = 'refract', level = envValue('REFRACT_LOG_LEVEL') ?? 'info'): Logger {
  if (!prettyLogs()) return pino({ name, level }, stderrSink());
  // pino-pretty (CommonJS) is required only for pretty logs: JSON logs (log shippers, tests, every thread
  // of a daemon whose stderr is not a terminal) do not load it
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  const stream = pretty({ destination: 2, sync: true, colorize: isatty(2), singleLine: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,name' });
  return pino({ name, level }, stream);
}
