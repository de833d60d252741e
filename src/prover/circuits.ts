/**
 * Registry of the v1 (height 26) validity-proof circuits served by Refract.
 *
 * Shapes and names follow Light's reference prover (spec prover.md §1.5:
 * `L:prover/server/prover/common/proving_keys_utils.go`): inclusion {1,2,3,4,8}, non-inclusion
 * {1,2}, combined {1..4}×{1,2}, all at height 26. Ids are the reference key names without the
 * `v1_` prefix and `.key` suffix, e.g. `inclusion_26_1`, `non-inclusion_26_2`, `combined_26_26_3_1`.
 *
 * Constraint counts are circom 2.2.3 `--O2` non-linear constraints (spec perf.md §1.2):
 * 6,292 per account, 7,049 per address, summed for combined circuits.
 */
import { ProverError } from './errors.ts';

/** Height of v1 state trees and of v1 address trees (spec §1.2, §1.3). */
export const V1_TREE_HEIGHT = 26;
/** Non-linear constraints of one inclusion slot at height 26 (26·(Poseidon2 240 + 1) + Num2Bits 26). */
export const CONSTRAINTS_PER_ACCOUNT = 6292;
/** Non-linear constraints of one non-inclusion slot at height 26 (account slot + Poseidon3 + 2×248 range bits). */
export const CONSTRAINTS_PER_ADDRESS = 7049;

/** Circuit family, as the reference prover's `circuitType`. */
export type CircuitKind = 'inclusion' | 'non-inclusion' | 'combined';

/** One circuit the prover can serve. */
export interface CircuitSpec {
  /** Key name in the reference prover's naming, e.g. `combined_26_26_2_1`. */
  readonly id: string;
  readonly kind: CircuitKind;
  /** Number of compressed accounts proven (N); 0 for non-inclusion. */
  readonly nAccounts: number;
  /** Number of new addresses proven (M); 0 for inclusion. */
  readonly nAddresses: number;
  /** State-tree height, 0 when nAccounts = 0. */
  readonly stateTreeHeight: number;
  /** Address-tree height, 0 when nAddresses = 0. */
  readonly addressTreeHeight: number;
  /** Expected non-linear constraints with `--O2` (pinned by test/circuits.test.ts). */
  readonly constraints: number;
  /** Length of the public-signal vector: 2N + 2M, order [roots, leaves, addrRoots, values]. */
  readonly nPublic: number;
  /** circom source file (under circuits/) that defines the template. */
  readonly sourceFile: string;
  /** Template instantiation of `main`, e.g. `Inclusion(26, 2)`. */
  readonly mainTemplate: string;
  /** Public input signals of `main`, in declaration (= public vector) order. */
  readonly publicSignals: readonly string[];
}

function inclusion(n: number): CircuitSpec {
  return {
    id: `inclusion_${V1_TREE_HEIGHT}_${n}`,
    kind: 'inclusion',
    nAccounts: n,
    nAddresses: 0,
    stateTreeHeight: V1_TREE_HEIGHT,
    addressTreeHeight: 0,
    constraints: CONSTRAINTS_PER_ACCOUNT * n,
    nPublic: 2 * n,
    sourceFile: 'inclusion.circom',
    mainTemplate: `Inclusion(${V1_TREE_HEIGHT}, ${n})`,
    publicSignals: ['roots', 'leaves'],
  };
}

function nonInclusion(m: number): CircuitSpec {
  return {
    id: `non-inclusion_${V1_TREE_HEIGHT}_${m}`,
    kind: 'non-inclusion',
    nAccounts: 0,
    nAddresses: m,
    stateTreeHeight: 0,
    addressTreeHeight: V1_TREE_HEIGHT,
    constraints: CONSTRAINTS_PER_ADDRESS * m,
    nPublic: 2 * m,
    sourceFile: 'non_inclusion.circom',
    mainTemplate: `NonInclusion(${V1_TREE_HEIGHT}, ${m})`,
    publicSignals: ['roots', 'values'],
  };
}

function combined(n: number, m: number): CircuitSpec {
  return {
    id: `combined_${V1_TREE_HEIGHT}_${V1_TREE_HEIGHT}_${n}_${m}`,
    kind: 'combined',
    nAccounts: n,
    nAddresses: m,
    stateTreeHeight: V1_TREE_HEIGHT,
    addressTreeHeight: V1_TREE_HEIGHT,
    constraints: CONSTRAINTS_PER_ACCOUNT * n + CONSTRAINTS_PER_ADDRESS * m,
    nPublic: 2 * n + 2 * m,
    sourceFile: 'combined.circom',
    mainTemplate: `Combined(${V1_TREE_HEIGHT}, ${V1_TREE_HEIGHT}, ${n}, ${m})`,
    publicSignals: ['roots', 'leaves', 'addrRoots', 'values'],
  };
}

/** Every supported circuit, smallest first within each kind. */
export const CIRCUITS: readonly CircuitSpec[] = Object.freeze([
  ...[1, 2, 3, 4, 8].map(inclusion),
  ...[1, 2].map(nonInclusion),
  ...[1, 2, 3, 4].flatMap((n) => [1, 2].map((m) => combined(n, m))),
]);

/** All circuit ids, in registry order. */
export const CIRCUIT_IDS: readonly string[] = Object.freeze(CIRCUITS.map((c) => c.id));

const BY_ID = new Map(CIRCUITS.map((c) => [c.id, c]));

/**
 * The circuits a daemon serves most — one account (inclusion), one new address (non-inclusion),
 * one of each (combined 1×1) — in the order `setupOrder` builds them first.
 */
export const PRIORITY_CIRCUIT_IDS: readonly string[] = Object.freeze(['inclusion_26_1', 'non-inclusion_26_1', 'combined_26_26_1_1']);

/**
 * The order setup builds circuits in, so the first proofs come soonest: `PRIORITY_CIRCUIT_IDS`
 * first (in that order), then the rest by ascending constraints (cheapest first; registry order on
 * ties). Duplicates are dropped.
 * @param ids circuit ids (validated)
 * @returns a new array with the same ids, reordered
 * @throws ProverError `unsupported_shape` for an unknown id
 */
export function setupOrder(ids: readonly string[]): string[] {
  const unique = [...new Set(ids)];
  unique.forEach((id) => getCircuit(id));
  const rank = (id: string) => {
    const p = PRIORITY_CIRCUIT_IDS.indexOf(id);
    return p >= 0 ? p - PRIORITY_CIRCUIT_IDS.length : 0;
  };
  const registry = (id: string) => CIRCUIT_IDS.indexOf(id);
  return unique.sort((a, b) => rank(a) - rank(b) || (rank(a) < 0 ? 0 : getCircuit(a).constraints - getCircuit(b).constraints) || registry(a) - registry(b));
}
const BY_SHAPE = new Map(CIRCUITS.map((c) => [`${c.nAccounts}/${c.nAddresses}`, c]));

/** Human-readable list of the supported (accounts, addresses) shapes, for error messages. */
export const SUPPORTED_SHAPES_TEXT =
  'accounts only: 1, 2, 3, 4 or 8; addresses only: 1 or 2; accounts and addresses: 1–4 accounts with 1 or 2 addresses';

/**
 * The registry entry of a circuit id.
 * @throws ProverError `unsupported_shape` when the id is unknown (the message lists the known ids).
 */
export function getCircuit(id: string): CircuitSpec {
  const c = BY_ID.get(id);
  if (!c) {
    throw new ProverError('unsupported_shape', `unknown circuit id "${id}"; known ids: ${CIRCUIT_IDS.join(', ')}`, { id });
  }
  return c;
}

/**
 * The circuit id for a proof over `nAccounts` compressed accounts and `nAddresses` new addresses.
 * No padding: the counts must match a circuit exactly, as in the reference prover and Photon
 * (spec §1.5).
 * @param nAccounts number of input compressed accounts (≥ 0, integer)
 * @param nAddresses number of new addresses (≥ 0, integer)
 * @returns e.g. `inclusion_26_3`, `non-inclusion_26_1`, `combined_26_26_2_1`
 * @throws ProverError `unsupported_shape` for any other shape; the message lists the supported shapes.
 */
export function circuitIdFor(nAccounts: number, nAddresses: number): string {
  const c = BY_SHAPE.get(`${nAccounts}/${nAddresses}`);
  if (!c) {
    const what =
      nAccounts === 0 && nAddresses === 0
        ? 'no accounts and no addresses'
        : `${nAccounts} account(s) and ${nAddresses} address(es)`;
    throw new ProverError(
      'unsupported_shape',
      `no validity-proof circuit for ${what}; supported shapes: ${SUPPORTED_SHAPES_TEXT}`,
      { nAccounts, nAddresses },
    );
  }
  return c.id;
}

/**
 * The circom `main` file for a circuit: includes its template file (resolved through `-l
 * <circuits dir>`) and declares the public inputs. Generated at compile time; never written by hand.
 * @param spec registry entry
 * @returns circom 2 source text
 */
export function mainSource(spec: CircuitSpec): string {
  return (
    `pragma circom 2.0.0;\n` +
    `// Generated by src/prover/circuits.ts for ${spec.id}; do not edit.\n` +
    `include "${spec.sourceFile}";\n\n` +
    `component main {public [${spec.publicSignals.join(', ')}]} = ${spec.mainTemplate};\n`
  );
}

/**
 * Explains a failing-constraint message from the witness calculator (circom: "Error in template
 * <Name>_<k> line: <n>") in terms of the inputs, so callers get an actionable error.
 * @param message the calculator's error text
 * @returns a short explanation, or undefined when the template is not recognised
 */
export function explainConstraintFailure(message: string): string | undefined {
  const m = /Error in template (\w+?)_\d+ line: (\d+)/.exec(message);
  if (!m) return undefined;
  switch (m[1]) {
    case 'Inclusion':
      return 'an account leaf and its Merkle path do not fold to the given state root';
    case 'NonInclusion':
      return 'an address low element and its Merkle path do not fold to the given address root';
    case 'Num2Bits':
      return (
        'a range check failed: a path index is ≥ 2^26, or an address value is not strictly between ' +
        'its low element value and next value (or a value is ≥ 2^248)'
      );
    default:
      return undefined;
  }
}
