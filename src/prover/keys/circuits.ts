/**
 * Registry of the validity-proof circuits served by Refract.
 *
 * Shapes and names follow Light's reference prover (spec prover.md §1.5:
 * `L:prover/server/prover/common/proving_keys_utils.go`).
 *
 * v1 (the default set, `CIRCUIT_IDS`): inclusion {1,2,3,4,8}, non-inclusion {1,2}, combined
 * {1..4}×{1,2}, all at height 26. Ids are the reference key names without the `v1_` prefix and
 * `.key` suffix, e.g. `inclusion_26_1`, `non-inclusion_26_2`, `combined_26_26_3_1`.
 * Constraint counts are circom 2.2.3 `--O2` non-linear constraints (spec perf.md §1.2):
 * 6,292 per account, 7,049 per address, summed for combined circuits.
 *
 * v2 (batched trees, opt-in: `V2_CIRCUIT_IDS`, spec prover.md §1.6): state trees of height 32,
 * address trees of height 40, one public input `publicInputHash`. Ids are the reference key names
 * WITH their `v2_` prefix (`v2_inclusion_32_1`, `v2_non-inclusion_40_2`, `v2_combined_32_40_1_1`),
 * so they cannot collide with the v1 ids (which never start with `v2_`). Shapes: inclusion
 * {1,2,3,4,8}, non-inclusion {1,2,3,4}, combined {1..4}×{1..4} (the reference serves inclusion
 * 1–20 and non-inclusion 1–32 too; not registered here). Constraints: 7,744 per account, 10,416 per
 * address, plus the hash chains (`v2ChainConstraints`) and, for combined, one Poseidon2 (240).
 * Every v2 shape fits the 2^16 development ptau except combined 3_4 and 4_4 (2^17, `ptauPower`).
 * Served by default: `DEFAULT_V2_CIRCUIT_IDS` (inclusion 1, 2; non-inclusion 1; combined 1×1).
 */
import { ProverError } from '../errors.ts';

/** Height of v1 state trees and of v1 address trees (spec §1.2, §1.3). */
export const V1_TREE_HEIGHT = 26;
/** Non-linear constraints of one inclusion slot at height 26 (26·(Poseidon2 240 + 1) + Num2Bits 26). */
export const CONSTRAINTS_PER_ACCOUNT = 6292;
/** Non-linear constraints of one non-inclusion slot at height 26 (account slot + Poseidon3 + 2×248 range bits). */
export const CONSTRAINTS_PER_ADDRESS = 7049;

/** Height of v2 (batched) state trees (spec §1.6). */
export const V2_STATE_TREE_HEIGHT = 32;
/** Height of v2 (batched) address trees (spec §1.6). */
export const V2_ADDRESS_TREE_HEIGHT = 40;
/** Non-linear constraints of one v2 inclusion slot (height 32): 32·(Poseidon2 240 + 1) + Num2Bits 32. */
export const V2_CONSTRAINTS_PER_ACCOUNT = 7744;
/** Non-linear constraints of one v2 non-inclusion slot (height 40): 242·40 + Poseidon2 240 + 2×248 range bits. */
export const V2_CONSTRAINTS_PER_ADDRESS = 10416;

/**
 * Constraints of `TwoInputsHashChain(n)` (circuits/hash_chain.circom): one Poseidon2 (240) and
 * n − 1 Poseidon3 (261 each).
 * @param n chain length, ≥ 1
 */
export function v2ChainConstraints(n: number): number {
  return 240 + 261 * (n - 1);
}

/**
 * Smallest powers-of-tau power k (2^k) snarkjs accepts for a circuit: k = ⌊log2(constraints +
 * public inputs)⌋ + 1 (snarkjs zkey_new.js; the same rule as snark.ts `requiredPtauPower`, which
 * reads the counts from an r1cs instead).
 */
export function ptauPowerFor(constraints: number, nPublic: number): number {
  return Math.floor(Math.log2(constraints + nPublic)) + 1;
}

/** Circuit family, as the reference prover's `circuitType`. */
export type CircuitKind = 'inclusion' | 'non-inclusion' | 'combined';

/** One circuit the prover can serve. */
export interface CircuitSpec {
  /** Key name in the reference prover's naming, e.g. `combined_26_26_2_1`, `v2_inclusion_32_1`. */
  readonly id: string;
  readonly kind: CircuitKind;
  /** 1: v1 (height 26, public roots/leaves/values); 2: v2 (heights 32/40, public `publicInputHash` only). */
  readonly version: 1 | 2;
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
  /** Length of the public-signal vector: v1 2N + 2M, order [roots, leaves, addrRoots, values]; v2 1 ([publicInputHash]). */
  readonly nPublic: number;
  /** Smallest ptau power (2^k) that can set this circuit up (`ptauPowerFor`). */
  readonly ptauPower: number;
  /** circom source file (under circuits/) that defines the template. */
  readonly sourceFile: string;
  /** Template instantiation of `main`, e.g. `Inclusion(26, 2)`. */
  readonly mainTemplate: string;
  /** Public input signals of `main`, in declaration (= public vector) order. */
  readonly publicSignals: readonly string[];
}

/** The v1 circuit of `kind` for `n` accounts and `m` new addresses (height 26; 0 for the side a kind lacks). */
function v1(kind: CircuitKind, n: number, m: number): CircuitSpec {
  const H = V1_TREE_HEIGHT;
  const constraints = CONSTRAINTS_PER_ACCOUNT * n + CONSTRAINTS_PER_ADDRESS * m;
  const nPublic = 2 * n + 2 * m;
  const base = { kind, version: 1 as const, nAccounts: n, nAddresses: m, stateTreeHeight: n > 0 ? H : 0, addressTreeHeight: m > 0 ? H : 0, constraints, nPublic, ptauPower: ptauPowerFor(constraints, nPublic) };
  switch (kind) {
    case 'inclusion':
      return { ...base, id: `inclusion_${H}_${n}`, sourceFile: 'inclusion.circom', mainTemplate: `Inclusion(${H}, ${n})`, publicSignals: ['roots', 'leaves'] };
    case 'non-inclusion':
      return { ...base, id: `non-inclusion_${H}_${m}`, sourceFile: 'non_inclusion.circom', mainTemplate: `NonInclusion(${H}, ${m})`, publicSignals: ['roots', 'values'] };
    case 'combined':
      return { ...base, id: `combined_${H}_${H}_${n}_${m}`, sourceFile: 'combined.circom', mainTemplate: `Combined(${H}, ${H}, ${n}, ${m})`, publicSignals: ['roots', 'leaves', 'addrRoots', 'values'] };
  }
}

/** The v2 circuit of `kind` for `n` accounts and `m` new addresses (heights 32 / 40). */
function v2(kind: CircuitKind, n: number, m: number): CircuitSpec {
  const S = V2_STATE_TREE_HEIGHT;
  const A = V2_ADDRESS_TREE_HEIGHT;
  const inc = n > 0 ? V2_CONSTRAINTS_PER_ACCOUNT * n + v2ChainConstraints(n) : 0;
  const non = m > 0 ? V2_CONSTRAINTS_PER_ADDRESS * m + v2ChainConstraints(m) : 0;
  const constraints = inc + non + (kind === 'combined' ? 240 : 0);
  const base = { kind, version: 2 as const, nAccounts: n, nAddresses: m, constraints, nPublic: 1, ptauPower: ptauPowerFor(constraints, 1), publicSignals: ['publicInputHash'] };
  switch (kind) {
    case 'inclusion':
      return { ...base, id: `v2_inclusion_${S}_${n}`, stateTreeHeight: S, addressTreeHeight: 0, sourceFile: 'v2_inclusion.circom', mainTemplate: `InclusionV2(${S}, ${n})` };
    case 'non-inclusion':
      return { ...base, id: `v2_non-inclusion_${A}_${m}`, stateTreeHeight: 0, addressTreeHeight: A, sourceFile: 'v2_non_inclusion.circom', mainTemplate: `NonInclusionV2(${A}, ${m})` };
    case 'combined':
      return { ...base, id: `v2_combined_${S}_${A}_${n}_${m}`, stateTreeHeight: S, addressTreeHeight: A, sourceFile: 'v2_combined.circom', mainTemplate: `CombinedV2(${S}, ${A}, ${n}, ${m})` };
  }
}

/** Every supported v1 circuit, smallest first within each kind (the default set of `refract setup`). */
export const CIRCUITS: readonly CircuitSpec[] = Object.freeze([
  ...[1, 2, 3, 4, 8].map((n) => v1('inclusion', n, 0)),
  ...[1, 2].map((m) => v1('non-inclusion', 0, m)),
  ...[1, 2, 3, 4].flatMap((n) => [1, 2].map((m) => v1('combined', n, m))),
]);

/** Every supported v2 circuit (spec §1.6), smallest first within each kind; built only on request. */
export const V2_CIRCUITS: readonly CircuitSpec[] = Object.freeze([
  ...[1, 2, 3, 4, 8].map((n) => v2('inclusion', n, 0)),
  ...[1, 2, 3, 4].map((m) => v2('non-inclusion', 0, m)),
  ...[1, 2, 3, 4].flatMap((n) => [1, 2, 3, 4].map((m) => v2('combined', n, m))),
]);

/** All v1 circuit ids, in registry order: the default circuits of `refract setup`, readiness and metrics. */
export const CIRCUIT_IDS: readonly string[] = Object.freeze(CIRCUITS.map((c) => c.id));
/** All v2 circuit ids, in registry order (`refract setup --circuits <ids>` builds them). */
export const V2_CIRCUIT_IDS: readonly string[] = Object.freeze(V2_CIRCUITS.map((c) => c.id));

/**
 * The v2 circuits served by default (`refract start` builds their keys in the background when
 * missing, `refract setup` without `--circuits` builds them): one or two accounts (inclusion 1, 2),
 * one new address (non-inclusion 1), one of each (combined 1×1) — a transfer, a merge, an address
 * creation, a create-with-input. Chosen by build time: ~53,500 constraints, about 2 min of zkey
 * creation on 2 cores (measured: inclusion 1 in 17.5 s, non-inclusion 1 in 21 s, combined 1×1 in
 * 54 s with the 2^16 dev ptau; ~2.2 ms per constraint), against ~12 min for the 15 v1 circuits
 * (345,000 constraints). The whole v2 set (25 circuits, ~1.0 M constraints) would add about
 * 40 min, and combined 3×4 and 4×4 need a 2^17 ptau (the dev ptau is 2^16), so the rest stay
 * opt-in (`--circuits`). The default four fit the 2^16 dev ptau.
 */
export const DEFAULT_V2_CIRCUIT_IDS: readonly string[] = Object.freeze(['v2_inclusion_32_1', 'v2_inclusion_32_2', 'v2_non-inclusion_40_1', 'v2_combined_32_40_1_1']);

/** What a daemon serves and `refract setup` builds without `--circuits`: every v1 circuit and `DEFAULT_V2_CIRCUIT_IDS`. */
export const DEFAULT_CIRCUIT_IDS: readonly string[] = Object.freeze([...CIRCUIT_IDS, ...DEFAULT_V2_CIRCUIT_IDS]);

const BY_ID = new Map([...CIRCUITS, ...V2_CIRCUITS].map((c) => [c.id, c]));

/**
 * The circuits a daemon serves most — one account (inclusion), one new address (non-inclusion),
 * one of each (combined 1×1) — in the order `setupOrder` builds them first.
 */
export const PRIORITY_CIRCUIT_IDS: readonly string[] = Object.freeze(['inclusion_26_1', 'non-inclusion_26_1', 'combined_26_26_1_1']);

/**
 * The order setup builds circuits in, so the first proofs come soonest: `PRIORITY_CIRCUIT_IDS`
 * first (in that order), then the rest by ascending constraints (cheapest first; registry order on
 * ties; in the default set v2 inclusion 1 and non-inclusion 1 come right after the v1 priority
 * shapes, being the next cheapest). Duplicates are dropped.
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
  const registry = (id: string) => [...CIRCUIT_IDS, ...V2_CIRCUIT_IDS].indexOf(id);
  return unique.sort((a, b) => rank(a) - rank(b) || (rank(a) < 0 ? 0 : getCircuit(a).constraints - getCircuit(b).constraints) || registry(a) - registry(b));
}
const BY_SHAPE = new Map([...CIRCUITS, ...V2_CIRCUITS].map((c) => [`v${c.version}/${c.nAccounts}/${c.nAddresses}`, c]));

/** Human-readable list of the supported v1 (accounts, addresses) shapes, for error messages. */
export const SUPPORTED_SHAPES_TEXT =
  'accounts only: 1, 2, 3, 4 or 8; addresses only: 1 or 2; accounts and addresses: 1–4 accounts with 1 or 2 addresses';
/** Human-readable list of the supported v2 (accounts, addresses) shapes, for error messages. */
export const SUPPORTED_V2_SHAPES_TEXT =
  'accounts only: 1, 2, 3, 4 or 8; addresses only: 1, 2, 3 or 4; accounts and addresses: 1–4 accounts with 1–4 addresses';

/**
 * The registry entry of a circuit id.
 * @throws ProverError `unsupported_shape` when the id is unknown (the message lists the known ids).
 */
export function getCircuit(id: string): CircuitSpec {
  const c = BY_ID.get(id);
  if (!c) {
    throw new ProverError('unsupported_shape', `unknown circuit id "${id}"; known ids: ${[...CIRCUIT_IDS, ...V2_CIRCUIT_IDS].join(', ')}`, { id });
  }
  return c;
}

/**
 * The circuit id for a proof over `nAccounts` compressed accounts and `nAddresses` new addresses.
 * No padding: the counts must match a circuit exactly, as in the reference prover and Photon
 * (spec §1.5).
 * @param nAccounts number of input compressed accounts (≥ 0, integer)
 * @param nAddresses number of new addresses (≥ 0, integer)
 * @param version 1 (default: height-26 trees) or 2 (batched trees: state 32, address 40)
 * @returns e.g. `inclusion_26_3`, `non-inclusion_26_1`, `combined_26_26_2_1`, `v2_inclusion_32_1`
 * @throws ProverError `unsupported_shape` for any other shape; the message lists the supported shapes.
 */
export function circuitIdFor(nAccounts: number, nAddresses: number, version: 1 | 2 = 1): string {
  const c = BY_SHAPE.get(`v${version}/${nAccounts}/${nAddresses}`);
  if (!c) {
    const what =
      nAccounts === 0 && nAddresses === 0
        ? 'no accounts and no addresses'
        : `${nAccounts} account(s) and ${nAddresses} address(es)`;
    throw new ProverError(
      'unsupported_shape',
      version === 1
        ? `no validity-proof circuit for ${what}; supported shapes: ${SUPPORTED_SHAPES_TEXT}`
        : `no v2 validity-proof circuit for ${what}; supported v2 shapes: ${SUPPORTED_V2_SHAPES_TEXT}`,
      { nAccounts, nAddresses, version },
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
    `// Generated by src/prover/keys/circuits.ts for ${spec.id}; do not edit.\n` +
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
    case 'InclusionV2':
    case 'NonInclusionV2':
    case 'CombinedV2':
      return 'publicInputHash does not equal the hash chain of the roots and leaves/values (spec prover.md §1.6)';
    case 'NonInclusionProofV2':
      return 'an address low element and its Merkle path do not fold to the given address root';
    case 'Num2Bits':
      return (
        'a range check failed: a path index is ≥ 2^height (26, 32 or 40), or an address value is not strictly between ' +
        'its low element value and next value (or a value is ≥ 2^248)'
      );
    default:
      return undefined;
  }
}
