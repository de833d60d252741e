/**
 * `refract start` (bin/refract.mjs) loads its trees from the chain, as a user runs it: against
 * `refract simulate` (which serves its tree accounts) the log says the trees came from the chain;
 * `REFRACT_TREE_OWNER` of another owner finds none (warning, config kept); a node that refuses
 * getProgramAccounts → a warning and the config's trees; `--no-tree-sync` never asks.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
import { tempDir } from './helpers/photon.ts';

const procs: ChildProcess[] = [];
const servers: Server[] = [];
afterAll(async () => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGTERM');
  await Promise.all(procs.map((p) => (p.exitCode === null && p.signalCode === null ? new Promise((r) => p.once('exit', r)) : null)));
  for (const s of servers) s.close();
});

type LogLine = { level: number; msg: string; [k: string]: unknown };

/** Spawns `refract ARGS` and collects its pino lines; `until(msg)` resolves with the first line whose msg matches. */
function run(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [REFRACT_BIN, ...args], { cwd: tempDir('refract-cwd-'), stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, REFRACT_LOG_LEVEL: 'info', ...env } });
  procs.push(child);
  let err = '';
  const lines: LogLine[] = [];
  const waiters: { re: RegExp; resolve(l: LogLine): void }[] = [];
  const exit = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    const parts = err.split('\n');
    err = parts.pop()!;
    for (const p of parts) {
      let l: LogLine;
      try {
        l = JSON.parse(p) as LogLine;
      } catch {
        continue;
      }
      lines.push(l);
      for (const w of waiters.filter((w) => w.re.test(l.msg))) w.resolve(l);
    }
  });
  const until = (re: RegExp, ms = 30_000) =>
    new Promise<LogLine>((resolve, reject) => {
      const hit = lines.find((l) => re.test(l.msg));
      if (hit) return resolve(hit);
      const t = setTimeout(() => reject(new Error(`no log line ${re} within ${ms} ms; got: ${lines.map((l) => l.msg).join(' | ')}`)), ms);
      waiters.push({ re, resolve: (l) => (clearTimeout(t), resolve(l)) });
      void exit.then((c) => reject(new Error(`exited (${c}) before ${re}: ${lines.map((l) => l.msg).join(' | ')}`)));
    });
  const stop = async () => {
    child.kill('SIGTERM');
    await exit;
  };
  return { lines, until, stop };
}

const start = (rpcUrl: string, extra: string[] = [], env: Record<string, string> = {}) =>
  run(['start', '--rpc-url', rpcUrl, '--db', join(tempDir('refract-treesync-'), 'db'), '--host', '127.0.0.1', '--port', '0', '--no-prover', '--no-simulator', ...extra], env);

/** A node that answers every method with "Method not found" and records what it was asked. */
async function refusingNode(): Promise<{ url: string; methods: string[] }> {
  const methods: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const m = JSON.parse(body) as { id: number; method: string };
      methods.push(m.method);
      res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } }));
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, methods };
}

describe('refract start: trees from the chain', () => {
  it('against refract simulate: the trees come from the chain (getProgramAccounts), before it listens', async () => {
    const sim = run(['simulate', '--port', '0', '--slot-ms', '100']);
    const url = String((await sim.until(/Solana RPC simulator listening/)).url);
    const d = start(url);
    const loaded = await d.until(/tree sync: trees loaded from the chain/);
    // The simulator serves config/trees.json's trees and their queue accounts (an AddressV2 tree is its own queue).
    const seed = loadTreeRegistry().all();
    expect(loaded).toMatchObject({ level: 30, trees: seed.length, queues: seed.filter((t) => t.queue !== t.tree).length, owner: '24rt4RgeyjUCWGS2eF7L7gyNMuz6JWdqYpAvb1KRoHxs' });
    await d.until(/refract listening/);
    expect(d.lines.filter((l) => l.level >= 40 && /tree/.test(l.msg))).toEqual([]);

    // Another owner (REFRACT_TREE_OWNER): none of the simulator's trees are kept; the config's are used.
    const other = start(url, [], { REFRACT_TREE_OWNER: 'Lighton6oQpVkeewmo2mcPTQQp7kYHr4fWpAgJyEmDX' });
    expect(await other.until(/tree sync: no trees of the expected owner on chain/)).toMatchObject({ level: 40, owner: 'Lighton6oQpVkeewmo2mcPTQQp7kYHr4fWpAgJyEmDX' });
    await other.until(/refract listening/);
    await Promise.all([d.stop(), other.stop()]);
    await sim.stop();
  }, 60_000);

  it('a node refusing getProgramAccounts → a warning, the config\'s trees, and the daemon serves', async () => {
    const node = await refusingNode();
    const d = start(node.url);
    const warn = await d.until(/tree sync: the node did not answer getProgramAccounts/);
    expect(warn).toMatchObject({ level: 40, err: 'getProgramAccounts: Method not found' });
    await d.until(/refract listening/);
    expect(node.methods[0]).toBe('getProgramAccounts');
    await d.stop();
  }, 60_000);

  it('--no-tree-sync: no getProgramAccounts, config/trees.json only', async () => {
    const node = await refusingNode();
    const d = start(node.url, ['--no-tree-sync']);
    await d.until(/refract listening/);
    await d.until(/cannot ask the Solana node where to start/); // ingest did talk to the node
    expect(node.methods).not.toContain('getProgramAccounts');
    expect(d.lines.filter((l) => /tree sync/.test(l.msg))).toEqual([]);
    await d.stop();
  }, 60_000);
});
