/**
 * The small things many test files need: one JSON-RPC call over HTTP, and sleeping.
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
