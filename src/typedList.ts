/**
 * A growable typed array of numbers (Float64Array or Uint32Array): amortised push, no per-item object.
 * Used where millions of numbers are collected before their count is known: the simulator's
 * address index and record offsets (sim/chain.ts), a Light key's R1CS sections (prover/keys/lightKeys.ts).
 */
export class TypedList<A extends Float64Array | Uint32Array> {
  /** The backing array; its first `length` items are the list. */
  protected a: A;
  /** Items in the list. */
  length = 0;

  /**
   * @param make allocates a backing array of `n` items (`(n) => new Float64Array(n)`, …)
   * @param capacity the first backing array's size, in items (> 0)
   */
  constructor(
    private readonly make: (n: number) => A,
    capacity = 16,
  ) {
    this.a = make(capacity);
  }

  /** Appends `v` (for a Uint32Array, an integer 0 ≤ v < 2^32; other values wrap as the typed array does). */
  push(v: number): void {
    if (this.length === this.a.length) {
      const b = this.make(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.length++] = v;
  }

  /** The item at `i` (0 ≤ i < length). */
  get(i: number): number {
    return this.a[i]!;
  }

  /** The list as a view of the backing array (no copy; stale after the next push that grows it). */
  view(): A {
    return this.a.subarray(0, this.length) as A;
  }

  /** Drops the first `n` items (0 ≤ n ≤ length). */
  dropFront(n: number): void {
    this.a.copyWithin(0, n, this.length);
    this.length -= n;
  }

  /** Bytes held by the backing array. */
  bytes(): number {
    return this.a.byteLength;
  }
}
