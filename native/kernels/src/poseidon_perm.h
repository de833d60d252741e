/* Poseidon permutation template, included once per multiplication backend by poseidon.c.
 * Before including, define FR_MUL (a lazy fr_mul_*_lazy function), FR_MUL_FULL (its fully reducing
 * variant) and PERM_SUFFIX (identifier suffix). State elements are kept in lazy form [0, 2q).
 *
 * Optimised circomlib schedule (circomlibjs poseidon_opt.js; after filecoin neptune):
 *   state += C[0..t); 3 × (S-box, +C, ·M); S-box, +C, ·P;
 *   RP × (state[0] = state[0]^5 + C; sparse mix with S);
 *   3 × (S-box, +C, ·M); S-box, ·M (only state[0] kept). */
#define PERM_CAT2(a, b) a##b
#define PERM_CAT(a, b) PERM_CAT2(a, b)
#define PERM_NAME(n) PERM_CAT(n, PERM_SUFFIX)

FR_INLINE void PERM_NAME(pow5_)(uint64_t x[4]) {
  fe x2, x4;
  FR_MUL(x2, x, x);
  FR_MUL(x4, x2, x2);
  FR_MUL(x, x, x4);
}

/* s = MT · s (MT row-major t × t). */
FR_INLINE void PERM_NAME(mix_)(const int t, uint64_t s[][4], const uint64_t (*MT)[4]) {
  fe n[POSEIDON_T_MAX];
  for (int i = 0; i < t; i++) {
    fe tmp;
    FR_MUL(n[i], MT[i * t], s[0]);
    for (int j = 1; j < t; j++) {
      FR_MUL(tmp, MT[i * t + j], s[j]);
      fr_add_lazy(n[i], n[i], tmp);
    }
  }
  memcpy(s, n, (size_t)t * sizeof(fe));
}

FR_INLINE void PERM_NAME(permute_)(const int t, const int rp, uint64_t s[][4], const uint64_t (*C)[4],
                                   const uint64_t (*S)[4], const uint64_t (*MT)[4],
                                   const uint64_t (*PT)[4]) {
  int i, r;
  for (i = 0; i < t; i++) fr_add_lazy(s[i], s[i], C[i]);
  for (r = 0; r < POSEIDON_RF / 2 - 1; r++) {
    for (i = 0; i < t; i++) {
      PERM_NAME(pow5_)(s[i]);
      fr_add_lazy(s[i], s[i], C[(r + 1) * t + i]);
    }
    PERM_NAME(mix_)(t, s, MT);
  }
  for (i = 0; i < t; i++) {
    PERM_NAME(pow5_)(s[i]);
    fr_add_lazy(s[i], s[i], C[(POSEIDON_RF / 2) * t + i]);
  }
  PERM_NAME(mix_)(t, s, PT);

  const uint64_t (*Cp)[4] = C + (POSEIDON_RF / 2 + 1) * t;
  for (r = 0; r < rp; r++) {
    const uint64_t (*Sr)[4] = S + (2 * t - 1) * r;
    fe s0, tmp;
    PERM_NAME(pow5_)(s[0]);
    fr_add_lazy(s[0], s[0], Cp[r]);
    FR_MUL(s0, Sr[0], s[0]);
    for (i = 1; i < t; i++) {
      FR_MUL(tmp, Sr[i], s[i]);
      fr_add_lazy(s0, s0, tmp);
    }
    for (i = 1; i < t; i++) {
      FR_MUL(tmp, Sr[t + i - 1], s[0]);
      fr_add_lazy(s[i], s[i], tmp);
    }
    memcpy(s[0], s0, sizeof(fe));
  }

  const uint64_t (*Cf)[4] = Cp + rp;
  for (r = 0; r < POSEIDON_RF / 2 - 1; r++) {
    for (i = 0; i < t; i++) {
      PERM_NAME(pow5_)(s[i]);
      fr_add_lazy(s[i], s[i], Cf[r * t + i]);
    }
    PERM_NAME(mix_)(t, s, MT);
  }
  for (i = 0; i < t; i++) PERM_NAME(pow5_)(s[i]);
  {
    fe acc, tmp;
    FR_MUL(acc, MT[0], s[0]);
    for (int j = 1; j < t; j++) {
      FR_MUL(tmp, MT[j], s[j]);
      fr_add_lazy(acc, acc, tmp);
    }
    memcpy(s[0], acc, sizeof(fe));
  }
}

/* hash_<t><suffix>(in, out): in = (t−1) × 32 BE bytes, out = 32 BE bytes.
 * Returns −1, or the index of the first input >= r (out untouched). */
#define PERM_DEFINE_HASH(T)                                                                  \
  static int PERM_NAME(PERM_CAT(hash_, T))(const uint8_t *in, uint8_t *out) {                \
    fe s[T], x;                                                                              \
    static const uint64_t one[4] = {1, 0, 0, 0};                                             \
    memset(s[0], 0, sizeof(fe));                                                             \
    for (int i = 1; i < T; i++) {                                                            \
      if (!fr_load_be(x, in + 32 * (i - 1))) return i - 1;                                   \
      FR_MUL(s[i], x, FR_R2_LIMBS);                                                          \
    }                                                                                        \
    PERM_NAME(permute_)(T, POSEIDON_RP_##T, s, POSEIDON_C_##T, POSEIDON_S_##T,               \
                        (const uint64_t (*)[4])POSEIDON_MT_##T,                              \
                        (const uint64_t (*)[4])POSEIDON_PT_##T);                             \
    FR_MUL_FULL(x, s[0], one); /* out of Montgomery form, canonical */                       \
    fr_store_be(out, x);                                                                     \
    return -1;                                                                               \
  }

PERM_DEFINE_HASH(2)
PERM_DEFINE_HASH(3)
PERM_DEFINE_HASH(4)
PERM_DEFINE_HASH(5)
PERM_DEFINE_HASH(6)
PERM_DEFINE_HASH(7)
PERM_DEFINE_HASH(8)

static const poseidon_hash_fn PERM_NAME(hash_table_)[POSEIDON_MAX_INPUTS + 1] = {
    0,
    PERM_NAME(hash_2),
    PERM_NAME(hash_3),
    PERM_NAME(hash_4),
    PERM_NAME(hash_5),
    PERM_NAME(hash_6),
    PERM_NAME(hash_7),
    PERM_NAME(hash_8),
};

#undef PERM_DEFINE_HASH
#undef PERM_NAME
#undef PERM_CAT
#undef PERM_CAT2
