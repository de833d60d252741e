/**
 * Directory listing shared by the ingest file source (src/ingest/sources/files.ts) and the simulator's replay
 * (src/sim/simulator.ts): a bottom helper, so that the simulator, beside the stack, needs nothing
 * from ingest/.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Files of `dir` (not hidden), sorted by name, as `dir`-joined paths; `[dir]` when `dir` is a file.
 * @throws the `fs` error (e.g. ENOENT) when `dir` does not exist.
 */
export function listFiles(dir: string): string[] {
  const st = statSync(dir);
  if (st.isFile()) return [dir];
  return readdirSync(dir)
    .filter((n) => !n.startsWith('.'))
    .sort()
    .map((n) => join(dir, n))
    .filter((p) => statSync(p).isFile());
}
