/* BN254 optimal ate pairing and the Groth16 verifier (pairing.h).
 *
 * Arithmetic: Fq in Montgomery form (R = 2^256, fully reduced), the ADX product where the CPU has
 * BMI2/ADX, else the portable one; the tower Fq2 → Fq6 → Fq12 of ffjavascript. The Miller loop
 * keeps each G2 point in homogeneous projective coordinates and multiplies its lines in as sparse
 * Fq12 elements (the D-type twist: coefficients at 1, w and v·w), all pairs of a product sharing one
 * loop (one squaring of f per step). Formulas: the doubling / addition steps with lines of arkworks'
 * `ark-ec` BN model (Costello–Lange–Naehrig, homogeneous); final exponentiation as wasmcurves'
 * bn128 (libff's alt_bn128): easy part f^((q^6 − 1)(q^2 + 1)), then the hard part with three
 * exponentiations by z and Frobenius maps, so results equal ffjavascript's pairing.
 * Constants (twist b', Frobenius coefficients): pairing_constants.h, generated. */
#include "pairing.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fq_ops.h"
#include "pairing_constants.h"

typedef struct {
  fq2_t c0, c1, c2;
} fq6_t;
typedef struct {
  fq6_t c0, c1;
} fq12_t;

/* ---- Fq2 = Fq[u]/(u² + 1): products, squaring, inverse in fq_ops.h ---- */

FR_INLINE void f2_dbl(fq2_t *r, const fq2_t *a) { fq2_add(r, a, a); }
/* r = a·(9 + u) = (9a0 − a1) + (a0 + 9a1)u */
FR_INLINE void f2_mul_xi(fq2_t *r, const fq2_t *a) {
  fq_t n0, n1;
  fq_add(&n0, &a->c0, &a->c0);
  fq_add(&n0, &n0, &n0);
  fq_add(&n0, &n0, &n0);
  fq_add(&n0, &n0, &a->c0);
  fq_add(&n1, &a->c1, &a->c1);
  fq_add(&n1, &n1, &n1);
  fq_add(&n1, &n1, &n1);
  fq_add(&n1, &n1, &a->c1);
  fq_t r0, r1;
  fq_sub(&r0, &n0, &a->c1);
  fq_add(&r1, &a->c0, &n1);
  r->c0 = r0;
  r->c1 = r1;
}
FR_INLINE void f2_conj(fq2_t *r, const fq2_t *a) {
  r->c0 = a->c0;
  fq_neg(&r->c1, &a->c1);
}
/* ---- Fq6 = Fq2[v]/(v³ − ξ), ξ = 9 + u ---- */

static void f6_add(fq6_t *r, const fq6_t *a, const fq6_t *b) {
  fq2_add(&r->c0, &a->c0, &b->c0);
  fq2_add(&r->c1, &a->c1, &b->c1);
  fq2_add(&r->c2, &a->c2, &b->c2);
}
static void f6_sub(fq6_t *r, const fq6_t *a, const fq6_t *b) {
  fq2_sub(&r->c0, &a->c0, &b->c0);
  fq2_sub(&r->c1, &a->c1, &b->c1);
  fq2_sub(&r->c2, &a->c2, &b->c2);
}
static void f6_neg(fq6_t *r, const fq6_t *a) {
  fq2_neg(&r->c0, &a->c0);
  fq2_neg(&r->c1, &a->c1);
  fq2_neg(&r->c2, &a->c2);
}
/* r = a·v */
static void f6_mul_v(fq6_t *r, const fq6_t *a) {
  fq2_t t;
  f2_mul_xi(&t, &a->c2);
  r->c2 = a->c1;
  r->c1 = a->c0;
  r->c0 = t;
}
static void f6_mul(fq6_t *r, const fq6_t *a, const fq6_t *b) {
  fq2_t t0, t1, t2, s0, s1, u, x;
  fq6_t o;
  fq2_mul(&t0, &a->c0, &b->c0);
  fq2_mul(&t1, &a->c1, &b->c1);
  fq2_mul(&t2, &a->c2, &b->c2);
  fq2_add(&s0, &a->c1, &a->c2); /* c0 = t0 + ξ((a1 + a2)(b1 + b2) − t1 − t2) */
  fq2_add(&s1, &b->c1, &b->c2);
  fq2_mul(&u, &s0, &s1);
  fq2_sub(&u, &u, &t1);
  fq2_sub(&u, &u, &t2);
  f2_mul_xi(&u, &u);
  fq2_add(&o.c0, &t0, &u);
  fq2_add(&s0, &a->c0, &a->c1); /* c1 = (a0 + a1)(b0 + b1) − t0 − t1 + ξ·t2 */
  fq2_add(&s1, &b->c0, &b->c1);
  fq2_mul(&u, &s0, &s1);
  fq2_sub(&u, &u, &t0);
  fq2_sub(&u, &u, &t1);
  f2_mul_xi(&x, &t2);
  fq2_add(&o.c1, &u, &x);
  fq2_add(&s0, &a->c0, &a->c2); /* c2 = (a0 + a2)(b0 + b2) − t0 − t2 + t1 */
  fq2_add(&s1, &b->c0, &b->c2);
  fq2_mul(&u, &s0, &s1);
  fq2_sub(&u, &u, &t0);
  fq2_sub(&u, &u, &t2);
  fq2_add(&o.c2, &u, &t1);
  *r = o;
}
/* r = a·(b0 + b1·v) */
static void f6_mul_by_01(fq6_t *r, const fq6_t *a, const fq2_t *b0, const fq2_t *b1) {
  fq2_t aa, bb, t, s0, s1;
  fq6_t o;
  fq2_mul(&aa, &a->c0, b0);
  fq2_mul(&bb, &a->c1, b1);
  fq2_mul(&t, &a->c2, b1); /* c0 = a0·b0 + ξ·a2·b1 */
  f2_mul_xi(&t, &t);
  fq2_add(&o.c0, &aa, &t);
  fq2_add(&s0, &a->c0, &a->c1); /* c1 = a0·b1 + a1·b0 */
  fq2_add(&s1, b0, b1);
  fq2_mul(&t, &s0, &s1);
  fq2_sub(&t, &t, &aa);
  fq2_sub(&o.c1, &t, &bb);
  fq2_mul(&t, &a->c2, b0); /* c2 = a1·b1 + a2·b0 */
  fq2_add(&o.c2, &bb, &t);
  *r = o;
}
static void f6_mul_f2(fq6_t *r, const fq6_t *a, const fq2_t *b) {
  fq2_mul(&r->c0, &a->c0, b);
  fq2_mul(&r->c1, &a->c1, b);
  fq2_mul(&r->c2, &a->c2, b);
}
static void f6_inv(fq6_t *r, const fq6_t *a) {
  fq2_t t0, t1, t2, u, d;
  fq2_sqr(&t0, &a->c0); /* t0 = a0² − ξ·a1·a2 */
  fq2_mul(&u, &a->c1, &a->c2);
  f2_mul_xi(&u, &u);
  fq2_sub(&t0, &t0, &u);
  fq2_sqr(&t1, &a->c2); /* t1 = ξ·a2² − a0·a1 */
  f2_mul_xi(&t1, &t1);
  fq2_mul(&u, &a->c0, &a->c1);
  fq2_sub(&t1, &t1, &u);
  fq2_sqr(&t2, &a->c1); /* t2 = a1² − a0·a2 */
  fq2_mul(&u, &a->c0, &a->c2);
  fq2_sub(&t2, &t2, &u);
  fq2_mul(&d, &a->c2, &t1); /* d = a0·t0 + ξ(a2·t1 + a1·t2) */
  fq2_mul(&u, &a->c1, &t2);
  fq2_add(&d, &d, &u);
  f2_mul_xi(&d, &d);
  fq2_mul(&u, &a->c0, &t0);
  fq2_add(&d, &d, &u);
  fq2_inv(&d, &d);
  fq2_mul(&r->c0, &t0, &d);
  fq2_mul(&r->c1, &t1, &d);
  fq2_mul(&r->c2, &t2, &d);
}

/* ---- Fq12 = Fq6[w]/(w² − v) ---- */

static void f12_set_one(fq12_t *r) {
  memset(r, 0, sizeof *r);
  r->c0.c0.c0 = FQ_ONE;
}
static int f12_is_one(const fq12_t *a) {
  fq12_t one;
  f12_set_one(&one);
  return memcmp(a, &one, sizeof one) == 0;
}
static void f12_mul(fq12_t *r, const fq12_t *a, const fq12_t *b) {
  fq6_t aa, bb, s0, s1, t;
  f6_mul(&aa, &a->c0, &b->c0);
  f6_mul(&bb, &a->c1, &b->c1);
  f6_add(&s0, &a->c0, &a->c1);
  f6_add(&s1, &b->c0, &b->c1);
  f6_mul(&t, &s0, &s1);
  f6_sub(&t, &t, &aa);
  f6_sub(&r->c1, &t, &bb);
  f6_mul_v(&bb, &bb);
  f6_add(&r->c0, &aa, &bb);
}
static void f12_sqr(fq12_t *r, const fq12_t *a) {
  fq6_t ab, s, t;
  f6_mul(&ab, &a->c0, &a->c1);
  f6_add(&s, &a->c0, &a->c1);
  f6_mul_v(&t, &a->c1);
  f6_add(&t, &a->c0, &t);
  f6_mul(&s, &s, &t); /* (a0 + a1)(a0 + v·a1) = a0² + v·a1² + (1 + v)·a0·a1 */
  f6_sub(&s, &s, &ab);
  f6_mul_v(&t, &ab);
  f6_sub(&r->c0, &s, &t);
  f6_add(&r->c1, &ab, &ab);
}
static void f12_conj(fq12_t *r, const fq12_t *a) {
  r->c0 = a->c0;
  f6_neg(&r->c1, &a->c1);
}
static void f12_inv(fq12_t *r, const fq12_t *a) {
  fq6_t t0, t1;
  f6_mul(&t0, &a->c0, &a->c0);
  f6_mul(&t1, &a->c1, &a->c1);
  f6_mul_v(&t1, &t1);
  f6_sub(&t0, &t0, &t1);
  f6_inv(&t0, &t0);
  f6_mul(&r->c0, &a->c0, &t0);
  f6_mul(&t1, &a->c1, &t0);
  f6_neg(&r->c1, &t1);
}
/* f = f·(c0 + (c3 + c4·v)·w), the sparse line of the D-type twist. */
static void f12_mul_by_034(fq12_t *f, const fq2_t *c0, const fq2_t *c3, const fq2_t *c4) {
  fq6_t a, b, e, s;
  fq2_t c03;
  f6_mul_f2(&a, &f->c0, c0);
  f6_mul_by_01(&b, &f->c1, c3, c4);
  fq2_add(&c03, c0, c3);
  f6_add(&s, &f->c0, &f->c1);
  f6_mul_by_01(&e, &s, &c03, c4);
  f6_add(&s, &a, &b);
  f6_sub(&f->c1, &e, &s);
  f6_mul_v(&b, &b);
  f6_add(&f->c0, &a, &b);
}
/* r = a^(q^n), n ∈ {1, 2, 3}: a = Σ g_k·w^k (g_k = c(k mod 2).c(k / 2)) ↦ Σ g_k^(q^n)·ξ^(k(q^n − 1)/6)·w^k. */
static void f12_frobenius(fq12_t *r, const fq12_t *a, int n) {
  const fq2_t *g = n == 1 ? PR_FROB1 : n == 2 ? PR_FROB2 : PR_FROB3;
  fq2_t *rc[6] = {&r->c0.c0, &r->c1.c0, &r->c0.c1, &r->c1.c1, &r->c0.c2, &r->c1.c2};
  const fq2_t *ac[6] = {&a->c0.c0, &a->c1.c0, &a->c0.c1, &a->c1.c1, &a->c0.c2, &a->c1.c2};
  for (int k = 0; k < 6; k++) {
    fq2_t t = *ac[k];
    if (n & 1) f2_conj(&t, &t);
    if (k)
      fq2_mul(rc[k], &t, &g[k]);
    else
      *rc[k] = t;
  }
}

#define PR_Z 4965661367192848881ULL /* BN254's parameter z (63 bits) */

/* r = a^z */
static void f12_exp_z(fq12_t *r, const fq12_t *a) {
  fq12_t acc = *a;
  for (int i = 61; i >= 0; i--) {
    f12_sqr(&acc, &acc);
    if ((PR_Z >> i) & 1) f12_mul(&acc, &acc, a);
  }
  *r = acc;
}

/* f^((q^12 − 1)/r · m) as wasmcurves' bn128_finalExponentiation (same m, so the same values). */
static void final_exponentiation(fq12_t *out, const fq12_t *f) {
  fq12_t a, b, c, d, e, ff, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u, x;
  /* easy part: x = (conj(f)·f^-1)^(q² + 1) */
  f12_conj(&a, f);
  f12_inv(&b, f);
  f12_mul(&c, &a, &b);
  f12_frobenius(&d, &c, 2);
  f12_mul(&x, &c, &d);
  /* hard part (comments: exponents of x) */
  f12_exp_z(&a, &x);
  f12_conj(&a, &a); /* a = x^-z */
  f12_sqr(&b, &a);      /* x^-2z */
  f12_sqr(&c, &b);      /* x^-4z */
  f12_mul(&d, &c, &b);  /* x^-6z */
  f12_exp_z(&e, &d);
  f12_conj(&e, &e);     /* x^6z² */
  f12_sqr(&ff, &e);     /* x^12z² */
  f12_exp_z(&g, &ff);
  f12_conj(&g, &g);     /* x^-12z³ */
  f12_conj(&h, &d);     /* x^6z */
  f12_conj(&i, &g);     /* x^12z³ */
  f12_mul(&j, &i, &e);  /* x^(12z³ + 6z²) */
  f12_mul(&k, &j, &h);  /* x^(12z³ + 6z² + 6z) */
  f12_mul(&l, &k, &b);  /* x^(12z³ + 6z² + 4z) */
  f12_mul(&m, &k, &e);  /* x^(12z³ + 12z² + 6z) */
  f12_mul(&n, &m, &x);  /* x^(12z³ + 12z² + 6z + 1) */
  f12_frobenius(&o, &l, 1);
  f12_mul(&p, &o, &n);
  f12_frobenius(&q, &k, 2);
  f12_mul(&r, &q, &p);
  f12_conj(&s, &x);
  f12_mul(&t, &s, &l);
  f12_frobenius(&u, &t, 3);
  f12_mul(out, &u, &r);
}

/* ---- G2 in homogeneous projective coordinates: the Miller loop's steps ---- */

typedef struct {
  fq2_t x, y, z;
} g2h_t;

/* R = 2R; the tangent line's coefficients (c0, c1, c2) for ell(). */
static void g2h_double(g2h_t *R, fq2_t *c0, fq2_t *c1, fq2_t *c2) {
  fq2_t a, b, c, e, f, g, h, i, j, e2, t;
  fq2_mul(&a, &R->x, &R->y);
  fq2_mul_fq(&a, &a, &PR_TWO_INV);
  fq2_sqr(&b, &R->y);
  fq2_sqr(&c, &R->z);
  f2_dbl(&t, &c);
  fq2_add(&t, &t, &c);
  fq2_mul(&e, &t, &PR_TWIST_B);
  f2_dbl(&f, &e);
  fq2_add(&f, &f, &e);
  fq2_add(&g, &b, &f);
  fq2_mul_fq(&g, &g, &PR_TWO_INV);
  fq2_add(&t, &R->y, &R->z);
  fq2_sqr(&h, &t);
  fq2_add(&t, &b, &c);
  fq2_sub(&h, &h, &t);
  fq2_sub(&i, &e, &b);
  fq2_sqr(&j, &R->x);
  fq2_sqr(&e2, &e);
  fq2_sub(&t, &b, &f);
  fq2_mul(&R->x, &a, &t);
  fq2_sqr(&t, &g);
  fq2_sub(&t, &t, &e2);
  fq2_sub(&t, &t, &e2);
  fq2_sub(&R->y, &t, &e2);
  fq2_mul(&R->z, &b, &h);
  fq2_neg(c0, &h);
  f2_dbl(c1, &j);
  fq2_add(c1, c1, &j);
  *c2 = i;
}

/* R = R + Q (Q affine); the chord's coefficients. */
static void g2h_add(g2h_t *R, const fq2_t *qx, const fq2_t *qy, fq2_t *c0, fq2_t *c1, fq2_t *c2) {
  fq2_t theta, lambda, c, d, e, f, g, h, j, t;
  fq2_mul(&t, qy, &R->z);
  fq2_sub(&theta, &R->y, &t);
  fq2_mul(&t, qx, &R->z);
  fq2_sub(&lambda, &R->x, &t);
  fq2_sqr(&c, &theta);
  fq2_sqr(&d, &lambda);
  fq2_mul(&e, &lambda, &d);
  fq2_mul(&f, &R->z, &c);
  fq2_mul(&g, &R->x, &d);
  fq2_add(&h, &e, &f);
  fq2_sub(&h, &h, &g);
  fq2_sub(&h, &h, &g);
  fq2_mul(&R->x, &lambda, &h);
  fq2_sub(&t, &g, &h);
  fq2_mul(&t, &theta, &t);
  fq2_mul(&R->y, &e, &R->y);
  fq2_sub(&R->y, &t, &R->y);
  fq2_mul(&R->z, &R->z, &e);
  fq2_mul(&j, &theta, qx);
  fq2_mul(&t, &lambda, qy);
  fq2_sub(&j, &j, &t);
  *c0 = lambda;
  fq2_neg(c1, &theta);
  *c2 = j;
}

/* Q ↦ ψ(π(ψ^-1(Q))): the q-power Frobenius on the twist. */
static void g2_frobenius(fq2_t *x, fq2_t *y, const fq2_t *qx, const fq2_t *qy) {
  fq2_t t;
  f2_conj(&t, qx);
  fq2_mul(x, &t, &PR_PSI_X);
  f2_conj(&t, qy);
  fq2_mul(y, &t, &PR_PSI_Y);
}

/* One pair of a product of pairings: P = (px, py) ∈ G1, Q = (qx, qy) ∈ G2, both finite. */
typedef struct {
  fq_t px, py;
  fq2_t qx, qy;
  g2h_t r;
} pr_pair;

static void ell(fq12_t *f, fq2_t *c0, fq2_t *c1, const fq2_t *c2, const pr_pair *p) {
  fq2_mul_fq(c0, c0, &p->py);
  fq2_mul_fq(c1, c1, &p->px);
  f12_mul_by_034(f, c0, c1, c2);
}

/* f = Π_k f_{6z+2, Q_k}(P_k) · l_{R, π(Q_k)}(P_k) · l_{R', −π²(Q_k)}(P_k) (before the final exponentiation). */
static void miller_loop(fq12_t *f, pr_pair *pairs, int n) {
  const u128 ate = ((u128)1 << 64) | 11347224129447541672ULL; /* 6z + 2 (65 bits) */
  fq2_t c0, c1, c2;
  f12_set_one(f);
  for (int k = 0; k < n; k++) {
    pairs[k].r.x = pairs[k].qx;
    pairs[k].r.y = pairs[k].qy;
    memset(&pairs[k].r.z, 0, sizeof(fq2_t));
    pairs[k].r.z.c0 = FQ_ONE;
  }
  for (int i = 64; i >= 1; i--) {
    if (i != 64) f12_sqr(f, f);
    for (int k = 0; k < n; k++) {
      g2h_double(&pairs[k].r, &c0, &c1, &c2);
      ell(f, &c0, &c1, &c2, &pairs[k]);
    }
    if ((ate >> (i - 1)) & 1)
      for (int k = 0; k < n; k++) {
        g2h_add(&pairs[k].r, &pairs[k].qx, &pairs[k].qy, &c0, &c1, &c2);
        ell(f, &c0, &c1, &c2, &pairs[k]);
      }
  }
  for (int k = 0; k < n; k++) {
    fq2_t x1, y1, x2, y2;
    g2_frobenius(&x1, &y1, &pairs[k].qx, &pairs[k].qy);
    g2_frobenius(&x2, &y2, &x1, &y1);
    fq2_neg(&y2, &y2);
    g2h_add(&pairs[k].r, &x1, &y1, &c0, &c1, &c2);
    ell(f, &c0, &c1, &c2, &pairs[k]);
    g2h_add(&pairs[k].r, &x2, &y2, &c0, &c1, &c2);
    ell(f, &c0, &c1, &c2, &pairs[k]);
  }
}

/* ---- input ---- */

static int pr_fail(char *err, size_t errlen, const char *what, const char *why) {
  if (err && errlen) snprintf(err, errlen, "%s: %s", what, why);
  return PAIRING_EARG;
}
/* pr_fail for the point parsers: −1. */
static int pr_bad(char *err, size_t errlen, const char *what, const char *why) {
  pr_fail(err, errlen, what, why);
  return -1;
}

/* A plain little-endian coordinate → Montgomery form; 0 when ≥ q. */
static int load_fq(fq_t *r, const uint8_t *p) {
  fq_t t;
  memcpy(t.v, p, 32);
  if (!lt_mod(t.v, FQ_Q_LIMBS)) return 0;
  fq_mul(r, &t, &PR_R2);
  return 1;
}

static int all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}

/* Parses a G1 point; returns 1 (finite), 0 (infinity) or −1 (err set). */
static int load_g1(fq_t *x, fq_t *y, const uint8_t p[64], const char *what, char *err, size_t errlen) {
  if (all_zero(p, 64)) return 0;
  if (!load_fq(x, p) || !load_fq(y, p + 32))
    return pr_bad(err, errlen, what, "coordinate is not below the base field modulus q");
  fq_t y2, x3;
  fq_mul(&y2, y, y);
  fq_mul(&x3, x, x);
  fq_mul(&x3, &x3, x);
  fq_add(&x3, &x3, &PR_THREE);
  if (memcmp(&x3, &y2, sizeof y2) != 0)
    return pr_bad(err, errlen, what, "point is not on the curve y^2 = x^3 + 3");
  return 1;
}

/* 1 when [r]Q = O for a finite Q on the twist (Q in G2): the chain of doublings and additions by the
 * bits of r reaches O only at its last addition ([r − 1]Q + Q); an earlier O (or a degenerate step)
 * means Q has an order below r. */
static int g2_in_subgroup(const fq2_t *qx, const fq2_t *qy) {
  g2h_t R = {*qx, *qy, {FQ_ONE, {{0, 0, 0, 0}}}};
  fq2_t c0, c1, c2;
  int top = 253;
  while (!((FR_Q_LIMBS[top >> 6] >> (top & 63)) & 1)) top--;
  for (int i = top - 1; i >= 0; i--) {
    g2h_double(&R, &c0, &c1, &c2);
    if (fq2_is_zero(&R.z)) return 0;
    if ((FR_Q_LIMBS[i >> 6] >> (i & 63)) & 1) {
      g2h_add(&R, qx, qy, &c0, &c1, &c2);
      if (fq2_is_zero(&R.z)) return i == 0;
    }
  }
  return 0;
}

/* Parses a G2 point; returns 1 (finite), 0 (infinity) or −1 (err set). */
static int load_g2(fq2_t *x, fq2_t *y, const uint8_t p[128], int check_subgroup, const char *what, char *err,
                   size_t errlen) {
  if (all_zero(p, 128)) return 0;
  if (!load_fq(&x->c0, p) || !load_fq(&x->c1, p + 32) || !load_fq(&y->c0, p + 64) || !load_fq(&y->c1, p + 96))
    return pr_bad(err, errlen, what, "coordinate is not below the base field modulus q");
  fq2_t y2, x3;
  fq2_sqr(&y2, y);
  fq2_sqr(&x3, x);
  fq2_mul(&x3, &x3, x);
  fq2_add(&x3, &x3, &PR_TWIST_B);
  if (memcmp(&x3, &y2, sizeof y2) != 0)
    return pr_bad(err, errlen, what, "point is not on the twist y^2 = x^3 + 3/(9+u)");
  if (check_subgroup && !g2_in_subgroup(x, y))
    return pr_bad(err, errlen, what, "point is not in the order-r subgroup G2");
  return 1;
}

static void fq12_store(uint8_t out[384], const fq12_t *f) {
  const fq_t *c = (const fq_t *)f;
  for (int k = 0; k < 12; k++) {
    fq_t t;
    fq_from_mont(&t, &c[k]);
    memcpy(out + 32 * k, t.v, 32);
  }
}

int bn254_pairing(const uint8_t p[64], const uint8_t q[128], uint8_t out[384], char *err, size_t errlen) {
  pr_pair pair;
  const int fp = load_g1(&pair.px, &pair.py, p, "G1 point", err, errlen);
  if (fp < 0) return PAIRING_EARG;
  const int fqq = load_g2(&pair.qx, &pair.qy, q, 1, "G2 point", err, errlen);
  if (fqq < 0) return PAIRING_EARG;
  fq12_t f, e;
  if (fp && fqq) {
    miller_loop(&f, &pair, 1);
    final_exponentiation(&e, &f);
  } else {
    f12_set_one(&e);
  }
  fq12_store(out, &e);
  return PAIRING_OK;
}

/* ---- G1 in Jacobian coordinates: vk_x ---- */

typedef struct {
  fq_t x, y, z;
} g1j_t;

static void g1j_double(g1j_t *r) {
  if (fq_is_zero(&r->z)) return;
  fq_t a, b, c, d, e, f, t;
  fq_mul(&a, &r->x, &r->x);
  fq_mul(&b, &r->y, &r->y);
  fq_mul(&c, &b, &b);
  fq_add(&t, &r->x, &b);
  fq_mul(&d, &t, &t);
  fq_sub(&d, &d, &a);
  fq_sub(&d, &d, &c);
  fq_add(&d, &d, &d);
  fq_add(&e, &a, &a);
  fq_add(&e, &e, &a);
  fq_mul(&f, &e, &e);
  fq_mul(&t, &r->y, &r->z); /* Z3 = 2·Y·Z (before Y changes) */
  fq_add(&r->z, &t, &t);
  fq_sub(&r->x, &f, &d);
  fq_sub(&r->x, &r->x, &d);
  fq_sub(&t, &d, &r->x);
  fq_mul(&t, &e, &t);
  fq_add(&c, &c, &c);
  fq_add(&c, &c, &c);
  fq_add(&c, &c, &c);
  fq_sub(&r->y, &t, &c);
}

/* r += (x, y) (affine, finite). */
static void g1j_add_affine(g1j_t *r, const fq_t *x, const fq_t *y) {
  if (fq_is_zero(&r->z)) {
    r->x = *x;
    r->y = *y;
    r->z = FQ_ONE;
    return;
  }
  fq_t z1z1, u2, s2, h, hh, i, j, rr, v, t;
  fq_mul(&z1z1, &r->z, &r->z);
  fq_mul(&u2, x, &z1z1);
  fq_mul(&s2, y, &r->z);
  fq_mul(&s2, &s2, &z1z1);
  fq_sub(&h, &u2, &r->x);
  fq_sub(&rr, &s2, &r->y);
  if (fq_is_zero(&h)) {
    if (fq_is_zero(&rr))
      g1j_double(r);
    else
      memset(&r->z, 0, sizeof r->z);
    return;
  }
  fq_add(&rr, &rr, &rr);
  fq_mul(&hh, &h, &h);
  fq_add(&i, &hh, &hh);
  fq_add(&i, &i, &i);
  fq_mul(&j, &h, &i);
  fq_mul(&v, &r->x, &i);
  fq_add(&t, &r->z, &h); /* Z3 = (Z1 + H)² − Z1Z1 − HH */
  fq_mul(&r->z, &t, &t);
  fq_sub(&r->z, &r->z, &z1z1);
  fq_sub(&r->z, &r->z, &hh);
  fq_mul(&r->x, &rr, &rr); /* X3 = r² − J − 2V */
  fq_sub(&r->x, &r->x, &j);
  fq_sub(&r->x, &r->x, &v);
  fq_sub(&r->x, &r->x, &v);
  fq_sub(&t, &v, &r->x); /* Y3 = r(V − X3) − 2·Y1·J */
  fq_mul(&t, &rr, &t);
  fq_mul(&j, &r->y, &j);
  fq_add(&j, &j, &j);
  fq_sub(&r->y, &t, &j);
}

size_t g16_vk_bytes(size_t n_public) { return 64 + 3 * 128 + (n_public + 1) * 64; }

int g16_verify(const uint8_t *vk, size_t vk_len, const uint8_t proof[256], const uint8_t *publics, size_t n_public, int check_b,
               int *valid, char *err, size_t errlen) {
  *valid = 0;
  if (n_public > G16_VERIFY_MAX_PUBLIC || vk_len != g16_vk_bytes(n_public)) {
    char why[160];
    if (n_public > G16_VERIFY_MAX_PUBLIC)
      snprintf(why, sizeof why, "%zu public signals, at most %u", n_public, (unsigned)G16_VERIFY_MAX_PUBLIC);
    else
      snprintf(why, sizeof why, "%zu bytes for %zu public signals, expected %zu", vk_len, n_public, g16_vk_bytes(n_public));
    return pr_fail(err, errlen, "verification key", why);
  }
  pr_pair pairs[4];
  int n = 0, f1, f2;
  /* e(−π_A, π_B) */
  f1 = load_g1(&pairs[n].px, &pairs[n].py, proof, "proof pi_a", err, errlen);
  if (f1 < 0) return PAIRING_EARG;
  f2 = load_g2(&pairs[n].qx, &pairs[n].qy, proof + 64, check_b, "proof pi_b", err, errlen);
  if (f2 < 0) return PAIRING_EARG;
  if (f1 && f2) {
    fq_neg(&pairs[n].py, &pairs[n].py);
    n++;
  }
  /* e(π_C, δ2); the key's α1, β2, γ2, δ2 must be finite (an all-zero key would accept anything) */
  f1 = load_g1(&pairs[n].px, &pairs[n].py, proof + 192, "proof pi_c", err, errlen);
  if (f1 < 0) return PAIRING_EARG;
  f2 = load_g2(&pairs[n].qx, &pairs[n].qy, vk + 64 + 2 * 128, 0, "verification key delta_2", err, errlen);
  if (f2 <= 0) return f2 ? PAIRING_EARG : pr_fail(err, errlen, "verification key delta_2", "point at infinity");
  if (f1) n++;
  /* e(α1, β2) */
  f1 = load_g1(&pairs[n].px, &pairs[n].py, vk, "verification key alpha_1", err, errlen);
  if (f1 <= 0) return f1 ? PAIRING_EARG : pr_fail(err, errlen, "verification key alpha_1", "point at infinity");
  f2 = load_g2(&pairs[n].qx, &pairs[n].qy, vk + 64, 0, "verification key beta_2", err, errlen);
  if (f2 <= 0) return f2 ? PAIRING_EARG : pr_fail(err, errlen, "verification key beta_2", "point at infinity");
  n++;
  /* e(vk_x, γ2), vk_x = IC_0 + Σ public_i·IC_i (one chain of doublings for all the signals) */
  f2 = load_g2(&pairs[n].qx, &pairs[n].qy, vk + 64 + 128, 0, "verification key gamma_2", err, errlen);
  if (f2 <= 0) return f2 ? PAIRING_EARG : pr_fail(err, errlen, "verification key gamma_2", "point at infinity");
  const uint8_t *ic = vk + 64 + 3 * 128;
  const size_t m = n_public + 1;
  uint8_t *mem = malloc(m * (2 * sizeof(fq_t) + sizeof(int) + 4 * sizeof(uint64_t)));
  if (!mem) return pr_fail(err, errlen, "verification", "out of memory");
  fq_t *icx = (fq_t *)mem, *icy = icx + m;
  uint64_t(*sc)[4] = (uint64_t(*)[4])(icy + m);
  int *icf = (int *)(sc + m);
  int rc = PAIRING_OK;
  for (size_t i = 0; i < m && rc == PAIRING_OK; i++) {
    char what[48];
    snprintf(what, sizeof what, "verification key IC[%zu]", i);
    icf[i] = load_g1(&icx[i], &icy[i], ic + 64 * i, what, err, errlen);
    if (icf[i] < 0) rc = PAIRING_EARG;
  }
  for (size_t i = 0; i < n_public && rc == PAIRING_OK; i++) {
    memcpy(sc[i], publics + 32 * i, 32);
    if (!lt_mod(sc[i], FR_Q_LIMBS)) {
      char what[48];
      snprintf(what, sizeof what, "public signal %zu", i);
      rc = pr_fail(err, errlen, what, "not below the scalar field modulus r");
    }
  }
  if (rc != PAIRING_OK) {
    free(mem);
    return rc;
  }
  g1j_t acc;
  memset(&acc, 0, sizeof acc);
  for (int b = 253; b >= 0; b--) {
    g1j_double(&acc);
    for (size_t i = 0; i < n_public; i++)
      if (icf[i + 1] && ((sc[i][b >> 6] >> (b & 63)) & 1)) g1j_add_affine(&acc, &icx[i + 1], &icy[i + 1]);
  }
  if (icf[0]) g1j_add_affine(&acc, &icx[0], &icy[0]);
  free(mem);
  if (!fq_is_zero(&acc.z)) {
    fq_t zi, zi2;
    fq_inv(&zi, &acc.z);
    fq_mul(&zi2, &zi, &zi);
    fq_mul(&pairs[n].px, &acc.x, &zi2);
    fq_mul(&zi2, &zi2, &zi);
    fq_mul(&pairs[n].py, &acc.y, &zi2);
    n++;
  }
  fq12_t f, e;
  miller_loop(&f, pairs, n);
  final_exponentiation(&e, &f);
  *valid = f12_is_one(&e);
  return PAIRING_OK;
}
