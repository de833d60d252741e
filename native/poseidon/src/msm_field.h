/* Template (no include guard): Fq / Fq2 multiplication for one backend, then the G1 and G2 MSM
 * (msm_curve.h) built on it. Before including, define
 *   MSM_IMPL                 backend suffix token (c / adx)
 *   FQ_MONT_MUL_LAZY(r,a,b)  Montgomery product on uint64_t[4], r < 2q for a, b < q
 * Defines (static): msm_g1_<impl>, msm_g2_<impl>. */
#define MSM_CAT_(a, b) a##b
#define MSM_CAT(a, b) MSM_CAT_(a, b)
#define FQM(n) MSM_CAT(MSM_CAT(fq_, n), MSM_CAT(_, MSM_IMPL))
#define FQ2M(n) MSM_CAT(MSM_CAT(fq2_, n), MSM_CAT(_, MSM_IMPL))

/* r = a·b mod q (Montgomery), fully reduced. */
FR_INLINE void FQM(mul)(fq_t *r, const fq_t *a, const fq_t *b) {
  uint64_t t[4];
  FQ_MONT_MUL_LAZY(t, a->v, b->v);
  fq_reduce_once(r, t);
}
FR_INLINE void FQM(sqr)(fq_t *r, const fq_t *a) { FQM(mul)(r, a, a); }

/* Fq2 = Fq[u]/(u² + 1): Karatsuba product, complex squaring. */
FR_INLINE void FQ2M(mul)(fq2_t *r, const fq2_t *a, const fq2_t *b) {
  fq_t t0, t1, sa, sb, s;
  FQM(mul)(&t0, &a->c0, &b->c0);
  FQM(mul)(&t1, &a->c1, &b->c1);
  fq_add(&sa, &a->c0, &a->c1);
  fq_add(&sb, &b->c0, &b->c1);
  FQM(mul)(&s, &sa, &sb);
  fq_sub(&r->c0, &t0, &t1);
  fq_sub(&s, &s, &t0);
  fq_sub(&r->c1, &s, &t1);
}
FR_INLINE void FQ2M(sqr)(fq2_t *r, const fq2_t *a) {
  fq_t s, d, p;
  fq_add(&s, &a->c0, &a->c1);
  fq_sub(&d, &a->c0, &a->c1);
  FQM(mul)(&p, &a->c0, &a->c1);
  FQM(mul)(&r->c0, &s, &d);
  fq_add(&r->c1, &p, &p);
}

/* ---- G1: coordinates in Fq ---- */
#define E fq_t
#define E_ADD fq_add
#define E_SUB fq_sub
#define E_NEG fq_neg
#define E_MUL FQM(mul)
#define E_SQR FQM(sqr)
#define E_IS_ZERO(a) fq_is_zero(a)
#define E_SET_ONE(r) (*(r) = FQ_ONE)
#define PN(n) MSM_CAT(MSM_CAT(g1_, n), MSM_CAT(_, MSM_IMPL))
#include "msm_curve.h"

/* ---- G2: coordinates in Fq2 ---- */
#define E fq2_t
#define E_ADD fq2_add
#define E_SUB fq2_sub
#define E_NEG fq2_neg
#define E_MUL FQ2M(mul)
#define E_SQR FQ2M(sqr)
#define E_IS_ZERO(a) (fq_is_zero(&(a)->c0) && fq_is_zero(&(a)->c1))
#define E_SET_ONE(r) ((r)->c0 = FQ_ONE, memset(&(r)->c1, 0, sizeof(fq_t)))
#define PN(n) MSM_CAT(MSM_CAT(g2_, n), MSM_CAT(_, MSM_IMPL))
#include "msm_curve.h"
#undef FQM
#undef FQ2M
