/**
 * Registry of every JSON-RPC method: one definition per file in this folder, looked up by name or
 * alias. `METHODS` is the list (for OpenAPI), `findMethod` the lookup used by the dispatcher.
 */
import type { MethodDefinition } from './lib/define.ts';
import { getCompressedAccount } from './getCompressedAccount.ts';
import { getCompressedAccountProof } from './getCompressedAccountProof.ts';
import { getCompressedAccountProofV2 } from './getCompressedAccountProofV2.ts';
import { getCompressedAccountV2 } from './getCompressedAccountV2.ts';
import { getCompressedAccountsByOwner } from './getCompressedAccountsByOwner.ts';
import { getCompressedAccountsByOwnerV2 } from './getCompressedAccountsByOwnerV2.ts';
import { getCompressedBalance } from './getCompressedBalance.ts';
import { getCompressedBalanceByOwner } from './getCompressedBalanceByOwner.ts';
import { getCompressedMintTokenHolders } from './getCompressedMintTokenHolders.ts';
import { getCompressedTokenAccountBalance } from './getCompressedTokenAccountBalance.ts';
import { getCompressedTokenAccountsByDelegate } from './getCompressedTokenAccountsByDelegate.ts';
import { getCompressedTokenAccountsByDelegateV2 } from './getCompressedTokenAccountsByDelegateV2.ts';
import { getCompressedTokenAccountsByOwner } from './getCompressedTokenAccountsByOwner.ts';
import { getCompressedTokenAccountsByOwnerV2 } from './getCompressedTokenAccountsByOwnerV2.ts';
import { getCompressedTokenBalancesByOwner } from './getCompressedTokenBalancesByOwner.ts';
import { getCompressedTokenBalancesByOwnerV2 } from './getCompressedTokenBalancesByOwnerV2.ts';
import { getCompressionSignaturesForAccount } from './getCompressionSignaturesForAccount.ts';
import { getCompressionSignaturesForAddress } from './getCompressionSignaturesForAddress.ts';
import { getCompressionSignaturesForOwner } from './getCompressionSignaturesForOwner.ts';
import { getCompressionSignaturesForTokenOwner } from './getCompressionSignaturesForTokenOwner.ts';
import { getIndexerHealth } from './getIndexerHealth.ts';
import { getIndexerSlot } from './getIndexerSlot.ts';
import { liveness } from './liveness.ts';
import { readiness } from './readiness.ts';
import { getLatestCompressionSignatures } from './getLatestCompressionSignatures.ts';
import { getLatestNonVotingSignatures } from './getLatestNonVotingSignatures.ts';
import { getMultipleCompressedAccountProofs } from './getMultipleCompressedAccountProofs.ts';
import { getMultipleCompressedAccountProofsV2 } from './getMultipleCompressedAccountProofsV2.ts';
import { getMultipleCompressedAccounts } from './getMultipleCompressedAccounts.ts';
import { getMultipleCompressedAccountsV2 } from './getMultipleCompressedAccountsV2.ts';
import { getMultipleNewAddressProofs } from './getMultipleNewAddressProofs.ts';
import { getMultipleNewAddressProofsV2 } from './getMultipleNewAddressProofsV2.ts';
import { getQueueElements } from './getQueueElements.ts';
import { getQueueInfo } from './getQueueInfo.ts';
import { getTransactionWithCompressionInfo } from './getTransactionWithCompressionInfo.ts';
import { getTransactionWithCompressionInfoV2 } from './getTransactionWithCompressionInfoV2.ts';
import { getValidityProof } from './getValidityProof.ts';
import { getValidityProofV2 } from './getValidityProofV2.ts';

/** Every method definition, canonical names only. */
export const METHODS: readonly MethodDefinition[] = [
  getCompressedAccount,
  getCompressedAccountProof,
  getCompressedAccountProofV2,
  getCompressedAccountV2,
  getCompressedAccountsByOwner,
  getCompressedAccountsByOwnerV2,
  getCompressedBalance,
  getCompressedBalanceByOwner,
  getCompressedMintTokenHolders,
  getCompressedTokenAccountBalance,
  getCompressedTokenAccountsByDelegate,
  getCompressedTokenAccountsByDelegateV2,
  getCompressedTokenAccountsByOwner,
  getCompressedTokenAccountsByOwnerV2,
  getCompressedTokenBalancesByOwner,
  getCompressedTokenBalancesByOwnerV2,
  getCompressionSignaturesForAccount,
  getCompressionSignaturesForAddress,
  getCompressionSignaturesForOwner,
  getCompressionSignaturesForTokenOwner,
  getIndexerHealth,
  getIndexerSlot,
  getLatestCompressionSignatures,
  getLatestNonVotingSignatures,
  getMultipleCompressedAccountProofs,
  getMultipleCompressedAccountProofsV2,
  getMultipleCompressedAccounts,
  getMultipleCompressedAccountsV2,
  getMultipleNewAddressProofs,
  getMultipleNewAddressProofsV2,
  getQueueElements,
  getQueueInfo,
  getTransactionWithCompressionInfo,
  getTransactionWithCompressionInfoV2,
  getValidityProof,
  getValidityProofV2,
  liveness,
  readiness,
] as MethodDefinition[];

const BY_NAME = new Map<string, MethodDefinition>();
for (const m of METHODS) {
  for (const name of [m.name, ...(m.aliases ?? [])]) {
    if (BY_NAME.has(name)) throw new Error(`duplicate JSON-RPC method name ${name}`);
    BY_NAME.set(name, m);
  }
}

/** Every name served (canonical names and aliases), sorted. */
export const METHOD_NAMES: readonly string[] = [...BY_NAME.keys()].sort();

/** The definition serving `name` (canonical or alias), or undefined. Own keys only (no prototype lookups). */
export function findMethod(name: string): MethodDefinition | undefined {
  return BY_NAME.get(name);
}

export type { MethodDefinition } from './lib/define.ts';
