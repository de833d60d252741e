#!/usr/bin/env -S node --max-semi-space-size=128
// Entry point of the `refract` CLI: registers the TypeScript loader (tsx) and runs src/cli.ts.
// `--max-semi-space-size=128` (MiB; Node 20's default is 16): indexing a batch keeps its decoded
// transactions alive while it allocates ≈25 KB per output, so with the default young generation
// every scavenge copies the batch's live objects again. 128 cut ingest CPU per output by ≈12%
// (alternating runs, README "Benchmarks"). `npm start`, bench:rpc, bench:soak and the Dockerfile
// pass the same flag; V8 reads it only at start-up (v8.setFlagsFromString has no effect on it).
import { register } from 'tsx/esm/api';
register();
await import('../src/cli.ts');
