/**
 * `minContextSlot` (read-your-writes, issue #27): every method accepts it, as Solana's RPC does, and
 * a request whose slot is not indexed yet waits for it (src/rpc/slotWatcher.ts) instead of the client
 * polling `getIndexerSlot`.
 *
 * Where it goes in `params`:
 * - params object: `{..., minContextSlot: 123, maxWaitMs: 500}`;
 * - params array (positional methods, and `getIndexerSlot`'s `[]`): a trailing config object
 *   `[..., {minContextSlot: 123, maxWaitMs: 500}]` — the last element, when it is an object holding
 *   either key; such an object may hold no other key.
 * Both keys are taken out before the method's own schema sees the params, so every other field is
 * validated exactly as before (strict schemas still reject unknown fields). `null` means absent.
 * Values must be non-negative integers (≤ 2^53 − 1), else -32602 `Invalid params: <field>: …`.
 *
 * Semantics: the request is answered at a context slot ≥ `minContextSlot`. When the store has not
 * reached it, the request waits for the slot's commit, at most `min(maxWaitMs, minContextWaitMs)` ms,
 * then fails with -32016 `Minimum context slot has not been reached` and `data: {contextSlot}` (the
 * indexed slot then; 0 before anything is indexed). `maxWaitMs: 0` never waits (Solana's behaviour).
 * `maxWaitMs` without `minContextSlot` is accepted and has no effect.
 *
 * The check reads the indexed slot in the same read snapshot the handler then reads from, so a
 * successful answer's `context.slot` is ≥ `minContextSlot` and its data include that slot's commit.
 */
import type { MethodDefinition } from './methods/index.ts';
import { type RpcContext, isThenable } from './context.ts';
import { RpcError } from './errors.ts';
import type { Closable } from './slotWatcher.ts';

/** The request's read-your-writes options, validated. */
export interface SlotOptions {
  /** Answer at a context slot ≥ this; undefined: no condition. */
  minContextSlot: number | undefined;
  /** The request's own bound on the wait, ms (the server's bound still applies); undefined: the server's. */
  maxWaitMs: number | undefined;
}

/** `params` without the read-your-writes keys, and their values. */
export interface SplitParams extends SlotOptions {
  params: unknown;
}

/** The keys a trailing config object of array params may hold. */
const KEYS = new Set(['minContextSlot', 'maxWaitMs']);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What a JSON value is, for messages. */
function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return typeof v;
}

/** A non-negative safe integer, undefined for null/absent. @throws RpcError invalidParams naming `field` */
function slotNumber(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
  throw RpcError.invalidParams(`${field}: expected a non-negative integer, got ${describe(v)}`);
}

/**
 * Takes `minContextSlot` / `maxWaitMs` out of a request's params (module comment: where they go).
 * Returns null when the params hold neither (the usual case: nothing is copied), else the params
 * without them and their values.
 * @throws RpcError invalidParams (-32602) for a value that is not a non-negative integer, or a trailing
 *   config object holding another key, naming the field (`minContextSlot`, `params[1].maxWaitMs`, …)
 */
export function splitSlotOptions(params: unknown): SplitParams | null {
  if (typeof params !== 'object' || params === null) return null;
  if (Array.isArray(params)) {
    const n = params.length;
    const last: unknown = n > 0 ? params[n - 1] : undefined;
    if (!isPlainObject(last) || (last.minContextSlot === undefined && last.maxWaitMs === undefined)) return null;
    const at = `params[${n - 1}]`;
    for (const k of Object.keys(last)) {
      if (!KEYS.has(k)) throw RpcError.invalidParams(`${at}.${k}: unknown field (the trailing config object holds only minContextSlot and maxWaitMs)`);
    }
    return {
      params: params.slice(0, n - 1),
      minContextSlot: slotNumber(last.minContextSlot, `${at}.minContextSlot`),
      maxWaitMs: slotNumber(last.maxWaitMs, `${at}.maxWaitMs`),
    };
  }
  const p = params as Record<string, unknown>;
  if (p.minContextSlot === undefined && p.maxWaitMs === undefined) return null;
  const minContextSlot = slotNumber(p.minContextSlot, 'minContextSlot');
  const maxWaitMs = slotNumber(p.maxWaitMs, 'maxWaitMs');
  // fromEntries, not a loop of assignments: an own `__proto__` key stays a plain key.
  const rest = Object.fromEntries(Object.entries(p).filter(([k]) => !KEYS.has(k)));
  return { params: rest, minContextSlot, maxWaitMs };
}

/** Returned by {@link attemptAt} when the snapshot has not reached the slot. */
const NOT_REACHED: unique symbol = Symbol('not reached');

/** `f(v)` now for a plain value, after it settles for a promise. */
function then<T, R>(v: T | Promise<T>, f: (x: T) => R): R | Promise<Awaited<R>> {
  return isThenable(v) ? (v as Promise<T>).then(f) as Promise<Awaited<R>> : f(v as T);
}

/**
 * Runs the handler when the indexed slot read in the handler's own snapshot is ≥ `min` (its
 * `context.slot` then is too); else NOT_REACHED without running it.
 */
function attemptAt(ctx: RpcContext, def: MethodDefinition, params: unknown, min: number): unknown {
  const check = (c: RpcContext) => then(c.data.getIndexedSlot(), (slot) => (slot !== null && slot >= min ? def.handler(c, params) : NOT_REACHED));
  if (def.snapshot === false || !ctx.data.snapshot) return check(ctx);
  return ctx.data.snapshot((data) => check(data === ctx.data ? ctx : { ...ctx, data }));
}

/** The -32016 error with the indexed slot now (a fresh read; 0 before anything is indexed). */
function notReached(ctx: RpcContext): Promise<never> {
  const known = ctx.slots?.slot ?? null;
  return Promise.resolve()
    .then(() => ctx.data.getIndexedSlot())
    .then(
      (s) => s,
      () => null,
    )
    .then((s) => {
      const read = s === null ? null : Number(s);
      throw RpcError.minContextSlotNotReached(Math.max(read ?? 0, known ?? 0));
    });
}

/**
 * Runs `def`'s handler on `params` at a context slot ≥ `min`: at once (synchronously when the handler
 * is) when the store has it, else after waiting for its commit on `ctx.slots` (module comment:
 * bounds, errors). A wait ends early when `conn` closes (the answer could not be written).
 * @returns the handler's result, or a promise of it; the promise rejects with RpcError -32016 when
 *   the slot is not reached in time, or with the handler's error
 */
export function runAtContextSlot(ctx: RpcContext, def: MethodDefinition, params: unknown, min: number, maxWaitMs: number | undefined, conn: Closable | undefined): unknown {
  const first = attemptAt(ctx, def, params, min);
  const afterFirst = (out: unknown) => (out === NOT_REACHED ? waitFor(ctx, def, params, min, maxWaitMs, conn) : out);
  return isThenable(first) ? first.then(afterFirst) : afterFirst(first);
}

/** The waiting part of {@link runAtContextSlot}. */
function waitFor(ctx: RpcContext, def: MethodDefinition, params: unknown, min: number, maxWaitMs: number | undefined, conn: Closable | undefined): Promise<unknown> {
  const watcher = ctx.slots;
  const waitMs = watcher ? Math.min(maxWaitMs ?? watcher.maxWaitMs, watcher.maxWaitMs) : 0;
  if (!watcher || waitMs <= 0) return notReached(ctx);
  const deadline = performance.now() + waitMs;
  return new Promise((resolve, reject) => {
    const register = () =>
      watcher.wait(min, deadline, conn, (outcome, since) => {
        if (outcome !== 'reached') {
          // 'closed': the client is gone and nothing will be written; the answer is the same anyway.
          notReached(ctx).catch(reject);
          return;
        }
        let out: unknown;
        try {
          out = attemptAt(ctx, def, params, min);
        } catch (err) {
          reject(err);
          return;
        }
        const settle = (v: unknown) => {
          if (v !== NOT_REACHED) {
            watcher.answered(since);
            resolve(v);
          } else if (performance.now() < deadline) register(); // an older snapshot than the event: again shortly
          else notReached(ctx).catch(reject);
        };
        if (isThenable(out)) out.then(settle, reject);
        else settle(out);
      });
    register();
  });
}
