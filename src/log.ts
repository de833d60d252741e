/**
 * Structured logging (pino). Level from REFRACT_LOG_LEVEL (default `info`); logs go to stderr so
 * stdout stays free for command output.
 */
import { pino, type Logger } from 'pino';

/** Creates the process logger (`name` becomes the `name` field of every line). */
export function createLogger(name = 'refract', level = process.env.REFRACT_LOG_LEVEL ?? 'info'): Logger {
  return pino({ name, level }, pino.destination(2));
}
