/* BN254 base field Fq = GF(q), q = 0x30644e72e131a029b85045b68181585d97816a916871ca8d3c208c16d87cfd47,
 * and its quadratic extension Fq2 = Fq[u]/(u² + 1), in the representation ffjavascript/wasmcurves
 * use for curve points: Montgomery form with R = 2^256, four little-endian u64 limbs; an Fq2
 * element is c0 then c1. All values handed in and out are fully reduced (< q).
 *
 * The multiplication comes from the including file (FQ_MONT_MUL_LAZY(r, a, b): r ≡ a·b·2^-256,
 * r < 2q for a, b < q) so that msm.c can compile the MSM once per backend (portable C / ADX asm).
 * This header only holds what does not depend on the backend. */
#ifndef REFRACT_FQ_H
#define REFRACT_FQ_H
#include "fr.h"

typedef struct {
  uint64_t v[4];
} fq_t;
typedef struct {
  fq_t c0, c1;
} fq2_t;

static const uint64_t FQ_Q_LIMBS[4] = {0x3c208c16d87cfd47ULL, 0x97816a916871ca8dULL, 0xb85045b68181585dULL,
                                       0x30644e72e131a029ULL};
static const uint64_t FQ_NINV_WORD = 0x87d20782e4866389ULL; /* −q^-1 mod 2^64 */
/* 2^256 mod q: Montgomery form of 1 */
static const fq_t FQ_ONE = {{0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL, 0x666ea36f7879462cULL, 0x0e0a77c19a07df2fULL}};

/* r = t − q if t ≥ q else t (t < 2q). */
FR_INLINE void fq_reduce_once(fq_t *r, const uint64_t t[4]) {
  unsigned long long s0, s1, s2, s3;
  unsigned char b;
  b = SBB(0, t[0], FQ_Q_LIMBS[0], &s0);
  b = SBB(b, t[1], FQ_Q_LIMBS[1], &s1);
  b = SBB(b, t[2], FQ_Q_LIMBS[2], &s2);
  b = SBB(b, t[3], FQ_Q_LIMBS[3], &s3);
  r->v[0] = b ? t[0] : s0;
  r->v[1] = b ? t[1] : s1;
  r->v[2] = b ? t[2] : s2;
  r->v[3] = b ? t[3] : s3;
}

/* r = a + b mod q (a, b < q; 2q < 2^256 so the sum cannot carry out). */
FR_INLINE void fq_add(fq_t *r, const fq_t *a, const fq_t *b) {
  unsigned long long t[4];
  unsigned char c;
  c = ADC(0, a->v[0], b->v[0], &t[0]);
  c = ADC(c, a->v[1], b->v[1], &t[1]);
  c = ADC(c, a->v[2], b->v[2], &t[2]);
  (void)ADC(c, a->v[3], b->v[3], &t[3]);
  fq_reduce_once(r, (const uint64_t *)t);
}

/* r = a − b mod q. */
FR_INLINE void fq_sub(fq_t *r, const fq_t *a, const fq_t *b) {
  unsigned long long t0, t1, t2, t3, u0, u1, u2, u3;
  unsigned char br, c;
  br = SBB(0, a->v[0], b->v[0], &t0);
  br = SBB(br, a->v[1], b->v[1], &t1);
  br = SBB(br, a->v[2], b->v[2], &t2);
  br = SBB(br, a->v[3], b->v[3], &t3);
  const uint64_t m = (uint64_t)0 - br; /* q if it borrowed, else 0 */
  c = ADC(0, t0, FQ_Q_LIMBS[0] & m, &u0);
  c = ADC(c, t1, FQ_Q_LIMBS[1] & m, &u1);
  c = ADC(c, t2, FQ_Q_LIMBS[2] & m, &u2);
  (void)ADC(c, t3, FQ_Q_LIMBS[3] & m, &u3);
  r->v[0] = u0;
  r->v[1] = u1;
  r->v[2] = u2;
  r->v[3] = u3;
}

FR_INLINE int fq_is_zero(const fq_t *a) { return (a->v[0] | a->v[1] | a->v[2] | a->v[3]) == 0; }

/* r = −a mod q. */
FR_INLINE void fq_neg(fq_t *r, const fq_t *a) {
  static const fq_t zero = {{0, 0, 0, 0}};
  fq_sub(r, &zero, a);
}

/* Portable CIOS Montgomery product for Fq (no final carry: q[3] < 2^63 − 1); r < 2q. */
FR_INLINE void fq_mont_mul_c_lazy(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  uint64_t t[5] = {0, 0, 0, 0, 0};
  for (int i = 0; i < 4; i++) {
    u128 p;
    uint64_t c = 0;
    for (int j = 0; j < 4; j++) {
      p = (u128)a[j] * b[i] + t[j] + c;
      t[j] = (uint64_t)p;
      c = (uint64_t)(p >> 64);
    }
    t[4] = c;
    const uint64_t m = t[0] * FQ_NINV_WORD;
    p = (u128)m * FQ_Q_LIMBS[0] + t[0];
    c = (uint64_t)(p >> 64);
    for (int j = 1; j < 4; j++) {
      p = (u128)m * FQ_Q_LIMBS[j] + t[j] + c;
      t[j - 1] = (uint64_t)p;
      c = (uint64_t)(p >> 64);
    }
    t[3] = t[4] + c;
  }
  r[0] = t[0];
  r[1] = t[1];
  r[2] = t[2];
  r[3] = t[3];
}

/* Fq2 additive operations (componentwise). */
FR_INLINE void fq2_add(fq2_t *r, const fq2_t *a, const fq2_t *b) {
  fq_add(&r->c0, &a->c0, &b->c0);
  fq_add(&r->c1, &a->c1, &b->c1);
}
FR_INLINE void fq2_sub(fq2_t *r, const fq2_t *a, const fq2_t *b) {
  fq_sub(&r->c0, &a->c0, &b->c0);
  fq_sub(&r->c1, &a->c1, &b->c1);
}
FR_INLINE void fq2_neg(fq2_t *r, const fq2_t *a) {
  fq_neg(&r->c0, &a->c0);
  fq_neg(&r->c1, &a->c1);
}

#endif
