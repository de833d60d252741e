/**
 * On-chain program ids the Solana wire decoder needs (spec photon.md §0, §1.3): Solana's own system and
 * vote programs, and Light's account-compression program, which the default skim filter selects. They
 * live here, in the lowest codec, so that solana/decode.ts imports nothing from light/; light/constants.ts
 * re-exports them under the same names. Values are base58 text.
 */
export const ACCOUNT_COMPRESSION_PROGRAM_ID = 'compr6CUsB5m2jS4Y3831ztGSTnDpnKJTKS95d64XVq';
export const SYSTEM_PROGRAM_ID = '11111111111111111111111111111111';
export const VOTE_PROGRAM_ID = 'Vote111111111111111111111111111111111111111';
