/* Template (no include guard): Fq2 = Fq[u]/(u² + 1) product, squaring and inverse over one Fq
 * Montgomery multiplication, so the MSM's per-backend copies (msm_field.h) and the dispatched
 * arithmetic outside it (fq_ops.h) share the formulas. Before including, define
 *   F2_NAME(n)        the functions' names (F2_NAME(mul), F2_NAME(sqr), F2_NAME(inv))
 *   F2_FQ_MUL(r,a,b)  fully reduced Fq product, fq_t pointers
 *   F2_FQ_INV(r,a)    Fq inverse (a ≠ 0)
 * Values in and out are fully reduced Montgomery (fq.h); all three are undefined afterwards. */

/* r = a·b (Karatsuba: three Fq products). r may alias a or b. */
FR_INLINE void F2_NAME(mul)(fq2_t *r, const fq2_t *a, const fq2_t *b) {
  fq_t t0, t1, sa, sb, s;
  F2_FQ_MUL(&t0, &a->c0, &b->c0);
  F2_FQ_MUL(&t1, &a->c1, &b->c1);
  fq_add(&sa, &a->c0, &a->c1);
  fq_add(&sb, &b->c0, &b->c1);
  F2_FQ_MUL(&s, &sa, &sb);
  fq_sub(&r->c0, &t0, &t1);
  fq_sub(&s, &s, &t0);
  fq_sub(&r->c1, &s, &t1);
}

/* r = a² (complex squaring: (c0 + c1)(c0 − c1) + 2·c0·c1·u, two Fq products). r may alias a. */
FR_INLINE void F2_NAME(sqr)(fq2_t *r, const fq2_t *a) {
  fq_t s, d, p;
  fq_add(&s, &a->c0, &a->c1);
  fq_sub(&d, &a->c0, &a->c1);
  F2_FQ_MUL(&p, &a->c0, &a->c1);
  F2_FQ_MUL(&r->c0, &s, &d);
  fq_add(&r->c1, &p, &p);
}

/* r = a^-1 = conj(a) / (c0² + c1²) (a ≠ 0: the norm is then ≠ 0, −1 being a non-residue mod q). */
static void F2_NAME(inv)(fq2_t *r, const fq2_t *a) {
  fq_t t0, t1;
  F2_FQ_MUL(&t0, &a->c0, &a->c0);
  F2_FQ_MUL(&t1, &a->c1, &a->c1);
  fq_add(&t0, &t0, &t1);
  F2_FQ_INV(&t0, &t0);
  F2_FQ_MUL(&r->c0, &a->c0, &t0);
  F2_FQ_MUL(&t1, &a->c1, &t0);
  fq_neg(&r->c1, &t1);
}

#undef F2_NAME
#undef F2_FQ_MUL
#undef F2_FQ_INV
