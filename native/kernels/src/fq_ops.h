/* Fq and Fq2 arithmetic outside the MSM templates (the Groth16 prover's point conversions and
 * checks in groth16.c, the pairing and verifier in pairing.c): the fully reduced Montgomery product,
 * on the BMI2/ADX asm where the CPU has it (chosen once, when the addon loads) else the portable
 * CIOS product; the divsteps inversion (fq_inv.h, variable time, like the MSMs whose sums it
 * normalises); the Fq2 product, squaring and inverse of fq2_tmpl.h. Representation: fq.h (Montgomery,
 * R = 2^256, four little-endian u64 limbs, fully reduced in and out). The MSM compiles its own
 * copies per backend (msm_field.h), the backend being a compile-time choice there. */
#ifndef REFRACT_FQ_OPS_H
#define REFRACT_FQ_OPS_H
#include <string.h>
#include "fq.h"
#include "fq_inv.h"

#ifdef FR_HAVE_ADX
/* 1 when the ADX product runs; set by fq_ops_detect at load (one flag per including file). */
static int fq_ops_use_adx;

__attribute__((constructor)) static void fq_ops_detect(void) { fq_ops_use_adx = fr_cpu_has_adx(); }
#endif

/* r = a·b (Montgomery), fully reduced; a, b < q. r may alias a or b. */
FR_INLINE void fq_mul(fq_t *r, const fq_t *a, const fq_t *b) {
  uint64_t t[4];
#ifdef FR_HAVE_ADX
  if (fq_ops_use_adx)
    mont_mul_adx_lazy(t, a->v, b->v, FQ_Q_LIMBS, &FQ_NINV_WORD);
  else
#endif
    fq_mont_mul_c_lazy(t, a->v, b->v);
  fq_reduce_once(r, t);
}

/* r = a^-1 (Montgomery in and out; a ≠ 0): divsteps on the integer a·R, then a product with R³. */
static inline void fq_inv(fq_t *r, const fq_t *a) {
  fq_t p;
  fqi_inverse_plain(p.v, a->v);
  fq_mul(r, &p, (const fq_t *)FQI_R3);
}

#define F2_NAME(n) fq2_##n
#define F2_FQ_MUL fq_mul
#define F2_FQ_INV fq_inv
#include "fq2_tmpl.h"

/* The plain value of a Montgomery a (a·R⁻¹): one product with 1. */
FR_INLINE void fq_from_mont(fq_t *r, const fq_t *a) {
  static const fq_t plain_one = {{1, 0, 0, 0}};
  fq_mul(r, a, &plain_one);
}

/* r = a·b for a ∈ Fq2, b ∈ Fq. */
FR_INLINE void fq2_mul_fq(fq2_t *r, const fq2_t *a, const fq_t *b) {
  fq_mul(&r->c0, &a->c0, b);
  fq_mul(&r->c1, &a->c1, b);
}

/* Point conversions shared by the Groth16 provers (groth16.c: Refract's keys; lightkey.c: Light's). */
/* Jacobian (X, Y, Z) G1, Montgomery → affine Montgomery (x, y); 0 (aff zeroed) for infinity. */
static inline int g1_jac_to_aff(uint8_t aff[64], const uint8_t jac[96]) {
  fq_t X, Y, Z, zi, zi2, zi3, x, y;
  memcpy(&X, jac, 32);
  memcpy(&Y, jac + 32, 32);
  memcpy(&Z, jac + 64, 32);
  if (fq_is_zero(&Z)) {
    memset(aff, 0, 64);
    return 0;
  }
  fq_inv(&zi, &Z);
  fq_mul(&zi2, &zi, &zi);
  fq_mul(&zi3, &zi2, &zi);
  fq_mul(&x, &X, &zi2);
  fq_mul(&y, &Y, &zi3);
  memcpy(aff, &x, 32);
  memcpy(aff + 32, &y, 32);
  return 1;
}

static inline int g2_jac_to_aff(uint8_t aff[128], const uint8_t jac[192]) {
  fq2_t X, Y, Z, zi, zi2, zi3, x, y;
  memcpy(&X, jac, 64);
  memcpy(&Y, jac + 64, 64);
  memcpy(&Z, jac + 128, 64);
  if (fq2_is_zero(&Z)) {
    memset(aff, 0, 128);
    return 0;
  }
  fq2_inv(&zi, &Z);
  fq2_mul(&zi2, &zi, &zi);
  fq2_mul(&zi3, &zi2, &zi);
  fq2_mul(&x, &X, &zi2);
  fq2_mul(&y, &Y, &zi3);
  memcpy(aff, &x, 64);
  memcpy(aff + 64, &y, 64);
  return 1;
}

#endif
