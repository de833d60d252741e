/** The simulator's reference Merkle trees (the generator's batched trees compute their roots with it). */
import { poseidon2Batch } from '../merkle/poseidon.ts';
import { ZERO_BYTES } from '../merkle/zeroValues.ts';

/**
 * An in-memory height-32 Poseidon Merkle tree over leaves [0, capacity): one Buffer per level holding
 * the nodes that can differ from the empty subtree's hash, so `capacity` leaves cost about 64 bytes each.
 */
export class DenseMerkleTree {
  private readonly levels: Buffer[];

  constructor(
    readonly height: number,
    readonly capacity: number,
  ) {
    this.levels = [];
    for (let l = 0, n = capacity; l <= height; l++, n = Math.ceil(n / 2)) {
      const b = Buffer.alloc(Math.max(1, n) * 32);
      for (let i = 0; i < b.length; i += 32) b.set(ZERO_BYTES[l]!, i);
      this.levels.push(b);
    }
  }

  private node(level: number, i: number): Uint8Array {
    const b = this.levels[level]!;
    return i * 32 < b.length ? b.subarray(i * 32, i * 32 + 32) : ZERO_BYTES[level]!;
  }

  /** Sets leaf `index` to `hash` (32 bytes) and rehashes its path to the root. */
  set(index: number, hash: Uint8Array): void {
    this.setMany([[index, hash]]);
  }

  /**
   * Sets several leaves, then rehashes the paths above them once, level by level (one batched
   * Poseidon call per level; a later entry for the same leaf wins). The same tree as setting them one
   * by one, with each shared upper node hashed once instead of once per leaf.
   */
  setMany(entries: readonly (readonly [number, Uint8Array])[]): void {
    let dirty: number[] = [];
    for (const [index, hash] of entries) {
      if (!Number.isInteger(index) || index < 0 || index >= this.capacity) throw new RangeError(`leaf index ${index} outside [0, ${this.capacity})`);
      this.levels[0]!.set(hash, index * 32);
      dirty.push(index);
    }
    for (let l = 0; l < this.height; l++) {
      const parents = [...new Set(dirty.map((i) => Math.floor(i / 2)))];
      const pairs = Buffer.allocUnsafe(parents.length * 64);
      parents.forEach((p, k) => {
        pairs.set(this.node(l, 2 * p), k * 64);
        pairs.set(this.node(l, 2 * p + 1), k * 64 + 32);
      });
      const out = poseidon2Batch(pairs);
      parents.forEach((p, k) => this.levels[l + 1]!.set(out.subarray(k * 32, k * 32 + 32), p * 32));
      dirty = parents;
    }
  }

  /** The root (a copy). */
  root(): Uint8Array {
    return Buffer.from(this.node(this.height, 0));
  }
}
