/**
 * `RefractValidityProver`: the `ValidityProver` behind getValidityProof / getValidityProofV2
 * (src/rpc/context.ts), on the LMDB store and a `ProofService`.
 *
 * 1. Shape: getValidityProof (v1) sends every hash to the prover, so an unsupported number of
 *    hashes / addresses fails before any read, with the supported shapes listed. (v2 excludes
 *    accounts still in an output queue; its shape is checked after the read.)
 * 2. ONE LMDB read transaction gives the context slot and everything the proof covers, and makes
 *    the checks a proof over current state needs, beyond what src/query/validityProof.ts enforces
 *    (it has Photon's v1 "no spent check" quirk and no address-existence check):
 *    - every hash is a known account (`Record Not Found: Account <hash> does not exist`) that is
 *      not spent (`Validation Error: Account <hash> is spent …`), in v1 as in v2;
 *    - every new address is absent from its address tree and from the indexed accounts
 *      (`Validation Error: Address <address> already exists …`);
 *    - then getValidityProofInputs: paths, roots, root seqs → root indices, low elements.
 * 3. Only v1 trees (height 26) can be proved by Refract's circuits; v2 trees get a clear error.
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
import bs58 from 'bs58';
import type { TreeRegistry } from '../config/trees.ts';
import { getValidityProofInputs, type ValidityProofInputs as StoreInputs } from '../query/validityProof.ts';
import type { ValidityProofRecord, ValidityProofRequest, ValidityProver } from './context.ts';
import { RpcError } from './errors.ts';
import type { ReadView, Store } from '../store/store.ts';
import { circuitIdFor, V1_TREE_HEIGHT } from '../prover/circuits.ts';
import { ProverError } from '../prover/errors.ts';
import type { ProofService } from '../prover/service.ts';
import type { ValidityProofInputs } from '../prover/witness.ts';

/** What the prover needs from the data source (LmdbDataSource has all of it). */
export interface ValidityDataSource {
  readonly store: Store;
  readonly registry: TreeRegistry;
  /** The API record from store inputs and a compressed proof (LmdbDataSource.validityProofRecord). */
  validityProofRecord(inputs: StoreInputs, compressedProof: ValidityProofRecord['compressedProof']): ValidityProofRecord;
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

const b58 = (b: Uint8Array) => bs58.encode(b);

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
    if (mode === 'v1') checkShape(request.hashes.length, request.newAddresses.length);
    const service = this.service();

    const { slot, inputs } = data.store.read((r) => {
      const s = r.lastSlot();
      checkCurrentState(r, data.registry, request);
      return { slot: s === null ? null : BigInt(s), inputs: getValidityProofInputs(r, data.registry, request, mode) };
    });

    const proved = inputs.accounts.filter((a) => !a.proveByIndex);
    if (proved.length === 0 && inputs.addresses.length === 0) {
      // v2: every account is proved by index; nothing for the prover.
      return { ...data.validityProofRecord(inputs, null), slot };
    }
    checkShape(proved.length, inputs.addresses.length);
    for (const a of proved) {
      if (a.tree.type !== 'StateV1' || a.proof!.proof.length !== V1_TREE_HEIGHT) {
        const what = a.tree.type === 'StateV2' ? `not yet supported: v2 inclusion at height ${a.tree.height}: ` : '';
        throw RpcError.validation(`${what}account ${b58(a.hash)} is in ${a.tree.type} tree ${a.tree.tree} (height ${a.tree.height}); Refract's prover serves v1 state trees of height ${V1_TREE_HEIGHT} only`);
      }
    }
    for (const a of inputs.addresses) {
      if (a.tree.type !== 'AddressV1' || a.proof.proof.length !== V1_TREE_HEIGHT) {
        const what = a.tree.type === 'AddressV2' ? `not yet supported: v2 non-inclusion at height ${a.tree.height}: ` : '';
        throw RpcError.validation(`${what}address ${b58(a.proof.address)} is for ${a.tree.type} tree ${a.tree.tree} (height ${a.tree.height}); Refract's prover serves v1 address trees of height ${V1_TREE_HEIGHT} only`);
      }
    }

    const proverInputs: ValidityProofInputs = {
      accounts: proved.map((a) => ({ root: a.proof!.root, leaf: a.hash, leafIndex: a.leafIndex, pathElements: a.proof!.proof })),
      addresses: inputs.addresses.map((a) => ({
        root: a.proof.root,
        value: a.proof.address,
        lowValue: a.proof.lowerRangeAddress,
        highValue: a.proof.higherRangeAddress,
        nextIndex: a.proof.nextIndex,
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
    return { ...data.validityProofRecord(inputs, proof.compressedProof), slot };
  }
}

/** Throws `Validation Error` listing the supported shapes when no circuit serves the counts. */
function checkShape(nAccounts: number, nAddresses: number): void {
  if (nAccounts === 0 && nAddresses === 0) return; // the methods reject empty requests themselves
  try {
    circuitIdFor(nAccounts, nAddresses);
  } catch (e) {
    throw proverErrorToRpc(e);
  }
}

/**
 * The checks of step 2 on the caller's read view: hashes exist and are unspent, new addresses are new.
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
    if (r.accountByAddress(address)) {
      throw RpcError.validation(`Address ${b58(address)} already exists: a compressed account with this address is indexed`);
    }
  }
}
