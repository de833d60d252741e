/**
 * Transactions by signature, as the signature backfill (sources/backfill.ts) and gap healing
 * (guard/heal.ts) fetch them: `getTransaction` in JSON-RPC batches (one by one where the node refuses
 * batches), through one RequestGovernor, retried; made into blocks of one slot each, ordered by
 * `transactionIndex` or the block's signature list.
 */
import type { Logger } from 'pino';
import type { RequestGovernor } from '../solana/requestGovernor.ts';
import { type SolanaRpc, SolanaUnavailableError, getTransactionParams } from '../solana/rpcClient.ts';
import type { BlockInfo } from '../types.ts';
import { DecodeError, decodeTransactionJson } from './prepareBatch.ts';
import { sleep } from './sleep.ts';

/** What a fetch needs: JSON-RPC batch size (1: no batches), the stop signal, the log; `priority` orders requests in the governor. */
export interface FetchOptions {
  batchSize: number;
  signal: AbortSignal;
  log: Logger;
  priority?: number;
}

/** The listed `entries` (ascending slots) fetched and made into blocks: one per slot, transactions in block order. */
export async function fetchBlocks(
  rpc: SolanaRpc,
  gov: RequestGovernor,
  entries: readonly { slot: number; signature: string; rank?: number }[],
  parentSlot: number,
  batchSupport: { ok: boolean },
  opts: FetchOptions,
): Promise<BlockInfo[]> {
  const jsons = await fetchTransactions(rpc, gov, entries.map((e) => e.signature), batchSupport, opts);
  const bySlot = new Map<number, { entry: (typeof entries)[number]; json: { transactionIndex?: number; blockTime?: number | null } & Record<string, unknown> }[]>();
  entries.forEach((entry, i) => {
    let l = bySlot.get(entry.slot);
    if (!l) bySlot.set(entry.slot, (l = []));
    l.push({ entry, json: jsons[i] as never });
  });
  const blocks: BlockInfo[] = [];
  let parent = parentSlot;
  for (const [slot, list] of [...bySlot].sort((a, b) => a[0] - b[0])) {
    if (list.length > 1) {
      if (list.every((t) => typeof t.json.transactionIndex === 'number')) list.sort((a, b) => a.json.transactionIndex! - b.json.transactionIndex!);
      else {
        const order = await blockOrder(rpc, gov, slot, opts);
        const pos = (sig: string) => order.get(sig) ?? Number.MAX_SAFE_INTEGER;
        list.sort((a, b) => pos(a.entry.signature) - pos(b.entry.signature));
      }
    }
    const block: BlockInfo = { slot, parentSlot: parent, blockTime: Number(list[0]!.json.blockTime ?? 0), blockHeight: 0, blockhash: '', previousBlockhash: '', transactions: [] };
    list.forEach((t, index) => {
      try {
        block.transactions.push(decodeTransactionJson(t.json).transaction);
      } catch (err) {
        if (!(err instanceof DecodeError)) throw err;
        (block.undecodable ??= []).push({ index, signature: t.entry.signature, reason: err.message });
      }
    });
    blocks.push(block);
    parent = slot;
  }
  return blocks;
}

/** Position of each signature in its block (getBlock, transactionDetails "signatures"). */
async function blockOrder(rpc: SolanaRpc, gov: RequestGovernor, slot: number, opts: Pick<FetchOptions, 'signal' | 'log'>): Promise<Map<string, number>> {
  const b = await gov.run('getBlock', () => rpc.getBlockSignatures(slot, opts.signal), { signal: opts.signal, retry: { log: opts.log } });
  return new Map((b?.signatures ?? []).map((s, i) => [s, i]));
}

/**
 * getTransaction JSON of each signature, in order: JSON-RPC batches of `batchSize` (one request each
 * once the node has refused a batch), all through `gov`. A transaction the node does not know (yet)
 * is asked for again with a pause, logged: the listing said it exists.
 */
export async function fetchTransactions(rpc: SolanaRpc, gov: RequestGovernor, signatures: readonly string[], batchSupport: { ok: boolean }, opts: FetchOptions): Promise<unknown[]> {
  const out: unknown[] = new Array(signatures.length);
  const groups: number[][] = [];
  const size = Math.max(1, opts.batchSize);
  for (let i = 0; i < signatures.length; i += size) groups.push(signatures.slice(i, i + size).map((_, k) => i + k));
  await Promise.all(
    groups.map(async (idx) => {
      let todo = idx;
      for (let attempt = 0; todo.length && !opts.signal.aborted; attempt++) {
        if (attempt) {
          opts.log.warn({ missing: todo.map((i) => signatures[i]).slice(0, 5), count: todo.length, attempt }, 'the node does not have listed transactions (yet); asking again');
          await sleep(Math.min(10_000, 250 * 2 ** Math.min(attempt, 6)), opts.signal);
        }
        const answers = await fetchOnce(rpc, gov, todo.map((i) => signatures[i]!), batchSupport, opts);
        const left: number[] = [];
        todo.forEach((i, k) => {
          if (answers[k] === null || answers[k] === undefined) left.push(i);
          else out[i] = answers[k];
        });
        todo = left;
      }
    }),
  );
  if (opts.signal.aborted) throw new Error('stopped');
  return out;
}

async function fetchOnce(rpc: SolanaRpc, gov: RequestGovernor, sigs: string[], batchSupport: { ok: boolean }, opts: Pick<FetchOptions, 'signal' | 'log' | 'priority'>): Promise<(unknown | null)[]> {
  if (batchSupport.ok && sigs.length > 1) {
    try {
      const answers = await gov.run('getTransaction[batch]', () => rpc.batch(sigs.map((s) => ({ method: 'getTransaction', params: getTransactionParams(s) })), opts.signal), { signal: opts.signal, calls: sigs.length, priority: opts.priority, retry: { log: opts.log, what: 'getTransaction batch', retryable: (err) => !refusesBatches(err) } });
      return answers.map((a) => (a.ok ? a.result : null));
    } catch (err) {
      if (!refusesBatches(err)) throw err;
      batchSupport.ok = false;
      opts.log.warn({ err: err.message }, 'the node does not take JSON-RPC batches: fetching transactions one by one');
    }
  }
  return Promise.all(sigs.map((s) => gov.run('getTransaction', () => rpc.getTransaction(s, opts.signal), { signal: opts.signal, priority: opts.priority, retry: { log: opts.log } })));
}

/** The node answered a JSON-RPC batch with something other than an array: it does not take batches. */
const refusesBatches = (err: unknown): err is SolanaUnavailableError => err instanceof SolanaUnavailableError && /did not answer the batch with an array/.test(err.message);
