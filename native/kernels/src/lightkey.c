/* Light Protocol proving keys (gnark v0.8.0) and gnark's Groth16 prover: see lightkey.h.
 * Facts from /work/shared/spec/light-keys.md (§ numbers below); no code of gnark's is used. */
#include "lightkey.h"

#include <pthread.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "fft.h"
#include "fft_ifma.h"
#include "fq_ops.h"
#include "fr.h"
#include "msm.h"
#include "pairing.h"
#include "scratch.h"

static size_t lk_kz_split(size_t n_kz, size_t n_a, size_t n_b);

static void set_err(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || !errlen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

static const uint64_t PLAIN_ONE[4] = {1, 0, 0, 0};

/* The Fr product of the hot loops (solver, h): BMI2/ADX asm where the CPU has it, else portable C. */
static void fr_mul_c_fn(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) { fr_mul_c(r, a, b); }
#ifdef FR_HAVE_ADX
static void fr_mul_adx_fn(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) { fr_mul_adx(r, a, b); }
#endif
static void (*frmul)(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) = fr_mul_c_fn;
__attribute__((constructor)) static void lk_pick_mul(void) {
#ifdef FR_HAVE_ADX
  if (fr_cpu_has_adx()) frmul = fr_mul_adx_fn;
#endif
}

/* ---------------------------------------------------------------------------------------------
 * Fq / Fq2 constants and square roots (point decompression, §2.1) */

static fq_t FQ_R2;                   /* R² mod q: plain → Montgomery */
static fq2_t TWIST_B;                /* 3/(9+u), Montgomery */
static fq_t FQ_THREE;                /* 3, Montgomery */
static uint64_t E_SQRT[4];           /* (q+1)/4 */
static fq_t FQ_HALF;                 /* 1/2, Montgomery */
static uint64_t E_QHALF[4];          /* (q−1)/2 */
static pthread_once_t lk_once = PTHREAD_ONCE_INIT;

static void shr(uint64_t r[4], const uint64_t a[4], unsigned k) {
  for (int i = 0; i < 4; i++) r[i] = (a[i] >> k) | (i < 3 && k ? a[i + 1] << (64 - k) : 0);
}

static void fq_to_mont(fq_t *r, const uint64_t plain[4]) { fq_mul(r, (const fq_t *)(const void *)plain, &FQ_R2); }

static void lk_init(void) {
  fq_t x = FQ_ONE;
  for (int i = 0; i < 256; i++) fq_add(&x, &x, &x);
  FQ_R2 = x;
  const uint64_t three[4] = {3, 0, 0, 0}, nine[4] = {9, 0, 0, 0};
  fq_to_mont(&FQ_THREE, three);
  fq2_t t;
  fq_to_mont(&t.c0, nine);
  t.c1 = FQ_ONE;
  fq2_inv(&t, &t);
  fq2_mul_fq(&TWIST_B, &t, &FQ_THREE);
  uint64_t a[4];
  memcpy(a, FQ_Q_LIMBS, 32);
  a[0] += 1;
  shr(E_SQRT, a, 2);
  fq_t two;
  fq_add(&two, &FQ_ONE, &FQ_ONE);
  fq_inv(&FQ_HALF, &two);
  memcpy(a, FQ_Q_LIMBS, 32);
  a[0] -= 1;
  shr(E_QHALF, a, 1);
}

/* a^e for a fixed 256-bit e: 4-bit windows from the top (14 products for the table, 252 squarings,
 * at most 64 products; square and multiply took 256 and ~128). */
static void fq_pow(fq_t *r, const fq_t *a, const uint64_t e[4]) {
  fq_t t[16];
  t[1] = *a;
  for (int i = 2; i < 16; i++) fq_mul(&t[i], &t[i - 1], a);
  fq_t acc = FQ_ONE;
  int started = 0;
  for (int w = 63; w >= 0; w--) {
    if (started)
      for (int k = 0; k < 4; k++) fq_mul(&acc, &acc, &acc);
    const unsigned d = (unsigned)(e[w >> 4] >> ((w & 15) * 4)) & 15u;
    if (!d) continue;
    if (started) fq_mul(&acc, &acc, &t[d]);
    else {
      acc = t[d];
      started = 1;
    }
  }
  *r = acc;
}

static int cmp256(const uint64_t a[4], const uint64_t b[4]) {
  for (int i = 3; i >= 0; i--) {
    if (a[i] != b[i]) return a[i] > b[i] ? 1 : -1;
  }
  return 0;
}
/* gnark's LexicographicallyLargest for Fq: plain value > (q−1)/2. */
static int fq_largest(const fq_t *y) {
  fq_t p;
  fq_from_mont(&p, y);
  return cmp256(p.v, E_QHALF) > 0;
}
static int fq2_largest(const fq2_t *y) { return fq_is_zero(&y->c1) ? fq_largest(&y->c0) : fq_largest(&y->c1); }

/* y with y² = a, 0 when a is not a square. */
static int fq_sqrt(fq_t *y, const fq_t *a) {
  fq_t s, s2;
  fq_pow(&s, a, E_SQRT);
  fq_mul(&s2, &s, &s);
  if (memcmp(&s2, a, 32) != 0) return 0;
  *y = s;
  return 1;
}
/* Fq2 square root for q ≡ 3 mod 4 through the norm: for a = a0 + a1·u with a1 ≠ 0, s = √(a0² + a1²)
 * in Fq, x0 = √((a0 + s)/2) or else √((a0 − s)/2), x1 = a1/(2·x0); with a1 = 0, √a0 or √(−a0)·u.
 * Two or three Fq square roots and an inversion (Adj–Rodríguez-Henríquez's algorithm 9 took two Fq2
 * exponentiations, about twice the work). Any root will do: the caller picks the sign. */
static int fq2_sqrt(fq2_t *y, const fq2_t *a) {
  if (fq2_is_zero(a)) {
    memset(y, 0, sizeof *y);
    return 1;
  }
  fq2_t x, chk;
  if (fq_is_zero(&a->c1)) {
    fq_t na;
    memset(&x, 0, sizeof x);
    if (!fq_sqrt(&x.c0, &a->c0)) {
      fq_neg(&na, &a->c0);
      if (!fq_sqrt(&x.c1, &na)) return 0;
    }
  } else {
    fq_t n, t, s, d, inv;
    fq_mul(&n, &a->c0, &a->c0);
    fq_mul(&t, &a->c1, &a->c1);
    fq_add(&n, &n, &t);
    if (!fq_sqrt(&s, &n)) return 0; /* the norm of a square is a square */
    fq_add(&d, &a->c0, &s);
    fq_mul(&d, &d, &FQ_HALF);
    if (!fq_sqrt(&x.c0, &d)) {
      fq_sub(&d, &a->c0, &s);
      fq_mul(&d, &d, &FQ_HALF);
      if (!fq_sqrt(&x.c0, &d)) return 0;
    }
    /* x0 ≠ 0 here: (a0 ± s)/2 = 0 would make a1² = s² − a0² = 0 */
    fq_add(&t, &x.c0, &x.c0);
    fq_inv(&inv, &t);
    fq_mul(&x.c1, &a->c1, &inv);
  }
  fq2_sqr(&chk, &x);
  if (memcmp(&chk, a, sizeof chk) != 0) return 0;
  *y = x;
  return 1;
}

/* ---------------------------------------------------------------------------------------------
 * Reader over the key file (§2.1: BE integers, gnark point encodings) */

typedef struct {
  const uint8_t *p;
  size_t len, off;
  char *err;
  size_t errlen;
  int failed;
} rd_t;

static int need(rd_t *r, size_t n, const char *what) {
  if (r->failed) return 0;
  if (r->len - r->off < n) {
    set_err(r->err, r->errlen, "truncated at byte %zu reading %s", r->off, what);
    r->failed = 1;
    return 0;
  }
  return 1;
}
static uint64_t be64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | p[i];
  return v;
}
static uint32_t rd_u32(rd_t *r, const char *what) {
  if (!need(r, 4, what)) return 0;
  const uint8_t *p = r->p + r->off;
  r->off += 4;
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t rd_u64(rd_t *r, const char *what) {
  if (!need(r, 8, what)) return 0;
  const uint64_t v = be64(r->p + r->off);
  r->off += 8;
  return v;
}
/* 32 bytes BE → plain limbs; mask clears the two flag bits. */
static void be_limbs(uint64_t v[4], const uint8_t *p, int mask) {
  uint8_t b[32];
  memcpy(b, p, 32);
  if (mask) b[0] &= 0x3f;
  v[3] = be64(b);
  v[2] = be64(b + 8);
  v[1] = be64(b + 16);
  v[0] = be64(b + 24);
}
/* Fr element (canonical BE) → Montgomery limbs. */
static int rd_fr(rd_t *r, uint64_t out[4], const char *what) {
  if (!need(r, 32, what)) return 0;
  uint64_t v[4];
  be_limbs(v, r->p + r->off, 0);
  if (!lt_mod(v, FR_Q_LIMBS)) {
    set_err(r->err, r->errlen, "%s at byte %zu is not < r", what, r->off);
    r->failed = 1;
    return 0;
  }
  r->off += 32;
  fr_mul_c(out, v, FR_R2_LIMBS);
  return 1;
}
static int fq_plain(rd_t *r, fq_t *out, const uint8_t *p, int mask, const char *what) {
  uint64_t v[4];
  be_limbs(v, p, mask);
  if (!lt_mod(v, FQ_Q_LIMBS)) {
    set_err(r->err, r->errlen, "%s: coordinate at byte %zu is not < q", what, (size_t)(p - r->p));
    r->failed = 1;
    return 0;
  }
  fq_to_mont(out, v);
  return 1;
}

/* G1 point → 64 bytes affine Montgomery (all zero = infinity). */
static int rd_g1(rd_t *r, uint8_t out[64], const char *what) {
  if (!need(r, 32, what)) return 0;
  const uint8_t *p = r->p + r->off;
  const unsigned flag = p[0] & 0xc0;
  fq_t x, y;
  if (flag == 0x40) { /* compressed infinity */
    memset(out, 0, 64);
    r->off += 32;
    return 1;
  }
  if (flag == 0x00) { /* uncompressed */
    if (!need(r, 64, what)) return 0;
    int zero = 1;
    for (int i = 0; i < 64; i++) zero &= p[i] == 0;
    r->off += 64;
    if (zero) {
      memset(out, 0, 64);
      return 1;
    }
    if (!fq_plain(r, &x, p, 0, what) || !fq_plain(r, &y, p + 32, 0, what)) return 0;
    fq_t y2, rhs;
    fq_mul(&y2, &y, &y);
    fq_mul(&rhs, &x, &x);
    fq_mul(&rhs, &rhs, &x);
    fq_add(&rhs, &rhs, &FQ_THREE);
    if (memcmp(&y2, &rhs, 32) != 0) {
      set_err(r->err, r->errlen, "%s at byte %zu is not on the curve", what, (size_t)(p - r->p));
      r->failed = 1;
      return 0;
    }
  } else {
    if (!fq_plain(r, &x, p, 1, what)) return 0;
    fq_t rhs;
    fq_mul(&rhs, &x, &x);
    fq_mul(&rhs, &rhs, &x);
    fq_add(&rhs, &rhs, &FQ_THREE);
    if (!fq_sqrt(&y, &rhs)) {
      set_err(r->err, r->errlen, "%s at byte %zu: x has no point on the curve", what, r->off);
      r->failed = 1;
      return 0;
    }
    if (fq_largest(&y) != (flag == 0xc0)) fq_neg(&y, &y);
    r->off += 32;
  }
  memcpy(out, &x, 32);
  memcpy(out + 32, &y, 32);
  return 1;
}

/* G2 point (X.A1 | X.A0 [| Y.A1 | Y.A0]) → 128 bytes x.c0 x.c1 y.c0 y.c1 Montgomery. */
static int rd_g2(rd_t *r, uint8_t out[128], const char *what) {
  if (!need(r, 64, what)) return 0;
  const uint8_t *p = r->p + r->off;
  const unsigned flag = p[0] & 0xc0;
  fq2_t x, y;
  if (flag == 0x40) {
    memset(out, 0, 128);
    r->off += 64;
    return 1;
  }
  if (flag == 0x00) {
    if (!need(r, 128, what)) return 0;
    int zero = 1;
    for (int i = 0; i < 128; i++) zero &= p[i] == 0;
    r->off += 128;
    if (zero) {
      memset(out, 0, 128);
      return 1;
    }
    if (!fq_plain(r, &x.c1, p, 0, what) || !fq_plain(r, &x.c0, p + 32, 0, what) || !fq_plain(r, &y.c1, p + 64, 0, what) ||
        !fq_plain(r, &y.c0, p + 96, 0, what))
      return 0;
    fq2_t y2, rhs;
    fq2_sqr(&y2, &y);
    fq2_sqr(&rhs, &x);
    fq2_mul(&rhs, &rhs, &x);
    fq2_add(&rhs, &rhs, &TWIST_B);
    if (memcmp(&y2, &rhs, sizeof rhs) != 0) {
      set_err(r->err, r->errlen, "%s at byte %zu is not on the twist", what, (size_t)(p - r->p));
      r->failed = 1;
      return 0;
    }
  } else {
    if (!fq_plain(r, &x.c1, p, 1, what) || !fq_plain(r, &x.c0, p + 32, 0, what)) return 0;
    fq2_t rhs;
    fq2_sqr(&rhs, &x);
    fq2_mul(&rhs, &rhs, &x);
    fq2_add(&rhs, &rhs, &TWIST_B);
    if (!fq2_sqrt(&y, &rhs)) {
      set_err(r->err, r->errlen, "%s at byte %zu: x has no point on the twist", what, r->off);
      r->failed = 1;
      return 0;
    }
    if (fq2_largest(&y) != (flag == 0xc0)) fq2_neg(&y, &y);
    r->off += 64;
  }
  memcpy(out, &x, 64);
  memcpy(out + 64, &y, 64);
  return 1;
}

/* Montgomery affine point bytes → plain (pairing.h's layout), coords = 2 (G1) or 4 (G2). */
static void to_plain(uint8_t *dst, const uint8_t *src, unsigned coords) {
  int zero = 1;
  for (unsigned i = 0; i < coords * 32; i++) zero &= src[i] == 0;
  if (zero) {
    memset(dst, 0, coords * 32);
    return;
  }
  for (unsigned j = 0; j < coords; j++) {
    fq_t v, p;
    memcpy(&v, src + 32 * j, 32);
    fq_from_mont(&p, &v);
    memcpy(dst + 32 * j, p.v, 32);
  }
}

static unsigned bitrev(unsigned x, unsigned bits) {
  unsigned r = 0;
  for (unsigned i = 0; i < bits; i++) r |= ((x >> i) & 1) << (bits - 1 - i);
  return r;
}

#define PTS_HDR 64 /* u32[16] */

int lk_decode(const uint8_t *key, size_t len, lk_decoded *out, char *err, size_t errlen) {
  pthread_once(&lk_once, lk_init);
  memset(out, 0, sizeof *out);
  rd_t r = {key, len, 0, err, errlen, 0};
  for (int i = 0; i < 4; i++) out->h[i] = rd_u32(&r, "header");
  /* §2.2 domain */
  const uint64_t n = rd_u64(&r, "domain cardinality");
  uint64_t card_inv[4], gen[4], gen_inv[4], mg[4], mg_inv[4];
  rd_fr(&r, card_inv, "domain CardinalityInv");
  rd_fr(&r, gen, "domain Generator");
  rd_fr(&r, gen_inv, "domain GeneratorInv");
  rd_fr(&r, mg, "domain FrMultiplicativeGen");
  rd_fr(&r, mg_inv, "domain FrMultiplicativeGenInv");
  if (r.failed) return LK_EKEY;
  if (n < 2 || n > (1u << 28) || (n & (n - 1))) {
    set_err(err, errlen, "domain cardinality %llu is not a power of two in [2, 2^28] (not a gnark BN254 proving key)",
            (unsigned long long)n);
    return LK_EKEY;
  }
  unsigned logn = 0;
  while ((1ull << logn) < n) logn++;
  uint8_t g1s[3][64], g2s[2][128];
  rd_g1(&r, g1s[0], "pk G1.Alpha");
  rd_g1(&r, g1s[1], "pk G1.Beta");
  rd_g1(&r, g1s[2], "pk G1.Delta");
  if (r.failed) return LK_EKEY;
  /* the arrays: read lengths first into temporary buffers */
  uint8_t *arr[4] = {0};
  uint32_t cnt[4] = {0};
  const char *names[4] = {"pk G1.A", "pk G1.B", "pk G1.Z", "pk G1.K"};
  int rc = LK_EKEY;
  uint8_t *b2 = NULL, *infA = NULL, *infB = NULL, *pts = NULL, *vk = NULL;
  for (int a = 0; a < 4; a++) {
    cnt[a] = rd_u32(&r, names[a]);
    if (r.failed) goto fail;
    if ((size_t)cnt[a] * 32 > r.len - r.off) {
      set_err(err, errlen, "%s: %u points do not fit in the %zu bytes left (truncated or foreign file)", names[a], cnt[a], r.len - r.off);
      goto fail;
    }
    arr[a] = malloc((size_t)cnt[a] * 64 + 64);
    if (!arr[a]) {
      rc = LK_ENOMEM;
      goto fail;
    }
    for (uint32_t i = 0; i < cnt[a]; i++)
      if (!rd_g1(&r, arr[a] + (size_t)i * 64, names[a])) goto fail;
  }
  rd_g2(&r, g2s[0], "pk G2.Beta");
  rd_g2(&r, g2s[1], "pk G2.Delta");
  const uint32_t nb2 = rd_u32(&r, "pk G2.B");
  if (r.failed) goto fail;
  if (nb2 != cnt[1]) {
    set_err(err, errlen, "pk G2.B has %u points, G1.B %u", nb2, cnt[1]);
    goto fail;
  }
  b2 = malloc((size_t)nb2 * 128 + 128);
  if (!b2) {
    rc = LK_ENOMEM;
    goto fail;
  }
  for (uint32_t i = 0; i < nb2; i++)
    if (!rd_g2(&r, b2 + (size_t)i * 128, "pk G2.B")) goto fail;
  const uint64_t nb_wires = rd_u64(&r, "pk nbWires"), n_inf_a = rd_u64(&r, "pk NbInfinityA"), n_inf_b = rd_u64(&r, "pk NbInfinityB");
  if (r.failed) goto fail;
  if (nb_wires > r.len - r.off || 2 * nb_wires > r.len - r.off) {
    set_err(err, errlen, "pk: %llu wires do not fit in the file", (unsigned long long)nb_wires);
    goto fail;
  }
  infA = malloc(nb_wires + 1);
  infB = malloc(nb_wires + 1);
  if (!infA || !infB) {
    rc = LK_ENOMEM;
    goto fail;
  }
  memcpy(infA, r.p + r.off, nb_wires);
  memcpy(infB, r.p + r.off + nb_wires, nb_wires);
  r.off += 2 * nb_wires;
  uint64_t za = 0, zb = 0;
  for (uint64_t i = 0; i < nb_wires; i++) {
    if (infA[i] > 1 || infB[i] > 1) {
      set_err(err, errlen, "pk: infinity bitmap entry %llu is not 0/1", (unsigned long long)i);
      goto fail;
    }
    za += !infA[i];
    zb += !infB[i];
  }
  if (za != cnt[0] || zb != cnt[1] || nb_wires - za != n_inf_a || nb_wires - zb != n_inf_b || cnt[2] != n ||
      cnt[3] >= nb_wires) {
    set_err(err, errlen,
            "pk: inconsistent counts (|A| %u, finite A wires %llu, |B| %u, finite B wires %llu, |Z| %u, n %llu, |K| %u, wires %llu)",
            cnt[0], (unsigned long long)za, cnt[1], (unsigned long long)zb, cnt[2], (unsigned long long)n, cnt[3],
            (unsigned long long)nb_wires);
    goto fail;
  }
  /* §2.3 vk */
  uint8_t va1[64], vb1[64], vb2[128], vg2[128], vd1[64], vd2[128];
  rd_g1(&r, va1, "vk α1");
  rd_g1(&r, vb1, "vk β1");
  rd_g2(&r, vb2, "vk β2");
  rd_g2(&r, vg2, "vk γ2");
  rd_g1(&r, vd1, "vk δ1");
  rd_g2(&r, vd2, "vk δ2");
  const uint32_t nic = rd_u32(&r, "vk K");
  if (r.failed) goto fail;
  if (nic < 1 || (size_t)nic * 32 > r.len - r.off || cnt[3] + nic != nb_wires) {
    set_err(err, errlen, "vk: %u IC points for %llu wires and |pk.K| %u", nic, (unsigned long long)nb_wires, cnt[3]);
    goto fail;
  }
  if (memcmp(va1, g1s[0], 64) || memcmp(vb2, g2s[0], 128) || memcmp(vd2, g2s[1], 128) || memcmp(vd1, g1s[2], 64)) {
    set_err(err, errlen, "vk α/β/δ differ from the proving key's");
    goto fail;
  }
  const size_t vk_len = 64 + 3 * 128 + (size_t)nic * 64;
  vk = malloc(vk_len);
  if (!vk) {
    rc = LK_ENOMEM;
    goto fail;
  }
  to_plain(vk, va1, 2);
  to_plain(vk + 64, vb2, 4);
  to_plain(vk + 192, vg2, 4);
  to_plain(vk + 320, vd2, 4);
  for (uint32_t i = 0; i < nic; i++) {
    uint8_t ic[64];
    if (!rd_g1(&r, ic, "vk K")) goto fail;
    to_plain(vk + 448 + (size_t)i * 64, ic, 2);
  }
  /* points blob */
  const size_t pts_len = PTS_HDR + 3 * 32 + 3 * 64 + 2 * 128 + ((size_t)cnt[0] + cnt[1] + cnt[3] + n) * 64 + (size_t)nb2 * 128 +
                         ((2 * nb_wires + 7) & ~(size_t)7);
  pts = calloc(1, pts_len);
  if (!pts) {
    rc = LK_ENOMEM;
    goto fail;
  }
  uint32_t hdr[16] = {1, (uint32_t)n, (uint32_t)nb_wires, cnt[0], cnt[1], cnt[3], nic, 0};
  memcpy(pts, hdr, sizeof hdr);
  uint8_t *o = pts + PTS_HDR;
  memcpy(o, gen, 32), o += 32;
  memcpy(o, gen_inv, 32), o += 32;
  memcpy(o, card_inv, 32), o += 32;
  memcpy(o, g1s, 3 * 64), o += 3 * 64;
  memcpy(o, g2s, 2 * 128), o += 2 * 128;
  memcpy(o, arr[0], (size_t)cnt[0] * 64), o += (size_t)cnt[0] * 64;
  memcpy(o, arr[1], (size_t)cnt[1] * 64), o += (size_t)cnt[1] * 64;
  memcpy(o, arr[3], (size_t)cnt[3] * 64), o += (size_t)cnt[3] * 64;
  for (uint32_t j = 0; j < n; j++) memcpy(o + (size_t)bitrev(j, logn) * 64, arr[2] + (size_t)j * 64, 64);
  o += n * 64;
  memcpy(o, b2, (size_t)nb2 * 128), o += (size_t)nb2 * 128;
  memcpy(o, infA, nb_wires), o += nb_wires;
  memcpy(o, infB, nb_wires);
  out->points = pts;
  out->points_len = pts_len;
  out->vk = vk;
  out->vk_len = vk_len;
  out->r1cs_offset = r.off;
  rc = LK_OK;
  pts = vk = NULL;
fail:
  for (int a = 0; a < 4; a++) free(arr[a]);
  free(b2);
  free(infA);
  free(infB);
  free(pts);
  free(vk);
  return rc;
}

/* ---------------------------------------------------------------------------------------------
 * Resident key */

typedef struct {
  uint32_t id, n_out, n_in;
  const uint32_t *out;
  const uint32_t **in; /* n_in pointers to {nT, (cid, vid)×nT} */
} lk_hint;

struct lk_key {
  size_t file_len, bytes;
  uint32_t n, logn, nb_wires, nb_pub, nb_sec, nb_int, m, n_a, n_b, n_k, n_ic, n_coef, n_hints;
  fe omega, omega_inv, n_inv, den_inv;
  /* the coset tables (Montgomery), read by the eight-lane chain (fft_ifma.h fr8_coset, as groth16.c's)
   * and the scalar one alike: shift_br[bitrev(i)] = (1/n)·5^i, unshift_br[bitrev(i)] = (1/n)·5^-i,
   * br4[i] = 4·bitrev(i), tw / tw_inv = ω^j, ω^-j for j < n/2 */
  fe *shift_br, *unshift_br, *tw, *tw_inv;
  uint64_t *br4;
  /* how many of KZ's bases the first MSM thread keeps without tables (lk_kz_split, once per key) */
  size_t kz_keep;
  uint8_t *a_ext, *b1_ext, *b2_ext, *kz_ext; /* A‖α1‖δ1, B1‖β1‖δ1, B2‖β2‖δ2, K‖Z‖δ1 */
  uint8_t alpha1[64];
  uint32_t *a_idx, *b_idx;
  const uint8_t *vk;
  size_t vk_len;
  fe *coef, *coef_inv;
  const uint32_t **cons; /* m pointers to {nL, nR, nO, terms} */
  lk_hint *hints;
  int32_t *hint_of; /* wire → hint index or −1 */
  /* the two-thread solve (lk_solve_split): constraint indices, in order, of the independent parts the
   * first thread solves (solve_order[0 .. solve_split)) and of those the second solves (the rest);
   * solve_split 0 = one thread (one part, or parts too unequal) */
  uint32_t *solve_order, solve_split;
  uint8_t *vk_copy, *r1cs_copy;
  /* fixed-base tables (lk_tables): A, B1, B2, KZ; NULL = plain MSM */
  msm_table *t[4];
  int tables_state; /* 0 none tried, 1 built/loaded, 2 over budget */
  char table_note[256];
  pthread_mutex_t mu;
  /* process-wide sharing: threads loading the same resident file share one key */
  uint64_t hash;
  unsigned refs;
  struct lk_key *next;
  /* the file it was loaded from (lk_load_path): device, inode, size, mtime; has_ident 0 = from bytes */
  int has_ident;
  uint64_t dev, ino;
  int64_t mtime_ns;
};

static int lk_solve_split(lk_key *k);

static pthread_mutex_t lk_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static lk_key *lk_reg;

static void lk_destroy(lk_key *k) {
  if (!k) return;
  for (int i = 0; i < 4; i++) msm_table_free(k->t[i]);
  free(k->vk_copy);
  free(k->r1cs_copy);
  free(k->shift_br);
  free(k->tw);
  free(k->tw_inv);
  free(k->unshift_br);
  free(k->br4);
  free(k->a_ext);
  free(k->b1_ext);
  free(k->b2_ext);
  free(k->kz_ext);
  free(k->a_idx);
  free(k->b_idx);
  free(k->coef_inv);
  free(k->cons);
  if (k->hints)
    for (uint32_t i = 0; i < k->n_hints; i++) free(k->hints[i].in);
  free(k->hints);
  free(k->hint_of);
  free(k->solve_order);
  free(k);
}

void lk_free(lk_key *k) {
  if (!k) return;
  pthread_mutex_lock(&lk_reg_mu);
  if (k->refs > 1) {
    k->refs--;
    pthread_mutex_unlock(&lk_reg_mu);
    return;
  }
  for (lk_key **pp = &lk_reg; *pp; pp = &(*pp)->next)
    if (*pp == k) {
      *pp = k->next;
      break;
    }
  pthread_mutex_unlock(&lk_reg_mu);
  lk_destroy(k);
}
size_t lk_key_bytes(const lk_key *k) { return k->bytes; }
void lk_solve_threads(const lk_key *k, uint32_t *first, uint32_t *second) {
  *first = k->solve_split;
  *second = k->m - k->solve_split;
}

void lk_info(const lk_key *k, uint32_t *nb_wires, uint32_t *nb_pub, uint32_t *nb_sec, uint32_t *m, uint32_t *n) {
  *nb_wires = k->nb_wires;
  *nb_pub = k->nb_pub;
  *nb_sec = k->nb_sec;
  *m = k->m;
  *n = k->n;
}
const uint8_t *lk_vk(const lk_key *k, size_t *len) {
  *len = k->vk_len;
  return k->vk;
}

static void fr_inv_m(uint64_t r[4], const uint64_t a[4]) {
  const uint64_t e[4] = {Q0 - 2, Q1, Q2, Q3};
  fe acc, base;
  memcpy(acc, FR_ONE_LIMBS, 32);
  memcpy(base, a, 32);
  for (int i = 0; i < 256; i++) {
    if ((e[i >> 6] >> (i & 63)) & 1) fr_mul_c(acc, acc, base);
    fr_mul_c(base, base, base);
  }
  memcpy(r, acc, 32);
}

static int fe_is_zero_(const uint64_t a[4]) { return (a[0] | a[1] | a[2] | a[3]) == 0; }

static uint64_t le64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static int lk_load_new(const uint8_t *file, size_t len, lk_key **out, char *err, size_t errlen) {
  pthread_once(&lk_once, lk_init);
  *out = NULL;
  if (len < 32 || memcmp(file, "RFLKEY01", 8) != 0) {
    set_err(err, errlen, "not a Refract resident Light key (magic RFLKEY01 missing)");
    return LK_EKEY;
  }
  const uint64_t pl = le64(file + 8), vl = le64(file + 16), rl = le64(file + 24);
  if (pl > len || vl > len || rl > len || 32 + pl + vl + rl != len || pl < PTS_HDR || rl < 24) {
    set_err(err, errlen, "resident key: section lengths %llu/%llu/%llu do not match the file's %zu bytes (truncated?)",
            (unsigned long long)pl, (unsigned long long)vl, (unsigned long long)rl, len);
    return LK_EKEY;
  }
  lk_key *k = calloc(1, sizeof *k);
  if (!k) return LK_ENOMEM;
  /* parsed in place: every section the key keeps is copied out below, so the caller's bytes (a
   * mapped file, lk_load_path) may go when this returns */
  k->file_len = len;
  const uint8_t *pts = file + 32, *vk = pts + pl, *rc1 = vk + vl;
  uint32_t hdr[16];
  memcpy(hdr, pts, sizeof hdr);
  k->n = hdr[1];
  k->nb_wires = hdr[2];
  k->n_a = hdr[3];
  k->n_b = hdr[4];
  k->n_k = hdr[5];
  k->n_ic = hdr[6];
  const size_t need_pl = PTS_HDR + 3 * 32 + 3 * 64 + 2 * 128 + ((size_t)k->n_a + k->n_b + k->n_k + k->n) * 64 +
                         (size_t)k->n_b * 128 + ((2 * (size_t)k->nb_wires + 7) & ~(size_t)7);
  if (hdr[0] != 1 || k->n < 2 || (k->n & (k->n - 1)) || need_pl != pl || vl != 448 + (size_t)k->n_ic * 64 ||
      k->n_k + k->n_ic != k->nb_wires) {
    set_err(err, errlen, "resident key: inconsistent points section");
    lk_destroy(k);
    return LK_EKEY;
  }
  while ((1u << k->logn) < k->n) k->logn++;
  const uint8_t *p = pts + PTS_HDR;
  memcpy(k->omega, p, 32);
  memcpy(k->omega_inv, p + 32, 32);
  memcpy(k->n_inv, p + 64, 32);
  p += 96;
  const uint8_t *alpha1 = p, *beta1 = p + 64, *delta1 = p + 128, *beta2 = p + 192, *delta2 = p + 320;
  memcpy(k->alpha1, alpha1, 64);
  p += 3 * 64 + 2 * 128;
  const uint8_t *A = p, *B1 = A + (size_t)k->n_a * 64, *K = B1 + (size_t)k->n_b * 64, *Z = K + (size_t)k->n_k * 64,
                *B2 = Z + (size_t)k->n * 64, *infA = B2 + (size_t)k->n_b * 128, *infB = infA + k->nb_wires;
  k->vk_copy = malloc(vl);
  k->r1cs_copy = malloc(rl + 8);
  if (!k->vk_copy || !k->r1cs_copy) goto oom;
  memcpy(k->vk_copy, vk, vl);
  memcpy(k->r1cs_copy, rc1, rl);
  k->vk = k->vk_copy;
  k->vk_len = vl;
  k->a_ext = malloc(((size_t)k->n_a + 2) * 64);
  k->b1_ext = malloc(((size_t)k->n_b + 2) * 64);
  k->b2_ext = malloc(((size_t)k->n_b + 2) * 128);
  k->kz_ext = malloc(((size_t)k->n_k + k->n + 1) * 64);
  k->a_idx = malloc((size_t)k->n_a * 4 + 4);
  k->b_idx = malloc((size_t)k->n_b * 4 + 4);
  const size_t half = k->n > 1 ? k->n / 2 : 1;
  k->shift_br = malloc((size_t)k->n * 32);
  k->unshift_br = malloc((size_t)k->n * 32);
  k->br4 = malloc((size_t)k->n * 8);
  k->tw = malloc(half * 32);
  k->tw_inv = malloc(half * 32);
  if (!k->a_ext || !k->b1_ext || !k->b2_ext || !k->kz_ext || !k->a_idx || !k->b_idx || !k->shift_br || !k->unshift_br ||
      !k->br4 || !k->tw || !k->tw_inv)
    goto oom;
  memcpy(k->a_ext, A, (size_t)k->n_a * 64);
  memcpy(k->a_ext + (size_t)k->n_a * 64, alpha1, 64);
  memcpy(k->a_ext + ((size_t)k->n_a + 1) * 64, delta1, 64);
  memcpy(k->b1_ext, B1, (size_t)k->n_b * 64);
  memcpy(k->b1_ext + (size_t)k->n_b * 64, beta1, 64);
  memcpy(k->b1_ext + ((size_t)k->n_b + 1) * 64, delta1, 64);
  memcpy(k->b2_ext, B2, (size_t)k->n_b * 128);
  memcpy(k->b2_ext + (size_t)k->n_b * 128, beta2, 128);
  memcpy(k->b2_ext + ((size_t)k->n_b + 1) * 128, delta2, 128);
  memcpy(k->kz_ext, K, (size_t)k->n_k * 64);
  memcpy(k->kz_ext + (size_t)k->n_k * 64, Z, (size_t)k->n * 64);
  memcpy(k->kz_ext + ((size_t)k->n_k + k->n) * 64, delta1, 64);
  {
    uint32_t ia = 0, ib = 0;
    for (uint32_t i = 0; i < k->nb_wires; i++) {
      if (!infA[i]) {
        if (ia == k->n_a) break;
        k->a_idx[ia++] = i;
      }
      if (!infB[i]) {
        if (ib == k->n_b) break;
        k->b_idx[ib++] = i;
      }
    }
    if (ia != k->n_a || ib != k->n_b) {
      set_err(err, errlen, "resident key: infinity bitmaps do not match |A|, |B|");
      lk_destroy(k);
      return LK_EKEY;
    }
  }
  /* coset powers of 5 (§2.2 FrMultiplicativeGen), stored bit-reversed with the iFFT's 1/n: a DIF iFFT
   * leaves its output bit-reversed, and the DIT FFT takes it back to natural order */
  {
    const uint64_t five[4] = {5, 0, 0, 0};
    fe g, gi, acc, acci;
    fr_mul_c(g, five, FR_R2_LIMBS);
    fr_inv_m(gi, g);
    memcpy(acc, FR_ONE_LIMBS, 32);
    memcpy(acci, FR_ONE_LIMBS, 32);
    for (uint32_t i = 0; i < k->n; i++) {
      const unsigned j = bitrev(i, k->logn);
      fr_mul_c(k->shift_br[j], k->n_inv, acc);
      fr_mul_c(k->unshift_br[j], k->n_inv, acci);
      k->br4[i] = (uint64_t)j * 4;
      fr_mul_c(acc, acc, g);
      fr_mul_c(acci, acci, gi);
    }
    /* acc = 5^n; den = 5^n − 1 */
    fe den;
    mod_sub(den, acc, FR_ONE_LIMBS, FR_Q_LIMBS);
    fr_inv_m(k->den_inv, den);
    memcpy(k->tw[0], FR_ONE_LIMBS, 32);
    memcpy(k->tw_inv[0], FR_ONE_LIMBS, 32);
    for (size_t j = 1; j < half; j++) {
      fr_mul_c(k->tw[j], k->tw[j - 1], k->omega);
      fr_mul_c(k->tw_inv[j], k->tw_inv[j - 1], k->omega_inv);
    }
  }
  /* R1CS blob */
  {
    const uint32_t *u = (const uint32_t *)(const void *)k->r1cs_copy;
    const size_t nu = rl / 4;
    k->nb_pub = u[0];
    k->nb_sec = u[1];
    k->nb_int = u[2];
    k->m = u[3];
    k->n_coef = u[4];
    k->n_hints = u[5];
    size_t at = 6;
    if (rl % 4 || (size_t)k->nb_pub + k->nb_sec + k->nb_int != k->nb_wires || k->nb_pub != k->n_ic || k->m > k->n ||
        (size_t)k->n_coef * 8 > nu - at) {
      set_err(err, errlen, "resident key: R1CS header does not match the proving key (wires %u+%u+%u vs %u, public %u vs vk %u, m %u, n %u)",
              k->nb_pub, k->nb_sec, k->nb_int, k->nb_wires, k->nb_pub, k->n_ic, k->m, k->n);
      lk_destroy(k);
      return LK_EKEY;
    }
    k->coef = (fe *)(void *)(u + at);
    at += (size_t)k->n_coef * 8;
    k->coef_inv = malloc((size_t)k->n_coef * 32 + 32);
    k->cons = malloc((size_t)k->m * sizeof *k->cons + 8);
    k->hints = calloc((size_t)k->n_hints + 1, sizeof *k->hints);
    k->hint_of = malloc((size_t)k->nb_wires * 4);
    if (!k->coef_inv || !k->cons || !k->hints || !k->hint_of) goto oom;
    for (uint32_t i = 0; i < k->n_coef; i++) {
      if (!lt_mod(k->coef[i], FR_Q_LIMBS)) goto bad_r1cs;
      if (fe_is_zero_(k->coef[i]))
        memset(k->coef_inv[i], 0, 32);
      else
        fr_inv_m(k->coef_inv[i], k->coef[i]);
    }
    for (uint32_t c = 0; c < k->m; c++) {
      if (nu - at < 3) goto bad_r1cs;
      const size_t nt = (size_t)u[at] + u[at + 1] + u[at + 2];
      if (nt * 2 > nu - at - 3) goto bad_r1cs;
      k->cons[c] = u + at;
      for (size_t t = 0; t < nt; t++)
        if (u[at + 3 + 2 * t] >= k->n_coef || u[at + 4 + 2 * t] >= k->nb_wires) goto bad_r1cs;
      at += 3 + 2 * nt;
    }
    for (uint32_t w = 0; w < k->nb_wires; w++) k->hint_of[w] = -1;
    for (uint32_t h = 0; h < k->n_hints; h++) {
      lk_hint *H = &k->hints[h];
      if (nu - at < 2) goto bad_r1cs;
      H->id = u[at];
      H->n_out = u[at + 1];
      at += 2;
      if (H->n_out > nu - at) goto bad_r1cs;
      H->out = u + at;
      for (uint32_t j = 0; j < H->n_out; j++) {
        if (H->out[j] >= k->nb_wires) goto bad_r1cs;
        k->hint_of[H->out[j]] = (int32_t)h;
      }
      at += H->n_out;
      if (nu - at < 1) goto bad_r1cs;
      H->n_in = u[at++];
      H->in = malloc(((size_t)H->n_in + 1) * sizeof *H->in);
      if (!H->in) goto oom;
      for (uint32_t j = 0; j < H->n_in; j++) {
        if (nu - at < 1) goto bad_r1cs;
        const uint32_t nt = u[at];
        if ((size_t)nt * 2 > nu - at - 1) goto bad_r1cs;
        H->in[j] = u + at;
        for (uint32_t t = 0; t < nt; t++)
          if (u[at + 1 + 2 * t] >= k->n_coef || u[at + 2 + 2 * t] >= k->nb_wires) goto bad_r1cs;
        at += 1 + 2 * (size_t)nt;
      }
    }
    if (at != nu) goto bad_r1cs;
  }
  pthread_mutex_init(&k->mu, NULL);
  k->bytes = vl + rl + ((size_t)k->n_a + (size_t)k->n_b + (size_t)k->n_k + k->n) * 64 + (size_t)k->n_b * 128 + (size_t)k->n * 104 +
             (size_t)k->n_coef * 32 + (size_t)k->m * 8 + (size_t)k->nb_wires * 4;
  k->kz_keep = lk_kz_split((size_t)k->n_k + k->n + 1, (size_t)k->n_a + 2, (size_t)k->n_b + 2);
  if (lk_solve_split(k) != 0) goto oom;
  *out = k;
  return LK_OK;
bad_r1cs:
  set_err(err, errlen, "resident key: malformed R1CS section");
  lk_destroy(k);
  return LK_EKEY;
oom:
  set_err(err, errlen, "out of memory loading the key");
  lk_destroy(k);
  return LK_ENOMEM;
}

/* Union-find root of wire x (path halving). */
static uint32_t uf_find(uint32_t *parent, uint32_t x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

/* Joins every solved wire (not ONE, not an input) in terms[0 .. nt) with `*first` (UINT32_MAX: none yet). */
static void uf_join_terms(uint32_t *parent, uint32_t n_known, const uint32_t *terms, uint32_t nt, uint32_t *first) {
  for (uint32_t t = 0; t < nt; t++) {
    const uint32_t vid = terms[2 * t + 1];
    if (vid < n_known) continue;
    const uint32_t r = uf_find(parent, vid);
    if (*first == UINT32_MAX) *first = r;
    else if (r != *first) parent[r] = *first;
  }
}

/* qsort order of 64-bit keys, largest first. */
static int u64_desc(const void *x, const void *y) {
  const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? 1 : a > b ? -1 : 0;
}

/* Splits the constraints into parts that share no solved wire (ONE and the inputs are known before the
 * solve and only read), e.g. the accounts of a multi-account inclusion proof, and deals the parts to two
 * threads, largest first onto the lighter one; a hint's outputs belong with its inputs' part. Each
 * thread then solves its constraints in the R1CS order, which keeps every dependency of a part on its
 * own thread. Sets solve_order / solve_split (0 when one thread would get under a quarter). 0, or −1
 * out of memory. */
static int lk_solve_split(lk_key *k) {
  k->solve_order = NULL;
  k->solve_split = 0;
  const uint32_t nw = k->nb_wires, m = k->m, n_known = k->nb_pub + k->nb_sec;
  if (m < 64 || sysconf(_SC_NPROCESSORS_ONLN) < 2) return 0;
  uint32_t *parent = malloc((size_t)nw * 4), *part = malloc((size_t)m * 4), *size = calloc(nw, 4);
  uint8_t *side = calloc(nw, 1);
  int rc = -1;
  if (!parent || !part || !size || !side) goto out;
  for (uint32_t w = 0; w < nw; w++) parent[w] = w;
  for (uint32_t h = 0; h < k->n_hints; h++) {
    const lk_hint *H = &k->hints[h];
    uint32_t first = UINT32_MAX;
    for (uint32_t j = 0; j < H->n_out; j++) {
      const uint32_t pair[2] = {0, H->out[j]};
      uf_join_terms(parent, n_known, pair, 1, &first);
    }
    for (uint32_t j = 0; j < H->n_in; j++) uf_join_terms(parent, n_known, H->in[j] + 1, H->in[j][0], &first);
  }
  for (uint32_t c = 0; c < m; c++) {
    const uint32_t *C = k->cons[c];
    uint32_t first = UINT32_MAX;
    uf_join_terms(parent, n_known, C + 3, C[0] + C[1] + C[2], &first);
  }
  /* each constraint's part: the root of its first solved wire (ONE's, 0, for one of inputs only) */
  for (uint32_t c = 0; c < m; c++) {
    const uint32_t *C = k->cons[c], nt = C[0] + C[1] + C[2];
    uint32_t r = 0;
    for (uint32_t t = 0; t < nt; t++)
      if (C[4 + 2 * t] >= n_known) {
        r = uf_find(parent, C[4 + 2 * t]);
        break;
      }
    part[c] = r;
    size[r]++;
  }
  /* largest part first onto the lighter thread (ties: the lower root first) */
  uint64_t load[2] = {0, 0};
  {
    uint64_t *parts = malloc((size_t)nw * 8);
    if (!parts) goto out;
    uint32_t n_parts = 0;
    for (uint32_t w = 0; w < nw; w++)
      if (size[w]) parts[n_parts++] = (uint64_t)size[w] << 32 | (UINT32_MAX - w);
    qsort(parts, n_parts, sizeof *parts, u64_desc);
    for (uint32_t i = 0; i < n_parts; i++) {
      const uint32_t root = UINT32_MAX - (uint32_t)parts[i];
      const int t = load[1] < load[0];
      side[root] = (uint8_t)(t + 1);
      load[t] += size[root];
    }
    free(parts);
  }
  if (load[0] < m / 4 || load[1] < m / 4) {
    rc = 0;
    goto out;
  }
  k->solve_order = malloc((size_t)m * 4);
  if (!k->solve_order) goto out;
  uint32_t at = 0;
  for (int t = 1; t <= 2; t++) {
    for (uint32_t c = 0; c < m; c++)
      if (side[part[c]] == t) k->solve_order[at++] = c;
    if (t == 1) k->solve_split = at;
  }
  rc = 0;
out:
  free(parent);
  free(part);
  free(size);
  free(side);
  return rc;
}

int lk_load(const uint8_t *file, size_t len, lk_key **out, char *err, size_t errlen) {
  pthread_once(&lk_once, lk_init);
  const uint64_t h = msm_points_hash(file, len & ~(size_t)31) ^ (uint64_t)len;
  pthread_mutex_lock(&lk_reg_mu);
  for (lk_key *e = lk_reg; e; e = e->next)
    if (e->hash == h && e->file_len == len) {
      e->refs++;
      pthread_mutex_unlock(&lk_reg_mu);
      *out = e;
      return LK_OK;
    }
  pthread_mutex_unlock(&lk_reg_mu);
  lk_key *k = NULL;
  const int rc = lk_load_new(file, len, &k, err, errlen);
  if (rc != LK_OK) return rc;
  k->hash = h;
  k->refs = 1;
  pthread_mutex_lock(&lk_reg_mu);
  for (lk_key *e = lk_reg; e; e = e->next)
    if (e->hash == h && e->file_len == len) { /* another thread won the race */
      e->refs++;
      pthread_mutex_unlock(&lk_reg_mu);
      lk_destroy(k);
      *out = e;
      return LK_OK;
    }
  k->next = lk_reg;
  lk_reg = k;
  pthread_mutex_unlock(&lk_reg_mu);
  *out = k;
  return LK_OK;
}

/* Files being loaded by lk_load_path now (device and inode): a second thread asking for one waits for
 * the first instead of mapping and parsing it too (two copies at once would raise the peak RSS). */
#define LK_LOADING_MAX 16
static struct {
  uint64_t dev, ino;
  int busy;
} lk_loading[LK_LOADING_MAX];
static pthread_cond_t lk_loading_cv = PTHREAD_COND_INITIALIZER;

static lk_key *lk_find_ident_locked(const struct stat *st) {
  for (lk_key *e = lk_reg; e; e = e->next)
    if (e->has_ident && e->dev == (uint64_t)st->st_dev && e->ino == (uint64_t)st->st_ino && e->file_len == (size_t)st->st_size &&
        e->mtime_ns == (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec) {
      e->refs++;
      return e;
    }
  return NULL;
}

int lk_load_path(const char *path, lk_key **out, char *err, size_t errlen) {
  pthread_once(&lk_once, lk_init);
  *out = NULL;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    set_err(err, errlen, "cannot open %s: %s", path, strerror(errno));
    return LK_EKEY;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    set_err(err, errlen, "%s is not a regular file", path);
    close(fd);
    return LK_EKEY;
  }
  /* the same file already resident, or being loaded by another thread (then wait for it) */
  int slot = -1;
  pthread_mutex_lock(&lk_reg_mu);
  for (;;) {
    lk_key *e = lk_find_ident_locked(&st);
    if (e) {
      pthread_mutex_unlock(&lk_reg_mu);
      close(fd);
      *out = e;
      return LK_OK;
    }
    int waiting = 0, free_slot = -1;
    for (int i = 0; i < LK_LOADING_MAX; i++) {
      if (lk_loading[i].busy && lk_loading[i].dev == (uint64_t)st.st_dev && lk_loading[i].ino == (uint64_t)st.st_ino) waiting = 1;
      if (!lk_loading[i].busy && free_slot < 0) free_slot = i;
    }
    if (!waiting) {
      if (free_slot >= 0) {
        slot = free_slot;
        lk_loading[slot].busy = 1;
        lk_loading[slot].dev = (uint64_t)st.st_dev;
        lk_loading[slot].ino = (uint64_t)st.st_ino;
      }
      break;
    }
    pthread_cond_wait(&lk_loading_cv, &lk_reg_mu);
  }
  pthread_mutex_unlock(&lk_reg_mu);
  int rc;
  const size_t len = (size_t)st.st_size;
  void *map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  if (map == MAP_FAILED) {
    set_err(err, errlen, len ? "cannot map %s: %s" : "%s is empty", path, strerror(errno));
    rc = LK_EKEY;
  } else {
    madvise(map, len, MADV_SEQUENTIAL);
    rc = lk_load((const uint8_t *)map, len, out, err, errlen);
    munmap(map, len);
  }
  close(fd);
  pthread_mutex_lock(&lk_reg_mu);
  if (rc == LK_OK && !(*out)->has_ident) {
    (*out)->dev = (uint64_t)st.st_dev;
    (*out)->ino = (uint64_t)st.st_ino;
    (*out)->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    (*out)->has_ident = 1;
  }
  if (slot >= 0) lk_loading[slot].busy = 0;
  pthread_cond_broadcast(&lk_loading_cv);
  pthread_mutex_unlock(&lk_reg_mu);
  return rc;
}

/* ---------------------------------------------------------------------------------------------
 * Fixed-base tables (msm.h) for the four MSMs, within a byte budget, with a table file */

static const char LK_TABLE_MAGIC[8] = {'R', 'F', 'L', 'K', 'T', 'B', 'L', '1'};

static void lk_table_shape(const lk_key *k, const uint8_t *bases[4], size_t n[4], int group[4]) {
  bases[0] = k->a_ext, n[0] = (size_t)k->n_a + 2, group[0] = 1;
  bases[1] = k->b1_ext, n[1] = (size_t)k->n_b + 2, group[1] = 1;
  bases[2] = k->b2_ext, n[2] = (size_t)k->n_b + 2, group[2] = 2;
  bases[3] = k->kz_ext, n[3] = (size_t)k->n_k + k->n + 1, group[3] = 1;
}

size_t lk_table_need(const lk_key *k) {
  const uint8_t *b[4];
  size_t n[4];
  int g[4];
  lk_table_shape(k, b, n, g);
  size_t total = 0;
  for (int i = 0; i < 4; i++) total += msm_table_size(g[i], n[i]);
  return total;
}

size_t lk_tables(lk_key *k, size_t max_bytes, unsigned threads, const char *path, int *source, const char **note) {
  pthread_mutex_lock(&k->mu);
  size_t bytes = 0;
  if (k->tables_state == 0) {
    const uint8_t *b[4];
    size_t n[4];
    int g[4];
    lk_table_shape(k, b, n, g);
    if (lk_table_need(k) > max_bytes) {
      k->tables_state = 2;
    } else {
      int loaded = 0;
      FILE *f = path ? fopen(path, "rb") : NULL;
      if (f) {
        char magic[8];
        const char *why = NULL;
        if (fread(magic, 8, 1, f) != 1 || memcmp(magic, LK_TABLE_MAGIC, 8) != 0) why = "not a Light table file";
        for (int i = 0; i < 4 && !why; i++) k->t[i] = msm_table_load(f, g[i], b[i], n[i], &why);
        fclose(f);
        if (why) {
          snprintf(k->table_note, sizeof k->table_note, "table file %s: %s; rebuilt", path, why);
          for (int i = 0; i < 4; i++) msm_table_free(k->t[i]), k->t[i] = NULL;
        } else
          loaded = 1;
      }
      if (!loaded) {
        int ok = 1;
        for (int i = 0; i < 4 && ok; i++) ok = (k->t[i] = msm_table_build(g[i], b[i], n[i], threads)) != NULL;
        if (!ok) {
          for (int i = 0; i < 4; i++) msm_table_free(k->t[i]), k->t[i] = NULL;
          snprintf(k->table_note, sizeof k->table_note, "out of memory building the tables");
        } else if (path) {
          char tmp[4096];
          snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
          FILE *w = fopen(tmp, "wb");
          int wok = w && fwrite(LK_TABLE_MAGIC, 8, 1, w) == 1;
          for (int i = 0; i < 4 && wok; i++) wok = msm_table_save(k->t[i], w) == 0;
          if (w && fclose(w) != 0) wok = 0;
          if (wok && rename(tmp, path) == 0) {
          } else {
            unlink(tmp);
            snprintf(k->table_note, sizeof k->table_note, "table file %s not written", path);
          }
        }
      }
      k->tables_state = k->t[0] ? 1 : 2;
      if (k->t[0]) {
        for (int i = 0; i < 4; i++) k->bytes += msm_table_bytes(k->t[i]);
        k->table_note[0] = k->table_note[0]; /* keep */
      }
      if (source) *source = loaded ? 2 : (k->t[0] ? 1 : 0);
    }
  } else if (source)
    *source = k->tables_state == 1 ? 3 : 0;
  if (k->t[0])
    for (int i = 0; i < 4; i++) bytes += msm_table_bytes(k->t[i]);
  if (note) *note = k->table_note;
  pthread_mutex_unlock(&k->mu);
  return bytes;
}

/* ---------------------------------------------------------------------------------------------
 * Solver (§3.3) */

#define NBITS_ID 2224041163u /* FNV-1a-32("github.com/consensys/gnark/std/math/bits.NBits"), §3.4 */

typedef struct {
  const lk_key *k;
  fe *w;
  uint8_t *known;
  uint8_t *hint_done;
  char *err;
  size_t errlen;
} solver_t;

static int solve_hint(solver_t *S, int32_t h, unsigned depth);

/* Σ coef·w over nt terms; every wire must be known (hint outputs are solved on the way). */
static int eval_known(solver_t *S, const uint32_t *terms, uint32_t nt, fe acc, unsigned depth) {
  memset(acc, 0, 32);
  for (uint32_t t = 0; t < nt; t++) {
    const uint32_t cid = terms[2 * t], vid = terms[2 * t + 1];
    if (!S->known[vid]) {
      if (S->k->hint_of[vid] < 0 || !solve_hint(S, S->k->hint_of[vid], depth + 1)) {
        if (S->k->hint_of[vid] < 0) set_err(S->err, S->errlen, "hint input wire %u is not solved (malformed R1CS)", vid);
        return 0;
      }
    }
    fe p;
    frmul(p, S->k->coef[cid], S->w[vid]);
    mod_add(acc, acc, p, FR_Q_LIMBS);
  }
  return 1;
}

static int solve_hint(solver_t *S, int32_t h, unsigned depth) {
  const lk_hint *H = &S->k->hints[h];
  if (S->hint_done[h]) return 1;
  if (depth > 64) {
    set_err(S->err, S->errlen, "hint dependencies too deep (malformed R1CS)");
    return 0;
  }
  if (H->id != NBITS_ID || H->n_in != 1) {
    set_err(S->err, S->errlen, "hint id %u with %u inputs is not gnark's bits.NBits (unsupported key)", H->id, H->n_in);
    return 0;
  }
  fe v, plain;
  if (!eval_known(S, H->in[0] + 1, H->in[0][0], v, depth)) return 0;
  fr_mul_c(plain, v, PLAIN_ONE);
  for (uint32_t i = 0; i < H->n_out; i++) {
    const uint32_t wire = H->out[i];
    const int bit = i < 256 ? (int)((plain[i >> 6] >> (i & 63)) & 1) : 0;
    if (bit)
      memcpy(S->w[wire], FR_ONE_LIMBS, 32);
    else
      memset(S->w[wire], 0, 32);
    S->known[wire] = 1;
  }
  S->hint_done[h] = 1;
  return 1;
}

/* One side: known part into acc, the unknown wire (if any) and its summed coefficient. Returns
 * 0 on two unknowns. */
static int eval_side(solver_t *S, const uint32_t *terms, uint32_t nt, fe acc, uint32_t *unk, fe ucoef, uint32_t *n_unk,
                     int32_t *ucid) {
  memset(acc, 0, 32);
  for (uint32_t t = 0; t < nt; t++) {
    const uint32_t cid = terms[2 * t], vid = terms[2 * t + 1];
    if (!S->known[vid]) {
      if (*n_unk && *unk != vid) return 0;
      if (!*n_unk) {
        memset(ucoef, 0, 32);
        *ucid = (int32_t)cid;
      } else
        *ucid = -1; /* several terms of one wire: the summed coefficient's inverse is computed */
      *unk = vid;
      *n_unk = 1;
      mod_add(ucoef, ucoef, S->k->coef[cid], FR_Q_LIMBS);
      continue;
    }
    fe p;
    frmul(p, S->k->coef[cid], S->w[vid]);
    mod_add(acc, acc, p, FR_Q_LIMBS);
  }
  return 1;
}

/* Solves constraints order[0 .. count) (order NULL: 0 .. count), in that order, writing their L, R, O
 * into a, b, c. */
static int solve_list(solver_t *S, const uint32_t *order, uint32_t count, fe *a, fe *b, fe *c) {
  const lk_key *k = S->k;
  for (uint32_t oi = 0; oi < count; oi++) {
    const uint32_t ci = order ? order[oi] : oi;
    const uint32_t *C = k->cons[ci];
    const uint32_t nl = C[0], nr = C[1], no = C[2];
    const uint32_t *tl = C + 3, *tr = tl + 2 * nl, *to = tr + 2 * nr;
    /* hint outputs first */
    const uint32_t *all = tl;
    for (uint32_t t = 0; t < nl + nr + no; t++) {
      const uint32_t vid = all[2 * t + 1];
      if (!S->known[vid] && k->hint_of[vid] >= 0 && !solve_hint(S, k->hint_of[vid], 0)) return LK_EKEY;
    }
    fe L, R, O, cu;
    uint32_t unk = 0, n_unk = 0, side = 0;
    int32_t ucid = -1;
    if (!eval_side(S, tl, nl, L, &unk, cu, &n_unk, &ucid)) goto two;
    if (n_unk) side = 1;
    const uint32_t before_r = n_unk;
    if (!eval_side(S, tr, nr, R, &unk, cu, &n_unk, &ucid)) goto two;
    if (n_unk && !before_r) side = 2;
    else if (n_unk && before_r) {
      /* the same wire in L and R: quadratic, not solvable by gnark either */
      for (uint32_t t = 0; t < nr; t++)
        if (tr[2 * t + 1] == unk) goto two;
    }
    const uint32_t before_o = n_unk;
    if (!eval_side(S, to, no, O, &unk, cu, &n_unk, &ucid)) goto two;
    if (n_unk && !before_o) side = 3;
    else if (n_unk && before_o) {
      for (uint32_t t = 0; t < no; t++)
        if (to[2 * t + 1] == unk) goto two;
    }
    if (n_unk) {
      fe term, val, cinv;
      if (fe_is_zero_(cu)) {
        set_err(S->err, S->errlen, "constraint #%u: unknown wire %u has coefficient 0", ci, unk);
        return LK_EKEY;
      }
      if (ucid >= 0)
        memcpy(cinv, k->coef_inv[ucid], 32);
      else
        fr_inv_m(cinv, cu);
      if (side == 3) { /* term = L·R − O_known */
        fr_mul_c(term, L, R);
        mod_sub(term, term, O, FR_Q_LIMBS);
      } else {
        const uint64_t *other = side == 1 ? R : L, *known = side == 1 ? L : R;
        if (fe_is_zero_(other)) { /* gnark: the wire is 0 and the check below decides (§10) */
          memset(val, 0, 32);
          goto set;
        }
        fe oi;
        fr_inv_m(oi, other);
        fr_mul_c(term, O, oi);
        mod_sub(term, term, known, FR_Q_LIMBS);
      }
      if (memcmp(cinv, FR_ONE_LIMBS, 32) == 0)
        memcpy(val, term, 32);
      else
        frmul(val, term, cinv);
    set:
      memcpy(S->w[unk], val, 32);
      S->known[unk] = 1;
      fe p;
      frmul(p, cu, val);
      if (side == 1) mod_add(L, L, p, FR_Q_LIMBS);
      else if (side == 2) mod_add(R, R, p, FR_Q_LIMBS);
      else mod_add(O, O, p, FR_Q_LIMBS);
    }
    fe lr;
    frmul(lr, L, R);
    if (memcmp(lr, O, 32) != 0) {
      set_err(S->err, S->errlen, "constraint #%u is not satisfied", ci);
      return LK_EINPUT;
    }
    memcpy(a[ci], L, 32);
    memcpy(b[ci], R, 32);
    memcpy(c[ci], O, 32);
  }
  return LK_OK;
two:
  set_err(S->err, S->errlen, "constraint has more than one unknown wire (malformed R1CS or unsupported key)");
  return LK_EKEY;
}

typedef struct {
  solver_t S;
  const uint32_t *order;
  uint32_t count;
  fe *a, *b, *c;
  char err[256];
  int rc;
} solve_job;

static void *solve_job_run(void *p) {
  solve_job *j = p;
  j->rc = solve_list(&j->S, j->order, j->count, j->a, j->b, j->c);
  return NULL;
}

/* The witness: every wire solved from ONE and the inputs (known[] set for those), L, R, O of every
 * constraint into a, b, c. On two threads when the key splits into independent parts (lk_solve_split);
 * a failure there is solved again on one thread, so that the error names the first failing constraint
 * in the R1CS order, as gnark's solver would. */
static int solve(solver_t *S, fe *a, fe *b, fe *c) {
  const lk_key *k = S->k;
  int rc = LK_OK;
  pthread_t th;
  solve_job other;
  const char *serial = getenv("REFRACT_LIGHT_SOLVE_SERIAL");
  if (k->solve_split && !(serial && *serial == '1')) {
    other = (solve_job){*S, k->solve_order + k->solve_split, k->m - k->solve_split, a, b, c, {0}, LK_OK};
    other.S.err = other.err;
    other.S.errlen = sizeof other.err;
    if (pthread_create(&th, NULL, solve_job_run, &other) == 0) {
      rc = solve_list(S, k->solve_order, k->solve_split, a, b, c);
      pthread_join(th, NULL);
      if (rc == LK_OK && other.rc == LK_OK) goto check;
      /* again in order, from ONE and the inputs alone (wires 0 … nbPub − 1 + nbSec) */
      memset(S->known, 0, k->nb_wires);
      memset(S->known, 1, (size_t)k->nb_pub + k->nb_sec);
      memset(S->hint_done, 0, (size_t)k->n_hints + 1);
    }
  }
  rc = solve_list(S, NULL, k->m, a, b, c);
  if (rc != LK_OK) return rc;
check:
  for (uint32_t w = 0; w < k->nb_wires; w++)
    if (!S->known[w]) {
      set_err(S->err, S->errlen, "wire %u is not solved by any constraint (malformed R1CS)", w);
      return LK_EKEY;
    }
  return LK_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Prover (§4) */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}


int lk_random_scalar(uint8_t out[32]);
#include <sys/random.h>
int lk_random_scalar(uint8_t out[32]) {
  uint8_t buf[64];
  size_t got = 0;
  while (got < sizeof buf) {
    const ssize_t n = getrandom(buf + got, sizeof buf - got, 0);
    if (n <= 0) return 0;
    got += (size_t)n;
  }
  uint64_t lo[4], hi[4], t[4], u[4];
  memcpy(lo, buf, 32);
  memcpy(hi, buf + 32, 32);
  fr_mul_c(t, lo, FR_R2_LIMBS);
  fr_mul_c(u, hi, FR_R2_LIMBS);
  fr_mul_c(u, u, FR_R2_LIMBS);
  mod_add(t, t, u, FR_Q_LIMBS);
  fr_mul_c(t, t, PLAIN_ONE);
  memcpy(out, t, 32);
  memset(buf, 0, sizeof buf);
  return 1;
}

int lk_verify(const lk_key *k, const uint8_t proof[256], const uint8_t *publics, size_t n_publics, int check_b, char *err,
              size_t errlen) {
  if (n_publics + 1 != k->nb_pub) {
    set_err(err, errlen, "%zu public inputs, the circuit has %u", n_publics, k->nb_pub - 1);
    return -1;
  }
  int valid = 0;
  if (g16_verify(k->vk, k->vk_len, proof, publics, n_publics, check_b, &valid, err, errlen) != PAIRING_OK) return -1;
  return valid ? 1 : 0;
}

#ifdef REFRACT_HAVE_IFMA
/* h's last steps on eight IFMA lanes, on one or two threads: from the coset evaluations a, b, c
 * (R = 2^256, < r), (a·b − c)/(5ⁿ − 1) into the limb arrays, the decimation-in-frequency iFFT, then
 * ·(1/n)·5^-i and out of Montgomery form: `out` gets h's coefficients as plain little-endian scalars
 * in natural order (the iFFT leaves coefficient bitrev(i) at i; br4 scatters it back), ready for
 * the Z MSM. With two parts: part p fills and scales [p·n/2, (p+1)·n/2), takes half of the first
 * stage's butterflies (the only stage that crosses the halves) between two barriers, then runs
 * every later stage on its own half. soa: 5·n words. Bounds (multiples of r): a·b < 4.1,
 * + 17r − c < 21.1, ·den < 5.1 (the stages take < 16.001); ·unshift < 4.1, ·1 < 2, one subtraction. */
typedef struct {
  const lk_key *k;
  const uint64_t *a, *b, *c;
  uint64_t *out;
  uint64_t *soa[5];
  unsigned part, parts;
  pthread_barrier_t *bar;
} lk_h_arg;

IFMA_TARGET static void lk_h_lanes(const lk_h_arg *h) {
  const lk_key *k = h->k;
  const size_t n = k->n, lo = n / h->parts * h->part, hi = lo + n / h->parts;
  uint64_t *const *soa = h->soa;
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  v8 den;
  ifma_gather16(&den, &k->den_inv[0], _mm512_setzero_si512());
  for (size_t i = lo; i < hi; i += 8) {
    v8 va, vb, vc, t;
    const __m512i at = _mm512_slli_epi64(_mm512_add_epi64(_mm512_set1_epi64((long long)i), lane), 2);
    ifma_gather16(&va, h->a, at);
    ifma_gather16(&vb, h->b, at);
    ifma_gather16(&vc, h->c, at);
    fr8_mul(&t, &va, &vb);
    v8_sub_k(&t, &t, &vc, FR52_17R);
    fr8_mul(&t, &t, &den);
    fr8_soa_store(soa, i, &t);
  }
  if (h->parts > 1) {
    pthread_barrier_wait(h->bar);
    fr8_stage_part(soa, n, n, &k->tw_inv[0][0], 1, 0, n, n / 4 * h->part, n / 4 * (h->part + 1));
    pthread_barrier_wait(h->bar);
  } else {
    fr8_stage(soa, n, n, &k->tw_inv[0][0], 1);
  }
  for (size_t len = n / 2; len >= 2; len >>= 1) fr8_stage_part(soa, n, len, &k->tw_inv[0][0], 1, lo, hi, 0, len / 2);
  for (size_t i = lo; i < hi; i += 8) {
    v8 v, s;
    __m512i z[4];
    const __m512i at = _mm512_slli_epi64(_mm512_add_epi64(_mm512_set1_epi64((long long)i), lane), 2);
    fr8_soa_load(&v, soa, i);
    ifma_gather16(&s, &k->unshift_br[0][0], at);
    fr8_mul(&v, &v, &s);
    fr8_to_plain(z, &v);
    const __m512i to = _mm512_loadu_si512((const void *)(k->br4 + i));
    for (int j = 0; j < 4; j++) _mm512_i64scatter_epi64((void *)h->out, _mm512_add_epi64(to, ifma_bc((uint64_t)j)), z[j], 8);
  }
}

/* wp[i] = w[i] out of Montgomery form (plain little-endian, < r) for the first ⌊nw/8⌋·8 wires on
 * eight IFMA lanes; returns how many it did (the caller converts the rest). */
IFMA_TARGET static size_t lk_plain_lanes(const fe *w, uint8_t *wp, size_t nw) {
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  const size_t end = nw / 8 * 8;
  for (size_t i = 0; i < end; i += 8) {
    v8 v;
    __m512i z[4];
    const __m512i at = _mm512_slli_epi64(_mm512_add_epi64(_mm512_set1_epi64((long long)i), lane), 2);
    ifma_gather16(&v, &w[0][0], at);
    fr8_to_plain(z, &v);
    for (int j = 0; j < 4; j++) _mm512_i64scatter_epi64((void *)wp, _mm512_add_epi64(at, ifma_bc((uint64_t)j)), z[j], 8);
  }
  return end;
}

static void *lk_h_run(void *arg) {
  lk_h_lanes((const lk_h_arg *)arg);
  return NULL;
}

/* lk_h_lanes on two threads when there are two cores and n ≥ 1024, else one; 0 without scratch. */
static int lk_h_tail_lanes(const lk_key *k, const fe *a, const fe *b, const fe *c, uint8_t *out) {
  const size_t n = k->n, bytes = 5 * n * sizeof(uint64_t);
  uint64_t *soa = scratch_alloc(bytes);
  if (!soa) return 0;
  lk_h_arg args[2];
  for (unsigned p = 0; p < 2; p++)
    args[p] = (lk_h_arg){k, &a[0][0], &b[0][0], &c[0][0], (uint64_t *)(void *)out,
                         {soa, soa + n, soa + 2 * n, soa + 3 * n, soa + 4 * n}, p, 2, NULL};
  pthread_barrier_t bar;
  pthread_t th;
  int two = n >= 1024 && sysconf(_SC_NPROCESSORS_ONLN) >= 2 && pthread_barrier_init(&bar, NULL, 2) == 0;
  if (two) {
    args[0].bar = args[1].bar = &bar;
    if (pthread_create(&th, NULL, lk_h_run, &args[1]) != 0) {
      pthread_barrier_destroy(&bar);
      two = 0;
    }
  }
  if (two) {
    lk_h_lanes(&args[0]);
    pthread_join(th, NULL);
    pthread_barrier_destroy(&bar);
  } else {
    args[0].parts = 1;
    lk_h_lanes(&args[0]);
  }
  scratch_free(soa, bytes);
  return 1;
}
#endif

typedef struct {
  const lk_key *k;
  fe *x;
  int ok;
} coset_arg;

/* Evaluations on {ωⁱ} → evaluations on {5·ωⁱ}: iFFT, multiply coefficient j by 5^j, FFT. */
static void *coset_run(void *arg) {
  coset_arg *c = (coset_arg *)arg;
  const lk_key *k = c->k;
  const size_t n = k->n;
  c->ok = 0;
#ifdef REFRACT_HAVE_IFMA
  /* on eight AVX-512 IFMA lanes when the MSM runs on them (the own prover's chain, groth16.c) */
  if (n >= 8 && msm_impl_level() == 2) {
    const size_t bytes = 5 * n * sizeof(uint64_t);
    uint64_t *soa = scratch_alloc(bytes);
    if (soa) { /* else the scalar chain below */
      fr8_coset(&c->x[0][0], n, &k->tw[0][0], &k->tw_inv[0][0], &k->shift_br[0][0], soa);
      scratch_free(soa, bytes);
      c->ok = 1;
      return NULL;
    }
  }
#endif
  if (!fr_fft((uint8_t *)c->x, n, (const uint8_t *)k->omega_inv, NULL)) return NULL;
  for (size_t i = 0; i < n; i++) frmul(c->x[i], c->x[i], k->shift_br[k->br4[i] / 4]); /* (1/n)·5^i */
  if (!fr_fft((uint8_t *)c->x, n, (const uint8_t *)k->omega, NULL)) return NULL;
  c->ok = 1;
  return NULL;
}

typedef struct {
  const msm_table *t;
  int group;
  const uint8_t *bases, *scalars;
  size_t n;
  uint8_t *out;
  unsigned threads;
  int rc;
} msm_task;

static void msm_task_run(msm_task *m) {
  if (m->t)
    m->rc = msm_fixed(m->t, m->scalars, 32, m->threads, m->out);
  else
    m->rc = m->group == 1 ? msm_g1(m->bases, m->scalars, 32, m->n, m->threads, m->out)
                          : msm_g2(m->bases, m->scalars, 32, m->n, m->threads, m->out);
}

/* Scalars by wire index: dst[j] = wp[idx[j]] (32 bytes each), then 1 and `last` (r for A, s for
 * B): the scalars of the α1/β and δ bases that close A‖α1‖δ1 and B‖β‖δ. */
typedef struct {
  uint8_t *dst;
  const uint8_t *wp;
  const uint32_t *idx;
  uint32_t n;
  const uint64_t *last;
} lk_gather;

static void lk_gather_run(const lk_gather *g) {
  for (uint32_t j = 0; j < g->n; j++) memcpy(g->dst + (size_t)j * 32, g->wp + (size_t)g->idx[j] * 32, 32);
  memcpy(g->dst + (size_t)g->n * 32, PLAIN_ONE, 32);
  memcpy(g->dst + ((size_t)g->n + 1) * 32, g->last, 32);
}

/* The MSMs one thread runs in turn, each on that thread alone, after gathering their scalars. */
typedef struct {
  lk_gather gather;
  msm_task *t[3];
  int n;
} msm_list;

static void *msm_list_run(void *arg) {
  msm_list *l = (msm_list *)arg;
  lk_gather_run(&l->gather);
  for (int i = 0; i < l->n; i++) {
    l->t[i]->threads = 1;
    msm_task_run(l->t[i]);
  }
  return NULL;
}

/* Cost model of a one-thread MSM without tables, for balancing two threads: n bases cost about
 * n / log2(n) (Pippenger with windows of about log2(n) bits; measured on Light's keys, 4k–29k G1
 * bases: within 5%), a G2 base LK_G2_COST times a G1 base (measured: B2 against B1, the same
 * scalars, 2.2–2.4×). */
#define LK_G2_COST 2.3
static double lk_msm_cost(size_t n) {
  return n < 2 ? (double)n : (double)n / log2((double)n);
}

/* How many of KZ's `n_kz` bases the first thread keeps so that KZ + A there and B2 + B1 + the rest of
 * KZ on the other thread cost about the same (lk_msm_cost): all of them when that side is already
 * the lighter one. */
static size_t lk_kz_split(size_t n_kz, size_t n_a, size_t n_b) {
  const double other = (LK_G2_COST + 1.0) * lk_msm_cost(n_b), mine = lk_msm_cost(n_a);
  if (lk_msm_cost(n_kz) + mine <= other) return n_kz;
  size_t lo = 0, hi = n_kz; /* mine + cost(keep) − (other + cost(n_kz − keep)) rises with keep */
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (mine + lk_msm_cost(mid) <= other + lk_msm_cost(n_kz - mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

int lk_prove(const lk_key *k, const uint8_t *inputs, size_t inputs_len, const uint8_t *rs, uint8_t out[256], double *times,
             char *err, size_t errlen) {
  const size_t n_in = (size_t)k->nb_pub - 1 + k->nb_sec;
  if (inputs_len != n_in * 32) {
    set_err(err, errlen, "%zu bytes of inputs, the circuit takes %zu values (%u public, %u secret)", inputs_len, n_in,
            k->nb_pub - 1, k->nb_sec);
    return LK_EINPUT;
  }
  double t0 = now_ms();
  const size_t n = k->n, nw = k->nb_wires;
  int rc = LK_ENOMEM;
  fe *w = calloc(nw, 32), *a = calloc(n, 32), *b = calloc(n, 32), *c = calloc(n, 32);
  uint8_t *known = calloc(nw, 1), *hint_done = calloc((size_t)k->n_hints + 1, 1);
  uint8_t *wp = malloc(nw * 32), *scal = malloc(((size_t)k->n_a + k->n_b + k->n_k + n + 8) * 32);
  if (!w || !a || !b || !c || !known || !hint_done || !wp || !scal) {
    set_err(err, errlen, "out of memory");
    goto done;
  }
  memcpy(w[0], FR_ONE_LIMBS, 32);
  known[0] = 1;
  for (size_t i = 0; i < n_in; i++) {
    uint64_t v[4];
    memcpy(v, inputs + i * 32, 32);
    if (!lt_mod(v, FR_Q_LIMBS)) {
      set_err(err, errlen, "input %zu is not < r (the BN254 scalar field)", i);
      rc = LK_EINPUT;
      goto done;
    }
    fr_mul_c(w[1 + i], v, FR_R2_LIMBS);
    known[1 + i] = 1;
  }
  uint64_t r[4], s[4];
  if (rs) {
    memcpy(r, rs, 32);
    memcpy(s, rs + 32, 32);
  } else if (!lk_random_scalar((uint8_t *)r) || !lk_random_scalar((uint8_t *)s)) {
    set_err(err, errlen, "no randomness from the OS");
    goto done;
  }
  {
    solver_t S = {k, w, known, hint_done, err, errlen};
    rc = solve(&S, a, b, c);
    if (rc != LK_OK) goto done;
  }
  double t1 = now_ms();
  /* h: coefficients of (A·B − C)/(Xⁿ − 1) via the coset 5·ωⁱ; the three chains on threads */
  {
    fe *polys[3] = {a, b, c};
    coset_arg args[3];
    pthread_t th[3];
    int started[3] = {0, 0, 0};
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    for (int q = 0; q < 3; q++) {
      args[q] = (coset_arg){k, polys[q], 0};
      if (q > 0 && cpus >= 2 && pthread_create(&th[q], NULL, coset_run, &args[q]) == 0) started[q] = 1;
    }
    coset_run(&args[0]);
    for (int q = 1; q < 3; q++) {
      if (started[q])
        pthread_join(th[q], NULL);
      else
        coset_run(&args[q]);
    }
    if (!args[0].ok || !args[1].ok || !args[2].ok) {
      rc = LK_ENOMEM;
      goto done;
    }
  }
  /* h's coefficients, plain, straight into the Z part of KZ's scalars (after K's n_k) */
  uint8_t *const sA = scal, *const sB = sA + ((size_t)k->n_a + 2) * 32, *const sK = sB + ((size_t)k->n_b + 2) * 32;
  {
    int lanes = 0;
#ifdef REFRACT_HAVE_IFMA
    if (n >= 8 && msm_impl_level() == 2) lanes = lk_h_tail_lanes(k, a, b, c, sK + (size_t)k->n_k * 32);
#endif
    if (!lanes) {
      for (size_t i = 0; i < n; i++) {
        fe t;
        frmul(t, a[i], b[i]);
        mod_sub(t, t, c[i], FR_Q_LIMBS);
        frmul(a[i], t, k->den_inv);
      }
      if (!fr_fft((uint8_t *)a, n, (const uint8_t *)k->omega_inv, NULL)) {
        rc = LK_ENOMEM;
        goto done;
      }
      for (size_t i = 0; i < n; i++) { /* (1/n)·5^-i, then plain */
        frmul(a[i], a[i], k->unshift_br[k->br4[i] / 4]);
        frmul((uint64_t *)(void *)(sK + ((size_t)k->n_k + i) * 32), a[i], PLAIN_ONE);
      }
    }
  }
  double t2 = now_ms();
  /* scalars: plain LE; A's and B's are gathered by the MSM thread that starts with them */
  {
    size_t done_w = 0;
#ifdef REFRACT_HAVE_IFMA
    if (msm_impl_level() == 2) done_w = lk_plain_lanes(w, wp, nw);
#endif
    for (size_t i = done_w; i < nw; i++) frmul((uint64_t *)(void *)(wp + i * 32), w[i], PLAIN_ONE);
  }
  uint8_t jA[96] = {0}, jB1[96] = {0}, jB2[192] = {0}, jKZ[96] = {0}, jKZ2[96] = {0}, jC[96] = {0};
  {
    const lk_gather gA = {sA, wp, k->a_idx, k->n_a, r}, gB = {sB, wp, k->b_idx, k->n_b, s};
    memcpy(sK, wp + (size_t)k->nb_pub * 32, (size_t)k->n_k * 32);
    fe rsm;
    const uint64_t zero[4] = {0, 0, 0, 0};
    {
      fe rm, sm;
      fr_mul_c(rm, r, FR_R2_LIMBS);
      fr_mul_c(sm, s, FR_R2_LIMBS);
      fr_mul_c(rsm, rm, sm);
      fr_mul_c(rsm, rsm, PLAIN_ONE);
      mod_sub(rsm, zero, rsm, FR_Q_LIMBS);
    }
    memcpy(sK + ((size_t)k->n_k + n) * 32, rsm, 32);
    /* the four MSMs: KZ, B2, A, B1 (longest first); with two or more cores on two threads of
     * one-thread MSMs, KZ + A and B2 + B1, else one after the other on every core. Without fixed-base
     * tables KZ + A is the heavier side (up to 1.4× the other on the multi-account keys), so the
     * tail of KZ goes to the other thread (lk_kz_split) as a fifth MSM, added back in C's MSM below. */
    const size_t n_kz = (size_t)k->n_k + n + 1;
    msm_task tasks[5] = {
        {k->t[3], 1, k->kz_ext, sK, n_kz, jKZ, 0, 0},
        {k->t[2], 2, k->b2_ext, sB, (size_t)k->n_b + 2, jB2, 0, 0},
        {k->t[0], 1, k->a_ext, sA, (size_t)k->n_a + 2, jA, 0, 0},
        {k->t[1], 1, k->b1_ext, sB, (size_t)k->n_b + 2, jB1, 0, 0},
        {NULL, 1, NULL, NULL, 0, jKZ2, 0, 0},
    };
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const char *serial = getenv("REFRACT_LIGHT_MSM_SERIAL");
    if (cpus >= 2 && !(serial && *serial == '1')) {
      if (!k->t[3]) {
        const size_t keep = k->kz_keep;
        if (keep > 0 && keep < n_kz) {
          tasks[0].n = keep;
          tasks[4].bases = k->kz_ext + keep * 64;
          tasks[4].scalars = sK + keep * 32;
          tasks[4].n = n_kz - keep;
        }
      }
      msm_list other = {gB, {&tasks[1], &tasks[3], &tasks[4]}, tasks[4].n ? 3 : 2};
      pthread_t th;
      const int started = pthread_create(&th, NULL, msm_list_run, &other) == 0;
      msm_list mine = {gA, {&tasks[0], &tasks[2], NULL}, 2};
      msm_list_run(&mine);
      if (started)
        pthread_join(th, NULL);
      else
        msm_list_run(&other);
    } else {
      lk_gather_run(&gA);
      lk_gather_run(&gB);
      for (int q = 0; q < 4; q++) {
        tasks[q].threads = 0;
        msm_task_run(&tasks[q]);
      }
    }
    for (int q = 0; q < 5; q++)
      if (tasks[q].rc < 0) goto oom;
  }
  {
    /* C = KZ (+ its tail) + s·A + r·B1 */
    uint8_t bases[4 * 64], sc[4 * 32], affB[128], affC[64];
    g1_jac_to_aff(bases, jKZ);
    g1_jac_to_aff(bases + 64, jA);
    g1_jac_to_aff(bases + 128, jB1);
    g1_jac_to_aff(bases + 192, jKZ2); /* all zero (infinity) when KZ was not split */
    memcpy(sc, PLAIN_ONE, 32);
    memcpy(sc + 32, s, 32);
    memcpy(sc + 64, r, 32);
    memcpy(sc + 96, PLAIN_ONE, 32);
    if (msm_g1(bases, sc, 32, 4, 1, jC) < 0) goto oom;
    g1_jac_to_aff(affC, jC);
    g2_jac_to_aff(affB, jB2);
    to_plain(out, bases + 64, 2);
    to_plain(out + 64, affB, 4);
    to_plain(out + 192, affC, 2);
  }
  double t3 = now_ms();
  {
    /* π_B = Σ wᵢ·B2ᵢ + β2 + s·δ2 of the key's points: in G2 by construction, not checked again */
    const int v = lk_verify(k, out, wp + 32, (size_t)k->nb_pub - 1, 0, err, errlen);
    if (v != 1) {
      if (v == 0) set_err(err, errlen, "the proof does not verify against the key's verifying key (prover bug or damaged key)");
      rc = LK_EVERIFY;
      memset(out, 0, 256);
      goto done;
    }
  }
  if (times) {
    times[LK_T_SOLVE] = t1 - t0;
    times[LK_T_H] = t2 - t1;
    times[LK_T_MSM] = t3 - t2;
    times[LK_T_VERIFY] = now_ms() - t3;
  }
  rc = LK_OK;
  goto done;
oom:
  set_err(err, errlen, "out of memory in an MSM");
  rc = LK_ENOMEM;
done:
  free(w);
  free(a);
  free(b);
  free(c);
  free(known);
  free(hint_done);
  free(wp);
  free(scal);
  return rc;
}
