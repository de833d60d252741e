/**
 * Light's own prover (`package/bin/prover-linux-x64`, gnark v0.8.0) as a reference, in the release
 * that ships each key: CLI 0.27.0's (`start --run-mode local-rpc`, which loads the 18 keys of the
 * package; light-keys §6, §9.6) and CLI 0.18.0's (`start --inclusion --non-inclusion`, which loads the
 * 15 v1 keys of its package, among them the six only 0.18.0 ships: inclusion of 8, combined 2×2 …
 * 4×2). Started on 127.0.0.1 only, on free ports, stopped by its pid. For the differential test and
 * bench:prove-light.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync } from 'node:fs';
import path from 'node:path';
import type { ProverRequestJson } from '../../src/prover/engine/witness.ts';
import { freePort, processCpuSeconds } from './refractBin.ts';

/** The CLI release whose prover binary runs (the keys are that package's `bin/proving-keys`). */
export type ReferenceRelease = '0.27.0' | '0.18.0';

/** A running reference prover. */
export interface ReferenceProver {
  url: string;
  release: ReferenceRelease;
  child: ChildProcess;
  /**
   * The `/prove` body this release reads for `req`: 0.27.0 reads Refract's `toProverRequest` JSON
   * as is; 0.18.0 reads only `input-compressed-accounts` and `new-addresses` (the same entries, v1).
   */
  body(req: ProverRequestJson): string;
  /** Peak RSS of the process so far, bytes (from /proc, sampled by `rss()`). */
  rss(): number;
  stop(): Promise<void>;
  /**
   * Waits until the prover is idle: /health answers before it has loaded its keys, which it then
   * does on every core. Idle = under 50 ms of CPU in a second, read from /proc/<pid>/stat.
   * @returns ms from its start until idle (its key load, as a restart would take)
   * @throws Error when it is not idle within `timeoutMs`
   */
  idle(timeoutMs?: number): Promise<number>;
}

/**
 * Starts Light's prover from an unpacked CLI `package/` directory of `release` (with its
 * `bin/prover-linux-x64` and `bin/proving-keys`) and waits for /health.
 * @throws Error when it does not answer within `timeoutMs`
 */
export async function startReferenceProver(pkgDir: string, release: ReferenceRelease = '0.27.0', timeoutMs = 120_000): Promise<ReferenceProver> {
  const bin = path.join(pkgDir, 'bin', 'prover-linux-x64');
  chmodSync(bin, 0o755);
  const port = await freePort();
  const metrics = await freePort();
  const circuits = release === '0.27.0' ? ['--run-mode', 'local-rpc'] : ['--inclusion', '--non-inclusion'];
  const child = spawn(bin, ['start', '--keys-dir', `${path.join(pkgDir, 'bin', 'proving-keys')}/`, '--prover-address', `127.0.0.1:${port}`, '--metrics-address', `127.0.0.1:${metrics}`, ...circuits], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out = (out + d).slice(-4000)));
  child.stderr!.on('data', (d) => (out = (out + d).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Light's prover exited (${child.exitCode}): ${out}`);
    try {
      const r = await fetch(`${url}/health`);
      if (r.ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > end) {
      child.kill('SIGKILL');
      throw new Error(`Light's prover did not answer /health within ${timeoutMs} ms: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const { readFileSync } = await import('node:fs');
  let peak = 0;
  const rss = () => {
    try {
      const m = readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmHWM:\s+(\d+) kB/);
      if (m) peak = Math.max(peak, Number(m[1]) * 1024);
    } catch {
      /* exited */
    }
    return peak;
  };
  const body = (req: ProverRequestJson) =>
    JSON.stringify(release === '0.27.0' ? req : { 'input-compressed-accounts': req.inputCompressedAccounts, 'new-addresses': req.newAddresses });
  return {
    url,
    release,
    child,
    body,
    rss,
    idle: async (idleTimeoutMs = 180_000) => {
      const cpu = () => processCpuSeconds(child.pid!) * 1000; // ms
      const until = Date.now() + idleTimeoutMs;
      for (let last = cpu(); ; ) {
        await new Promise((r) => setTimeout(r, 1000));
        const now = cpu();
        if (now - last < 50) return Math.round(performance.now() - started - 1000);
        if (Date.now() > until) throw new Error(`Light's prover ${release} still busy after ${idleTimeoutMs} ms`);
        last = now;
      }
    },
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => {
        const t = setTimeout(() => (child.kill('SIGKILL'), r(undefined)), 5000);
        child.once('exit', () => (clearTimeout(t), r(undefined)));
      });
    },
  };
}
