/**
 * Shared by getMultipleNewAddressProofs (V1: addresses go to amt1) and getMultipleNewAddressProofsV2.
 */
import type { AddressWithTree, RpcContext } from '../../context.ts';
import { encodeNewAddressProof, withContext } from '../../resultEncoding.ts';
import { RpcError } from '../../errors.ts';
import { slotOrZero } from './shared.ts';

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

/**
 * Every tree in `items` must be a known address tree (given by its tree pubkey), else
 * `Invalid Public Key: field 'tree'`.
 */
export async function checkAddressTrees(ctx: RpcContext, items: AddressWithTree[]): Promise<void> {
  const seen = new Set<string>();
  for (const { tree } of items) {
    const key = Buffer.from(tree).toString('hex');
    if (seen.has(key)) continue;
    seen.add(key);
    const info = await ctx.data.getTreeInfo(tree);
    if (!info || !sameBytes(info.tree, tree) || (info.treeType !== 2 && info.treeType !== 4)) {
      throw RpcError.invalidPubkey('tree');
    }
  }
}

/**
 * `{context, value: [NewAddressProof]}` in request order; empty → `Validation Error: No addresses
 * provided`; a tree that is not a known address tree → `Invalid Public Key: field 'tree'`; an address
 * already in its address tree or in an AddressV2 address queue → `Validation Error: Address <base58>
 * already exists` (the data source's check, see `RpcDataSource.getNewAddressProofs`). A store
 * with nothing indexed answers too: every address tree is empty, so each proof is the empty tree's
 * (src/query/addressProofs.ts `emptyTreeAddressProof`) with `context.slot` 0.
 */
export async function newAddressProofs(ctx: RpcContext, items: AddressWithTree[]) {
  if (items.length === 0) throw RpcError.validation('No addresses provided');
  const slot = await slotOrZero(ctx);
  await checkAddressTrees(ctx, items);
  const proofs = await ctx.data.getNewAddressProofs(items);
  return withContext(slot, proofs.map(encodeNewAddressProof));
}
