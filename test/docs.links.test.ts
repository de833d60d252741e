/**
 * The documentation's references stay true: for README.md and every docs/*.md,
 * (a) every relative markdown link points at a file that exists, and a `#anchor` into a markdown file
 *     (or into the same file) at a heading that exists (GitHub's slug rules, duplicates numbered);
 * (b) every `npm run <script>` names a script of package.json;
 * (c) every `refract <command>` / `./bin/refract.mjs <command>` names a real command:
 *     `node bin/refract.mjs <command> --help` exits 0 and prints that command's own usage (commander
 *     answers an unknown command's `--help` with the program's help and exit code 0, so the exit code
 *     alone would pass anything).
 * Failures name the file and the broken link, script or command.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const DOC_FILES = [
  'README.md',
  ...(existsSync(path.join(ROOT, 'docs')) ? readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`) : []),
];
const read = (rel: string) => readFileSync(path.join(ROOT, rel), 'utf8');

/** The text with fenced code blocks blanked (lines kept, so line numbers stay right). */
function withoutFences(text: string): string {
  let fence: string | null = null;
  return text
    .split('\n')
    .map((line) => {
      const m = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
      if (fence === null && m) {
        fence = m[1]![0]!.repeat(m[1]!.length);
        return '';
      }
      if (fence !== null) {
        if (line.trim().startsWith(fence) && /^\s*(`{3,}|~{3,})\s*$/.test(line)) fence = null;
        return '';
      }
      return line;
    })
    .join('\n');
}

/** `text` with inline code spans blanked (so a `[x](y)` inside backticks is not a link). */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)([\s\S]*?)\1/g, (s) => ' '.repeat(s.length));
}

/** GitHub's heading slug: inline markup dropped, lower case, punctuation removed, spaces → '-'. */
function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images → their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/`/g, '')
    .replace(/\*\*|__|\*|~~/g, ''); // emphasis markers (a single `_` stays: GitHub keeps it)
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every heading anchor of a markdown text, duplicates numbered as GitHub does (`x`, `x-1`, …). */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of withoutFences(text).split('\n')) {
    const m = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = githubSlug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

interface Ref {
  file: string;
  line: number;
  target: string;
}

/** Inline links and images `[text](target "title")` and reference definitions `[id]: target`, outside code. */
function linksOf(file: string, text: string): Ref[] {
  const refs: Ref[] = [];
  withoutFences(text)
    .split('\n')
    .forEach((raw, i) => {
      const line = withoutCodeSpans(raw);
      for (const m of line.matchAll(/\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+"[^"]*")?\s*\)/g)) {
        refs.push({ file, line: i + 1, target: m[1]!.replace(/^<|>$/g, '') });
      }
      const def = /^\s{0,3}\[[^\]]+\]:\s*(\S+)/.exec(line);
      if (def) refs.push({ file, line: i + 1, target: def[1]! });
    });
  return refs;
}

const isExternal = (t: string) => /^[a-z][a-z0-9+.-]*:/i.test(t) || t.startsWith('//');

function brokenLinks(): string[] {
  const problems: string[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchorsFor = (abs: string) => {
    if (!anchorCache.has(abs)) anchorCache.set(abs, anchorsOf(readFileSync(abs, 'utf8')));
    return anchorCache.get(abs)!;
  };
  for (const file of DOC_FILES) {
    for (const ref of linksOf(file, read(file))) {
      if (isExternal(ref.target)) continue;
      const hash = ref.target.indexOf('#');
      const pathPart = decodeURI(hash === -1 ? ref.target : ref.target.slice(0, hash));
      const anchor = hash === -1 ? undefined : decodeURIComponent(ref.target.slice(hash + 1));
      // '' = this file; '/x' = from the repository root (as GitHub resolves it); else from this file's folder.
      const abs = pathPart === '' ? path.join(ROOT, file) : pathPart.startsWith('/') ? path.join(ROOT, pathPart) : path.resolve(ROOT, path.dirname(file), pathPart);
      const where = `${file}:${ref.line}: link (${ref.target})`;
      if (!abs.startsWith(ROOT + path.sep) && abs !== ROOT) {
        problems.push(`${where} leaves the repository`);
        continue;
      }
      if (!existsSync(abs)) {
        problems.push(`${where}: ${path.relative(ROOT, abs)} does not exist`);
        continue;
      }
      if (anchor !== undefined && anchor !== '' && abs.endsWith('.md') && !anchorsFor(abs).has(anchor)) {
        problems.push(`${where}: no heading with anchor #${anchor} in ${path.relative(ROOT, abs)}`);
      }
    }
  }
  return problems;
}

/** `npm run <script>` mentions, anywhere in the text (code included). */
function npmScriptsOf(file: string, text: string): Ref[] {
  const refs: Ref[] = [];
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/\bnpm run(?:-script)?\s+([A-Za-z0-9:_.-]*[A-Za-z0-9_])/g)) refs.push({ file, line: i + 1, target: m[1]! });
  });
  return refs;
}

/** `refract <command>` and `./bin/refract.mjs <command>` mentions (lower-case `refract`, so prose "Refract" is not one). */
function commandsOf(file: string, text: string): Ref[] {
  const refs: Ref[] = [];
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/(?:^|[\s`'"(;|&])(?:(?:\.\/)?bin\/refract\.mjs|refract)[ \t]+([a-z][a-z0-9-]*)/g)) refs.push({ file, line: i + 1, target: m[1]! });
  });
  return refs;
}

const run = promisify(execFile);

describe('documentation references (README.md, docs/*.md)', () => {
  it('finds the documents', () => {
    expect(DOC_FILES).toContain('README.md');
    expect(DOC_FILES.length).toBeGreaterThan(1);
  });

  it('computes GitHub heading slugs', () => {
    expect(githubSlug('Following the chain: backfill, gRPC, snapshots')).toBe('following-the-chain-backfill-grpc-snapshots');
    expect(githubSlug('Metrics (`GET /metrics`)')).toBe('metrics-get-metrics');
    expect(githubSlug('bench:prove')).toBe('benchprove');
    expect(githubSlug('Read-your-writes: minContextSlot')).toBe('read-your-writes-mincontextslot');
    expect(githubSlug('Scale-out: Redis and **prover** nodes')).toBe('scale-out-redis-and-prover-nodes');
    expect(anchorsOf('# A\n## A\n```\n# not a heading\n```\n### A')).toEqual(new Set(['a', 'a-1', 'a-2']));
  });

  it('every relative link points at an existing file and heading', () => {
    const problems = brokenLinks();
    expect(problems, `broken links:\n${problems.join('\n')}`).toEqual([]);
  });

  it('every `npm run <script>` names a script of package.json', () => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts?: Record<string, string> }).scripts ?? {});
    const problems = DOC_FILES.flatMap((f) => npmScriptsOf(f, read(f)))
      .filter((r) => !scripts.includes(r.target))
      .map((r) => `${r.file}:${r.line}: npm run ${r.target}: no such script in package.json`);
    expect(problems, `unknown npm scripts:\n${problems.join('\n')}`).toEqual([]);
  });

  it('every `refract <command>` is a real command (`--help` exits 0 with its usage)', async () => {
    const refs = DOC_FILES.flatMap((f) => commandsOf(f, read(f)));
    expect(refs.length).toBeGreaterThan(0);
    const commands = [...new Set(refs.map((r) => r.target))].sort();
    const results = await Promise.all(
      commands.map(async (command) => {
        try {
          const { stdout } = await run(process.execPath, [path.join(ROOT, 'bin/refract.mjs'), command, '--help'], { cwd: ROOT, timeout: 25_000 });
          return { command, ok: stdout.startsWith(`Usage: refract ${command} `), why: `its --help printed no "Usage: refract ${command}" (not a command)` };
        } catch (e) {
          const err = e as { code?: unknown; stderr?: string; message: string };
          return { command, ok: false, why: `--help failed (exit ${String(err.code)}): ${(err.stderr || err.message).trim().split('\n')[0]}` };
        }
      }),
    );
    const bad = new Map(results.filter((r) => !r.ok).map((r) => [r.command, r.why]));
    const problems = refs.filter((r) => bad.has(r.target)).map((r) => `${r.file}:${r.line}: refract ${r.target}: ${bad.get(r.target)}`);
    expect(problems, `unknown refract commands:\n${problems.join('\n')}`).toEqual([]);
  }, 30_000);
});
