// `refract start` with no proving keys: reads are served at once, validity proofs answer "Prover not
// available" while a `refract setup` child process builds the keys in the background, GET /health
// shows the build, and once the circuit is ready the same request returns a proof that verifies.
// (One circuit, inclusion_26_1, with the dev ptau; the compile output is copied from the shared
// test keys dir so only the zkey is made: ~20–40 s on 2 cores.)
import { cp } from 'node:fs/promises';
import path from 'node:path';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Daemon, startDaemon } from '../src/commands/start.ts';
import { configSchema } from '../src/config/config.ts';
import { DEV_PTAU, ensureDevPtau, TEST_KEYS_DIR, verifyCompressedProof } from './helpers/proverFixtures.ts';
import { compileCached } from '../src/prover/keys/keySetup.ts';
import { terminateCurve } from '../src/prover/engine/snark.ts';
import { tempDir } from './helpers/photon.ts';
import { fixtureStore } from './helpers/rpcLmdb.ts';

const PAYER = 'J6ULJViDpQTRntYTmfkpUZZ71KTVkZNJFSDcQhFCo5Ef';
const PAYER_HASH = '2veKUPKieajFG7yzPNGARHq7jYS1FiXcXG8P9Txhvhcn';

let daemon: Daemon;
let url: string;
let keysDir: string;

async function rpc(method: string, params: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 'test-account', method, params }) });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  await ensureDevPtau();
  // A store indexed from the lamport_transfers fixtures, served without ingest.
  const store = fixtureStore('lamports');
  const db = (store.root as unknown as { path: string }).path;
  await store.close();
  keysDir = tempDir('refract-bgkeys-');
  // Reuse the compiled circuit (same source hash) so the background setup only makes the zkey.
  await compileCached('inclusion_26_1', path.join(TEST_KEYS_DIR, 'build'));
  await cp(path.join(TEST_KEYS_DIR, 'build', 'inclusion_26_1'), path.join(keysDir, 'build', 'inclusion_26_1'), { recursive: true });
  const config = configSchema.parse({ db, ingest: false, port: 0, host: '127.0.0.1', logLevel: 'error', rateLimit: false, keysDir, ptau: DEV_PTAU, proverThreads: 1, lightKeys: false });
  daemon = await startDaemon(config, { prover: { circuits: ['inclusion_26_1'] } });
  const addr = daemon.app.server.address();
  url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  await terminateCurve();
});

describe('refract start with missing keys', () => {
  test('serves reads while keys build in the background; proofs once the circuit is ready', async () => {
    const t0 = performance.now();
    const accounts = await rpc('getCompressedAccountsByOwner', { owner: PAYER });
    expect(accounts.status).toBe(200);
    expect(accounts.body.result.value.items.map((a: any) => a.hash)).toContain(PAYER_HASH);

    const early = await rpc('getValidityProof', { hashes: [PAYER_HASH] });
    expect(early.status).toBe(200); // JSON-RPC errors answer HTTP 200 by default (docs/api.md#errors)
    expect(early.body.error.message).toMatch(
      /^Prover not available: proving keys for inclusion_26_1 are not ready: they are being built in the background by `refract setup` \(pid \d+; 0 of 1 circuits ready\); retry later$/,
    );
    const h0 = await (await fetch(`${url}/health`)).json();
    expect(h0.status).toBe('ok');
    expect(h0.prover).toMatchObject({ mode: 'local', ready: false, keys: { ready: 0, total: 1, circuits: { inclusion_26_1: false }, setup: { state: 'running', ptau: DEV_PTAU } } });

    let health: any;
    for (let i = 0; i < 600; i++) {
      health = await (await fetch(`${url}/health`)).json();
      // The circuit turns ready when its key files appear, a moment before the setup process exits.
      if ((health.prover.ready && health.prover.keys.setup.state !== 'running') || health.prover.keys.setup.state === 'failed') break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const buildMs = performance.now() - t0;
    expect(health.prover.keys.setup, JSON.stringify(health.prover.keys.setup)).toMatchObject({ state: 'done', exitCode: 0 });
    expect(health.prover).toMatchObject({ ready: true, keys: { circuits: { inclusion_26_1: true } } });

    const res = await rpc('getValidityProof', { hashes: [PAYER_HASH] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const v = res.body.result.value;
    expect(await verifyCompressedProof(keysDir, 'inclusion_26_1', v.compressedProof, [bs58.decode(v.roots[0]), bs58.decode(v.leaves[0])])).toBe(true);
    console.log(`background setup of inclusion_26_1 (zkey only): ready after ${(buildMs / 1000).toFixed(1)} s`);
  }, 400_000);
});
