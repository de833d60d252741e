// Entry of worker threads started by src/tsxWorker.ts `startTsxWorker`: for a TypeScript module,
// registers the tsx loader in this thread (Node 20 does not pass the main thread's module hooks to a
// worker, and an `--import` of the loader in the worker's execArgv does not reach its modules either);
// then imports the worker module whose file URL `startTsxWorker` appended to process.argv (a `.js`
// module, compiled into .build/ by bin/precompile.mjs, needs no loader).
const url = process.argv[process.argv.length - 1];
if (url.endsWith('.ts')) (await import('tsx/esm/api')).register();
await import(url);
