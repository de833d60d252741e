/* BN254's scalar field Fr on eight AVX-512 IFMA lanes (ifma52.h: radix 2^52, Montgomery R = 2^260):
 * the modulus, 16r for folding, and the products, shared by the Poseidon batch kernel
 * (poseidon_ifma.h) and the prover's coset FFT chain (fft_ifma.h). */
#ifndef REFRACT_FR_IFMA_H
#define REFRACT_FR_IFMA_H
#include "ifma52.h"
#ifdef REFRACT_HAVE_IFMA
#include <stdint.h>

static const uint64_t FR52_R[5] = {0x1f593f0000001ULL, 0x4879b9709143eULL, 0x181585d2833e8ULL, 0xa029b85045b68ULL,
                                   0x30644e72e131ULL};
#define FR52_NINV 0x1f593efffffffULL /* −r^-1 mod 2^52 */
static const uint64_t FR52_16R[5] = {0xf593f00000010ULL, 0x879b9709143e1ULL, 0x81585d2833e84ULL, 0x29b85045b681ULL,
                                     0x30644e72e131aULL};
#define FR52_TOP16 0x30644e72e131bULL /* ⌈16r / 2^208⌉: top limb ≥ this ⇒ value ≥ 16r */

/* r = a·b·2^-260 (mod r) for eight lanes (r may alias a or b). */
IFMA_INLINE void fr8_mul(v8 *r, const v8 *a_, const v8 *b_) {
  const v8 a = *a_, bb = *b_;
  const v8 *b = &bb;
  IFMA52_MUL_BODY(a.l[i], FR52_R, FR52_NINV);
}
/* r = c·b·2^-260 (mod r) with the same constant c in every lane (r may alias b). */
IFMA_INLINE void fr8_mul_const(v8 *r, const uint64_t *c, const v8 *b_) {
  const v8 bb = *b_;
  const v8 *b = &bb;
  IFMA52_MUL_BODY(ifma_bc(c[i]), FR52_R, FR52_NINV);
}
#endif
#endif
