/**
 * Architecture (issue 16): imports in src/ and workers/ only run DOWN the layers below, and the folders
 * of one layer form no cycle. The layer table here is the single definition of the order; the README's
 * architecture diagram is drawn from it.
 *
 * Imports are read with TypeScript's own pre-processor (`ts.preProcessFile`): static `import … from`,
 * `import type`, `export … from`, `export * from` and dynamic `import('…')` with a literal; comments and
 * strings are not imports. Only relative specifiers are checked (packages and `node:` built-ins are
 * outside the stack).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/photon.ts';

/**
 * The layers, top to bottom. A unit is a folder under src/ or a file at src/'s top level. A unit may
 * import any unit of its own layer or of a layer below; units of one layer must not form a cycle.
 */
const LAYERS: readonly { name: string; units: readonly string[] }[] = [
  // The process entry (commander) and its commands: they wire everything below.
  { name: 'cli', units: ['cli.ts', 'commands'] },
  // HTTP transport (rpc/http: fastify, hot lane, auth, rate limits, POST /prove) over the JSON-RPC
  // protocol (envelope, dispatch, batches, errors, methods, the validity-proof request adapter): SUBLAYERS.
  { name: 'rpc', units: ['rpc'] },
  // The proving engine (witness, pool, queues, keys; no HTTP, no JSON-RPC) beside the read queries.
  { name: 'prover/query', units: ['prover', 'query'] },
  { name: 'ingest', units: ['ingest'] },
  { name: 'state', units: ['state'] },
  { name: 'store', units: ['store'] },
  // Codecs: light → solana and light → merkle (never back: no cycle within the layer).
  { name: 'codecs', units: ['light', 'solana', 'merkle'] },
  // Bottom: configuration, shared record types and helpers that import nothing from src/ —
  // log.ts (pino setup), metrics.ts (the prom-client registry every layer counts into), native.ts
  // (loads the native addon the codecs and the prover use), displayUrl.ts (redacts URLs for logs),
  // tsxWorker.ts (execArgv for worker threads under tsx, used by ingest and prover), listFiles.ts (the
  // directory listing of the ingest file source and the simulator's replay), mainThreadImport.ts
  // (imports ffjavascript-based packages in worker threads: snarkjs in the prover, circomlibjs in codecs),
  // typedList.ts (a growable typed array: the simulator's indexes, a Light key's R1CS sections).
  { name: 'base', units: ['config', 'types.ts', 'log.ts', 'logSink.ts', 'metrics.ts', 'native.ts', 'displayUrl.ts', 'tsxWorker.ts', 'listFiles.ts', 'mainThreadImport.ts', 'typedList.ts'] },
];

/**
 * Units beside the stack: `sim/` (the chain simulator, a tool) may import only the listed layers, and
 * only the listed layers may import it.
 */
const BESIDE: Readonly<Record<string, { mayImport: readonly string[]; importedBy: readonly string[] }>> = {
  sim: { mayImport: ['codecs', 'base'], importedBy: ['cli'] },
};

/**
 * Layers inside one unit, top to bottom, as path prefixes (the first that matches a file wins): a
 * file may import its own sub-layer or one below, never one above.
 */
const SUBLAYERS: Readonly<Record<string, readonly { name: string; prefix: string }[]>> = {
  rpc: [
    { name: 'rpc/http (transport)', prefix: 'src/rpc/http/' },
    { name: 'rpc (JSON-RPC protocol)', prefix: 'src/rpc/' },
  ],
};

/** The sub-layer index of `path` in its unit's SUBLAYERS, or null when the unit has none. */
function sublayerOf(unit: string, path: string): number | null {
  const subs = SUBLAYERS[unit];
  if (!subs) return null;
  const i = subs.findIndex((s) => path.startsWith(s.prefix));
  return i < 0 ? null : i;
}

/**
 * Known upward imports left for a follow-up, as `importer file → imported file` (repo-relative).
 * Each entry must still occur (a stale entry fails the test), so this list only shrinks.
 */
const ALLOWED: Readonly<Record<string, string>> = {};

/** One relative import of a file, resolved to a repo-relative path. */
interface ImportEdge {
  /** Importing file, repo-relative with `/`. */
  from: string;
  /** The specifier as written. */
  spec: string;
  /** The imported file, repo-relative with `/`. */
  to: string;
}

/** Relative imports of one source text (`file` repo-relative), via `ts.preProcessFile`. */
function importsOf(file: string, text: string): ImportEdge[] {
  const info = ts.preProcessFile(text, true, true);
  return info.importedFiles
    .map((f) => f.fileName)
    .filter((spec) => spec.startsWith('./') || spec.startsWith('../'))
    .map((spec) => ({ from: file, spec, to: join(dirname(file), spec).split(sep).join('/') }));
}

const layerIndex = new Map<string, number>();
LAYERS.forEach((l, i) => l.units.forEach((u) => layerIndex.set(u, i)));

/** The unit of a repo-relative path: 'workers' for workers/, the first segment under src/, else null. */
function unitOf(path: string): string | null {
  const parts = path.split('/');
  if (parts[0] === 'workers') return 'workers';
  if (parts[0] !== 'src' || parts.length < 2) return null;
  return parts[1]!;
}

function layerName(unit: string): string {
  const i = layerIndex.get(unit);
  if (i !== undefined) return LAYERS[i]!.name;
  return unit in BESIDE ? `${unit} (beside the stack)` : unit;
}

/**
 * The rule violations among `edges`: upward imports, src/ → workers/, sim/ rules, units not in the
 * table. Each is one line naming file, import and both layers. Same-layer cycles are `cyclesOf`.
 */
function violationsOf(edges: readonly ImportEdge[]): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const a = unitOf(e.from);
    const b = unitOf(e.to);
    if (a === null || a === 'workers') continue; // thread entry points may import anything in src/
    const where = `${e.from} imports '${e.spec}' (${e.to})`;
    if (b === 'workers') {
      out.push(`${where}: ${layerName(a)} → workers/ (src/ never imports a thread entry point; put the message types in src/ beside the code that posts them)`);
      continue;
    }
    if (b === null) {
      out.push(`${where}: ${layerName(a)} → outside src/ and workers/`);
      continue;
    }
    for (const u of [a, b]) if (!layerIndex.has(u) && !(u in BESIDE)) out.push(`${where}: unit '${u}' is in no layer (add it to LAYERS in test/architecture.layers.test.ts)`);
    if (a === b) {
      const sa = sublayerOf(a, e.from);
      const sb = sublayerOf(b, e.to);
      if (sa !== null && sb !== null && sb < sa) out.push(`${where}: ${SUBLAYERS[a]![sa]!.name} → ${SUBLAYERS[a]![sb]!.name} runs UP a layer`);
      continue;
    }
    if (a in BESIDE) {
      const ok = BESIDE[a]!.mayImport;
      const li = layerIndex.get(b);
      if (li === undefined || !ok.includes(LAYERS[li]!.name)) out.push(`${where}: ${layerName(a)} → ${layerName(b)} (sim may import only ${ok.join(', ')})`);
      continue;
    }
    if (b in BESIDE) {
      const ok = BESIDE[b]!.importedBy;
      if (!ok.includes(layerName(a))) out.push(`${where}: ${layerName(a)} → ${layerName(b)} (only ${ok.join(', ')} may import ${b}/)`);
      continue;
    }
    const ia = layerIndex.get(a);
    const ib = layerIndex.get(b);
    if (ia !== undefined && ib !== undefined && ib < ia) out.push(`${where}: ${layerName(a)} → ${layerName(b)} runs UP a layer`);
  }
  return out;
}

/** Cycles among units of the same layer, each as `a → b → … → a` with one import per arrow. */
function cyclesOf(edges: readonly ImportEdge[]): string[] {
  const graph = new Map<string, Map<string, ImportEdge>>();
  for (const e of edges) {
    const a = unitOf(e.from);
    const b = unitOf(e.to);
    if (a === null || b === null || a === b) continue;
    const la = layerIndex.get(a);
    if (la === undefined || la !== layerIndex.get(b)) continue;
    if (!graph.has(a)) graph.set(a, new Map());
    if (!graph.get(a)!.has(b)) graph.get(a)!.set(b, e);
  }
  const found = new Set<string>();
  const walk = (start: string, node: string, path: string[]): void => {
    for (const [next, e] of graph.get(node) ?? []) {
      const via = [...path, `${node} → ${next} (${e.from} imports '${e.spec}')`];
      if (next === start) {
        // Report each cycle once, from its smallest unit.
        if ([...via.map((v) => v.split(' ')[0]!)].every((u) => start <= u)) found.add(via.join('; '));
      } else if (!path.some((p) => p.startsWith(`${next} `)) && next !== start) walk(start, next, via);
    }
  };
  for (const u of graph.keys()) walk(u, u, []);
  return [...found];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return /\.(ts|mts|mjs|js)$/.test(n) && !n.endsWith('.d.ts') ? [p] : [];
  });
}

function repoEdges(): { files: string[]; edges: ImportEdge[] } {
  const files = [...sourceFiles(resolve(REPO_ROOT, 'src')), ...sourceFiles(resolve(REPO_ROOT, 'workers'))].map((f) => relative(REPO_ROOT, f).split(sep).join('/'));
  const edges = files.flatMap((f) => importsOf(f, readFileSync(resolve(REPO_ROOT, f), 'utf8')));
  return { files, edges };
}

describe('the import checker', () => {
  it('reads static, type, re-export and literal dynamic imports, and not comments or strings', () => {
    const text = [
      "import { a } from '../rpc/a.ts';",
      "import type { B } from './b.ts';",
      "export { c } from '../store/c.ts';",
      "export * from '../light/d.ts';",
      "const e = await import('../prover/e.ts');",
      "import fastify from 'fastify';",
      "// import { f } from '../rpc/f.ts';",
      "const s = \"import { g } from '../rpc/g.ts'\";",
    ].join('\n');
    expect(importsOf('src/state/x.ts', text).map((e) => e.to)).toEqual([
      'src/rpc/a.ts',
      'src/state/b.ts',
      'src/store/c.ts',
      'src/light/d.ts',
      'src/prover/e.ts',
    ]);
  });

  it('names file, import and both layers of an upward import (also between sub-layers), src → workers, and sim misuse', () => {
    const edges = [
      ...importsOf('src/state/x.ts', "import { a } from '../rpc/a.ts';\nimport { s } from '../store/s.ts';"),
      ...importsOf('src/prover/pool.ts', "import type { T } from '../../workers/prove.ts';"),
      ...importsOf('src/sim/g.ts', "import { i } from '../ingest/files.ts';\nimport { h } from '../light/hashing.ts';"),
      ...importsOf('src/query/q.ts', "import { g } from '../sim/generator.ts';"),
      ...importsOf('src/commands/start.ts', "import { g } from '../sim/generator.ts';"),
      ...importsOf('workers/prove.ts', "import { c } from '../src/commands/indexFiles.ts';"),
      ...importsOf('src/nowhere/n.ts', "import { l } from '../log.ts';"),
      ...importsOf('src/rpc/dispatch.ts', "import { a } from './http/auth.ts';\nimport { e } from './errors.ts';"),
      ...importsOf('src/rpc/http/server.ts', "import { r } from '../answer.ts';"),
    ];
    expect(violationsOf(edges)).toEqual([
      "src/state/x.ts imports '../rpc/a.ts' (src/rpc/a.ts): state → rpc runs UP a layer",
      "src/prover/pool.ts imports '../../workers/prove.ts' (workers/prove.ts): prover/query → workers/ (src/ never imports a thread entry point; put the message types in src/ beside the code that posts them)",
      "src/sim/g.ts imports '../ingest/files.ts' (src/ingest/files.ts): sim (beside the stack) → ingest (sim may import only codecs, base)",
      "src/query/q.ts imports '../sim/generator.ts' (src/sim/generator.ts): prover/query → sim (beside the stack) (only cli may import sim/)",
      "src/nowhere/n.ts imports '../log.ts' (src/log.ts): unit 'nowhere' is in no layer (add it to LAYERS in test/architecture.layers.test.ts)",
      "src/rpc/dispatch.ts imports './http/auth.ts' (src/rpc/http/auth.ts): rpc (JSON-RPC protocol) → rpc/http (transport) runs UP a layer",
    ]);
  });

  it('finds a cycle between folders of one layer and names an import on each arrow', () => {
    const edges = [
      ...importsOf('src/solana/decode.ts', "import { X } from '../light/constants.ts';"),
      ...importsOf('src/light/parser.ts', "import { d } from '../solana/decode.ts';"),
      ...importsOf('src/light/hashing.ts', "import { p } from '../merkle/poseidon.ts';"),
    ];
    expect(cyclesOf(edges)).toEqual([
      "light → solana (src/light/parser.ts imports '../solana/decode.ts'); solana → light (src/solana/decode.ts imports '../light/constants.ts')",
    ]);
  });
});

describe('src/ and workers/ (issue 16: arrows only downward)', () => {
  const { files, edges } = repoEdges();

  it('every unit of src/ is in the layer table, and every unit in the table exists', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(edges.length).toBeGreaterThan(300);
    const units = new Set(files.map(unitOf).filter((u): u is string => u !== null && u !== 'workers'));
    const known = new Set([...layerIndex.keys(), ...Object.keys(BESIDE)]);
    expect([...units].filter((u) => !known.has(u)), 'units of src/ missing from LAYERS').toEqual([]);
    expect([...known].filter((u) => !units.has(u)), 'LAYERS names units src/ does not have').toEqual([]);
  });

  it('no import runs up a layer (beyond the allow-list), src/ never imports workers/, sim/ stays beside', () => {
    const all = violationsOf(edges);
    const key = (v: string): string => {
      const m = /^(\S+) imports '[^']*' \(([^)]+)\)/.exec(v)!;
      return `${m[1]} → ${m[2]}`;
    };
    expect(all.filter((v) => !(key(v) in ALLOWED))).toEqual([]);
    const stale = Object.keys(ALLOWED).filter((k) => !all.some((v) => key(v) === k));
    expect(stale, 'allow-list entries that no longer occur: remove them').toEqual([]);
  });

  it('folders of one layer form no cycle', () => {
    expect(cyclesOf(edges)).toEqual([]);
  });
});
