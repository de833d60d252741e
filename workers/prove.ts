/**
 * Piscina worker: Groth16 proofs for one circuit per task, over a batch of inputs.
 *
 * Resident per worker thread (loaded on first use, kept until the thread is recycled):
 * - per circuit: the compiled + instantiated witness wasm (`WitnessCalculator`), the verification
 *   key, and the proving key: with the `native` backend (default where the addon is built) the zkey
 *   parsed once into the addon (`loadNativeKey`; the file bytes are dropped; its fixed-base MSM tables,
 *   within `tableMb`, are shared with the other threads' keys of the same circuit), with `snarkjs`
 *   the zkey bytes (passed to snarkjs as `{type:'mem'}`);
 * - with the `snarkjs` backend (or an addon without the native verifier), one bn128 curve
 *   (`useCurve`), single-threaded or multi-threaded per `workerData.singleThread`.
 *
 * Verification happens HERE, not in the caller, with the backend's verifier: for `native` the addon's
 * pairing (`verifyNative`, ~1.5 ms; the vkey JSON encoded once per circuit), for `snarkjs` snarkjs'
 * `groth16.verify` on this thread's curve (~11–25 ms; the caller would have to build its own curve,
 * ~250 ms, and block its event loop per proof). A proof that does not verify is returned as a
 * `verify_failed` item, never as a proof. A `verify` task checks a proof made elsewhere (a prover
 * node of the BullMQ queue) against this thread's vkey, loading only the vkey.
 *
 * Light's keys (ids `light/<name>`): the task's inputs are witness vectors, proved by the addon with
 * the resident key (src/prover/engine/lightThread.ts), checked there against Light's verifying key.
 *
 * Failures are per input: a bad input yields `{ok:false, error}` for that item and the rest of the
 * batch still proves. Errors travel as plain `{code, message, details}` objects because structured
 * cloning drops the `ProverError` class. The task function itself only rejects if the thread dies.
 *
 * Imports only src/prover (no rpc, no store): snark.ts performs the snarkjs worker-thread import
 * workaround (perf.md §2.4).
 */
import { readFile } from 'node:fs/promises';
import { threadId, workerData } from 'node:worker_threads';
import { explainConstraintFailure, getCircuit } from '../src/prover/keys/circuits.ts';
import { ProverError } from '../src/prover/errors.ts';
import { keyFiles, tableFile } from '../src/prover/keys/layout.ts';
import { nativeAddon } from '../src/native.ts';
import {
  encodeNativeVkey,
  loadNativeKey,
  nativeVerifierAvailable,
  proveNative,
  proverBackend,
  tableReport,
  verifyNative,
  type NativeGroth16Key,
} from '../src/prover/engine/groth16Native.ts';
import type { ProveItem, ProveItemError, ProveItemMessage, ProveTask, ProveTaskResult, ProveWorkerData, TableLoad } from '../src/prover/run/proveMessages.ts';
import { LIGHT_KEY_ID_PREFIX, lightKeyOfId } from '../src/prover/keys/lightKeyTable.ts';
import { loadLightKey, proveLight, residentLightKeys, verifyLight } from '../src/prover/engine/lightThread.ts';
import {
  prove,
  useCurve,
  type ProverKernels,
  verify,
  WitnessCalculator,
  type CircuitInput,
  type Groth16Proof,
  type VerificationKey,
} from '../src/prover/engine/snark.ts';

interface Loaded {
  wc: WitnessCalculator;
  /** snarkjs backend: the zkey file bytes. */
  zkey?: Uint8Array;
  /** native backend: the key resident in the addon. */
  native?: NativeGroth16Key;
  vkey: VerificationKey;
  nPublic: number;
}

const config = workerData as ProveWorkerData;
const backend = proverBackend(config.backend);
const circuits = new Map<string, Promise<Loaded>>();
/** Native key loads not yet reported (taskResult hands them to the pool). */
const tableLoads: TableLoad[] = [];
const vkeys = new Map<string, Promise<VerificationKey>>();
/** The native verifier in use (backend `native` and the addon has it): vkeys in the addon's layout. */
const nativeVerify = backend === 'native' && nativeVerifierAvailable();
const nativeVkeys = new WeakMap<VerificationKey, Uint8Array>();

/**
 * Verifies `proof` for circuit `id` with the backend's verifier (see the header).
 * @returns whether the pairing check holds
 * @throws ProverError `verify_failed` (native: a malformed proof or signal, naming the field),
 *   `keys_missing` (the vkey's points are malformed)
 */
async function verifyProof(id: string, vkey: VerificationKey, publicSignals: string[], proof: Groth16Proof): Promise<boolean> {
  if (!nativeVerify) {
    await useCurve({ singleThread: config.singleThread, kernels: config.kernels, msmThreads: config.msmThreads });
    return verify(vkey, publicSignals, proof);
  }
  let vk = nativeVkeys.get(vkey);
  if (!vk) {
    vk = encodeNativeVkey(vkey, `circuit ${id}: ${keyFiles(config.keysDir, id).vkey}`);
    nativeVkeys.set(vkey, vk);
  }
  return verifyNative(vk, proof, publicSignals);
}

/** The verification key of `id` alone (for `verify` tasks: no wasm, no zkey). */
function loadVkey(id: string): Promise<VerificationKey> {
  const loaded = circuits.get(id);
  if (loaded) return loaded.then((l) => l.vkey);
  let p = vkeys.get(id);
  if (!p) {
    p = (async () => {
      const spec = getCircuit(id);
      const f = keyFiles(config.keysDir, id).vkey;
      let vkey: VerificationKey;
      try {
        vkey = JSON.parse(await readFile(f, 'utf8')) as VerificationKey;
      } catch (e) {
        throw new ProverError('keys_missing', `circuit ${id}: cannot read ${f} (${(e as Error).message}); run \`refract setup\``);
      }
      if (vkey.nPublic !== spec.nPublic) throw new ProverError('keys_missing', `circuit ${id}: ${f} has ${vkey.nPublic} public inputs, expected ${spec.nPublic}`);
      return vkey;
    })();
    vkeys.set(id, p);
    p.catch(() => vkeys.delete(id));
  }
  return p;
}

function load(id: string): Promise<Loaded> {
  let p = circuits.get(id);
  if (!p) {
    p = (async () => {
      const spec = getCircuit(id);
      const f = keyFiles(config.keysDir, id);
      let wasm: Buffer, zkey: Buffer, vkeyText: string;
      try {
        [wasm, zkey, vkeyText] = await Promise.all([readFile(f.wasm), readFile(f.zkey), readFile(f.vkey, 'utf8')]);
      } catch (e) {
        throw new ProverError('keys_missing', `circuit ${id}: cannot read its keys in ${config.keysDir} (${(e as Error).message}); run \`refract setup\``);
      }
      let vkey: VerificationKey;
      try {
        vkey = JSON.parse(vkeyText) as VerificationKey;
      } catch (e) {
        throw new ProverError('keys_missing', `circuit ${id}: ${f.vkey} is not valid JSON (${(e as Error).message}); re-run \`refract setup\``);
      }
      if (vkey.nPublic !== spec.nPublic) {
        throw new ProverError('keys_missing', `circuit ${id}: ${f.vkey} has ${vkey.nPublic} public inputs, expected ${spec.nPublic}; re-run setup`);
      }
      const wc = await WitnessCalculator.create(wasm);
      const bytes = new Uint8Array(zkey.buffer, zkey.byteOffset, zkey.byteLength);
      if (backend === 'native') {
        const t0 = performance.now();
        const native = loadNativeKey(bytes, `circuit ${id}: ${f.zkey}`, { tableMb: config.tableMb, tableFile: config.tableFiles === false ? undefined : tableFile(config.tableFiles, id) });
        tableLoads.push({ circuitId: id, threadId, ...tableReport(native, t0) });
        if (native.nPublic !== spec.nPublic || native.nVars !== wc.witnessSize) {
          throw new ProverError('keys_missing', `circuit ${id}: ${f.zkey} has ${native.nPublic} public inputs and ${native.nVars} signals, the circuit ${spec.nPublic} and ${wc.witnessSize}; re-run setup`);
        }
        return { wc, native, vkey, nPublic: spec.nPublic };
      }
      return { wc, zkey: bytes, vkey, nPublic: spec.nPublic };
    })();
    circuits.set(id, p);
    p.catch(() => circuits.delete(id)); // retry a failed load on the next task
  }
  return p;
}

function toItemError(e: unknown): ProveItemError {
  if (e instanceof ProverError) {
    let message = e.message;
    if (e.code === 'witness_failed') {
      const why = explainConstraintFailure(e.message);
      if (why) message = `constraint not satisfied: ${why} (circom: ${e.message.replace(/\s+/g, ' ')})`;
    }
    return { code: e.code, message, details: e.details };
  }
  return { code: 'internal', message: `prover error: ${(e as Error)?.stack ?? String(e)}` };
}

/** Piscina entry point. Never rejects for input errors; see `ProveItem`. */
export default async function proveTask(task: ProveTask): Promise<ProveTaskResult> {
  const tLoad = performance.now();
  let loaded: Loaded | undefined;
  let loadError: ProveItemError | undefined;
  if (task.verify) return verifyTask(task, tLoad);
  const light = lightKeyOfId(task.circuitId);
  if (light && task.inputs.length > 0) return lightTask(task, light.name, tLoad);
  try {
    const preload = task.preload ?? [];
    // every thread loads every key, but a key file is read once per process (the addon shares it, and a
    // thread asking for one another thread is reading waits for it): odd threads walk the list from its
    // end, so two threads load different keys side by side and meet in the middle
    const lightOrder = threadId % 2 ? [...preload].reverse() : preload;
    for (const id of lightOrder) {
      const k = lightKeyOfId(id);
      if (k) await loadLightKey(config.keysDir, k, config.lightTableMb);
    }
    const own = preload.filter((id) => !id.startsWith(LIGHT_KEY_ID_PREFIX));
    // the curve serves snarkjs' prover and verifier; the native backend with its verifier needs none
    if (!nativeVerify && (own.length > 0 || task.inputs.length > 0)) await useCurve({ singleThread: config.singleThread, kernels: config.kernels, msmThreads: config.msmThreads });
    for (const id of own) await load(id);
    if (task.inputs.length > 0) loaded = await load(task.circuitId);
  } catch (e) {
    loadError = toItemError(e);
  }
  const loadMs = performance.now() - tLoad;

  const proofs: ProveItem[] = [];
  const push = (item: ProveItem) => {
    task.port?.postMessage({ index: proofs.length, item, threadId } satisfies ProveItemMessage);
    proofs.push(item);
  };
  for (const input of task.inputs) {
    if (!loaded) {
      push({ ok: false, error: loadError!, witnessMs: 0, proveMs: 0 });
      continue;
    }
    let witnessMs = 0;
    let proveMs = 0;
    try {
      let t = performance.now();
      const wtns = await loaded.wc.calculateWtns(input as CircuitInput);
      witnessMs = performance.now() - t;
      t = performance.now();
      const { proof, publicSignals } = loaded.native ? proveNative(loaded.native, wtns, { threads: config.msmThreads }) : await prove(loaded.zkey!, wtns);
      proveMs = performance.now() - t;
      let verifyMs = 0;
      if (config.verify) {
        t = performance.now();
        const ok = await verifyProof(task.circuitId, loaded.vkey, publicSignals, proof);
        verifyMs = performance.now() - t;
        if (!ok) {
          throw new ProverError('verify_failed', `proof for ${task.circuitId} does not verify against ${keyFiles(config.keysDir, task.circuitId).vkey} (zkey/vkey mismatch?)`);
        }
      }
      push({ ok: true, proof, publicSignals, witnessMs, proveMs, verifyMs });
    } catch (e) {
      push({ ok: false, error: toItemError(e), witnessMs, proveMs });
    }
    trimAfter(proofs.length === task.inputs.length);
  }
  task.port?.close();

  return taskResult(proofs, loadMs, { loadError });
}

/**
 * After a proof's answer went out: hands the arenas' free memory back to the kernel (malloc_trim). A
 * proof frees many MB of ArrayBuffer backing stores; left in glibc's per-thread arenas they fragment
 * and process RSS crept up ≈9 MiB per 100 proofs (500 proofs measured); trimmed it stays flat, at no
 * measurable throughput cost. The last proof of a task is answered by the task's result, so its trim
 * runs once that result is posted (setImmediate), not before it: ≈0.4–0.8 ms off every lone proof.
 */
function trimAfter(last: boolean): void {
  if (last) setImmediate(() => nativeAddon?.mallocTrim?.());
  else nativeAddon?.mallocTrim?.();
}

/** A task's result: its proofs and load time plus this thread's memory and resident circuits, read now. */
function taskResult(proofs: ProveTaskResult['proofs'], loadMs: number, extra: Pick<ProveTaskResult, 'loadError' | 'verified'>): ProveTaskResult {
  const mem = process.memoryUsage();
  return {
    threadId,
    proofs,
    loadMs,
    heapUsed: mem.heapUsed,
    external: mem.external,
    arrayBuffers: mem.arrayBuffers,
    rss: mem.rss,
    resident: [...circuits.keys(), ...residentLightKeys().map((n) => LIGHT_KEY_ID_PREFIX + n)],
    ...(tableLoads.length ? { tableLoads: tableLoads.splice(0) } : {}),
    ...extra,
  };
}

/** A batch of Light-key proofs (see the header): one item per witness vector, streamed as each finishes. */
async function lightTask(task: ProveTask, name: string, tLoad: number): Promise<ProveTaskResult> {
  let key: Awaited<ReturnType<typeof loadLightKey>> | undefined;
  let loadError: ProveItemError | undefined;
  try {
    key = await loadLightKey(config.keysDir, lightKeyOfId(task.circuitId)!, config.lightTableMb);
  } catch (e) {
    loadError = toItemError(e);
  }
  const loadMs = performance.now() - tLoad;
  const proofs: ProveItem[] = [];
  for (const input of task.inputs) {
    let item: ProveItem;
    if (!key) item = { ok: false, error: loadError!, witnessMs: 0, proveMs: 0 };
    else {
      try {
        const r = proveLight(key, name, input as Uint8Array);
        item = { ok: true, proof: r.proof, publicSignals: r.publicSignals, witnessMs: r.stages.solveMs, proveMs: r.stages.hMs + r.stages.msmMs, verifyMs: r.verifyMs, stages: r.stages };
      } catch (e) {
        item = { ok: false, error: toItemError(e), witnessMs: 0, proveMs: 0 };
      }
    }
    task.port?.postMessage({ index: proofs.length, item, threadId } satisfies ProveItemMessage);
    proofs.push(item);
    trimAfter(proofs.length === task.inputs.length);
  }
  task.port?.close();
  return taskResult(proofs, loadMs, { loadError });
}

async function verifyTask(task: ProveTask, tLoad: number): Promise<ProveTaskResult> {
  let verified: boolean | undefined;
  let loadError: ProveItemError | undefined;
  const light = lightKeyOfId(task.circuitId);
  if (light) {
    try {
      const key = await loadLightKey(config.keysDir, light, config.lightTableMb);
      verified = verifyLight(key, light.name, task.verify!.proof, task.verify!.publicSignals);
    } catch (e) {
      loadError = toItemError(e);
    }
    return taskResult([], performance.now() - tLoad, { loadError, verified });
  }
  try {
    const vkey = await loadVkey(task.circuitId);
    verified = await verifyProof(task.circuitId, vkey, task.verify!.publicSignals, task.verify!.proof);
  } catch (e) {
    loadError = toItemError(e);
  }
  return taskResult([], performance.now() - tLoad, { loadError, verified });
}
