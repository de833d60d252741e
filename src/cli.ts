/**
 * The `refract` command line: runs the program of src/commands/program.ts (index, start, snapshot,
 * setup, prover, simulate) on this process's arguments. A failure to start is one line on stderr and
 * exit 1.
 */
import { program } from './commands/program.ts';

try {
  await program.parseAsync(process.argv);
} catch (err) {
  // A failure to start (port in use, unreadable store, bad config) is one clear line, not a stack.
  const e = err as Error & { code?: string };
  process.stderr.write(`refract: ${e.code === 'EADDRINUSE' ? `${e.message} (another process listens there; use --port)` : e.message}\n`);
  process.exit(1);
}
