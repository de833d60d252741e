/**
 * JSON-RPC 2.0 batches: a body that is an array of requests gets an array of responses, in request
 * order, as Photon's jsonrpsee server answers them (batches on by default there). Run by the one
 * request path (answer.ts `answerRpc`) for the fastify routes and the hot lane alike.
 *
 * - Each element goes through the same core as a single request (dispatch.ts: envelope, method,
 *   path check for `POST /<method>`, authorization, params, handler); its failure becomes its own
 *   error response (same code and message as alone) and does not affect the others.
 * - The batch itself is answered with HTTP 200 (the errors are inside), except a batch that is not
 *   acceptable as a whole: empty, or longer than {@link MAX_BATCH_REQUESTS} → one error response
 *   (`Invalid request: …`, 400), as JSON-RPC 2.0 §6 prescribes for an empty batch.
 * - Rate limits count every element: the guard took one token for the HTTP request, the transport
 *   takes the other n − 1 before running the batch (`chargeBatch`, http/access.ts) (429 for the whole batch when they are not there, which
 *   costs that first token as any refused request whose body was read; 400 for a batch larger than
 *   the bucket's burst).
 * - Unlike Photon, an element without `id` (a notification) is answered like any request (id null),
 *   as single requests are.
 * - `minContextSlot` (read-your-writes, contextSlot.ts) is per element, in its own params: an element
 *   carrying it waits for its slot on its own, concurrently with the others; elements without it are
 *   answered from the state when the batch arrived. The batch is answered once its last element has
 *   settled, so it waits at most the server's bound (`minContextWaitMs`) once, not per element; an
 *   element that does not reach its slot in time is its own -32016 error. To read several things
 *   after a write in one batch, give each of them the write's slot.
 */
import { type RpcContext, isThenable } from './context.ts';
import { type Caller, invoke, peekId, readEnvelope, resolveMethod, resultEnvelopeText } from './dispatch.ts';
import type { Closable } from './slotWatcher.ts';
import { RpcError, describeError, errorEnvelope } from './errors.ts';
import { stringifyJson } from './exactJson.ts';

/** Most requests in one batch (the API's other array limits are 1000 too). */
export const MAX_BATCH_REQUESTS = 1000;
/**
 * Most characters of a batch's response array (≈ bytes: the JSON is ASCII but for rare string data).
 * 1000 large pages could otherwise build one string of hundreds of MB (or past V8's string limit).
 */
export const MAX_BATCH_RESPONSE_CHARS = 64 * 1024 * 1024;

/**
 * The element count of a batch body, after the whole-batch checks.
 * @throws RpcError invalidRequest for an empty batch or one above {@link MAX_BATCH_REQUESTS}
 */
export function batchSize(body: readonly unknown[]): number {
  if (body.length === 0) throw RpcError.invalidRequest('empty batch');
  if (body.length > MAX_BATCH_REQUESTS) throw RpcError.invalidRequest(`batch of ${body.length} requests; at most ${MAX_BATCH_REQUESTS}`);
  return body.length;
}

/**
 * Runs every request of a batch and returns the JSON text of the response array, in request order:
 * synchronously when every element is synchronous (LMDB reads), else as a promise that settles when
 * the last element has. An element's failure is its error response; the batch as a whole fails
 * (throws, or rejects with, RpcError invalidRequest) only when the responses together exceed
 * {@link MAX_BATCH_RESPONSE_CHARS}.
 * @param pathMethod the method named by the URL path (`POST /<method>`): every element must name it.
 * @param logError hears unexpected errors (a bug or a store failure), which reply `Internal server error`.
 * @param maxResponseChars the response size cap (tests lower it).
 * @param conn the request's connection: elements waiting for their `minContextSlot` stop when it closes.
 */
export function runBatch(
  ctx: RpcContext,
  body: readonly unknown[],
  caller: Caller,
  pathMethod: string | undefined,
  logError: (err: unknown) => void,
  maxResponseChars = MAX_BATCH_RESPONSE_CHARS,
  conn?: Closable,
): string | Promise<string> {
  const texts = new Array<string>(body.length);
  const pending: Promise<void>[] = [];
  const fail = (i: number, err: unknown) => {
    const d = describeError(err);
    if (d.unexpected) logError(err);
    texts[i] = stringifyJson(errorEnvelope(peekId(body[i]), d.code, d.message, d.data));
  };
  for (let i = 0; i < body.length; i++) {
    try {
      const item = body[i];
      if (Array.isArray(item)) throw RpcError.invalidRequest('a batch element must be a request object, not an array');
      const env = readEnvelope(item);
      const def = resolveMethod(env, pathMethod);
      const result = invoke(ctx, def, env, caller, conn);
      if (isThenable(result)) {
        pending.push(
          result.then(
            (value) => {
              try {
                texts[i] = resultEnvelopeText(env.id, value);
              } catch (err) {
                fail(i, err);
              }
            },
            (err: unknown) => fail(i, err),
          ),
        );
      } else {
        texts[i] = resultEnvelopeText(env.id, result);
      }
    } catch (err) {
      fail(i, err);
    }
  }
  const join = () => {
    let chars = texts.length + 1;
    for (const t of texts) chars += t.length;
    if (chars > maxResponseChars) {
      throw RpcError.invalidRequest(`the batch's responses come to ${(chars / 2 ** 20).toFixed(1)} MB, more than ${(maxResponseChars / 2 ** 20).toFixed(1)} MB; send fewer requests per batch`);
    }
    return `[${texts.join(',')}]`;
  };
  return pending.length === 0 ? join() : Promise.all(pending).then(join);
}
