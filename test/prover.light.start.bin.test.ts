/**
 * `refract start` on a keys directory without Light's keys, as a user runs it: it converts them in
 * the background (`refract setup --light-keys` as a child), answers "Prover not available: Light's
 * proving key for … is being converted in the background … (pid N); retry later" meanwhile, logs one
 * summary line when the conversion ends, lists the keys in /health, and then answers `POST /prove`
 * with a proof the chain's verifying key accepts. Offline, from DIR (`--light-keys-source`): here a
 * directory holding two of the CLI's `.key` files, so the others stay missing and say so.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { lightKeyByName, lightWitness } from '../src/prover/keys/lightKeys.ts';
import { compressGnarkProof } from '../src/prover/engine/proofEncoding.ts';
import { toProverRequest } from '../src/prover/engine/witness.ts';
import { lightInputsFor } from './helpers/lightInputs.ts';
import { ensureLightKeys } from './helpers/lightKeys.ts';
import { pinocchioProgram, verifyOnChain, vkFromProgram } from './helpers/lightVerify.ts';
import { tempDir } from './helpers/photon.ts';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
import { childEnv, freePort, startRefract, stopAll, type RefractDaemon } from './helpers/refractBin.ts';

const TWO = ['mainnet_inclusion_26_1', 'non-inclusion_26_1'];
let so: Uint8Array;
let source: string;

beforeAll(async () => {
  const pkg = await ensureLightKeys(TWO);
  so = pinocchioProgram(pkg);
  source = tempDir('refract-light-source-');
  mkdirSync(source, { recursive: true });
  for (const name of TWO) {
    const file = lightKeyByName(name)!.file;
    symlinkSync(path.join(pkg, 'bin', 'proving-keys', file), path.join(source, file));
  }
}, 3_600_000);

afterAll(stopAll);

const prove = async (d: RefractDaemon, name: string, seed: number) => {
  const inputs = lightInputsFor(lightKeyByName(name)!, seed);
  const res = await fetch(`${d.url}/prove`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(toProverRequest(inputs)) });
  return { status: res.status, text: await res.text() };
};

const health = async (d: RefractDaemon) => (await (await fetch(`${d.url}/health`)).json()) as { prover: { ready?: boolean; keys?: unknown; lightKeys: { ready: string[]; missing: string[]; setup?: { state: string } } } };

describe('refract start without Light keys', () => {
  test('converts them in the background from --light-keys-source, says so until ready, then proves what the chain accepts', async () => {
    const keys = tempDir('refract-light-start-keys-');
    const d = await startRefract(['--keys', keys, '--light-keys-source', source], { REFRACT_LIGHT_KEYS: 'true', REFRACT_LOG_LEVEL: 'info' });
    expect(d.stderr()).toMatch(/Light proving keys missing: converting them in the background/);
    // a key not in the source, asked at once: the conversion (two keys of 30–40 MB, hashed and converted:
    // seconds) is still running, and the answer says so, naming the setup's pid
    const during = await prove(d, 'inclusion_32_1', 1);
    const pid = JSON.parse(d.stderr().split('\n').find((l) => l.includes('converting them in the background'))!).pid as number;
    expect(during.status).toBe(503);
    expect(during.text).toContain(`Light's proving key for inclusion_32_1 is being converted in the background by \`refract setup --light-keys\` (pid ${pid}); retry later`);
    // the end of the conversion: one summary line
    const deadline = Date.now() + 300_000;
    while (!d.stderr().includes('background conversion of Light keys finished') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const line = d.stderr().split('\n').find((l) => l.includes('background conversion of Light keys finished'));
    expect(line, d.stderr()).toBeTruthy();
    const summary = JSON.parse(line!);
    expect(summary.converted).toBe(2);
    expect(summary.missing).toHaveLength(22);
    expect(d.stderr()).not.toMatch(/"msg":"\[light setup\] [{}\]]/); // no pretty-printed JSON relayed line by line
    // /health lists them (the daemon picks them up within 2 s)
    let h = await health(d);
    for (let i = 0; i < 50 && h.prover.lightKeys.ready.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      h = await health(d);
    }
    expect(h.prover.lightKeys.ready.sort()).toEqual([...TWO].sort());
    expect(h.prover.lightKeys.missing).toContain('inclusion_32_1');
    expect(h.prover.lightKeys.setup?.state).toBe('done');
    // ready = all 24 of Light's keys; Refract's own circuits (not built while Light's keys serve) are not listed
    expect(h.prover.ready).toBe(false);
    expect(h.prover.keys).toBeUndefined();
    // a converted key: Light's {ar, bs, krs}, accepted by the verifying key in Light's released program
    for (const [i, name] of TWO.entries()) {
      const r = await prove(d, name, 3 + i);
      expect(r.status, r.text).toBe(200);
      const { publics } = lightWitness(lightInputsFor(lightKeyByName(name)!, 3 + i)); // the public inputs, in the circuit's order
      expect(verifyOnChain(vkFromProgram(so, name, publics.length + 1), compressGnarkProof(JSON.parse(r.text)), publics), name).toBe(true);
    }
    // a key the source lacks, after the conversion: not set up, and how to get it
    const after = await prove(d, 'inclusion_32_1', 2);
    expect(after.status).toBe(503);
    expect(after.text).toMatch(/Light's proving key for inclusion_32_1 is not set up yet \(inclusion_32_1\.key from @lightprotocol\/zk-compression-cli@0\.27\.0 .*retry later/);
    await d.stop();
  }, 600_000);
});

describe('Ctrl-C while Light keys convert', () => {
  test('SIGINT to the process group (a terminal): exit 0, the conversion logged as stopped, no error', async () => {
    const keys = tempDir('refract-light-ctrlc-keys-');
    const port = await freePort();
    // its own process group, as a shell gives a foreground job: the signal reaches the daemon and its setup child
    const child = spawn(process.execPath, [REFRACT_BIN, 'start', '--no-ingest', '--db', tempDir(), '--host', '127.0.0.1', '--port', String(port), '--keys', keys, '--light-keys-source', source], {
      detached: true,
      env: childEnv({ REFRACT_LIGHT_KEYS: 'true', REFRACT_LOG_LEVEL: 'info', REFRACT_LOG_FORMAT: 'json' }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      const deadline = Date.now() + 60_000;
      while (!err.includes('[light setup]') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(err, 'the conversion to start').toContain('[light setup]');
      process.kill(-child.pid!, 'SIGINT');
      expect(await exited, err).toBe(0);
    } finally {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    }
    const lines = err.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(lines.filter((l) => l.level >= 50), err).toEqual([]);
    expect(lines.map((l) => l.msg)).not.toContain('background conversion of Light keys failed; run `refract setup --light-keys` by hand');
  }, 120_000);
});
