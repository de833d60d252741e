/**
 * minContextSlot (read-your-writes, issue #27) as a relayer sees it: `refract simulate` produces
 * blocks, `refract start --rpc-url <it> --no-prover` indexes them, and requests carrying
 * `minContextSlot` wait for the slot instead of polling getIndexerSlot.
 *
 * Daemon A runs with REFRACT_MIN_CONTEXT_WAIT_MS=1500 (the env var is honoured: far-future requests
 * fail after 1.5 s, not the 2 s default); daemon B with `--min-context-wait-ms 30000` carries 5,000
 * waiting requests while other requests are timed against a baseline, then drops them by closing
 * their connections. Invalid settings stop start-up naming the variable or flag.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { type IncomingMessage, request } from 'node:http';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTransaction } from '../src/light/parser.ts';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
import { decodeBlockJson } from '../src/solana/decode.ts';
import { tempDir } from './helpers/photon.ts';
import { freePort, runRefract } from './helpers/refractBin.ts';
import { sleep } from './helpers/jsonRpc.ts';

const procs: ChildProcess[] = [];
const stderrOf = new Map<ChildProcess, () => string>();

/** Spawns `refract …args` with `env` added (no inherited REFRACT_* variables). */
function refract(args: string[], env: Record<string, string> = {}): ChildProcess {
  const base: Record<string, string | undefined> = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('REFRACT_') && k !== 'REFRACT_LIGHT_KEYS') delete base[k];
  delete base.NODE_OPTIONS;
  const c = spawn(process.execPath, [REFRACT_BIN, ...args], { cwd: tempDir('refract-cwd-'), stdio: ['ignore', 'ignore', 'pipe'], env: { ...base, REFRACT_LOG_LEVEL: 'warn', ...env } });
  let err = '';
  c.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  stderrOf.set(c, () => err);
  procs.push(c);
  return c;
}
const stop = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : (c.once('exit', () => r()), c.kill('SIGTERM'))));

/** One HTTP POST on its own connection; `abort()` closes that connection. */
function post(port: number, body: unknown, path = '/'): { done: Promise<{ status: number; body: any; ms: number }>; abort(): void } {
  const text = JSON.stringify(body);
  const started = performance.now();
  let req!: ReturnType<typeof request>;
  const done = new Promise<{ status: number; body: any; ms: number }>((resolve, reject) => {
    req = request({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res: IncomingMessage) => {
      let data = '';
      res.setEncoding('utf8').on('data', (d: string) => (data += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(data), ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(text);
  });
  return { done, abort: () => req.destroy() };
}
const call = (port: number, body: unknown, path?: string) => post(port, body, path).done;
const rpc = (method: string, params?: unknown, id: number | string = 1) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
const indexed = async (port: number): Promise<number> => (await call(port, rpc('getIndexerSlot', []))).body.result;

/** Spawns `refract start` indexing the simulator; resolves with its port once something is indexed. */
async function daemon(simPort: number, args: string[], env: Record<string, string> = {}): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = refract(['start', '--db', tempDir('refract-mcs-bin-'), '--rpc-url', `http://127.0.0.1:${simPort}`, '--no-prover', '--no-simulator', '--host', '127.0.0.1', '--port', String(port), ...args], env);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const slot = await indexed(port).catch(() => null);
    if (typeof slot === 'number' && slot >= 5) return { port, child };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`refract start did not come up: ${stderrOf.get(child)!()}`);
    await sleep(100);
  }
}

/** The value of an unlabelled series (or a histogram bucket `name{le="x"}`) in a /metrics text. */
function metric(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : NaN;
}
const scrape = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

/** p-th percentile of `xs` (0..1). */
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

let simPort: number;
let A: number;
let B: number;

beforeAll(async () => {
  simPort = await freePort();
  refract(['simulate', '--port', String(simPort), '--slot-ms', '100', '--txs-per-block', '2']);
  [{ port: A }, { port: B }] = await Promise.all([
    daemon(simPort, [], { REFRACT_MIN_CONTEXT_WAIT_MS: '1500' }),
    daemon(simPort, ['--min-context-wait-ms', '30000']),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all(procs.map(stop));
});

describe('refract start: minContextSlot against the simulator', () => {
  it("waits for a slot a few past the indexed one and answers with context.slot ≥ it and that slot's writes (the relayer pattern)", async () => {
    let checked = 0;
    // Until three requests had to wait (the daemon behind the transaction's slot); on a loaded machine many attempts find it already there.
    for (let attempt = 0; attempt < 200 && checked < 3; attempt++) {
      if (attempt) await sleep(30);
      // "Send a transaction": take one the chain just produced, with its slot as a client reads it from the confirmation.
      const tip: number = (await call(simPort, rpc('getSlot'))).body.result;
      const block = (await call(simPort, rpc('getBlock', [tip, { encoding: 'base64', maxSupportedTransactionVersion: 0 }]))).body.result;
      const tx = decodeBlockJson(block, tip)
        .transactions.map((t) => parseTransaction(t, tip))
        .find((p) => p.error === null && p.events.some((e) => e.kind === 'publicTransaction' && e.event.outputCompressedAccountHashes.length > 0));
      if (!tx) continue;
      const ev = tx.events.find((e) => e.kind === 'publicTransaction')!.event as { outputCompressedAccountHashes: Uint8Array[] };
      const before = await indexed(A);
      const r = await call(A, rpc('getCompressionSignaturesForAccount', { hash: bs58.encode(ev.outputCompressedAccountHashes[0]!), minContextSlot: tip }));
      expect(r.body.error).toBeUndefined();
      expect(r.body.result.context.slot).toBeGreaterThanOrEqual(tip);
      expect(r.body.result.value.items.map((i: { signature: string }) => i.signature)).toContain(tx.signature);
      if (before < tip) checked++; // it had to wait for the slot
    }
    expect(checked).toBeGreaterThanOrEqual(3);
  });

  it('getIndexerSlot with minContextSlot is "wait until indexed" (array form as the official client sends params, object form, POST /getIndexerSlot)', async () => {
    const s = await indexed(A);
    const arr = await call(A, rpc('getIndexerSlot', [{ minContextSlot: s + 4 }]));
    expect(arr.body.result).toBeGreaterThanOrEqual(s + 4);
    const obj = await call(A, rpc('getIndexerSlot', { minContextSlot: arr.body.result + 3 }), '/getIndexerSlot');
    expect(obj.body.result).toBeGreaterThanOrEqual(arr.body.result + 3);
  });

  it('a slot far in the future fails with -32016 and data.contextSlot after REFRACT_MIN_CONTEXT_WAIT_MS (1500 ms here)', async () => {
    const s = await indexed(A);
    const r = await call(A, rpc('getLatestCompressionSignatures', { limit: 1, minContextSlot: s + 1_000_000 }, 'far'));
    expect(r.status).toBe(200); // JSON-RPC errors answer HTTP 200 by default (docs/api.md#errors)
    expect(r.body.id).toBe('far');
    expect(r.body.error.code).toBe(-32016);
    expect(r.body.error.message).toBe('Minimum context slot has not been reached');
    expect(r.body.error.data.contextSlot).toBeGreaterThanOrEqual(s);
    expect(r.body.error.data.contextSlot).toBeLessThan(s + 1_000_000);
    expect(r.ms).toBeGreaterThanOrEqual(1450);
    expect(r.ms).toBeLessThan(2000); // not the 2000 ms default
  });

  it('maxWaitMs shortens the wait, 0 never waits, and a larger one is capped by the server bound', async () => {
    const far = (await indexed(A)) + 1_000_000;
    const short = await call(A, rpc('getIndexerSlot', { minContextSlot: far, maxWaitMs: 300 }));
    expect(short.body.error.code).toBe(-32016);
    expect(short.ms).toBeGreaterThanOrEqual(280);
    expect(short.ms).toBeLessThan(1200);
    const none = await call(A, rpc('getIndexerSlot', [{ minContextSlot: far, maxWaitMs: 0 }]));
    expect(none.body.error.code).toBe(-32016);
    expect(none.ms).toBeLessThan(250);
    const capped = await call(A, rpc('getIndexerSlot', { minContextSlot: far, maxWaitMs: 600_000 }));
    expect(capped.body.error.code).toBe(-32016);
    expect(capped.ms).toBeGreaterThanOrEqual(1450);
    expect(capped.ms).toBeLessThan(3000);
  });

  it('inside a batch each element waits for its own slot; the batch answers when the last has', async () => {
    const s = await indexed(A);
    const r = await call(A, [
      rpc('getIndexerSlot', [{ minContextSlot: s + 3 }], 1),
      rpc('getIndexerSlot', [], 2),
      rpc('getCompressedBalanceByOwner', { owner: '11111111111111111111111111111111', minContextSlot: s + 2 }, 3),
      rpc('getIndexerSlot', { minContextSlot: s + 1_000_000, maxWaitMs: 200 }, 4),
      rpc('getIndexerSlot', { minContextSlot: -1 }, 5),
    ]);
    expect(r.status).toBe(200);
    const byId = Object.fromEntries((r.body as any[]).map((x) => [x.id, x]));
    expect(byId[1].result).toBeGreaterThanOrEqual(s + 3);
    expect(byId[2].result).toBeGreaterThanOrEqual(s);
    expect(byId[3].result.context.slot).toBeGreaterThanOrEqual(s + 2);
    expect(byId[4].error.code).toBe(-32016);
    expect(byId[4].error.data.contextSlot).toBeGreaterThanOrEqual(s);
    expect(byId[5].error).toEqual({ code: -32602, message: 'Invalid params: minContextSlot: expected a non-negative integer, got -1' });
  });

  it('invalid values get -32602 naming the field; requests without minContextSlot are unchanged, strict params stay strict', async () => {
    const HASH = '11111111111111111111111111111112v';
    const cases: [unknown, string][] = [
      [{ hash: HASH, minContextSlot: -5 }, 'minContextSlot: expected a non-negative integer, got -5'],
      [{ hash: HASH, minContextSlot: 2.5 }, 'minContextSlot: expected a non-negative integer, got 2.5'],
      [{ hash: HASH, minContextSlot: '100' }, 'minContextSlot: expected a non-negative integer, got string "100"'],
      [{ hash: HASH, minContextSlot: true }, 'minContextSlot: expected a non-negative integer, got boolean'],
      [{ hash: HASH, minContextSlot: 1, maxWaitMs: -1 }, 'maxWaitMs: expected a non-negative integer, got -1'],
      [{ hash: HASH, minContextSlot: 1, maxWaitMs: 'x' }, 'maxWaitMs: expected a non-negative integer, got string "x"'],
      [{ hash: HASH, minContextSlot: 0, extra: 1 }, 'extra: unknown field'],
    ];
    for (const [params, message] of cases) {
      const r = await call(A, rpc('getCompressedAccount', params));
      expect([r.status, r.body.error]).toEqual([200, { code: -32602, message: `Invalid params: ${message}` }]);
    }
    const arr = await call(A, rpc('getMultipleCompressedAccountProofs', [HASH, { minContextSlot: 1, commitment: 'confirmed' }]));
    expect(arr.body.error.message).toMatch(/^Invalid params: params\[1\]\.commitment: unknown field/);
    const arr2 = await call(A, rpc('getMultipleCompressedAccountProofs', [HASH, { minContextSlot: {} }]));
    expect(arr2.body.error.message).toBe('Invalid params: params[1].minContextSlot: expected a non-negative integer, got object');
    // The official client's shapes, without minContextSlot: as before.
    expect(typeof (await call(A, rpc('getIndexerSlot', []))).body.result).toBe('number');
    expect((await call(A, rpc('getCompressedAccount', { hash: HASH }))).body.result.value).toBeNull();
    expect((await call(A, rpc('getIndexerHealth', []))).body.result).toBe('ok');
    // Accepted on the other param shapes too: non-strict object, positional array, ignored params.
    expect((await call(A, rpc('getCompressedBalanceByOwner', { owner: '11111111111111111111111111111111', minContextSlot: 1 }))).body.result.value).toBe(0);
    expect((await call(A, rpc('getIndexerHealth', [{ minContextSlot: 1 }]))).body.result).toBe('ok');
  });

  it('a woken request answers within 10 ms of the event announcing its slot (refract_min_context_slot_wake_seconds)', async () => {
    const name = 'refract_min_context_slot_wake_seconds';
    const m0 = await scrape(A);
    const [c0, fast0] = [metric(m0, `${name}_count`), metric(m0, `${name}_bucket{le="0.01"}`)];
    for (let i = 0; i < 15; i++) {
      const s = await indexed(A);
      const r = await call(A, rpc('getIndexerSlot', [{ minContextSlot: s + 2 }]));
      expect(r.body.result).toBeGreaterThanOrEqual(s + 2);
    }
    const m1 = await scrape(A);
    const woken = metric(m1, `${name}_count`) - c0;
    const fast = metric(m1, `${name}_bucket{le="0.01"}`) - fast0;
    console.log(`woken requests: ${woken}, answered within 10 ms of the event: ${fast}, within 2.5 ms: ${metric(m1, `${name}_bucket{le="0.0025"}`) - metric(m0, `${name}_bucket{le="0.0025"}`)}`);
    expect(woken).toBeGreaterThanOrEqual(10); // most had to wait (the indexer commits about every 400 ms)
    expect(fast / woken).toBeGreaterThanOrEqual(0.9);
    expect(metric(m1, `${name}_bucket{le="0.05"}`) - metric(m0, `${name}_bucket{le="0.05"}`)).toBe(woken);
    expect(metric(m1, 'refract_min_context_slot_waiting_requests')).toBe(0);
  });

  it('5,000 waiting requests (single and batched) do not slow the others; closed connections release them', async () => {
    const probe = async (n: number) => {
      const ms: number[] = [];
      for (let i = 0; i < n; i++) {
        const r = await call(B, rpc('getLatestCompressionSignatures', { limit: 10 }));
        expect(r.body.result.context.slot).toBeGreaterThan(0);
        ms.push(r.ms);
      }
      return ms;
    };
    await probe(50); // warm-up
    const baseline = await probe(300);

    const far = (await indexed(B)) + 1_000_000;
    const waiting: ReturnType<typeof post>[] = [];
    for (let i = 0; i < 1000; i++) waiting.push(post(B, rpc('getIndexerSlot', [{ minContextSlot: far + (i % 50) }], i)));
    for (let b = 0; b < 4; b++) {
      waiting.push(post(B, Array.from({ length: 1000 }, (_, i) => rpc('getCompressedBalanceByOwner', { owner: '11111111111111111111111111111111', minContextSlot: far + i }, i))));
    }
    for (const w of waiting) w.done.catch(() => {});
    const gauge = async () => metric(await scrape(B), 'refract_min_context_slot_waiting_requests');
    for (let i = 0; i < 100 && (await gauge()) < 5000; i++) await sleep(100);
    expect(await gauge()).toBe(5000);

    const loaded = await probe(300);
    expect(await gauge()).toBe(5000); // still waiting while the others were timed (and slots kept arriving)
    const [b50, b95, l50, l95] = [pct(baseline, 0.5), pct(baseline, 0.95), pct(loaded, 0.5), pct(loaded, 0.95)];
    console.log(`latency with 5,000 waiting requests: p50 ${l50.toFixed(2)} ms (baseline ${b50.toFixed(2)}), p95 ${l95.toFixed(2)} ms (baseline ${b95.toFixed(2)})`);
    expect(l50).toBeLessThan(b50 * 2 + 1);
    expect(l95).toBeLessThan(b95 * 3 + 5);

    const closing = performance.now();
    for (const w of waiting) w.abort();
    let left = await gauge();
    while (left > 0 && performance.now() - closing < 5000) {
      await sleep(50);
      left = await gauge();
    }
    expect(left).toBe(0); // released by the closed connections, long before the 30 s bound
  });
});

describe('refract start: the wait bound setting', () => {
  it('an invalid REFRACT_MIN_CONTEXT_WAIT_MS or --min-context-wait-ms stops start-up naming it', async () => {
    for (const v of ['-5', '60001', '2.5']) {
      const r = await runRefract(['start', '--no-ingest', '--no-prover', '--host', '127.0.0.1', '--port', '0', '--db', tempDir()], { REFRACT_MIN_CONTEXT_WAIT_MS: v });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/minContextWaitMs: expected an integer from 0 to 60000 ms \(REFRACT_MIN_CONTEXT_WAIT_MS/);
      expect(r.stderr).toContain(`got ${v}`);
    }
    // not a number at all: the variable and its text are named (not "got NaN")
    const text = await runRefract(['start', '--no-ingest', '--no-prover', '--host', '127.0.0.1', '--port', '0', '--db', tempDir()], { REFRACT_MIN_CONTEXT_WAIT_MS: 'soon' });
    expect(text.status).toBe(1);
    expect(text.stderr).toContain('REFRACT_MIN_CONTEXT_WAIT_MS: expected a number, got "soon"');
    expect(text.stderr).not.toContain('NaN');
    const flag = await runRefract(['start', '--no-ingest', '--no-prover', '--port', '0', '--db', tempDir(), '--min-context-wait-ms', 'later']);
    expect(flag.status).not.toBe(0);
    expect(flag.stderr).toMatch(/--min-context-wait-ms must be a non-negative integer/);
  });
});
