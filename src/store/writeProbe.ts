/**
 * Is a store writable? A store restored from a snapshot (or about to be offered as one) is checked
 * the way it will be used: a child process opens it as the daemon does and commits write
 * transactions that allocate, free and reuse pages (`Store.writeProbe`). LMDB reports some broken
 * files (a free-page list it cannot walk) only by aborting the process on the first write
 * (`mdb.c: Assertion … failed in mdb_page_alloc()`, issue #31), so the probe cannot run in this
 * process or in a thread of it.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tsxExecArgv } from '../tsxWorker.ts';

/** The outcome of {@link probeStoreWritable}: ok, or why not (a signal name, an exit code and stderr). */
export type WriteProbeResult = { ok: true } | { ok: false; reason: string };

/**
 * Runs the write probe on the store directory `dir` in a child process (workers/storeWriteProbe.ts).
 * The probe leaves no keys behind (it deletes what it wrote); the data file may grow by a few pages.
 * @param dir LMDB store directory (not open for writing elsewhere)
 * @param timeoutMs the child is killed after this long (default 120 s), which counts as a failure
 * @returns `{ok: true}`, or `{ok: false, reason}` naming the signal (e.g. `aborted by SIGABRT: …
 *   Assertion 'key.mv_size > 0' failed in mdb_page_alloc()`) or exit code and LMDB's message
 */
export function probeStoreWritable(dir: string, timeoutMs = 120_000): Promise<WriteProbeResult> {
  const entry = fileURLToPath(new URL('../../workers/storeWriteProbe.ts', import.meta.url));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...tsxExecArgv(entry), entry, dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 4000) stderr += d.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ ok: false, reason: `the probe process did not start: ${e.message}` });
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const said = stderr.trim().split('\n').filter(Boolean).slice(-3).join(' | ');
      if (code === 0) resolve({ ok: true });
      else if (signal) resolve({ ok: false, reason: `LMDB ended the probe process with ${signal}${said ? `: ${said}` : ''}` });
      else resolve({ ok: false, reason: `the probe failed (exit ${code})${said ? `: ${said}` : ''}` });
    });
  });
}
