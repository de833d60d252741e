/**
 * Loading TypeScript worker threads. A worker does not inherit the tsx loader that `bin/refract.mjs`
 * (or vitest, or `node --import tsx`) registered in the main thread.
 * - Piscina (the prover pool) loads its task module with `require` first; tsx's CommonJS hook,
 *   installed in the thread by `execArgv: ['--import', <tsx loader>]` ({@link tsxExecArgv}),
 *   handles that.
 * - A plain worker whose module graph needs ESM (top-level await, e.g. src/merkle/poseidon.ts) starts
 *   on workers/tsxBoot.mjs, which registers tsx in the thread and imports the module
 *   ({@link startTsxWorker}).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * `execArgv` for a Piscina worker running `file`: the tsx loader for a `.ts` file, nothing for JavaScript.
 * @param file absolute path of the worker module.
 */
export function tsxExecArgv(file: string): string[] {
  if (!file.endsWith('.ts')) return [];
  const require = createRequire(import.meta.url);
  const loader = path.join(path.dirname(require.resolve('tsx/package.json')), 'dist', 'loader.mjs');
  return ['--import', pathToFileURL(loader).href];
}

/**
 * Starts a worker thread running the TypeScript (or JavaScript) module `file` through
 * workers/tsxBoot.mjs. `options` are Worker options (workerData, resourceLimits, …) except `argv`,
 * which carries the module's URL.
 * @param file absolute path of the worker module.
 */
export function startTsxWorker(file: string, options: Omit<WorkerOptions, 'argv' | 'eval'> = {}): Worker {
  const boot = fileURLToPath(new URL('../workers/tsxBoot.mjs', import.meta.url));
  return new Worker(boot, { ...options, argv: [pathToFileURL(file).href] });
}
