/* Variable-time inversion in BN254's Fq by Bernstein–Yang divsteps, 62 at a time (the algorithm and
 * schedule of libsecp256k1's secp256k1_modinv64_var, written here for q): about 4× faster than
 * Fermat's a^(q−2) with a 4-bit window. Variable time is fine where it is used: the batch-affine
 * MSM inverts sums of public key points. fqi_inverse_plain works on plain integers (any a with
 * gcd(a, q) = 1, so a lazily reduced a < 2q too); msm_field.h's FQM(inv) turns a Montgomery a·R
 * into (a·R)^-1 with it and multiplies by R³ to get a^-1·R. */
#ifndef REFRACT_FQ_INV_H
#define REFRACT_FQ_INV_H
#include <stdint.h>

typedef __int128 i128;
typedef struct {
  int64_t v[5]; /* Σ v[i]·2^(62·i), limbs in (−2^62, 2^62) except the top one */
} fqi_s62;
typedef struct {
  int64_t u, v, q, r;
} fqi_t2x2;

#define FQI_M62 ((int64_t)(UINT64_MAX >> 2))
static const fqi_s62 FQI_Q = {{0x3c208c16d87cfd47LL, 0x1e05aa45a1c72a34LL, 0x05045b68181585d9LL, 0x19139cb84c680a6eLL, 0x30LL}};
#define FQI_QINV62 0x382df87d1b799c77ULL /* q^-1 mod 2^62 */

/* Up to 62 divsteps on the low words of f, g (f odd): the transition matrix in t, eta updated. */
static inline int64_t fqi_divsteps_62_var(int64_t eta, uint64_t f0, uint64_t g0, fqi_t2x2 *t) {
  uint64_t u = 1, v = 0, q = 0, r = 1, f = f0, g = g0, m, w;
  int i = 62, limit, zeros;
  for (;;) {
    zeros = __builtin_ctzll(g | (UINT64_MAX << i));
    g >>= zeros;
    u <<= zeros;
    v <<= zeros;
    eta -= zeros;
    i -= zeros;
    if (i == 0) break;
    if (eta < 0) {
      uint64_t tmp;
      eta = -eta;
      tmp = f;
      f = g;
      g = -tmp;
      tmp = u;
      u = q;
      q = -tmp;
      tmp = v;
      v = r;
      r = -tmp;
      limit = ((int)eta + 1) > i ? i : ((int)eta + 1);
      m = (UINT64_MAX >> (64 - limit)) & 63U;
      w = (f * g * (f * f - 2)) & m;
    } else {
      limit = ((int)eta + 1) > i ? i : ((int)eta + 1);
      m = (UINT64_MAX >> (64 - limit)) & 15U;
      w = f + (((f + 1) & 4) << 1);
      w = (-w * g) & m;
    }
    g += f * w;
    q += u * w;
    r += v * w;
  }
  t->u = (int64_t)u;
  t->v = (int64_t)v;
  t->q = (int64_t)q;
  t->r = (int64_t)r;
  return eta;
}

/* [d, e] ← t·[d, e] / 2^62 (mod q), with multiples of q added so that the division is exact. */
static inline void fqi_update_de(fqi_s62 *d, fqi_s62 *e, const fqi_t2x2 *t) {
  const int64_t u = t->u, v = t->v, q = t->q, r = t->r;
  const int64_t sd = d->v[4] >> 63, se = e->v[4] >> 63;
  int64_t md = (u & sd) + (v & se), me = (q & sd) + (r & se);
  i128 cd = (i128)u * d->v[0] + (i128)v * e->v[0], ce = (i128)q * d->v[0] + (i128)r * e->v[0];
  md -= (int64_t)((FQI_QINV62 * (uint64_t)cd + (uint64_t)md) & (uint64_t)FQI_M62);
  me -= (int64_t)((FQI_QINV62 * (uint64_t)ce + (uint64_t)me) & (uint64_t)FQI_M62);
  cd += (i128)FQI_Q.v[0] * md;
  ce += (i128)FQI_Q.v[0] * me;
  cd >>= 62;
  ce >>= 62;
  for (int i = 1; i < 5; i++) {
    cd += (i128)u * d->v[i] + (i128)v * e->v[i] + (i128)FQI_Q.v[i] * md;
    ce += (i128)q * d->v[i] + (i128)r * e->v[i] + (i128)FQI_Q.v[i] * me;
    d->v[i - 1] = (int64_t)cd & FQI_M62;
    cd >>= 62;
    e->v[i - 1] = (int64_t)ce & FQI_M62;
    ce >>= 62;
  }
  d->v[4] = (int64_t)cd;
  e->v[4] = (int64_t)ce;
}

/* [f, g] ← t·[f, g] / 2^62 over the first len limbs (exact). */
static inline void fqi_update_fg(int len, fqi_s62 *f, fqi_s62 *g, const fqi_t2x2 *t) {
  const int64_t u = t->u, v = t->v, q = t->q, r = t->r;
  i128 cf = (i128)u * f->v[0] + (i128)v * g->v[0], cg = (i128)q * f->v[0] + (i128)r * g->v[0];
  cf >>= 62;
  cg >>= 62;
  for (int i = 1; i < len; i++) {
    cf += (i128)u * f->v[i] + (i128)v * g->v[i];
    cg += (i128)q * f->v[i] + (i128)r * g->v[i];
    f->v[i - 1] = (int64_t)cf & FQI_M62;
    cf >>= 62;
    g->v[i - 1] = (int64_t)cg & FQI_M62;
    cg >>= 62;
  }
  f->v[len - 1] = (int64_t)cf;
  g->v[len - 1] = (int64_t)cg;
}

/* r (in (−2q, q)) → [0, q), negated first when sign < 0. */
static inline void fqi_normalize(fqi_s62 *r, int64_t sign) {
  int64_t x[5];
  for (int i = 0; i < 5; i++) x[i] = r->v[i];
  int64_t add = x[4] >> 63;
  for (int i = 0; i < 5; i++) x[i] += FQI_Q.v[i] & add;
  const int64_t neg = sign >> 63;
  for (int i = 0; i < 5; i++) x[i] = (x[i] ^ neg) - neg;
  for (int i = 0; i < 4; i++) {
    x[i + 1] += x[i] >> 62;
    x[i] &= FQI_M62;
  }
  add = x[4] >> 63;
  for (int i = 0; i < 5; i++) x[i] += FQI_Q.v[i] & add;
  for (int i = 0; i < 4; i++) {
    x[i + 1] += x[i] >> 62;
    x[i] &= FQI_M62;
  }
  for (int i = 0; i < 5; i++) r->v[i] = x[i];
}

/* out = a^-1 as a plain integer for a plain a in (0, q) (4 LE limbs). */
static inline void fqi_inverse_plain(uint64_t out[4], const uint64_t a[4]) {
  fqi_s62 d = {{0, 0, 0, 0, 0}}, e = {{1, 0, 0, 0, 0}}, f = FQI_Q, g;
  g.v[0] = (int64_t)(a[0] & (uint64_t)FQI_M62);
  g.v[1] = (int64_t)(((a[0] >> 62) | (a[1] << 2)) & (uint64_t)FQI_M62);
  g.v[2] = (int64_t)(((a[1] >> 60) | (a[2] << 4)) & (uint64_t)FQI_M62);
  g.v[3] = (int64_t)(((a[2] >> 58) | (a[3] << 6)) & (uint64_t)FQI_M62);
  g.v[4] = (int64_t)(a[3] >> 56);
  int len = 5;
  int64_t eta = -1;
  for (;;) {
    fqi_t2x2 t;
    eta = fqi_divsteps_62_var(eta, (uint64_t)f.v[0], (uint64_t)g.v[0], &t);
    fqi_update_de(&d, &e, &t);
    fqi_update_fg(len, &f, &g, &t);
    if (g.v[0] == 0) {
      int64_t cond = 0;
      for (int j = 1; j < len; j++) cond |= g.v[j];
      if (cond == 0) break;
    }
    const int64_t fn = f.v[len - 1], gn = g.v[len - 1];
    int64_t cond = ((int64_t)len - 2) >> 63;
    cond |= fn ^ (fn >> 63);
    cond |= gn ^ (gn >> 63);
    if (cond == 0) {
      f.v[len - 2] |= (int64_t)((uint64_t)fn << 62);
      g.v[len - 2] |= (int64_t)((uint64_t)gn << 62);
      --len;
    }
  }
  fqi_normalize(&d, f.v[len - 1]);
  out[0] = (uint64_t)d.v[0] | ((uint64_t)d.v[1] << 62);
  out[1] = ((uint64_t)d.v[1] >> 2) | ((uint64_t)d.v[2] << 60);
  out[2] = ((uint64_t)d.v[2] >> 4) | ((uint64_t)d.v[3] << 58);
  out[3] = ((uint64_t)d.v[3] >> 6) | ((uint64_t)d.v[4] << 56);
}

/* R³ mod q: the Montgomery product of (xR)^-1 (plain) with it is x^-1·R. */
static const uint64_t FQI_R3[4] = {0xb1cd6dafda1530dfULL, 0x62f210e6a7283db6ULL, 0xef7f0b0c0ada0afbULL,
                                   0x20fd6e902d592544ULL};
#endif
