/**
 * Circuit inputs for `getValidityProof` (v1, height 26), from indexer data or from the reference
 * prover's JSON request.
 *
 * Three shapes of the same information:
 * 1. `ValidityProofInputs`: what the indexer has: 32-byte big-endian values (`Bytes32`) and
 *    numbers, `pathElements` bottom-up (index 0 = sibling at the leaf level), 26 entries.
 * 2. `CircuitInput`: the circom input JSON (decimal strings) under the signal names declared in
 *    circuits/*.circom, for the circuit chosen by `circuitIdFor`.
 * 3. `ProverRequestJson`: the reference prover's `/prove` body (spec prover.md §2.2), hex
 *    `0x` + 64 lowercase digits, as Photon sends it.
 */
import type { Bytes32 } from '../types.ts';
import { circuitIdFor, getCircuit, V1_TREE_HEIGHT, type CircuitKind } from './circuits.ts';
import { BN254_R, beToBigint, bigintToBe32, parseHex, toHex32 } from './encode.ts';
import { ProverError } from './errors.ts';
import type { CircuitInput } from './snark.ts';

/** Inclusion of one compressed account in a v1 state tree. */
export interface AccountProofInput {
  /** State-tree root the proof is against (32 B BE, < r). */
  root: Bytes32;
  /** Compressed-account hash: the leaf (32 B BE, < r). */
  leaf: Bytes32;
  /** Leaf index in the tree (0 ≤ i < 2^26). */
  leafIndex: number;
  /** 26 siblings, leaf level first. */
  pathElements: Bytes32[];
}

/** Non-inclusion of one new address in a v1 address (indexed) tree, via its low element. */
export interface AddressProofInput {
  /** Address-tree root (32 B BE). */
  root: Bytes32;
  /** The new address (32 B BE, < 2^248). */
  value: Bytes32;
  /** Low element's value (`leafLowerRangeValue`). */
  lowValue: Bytes32;
  /** Low element's next value (`leafHigherRangeValue`). */
  highValue: Bytes32;
  /** Low element's next index. */
  nextIndex: number;
  /** Leaf index of the low element (the path index). */
  lowLeafIndex: number;
  /** 26 siblings of the low element, leaf level first. */
  pathElements: Bytes32[];
}

/** Everything one validity proof covers: accounts first, then addresses (spec §2.5). */
export interface ValidityProofInputs {
  accounts: AccountProofInput[];
  addresses: AddressProofInput[];
}

/** A circuit id with its circom input and the public signals the proof must carry. */
export interface CircuitWitnessInput {
  circuitId: string;
  input: CircuitInput;
  /** `[roots, leaves, addrRoots, values]` as decimal strings, the circuit's public vector. */
  publicSignals: string[];
}

const TWO_248 = 1n << 248n;

function field(b: Bytes32, what: string): bigint {
  if (!(b instanceof Uint8Array) || b.length !== 32) {
    throw new ProverError('invalid_input', `${what}: expected 32 bytes, got ${b instanceof Uint8Array ? b.length : typeof b}`);
  }
  const v = beToBigint(b);
  if (v >= BN254_R) throw new ProverError('invalid_input', `${what}: ${toHex32(v)} is not a BN254 field element (≥ r)`);
  return v;
}

function index(n: number, bound: number, what: string): number {
  if (!Number.isSafeInteger(n) || n < 0 || n >= bound) {
    throw new ProverError('invalid_input', `${what}: ${n} is not an integer in [0, ${bound})`);
  }
  return n;
}

function path(p: Bytes32[], what: string): string[] {
  if (!Array.isArray(p) || p.length !== V1_TREE_HEIGHT) {
    throw new ProverError('invalid_input', `${what}: expected ${V1_TREE_HEIGHT} path elements, got ${Array.isArray(p) ? p.length : typeof p}`);
  }
  return p.map((e, i) => field(e, `${what}[${i}]`).toString());
}

/**
 * Builds the circom input of the circuit that serves these inputs.
 * Checks what the circuit would reject, with a precise message: 32-byte field elements, 26-entry
 * paths, indices < 2^26, and for addresses `low < value < high` within 2^248 (the circuit's
 * `AssertIsLess`). A path that does not fold to its root is only caught by the witness
 * calculator (`witness_failed`).
 * @throws ProverError `unsupported_shape` (no circuit for the counts) or `invalid_input`
 */
export function buildCircuitInput(inputs: ValidityProofInputs): CircuitWitnessInput {
  const { accounts, addresses } = inputs;
  const circuitId = circuitIdFor(accounts.length, addresses.length);
  const spec = getCircuit(circuitId);

  const roots: string[] = [];
  const leaves: string[] = [];
  const pathIndices: number[] = [];
  const pathElements: string[][] = [];
  accounts.forEach((a, i) => {
    roots.push(field(a.root, `accounts[${i}].root`).toString());
    leaves.push(field(a.leaf, `accounts[${i}].leaf`).toString());
    pathIndices.push(index(a.leafIndex, 2 ** V1_TREE_HEIGHT, `accounts[${i}].leafIndex`));
    pathElements.push(path(a.pathElements, `accounts[${i}].pathElements`));
  });

  const addrRoots: string[] = [];
  const values: string[] = [];
  const low: string[] = [];
  const high: string[] = [];
  const nextIndex: number[] = [];
  const addrPathIndex: number[] = [];
  const addrPathElements: string[][] = [];
  addresses.forEach((a, i) => {
    const w = `addresses[${i}]`;
    const v = field(a.value, `${w}.value`);
    const lo = field(a.lowValue, `${w}.lowValue`);
    const hi = field(a.highValue, `${w}.highValue`);
    const inRange = (x: bigint, y: bigint) => y - x >= 1n && y - x <= TWO_248 && x < TWO_248 && y < TWO_248;
    if (!inRange(lo, v) || !inRange(v, hi)) {
      throw new ProverError(
        'invalid_input',
        `${w}: value ${toHex32(v)} is not strictly between the low element's value ${toHex32(lo)} and next value ` +
          `${toHex32(hi)} (all < 2^248): the low element does not cover this address, or the address already exists`,
      );
    }
    addrRoots.push(field(a.root, `${w}.root`).toString());
    values.push(v.toString());
    low.push(lo.toString());
    high.push(hi.toString());
    nextIndex.push(index(a.nextIndex, 2 ** 53, `${w}.nextIndex`));
    addrPathIndex.push(index(a.lowLeafIndex, 2 ** V1_TREE_HEIGHT, `${w}.lowLeafIndex`));
    addrPathElements.push(path(a.pathElements, `${w}.pathElements`));
  });

  let input: CircuitInput;
  switch (spec.kind) {
    case 'inclusion':
      input = { roots, leaves, pathIndices, pathElements };
      break;
    case 'non-inclusion':
      input = {
        roots: addrRoots,
        values,
        leafLowerRangeValue: low,
        leafHigherRangeValue: high,
        nextIndex,
        pathIndex: addrPathIndex,
        pathElements: addrPathElements,
      };
      break;
    case 'combined':
      input = {
        roots,
        leaves,
        addrRoots,
        values,
        pathIndices,
        pathElements,
        leafLowerRangeValue: low,
        leafHigherRangeValue: high,
        nextIndex,
        addrPathIndex,
        addrPathElements,
      };
      break;
  }
  return { circuitId, input, publicSignals: [...roots, ...leaves, ...addrRoots, ...values] };
}

// ---------------------------------------------------------------------------------------------
// Reference prover request JSON (spec §2.2)

/** One `inputCompressedAccounts` entry of a v1 `/prove` request. */
export interface ProverRequestAccount {
  root: string;
  pathIndex: number;
  pathElements: string[];
  leaf: string;
}

/** One `newAddresses` entry of a v1 `/prove` request. */
export interface ProverRequestAddress {
  root: string;
  value: string;
  pathIndex: number;
  pathElements: string[];
  leafLowerRangeValue: string;
  leafHigherRangeValue: string;
  nextIndex: number;
}

/** The reference prover's v1 `/prove` request body, as Photon writes it (empty parts omitted). */
export interface ProverRequestJson {
  circuitType: CircuitKind;
  stateTreeHeight?: number;
  addressTreeHeight?: number;
  inputCompressedAccounts?: ProverRequestAccount[];
  newAddresses?: ProverRequestAddress[];
}

const hex = (b: Bytes32) => toHex32(beToBigint(b));

/**
 * Indexer inputs → the reference prover's request JSON (Photon's `HexBatchInputsForProver`):
 * `0x` + 64 lowercase hex per value, heights 26, empty arrays and zero heights omitted.
 * @throws ProverError `unsupported_shape` when no circuit serves the counts
 */
export function toProverRequest(inputs: ValidityProofInputs): ProverRequestJson {
  const kind = getCircuit(circuitIdFor(inputs.accounts.length, inputs.addresses.length)).kind;
  const req: ProverRequestJson = { circuitType: kind };
  if (inputs.accounts.length > 0) {
    req.stateTreeHeight = V1_TREE_HEIGHT;
    req.inputCompressedAccounts = inputs.accounts.map((a) => ({
      root: hex(a.root),
      pathIndex: a.leafIndex,
      pathElements: a.pathElements.map(hex),
      leaf: hex(a.leaf),
    }));
  }
  if (inputs.addresses.length > 0) {
    req.addressTreeHeight = V1_TREE_HEIGHT;
    req.newAddresses = inputs.addresses.map((a) => ({
      root: hex(a.root),
      value: hex(a.value),
      pathIndex: a.lowLeafIndex,
      pathElements: a.pathElements.map(hex),
      leafLowerRangeValue: hex(a.lowValue),
      leafHigherRangeValue: hex(a.highValue),
      nextIndex: a.nextIndex,
    }));
  }
  return req;
}

function malformed(msg: string): never {
  throw new ProverError('malformed_request', msg);
}

function reqObj(v: unknown, what: string): Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) malformed(`${what}: expected an object`);
  return v as Record<string, unknown>;
}

function reqHex(v: unknown, what: string): Bytes32 {
  if (typeof v !== 'string') malformed(`${what}: expected a hex string`);
  const n = parseHex(v);
  return bigintToBe32(n);
}

function reqU32(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) malformed(`${what}: expected a u32`);
  return v;
}

function reqPath(v: unknown, what: string): Bytes32[] {
  if (!Array.isArray(v)) malformed(`${what}: expected an array of hex strings`);
  return v.map((e, i) => reqHex(e, `${what}[${i}]`));
}

/**
 * The reference prover's v1 request JSON → indexer-shaped inputs. Accepts what the Go server
 * accepts for v1: hex with or without `0x`, any length up to 32 bytes. Shape and range checks
 * are left to `buildCircuitInput`.
 * @throws ProverError `malformed_request` (missing/mistyped fields, bad hex) or `unsupported_shape`
 *   (circuitType not matching the entries, v2 `publicInputHash`, heights other than 26)
 */
export function fromProverRequest(body: unknown): ValidityProofInputs {
  const o = reqObj(body, 'request');
  const type = o.circuitType;
  if (typeof type !== 'string' || type === '') malformed('circuitType: expected a non-empty string');
  if (typeof o.publicInputHash === 'string' && o.publicInputHash !== '') {
    throw new ProverError('unsupported_shape', 'v2 requests (publicInputHash) are not supported; only v1 height-26 circuits are served');
  }
  const accIn = o.inputCompressedAccounts ?? [];
  const addrIn = o.newAddresses ?? [];
  if (!Array.isArray(accIn)) malformed('inputCompressedAccounts: expected an array');
  if (!Array.isArray(addrIn)) malformed('newAddresses: expected an array');
  const expected = accIn.length > 0 ? (addrIn.length > 0 ? 'combined' : 'inclusion') : addrIn.length > 0 ? 'non-inclusion' : undefined;
  if (type !== expected) {
    // The reference server routes by circuitType and the counts; a pair with no key is its 400
    // proving_error (prover.md §2.2 routing step 4), not a malformed body.
    throw new ProverError('unsupported_shape', `circuitType "${type}" does not match ${accIn.length} account(s) and ${addrIn.length} address(es): no such circuit`);
  }
  if (accIn.length > 0 && o.stateTreeHeight !== V1_TREE_HEIGHT) {
    throw new ProverError('unsupported_shape', `stateTreeHeight ${String(o.stateTreeHeight)} is not supported (v1: ${V1_TREE_HEIGHT})`);
  }
  if (addrIn.length > 0 && o.addressTreeHeight !== V1_TREE_HEIGHT) {
    throw new ProverError('unsupported_shape', `addressTreeHeight ${String(o.addressTreeHeight)} is not supported (v1: ${V1_TREE_HEIGHT})`);
  }
  const accounts = accIn.map((e, i): AccountProofInput => {
    const w = `inputCompressedAccounts[${i}]`;
    const a = reqObj(e, w);
    return {
      root: reqHex(a.root, `${w}.root`),
      leaf: reqHex(a.leaf, `${w}.leaf`),
      leafIndex: reqU32(a.pathIndex, `${w}.pathIndex`),
      pathElements: reqPath(a.pathElements, `${w}.pathElements`),
    };
  });
  const addresses = addrIn.map((e, i): AddressProofInput => {
    const w = `newAddresses[${i}]`;
    const a = reqObj(e, w);
    return {
      root: reqHex(a.root, `${w}.root`),
      value: reqHex(a.value, `${w}.value`),
      lowValue: reqHex(a.leafLowerRangeValue, `${w}.leafLowerRangeValue`),
      highValue: reqHex(a.leafHigherRangeValue, `${w}.leafHigherRangeValue`),
      nextIndex: reqU32(a.nextIndex, `${w}.nextIndex`),
      lowLeafIndex: reqU32(a.pathIndex, `${w}.pathIndex`),
      pathElements: reqPath(a.pathElements, `${w}.pathElements`),
    };
  });
  return { accounts, addresses };
}
