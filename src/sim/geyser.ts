/**
 * A Yellowstone (Dragon's Mouth) gRPC server over a simulated chain, for `refract simulate --grpc-port`
 * and tests: `/geyser.Geyser/Subscribe` (bidirectional stream) plus the cheap unary calls (Ping, GetSlot,
 * GetBlockHeight, GetLatestBlockhash, GetVersion, SubscribeReplayInfo), on @grpc/grpc-js with the message
 * codecs of `@triton-one/yellowstone-grpc`. Blocks come from a {@link GeyserSource} (getBlock JSON, as the
 * simulator's RPC answers them) and are converted by src/sim/yellowstoneFromJson.ts. Here: the types, the
 * service definition, the server's wiring and the fault requests; the published slots and their blocks
 * are src/sim/geyserPublisher.ts, one `Subscribe` stream (filters, replay, faults) src/sim/geyserSubscription.ts.
 *
 * What it does as the real server does (yellowstone-grpc-geyser `grpc.rs`, `filter.rs`):
 * - filters: `transactions` (vote, failed, signature, accountInclude / accountExclude / accountRequired
 *   against static and loaded keys), `blocks` (accountInclude on the transactions; one message per block
 *   and filter even when no transaction matches; includeTransactions), `blocksMeta`, `slots`
 *   (filterByCommitment), `commitment` (processed by default), `ping` (answered with a pong, the filters
 *   kept); a later request replaces the filters; a server ping every `pingIntervalMs` (10 s);
 * - per slot, in this order: the processed slot status, the slot's transactions in block order, its block
 *   meta, its block, then the slot status of the commitment; skipped slots send nothing;
 * - `fromSlot`: the slots from there on are sent first (replay), then the live ones; a slot before the
 *   window of the last `replaySlots` (default 150) published slots is refused with INTERNAL
 *   `broadcast from <fromSlot> is not available, last available: <first>`, the real server's text;
 * - empty filter values (`slots: {x: {}}`), which a prost client leaves out of the map entry, read as
 *   default filters (the package's decoder would drop them).
 * The simulated chain has one commitment: every published slot is final, whatever the request asks.
 * The window holds slots published before the server started too (the source is asked for them).
 *
 * Faults ({@link GeyserFaults}) are one-shot switches, consumed by the first subscription that meets
 * them: drop the stream after N messages, leave out one message, stall, refuse the replay, start the
 * replay later than asked. Pings and pongs are not counted as messages.
 *
 * Through the binary (`refract simulate --grpc-port N`), a test sets them over the simulator's HTTP
 * port ({@link applyFaultRequest}): `POST /geyser/faults` with a JSON object of one or more of
 * - `{"dropAfter": n}`: end the stream that sends the n-th next data message (UNAVAILABLE `simulated drop`);
 * - `{"skip": n}` or `{"skip": {"kind": "block", "nth": n, "slot": s}}`: leave out the n-th next data
 *   message (of that kind: `slot`, `block`, `blockMeta`, `transaction`; of that slot; nth default 1);
 *   with the daemon's `blocks` subscription only a lost `block` message loses data (a `gap`);
 * - `{"stall": {"after": n, "ms": m}}`: after the n-th next data message that subscription sends
 *   nothing, pings included, for m ms (absent: until the client goes away);
 * - `{"replayUnavailable": true}`: refuse the next subscription's fromSlot as outside the window;
 * - `{"replayStartsLater": k}`: start the next replay k slots after the fromSlot asked for;
 * - `{"clear": true}`: drop every pending fault first.
 * "Next" counts the messages of the newest open subscription (the client's current one: a client
 * may give a stream up without cancelling it, and the server streams on to it until it notices) from
 * the request on. The answer (and `GET /geyser/faults`)
 * is `{pending, stats}`: the switches not consumed yet, as {@link GeyserFaults} fields (`dropIn`,
 * `stallIn`: the relative counts; a skip by what it waits for), and {@link GeyserServerStats}
 * (`stats.faults` lists those that fired). An invalid body is HTTP 400 `{error}` and changes nothing.
 */
import grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import {
  GetBlockHeightRequest,
  GetBlockHeightResponse,
  GetLatestBlockhashRequest,
  GetLatestBlockhashResponse,
  GetSlotRequest,
  GetSlotResponse,
  GetVersionRequest,
  GetVersionResponse,
  PingRequest,
  PongResponse,
  SubscribeReplayInfoRequest,
  SubscribeReplayInfoResponse,
  SubscribeRequest,
  SubscribeRequestFilterAccounts,
  SubscribeRequestFilterBlocks,
  SubscribeRequestFilterBlocksMeta,
  SubscribeRequestFilterEntry,
  SubscribeRequestFilterSlots,
  SubscribeRequestFilterTransactions,
  SubscribeUpdate,
} from '@triton-one/yellowstone-grpc';
import type { SolanaRpc } from '../solana/rpcClient.ts';
import { GeyserPublisher } from './geyserPublisher.ts';
import { type GeyserServerState, GeyserSubscription } from './geyserSubscription.ts';
import type { GeyserBlock } from './yellowstoneFromJson.ts';

export { updatesForBlock } from './geyserSubscription.ts';

/** The chain the server streams (the simulator implements it). */
export interface GeyserSource {
  /** getBlock JSON of `slot` (base64 transactions, full details); null for a skipped slot; throws when not produced yet or pruned. */
  blockJson(slot: number): Promise<object | null>;
  /** The newest slot produced. */
  tipSlot(): number;
  /** Calls `listener` with each new slot as the chain advances; returns the unsubscribe function. */
  onSlot(listener: (slot: number) => void): () => void;
}

/**
 * A {@link GeyserSource} over a Solana JSON-RPC node (the simulator's own RPC, or any node): blocks by
 * getBlock (null for a skipped slot), the tip by getSlot every `pollMs` (default 100), and one `onSlot`
 * call per slot the tip passes. `close()` stops the polling.
 */
export async function rpcGeyserSource(
  rpc: Pick<SolanaRpc, 'getSlot' | 'getBlock'>,
  opts: { pollMs?: number; log?: Logger } = {},
): Promise<GeyserSource & { close(): void }> {
  let tip = await rpc.getSlot();
  const listeners = new Set<(slot: number) => void>();
  let polling = false;
  const timer = setInterval(() => {
    if (polling) return;
    polling = true;
    rpc
      .getSlot()
      .then((slot) => {
        while (tip < slot) {
          tip++;
          for (const l of listeners) l(tip);
        }
      })
      .catch((err) => opts.log?.warn({ err: (err as Error).message }, 'geyser: getSlot failed'))
      .finally(() => {
        polling = false;
      });
  }, opts.pollMs ?? 100);
  return {
    blockJson: async (slot) => (await rpc.getBlock(slot)) as object | null,
    tipSlot: () => tip,
    onSlot: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    close: () => clearInterval(timer),
  };
}

/** One-shot fault switches (module comment); set them on `server.faults` at any time. */
export interface GeyserFaults {
  /** End the stream with UNAVAILABLE once a subscription has sent this many messages. */
  dropAfter?: number;
  /** Leave out the first message for which this returns true (never sent). */
  skip?: (update: SubscribeUpdate) => boolean;
  /** Once a subscription has sent this many messages, send nothing (pings included) … */
  stallAfter?: number;
  /** … for this long (ms; default: until the client goes away). */
  stallMs?: number;
  /** Refuse the next subscription's fromSlot as outside the replay window, whatever it is. */
  replayUnavailable?: boolean;
  /** Start the next replay this many slots after the fromSlot asked for. */
  replayStartsLater?: number;
  /** As dropAfter, counted from when it is set over every subscription: the stream that sends the N-th next message ends. */
  dropIn?: number;
  /** As stallAfter, counted from when it is set over every subscription (for stallMs). */
  stallIn?: number;
  /**
   * Not a fault: while set, skip, dropIn and stallIn look only at the newest open subscription (the
   * client's current one), not at older ones it gave up without cancelling (still streaming until the
   * server notices). {@link applyFaultRequest} sets it.
   */
  newestOnly?: boolean;
}

/** Server options. */
export interface GeyserServerOptions {
  /** Port (default 0: any free port). */
  port?: number;
  /** Host (default 127.0.0.1). */
  host?: string;
  source: GeyserSource;
  faults?: GeyserFaults;
  /** Slots a `fromSlot` may go back (default 150, the plugin's `replay_stored_slots` default). */
  replaySlots?: number;
  /** Required `x-token` header, when set. */
  xToken?: string;
  /** Server ping interval (ms, default 10000). */
  pingIntervalMs?: number;
  log?: Logger;
}

/** What the server did, for tests and logs. */
export interface GeyserServerStats {
  /** Subscribe calls so far. */
  subscriptions: number;
  /** Subscribe calls open now. */
  open: number;
  /** Messages sent (pings and pongs excluded). */
  messages: number;
  /** Faults that fired, in order (`drop`, `skip`, `stall`, `replay-unavailable`, `replay-late`, `replay-window`). */
  faults: string[];
  /** The last fromSlot asked for. */
  lastFromSlot: number | null;
  /** Pings sent, and pongs sent back to client pings. */
  pings: number;
  pongs: number;
}

/** A running server. */
export interface GeyserServer {
  /** `http://host:port`, for the client. */
  url: string;
  port: number;
  /** The fault switches (mutable). */
  faults: GeyserFaults;
  /** The newest slot published (streamed to live subscribers). */
  publishedUpTo(): number;
  /** The oldest slot a fromSlot may ask for. */
  firstAvailable(): number;
  stats(): GeyserServerStats;
  close(): Promise<void>;
}

const enc =
  <T>(codec: { encode(m: T): { finish(): Uint8Array } }) =>
  (m: T) =>
    Buffer.from(codec.encode(m).finish());
const unary = <Req, Res>(name: string, req: { decode(b: Uint8Array): Req; encode(m: Req): { finish(): Uint8Array } }, res: { decode(b: Uint8Array): Res; encode(m: Res): { finish(): Uint8Array } }) => ({
  path: `/geyser.Geyser/${name}`,
  requestStream: false,
  responseStream: false,
  requestSerialize: enc(req),
  requestDeserialize: (b: Buffer) => req.decode(b),
  responseSerialize: enc(res),
  responseDeserialize: (b: Buffer) => res.decode(b),
});

/** Field numbers of SubscribeRequest's maps, with the default of their values. */
const MAP_FIELDS: Record<number, [keyof SubscribeRequest, () => object]> = {
  1: ['accounts', () => SubscribeRequestFilterAccounts.fromPartial({})],
  2: ['slots', () => SubscribeRequestFilterSlots.fromPartial({})],
  3: ['transactions', () => SubscribeRequestFilterTransactions.fromPartial({})],
  4: ['blocks', () => SubscribeRequestFilterBlocks.fromPartial({})],
  5: ['blocksMeta', () => SubscribeRequestFilterBlocksMeta.fromPartial({})],
  8: ['entry', () => SubscribeRequestFilterEntry.fromPartial({})],
  10: ['transactionsStatus', () => SubscribeRequestFilterTransactions.fromPartial({})],
};

/**
 * SubscribeRequest from its wire bytes, keeping map entries without a value (prost leaves a default
 * value out; the package's decoder then drops the entry) as default filters.
 */
export function decodeSubscribeRequest(buf: Uint8Array): SubscribeRequest {
  const req = SubscribeRequest.decode(buf);
  let at = 0;
  const varint = () => {
    let v = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const b = buf[at++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return v;
    }
    return v;
  };
  while (at < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key & 7;
    if (wire === 0) varint();
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const len = varint();
      const end = at + len;
      const map = MAP_FIELDS[field];
      if (map) {
        // A map entry: key = field 1 (string), value = field 2 (message).
        let name: string | null = null;
        let hasValue = false;
        while (at < end) {
          const k = varint();
          if (k === (1 << 3) + 2) {
            const l = varint();
            name = Buffer.from(buf.subarray(at, at + l)).toString('utf8');
            at += l;
          } else if ((k & 7) === 2) {
            if (k >> 3 === 2) hasValue = true;
            at += varint();
          } else if ((k & 7) === 0) varint();
          else at += (k & 7) === 1 ? 8 : 4;
        }
        const target = req[map[0]] as Record<string, object>;
        if (name !== null && !hasValue && !(name in target)) target[name] = map[1]();
      }
      at = end;
    } else break;
  }
  return req;
}

const SERVICE = {
  Subscribe: {
    path: '/geyser.Geyser/Subscribe',
    requestStream: true,
    responseStream: true,
    requestSerialize: enc(SubscribeRequest),
    requestDeserialize: (b: Buffer) => decodeSubscribeRequest(b),
    responseSerialize: enc(SubscribeUpdate),
    responseDeserialize: (b: Buffer) => SubscribeUpdate.decode(b),
  },
  Ping: unary('Ping', PingRequest, PongResponse),
  GetSlot: unary('GetSlot', GetSlotRequest, GetSlotResponse),
  GetBlockHeight: unary('GetBlockHeight', GetBlockHeightRequest, GetBlockHeightResponse),
  GetLatestBlockhash: unary('GetLatestBlockhash', GetLatestBlockhashRequest, GetLatestBlockhashResponse),
  GetVersion: unary('GetVersion', GetVersionRequest, GetVersionResponse),
  SubscribeReplayInfo: unary('SubscribeReplayInfo', SubscribeReplayInfoRequest, SubscribeReplayInfoResponse),
} satisfies grpc.ServiceDefinition;

/** Starts the server; resolves once it listens. */
export async function startGeyserServer(opts: GeyserServerOptions): Promise<GeyserServer> {
  const { source, log } = opts;
  const host = opts.host ?? '127.0.0.1';
  const replaySlots = opts.replaySlots ?? 150;
  const faults: GeyserFaults = opts.faults ?? {};
  const stats: GeyserServerStats = { subscriptions: 0, open: 0, messages: 0, faults: [], lastFromSlot: null, pings: 0, pongs: 0 };
  const publisher = new GeyserPublisher(source, replaySlots, log);
  const tokenOk = (md: grpc.Metadata) => !opts.xToken || md.get('x-token')[0]?.toString() === opts.xToken;
  const state: GeyserServerState = { publisher, faults, stats, pingIntervalMs: opts.pingIntervalMs ?? 10_000, tokenOk, openIds: new Set(), sessions: new Set(), log };

  const checked =
    <Req, Res>(fn: (req: Req) => Res) =>
    (call: grpc.ServerUnaryCall<Req, Res>, cb: grpc.sendUnaryData<Res>) => {
      if (!tokenOk(call.metadata)) return cb({ code: grpc.status.UNAUTHENTICATED, details: 'No valid auth token' });
      try {
        cb(null, fn(call.request));
      } catch (err) {
        cb({ code: grpc.status.INTERNAL, details: (err as Error).message });
      }
    };
  /** A unary call answered from the newest published block (INTERNAL while there is none). */
  const fromLatest =
    <Req, Res>(answer: (b: GeyserBlock) => Res) =>
    (call: grpc.ServerUnaryCall<Req, Res>, cb: grpc.sendUnaryData<Res>) => {
      if (!tokenOk(call.metadata)) return cb({ code: grpc.status.UNAUTHENTICATED, details: 'No valid auth token' });
      publisher.latest().then(
        (b) => (b ? cb(null, answer(b)) : cb({ code: grpc.status.INTERNAL, details: 'block is not available yet' })),
        (err) => cb({ code: grpc.status.INTERNAL, details: (err as Error).message }),
      );
    };
  const server = new grpc.Server();
  server.addService(SERVICE, {
    Subscribe: (call: grpc.ServerDuplexStream<SubscribeRequest, SubscribeUpdate>) => new GeyserSubscription(call, state),
    Ping: checked((r: PingRequest) => ({ count: r.count })),
    GetSlot: checked(() => ({ slot: String(publisher.published) })),
    GetVersion: checked(() => ({ version: JSON.stringify({ version: { package: 'refract-sim-geyser', version: '0.1.0' }, extra: { hostname: 'refract-simulator' } }) })),
    SubscribeReplayInfo: checked(() => ({ firstAvailable: String(publisher.firstAvailable()) })),
    GetBlockHeight: fromLatest<GetBlockHeightRequest, GetBlockHeightResponse>((b) => ({ blockHeight: b.meta.blockHeight?.blockHeight ?? '0' })),
    GetLatestBlockhash: fromLatest<GetLatestBlockhashRequest, GetLatestBlockhashResponse>((b) => ({
      slot: b.meta.slot,
      blockhash: b.meta.blockhash,
      lastValidBlockHeight: String(Number(b.meta.blockHeight?.blockHeight ?? 0) + 300),
    })),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${opts.port ?? 0}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  log?.info({ host, port, replaySlots, tip: publisher.published }, 'geyser: listening');

  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    faults,
    publishedUpTo: () => publisher.published,
    firstAvailable: () => publisher.firstAvailable(),
    stats: () => ({ ...stats, faults: [...stats.faults] }),
    close: async () => {
      if (publisher.isClosed) return;
      publisher.close();
      for (const shut of [...state.sessions]) shut();
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1_000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
    },
  };
}

/** What a `skip` fault of {@link applyFaultRequest} waits for (kept for the `pending` answer). */
const skipWhat = new WeakMap<NonNullable<GeyserFaults['skip']>, string>();

/** The kind of a data message (`slot`, `block`, `blockMeta`, `transaction`, …). */
function kindOf(u: SubscribeUpdate): string {
  for (const k of ['slot', 'block', 'blockMeta', 'transaction', 'account', 'entry', 'transactionStatus'] as const) if (u[k]) return k;
  return 'other';
}
/** The slot a data message is about, when it names one. */
function slotOfUpdate(u: SubscribeUpdate): number | undefined {
  const s = u.slot?.slot ?? u.block?.slot ?? u.blockMeta?.slot ?? u.transaction?.slot;
  return s === undefined ? undefined : Number(s);
}

/** The pending switches of `faults` as JSON (a skip predicate by what it waits for). */
export function describeFaults(faults: GeyserFaults): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(faults)) {
    if (v === undefined || k === 'newestOnly') continue;
    out[k] = typeof v === 'function' ? (skipWhat.get(v as NonNullable<GeyserFaults['skip']>) ?? 'a predicate') : v;
  }
  return out;
}

/**
 * Applies a `POST /geyser/faults` body (module comment) to `server.faults`; returns the answer
 * `{pending, stats}`. Throws a RangeError naming the field for an invalid body (nothing is changed).
 */
export function applyFaultRequest(server: Pick<GeyserServer, 'faults' | 'stats'>, body: unknown): { pending: Record<string, unknown>; stats: GeyserServerStats } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new RangeError('the body must be a JSON object of faults: dropAfter, skip, stall, replayUnavailable, replayStartsLater, clear');
  const b = body as Record<string, unknown>;
  const known = new Set(['dropAfter', 'skip', 'stall', 'replayUnavailable', 'replayStartsLater', 'clear']);
  for (const k of Object.keys(b)) if (!known.has(k)) throw new RangeError(`unknown fault ${JSON.stringify(k)} (known: ${[...known].join(', ')})`);
  const count = (field: string, v: unknown, min = 1) => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new RangeError(`${field} must be an integer ≥ ${min}, got ${JSON.stringify(v)}`);
    return v;
  };
  const set: GeyserFaults = {};
  if (b.dropAfter !== undefined) set.dropIn = count('dropAfter', b.dropAfter);
  if (b.skip !== undefined) {
    const s = typeof b.skip === 'number' ? { nth: b.skip } : (b.skip as Record<string, unknown>);
    if (typeof s !== 'object' || s === null || Array.isArray(s)) throw new RangeError('skip must be a count or {kind?, nth?, slot?}');
    for (const k of Object.keys(s)) if (!['kind', 'nth', 'slot'].includes(k)) throw new RangeError(`skip.${k}: unknown field (kind, nth, slot)`);
    const kinds = ['slot', 'block', 'blockMeta', 'transaction'];
    if (s.kind !== undefined && !kinds.includes(s.kind as string)) throw new RangeError(`skip.kind must be one of ${kinds.join(', ')}, got ${JSON.stringify(s.kind)}`);
    const nth = s.nth === undefined ? 1 : count('skip.nth', s.nth);
    const slot = s.slot === undefined ? undefined : count('skip.slot', s.slot, 0);
    const kind = s.kind as string | undefined;
    let seen = 0;
    const pred = (u: SubscribeUpdate) => (kind === undefined || kindOf(u) === kind) && (slot === undefined || slotOfUpdate(u) === slot) && ++seen === nth;
    const ordinal = nth === 1 ? '' : `${nth}${[11, 12, 13].includes(nth % 100) ? 'th' : (['th', 'st', 'nd', 'rd'][nth % 10] ?? 'th')} `;
    skipWhat.set(pred, `the ${ordinal}next ${kind ?? 'data'} message${slot === undefined ? '' : ` of slot ${slot}`}`);
    set.skip = pred;
  }
  if (b.stall !== undefined) {
    const s = b.stall as Record<string, unknown>;
    if (typeof s !== 'object' || s === null || Array.isArray(s)) throw new RangeError('stall must be {after, ms?}');
    for (const k of Object.keys(s)) if (k !== 'after' && k !== 'ms') throw new RangeError(`stall.${k}: unknown field (after, ms)`);
    set.stallIn = count('stall.after', s.after);
    if (s.ms !== undefined) set.stallMs = count('stall.ms', s.ms);
  }
  if (b.replayUnavailable !== undefined) {
    if (typeof b.replayUnavailable !== 'boolean') throw new RangeError(`replayUnavailable must be true or false, got ${JSON.stringify(b.replayUnavailable)}`);
    if (b.replayUnavailable) set.replayUnavailable = true;
  }
  if (b.replayStartsLater !== undefined) set.replayStartsLater = count('replayStartsLater', b.replayStartsLater);
  if (b.clear !== undefined && typeof b.clear !== 'boolean') throw new RangeError(`clear must be true or false, got ${JSON.stringify(b.clear)}`);
  const f = server.faults;
  if (b.clear) for (const k of Object.keys(f) as (keyof GeyserFaults)[]) delete f[k];
  if (set.dropIn !== undefined || set.stallIn !== undefined || set.skip) set.newestOnly = true;
  Object.assign(f, set);
  return { pending: describeFaults(f), stats: server.stats() };
}
