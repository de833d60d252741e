/**
 * Settings declared once (issue #34, point 2): the zod schema, the environment mapping, the flags of
 * every command and the table of docs/operations.md all come from src/config/settings.ts. The
 * documentation table must be the generated one (`npm run docs:settings`); `refract start --help`
 * (through the binary) shows each setting's flag with its default and variables; a flag given maps to
 * its config key, and a flag not given leaves the variable and the config file in charge.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { configDefaults, configSchema, ENV_KEYS, loadConfig } from '../src/config/config.ts';
import { SETTINGS, settingEntries } from '../src/config/settings.ts';
import { program, SETTING_OPTIONS, settingFlags } from '../src/commands/program.ts';
import { OPERATIONS_MD, renderSettingsTable } from '../src/commands/settingsDoc.ts';
import { runRefract } from './helpers/refractBin.ts';
import { tempDir } from './helpers/photon.ts';

/** A config file with no keys (so the repository's config/refract.json, if any, plays no part). */
function emptyConfigFile(): string {
  const f = path.join(tempDir(), 'refract.json');
  writeFileSync(f, '{}');
  return f;
}

describe('the settings table', () => {
  it('docs/operations.md holds the generated table (run `npm run docs:settings` after changing a setting or a flag)', () => {
    expect(readFileSync(OPERATIONS_MD, 'utf8')).toContain(renderSettingsTable());
  });

  it('the schema, the variables and the flags are the table\'s: every key, variable and flag once', () => {
    expect(Object.keys(configSchema.shape).sort()).toEqual(Object.keys(SETTINGS).sort());
    const vars = settingEntries().flatMap(([, s]) => s.env ?? []);
    expect(new Set(vars).size).toBe(vars.length);
    expect(Object.keys(ENV_KEYS).sort()).toEqual([...vars].sort());
    // Every setting flag is an option of `refract start`, made from the table, and no other start option shares its name.
    const start = program.commands.find((c) => c.name() === 'start')!;
    const startFlags = start.options.map((o) => o.long);
    expect(new Set(startFlags).size).toBe(startFlags.length);
    const attributes = start.options.map((o) => o.attributeName());
    expect(new Set(attributes).size).toBe(attributes.length);
    for (const [key, s] of settingEntries()) {
      if (!s.flag) continue;
      const opt = start.options.find((o) => o.long === new Option(s.flag!).long);
      expect(opt && SETTING_OPTIONS.get(opt), key).toBe(key);
    }
  });

  it('flags → config: a value as given, a switch as true, a negation as false, a flag not given leaves the rest in charge', () => {
    const start = program.commands.find((c) => c.name() === 'start')!;
    const flags = settingFlags(start, { db: '/x', ownCircuits: true, ingest: false, sequenceCheck: true, lightKeys: true, backfillRpsPerCall: undefined });
    expect(flags.db).toBe('/x');
    expect(flags.ownCircuits).toBe(true);
    expect(flags.ingest).toBe(false);
    expect(flags.sequenceCheck).toBeUndefined(); // --no-sequence-check not given: commander's true is not a choice
    expect(flags.lightKeys).toBeUndefined();
    expect(flags.backfillRpsPerCall).toBeUndefined();
    // The variable wins over the default when the flag is absent; the first of two variables wins.
    const c = loadConfig({ file: emptyConfigFile(), env: { REFRACT_SEQUENCE_CHECK: '0', REFRACT_REDIS_URL: 'redis://a', REDIS_URL: 'redis://b' }, flags });
    expect([c.sequenceCheck, c.redisUrl, c.db, c.ingest, c.port]).toEqual([false, 'redis://a', '/x', false, configDefaults().port]);
  });

  it('a numeric variable that is not a number is refused naming the variable and quoting its text', () => {
    const numeric = Object.entries(ENV_KEYS).filter(([, e]) => e.type === 'number').map(([name]) => name);
    expect(numeric.length).toBeGreaterThan(5);
    for (const name of numeric) {
      for (const v of ['abc', ' ']) {
        expect(() => loadConfig({ file: emptyConfigFile(), env: { [name]: v } }), name).toThrow(`invalid configuration: ${name}: expected a number, got ${JSON.stringify(v)}`);
      }
    }
    expect(loadConfig({ file: emptyConfigFile(), env: { REFRACT_MIN_CONTEXT_WAIT_MS: '1500' } }).minContextWaitMs).toBe(1500);
  });

  it('refract start --help shows each setting flag with its default and variable, from the table', async () => {
    const r = await runRefract(['start', '--help']);
    expect(r.status).toBe(0);
    const help = r.stdout.replace(/\s+/g, ' ');
    for (const [key, s] of settingEntries()) {
      if (!s.flag) continue;
      expect(help, key).toContain(new Option(s.flag).flags);
      for (const name of s.env ?? []) expect(help, key).toContain(`$${name}`);
    }
    expect(help).toContain('(default ./data; $REFRACT_DB)');
    expect(help).toContain('(default 8; $REFRACT_BACKFILL_CONCURRENCY)');
  });
});
