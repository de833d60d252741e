// Circuit inputs from indexer data and the reference prover's request JSON (src/prover/engine/witness.ts).
// Pure: no keys, no snarkjs.
import { describe, expect, test } from 'vitest';
import { bigintToBe32, beToBigint, toHex32 } from '../src/prover/engine/proofEncoding.ts';
import { ProverError } from '../src/prover/errors.ts';
import { HIGHEST_ADDRESS_PLUS_ONE, foldPath, initialAddressTreeProof, syntheticAccount, zeroHashes } from './helpers/proverFixtures.ts';
import { buildCircuitInput, fromProverRequest, toProverRequest, type ValidityProofInputs } from '../src/prover/engine/witness.ts';

function code(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return e instanceof ProverError ? e.code : `not a ProverError: ${String(e)}`;
  }
  return undefined;
}

describe('fixtures match the spec vectors (prover.md §4)', () => {
  test('zero hashes and the initial v1 address tree root', () => {
    const z = zeroHashes();
    expect(toHex32(z[1]!)).toBe('0x2098f5fb9e239eab3ceac3f27b81e481dc3124d55ffed523a839ee8446b64864');
    expect(toHex32(z[26]!)).toBe('0x120c58f143d491e95902f7f5277778a2e0ad5168f6add75669932630ce611518');
    const a = initialAddressTreeProof(5n);
    expect(toHex32(beToBigint(a.root))).toBe('0x218538b88ea66ea1048ca9f773210fb54c59307e3a56cc511079b94d4b982b0f');
    expect(toHex32(beToBigint(a.pathElements[0]!))).toBe('0x1ea416eeb40218b540c1cfb8dbe91f6d54e8a29edc30a39e326b4057a7d963f5');
  });

  test('foldPath folds an empty tree to Z[26]', () => {
    expect(foldPath(0n, 12345, zeroHashes().slice(0, 26))).toBe(zeroHashes()[26]);
  });
});

describe('buildCircuitInput', () => {
  const acc = syntheticAccount(1, 5);
  const addr = initialAddressTreeProof(0x1234n);

  test('inclusion: decimal strings under the declared signal names', () => {
    const w = buildCircuitInput({ accounts: [acc], addresses: [] });
    expect(w.circuitId).toBe('inclusion_26_1');
    expect(Object.keys(w.input)).toEqual(['roots', 'leaves', 'pathIndices', 'pathElements']);
    expect(w.input.roots).toEqual([beToBigint(acc.root).toString()]);
    expect(w.input.pathIndices).toEqual([5]);
    expect((w.input.pathElements as string[][])[0]!.length).toBe(26);
    expect(w.publicSignals).toEqual([beToBigint(acc.root).toString(), beToBigint(acc.leaf).toString()]);
  });

  test('non-inclusion and combined signal names', () => {
    const n = buildCircuitInput({ accounts: [], addresses: [addr] });
    expect(n.circuitId).toBe('non-inclusion_26_1');
    expect(Object.keys(n.input)).toEqual(['roots', 'values', 'leafLowerRangeValue', 'leafHigherRangeValue', 'nextIndex', 'pathIndex', 'pathElements']);
    expect(n.input.leafHigherRangeValue).toEqual([HIGHEST_ADDRESS_PLUS_ONE.toString()]);
    const c = buildCircuitInput({ accounts: [acc, acc], addresses: [addr] });
    expect(c.circuitId).toBe('combined_26_26_2_1');
    expect(Object.keys(c.input)).toEqual([
      'roots', 'leaves', 'addrRoots', 'values', 'pathIndices', 'pathElements',
      'leafLowerRangeValue', 'leafHigherRangeValue', 'nextIndex', 'addrPathIndex', 'addrPathElements',
    ]);
    expect(c.publicSignals.length).toBe(6);
    expect(c.publicSignals[4]).toBe(beToBigint(addr.root).toString());
    expect(c.publicSignals[5]).toBe('4660');
  });

  test('rejects what the circuit would reject, with precise messages', () => {
    expect(code(() => buildCircuitInput({ accounts: [acc, acc, acc, acc, acc], addresses: [] }))).toBe('unsupported_shape');
    expect(code(() => buildCircuitInput({ accounts: [{ ...acc, leafIndex: 2 ** 26 }], addresses: [] }))).toBe('invalid_input');
    expect(code(() => buildCircuitInput({ accounts: [{ ...acc, pathElements: acc.pathElements.slice(1) }], addresses: [] }))).toBe('invalid_input');
    expect(code(() => buildCircuitInput({ accounts: [{ ...acc, leaf: new Uint8Array(31) }], addresses: [] }))).toBe('invalid_input');
    const big = bigintToBe32((1n << 254n) + 5n);
    expect(() => buildCircuitInput({ accounts: [{ ...acc, leaf: big }], addresses: [] })).toThrow(/accounts\[0\]\.leaf: .* is not a BN254 field element/);
    // Address outside the low element's range (equal to low, equal to high, above high).
    for (const v of [0n, HIGHEST_ADDRESS_PLUS_ONE, HIGHEST_ADDRESS_PLUS_ONE + 1n]) {
      expect(() => buildCircuitInput({ accounts: [], addresses: [{ ...addr, value: bigintToBe32(v) }] })).toThrow(
        /addresses\[0\]: value 0x[0-9a-f]{64} is not strictly between the low element's value/,
      );
    }
  });
});

describe('reference prover request JSON (spec §2.2)', () => {
  const inputs: ValidityProofInputs = { accounts: [syntheticAccount(3, 77)], addresses: [initialAddressTreeProof(99n)] };

  test('round trip, Photon formatting', () => {
    const req = toProverRequest(inputs);
    expect(req.circuitType).toBe('combined');
    expect(req.stateTreeHeight).toBe(26);
    expect(req.addressTreeHeight).toBe(26);
    expect(req.inputCompressedAccounts![0]!.pathIndex).toBe(77);
    expect(req.newAddresses![0]!.nextIndex).toBe(1);
    expect(req.newAddresses![0]!.leafHigherRangeValue).toBe('0x00' + 'ff'.repeat(31));
    for (const s of [req.inputCompressedAccounts![0]!.root, ...req.newAddresses![0]!.pathElements]) expect(s).toMatch(/^0x[0-9a-f]{64}$/);
    const back = fromProverRequest(JSON.parse(JSON.stringify(req)));
    expect(back).toEqual(inputs);
    expect(buildCircuitInput(back)).toEqual(buildCircuitInput(inputs));
  });

  test('empty parts are omitted like Photon does', () => {
    const req = toProverRequest({ accounts: inputs.accounts, addresses: [] });
    expect(Object.keys(req)).toEqual(['circuitType', 'stateTreeHeight', 'inputCompressedAccounts']);
    expect(req.circuitType).toBe('inclusion');
  });

  test('accepts short hex without 0x, as the Go server does', () => {
    const req = JSON.parse(JSON.stringify(toProverRequest({ accounts: inputs.accounts, addresses: [] })));
    req.inputCompressedAccounts[0].pathElements[3] = 'ff';
    const back = fromProverRequest(req);
    expect(beToBigint(back.accounts[0]!.pathElements[3]!)).toBe(255n);
  });

  test('malformed and unsupported requests', () => {
    const good = JSON.parse(JSON.stringify(toProverRequest(inputs)));
    expect(code(() => fromProverRequest({ ...good, circuitType: '' }))).toBe('malformed_request');
    // A type the counts do not fit has no key: the reference's 400 proving_error (unsupported_shape).
    expect(code(() => fromProverRequest({ ...good, circuitType: 'inclusion' }))).toBe('unsupported_shape');
    expect(code(() => fromProverRequest({ ...good, newAddresses: [] }))).toBe('unsupported_shape'); // combined 1×0
    // Light's prover (0.27.0 binary, checked) routes combined / non-inclusion at address height 26 to the
    // legacy circuit and ignores a publicInputHash there (Photon sends one for combined 26/26), but has
    // no key for an inclusion request at height 26 with one.
    expect(fromProverRequest({ ...good, publicInputHash: '0x01' }).version).toBeUndefined();
    const inc = JSON.parse(JSON.stringify(toProverRequest({ accounts: inputs.accounts, addresses: [] })));
    expect(code(() => fromProverRequest({ ...inc, publicInputHash: '0x01' }))).toBe('unsupported_shape');
    expect(code(() => fromProverRequest({ ...good, stateTreeHeight: 32 }))).toBe('unsupported_shape');
    expect(code(() => fromProverRequest(null))).toBe('malformed_request');
    const badHex = JSON.parse(JSON.stringify(good));
    badHex.newAddresses[0].value = '0xnothex';
    expect(() => fromProverRequest(badHex)).toThrow(/newAddresses\[0\]\.value: .*not a hex number/);
    const badIdx = JSON.parse(JSON.stringify(good));
    badIdx.inputCompressedAccounts[0].pathIndex = -1;
    expect(() => fromProverRequest(badIdx)).toThrow(/inputCompressedAccounts\[0\]\.pathIndex: expected a u32/);
  });
});
