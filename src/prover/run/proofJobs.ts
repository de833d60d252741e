/**
 * The proof queue's jobs, apart from BullMQ itself (bullmq.ts, which loads BullMQ and ioredis: about
 * 0.2 CPU-s at every start, so it is imported only where a Redis queue is used): the queue's default
 * name, a job's data and result, its id (`proofJobId`) and the status `BullBackend.jobStatus` reports.
 */
import { createHash } from 'node:crypto';
import type { BackendProof } from './backend.ts';
import type { ProverError } from '../errors.ts';
import type { CircuitInput, Groth16Proof } from '../engine/snark.ts';

/** Default BullMQ queue name. */
export const DEFAULT_QUEUE_NAME = 'refract-proofs';

/** Data of a proof job. */
export interface ProofJobData {
  /** An own circuit id, or a Light key id (`light/<name>`: then `input` is the witness vector as hex). */
  circuitId: string;
  input: CircuitInput | string;
  /** The public signals the proof must have (decimal strings), so any API replica can check an async result (absent from older APIs). */
  publicSignals?: string[];
  /** Times a node without this circuit's keys handed the job back to the queue. */
  handbacks?: number;
}

/** Return value of a proof job. Times in ms. */
export interface ProofJobResult {
  proof: Groth16Proof;
  publicSignals: string[];
  /** Node that proved it (its `NODE_ID`, `name:pid:random`). */
  node: string;
  /** That node's `NODE_NAME` (absent from older nodes). */
  nodeName?: string;
  /** `queueMs`: BullMQ wait (added → taken by a node); `poolQueueMs`: wait for a pool thread on that node. */
  timings: { queueMs: number; witnessMs: number; proveMs: number; verifyMs: number; poolQueueMs: number };
  batchSize: number;
  /** Unix ms when the node started the job. */
  startedAt: number;
  /** Unix ms when the job was created (stamped by the API process that added it; absent from older nodes). */
  createdAt?: number;
}

/**
 * The job id of a proof: the SHA-256 over the circuit id and the circom input JSON (inputs are
 * built deterministically by witness.ts, so identical requests give identical ids), written as a
 * UUID (its first 128 bits, with the RFC 9562 version 8 "custom" and variant bits set: 122 hash
 * bits), so that it is also a valid `job_id` of the reference prover's `/prove/status` (which takes
 * UUIDs). Example: `3f2a…-…-8…-…`, lowercase, 36 characters.
 */
export function proofJobId(circuitId: string, input: CircuitInput | string): string {
  const h = createHash('sha256').update(circuitId).update('\n').update(JSON.stringify(input)).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** A UUID in its canonical 8-4-4-4-12 hex form (any version; case-insensitive), as the reference's `uuid.Parse` accepts for job ids. */
export const JOB_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A job's state as `BullBackend.jobStatus` reports it. Times are ms epoch. */
export interface BackendJobStatus {
  jobId: string;
  state: 'queued' | 'processing' | 'completed' | 'failed';
  circuitId: string;
  createdAt: number;
  finishedAt?: number;
  /** The public signals the producer expected (absent for jobs added by older APIs). */
  expectedPublicSignals?: string[];
  /** When completed: the node's proof (not verified here). */
  result?: BackendProof;
  /** When failed: the job's error. */
  error?: ProverError;
}
