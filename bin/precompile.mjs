// Refract's sources compiled ahead of time, so that `refract` starts without a TypeScript loader.
//
// `bin/refract.mjs` used to register tsx and import src/cli.ts: every process and every worker thread
// then resolved and loaded each module through tsx's hooks, about half of the CPU a daemon spends to
// answer /health (bench:startup: 1.7 → 0.8 CPU-s on a 2-core AMD EPYC). Here the `.ts` files of src/,
// workers/ and config/ are transformed by esbuild (tsx's own compiler; types stripped, nothing bundled)
// into `.build/` beside them, with the same layout, so every relative path a module computes from
// `import.meta.url` (config/trees.json, circuits/, the native addon, workers/, package.json) still
// lands on the same file: `.build/{package.json,circuits,native,docs,bin}` are links to the checkout's.
// Relative import specifiers and `new URL('….ts', import.meta.url)` literals end in `.js` there.
//
// `.build/manifest.json` records each source's size and mtime; a start compares them (a few ms for
// ~300 files) and transforms only what changed, so an edited source is never run stale. Any failure
// (a read-only checkout, no esbuild) returns null and the caller falls back to tsx.
import { createRequire } from 'node:module';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Checkout root (the parent of bin/). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Output directory. */
export const BUILD_DIR = path.join(ROOT, '.build');
/** Source directories compiled (everything else is linked). */
const SOURCE_DIRS = ['src', 'workers', 'config'];
/** Checkout entries a compiled module reaches through a relative path. */
const LINKED = ['package.json', 'circuits', 'native', 'docs', 'bin'];
/** Bumped when the output of a given source changes (the transform options or the rewrite below). */
const FORMAT = 1;

/** Source files under SOURCE_DIRS: relative path → [size, mtimeMs]. */
function sources() {
  const out = {};
  const walk = (rel) => {
    for (const e of readdirSync(path.join(ROOT, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.isDirectory()) walk(r);
      else if (e.isFile()) {
        const s = statSync(path.join(ROOT, r));
        out[r] = [s.size, s.mtimeMs];
      }
    }
  };
  for (const d of SOURCE_DIRS) walk(d);
  return out;
}

/** The output path of source `rel` (`.ts` → `.js`; other files keep their name). */
const outputOf = (rel) => path.join(BUILD_DIR, rel.endsWith('.ts') ? `${rel.slice(0, -3)}.js` : rel);

/** Writes `data` to `file` through a temporary file and a rename (a concurrent start never reads half a file). */
function writeAtomic(file, data) {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, data);
  renameSync(tmp, file);
}

/**
 * JavaScript of one TypeScript source: esbuild's transform (ESM, Node 20, inline source map so stack
 * traces name the `.ts` line), then every quoted relative specifier ending in `.ts` ends in `.js`.
 */
function compile(esbuild, rel) {
  const file = path.join(ROOT, rel);
  const { code } = esbuild.transformSync(readFileSync(file, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcefile: file,
    sourcemap: 'inline',
    sourcesContent: false,
  });
  return code.replace(/(["'])(\.\.?\/[^"'\n]*?)\.ts\1/g, '$1$2.js$1');
}

/**
 * Brings `.build/` up to date with the sources and returns the compiled CLI's path, or null when that
 * cannot be done here (the caller then registers tsx). Synchronous: it runs before anything else.
 * @returns absolute path of `.build/src/cli.js`, or null
 */
export function precompiled() {
  try {
    const now = sources();
    const manifestFile = path.join(BUILD_DIR, 'manifest.json');
    let old = {};
    try {
      const m = JSON.parse(readFileSync(manifestFile, 'utf8'));
      if (m.format === FORMAT) old = m.files;
    } catch {
      /* first build */
    }
    const same = (a, b) => !!a && !!b && a[0] === b[0] && a[1] === b[1];
    const changed = Object.keys(now).filter((rel) => !same(now[rel], old[rel]));
    const removed = Object.keys(old).filter((rel) => !now[rel]);
    if (changed.length || removed.length) {
      const esbuild = createRequire(import.meta.url)('esbuild');
      for (const rel of changed) writeAtomic(outputOf(rel), rel.endsWith('.ts') ? compile(esbuild, rel) : readFileSync(path.join(ROOT, rel)));
      for (const rel of removed) rmSync(outputOf(rel), { force: true });
      writeAtomic(manifestFile, JSON.stringify({ format: FORMAT, files: now }));
    }
    for (const name of LINKED) {
      const link = path.join(BUILD_DIR, name);
      let present = false;
      try {
        present = lstatSync(link).isSymbolicLink();
      } catch {
        /* missing */
      }
      if (!present && existsSync(path.join(ROOT, name))) {
        rmSync(link, { recursive: true, force: true });
        try {
          symlinkSync(path.join('..', name), link);
        } catch (e) {
          if (e.code !== 'EEXIST') throw e; // a concurrent start made it
        }
      }
    }
    return path.join(BUILD_DIR, 'src', 'cli.js');
  } catch {
    return null;
  }
}

// `node bin/precompile.mjs`: build now (the Docker image does, so its first start needs no esbuild).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const cli = precompiled();
  if (!cli) {
    console.error('refract: could not compile the sources into .build/ (refract will run them through tsx)');
    process.exit(1);
  }
}
