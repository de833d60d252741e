/**
 * Issue #33, point 5, through the binary: `refract --version`; a bad flag prints the error and one
 * line pointing at --help (not the whole help); a store directory that cannot be opened is named; logs
 * are human-readable on a terminal (auto, seen through `script`, which gives the child a pseudo-terminal)
 * and JSON when not, or when asked (`--log-format json`); the start line gives the API URL and a curl.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
import { freePort, killSpawned, runRefract } from './helpers/refractBin.ts';
import { tempDir } from './helpers/photon.ts';

afterAll(killSpawned);

/**
 * Spawns `cmd …args`, waits (up to 60 s) until its `stream` shows `marker` (default "the API is at"),
 * then calls `stop` (Ctrl-C on a terminal, SIGINT through a pipe) and resolves with the exit status and
 * the output.
 */
function untilThenStop(cmd: string, args: string[], env: NodeJS.ProcessEnv, stream: 'stdout' | 'stderr', stop: (c: ChildProcess) => void, marker = 'the API is at'): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const got = { stdout: '', stderr: '' };
  let stopped = false;
  const kill = setTimeout(() => child.kill('SIGKILL'), 60_000);
  for (const k of ['stdout', 'stderr'] as const) {
    child[k]!.setEncoding('utf8').on('data', (d: string) => {
      got[k] += d;
      if (!stopped && k === stream && got[k].includes(marker)) {
        stopped = true;
        stop(child);
      }
    });
  }
  return new Promise((resolve) => child.once('close', (status) => {
    clearTimeout(kill);
    resolve({ status, ...got });
  }));
}

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('refract on the command line', () => {
  it('--version and -V print the package version', async () => {
    for (const flag of ['--version', '-V']) {
      const r = await runRefract([flag]);
      expect([r.status, r.stdout.trim()]).toEqual([0, VERSION]);
    }
  });

  it('a bad flag: the error and one line pointing at --help, exit 1', async () => {
    for (const [args, error] of [
      [['start', '--port', 'abc'], "error: option '--port <n>' argument 'abc' is invalid. --port must be a non-negative integer"],
      [['start', '--foo'], "error: unknown option '--foo'"],
      [['--foo'], "error: unknown option '--foo'"],
      [['start', '--log-format', 'xml'], "error: option '--log-format <format>' argument 'xml' is invalid. Allowed choices are auto, pretty, json."],
    ] as const) {
      const r = await runRefract([...args]);
      expect(r.status, args.join(' ')).toBe(1);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toEqual([error, '(run with --help for usage)']);
    }
  });

  it('a store directory that cannot be opened is named', async () => {
    const file = path.join(tempDir(), 'a-file');
    writeFileSync(file, '');
    const r = await runRefract(['start', '--db', path.join(file, 'data'), '--no-ingest', '--no-prover', '--host', '127.0.0.1', '--port', '0']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`refract: cannot open the store at ${path.join(file, 'data')} (--db / REFRACT_DB): ENOTDIR`);
  });

  it('logs: human-readable on a terminal, JSON through a pipe or with --log-format json; the start line names the API and a curl', async () => {
    const port = await freePort();
    const args = ['start', '--no-ingest', '--no-prover', '--db', tempDir(), '--host', '0.0.0.0', '--port', String(port)];
    // `script` runs the daemon on a pseudo-terminal; Ctrl-C (byte 3 written to the terminal) stops it once
    // the start line is there (through the pipe: SIGINT). Waiting for the line, not a fixed time: a loaded
    // machine can take more than 6 s to start. `exec`: script runs the command through $SHELL -c, and a
    // shell that does not exec it (dash, where SHELL is /bin/sh or unset, as on CI) would take the Ctrl-C
    // too and die of it (exit 130) while the daemon stops cleanly.
    const env = { ...process.env, REFRACT_LOG_LEVEL: 'info' };
    const onTty = (extra: string[]) =>
      untilThenStop('script', ['-qec', `exec ${process.execPath} ${REFRACT_BIN} ${[...args, ...extra].join(' ')}`, '/dev/null'], env, 'stdout', (c) => c.stdin!.write('\x03'));
    const tty = await onTty([]);
    const out = tty.stdout.replace(/\x1b\[[0-9;]*m/g, '');
    expect(out).toMatch(new RegExp(`^\\[\\d\\d:\\d\\d:\\d\\d\\] INFO: the API is at http://127\\.0\\.0\\.1:${port}; try: curl -s http://127\\.0\\.0\\.1:${port} -H 'content-type: application/json' -d '\\{"jsonrpc":"2\\.0","id":1,"method":"getIndexerHealth"\\}'`, 'm'));
    expect(out).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: stopped/m);
    expect(out).not.toMatch(/^\{"level"/m);
    expect(tty.status).toBe(0); // Ctrl-C is a normal stop
    const json = (await onTty(['--log-format', 'json'])).stdout;
    expect(json).toMatch(/^\{"level":30,.*"msg":"the API is at http:\/\/127\.0\.0\.1:\d+; try: curl/m);
    expect(json).not.toMatch(/^\[\d\d:\d\d:\d\d\] INFO/m);
    // Not a terminal (a pipe): JSON.
    const piped = await untilThenStop(process.execPath, [REFRACT_BIN, ...args], env, 'stderr', (c) => c.kill('SIGINT'));
    expect(piped.stderr).toMatch(/^\{"level":30,.*"msg":"the API is at /m);
    expect(piped.status).toBe(0);
  }, 90_000);

  it('a signal during startup (before the API listens) is a clean stop: the daemon comes up, stops, logs "stopped", exit 0', async () => {
    const port = await freePort();
    const args = ['start', '--no-ingest', '--no-prover', '--db', tempDir(), '--host', '127.0.0.1', '--port', String(port)];
    const env = { ...process.env, REFRACT_LOG_LEVEL: 'info' };
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const r = await untilThenStop(process.execPath, [REFRACT_BIN, ...args], env, 'stderr', (c) => c.kill(signal), 'store self-check passed');
      expect(r.stderr, signal).toMatch(/"msg":"stopped"/);
      expect(r.status, signal).toBe(0);
    }
  }, 90_000);
});
