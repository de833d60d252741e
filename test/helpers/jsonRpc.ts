/**
 * The small things many test files need: one JSON-RPC call over HTTP, sleeping, and waiting for a daemon to reach a slot.
 * (Over a started daemon with the HTTP status too: refractBin.ts `postRpc`; in process: fastify's inject.)
 */

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * POSTs `{jsonrpc: '2.0', id: 1, method, params}` to `target` (a port on 127.0.0.1, or a URL) and
 * returns the parsed JSON body (`{result}` or `{error}`), whatever the HTTP status.
 * `params` undefined is left out of the body.
 */
export async function jsonRpc(target: number | string, method: string, params?: unknown): Promise<any> {
  const url = typeof target === 'number' ? `http://127.0.0.1:${target}/` : target;
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return res.json();
}

/**
 * Waits until the daemon at `port` has indexed `slot` (getIndexerSlot) and its backfill, if any, is
 * done (GET /health); polls every `everyMs`; throws after `ms` naming the slot reached and the health.
 */
export async function reachSlot(port: number, slot: number, ms: number, everyMs = 250): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await jsonRpc(port, 'getIndexerSlot').catch(() => null);
    const h = await fetch(`http://127.0.0.1:${port}/health`).then((x) => x.json(), () => null);
    if (typeof r?.result === 'number' && r.result >= slot && (!h?.backfill || h.backfill.phase === 'done')) return;
    if (Date.now() > deadline) throw new Error(`indexer at ${r?.result}, wanted ${slot}; health ${JSON.stringify(h)}`);
    await sleep(everyMs);
  }
}
