/**
 * What the proving threads (workers/prove.ts, src/prover/engine/lightThread.ts) use of the addon's Light-key
 * functions, and its error codes; kept free of imports with top-level await so the thread's module
 * graph loads through `require`.
 */
import type { ProverErrorCode } from '../errors.ts';

/** The addon functions the Light prover threads use (native/kernels/src/binding.c). */
export interface LightProverAddon {
  /** `resident`: the `.lkr` bytes, or its path (the addon maps the file for the parse: no copy of it in the JS heap). */
  lightKeyLoad(resident: Uint8Array | string): unknown;
  lightKeyProve(handle: unknown, inputs: Uint8Array, out: Uint8Array, rs: Uint8Array | null, times: Float64Array): void;
  lightKeyVerify(handle: unknown, proof: Uint8Array, publics: Uint8Array): boolean;
  lightKeyTables(handle: unknown, maxBytes: number, path?: string): { bytes: number; need: number; source: 'none' | 'built' | 'file' | 'shared'; note: string };
  /** solveThreads: constraints the solve's first and second thread take ([0, m]: one thread; the key has no independent parts to split). */
  lightKeyInfo(handle: unknown): { nbWires: number; nbPub: number; nbSec: number; m: number; n: number; bytes: number; solveThreads: [number, number] };
}

/** Maps an addon error code (ERR_LIGHT_*) to the prover error code. */
export function lightAddonErrorCode(code: string | undefined): ProverErrorCode {
  switch (code) {
    case 'ERR_LIGHT_INPUT':
      return 'witness_failed';
    case 'ERR_LIGHT_KEY':
      return 'keys_missing';
    case 'ERR_LIGHT_VERIFY':
      return 'verify_failed';
    default:
      return 'internal';
  }
}

/**
 * Default budget of one Light key's fixed-base MSM tables, MiB ($REFRACT_LIGHT_TABLE_MB): 48 covers
 * mainnet_inclusion_26_1 (38.6 MiB) and the other one-account / one-address keys of similar size;
 * bigger keys use plain MSMs (memory: all 24 keys resident stay well under 1 GB).
 */
export const LIGHT_TABLE_MB_DEFAULT = 48;
