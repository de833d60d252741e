/** Program ids and protocol constants of Light Protocol v1 (spec photon.md §0). */
/** The ids the Solana decoder needs too live in the codec below (solana/programIds.ts). */
export { ACCOUNT_COMPRESSION_PROGRAM_ID, SYSTEM_PROGRAM_ID, VOTE_PROGRAM_ID } from '../solana/programIds.ts';
export const LIGHT_SYSTEM_PROGRAM_ID = 'SySTEM1eSU2p4BGQfQpimFEWWSC1XDFeun3Nqzz3rT7';
export const NOOP_PROGRAM_ID = 'noopb9bkMVfRPU8AsbpTUg8AQkHtKwMYZiFUjNRtMmV';
export const COMPRESSED_TOKEN_PROGRAM_ID = 'cTokenmWW8bLPjZEBAUgYy3zKxQZW6VKi7bqNFEVv3m';
export const LIGHT_REGISTRY_PROGRAM_ID = 'Lighton6oQpVkeewmo2mcPTQQp7kYHr4fWpAgJyEmDX';
export const REGISTERED_PROGRAM_PDA = '35hkDgaAKwMCaxRz2ocSZ6NaUrtKkyNqU6c4RV3tYJRh';
export const ADDRESS_TREE_V1 = 'amt1Ayt45jfbdw5YSo7iz6WZxUmnZsQTYXy82hVwyC2';
export const ADDRESS_QUEUE_V1 = 'aq1S9z4reTSQAdgWHGD2zDaS39sjGrAxbR31vxJ2F4F';
/**
 * The tree owner Photon keeps (photon.md §0 "Expected tree owner"): AccessMetadata.owner of Light's
 * trees on mainnet, devnet and the local CLI validator alike.
 */
export const DEFAULT_TREE_OWNER = '24rt4RgeyjUCWGS2eF7L7gyNMuz6JWdqYpAvb1KRoHxs';
/** Maximum items per page / batch request. */
export const PAGE_LIMIT = 1000;
/**
 * Retired Light program ids (photon.md §1.6: fixtures recorded with them index nothing today), with the
 * label `refract_ingest_unparsed_light_transactions_total` counts them under.
 */
export const OBSOLETE_LIGHT_PROGRAMS: Readonly<Record<string, string>> = {
  CbjvJc1SNx1aav8tU49dJGHu8EUdzQJSMtkjDmV8miqK: 'obsolete-account-compression',
  '5QPEJ5zDsVou9FQS3KCauKswM3VwBEBu4dpL9xTqkWwN': 'obsolete-account-compression',
  H5sFv8VwWmjxHYS2GB4fTDsK7uTtnRT4WiixtHrET3bN: 'obsolete-light-system',
  '6UqiSPd2mRCTTwkzhcs1M6DGYsqHWd5jiPueX3LwDMXQ': 'obsolete-light-system',
};
