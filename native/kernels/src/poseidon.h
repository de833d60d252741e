/* circomlib-compatible Poseidon over the BN254 scalar field (Fr), 1..6 inputs.
 * Byte interface: every field element is 32 bytes, big-endian, canonical (< r). */
#ifndef REFRACT_POSEIDON_H
#define REFRACT_POSEIDON_H
#include <stddef.h>
#include <stdint.h>

#define POSEIDON_MAX_INPUTS 7

/* Hashes n (1..7) inputs, `in` = n × 32 bytes BE, `out` = 32 bytes BE.
 * Returns -1 on success, otherwise the index (0..n-1) of the first input that is >= r
 * (nothing is written to `out` in that case). n must be within 1..7 (checked by the caller). */
int poseidon_hash_be(const uint8_t *in, size_t n, uint8_t *out);

/* Hashes `count` independent tuples of `arity` inputs each: in = count × arity × 32 bytes,
 * out = count × 32 bytes. Returns -1 on success, otherwise the flat index (tuple*arity + k)
 * of the first out-of-range input; tuples before it have been written. */
long poseidon_hash_batch_be(const uint8_t *in, size_t arity, size_t count, uint8_t *out);

/* Batch kernel in use: "ifma" (eight lanes, AVX-512 IFMA; the default where the CPU has it) or
 * "scalar" (the selected multiplication backend, one tuple at a time). Same results either way. */
const char *poseidon_batch_impl_name(void);

/* Forces the batch kernel ("ifma" or "scalar"); returns 0 if it is not available here.
 * Process-wide; meant for tests and benchmarks. */
int poseidon_select_batch_impl(const char *name);

/* Name of the multiplication backend in use: "adx" (x86-64 BMI2/ADX asm) or "c". */
const char *poseidon_impl_name(void);

/* Forces a backend ("c" or "adx"); returns 0 if it is not available on this CPU/build.
 * Process-wide; meant for tests and benchmarks. */
int poseidon_select_impl(const char *name);

#endif
