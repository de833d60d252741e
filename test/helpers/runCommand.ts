/**
 * Runs a command to completion WITHOUT blocking the test worker's event loop.
 *
 * Why not `spawnSync`: vitest's worker reports progress to the main process over an RPC whose calls
 * time out after 60 s, and the timeout fires as soon as the worker's event loop turns again. A test
 * that chains `spawnSync` calls (each a process that loads keys or indexes fixtures) can hold the loop
 * for over a minute on a loaded 2-core CI machine, and the run then ends with the unhandled error
 * `[vitest-worker]: Timeout calling "onTaskUpdate"` although every test passed. Quick probes
 * (`redis-server --version`, `git ls-files`) may stay synchronous.
 */
import { spawn } from 'node:child_process';

/** Exit status (null when killed by a signal), signal and the output, as `spawnSync` gives them. */
export interface CommandResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Spawns `cmd …args` and resolves when it has exited and its output is read; after `timeoutMs`
 * (default 60,000 ms) it is sent SIGKILL (as `spawnSync`'s `timeout`, status null then).
 */
export async function runCommand(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<CommandResult> {
  const child = spawn(cmd, args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
  try {
    const [status, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, sig) => resolve([code, sig]));
    });
    return { status, signal, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}
