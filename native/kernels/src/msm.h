/* Multi-scalar multiplication on BN254 G1 and G2 (Pippenger, signed windows; msm_select_algorithm),
 * in ffjavascript/wasmcurves' memory layout so that snarkjs' `multiExpAffine` can be served
 * natively:
 *   bases   n affine points, Montgomery form, little-endian limbs: G1 64 bytes (x, y),
 *           G2 128 bytes (x.c0, x.c1, y.c0, y.c1); the all-zero point is the point at infinity
 *   scalars n little-endian integers of scalar_size (1..32) bytes each, plain (not Montgomery)
 *   out     the sum as a Jacobian point, Montgomery form: G1 96 bytes, G2 192 bytes
 * threads = 0 picks max(1, online CPUs ÷ max(MSMs running in this process, open jobs)).
 * Returns 1 (finite result), 0 (point at infinity; out untouched) or −1 (out of memory). */
#ifndef REFRACT_MSM_H
#define REFRACT_MSM_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int msm_g1(const uint8_t *bases, const uint8_t *scalars, size_t scalar_size, size_t n, unsigned threads,
           uint8_t *out);
int msm_g2(const uint8_t *bases, const uint8_t *scalars, size_t scalar_size, size_t n, unsigned threads,
           uint8_t *out);
/* Adds delta (+1 when a proof starts, −1 when it ends) to the process-wide count of open jobs
 * that share the CPUs with automatic thread counts; returns the new count. */
int msm_jobs(int delta);
/* "ifma" (ADX plus the batch-affine additions on eight AVX-512 IFMA lanes, and the prover's coset
 * FFT on them), "adx" or "c": the field multiplication the MSM (and fft.c, groth16.c) uses. */
const char *msm_impl_name(void);
/* The same as a level: 0 = c, 1 = adx, 2 = ifma (each level includes the one below). */
int msm_impl_level(void);
/* Forces "c", "adx" or "ifma" (tests, benchmarks); returns 0 when unavailable. */
int msm_select_impl(const char *name);
/* "glv" (default), "affine" or "xyzz": the bucket algorithm of msm_g1 / msm_g2 (same results).
 *   xyzz    Pippenger over all n points, signed windows of a width chosen for n, XYZZ buckets
 *           (mixed additions, 10 multiplications each): the algorithm before batch-affine.
 *   affine  drops bases at infinity and zero scalars, sums the bases with scalar 1 in one
 *           unweighted pass, and runs Pippenger on the rest with affine buckets whose additions are
 *           batched behind one field inversion (Montgomery's trick, ≈ 6 multiplications each),
 *           several windows per batch; the window width and count follow the remaining points and
 *           their longest scalar.
 *   glv     affine, and each remaining k·P is split into k1·P + k2·φ(P) with 127-bit k1, k2
 *           (BN254's endomorphism φ(x, y) = (β·x, y), on G2 with the cube root of unity β ∈ Fq that
 *           acts as the same λ): half the windows over twice the points, on G1 and G2. */
const char *msm_algorithm_name(void);
/* Selects the algorithm by name for the process (tests, benchmarks); returns 0 for an unknown name. */
int msm_select_algorithm(const char *name);

/* Fixed-base tables, for bases that never change (a proving key's): the table holds every base
 * times 2^(c·v) for each window v (W = 256/c + 1 rows, c from n), so an MSM over it puts all of a
 * scalar's window digits into one set of buckets: one batch-affine pass over m·W points and one
 * bucket reduction, no doublings, no GLV (inclusion_26_1's A: m·19 additions against 2m·12 plus
 * twelve reductions). Memory: msm_table_size bytes (≈ 20× the bases for a few thousand points).
 *   msm_table_build  group 1 (G1) / 2 (G2), n bases in msm_g1/msm_g2's layout (copied); threads as
 *                    msm_g1's (the columns are built in slices); NULL when out of memory or W·n ≥ 2^32
 *   msm_fixed        msm_g1/msm_g2's semantics for scalars and out, over the table's bases */
typedef struct msm_table msm_table;
size_t msm_table_size(int group, size_t n);
msm_table *msm_table_build(int group, const uint8_t *bases, size_t n, unsigned threads);
size_t msm_table_bytes(const msm_table *t);
size_t msm_table_n(const msm_table *t); /* bases */
const uint8_t *msm_table_bases(const msm_table *t); /* its row 0: the n bases as given */
int msm_table_group(const msm_table *t); /* 1 or 2 */
void msm_table_free(msm_table *t);
int msm_fixed(const msm_table *t, const uint8_t *scalars, size_t scalar_size, unsigned threads, uint8_t *out);
/* Table files (a table built once is read back at the next start instead of rebuilt):
 *   msm_table_save  appends the table to f: a record header (group, window width, count, bytes,
 *                   a checksum of the points) and the points; 0, or −1 on a write error (errno)
 *   msm_table_load  reads one record written by msm_table_save for these bases: NULL, with *why
 *                   saying what is wrong, when it is for other points (group, count, first row not
 *                   the bases byte for byte), inconsistent, truncated or damaged (checksum) */
int msm_table_save(const msm_table *t, FILE *f);
/* 64-bit hash of point bytes (bytes a multiple of 32): the table files' checksum, the table sets' lookup key. */
uint64_t msm_points_hash(const uint8_t *p, size_t bytes);
msm_table *msm_table_load(FILE *f, int group, const uint8_t *bases, size_t n, const char **why);

#endif
