#ifndef REFRACT_BASE58_H
#define REFRACT_BASE58_H
#include <stddef.h>
#include <stdint.h>
/* Upper bound of the decoded length of a base58 string of `len` characters. */
size_t base58_decoded_max(size_t len);
/* Decodes `s` (len chars) into out (capacity out_cap). Returns the byte count, -1 when out is too
 * small, -2 on allocation failure, or -(i + 10) for an invalid character at index i. */
long base58_decode(const char *s, size_t len, uint8_t *out, size_t out_cap);
#endif
