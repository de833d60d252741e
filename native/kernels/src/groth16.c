/* Groth16 prover over BN254 for snarkjs zkeys (see groth16.h). Field arithmetic from fr.h / fq.h,
 * MSMs from msm.c (msm_g1 / msm_g2, ffjavascript's point layout); the NTTs are coset_core's own
 * (decimation-in-frequency iFFT and decimation-in-time FFT over the key's twiddle tables, the same
 * butterflies as fft.c's fr_fft without its per-call twiddle and bit-reversal passes).
 * The hot Fr loops (witness conversion, coefficient pass, NTTs, coset shift, H) are compiled for both
 * field multiplications (portable C and BMI2/ADX, the one msm.c chose) like fft.c. */
#include "groth16.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/random.h>
#endif

#include "fft_ifma.h"
#include "fq_ops.h"
#include "fr.h"
#include "msm.h"
#include "scratch.h"

static const uint64_t PLAIN_ONE[4] = {1, 0, 0, 0};

enum { COEF_GENERAL = 0, COEF_ONE = 1, COEF_MINUS_ONE = 2 };

typedef struct {
  uint32_t c;   /* constraint (evaluation-domain index) */
  uint32_t s;   /* signal */
  uint32_t m;   /* 0 = A, 1 = B */
  uint32_t kind; /* COEF_* */
  fe v;         /* coefficient, Montgomery form */
} g16_coef;

struct g16_key {
  uint32_t n_vars, n_public, domain, n_coefs;
  g16_coef *coefs;
  uint8_t *a_ext;  /* n_a G1: the finite A_i, α1, δ1 */
  uint8_t *b1_ext; /* n_b G1: B1_i (B1_i or B2_i finite), β1, δ1 */
  uint8_t *b2_ext; /* n_b G2: B2_i (same rows), β2, δ2 */
  uint8_t *ch;     /* n_ch G1: the finite C_i (private signals), then the finite H_j */
  uint8_t delta1[64];
  /* the MSM tables without their points at infinity (key rows that no witness value reaches):
   * idx[j] is the scalar (index into the prover's scalar array) of point j */
  uint32_t n_a, n_b, n_ch;      /* points kept of a_ext, b1_ext / b2_ext (one map), ch */
  uint32_t *a_idx, *b_idx, *ch_idx;
  fe *shift_br;    /* domain: (1/n)·ω_2n^i at position bitrev(i), Montgomery */
  fe *tw, *tw_inv; /* domain/2: ω_n^j, ω_n^-j (Montgomery), the FFTs' twiddles */
  /* fixed-base tables of the four MSMs (g16_build_tables; NULL = the plain MSM over the points),
   * owned by a process-wide shared set (several threads load the same key) */
  msm_table *t_a, *t_b1, *t_b2, *t_ch;
  struct g16_tables *tables;
  int table_source;     /* G16_TABLES_* */
  char table_note[512]; /* what went wrong with the table file, "" when nothing did */
  size_t bytes;
};

static void set_err(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || !errlen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

/* ---------------------------------------------------------------------------------------------
 * Fr helpers (not hot: portable multiplication) */

static void frm(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) { fr_mul_c(r, a, b); }

/* a^e for a Montgomery a and a plain 256-bit exponent e. */
static void fr_pow(uint64_t r[4], const uint64_t a[4], const uint64_t e[4]) {
  fe acc, base;
  memcpy(acc, FR_ONE_LIMBS, 32);
  memcpy(base, a, 32);
  for (int i = 0; i < 256; i++) {
    if ((e[i >> 6] >> (i & 63)) & 1) frm(acc, acc, base);
    frm(base, base, base);
  }
  memcpy(r, acc, 32);
}

static int fe_eq(const uint64_t a[4], const uint64_t b[4]) {
  return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
}
static int fe_is_zero(const uint64_t a[4]) { return (a[0] | a[1] | a[2] | a[3]) == 0; }

static void fr_inv(uint64_t r[4], const uint64_t a[4]) {
  const uint64_t e[4] = {Q0 - 2, Q1, Q2, Q3};
  fr_pow(r, a, e);
}

/* ω_n (power = log2 n) exactly as ffjavascript builds Fr.w: nqr = the smallest quadratic
 * non-residue ≥ 2, w[s] = nqr^t with r − 1 = t·2^s, w[k] = w[k+1]². Returns 0 when power > s. */
static int fr_root_of_unity(uint64_t out[4], unsigned power) {
  const uint64_t rm1[4] = {Q0 - 1, Q1, Q2, Q3};
  uint64_t half[4], t[4];
  for (int i = 0; i < 4; i++) half[i] = (rm1[i] >> 1) | (i < 3 ? rm1[i + 1] << 63 : 0);
  unsigned s = 0;
  memcpy(t, rm1, 32);
  while ((t[0] & 1) == 0) {
    for (int i = 0; i < 4; i++) t[i] = (t[i] >> 1) | (i < 3 ? t[i + 1] << 63 : 0);
    s++;
  }
  if (power > s) return 0;
  fe nqr, p, minus_one;
  const uint64_t zero[4] = {0, 0, 0, 0};
  mod_sub(minus_one, zero, FR_ONE_LIMBS, FR_Q_LIMBS);
  for (uint64_t k = 2;; k++) {
    const uint64_t kk[4] = {k, 0, 0, 0};
    frm(nqr, kk, FR_R2_LIMBS); /* Montgomery k */
    fr_pow(p, nqr, half);
    if (fe_eq(p, minus_one)) break;
  }
  fe w;
  fr_pow(w, nqr, t);
  for (unsigned k = s; k > power; k--) frm(w, w, w);
  memcpy(out, w, 32);
  return 1;
}

/* ---------------------------------------------------------------------------------------------
 * Fq / Fq2 for the few point operations outside the MSMs: fq_ops.h */

/* 1 when the 64-byte affine Montgomery G1 point is infinity (all zero) or on y² = x³ + 3 with
 * coordinates < q. */
static int g1_valid(const uint8_t p[64], const fq_t *three) {
  fq_t x, y, y2, x3;
  memcpy(&x, p, 32);
  memcpy(&y, p + 32, 32);
  if (fq_is_zero(&x) && fq_is_zero(&y)) return 1;
  if (!lt_mod(x.v, FQ_Q_LIMBS) || !lt_mod(y.v, FQ_Q_LIMBS)) return 0;
  fq_mul(&y2, &y, &y);
  fq_mul(&x3, &x, &x);
  fq_mul(&x3, &x3, &x);
  fq_add(&x3, &x3, three);
  return memcmp(&x3, &y2, 32) == 0;
}

/* 1 when every coordinate of the G2 point is < q (the curve equation is left to verification). */
static int g2_coords_ok(const uint8_t p[128]) {
  for (int k = 0; k < 4; k++) {
    uint64_t v[4];
    memcpy(v, p + 32 * k, 32);
    if (!lt_mod(v, FQ_Q_LIMBS)) return 0;
  }
  return 1;
}

/* ---------------------------------------------------------------------------------------------
 * iden3 binary files ("zkey", "wtns"): magic, u32 version, u32 nSections, then (u32 type,
 * u64 size, data) per section. */

typedef struct {
  const uint8_t *p;
  uint64_t size;
} section_t;

static uint32_t rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static uint64_t rd64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* Fills sec[1..max_type] (first occurrence); returns 0 with a message on a malformed file. */
static int read_sections(const uint8_t *buf, size_t len, const char *magic, section_t *sec, unsigned max_type,
                         uint32_t *version, char *err, size_t errlen, const char *what) {
  memset(sec, 0, sizeof(section_t) * (max_type + 1));
  if (len < 12 || memcmp(buf, magic, 4) != 0) {
    set_err(err, errlen, "%s: not a %s file (bad magic or shorter than 12 bytes)", what, magic);
    return 0;
  }
  *version = rd32(buf + 4);
  const uint32_t n = rd32(buf + 8);
  size_t pos = 12;
  for (uint32_t i = 0; i < n; i++) {
    if (len - pos < 12) {
      set_err(err, errlen, "%s: truncated section table (section %u of %u at byte %zu)", what, i + 1, n, pos);
      return 0;
    }
    const uint32_t type = rd32(buf + pos);
    const uint64_t size = rd64(buf + pos + 4);
    pos += 12;
    if (size > len - pos) {
      set_err(err, errlen, "%s: section %u claims %llu bytes, only %zu left", what, type, (unsigned long long)size,
              len - pos);
      return 0;
    }
    if (type <= max_type && !sec[type].p) {
      sec[type].p = buf + pos;
      sec[type].size = size;
    }
    pos += size;
  }
  return 1;
}

/* ---------------------------------------------------------------------------------------------
 * Load */

/* ---------------------------------------------------------------------------------------------
 * Fixed-base tables shared by every key of the process with the same points: each prover thread
 * loads its own key, the tables (tens of MiB) exist once. Sets are found by a hash of the points and
 * confirmed byte for byte against the tables' row 0 (the points themselves); the first loader builds
 * (on `threads` threads) while the others wait for it. */
static const int TABLE_GROUP[4] = {2, 1, 1, 1}; /* B2, B1, A, C+H */

typedef struct g16_tables {
  struct g16_tables *next;
  uint64_t hash;
  size_t n[4];
  msm_table *t[4]; /* B2, B1, A, C+H; NULL where n = 0 */
  unsigned refs;
  int state; /* 0 building, 1 ready, −1 failed (out of memory, or too many points): kept, so later
                loads of the same key do not build again in vain */
} g16_tables;

static pthread_mutex_t tables_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tables_cv = PTHREAD_COND_INITIALIZER;
static g16_tables *tables_list;

static uint64_t tables_hash(const uint8_t *const bases[4], const size_t n[4]) {
  uint64_t h = 0;
  for (int i = 0; i < 4; i++) h = (h ^ msm_points_hash(bases[i], n[i] * (TABLE_GROUP[i] == 1 ? 64 : 128))) * 0x100000001b3ULL;
  return h;
}

static int tables_match(const g16_tables *e, uint64_t hash, const uint8_t *const bases[4], const size_t n[4]) {
  if (e->hash != hash) return 0;
  for (int i = 0; i < 4; i++) {
    if (e->n[i] != n[i]) return 0;
    if (e->state == 1 && n[i] &&
        memcmp(msm_table_bases(e->t[i]), bases[i], n[i] * (TABLE_GROUP[i] == 1 ? 64 : 128)) != 0)
      return 0;
  }
  return 1;
}

static void tables_unlink_free(g16_tables *e) {
  for (g16_tables **p = &tables_list; *p; p = &(*p)->next)
    if (*p == e) {
      *p = e->next;
      break;
    }
  for (int i = 0; i < 4; i++) msm_table_free(e->t[i]);
  free(e);
}

/* Table files: "REFRTBL1", a u32 mask of the tables present (bit i: B2, B1, A, C+H), a u32 0, then
 * one msm_table_save record per table present. */
static const char TABLE_FILE_MAGIC[8] = {'R', 'E', 'F', 'R', 'T', 'B', 'L', '1'};

/* Bit i set when the set has table i (its MSM has points): the table file header's presence mask. */
static unsigned tables_mask(const g16_tables *e) {
  unsigned mask = 0;
  for (int i = 0; i < 4; i++) mask |= e->n[i] ? 1u << i : 0;
  return mask;
}

/* Reads the set's tables from path: 1 when all are there and right, 0 when there is no file, −1
 * (note says why) when it is unreadable, for other points, truncated or damaged. */
static int tables_file_load(g16_tables *e, const char *path, const uint8_t *const bases[4], char *note, size_t notelen) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    if (errno == ENOENT) return 0;
    set_err(note, notelen, "cannot open (%s), rebuilt: table file %s", strerror(errno), path);
    return -1;
  }
  char magic[8];
  uint32_t head[2];
  const char *why = NULL;
  const unsigned mask = tables_mask(e);
  if (fread(magic, 8, 1, f) != 1 || memcmp(magic, TABLE_FILE_MAGIC, 8) != 0 || fread(head, sizeof head, 1, f) != 1 ||
      head[1] != 0)
    why = "not a table file of this version";
  else if (head[0] != mask)
    why = "a table is for other points (the tables present differ)";
  for (int i = 0; i < 4 && !why; i++)
    if (e->n[i]) e->t[i] = msm_table_load(f, TABLE_GROUP[i], bases[i], e->n[i], &why);
  fclose(f);
  if (!why) return 1;
  for (int i = 0; i < 4; i++) {
    msm_table_free(e->t[i]);
    e->t[i] = NULL;
  }
  set_err(note, notelen, "%s, rebuilt: table file %s", why, path);
  return -1;
}

/* Writes the set's tables to path (through a temporary file renamed over it, so readers never see a
 * partial file); 0, or −1 with note saying why. */
static int tables_file_save(const g16_tables *e, const char *path, char *note, size_t notelen) {
  const size_t plen = strlen(path);
  char *tmp = malloc(plen + 48);
  if (!tmp) {
    set_err(note, notelen, "table file %s: not written (out of memory)", path);
    return -1;
  }
  static atomic_uint seq; /* unique per process; the pid makes it unique across processes */
  snprintf(tmp, plen + 48, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&seq, 1));
  FILE *f = fopen(tmp, "wb");
  int ok = f != NULL, err = ok ? 0 : errno;
  const uint32_t head[2] = {tables_mask(e), 0};
  if (ok && (fwrite(TABLE_FILE_MAGIC, 8, 1, f) != 1 || fwrite(head, sizeof head, 1, f) != 1)) ok = 0, err = errno;
  for (int i = 0; i < 4 && ok; i++)
    if (e->t[i] && msm_table_save(e->t[i], f) != 0) ok = 0, err = errno;
  if (ok && (fflush(f) != 0 || fsync(fileno(f)) != 0)) ok = 0, err = errno; /* durable before the rename */
  if (f && fclose(f) != 0 && ok) ok = 0, err = errno;
  if (ok && rename(tmp, path) != 0) ok = 0, err = errno;
  if (!ok) {
    set_err(note, notelen, "not written (%s), so the next start builds them again: table file %s", strerror(err ? err : EIO),
            path);
    unlink(tmp);
  }
  free(tmp);
  return ok ? 0 : -1;
}

/* The shared tables for these points (a reference): an existing set of the process (source
 * G16_TABLES_SHARED), else read from path (G16_TABLES_FILE), else built here and written to path
 * (G16_TABLES_BUILT; path may be NULL: no file). note gets what went wrong with the file. NULL when
 * out of memory or a build failed before. */
static g16_tables *tables_acquire(const uint8_t *const bases[4], const size_t n[4], unsigned threads, const char *path,
                                  int *source, char *note, size_t notelen) {
  const uint64_t hash = tables_hash(bases, n);
  pthread_mutex_lock(&tables_mu);
  for (;;) {
    g16_tables *e = tables_list;
    while (e && !tables_match(e, hash, bases, n)) e = e->next;
    if (!e) break;
    if (e->state == 1) {
      e->refs++;
      pthread_mutex_unlock(&tables_mu);
      *source = G16_TABLES_SHARED;
      return e;
    }
    if (e->state == 0) {
      pthread_cond_wait(&tables_cv, &tables_mu); /* another thread builds them: look again once it is done */
      continue;
    }
    pthread_mutex_unlock(&tables_mu); /* failed before: plain MSMs */
    return NULL;
  }
  g16_tables *e = calloc(1, sizeof *e);
  if (!e) {
    pthread_mutex_unlock(&tables_mu);
    return NULL;
  }
  e->hash = hash;
  memcpy(e->n, n, sizeof e->n);
  e->refs = 1;
  e->next = tables_list;
  tables_list = e;
  pthread_mutex_unlock(&tables_mu);
  int ok = 1;
  *source = G16_TABLES_FILE;
  if (!path || tables_file_load(e, path, bases, note, notelen) != 1) {
    *source = G16_TABLES_BUILT;
    for (int i = 0; i < 4 && ok; i++)
      if (n[i] && !(e->t[i] = msm_table_build(TABLE_GROUP[i], bases[i], n[i], threads))) ok = 0;
    /* a second note (the write failed) replaces the first (the file was bad): it is the one to act on */
    if (ok && path) tables_file_save(e, path, note, notelen);
  }
  pthread_mutex_lock(&tables_mu);
  if (!ok) {
    for (int i = 0; i < 4; i++) {
      msm_table_free(e->t[i]);
      e->t[i] = NULL;
    }
    e->state = -1;
    e->refs = 0;
    e = NULL;
  } else {
    e->state = 1;
  }
  pthread_cond_broadcast(&tables_cv);
  pthread_mutex_unlock(&tables_mu);
  return e;
}

void g16_tables_stats(unsigned *sets, size_t *bytes) {
  *sets = 0;
  *bytes = 0;
  pthread_mutex_lock(&tables_mu);
  for (const g16_tables *e = tables_list; e; e = e->next)
    if (e->state == 1) {
      (*sets)++;
      for (int i = 0; i < 4; i++) *bytes += msm_table_bytes(e->t[i]);
    }
  pthread_mutex_unlock(&tables_mu);
}

static void tables_release(g16_tables *e) {
  if (!e) return;
  pthread_mutex_lock(&tables_mu);
  if (--e->refs == 0) tables_unlink_free(e);
  pthread_mutex_unlock(&tables_mu);
}

void g16_free(g16_key *k) {
  if (!k) return;
  free(k->coefs);
  free(k->a_ext);
  free(k->b1_ext);
  free(k->b2_ext);
  free(k->ch);
  free(k->a_idx);
  free(k->b_idx);
  free(k->ch_idx);
  free(k->shift_br);
  free(k->tw);
  free(k->tw_inv);
  tables_release(k->tables);
  free(k);
}

/* The number of points of the key's four MSMs, in table order (B2, B1, A, C+H: TABLE_GROUP). */
static void table_ns(const g16_key *k, size_t ns[4]) {
  ns[0] = ns[1] = k->n_b;
  ns[2] = k->n_a;
  ns[3] = k->n_ch;
}

size_t g16_table_need(const g16_key *k) {
  size_t ns[4];
  table_ns(k, ns);
  size_t need = 0;
  for (int i = 0; i < 4; i++) need += msm_table_size(TABLE_GROUP[i], ns[i]);
  return need;
}

size_t g16_build_tables(g16_key *k, size_t max_bytes, unsigned threads, const char *path) {
  if (k->tables) return g16_table_bytes(k); /* built already */
  size_t ns[4];
  table_ns(k, ns);
  if (g16_table_need(k) > max_bytes) return 0; /* all or nothing: a process holds many keys, only small ones get tables */
  const uint8_t *bases[4] = {k->b2_ext, k->b1_ext, k->a_ext, k->ch};
  int source = G16_TABLES_NONE;
  g16_tables *set = tables_acquire(bases, ns, threads, path, &source, k->table_note, sizeof k->table_note);
  if (!set) return 0; /* out of memory: plain MSMs */
  k->table_source = source;
  k->tables = set;
  k->t_b2 = set->t[0];
  k->t_b1 = set->t[1];
  k->t_a = set->t[2];
  k->t_ch = set->t[3];
  k->bytes += g16_table_bytes(k);
  return g16_table_bytes(k);
}

int g16_table_source(const g16_key *k, const char **note) {
  *note = k->table_note;
  return k->table_source;
}

size_t g16_table_bytes(const g16_key *k) {
  return msm_table_bytes(k->t_a) + msm_table_bytes(k->t_b1) + msm_table_bytes(k->t_b2) + msm_table_bytes(k->t_ch);
}

/* An MSM of the key: over its fixed-base table when it has one, else over its points (one thread). */
static int key_msm(const msm_table *t, int group, const uint8_t *bases, const uint8_t *scalars, uint32_t n, uint8_t *out) {
  if (t) return msm_fixed(t, scalars, 32, 1, out);
  return group == 1 ? msm_g1(bases, scalars, 32, n, 1, out) : msm_g2(bases, scalars, 32, n, 1, out);
}

void g16_info(const g16_key *k, uint32_t *n_vars, uint32_t *n_public, uint32_t *domain_size, uint32_t *n_coefs) {
  *n_vars = k->n_vars;
  *n_public = k->n_public;
  *domain_size = k->domain;
  *n_coefs = k->n_coefs;
}

size_t g16_key_bytes(const g16_key *k) { return k->bytes; }

static void *xalloc(g16_key *k, size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0) return NULL;
  k->bytes += bytes;
  return p;
}

int g16_load(const uint8_t *z, size_t len, g16_key **out, char *err, size_t errlen) {
  *out = NULL;
  section_t sec[11];
  uint32_t version = 0;
  if (!read_sections(z, len, "zkey", sec, 10, &version, err, errlen, "zkey")) return G16_EKEY;
  if (version != 1) {
    set_err(err, errlen, "zkey: version %u, expected 1", version);
    return G16_EKEY;
  }
  for (unsigned t = 1; t <= 9; t++) {
    if (t == 3) continue; /* IC: verification only */
    if (!sec[t].p) {
      set_err(err, errlen, "zkey: section %u missing", t);
      return G16_EKEY;
    }
  }
  if (sec[1].size < 4 || rd32(sec[1].p) != 1) {
    set_err(err, errlen, "zkey: protocol %u is not Groth16 (1)", sec[1].size < 4 ? 0 : rd32(sec[1].p));
    return G16_EKEY;
  }
  const uint8_t *h = sec[2].p;
  if (sec[2].size != 4 + 32 + 4 + 32 + 12 + 3 * 64 + 3 * 128 || rd32(h) != 32 || rd32(h + 36) != 32) {
    set_err(err, errlen, "zkey: Groth16 header of %llu bytes is not a BN254 header (n8q = n8r = 32, 660 bytes)",
            (unsigned long long)sec[2].size);
    return G16_EKEY;
  }
  uint64_t q[4], r[4];
  memcpy(q, h + 4, 32);
  memcpy(r, h + 40, 32);
  if (!fe_eq(q, FQ_Q_LIMBS) || !fe_eq(r, FR_Q_LIMBS)) {
    set_err(err, errlen, "zkey: curve is not BN254 (q or r differs)");
    return G16_EKEY;
  }
  const uint32_t n_vars = rd32(h + 72), n_public = rd32(h + 76), domain = rd32(h + 80);
  const uint8_t *vk = h + 84; /* α1 64, β1 64, β2 128, γ2 128, δ1 64, δ2 128 */
  const uint8_t *alpha1 = vk, *beta1 = vk + 64, *beta2 = vk + 128, *delta1 = vk + 384, *delta2 = vk + 448;
  unsigned power = 0;
  while (power < 31 && (1u << power) < domain) power++;
  if (domain < 2 || (1u << power) != domain || n_vars < n_public + 1) {
    set_err(err, errlen, "zkey: inconsistent sizes (nVars %u, nPublic %u, domainSize %u: a power of two ≥ 2 is needed)",
            n_vars, n_public, domain);
    return G16_EKEY;
  }
  const uint64_t n_c = (uint64_t)n_vars - n_public - 1;
  const struct {
    unsigned type;
    uint64_t want;
  } sizes[] = {{5, (uint64_t)n_vars * 64}, {6, (uint64_t)n_vars * 64}, {7, (uint64_t)n_vars * 128},
               {8, n_c * 64},              {9, (uint64_t)domain * 64}};
  for (unsigned i = 0; i < 5; i++) {
    if (sec[sizes[i].type].size != sizes[i].want) {
      set_err(err, errlen, "zkey: section %u has %llu bytes, expected %llu for nVars %u, nPublic %u, domainSize %u",
              sizes[i].type, (unsigned long long)sec[sizes[i].type].size, (unsigned long long)sizes[i].want, n_vars,
              n_public, domain);
      return G16_EKEY;
    }
  }
  if (sec[4].size < 4) {
    set_err(err, errlen, "zkey: coefficient section shorter than 4 bytes");
    return G16_EKEY;
  }
  const uint32_t n_coefs = rd32(sec[4].p);
  if (sec[4].size != 4 + (uint64_t)n_coefs * 44) {
    set_err(err, errlen, "zkey: coefficient section has %llu bytes, expected %llu for %u coefficients",
            (unsigned long long)sec[4].size, 4 + (unsigned long long)n_coefs * 44, n_coefs);
    return G16_EKEY;
  }

  g16_key *k = calloc(1, sizeof *k);
  if (!k) goto nomem;
  k->n_vars = n_vars;
  k->n_public = n_public;
  k->domain = domain;
  k->n_coefs = n_coefs;
  fe root, root_inv; /* ω_n, ω_n^-1 (Montgomery): only the twiddle tables below keep them */
  if (!fr_root_of_unity(root, power)) {
    set_err(err, errlen, "zkey: domainSize 2^%u exceeds BN254 Fr's 2-adicity", power);
    g16_free(k);
    return G16_EKEY;
  }
  fr_inv(root_inv, root);

  /* coefficients: the file holds the integer coef·R² mod r (snarkjs writes Fr.mul(coef, R²) out of
   * Montgomery form so that Fr.mul(bytes, plain witness) lands in Montgomery form); we keep coef·R,
   * the Montgomery form of coef, and multiply by the witness in Montgomery form */
  k->coefs = xalloc(k, sizeof(g16_coef) * (n_coefs ? n_coefs : 1));
  if (!k->coefs) goto nomem;
  fe minus_one;
  {
    const uint64_t zero[4] = {0, 0, 0, 0};
    mod_sub(minus_one, zero, FR_ONE_LIMBS, FR_Q_LIMBS);
  }
  for (uint32_t i = 0; i < n_coefs; i++) {
    const uint8_t *c = sec[4].p + 4 + (size_t)i * 44;
    g16_coef *o = &k->coefs[i];
    o->m = rd32(c);
    o->c = rd32(c + 4);
    o->s = rd32(c + 8);
    uint64_t v[4];
    memcpy(v, c + 12, 32);
    if (o->m > 1 || o->c >= domain || o->s >= n_vars || !lt_mod(v, FR_Q_LIMBS)) {
      set_err(err, errlen, "zkey: coefficient %u out of range (matrix %u, constraint %u, signal %u%s)", i, o->m, o->c,
              o->s, lt_mod(v, FR_Q_LIMBS) ? "" : ", value ≥ r");
      g16_free(k);
      return G16_EKEY;
    }
    frm(o->v, v, PLAIN_ONE); /* coef·R²·R⁻¹ = coef·R */
    o->kind = fe_eq(v, FR_ONE_LIMBS) ? COEF_ONE : fe_eq(v, minus_one) ? COEF_MINUS_ONE : COEF_GENERAL;
  }

  fq_t three;
  fq_add(&three, &FQ_ONE, &FQ_ONE);
  fq_add(&three, &three, &FQ_ONE);
  const uint8_t *g1_tables[] = {sec[5].p, sec[6].p, sec[8].p, sec[9].p};
  const uint64_t g1_counts[] = {n_vars, n_vars, n_c, domain};
  const unsigned g1_types[] = {5, 6, 8, 9};
  for (unsigned t = 0; t < 4; t++)
    for (uint64_t i = 0; i < g1_counts[t]; i++)
      if (!g1_valid(g1_tables[t] + i * 64, &three)) {
        set_err(err, errlen, "zkey: section %u point %llu is not on BN254 G1", g1_types[t], (unsigned long long)i);
        g16_free(k);
        return G16_EKEY;
      }
  const uint8_t *vk_g1[] = {alpha1, beta1, delta1};
  for (unsigned t = 0; t < 3; t++)
    if (!g1_valid(vk_g1[t], &three)) {
      set_err(err, errlen, "zkey: verification-key point %s is not on BN254 G1", t == 0 ? "alpha1" : t == 1 ? "beta1" : "delta1");
      g16_free(k);
      return G16_EKEY;
    }
  for (uint64_t i = 0; i < n_vars; i++)
    if (!g2_coords_ok(sec[7].p + i * 128)) {
      set_err(err, errlen, "zkey: section 7 point %llu has a coordinate ≥ q", (unsigned long long)i);
      g16_free(k);
      return G16_EKEY;
    }
  if (!g2_coords_ok(beta2) || !g2_coords_ok(delta2)) {
    set_err(err, errlen, "zkey: verification-key G2 point has a coordinate ≥ q");
    g16_free(k);
    return G16_EKEY;
  }

  /* The MSM tables keep only their finite points, with the index of each point's scalar: a point at
   * infinity (a signal no A, B or C row reaches, ~1/3 of B1/B2 in our circuits) would cost every
   * proof a scan and a scalar read for nothing. B1 and B2 share one map (a row is dropped when
   * both are infinity). The verification-key points go last, at scalar indices n_vars (the
   * constant 1) and n_vars + 1 (r or s); C and H index the private signals then the H scalars. */
  static const uint8_t zero128[128] = {0};
  const uint8_t *A = sec[5].p, *B1 = sec[6].p, *B2 = sec[7].p, *C = sec[8].p, *H = sec[9].p;
  uint32_t na = 2, nb = 2, nch = 0;
  for (uint32_t i = 0; i < n_vars; i++) {
    na += memcmp(A + (size_t)i * 64, zero128, 64) != 0;
    nb += memcmp(B1 + (size_t)i * 64, zero128, 64) != 0 || memcmp(B2 + (size_t)i * 128, zero128, 128) != 0;
  }
  for (uint64_t i = 0; i < n_c; i++) nch += memcmp(C + i * 64, zero128, 64) != 0;
  for (uint32_t i = 0; i < domain; i++) nch += memcmp(H + (size_t)i * 64, zero128, 64) != 0;
  k->a_ext = xalloc(k, (size_t)na * 64);
  k->b1_ext = xalloc(k, (size_t)nb * 64);
  k->b2_ext = xalloc(k, (size_t)nb * 128);
  k->ch = xalloc(k, ((size_t)nch ? nch : 1) * 64);
  k->a_idx = xalloc(k, (size_t)na * 4);
  k->b_idx = xalloc(k, (size_t)nb * 4);
  k->ch_idx = xalloc(k, ((size_t)nch ? nch : 1) * 4);
  k->shift_br = xalloc(k, sizeof(fe) * domain);
  k->tw = xalloc(k, sizeof(fe) * (domain / 2));
  k->tw_inv = xalloc(k, sizeof(fe) * (domain / 2));
  if (!k->a_ext || !k->b1_ext || !k->b2_ext || !k->ch || !k->a_idx || !k->b_idx || !k->ch_idx || !k->shift_br ||
      !k->tw || !k->tw_inv)
    goto nomem;
  k->n_a = na;
  k->n_b = nb;
  k->n_ch = nch;
  {
    uint32_t ja = 0, jb = 0, jc = 0;
    for (uint32_t i = 0; i < n_vars; i++) {
      if (memcmp(A + (size_t)i * 64, zero128, 64) != 0) {
        memcpy(k->a_ext + (size_t)ja * 64, A + (size_t)i * 64, 64);
        k->a_idx[ja++] = i;
      }
      if (memcmp(B1 + (size_t)i * 64, zero128, 64) != 0 || memcmp(B2 + (size_t)i * 128, zero128, 128) != 0) {
        memcpy(k->b1_ext + (size_t)jb * 64, B1 + (size_t)i * 64, 64);
        memcpy(k->b2_ext + (size_t)jb * 128, B2 + (size_t)i * 128, 128);
        k->b_idx[jb++] = i;
      }
    }
    memcpy(k->a_ext + (size_t)ja * 64, alpha1, 64);
    memcpy(k->a_ext + ((size_t)ja + 1) * 64, delta1, 64);
    k->a_idx[ja] = n_vars;
    k->a_idx[ja + 1] = n_vars + 1;
    memcpy(k->b1_ext + (size_t)jb * 64, beta1, 64);
    memcpy(k->b1_ext + ((size_t)jb + 1) * 64, delta1, 64);
    memcpy(k->b2_ext + (size_t)jb * 128, beta2, 128);
    memcpy(k->b2_ext + ((size_t)jb + 1) * 128, delta2, 128);
    k->b_idx[jb] = n_vars;
    k->b_idx[jb + 1] = n_vars + 1;
    for (uint64_t i = 0; i < n_c + domain; i++) {
      const uint8_t *p = i < n_c ? C + i * 64 : H + (i - n_c) * 64;
      if (memcmp(p, zero128, 64) == 0) continue;
      memcpy(k->ch + (size_t)jc * 64, p, 64);
      k->ch_idx[jc++] = (uint32_t)i;
    }
  }
  memcpy(k->delta1, delta1, 64);

  /* shift_br[bitrev(i)] = (1/n)·ω_2n^i: the iFFT's 1/n and snarkjs' batchApplyKey(1, ω_2n) in one
   * factor, in the bit-reversed order the decimation-in-frequency iFFT leaves its output in (so
   * that neither transform needs a bit-reversal pass); tw / tw_inv: ω_n^j, ω_n^-j for j < n/2 */
  fe inc, ninv, nm, cur;
  if (!fr_root_of_unity(inc, power + 1)) {
    /* snarkjs uses Fr.shift when power == s; our circuits never get there */
    set_err(err, errlen, "zkey: domainSize 2^%u needs the 2^%u-th root of unity for the coset (unsupported)", power,
            power + 1);
    g16_free(k);
    return G16_EKEY;
  }
  const uint64_t nplain[4] = {domain, 0, 0, 0};
  frm(nm, nplain, FR_R2_LIMBS);
  fr_inv(ninv, nm);
  memcpy(cur, ninv, 32);
  for (uint32_t i = 0; i < domain; i++) {
    uint32_t j = 0;
    for (unsigned b = 0; b < power; b++) j = (j << 1) | ((i >> b) & 1);
    memcpy(k->shift_br[j], cur, 32);
    frm(cur, cur, inc);
  }
  memcpy(k->tw[0], FR_ONE_LIMBS, 32);
  memcpy(k->tw_inv[0], FR_ONE_LIMBS, 32);
  for (uint32_t j = 1; j < domain / 2; j++) {
    frm(k->tw[j], k->tw[j - 1], root);
    frm(k->tw_inv[j], k->tw_inv[j - 1], root_inv);
  }
  *out = k;
  return G16_OK;
nomem:
  g16_free(k);
  set_err(err, errlen, "zkey: out of memory loading the key");
  return G16_ENOMEM;
}

/* ---------------------------------------------------------------------------------------------
 * Prove */

static double now_ms(clockid_t clk) {
  struct timespec ts;
  clock_gettime(clk, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef struct {
  double cpu, wall;
} stamp_t;
static stamp_t stamp(void) { return (stamp_t){now_ms(CLOCK_THREAD_CPUTIME_ID), now_ms(CLOCK_MONOTONIC)}; }
static void lap(g16_times *t, int stage, stamp_t *s) {
  const stamp_t n = stamp();
  if (t) {
    t->cpu_ms[stage] += n.cpu - s->cpu;
    t->wall_ms[stage] += n.wall - s->wall;
  }
  *s = n;
}

typedef void (*fr_mul_fn)(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]);

/* wM[i] = Montgomery(w[i]) (w plain, checked < r); a, b = A·w, B·w on the domain; c = a·b. */
FR_INLINE void abc_core(const g16_key *k, const uint8_t *w, fe *wM, fe *a, fe *b, fe *c, fr_mul_fn mul) {
  for (uint32_t i = 0; i < k->n_vars; i++) {
    uint64_t v[4];
    memcpy(v, w + (size_t)i * 32, 32);
    mul(wM[i], v, FR_R2_LIMBS);
  }
  const size_t bytes = sizeof(fe) * k->domain;
  memset(a, 0, bytes);
  memset(b, 0, bytes);
  fe *ab[2] = {a, b};
  for (uint32_t i = 0; i < k->n_coefs; i++) {
    const g16_coef *cf = &k->coefs[i];
    const uint64_t *x = wM[cf->s];
    if (fe_is_zero(x)) continue;
    uint64_t *dst = ab[cf->m][cf->c];
    if (cf->kind == COEF_ONE) {
      mod_add(dst, dst, x, FR_Q_LIMBS);
    } else if (cf->kind == COEF_MINUS_ONE) {
      mod_sub(dst, dst, x, FR_Q_LIMBS);
    } else if (fe_eq(x, FR_ONE_LIMBS)) {
      mod_add(dst, dst, cf->v, FR_Q_LIMBS);
    } else {
      fe t;
      mul(t, cf->v, x);
      mod_add(dst, dst, t, FR_Q_LIMBS);
    }
  }
  for (uint32_t i = 0; i < k->domain; i++) mul(c[i], a[i], b[i]);
}

/* x ← FFT(shift ⊙ iFFT(x)): evaluations on the domain → evaluations on the odd coset. The iFFT is
 * decimation in frequency (natural order in, bit-reversed out), the shift table is stored
 * bit-reversed, and the FFT is decimation in time (bit-reversed in, natural out): no permutation
 * pass, twiddles from the key. */
FR_INLINE void coset_core(const g16_key *k, fe *x, fr_mul_fn mul) {
  const size_t n = k->domain;
  for (size_t len = n; len >= 2; len >>= 1) {
    const size_t half = len >> 1, stride = n / len;
    for (size_t start = 0; start < n; start += len)
      for (size_t j = 0; j < half; j++) {
        uint64_t *u = x[start + j], *v = x[start + j + half];
        fe t;
        mod_sub(t, u, v, FR_Q_LIMBS);
        mod_add(u, u, v, FR_Q_LIMBS);
        if (j == 0)
          memcpy(v, t, sizeof(fe));
        else
          mul(v, t, k->tw_inv[j * stride]);
      }
  }
  for (size_t i = 0; i < n; i++) mul(x[i], x[i], k->shift_br[i]);
  for (size_t len = 2; len <= n; len <<= 1) {
    const size_t half = len >> 1, stride = n / len;
    for (size_t start = 0; start < n; start += len)
      for (size_t j = 0; j < half; j++) {
        uint64_t *u = x[start + j], *v = x[start + j + half];
        fe t;
        if (j == 0)
          memcpy(t, v, sizeof(fe));
        else
          mul(t, v, k->tw[j * stride]);
        mod_sub(v, u, t, FR_Q_LIMBS);
        mod_add(u, u, t, FR_Q_LIMBS);
      }
  }
}

/* h[i] = plain(a[i]·b[i] − c[i]) as 32-byte LE scalars. */
FR_INLINE void join_core(const g16_key *k, const fe *a, const fe *b, const fe *c, uint8_t *h, fr_mul_fn mul) {
  for (uint32_t i = 0; i < k->domain; i++) {
    fe t;
    mul(t, a[i], b[i]);
    mod_sub(t, t, c[i], FR_Q_LIMBS);
    mul(t, t, PLAIN_ONE);
    memcpy(h + (size_t)i * 32, t, 32);
  }
}

static void abc_c(const g16_key *k, const uint8_t *w, fe *wM, fe *a, fe *b, fe *c) { abc_core(k, w, wM, a, b, c, fr_mul_c); }
static void coset_c(const g16_key *k, fe *x) { coset_core(k, x, fr_mul_c); }
static void join_c(const g16_key *k, const fe *a, const fe *b, const fe *c, uint8_t *h) { join_core(k, a, b, c, h, fr_mul_c); }
#ifdef FR_HAVE_ADX
static void abc_adx(const g16_key *k, const uint8_t *w, fe *wM, fe *a, fe *b, fe *c) {
  abc_core(k, w, wM, a, b, c, fr_mul_adx);
}
static void coset_adx(const g16_key *k, fe *x) { coset_core(k, x, fr_mul_adx); }
static void join_adx(const g16_key *k, const fe *a, const fe *b, const fe *c, uint8_t *h) {
  join_core(k, a, b, c, h, fr_mul_adx);
}
#endif

/* One coset chain (coset_core): a task of g16_tasks or a step of coset_all. */
typedef struct {
  const g16_key *k;
  fe *x;
  int adx; /* 0: portable C, 1: ADX, 2: ADX and the eight-lane chain (fft_ifma.h) */
} coset_job;

static void *coset_run(void *arg) {
  coset_job *j = arg;
#ifdef REFRACT_HAVE_IFMA
  if (j->adx == 2 && j->k->domain >= 8) {
    const size_t n = j->k->domain, bytes = 5 * n * sizeof(uint64_t);
    uint64_t *soa = scratch_alloc(bytes);
    if (soa) { /* else the scalar chain below */
      fr8_coset(&j->x[0][0], n, &j->k->tw[0][0], &j->k->tw_inv[0][0], &j->k->shift_br[0][0], soa);
      scratch_free(soa, bytes);
      return NULL;
    }
  }
#endif
#ifdef FR_HAVE_ADX
  if (j->adx) {
    coset_adx(j->k, j->x);
    return NULL;
  }
#endif
  coset_c(j->k, j->x);
  return NULL;
}

/* The three coset chains (A, B, C) in turn on this thread (g16_tasks runs them side by side). */
static void coset_all(const g16_key *k, fe *polys[3], int adx) {
  for (int p = 0; p < 3; p++) {
    coset_job j = {k, polys[p], adx};
    coset_run(&j);
  }
}

/* dst[j] = src[idx[j]] for j < m (32-byte scalars). */
static void gather(uint8_t *dst, const uint8_t *src, const uint32_t *idx, size_t m) {
  for (size_t j = 0; j < m; j++) memcpy(dst + j * 32, src + (size_t)idx[j] * 32, 32);
}

/* One proof's work after A·w, B·w as tasks on `par` threads (the caller's included): the three
 * coset chains, then (on the thread that ends the last chain) H and the C+H MSM, and beside them
 * the B2, A and B1 MSMs, each MSM on one thread. Tasks are taken in that order, the longest
 * first, so that on two cores the C+H MSM (the longest, after the chains) runs beside B2 then A.
 * Per-task thread CPU and wall times go to `t` (summed per stage by the caller). */
typedef struct {
  const g16_key *k;
  fe *polys[3];
  int adx;
  uint8_t *chs, *gs_ch;          /* C+H scalars (H written by the join), their gather buffer */
  const uint8_t *gs_a, *gs_b;    /* gathered scalars of A and B (B1 and B2) */
  size_t n_c;                    /* private signals: H starts at chs + 32·n_c */
  uint8_t *jac_a, *jac_b1, *jac_b2, *jac_ch;
  atomic_uint next, chains_done;
  atomic_int failed;
  double cpu[G16_T_COUNT][4], wall[G16_T_COUNT][4]; /* per stage, per task slot (FFT: the chains, join) */
} g16_tasks;

static void g16_task_time(g16_tasks *T, int stage, int slot, stamp_t *s0) {
  const stamp_t n = stamp();
  T->cpu[stage][slot] = n.cpu - s0->cpu;
  T->wall[stage][slot] = n.wall - s0->wall;
}

static void *g16_task_worker(void *arg) {
  g16_tasks *T = arg;
  for (;;) {
    const unsigned t = atomic_fetch_add(&T->next, 1);
    if (t >= 6) break;
    stamp_t s0 = stamp();
    if (t < 3) {
      coset_job j = {T->k, T->polys[t], T->adx};
      coset_run(&j);
      g16_task_time(T, G16_T_FFT, (int)t, &s0);
      if (atomic_fetch_add(&T->chains_done, 1) + 1 == 3) {
        s0 = stamp();
#ifdef FR_HAVE_ADX
        if (T->adx)
          join_adx(T->k, T->polys[0], T->polys[1], T->polys[2], T->chs + T->n_c * 32);
        else
#endif
          join_c(T->k, T->polys[0], T->polys[1], T->polys[2], T->chs + T->n_c * 32);
        g16_task_time(T, G16_T_FFT, 3, &s0);
        s0 = stamp();
        gather(T->gs_ch, T->chs, T->k->ch_idx, T->k->n_ch);
        if (T->k->n_ch && key_msm(T->k->t_ch, 1, T->k->ch, T->gs_ch, T->k->n_ch, T->jac_ch) < 0) atomic_store(&T->failed, 1);
        g16_task_time(T, G16_T_MSM_CH, 0, &s0);
      }
    } else if (t == 3) {
      if (key_msm(T->k->t_b2, 2, T->k->b2_ext, T->gs_b, T->k->n_b, T->jac_b2) < 0) atomic_store(&T->failed, 1);
      g16_task_time(T, G16_T_MSM_B2, 0, &s0);
    } else if (t == 4) {
      if (key_msm(T->k->t_a, 1, T->k->a_ext, T->gs_a, T->k->n_a, T->jac_a) < 0) atomic_store(&T->failed, 1);
      g16_task_time(T, G16_T_MSM_A, 0, &s0);
    } else {
      if (key_msm(T->k->t_b1, 1, T->k->b1_ext, T->gs_b, T->k->n_b, T->jac_b1) < 0) atomic_store(&T->failed, 1);
      g16_task_time(T, G16_T_MSM_B1, 0, &s0);
    }
  }
  return NULL;
}

/* Runs g16_tasks on par threads; 0, or −1 when an MSM ran out of memory. Stage times: CPU summed
 * over the tasks, wall = the longest task of the stage (the FFT: chains in parallel, then the join). */
static int g16_run_tasks(g16_tasks *T, unsigned par, g16_times *times) {
  atomic_init(&T->next, 0);
  atomic_init(&T->chains_done, 0);
  atomic_init(&T->failed, 0);
  memset(T->cpu, 0, sizeof T->cpu);
  memset(T->wall, 0, sizeof T->wall);
  pthread_t tids[5];
  unsigned started = 0;
  if (par > 6) par = 6;
  for (; started + 1 < par; started++)
    if (pthread_create(&tids[started], NULL, g16_task_worker, T) != 0) break;
  g16_task_worker(T);
  for (unsigned i = 0; i < started; i++) pthread_join(tids[i], NULL);
  if (times)
    for (int st = G16_T_FFT; st <= G16_T_MSM_CH; st++) {
      double cpu = 0, wall = 0;
      for (int slot = 0; slot < 4; slot++) {
        cpu += T->cpu[st][slot];
        if (st != G16_T_FFT && T->wall[st][slot] > wall) wall = T->wall[st][slot];
      }
      if (st == G16_T_FFT) {
        for (int slot = 0; slot < 3; slot++)
          if (T->wall[st][slot] > wall) wall = T->wall[st][slot];
        wall += T->wall[st][3];
      }
      times->cpu_ms[st] += cpu;
      times->wall_ms[st] += wall;
    }
  return atomic_load(&T->failed) ? -1 : 0;
}

/* 64 bytes from the OS CSPRNG reduced mod r into a plain LE 32-byte scalar (bias < 2^-250). */
static int g16_random_scalar(uint8_t out[32]) {
  uint8_t buf[64];
  size_t got = 0;
#if defined(__linux__)
  while (got < sizeof buf) {
    const ssize_t n = getrandom(buf + got, sizeof buf - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    got += (size_t)n;
  }
#endif
  if (got < sizeof buf) {
    const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    while (got < sizeof buf) {
      const ssize_t n = read(fd, buf + got, sizeof buf - got);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        close(fd);
        return 0;
      }
      got += (size_t)n;
    }
    close(fd);
  }
  /* x = lo + hi·2^256 mod r: Montgomery(lo) + Montgomery(hi·R), then out of Montgomery form */
  uint64_t lo[4], hi[4], t[4], u[4];
  memcpy(lo, buf, 32);
  memcpy(hi, buf + 32, 32);
  frm(t, lo, FR_R2_LIMBS);
  frm(u, hi, FR_R2_LIMBS);
  frm(u, u, FR_R2_LIMBS);
  mod_add(t, t, u, FR_Q_LIMBS);
  frm(t, t, PLAIN_ONE);
  memcpy(out, t, 32);
  memset(buf, 0, sizeof buf);
  return 1;
}


int g16_prove(const g16_key *k, const uint8_t *wtns, size_t wtns_len, const uint8_t *rs, unsigned threads,
              uint8_t out[256], uint8_t inf[3], g16_times *times, char *err, size_t errlen) {
  if (times) memset(times, 0, sizeof *times);
  stamp_t st = stamp();
  /* --- witness: .wtns v2, n8 32, prime r, nVars values each < r, w[0] = 1 --- */
  section_t sec[3];
  uint32_t version = 0;
  if (!read_sections(wtns, wtns_len, "wtns", sec, 2, &version, err, errlen, "witness")) return G16_EWITNESS;
  if (!sec[1].p || !sec[2].p || sec[1].size != 40 || rd32(sec[1].p) != 32) {
    set_err(err, errlen, "witness: header section missing or not n8 = 32 (BN254)");
    return G16_EWITNESS;
  }
  uint64_t prime[4];
  memcpy(prime, sec[1].p + 4, 32);
  if (!fe_eq(prime, FR_Q_LIMBS)) {
    set_err(err, errlen, "witness: field is not BN254 Fr (the curve of the proving key)");
    return G16_EWITNESS;
  }
  const uint32_t n_wit = rd32(sec[1].p + 36);
  if (n_wit != k->n_vars || sec[2].size != (uint64_t)k->n_vars * 32) {
    set_err(err, errlen, "witness: %u values (%llu bytes), the circuit has %u", n_wit, (unsigned long long)sec[2].size,
            k->n_vars);
    return G16_EWITNESS;
  }
  const uint8_t *w = sec[2].p;
  for (uint32_t i = 0; i < k->n_vars; i++) {
    uint64_t v[4];
    memcpy(v, w + (size_t)i * 32, 32);
    if (!lt_mod(v, FR_Q_LIMBS)) {
      set_err(err, errlen, "witness: value %u is not < r", i);
      return G16_EWITNESS;
    }
    if (i == 0 && !fe_eq(v, PLAIN_ONE)) {
      set_err(err, errlen, "witness: value 0 must be the constant 1");
      return G16_EWITNESS;
    }
  }
  uint64_t r[4], s[4];
  if (rs) {
    memcpy(r, rs, 32);
    memcpy(s, rs + 32, 32);
    if (!lt_mod(r, FR_Q_LIMBS) || !lt_mod(s, FR_Q_LIMBS)) {
      set_err(err, errlen, "r and s must be < r");
      return G16_EARG;
    }
  } else if (!g16_random_scalar((uint8_t *)r) || !g16_random_scalar((uint8_t *)s)) {
    set_err(err, errlen, "no randomness from the OS (getrandom / /dev/urandom)");
    return G16_ENOMEM;
  }

  /* --- scratch: wext (n_vars + 2 scalars), wM, a, b, c, ch scalars, then the scalars gathered for
   * the kept points of each MSM table (g16_load's maps): A's, B's (B1 and B2), C+H's --- */
  const size_t n = k->domain, nv = k->n_vars, n_c = (size_t)k->n_vars - k->n_public - 1;
  const size_t off_wext = 0, off_wm = off_wext + (nv + 2) * 32, off_a = off_wm + nv * 32, off_b = off_a + n * 32,
               off_c = off_b + n * 32, off_ch = off_c + n * 32, off_g = off_ch + (n_c + n) * 32,
               n_g = (size_t)k->n_a + k->n_b + k->n_ch, total = off_g + n_g * 32;
  uint8_t *mem = scratch_alloc(total);
  if (!mem) {
    set_err(err, errlen, "out of memory (%zu bytes of scratch)", total);
    return G16_ENOMEM;
  }
  uint8_t *wext = mem + off_wext, *chs = mem + off_ch, *gs_a = mem + off_g, *gs_b = gs_a + (size_t)k->n_a * 32,
          *gs_ch = gs_b + (size_t)k->n_b * 32;
  fe *wM = (fe *)(void *)(mem + off_wm), *a = (fe *)(void *)(mem + off_a), *b = (fe *)(void *)(mem + off_b),
     *c = (fe *)(void *)(mem + off_c);
  memcpy(wext, w, nv * 32);
  memcpy(wext + nv * 32, PLAIN_ONE, 32);
  memcpy(chs, w + ((size_t)k->n_public + 1) * 32, n_c * 32);
  lap(times, G16_T_WITNESS, &st);

  int adx = 0;
#ifdef FR_HAVE_ADX
  adx = msm_impl_level();
#endif
  int rc = G16_OK;
  /* --- A·w, B·w, C = A·B on the domain; H on the odd coset --- */
#ifdef FR_HAVE_ADX
  if (adx)
    abc_adx(k, w, wM, a, b, c);
  else
#endif
    abc_c(k, w, wM, a, b, c);
  lap(times, G16_T_ABC, &st);
  fe *polys[3] = {a, b, c};
  /* `threads` when given, else the online CPUs shared by the open proofs (msm_jobs), like the
   * MSMs' automatic thread count */
  unsigned par = threads;
  if (par == 0) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = msm_jobs(0);
    if (cpus < 1) cpus = 1;
    if (jobs < 1) jobs = 1;
    par = (unsigned)(cpus / jobs);
  }
  uint8_t jac_a[96] = {0}, jac_b1[96] = {0}, jac_b2[192] = {0}, jac_ch[96] = {0}, jac_c[96] = {0};
  int m;
  memcpy(wext + (nv + 1) * 32, r, 32);
  gather(gs_a, wext, k->a_idx, k->n_a);
  memcpy(wext + (nv + 1) * 32, s, 32);
  gather(gs_b, wext, k->b_idx, k->n_b);
  if (par >= 2) {
    /* several cores for this proof: the chains and the MSMs as tasks, each on one core */
    g16_tasks T = {.k = k, .polys = {a, b, c}, .adx = adx, .chs = chs, .gs_ch = gs_ch, .gs_a = gs_a, .gs_b = gs_b,
                   .n_c = n_c, .jac_a = jac_a, .jac_b1 = jac_b1, .jac_b2 = jac_b2, .jac_ch = jac_ch};
    if (g16_run_tasks(&T, par, times) < 0) goto oom;
    st = stamp();
  } else {
    coset_all(k, polys, adx);
#ifdef FR_HAVE_ADX
    if (adx)
      join_adx(k, a, b, c, chs + n_c * 32);
    else
#endif
      join_c(k, a, b, c, chs + n_c * 32);
    lap(times, G16_T_FFT, &st);
    if ((m = key_msm(k->t_a, 1, k->a_ext, gs_a, k->n_a, jac_a)) < 0) goto oom;
    lap(times, G16_T_MSM_A, &st);
    if ((m = key_msm(k->t_b1, 1, k->b1_ext, gs_b, k->n_b, jac_b1)) < 0) goto oom;
    lap(times, G16_T_MSM_B1, &st);
    if ((m = key_msm(k->t_b2, 2, k->b2_ext, gs_b, k->n_b, jac_b2)) < 0) goto oom;
    lap(times, G16_T_MSM_B2, &st);
    gather(gs_ch, chs, k->ch_idx, k->n_ch);
    if (k->n_ch && (m = key_msm(k->t_ch, 1, k->ch, gs_ch, k->n_ch, jac_ch)) < 0) goto oom;
    lap(times, G16_T_MSM_CH, &st);
  }

  /* --- π_C = CH + s·π_A + r·ρ − r·s·δ1 (one 4-point MSM over affine points) --- */
  {
    uint8_t bases[4 * 64], scal[4 * 32], aff_b[128];
    g1_jac_to_aff(bases, jac_ch);
    const int fin_a = g1_jac_to_aff(bases + 64, jac_a);
    g1_jac_to_aff(bases + 128, jac_b1);
    memcpy(bases + 192, k->delta1, 64);
    fe rm, sm, rsm;
    frm(rm, r, FR_R2_LIMBS);
    frm(sm, s, FR_R2_LIMBS);
    frm(rsm, rm, sm);
    frm(rsm, rsm, PLAIN_ONE); /* r·s plain */
    const uint64_t zero[4] = {0, 0, 0, 0};
    mod_sub(rsm, zero, rsm, FR_Q_LIMBS);
    memcpy(scal, PLAIN_ONE, 32);
    memcpy(scal + 32, s, 32);
    memcpy(scal + 64, r, 32);
    memcpy(scal + 96, rsm, 32);
    if ((m = msm_g1(bases, scal, 32, 4, 1, jac_c)) < 0) goto oom;
    uint8_t aff_c[64];
    const int fin_c = g1_jac_to_aff(aff_c, jac_c);
    const int fin_b = g2_jac_to_aff(aff_b, jac_b2);
    /* output: plain coordinates; infinity as (0, 1) */
    const uint8_t *pts[3] = {bases + 64, aff_b, aff_c};
    const int fins[3] = {fin_a, fin_b, fin_c};
    const unsigned coords[3] = {2, 4, 2};
    size_t o = 0;
    for (int p = 0; p < 3; p++) {
      inf[p] = !fins[p];
      for (unsigned j = 0; j < coords[p]; j++, o += 32) {
        if (fins[p]) {
          fq_t v;
          memcpy(&v, pts[p] + 32 * j, 32);
          fq_t plain;
          fq_from_mont(&plain, &v);
          memcpy(out + o, plain.v, 32);
        } else {
          memset(out + o, 0, 32);
          if (j == coords[p] / 2) out[o] = 1;
        }
      }
    }
  }
  lap(times, G16_T_FINISH, &st);
  goto done;
oom:
  rc = G16_ENOMEM;
  set_err(err, errlen, "out of memory in an MSM");
done:
  scratch_free(mem, total);
  return rc;
}
