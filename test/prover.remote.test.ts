/**
 * RemoteBackend (`--prover-url`) against malformed answers of an external prover, with a fake fetch:
 * each is a specific ProverError, never a TypeError or a client-blaming code.
 */
import { poseidon2 } from 'poseidon-lite';
import { describe, expect, test } from 'vitest';
import { RemoteBackend } from '../src/prover/run/backend.ts';
import { ProverError } from '../src/prover/errors.ts';
import { PROVE_HTTP_ERRORS } from '../src/rpc/http/proveRoute.ts';
import { proverErrorToRpc } from '../src/rpc/validityProver.ts';
import { syntheticAccount } from './helpers/proverFixtures.ts';
import { buildCircuitInput } from '../src/prover/engine/witness.ts';
import { bigintToBe32 } from '../src/prover/engine/proofEncoding.ts';

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

  test("the prover's 400s never blame the API client: malformed_body is its failure, proving_error a refusal answered like Photon", async () => {
    const malformed = await failure(remoteAnswering(400, JSON.stringify({ code: 'malformed_body', message: 'bad hex' })));
    expect(malformed.code).toBe('remote_failed');
    expect(proverErrorToRpc(malformed).message).toMatch(/^External prover failed: .*answered HTTP 400 malformed_body: bad hex/);
    const refused = await failure(remoteAnswering(400, JSON.stringify({ code: 'proving_error', message: 'root not found' })));
    expect(refused.code).toBe('remote_refused');
    // JSON-RPC: Photon's answer to any non-2xx prover reply (photon.md §3: UnexpectedError); /prove: passed on.
    expect(proverErrorToRpc(refused).kind).toBe('internal');
    expect(PROVE_HTTP_ERRORS.remote_refused).toEqual({ status: 400, code: 'proving_error' });
    // A proving_error with a 5xx status is the prover's failure, not a refusal.
    expect((await failure(remoteAnswering(500, JSON.stringify({ code: 'proving_error', message: 'panic' })))).code).toBe('remote_failed');
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

describe('RemoteBackend: v2 requests', () => {
  test('a v2 job goes out as the reference v2 JSON: publicInputHash, stateTreeHeight 32, no nextIndex', async () => {
    const path32 = Array.from({ length: 32 }, (_, i) => bigintToBe32(BigInt(i + 7)));
    const fold = (leaf: bigint, idx: number) => path32.reduce((cur, sib, i) => ((idx >> i) & 1 ? poseidon2([BigInt('0x' + Buffer.from(sib).toString('hex')), cur]) : poseidon2([cur, BigInt('0x' + Buffer.from(sib).toString('hex'))])), leaf);
    const root = fold(101n, 3);
    const v2 = { version: 2 as const, accounts: [{ root: bigintToBe32(root), leaf: bigintToBe32(101n), leafIndex: 3, pathElements: path32 }], addresses: [] };
    let sent: Record<string, unknown> | undefined;
    const fake = (async (_url: string, init: { body: string }) => {
      sent = JSON.parse(init.body) as Record<string, unknown>;
      return { ok: true, status: 200, text: async () => JSON.stringify({ ok: true }) } as unknown as Response;
    }) as unknown as typeof fetch;
    const backend = new RemoteBackend('http://prover.invalid', { fetch: fake });
    await backend.prove({ witness: buildCircuitInput(v2), inputs: v2 }, { timeoutMs: 1000 }).catch(() => undefined);
    // The expected hash, computed here: TwoInputsHashChain over one (root, leaf) pair = Poseidon(root, leaf).
    const expectedHash = poseidon2([root, 101n]);
    expect(sent).toBeDefined();
    expect(BigInt(sent!.publicInputHash as string)).toBe(expectedHash);
    expect(sent!.stateTreeHeight).toBe(32);
    const proofs = sent!.inputCompressedAccounts as Array<Record<string, unknown>>;
    expect(proofs).toHaveLength(1);
    expect(BigInt(proofs[0]!.root as string)).toBe(root);
    expect(BigInt(proofs[0]!.leaf as string)).toBe(101n);
    expect(JSON.stringify(sent)).not.toMatch(/nextIndex/);
  });
});
