/* Eight-lane Fq arithmetic for the batch-affine MSM's flush (msm_curve.h, PN(ba_flush_ifma)):
 * AVX-512 IFMA radix-2^52 Montgomery (ifma52.h) over BN254's base field q.
 *
 * The MSM keeps its points and buckets as ffjavascript does (four 64-bit limbs, Montgomery
 * R = 2^256, < q). Loading X = x·2^256 as the 260-bit integer 16·X (a shift, no arithmetic) gives
 * x in Montgomery form for R = 2^260, below 16q; an exact division by 16 modulo q goes back
 * (ifma_div16_r256: x·2^260 + k·q, k < 16, shifted down four bits; measured on inclusion_26_8's
 * MSMs ×1.01–1.02 against the product with 2^256 mod q it replaces). Bounds are in multiples of q:
 * 2^260 > 84q, a product of values below A·q and B·q is below (A·B/84 + 1)·q, and a difference
 * a − b is taken as a + K − b with K a multiple of q above b's bound (v8_sub_k). */
#ifndef REFRACT_MSM_IFMA_H
#define REFRACT_MSM_IFMA_H
#include "ifma52.h"
#ifdef REFRACT_HAVE_IFMA
#include <stdint.h>

static const uint64_t FQ52_Q[5] = {0x8c16d87cfd47ULL, 0x916871ca8d3c2ULL, 0x181585d97816aULL, 0xa029b85045b68ULL,
                                   0x30644e72e131ULL};
#define FQ52_NINV 0x20782e4866389ULL /* −q^-1 mod 2^52 */
static const uint64_t FQ52_16Q[5] = {0x8c16d87cfd470ULL, 0x16871ca8d3c20ULL, 0x81585d97816a9ULL, 0x29b85045b681ULL,
                                     0x30644e72e131aULL};
static const uint64_t FQ52_32Q[5] = {0x182db0f9fa8e0ULL, 0x2d0e3951a7841ULL, 0x2b0bb2f02d52ULL, 0x5370a08b6d03ULL,
                                     0x60c89ce5c2634ULL};
static const uint64_t FQ52_14Q[5] = {0x7a93fd6d5d9e2ULL, 0xf3b63913b949cULL, 0x512d51e4913d3ULL, 0xc2481463cffb1ULL,
                                     0x2a57c4a4850b6ULL};
static const uint64_t FQ52_17Q[5] = {0x94d84604cd1b7ULL, 0xa7ef8e7360fe2ULL, 0x996de370f9813ULL, 0xa2c53d54a11e9ULL,
                                     0x336a935a0f44bULL};
static const uint64_t FQ52_28Q[5] = {0xf527fadabb3c4ULL, 0xe76c722772938ULL, 0xa25aa3c9227a7ULL, 0x849028c79ff62ULL,
                                     0x54af89490a16dULL};
static const uint64_t FQ52_64Q[5] = {0x305b61f3f51c0ULL, 0x5a1c72a34f082ULL, 0x561765e05aa4ULL, 0xa6e14116da06ULL,
                                     0xc19139cb84c68ULL};
/* ⌈K/2^208⌉ for K = 16q, 32q, 64q: a normalised value whose top limb is at least this is ≥ K */
#define FQ52_TOP16 0x30644e72e131bULL
#define FQ52_TOP32 0x60c89ce5c2635ULL
#define FQ52_TOP64 0xc19139cb84c69ULL

/* r = a·b·2^-260 (mod q), normalised, < (A·B/84 + 1)·q for a < A·q, b < B·q (r may alias). */
IFMA_INLINE void fq8_mul(v8 *r, const v8 *a_, const v8 *b_) {
  const v8 a = *a_, bb = *b_;
  const v8 *b = &bb;
  IFMA52_MUL_BODY(a.l[i], FQ52_Q, FQ52_NINV);
}

/* r = c·b·2^-260 (mod q) for a constant c (52-bit limbs) in every lane. */
IFMA_INLINE void fq8_mul_const(v8 *r, const uint64_t *c, const v8 *b_) {
  const v8 bb = *b_;
  const v8 *b = &bb;
  IFMA52_MUL_BODY(ifma_bc(c[i]), FQ52_Q, FQ52_NINV);
}

/* r = a² (fq8_mul; the batch-affine flush's λ², fq2x8_sqr's counterpart). */
IFMA_INLINE void fq8_sqr(v8 *r, const v8 *a) { fq8_mul(r, a, a); }

/* r = a + b, normalised. */
IFMA_INLINE void fq8_add(v8 *r, const v8 *a, const v8 *b) {
  for (int j = 0; j < 5; j++) r->l[j] = _mm512_add_epi64(a->l[j], b->l[j]);
  v8_norm(r);
}

/* Eight Fq values in ffjavascript's layout, as ifma_gather16 (ifma52.h). */
IFMA_INLINE void fq8_gather16(v8 *r, const uint64_t *base, __m512i idx) { ifma_gather16(r, base, idx); }

static const uint64_t FQ52_2Q[5] = {0x1182db0f9fa8eULL, 0x22d0e3951a784ULL, 0x302b0bb2f02d5ULL, 0x405370a08b6d0ULL,
                                    0x60c89ce5c263ULL};
static const uint64_t FQ52_4Q[5] = {0x2305b61f3f51cULL, 0x45a1c72a34f08ULL, 0x60561765e05aaULL, 0x80a6e14116da0ULL,
                                    0xc19139cb84c6ULL};
#define FQ52_NINV16 9 /* −q^-1 mod 16 */
/* x (R = 2^260, below 84q) → the four 64-bit limbs of x·2^256 mod q, fully reduced (< q). */
IFMA_INLINE void fq8_to_r256(__m512i z[4], const v8 *x) {
  ifma_div16_r256(z, *x, FQ52_Q, FQ52_NINV16, FQ52_4Q, FQ52_2Q);
}

/* Stores fq8_to_r256's limbs for the lanes in `live`: lane k's limb j at base[idx[k] + j]. */
IFMA_INLINE void fq8_scatter(uint64_t *base, __m512i idx, __mmask8 live, const __m512i z[4]) {
  const __m512i one = ifma_bc(1);
  for (int j = 0; j < 4; j++) {
    _mm512_mask_i64scatter_epi64((void *)base, live, idx, z[j], 8);
    idx = _mm512_add_epi64(idx, one);
  }
}

/* ---- Fq2 = Fq[u]/(u² + 1) on eight lanes: components c0, c1 as above ---- */
typedef struct {
  v8 c0, c1;
} v8x2;

/* Loads eight Fq2 values (c0 then c1, four words each) at base[idx[k]], as fq8_gather16. */
IFMA_INLINE void fq2x8_gather16(v8x2 *r, const uint64_t *base, __m512i idx) {
  fq8_gather16(&r->c0, base, idx);
  fq8_gather16(&r->c1, base, _mm512_add_epi64(idx, ifma_bc(4)));
}

/* r = a + K − b per component (v8_sub_k). */
IFMA_INLINE void fq2x8_sub_k(v8x2 *r, const v8x2 *a, const v8x2 *b, const uint64_t *K) {
  v8_sub_k(&r->c0, &a->c0, &b->c0, K);
  v8_sub_k(&r->c1, &a->c1, &b->c1, K);
}

/* Components below 64q → below 16.001q: c ≥ 32q loses 32q, then c ≥ 16q loses 16q. */
IFMA_INLINE void fq2x8_fold(v8x2 *x) {
  v8_fold(&x->c0, FQ52_32Q, FQ52_TOP32);
  v8_fold(&x->c0, FQ52_16Q, FQ52_TOP16);
  v8_fold(&x->c1, FQ52_32Q, FQ52_TOP32);
  v8_fold(&x->c1, FQ52_16Q, FQ52_TOP16);
}

/* r = a·b (Karatsuba: three products) for components of a and b below 33q; r's below 16.001q.
 * t0 = a0·b0, t1 = a1·b1 < 14q; s = (a0 + a1)(b0 + b1) < 53q (a0 + a1 < 66q < 84q);
 * c0 = t0 + 14q − t1 < 28q, c1 = s + 28q − t0 − t1 < 81q, then folded (64q, 32q, 16q). */
IFMA_INLINE void fq2x8_mul(v8x2 *r, const v8x2 *a, const v8x2 *b) {
  v8 t0, t1, sa, sb, s, u;
  fq8_mul(&t0, &a->c0, &b->c0);
  fq8_mul(&t1, &a->c1, &b->c1);
  fq8_add(&sa, &a->c0, &a->c1);
  fq8_add(&sb, &b->c0, &b->c1);
  fq8_mul(&s, &sa, &sb);
  v8_sub_k(&r->c0, &t0, &t1, FQ52_14Q);
  fq8_add(&u, &t0, &t1);
  v8_sub_k(&r->c1, &s, &u, FQ52_28Q);
  v8_fold(&r->c0, FQ52_16Q, FQ52_TOP16);
  v8_fold(&r->c1, FQ52_64Q, FQ52_TOP64);
  v8_fold(&r->c1, FQ52_32Q, FQ52_TOP32);
  v8_fold(&r->c1, FQ52_16Q, FQ52_TOP16);
}

/* r = a² (complex squaring: two products instead of fq2x8_mul's three) for components below 16.001q
 * (fq2x8_mul's outputs): c0 = (a0 + a1)(a0 + 17q − a1) < (32.002·33.001/84 + 1)q < 13.6q,
 * c1 = 2·a0·a1 < 8.2q; both below fq2x8_mul's 16.001q, so the flush's later steps keep their bounds. */
IFMA_INLINE void fq2x8_sqr(v8x2 *r, const v8x2 *a) {
  v8 s, d, p;
  fq8_add(&s, &a->c0, &a->c1);
  v8_sub_k(&d, &a->c0, &a->c1, FQ52_17Q);
  fq8_mul(&p, &a->c0, &a->c1);
  fq8_mul(&r->c0, &s, &d);
  fq8_add(&r->c1, &p, &p);
}

/* ---- the batch-affine flush's steps (msm_curve.h, PN(ba_flush_ifma)), per coordinate field.
 * Inputs from the gathers are below 16q per component; the names give what each step computes. ---- */
/* Stores eight values (lanes in `live`) as four LE words, R = 2^256, < q at base[idx[k]]. */
IFMA_INLINE void fq8_store(uint64_t *base, __m512i idx, __mmask8 live, const v8 *x) {
  __m512i z[4];
  fq8_to_r256(z, x);
  fq8_scatter(base, idx, live, z);
}
IFMA_INLINE void fq2x8_store(uint64_t *base, __m512i idx, __mmask8 live, const v8x2 *x) {
  fq8_store(base, idx, live, &x->c0);
  fq8_store(base, _mm512_add_epi64(idx, ifma_bc(4)), live, &x->c1);
}
/* out[k] (four or eight words each) = lane k of x, R = 2^256, < q. */
IFMA_INLINE void fq8_lanes_out(uint64_t *out, const v8 *x) {
  __m512i z[4];
  uint64_t w[4][8];
  fq8_to_r256(z, x);
  for (int i = 0; i < 4; i++) _mm512_storeu_si512((void *)w[i], z[i]);
  for (int l = 0; l < 8; l++)
    for (int i = 0; i < 4; i++) out[4 * l + i] = w[i][l];
}
IFMA_INLINE void fq2x8_lanes_out(uint64_t *out, const v8x2 *x) {
  uint64_t c0[32], c1[32];
  fq8_lanes_out(c0, &x->c0);
  fq8_lanes_out(c1, &x->c1);
  for (int l = 0; l < 8; l++) {
    for (int i = 0; i < 4; i++) out[8 * l + i] = c0[4 * l + i];
    for (int i = 0; i < 4; i++) out[8 * l + 4 + i] = c1[4 * l + i];
  }
}
IFMA_INLINE void fq8_blend(v8 *r, __mmask8 m, const v8 *a) {
  for (int i = 0; i < 5; i++) r->l[i] = _mm512_mask_mov_epi64(r->l[i], m, a->l[i]);
}
IFMA_INLINE void fq2x8_blend(v8x2 *r, __mmask8 m, const v8x2 *a) {
  fq8_blend(&r->c0, m, &a->c0);
  fq8_blend(&r->c1, m, &a->c1);
}
/* G1 (bounds in q): num = y2 − y1 < 48; doubling num = 3·x1² < 13; with the lane inverse di < 16
 * (a flush of one group uses the gathered inverse as it is), λ < 10.1 and λ² < 2.3, so
 * x3 = λ² − x1 − x2 < 34.3; d = x1 + 64q − x3 < 80 (34q did not cover x3 above 34q); t = λ·d < 10.6;
 * y3 = t − y1 < 27. */
IFMA_INLINE void fq8_ba_num(v8 *r, const v8 *y2, const v8 *y1) { v8_sub_k(r, y2, y1, FQ52_32Q); }
IFMA_INLINE void fq8_ba_dbl(v8 *r, const v8 *x1) {
  v8 sq;
  fq8_mul(&sq, x1, x1);
  fq8_add(r, &sq, &sq);
  fq8_add(r, r, &sq);
}
IFMA_INLINE void fq8_ba_x3(v8 *r, const v8 *lam2, const v8 *x1, const v8 *x2) {
  v8 t;
  v8_sub_k(&t, lam2, x1, FQ52_16Q);
  v8_sub_k(r, &t, x2, FQ52_16Q);
}
IFMA_INLINE void fq8_ba_d(v8 *r, const v8 *x1, const v8 *x3) { v8_sub_k(r, x1, x3, FQ52_64Q); }
IFMA_INLINE void fq8_ba_y3(v8 *r, const v8 *t, const v8 *y1) { v8_sub_k(r, t, y1, FQ52_16Q); }
/* G2 (bounds per component, in q; fq2x8_mul takes < 33, gives < 16.001): num = y2 − y1 < 32;
 * doubling num = 3·x1² folded < 16.001; x3 = λ² − x1 − x2 folded < 16.001; d = x1 − x3 < 33;
 * y3 = t − y1 < 33. */
IFMA_INLINE void fq2x8_ba_num(v8x2 *r, const v8x2 *y2, const v8x2 *y1) { fq2x8_sub_k(r, y2, y1, FQ52_16Q); }
IFMA_INLINE void fq2x8_ba_dbl(v8x2 *r, const v8x2 *x1) {
  v8x2 sq;
  fq2x8_mul(&sq, x1, x1);
  fq8_add(&r->c0, &sq.c0, &sq.c0);
  fq8_add(&r->c0, &r->c0, &sq.c0);
  fq8_add(&r->c1, &sq.c1, &sq.c1);
  fq8_add(&r->c1, &r->c1, &sq.c1);
  fq2x8_fold(r); /* < 48.003 → < 16.001 */
}
IFMA_INLINE void fq2x8_ba_x3(v8x2 *r, const v8x2 *lam2, const v8x2 *x1, const v8x2 *x2) {
  v8x2 t;
  fq2x8_sub_k(&t, lam2, x1, FQ52_16Q);
  fq2x8_sub_k(r, &t, x2, FQ52_16Q);
  fq2x8_fold(r); /* < 48.001 → < 16.001 */
}
IFMA_INLINE void fq2x8_ba_d(v8x2 *r, const v8x2 *x1, const v8x2 *x3) { fq2x8_sub_k(r, x1, x3, FQ52_17Q); }
IFMA_INLINE void fq2x8_ba_y3(v8x2 *r, const v8x2 *t, const v8x2 *y1) { fq2x8_sub_k(r, t, y1, FQ52_16Q); }
#endif
#endif
