/* Radix-2 decimal-in-time NTT over BN254 Fr (see fft.h): bit-reversal permutation, then log2(n)
 * butterfly stages with a twiddle table root^0 … root^(n/2−1) built once per call. The core is
 * compiled for both field multiplications (portable C and BMI2/ADX; the one the MSM uses, chosen by
 * CPUID or msm_select_impl) by inlining it with a constant multiply. */
#include "fft.h"

#include <stdlib.h>
#include <string.h>

#include "fr.h"
#include "msm.h"
#include "scratch.h"

typedef void (*fr_mul_fn)(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]);

FR_INLINE int fft_core(fe *a, size_t n, const uint64_t root[4], const uint64_t *scale, fr_mul_fn mul) {
  const size_t tw_bytes = sizeof(fe) * (n / 2);
  fe *tw = scratch_alloc(tw_bytes);
  if (!tw) return 0;
  memcpy(tw[0], FR_ONE_LIMBS, sizeof(fe));
  for (size_t i = 1; i < n / 2; i++) mul(tw[i], tw[i - 1], root);

  /* bit-reversal permutation */
  for (size_t i = 1, j = 0; i < n; i++) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      fe t;
      memcpy(t, a[i], sizeof(fe));
      memcpy(a[i], a[j], sizeof(fe));
      memcpy(a[j], t, sizeof(fe));
    }
  }
  /* stages: blocks of len, twiddle stride n/len */
  for (size_t len = 2; len <= n; len <<= 1) {
    const size_t half = len >> 1, stride = n / len;
    for (size_t start = 0; start < n; start += len) {
      for (size_t k = 0; k < half; k++) {
        uint64_t *u = a[start + k], *v = a[start + k + half];
        fe t;
        if (k == 0)
          memcpy(t, v, sizeof(fe));
        else
          mul(t, v, tw[k * stride]);
        mod_sub(v, u, t, FR_Q_LIMBS);
        mod_add(u, u, t, FR_Q_LIMBS);
      }
    }
  }
  if (scale)
    for (size_t i = 0; i < n; i++) mul(a[i], a[i], scale);
  scratch_free(tw, tw_bytes);
  return 1;
}

static int fft_c(fe *a, size_t n, const uint64_t root[4], const uint64_t *scale) {
  return fft_core(a, n, root, scale, fr_mul_c);
}
#ifdef FR_HAVE_ADX
static int fft_adx(fe *a, size_t n, const uint64_t root[4], const uint64_t *scale) {
  return fft_core(a, n, root, scale, fr_mul_adx);
}
#endif

int fr_fft(uint8_t *buf, size_t n, const uint8_t *root, const uint8_t *scale) {
  uint64_t w[4], s[4];
  memcpy(w, root, 32); /* little-endian host (x86-64, arm64) */
  if (scale) memcpy(s, scale, 32);
  fe *a = (fe *)(void *)buf; /* x86-64/arm64 tolerate unaligned u64 access */
#ifdef FR_HAVE_ADX
  /* the multiplication the MSM uses (CPUID, or msm_select_impl in tests) */
  if (msm_impl_level() >= 1) return fft_adx(a, n, w, scale ? s : NULL);
#endif
  return fft_c(a, n, w, scale ? s : NULL);
}
