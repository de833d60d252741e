/**
 * `RefractValidityProver`: the `ValidityProver` behind getValidityProof / getValidityProofV2
 * (src/rpc/context.ts), on the LMDB store and a `ProofService`.
 *
 * 1. Shape: getValidityProof (v1) sends every hash to the prover, so an unsupported number of
 *    hashes / addresses fails before any read, with the supported shapes listed. (v2 excludes
 *    accounts still in an output queue; its shape is checked after the read.)
 * 2. ONE LMDB read transaction gives the context slot and everything the proof covers, and makes
 *    the checks a proof over current state needs, beyond what src/query/validityProofPaths.ts enforces
 *    (it has Photon's v1 "no spent check" quirk and no address-existence check):
 *    - every hash is a known account (`Record Not Found: Account <hash> does not exist`) that is
 *      not spent (`Validation Error: Account <hash> is spent …`), in v1 as in v2;
 *    - every new address is absent from its address tree, from the address queues (AddressV2) and
 *      from the indexed accounts (`Validation Error: Address <address> already exists …`);
 *    - then getValidityProofPaths: paths, roots, root seqs → root indices, low elements.
 * 3. The circuit family from the trees (`circuitVersionFor`): v1 (state and address trees of
 *    height 26) or v2 (batched: StateV2 height 32 → `v2_inclusion_32_N`, AddressV2 height 40 →
 *    `v2_non-inclusion_40_M`, both → `v2_combined_32_40_N_M`; one public input `publicInputHash`,
 *    spec prover.md §1.6). getValidityProofV2 answers accounts still in an output queue by index
 *    (`proveByIndex`, root 0^32 = `1111…1111`, root index 0, no circuit input); when nothing is left
 *    for the prover, `compressedProof` is null. Appended v2 accounts and AddressV2 addresses carry
 *    the root the chain published and the `root_index` of the batch event that wrote it. Counts no
 *    v2 circuit serves: `Validation Error: no v2 validity-proof circuit for N account(s) and M
 *    address(es); supported v2 shapes: …`. v1 state + v2 addresses (or the reverse) in one proof:
 *    a specific `Validation Error` (no circuit, here or in the reference prover, serves them).
 * 4. `ProofService.prove`: witness → queue → proof → verification with the vkey → encodings.
 *    Errors map to JSON-RPC: input problems → `Validation Error`; keys not ready or failing to
 *    build, queue full, timeout, queue or external prover down → 503 with the reason (`Prover not
 *    available: …` when keys are missing, being built or failed to build); a proof that fails
 *    verification or an unsatisfied witness (the store contradicts itself), and an external prover
 *    refusing the statement (as Photon) → `Internal server error` (logged, counted), never a proof.
 *
 * The returned record also carries `slot` (the read's slot) so the method's `context.slot`
 * matches the data.
 */
import type { TreeRegistry } from '../config/trees.ts';
import { getValidityProofPaths, type ValidityProofPaths } from '../query/validityProofPaths.ts';
import type { ValidityProofRecord, ValidityProofRequest, ValidityProver } from './context.ts';
import { RpcError } from './errors.ts';
import { b58 } from './resultEncoding.ts';
import type { ReadView, Store } from '../store/store.ts';
import { circuitIdFor, V1_TREE_HEIGHT, V2_ADDRESS_TREE_HEIGHT, V2_STATE_TREE_HEIGHT } from '../prover/keys/circuits.ts';
import { ProverError } from '../prover/errors.ts';
import { OWN_CIRCUIT_WARNING, type ProofService } from '../prover/run/proofService.ts';
import type { ValidityProofInputs } from '../prover/engine/witness.ts';

/** What the prover needs from the data source (LmdbDataSource has all of it). */
export interface ValidityDataSource {
  readonly store: Store;
  readonly registry: TreeRegistry;
  /** The API record from the store's paths and a compressed proof (LmdbDataSource.validityProofRecord). */
  validityProofRecord(paths: ValidityProofPaths, compressedProof: ValidityProofRecord['compressedProof']): ValidityProofRecord;
}

/** A validity-proof record with the slot of the read it came from. */
export type ValidityProofRecordWithSlot = ValidityProofRecord & { slot: bigint | null };

/** Options of `RefractValidityProver`. */
export interface RefractValidityProverOptions {
  data: ValidityDataSource;
  /** The proof service, or a getter (the service may appear later, e.g. once keys are built). */
  service: ProofService | (() => ProofService | undefined);
  /** Called with unexpected prover failures (they answer `Internal server error`). */
  onInternalError?: (err: unknown) => void;
  /** Why the service getter has nothing (default "the prover is starting"); shown in the error. */
  unavailableReason?: () => string;
}


/**
 * Maps a ProverError to the JSON-RPC error the methods answer with (module comment, step 4).
 */
export function proverErrorToRpc(e: unknown): RpcError {
  if (e instanceof RpcError) return e;
  if (!(e instanceof ProverError)) return RpcError.internal(e);
  switch (e.code) {
    case 'unsupported_shape':
    case 'invalid_input':
    case 'malformed_request':
      return RpcError.validation(e.message);
    case 'not_ready':
    case 'keys_missing':
    case 'setup_failed':
    case 'queue_unavailable':
      return RpcError.unavailable(`Prover not available: ${e.message}`);
    case 'queue_full':
      return RpcError.unavailable(`Prover busy: ${e.message}`);
    case 'timeout':
      return RpcError.unavailable(`Proof timed out: ${e.message}`);
    case 'remote_failed':
      return RpcError.unavailable(`External prover failed: ${e.message}`);
    case 'worker_crashed':
      return RpcError.unavailable(`Prover failed: ${e.message}; retry`);
    default:
      // witness_failed, verify_failed, internal: the store or the prover contradicts itself (a bug);
      // remote_refused: Photon's answer to a prover refusing the statement (test/prover.remote.test.ts).
      return RpcError.internal(e);
  }
}

/** See the module comment. */
export class RefractValidityProver implements ValidityProver {
  /** @param opts data source, proof service (or getter) and the internal-error hook */
  constructor(private readonly opts: RefractValidityProverOptions) {}

  private service(): ProofService {
    const s = typeof this.opts.service === 'function' ? this.opts.service() : this.opts.service;
    if (!s) throw RpcError.unavailable(`Prover not available: ${this.opts.unavailableReason?.() ?? 'the prover is starting'}`);
    return s;
  }

  /**
   * Builds, proves and verifies a validity proof (module comment).
   * @throws RpcError (validation, not found, unavailable, internal) or the query layer's QueryError
   */
  async getValidityProof(request: ValidityProofRequest, mode: 'v1' | 'v2'): Promise<ValidityProofRecordWithSlot> {
    const { data } = this.opts;
    if (mode === 'v1') checkShapeBeforeRead(request.hashes.length, request.newAddresses.length);
    const service = this.service();

    const { slot, paths } = data.store.read((r) => {
      const s = r.lastSlot();
      checkCurrentState(r, data.registry, request);
      return { slot: s === null ? null : BigInt(s), paths: getValidityProofPaths(r, data.registry, request, mode) };
    });

    const proved = paths.accounts.filter((a) => !a.proveByIndex);
    if (proved.length === 0 && paths.addresses.length === 0) {
      // v2: every account is proved by index; nothing for the prover.
      return { ...data.validityProofRecord(paths, null), slot };
    }
    const version = circuitVersionFor(proved, paths.addresses);
    checkShape(proved.length, paths.addresses.length, version);

    const proverInputs: ValidityProofInputs = {
      version,
      accounts: proved.map((a) => ({ root: a.proof!.root, leaf: a.hash, leafIndex: a.leafIndex, pathElements: a.proof!.proof })),
      addresses: paths.addresses.map((a) => ({
        root: a.proof.root,
        value: a.proof.address,
        lowValue: a.proof.lowerRangeAddress,
        highValue: a.proof.higherRangeAddress,
        // The v2 leaf is Poseidon2(value, next value): no next index (spec prover.md §1.6).
        ...(version === 1 ? { nextIndex: a.proof.nextIndex } : {}),
        lowLeafIndex: a.proof.lowElementLeafIndex,
        pathElements: a.proof.proof,
      })),
    };
    let proof;
    try {
      proof = await service.prove(proverInputs);
    } catch (e) {
      const rpc = proverErrorToRpc(e);
      if (rpc.kind === 'internal') this.opts.onInternalError?.(e);
      throw rpc;
    }
    // Refract's own circuit while Light's keys are in use (--own-circuits): the answer says the chain rejects it
    return { ...data.validityProofRecord(paths, proof.compressedProof), slot, ...(proof.keys === 'own' ? { warning: OWN_CIRCUIT_WARNING } : {}) };
  }
}

/**
 * Throws `Validation Error` listing the supported shapes when no circuit of `version` serves the
 * counts (v2: `no v2 validity-proof circuit for N account(s) and M address(es); supported v2
 * shapes: …`).
 */
function checkShape(nAccounts: number, nAddresses: number, version: 1 | 2 = 1): void {
  if (nAccounts === 0 && nAddresses === 0) return; // the methods reject empty requests themselves
  try {
    circuitIdFor(nAccounts, nAddresses, version);
  } catch (e) {
    throw proverErrorToRpc(e);
  }
}

/**
 * getValidityProof (v1 method): refuses before any read when neither a v1 nor a v2 circuit serves
 * the counts (which family applies depends on the trees, known only after the read; the v2 shape
 * is checked again then). The error is the v1 one, listing the v1 shapes.
 */
function checkShapeBeforeRead(nAccounts: number, nAddresses: number): void {
  try {
    checkShape(nAccounts, nAddresses, 2);
  } catch {
    checkShape(nAccounts, nAddresses, 1);
  }
}

/**
 * Which circuit family proves these accounts and addresses: 1 for v1 trees (state and address
 * height 26), 2 for batched trees (StateV2 height 32, AddressV2 height 40).
 *
 * Mixed requests (photon.md §3, `prover/prove.rs`): v1 and v2 STATE accounts in one request are
 * refused with Photon's `All state trees for account proofs must have the same height`, followed by
 * the two accounts and trees (Photon itself, because of quirk 5, sends such a request to the
 * prover and answers `Internal server error` when the prover refuses it). v1 accounts with v2
 * addresses (or v2 accounts with v1 addresses): Photon sends a combined request of heights 26/40
 * (or 32/26) to the prover, which has no such key and answers 400, so Photon returns `Internal
 * server error`. Refract serves no such circuit either and says so with a specific `Validation
 * Error` instead of a generic one.
 * @throws RpcError validation naming the trees and their heights
 */
function circuitVersionFor(proved: readonly ValidityProofPaths['accounts'][number][], addresses: ValidityProofPaths['addresses']): 1 | 2 {
  // Photon quirk 5 gives every path the FIRST tree's height, so v1 + v2 state accounts pass the
  // query layer's height check with paths of the wrong length for one of them; Photon then gets a
  // 400 from the prover and answers `Internal server error`. Refuse before proving, naming both.
  const other = proved.find((a) => a.tree.height !== proved[0]!.tree.height);
  if (other) {
    const a = proved[0]!;
    throw RpcError.validation(
      `All state trees for account proofs must have the same height: account ${b58(a.hash)} is in ${a.tree.type} tree ${a.tree.tree} (height ${a.tree.height}), ` +
        `account ${b58(other.hash)} in ${other.tree.type} tree ${other.tree.tree} (height ${other.tree.height}); request them in separate proofs`,
    );
  }
  const stateHeights = new Set(proved.map((a) => a.proof!.proof.length));
  const addressHeights = new Set(addresses.map((a) => a.proof.proof.length));
  const family = (h: number, v2: number) => (h === V1_TREE_HEIGHT ? 1 : h === v2 ? 2 : 0);
  const versions = new Set<number>([...[...stateHeights].map((h) => family(h, V2_STATE_TREE_HEIGHT)), ...[...addressHeights].map((h) => family(h, V2_ADDRESS_TREE_HEIGHT))]);
  for (const a of proved) {
    if (family(a.proof!.proof.length, V2_STATE_TREE_HEIGHT) === 0) {
      throw RpcError.validation(`account ${b58(a.hash)} is in ${a.tree.type} tree ${a.tree.tree} of height ${a.proof!.proof.length}; Refract's prover serves state trees of height ${V1_TREE_HEIGHT} (v1) and ${V2_STATE_TREE_HEIGHT} (v2) only`);
    }
  }
  for (const a of addresses) {
    if (family(a.proof.proof.length, V2_ADDRESS_TREE_HEIGHT) === 0) {
      throw RpcError.validation(`address ${b58(a.proof.address)} is for ${a.tree.type} tree ${a.tree.tree} of height ${a.proof.proof.length}; Refract's prover serves address trees of height ${V1_TREE_HEIGHT} (v1) and ${V2_ADDRESS_TREE_HEIGHT} (v2) only`);
    }
  }
  if (versions.size > 1) {
    const acc = proved[0]!;
    const addr = addresses[0]!;
    throw RpcError.validation(
      `no circuit combines accounts in ${acc.tree.type} trees (height ${acc.proof!.proof.length}) with new addresses in ${addr.tree.type} trees (height ${addr.proof.proof.length}): ` +
        `request them in separate proofs (the reference prover has no such key either; served: v1 ${V1_TREE_HEIGHT}/${V1_TREE_HEIGHT}, v2 ${V2_STATE_TREE_HEIGHT}/${V2_ADDRESS_TREE_HEIGHT})`,
    );
  }
  return versions.has(2) ? 2 : 1;
}

/**
 * The checks of step 2 on the caller's read view: hashes exist and are unspent, new addresses are
 * new (not in their address tree, not waiting in an AddressV2 queue, no indexed account has them).
 * @throws RpcError notFound / validation naming the offending hash or address
 */
export function checkCurrentState(r: ReadView, registry: TreeRegistry, request: ValidityProofRequest): void {
  for (const h of request.hashes) {
    const a = r.account(h);
    if (!a) throw RpcError.notFound(`Account ${b58(h)} does not exist`);
    if (a.spent) throw RpcError.validation(`Account ${b58(h)} is spent: a validity proof can only cover unspent accounts`);
  }
  for (const { address, tree } of request.newAddresses) {
    const info = registry.getBytes(tree);
    const idx = r.indexedValueIndex(tree, address);
    if (idx !== undefined) {
      throw RpcError.validation(`Address ${b58(address)} already exists in address tree ${info?.tree ?? b58(tree)} (leaf ${idx}): a new-address proof needs an unused address`);
    }
    const queued = r.queuedAddress(address);
    if (queued) {
      const qTree = registry.getBytes(queued.tree)?.tree ?? b58(queued.tree);
      throw RpcError.validation(`Address ${b58(address)} already exists in the queue of address tree ${qTree} (queue index ${queued.queueIndex}): a new-address proof needs an unused address`);
    }
    if (r.accountByAddress(address)) {
      throw RpcError.validation(`Address ${b58(address)} already exists: a compressed account with this address is indexed`);
    }
  }
}
