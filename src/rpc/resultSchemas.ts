/**
 * zod schemas of every JSON-RPC method's `result`, as the reference indexer (Photon) serialises it
 * (photon.md §3, client.md §2.1) and src/rpc/resultEncoding.ts writes it. They document responses in
 * `openapi.json` (src/rpc/openapi.ts, output side) and the tests check every golden response against
 * them (test/rpc.resultSchemas.test.ts). They are not run on the request path.
 *
 * Every object is strict (an unknown key fails), so a field added to a response must be added here.
 * Scalars, in the field's terms:
 * - `Pubkey`, `Hash`: base58 of 32 bytes (a `Hash` is also a BN254 field element, big-endian, below
 *   the modulus); `Signature`: base58 of 64 bytes; `Base58String`: base58 of any bytes (cursors);
 * - `UnsignedInteger`: an exact JSON number carrying a u64 (never a string, even above 2^53);
 * - `Base64String`: standard base64 with padding (account data, TLV).
 *
 * The shared shapes carry an `id` in `RESULT_REGISTRY`, so openapi.json lists them once under
 * `components.schemas` and refers to them (`Account`, `AccountV2`, `TokenData`, …).
 */
import * as base58 from '../solana/base58.ts';
import { z } from 'zod';
import { BN254_MODULUS } from './schemas.ts';

/** Named shapes (`id` = their key in `components.schemas` of openapi.json). */
export const RESULT_REGISTRY = z.registry<{ id: string }>();

/** `schema` with `description`, registered in RESULT_REGISTRY under `id`. */
function named<T extends z.ZodType>(id: string, description: string, schema: T): T {
  const described = schema.meta({ description }) as T;
  RESULT_REGISTRY.add(described, { id });
  return described;
}

const BASE58_RE = /^[1-9A-HJ-NP-Za-km-z]+$/;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Byte length of base58 text, or -1 when it is not base58. */
function base58Length(s: string): number {
  const b = base58.tryDecode(s);
  return b ? b.length : -1;
}

/** Base58 text of exactly `size` bytes (JSON Schema: pattern and length bounds; zod also decodes). */
function base58Of(size: number) {
  const maxChars = Math.ceil((size * 8) / Math.log2(58));
  return z
    .string()
    .min(1)
    .max(maxChars)
    .regex(BASE58_RE)
    .refine((s) => base58Length(s) === size, { error: `expected base58 of ${size} bytes` });
}

/** A 32-byte public key (also addresses, Photon `SerializablePubkey`), base58. */
export const Pubkey = named('Pubkey', 'Base58-encoded 32-byte public key (also used for addresses)', base58Of(32).meta({ format: 'base58' }));

const MODULUS_BE = Buffer.from(BN254_MODULUS.toString(16).padStart(64, '0'), 'hex');

/** A 32-byte hash: base58, big-endian value below the BN254 modulus (Photon `Hash`). */
export const Hash = named(
  'Hash',
  'Base58-encoded 32-byte hash, a BN254 field element (big-endian, below the modulus)',
  base58Of(32)
    .refine((s) => base58Length(s) !== 32 || Buffer.compare(Buffer.from(base58.decodeValidated(s)), MODULUS_BE) < 0, { error: 'not below the BN254 modulus' })
    .meta({ format: 'base58' }),
);

/** A 64-byte transaction signature, base58. */
export const Signature = named('Signature', 'Base58-encoded 64-byte transaction signature', base58Of(64).meta({ format: 'base58' }));

/** Base58 text of any bytes (Photon `Base58String`): pagination cursors. */
export const Base58String = named('Base58String', 'Base58-encoded bytes (pagination cursor: pass it back as `cursor`)', z.string().min(1).regex(BASE58_RE).meta({ format: 'base58' }));

/** Standard base64 with padding. */
export const Base64String = named('Base64String', 'Standard base64 (with padding)', z.string().regex(BASE64_RE).meta({ format: 'byte' }));

/**
 * A u64 as an exact JSON number (Photon `UnsignedInteger`; Refract writes values above 2^53 digit for
 * digit). zod: a non-negative integer-valued number (a parsed value above 2^53 is inexact but still
 * an integer).
 */
export const UnsignedInteger = named(
  'UnsignedInteger',
  'Unsigned 64-bit integer, written as an exact JSON number (digit for digit above 2^53; never a string)',
  z
    .number()
    .min(0)
    .refine((n) => Number.isInteger(n), { error: 'expected an integer' })
    .meta({ type: 'integer', format: 'uint64' }),
);

/** A u32 (leaf indices of state trees, height ≤ 32). */
const u32 = z.int().min(0).max(0xffff_ffff).meta({ format: 'uint32' });
/** A u16 (root indices: Light's root-history index). */
const u16 = z.int().min(0).max(0xffff).meta({ format: 'uint16' });

/** Light's tree type: 1 StateV1, 2 AddressV1, 3 StateV2, 4 AddressV2. */
export const TreeType = named('TreeType', "Light's tree type: 1 StateV1, 2 AddressV1, 3 StateV2, 4 AddressV2", z.literal([1, 2, 3, 4]).meta({ type: 'integer' }));

/** `{slot}`: the last indexed slot the answer was read at. */
export const Context = named('Context', 'The indexed slot the answer was read at', z.strictObject({ slot: UnsignedInteger }));

/** `{context, value}`: the result shape of most methods. */
function withContext<T extends z.ZodType>(value: T) {
  return z.strictObject({ context: Context, value });
}

/** `{discriminator, data, dataHash}` of an account. */
export const AccountData = named(
  'AccountData',
  'Account data: 8-byte discriminator (read little-endian as a u64), data bytes (base64), and their hash',
  z.strictObject({ discriminator: UnsignedInteger, data: Base64String, dataHash: Hash }),
);

/** The fields both account shapes open with, in Photon's key order. */
const accountHead = { hash: Hash, address: Pubkey.nullable(), data: AccountData.nullable(), owner: Pubkey, lamports: UnsignedInteger };
/** The fields both account shapes carry after the V1 shape's `tree`. */
const accountPosition = { leafIndex: u32, seq: UnsignedInteger.nullable(), slotCreated: UnsignedInteger };

/** V1 `Account` (Photon key order). */
export const Account = named(
  'Account',
  'A compressed account (V1 shape); `seq` is null for accounts of batched (v2) trees',
  z.strictObject({ ...accountHead, tree: Pubkey, ...accountPosition }),
);

/** `TreeContextInfo`: a tree, its queue and type (`treeContext` of V2 proofs). */
export const TreeContextInfo = named(
  'TreeContextInfo',
  'A Merkle tree: its type, pubkey, queue (nullifier queue for StateV1, output queue for StateV2) and CPI context account',
  z.strictObject({ treeType: TreeType, tree: Pubkey, queue: Pubkey, cpiContext: Pubkey.nullable() }),
);

/** `MerkleContextV2`: TreeContextInfo plus the tree that follows it after a rollover. */
export const MerkleContextV2 = named(
  'MerkleContextV2',
  'The tree of an account (TreeContextInfo) and the tree that follows it after a rollover (null: none)',
  z.strictObject({ treeType: TreeType, tree: Pubkey, queue: Pubkey, cpiContext: Pubkey.nullable(), nextTreeContext: TreeContextInfo.nullable() }),
);

/** `AccountV2` (Photon key order). */
export const AccountV2 = named(
  'AccountV2',
  'A compressed account (V2 shape): proveByIndex = still in the output queue of a batched tree',
  z.strictObject({ ...accountHead, ...accountPosition, proveByIndex: z.boolean(), merkleContext: MerkleContextV2 }),
);

/** `TokenData` of a compressed token account. */
export const TokenData = named(
  'TokenData',
  'Compressed-token data of an account; tlv = extension bytes (base64) or null',
  z.strictObject({
    mint: Pubkey,
    owner: Pubkey,
    amount: UnsignedInteger,
    delegate: Pubkey.nullable(),
    state: z.enum(['initialized', 'frozen']),
    tlv: Base64String.nullable(),
  }),
);

/** V1 `MerkleProofWithContext`. */
export const MerkleProofWithContext = named(
  'MerkleProofWithContext',
  'Merkle proof of a leaf (siblings from the leaf up), the root it proves against and its sequence number',
  z.strictObject({ proof: z.array(Hash), root: Hash, leafIndex: u32, hash: Hash, merkleTree: Pubkey, rootSeq: UnsignedInteger }),
);

/** V2 `MerkleProofWithContextV2`. */
export const MerkleProofWithContextV2 = named(
  'MerkleProofWithContextV2',
  'Merkle proof of a leaf with its tree; proveByIndex = the account is still in the output queue (the multi-hash method then returns proof [], root 1111…1111 and rootSeq 0)',
  z.strictObject({
    proof: z.array(Hash),
    root: Hash,
    leafIndex: u32,
    hash: Hash,
    rootSeq: UnsignedInteger,
    proveByIndex: z.boolean(),
    treeContext: TreeContextInfo,
  }),
);

/** `MerkleContextWithNewAddressProof`: non-inclusion proof of a new address. */
export const NewAddressProof = named(
  'NewAddressProof',
  'Non-inclusion proof of a new address: the low element (lowerRangeAddress < address < higherRangeAddress, nextIndex), its leaf index and Merkle path',
  z.strictObject({
    root: Hash,
    address: Pubkey,
    lowerRangeAddress: Pubkey,
    higherRangeAddress: Pubkey,
    nextIndex: UnsignedInteger,
    proof: z.array(Hash),
    merkleTree: Pubkey,
    rootSeq: UnsignedInteger,
    lowElementLeafIndex: UnsignedInteger,
  }),
);

const signatureFields = { signature: Signature, slot: UnsignedInteger, blockTime: UnsignedInteger };
/** `SignatureInfo`. */
export const SignatureInfo = named('SignatureInfo', 'A transaction signature with its slot and block time (Unix seconds)', z.strictObject(signatureFields));
/** `SignatureInfoWithError`: SignatureInfo's fields, then `error`. */
export const SignatureInfoWithError = named(
  'SignatureInfoWithError',
  'A transaction signature with its slot, block time and error (null: succeeded)',
  z.strictObject({ ...signatureFields, error: z.string().nullable() }),
);

/** Bytes as an array of numbers 0..255, exactly `n` of them. */
const byteArray = (n: number) => z.array(z.int().min(0).max(255)).length(n);

/** `CompressedProof`: a Groth16 proof in Light's compressed encoding. */
export const CompressedProof = named(
  'CompressedProof',
  "Groth16 proof (BN254) in Light's compressed encoding, as byte arrays: a = −A compressed (32 bytes), b = B compressed (64), c = C compressed (32)",
  z.strictObject({ a: byteArray(32), b: byteArray(64), c: byteArray(32) }),
);

/** V1 `CompressedProofWithContext`: parallel arrays, accounts then addresses. */
export const CompressedProofWithContext = named(
  'CompressedProofWithContext',
  'Validity proof (V1 shape): parallel arrays over the accounts, then the new addresses (leafIndices: the low element leaf index for an address; leaves: the account hash or the address)',
  z.strictObject({
    compressedProof: CompressedProof,
    roots: z.array(Hash),
    rootIndices: z.array(UnsignedInteger),
    leafIndices: z.array(UnsignedInteger),
    leaves: z.array(Pubkey).meta({ description: 'Base58 32-byte values: the account hashes, then the new addresses' }),
    merkleTrees: z.array(Pubkey),
    warning: z.string().optional().meta({ description: "Present only with --own-circuits, when Refract's own circuit keys made the proof: Light's on-chain verifier rejects it" }),
  }),
);

/** V2 `CompressedProofWithContextV2`. */
export const CompressedProofWithContextV2 = named(
  'CompressedProofWithContextV2',
  'Validity proof (V2 shape); compressedProof is null when nothing needed the prover (every account proved by index)',
  z.strictObject({
    compressedProof: CompressedProof.nullable(),
    accounts: z.array(
      z.strictObject({
        hash: Hash,
        root: Hash,
        rootIndex: z.strictObject({ rootIndex: u16, proveByIndex: z.boolean() }),
        leafIndex: u32,
        merkleContext: MerkleContextV2,
      }),
    ),
    addresses: z.array(z.strictObject({ address: Pubkey, root: Hash, rootIndex: u16, merkleContext: MerkleContextV2 })),
    warning: z.string().optional().meta({ description: "Present only with --own-circuits, when Refract's own circuit keys made the proof: Light's on-chain verifier rejects it" }),
  }),
);

/** A token account: V1 or V2 account shape with its token data. */
const tokenAccount = <A extends z.ZodType>(account: A) => z.strictObject({ account, tokenData: TokenData });
/** `{account: Account, tokenData}` (V1 token-account listings). */
export const TokenAccount = named('TokenAccount', 'A compressed token account (V1 account shape) and its token data', tokenAccount(Account));
/** `{account: AccountV2, tokenData}` (V2 token-account listings). */
export const TokenAccountV2 = named('TokenAccountV2', 'A compressed token account (V2 account shape) and its token data', tokenAccount(AccountV2));

/** `{mint, balance}` of an owner. */
export const TokenBalance = named('TokenBalance', "An owner's total balance of one mint", z.strictObject({ mint: Pubkey, balance: UnsignedInteger }));

/**
 * The Solana `getTransaction` result (base64 encoding) passed through verbatim: the top-level keys
 * are typed, `meta` is Solana's own object (open), other keys Solana adds are allowed.
 */
export const SolanaTransaction = named(
  'SolanaTransaction',
  "The Solana getTransaction result (encoding base64), passed through verbatim from the node: slot, blockTime, [wire transaction, 'base64'], meta, version",
  z.looseObject({
    slot: UnsignedInteger,
    blockTime: z.int().nullable(),
    transaction: z.tuple([Base64String, z.literal('base64')]),
    meta: z.looseObject({ err: z.unknown().meta({ description: 'Solana TransactionError, null when it succeeded' }) }).nullable(),
    version: z.union([z.literal('legacy'), z.int().min(0)]).optional(),
  }),
);

/** Optional token data of a transaction's account. */
const optionalTokenData = TokenData.nullable();

const cursor = Base58String.nullable().meta({ description: 'Pass back as `cursor` for the next page; null when this page is not full' });

/** `{context, value: {items: SignatureInfo[], cursor}}` (a fresh instance per method). */
const signaturePage = () => withContext(z.strictObject({ items: z.array(SignatureInfo), cursor }));

/** getQueueElements: the output queue slice of a StateV2 tree. */
const OutputQueueSlice = z.strictObject({
  leafIndices: z.array(u32),
  accountHashes: z.array(Hash),
  leaves: z.array(Hash),
  firstQueueIndex: UnsignedInteger,
  nextIndex: UnsignedInteger,
  leavesHashChains: z.array(Hash).meta({ description: 'Poseidon hash chain of the account hashes of every whole ZKP batch' }),
});

/** getQueueElements: the input (nullifier) queue slice of a StateV2 tree. */
const InputQueueSlice = z.strictObject({
  leafIndices: z.array(u32),
  accountHashes: z.array(Hash),
  leaves: z.array(Hash),
  txHashes: z.array(Hash),
  nullifiers: z.array(Hash),
  firstQueueIndex: UnsignedInteger,
  leavesHashChains: z.array(Hash).meta({ description: 'Poseidon hash chain of the nullifiers of every whole ZKP batch' }),
});

/** getQueueElements: the address queue slice of an AddressV2 tree. */
const AddressQueueSlice = z.strictObject({
  addresses: z.array(Pubkey),
  queueIndices: z.array(UnsignedInteger),
  nodes: z.array(UnsignedInteger).meta({ description: 'Node ids `(level << 56) | position` (level 0 = leaves) of the low elements\' proofs and leaves, deduplicated, ascending' }),
  nodeHashes: z.array(Hash),
  lowElementIndices: z.array(UnsignedInteger),
  lowElementValues: z.array(Hash),
  lowElementNextIndices: z.array(UnsignedInteger),
  lowElementNextValues: z.array(Hash),
  lowElementProofs: z.array(z.array(Hash)).meta({ description: 'Per address, the 40 siblings of its low element' }),
  leavesHashChains: z.array(Hash).meta({ description: 'Poseidon hash chain of the addresses of every whole ZKP batch (addressQueueZkpBatchSize)' }),
  initialRoot: Hash,
  startIndex: UnsignedInteger,
  subtrees: z.array(Hash).meta({ description: 'Per level, the right-most left-hand node (Photon get_subtrees)' }),
  rootSeq: UnsignedInteger,
});

/**
 * The `result` schema of each method, by canonical name (aliases share their method's). Covered by
 * a test: every method in src/rpc/methods has one, and nothing else is listed.
 */
export const RESULT_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  getCompressedAccount: withContext(Account.nullable()),
  getCompressedAccountV2: withContext(AccountV2.nullable()),
  getCompressedAccountProof: withContext(MerkleProofWithContext),
  getCompressedAccountProofV2: withContext(MerkleProofWithContextV2),
  getCompressedAccountsByOwner: withContext(z.strictObject({ items: z.array(Account), cursor: Hash.nullable() })),
  getCompressedAccountsByOwnerV2: withContext(z.strictObject({ items: z.array(AccountV2), cursor: Hash.nullable() })),
  getCompressedBalance: withContext(UnsignedInteger),
  getCompressedBalanceByOwner: withContext(UnsignedInteger),
  getCompressedMintTokenHolders: withContext(z.strictObject({ items: z.array(z.strictObject({ owner: Pubkey, balance: UnsignedInteger })), cursor })),
  getCompressedTokenAccountBalance: withContext(z.strictObject({ amount: UnsignedInteger })),
  getCompressedTokenAccountsByDelegate: withContext(z.strictObject({ items: z.array(TokenAccount), cursor })),
  getCompressedTokenAccountsByDelegateV2: withContext(z.strictObject({ items: z.array(TokenAccountV2), cursor })),
  getCompressedTokenAccountsByOwner: withContext(z.strictObject({ items: z.array(TokenAccount), cursor })),
  getCompressedTokenAccountsByOwnerV2: withContext(z.strictObject({ items: z.array(TokenAccountV2), cursor })),
  // Photon V1 quirk: the key is snake_case.
  getCompressedTokenBalancesByOwner: withContext(z.strictObject({ token_balances: z.array(TokenBalance), cursor: Pubkey.nullable() })),
  getCompressedTokenBalancesByOwnerV2: withContext(z.strictObject({ items: z.array(TokenBalance), cursor: Pubkey.nullable() })),
  getCompressionSignaturesForAccount: withContext(z.strictObject({ items: z.array(SignatureInfo) })),
  getCompressionSignaturesForAddress: signaturePage(),
  getCompressionSignaturesForOwner: signaturePage(),
  getCompressionSignaturesForTokenOwner: signaturePage(),
  getIndexerHealth: z.literal('ok').meta({ description: 'The indexer is within the configured lag of the Solana node (otherwise an error)' }),
  getIndexerSlot: UnsignedInteger.meta({ description: 'The last indexed slot (a bare number, no context)' }),
  getLatestCompressionSignatures: signaturePage(),
  getLatestNonVotingSignatures: withContext(z.strictObject({ items: z.array(SignatureInfoWithError) })),
  getMultipleCompressedAccountProofs: withContext(z.array(MerkleProofWithContext)),
  getMultipleCompressedAccountProofsV2: withContext(z.array(MerkleProofWithContextV2)),
  getMultipleCompressedAccounts: withContext(z.strictObject({ items: z.array(Account.nullable()) })),
  getMultipleCompressedAccountsV2: withContext(z.strictObject({ items: z.array(AccountV2.nullable()) })),
  getMultipleNewAddressProofs: withContext(z.array(NewAddressProof)),
  getMultipleNewAddressProofsV2: withContext(z.array(NewAddressProof)),
  getQueueElements: z.strictObject({
    context: Context,
    stateQueue: z
      .strictObject({
        nodes: z.array(UnsignedInteger).optional().meta({ description: 'Node ids `(level << 56) | position` of every returned leaf\'s path, deduplicated; left out when empty' }),
        nodeHashes: z.array(Hash).optional(),
        initialRoot: Hash,
        rootSeq: UnsignedInteger,
        outputQueue: OutputQueueSlice.optional(),
        inputQueue: InputQueueSlice.optional(),
      })
      .optional()
      .meta({ description: 'Present when the output or input queue was requested' }),
    addressQueue: AddressQueueSlice.optional().meta({ description: 'Present when the address queue was requested' }),
  }),
  getQueueInfo: z.strictObject({
    queues: z.array(
      z.strictObject({
        tree: Pubkey,
        queue: Pubkey,
        queueType: z.literal([3, 4, 5]).meta({ type: 'integer', description: "Light's QueueType: 3 InputStateV2, 4 AddressV2, 5 OutputStateV2" }),
        queueSize: UnsignedInteger,
      }),
    ),
    slot: UnsignedInteger,
  }),
  getTransactionWithCompressionInfo: z.strictObject({
    transaction: SolanaTransaction,
    compressionInfo: z.strictObject({
      closedAccounts: z.array(z.strictObject({ account: Account, optionalTokenData })),
      openedAccounts: z.array(z.strictObject({ account: Account, optionalTokenData })),
    }),
  }),
  getTransactionWithCompressionInfoV2: z.strictObject({
    transaction: SolanaTransaction,
    compressionInfo: z.strictObject({
      closedAccounts: z.array(
        z.strictObject({
          account: z.strictObject({
            account: AccountV2,
            nullifier: Hash.meta({ description: 'Nullifier of the spent account; 1111…1111 (32 zero bytes) when it has none' }),
            txHash: Hash.meta({ description: 'Hash of the spending transaction; 1111…1111 (32 zero bytes) when it has none' }),
          }),
          optionalTokenData,
        }),
      ),
      openedAccounts: z.array(z.strictObject({ account: AccountV2, optionalTokenData })),
    }),
  }),
  getValidityProof: withContext(CompressedProofWithContext),
  getValidityProofV2: withContext(CompressedProofWithContextV2),
  liveness: z.null().meta({ description: 'null: the server answers' }),
  readiness: z.null().meta({ description: 'null: the store can be read' }),
};

// Each result is a named component too (`<method>Result`); one schema instance per method.
for (const [name, schema] of Object.entries(RESULT_SCHEMAS)) {
  if (RESULT_REGISTRY.has(schema)) throw new Error(`result schema of ${name} is shared with another name; give it its own instance`);
  RESULT_REGISTRY.add(schema, { id: resultSchemaId(name) });
}

/** The component name of method `name`'s result in openapi.json: `<name>Result`. */
export function resultSchemaId(name: string): string {
  return `${name}Result`;
}

/**
 * The result schema of the method `name` (canonical name; an alias resolves through its method's
 * definition, not here).
 * @throws Error `no result schema for method <name>` when none is registered (a new method must add one).
 */
export function resultSchemaOf(name: string): z.ZodType {
  const s = Object.hasOwn(RESULT_SCHEMAS, name) ? RESULT_SCHEMAS[name] : undefined;
  if (!s) throw new Error(`no result schema for method ${name} (add it to src/rpc/resultSchemas.ts)`);
  return s;
}
