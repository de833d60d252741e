/**
 * Issue #33, point 6: the Node versions package.json promises (`engines`) are ones every installed
 * package accepts, so `npm install` on the oldest supported Node prints no EBADENGINE warning: each
 * package-lock entry's `engines.node` must admit the lowest version of ours (and of each supported
 * major line: 20, 22, 24). Also the running Node is a supported one.
 */
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { expect, test } from 'vitest';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8')) as { packages: Record<string, { version?: string; engines?: { node?: string } | string[] }> };

test('every installed package accepts the oldest Node of package.json engines (and 22, 24)', () => {
  const range = pkg.engines.node;
  const oldest = semver.minVersion(range)!.version;
  expect(oldest).toBe('20.19.0');
  expect(lock.packages['']!.engines).toEqual({ node: range }); // the lock file was written with this package.json
  const versions = [oldest, '22.12.0', '24.0.0'].filter((v) => semver.satisfies(v, range));
  const refused: string[] = [];
  for (const [p, v] of Object.entries(lock.packages)) {
    const e = Array.isArray(v.engines) ? undefined : v.engines?.node;
    if (!p || !e) continue;
    for (const nodeVersion of versions) if (!semver.satisfies(nodeVersion, e)) refused.push(`${p}@${v.version} wants node ${e} (not ${nodeVersion})`);
  }
  expect(refused).toEqual([]);
  // The commander the CLI uses supports Node 20 (15 needs 22.12).
  expect(semver.major(lock.packages['node_modules/commander']!.version!)).toBe(14);
});

test('the running Node is a supported one', () => {
  expect(semver.satisfies(process.versions.node, pkg.engines.node)).toBe(true);
});
