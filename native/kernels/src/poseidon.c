/* circomlib Poseidon over BN254 Fr for 1..7 inputs (t = 2..8): x^5 S-box, RF = 8,
 * RP = 56/57/56/60/60/63/64, capacity element 0, output state[0]. Constants: circomlibjs
 * poseidon_constants_opt (optimised form), converted by gen-constants.mjs.
 * The permutation is compiled twice (portable C multiply and BMI2/ADX asm multiply);
 * the ADX build is selected at first use when CPUID reports BMI2 and ADX. */
#include "poseidon.h"

#include "fr.h"

typedef int (*poseidon_hash_fn)(const uint8_t *in, uint8_t *out);

#define FR_MUL fr_mul_c_lazy
#define FR_MUL_FULL fr_mul_c
#define PERM_SUFFIX _c
#include "poseidon_perm.h"
#undef FR_MUL
#undef FR_MUL_FULL
#undef PERM_SUFFIX

#ifdef FR_HAVE_ADX
#define FR_MUL fr_mul_adx_lazy
#define FR_MUL_FULL fr_mul_adx
#define PERM_SUFFIX _adx
#include "poseidon_perm.h"
#undef FR_MUL
#undef FR_MUL_FULL
#undef PERM_SUFFIX
#endif

/* Selected table; written once at first use or by poseidon_select_impl. Benign race: every
 * thread computes the same default. */
static const poseidon_hash_fn *volatile selected = 0;

static const poseidon_hash_fn *hash_table(void) {
  const poseidon_hash_fn *t = selected;
  if (t) return t;
  t = hash_table__c;
#ifdef FR_HAVE_ADX
  if (fr_cpu_has_adx()) t = hash_table__adx;
#endif
  selected = t;
  return t;
}

int poseidon_select_impl(const char *name) {
  if (strcmp(name, "c") == 0) {
    selected = hash_table__c;
    return 1;
  }
#ifdef FR_HAVE_ADX
  if (strcmp(name, "adx") == 0 && fr_cpu_has_adx()) {
    selected = hash_table__adx;
    return 1;
  }
#endif
  return 0;
}

const char *poseidon_impl_name(void) {
#ifdef FR_HAVE_ADX
  if (hash_table() == hash_table__adx) return "adx";
#endif
  (void)hash_table();
  return "c";
}

int poseidon_hash_be(const uint8_t *in, size_t n, uint8_t *out) {
  if (n < 1 || n > POSEIDON_MAX_INPUTS) return 0;
  return hash_table()[n](in, out);
}

static long hash_batch_scalar(const uint8_t *in, size_t arity, size_t count, uint8_t *out) {
  poseidon_hash_fn f = hash_table()[arity];
  const size_t stride = arity * 32;
  for (size_t k = 0; k < count; k++) {
    int bad = f(in + k * stride, out + k * 32);
    if (bad >= 0) return (long)(k * arity + (size_t)bad);
  }
  return -1;
}

#include "poseidon_ifma.h"

/* Batch kernel: 1 = eight-lane IFMA (default where available), 0 = the scalar permutation. */
static volatile int batch_ifma = -1;

static int use_ifma(void) {
  int v = batch_ifma;
  if (v < 0) {
#ifdef POSEIDON_HAVE_IFMA
    v = ifma_available();
#else
    v = 0;
#endif
    batch_ifma = v;
  }
  return v;
}

int poseidon_select_batch_impl(const char *name) {
  if (strcmp(name, "scalar") == 0) {
    batch_ifma = 0;
    return 1;
  }
#ifdef POSEIDON_HAVE_IFMA
  if (strcmp(name, "ifma") == 0 && ifma_available()) {
    batch_ifma = 1;
    return 1;
  }
#endif
  return 0;
}

const char *poseidon_batch_impl_name(void) { return use_ifma() ? "ifma" : "scalar"; }

long poseidon_hash_batch_be(const uint8_t *in, size_t arity, size_t count, uint8_t *out) {
  if (arity < 1 || arity > POSEIDON_MAX_INPUTS) return 0;
#ifdef POSEIDON_HAVE_IFMA
  /* Two or more tuples: one eight-lane pass costs about as much as two scalar hashes. */
  if (count >= 2 && use_ifma()) return ifma_hash_batch_be(in, arity, count, out, hash_batch_scalar);
#endif
  return hash_batch_scalar(in, arity, count, out);
}
