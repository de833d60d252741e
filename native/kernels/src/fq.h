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
FR_INLINE void fq_reduce_once(fq_t *r, const uint64_t t[4]) { mod_reduce_once(r->v, t, FQ_Q_LIMBS); }

/* r = a ± b mod q. */
FR_INLINE void fq_add(fq_t *r, const fq_t *a, const fq_t *b) { mod_add(r->v, a->v, b->v, FQ_Q_LIMBS); }
FR_INLINE void fq_sub(fq_t *r, const fq_t *a, const fq_t *b) { mod_sub(r->v, a->v, b->v, FQ_Q_LIMBS); }

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
FR_INLINE int fq2_is_zero(const fq2_t *a) { return fq_is_zero(&a->c0) && fq_is_zero(&a->c1); }

#endif
