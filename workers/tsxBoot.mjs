// Entry of TypeScript worker threads started by src/tsxWorker.ts `startTsxWorker`: registers the
// tsx loader in this thread (Node 20 does not pass the main thread's module hooks to a worker, and
// an `--import` of the loader in the worker's execArgv does not reach its modules either), then
// imports the worker module whose file URL `startTsxWorker` appended to process.argv.
import { register } from 'tsx/esm/api';

register();
await import(process.argv[process.argv.length - 1]);
