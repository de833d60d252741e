/**
 * Settings (issue #34, point 2): config.ts is the only module of src/ and workers/ that touches
 * `process.env` — read through `loadConfig` (ENV_KEYS) or `envValue` (ENV_SWITCHES) — and every
 * environment variable of either table is documented in docs/operations.md.
 *
 * `process.env` is found as code (TypeScript's parser: a `process.env` property access), so comments
 * and strings that mention it do not count.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ENV_KEYS, ENV_SWITCHES } from '../src/config/config.ts';
import { REPO_ROOT } from './helpers/photon.ts';

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Lines (1-based) of `file` where code reads `process.env`. */
function processEnvReads(file: string): number[] {
  const text = readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lines: number[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isPropertyAccessExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'process' && n.name.text === 'env') {
      lines.push(sf.getLineAndCharacterOfPosition(n.getStart()).line + 1);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return lines;
}

describe('environment variables', () => {
  it('only src/config/config.ts reads process.env (src/ and workers/)', () => {
    const reads = [...tsFiles(join(REPO_ROOT, 'src')), ...tsFiles(join(REPO_ROOT, 'workers'))]
      .flatMap((f) => processEnvReads(f).map((l) => `${relative(REPO_ROOT, f)}:${l}`))
      .filter((at) => !at.startsWith('src/config/config.ts:'));
    expect(reads).toEqual([]);
    // The scan does find reads (it is not vacuous).
    expect(processEnvReads(join(REPO_ROOT, 'src/config/config.ts')).length).toBeGreaterThan(0);
  });

  it('every variable of ENV_KEYS and ENV_SWITCHES is documented in docs/operations.md', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
    const names = [...Object.keys(ENV_KEYS), ...Object.keys(ENV_SWITCHES)];
    expect(names.length).toBeGreaterThan(40);
    expect(names.filter((n) => !doc.includes(`\`${n}\``))).toEqual([]);
  });
});
