/* Eight-lane Poseidon for batches: AVX-512 IFMA (vpmadd52luq / vpmadd52huq), included once by
 * poseidon.c after the scalar permutations (it reuses their constants and fr.h helpers).
 *
 * Representation: an element is five 52-bit limbs in Montgomery form with R = 2^260; a `v8` holds
 * eight independent elements, limb j of lane k in l[j] lane k. Multiplication is radix-2^52
 * operand-scanning Montgomery (CIOS); its result is carry-normalised (limbs < 2^52).
 *
 * Bounds (q < 2^254, 2^260 > 84q): for a, b < 2^260 with normalised limbs, mul gives
 * a·b/2^260 + q; every state value is kept below 2^258 (≈ 21q):
 * - a product with a constant (< q) is < 1.25q, so a mix row of t ≤ 8 products is < 10q, and
 *   with a round constant < 11q;
 * - pow5 of any state value (< 17.3q, e.g. a partial-round lane entering the last full rounds)
 *   is < 1.3q;
 * - the partial rounds add a product (< 1.25q) to s[1..t) every round, so those lanes are folded
 *   back (subtract 16q when the top limb says the value is ≥ 16q), which keeps them < 17.3q.
 * Sums are carry-normalised (signed: the subtraction may borrow) before they are multiplied.
 *
 * The schedule is poseidon_perm.h's (circomlibjs poseidon_opt); constants are the scalar tables
 * moved from R = 2^256 to R = 2^260 (× 16 mod q) once, at first use. Selected at run time when the
 * CPU reports AVX-512F and AVX-512 IFMA (and the OS saves zmm state, checked by
 * __builtin_cpu_supports). */
#include "fr_ifma.h"
#ifdef REFRACT_HAVE_IFMA
#define POSEIDON_HAVE_IFMA 1
#include <pthread.h>
#include <stdlib.h>

/* An Fr element as five 52-bit limbs, Montgomery form R = 2^260 (constants). */
typedef uint64_t fe52[5];

static const fe52 IFMA_R2 = {0xb852d16da6f5ULL, 0xc621620cddce3ULL, 0xaf1b95343ffb6ULL, 0xc3c15e103e7c2ULL,
                             0x281528fa122ULL}; /* 2^520 mod q: mul by it enters Montgomery form */

IFMA_INLINE void v8_add(v8 *r, const v8 *a, const v8 *b) {
  for (int j = 0; j < 5; j++) r->l[j] = _mm512_add_epi64(a->l[j], b->l[j]);
}

/* r += c (a constant), normalised. */
IFMA_INLINE void v8_add_const(v8 *r, const uint64_t *c) {
  for (int j = 0; j < 5; j++) r->l[j] = _mm512_add_epi64(r->l[j], ifma_bc(c[j]));
  v8_norm(r);
}


IFMA_INLINE void v8_pow5(v8 *x) {
  v8 x2, x4;
  fr8_mul(&x2, x, x);
  fr8_mul(&x4, &x2, &x2);
  fr8_mul(x, x, &x4);
}

/* s = MT · s (MT row-major t × t, fe52 constants). */
IFMA_INLINE void v8_mix(const int t, v8 *s, const fe52 *MT) {
  v8 n[POSEIDON_T_MAX], tmp;
  for (int i = 0; i < t; i++) {
    fr8_mul_const(&n[i], MT[i * t], &s[0]);
    for (int j = 1; j < t; j++) {
      fr8_mul_const(&tmp, MT[i * t + j], &s[j]);
      v8_add(&n[i], &n[i], &tmp);
    }
    v8_norm(&n[i]);
  }
  for (int i = 0; i < t; i++) s[i] = n[i];
}

/* Constants of one width in fe52 form (same layout as the scalar tables). */
typedef struct {
  int t, rp;
  fe52 *C, *S, *MT, *PT;
} ifma_consts;

static ifma_consts ifma_tables[POSEIDON_T_MAX + 1];
static pthread_once_t ifma_once = PTHREAD_ONCE_INIT;
static int ifma_ready = 0;

/* Montgomery-2^256 constant (canonical, < q) → Montgomery-2^260 (×16 mod q) as 52-bit limbs. */
static void ifma_convert(fe52 out, const uint64_t in[4]) {
  uint64_t x[4] = {in[0], in[1], in[2], in[3]};
  for (int k = 0; k < 4; k++) {
    uint64_t d[4];
    d[0] = x[0] << 1;
    d[1] = (x[1] << 1) | (x[0] >> 63);
    d[2] = (x[2] << 1) | (x[1] >> 63);
    d[3] = (x[3] << 1) | (x[2] >> 63);
    fr_reduce_once(x, d[0], d[1], d[2], d[3]); /* 2x < 2q < 2^255 */
  }
  out[0] = x[0] & IFMA_MASK52;
  out[1] = ((x[0] >> 52) | (x[1] << 12)) & IFMA_MASK52;
  out[2] = ((x[1] >> 40) | (x[2] << 24)) & IFMA_MASK52;
  out[3] = ((x[2] >> 28) | (x[3] << 36)) & IFMA_MASK52;
  out[4] = x[3] >> 16;
}

static fe52 *ifma_convert_table(const uint64_t (*in)[4], size_t n) {
  fe52 *out = malloc(n * sizeof(fe52));
  if (!out) return NULL;
  for (size_t i = 0; i < n; i++) ifma_convert(out[i], in[i]);
  return out;
}

#define IFMA_TABLE(T)                                                                                   \
  do {                                                                                                  \
    ifma_consts *c = &ifma_tables[T];                                                                   \
    c->t = T;                                                                                           \
    c->rp = POSEIDON_RP_##T;                                                                            \
    c->C = ifma_convert_table(POSEIDON_C_##T, sizeof POSEIDON_C_##T / sizeof POSEIDON_C_##T[0]);         \
    c->S = ifma_convert_table(POSEIDON_S_##T, sizeof POSEIDON_S_##T / sizeof POSEIDON_S_##T[0]);         \
    c->MT = ifma_convert_table((const uint64_t (*)[4])POSEIDON_MT_##T, (size_t)(T) * (T));               \
    c->PT = ifma_convert_table((const uint64_t (*)[4])POSEIDON_PT_##T, (size_t)(T) * (T));               \
    if (!c->C || !c->S || !c->MT || !c->PT) return;                                                     \
  } while (0)

static void ifma_init(void) {
  if (!ifma52_cpu_ok()) return;
  IFMA_TABLE(2);
  IFMA_TABLE(3);
  IFMA_TABLE(4);
  IFMA_TABLE(5);
  IFMA_TABLE(6);
  IFMA_TABLE(7);
  IFMA_TABLE(8);
  ifma_ready = 1;
}

/* 1 when the eight-lane kernel can run here (CPU support and constants ready). */
static int ifma_available(void) {
  pthread_once(&ifma_once, ifma_init);
  return ifma_ready;
}

IFMA_TARGET static void ifma_permute(const ifma_consts *k, v8 *s) {
  const int t = k->t, rp = k->rp;
  int i, r;
  for (i = 0; i < t; i++) v8_add_const(&s[i], k->C[i]);
  for (r = 0; r < POSEIDON_RF / 2 - 1; r++) {
    for (i = 0; i < t; i++) {
      v8_pow5(&s[i]);
      v8_add_const(&s[i], k->C[(r + 1) * t + i]);
    }
    v8_mix(t, s, k->MT);
  }
  for (i = 0; i < t; i++) {
    v8_pow5(&s[i]);
    v8_add_const(&s[i], k->C[(POSEIDON_RF / 2) * t + i]);
  }
  v8_mix(t, s, k->PT);

  const fe52 *Cp = k->C + (POSEIDON_RF / 2 + 1) * t;
  for (r = 0; r < rp; r++) {
    const fe52 *Sr = k->S + (2 * t - 1) * r;
    v8 s0, tmp;
    v8_pow5(&s[0]);
    v8_add_const(&s[0], Cp[r]);
    fr8_mul_const(&s0, Sr[0], &s[0]);
    for (i = 1; i < t; i++) {
      fr8_mul_const(&tmp, Sr[i], &s[i]);
      v8_add(&s0, &s0, &tmp);
    }
    for (i = 1; i < t; i++) {
      fr8_mul_const(&tmp, Sr[t + i - 1], &s[0]);
      v8_add(&s[i], &s[i], &tmp);
      v8_fold(&s[i], FR52_16R, FR52_TOP16);
    }
    v8_norm(&s0);
    s[0] = s0;
  }

  const fe52 *Cf = Cp + rp;
  for (r = 0; r < POSEIDON_RF / 2 - 1; r++) {
    for (i = 0; i < t; i++) {
      v8_pow5(&s[i]);
      v8_add_const(&s[i], Cf[r * t + i]);
    }
    v8_mix(t, s, k->MT);
  }
  for (i = 0; i < t; i++) v8_pow5(&s[i]);
  {
    v8 acc, tmp;
    fr8_mul_const(&acc, k->MT[0], &s[0]);
    for (int j = 1; j < t; j++) {
      fr8_mul_const(&tmp, k->MT[j], &s[j]);
      v8_add(&acc, &acc, &tmp);
    }
    v8_norm(&acc);
    s[0] = acc;
  }
}

/* Hashes `lanes` (1..8) tuples of `arity` inputs (canonical 4×64 little-endian limbs, already
 * range-checked) into 32-byte BE outputs `out + 32·k`. */
IFMA_TARGET static void ifma_hash8(size_t arity, const uint64_t (*x)[IFMA_LANES][4], size_t lanes, uint8_t *out) {
  const ifma_consts *k = &ifma_tables[arity + 1];
  v8 s[POSEIDON_T_MAX];
  __attribute__((aligned(64))) uint64_t buf[5][IFMA_LANES];
  for (int j = 0; j < 5; j++) s[0].l[j] = _mm512_setzero_si512();
  for (size_t i = 0; i < arity; i++) {
    for (size_t ln = 0; ln < IFMA_LANES; ln++) {
      const uint64_t *v = x[i][ln];
      buf[0][ln] = v[0] & IFMA_MASK52;
      buf[1][ln] = ((v[0] >> 52) | (v[1] << 12)) & IFMA_MASK52;
      buf[2][ln] = ((v[1] >> 40) | (v[2] << 24)) & IFMA_MASK52;
      buf[3][ln] = ((v[2] >> 28) | (v[3] << 36)) & IFMA_MASK52;
      buf[4][ln] = v[3] >> 16;
    }
    v8 in;
    for (int j = 0; j < 5; j++) in.l[j] = _mm512_load_si512((const void *)buf[j]);
    fr8_mul_const(&s[i + 1], IFMA_R2, &in); /* x·2^260 mod q (< 2q) */
  }
  ifma_permute(k, s);
  /* Leave Montgomery form: ·1 gives x·2^-260·2^260 = the canonical value, < 2q. */
  static const fe52 one = {1, 0, 0, 0, 0};
  fr8_mul_const(&s[0], one, &s[0]);
  for (int j = 0; j < 5; j++) _mm512_store_si512((void *)buf[j], s[0].l[j]);
  for (size_t ln = 0; ln < lanes; ln++) {
    uint64_t r[4];
    fr_reduce_once(r, buf[0][ln] | (buf[1][ln] << 52), (buf[1][ln] >> 12) | (buf[2][ln] << 40),
                   (buf[2][ln] >> 24) | (buf[3][ln] << 28), (buf[3][ln] >> 36) | (buf[4][ln] << 16));
    fr_store_be(out + 32 * ln, r);
  }
}

/* Batch entry: hashes `count` tuples eight at a time (the last group padded with zero inputs).
 * Same contract as poseidon_hash_batch_be; a group holding an input ≥ q is left to `scalar`,
 * which writes the tuples before the bad input and reports its flat index. */
static long ifma_hash_batch_be(const uint8_t *in, size_t arity, size_t count, uint8_t *out,
                               long (*scalar)(const uint8_t *, size_t, size_t, uint8_t *)) {
  const size_t stride = arity * 32;
  uint64_t x[POSEIDON_MAX_INPUTS][IFMA_LANES][4];
  for (size_t g = 0; g < count; g += IFMA_LANES) {
    const size_t lanes = count - g < IFMA_LANES ? count - g : IFMA_LANES;
    memset(x, 0, sizeof x);
    for (size_t ln = 0; ln < lanes; ln++)
      for (size_t i = 0; i < arity; i++)
        if (!fr_load_be(x[i][ln], in + (g + ln) * stride + 32 * i)) {
          long bad = scalar(in + g * stride, arity, lanes, out + 32 * g);
          return bad < 0 ? bad : bad + (long)(g * arity);
        }
    ifma_hash8(arity, (const uint64_t (*)[IFMA_LANES][4])x, lanes, out + 32 * g);
  }
  return -1;
}
#endif
