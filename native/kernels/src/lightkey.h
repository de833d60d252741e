/* Groth16 over Light Protocol's proving keys (gnark v0.8.0 / gnark-crypto v0.9.1, BN254): the
 * decoder of Light's `.key` files, the resident key, gnark's R1CS solver and gnark's prover.
 * Layouts: /work/shared/spec/light-keys.md (§1 container, §2 encodings, §3 R1CS and solver, §4 prover).
 *
 * Conversion (once per key file, `refract setup --light-keys`):
 *   lk_decode(key, len)  parses the 16-byte header, the proving key (§2.2, compressed or raw points,
 *                        decompressed with gnark's "lexicographically largest" flag) and the verifying
 *                        key (§2.3), and returns two blobs plus the offset of the R1CS CBOR (parsed by
 *                        the TypeScript side, src/prover/keys/lightKeys.ts, into the R1CS blob).
 *     points blob: u32[16] header {1, n, nbWires, nA, nB, nK, nIC, 0…}, Fr ω, ω⁻¹, n⁻¹ (Montgomery
 *                  LE), α1 β1 δ1 (G1), β2 δ2 (G2), A[nA], B1[nB], K[nK], Z[n] (G1, Z in NATURAL
 *                  order: Z[k] = [τ^k(τⁿ−1)/δ]₁), B2[nB] (G2), InfinityA[nbWires], InfinityB[nbWires];
 *                  points affine, Montgomery, little-endian limbs (msm.h's layout; G2 x.c0 x.c1 y.c0 y.c1)
 *     vk blob:     α1 (64) β2 (128) γ2 (128) δ2 (128) IC[nIC] (64 each), plain little-endian (pairing.h)
 *   The resident file is "RFLKEY01" | u64 LE points, vk, r1cs lengths | the three blobs.
 *     r1cs blob (u32 LE): nbPub (ONE included), nbSec, nbInternal, m, nCoef, nHints; nCoef × 32-byte
 *                  Fr (Montgomery LE, gnark's own limbs); m × {nL, nR, nO, (cid, vid) × (nL+nR+nO)};
 *                  nHints × {hintID, nOut, out wires…, nIn, per input {nT, (cid, vid) × nT}}.
 *
 * Proving: lk_load(file) → key; lk_prove(key, inputs) solves the R1CS (§3.3, NBits the only hint),
 * computes h by gnark's coset method (§4, coset shift 5), runs the MSMs and checks the proof against
 * the key's own verifying key with pairing.c before returning it. Errors: LK_E* with a message. */
#ifndef REFRACT_LIGHTKEY_H
#define REFRACT_LIGHTKEY_H
#include <stddef.h>
#include <stdint.h>

#define LK_OK 0
#define LK_EKEY 1     /* malformed, truncated or foreign key / resident file */
#define LK_EINPUT 2   /* inputs that do not satisfy the circuit (message names the constraint) */
#define LK_ENOMEM 3
#define LK_EVERIFY 4  /* the proof failed the verifying key (never returned to callers as a proof) */

typedef struct {
  uint32_t h[4];        /* header: inclusion height, inclusion N, non-inclusion height, non-inclusion N */
  uint8_t *points;      /* malloc'd points blob */
  size_t points_len;
  uint8_t *vk;          /* malloc'd vk blob */
  size_t vk_len;
  size_t r1cs_offset;   /* byte offset of the R1CS CBOR in the key file */
} lk_decoded;

int lk_decode(const uint8_t *key, size_t len, lk_decoded *out, char *err, size_t errlen);

typedef struct lk_key lk_key;

/* Parses a resident file (the parts kept are copied; the caller's buffer may go). Loads of the same file in one process
 * share one key (reference counted; lk_free releases one reference). */
int lk_load(const uint8_t *file, size_t len, lk_key **out, char *err, size_t errlen);
/* lk_load of the file at `path`, mapped read-only for the parse and unmapped after (no copy of the whole
 * file is ever held). A file already resident (same device, inode, size and mtime) is shared without
 * reading it; one being loaded by another thread is waited for. Errors: LK_EKEY naming the path (cannot
 * open, not a regular file, empty) or lk_load's. */
int lk_load_path(const char *path, lk_key **out, char *err, size_t errlen);
void lk_free(lk_key *k);
size_t lk_key_bytes(const lk_key *k);
/* nbWires, nbPub (ONE included), nbSec, m (constraints), n (domain). */
void lk_info(const lk_key *k, uint32_t *nb_wires, uint32_t *nb_pub, uint32_t *nb_sec, uint32_t *m, uint32_t *n);
/* The two-thread solve: constraints the first and the second thread solve (0 and m: one thread). */
void lk_solve_threads(const lk_key *k, uint32_t *first, uint32_t *second);

/* Fixed-base MSM tables (msm.h) for the key's four MSMs when together they fit max_bytes (else
 * none): read from path when it holds them for these points, else built on `threads` threads and
 * written there (NULL: no file). Once per key (threads share a key: lk_load returns the same key for
 * the same resident file). *source: 0 none, 1 built, 2 read from the file, 3 already there. Returns
 * the tables' bytes. lk_table_need: what they would take. */
size_t lk_tables(lk_key *k, size_t max_bytes, unsigned threads, const char *path, int *source, const char **note);
size_t lk_table_need(const lk_key *k);

/* Stage timings of lk_prove, wall ms. */
enum { LK_T_SOLVE = 0, LK_T_H, LK_T_MSM, LK_T_VERIFY, LK_T_COUNT };

/* inputs: (nbPub − 1 + nbSec) × 32 bytes, plain little-endian, each < r, in gnark's witness order
 * (public without ONE, then secret; light-keys §5). rs: NULL (CSPRNG) or 64 bytes r ‖ s plain LE.
 * out: 256 bytes Ar (x, y), Bs (x.c0, x.c1, y.c0, y.c1), Krs (x, y), plain LE affine coordinates.
 * times: LK_T_COUNT doubles or NULL. */
int lk_prove(const lk_key *k, const uint8_t *inputs, size_t inputs_len, const uint8_t *rs, uint8_t out[256],
             double *times, char *err, size_t errlen);

/* Groth16 check of a proof in lk_prove's layout against the key's verifying key; publics
 * (nbPub − 1) × 32 plain LE; check_b: 1 also checks π_B for the order-r subgroup (a proof from
 * elsewhere), 0 not (lk_prove's own, in it by construction). Returns 1 valid, 0 invalid, −1
 * malformed (err says why). */
int lk_verify(const lk_key *k, const uint8_t proof[256], const uint8_t *publics, size_t n_publics, int check_b,
              char *err, size_t errlen);
/* The key's vk blob (pairing.h's g16_verify layout). */
const uint8_t *lk_vk(const lk_key *k, size_t *len);

#endif
