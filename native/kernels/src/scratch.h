/* Scratch memory for the MSM and the FFT: large, short-lived blocks (digit tables, buckets,
 * twiddles; up to tens of MiB per call) taken straight from the kernel with mmap and given back
 * with munmap, so they never sit in malloc's per-thread arenas (glibc raises its mmap threshold
 * after the first large free and then serves such blocks from the arenas, where they fragment).
 * Elsewhere (no MAP_ANONYMOUS) plain malloc. */
#ifndef REFRACT_SCRATCH_H
#define REFRACT_SCRATCH_H
#include <stddef.h>
#include <stdlib.h>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#endif

static inline void *scratch_alloc(size_t bytes) {
#if defined(MAP_ANONYMOUS)
  void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
#else
  return malloc(bytes ? bytes : 1);
#endif
}

static inline void scratch_free(void *p, size_t bytes) {
  if (!p) return;
#if defined(MAP_ANONYMOUS)
  munmap(p, bytes ? bytes : 1);
#else
  (void)bytes;
  free(p);
#endif
}

#endif
