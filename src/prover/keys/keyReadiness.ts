/**
 * Which circuits' proving keys are usable in a keys directory, and building the missing ones in the
 * background (for `refract start`, which serves reads while keys are missing or being built).
 *
 * A circuit is ready when the manifest lists it and its four files exist with the recorded sizes
 * (layout.ts `checkKeys`, shallow). `refresh()` re-reads that; while a background setup runs, it is
 * called every `pollMs` (setup rewrites the manifest after each circuit, so circuits become ready
 * one by one).
 *
 * Background setup is a CHILD PROCESS (`refract setup --keys DIR [--ptau FILE]`) at the lowest CPU
 * priority (nice 19), so compiling circuits and creating zkeys (minutes of CPU, large allocations)
 * never blocks the API's event loop and yields the cores to serving.
 * Its log lines are forwarded; its outcome shows in `health()` (for GET /health).
 */
import { childEnv, type Env, envValue } from '../../config/config.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setPriority } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CIRCUIT_IDS } from './circuits.ts';
import { ProverError } from '../errors.ts';
import { checkKeys, readManifest } from './layout.ts';

/** The `refract` CLI entry (bin/refract.mjs), for spawning `refract setup`. */
export const REFRACT_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/refract.mjs');

/**
 * The development ptau to use when none is configured: `$REFRACT_DEV_PTAU` if that file exists, else
 * `<repo>/../shared/dev-ptau/pot16_dev.ptau` if it exists, else undefined (setup then generates one).
 * Every such file is INSECURE (one known contributor).
 */
export function defaultDevPtau(env?: Env): string | undefined {
  const fromEnv = envValue('REFRACT_DEV_PTAU', env);
  if (fromEnv && existsSync(fromEnv)) return path.resolve(fromEnv);
  const shared = path.resolve(path.dirname(REFRACT_BIN), '../../shared/dev-ptau/pot16_dev.ptau');
  return existsSync(shared) ? shared : undefined;
}

/** State of the background setup, as /health shows it. */
export interface BackgroundSetupState {
  state: 'running' | 'done' | 'failed' | 'stopped';
  pid?: number;
  startedAt: string;
  finishedAt?: string;
  exitCode?: number | null;
  /** ptau given to setup; without one, setup downloads the public ceremony file or, failing that, generates an INSECURE development one. */
  ptau: string;
  /** Last lines the setup printed (errors, progress). */
  lastLines: string[];
}

/** Options of `KeyReadiness`. */
export interface KeyReadinessOptions {
  /** Circuits this process serves (default `DEFAULT_CIRCUIT_IDS`: every v1 circuit and the default v2 ones). */
  circuits?: readonly string[];
  /** Manifest poll interval while a background setup runs, ms (default 2000). */
  pollMs?: number;
  /** Called when the set of ready circuits changes (e.g. to warm the pool, set gauges). */
  onChange?: (ready: ReadonlySet<string>) => void;
  /** Receives the background setup's output lines and state changes. */
  log?: (level: 'info' | 'warn' | 'error', msg: string) => void;
}

/** Per-circuit readiness of a keys directory; see the module comment. */
export class KeyReadiness {
  readonly keysDir: string;
  readonly circuits: readonly string[];
  private ready = new Set<string>();
  private setup: BackgroundSetupState | undefined;
  private child: ChildProcess | undefined;
  /** Set by close(): the setup child's exit is then a stop, not a failure. */
  private closing = false;
  /** The background setup's exit, reported (its log line written). */
  private exitReported: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private watchTimer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;

  /** @param keysDir keys directory (resolved); nothing is read until `refresh()` */
  constructor(keysDir: string, private readonly opts: KeyReadinessOptions = {}) {
    this.keysDir = path.resolve(keysDir);
    this.circuits = opts.circuits ?? DEFAULT_CIRCUIT_IDS;
  }

  /** Re-reads the manifest and the key files; updates the ready set. Never throws. */
  refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      const next = new Set<string>();
      let manifestIds: string[] = [];
      try {
        manifestIds = Object.keys((await readManifest(this.keysDir))?.circuits ?? {});
      } catch {
        manifestIds = [];
      }
      for (const id of this.circuits) {
        if (!manifestIds.includes(id)) continue;
        try {
          await checkKeys(this.keysDir, [id]);
          next.add(id);
        } catch {
          /* not ready */
        }
      }
      const changed = next.size !== this.ready.size || [...next].some((id) => !this.ready.has(id));
      this.ready = next;
      if (changed) this.opts.onChange?.(next);
    })().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** Like `refresh`, but after any check already running (which may have read an older manifest). */
  refreshAfterPending(): Promise<void> {
    return (this.refreshing ?? Promise.resolve()).then(() => this.refresh());
  }

  /**
   * While some circuit is not ready, re-checks every `ms` (default 30 s), so keys made by a
   * `refract setup` run by hand (or copied in) are used without a restart; stops once all are ready.
   */
  watchUntilComplete(ms = 30_000): void {
    if (this.watchTimer || this.complete) return;
    this.watchTimer = setInterval(() => {
      void this.refresh().then(() => {
        if (this.complete) {
          clearInterval(this.watchTimer);
          this.watchTimer = undefined;
        }
      });
    }, ms);
    this.watchTimer.unref();
  }

  /** True when `circuitId`'s keys are usable. */
  isReady(circuitId: string): boolean {
    return this.ready.has(circuitId);
  }

  /** Ready circuit ids, in registry order. */
  readyIds(): string[] {
    return this.circuits.filter((id) => this.ready.has(id));
  }

  /** True when every served circuit is ready. */
  get complete(): boolean {
    return this.circuits.every((id) => this.ready.has(id));
  }

  /**
   * Throws unless `circuitId` is ready.
   * @throws ProverError `not_ready` saying whether the circuit is not served, its keys are being built, failed to build, or are missing (and the fix)
   */
  check(circuitId: string): void {
    if (this.ready.has(circuitId)) return;
    const n = `${this.ready.size} of ${this.circuits.length} circuits ready`;
    let why: string;
    if (!this.circuits.includes(circuitId)) why = `this server does not serve ${circuitId} (${n}); add it to --circuits (or config \`circuits\`) and restart`;
    else if (this.setup?.state === 'running') why = `they are being built in the background by \`refract setup\` (pid ${this.setup.pid}; ${n}); retry later`;
    else if (this.setup?.state === 'failed') why = `the background \`refract setup\` failed (exit ${this.setup.exitCode}; ${n}): ${this.setup.lastLines.at(-1) ?? ''}`;
    else why = `they are missing from ${this.keysDir} (${n}); run \`refract setup --keys ${this.keysDir}\``;
    throw new ProverError('not_ready', `proving keys for ${circuitId} are not ready: ${why}`, { circuitId, ready: this.readyIds() });
  }

  /** What GET /health shows about the prover's keys. */
  health(): { keysDir: string; ready: number; total: number; circuits: Record<string, boolean>; setup?: BackgroundSetupState } {
    const circuits: Record<string, boolean> = {};
    for (const id of this.circuits) circuits[id] = this.ready.has(id);
    return { keysDir: this.keysDir, ready: this.ready.size, total: this.circuits.length, circuits, ...(this.setup ? { setup: { ...this.setup, lastLines: [...this.setup.lastLines] } } : {}) };
  }

  /**
   * Starts `refract setup --keys <keysDir>` for the served circuits in a child process (unless one
   * is already running), and polls the manifest until it exits.
   * @param opts.ptau ptau file (`--ptau`); omitted → `defaultDevPtau()`, else setup downloads the
   *   public ceremony file (`$REFRACT_PTAU_URL`) or, offline, generates an INSECURE development one
   * @param opts.ptauInsecure the ptau is a development file (announced as INSECURE)
   * @param opts.args extra CLI arguments (tests: `--dev-ptau-power 13`)
   * @returns the state object (also in `health()`)
   */
  startBackgroundSetup(opts: { ptau?: string; ptauInsecure?: boolean; args?: string[]; env?: NodeJS.ProcessEnv } = {}): BackgroundSetupState {
    if (this.setup?.state === 'running') return this.setup;
    const ptau = opts.ptau ?? defaultDevPtau();
    const insecure = opts.ptau ? !!opts.ptauInsecure : ptau !== undefined;
    const args = [REFRACT_BIN, 'setup', '--keys', this.keysDir, '--circuits', this.circuits.join(','), '--no-progress', '--exit-on-stdin-close'];
    if (ptau) args.push('--ptau', ptau);
    if (insecure) args.push('--insecure-ptau');
    args.push(...(opts.args ?? []));
    const env = childEnv({}, opts.env);
    // stdin is a pipe we never write: when this process dies (even by SIGKILL) the child sees EOF
    // and exits (`--exit-on-stdin-close`), so no setup outlives its daemon.
    // Its own process group (detached): a Ctrl-C in the daemon's terminal reaches the daemon only, which
    // then stops setup itself (close(): SIGTERM) — not both at once, racing.
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], env, detached: true });
    this.child = child;
    // Lowest CPU priority (inherited by the circom compilers it spawns): the API, the indexer and
    // proofs of circuits already ready keep the cores; setup uses what is left.
    try {
      if (child.pid) setPriority(child.pid, 19);
    } catch {
      /* not permitted: run at normal priority */
    }
    const state: BackgroundSetupState = { state: 'running', pid: child.pid, startedAt: new Date().toISOString(), ptau: ptau ?? 'public ceremony (Hermez, downloaded and verified), else a generated INSECURE development ptau', lastLines: [] };
    this.setup = state;
    const log = this.opts.log ?? (() => {});
    log('warn', `proving keys missing in ${this.keysDir}: building them in the background (refract setup, pid ${child.pid}, ptau ${state.ptau}); validity proofs answer "Prover not available" until each circuit is ready`);
    const onLine = (line: string) => {
      const t = line.trim();
      if (!t) return;
      state.lastLines.push(t);
      if (state.lastLines.length > 20) state.lastLines.shift();
      log(/error|failed/i.test(t) ? 'error' : 'info', `[setup] ${t}`);
    };
    for (const s of [child.stdout!, child.stderr!]) {
      let buf = '';
      s.setEncoding('utf8');
      s.on('data', (d: string) => {
        buf += d;
        const lines = buf.split(/\r?\n|\r/);
        buf = lines.pop()!;
        lines.forEach(onLine);
      });
      s.on('end', () => onLine(buf));
    }
    this.timer = setInterval(() => void this.refresh(), this.opts.pollMs ?? 2000);
    this.timer.unref();
    child.on('error', (e) => onLine(`cannot start refract setup: ${e.message}`));
    child.on('exit', (code, signal) => {
      clearInterval(this.timer);
      this.child = undefined;
      state.exitCode = code;
      state.finishedAt = new Date().toISOString();
      // Stopped by close() (the daemon stopping) or by a signal (SIGINT/SIGTERM: exit 130/143, or the
      // signal itself) is not a failure: setup resumes at the next start.
      const bySignal = signal === 'SIGINT' || signal === 'SIGTERM' || code === 130 || code === 143;
      const classify = () => (code === 0 ? 'done' : this.closing || bySignal ? 'stopped' : 'failed');
      state.state = classify();
      this.exitReported = this.refreshAfterPending().then(() => {
        // an exit just before the daemon began to stop is reported (and kept in /health) as a stop too
        state.state = classify();
        const how = `exit ${code ?? signal}`;
        if (code === 0) log('info', `background setup finished: ${this.ready.size} of ${this.circuits.length} circuits ready`);
        else if (state.state === 'stopped') log('info', `background setup stopped${this.closing ? ` with the daemon (${how})` : ` (${signal ?? (code === 130 ? 'SIGINT' : 'SIGTERM')})`}; ${this.ready.size} of ${this.circuits.length} circuits ready. Finished keys, compiled circuits and finished powers-of-tau stages are kept: the next start resumes from them`);
        else log('error', `background setup failed (exit ${code}${signal ? `, ${signal}` : ''}); ${this.ready.size} of ${this.circuits.length} circuits ready. Run \`refract setup --keys ${this.keysDir}\` to finish (it resumes)`);
      });
    });
    return state;
  }

  /** Stops polling and the background setup (SIGTERM; setup resumes where it stopped next time). */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.timer);
    clearInterval(this.watchTimer);
    this.watchTimer = undefined;
    const child = this.child;
    if (child) {
      await new Promise<void>((resolve) => {
        // a setup busy in a long computation may not take SIGTERM in time: SIGKILL after 5 s (its
        // finished stages are files already), and resolve on the exit either way
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        child.kill('SIGTERM');
      });
    }
    // The exit's log line ("background setup stopped with the daemon …") before the daemon's "stopped",
    // also when the child exited just before close() and its line is still pending (its refresh reads
    // the keys directory): returning at once then let the daemon log "stopped" first (seen in CI).
    await this.exitReported?.catch(() => undefined);
  }
}
