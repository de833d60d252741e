/**
 * Messages between the proving pool (pool.ts) and its Piscina threads (workers/prove.ts): the thread's
 * `workerData`, the task, the per-item messages and the task result. They live here, beside the code
 * that posts them, so that src/ never imports workers/ (the thread entry point imports these instead).
 * Times in ms, memory in bytes.
 */
import type { MessagePort } from 'node:worker_threads';
import type { ProverErrorCode } from '../errors.ts';
import type { ProverBackendKind, TableReport } from '../engine/groth16Native.ts';
import type { CircuitInput, Groth16Proof, ProverKernels } from '../engine/snark.ts';

/** `workerData` of the pool (fixed per worker). */
export interface ProveWorkerData {
  keysDir: string;
  /** Build a single-threaded curve instead of ffjavascript's multi-threaded one (see defaultPoolLayout). */
  singleThread: boolean;
  /** Verify every proof with the circuit's vkey before returning it. */
  verify: boolean;
  /** MSM and FFT kernels (absent: `proverKernels()`'s default). */
  kernels?: ProverKernels;
  /** Native MSM threads per call (0 / absent: the CPUs, shared by the running MSMs). */
  msmThreads?: number;
  /** Who proves: Refract's native Groth16 prover or snarkjs (absent: `proverBackend()`'s default). */
  backend?: ProverBackendKind;
  /** Native backend: fixed-base MSM table budget per key, MiB (absent: `proverTableMb()`'s default). */
  tableMb?: number;
  /** Native backend: the table files' directory, or false for none (the pool resolves it: `proverTableFiles`). */
  tableFiles: string | false;
  /** Light keys: fixed-base table budget per key, MiB (absent: $REFRACT_LIGHT_TABLE_MB, else `LIGHT_TABLE_MB_DEFAULT`; 0 = none). */
  lightTableMb?: number;
}

/**
 * One proof's input in a pool task: for an own circuit id, its circom input (witness.ts); for a
 * Light key id (`light/<name>`, lightKeys.ts `lightKeyId`), the witness vector of `lightWitness`
 * ((nbPub − 1 + nbSec) × 32 bytes, little-endian, gnark's order).
 */
export type PoolInput = CircuitInput | Uint8Array;

/**
 * One task: a batch of inputs for one circuit, or (inputs empty) a preload of `preload` circuits,
 * or (`verify` set, inputs empty) the verification of a proof made elsewhere with this thread's vkey.
 */
export interface ProveTask {
  /** An own circuit id (circuits.ts) or a Light key id (`light/<name>`). */
  circuitId: string;
  inputs: PoolInput[];
  /** Circuits to load without proving (warm-up). */
  preload?: string[];
  /** Verify this proof of `circuitId` (only the vkey is loaded); the answer is `ProveTaskResult.verified`. */
  verify?: { proof: Groth16Proof; publicSignals: string[] };
  /**
   * When given (transferred), each item is also posted here as `ProveItemMessage` as soon as it is
   * done, so the first jobs of a batch do not wait for the last one. Closed at the end of the task.
   */
  port?: MessagePort;
}

/** Posted on `ProveTask.port` after each item. */
export interface ProveItemMessage {
  index: number;
  item: ProveItem;
  threadId: number;
}

/** Error of one item, as a plain object (see module comment). */
export interface ProveItemError {
  code: ProverErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/** Outcome of one input of the batch. Times in ms. */
export type ProveItem =
  | { ok: true; proof: Groth16Proof; publicSignals: string[]; witnessMs: number; proveMs: number; verifyMs: number; stages?: ProveStages }
  | { ok: false; error: ProveItemError; witnessMs: number; proveMs: number };

/** A Light key proof's C stages, ms (lightkey.c `lk_prove`): R1CS solve, quotient h (FFTs), the MSMs. */
export interface ProveStages {
  solveMs: number;
  hMs: number;
  msmMs: number;
}

/** Result of a task. Memory in bytes: `heapUsed`/`external` are this thread's isolate; `rss` is process-wide. */
export interface ProveTaskResult {
  threadId: number;
  proofs: ProveItem[];
  /** Time spent loading circuits / building the curve during this task, ms (0 when resident). */
  loadMs: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  rss: number;
  /** Circuits resident in this thread after the task. */
  resident: string[];
  /** Set when loading the curve or a circuit failed (every item then carries it too). */
  loadError?: ProveItemError;
  /** For a `verify` task: whether the proof verified (undefined when the vkey could not be loaded: see loadError). */
  verified?: boolean;
  /** Native keys this thread loaded since its previous task, with where their fixed-base tables came from. */
  tableLoads?: TableLoad[];
}

/** One native key's load in a prover thread: its fixed-base tables' source and size, the load time, and what went wrong with its table file (null: nothing). */
export interface TableLoad extends TableReport {
  circuitId: string;
  threadId: number;
}
