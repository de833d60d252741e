/**
 * `refract simulate`: a local Solana JSON-RPC endpoint serving Light transactions, in one of two
 * profiles, both starting at a genesis block at slot 0 (`parentSlot` 0, `previousBlockhash` = its own
 * `blockhash`, as a fresh agave ledger):
 * - `default` (windowChain.ts): one block of generated Light transactions per slot at a steady slot
 *   rate (or replayed from getTransaction files first, `--replay DIR...`), generated when asked and
 *   kept in a pruned window (`keepSlots`);
 * - `sparse` (sparseChain.ts): a mainnet-like chain whose whole history (`historySlots`) exists at
 *   start — Light transactions in about one slot of `lightEvery`, padding (votes, transfers) in every
 *   block, skipped slots — then growing one slot per `slotMs`.
 *
 * Methods: getSlot, getBlockHeight, getBlock (transactionDetails full | signatures | none, rewards),
 * getTransaction (with agave 4.x's `transactionIndex` unless `transactionIndex: false`),
 * getSignaturesForAddress (newest first, before / until / limit ≤ 1000, as agave), getHealth,
 * getFirstAvailableBlock, getGenesisHash, getVersion, and getProgramAccounts / getAccountInfo for its
 * tree and queue accounts (`simulatedTreeAccounts`: what `refract start`'s tree sync reads).
 * JSON-RPC batches (an array of requests in one POST); an optional token-bucket rate limit (`rps`:
 * HTTP 429 with Retry-After); request counters in process (`rpcStats()`) and at `GET /stats`.
 * For a gRPC (Yellowstone) server beside it: `blockJson(slot)`, `tipSlot()`, `onSlot(listener)`.
 *
 * Control over HTTP (for tests and benches driving the binary), on the same port:
 * - `POST /pause`: the chain stops growing at its tip (getSlot, getBlock, getSignaturesForAddress and
 *   the gRPC server all stand still there), so two indexers can be compared at the same slot;
 *   `POST /resume`: it grows again from that slot at the same rate (the slots paused are not made up:
 *   the clock is moved back by the pause). Both answer `{paused, slot}`; `GET /stats` shows `paused`.
 * - routes added by the process embedding the simulator ({@link Simulator.route}): `refract simulate
 *   --grpc-port` adds `POST /geyser/faults` and `GET /geyser/faults` (fault injection into its gRPC
 *   server: src/sim/geyser.ts `applyFaultRequest`).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { DEFAULT_SIM_V2_WEIGHT, type GeneratorOptions } from './generator.ts';
import { type Chain, type ChainStats, RpcError, notAvailable } from './chain.ts';
import { windowChain } from './windowChain.ts';
import { RpcEndpoint, type RpcStats, errorText } from './rpcEndpoint.ts';
import { SimRpcMethods, renderBlock } from './rpcMethods.ts';
import { SlotClock } from './slotClock.ts';
import {
  DEFAULT_HISTORY_SLOTS,
  DEFAULT_LIGHT_EVERY,
  DEFAULT_LIGHT_PER_SLOT,
  DEFAULT_PADDING_TXS,
  DEFAULT_SKIP_EVERY,
  MAX_PADDING_TXS,
  sparseChain,
} from './sparseChain.ts';

export { DEFAULT_HISTORY_SLOTS, DEFAULT_LIGHT_EVERY, DEFAULT_LIGHT_PER_SLOT, DEFAULT_PADDING_TXS, DEFAULT_SKIP_EVERY, MAX_PADDING_TXS };
export type { RpcStats } from './rpcEndpoint.ts';
export { simulatedTreeAccounts } from './rpcMethods.ts';

/** Simulator options. */
export interface SimulatorOptions {
  port?: number;
  host?: string;
  /** `default` (a pruned window of generated blocks, the default) or `sparse` (a mainnet-like full history). */
  profile?: 'default' | 'sparse';
  /** Milliseconds per slot (default 400). */
  slotMs?: number;
  /**
   * Default profile: generated transactions per block (default 8). Sparse profile: the most Light
   * transactions of a Light slot, which holds 1 … this many (default {@link DEFAULT_LIGHT_PER_SLOT}).
   */
  txsPerBlock?: number;
  /** Default profile: directories of getTransaction JSON files replayed first, one slot per source slot, in slot order. */
  replay?: string[];
  /** Default profile: stop generating after replay (default false: generate forever). */
  replayOnly?: boolean;
  seed?: number;
  owners?: number;
  /**
   * Default profile: newest generated blocks kept (default {@link DEFAULT_KEEP_SLOTS}); older slots
   * answer as pruned. An integer ≥ 1, else startSimulator throws a RangeError.
   */
  keepSlots?: number;
  /** The generator's memory bounds (GeneratorOptions maxHeldAccounts / maxAddresses) and, for tests, its batched trees (v2Tree, v2Queue, v2RootHistoryCapacity, v2AddressTree); defaults there. */
  generatorBounds?: Pick<GeneratorOptions, 'maxHeldAccounts' | 'maxAddresses' | 'v2Tree' | 'v2Queue' | 'v2RootHistoryCapacity' | 'v2AddressTree'>;
  /**
   * Relative weight of instruction-based (v2) transactions on the batched trees bmt1 and amt2 beside the legacy
   * kinds (GeneratorOptions.v2Weight; default profile: 0 here, `refract simulate` and `npm start` pass
   * DEFAULT_SIM_V2_WEIGHT; sparse profile: DEFAULT_SIM_V2_WEIGHT). Ignored (no v2 transactions) when
   * replayed transactions use that tree.
   */
  v2Weight?: number;
  /** Sparse profile: slots of history at start (the tip is this slot; default {@link DEFAULT_HISTORY_SLOTS}). */
  historySlots?: number;
  /** Sparse profile: about one slot in N holds Light transactions (default {@link DEFAULT_LIGHT_EVERY}). */
  lightEvery?: number;
  /** Sparse profile: non-Light transactions per block (default {@link DEFAULT_PADDING_TXS}, at most {@link MAX_PADDING_TXS}). */
  paddingTxs?: number;
  /** Sparse profile: about one slot in N is skipped (getBlock -32007; default {@link DEFAULT_SKIP_EVERY}; 0 = none). */
  skipEvery?: number;
  /**
   * Provider-style rate limit: a token bucket of N requests per second (each request of a batch
   * counts); past it HTTP 429 with `Retry-After`. Default: none.
   */
  rps?: number;
  /** getTransaction answers agave 4.x's `transactionIndex` (default true; false = an older node). */
  transactionIndex?: boolean;
  /**
   * Fault switch for tests: one Light transaction in N (a hash of the seed and its signature; forester
   * transactions included) is left out of getSignaturesForAddress answers for the account-compression
   * program only (listing by tree or queue, getTransaction and getBlock still show it). Default 0: none.
   */
  hideFromProgramListing?: number;
  log?: Logger;
}

/** Blocks the simulator keeps by default (≈ 20 minutes of 400 ms slots; ≈ 12 KB per 8-transaction block). */
export const DEFAULT_KEEP_SLOTS = 3000;

/** Counts describing what the simulator holds in memory. */
export type SimulatorStats = ChainStats;

/** A running simulator. */
export interface Simulator {
  server: Server;
  url: string;
  profile: 'default' | 'sparse';
  /** Current slot (the clock; the default profile's tip). */
  slot(): number;
  /** The newest produced slot (getSlot's answer; never a skipped slot). */
  tipSlot(): number;
  /** What is held in memory now (kept blocks, indexed signatures, window). */
  stats(): SimulatorStats;
  /** Requests answered so far (by method, batches, 429s). */
  rpcStats(): RpcStats;
  /** Sets the request counters back to zero. */
  resetRpcStats(): void;
  /**
   * The getBlock JSON of `slot` as getBlock with encoding base64 and full transactions answers it;
   * null for a skipped slot. Rejects (RpcError -32004 / -32001) for a slot not produced yet or pruned.
   */
  blockJson(slot: number): Promise<Record<string, unknown> | null>;
  /**
   * Calls `listener` once for each new produced slot (skipped slots are not announced), in order, as
   * the chain advances after this call; returns the unsubscribe function.
   */
  onSlot(listener: (slot: number) => void): () => void;
  /** Signatures the fault switch left out of the program's listing (`hideFromProgramListing`), ascending. */
  hiddenSignatures(): string[];
  /** Stops the chain at its tip (`POST /pause`); returns the tip. Idempotent. */
  pause(): number;
  /** Lets the chain grow again from its tip at the same rate (`POST /resume`); returns the tip. Idempotent. */
  resume(): number;
  /** True while paused. */
  paused(): boolean;
  /**
   * Serves `handler` at `method path` on the simulator's HTTP port (before JSON-RPC: a POST to that
   * path is not a JSON-RPC request). The handler gets the parsed JSON body (undefined when empty) and
   * returns the JSON answer (HTTP 200); a RangeError it throws answers HTTP 400 `{error}`, any other
   * error HTTP 500 `{error}`.
   */
  route(method: 'GET' | 'POST', path: string, handler: (body: unknown) => unknown): void;
  /**
   * The Light transactions held, ascending (slot, index): sparse profile every one up to the tip; default
   * profile every transaction of the kept blocks.
   */
  lightTransactions(): { signature: string; slot: number; index: number }[];
  close(): Promise<void>;
}

/** Checks a positive integer option. */
function checkInt(name: string, v: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isSafeInteger(v) || v < min || v > max) throw new RangeError(`simulator ${name} must be an integer from ${min} to ${max}, got ${v}`);
  return v;
}

/** The chain of `profile`, from the options (validated: RangeError naming the option). */
function makeChain(profile: 'default' | 'sparse', opts: SimulatorOptions, slotMs: number, keepSlots: number): Chain {
  const seed = opts.seed ?? 1;
  const hide = checkInt('hideFromProgramListing', opts.hideFromProgramListing ?? 0, 0);
  if (profile === 'sparse') {
    const skipEvery = checkInt('skipEvery', opts.skipEvery ?? DEFAULT_SKIP_EVERY, 0);
    if (skipEvery === 1) throw new RangeError('simulator skipEvery must be 0 (no skipped slots) or ≥ 2, got 1');
    opts.log?.info({ historySlots: opts.historySlots ?? DEFAULT_HISTORY_SLOTS }, 'simulator: generating the sparse history');
    return sparseChain({
      slotMs,
      seed,
      owners: opts.owners ?? 200,
      v2Weight: opts.v2Weight ?? DEFAULT_SIM_V2_WEIGHT,
      generatorBounds: opts.generatorBounds,
      historySlots: checkInt('historySlots', opts.historySlots ?? DEFAULT_HISTORY_SLOTS, 1, 2 ** 32),
      lightEvery: checkInt('lightEvery', opts.lightEvery ?? DEFAULT_LIGHT_EVERY, 1),
      lightMaxPerSlot: checkInt('txsPerBlock', opts.txsPerBlock ?? DEFAULT_LIGHT_PER_SLOT, 1, 1000),
      paddingTxs: checkInt('paddingTxs', opts.paddingTxs ?? DEFAULT_PADDING_TXS, 0, MAX_PADDING_TXS),
      skipEvery,
      hideFromProgramListing: hide,
      log: opts.log,
    });
  } else {
    return windowChain({
      slotMs,
      txsPerBlock: checkInt('txsPerBlock', opts.txsPerBlock ?? 8, 0, 100_000),
      keepSlots,
      seed,
      owners: opts.owners ?? 200,
      v2Weight: opts.v2Weight ?? 0,
      generatorBounds: opts.generatorBounds,
      replay: opts.replay ?? [],
      replayOnly: !!opts.replayOnly,
      hideFromProgramListing: hide,
      log: opts.log,
    });
  }
}

/**
 * Starts the simulator; resolves once it listens (the sparse profile generates its history first).
 * Throws a RangeError for an option out of range (`keepSlots` not an integer ≥ 1, …), and the listen
 * error (EADDRINUSE…) when the port cannot be bound.
 */
export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const profile = opts.profile ?? 'default';
  if (profile !== 'default' && profile !== 'sparse') throw new RangeError(`simulator profile must be default or sparse, got ${JSON.stringify(profile)}`);
  const keepSlots = opts.keepSlots ?? DEFAULT_KEEP_SLOTS;
  if (!Number.isSafeInteger(keepSlots) || keepSlots < 1) throw new RangeError(`simulator keepSlots must be an integer ≥ 1, got ${keepSlots}`);
  const slotMs = checkInt('slotMs', opts.slotMs ?? 400, 1);
  const rps = opts.rps ?? 0;
  if (!(rps >= 0) || !Number.isFinite(rps)) throw new RangeError(`simulator rps must be a number ≥ 0 (0 = no limit), got ${rps}`);
  const withIndex = opts.transactionIndex ?? true;
  const chain = makeChain(profile, opts, slotMs, keepSlots);
  const clock = new SlotClock(chain);
  const tip = () => clock.tip();
  const methods = new SimRpcMethods(chain, clock, withIndex);
  const endpoint = new RpcEndpoint((method, params) => methods.handle(method, params), rps);

  // Control routes (module comment): `METHOD path` → handler of the parsed JSON body.
  const routes = new Map<string, (body: unknown) => unknown>();
  routes.set('POST /pause', () => ({ paused: true, slot: clock.pause() }));
  routes.set('POST /resume', () => ({ paused: false, slot: clock.resume() }));
  const serveRoute = (handler: (body: unknown) => unknown, text: string, res: ServerResponse) => {
    const send = (status: number, v: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(v));
    };
    Promise.resolve()
      .then(() => handler(text.trim() === '' ? undefined : JSON.parse(text)))
      .then(
        (v) => send(200, v ?? null),
        (err: Error) => send(err instanceof RangeError || err instanceof SyntaxError ? 400 : 500, { error: err?.message ?? String(err) }),
      );
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const route = routes.get(`${req.method} ${path}`);
    if (route) {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => (text += d));
      req.on('end', () => serveRoute(route, text, res));
      return;
    }
    if (req.method === 'GET') {
      if (path === '/stats') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ profile, slot: tip(), paused: clock.paused(), ...endpoint.counters, chain: chain.stats() }));
      } else if (path === '/health') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found');
      }
      req.resume();
      return;
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      endpoint.answerBody(body).then(
        (r) => {
          res.writeHead(r.status, r.headers);
          res.end(r.text);
        },
        (err) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(errorText(null, -32603, `Internal error: ${(err as Error)?.message}`));
        },
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8899, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : (opts.port ?? 8899);
  const url = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  if (profile === 'sparse') {
    const st = chain.stats();
    opts.log?.info(
      { url, profile, slotMs, tip: tip(), lightTransactions: st.lightTransactions, lightSlots: st.keptBlocks, historyMs: st.historyMs, heapMb: Math.round(process.memoryUsage().heapUsed / 1e6), rps: rps || undefined },
      'Solana RPC simulator listening',
    );
  } else {
    opts.log?.info({ url, profile, slotMs, keepSlots, rps: rps || undefined }, 'Solana RPC simulator listening');
  }

  // onSlot: one ticker while someone listens, announcing each produced slot once, in order.
  const listeners = new Set<(slot: number) => void>();
  let announced = -1;
  let ticker: ReturnType<typeof setInterval> | null = null;
  const tick = () => {
    const tipNow = tip();
    for (let s = announced + 1; s <= tipNow && listeners.size; s++) {
      announced = s;
      if (!chain.produced(s)) continue;
      for (const l of [...listeners]) {
        try {
          l(s);
        } catch (err) {
          opts.log?.error({ err, slot: s }, 'simulator: an onSlot listener threw');
        }
      }
    }
  };
  let closing: Promise<void> | null = null;

  return {
    server,
    url,
    profile,
    slot: () => tip(),
    tipSlot: () => tip(),
    stats: () => chain.stats(),
    rpcStats: () => ({ ...endpoint.counters, requests: { ...endpoint.counters.requests } }),
    resetRpcStats: () => endpoint.resetCounters(),
    async blockJson(slot) {
      if (slot > tip()) throw notAvailable(slot);
      try {
        return JSON.parse(renderBlock(await chain.block(slot), 'full', true)) as Record<string, unknown>;
      } catch (err) {
        if (err instanceof RpcError && err.code === -32007) return null;
        throw err;
      }
    },
    onSlot(listener) {
      if (listeners.size === 0) {
        announced = tip();
        // Every few ms, so a gRPC server hears of a slot within that of the clock making it (its latency is measured from there).
        ticker = setInterval(tick, Math.max(1, Math.min(5, Math.floor(slotMs / 4))));
        ticker.unref?.();
      }
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && ticker) {
          clearInterval(ticker);
          ticker = null;
        }
      };
    },
    hiddenSignatures: () => chain.hidden(),
    pause: () => clock.pause(),
    resume: () => clock.resume(),
    paused: () => clock.paused(),
    route(method, path, handler) {
      routes.set(`${method} ${path}`, handler);
    },
    lightTransactions: () => chain.lightTransactions(),
    close: () => {
      if (ticker) clearInterval(ticker);
      ticker = null;
      listeners.clear();
      chain.close();
      closing ??= new Promise<void>((r) => {
        server.close(() => r());
        // keep-alive connections (an indexer's pooled fetch) would hold close() until they idle out (5 s)
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
