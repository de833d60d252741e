/**
 * The Light-key half of a proving thread (workers/prove.ts): each thread loads a Light key's resident
 * file (`<keys>/light/<name>.lkr`, lightKeySetup.ts) into the addon on first use and keeps it (its
 * fixed-base tables, within the budget, shared by the threads through `<name>.tables`); a proof is
 * one witness vector (lightKeys.ts `lightWitness`) → 256 bytes, checked by the addon against the
 * key's verifying key before it leaves the thread (lightkey.c `lk_prove`), returned in snarkjs form
 * with the public inputs as decimal strings. A proof made elsewhere (a prover node) is checked with
 * `lightKeyVerify`.
 *
 * Runs inside a Piscina thread only; imports no module with top-level await.
 */
import { envValue } from '../../config/config.ts';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { nativeAddon } from '../../native.ts';
import { ProverError } from '../errors.ts';
import { LIGHT_TABLE_MB_DEFAULT, lightAddonErrorCode, type LightProverAddon } from './lightMessages.ts';
import { residentFile, type LightKeySpec } from '../keys/lightKeyTable.ts';
import { gnarkToSnarkjs, le32ToBigint, lightProofBytes, lightProofJson, writeLe32 } from './proofEncoding.ts';
import type { ProveStages } from '../run/proveMessages.ts';
import type { Groth16Proof } from './snark.ts';

const addon = nativeAddon as unknown as LightProverAddon | null;

/** A Light key resident in this thread: the addon handle and its public input count (without the constant 1 wire). */
interface LoadedLightKey {
  handle: unknown;
  nPublic: number;
  file: string;
}

const keys = new Map<string, Promise<LoadedLightKey>>();

/** The table budget of this thread's Light keys, MiB: the pool's, else $REFRACT_LIGHT_TABLE_MB, else the default. */
function tableMbOf(configured: number | undefined): number {
  if (configured !== undefined) return configured;
  const raw = envValue('REFRACT_LIGHT_TABLE_MB');
  const env = Number(raw);
  return raw && Number.isFinite(env) && env >= 0 ? env : LIGHT_TABLE_MB_DEFAULT;
}

/**
 * Loads (once per thread) Light key `k` from `<keysDir>/light/<name>.lkr`.
 * @param tableMb fixed-base table budget per key, MiB (undefined: $REFRACT_LIGHT_TABLE_MB or 48)
 * @throws ProverError `keys_missing` (file missing, damaged or foreign: names the file and the fix)
 */
export function loadLightKey(keysDir: string, k: LightKeySpec, tableMb?: number): Promise<LoadedLightKey> {
  let p = keys.get(k.name);
  if (!p) {
    const file = residentFile(keysDir, k);
    p = (async () => {
      if (!addon?.lightKeyLoad) throw new ProverError('keys_missing', `circuit ${k.name}: the native addon is not built, so Light's keys cannot be used (npm install builds it)`);
      try {
        await access(file, constants.R_OK);
      } catch (e) {
        throw new ProverError('keys_missing', `${file} (circuit ${k.name}): ${(e as Error).message}; run \`refract setup --light-keys\``);
      }
      try {
        // by path: the addon maps the file for the parse and keeps only its own arrays, so no copy of
        // the file waits in the JS heap for a GC (all 24 keys' files, twice over with two threads, did)
        const handle = addon.lightKeyLoad(file);
        const mb = tableMbOf(tableMb);
        if (mb > 0) addon.lightKeyTables(handle, mb * 2 ** 20, file.replace(/\.lkr$/, '.tables'));
        return { handle, nPublic: addon.lightKeyInfo(handle).nbPub - 1, file };
      } catch (e) {
        throw new ProverError('keys_missing', `${file} (circuit ${k.name}): ${(e as Error).message}; run \`refract setup --light-keys\` again`);
      }
    })();
    keys.set(k.name, p);
    p.catch(() => keys.delete(k.name)); // a failed load is retried by the next task
  }
  return p;
}

/** Light keys resident in this thread (their pool ids are `light/<name>`). */
export function residentLightKeys(): string[] {
  return [...keys.keys()];
}

/**
 * One proof with a resident Light key.
 * @param witness the witness vector ((nbPub − 1 + nbSec) × 32 bytes LE, `lightWitness().inputs`)
 * @returns the proof (snarkjs form), its public inputs (decimal strings, the vector's first
 *   nPublic entries) and the C stages; `verifyMs` is the addon's check against the verifying key
 * @throws ProverError `witness_failed` (the inputs do not satisfy the circuit), `verify_failed`,
 *   `keys_missing`, `internal` — messages name the circuit
 */
export function proveLight(key: LoadedLightKey, name: string, witness: Uint8Array): { proof: Groth16Proof; publicSignals: string[]; stages: ProveStages; verifyMs: number } {
  if (!(witness instanceof Uint8Array) || witness.length % 32 !== 0 || witness.length < key.nPublic * 32) {
    throw new ProverError('invalid_input', `circuit ${name}: the witness vector must be a multiple of 32 bytes holding at least the ${key.nPublic} public inputs`);
  }
  const out = new Uint8Array(256);
  const times = new Float64Array(4);
  try {
    addon!.lightKeyProve(key.handle, witness, out, null, times);
  } catch (e) {
    const err = e as { code?: string; message?: string };
    const code = lightAddonErrorCode(err.code);
    const hint = code === 'witness_failed' ? ' (the inputs do not satisfy the circuit: a root that does not match, a path that does not fold to it, or a wrong leaf/nextIndex)' : '';
    throw new ProverError(code, `circuit ${name}: ${err.message ?? String(e)}${hint}`, { circuit: name });
  }
  const publicSignals = Array.from({ length: key.nPublic }, (_, i) => le32ToBigint(witness, i * 32).toString());
  return { proof: gnarkToSnarkjs(lightProofJson(out)), publicSignals, stages: { solveMs: times[0]!, hMs: times[1]!, msmMs: times[2]! }, verifyMs: times[3]! };
}

/**
 * Checks a proof made elsewhere against Light key `key`'s verifying key (the on-chain equation).
 * @param publicSignals decimal strings, < the BN254 scalar modulus
 * @throws ProverError `verify_failed` naming the circuit when the proof or a signal is malformed
 */
export function verifyLight(key: LoadedLightKey, name: string, proof: Groth16Proof, publicSignals: readonly string[]): boolean {
  const pub = new Uint8Array(publicSignals.length * 32);
  try {
    publicSignals.forEach((s, i) => writeLe32(pub, i * 32, BigInt(s)));
    return addon!.lightKeyVerify(key.handle, lightProofBytes(proof), pub);
  } catch (e) {
    throw new ProverError('verify_failed', `circuit ${name}: the proof or its public inputs are malformed (${(e as Error).message})`);
  }
}
