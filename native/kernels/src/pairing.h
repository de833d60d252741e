/* BN254 optimal ate pairing and Refract's Groth16 verifier (snarkjs' groth16.verify in C).
 *
 * Points are handed in as plain (not Montgomery) little-endian 32-byte integers, affine:
 *   G1 = x ‖ y (64 bytes), G2 = x.c0 ‖ x.c1 ‖ y.c0 ‖ y.c1 (128 bytes), all bytes zero = infinity
 *   (neither (0, 0) is on the curve nor on the twist). Fq12 values come out in the same plain form,
 *   in the tower ffjavascript uses (Fq12 = Fq6[w]/(w² − v), Fq6 = Fq2[v]/(v³ − (9 + u)),
 *   Fq2 = Fq[u]/(u² + 1)): c0.c0.c0, c0.c0.c1, c0.c1.c0, …, c1.c2.c1 (12 × 32 bytes).
 *
 * The pairing is the Miller loop of 6z + 2 (z = 4965661367192848881) with the two Frobenius
 * additions, then the final exponentiation of wasmcurves / libff (easy part, then the hard part by
 * exponentiations by z), so its values equal ffjavascript's `bn128.pairing` byte for byte
 * (test/prover.pairing.test.ts). Variable time: for verification only, never for secrets. */
#ifndef REFRACT_PAIRING_H
#define REFRACT_PAIRING_H
#include <stddef.h>
#include <stdint.h>

#define PAIRING_OK 0
#define PAIRING_EARG 1 /* malformed input: a coordinate ≥ q, a point off its curve or (G2) outside the order-r subgroup,
                          a public signal ≥ r, a wrong length; the message names it */

/* e(P, Q) for P in G1 (64 bytes) and Q in G2 (128 bytes), written to out (384 bytes).
 * Returns PAIRING_OK or PAIRING_EARG (err names the point). */
int bn254_pairing(const uint8_t p[64], const uint8_t q[128], uint8_t out[384], char *err, size_t errlen);

/* Public signals g16_verify takes at most (a bound on its memory; the circuits here have 1 or 2). */
#define G16_VERIFY_MAX_PUBLIC 65536u

/* Verification key bytes for n_public public signals:
 * α1 (64) ‖ β2 (128) ‖ γ2 (128) ‖ δ2 (128) ‖ IC_0 … IC_n_public (64 each). */
size_t g16_vk_bytes(size_t n_public);

/* Groth16 verification: e(−π_A, π_B) · e(α1, β2) · e(vk_x, γ2) · e(π_C, δ2) = 1 with
 * vk_x = IC_0 + Σ public_i · IC_i, one multi-Miller loop and one final exponentiation.
 *   vk       g16_vk_bytes(n_public) bytes
 *   proof    256 bytes: π_A (G1), π_B (G2), π_C (G1), like g16_prove's output
 *   publics  n_public × 32 bytes, plain little-endian, each < r
 * Checks: every coordinate < q, every point on its curve, π_B in the order-r subgroup when check_b (a
 * proof this process just made from the key's points is in it by construction: 0 skips the 253
 * doublings, about an eighth of the verification) (the key's points come from our own setup or
 * from Light's key: on their curves, not checked for the subgroup here), α1, β2, γ2, δ2 finite,
 * public signals < r, n_public ≤ G16_VERIFY_MAX_PUBLIC. Sets *valid (1 = the proof verifies) and returns PAIRING_OK, or
 * returns PAIRING_EARG (err says which field and why; *valid = 0). */
int g16_verify(const uint8_t *vk, size_t vk_len, const uint8_t proof[256], const uint8_t *publics, size_t n_public, int check_b,
               int *valid, char *err, size_t errlen);

#endif
