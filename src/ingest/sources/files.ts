/**
 * File source: `getTransaction` JSON files (and `getBlock` JSON files) → blocks in slot order.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { listFiles } from '../../listFiles.ts';
import { decodeBlockJson, decodeTransactionJson } from '../prepareBatch.ts';
import type { BlockInfo, TransactionInfo } from '../../types.ts';

/** One loaded transaction file. */
export interface TransactionFile {
  file: string;
  slot: number;
  blockTime: number;
  transaction: TransactionInfo;
}

/** Orders files by base name (the tie-breaker of the import order). */
const byName = (a: string, b: string): number => {
  const x = basename(a);
  const y = basename(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

function jsonFile(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: not JSON (${(err as Error).message})`);
  }
}

/** Reads and decodes one getTransaction JSON file. @throws Error naming the file */
function readTransactionFile(file: string): TransactionFile {
  const json = jsonFile(file);
  try {
    const d = decodeTransactionJson(json);
    return { file, slot: d.slot, blockTime: d.blockTime, transaction: d.transaction };
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`);
  }
}

/** The slot a getBlock file is named by. @throws Error naming the file when the name is not a slot */
function blockFileSlot(file: string): number {
  const slot = Number(basename(file).replace(/\.json$/, ''));
  if (!Number.isSafeInteger(slot)) throw new Error(`${file}: block file names must be slot numbers`);
  return slot;
}

/** Reads and decodes one getBlock JSON file. @throws Error naming the file */
function readBlockFile(file: string, slot: number): BlockInfo {
  const json = jsonFile(file);
  try {
    return decodeBlockJson(json, slot);
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`);
  }
}

/** The synthetic block of transaction files at `slot` (empty hashes, height 0). */
const syntheticBlock = (slot: number, parentSlot: number, blockTime: number): BlockInfo => ({ slot, parentSlot, blockTime, blockHeight: 0, blockhash: '', previousBlockhash: '', transactions: [] });

/**
 * Reads every getTransaction JSON file in `dirs` (a directory's files, or a file itself), sorted by
 * ascending slot, ties by file name. Throws Error naming the file when one does not decode.
 */
export function loadTransactionFiles(dirs: readonly string[]): TransactionFile[] {
  const out = dirs.flatMap((dir) => listFiles(dir).map(readTransactionFile));
  return out.sort((a, b) => a.slot - b.slot || byName(a.file, b.file));
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
      b = syntheticBlock(f.slot, b ? b.slot : Math.max(0, f.slot - 1), f.blockTime);
      blocks.push(b);
    }
    b.transactions.push(f.transaction);
  }
  return blocks;
}

/** Reads getBlock JSON files named by slot (file name = slot number) from `dirs`, ascending. */
export function loadBlockFiles(dirs: readonly string[]): BlockInfo[] {
  const out = dirs.flatMap((dir) => listFiles(dir).map((file) => readBlockFile(file, blockFileSlot(file))));
  return out.sort((a, b) => a.slot - b.slot);
}

/** One file of an import plan: where it sorts, read and decoded only when its batch comes. */
export interface PlannedFile {
  file: string;
  slot: number;
  kind: 'transaction' | 'block';
}

/** The files of an import in slot order, and how many blocks they make. */
export interface FilePlan {
  files: PlannedFile[];
  /** Blocks the files make: one per slot of transaction files, one per block file. */
  blocks: number;
}

/**
 * Lists the getTransaction files of `transactions` and the getBlock files (named by slot) of `blocks`
 * in import order: ascending slot, transaction files before a block file of the same slot, ties by
 * file name. Transaction files are parsed here for their slot only; nothing is decoded or kept.
 * @throws Error naming the file: not JSON, no `slot`, or a block file not named by its slot
 */
export function planFiles(transactions: readonly string[], blocks: readonly string[]): FilePlan {
  const files: PlannedFile[] = [];
  for (const dir of transactions) {
    for (const file of listFiles(dir)) {
      const slot = (jsonFile(file) as { slot?: unknown } | null)?.slot;
      if (typeof slot !== 'number' || !Number.isSafeInteger(slot) || slot < 0) throw new Error(`${file}: slot: expected a non-negative integer, got ${JSON.stringify(slot)}`);
      files.push({ file, slot, kind: 'transaction' });
    }
  }
  for (const dir of blocks) for (const file of listFiles(dir)) files.push({ file, slot: blockFileSlot(file), kind: 'block' });
  files.sort((a, b) => a.slot - b.slot || (a.kind === b.kind ? 0 : a.kind === 'transaction' ? -1 : 1) || byName(a.file, b.file));
  let count = 0;
  for (let i = 0; i < files.length; i++) {
    const f = files[i]!;
    const prev = files[i - 1];
    if (f.kind === 'block' || !prev || prev.kind !== 'transaction' || prev.slot !== f.slot) count++;
  }
  return { files, blocks: count };
}

/**
 * Reads and decodes the plan's blocks one at a time, in order: the transaction files of one slot
 * make one synthetic block (parent = the previous slot with transaction files, empty hashes, height 0,
 * as `blocksFromTransactionFiles`), each block file one block. Blocks at or below `afterSlot` are
 * passed over unread (`onSkipped` is told). Memory holds one block at a time.
 * @throws Error naming the file when one does not decode
 */
export function* readPlannedBlocks(plan: FilePlan, afterSlot: number | null, onSkipped?: () => void): Generator<BlockInfo> {
  const { files } = plan;
  let prevTxSlot: number | null = null;
  for (let i = 0; i < files.length; ) {
    const f = files[i]!;
    if (f.kind === 'block') {
      i++;
      if (afterSlot !== null && f.slot <= afterSlot) {
        onSkipped?.();
        continue;
      }
      yield readBlockFile(f.file, f.slot);
      continue;
    }
    let j = i;
    while (j < files.length && files[j]!.kind === 'transaction' && files[j]!.slot === f.slot) j++;
    const parentSlot: number = prevTxSlot ?? Math.max(0, f.slot - 1);
    prevTxSlot = f.slot;
    const group = files.slice(i, j);
    i = j;
    if (afterSlot !== null && f.slot <= afterSlot) {
      onSkipped?.();
      continue;
    }
    const txs = group.map((g) => readTransactionFile(g.file));
    const block = syntheticBlock(f.slot, parentSlot, txs[0]!.blockTime);
    for (const t of txs) block.transactions.push(t.transaction);
    yield block;
  }
}
