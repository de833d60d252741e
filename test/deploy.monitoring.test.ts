/**
 * The monitoring kit (deploy/grafana/refract.json, deploy/prometheus/alerts.yml) against a real daemon:
 * `node bin/refract.mjs start` indexes a local simulator, gets some API traffic, and every metric name
 * in every PromQL expression of the dashboard and the alert rules must be one that its GET /metrics
 * exports (histogram `_bucket` / `_sum` / `_count` series resolve to the histogram's `# TYPE` line).
 * A second daemon with `--no-prover --no-ingest` must export them too (prom-client registers every
 * Refract metric at start, so a panel of an unused part shows "no data" rather than a wrong name).
 * With `promtool` on the PATH, the rules are also checked and unit-tested (alerts.test.yml).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../src/metrics.ts';
import { type Simulator, startSimulator } from '../src/sim/simulator.ts';
import { REPO_ROOT, tempDir } from './helpers/photon.ts';
import { haveTool, REQUIRE_TOOLS, skipWithout } from './helpers/required.ts';
import { freePort } from './helpers/refractBin.ts';

const DASHBOARD = join(REPO_ROOT, 'deploy/grafana/refract.json');
const ALERTS = join(REPO_ROOT, 'deploy/prometheus/alerts.yml');
/** Series Prometheus makes itself for every scrape target (not exported by Refract). */
const SYNTHETIC = new Set(['up']);

/** A PromQL expression, where it was found (panel title, variable or alert name), and the labels its legend or annotations show. */
interface Expr {
  where: string;
  expr: string;
  shown?: string[];
}

/** Every PromQL expression of the Grafana dashboard: panel targets and query variables (`label_values(<selector>, label)` → the selector). */
function dashboardExprs(dash: any): Expr[] {
  const out: Expr[] = [];
  const walk = (panels: any[]) => {
    for (const p of panels ?? []) {
      for (const t of p.targets ?? []) out.push({ where: `panel "${p.title}" ${t.refId}`, expr: t.expr, shown: [...(t.legendFormat ?? '').matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]!) });
      walk(p.panels);
    }
  };
  walk(dash.panels);
  for (const v of dash.templating?.list ?? []) {
    if (v.type !== 'query') continue;
    const q: string = typeof v.query === 'string' ? v.query : v.query.query;
    const m = /^label_values\((.*),\s*[a-zA-Z_]\w*\)$/.exec(q.trim());
    if (!m) throw new Error(`variable ${v.name}: expected label_values(<selector>, <label>), got ${q}`);
    out.push({ where: `variable ${v.name}`, expr: m[1]! });
  }
  return out;
}

/**
 * The `expr` of every rule of a Prometheus rules file. A small reader for the layout of alerts.yml
 * (`- alert:` / `- record:` items whose `expr:` is a plain or quoted scalar or a `|` / `>` block), not
 * general YAML: it throws when the number of expressions differs from the number of rules.
 */
function ruleExprs(text: string): Expr[] {
  const lines = text.split('\n');
  const out: Expr[] = [];
  let rule = '';
  let rules = 0;
  const shown = new Map<string, string[]>();
  for (let i = 0; i < lines.length; i++) {
    const named = /^\s*-\s+(alert|record):\s*(\S+)/.exec(lines[i]!);
    if (named) {
      rule = named[2]!;
      rules++;
      continue;
    }
    // Labels the annotations show belong to the rule's expression (read before or after it).
    for (const m of lines[i]!.matchAll(/\$labels\.(\w+)/g)) shown.set(rule, [...(shown.get(rule) ?? []), m[1]!]);
    const m = /^(\s*)expr:\s*(.*)$/.exec(lines[i]!);
    if (!m) continue;
    const value = m[2]!.trim();
    if (/^[|>][-+]?$/.test(value)) {
      const body: string[] = [];
      while (i + 1 < lines.length && (lines[i + 1]!.trim() === '' || lines[i + 1]!.search(/\S/) > m[1]!.length)) body.push(lines[++i]!.trim());
      out.push({ where: `rule ${rule}`, expr: body.join('\n').trim() });
    } else if (/^'.*'$/.test(value)) {
      out.push({ where: `rule ${rule}`, expr: value.slice(1, -1).replace(/''/g, "'") });
    } else if (/^".*"$/.test(value)) {
      out.push({ where: `rule ${rule}`, expr: JSON.parse(value) });
    } else {
      out.push({ where: `rule ${rule}`, expr: value });
    }
  }
  if (out.length !== rules || rules === 0) throw new Error(`alerts.yml: ${rules} rules but ${out.length} expr fields read`);
  return out.map((e) => ({ ...e, shown: shown.get(e.where.slice('rule '.length)) ?? [] }));
}

/** PromQL words that are not metric names when not followed by `(` (aggregations take `by`/`without` before their parentheses). */
const PROMQL_WORDS = new Set([
  'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'offset', 'bool', 'and', 'or', 'unless', 'atan2', 'inf', 'nan',
  'sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile', 'limitk', 'limit_ratio',
]);

/**
 * Metric names a PromQL expression selects: identifiers outside strings, label matchers `{…}`, ranges
 * `[…]`, `by/without/on/ignoring/group_*(…)` label lists and Grafana `$variables`, that are neither
 * keywords nor function calls. Throws on `__name__` matchers (names this reader would not see).
 */
function metricNamesOf(expr: string): string[] {
  if (expr.includes('__name__')) throw new Error(`__name__ matchers are not checked: ${expr}`);
  const s = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    .replace(/#[^\n]*/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const names = new Set<string>();
  for (const m of s.matchAll(/(\d+(?:\.\d+)?(?:e[+-]?\d+)?[a-z]*)|([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/gi)) {
    if (m[1] || m[3] || PROMQL_WORDS.has(m[2]!.toLowerCase())) continue;
    names.add(m[2]!);
  }
  return [...names];
}

/**
 * Label names an expression uses: in matchers `{name op "value"}` and in `by/without/on/ignoring/group_*(…)`
 * lists, plus those its legend or annotations show.
 */
function labelNamesOf(e: Expr): string[] {
  const s = e.expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ');
  const names = new Set<string>(e.shown ?? []);
  for (const [, body] of s.matchAll(/\{([^}]*)\}/g)) for (const m of body!.matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)) names.add(m[1]!);
  for (const [, list] of s.matchAll(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g)) {
    for (const l of list!.split(',')) if (l.trim()) names.add(l.trim());
  }
  return [...names];
}

/**
 * The labels of `e` that none of its metrics has (per `declared`: metric name → label names, as
 * registered), other than the scrape target's `job` / `instance` and a histogram's `le`.
 */
function unknownLabels(e: Expr, declared: Map<string, string[]>): string[] {
  const allowed = new Set(['job', 'instance']);
  for (const name of metricNamesOf(e.expr)) {
    if (name.endsWith('_bucket')) allowed.add('le');
    const base = declared.has(name) ? name : name.replace(/_(?:bucket|sum|count)$/, '');
    for (const l of declared.get(base) ?? []) allowed.add(l);
  }
  return labelNamesOf(e).filter((l) => !allowed.has(l)).map((l) => `${l} (${e.where})`);
}

/** Series names a Prometheus text exposition offers, from its `# TYPE` lines (a histogram `h`: `h_bucket`, `h_sum`, `h_count`). */
function exportedSeries(exposition: string): Set<string> {
  const out = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) out.add(name + s);
    else if (type === 'summary') for (const s of ['', '_sum', '_count']) out.add(name + s);
    else out.add(name!);
  }
  return out;
}

/** The referenced names that `series` lacks, with where each is used. */
function missingNames(exprs: Expr[], series: Set<string>): string[] {
  const missing: string[] = [];
  for (const { where, expr } of exprs) {
    for (const name of metricNamesOf(expr)) if (!series.has(name) && !SYNTHETIC.has(name)) missing.push(`${name} (${where})`);
  }
  return missing;
}

/**
 * How long a step may take (daemon start, first indexed transaction): seconds when the machine is idle,
 * far more on a shared 2-core one.
 */
const WAIT_MS = 90_000;
/** A new address for a non-inclusion proof: the 32 bytes 0, 1, …, 31 (below the BN254 field modulus), base58. */
const NEW_ADDRESS = '1thX6LZfHDZZKUs92febYZhYRcXddmzfzF2NvTkPNE';

/** Starts `refract start ARGS` on a free port; resolves once its /health answers, rejects with its stderr if it exits first or after WAIT_MS. */
async function startRefract(args: string[]): Promise<{ proc: ChildProcess; url: string }> {
  const port = await freePort();
  const proc = spawn(process.execPath, [join(REPO_ROOT, 'bin/refract.mjs'), 'start', ...args, '--port', String(port), '--host', '127.0.0.1', '--log-level', 'error'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, REFRACT_LOG_LEVEL: 'error' },
  });
  children.push(proc);
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<never>((_, reject) => proc.once('exit', (code) => reject(new Error(`refract start ${args.join(' ')} exited (${code}): ${stderr}`))));
  exited.catch(() => {});
  const url = `http://127.0.0.1:${port}`;
  const up = (async () => {
    for (const end = Date.now() + WAIT_MS; Date.now() < end; ) {
      try {
        if ((await fetch(`${url}/health`)).ok) return;
      } catch {}
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`refract start ${args.join(' ')}: /health did not answer within ${WAIT_MS / 1000} s: ${stderr}`);
  })();
  await Promise.race([up, exited]);
  return { proc, url };
}

/** One JSON-RPC call: HTTP status and parsed body. */
async function rpc(url: string, method: string, params?: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return { status: r.status, body: await r.json() };
}

const children: ChildProcess[] = [];
/** Temporary stores and keys directories, removed after the daemons stopped. */
const dirs: string[] = [];
const tmp = () => {
  const d = tempDir();
  dirs.push(d);
  return d;
};
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8'));
const rules = ruleExprs(readFileSync(ALERTS, 'utf8'));
const exprs = [...dashboardExprs(dashboard), ...rules];

describe('PromQL metric-name reader', () => {
  it('finds selected metrics, not functions, keywords, labels, durations or Grafana variables', () => {
    expect(metricNamesOf('histogram_quantile(0.99, sum by (le, method) (rate(a_bucket{job=~"$job", x="b c"}[$__rate_interval])))')).toEqual(['a_bucket']);
    expect(metricNamesOf('sum without (x) (b) / on (instance) group_left (y) c offset 5m > bool 1e3 unless d == 0')).toEqual(['b', 'c', 'd']);
    expect(metricNamesOf('max(e) and topk(3, f)')).toEqual(['e', 'f']);
    expect(() => metricNamesOf('{__name__="x"}')).toThrow(/__name__/);
  });
});

describe('monitoring kit against a running daemon', () => {
  let sim: Simulator;
  let main: { url: string };
  let bare: { url: string };
  let metrics: string;
  let proof: { status: number; body: any };

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, slotMs: 40, txsPerBlock: 4 });
    // Prover on (the default) without keys and without the background key build: fast, and its
    // metrics registered as in production. A second daemon with neither prover nor ingest starts
    // alongside (startup dominates the test's time).
    [main, bare] = await Promise.all([
      startRefract(['--db', tmp(), '--rpc-url', sim.url, '--keys', tmp(), '--no-build-keys', '--prover-threads', '1']),
      startRefract(['--db', tmp(), '--no-prover', '--no-ingest']),
    ]);
    // Traffic: wait for an indexed slot (ingest batches), then a good call, an unknown method, a
    // validity proof for a new address (non-inclusion: no race with the simulator spending accounts),
    // which the prover cannot serve (no keys), and a scrape, so /metrics has labelled series.
    let slot: number | undefined;
    for (const end = Date.now() + WAIT_MS; Date.now() < end && !slot; ) {
      const { body } = await rpc(main.url, 'getIndexerSlot');
      slot = body.result;
      if (!slot) await new Promise((r) => setTimeout(r, 100));
    }
    if (!slot) throw new Error(`nothing indexed within ${WAIT_MS / 1000} s`);
    proof = await rpc(main.url, 'getValidityProof', { newAddresses: [NEW_ADDRESS] });
    await rpc(main.url, 'noSuchMethod');
    await fetch(`${main.url}/metrics`);
    metrics = await (await fetch(`${main.url}/metrics`)).text();
  }, 3 * WAIT_MS);

  afterAll(async () => {
    await Promise.all(
      children.map((c) => {
        if (c.exitCode !== null || c.signalCode !== null) return undefined;
        const exited = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        return Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      }),
    );
    await sim?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('the daemon exports the series the traffic made', () => {
    expect(metrics).toMatch(/^refract_ingest_running 1$/m);
    expect(metrics).toMatch(/^refract_rpc_request_duration_seconds_count\{method="getIndexerSlot",status="200"\} [1-9]/m);
    expect(metrics).toMatch(/^refract_rpc_request_duration_seconds_count\{method="GET \/metrics",status="200"\} [1-9]/m);
    expect(metrics).toMatch(/^refract_ingest_batch_duration_seconds_count [1-9]/m);
    expect(proof.body.error.message).toMatch(/^Prover not available: proving keys for non-inclusion_26_1 are not ready/);
    expect(metrics).toMatch(/^refract_proof_errors_total\{circuit="non-inclusion_26_1",type="not_ready"\} 1$/m);
    expect(metrics).toMatch(/^refract_proof_request_duration_seconds_count\{circuit="non-inclusion_26_1",backend="local",outcome="not_ready"\} 1$/m);
    expect(metrics).toMatch(/^refract_nodejs_eventloop_lag_p99_seconds /m);
  });

  it('the dashboard and the rules have the expected parts', () => {
    expect(rules.map((r) => r.where)).toEqual(expect.arrayContaining(['rule RefractTargetDown', 'rule RefractIngestStopped', 'rule RefractIndexerLagging', 'rule RefractRejectedTransactions', 'rule RefractProofErrorRatioHigh', 'rule RefractProverQueueNearFull', 'rule RefractNoProofsServed']));
    // Each alert has a severity, a summary and a description, and a case in the promtool unit tests.
    const alertsText = readFileSync(ALERTS, 'utf8');
    const unitTests = readFileSync(join(REPO_ROOT, 'deploy/prometheus/alerts.test.yml'), 'utf8');
    const blocks = alertsText.split(/^\s*- alert: /m).slice(1);
    expect(blocks.length).toBe(rules.length);
    for (const b of blocks) {
      const name = b.split('\n')[0]!.trim();
      expect(b, name).toMatch(/^\s*severity: (critical|warning|info)$/m);
      expect(b, name).toMatch(/^\s*summary: \S/m);
      expect(b, name).toMatch(/^\s*description: \S/m);
      expect(unitTests, name).toMatch(new RegExp(`alertname: ${name}$`, 'm'));
    }
    // Every panel queries the datasource variable the importer picks.
    const ds = dashboard.templating.list.find((v: any) => v.type === 'datasource');
    expect(ds).toMatchObject({ name: 'DS_PROMETHEUS', query: 'prometheus' });
    const panels = dashboard.panels.filter((p: any) => p.type !== 'row');
    expect(panels.length).toBeGreaterThan(20);
    for (const p of panels) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
      expect(p.targets.length, p.title).toBeGreaterThan(0);
    }
    const ids = dashboard.panels.map((p: any) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const names = new Set(exprs.flatMap((e) => metricNamesOf(e.expr)));
    for (const n of ['refract_ingest_running', 'refract_indexer_lag_slots', 'refract_rpc_request_duration_seconds_bucket', 'refract_proof_duration_seconds_bucket', 'refract_proof_queue_depth', 'refract_proofs_by_node_total', 'refract_process_resident_memory_bytes', 'refract_nodejs_eventloop_lag_p99_seconds', 'refract_ingest_thread_heap_bytes', 'refract_prover_worker_heap_bytes']) {
      expect(names, n).toContain(n);
    }
  });

  it('every metric the dashboard and the rules query is exported', () => {
    expect(exprs.length).toBeGreaterThan(40);
    expect(missingNames(exprs, exportedSeries(metrics))).toEqual([]);
  });

  it('every label the queries match, group by or show is a label of their metrics', () => {
    // Label names as the daemon's metrics declare them (the same Metrics class, default metrics included).
    const declared = new Map(new Metrics().registry.getMetricsAsArray().map((m) => [m.name, [...((m as unknown as { labelNames?: string[] }).labelNames ?? [])]]));
    expect(declared.get('refract_rpc_request_duration_seconds')).toEqual(['method', 'status']);
    expect(exprs.flatMap((e) => unknownLabels(e, declared))).toEqual([]);
    expect(unknownLabels({ where: 'test', expr: 'sum by (circuit) (rate(refract_rpc_request_duration_seconds_count{methd="x"}[5m]))', shown: ['node'] }, declared)).toEqual(['node (test)', 'methd (test)', 'circuit (test)']);
  });

  it('a base histogram name (no _bucket/_sum/_count) would be reported missing', () => {
    const series = exportedSeries(metrics);
    expect(missingNames([{ where: 'test', expr: 'rate(refract_rpc_request_duration_seconds[5m])' }], series)).toEqual(['refract_rpc_request_duration_seconds (test)']);
    expect(missingNames([{ where: 'test', expr: 'refract_no_such_metric > 0' }], series)).toEqual(['refract_no_such_metric (test)']);
  });

  it('a daemon with --no-prover --no-ingest exports them too', async () => {
    const text = await (await fetch(`${bare.url}/metrics`)).text();
    expect(text).toMatch(/^refract_ingest_running 0$/m);
    expect(missingNames(exprs, exportedSeries(text))).toEqual([]);
  });
});

describe.skipIf(skipWithout(haveTool('promtool'), 'promtool (Debian package prometheus)', REQUIRE_TOOLS))('promtool', () => {
  it('checks the rules and the example config, and the rules pass their unit tests', () => {
    for (const args of [['check', 'rules', ALERTS], ['check', 'config', join(REPO_ROOT, 'deploy/prometheus/prometheus.yml')], ['test', 'rules', join(REPO_ROOT, 'deploy/prometheus/alerts.test.yml')]]) {
      const r = spawnSync('promtool', args, { encoding: 'utf8' });
      expect(r.status, `promtool ${args.join(' ')}:\n${r.stdout}${r.stderr}`).toBe(0);
    }
  });
});
