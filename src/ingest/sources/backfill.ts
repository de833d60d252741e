/**
 * Signature backfill: an empty store (or one far behind the node's tip) pays per Light transaction,
 * not per slot. Every transaction that changes compressed state touches the account-compression
 * program, so:
 * 1. **plan** — record the hand-over block: the newest block at or below the node's tip (its real
 *    header, so the live source resumes anchored on it), and the slot the store ends at;
 * 2. **list** — `getSignaturesForAddress(compr6…)`, newest first in pages of 1000, from the tip down to
 *    the store's end; each page's successful signatures go into the store (`backfillSigs`, by slot)
 *    together with the listing cursor in one write transaction (failed transactions are skipped, as
 *    the block path skips them);
 * 3. **fetch** — ascending by slot, chunks cut at slot boundaries: `getTransaction` in JSON-RPC batches
 *    (one by one where the node refuses batches), ordered inside a slot by `transactionIndex` (agave
 *    4.x) or, where the node does not send it and a slot holds several, by the block's signature list
 *    (`getBlock` with `transactionDetails: "signatures"`); each slot becomes a block of only its
 *    Light transactions (no blockhash: not on the node's chain, like a file import's), handed to the
 *    ingest loop, which commits it with the signatures it covers removed (one write transaction);
 * 4. **hand over** — the last item carries the hand-over block: the loop writes its header and ends
 *    the backfill, and the live source starts after it.
 * Blocks without a Light transaction are never fetched. Every request goes through one
 * RequestGovernor (rate, concurrency, 429 / Retry-After). State lives in the store (meta `backfill`,
 * `backfillSigs`), so a SIGKILL at any moment resumes where it stopped, with nothing lost and nothing
 * indexed twice. A listing can still miss transactions (a node's history gap, a provider's index
 * lag): the tree sequence check in the loop (state/sequence.ts, ingest/guard/heal.ts) catches and heals that.
 */
import type { Logger } from 'pino';
import { ACCOUNT_COMPRESSION_PROGRAM_ID } from '../../light/constants.ts';
import type { RequestGovernor } from '../../solana/requestGovernor.ts';
import { METHOD_NOT_FOUND, type SolanaRpc, SolanaRpcError } from '../../solana/rpcClient.ts';
import type { BlockRecord } from '../../store/records.ts';
import type { Store } from '../../store/store.ts';
import type { BlockInfo } from '../../types.ts';
import { fetchBlocks } from '../fetchTransactions.ts';

/** Store metadata name of the backfill state. */
export const BACKFILL_META = 'backfill';
/** Signatures per listing page (the node's maximum). */
const PAGE = 1000;

/** A backfill under way, as the store keeps it (JSON in meta `backfill`). */
export interface BackfillState {
  version: 1;
  phase: 'listing' | 'fetching';
  /** The hand-over block: the newest block at or below the node's tip when the backfill began. */
  target: BlockRecord;
  /** Transactions at or below this slot are not listed (the store's last slot, or the slot before the start). */
  afterSlot: number;
  /** Listing cursor: the oldest signature listed so far (the next page is `before` it); null before the first page. */
  before: string | null;
  /** Slot of that signature (how far down the listing has come). */
  listedDownTo: number;
  /** Successful signatures listed (and kept for fetching). */
  listed: number;
  /** Failed transactions met in the listing (not fetched). */
  failed: number;
  /** Transactions fetched and indexed. */
  indexed: number;
  /** When the backfill began (Unix ms). */
  startedAt: number;
}

/** Backfill settings (config: backfill*, flags --backfill-*). */
export interface BackfillOptions {
  /** Backfill when the node's tip is at least this many slots past where indexing would start (0: never). */
  thresholdSlots: number;
  /** getTransaction requests per JSON-RPC batch (1: no batches). */
  batchSize: number;
  /** Transactions per chunk handed to the loop (one write transaction each). */
  chunkTransactions: number;
  /** Chunks fetched ahead of the one being indexed. */
  prefetchChunks: number;
  signal: AbortSignal;
  log: Logger;
  /** Progress (phase, counts, requests) after each page or chunk. */
  onProgress?: (p: BackfillProgress) => void;
}

/** What the backfill reports (IngestEvent `backfill`; /health, metrics, the progress bar). */
export interface BackfillProgress {
  phase: 'planning' | 'listing' | 'fetching' | 'done';
  targetSlot: number;
  afterSlot: number;
  listedDownTo: number;
  listed: number;
  failed: number;
  indexed: number;
  /** Seconds left at the current pace, null when unknown. */
  etaSeconds: number | null;
  startedAt: number;
}

/** One chunk for the loop: blocks of Light transactions, and what committing them settles. */
export interface BackfillChunk {
  blocks: BlockInfo[];
  /** Listed signatures at or below this slot are indexed once the chunk commits (null: none, e.g. a gap's own fetch). */
  throughSlot: number | null;
  /** Transactions in the chunk (listed ones). */
  count: number;
  /** The last chunk: write this header (the hand-over block) and end the backfill. */
  handOver?: BlockRecord;
}

/** The stored backfill state, or null. */
export function readBackfillState(store: Store): BackfillState | null {
  const v = store.read((r) => r.metaText(BACKFILL_META));
  return v ? (JSON.parse(v) as BackfillState) : null;
}

/** Progress of `s` in a phase. */
export function progressOf(s: BackfillState, phase: BackfillProgress['phase'], etaSeconds: number | null = null): BackfillProgress {
  return { phase, targetSlot: s.target.slot, afterSlot: s.afterSlot, listedDownTo: s.listedDownTo, listed: s.listed, failed: s.failed, indexed: s.indexed, etaSeconds, startedAt: s.startedAt };
}

/**
 * Decides whether to backfill: a stored backfill resumes; otherwise, when the node's tip is at least
 * `thresholdSlots` past `start` (where the live source would begin), a new one is planned (the
 * hand-over block fetched, the state stored) and returned. Null: follow the chain block by block
 * (threshold 0, close enough, or a node without getSignaturesForAddress: logged).
 * @throws SolanaUnavailableError / SolanaRpcError from the node (the caller retries)
 */
export async function planBackfill(store: Store, rpc: SolanaRpc, gov: RequestGovernor, start: number, opts: Pick<BackfillOptions, 'thresholdSlots' | 'signal' | 'log'>): Promise<BackfillState | null> {
  const stored = readBackfillState(store);
  if (stored) return stored;
  if (opts.thresholdSlots <= 0) return null;
  const tip = await gov.run('getSlot', () => rpc.getSlot(opts.signal), { signal: opts.signal });
  if (tip - start < opts.thresholdSlots) return null;
  try {
    await gov.run('getSignaturesForAddress', () => rpc.getSignaturesForAddress(ACCOUNT_COMPRESSION_PROGRAM_ID, { limit: 1 }, opts.signal), { signal: opts.signal });
  } catch (err) {
    if (err instanceof SolanaRpcError && err.code === METHOD_NOT_FOUND) {
      opts.log.warn({ tip, start }, 'the node has no getSignaturesForAddress: following the chain block by block instead of backfilling');
      return null;
    }
    throw err;
  }
  // The hand-over block: the newest produced block at or below the tip (a leader may have skipped the tip's slot).
  let target: BlockRecord | null = null;
  for (let slot = tip; slot >= start && slot > tip - 200 && !target; slot--) {
    const h = await gov.run('getBlock', () => rpc.getBlockHeader(slot, opts.signal), { signal: opts.signal });
    if (h) target = { slot, parentSlot: h.parentSlot, blockTime: h.blockTime ?? 0, blockHeight: h.blockHeight ?? 0, blockhash: h.blockhash, previousBlockhash: h.previousBlockhash };
  }
  if (!target) {
    opts.log.warn({ tip, start }, 'no block found in the 200 slots below the tip: following the chain block by block');
    return null;
  }
  const state: BackfillState = { version: 1, phase: 'listing', target, afterSlot: start - 1, before: null, listedDownTo: target.slot, listed: 0, failed: 0, indexed: 0, startedAt: Date.now() };
  store.write((w) => w.putMetaText(BACKFILL_META, JSON.stringify(state)));
  opts.log.info({ targetSlot: target.slot, afterSlot: state.afterSlot, slots: target.slot - state.afterSlot }, 'backfill planned: listing the account-compression program\'s signatures');
  return state;
}

/**
 * Lists the program's signatures from the tip down to `state.afterSlot` (resuming at `state.before`),
 * storing each page with the cursor; then marks the state `fetching`. Mutates and stores `state`.
 */
export async function listSignatures(store: Store, rpc: SolanaRpc, gov: RequestGovernor, state: BackfillState, opts: BackfillOptions): Promise<void> {
  const began = Date.now();
  const startDown = state.listedDownTo;
  while (state.phase === 'listing' && !opts.signal.aborted) {
    const page = await gov.run('getSignaturesForAddress', () => rpc.getSignaturesForAddress(ACCOUNT_COMPRESSION_PROGRAM_ID, { limit: PAGE, ...(state.before ? { before: state.before } : {}) }, opts.signal), { signal: opts.signal, retry: { log: opts.log } });
    if (opts.signal.aborted) return;
    let end = page.length < PAGE;
    const keep: { slot: number; signature: string }[] = [];
    let failed = 0;
    for (const e of page) {
      if (e.slot <= state.afterSlot) {
        end = true;
        break;
      }
      if (e.slot > state.target.slot) continue; // newer than the hand-over block: the live source has it
      if (e.err !== null && e.err !== undefined) failed++;
      else keep.push({ slot: e.slot, signature: e.signature });
    }
    const last = page[page.length - 1];
    store.write((w) => {
      for (const k of keep) w.putBackfillSignature(k.slot, k.signature, state.listed++ & 0xffffffff);
      state.failed += failed;
      if (last) {
        state.before = last.signature;
        state.listedDownTo = Math.min(state.listedDownTo, Math.max(last.slot, state.afterSlot + 1));
      }
      if (end) state.phase = 'fetching';
      w.putMetaText(BACKFILL_META, JSON.stringify(state));
    });
    const covered = startDown - state.listedDownTo;
    const rate = covered / Math.max(0.001, (Date.now() - began) / 1000);
    opts.onProgress?.(progressOf(state, 'listing', rate > 0 ? (state.listedDownTo - state.afterSlot) / rate : null));
  }
}

/**
 * The listed transactions as chunks in ascending slot order (see the module comment), fetched
 * `prefetchChunks` ahead; the last chunk carries the hand-over block. Reads the listed signatures
 * from the store: on a resumed run, those a committed chunk removed are not fetched again.
 */
export async function* fetchChunks(store: Store, rpc: SolanaRpc, gov: RequestGovernor, state: BackfillState, opts: BackfillOptions): AsyncGenerator<BackfillChunk> {
  const batchSupport = { ok: opts.batchSize > 1 };
  let cursor: number | undefined; // last slot put in a chunk
  let chunkNo = 0; // older chunks' requests go first (p-queue priority): the oldest commits soonest
  let prevSlot = state.afterSlot;
  const pending: Promise<BackfillChunk>[] = [];
  const nextChunk = (): Promise<BackfillChunk> | null => {
    let entries = store.read((r) => r.backfillSignatures(opts.chunkTransactions, cursor));
    if (entries.length === 0) return null;
    // Cut at a slot boundary (a slot is one block: all of its transactions in one chunk).
    if (entries.length === opts.chunkTransactions) {
      const lastSlot = entries[entries.length - 1]!.slot;
      const whole = entries.filter((e) => e.slot !== lastSlot);
      if (whole.length) entries = whole;
      else {
        // One slot holds more than a chunk: take all of it.
        entries = store.read((r) => r.backfillSignatures(Number.MAX_SAFE_INTEGER, cursor, lastSlot));
      }
    }
    const through = entries[entries.length - 1]!.slot;
    cursor = through;
    const parent = prevSlot;
    prevSlot = through;
    return fetchBlocks(rpc, gov, entries, parent, batchSupport, { ...opts, priority: -chunkNo++ }).then((blocks) => ({ blocks, throughSlot: through, count: entries.length }));
  };
  for (;;) {
    while (pending.length <= opts.prefetchChunks) {
      const c = nextChunk();
      if (!c) break;
      c.catch(() => {}); // awaited below in order; a stop leaves the later ones unawaited
      pending.push(c);
    }
    const next = pending.shift();
    if (!next) break;
    const chunk = await next;
    if (opts.signal.aborted) return;
    yield chunk;
  }
  if (!opts.signal.aborted) yield { blocks: [], throughSlot: null, count: 0, handOver: state.target };
}
