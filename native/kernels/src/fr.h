/* BN254 scalar field Fr = GF(r), r = 0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001.
 * Montgomery form with R = 2^256, four little-endian u64 limbs.
 * Two multiplications with identical results:
 *   fr_mul_c[_lazy]   — portable C (unsigned __int128), CIOS;
 *   fr_mul_adx[_lazy] — x86-64 inline asm using MULX/ADCX/ADOX (BMI2 + ADX), the same CIOS schedule
 *                       as gnark-crypto's generated amd64 code; only called after a CPUID check.
 * Both use the "no final carry" CIOS shortcut, valid because r[3] < 2^63 − 1.
 *
 * Lazy reduction: the Poseidon permutation keeps elements in [0, 2q) ("lazy" form). For a, b < 2q
 * the CIOS intermediate stays below 3q < 2^256 (no carry is lost) and the result
 * (a·b + m·q)/2^256 < 4q²/2^256 + q < 1.76q < 2q, so the *_lazy multiplications skip the final
 * conditional subtraction; fr_add_lazy subtracts 2q. Canonical (< q) values are produced only when
 * converting out of Montgomery form (a multiplication by 1 then one conditional subtraction of q). */
#ifndef REFRACT_FR_H
#define REFRACT_FR_H
#include <stdint.h>
#include <string.h>

#include "poseidon_constants.h"

typedef unsigned __int128 u128;
typedef uint64_t fe[4];

#define FR_INLINE static inline __attribute__((always_inline))

#define Q0 0x43e1f593f0000001ULL
#define Q1 0x2833e84879b97091ULL
#define Q2 0xb85045b68181585dULL
#define Q3 0x30644e72e131a029ULL

static const uint64_t FR_Q_LIMBS[4] = FR_Q;
static const uint64_t FR_R2_LIMBS[4] = FR_R2;
/* Montgomery 1 in Fr: 2^256 mod r. */
static const uint64_t FR_ONE_LIMBS[4] = FR_ONE;
static const uint64_t FR_NINV_WORD = FR_NINV;

#if defined(__x86_64__)
#include <x86intrin.h>
#define ADC(c, a, b, out) _addcarry_u64((c), (a), (b), (out))
#define SBB(c, a, b, out) _subborrow_u64((c), (a), (b), (out))
#else
static inline unsigned char ADC(unsigned char c, uint64_t a, uint64_t b, unsigned long long *out) {
  u128 s = (u128)a + b + c;
  *out = (uint64_t)s;
  return (unsigned char)(s >> 64);
}
static inline unsigned char SBB(unsigned char c, uint64_t a, uint64_t b, unsigned long long *out) {
  u128 d = (u128)a - b - c;
  *out = (uint64_t)d;
  return (unsigned char)((d >> 64) & 1);
}
#endif

/* 1 when the 4-limb integer x is below m. */
FR_INLINE int lt_mod(const uint64_t x[4], const uint64_t m[4]) {
  for (int i = 3; i >= 0; i--) {
    if (x[i] < m[i]) return 1;
    if (x[i] > m[i]) return 0;
  }
  return 0;
}

/* Modular helpers for any 4-limb modulus m with 2m < 2^256 (Fr here, Fq in fq.h), on fully
 * reduced values (< m); r may alias a or b. */
/* r = t − m if t ≥ m else t (t < 2m). */
FR_INLINE void mod_reduce_once(uint64_t r[4], const uint64_t t[4], const uint64_t m[4]) {
  unsigned long long s0, s1, s2, s3;
  unsigned char b;
  b = SBB(0, t[0], m[0], &s0);
  b = SBB(b, t[1], m[1], &s1);
  b = SBB(b, t[2], m[2], &s2);
  b = SBB(b, t[3], m[3], &s3);
  r[0] = b ? t[0] : s0;
  r[1] = b ? t[1] : s1;
  r[2] = b ? t[2] : s2;
  r[3] = b ? t[3] : s3;
}

/* r = a + b mod m. */
FR_INLINE void mod_add(uint64_t r[4], const uint64_t a[4], const uint64_t b[4], const uint64_t m[4]) {
  unsigned long long t[4];
  unsigned char c;
  c = ADC(0, a[0], b[0], &t[0]);
  c = ADC(c, a[1], b[1], &t[1]);
  c = ADC(c, a[2], b[2], &t[2]);
  (void)ADC(c, a[3], b[3], &t[3]);
  mod_reduce_once(r, (const uint64_t *)t, m);
}

/* r = a − b mod m. */
FR_INLINE void mod_sub(uint64_t r[4], const uint64_t a[4], const uint64_t b[4], const uint64_t m[4]) {
  unsigned long long t0, t1, t2, t3;
  unsigned char br, c;
  br = SBB(0, a[0], b[0], &t0);
  br = SBB(br, a[1], b[1], &t1);
  br = SBB(br, a[2], b[2], &t2);
  br = SBB(br, a[3], b[3], &t3);
  const uint64_t k = (uint64_t)0 - br; /* m if it borrowed, else 0 */
  c = ADC(0, t0, m[0] & k, &t0);
  c = ADC(c, t1, m[1] & k, &t1);
  c = ADC(c, t2, m[2] & k, &t2);
  (void)ADC(c, t3, m[3] & k, &t3);
  r[0] = t0;
  r[1] = t1;
  r[2] = t2;
  r[3] = t3;
}

/* r = t − q if t ≥ q else t (requires t < 2q). */
FR_INLINE void fr_reduce_once(uint64_t r[4], uint64_t t0, uint64_t t1, uint64_t t2, uint64_t t3) {
  unsigned long long s0, s1, s2, s3;
  unsigned char b;
  b = SBB(0, t0, Q0, &s0);
  b = SBB(b, t1, Q1, &s1);
  b = SBB(b, t2, Q2, &s2);
  b = SBB(b, t3, Q3, &s3);
  r[0] = b ? t0 : s0;
  r[1] = b ? t1 : s1;
  r[2] = b ? t2 : s2;
  r[3] = b ? t3 : s3;
}

#define Q2_0 0x87c3eb27e0000002ULL /* 2q */
#define Q2_1 0x5067d090f372e122ULL
#define Q2_2 0x70a08b6d0302b0baULL
#define Q2_3 0x60c89ce5c2634053ULL

/* r = a + b reduced into [0, 2q) (a, b < 2q, so a + b < 4q < 2^256; r may alias). */
FR_INLINE void fr_add_lazy(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  unsigned long long t0, t1, t2, t3, s0, s1, s2, s3;
  unsigned char c;
  c = ADC(0, a[0], b[0], &t0);
  c = ADC(c, a[1], b[1], &t1);
  c = ADC(c, a[2], b[2], &t2);
  (void)ADC(c, a[3], b[3], &t3);
  c = SBB(0, t0, Q2_0, &s0);
  c = SBB(c, t1, Q2_1, &s1);
  c = SBB(c, t2, Q2_2, &s2);
  c = SBB(c, t3, Q2_3, &s3);
  r[0] = c ? t0 : s0;
  r[1] = c ? t1 : s1;
  r[2] = c ? t2 : s2;
  r[3] = c ? t3 : s3;
}

/* One CIOS round: t += a·bi, then t = (t + m·q) / 2^64 with m = t0·(−q^-1). */
#define FR_CIOS_STEP(bi, first)                                                             \
  do {                                                                                      \
    u128 p;                                                                                 \
    uint64_t c, c2, m;                                                                      \
    p = (u128)a0 * (bi) + ((first) ? 0 : t0);     t0 = (uint64_t)p; c = (uint64_t)(p >> 64); \
    m = t0 * FR_NINV;                                                                       \
    p = (u128)m * Q0 + t0;                        c2 = (uint64_t)(p >> 64);                 \
    p = (u128)a1 * (bi) + ((first) ? 0 : t1) + c; t1 = (uint64_t)p; c = (uint64_t)(p >> 64); \
    p = (u128)m * Q1 + t1 + c2;                   t0 = (uint64_t)p; c2 = (uint64_t)(p >> 64); \
    p = (u128)a2 * (bi) + ((first) ? 0 : t2) + c; t2 = (uint64_t)p; c = (uint64_t)(p >> 64); \
    p = (u128)m * Q2 + t2 + c2;                   t1 = (uint64_t)p; c2 = (uint64_t)(p >> 64); \
    p = (u128)a3 * (bi) + ((first) ? 0 : t3) + c; t3 = (uint64_t)p; c = (uint64_t)(p >> 64); \
    p = (u128)m * Q3 + t3 + c2;                   t2 = (uint64_t)p; c2 = (uint64_t)(p >> 64); \
    t3 = c + c2;                                                                            \
  } while (0)

/* r ≡ a·b·2^-256 (mod q), r < 2q for a, b < 2q; portable (r may alias a or b). */
FR_INLINE void fr_mul_c_lazy(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  const uint64_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
  const uint64_t b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
  uint64_t t0 = 0, t1 = 0, t2 = 0, t3 = 0;
  FR_CIOS_STEP(b0, 1);
  FR_CIOS_STEP(b1, 0);
  FR_CIOS_STEP(b2, 0);
  FR_CIOS_STEP(b3, 0);
  r[0] = t0;
  r[1] = t1;
  r[2] = t2;
  r[3] = t3;
}

/* r = a·b·2^-256 mod q, fully reduced (< q) for a·b < 2^256·q; r may alias. */
FR_INLINE void fr_mul_c(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  fe t;
  fr_mul_c_lazy(t, a, b);
  fr_reduce_once(r, t[0], t[1], t[2], t[3]);
}

#if defined(__x86_64__) && !defined(REFRACT_NO_ASM)
#define FR_HAVE_ADX 1
#include <cpuid.h>
/* Montgomery reduction round (shared by all four rounds): t = (t + m·q) / 2^64. */
#define FR_ASM_REDUCE                      \
  "movq %[t0], %%rdx\n\t"                  \
  "imulq %[ninv], %%rdx\n\t"               \
  "xorl %k[ax], %k[ax]\n\t"                \
  "mulxq 0(%[q]), %[ax], %[hi]\n\t"        \
  "adcxq %[t0], %[ax]\n\t"                 \
  "movq %[hi], %[t0]\n\t"                  \
  "adcxq %[t1], %[t0]\n\t"                 \
  "mulxq 8(%[q]), %[ax], %[t1]\n\t"        \
  "adoxq %[ax], %[t0]\n\t"                 \
  "adcxq %[t2], %[t1]\n\t"                 \
  "mulxq 16(%[q]), %[ax], %[t2]\n\t"       \
  "adoxq %[ax], %[t1]\n\t"                 \
  "adcxq %[t3], %[t2]\n\t"                 \
  "mulxq 24(%[q]), %[ax], %[t3]\n\t"       \
  "adoxq %[ax], %[t2]\n\t"                 \
  "movl $0, %k[ax]\n\t"                    \
  "adcxq %[ax], %[t3]\n\t"                 \
  "adoxq %[A], %[t3]\n\t"

/* t += a·b[i] (i ≥ 1), A = high word. */
#define FR_ASM_MULADD(off)                 \
  "xorl %k[ax], %k[ax]\n\t"                \
  "movq " #off "(%[b]), %%rdx\n\t"         \
  "mulxq 0(%[a]), %[ax], %[hi]\n\t"        \
  "adoxq %[ax], %[t0]\n\t"                 \
  "adcxq %[hi], %[t1]\n\t"                 \
  "mulxq 8(%[a]), %[ax], %[hi]\n\t"        \
  "adoxq %[ax], %[t1]\n\t"                 \
  "adcxq %[hi], %[t2]\n\t"                 \
  "mulxq 16(%[a]), %[ax], %[hi]\n\t"       \
  "adoxq %[ax], %[t2]\n\t"                 \
  "adcxq %[hi], %[t3]\n\t"                 \
  "mulxq 24(%[a]), %[ax], %[A]\n\t"        \
  "adoxq %[ax], %[t3]\n\t"                 \
  "movl $0, %k[ax]\n\t"                    \
  "adcxq %[ax], %[A]\n\t"                  \
  "adoxq %[ax], %[A]\n\t"

/* Montgomery product for any 4-limb modulus m with m[3] < 2^63 − 1 (the "no final carry" CIOS
 * shortcut): r ≡ a·b·2^-256 (mod m), r < 2m for a, b < 2m; MULX/ADCX/ADOX (r may alias a or b).
 * `ninv` points at −m^-1 mod 2^64. Used for Fr here and for Fq in fq.h. */
FR_INLINE void mont_mul_adx_lazy(uint64_t r[4], const uint64_t a[4], const uint64_t b[4], const uint64_t q[4],
                                 const uint64_t *ninv) {
  uint64_t t0, t1, t2, t3, A, hi, ax;
  __asm__(
      /* t = a·b[0] */
      "xorl %k[ax], %k[ax]\n\t"
      "movq 0(%[b]), %%rdx\n\t"
      "mulxq 0(%[a]), %[t0], %[t1]\n\t"
      "mulxq 8(%[a]), %[ax], %[t2]\n\t"
      "adoxq %[ax], %[t1]\n\t"
      "mulxq 16(%[a]), %[ax], %[t3]\n\t"
      "adoxq %[ax], %[t2]\n\t"
      "mulxq 24(%[a]), %[ax], %[A]\n\t"
      "adoxq %[ax], %[t3]\n\t"
      "movl $0, %k[ax]\n\t"
      "adoxq %[ax], %[A]\n\t"
      FR_ASM_REDUCE
      FR_ASM_MULADD(8)
      FR_ASM_REDUCE
      FR_ASM_MULADD(16)
      FR_ASM_REDUCE
      FR_ASM_MULADD(24)
      FR_ASM_REDUCE
      : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [A] "=&r"(A),
        [hi] "=&r"(hi), [ax] "=&r"(ax)
      : [a] "r"(a), [b] "r"(b), [q] "r"(q), [ninv] "m"(*ninv),
        "m"(*(const uint64_t(*)[4])a), "m"(*(const uint64_t(*)[4])b), "m"(*(const uint64_t(*)[4])q)
      : "rdx", "cc");
  (void)hi;
  (void)ax;
  r[0] = t0;
  r[1] = t1;
  r[2] = t2;
  r[3] = t3;
}

/* r ≡ a·b·2^-256 (mod q), r < 2q for a, b < 2q; MULX/ADCX/ADOX (r may alias a or b). */
FR_INLINE void fr_mul_adx_lazy(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  mont_mul_adx_lazy(r, a, b, FR_Q_LIMBS, &FR_NINV_WORD);
}

/* 1 when CPUID reports BMI2 and ADX (MULX/ADCX/ADOX may be executed). */
static inline int fr_cpu_has_adx(void) {
  unsigned a, b, c, d;
  return __get_cpuid_max(0, 0) >= 7 && __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
         (b & (1u << 8)) /* BMI2 */ && (b & (1u << 19)) /* ADX */;
}

/* Fully reduced variant of fr_mul_adx_lazy. */
FR_INLINE void fr_mul_adx(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  fe t;
  fr_mul_adx_lazy(t, a, b);
  fr_reduce_once(r, t[0], t[1], t[2], t[3]);
}
#endif

/* ---- byte conversion (32 bytes, big-endian) ---- */

static inline uint64_t fr_load_be64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}
static inline void fr_store_be64(uint8_t *p, uint64_t v) {
  v = __builtin_bswap64(v);
  memcpy(p, &v, 8);
}

/* Loads 32 BE bytes as a plain (non-Montgomery) integer; returns 0 if it is >= q. */
FR_INLINE int fr_load_be(uint64_t x[4], const uint8_t *p) {
  x[0] = fr_load_be64(p + 24);
  x[1] = fr_load_be64(p + 16);
  x[2] = fr_load_be64(p + 8);
  x[3] = fr_load_be64(p);
  unsigned long long d;
  unsigned char b;
  b = SBB(0, x[0], Q0, &d);
  b = SBB(b, x[1], Q1, &d);
  b = SBB(b, x[2], Q2, &d);
  b = SBB(b, x[3], Q3, &d);
  return b; /* borrow ⇔ x < q */
}

FR_INLINE void fr_store_be(uint8_t *p, const uint64_t x[4]) {
  fr_store_be64(p, x[3]);
  fr_store_be64(p + 8, x[2]);
  fr_store_be64(p + 16, x[1]);
  fr_store_be64(p + 24, x[0]);
}

#endif
