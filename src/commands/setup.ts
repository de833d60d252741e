/**
 * `refract setup [--keys DIR] [--ptau FILE] [--circuits ids] [--dev-ptau-power N] [--force]`:
 * compile the circuits and create their Groth16 keys (src/prover/keys/keySetup.ts: cached, resumable).
 *
 * ptau: `--ptau FILE` (a prepared phase-2 file, e.g. from a public ceremony). Without it, the
 * development ptau `$REFRACT_DEV_PTAU` or `../shared/dev-ptau/pot16_dev.ptau` is used when present;
 * else the public Hermez file `powersOfTau28_hez_final_16.ptau` is downloaded from
 * `$REFRACT_PTAU_URL` (default https://storage.googleapis.com/zkevm/ptau/; `off` disables) into
 * `<keys>/ptau/` and checked against its published BLAKE2b-512 hash (keySetup.ts
 * `fetchCeremonyPtau`); only when that download fails (offline: within 5 s) is an INSECURE
 * development ptau generated (2^N, `--dev-ptau-power`, ~20 min for 2^16 on 2 cores; giving
 * `--dev-ptau-power` skips the download). Development files (one known contributor) are announced
 * as INSECURE.
 *
 * Then the native prover's fixed-base table files of the circuits within the table budget that have
 * none (`--table-mb`, `--table-files` as for `refract prover`), so that the first start reads them.
 *
 * Output: a progress bar on a TTY (stderr), one log line per step otherwise; a JSON summary on stdout.
 */
import path from 'node:path';
import { DEFAULT_CIRCUIT_IDS } from '../prover/keys/circuits.ts';
import { setupProgressBar } from '../prover/keys/setupProgressBar.ts';
import { defaultDevPtau } from '../prover/keys/keyReadiness.ts';
import { prepareTableFiles, proverTableFiles, proverTableMb } from '../prover/engine/groth16Native.ts';
import { setupCircuits, type SetupProgress } from '../prover/keys/keySetup.ts';
import { ProverError } from '../prover/errors.ts';
import { LIGHT_KEYS } from '../prover/keys/lightKeys.ts';
import { lightKeySource, lightKeysDir, setupLightKeys } from '../prover/keys/lightKeySetup.ts';

/** Options of the setup command. */
export interface SetupCommandOptions {
  keys: string;
  ptau?: string;
  /** Mark `ptau` as an INSECURE development file. */
  insecurePtau?: boolean;
  circuits?: string[];
  devPtauPower?: number;
  force?: boolean;
  /** Progress bar (TTY only); false → plain log lines. */
  progress?: boolean;
  /** Native prover: table budget per key, MiB (default $REFRACT_PROVER_TABLE_MB, else 96; 0 = no table files). */
  tableMb?: number;
  /** Native prover: the table files' directory, or `off` (default $REFRACT_PROVER_TABLE_FILES, else the keys directory). */
  tableFiles?: string;
}

/**
 * Runs the setup, then writes the native prover's table files of the circuits that have none (so the
 * first start reads them instead of building: `prepareTableFiles`), and prints a JSON summary
 * (`keysDir`, built, cached, ptau, timings, tables) on stdout.
 * @throws ProverError `unsupported_shape` (unknown circuit id), `setup_failed` (compile error, unusable ptau),
 *   `invalid_input` (table budget or directory), `keys_missing` (a zkey that cannot be parsed)
 */
export async function runSetupCommand(opts: SetupCommandOptions): Promise<void> {
  const keysDir = path.resolve(opts.keys);
  let ptau = opts.ptau;
  let insecure = !!opts.insecurePtau;
  if (!ptau && opts.devPtauPower === undefined) {
    ptau = defaultDevPtau();
    insecure = ptau !== undefined;
  }
  const circuits = opts.circuits?.length ? opts.circuits : [...DEFAULT_CIRCUIT_IDS];
  // the table options are resolved (and checked) before the long part, not after it
  const tableMb = proverTableMb(opts.tableMb);
  const tableFiles = proverTableFiles(keysDir, opts.tableFiles);
  const tty = opts.progress !== false && process.stderr.isTTY;
  const bar = tty ? setupProgressBar() : undefined;
  const t0 = performance.now();
  const line = (p: SetupProgress) => {
    const pct = `${Math.round(p.fraction * 100)}%`.padStart(4);
    const what = p.circuitId ?? 'ptau';
    if (p.stage === 'compile') return; // one line per circuit at 'compiled' is enough
    process.stderr.write(`[refract setup] ${pct} ${what} ${p.stage}${p.message ? `: ${p.message}` : ''}\n`);
  };
  try {
    const res = await setupCircuits({
      keysDir,
      ptau,
      ptauInsecure: insecure,
      devPtauPower: opts.devPtauPower,
      circuits,
      force: opts.force,
      onProgress: bar ? bar.onProgress : line,
      log: (level, msg) => {
        if (level === 'warn' || level === 'error') {
          bar?.stop();
          process.stderr.write(`[refract setup] ${level === 'warn' ? 'WARNING' : 'ERROR'}: ${msg}\n`);
        }
      },
    });
    bar?.stop();
    const tables = await prepareTableFiles(keysDir, [...res.built, ...res.cached], { tableMb, tableFiles, replace: res.built });
    for (const [id, t] of Object.entries(tables)) {
      if (t.note) process.stderr.write(`[refract setup] WARNING: ${id}: table file not written (the first start builds the tables): ${t.note}\n`);
      else if (t.source !== 'none') process.stderr.write(`[refract setup] ${id}: tables ${t.mib} MiB built in ${(t.ms / 1000).toFixed(1)} s, written to ${t.file}\n`);
    }
    const summary = {
      keysDir,
      built: res.built,
      cached: res.cached,
      ptau: res.manifest.ptau,
      seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
      timingsMs: res.timingsMs,
      tables,
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    if (res.manifest.ptau?.insecureDev) {
      process.stderr.write(`[refract setup] WARNING: these keys come from an INSECURE development ptau (${res.manifest.ptau.file}); anyone holding it can forge proofs. Use --ptau <ceremony file> for real keys.\n`);
    }
  } finally {
    bar?.stop();
  }
}

/** Options of `refract setup --light-keys [DIR]`. */
export interface LightSetupCommandOptions {
  keys: string;
  /** Directory of Light `.key` files; omitted → the CLI packages from the npm registry. */
  source?: string;
  force?: boolean;
  progress?: boolean;
}

/**
 * `refract setup --light-keys [DIR]` (src/prover/keys/lightKeySetup.ts): Light's keys converted into
 * `<keys>/light/`, one progress line per key on stderr, a JSON summary on stdout. Keys DIR lacks are
 * listed as missing (their circuits answer "not ready"); none found at all is an error.
 * @throws ProverError `keys_missing` (a file whose sha256 is not the pinned one, naming it and its
 *   circuit), `setup_failed` (npm / integrity), `internal` (addon not built)
 */
export async function runLightSetupCommand(opts: LightSetupCommandOptions): Promise<void> {
  const keysDir = path.resolve(opts.keys);
  const t0 = performance.now();
  const items = await setupLightKeys({
    keysDir,
    sourceDir: opts.source,
    force: opts.force,
    log: (m) => process.stderr.write(`[refract setup] ${m}\n`),
    onProgress: (p) => {
      if (p.status === 'converting' || p.status === 'checking') return;
      process.stderr.write(`[refract setup] ${String(Math.round((p.done / p.total) * 100)).padStart(3)}% ${p.name} ${p.status}\n`);
    },
  });
  const summary = {
    keysDir: lightKeysDir(keysDir),
    converted: items.filter((i) => i.status === 'converted').map((i) => i.name),
    cached: items.filter((i) => i.status === 'cached').map((i) => i.name),
    missing: items.filter((i) => i.status === 'missing').map((i) => i.name),
    seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
  };
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  if (summary.converted.length + summary.cached.length === 0) {
    throw new ProverError('keys_missing', `no Light key found${opts.source ? ` in ${path.resolve(opts.source)}` : ''} (expected e.g. ${LIGHT_KEYS[0]!.file}; ${lightKeySource(LIGHT_KEYS[0]!)})`);
  }
}
