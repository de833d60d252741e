/** Worker module for test/ingest.thread.test.ts: top-level await (ESM only), then reports its limits. */
import { parentPort, resourceLimits, workerData } from 'node:worker_threads';
import { poseidonBackend } from '../../src/merkle/poseidon.ts';

await new Promise((r) => setTimeout(r, 1));
parentPort!.postMessage({ resourceLimits, workerData, poseidonBackend });
