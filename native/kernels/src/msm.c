/* BN254 G1/G2 multi-scalar multiplication for snarkjs' Groth16 prover (see msm.h).
 * Pippenger with signed c-bit windows (2^(c−1) buckets per window), three bucket algorithms
 * (msm_select_algorithm): "xyzz" (XYZZ buckets, one window per task), "affine" (batch-affine
 * buckets, Montgomery's simultaneous inversion, several windows per batch, the scalar-1 points in a
 * pass of their own) and "glv" (affine plus the GLV split, on G1 and on G2; the default). Tasks (windows or
 * window groups) are shared by up to MSM_MAX_THREADS pthreads through an atomic counter. Compiled
 * twice, like the Poseidon permutation: portable C and BMI2/ADX field multiplication, the latter
 * chosen at first use when CPUID reports both extensions.
 * Measured with bench:msm (one thread, CPU time, n = 2^13 … 2^17): glv vs xyzz ×1.2–1.26 on G1 and
 * ×1.26–1.29 on G2 for uniform scalars, ×1.8–2.3 for Merkle-like ones (mostly 0/1), before GLV
 * reached G2; with it, G2 glv vs affine ×1.05–1.14 (uniform) and ×1.08–1.16 (Merkle-like), G2 glv vs
 * xyzz ×1.35–1.46 and ×2.34–2.68 (n = 2^13 … 2^16, EPYC, adx). */
#include "msm.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fq.h"
#include "fq_inv.h"
#include "msm_ifma.h"
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

/* The signed base-2^c digits of one scalar (scalar_size ≤ 36 bytes, little-endian), written at
 * digits[w·stride] for w < windows: each in [−2^(c−1) + 1, 2^(c−1)], Σ_w digit·2^(c·w) = scalar. */
static inline void msm_recode_one(const uint8_t *scalar, size_t scalar_size, unsigned c, unsigned windows, int16_t *digits,
                                  size_t stride) {
  const uint32_t mask = (1u << c) - 1, half = 1u << (c - 1);
  uint64_t s[6] = {0, 0, 0, 0, 0, 0}; /* windows·c ≤ 36·8 + c < 6·64 bits */
  memcpy(s, scalar, scalar_size);    /* little-endian host (x86-64, arm64) */
  uint32_t carry = 0;
  for (unsigned w = 0, bit = 0; w < windows; w++, bit += c) {
    const unsigned wi = bit >> 6, off = bit & 63;
    uint64_t word = s[wi] >> off;
    if (off + c > 64) word |= s[wi + 1] << (64 - off);
    const uint32_t d = ((uint32_t)word & mask) + carry;
    carry = d > half;
    digits[(size_t)w * stride] = (int16_t)((int32_t)d - (int32_t)(carry << c));
  }
}

/* Signed base-2^c digits: digits[w·n + i] (msm_recode_one); all zero for a base at infinity
 * (all-zero bytes). `windows` = scalar_size·8/c + 1 leaves room for the last carry. */
static void msm_recode(const uint8_t *bases, size_t point_size, const uint8_t *scalars, size_t scalar_size,
                       size_t n, unsigned c, unsigned windows, int16_t *digits) {
  static const uint8_t zero[128] = {0};
  for (size_t i = 0; i < n; i++) {
    if (memcmp(bases + i * point_size, zero, point_size) == 0) {
      for (unsigned w = 0; w < windows; w++) digits[(size_t)w * n + i] = 0;
      continue;
    }
    msm_recode_one(scalars + i * scalar_size, scalar_size, c, windows, digits + i, n);
  }
}

/* Window width for the batch-affine MSM over m points of scalars below 2^bits: c ∈ [2, 15]
 * minimising Σ over windows of (points + 2^c), a point's batched affine addition against the two
 * batched additions that reduce each of a window's 2^(c−1) buckets (PN(reduce_ba)), with the top
 * window's points weighted up when its few buckets crowd (see below). Measured with bench:msm
 * (glv+ifma, one thread): against the plain (bits/c + 1)·(m + 2^c), G1 2^14 ×1.1, G2 2^13 ×1.06,
 * 2^14 ×1.15, the rest even (MSM_BA_C_BIAS shifts c in tuning builds). */
static unsigned msm_window_bits_ba(size_t m, unsigned bits) {
  unsigned best = 2;
  double best_cost = 0;
  for (unsigned c = 2; c <= 15; c++) {
    /* the top window holds the last bits % c bits (and the carry): when its 2^top buckets are
     * fewer than an eighth of the others', a batch meets its buckets waiting and the excess goes
     * to the overflow buckets at about three times the cost */
    const unsigned top = bits - (bits / c) * c;
    const double crowd = 1.0 - 8.0 * (double)(1u << top) / (double)(1u << (c - 1));
    const double cost = (double)(bits / c) * ((double)m + (double)(1u << c)) +
                        (double)m * (1.0 + 2.0 * (crowd > 0 ? crowd : 0)) + (double)(1u << top);
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
  for (size_t j = 0; j < m; j++) msm_recode_one(scalars + (size_t)idx[j] * scalar_size, scalar_size, c, windows, digits + j, m);
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

/* GLV for G1 (the "glv" algorithm): φ(x, y) = (β·x, y) = λ·(x, y) on BN254 G1, β a cube root of
 * unity in Fq (Montgomery form below), λ = 0xb3c4d79d41a917585bfc41088d8daaa78b17ea66b99c90dd in Fr.
 * A scalar k is split as k ≡ k1 + k2·λ (mod r) with the short lattice basis (a1, −b1), (a2, a1) of
 * {(x, y): x + y·λ ≡ 0 (mod r)}: c1 = ⌊k·g1 / 2^256⌋, c2 = ⌊k·g2 / 2^256⌋ (g1 = ⌊a1·2^256/r⌋,
 * g2 = ⌊b1·2^256/r⌋), k1 = k − c1·a1 − c2·a2, k2 = c1·b1 − c2·a1; |k1|, |k2| < 2^127, so both
 * are computed modulo 2^128 and read as signed. */
static const uint64_t GLV_BETA_MONT[4] = {0x71930c11d782e155ULL, 0xa6bb947cffbe3323ULL, 0xaa303344d4741444ULL,
                                          0x2c3b3f0d26594943ULL};

/* The same endomorphism on G2 (BN254's twist y² = x³ + 3/(9+u) over Fq2): (x, y) ↦ (β'·x, y) with β' ∈ Fq
 * a cube root of unity acts on the order-r group G2 as a primitive cube root of unity mod r, λ or λ²;
 * GLV_BETA2_MONT is the one (β² = the other cube root, as the Fq2 element β² + 0·u) that acts as λ,
 * so msm_glv_split serves both groups (checked against the xyzz MSM in test/prover.msm.test.ts). */
static const uint64_t GLV_BETA2_MONT[8] = {0x3350c88e13e80b9cULL, 0x7dce557cdb5e56b9ULL, 0x6001b4b8b615564aULL,
                                           0x2682e617020217e0ULL, 0, 0, 0, 0};

/* (k·g) >> 256 for k < 2^254 (4 limbs) and g < 2^130 (3 limbs): fits 128 bits. */
static u128 msm_glv_mulhi(const uint64_t k[4], const uint64_t g[3]) {
  uint64_t p[7] = {0};
  for (int i = 0; i < 4; i++) {
    uint64_t c = 0;
    for (int j = 0; j < 3; j++) {
      const u128 t = (u128)k[i] * g[j] + p[i + j] + c;
      p[i + j] = (uint64_t)t;
      c = (uint64_t)(t >> 64);
    }
    p[i + 3] = c;
  }
  return (u128)p[5] << 64 | p[4];
}

/* Splits the scalar (scalar_size ≤ 32 LE bytes, any value below 2^256: reduced mod r first) into
 * |k1|, |k2| (16 LE bytes each) and their signs (1 = negative). */
static void msm_glv_split(const uint8_t *sc, size_t scalar_size, uint8_t k1[16], int *neg1, uint8_t k2[16],
                          int *neg2) {
  static const uint64_t g1[3] = {0xd91d232ec7e0b3d7ULL, 0x2ULL, 0}, g2[3] = {0x7a7bd9d4391eb18dULL,
                                                                                 0x4ccef014a773d2cfULL, 0x2ULL};
  const u128 a1 = 0x89d3256894d213e3ULL;
  const u128 a2 = (u128)0x6f4d8248eeb859fdULL << 64 | 0x0be4e1541221250bULL;
  const u128 b1 = (u128)0x6f4d8248eeb859fcULL << 64 | 0x8211bbeb7d4f1128ULL;
  uint64_t k[4] = {0, 0, 0, 0};
  memcpy(k, sc, scalar_size); /* little-endian host */
  for (;;) {                  /* k mod r (k < 2^256 < 6r) */
    unsigned long long d0, d1, d2, d3;
    unsigned char b = SBB(0, k[0], FR_Q_LIMBS[0], &d0);
    b = SBB(b, k[1], FR_Q_LIMBS[1], &d1);
    b = SBB(b, k[2], FR_Q_LIMBS[2], &d2);
    b = SBB(b, k[3], FR_Q_LIMBS[3], &d3);
    if (b) break;
    k[0] = d0;
    k[1] = d1;
    k[2] = d2;
    k[3] = d3;
  }
  const u128 c1 = msm_glv_mulhi(k, g1), c2 = msm_glv_mulhi(k, g2);
  const u128 kl = (u128)k[1] << 64 | k[0];
  u128 x1 = kl - c1 * a1 - c2 * a2, x2 = c1 * b1 - c2 * a1;
  *neg1 = (__int128)x1 < 0;
  *neg2 = (__int128)x2 < 0;
  if (*neg1) x1 = -x1;
  if (*neg2) x2 = -x2;
  memcpy(k1, &x1, 16);
  memcpy(k2, &x2, 16);
}

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

/* Runs fn(job) on t threads, this one included (fewer when pthread_create fails), and joins them. */
static void msm_run(void *(*fn)(void *), void *job, unsigned t) {
  pthread_t tids[MSM_MAX_THREADS];
  unsigned started = 0;
  for (; started + 1 < t && started + 1 < MSM_MAX_THREADS; started++)
    if (pthread_create(&tids[started], NULL, fn, job) != 0) break;
  fn(job);
  for (unsigned k = 0; k < started; k++) pthread_join(tids[k], NULL);
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

#if defined(FR_HAVE_ADX) && defined(REFRACT_HAVE_IFMA)
#define MSM_HAVE_IFMA 1
#define MSM_IMPL ifma
#define MSM_IFMA 1
#define FQ_MONT_MUL_LAZY(r, a, b) mont_mul_adx_lazy((r), (a), (b), FQ_Q_LIMBS, &FQ_NINV_WORD)
#include "msm_field.h"
#undef MSM_IMPL
#undef MSM_IFMA
#undef FQ_MONT_MUL_LAZY
#endif

typedef int (*msm_fn)(const uint8_t *, const uint8_t *, size_t, size_t, unsigned, uint8_t *);
typedef int (*msm_fill_fn)(const uint8_t *, size_t, size_t, size_t, unsigned, unsigned, uint8_t *);
typedef int (*msm_fixed_fn)(const uint8_t *, size_t, unsigned, unsigned, const uint8_t *, size_t, unsigned, uint8_t *);
typedef struct {
  const char *name;
  msm_fn g1[3], g2[3]; /* [algorithm]: 0 = xyzz, 1 = affine, 2 = glv */
  msm_fill_fn fill[2]; /* [group − 1]: fixed-base table rows */
  msm_fixed_fn fixed[2];
} msm_impl_t;

#define MSM_IMPL_ENTRY(name, sfx)                                                                                 \
  {                                                                                                               \
    name, {g1_msm_##sfx, g1_msm_ba_##sfx, g1_msm_glv_##sfx}, {g2_msm_##sfx, g2_msm_ba_##sfx, g2_msm_glv_##sfx},   \
        {g1_table_fill_##sfx, g2_table_fill_##sfx}, {g1_msm_fixed_##sfx, g2_msm_fixed_##sfx}                     \
  }
static const msm_impl_t impl_c = MSM_IMPL_ENTRY("c", c);
#ifdef FR_HAVE_ADX
static const msm_impl_t impl_adx = MSM_IMPL_ENTRY("adx", adx);
#endif
#ifdef MSM_HAVE_IFMA
static const msm_impl_t impl_ifma = MSM_IMPL_ENTRY("ifma", ifma);
static int msm_cpu_has_ifma(void) { return fr_cpu_has_adx() && ifma52_cpu_ok(); }
#endif
static const char *const algorithm_names[3] = {"xyzz", "affine", "glv"};
static volatile int selected_algorithm = 2; /* glv */
/* Written once at first use or by msm_select_impl (benign race: every thread computes the same). */
static const msm_impl_t *volatile selected_impl = 0;

static const msm_impl_t *impl(void) {
  const msm_impl_t *t = selected_impl;
  if (t) return t;
  t = &impl_c;
#ifdef FR_HAVE_ADX
  if (fr_cpu_has_adx()) t = &impl_adx;
#endif
#ifdef MSM_HAVE_IFMA
  if (msm_cpu_has_ifma()) t = &impl_ifma;
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

/* Fixed-base window width for n bases: c ∈ [6, 15] minimising n·⌈254/c⌉ (one batched addition per
 * point and window) + 0.7·2^c (the one bucket reduction, batch-affine, and the cache misses of more
 * buckets). Measured (bench-style, G1 one thread, this against c − 1 and c + 1): n = 4200 → 13
 * (c 14: +4%), 6200 → 14 (c 13: +3%), 14500 → 15 (c 14: +5%); G2 n = 4200 → 13 (c 14 even). */
static unsigned msm_table_bits(size_t n) {
  unsigned best = 6;
  double best_cost = 0;
  for (unsigned c = 6; c <= 15; c++) {
    const double cost = (double)n * (double)((254 + c - 1) / c) + 0.7 * (double)(1u << c);
    if (c == 6 || cost < best_cost) {
      best = c;
      best_cost = cost;
    }
  }
#ifdef MSM_TABLE_C_BIAS /* tuning builds only */
  best = (unsigned)((int)best + MSM_TABLE_C_BIAS);
  if (best < 6) best = 6;
  if (best > 15) best = 15; /* digits up to 2^(c−1) must fit int16_t */
#endif
  return best;
}

struct msm_table {
  int group;      /* 1 or 2 */
  size_t n;       /* bases */
  unsigned c, W;  /* window width, rows (256/c + 1: any 32-byte scalar with its last carry) */
  size_t bytes;   /* of pts */
  uint8_t *pts;   /* W·n affine points, row v = 2^(c·v)·bases */
};

size_t msm_table_size(int group, size_t n) {
  const unsigned c = msm_table_bits(n);
  return (size_t)(256 / c + 1) * n * (group == 1 ? 64 : 128);
}

typedef struct {
  msm_fill_fn fill;
  const uint8_t *bases;
  size_t n;
  unsigned c, W, slices;
  uint8_t *pts;
  atomic_uint next;
  atomic_int failed;
} msm_fill_job;

static void *msm_fill_worker(void *arg) {
  msm_fill_job *job = arg;
  for (;;) {
    const unsigned s = atomic_fetch_add(&job->next, 1);
    if (s >= job->slices) break;
    const size_t lo = job->n * s / job->slices, hi = job->n * (s + 1) / job->slices;
    if (job->fill(job->bases, job->n, lo, hi, job->c, job->W, job->pts) < 0) atomic_store(&job->failed, 1);
  }
  return NULL;
}

/* An unfilled table of this build's window width for n points of the group; NULL when out of memory
 * or past the 32-bit indices. */
static msm_table *table_alloc(int group, size_t n) {
  const unsigned c = msm_table_bits(n), W = 256 / c + 1;
  if ((uint64_t)W * n > UINT32_MAX) return NULL; /* 32-bit indices */
  msm_table *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->group = group;
  t->n = n;
  t->c = c;
  t->W = W;
  t->bytes = msm_table_size(group, n);
  t->pts = malloc(t->bytes ? t->bytes : 1);
  if (!t->pts) {
    msm_table_free(t);
    return NULL;
  }
  return t;
}

msm_table *msm_table_build(int group, const uint8_t *bases, size_t n, unsigned threads) {
  if (group != 1 && group != 2) return NULL;
  msm_table *t = table_alloc(group, n);
  if (!t) return NULL;
  const unsigned c = t->c, W = t->W;
  /* columns in slices of at least 256 points, spread over the threads */
  unsigned th = msm_thread_count(threads, (unsigned)(n / 256 + 1));
  msm_fill_job job = {.fill = impl()->fill[group - 1], .bases = bases, .n = n, .c = c, .W = W, .slices = th, .pts = t->pts};
  atomic_init(&job.next, 0);
  atomic_init(&job.failed, 0);
  msm_enter();
  msm_run(msm_fill_worker, &job, th);
  msm_leave();
  if (atomic_load(&job.failed)) {
    msm_table_free(t);
    return NULL;
  }
  return t;
}

size_t msm_table_bytes(const msm_table *t) { return t ? t->bytes + sizeof *t : 0; }
size_t msm_table_n(const msm_table *t) { return t->n; }
const uint8_t *msm_table_bases(const msm_table *t) { return t->pts; }
int msm_table_group(const msm_table *t) { return t->group; }

void msm_table_free(msm_table *t) {
  if (!t) return;
  free(t->pts);
  free(t);
}

/* 64-bit checksum of a table's points: four interleaved multiply-xor lanes over 8-byte words (the
 * lengths are multiples of 32), folded; ≈ 0.1 ms per MiB. Catches a damaged or truncated file, not
 * an attacker (who could as well replace the keys). */
uint64_t msm_points_hash(const uint8_t *p, size_t bytes) {
  uint64_t h[4] = {0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL, 0x27d4eb2f165667c5ULL};
  for (size_t i = 0; i + 32 <= bytes; i += 32)
    for (int l = 0; l < 4; l++) {
      uint64_t w;
      memcpy(&w, p + i + 8 * l, 8);
      h[l] = (h[l] ^ w) * 0x100000001b3ULL;
      h[l] ^= h[l] >> 29;
    }
  return (h[0] ^ (h[1] << 1) ^ (h[2] << 2) ^ (h[3] << 3)) + bytes;
}

/* Checks rows against each other at a few columns per row: Σ_j a_j·(row_v[j] − 2^c·row_{v−1}[j]) must be
 * infinity for random 64-bit a_j (8 columns per row, one MSM of 16·(W − 1) points, a few ms), so a file
 * whose checksum holds but whose rows were made another way (another layout or a faulty build) is
 * refused. The points are in the prime-order group, so the scalars are taken mod r. Returns 1 (rows
 * consistent), 0 (not), −1 (out of memory). */
static int table_spot_check(const msm_table *t, uint64_t seed) {
  enum { K = 8 };
  if (t->n == 0 || t->W < 2) return 1;
  const size_t ps = t->group == 1 ? 64 : 128, m = (size_t)2 * K * (t->W - 1);
  uint8_t *pts = malloc(m * ps), *sc = calloc(m, 32);
  if (!pts || !sc) {
    free(pts);
    free(sc);
    return -1;
  }
  uint64_t x = seed | 1; /* xorshift64 state: columns and coefficients */
  size_t k = 0;
  for (unsigned v = 1; v < t->W; v++)
    for (int i = 0; i < K; i++, k += 2) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      const size_t j = x % t->n;
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      const uint64_t a = x >> 1;
      memcpy(pts + k * ps, t->pts + ((size_t)v * t->n + j) * ps, ps);
      memcpy(pts + (k + 1) * ps, t->pts + ((size_t)(v - 1) * t->n + j) * ps, ps);
      memcpy(sc + k * 32, &a, 8);
      /* −a·2^c mod r (a·2^c < 2^78 < r) */
      const unsigned __int128 p = (unsigned __int128)a << t->c;
      const uint64_t x[4] = {(uint64_t)p, (uint64_t)(p >> 64), 0, 0}, zero[4] = {0, 0, 0, 0};
      uint64_t out[4];
      mod_sub(out, zero, x, FR_Q_LIMBS);
      memcpy(sc + (k + 1) * 32, out, 32);
    }
  uint8_t res[192];
  const int ret = t->group == 1 ? msm_g1(pts, sc, 32, m, 1, res) : msm_g2(pts, sc, 32, m, 1, res);
  free(pts);
  free(sc);
  return ret < 0 ? -1 : ret == 0;
}

/* Record header of a table in a file: group, c, then n, the points' bytes and their checksum. */
typedef struct {
  uint32_t group, c;
  uint64_t n, bytes, checksum;
} msm_table_record;

int msm_table_save(const msm_table *t, FILE *f) {
  const msm_table_record r = {(uint32_t)t->group, t->c, t->n, t->bytes, msm_points_hash(t->pts, t->bytes)};
  if (fwrite(&r, sizeof r, 1, f) != 1) return -1;
  return t->bytes && fwrite(t->pts, 1, t->bytes, f) != t->bytes ? -1 : 0;
}

msm_table *msm_table_load(FILE *f, int group, const uint8_t *bases, size_t n, const char **why) {
  msm_table_record r;
  if (fread(&r, sizeof r, 1, f) != 1) {
    *why = "short file (a record header is missing)";
    return NULL;
  }
  const size_t ps = group == 1 ? 64 : 128;
  if (r.group != (uint32_t)group || r.n != n) {
    *why = "a table is for other points (group or count differ)";
    return NULL;
  }
  msm_table *t = table_alloc(group, n);
  if (!t) {
    *why = "out of memory";
    return NULL;
  }
  if (r.c != t->c || r.bytes != t->bytes) {
    /* another window width (a build with another cost model) would also break the key's table budget */
    *why = "a table's window width or size is not this build's for its points";
  } else if (fread(t->pts, 1, t->bytes, f) != t->bytes) {
    *why = "short file (a table is truncated)";
  } else if (msm_points_hash(t->pts, t->bytes) != r.checksum) {
    *why = "a table's checksum does not match (damaged file)";
  } else if (n && memcmp(t->pts, bases, n * ps) != 0) {
    *why = "a table's first row is not the key's points (the file is for another key)";
  } else {
    const int ok = table_spot_check(t, r.checksum); /* the checksum just verified seeds it */
    if (ok == 1) return t;
    *why = ok < 0 ? "out of memory" : "a table's rows are not 2^c multiples of each other (wrong layout)";
  }
  msm_table_free(t);
  return NULL;
}

int msm_fixed(const msm_table *t, const uint8_t *scalars, size_t scalar_size, unsigned threads, uint8_t *out) {
  return impl()->fixed[t->group - 1](t->pts, t->n, t->c, t->W, scalars, scalar_size, threads, out);
}

const char *msm_impl_name(void) { return impl()->name; }

int msm_impl_level(void) {
  const msm_impl_t *t = impl();
#ifdef MSM_HAVE_IFMA
  if (t == &impl_ifma) return 2;
#endif
  return t == &impl_c ? 0 : 1;
}

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
#ifdef MSM_HAVE_IFMA
  if (strcmp(name, "ifma") == 0 && msm_cpu_has_ifma()) {
    selected_impl = &impl_ifma;
    return 1;
  }
#endif
  return 0;
}

const char *msm_algorithm_name(void) { return algorithm_names[selected_algorithm]; }

int msm_select_algorithm(const char *name) {
  for (int a = 0; a < 3; a++)
    if (strcmp(name, algorithm_names[a]) == 0) {
      selected_algorithm = a;
      return 1;
    }
  return 0;
}
