/**
 * RemoteBackend (`--prover-url`) against malformed answers of an external prover, with a fake fetch:
 * each is a specific ProverError, never a TypeError or a client-blaming code.
 */
import { describe, expect, test } from 'vitest';
import { RemoteBackend } from '../src/prover/backend.ts';
import { ProverError } from '../src/prover/errors.ts';
import { syntheticAccount } from '../src/prover/fixtures.ts';
import { buildCircuitInput } from '../src/prover/witness.ts';

const inputs = { accounts: [syntheticAccount(1, 1)], addresses: [] };
const job = { witness: buildCircuitInput(inputs), inputs };
const H = '0x' + '1'.repeat(64);

/** A RemoteBackend whose fetch answers `status` with `body` (or whose body read fails with `readError`). */
function remoteAnswering(status: number, body: string, readError?: Error): RemoteBackend {
  const fake = (async () =>
    ({
      ok: status >= 200 && status < 300,
      status,
      text: async () => {
        if (readError) throw readError;
        return body;
      },
    }) as unknown as Response) as typeof fetch;
  return new RemoteBackend('http://prover.invalid', { fetch: fake });
}

async function failure(b: RemoteBackend): Promise<ProverError> {
  const e = await b.prove(job, { timeoutMs: 1000 }).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(ProverError);
  return e as ProverError;
}

describe('RemoteBackend: malformed answers', () => {
  test.each([
    ['empty arrays', { ar: [], bs: [[], []], krs: [] }],
    ['flat bs', { ar: [H, H], bs: [H, H], krs: [H, H] }],
    ['three coordinates', { ar: [H, H, H], bs: [[H, H], [H, H]], krs: [H, H] }],
    ['not hex', { ar: [H, 'zz'], bs: [[H, H], [H, H]], krs: [H, H] }],
    ['no proof', { ok: true }],
  ])('200 with %s → remote_failed naming the missing proof', async (_name, body) => {
    const e = await failure(remoteAnswering(200, JSON.stringify(body)));
    expect(e.code).toBe('remote_failed');
    expect(e.message).toMatch(/answered 200 without a proof \{ar, bs, krs\}/);
  });

  test('an error code that is an Object.prototype key is not taken as a code', async () => {
    const e = await failure(remoteAnswering(500, JSON.stringify({ code: 'constructor', message: 'boom' })));
    expect(e.code).toBe('remote_failed');
    expect(e.message).toMatch(/answered HTTP 500 constructor: boom/);
  });

  test('a failure while reading the answer → remote_failed; a timeout while reading → timeout', async () => {
    const reset = await failure(remoteAnswering(200, '', Object.assign(new Error('socket hang up'), { name: 'Error' })));
    expect(reset.code).toBe('remote_failed');
    expect(reset.message).toMatch(/reading its answer failed: socket hang up/);
    const slow = await failure(remoteAnswering(200, '', Object.assign(new Error('aborted'), { name: 'TimeoutError' })));
    expect(slow.code).toBe('timeout');
  });
});
