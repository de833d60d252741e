/**
 * The ingest pipeline's layout (issue 16 item 3), held by its imports: sources → decode, parse and
 * state rules (prepareBatch.ts, the pure half: the one caller of the transaction codecs and of the
 * state rules) → persist (indexer.ts, the store half); one module wires worker threads
 * (threads/thread.ts); the prepare thread never loads the loop that commits (loop.ts) nor the store;
 * workers/ holds entry points only.
 * Imports are read with TypeScript's pre-processor, as test/architecture.layers.test.ts does.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/photon.ts';

const rel = (p: string): string => relative(REPO_ROOT, p).split(sep).join('/');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : /\.ts$/.test(n) ? [rel(p)] : [];
  });
}

/** Relative imports of a repo file, resolved to repo-relative paths (type-only ones included). */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(resolve(REPO_ROOT, file), 'utf8'), true, true);
  return info.importedFiles
    .map((f) => f.fileName)
    .filter((s) => s.startsWith('./') || s.startsWith('../'))
    .map((s) => join(dirname(file), s).split(sep).join('/'));
}

/** Imports of a repo file that are not `import type` (what loads at run time), as written. */
function valueImportSpecs(file: string): string[] {
  const text = readFileSync(resolve(REPO_ROOT, file), 'utf8');
  return [...text.matchAll(/^import\s+(?!type\s)[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1]!);
}

/** Every file `entry` loads at run time (value imports, transitively), repo-relative. */
function runtimeClosure(entry: string): Set<string> {
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    for (const s of valueImportSpecs(f)) if (s.startsWith('./') || s.startsWith('../')) todo.push(join(dirname(f), s).split(sep).join('/'));
  }
  return seen;
}

const INGEST = filesUnder(resolve(REPO_ROOT, 'src/ingest'));

describe('src/ingest is laid out as its stages', () => {
  it('has its sources, stages and threads where the README says', () => {
    for (const f of [
      'sources/poller.ts',
      'sources/files.ts',
      'startSlot.ts',
      'treeSync.ts',
      'prepareBatch.ts',
      'indexer.ts',
      'preparedBatches.ts',
      'loop.ts',
      'importFiles.ts',
      'progress.ts',
      'threads/thread.ts',
      'threads/ingestThread.ts',
      'threads/prepareThread.ts',
      'threads/importThread.ts',
    ]) {
      expect(INGEST, f).toContain(`src/ingest/${f}`);
    }
  });

  it('only prepareBatch.ts calls the transaction codecs (src/solana, src/light, src/merkle), besides the RPC client and the tree accounts', () => {
    // requestGovernor.ts throttles the RPC client's requests (the backfill's rate and 429 handling): transport, not a codec.
    const allowed = new Set(['src/solana/rpcClient.ts', 'src/solana/requestGovernor.ts', 'src/light/constants.ts', 'src/light/treeAccounts.ts']);
    const codec = /^src\/(solana|light|merkle)\//;
    const offenders = INGEST.filter((f) => f !== 'src/ingest/prepareBatch.ts').flatMap((f) => importsOf(f).filter((t) => codec.test(t) && !allowed.has(t)).map((t) => `${f} → ${t}`));
    expect(offenders).toEqual([]);
    expect(importsOf('src/ingest/prepareBatch.ts')).toContain('src/light/parser.ts');
  });

  it('the state rules are called from prepareBatch.ts only, the persist step from indexer.ts only', () => {
    const into = (target: string) => INGEST.filter((f) => importsOf(f).includes(target));
    expect(into('src/state/stateUpdate.ts')).toEqual(['src/ingest/prepareBatch.ts']);
    expect(into('src/state/persist.ts')).toEqual(['src/ingest/indexer.ts']);
  });

  it('one module wires worker threads: only threads/thread.ts starts one or loads worker_threads at run time', () => {
    const offenders = INGEST.filter((f) => f !== 'src/ingest/threads/thread.ts').filter((f) => {
      const specs = valueImportSpecs(f);
      return specs.includes('node:worker_threads') || specs.some((s) => s.endsWith('/tsxWorker.ts'));
    });
    expect(offenders).toEqual([]);
  });

  it('the prepare thread loads neither the ingest loop nor the store; the ingest thread loads the loop', () => {
    const prepare = runtimeClosure('workers/prepare.ts');
    expect(prepare.has('src/ingest/preparedBatches.ts')).toBe(true);
    expect([...prepare].filter((f) => f === 'src/ingest/loop.ts' || f === 'src/ingest/indexer.ts' || f === 'src/store/store.ts')).toEqual([]);
    expect(runtimeClosure('workers/ingest.ts').has('src/ingest/loop.ts')).toBe(true);
  });

  it('the ingest entry points under workers/ export nothing and serve the protocol of threads/thread.ts', () => {
    for (const f of ['workers/ingest.ts', 'workers/prepare.ts', 'workers/import.ts']) {
      const text = readFileSync(resolve(REPO_ROOT, f), 'utf8');
      expect(text, f).not.toMatch(/^export\s/m);
      expect(text, f).toMatch(/await serveThread</);
      expect(importsOf(f), f).toContain('src/ingest/threads/thread.ts');
    }
  });
});
