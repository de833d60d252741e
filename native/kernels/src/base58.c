/* Base58 (Bitcoin alphabet) decoding of long strings: the inner-instruction data of Light
 * transactions (noop events, system-program data), which Solana's JSON-RPC returns in base58.
 *
 * Method: the number is kept in little-endian u64 limbs; the string is consumed in chunks of up
 * to 10 digits (58^10 < 2^59) and each chunk does limbs = limbs·58^len + chunk with 128-bit
 * products: ~len/10 · limbs multiply-adds instead of bs58's len · bytes. Leading '1's become
 * leading zero bytes (same bytes as bs58.decode). */
#include "base58.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const int8_t B58_MAP[128] = {
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, 0,  1,  2,  3,  4,  5,  6,  7,  8,  -1, -1, -1, -1, -1, -1, -1, 9,
    10, 11, 12, 13, 14, 15, 16, -1, 17, 18, 19, 20, 21, -1, 22, 23, 24, 25, 26, 27, 28, 29,
    30, 31, 32, -1, -1, -1, -1, -1, -1, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, -1, 44,
    45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, -1, -1, -1, -1, -1};

static const uint64_t POW58[11] = {1ULL,
                                   58ULL,
                                   3364ULL,
                                   195112ULL,
                                   11316496ULL,
                                   656356768ULL,
                                   38068692544ULL,
                                   2207984167552ULL,
                                   128063081718016ULL,
                                   7427658739644928ULL,
                                   430804206899405824ULL};

size_t base58_decoded_max(size_t len) {
  /* log(58)/log(256) < 0.7323; + 1 for rounding */
  return len * 733 / 1000 + 1;
}

long base58_decode(const char *s, size_t len, uint8_t *out, size_t out_cap) {
  size_t zeros = 0;
  while (zeros < len && s[zeros] == '1') zeros++;
  const size_t nlimbs_max = (len - zeros) * 733 / 8000 + 2;
  uint64_t stack_limbs[256];
  uint64_t *limbs = nlimbs_max <= 256 ? stack_limbs : (uint64_t *)malloc(nlimbs_max * 8);
  if (!limbs) return -2;
  size_t nlimbs = 0;
  size_t i = zeros;
  /* the first chunk takes the remainder so that the others are 10 digits */
  size_t chunk = (len - zeros) % 10;
  if (chunk == 0) chunk = 10;
  while (i < len) {
    uint64_t acc = 0;
    for (size_t k = 0; k < chunk; k++, i++) {
      unsigned char c = (unsigned char)s[i];
      int d = c < 128 ? B58_MAP[c] : -1;
      if (d < 0) {
        if (limbs != stack_limbs) free(limbs);
        return -(long)(i + 10); /* invalid character at i: -(i + 10) */
      }
      acc = acc * 58 + (uint64_t)d;
    }
    const uint64_t mult = POW58[chunk];
    uint64_t carry = acc;
    for (size_t j = 0; j < nlimbs; j++) {
      unsigned __int128 t = (unsigned __int128)limbs[j] * mult + carry;
      limbs[j] = (uint64_t)t;
      carry = (uint64_t)(t >> 64);
    }
    if (carry) limbs[nlimbs++] = carry;
    chunk = 10;
  }
  /* big-endian bytes of the number, without leading zero bytes */
  size_t nbytes = nlimbs * 8;
  while (nbytes > 0 && ((limbs[(nbytes - 1) / 8] >> (8 * ((nbytes - 1) % 8))) & 0xff) == 0) nbytes--;
  const size_t total = zeros + nbytes;
  if (total > out_cap) {
    if (limbs != stack_limbs) free(limbs);
    return -1;
  }
  memset(out, 0, zeros);
  for (size_t b = 0; b < nbytes; b++) out[zeros + nbytes - 1 - b] = (uint8_t)(limbs[b / 8] >> (8 * (b % 8)));
  if (limbs != stack_limbs) free(limbs);
  return (long)total;
}
