/* Eight-lane radix-2^52 Montgomery arithmetic on AVX-512 IFMA (vpmadd52luq / vpmadd52huq), shared
 * by the Poseidon batch kernel (poseidon_ifma.h, Fr) and the batch-affine MSM (msm_ifma.h, Fq).
 *
 * Representation: an element is five 52-bit limbs in Montgomery form with R = 2^260; a `v8` holds
 * eight independent elements, limb j of lane k in l[j] lane k. Multiplication is radix-2^52
 * operand-scanning Montgomery (CIOS); for a modulus m < 2^254 and a, b < 2^260 with normalised
 * limbs (each < 2^52) it gives a·b/2^260 + m, carry-normalised. Callers keep their own bounds.
 * Compiled only where GCC ≥ 8 / clang target x86-64; used only after ifma52_cpu_ok(). */
#ifndef REFRACT_IFMA52_H
#define REFRACT_IFMA52_H
#if defined(__x86_64__) && defined(__GNUC__) && !defined(REFRACT_NO_ASM) && \
    (__GNUC__ >= 8 || defined(__clang__))
#define REFRACT_HAVE_IFMA 1
#include <immintrin.h>
#include <stdint.h>

#define IFMA_TARGET __attribute__((target("avx512f,avx512ifma")))
#define IFMA_INLINE static inline __attribute__((always_inline, target("avx512f,avx512ifma")))
#define IFMA_LANES 8
#define IFMA_MASK52 0xfffffffffffffULL

typedef struct {
  __m512i l[5];
} v8;

IFMA_INLINE __m512i ifma_bc(uint64_t x) { return _mm512_set1_epi64((long long)x); }

/* Carry-normalise: limbs 0..3 into [0, 2^52), the rest (possibly after borrows) into limb 4. */
IFMA_INLINE void v8_norm(v8 *x) {
  const __m512i m = ifma_bc(IFMA_MASK52);
  for (int j = 0; j < 4; j++) {
    x->l[j + 1] = _mm512_add_epi64(x->l[j + 1], _mm512_srai_epi64(x->l[j], 52));
    x->l[j] = _mm512_and_si512(x->l[j], m);
  }
}

/* r = a·b·2^-260 (mod MOD), normalised; a's limb i comes from `AI` (so a may be a broadcast
 * constant), b is `const v8 *b`; MOD is a uint64_t[5] of 52-bit limbs, NINV = −MOD^-1 mod 2^52. */
#define IFMA52_MUL_BODY(AI, MOD, NINV)                                              \
  const __m512i zero = _mm512_setzero_si512();                                      \
  const __m512i ninv = ifma_bc(NINV);                                               \
  __m512i t0 = zero, t1 = zero, t2 = zero, t3 = zero, t4 = zero, t5 = zero;         \
  for (int i = 0; i < 5; i++) {                                                     \
    const __m512i ai = (AI);                                                        \
    t0 = _mm512_madd52lo_epu64(t0, ai, b->l[0]);                                    \
    t1 = _mm512_madd52hi_epu64(t1, ai, b->l[0]);                                    \
    t1 = _mm512_madd52lo_epu64(t1, ai, b->l[1]);                                    \
    t2 = _mm512_madd52hi_epu64(t2, ai, b->l[1]);                                    \
    t2 = _mm512_madd52lo_epu64(t2, ai, b->l[2]);                                    \
    t3 = _mm512_madd52hi_epu64(t3, ai, b->l[2]);                                    \
    t3 = _mm512_madd52lo_epu64(t3, ai, b->l[3]);                                    \
    t4 = _mm512_madd52hi_epu64(t4, ai, b->l[3]);                                    \
    t4 = _mm512_madd52lo_epu64(t4, ai, b->l[4]);                                    \
    t5 = _mm512_madd52hi_epu64(t5, ai, b->l[4]);                                    \
    const __m512i m = _mm512_madd52lo_epu64(zero, t0, ninv);                        \
    t0 = _mm512_madd52lo_epu64(t0, m, ifma_bc((MOD)[0]));                           \
    t1 = _mm512_madd52hi_epu64(t1, m, ifma_bc((MOD)[0]));                           \
    t1 = _mm512_madd52lo_epu64(t1, m, ifma_bc((MOD)[1]));                           \
    t2 = _mm512_madd52hi_epu64(t2, m, ifma_bc((MOD)[1]));                           \
    t2 = _mm512_madd52lo_epu64(t2, m, ifma_bc((MOD)[2]));                           \
    t3 = _mm512_madd52hi_epu64(t3, m, ifma_bc((MOD)[2]));                           \
    t3 = _mm512_madd52lo_epu64(t3, m, ifma_bc((MOD)[3]));                           \
    t4 = _mm512_madd52hi_epu64(t4, m, ifma_bc((MOD)[3]));                           \
    t4 = _mm512_madd52lo_epu64(t4, m, ifma_bc((MOD)[4]));                           \
    t5 = _mm512_madd52hi_epu64(t5, m, ifma_bc((MOD)[4]));                           \
    /* t0 ≡ 0 (mod 2^52): shift the accumulator down one limb */                    \
    t0 = _mm512_add_epi64(t1, _mm512_srli_epi64(t0, 52));                           \
    t1 = t2;                                                                        \
    t2 = t3;                                                                        \
    t3 = t4;                                                                        \
    t4 = t5;                                                                        \
    t5 = zero;                                                                      \
  }                                                                                 \
  r->l[0] = t0;                                                                     \
  r->l[1] = t1;                                                                     \
  r->l[2] = t2;                                                                     \
  r->l[3] = t3;                                                                     \
  r->l[4] = t4;                                                                     \
  v8_norm(r)

/* Loads eight field elements stored as four little-endian 64-bit limbs in Montgomery form with
 * R = 2^256 (fully reduced, < m < 2^254): lane k's limb j at base[idx[k] + j] (idx in 8-byte
 * words). Read as the 260-bit integer 16·X (a shift, no arithmetic) they are the same values in
 * Montgomery form for R = 2^260, below 16m, with normalised limbs. */
IFMA_INLINE void ifma_gather16(v8 *r, const uint64_t *base, __m512i idx) {
  const __m512i m = ifma_bc(IFMA_MASK52), one = ifma_bc(1);
  const __m512i x0 = _mm512_i64gather_epi64(idx, (const void *)base, 8);
  const __m512i i1 = _mm512_add_epi64(idx, one);
  const __m512i x1 = _mm512_i64gather_epi64(i1, (const void *)base, 8);
  const __m512i i2 = _mm512_add_epi64(i1, one);
  const __m512i x2 = _mm512_i64gather_epi64(i2, (const void *)base, 8);
  const __m512i x3 = _mm512_i64gather_epi64(_mm512_add_epi64(i2, one), (const void *)base, 8);
  r->l[0] = _mm512_and_si512(_mm512_slli_epi64(x0, 4), m);
  r->l[1] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(x0, 48), _mm512_slli_epi64(x1, 16)), m);
  r->l[2] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(x1, 36), _mm512_slli_epi64(x2, 28)), m);
  r->l[3] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(x2, 24), _mm512_slli_epi64(x3, 40)), m);
  r->l[4] = _mm512_srli_epi64(x3, 12);
}

/* r = v − m where v ≥ m, else v (v < 2m, normalised; MOD the modulus' 52-bit limbs), then the four
 * 64-bit limbs of the result (< m < 2^256) in z. */
IFMA_INLINE void ifma_canon_r256(__m512i z[4], v8 v, const uint64_t *MOD) {
  v8 t;
  for (int j = 0; j < 5; j++) t.l[j] = _mm512_sub_epi64(v.l[j], ifma_bc(MOD[j]));
  v8_norm(&t);
  const __mmask8 ge = _mm512_cmpge_epi64_mask(t.l[4], _mm512_setzero_si512()); /* v ≥ m */
  for (int j = 0; j < 5; j++) v.l[j] = _mm512_mask_mov_epi64(v.l[j], ge, t.l[j]);
  z[0] = _mm512_or_si512(v.l[0], _mm512_slli_epi64(v.l[1], 52));
  z[1] = _mm512_or_si512(_mm512_srli_epi64(v.l[1], 12), _mm512_slli_epi64(v.l[2], 40));
  z[2] = _mm512_or_si512(_mm512_srli_epi64(v.l[2], 24), _mm512_slli_epi64(v.l[3], 28));
  z[3] = _mm512_or_si512(_mm512_srli_epi64(v.l[3], 36), _mm512_slli_epi64(v.l[4], 16));
}

/* x − K when x ≥ K, else x (x normalised, K a multiple of the modulus as 52-bit limbs). */
IFMA_INLINE void v8_sub_if_ge(v8 *x, const uint64_t *K) {
  v8 t;
  for (int j = 0; j < 5; j++) t.l[j] = _mm512_sub_epi64(x->l[j], ifma_bc(K[j]));
  v8_norm(&t);
  const __mmask8 ge = _mm512_cmpge_epi64_mask(t.l[4], _mm512_setzero_si512());
  for (int j = 0; j < 5; j++) x->l[j] = _mm512_mask_mov_epi64(x->l[j], ge, t.l[j]);
}

/* v (Montgomery with R = 2^260, normalised, below 112·MOD) → the four 64-bit limbs of the same
 * element with R = 2^256, fully reduced: v·2^-4 mod MOD as (v + k·MOD)/16 with k = v·NINV16 mod 16
 * (NINV16 = −MOD^-1 mod 16), a division that is exact, then below 8·MOD, and three conditional
 * subtractions (MOD4 = 4·MOD, MOD2 = 2·MOD). Same result as a product with 2^256 mod MOD followed
 * by ifma_canon_r256, for a tenth of the multiplications. */
IFMA_INLINE void ifma_div16_r256(__m512i z[4], v8 v, const uint64_t *MOD, uint64_t NINV16, const uint64_t *MOD4,
                                 const uint64_t *MOD2) {
  const __m512i zero = _mm512_setzero_si512(), f = ifma_bc(15);
  const __m512i k = _mm512_and_si512(_mm512_madd52lo_epu64(zero, _mm512_and_si512(v.l[0], f), ifma_bc(NINV16)), f);
  for (int j = 4; j >= 0; j--) {
    if (j < 4) v.l[j + 1] = _mm512_madd52hi_epu64(v.l[j + 1], k, ifma_bc(MOD[j]));
    v.l[j] = _mm512_madd52lo_epu64(v.l[j], k, ifma_bc(MOD[j]));
  }
  v8_norm(&v);
  const __m512i m = ifma_bc(IFMA_MASK52);
  for (int j = 0; j < 4; j++)
    v.l[j] = _mm512_or_si512(_mm512_srli_epi64(v.l[j], 4), _mm512_and_si512(_mm512_slli_epi64(v.l[j + 1], 48), m));
  v.l[4] = _mm512_srli_epi64(v.l[4], 4);
  v8_sub_if_ge(&v, MOD4);
  v8_sub_if_ge(&v, MOD2);
  ifma_canon_r256(z, v, MOD);
}

/* r = a + K − b, normalised (K a multiple of the modulus above b; the sum must stay below 2^260). */
IFMA_INLINE void v8_sub_k(v8 *r, const v8 *a, const v8 *b, const uint64_t *K) {
  for (int j = 0; j < 5; j++) r->l[j] = _mm512_sub_epi64(_mm512_add_epi64(a->l[j], ifma_bc(K[j])), b->l[j]);
  v8_norm(r);
}

/* x ← x − K when x's top limb says x ≥ K (TOP = ⌈K/2^208⌉): afterwards x < max(x − K, K + 2^208). */
IFMA_INLINE void v8_fold(v8 *x, const uint64_t *K, uint64_t top) {
  const __mmask8 big = _mm512_cmpge_epu64_mask(x->l[4], ifma_bc(top));
  for (int j = 0; j < 5; j++) x->l[j] = _mm512_mask_sub_epi64(x->l[j], big, x->l[j], ifma_bc(K[j]));
  v8_norm(x);
}

/* 1 when the CPU has AVX-512F and AVX-512 IFMA and the OS saves zmm state. */
static inline int ifma52_cpu_ok(void) {
  __builtin_cpu_init(); /* idempotent; needed before __builtin_cpu_supports in some load orders */
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma");
}
#endif
#endif
