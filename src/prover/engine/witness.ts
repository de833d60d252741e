/**
 * Circuit inputs for validity proofs (v1: height 26; v2: batched trees, state height 32 and
 * address height 40, spec prover.md §1.6), from indexer data or from the reference prover's JSON
 * request.
 *
 * Three shapes of the same information:
 * 1. `ValidityProofInputs`: the prover's inputs as the indexer hands them over (src/rpc/validityProver.ts
 *    builds them from the store's `ValidityProofPaths`): 32-byte big-endian values (`Bytes32`) and
 *    numbers, `pathElements` bottom-up (index 0 = sibling at the leaf level), one entry per tree
 *    level (26; v2: 32 for accounts, 40 for addresses). `version: 2` selects the v2 circuits.
 * 2. `CircuitInput`: the circom input JSON (decimal strings) under the signal names declared in
 *    circuits/*.circom, for the circuit chosen by `circuitIdFor`.
 * 3. `ProverRequestJson`: the reference prover's `/prove` body (spec prover.md §2.2), hex
 *    `0x` + 64 lowercase digits, as Photon sends it.
 */
import type { Bytes32 } from '../../types.ts';
import { poseidon2, poseidon3 } from '../../merkle/poseidon.ts';
import { circuitIdFor, getCircuit, V1_TREE_HEIGHT, V2_ADDRESS_TREE_HEIGHT, V2_STATE_TREE_HEIGHT, type CircuitKind } from '../keys/circuits.ts';
import { BN254_R, beToBigint, bigintToBe32, parseHex, toHex32 } from './proofEncoding.ts';
import { ProverError } from '../errors.ts';
import type { CircuitInput } from './snark.ts';

/** Inclusion of one compressed account in a v1 state tree. */
export interface AccountProofInput {
  /** State-tree root the proof is against (32 B BE, < r). */
  root: Bytes32;
  /** Compressed-account hash: the leaf (32 B BE, < r). */
  leaf: Bytes32;
  /** Leaf index in the tree (0 ≤ i < 2^height). */
  leafIndex: number;
  /** Siblings, leaf level first: 26 (v1) or 32 (v2). */
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
  /** Low element's next index (v1 only: the v2 leaf hash has no next index). */
  nextIndex?: number;
  /** Leaf index of the low element (the path index). */
  lowLeafIndex: number;
  /** Siblings of the low element, leaf level first: 26 (v1) or 40 (v2). */
  pathElements: Bytes32[];
}

/** Everything one validity proof covers: accounts first, then addresses (spec §2.5). */
export interface ValidityProofInputs {
  accounts: AccountProofInput[];
  addresses: AddressProofInput[];
  /**
   * 1 (default): v1 circuits, height-26 trees. 2: v2 circuits, state trees of height 32 and address
   * trees of height 40, proven against the single public input `publicInputHash`.
   */
  version?: 1 | 2;
  /**
   * v2 only: the public input hash the caller expects (the reference request's `publicInputHash`).
   * When given it must equal `v2PublicInputHash` of the inputs; when omitted it is computed.
   */
  publicInputHash?: Bytes32;
}

/** A circuit id with its circom input and the public signals the proof must carry. */
export interface CircuitWitnessInput {
  circuitId: string;
  input: CircuitInput;
  /**
   * The circuit's public vector as decimal strings: v1 `[roots, leaves, addrRoots, values]`; v2
   * `[publicInputHash]`.
   */
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

function path(p: Bytes32[], height: number, what: string): string[] {
  if (!Array.isArray(p) || p.length !== height) {
    throw new ProverError('invalid_input', `${what}: expected ${height} path elements, got ${Array.isArray(p) ? p.length : typeof p}`);
  }
  return p.map((e, i) => field(e, `${what}[${i}]`).toString());
}

/**
 * Light's `TwoInputsHashChain` (spec prover.md §1.6; `L:program-libs/hasher/src/hash_chain.rs::
 * create_two_inputs_hash_chain`): `h = Poseidon2(a[0], b[0])`, then `h = Poseidon3(h, a[i], b[i])`.
 * @param a first inputs (e.g. roots), 32-byte BE field elements
 * @param b second inputs (leaves or address values), same length as `a`
 * @returns the chain as 32 bytes BE; 32 zero bytes for empty inputs (as the Rust helper)
 * @throws ProverError `invalid_input` when the lengths differ; RangeError (from Poseidon) naming
 *   the input when a value is not a field element
 */
export function twoInputsHashChain(a: readonly Bytes32[], b: readonly Bytes32[]): Bytes32 {
  if (a.length !== b.length) throw new ProverError('invalid_input', `hash chain inputs differ in length (${a.length} vs ${b.length})`);
  if (a.length === 0) return new Uint8Array(32);
  let h = poseidon2(a[0]!, b[0]!);
  for (let i = 1; i < a.length; i++) h = poseidon3(h, a[i]!, b[i]!);
  return h;
}

/**
 * The v2 public input hash of a validity proof (spec §1.6; Photon `get_public_input_hash`):
 * accounts only → `chain(roots, leaves)`; addresses only → `chain(addressRoots, addresses)`; both →
 * `Poseidon2(chain(roots, leaves), chain(addressRoots, addresses))`.
 * @returns 32 bytes BE
 * @throws ProverError `invalid_input` when there are no accounts and no addresses
 */
export function v2PublicInputHash(inputs: Pick<ValidityProofInputs, 'accounts' | 'addresses'>): Bytes32 {
  const { accounts, addresses } = inputs;
  if (accounts.length === 0 && addresses.length === 0) throw new ProverError('invalid_input', 'no accounts and no addresses: nothing to hash');
  const inc = twoInputsHashChain(accounts.map((a) => a.root), accounts.map((a) => a.leaf));
  const non = twoInputsHashChain(addresses.map((a) => a.root), addresses.map((a) => a.value));
  if (addresses.length === 0) return inc;
  if (accounts.length === 0) return non;
  return poseidon2(inc, non);
}

/**
 * Builds the circom input of the circuit that serves these inputs (v1, or v2 when
 * `inputs.version === 2`).
 * Checks what the circuit would reject, with a precise message: 32-byte field elements, paths of
 * the tree height (26; v2: 32 for accounts, 40 for addresses), indices < 2^height, and for
 * addresses `low < value < high` within 2^248 (the circuit's `AssertIsLess`); for v2, a given
 * `publicInputHash` must equal `v2PublicInputHash` of the inputs. A path that does not fold to its
 * root is only caught by the witness calculator (`witness_failed`).
 * @throws ProverError `unsupported_shape` (no circuit for the counts) or `invalid_input`
 */
export function buildCircuitInput(inputs: ValidityProofInputs): CircuitWitnessInput {
  const { accounts, addresses } = inputs;
  const version = inputs.version ?? 1;
  if (version !== 1 && version !== 2) throw new ProverError('invalid_input', `version: ${String(version)} is neither 1 nor 2`);
  const circuitId = circuitIdFor(accounts.length, addresses.length, version);
  const spec = getCircuit(circuitId);
  const stateHeight = version === 2 ? V2_STATE_TREE_HEIGHT : V1_TREE_HEIGHT;
  const addressHeight = version === 2 ? V2_ADDRESS_TREE_HEIGHT : V1_TREE_HEIGHT;

  const roots: string[] = [];
  const leaves: string[] = [];
  const pathIndices: number[] = [];
  const pathElements: string[][] = [];
  accounts.forEach((a, i) => {
    roots.push(field(a.root, `accounts[${i}].root`).toString());
    leaves.push(field(a.leaf, `accounts[${i}].leaf`).toString());
    pathIndices.push(index(a.leafIndex, 2 ** stateHeight, `accounts[${i}].leafIndex`));
    pathElements.push(path(a.pathElements, stateHeight, `accounts[${i}].pathElements`));
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
    if (version === 1) nextIndex.push(index(a.nextIndex as number, 2 ** 53, `${w}.nextIndex`));
    addrPathIndex.push(index(a.lowLeafIndex, 2 ** addressHeight, `${w}.lowLeafIndex`));
    addrPathElements.push(path(a.pathElements, addressHeight, `${w}.pathElements`));
  });

  if (version === 2) return buildV2Input(inputs, circuitId, spec.kind, { roots, leaves, pathIndices, pathElements, addrRoots, values, low, high, addrPathIndex, addrPathElements });

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

/** The v2 circom input: the v1 signals without `nextIndex`, plus `publicInputHash` (circuits/v2_*.circom). */
function buildV2Input(
  inputs: ValidityProofInputs,
  circuitId: string,
  kind: CircuitKind,
  s: {
    roots: string[]; leaves: string[]; pathIndices: number[]; pathElements: string[][];
    addrRoots: string[]; values: string[]; low: string[]; high: string[]; addrPathIndex: number[]; addrPathElements: string[][];
  },
): CircuitWitnessInput {
  const computed = beToBigint(v2PublicInputHash(inputs));
  if (inputs.publicInputHash !== undefined) {
    const given = field(inputs.publicInputHash, 'publicInputHash');
    if (given !== computed) {
      const what = kind === 'inclusion' ? 'TwoInputsHashChain(roots, leaves)' : kind === 'non-inclusion' ? 'TwoInputsHashChain(roots, values)' : 'Poseidon2(TwoInputsHashChain(roots, leaves), TwoInputsHashChain(address roots, values))';
      throw new ProverError('invalid_input', `publicInputHash: ${toHex32(given)} does not match the inputs: ${what} is ${toHex32(computed)}`, {
        given: toHex32(given),
        computed: toHex32(computed),
      });
    }
  }
  const publicInputHash = computed.toString();
  let input: CircuitInput;
  switch (kind) {
    case 'inclusion':
      input = { publicInputHash, roots: s.roots, leaves: s.leaves, pathIndices: s.pathIndices, pathElements: s.pathElements };
      break;
    case 'non-inclusion':
      input = {
        publicInputHash,
        roots: s.addrRoots,
        values: s.values,
        leafLowerRangeValue: s.low,
        leafHigherRangeValue: s.high,
        pathIndex: s.addrPathIndex,
        pathElements: s.addrPathElements,
      };
      break;
    case 'combined':
      input = {
        publicInputHash,
        roots: s.roots,
        leaves: s.leaves,
        addrRoots: s.addrRoots,
        values: s.values,
        pathIndices: s.pathIndices,
        pathElements: s.pathElements,
        leafLowerRangeValue: s.low,
        leafHigherRangeValue: s.high,
        addrPathIndex: s.addrPathIndex,
        addrPathElements: s.addrPathElements,
      };
      break;
  }
  return { circuitId, input, publicSignals: [publicInputHash] };
}

// ---------------------------------------------------------------------------------------------
// Reference prover request JSON (spec §2.2)

/** One `inputCompressedAccounts` entry of a `/prove` request (the same in v1 and v2). */
export interface ProverRequestAccount {
  root: string;
  pathIndex: number;
  pathElements: string[];
  leaf: string;
}

/** One `newAddresses` entry of a `/prove` request; v2 entries have no `nextIndex`. */
export interface ProverRequestAddress {
  root: string;
  value: string;
  pathIndex: number;
  pathElements: string[];
  leafLowerRangeValue: string;
  leafHigherRangeValue: string;
  /** v1 only. */
  nextIndex?: number;
}

/**
 * The reference prover's `/prove` request body, as Photon writes it (empty parts omitted). v2
 * (spec §1.6, `L:prover/server/prover/v2/marshal_*.go`): heights 32 / 40, `publicInputHash` set,
 * address entries without `nextIndex`.
 */
export interface ProverRequestJson {
  circuitType: CircuitKind;
  stateTreeHeight?: number;
  addressTreeHeight?: number;
  /** v2 only: `0x` + 64 hex. */
  publicInputHash?: string;
  inputCompressedAccounts?: ProverRequestAccount[];
  newAddresses?: ProverRequestAddress[];
}

const hex = (b: Bytes32) => toHex32(beToBigint(b));

/**
 * Indexer inputs → the reference prover's request JSON (Photon's `HexBatchInputsForProver`):
 * `0x` + 64 lowercase hex per value, heights 26 (v2: 32 / 40, plus `publicInputHash`, computed
 * when not given, and no `nextIndex`), empty arrays and zero heights omitted.
 * @throws ProverError `unsupported_shape` when no circuit serves the counts
 */
export function toProverRequest(inputs: ValidityProofInputs): ProverRequestJson {
  const v2 = inputs.version === 2;
  const kind = getCircuit(circuitIdFor(inputs.accounts.length, inputs.addresses.length, v2 ? 2 : 1)).kind;
  const req: ProverRequestJson = { circuitType: kind };
  if (v2) req.publicInputHash = hex(inputs.publicInputHash ?? v2PublicInputHash(inputs));
  if (inputs.accounts.length > 0) {
    req.stateTreeHeight = v2 ? V2_STATE_TREE_HEIGHT : V1_TREE_HEIGHT;
    req.inputCompressedAccounts = inputs.accounts.map((a) => ({
      root: hex(a.root),
      pathIndex: a.leafIndex,
      pathElements: a.pathElements.map(hex),
      leaf: hex(a.leaf),
    }));
  }
  if (inputs.addresses.length > 0) {
    req.addressTreeHeight = v2 ? V2_ADDRESS_TREE_HEIGHT : V1_TREE_HEIGHT;
    req.newAddresses = inputs.addresses.map((a) => ({
      root: hex(a.root),
      value: hex(a.value),
      pathIndex: a.lowLeafIndex,
      pathElements: a.pathElements.map(hex),
      leafLowerRangeValue: hex(a.lowValue),
      leafHigherRangeValue: hex(a.highValue),
      ...(v2 ? {} : { nextIndex: a.nextIndex }),
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

/** Reads a field of a request entry with `parse`, which names `<entry>.<key>` in its error. */
type FieldReader = <V>(key: string, parse: (v: unknown, what: string) => V) => V;

/**
 * Each entry of `list` as an object (else malformed, naming `name[i]`), read by `read` through a
 * {@link FieldReader} whose errors name `name[i].<key>`.
 */
function entries<T>(list: unknown[], name: string, read: (get: FieldReader) => T): T[] {
  return list.map((e, i) => {
    const w = `${name}[${i}]`;
    const a = reqObj(e, w);
    return read((key, parse) => parse(a[key], `${w}.${key}`));
  });
}

function reqHex(v: unknown, what: string): Bytes32 {
  if (typeof v !== 'string') malformed(`${what}: expected a hex string`);
  let n: bigint;
  try {
    n = parseHex(v);
  } catch (e) {
    malformed(`${what}: ${(e as Error).message}`); // the field, then why
  }
  return bigintToBe32(n);
}

function reqU32(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) malformed(`${what}: expected a u32`);
  return v;
}

/** A path index: an integer in [0, 2^53) (v2 address trees need up to 2^40; the height bound is checked later). */
function reqIndex(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) malformed(`${what}: expected a non-negative integer`);
  return v;
}

function reqPath(v: unknown, what: string): Bytes32[] {
  if (!Array.isArray(v)) malformed(`${what}: expected an array of hex strings`);
  return v.map((e, i) => reqHex(e, `${what}[${i}]`));
}

/**
 * The reference prover's request JSON (v1 or v2) → indexer-shaped inputs. Accepts what the Go
 * server accepts: hex with or without `0x`, any length up to 32 bytes.
 *
 * Version (as the reference's `ParseProofRequestMeta`, spec §2.2 routing step 3): v2 when
 * `publicInputHash` is a non-empty string, when `addressTreeHeight` is 40 or when
 * `stateTreeHeight` is 32; v1 otherwise. v1 needs height 26; v2 needs `stateTreeHeight` 32 (with
 * accounts), `addressTreeHeight` 40 (with addresses) and `publicInputHash`; v2 address entries have
 * no `nextIndex` (ignored if present). Shape, range and public-input-hash checks are left to
 * `buildCircuitInput`.
 * @throws ProverError `malformed_request` (missing/mistyped fields, bad hex) or `unsupported_shape`
 *   (circuitType not matching the entries, heights not matching the version)
 */
export function fromProverRequest(body: unknown): ValidityProofInputs {
  const o = reqObj(body, 'request');
  const type = o.circuitType;
  if (typeof type !== 'string' || type === '') malformed('circuitType: expected a non-empty string');
  if (o.publicInputHash !== undefined && o.publicInputHash !== null && typeof o.publicInputHash !== 'string') malformed('publicInputHash: expected a hex string');
  // Light's prover routes non-inclusion and combined requests by the address tree height alone: at
  // height 26 the legacy circuit serves them and a publicInputHash is ignored (Photon sends one for
  // combined 26/26; light-keys §6).
  const legacyAddress = (type === 'non-inclusion' || type === 'combined') && o.addressTreeHeight === V1_TREE_HEIGHT && (type === 'non-inclusion' || o.stateTreeHeight === V1_TREE_HEIGHT);
  const hasHash = typeof o.publicInputHash === 'string' && o.publicInputHash !== '' && !legacyAddress;
  const v2 = hasHash || o.addressTreeHeight === V2_ADDRESS_TREE_HEIGHT || o.stateTreeHeight === V2_STATE_TREE_HEIGHT;
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
  const stateHeight = v2 ? V2_STATE_TREE_HEIGHT : V1_TREE_HEIGHT;
  const addressHeight = v2 ? V2_ADDRESS_TREE_HEIGHT : V1_TREE_HEIGHT;
  const why = v2 ? `v2 (publicInputHash, state height ${V2_STATE_TREE_HEIGHT}, address height ${V2_ADDRESS_TREE_HEIGHT})` : `v1: ${V1_TREE_HEIGHT}`;
  if (accIn.length > 0 && o.stateTreeHeight !== stateHeight) {
    throw new ProverError('unsupported_shape', `stateTreeHeight ${String(o.stateTreeHeight)} is not supported (${why}: ${stateHeight})`);
  }
  if (addrIn.length > 0 && o.addressTreeHeight !== addressHeight) {
    throw new ProverError('unsupported_shape', `addressTreeHeight ${String(o.addressTreeHeight)} is not supported (${why}: ${addressHeight})`);
  }
  if (v2 && !hasHash) malformed(`publicInputHash: required in v2 requests (stateTreeHeight ${V2_STATE_TREE_HEIGHT} / addressTreeHeight ${V2_ADDRESS_TREE_HEIGHT})`);
  const index = v2 ? reqIndex : reqU32;
  const accounts = entries(accIn, 'inputCompressedAccounts', (get): AccountProofInput => ({
    root: get('root', reqHex),
    leaf: get('leaf', reqHex),
    leafIndex: get('pathIndex', index),
    pathElements: get('pathElements', reqPath),
  }));
  const addresses = entries(addrIn, 'newAddresses', (get): AddressProofInput => ({
    root: get('root', reqHex),
    value: get('value', reqHex),
    lowValue: get('leafLowerRangeValue', reqHex),
    highValue: get('leafHigherRangeValue', reqHex),
    ...(v2 ? {} : { nextIndex: get('nextIndex', reqU32) }),
    lowLeafIndex: get('pathIndex', index),
    pathElements: get('pathElements', reqPath),
  }));
  if (v2) return { accounts, addresses, version: 2, publicInputHash: reqHex(o.publicInputHash, 'publicInputHash') };
  return { accounts, addresses };
}
