/* BN254 G1/G2 multi-scalar multiplication for snarkjs' Groth16 prover (see msm.h).
 * Pippenger with signed c-bit windows (2^(c−1) buckets per window), XYZZ buckets, windows shared
 * by up to MSM_MAX_THREADS pthreads through an atomic counter. Compiled twice, like the Poseidon
 * permutation: portable C and BMI2/ADX field multiplication, the latter chosen at first use when
 * CPUID reports both extensions. */
#include "msm.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fq.h"
#include "scratch.h"

#define MSM_MAX_THREADS 64

/* Window width c ∈ [2, 15] minimising (256/c + 1)·(n + 1.4·2^c): per window one mixed addition per
 * point and about 2·2^(c−1) general additions (≈1.4× a mixed one) to sum the buckets. */
static unsigned msm_window_bits(size_t n) {
  unsigned best = 2;
  double best_cost = 0;
  for (unsigned c = 2; c <= 15; c++) {
    const double cost = (double)(256 / c + 1) * ((double)n + 1.4 * (double)(1u << c));
    if (c == 2 || cost < best_cost) {
      best = c;
      best_cost = cost;
    }
  }
  return best;
}

/* Signed base-2^c digits: digits[w·n + i] ∈ [−2^(c−1) + 1, 2^(c−1)], Σ_w digit·2^(c·w) = scalar_i;
 * all zero for a base at infinity (all-zero bytes). `windows` = scalar_size·8/c + 1 leaves room for
 * the last carry. */
static void msm_recode(const uint8_t *bases, size_t point_size, const uint8_t *scalars, size_t scalar_size,
                       size_t n, unsigned c, unsigned windows, int16_t *digits) {
  static const uint8_t zero[128] = {0};
  const uint32_t mask = (1u << c) - 1, half = 1u << (c - 1);
  for (size_t i = 0; i < n; i++) {
    if (memcmp(bases + i * point_size, zero, point_size) == 0) {
      for (unsigned w = 0; w < windows; w++) digits[(size_t)w * n + i] = 0;
      continue;
    }
    uint8_t s[40] = {0};
    memcpy(s, scalars + i * scalar_size, scalar_size);
    uint32_t carry = 0;
    for (unsigned w = 0; w < windows; w++) {
      const unsigned bit = w * c, byte = bit >> 3;
      uint32_t word = 0;
      if (byte < 36) memcpy(&word, s + byte, 4); /* little-endian host (x86-64, arm64) */
      uint32_t d = ((word >> (bit & 7)) & mask) + carry;
      int v;
      if (d > half) {
        v = (int)d - (int)(1u << c);
        carry = 1;
      } else {
        v = (int)d;
        carry = 0;
      }
      digits[(size_t)w * n + i] = (int16_t)v;
    }
  }
}

/* Window width for the batch-affine MSM over m points: c ∈ [2, 15] minimising
 * (254/c + 1)·(0.75·m + 1.2·2^c): an affine addition per point costs ≈ 0.75 madd, and summing
 * a window's 2^(c−1) buckets one madd plus one general addition (≈ 1.4 madd) each. */
static unsigned msm_window_bits_ba(size_t m) {
  unsigned best = 2;
  double best_cost = 0;
  for (unsigned c = 2; c <= 15; c++) {
    const double cost = (double)(254 / c + 1) * (0.75 * (double)m + 1.2 * (double)(1u << c));
    if (c == 2 || cost < best_cost) {
      best = c;
      best_cost = cost;
    }
  }
#ifdef MSM_BA_C_BIAS /* tuning builds only */
  best = (unsigned)((int)best + MSM_BA_C_BIAS);
  if (best < 2) best = 2;
  if (best > 15) best = 15;
#endif
  return best;
}

/* msm_recode for the points idx[0..m) (none at infinity): digits[w·m + j] of scalar idx[j]. */
static void msm_recode_idx(const uint8_t *scalars, size_t scalar_size, const uint32_t *idx, size_t m, unsigned c,
                           unsigned windows, int16_t *digits) {
  const uint32_t mask = (1u << c) - 1, half = 1u << (c - 1);
  for (size_t j = 0; j < m; j++) {
    uint8_t s[40] = {0};
    memcpy(s, scalars + (size_t)idx[j] * scalar_size, scalar_size);
    uint32_t carry = 0;
    for (unsigned w = 0; w < windows; w++) {
      const unsigned bit = w * c, byte = bit >> 3;
      uint32_t word = 0;
      if (byte < 36) memcpy(&word, s + byte, 4);
      uint32_t d = ((word >> (bit & 7)) & mask) + carry;
      int v;
      if (d > half) {
        v = (int)d - (int)(1u << c);
        carry = 1;
      } else {
        v = (int)d;
        carry = 0;
      }
      digits[(size_t)w * m + j] = (int16_t)v;
    }
  }
}

/* Batch-affine tuning: batch capacity = buckets / MSM_BA_CAP_DIV (≤ MSM_BA_CAP_MAX); windows
 * handled together up to MSM_BA_GROUP_BUCKETS buckets. */
#ifndef MSM_BA_CAP_DIV
#define MSM_BA_CAP_DIV 8
#endif
#ifndef MSM_BA_CAP_MAX
#define MSM_BA_CAP_MAX 2048
#endif
#ifndef MSM_BA_GROUP_BUCKETS
#define MSM_BA_GROUP_BUCKETS 8192
#endif

static atomic_int msm_running;
static atomic_int msm_jobs_open;

int msm_jobs(int delta) { return atomic_fetch_add(&msm_jobs_open, delta) + delta; }

static void msm_enter(void) { atomic_fetch_add(&msm_running, 1); }
static void msm_leave(void) { atomic_fetch_sub(&msm_running, 1); }

/* Threads for one MSM: the request, or (0) online CPUs shared among the MSMs running now or the
 * open jobs (msm_jobs), whichever is more: a proof between two MSMs still keeps its core busy. */
static unsigned msm_thread_count(unsigned requested, unsigned windows) {
  unsigned t = requested;
  if (t == 0) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int running = atomic_load(&msm_running);
    const int jobs = atomic_load(&msm_jobs_open);
    if (jobs > running) running = jobs;
    if (cpus < 1) cpus = 1;
    if (running < 1) running = 1;
    t = (unsigned)(cpus / running);
  }
  if (t < 1) t = 1;
  if (t > MSM_MAX_THREADS) t = MSM_MAX_THREADS;
  if (t > windows) t = windows;
  return t;
}

#define MSM_IMPL c
#define FQ_MONT_MUL_LAZY(r, a, b) fq_mont_mul_c_lazy((r), (a), (b))
#include "msm_field.h"
#undef MSM_IMPL
#undef FQ_MONT_MUL_LAZY

#ifdef FR_HAVE_ADX
#define MSM_IMPL adx
#define FQ_MONT_MUL_LAZY(r, a, b) mont_mul_adx_lazy((r), (a), (b), FQ_Q_LIMBS, &FQ_NINV_WORD)
#include "msm_field.h"
#undef MSM_IMPL
#undef FQ_MONT_MUL_LAZY
#endif

typedef int (*msm_fn)(const uint8_t *, const uint8_t *, size_t, size_t, unsigned, uint8_t *);
typedef struct {
  const char *name;
  msm_fn g1[2], g2[2]; /* [algorithm]: 0 = xyzz, 1 = affine */
} msm_impl_t;

static const msm_impl_t impl_c = {"c", {g1_msm_c, g1_msm_ba_c}, {g2_msm_c, g2_msm_ba_c}};
#ifdef FR_HAVE_ADX
static const msm_impl_t impl_adx = {"adx", {g1_msm_adx, g1_msm_ba_adx}, {g2_msm_adx, g2_msm_ba_adx}};
#endif
static const char *const algorithm_names[2] = {"xyzz", "affine"};
static volatile int selected_algorithm = 1;
/* Written once at first use or by msm_select_impl (benign race: every thread computes the same). */
static const msm_impl_t *volatile selected_impl = 0;

static const msm_impl_t *impl(void) {
  const msm_impl_t *t = selected_impl;
  if (t) return t;
  t = &impl_c;
#ifdef FR_HAVE_ADX
  if (fr_cpu_has_adx()) t = &impl_adx;
#endif
  selected_impl = t;
  return t;
}

int msm_g1(const uint8_t *bases, const uint8_t *scalars, size_t scalar_size, size_t n, unsigned threads,
           uint8_t *out) {
  return impl()->g1[selected_algorithm](bases, scalars, scalar_size, n, threads, out);
}

int msm_g2(const uint8_t *bases, const uint8_t *scalars, size_t scalar_size, size_t n, unsigned threads,
           uint8_t *out) {
  return impl()->g2[selected_algorithm](bases, scalars, scalar_size, n, threads, out);
}

const char *msm_impl_name(void) { return impl()->name; }

int msm_select_impl(const char *name) {
  if (strcmp(name, "c") == 0) {
    selected_impl = &impl_c;
    return 1;
  }
#ifdef FR_HAVE_ADX
  if (strcmp(name, "adx") == 0 && fr_cpu_has_adx()) {
    selected_impl = &impl_adx;
    return 1;
  }
#endif
  return 0;
}

const char *msm_algorithm_name(void) { return algorithm_names[selected_algorithm]; }

int msm_select_algorithm(const char *name) {
  for (int a = 0; a < 2; a++)
    if (strcmp(name, algorithm_names[a]) == 0) {
      selected_algorithm = a;
      return 1;
    }
  return 0;
}
