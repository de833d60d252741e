/* Radix-2 number-theoretic transform over BN254 Fr in ffjavascript's layout (Montgomery form,
 * R = 2^256, 32-byte little-endian elements, fully reduced), so that snarkjs' `Fr.fft` / `Fr.ifft`
 * can be served natively:
 *   fr_fft(buf, n, root, scale): in place, X_k = scale · Σ_j x_j · root^(j·k) for k < n,
 *   natural order in and out. n must be a power of two ≥ 2; root a primitive n-th root of unity
 *   and scale a field element, both 32 bytes Montgomery LE (scale NULL = 1). The inverse transform
 *   is root⁻¹ with scale n⁻¹.
 * Returns 1, or 0 when out of memory (buf untouched). */
#ifndef REFRACT_FFT_H
#define REFRACT_FFT_H
#include <stddef.h>
#include <stdint.h>

int fr_fft(uint8_t *buf, size_t n, const uint8_t *root, const uint8_t *scale);

#endif
