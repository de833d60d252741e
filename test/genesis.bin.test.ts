/**
 * A fresh ledger (issue #26 part 2): the simulator serves slot 0 as agave does for a new
 * `solana-test-validator` ledger (getFirstAvailableBlock 0; block 0 with parentSlot 0 and
 * previousBlockhash equal to its own blockhash). `refract start` on an empty store must index it and
 * go on, over the RPC poller and over gRPC alike (it used to refetch slot 0 forever). Started at the
 * genesis block, the store's history is complete (state/sequence.ts HISTORY_META): the simulator's
 * fresh batched trees meet their first numbers (no sequence gap of any outcome); with `--start-slot`
 * the history is partial, as the start logs say.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/photon.ts';
import { freePort, killSpawned, spawnRefract } from './helpers/refractBin.ts';
import { jsonRpc, sleep } from './helpers/jsonRpc.ts';
import { expectFallbacksRecovered } from './helpers/metrics.ts';

afterAll(killSpawned);
const call = jsonRpc;
async function until<T>(what: string, fn: () => Promise<T | null | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v !== null && v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('a fresh ledger: the genesis block at slot 0', () => {
  it('is served as agave serves it, and refract start indexes it and goes on, by RPC poller and by gRPC', async () => {
    const simPort = await freePort();
    const grpcPort = await freePort();
    const sim = spawnRefract(['simulate', '--port', String(simPort), '--grpc-port', String(grpcPort), '--slot-ms', '100', '--txs-per-block', '2']);
    await until('the simulator', async () => (await call(simPort, 'getSlot')).result);
    expect((await call(simPort, 'getFirstAvailableBlock')).result).toBe(0);
    const b0 = (await call(simPort, 'getBlock', [0, { transactionDetails: 'none', rewards: false }])).result;
    expect(b0.parentSlot).toBe(0);
    expect(b0.previousBlockhash).toBe(b0.blockhash);

    const daemons = [];
    for (const extra of [[], ['--grpc-url', `http://127.0.0.1:${grpcPort}`], ['--start-slot', '0']]) {
      const port = await freePort();
      const d = spawnRefract(['start', '--db', tempDir('refract-genesis-'), '--rpc-url', `http://127.0.0.1:${simPort}`, '--no-prover', '--no-simulator', '--host', '127.0.0.1', '--port', String(port), ...extra]);
      daemons.push({ port, d, grpc: extra[0] === '--grpc-url', complete: extra[0] !== '--start-slot' });
    }
    for (const { port, d, grpc, complete } of daemons) {
      const slot = await until(`indexing past slot 5 (${grpc ? 'gRPC' : 'poller'})`, async () => {
        const s = (await call(port, 'getIndexerSlot')).result;
        return typeof s === 'number' && s >= 5 ? s : null;
      });
      expect(slot).toBeGreaterThanOrEqual(5);
      // On a loaded CI machine (load 9 on 2 cores) the gRPC daemon once fell back to the poller for a
      // while: it must be back on gRPC, each fallback counted with its reason and ended in a recovery.
      const health = await until(`source ${grpc ? 'grpc' : 'rpc'}`, async () => {
        const h = await (await fetch(`http://127.0.0.1:${port}/health`)).json();
        return h.source.source === (grpc ? 'grpc' : 'rpc') ? h : null;
      });
      if (!grpc) expect(health.source.fallbacks).toBe(0);
      else expectFallbacksRecovered(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(), health.source.fallbacks);
      expect(d.stderr()).not.toContain('does not extend the indexed chain');
      expect(d.stderr()).toMatch(complete ? /"start":0,"complete":true,"msg":"an empty store: its history begins with the cluster's/ : /"start":0,"complete":false,"msg":"an empty store: its history begins part-way/);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics.split('\n').filter((l) => l.startsWith('refract_sequence_gaps_total{'))).toEqual([]);
    }
    expect(sim.stderr()).not.toContain('"level":50');
  }, 120_000);
});
