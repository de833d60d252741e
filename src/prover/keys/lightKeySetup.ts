/**
 * `refract setup --light-keys [DIR]`: Light's proving keys into Refract's resident form, once.
 *
 * Sources: the `.key` files in DIR (a Light CLI's `bin/proving-keys/`, or any directory holding
 * them), or, without DIR, the two CLI packages from the configured npm registry (`npm pack
 * @lightprotocol/zk-compression-cli@0.27.0` and `@0.18.0`, 151 MB each) cached in
 * `<keys>/light/cache/` (or $REFRACT_LIGHT_CACHE), each checked against its registry integrity
 * (sha512, light-keys §11) before it is unpacked. Every key is checked against its pinned sha256
 * (lightKeys.ts `LIGHT_KEYS`) and converted (`convertLightKey`) into `<keys>/light/<name>.lkr`
 * (written to a temporary file, then renamed) with `<name>.json` beside it recording the source
 * sha256, so a restart only reads the resident files. One setup per keys directory at a time (the
 * lock of keySetup.ts on `<keys>/light`).
 */
import { envValue } from '../../config/config.ts';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { nativeAddon } from '../../native.ts';
import { ProverError } from '../errors.ts';
import { acquireSetupLock } from './keySetup.ts';
import { convertLightKey, LIGHT_CLI_PACKAGES, LIGHT_KEYS, sha256Hex, type LightCliVersion, type LightKeyAddon, type LightKeySpec } from './lightKeys.ts';
import { lightKeysDir, residentFile } from './lightKeyTable.ts';

export { lightKeysDir, residentFile } from './lightKeyTable.ts';

const run = promisify(execFile);

/** The package cache: $REFRACT_LIGHT_CACHE, else `<keysDir>/light/cache`. */
export function lightCacheDir(keysDir: string): string {
  const env = envValue('REFRACT_LIGHT_CACHE')?.trim();
  return env ? path.resolve(env) : path.join(lightKeysDir(keysDir), 'cache');
}

/** Where `fetchLightPackage` unpacks a CLI package: `<cacheDir>/<version>/package`. */
export function lightPackageDir(cacheDir: string, version: LightCliVersion): string {
  return path.join(cacheDir, version, 'package');
}

function metaFile(keysDir: string, s: LightKeySpec): string {
  return path.join(lightKeysDir(keysDir), `${s.name}.json`);
}

/** True when the key's resident file and its record (matching the pinned sha256) exist. */
export function lightKeyReady(keysDir: string, s: LightKeySpec): boolean {
  return existsSync(residentFile(keysDir, s)) && existsSync(metaFile(keysDir, s));
}

/** The names of the Light keys whose resident files exist under `keysDir`. */
export function readyLightKeys(keysDir: string): string[] {
  return LIGHT_KEYS.filter((s) => lightKeyReady(keysDir, s)).map((s) => s.name);
}

/** Where a missing key comes from, for error messages. */
export function lightKeySource(s: LightKeySpec): string {
  return `${s.file} from ${LIGHT_CLI_PACKAGES[s.pkg].spec} (package/bin/proving-keys/${s.file}); run \`refract setup --light-keys [DIR]\``;
}

function sha512Base64(b: Uint8Array): string {
  return `sha512-${createHash('sha512').update(b).digest('base64')}`;
}

/**
 * The unpacked `package/` of a CLI package in the cache, fetched with `npm pack` (the configured
 * registry) when missing and checked against the pinned registry integrity (sha512) first.
 * @param opts.extra paths under `package/` to unpack besides `bin/proving-keys` (e.g. `bin/prover-linux-x64`)
 * @returns the unpacked `package` directory
 * @throws ProverError `setup_failed` when npm fails, or the tarball's integrity differs from the pin
 */
export async function fetchLightPackage(cacheDir: string, version: LightCliVersion, opts: { extra?: string[]; log?: (m: string) => void } = {}): Promise<string> {
  const pkg = LIGHT_CLI_PACKAGES[version];
  mkdirSync(cacheDir, { recursive: true });
  const tgz = path.join(cacheDir, `lightprotocol-zk-compression-cli-${version}.tgz`);
  const pkgDir = lightPackageDir(cacheDir, version);
  const unpacked = path.dirname(pkgDir);
  const want = ['bin/proving-keys', ...(opts.extra ?? [])];
  if (want.every((p) => existsSync(path.join(pkgDir, p)))) return pkgDir;
  if (!existsSync(tgz) || sha512Base64(await readFile(tgz)) !== pkg.integrity) {
    opts.log?.(`fetching ${pkg.spec} (151 MB) from the npm registry into ${cacheDir}`);
    await rm(tgz, { force: true });
    try {
      await run('npm', ['pack', pkg.spec, '--pack-destination', cacheDir, '--json'], { maxBuffer: 64 << 20, timeout: 30 * 60_000 });
    } catch (e) {
      throw new ProverError('setup_failed', `npm pack ${pkg.spec} failed: ${(e as Error).message.split('\n')[0]}`);
    }
    const got = sha512Base64(await readFile(tgz));
    if (got !== pkg.integrity) {
      await rm(tgz, { force: true });
      throw new ProverError('setup_failed', `${pkg.spec}: tarball integrity ${got} differs from the pinned ${pkg.integrity}; removed`);
    }
  }
  mkdirSync(unpacked, { recursive: true });
  try {
    await run('tar', ['-xzf', tgz, '-C', unpacked, ...want.map((p) => `package/${p}`)], { maxBuffer: 16 << 20 });
  } catch (e) {
    throw new ProverError('setup_failed', `unpacking ${tgz}: ${(e as Error).message.split('\n')[0]}`);
  }
  return pkgDir;
}

/** One key's outcome in `setupLightKeys`. */
export interface LightKeySetupItem {
  name: string;
  /** converted now, already resident, or not found in the source. */
  status: 'converted' | 'cached' | 'missing';
  source?: string;
  ms?: number;
}

/** Progress callback: `done` of `total` keys, the one being worked on. */
export type LightSetupProgress = (p: { done: number; total: number; name: string; status: string }) => void;

/** Options of `setupLightKeys`. */
export interface LightSetupOptions {
  keysDir: string;
  /** Directory holding Light `.key` files; omitted → fetch the CLI packages (`fetchLightPackage`). */
  sourceDir?: string;
  /** Keys to set up (names, default all 24). */
  names?: readonly string[];
  /** Convert again even when resident. */
  force?: boolean;
  onProgress?: LightSetupProgress;
  log?: (m: string) => void;
  /** The addon (tests); default the built one. */
  addon?: LightKeyAddon;
}

function findSource(dir: string, s: LightKeySpec): string | undefined {
  for (const f of [s.file, `mainnet_${s.file}`, s.file.replace(/^mainnet_/, '')]) {
    const p = path.join(dir, f);
    if (existsSync(p)) return p;
  }
  return undefined;
}

/**
 * Converts Light's keys into resident files (see the module comment).
 * @returns one item per key (missing ones too: a DIR may hold only some keys)
 * @throws ProverError `keys_missing` naming the file and circuit for a key whose sha256 differs
 *   from the pin (wrong, truncated or foreign file) or that does not parse; `setup_failed` for a
 *   failed fetch; `internal` when the native addon is not built
 */
export async function setupLightKeys(opts: LightSetupOptions): Promise<LightKeySetupItem[]> {
  const addon = opts.addon ?? (nativeAddon as unknown as LightKeyAddon | null);
  if (!addon || typeof addon.lightKeyDecode !== 'function') {
    throw new ProverError('internal', "Light keys need Refract's native addon (native/kernels); build it with `npx node-gyp rebuild -C native/kernels`");
  }
  const dir = lightKeysDir(opts.keysDir);
  mkdirSync(dir, { recursive: true });
  const specs = LIGHT_KEYS.filter((s) => !opts.names || opts.names.includes(s.name));
  const release = await acquireSetupLock(dir, (_l, m) => opts.log?.(m));
  try {
    const sources = new Map<LightCliVersion, string>();
    const sourceFor = async (s: LightKeySpec): Promise<string | undefined> => {
      if (opts.sourceDir) return findSource(path.resolve(opts.sourceDir), s);
      let pkgDir = sources.get(s.pkg);
      if (!pkgDir) {
        pkgDir = await fetchLightPackage(lightCacheDir(opts.keysDir), s.pkg, { log: opts.log });
        sources.set(s.pkg, pkgDir);
      }
      return findSource(path.join(pkgDir, 'bin', 'proving-keys'), s);
    };
    const out: LightKeySetupItem[] = [];
    let done = 0;
    for (const s of specs) {
      opts.onProgress?.({ done, total: specs.length, name: s.name, status: 'checking' });
      const resident = residentFile(opts.keysDir, s);
      const meta = metaFile(opts.keysDir, s);
      if (!opts.force && existsSync(resident) && existsSync(meta)) {
        try {
          const m = JSON.parse(await readFile(meta, 'utf8')) as { sha256?: string; bytes?: number };
          if (m.sha256 === s.sha256 && (await stat(resident)).size === m.bytes) {
            out.push({ name: s.name, status: 'cached' });
            opts.onProgress?.({ done: ++done, total: specs.length, name: s.name, status: 'cached' });
            continue;
          }
        } catch {
          /* rebuilt below */
        }
      }
      const src = await sourceFor(s);
      if (!src) {
        out.push({ name: s.name, status: 'missing' });
        opts.onProgress?.({ done: ++done, total: specs.length, name: s.name, status: 'missing' });
        continue;
      }
      const t0 = performance.now();
      opts.onProgress?.({ done, total: specs.length, name: s.name, status: 'converting' });
      const bytes = await readFile(src);
      const sha = sha256Hex(bytes);
      if (sha !== s.sha256) {
        throw new ProverError(
          'keys_missing',
          `${src}: sha256 ${sha} (${bytes.length} bytes) is not the pinned ${s.sha256} of ${s.file} (circuit ${s.name}): a wrong, truncated or foreign file; get it from ${LIGHT_CLI_PACKAGES[s.pkg].spec}`,
          { file: src, circuit: s.name },
        );
      }
      const { resident: res, summary } = convertLightKey(addon, bytes, s, src);
      const tmp = `${resident}.${process.pid}.tmp`;
      await writeFile(tmp, res);
      await rename(tmp, resident);
      await writeFile(meta, JSON.stringify({ file: s.file, sha256: s.sha256, bytes: res.length, source: src, r1cs: summary }, null, 1));
      const ms = Math.round(performance.now() - t0);
      out.push({ name: s.name, status: 'converted', source: src, ms });
      opts.log?.(`${s.name}: converted in ${ms} ms`);
      opts.onProgress?.({ done: ++done, total: specs.length, name: s.name, status: 'converted' });
    }
    return out;
  } finally {
    await release();
  }
}

/** Lists leftover temporary files of a killed conversion (removed by the next setup run). */
export function leftoverTemps(keysDir: string): string[] {
  const dir = lightKeysDir(keysDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith('.tmp'));
}
