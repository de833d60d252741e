/**
 * Seeding a replica from a peer, through the binary (bin/refract.mjs): `refract simulate` makes a
 * chain; a peer `refract start` follows it (API keys on); a replica `refract start --snapshot
 * http://peer/snapshot?api-key=…` on an empty --db downloads the peer's `GET /snapshot` while the
 * peer ingests, checks it against the same simulator (genesis), restores it and follows the chain
 * from the snapshot's last block. Both then answer a set of API calls byte for byte the same. On the
 * way, `refract snapshot create` copies the store the peer is writing to, and that copy restores.
 *
 * Comparing at one slot: the simulator's chain never stops (a slot a second here), so the answers are
 * compared only when both daemons stand at the same indexed slot before and after the calls (both
 * only move forward, so every answer in between comes from that slot; `context.slot` says so too);
 * otherwise the round is retried. Deterministic: nothing is compared across slots, and the round
 * itself does not depend on timing beyond retries.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createReadStream, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
import { restoreSnapshot } from '../src/store/snapshot.ts';
import { tempDir } from './helpers/photon.ts';
import { runRefract } from './helpers/refractBin.ts';
import { sleep } from './helpers/jsonRpc.ts';

const KEY = 'peer-snapshot-test-key';
const procs: ChildProcess[] = [];
afterAll(async () => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGTERM');
  await Promise.all(procs.map((p) => (p.exitCode === null && p.signalCode === null ? new Promise((r) => p.once('exit', r)) : null)));
});

type LogLine = { level: number; msg: string; [k: string]: unknown };

/** Spawns `refract ARGS` (REFRACT_* cleared, then `env`), collecting its pino lines; `until(re)` waits for a line whose msg matches. */
function run(args: string[], env: Record<string, string> = {}) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('REFRACT_')));
  const child = spawn(process.execPath, [REFRACT_BIN, ...args], { cwd: tempDir('refract-cwd-'), stdio: ['ignore', 'ignore', 'pipe'], env: { ...base, REFRACT_LOG_LEVEL: 'info', ...env } });
  procs.push(child);
  let partial = '';
  let text = '';
  const lines: LogLine[] = [];
  const exit = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    text += d;
    const parts = (partial + d).split('\n');
    partial = parts.pop()!;
    for (const p of parts) {
      try {
        lines.push(JSON.parse(p) as LogLine);
      } catch {
        // not a log line
      }
    }
  });
  const until = async (re: RegExp, ms = 60_000): Promise<LogLine> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = lines.find((l) => re.test(l.msg));
      if (hit) return hit;
      if (child.exitCode !== null) throw new Error(`refract ${args[0]} exited (${child.exitCode}) before ${re}: ${text}`);
      if (Date.now() > deadline) throw new Error(`no log line ${re} within ${ms} ms: ${text}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exit;
  };
  return { lines, until, stop, exit, text: () => text };
}

/** One JSON-RPC call with the API key: `<HTTP status> <body text>`. */
async function raw(url: string, method: string, params: unknown): Promise<string> {
  const res = await fetch(`${url}/`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return `${res.status} ${await res.text()}`;
}
const result = async (url: string, method: string, params: unknown) => {
  const r = JSON.parse((await raw(url, method, params)).replace(/^\d+ /, ''));
  if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
  return r.result;
};
const indexedSlot = (url: string) => result(url, 'getIndexerSlot', []) as Promise<number>;

describe('refract start --snapshot <peer URL>', () => {
  it('a replica seeded from a peer\'s GET /snapshot while it ingests answers like the peer at a common slot', async () => {
    const sim = run(['simulate', '--port', '0', '--slot-ms', '1000']);
    const simUrl = String((await sim.until(/Solana RPC simulator listening/)).url);
    const daemonArgs = ['start', '--rpc-url', simUrl, '--host', '127.0.0.1', '--port', '0', '--no-prover', '--no-simulator'];
    const daemonEnv = { REFRACT_API_KEYS: KEY, REFRACT_RATE_LIMIT: 'off' };

    const peerDb = join(tempDir('refract-peer-'), 'db');
    const peer = run([...daemonArgs, '--db', peerDb], daemonEnv);
    const peerUrl = `http://127.0.0.1:${(await peer.until(/refract listening/)).port}`;
    await peer.until(/recorded the cluster's genesis hash in the store/);
    for (let i = 0; (await indexedSlot(peerUrl).catch(() => -1)) < 5; i++) {
      if (i > 300) throw new Error(`the peer does not index: ${peer.text()}`);
      await sleep(100);
    }

    // `refract snapshot create` on the store the peer is writing to: a consistent copy that restores.
    const file = join(tempDir('refract-peerfile-'), 'peer.snapshot');
    const created = await runRefract(['snapshot', 'create', '--db', peerDb, '--out', file]);
    expect(created.status, created.stderr).toBe(0);
    const summary = JSON.parse(created.stdout);
    expect(summary.slot).toBeGreaterThanOrEqual(5);
    expect(summary.genesisHash).toBe(await fetch(simUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}' }).then(async (r) => (await r.json()).result));
    const copy = join(tempDir('refract-peercopy-'), 'db');
    const m = await restoreSnapshot({ source: createReadStream(file), target: copy });
    expect(m.lastBlock).toMatchObject({ slot: summary.slot, blockhash: summary.blockhash });
    expect(m.trees.length).toBeGreaterThanOrEqual(2);

    // The route takes the API's keys.
    const noKey = await fetch(`${peerUrl}/snapshot`);
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ code: 'unauthorized' });
    // A replica without the key: refused, nothing written.
    const keyless = join(tempDir('refract-keyless-'), 'db');
    const refused = run([...daemonArgs, '--db', keyless, '--snapshot', `${peerUrl}/snapshot`], daemonEnv);
    expect(await refused.exit).toBe(1);
    expect(refused.text()).toContain(`refract: snapshot ${peerUrl}/… refused (source): GET ${peerUrl}/… answered HTTP 401: {"code":"unauthorized"`);
    expect(readdirSync(join(keyless, '..'))).toEqual([]);

    const replicaDb = join(tempDir('refract-replica-'), 'db');
    const replica = run([...daemonArgs, '--db', replicaDb, '--snapshot', `${peerUrl}/snapshot?api-key=${KEY}`], daemonEnv);
    const restored = await replica.until(/store restored from the snapshot/);
    const replicaUrl = `http://127.0.0.1:${(await replica.until(/refract listening/)).port}`;
    const snapSlot = restored.slot as number;
    expect(snapSlot).toBeGreaterThanOrEqual(5);
    expect(restored.snapshot).toBe(`${peerUrl}/…`); // the URL's key is not logged
    expect(replica.text()).not.toContain(KEY);
    expect(replica.lines.filter((l) => /genesis/.test(l.msg) && l.level >= 40)).toEqual([]); // cluster checked, no warning
    await peer.until(/GET \/snapshot: sending a snapshot/);
    expect(readdirSync(peerDb).filter((f) => f.startsWith('.refract-snapshot-'))).toEqual([]); // work files removed

    // Owners of the stream: from the peer's recent compression transactions (opened accounts and token data).
    const owners = new Set<string>();
    const tokenOwners = new Set<string>();
    for (let i = 0; (owners.size < 3 || tokenOwners.size < 2) && i < 60; i++) {
      const sigs = (await result(peerUrl, 'getLatestCompressionSignatures', { limit: 20 })).value.items as { signature: string }[];
      for (const { signature } of sigs) {
        const tx = await result(peerUrl, 'getTransactionWithCompressionInfo', { signature });
        for (const o of tx?.compressionInfo?.openedAccounts ?? []) {
          if (o.optionalTokenData?.owner) tokenOwners.add(o.optionalTokenData.owner);
          else owners.add(o.account.owner);
        }
      }
      if (owners.size < 3 || tokenOwners.size < 2) await sleep(500);
    }
    expect(owners.size).toBeGreaterThanOrEqual(3);
    expect(tokenOwners.size).toBeGreaterThanOrEqual(1);
    const someOwners = [...owners].slice(0, 3);
    const someTokenOwners = [...tokenOwners].slice(0, 2);
    // A hash with a proof (a leaf in its state tree), if one is there; otherwise the error answer is compared.
    let hash = (await result(peerUrl, 'getCompressedAccountsByOwner', { owner: someOwners[0] })).value.items[0].hash as string;
    for (const owner of someOwners) {
      for (const a of (await result(peerUrl, 'getCompressedAccountsByOwner', { owner })).value.items) {
        if ((await raw(peerUrl, 'getCompressedAccountProof', { hash: a.hash })).includes('"result"')) {
          hash = a.hash;
          break;
        }
      }
    }
    const calls: [string, unknown][] = [
      ['getIndexerSlot', []],
      ...someOwners.flatMap((owner): [string, unknown][] => [
        ['getCompressedAccountsByOwner', { owner }],
        ['getCompressedBalanceByOwner', { owner }],
      ]),
      ...someTokenOwners.flatMap((owner): [string, unknown][] => [
        ['getCompressedTokenBalancesByOwner', { owner }],
        ['getCompressedTokenAccountsByOwner', { owner }],
      ]),
      ['getCompressedAccountProof', { hash }],
    ];

    // Rounds until both stand at one slot, a few past the snapshot's (blocks the replica indexed
    // itself), before and after the calls.
    let compared: { slot: number; peer: string[]; replica: string[] } | null = null;
    for (let round = 0; !compared && round < 600; round++) {
      const [a, b] = await Promise.all([indexedSlot(peerUrl), indexedSlot(replicaUrl)]);
      if (a === b && a >= snapSlot + 3) {
        const [pa, ra] = await Promise.all([Promise.all(calls.map(([m, p]) => raw(peerUrl, m, p))), Promise.all(calls.map(([m, p]) => raw(replicaUrl, m, p)))]);
        const [a2, b2] = await Promise.all([indexedSlot(peerUrl), indexedSlot(replicaUrl)]);
        if (a2 === a && b2 === a) compared = { slot: a, peer: pa, replica: ra };
      }
      if (!compared) await sleep(100);
    }
    expect(compared, 'the two daemons never stood at one slot past the snapshot').not.toBeNull();
    const { slot, peer: peerAnswers, replica: replicaAnswers } = compared!;
    calls.forEach(([method], i) => {
      expect(peerAnswers[i]!.startsWith('200 '), `${method}: ${peerAnswers[i]}`).toBe(true);
      const ctx = /"context":\{"slot":(\d+)/.exec(peerAnswers[i]!);
      if (ctx) expect(Number(ctx[1]), method).toBe(slot);
      expect(replicaAnswers[i], `${method} at slot ${slot}`).toBe(peerAnswers[i]);
    });
    expect(calls.length).toBeGreaterThanOrEqual(10);

    await Promise.all([replica.stop(), peer.stop()]);
    await sim.stop();
  }, 180_000);
});
