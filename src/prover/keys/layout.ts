/**
 * Layout of a keys directory and its manifest (written by `setupCircuits`, read by the prover).
 *
 * ```
 * <keysDir>/manifest.json              KeysManifest
 * <keysDir>/<id>.wasm                  circom witness generator
 * <keysDir>/<id>.zkey                  Groth16 proving key (snarkjs)
 * <keysDir>/<id>.vkey.json             verification key (snarkjs JSON)
 * <keysDir>/<id>.vkey.solana.json      verification key, groth16-solana byte layout (hex)
 * <keysDir>/build/<id>/                compile output (r1cs, wasm), cached by source hash
 * <keysDir>/ptau/dev_pot<k>.ptau       a generated development ptau (INSECURE), when none was given
 * ```
 * Pure file-system helpers; no snarkjs.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ProverError } from '../errors.ts';

/** Manifest file name inside a keys directory. */
export const MANIFEST_FILE = 'manifest.json';
/** Manifest format version; other versions are rejected (re-run setup). */
export const MANIFEST_VERSION = 1;

/** Paths of one circuit's key files. */
export interface CircuitKeyFiles {
  wasm: string;
  zkey: string;
  vkey: string;
  vkeySolana: string;
  /** The native prover's fixed-base MSM tables for this zkey: written by the first load that builds them, read at later starts (`loadNativeKey`); not in the manifest, rebuilt when stale. */
  tables: string;
}

/** The key files of circuit `id` under `keysDir`. */
export function keyFiles(keysDir: string, id: string): CircuitKeyFiles {
  return {
    wasm: path.join(keysDir, `${id}.wasm`),
    zkey: path.join(keysDir, `${id}.zkey`),
    vkey: path.join(keysDir, `${id}.vkey.json`),
    vkeySolana: path.join(keysDir, `${id}.vkey.solana.json`),
    tables: tableFile(keysDir, id),
  };
}

/** The native prover's table file of circuit `id` in directory `dir` (the keys dir unless `proverTableFiles` names another). */
export function tableFile(dir: string, id: string): string {
  return path.join(dir, `${id}.tables`);
}

/**
 * Deletes circuit `id`'s table file in `dir` and the temporary files (`<file>.tmp.<pid>.<n>`) of
 * writers killed mid-write: after a new zkey, they are an earlier key's. A missing `dir` is no error.
 */
export async function removeTableFiles(dir: string, id: string): Promise<void> {
  const name = path.basename(tableFile(dir, id));
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const n of names) if (n === name || n.startsWith(`${name}.tmp.`)) await rm(path.join(dir, n), { force: true });
}

/** Size and SHA-256 of a file. */
export interface FileDigest {
  bytes: number;
  sha256: string;
}

/** One circuit in the manifest. */
export interface ManifestCircuit {
  id: string;
  kind: string;
  nAccounts: number;
  nAddresses: number;
  /** SHA-256 over the generated main file, the local circom sources it includes, circomlib and circom2 versions and flags. */
  sourceHash: string;
  /** Non-linear constraints of the compiled r1cs. */
  constraints: number;
  nPublic: number;
  ptauSha256: string;
  ptauPower: number;
  /** Hex hash of the zkey contribution (snarkjs `zkey contribute`). */
  contributionHash: string;
  files: { wasm: FileDigest; zkey: FileDigest; vkey: FileDigest; vkeySolana: FileDigest };
  timingsMs: { compile: number; zkey: number; vkey: number };
  createdAt: string;
}

/** `<keysDir>/manifest.json`. */
export interface KeysManifest {
  version: number;
  ptau?: {
    file: string;
    sha256: string;
    power: number;
    /** True when Refract generated it (one known contributor: development only). */
    insecureDev: boolean;
  };
  circuits: Record<string, ManifestCircuit>;
}

/** SHA-256 (hex) and size of a file, streamed. */
export async function digestFile(file: string): Promise<FileDigest> {
  const h = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file)) {
    h.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: h.digest('hex') };
}

/** Reads `<keysDir>/manifest.json`; undefined when absent. @throws ProverError `keys_missing` when unreadable */
export async function readManifest(keysDir: string): Promise<KeysManifest | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(keysDir, MANIFEST_FILE), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const m = JSON.parse(text) as KeysManifest;
    if (m.version !== MANIFEST_VERSION || typeof m.circuits !== 'object') throw new Error('unknown manifest version');
    return m;
  } catch (e) {
    throw new ProverError('keys_missing', `${path.join(keysDir, MANIFEST_FILE)}: ${(e as Error).message}; re-run setup`);
  }
}

/** Writes a file atomically: `<file>.tmp-<pid>` then rename. */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, data);
  await rename(tmp, file);
}

/** Writes `<keysDir>/manifest.json` atomically. */
export async function writeManifest(keysDir: string, m: KeysManifest): Promise<void> {
  await writeFileAtomic(path.join(keysDir, MANIFEST_FILE), JSON.stringify(m, null, 2) + '\n');
}

/**
 * Checks that the manifest lists each circuit and its files exist with the recorded sizes
 * (`deep`: and SHA-256 digests — about 0.1 s per 30 MB zkey).
 * @returns the manifest entries of `ids`
 * @throws ProverError `keys_missing` naming every missing or mismatching file, with the fix (run setup)
 */
export async function checkKeys(keysDir: string, ids: readonly string[], opts: { deep?: boolean } = {}): Promise<ManifestCircuit[]> {
  const m = await readManifest(keysDir);
  const problems: string[] = [];
  const out: ManifestCircuit[] = [];
  for (const id of ids) {
    const e = m?.circuits[id];
    if (!e) {
      problems.push(`${id}: not in ${path.join(keysDir, MANIFEST_FILE)}`);
      continue;
    }
    out.push(e);
    const files = keyFiles(keysDir, id);
    for (const k of ['wasm', 'zkey', 'vkey', 'vkeySolana'] as const) {
      const f = files[k];
      try {
        const s = await stat(f);
        if (s.size !== e.files[k].bytes) problems.push(`${f}: ${s.size} bytes, manifest says ${e.files[k].bytes}`);
        else if (opts.deep && (await digestFile(f)).sha256 !== e.files[k].sha256) problems.push(`${f}: SHA-256 differs from the manifest`);
      } catch {
        problems.push(`${f}: missing`);
      }
    }
  }
  if (problems.length) {
    throw new ProverError('keys_missing', `proving keys in ${keysDir} are incomplete (run \`refract setup\`):\n  ${problems.join('\n  ')}`, { problems });
  }
  return out;
}
