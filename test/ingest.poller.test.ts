/**
 * The RPC block source against a scripted Solana node: parent-slot chain rules (photon.md §1.1),
 * skipped slots, and where an empty store starts.
 */
import { describe, expect, it } from 'vitest';
import bs58 from 'bs58';
import { loadTreeRegistry } from '../src/config/trees.ts';
import { Indexer } from '../src/ingest/indexer.ts';
import { pollBlocks } from '../src/ingest/sources/poller.ts';
import { NETWORK_START_SLOTS, StartSlotUnavailable, resolveStartSlot } from '../src/ingest/startSlot.ts';
import { SolanaRpcError, type SolanaRpc } from '../src/solana/rpcClient.ts';
import { Store } from '../src/store/store.ts';
import { tempDir } from './helpers/photon.ts';

const hash = (n: number) => bs58.encode(new Uint8Array(32).fill(n % 256));
const blockJson = (slot: number, parentSlot: number) => ({ parentSlot, blockTime: 1, blockHeight: slot, blockhash: hash(slot), previousBlockhash: hash(parentSlot), transactions: [] });

/** A node that answers getBlock from `answer(slot, call)` (a block, null = skipped, or throws). */
function fakeRpc(tip: number, answer: (slot: number, call: number) => object | null, extra: Partial<SolanaRpc> = {}) {
  const calls = new Map<number, number>();
  const rpc = {
    url: 'fake://node',
    getSlot: async () => tip,
    getBlock: async (slot: number) => {
      const n = (calls.get(slot) ?? 0) + 1;
      calls.set(slot, n);
      return answer(slot, n);
    },
    ...extra,
  } as unknown as SolanaRpc;
  return { rpc, calls };
}

/** Slots released by the poller until `count` blocks came out (or `ms` passed). */
async function released(rpc: SolanaRpc, opts: { startSlot: number; lastIndexedSlot: number | null }, count: number, ms = 5000): Promise<number[]> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ms);
  const out: number[] = [];
  const errors: unknown[] = [];
  const log = { warn: () => {}, error: (o: unknown) => errors.push(o), info: () => {}, debug: () => {} } as never;
  for await (const batch of pollBlocks(rpc, { ...opts, signal: abort.signal, pollIntervalMs: 20, log })) {
    out.push(...batch.map((b) => b.slot));
    if (out.length >= count) abort.abort();
  }
  clearTimeout(timer);
  return out;
}

describe('poller: parent-slot chain', () => {
  it('the genesis block of a fresh ledger (slot 0, parentSlot 0, previousBlockhash = its blockhash) is released, then its children', async () => {
    const genesis = { ...blockJson(0, 0), previousBlockhash: hash(0) };
    const { rpc, calls } = fakeRpc(3, (slot) => (slot === 0 ? genesis : blockJson(slot, slot - 1)));
    expect(await released(rpc, { startSlot: 0, lastIndexedSlot: null }, 4)).toEqual([0, 1, 2, 3]);
    expect(calls.get(0)).toBe(1);
  });

  it('a slot the node first calls skipped, named as parent by the next block, is fetched again and released before it', async () => {
    // Slot 11 answers "skipped" the first time (e.g. -32009 while long-term storage catches up).
    const { rpc, calls } = fakeRpc(14, (slot, call) => (slot === 11 && call === 1 ? null : blockJson(slot, slot - 1)));
    expect(await released(rpc, { startSlot: 10, lastIndexedSlot: 9 }, 5)).toEqual([10, 11, 12, 13, 14]);
    expect(calls.get(11)).toBe(2);
  });

  it('a parent that keeps answering "skipped" holds the child back (retried), then both are released in order', async () => {
    const { rpc, calls } = fakeRpc(13, (slot, call) => (slot === 11 && call <= 3 ? null : blockJson(slot, slot - 1)));
    expect(await released(rpc, { startSlot: 10, lastIndexedSlot: 9 }, 4)).toEqual([10, 11, 12, 13]);
    expect(calls.get(11)).toBe(4);
  });

  it('real skipped slots in between are passed over (the child names the last block as parent)', async () => {
    const { rpc } = fakeRpc(15, (slot) => (slot === 11 || slot === 12 ? null : blockJson(slot, slot === 13 ? 10 : slot - 1)));
    expect(await released(rpc, { startSlot: 10, lastIndexedSlot: 9 }, 4)).toEqual([10, 13, 14, 15]);
  });

  it('a skipped run with a rewind inside it: 11–12 skipped, 13 names 12 as parent → 12 is fetched again, then 12, 13 follow 10', async () => {
    const { rpc } = fakeRpc(14, (slot, call) => {
      if (slot === 11) return null;
      if (slot === 12) return call === 1 ? null : blockJson(12, 10);
      return blockJson(slot, slot - 1);
    });
    expect(await released(rpc, { startSlot: 10, lastIndexedSlot: 9 }, 4)).toEqual([10, 12, 13, 14]);
  });

  it('a block whose parent is older than the last indexed slot (another fork) is not released; it is asked for again', async () => {
    // Slot 12 first comes from another fork (parent 10, but 11 was indexed); later the node answers with the right block.
    const { rpc, calls } = fakeRpc(13, (slot, call) => (slot === 12 && call === 1 ? blockJson(12, 10) : blockJson(slot, slot - 1)));
    expect(await released(rpc, { startSlot: 10, lastIndexedSlot: 9 }, 4)).toEqual([10, 11, 12, 13]);
    expect(calls.get(12)).toBe(2);
  });

  it('a child whose named parent stays "skipped" is asked for again: once it names another parent, both move on', async () => {
    // Slot 11 never exists; slot 12 first names 11 (a fork the node drops), later 10.
    const { rpc, calls } = fakeRpc(13, (slot, call) => (slot === 11 ? null : slot === 12 ? blockJson(12, call === 1 ? 11 : 10) : blockJson(slot, slot - 1)));
    expect(await released(rpc, { startSlot: 10, lastIndexedSlot: 9 }, 3)).toEqual([10, 12, 13]);
    expect(calls.get(12)).toBeGreaterThanOrEqual(2);
  });

  it('unanchored (empty store, --start-slot): a start slot first answered "skipped" is fetched again when the next block names it', async () => {
    const { rpc, calls } = fakeRpc(14, (slot, call) => (slot === 10 && call === 1 ? null : blockJson(slot, slot - 1)));
    expect(await released(rpc, { startSlot: 10, lastIndexedSlot: null }, 5)).toEqual([10, 11, 12, 13, 14]);
    expect(calls.get(10)).toBe(2);
  });

  it('abort ends the poller at once, even while a getBlock call hangs', async () => {
    const rpc = {
      url: 'fake://node',
      getSlot: async () => 20,
      getBlock: (_slot: number, signal?: AbortSignal) => new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true })),
    } as unknown as SolanaRpc;
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 200);
    const t0 = performance.now();
    for await (const _ of pollBlocks(rpc, { startSlot: 10, lastIndexedSlot: 9, signal: abort.signal, pollIntervalMs: 20 })) void _;
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('a consumer that stops reading (break, no abort) ends the poller and its tip poll', async () => {
    let tipCalls = 0;
    const { rpc } = fakeRpc(1_000, (slot) => blockJson(slot, slot - 1), {
      getSlot: async () => {
        tipCalls++;
        return 1_000;
      },
    });
    const t0 = performance.now();
    for await (const batch of pollBlocks(rpc, { startSlot: 10, lastIndexedSlot: 9, pollIntervalMs: 20 })) {
      expect(batch[0]!.slot).toBe(10);
      break;
    }
    expect(performance.now() - t0).toBeLessThan(2000);
    const after = tipCalls;
    await new Promise((r) => setTimeout(r, 100));
    expect(tipCalls).toBe(after);
  });

  it('a node on another chain than the store (parent never matches): nothing is released', async () => {
    const { rpc } = fakeRpc(12, (slot) => blockJson(slot, slot - 5));
    expect(await released(rpc, { startSlot: 10, lastIndexedSlot: 9 }, 1, 1500)).toEqual([]);
  });
});

describe('resolveStartSlot on an empty store', () => {
  const registry = loadTreeRegistry();
  const [mainnet] = Object.entries(NETWORK_START_SLOTS).find(([, v]) => v.network === 'mainnet-beta')!;
  const node = (genesis: string | Error, first: number) =>
    ({
      url: 'fake://node',
      getGenesisHash: async () => {
        if (genesis instanceof Error) throw genesis;
        return genesis;
      },
      getFirstAvailableBlock: async () => first,
    }) as unknown as SolanaRpc;
  const empty = () => new Indexer(new Store({ path: tempDir() }), registry);

  it('mainnet-beta starts after Light’s network start slot 286193745 (Photon: last = that slot, stream at last+1), a complete history', async () => {
    const complete = { start: 286_193_746, complete: true };
    expect(await resolveStartSlot(empty(), node(mainnet, 100), undefined)).toEqual({ start: 286_193_746, lastIndexed: null, history: complete });
    expect(await resolveStartSlot(empty(), node(mainnet, 286_193_746), undefined)).toEqual({ start: 286_193_746, lastIndexed: null, history: complete });
  });

  it('a mainnet node that has pruned that slot is refused with what to do', async () => {
    await expect(resolveStartSlot(empty(), node(mainnet, 300_000_000), undefined)).rejects.toThrow(StartSlotUnavailable);
    await expect(resolveStartSlot(empty(), node(mainnet, 300_000_000), undefined)).rejects.toThrow(/no blocks before slot 300000000, but Light Protocol state starts after slot 286193745: index from an archival node, or pass --start-slot/);
    // --start-slot accepts it.
    expect(await resolveStartSlot(empty(), node(mainnet, 300_000_000), 300_000_000)).toEqual({ start: 300_000_000, lastIndexed: null, history: { start: 300_000_000, complete: false } });
  });

  it('another cluster (or a node without getGenesisHash) starts at its first available block: a complete history from block 0 or 1 only', async () => {
    expect(await resolveStartSlot(empty(), node(hash(7), 3), undefined)).toEqual({ start: 3, lastIndexed: null, history: { start: 3, complete: false } });
    expect(await resolveStartSlot(empty(), node(hash(7), 1), undefined)).toEqual({ start: 1, lastIndexed: null, history: { start: 1, complete: true } });
    expect(await resolveStartSlot(empty(), node(new SolanaRpcError(-32601, 'Method not found'), 0), undefined)).toEqual({ start: 0, lastIndexed: null, history: { start: 0, complete: true } });
  });

  it('a JSON-RPC error other than "method not found" (a 429) is retried, not taken for an unknown cluster', async () => {
    let calls = 0;
    const limited = {
      url: 'fake://node',
      getGenesisHash: async () => {
        if (++calls < 2) throw new SolanaRpcError(-32429, 'rate limited');
        return mainnet;
      },
      getFirstAvailableBlock: async () => 300_000_000,
    } as unknown as SolanaRpc;
    await expect(resolveStartSlot(empty(), limited, undefined)).rejects.toThrow(StartSlotUnavailable);
    expect(calls).toBe(2);
  });

  it('abort ends the start-slot lookup at once, even while the node does not answer', async () => {
    const hung = {
      url: 'fake://node',
      getGenesisHash: (signal?: AbortSignal) => new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true })),
      getFirstAvailableBlock: async () => 0,
    } as unknown as SolanaRpc;
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 200);
    const t0 = performance.now();
    await expect(resolveStartSlot(empty(), hung, undefined, { signal: abort.signal })).rejects.toThrow(/aborted/);
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('an unreachable node is retried until it answers', async () => {
    let calls = 0;
    const flaky = {
      url: 'fake://node',
      getGenesisHash: async () => {
        if (++calls < 2) throw new Error('ECONNREFUSED');
        return hash(7);
      },
      getFirstAvailableBlock: async () => 5,
    } as unknown as SolanaRpc;
    expect(await resolveStartSlot(empty(), flaky, undefined)).toEqual({ start: 5, lastIndexed: null, history: { start: 5, complete: false } });
    expect(calls).toBe(2);
  });

  it('a store with blocks resumes after its last slot, anchored there unless the blocks came from transaction files', async () => {
    const fromRpc = empty();
    fromRpc.indexBlocks([{ slot: 20, parentSlot: 19, blockTime: 1, blockHeight: 20, blockhash: hash(20), previousBlockhash: hash(19), transactions: [] }]);
    expect(await resolveStartSlot(fromRpc, node(mainnet, 0), undefined)).toEqual({ start: 21, lastIndexed: 20 });
    const fromFiles = empty();
    fromFiles.indexBlocks([{ slot: 20, parentSlot: 19, blockTime: 1, blockHeight: 0, blockhash: '', previousBlockhash: '', transactions: [] }]);
    expect(await resolveStartSlot(fromFiles, node(mainnet, 0), undefined)).toEqual({ start: 21, lastIndexed: null });
  });
});

describe('poller: batching while catching up', () => {
  /** Batch sizes yielded for slots 1..`tip` of a node whose getBlock answers after `delayMs`, while the consumer takes `workMs` (synchronously) per batch. */
  async function batchSizes(tip: number, delayMs: number, workMs: number, opts: { concurrency?: number; lingerMs?: number } = {}) {
    const { rpc } = fakeRpc(tip, (slot) => blockJson(slot, slot - 1));
    const slow = { ...rpc, url: rpc.url, getSlot: rpc.getSlot, getBlock: async (slot: number) => (await new Promise((r) => setTimeout(r, delayMs)), rpc.getBlock(slot)) } as unknown as SolanaRpc;
    const abort = new AbortController();
    const sizes: number[] = [];
    const slots: number[] = [];
    for await (const batch of pollBlocks(slow, { startSlot: 1, lastIndexedSlot: null, pollIntervalMs: 20, signal: abort.signal, ...opts })) {
      sizes.push(batch.length);
      slots.push(...batch.map((b) => b.slot));
      const until = Date.now() + workMs;
      while (Date.now() < until); // a synchronous write transaction
      if (slots.length >= tip) abort.abort();
    }
    return { sizes, slots };
  }

  it('far behind the tip, blocks that arrive one by one are gathered into few batches, in order', async () => {
    const { sizes, slots } = await batchSizes(300, 2, 5, { concurrency: 10 });
    expect(slots).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    // Without lingering nearly every block would be its own batch (and its own commit).
    expect(sizes.length).toBeLessThan(60);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(100);
  });

  it('near the tip every block is released as soon as it is ready (no lingering)', async () => {
    const started = performance.now();
    const { slots } = await batchSizes(12, 1, 0, { concurrency: 10, lingerMs: 10_000 });
    expect(slots).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    // One linger would take 10 s.
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('lingerMs 0 turns gathering off', async () => {
    const { sizes } = await batchSizes(100, 2, 3, { concurrency: 10, lingerMs: 0 });
    expect(sizes.length).toBeGreaterThan(30);
  });
});
