/* The Groth16 prover's coset chain (groth16.c coset_core: DIF iFFT, coset shift, DIT FFT) on eight
 * AVX-512 IFMA lanes over Fr (ifma52.h): the polynomial moves once into five limb arrays (radix
 * 2^52, Montgomery R = 2^260), every butterfly stage runs on vectors of eight (contiguous loads
 * where a stage's half-block has ≥ 8 elements, gathers and scatters below), and it moves back once.
 * Twiddles and the shift table are read from the key's 64-bit tables through ifma_gather16.
 * Bounds, in multiples of r (2^260 > 84r): values stay below 16.001r between stages; DIF: u + v
 * folded, (u + 17r − v)·w < 7.3r; DIT: t = v·w < 4.1r, u + t and u + 5r − t folded; the shift
 * product < 4.1r; out: an exact division by 16 mod r (ifma_div16_r256). */
#ifndef REFRACT_FFT_IFMA_H
#define REFRACT_FFT_IFMA_H
#include "fr_ifma.h"
#ifdef REFRACT_HAVE_IFMA
#include <stdint.h>

static const uint64_t FR52_2R[5] = {0x3eb27e0000002ULL, 0x90f372e12287cULL, 0x302b0ba5067d0ULL, 0x405370a08b6d0ULL,
                                    0x60c89ce5c263ULL};
static const uint64_t FR52_4R[5] = {0x7d64fc0000004ULL, 0x21e6e5c2450f8ULL, 0x6056174a0cfa1ULL, 0x80a6e14116da0ULL,
                                    0xc19139cb84c6ULL};
#define FR52_NINV16 15 /* −r^-1 mod 16 */
/* plain 1: a product with it leaves Montgomery form (x·2^260 → x) */
static const uint64_t FR52_ONE[5] = {1, 0, 0, 0, 0};
static const uint64_t FR52_5R[5] = {0x9cbe3b0000005ULL, 0x6a609f32d6536ULL, 0x786b9d1c90389ULL, 0x20d099915c908ULL,
                                    0xf1f5883e65f8ULL};
static const uint64_t FR52_17R[5] = {0x14ed2f0000011ULL, 0xd0155079a5820ULL, 0x996de2fab726cULL, 0xa2c53d54a11e9ULL,
                                     0x336a935a0f44bULL};
/* Eight elements at limb-array index idx (five arrays of n words, SoA). */
IFMA_INLINE void fr8_soa_gather(v8 *r, uint64_t *const soa[5], __m512i idx) {
  for (int j = 0; j < 5; j++) r->l[j] = _mm512_i64gather_epi64(idx, (const void *)soa[j], 8);
}
IFMA_INLINE void fr8_soa_scatter(uint64_t *const soa[5], __m512i idx, const v8 *x) {
  for (int j = 0; j < 5; j++) _mm512_i64scatter_epi64((void *)soa[j], idx, x->l[j], 8);
}
IFMA_INLINE void fr8_soa_load(v8 *r, uint64_t *const soa[5], size_t i) {
  for (int j = 0; j < 5; j++) r->l[j] = _mm512_loadu_si512((const void *)(soa[j] + i));
}
IFMA_INLINE void fr8_soa_store(uint64_t *const soa[5], size_t i, const v8 *x) {
  for (int j = 0; j < 5; j++) _mm512_storeu_si512((void *)(soa[j] + i), x->l[j]);
}
/* x (R = 2^260, normalised, below 84r) → the four 64-bit limbs of x·2^256 mod r, fully reduced. */
IFMA_INLINE void fr8_to_r256(__m512i z[4], const v8 *x) { ifma_div16_r256(z, *x, FR52_R, FR52_NINV16, FR52_4R, FR52_2R); }
/* x (R = 2^260, below 84r) → the four 64-bit limbs of x itself (plain, fully reduced): the product
 * with plain 1 is below 2r, then one conditional subtraction. */
IFMA_INLINE void fr8_to_plain(__m512i z[4], const v8 *x) {
  v8 c;
  fr8_mul_const(&c, FR52_ONE, x);
  ifma_canon_r256(z, c, FR52_R);
}

/* DIF butterfly: u ← u + v, v ← (u − v)·w. */
IFMA_INLINE void fr8_dif(v8 *u, v8 *v, const v8 *w) {
  v8 d;
  v8_sub_k(&d, u, v, FR52_17R);
  for (int j = 0; j < 5; j++) u->l[j] = _mm512_add_epi64(u->l[j], v->l[j]);
  v8_norm(u);
  v8_fold(u, FR52_16R, FR52_TOP16);
  fr8_mul(v, &d, w);
}
/* DIT butterfly: t = v·w, u ← u + t, v ← u − t. */
IFMA_INLINE void fr8_dit(v8 *u, v8 *v, const v8 *w) {
  v8 t;
  fr8_mul(&t, v, w);
  v8_sub_k(v, u, &t, FR52_5R);
  v8_fold(v, FR52_16R, FR52_TOP16);
  for (int j = 0; j < 5; j++) u->l[j] = _mm512_add_epi64(u->l[j], t.l[j]);
  v8_norm(u);
  v8_fold(u, FR52_16R, FR52_TOP16);
}

/* Part of one butterfly stage over blocks of `len` (DIF when dif, else DIT): the blocks in
 * [lo, hi) (multiples of len), and in each only the butterflies j ∈ [jlo, jhi) (multiples of 8, for
 * half-blocks of ≥ 8; smaller ones take every j); twiddle of butterfly j is tw[j·(n/len)];
 * half-blocks of ≥ 8 with contiguous loads, smaller ones with gathers. Parts that share no block,
 * or no j of one block, may run on different threads. */
IFMA_INLINE void fr8_stage_part(uint64_t *const soa[5], size_t n, size_t len, const uint64_t *tw, int dif, size_t lo,
                                size_t hi, size_t jlo, size_t jhi) {
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  const size_t half = len >> 1;
  const unsigned lg = (unsigned)__builtin_ctzll(n / len);
  if (half >= 8) {
    if (jhi > half) jhi = half;
    for (size_t start = lo; start < hi; start += len)
      for (size_t j = jlo; j < jhi; j += 8) {
        v8 u, v, w;
        const __m512i jj = _mm512_add_epi64(_mm512_set1_epi64((long long)j), lane);
        ifma_gather16(&w, tw, _mm512_slli_epi64(jj, lg + 2));
        fr8_soa_load(&u, soa, start + j);
        fr8_soa_load(&v, soa, start + j + half);
        if (dif)
          fr8_dif(&u, &v, &w);
        else
          fr8_dit(&u, &v, &w);
        fr8_soa_store(soa, start + j, &u);
        fr8_soa_store(soa, start + j + half, &v);
      }
    return;
  }
  const unsigned sh = (unsigned)__builtin_ctzll(half);
  for (size_t q = lo / 2; q < hi / 2; q += 8) { /* butterfly q: block q / half, j = q % half */
    const __m512i qq = _mm512_add_epi64(_mm512_set1_epi64((long long)q), lane);
    const __m512i j = _mm512_and_si512(qq, _mm512_set1_epi64((long long)half - 1));
    const __m512i pu = _mm512_add_epi64(_mm512_slli_epi64(_mm512_srli_epi64(qq, sh), sh + 1), j);
    const __m512i pv = _mm512_add_epi64(pu, _mm512_set1_epi64((long long)half));
    v8 u, v, w;
    ifma_gather16(&w, tw, _mm512_slli_epi64(j, lg + 2));
    fr8_soa_gather(&u, soa, pu);
    fr8_soa_gather(&v, soa, pv);
    if (dif)
      fr8_dif(&u, &v, &w);
    else
      fr8_dit(&u, &v, &w);
    fr8_soa_scatter(soa, pu, &u);
    fr8_soa_scatter(soa, pv, &v);
  }
}

/* One whole butterfly stage (fr8_stage_part over every block and butterfly). */
IFMA_INLINE void fr8_stage(uint64_t *const soa[5], size_t n, size_t len, const uint64_t *tw, int dif) {
  fr8_stage_part(soa, n, len, tw, dif, 0, n, 0, len >> 1);
}

/* x (n ≥ 8 elements, 4 words each, R = 2^256, < r) ← FFT(shift ⊙ iFFT(x)) as coset_core, with
 * tw / tw_inv (n/2 entries) and shift_br (n entries) in the same layout; soa: 5·n words of scratch. */
IFMA_TARGET static void fr8_coset(uint64_t *x, size_t n, const uint64_t *tw, const uint64_t *tw_inv,
                                  const uint64_t *shift_br, uint64_t *soa_mem) {
  uint64_t *const soa[5] = {soa_mem, soa_mem + n, soa_mem + 2 * n, soa_mem + 3 * n, soa_mem + 4 * n};
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  for (size_t i = 0; i < n; i += 8) {
    v8 v;
    ifma_gather16(&v, x, _mm512_slli_epi64(_mm512_add_epi64(_mm512_set1_epi64((long long)i), lane), 2));
    fr8_soa_store(soa, i, &v);
  }
  /* iFFT, decimation in frequency: len = n … 2 */
  for (size_t len = n; len >= 2; len >>= 1) fr8_stage(soa, n, len, tw_inv, 1);
  for (size_t i = 0; i < n; i += 8) {
    v8 v, s;
    fr8_soa_load(&v, soa, i);
    ifma_gather16(&s, shift_br, _mm512_slli_epi64(_mm512_add_epi64(_mm512_set1_epi64((long long)i), lane), 2));
    fr8_mul(&v, &v, &s);
    fr8_soa_store(soa, i, &v);
  }
  /* FFT, decimation in time: len = 2 … n */
  for (size_t len = 2; len <= n; len <<= 1) fr8_stage(soa, n, len, tw, 0);
  for (size_t i = 0; i < n; i += 8) {
    v8 v;
    __m512i z[4];
    fr8_soa_load(&v, soa, i);
    fr8_to_r256(z, &v);
    const __m512i idx = _mm512_slli_epi64(_mm512_add_epi64(_mm512_set1_epi64((long long)i), lane), 2);
    for (int j = 0; j < 4; j++) _mm512_i64scatter_epi64((void *)x, _mm512_add_epi64(idx, ifma_bc((uint64_t)j)), z[j], 8);
  }
}
#endif
#endif
