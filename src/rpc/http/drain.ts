/**
 * Bodies the server answers without reading (401/403/429 before the body, 413 past the limit).
 *
 * Closing the connection right after such an answer loses it: a client still uploading gets a TCP
 * reset, which discards the answer from its receive buffer. Draining the rest of the body keeps the
 * answer safe, but an endless upload would then be read for ever. So the rest is drained up to
 * `maxBytes` (the connection stays usable when the body ends within that); beyond it the server ends
 * its side (FIN after the answer: the client reads the answer, then end of stream) and destroys the
 * socket `LINGER_MS` later — the "lingering close" of HTTP servers.
 */
import type { IncomingMessage } from 'node:http';

/**
 * Reads and discards what is left of `req`'s body, destroying the socket once more than `maxBytes`
 * arrive. A body already read completely is left alone. Call before replying (a request whose body
 * nobody reads would be drained without limit by Node when the reply finishes).
 */
export function drainUnreadBody(req: IncomingMessage, maxBytes: number): void {
  if (req.complete) return;
  let seen = 0;
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > maxBytes) closeLingering(req);
  });
}

/** Time a connection past its drain allowance keeps being read (and discarded) after the server's FIN. */
const LINGER_MS = 1000;

/**
 * Ends the server's side of `req`'s connection once the pending reply is written, reads and discards
 * for LINGER_MS more, then destroys the socket. Idempotent.
 */
function closeLingering(req: IncomingMessage): void {
  const sock = req.socket as (IncomingMessage['socket'] & { refractLingering?: boolean }) | null;
  // (An injected request — fastify.inject — has a stand-in socket without end/destroy.)
  if (!sock || sock.refractLingering || sock.destroyed || typeof sock.end !== 'function') return;
  sock.refractLingering = true;
  sock.end();
  setTimeout(() => sock.destroy(), LINGER_MS).unref();
}
