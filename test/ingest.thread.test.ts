/**
 * `refract index` imports on a worker thread (src/ingest/threads/importThread.ts) with a larger young
 * generation: the thread's import equals an in-process one byte for byte, its failures reach the
 * caller with their message, and TypeScript worker modules (ESM, top-level await) start with the
 * resource limits they are given. The protocol every indexing thread speaks
 * (src/ingest/threads/thread.ts): messages, commands, stop, failures and exits.
 */
import { join } from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { planFiles } from '../src/ingest/sources/files.ts';
import { importFilePlan } from '../src/ingest/importFiles.ts';
import { runImportThread } from '../src/ingest/threads/importThread.ts';
import { INGEST_YOUNG_GENERATION_MB, startIndexingThread, threadError, threadFailure } from '../src/ingest/threads/thread.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { Store } from '../src/store/store.ts';
import { startTsxWorker } from '../src/tsxWorker.ts';
import { REPO_ROOT, tempDir, txDir } from './helpers/photon.ts';
import { dumpStore } from './helpers/store.ts';

/** Every sub-database of the store at `path` (dumpStore). */
async function dump(path: string): Promise<Record<string, string[]>> {
  const store = new Store({ path, readOnly: true });
  const out = dumpStore(store);
  await store.close();
  return out;
}

describe('import thread', () => {
  it('imports the fixtures exactly as an in-process import does, reporting progress', async () => {
    const dirs = [txDir('e2e_mint_and_transfer_transactions'), txDir('lamport_transfers')];
    const plan = planFiles(dirs, []);
    const inProcess = tempDir();
    const store = new Store({ path: inProcess });
    const want = importFilePlan(new Indexer(store, loadTreeRegistry()), plan, { batchTransactions: 3 });
    await store.close();

    const threaded = tempDir();
    const progress: number[] = [];
    const got = await runImportThread({ db: threaded, plan, batchTransactions: 3, writemap: true }, (done) => progress.push(done));
    expect({ ...got.summary, seconds: 0 }).toEqual({ ...want, seconds: 0 });
    expect(got.lastSlot).toBe(plan.files.at(-1)!.slot);
    expect(progress.at(-1)).toBe(plan.blocks);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(await dump(threaded)).toEqual(await dump(inProcess));
  });

  it('a file that does not decode rejects with the message naming it; batches before it stay committed', async () => {
    const dir = tempDir('refract-thread-bad-');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ slot: 1_000_000_000, blockTime: 1, transaction: { transaction: 'AAAA', meta: { err: null } } }));
    const plan = planFiles([txDir('lamport_transfers'), dir], []);
    const db = tempDir();
    await expect(runImportThread({ db, plan, batchTransactions: 1, writemap: true })).rejects.toThrow(`${join(dir, 'bad.json')}: transaction`);
    // The same as an in-process import that fails on the same file.
    const inProcess = new Store({ path: tempDir() });
    expect(() => importFilePlan(new Indexer(inProcess, loadTreeRegistry()), plan, { batchTransactions: 1 })).toThrow(`${join(dir, 'bad.json')}: transaction`);
    const committed = inProcess.read((r) => r.lastSlot());
    await inProcess.close();
    expect(committed).not.toBeNull();
    const store = new Store({ path: db, readOnly: true });
    expect(store.read((r) => r.lastSlot())).toBe(committed);
    await store.close();
  });

  it('TypeScript worker modules load as ESM (top-level await) with the given resource limits and workerData', async () => {
    const worker = startTsxWorker(join(REPO_ROOT, 'test/helpers/threadInfo.ts'), { workerData: { x: 1 }, resourceLimits: { maxYoungGenerationSizeMb: INGEST_YOUNG_GENERATION_MB } });
    const info = await new Promise<{ resourceLimits: { maxYoungGenerationSizeMb: number }; workerData: unknown; poseidonBackend: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(info.resourceLimits.maxYoungGenerationSizeMb).toBe(INGEST_YOUNG_GENERATION_MB);
    expect(info.workerData).toEqual({ x: 1 });
    expect(['native', 'circomlibjs']).toContain(info.poseidonBackend);
  });
});

describe('thread failures crossing to the parent', () => {
  it('keep the message and the worker\'s stack; Errors pass through; anything else becomes an Error', () => {
    const inWorker = new RangeError('leaf index 99 is outside the tree');
    const posted = structuredClone(threadFailure(inWorker));
    const e = threadError(posted);
    expect(e).toBeInstanceOf(Error);
    expect(e.message).toBe('leaf index 99 is outside the tree');
    expect(e.stack).toBe(inWorker.stack);
    const own = new Error('worker error event');
    expect(threadError(own)).toBe(own);
    expect(threadError('plain text').message).toBe('plain text');
    expect(threadFailure(42)).toEqual({ message: '42', stack: undefined });
  });
});

describe('the indexing-thread protocol (startIndexingThread ↔ serveThread)', () => {
  const module = new URL('./helpers/protocolThread.ts', import.meta.url);
  type Message = { type: 'echo'; n: number } | { type: 'stopped' };

  it('messages reach onMessage, commands reach the thread, stop aborts its signal and it exits cleanly', async () => {
    const got: Message[] = [];
    let changes = 0;
    const t = startIndexingThread<Message, { type: 'ping'; n: number }>({ name: 'test', module, workerData: { mode: 'echo' }, onMessage: (m) => got.push(m), onChange: () => changes++ });
    t.send({ type: 'ping', n: 1 });
    t.send({ type: 'ping', n: 2 });
    while (got.length < 2) await new Promise((r) => setTimeout(r, 10));
    await t.stop();
    expect(got).toEqual([{ type: 'echo', n: 1 }, { type: 'echo', n: 2 }, { type: 'stopped' }]);
    expect(t.exited).toBe(true);
    expect(t.failure).toBeNull();
    expect(changes).toBe(4); // three messages and the exit
    t.send({ type: 'ping', n: 3 }); // after the exit: nothing, no throw
  });

  it("an error the thread throws rejects done with its message and the thread's stack", async () => {
    const t = startIndexingThread<Message>({ name: 'test', module, workerData: { mode: 'throw' }, onMessage: () => {} });
    const err = await t.done.then(() => null, (e: Error) => e);
    expect(err?.message).toBe('leaf index 99 is outside the tree');
    expect(err?.stack).toContain('protocolThread.ts');
    expect(t.failure).toBe(err);
  });

  it('an exit with another code and no report rejects done naming the thread and the code', async () => {
    const t = startIndexingThread<Message>({ name: 'test', module, workerData: { mode: 'exit' }, onMessage: () => {} });
    await expect(t.done).rejects.toThrow('test thread exited with code 3');
    expect(t.failure).toBeNull();
  });
});
