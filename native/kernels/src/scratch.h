/* Scratch memory for the MSM, the FFT and the Groth16 prover: large, short-lived blocks (digit
 * tables, buckets, twiddles, a proof's polynomials; up to tens of MiB per call) taken straight from
 * the kernel with mmap, so they never sit in malloc's per-thread arenas (glibc raises its mmap
 * threshold after the first large free and then serves such blocks from the arenas, where they
 * fragment). Freed blocks are kept for reuse (scratch.c: up to SCRATCH_CACHE_BYTES in all, sizes
 * rounded up to a power of two from 64 KiB) instead of going back with munmap: in a proof whose
 * MSMs run on several threads at once, every munmap stopped the other threads for a TLB shootdown
 * and every fresh block paid its page faults again (inclusion_26_1 on two threads: 65 → 53 ms).
 * The bound is what inclusion_26_8 on two threads uses (wall 309 ms with 64 MiB, 277 with 128);
 * RSS rises by up to that much over the first few hundred proofs, then stays flat.
 * Blocks are NOT zeroed: callers initialise what they read. Elsewhere (no MAP_ANONYMOUS) malloc. */
#ifndef REFRACT_SCRATCH_H
#define REFRACT_SCRATCH_H
#include <stddef.h>

#define SCRATCH_CACHE_BYTES ((size_t)128 << 20)

/* A block of at least `bytes` bytes (page-aligned where mmap is used), or NULL. */
void *scratch_alloc(size_t bytes);
/* Gives back a block from scratch_alloc(bytes) (same `bytes`); NULL is ignored. */
void scratch_free(void *p, size_t bytes);

#endif
