/* Template (no include guard): Fq / Fq2 multiplication for one backend, then the G1 and G2 MSM
 * (msm_curve.h) built on it. Before including, define
 *   MSM_IMPL                 backend suffix token (c / adx)
 *   FQ_MONT_MUL_LAZY(r,a,b)  Montgomery product on uint64_t[4], r < 2q for a, b < 2q
 *   MSM_IFMA                 (optional) the batch-affine flush on eight AVX-512 IFMA lanes (G1 and G2)
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
/* r ≡ a·b·2^-256, r < 2q for a, b < 2q (not reduced: only for values that feed multiplications). */
FR_INLINE void FQM(mul_lazy)(fq_t *r, const fq_t *a, const fq_t *b) { FQ_MONT_MUL_LAZY(r->v, a->v, b->v); }

/* r = a^-1 (Montgomery form in and out; a ≠ 0): Bernstein–Yang divsteps on the integer a·R
 * (fq_inv.h, variable time), then one product with R³ to come back to Montgomery form. About 1 µs
 * against 3.6 µs for Fermat's a^(q−2) (252 squarings, 63 products), which it replaced; the
 * batch-affine MSM spends one per batch. */
static void FQM(inv)(fq_t *r, const fq_t *a) {
  fq_t p;
  fqi_inverse_plain(p.v, a->v);
  FQM(mul)(r, &p, (const fq_t *)FQI_R3);
}

/* Fq2 = Fq[u]/(u² + 1) over this backend's product: FQ2M(mul), FQ2M(sqr), FQ2M(inv). */
#define F2_NAME FQ2M
#define F2_FQ_MUL FQM(mul)
#define F2_FQ_INV FQM(inv)
#include "fq2_tmpl.h"

/* ---- G1: coordinates in Fq ---- */
#define E fq_t
#define E_ADD fq_add
#define E_SUB fq_sub
#define E_NEG fq_neg
#define E_MUL FQM(mul)
#define E_SQR FQM(sqr)
#define E_INV FQM(inv)
#define E_MUL_LAZY FQM(mul_lazy)
#define E_IS_ZERO(a) fq_is_zero(a)
#define E_SET_ONE(r) (*(r) = FQ_ONE)
#define PN(n) MSM_CAT(MSM_CAT(g1_, n), MSM_CAT(_, MSM_IMPL))
#define E_GLV_BETA ((const fq_t *)GLV_BETA_MONT)
#ifdef MSM_IFMA
#define PN_IFMA 1 /* the eight-lane flush (msm_ifma.h) */
#define VE v8
#define VE_(n) fq8_##n
#endif
#include "msm_curve.h"

/* ---- G2: coordinates in Fq2 ---- */
#define E fq2_t
#define E_ADD fq2_add
#define E_SUB fq2_sub
#define E_NEG fq2_neg
#define E_MUL FQ2M(mul)
#define E_SQR FQ2M(sqr)
#define E_INV FQ2M(inv)
#define E_MUL_LAZY FQ2M(mul)
#define E_IS_ZERO(a) fq2_is_zero(a)
#define E_SET_ONE(r) ((r)->c0 = FQ_ONE, memset(&(r)->c1, 0, sizeof(fq_t)))
#define PN(n) MSM_CAT(MSM_CAT(g2_, n), MSM_CAT(_, MSM_IMPL))
#define E_GLV_BETA ((const fq2_t *)GLV_BETA2_MONT)
#ifdef MSM_IFMA
#define PN_IFMA 1
#define VE v8x2
#define VE_(n) fq2x8_##n
#endif
#include "msm_curve.h"
#undef FQM
#undef FQ2M
