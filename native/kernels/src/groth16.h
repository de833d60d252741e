/* Refract's Groth16 prover over BN254 for snarkjs zkeys (the same proof snarkjs' groth16.prove
 * makes, all arithmetic in C).
 *
 * g16_load parses a zkey file (iden3 binary "zkey" v1, protocol 1 = Groth16; sections 1 header,
 * 2 Groth16 header, 4 coefficients, 5 A, 6 B1, 7 B2, 8 C, 9 H) ONCE into an addon-owned resident
 * key: points stay in ffjavascript's layout (affine, Montgomery, little-endian; all-zero = infinity),
 * which msm_g1 / msm_g2 take as they are, with the verification-key points the proof needs appended
 * to the A, B1 and B2 tables (α1, δ1 / β1, δ1 / β2, δ2) and the C and H tables stored back to back, so
 * a proof is four MSMs over resident tables plus one of four points. The tables keep only their
 * finite points, each with the index of its witness scalar (in our circuits ~1/3 of the B1/B2 rows
 * and ~1 % of A are infinity), so a proof gathers the scalars it needs and the MSMs never see the
 * rest. Coefficients are kept in Montgomery form with ±1 flagged; the coset shift table
 * ((1/n)·ω_2n^i, stored in bit-reversed order), the FFT twiddles (ω_n^j, ω_n^-j, j < n/2) and the
 * roots of unity are precomputed, so the iFFT (decimation in frequency) and FFT (decimation in
 * time) of each coset chain need neither a twiddle pass nor a bit-reversal pass.
 *
 * g16_prove(key, wtns) is snarkjs' groth16_prove.js: A·w, B·w on the evaluation domain from the
 * coefficients (C = A·B pointwise), iFFT → coset shift by ω_2n^i → FFT for each, H = A·B − C on the
 * odd coset, then π_A = Σ A_i w_i + α1 + r·δ1, π_B = Σ B2_i w_i + β2 + s·δ2, ρ = Σ B1_i w_i + β1 + s·δ1,
 * π_C = Σ_{private} C_i w_i + Σ H_j h_j + s·π_A + r·ρ − r·s·δ1; r and s uniform mod r from getrandom
 * (64 bytes reduced) unless given. Zero witness values cost nothing in the MSMs (no digits) and in
 * the coefficient pass (skipped); ones skip the multiplication.
 *
 * Errors: every function returns a G16_E* code and writes a message into err (≤ errlen bytes). */
#ifndef REFRACT_GROTH16_H
#define REFRACT_GROTH16_H
#include <stddef.h>
#include <stdint.h>

#define G16_OK 0
#define G16_EKEY 1     /* malformed or unsupported zkey */
#define G16_EWITNESS 2 /* malformed witness (format, prime, length, value ≥ r, w[0] ≠ 1) */
#define G16_ENOMEM 3   /* out of memory */
#define G16_EARG 4     /* invalid r / s (≥ r) */

/* Stages timed by g16_prove: index into g16_times.cpu_ms / wall_ms. */
enum {
  G16_T_WITNESS = 0, /* witness parse, range check, Montgomery conversion */
  G16_T_ABC,         /* A·w, B·w from the coefficients, C = A·B */
  G16_T_FFT,         /* 3 × (iFFT, coset shift, FFT) and H = A·B − C */
  G16_T_MSM_A,
  G16_T_MSM_B1,
  G16_T_MSM_B2,
  G16_T_MSM_CH, /* C (private signals) and H in one MSM */
  G16_T_FINISH, /* affine conversions, the 4-point MSM for π_C, output */
  G16_T_COUNT
};
typedef struct {
  double cpu_ms[G16_T_COUNT];  /* thread CPU (CLOCK_THREAD_CPUTIME_ID) of the stage's work: with several
                                  threads, summed over the tasks (the FFT chains, the MSMs) */
  double wall_ms[G16_T_COUNT]; /* CLOCK_MONOTONIC; with several threads, the stage's longest task
                                  (FFT: the longest chain plus H); tasks of different stages overlap */
} g16_times;

typedef struct g16_key g16_key;

/* Parses zkey bytes (not kept: everything needed is copied once into the key).
 * Returns G16_OK and *out, or G16_EKEY / G16_ENOMEM. */
int g16_load(const uint8_t *zkey, size_t len, g16_key **out, char *err, size_t errlen);
void g16_free(g16_key *key);
/* nVars, nPublic (without the constant 1), domainSize, coefficients. */
void g16_info(const g16_key *key, uint32_t *n_vars, uint32_t *n_public, uint32_t *domain_size, uint32_t *n_coefs);
/* Bytes the key holds (resident tables, fixed-base tables included). */
size_t g16_key_bytes(const g16_key *key);
/* Builds fixed-base tables (msm.h msm_table_build) for all four of the key's MSMs when together
 * they fit within max_bytes, else none (a process may hold many keys: only the small, latency-bound
 * ones get tables). About ×1.3 per MSM for ≈20× its points' memory, built once per process: keys
 * with the same points (each prover thread loads its own) share one set, which the first caller
 * builds on `threads` threads (0 = the online CPUs) while the others wait (inclusion_26_1: 38 MiB,
 * ≈ 2.2 s of CPU). Not thread-safe against a running proof of the same key: call it right after
 * g16_load. path (NULL: none) names the key's table file: when the process has no set for these
 * points, the tables are read from it if it holds them (checked: the same points byte for byte, a
 * checksum; 38 MiB in ≈ 30 ms instead of ≈ 1.2 s of building), else built and written to it (a
 * temporary file renamed over it). A bad or unwritable file never fails the call: the tables are
 * built, and g16_table_source's note says what happened. Returns the tables' bytes (0: none). */
size_t g16_build_tables(g16_key *key, size_t max_bytes, unsigned threads, const char *path);
/* Where the key's tables came from (G16_TABLES_*); *note: what went wrong with the table file
 * ("" when nothing did: not readable, for other points, damaged, not writable). */
enum { G16_TABLES_NONE = 0, G16_TABLES_BUILT = 1, G16_TABLES_FILE = 2, G16_TABLES_SHARED = 3 };
int g16_table_source(const g16_key *key, const char **note);
/* The process's shared table sets (built, in use by some key) and their bytes. */
void g16_tables_stats(unsigned *sets, size_t *bytes);
/* Bytes the key's four tables would take (g16_build_tables builds them when this fits its budget). */
size_t g16_table_need(const g16_key *key);
/* Bytes of the key's fixed-base tables. */
size_t g16_table_bytes(const g16_key *key);

/* Proof for a witness in snarkjs' .wtns format (version 2, n8 = 32, BN254 r, nVars values).
 *   rs       NULL (r, s from getrandom) or 64 bytes: r then s, plain little-endian, each < r
 *   threads  threads for this proof (0 = automatic, see msm.h: the online CPUs shared by the open
 *            proofs); with 2 or more the three coset FFT chains and the four MSMs run as tasks,
 *            each MSM on one thread, the longest first (inclusion_26_1 on two cores: 42 ms of
 *            wall time for 78 ms of CPU)
 *   out      256 bytes: π_A (x, y), π_B (x.c0, x.c1, y.c0, y.c1), π_C (x, y), every coordinate a
 *            plain little-endian 32-byte integer < q (affine; the point at infinity, which a random
 *            r, s make practically impossible, is written as x = 0, y = 1 like ffjavascript)
 *   inf      3 flags: π_A, π_B, π_C at infinity
 *   times    per-stage CPU and wall time (may be NULL) */
int g16_prove(const g16_key *key, const uint8_t *wtns, size_t wtns_len, const uint8_t *rs, unsigned threads,
              uint8_t out[256], uint8_t inf[3], g16_times *times, char *err, size_t errlen);

#endif
