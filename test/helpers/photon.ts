/**
 * Access to the reference indexer's fixtures, vendored in test/fixtures/photon (see test/fixtures/README.md).
 */
import { readFileSync, readdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const PHOTON_DIR = resolve(REPO_ROOT, 'test/fixtures/photon');

/** Absolute path of a fixture case folder (transactions/<name>). */
export function txDir(name: string): string {
  return join(PHOTON_DIR, 'transactions', name);
}

/** File paths of a case whose names start with one of `prefixes` (all files when omitted). */
export function txFiles(name: string, prefixes?: string[]): string[] {
  return readdirSync(txDir(name))
    .filter((f) => !prefixes || prefixes.some((p) => f.startsWith(p)))
    .map((f) => join(txDir(name), f));
}

/**
 * The JSON body of a snapshot (`integration_tests__<module>__<name>.snap`): the text after the
 * YAML-ish header. Integers above 2^53 are kept exact as strings prefixed with `u64:`.
 */
export function snapshot(name: string, module = 'e2e_tests'): any {
  const text = readFileSync(join(PHOTON_DIR, 'snapshots', `integration_tests__${module}__${name}.snap`), 'utf8');
  const body = text.split(/^---$/m).slice(2).join('---');
  const safe = body.replace(/(:\s*|\[\s*|,\s*)(\d{16,})(?=\s*[,\]\}\n])/g, (m, pre: string, num: string) => (BigInt(num) > BigInt(Number.MAX_SAFE_INTEGER) ? `${pre}"u64:${num}"` : m));
  return JSON.parse(safe);
}

/** A fresh temporary directory for a store. */
export function tempDir(prefix = 'refract-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
