/**
 * Zero values of Light's Poseidon Merkle trees (spec prover.md §4.1, photon.md §2.2).
 *
 * `ZERO_BYTES[0]` = 32 zero bytes (the empty leaf); `ZERO_BYTES[i + 1]` = Poseidon(Z[i], Z[i]).
 * `ZERO_BYTES[h]` is the root of an empty tree of height h (26 → v1 state tree, 32 → v2 state,
 * 40 → v2 address). Same table as light `program-libs/hasher/src/zero_bytes/poseidon.rs` and Photon
 * `persisted_state_tree.rs::ZERO_BYTES`. Computed once at module load (40 hashes).
 */
import { poseidon2 } from './poseidon.ts';

/** Largest tabulated height. */
export const MAX_HEIGHT = 40;

function computeZeroBytes(): readonly Uint8Array[] {
  const z: Uint8Array[] = [new Uint8Array(32)];
  for (let i = 0; i < MAX_HEIGHT; i++) z.push(poseidon2(z[i]!, z[i]!));
  return Object.freeze(z);
}

/**
 * Z[0..40]: 41 entries, each 32 bytes big-endian. Shared instances: do not mutate them
 * (copy before handing them to code that writes into buffers).
 */
export const ZERO_BYTES: Uint8Array[] = computeZeroBytes() as Uint8Array[];
