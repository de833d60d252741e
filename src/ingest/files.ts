/**
 * File source: `getTransaction` JSON files (and `getBlock` JSON files) → blocks in slot order.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { decodeBlockJson, decodeTransactionJson } from '../solana/decode.ts';
import type { BlockInfo, TransactionInfo } from '../types.ts';

/** One loaded transaction file. */
export interface TransactionFile {
  file: string;
  slot: number;
  blockTime: number;
  transaction: TransactionInfo;
}

/** Files of `dir` (not hidden), sorted by name; `dir` itself when it is a file. */
export function listFiles(dir: string): string[] {
  const st = statSync(dir);
  if (st.isFile()) return [dir];
  return readdirSync(dir)
    .filter((n) => !n.startsWith('.'))
    .sort()
    .map((n) => join(dir, n))
    .filter((p) => statSync(p).isFile());
}

/**
 * Reads every getTransaction JSON file in `dirs` (a directory's files, or a file itself), sorted by
 * ascending slot, ties by file name. Throws Error naming the file when one does not decode.
 */
export function loadTransactionFiles(dirs: readonly string[]): TransactionFile[] {
  const out: TransactionFile[] = [];
  for (const dir of dirs) {
    for (const file of listFiles(dir)) {
      let json: unknown;
      try {
        json = JSON.parse(readFileSync(file, 'utf8'));
      } catch (err) {
        throw new Error(`${file}: not JSON (${(err as Error).message})`);
      }
      try {
        const d = decodeTransactionJson(json);
        out.push({ file, slot: d.slot, blockTime: d.blockTime, transaction: d.transaction });
      } catch (err) {
        throw new Error(`${file}: ${(err as Error).message}`);
      }
    }
  }
  return out.sort((a, b) => a.slot - b.slot || (basename(a.file) < basename(b.file) ? -1 : basename(a.file) > basename(b.file) ? 1 : 0));
}

/**
 * Groups sorted transaction files into one synthetic block per slot (parent = the previous slot seen,
 * empty hashes, height 0).
 */
export function blocksFromTransactionFiles(files: readonly TransactionFile[]): BlockInfo[] {
  const blocks: BlockInfo[] = [];
  for (const f of files) {
    let b = blocks[blocks.length - 1];
    if (!b || b.slot !== f.slot) {
      b = { slot: f.slot, parentSlot: blocks.length ? blocks[blocks.length - 1]!.slot : Math.max(0, f.slot - 1), blockTime: f.blockTime, blockHeight: 0, blockhash: '', previousBlockhash: '', transactions: [] };
      blocks.push(b);
    }
    b.transactions.push(f.transaction);
  }
  return blocks;
}

/** Reads getBlock JSON files named by slot (file name = slot number) from `dirs`, ascending. */
export function loadBlockFiles(dirs: readonly string[]): BlockInfo[] {
  const out: BlockInfo[] = [];
  for (const dir of dirs) {
    for (const file of listFiles(dir)) {
      const slot = Number(basename(file).replace(/\.json$/, ''));
      if (!Number.isSafeInteger(slot)) throw new Error(`${file}: block file names must be slot numbers`);
      try {
        out.push(decodeBlockJson(JSON.parse(readFileSync(file, 'utf8')), slot));
      } catch (err) {
        throw new Error(`${file}: ${(err as Error).message}`);
      }
    }
  }
  return out.sort((a, b) => a.slot - b.slot);
}
