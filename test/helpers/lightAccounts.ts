/**
 * The real Light tree and queue account dumps vendored in test/fixtures/light-accounts (see its
 * README and test/fixtures/README.md): `solana account --output json` files, one per account.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Directory of the dumps. */
export const LIGHT_ACCOUNTS_DIR = path.resolve(REPO_ROOT, 'test/fixtures/light-accounts');

/** One dumped account, as getProgramAccounts / getAccountInfo would carry it. */
export interface DumpedAccount {
  pubkey: string;
  /** File name (without directory). */
  file: string;
  account: { lamports: number; data: [string, 'base64']; owner: string; executable: boolean; rentEpoch: number; space: number };
}

/** Every dump, keyed by pubkey (files are a few MB each: read once per test file). */
export function loadLightAccounts(): Map<string, DumpedAccount> {
  const out = new Map<string, DumpedAccount>();
  for (const file of readdirSync(LIGHT_ACCOUNTS_DIR).filter((f) => f.endsWith('.json')).sort()) {
    const j = JSON.parse(readFileSync(path.join(LIGHT_ACCOUNTS_DIR, file), 'utf8')) as Omit<DumpedAccount, 'file'>;
    out.set(j.pubkey, { ...j, file });
  }
  return out;
}
