/**
 * A stand-in Solana JSON-RPC node on 127.0.0.1 for tests: node:http, the request body read whole and
 * parsed (one request, or a batch: an array), handed to `handle` with the response to write.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A started stand-in node: its URL and how to stop it. */
export interface LocalNode {
  /** `http://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

/** Writes `value` as a JSON response with `status` (default 200). */
export function sendJson(res: ServerResponse, value: unknown, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

/**
 * Starts a node on a free port of 127.0.0.1 whose every POST body (parsed JSON) goes to `handle`,
 * which answers through `res` (now or later). Stop it with `close()`.
 */
export async function startLocalNode(handle: (msg: any, res: ServerResponse) => void): Promise<LocalNode> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => handle(JSON.parse(body), res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
