/* Template (no include guard): Pippenger MSM over one BN254 group (G1 or G2; both have a = 0).
 * Before including, define
 *   E                     coordinate field element type (fq_t / fq2_t)
 *   E_ADD/E_SUB/E_NEG/E_MUL/E_SQR(r, a[, b]), E_IS_ZERO(a), E_SET_ONE(r), E_INV(r, a) (a ≠ 0),
 *   E_MUL_LAZY(r, a, b) (a product that may stay unreduced, for values that only feed products),
 *   E_GLV_BETA (β of the endomorphism (x, y) ↦ (β·x, y) acting as λ, Montgomery form; G1 and G2)
 *   PN(name)              naming of this instance's functions
 * (all of which this file #undefs at its end)
 * Uses from msm.c: msm_window_bits(_ba), msm_recode(_idx), msm_thread_count, msm_enter/msm_leave, msm_run,
 * MSM_BA_* tuning.
 * Buckets are XYZZ points (x = X/ZZ, y = Y/ZZZ, ZZ³ = ZZZ²; ZZ = 0 is infinity) with the
 * explicit formulas of the EFD (hyperelliptic.org/EFD/g1p/auto-shortw-xyzz.html):
 * madd-2008-s (8M + 2S), add-2008-s (12M + 2S), dbl-2008-s-1 / mdbl-2008-s-1. */

typedef struct {
  E x, y;
} PN(aff_t);
typedef struct {
  E x, y, zz, zzz;
} PN(xyzz_t);

FR_INLINE int PN(is_inf)(const PN(xyzz_t) * p) { return E_IS_ZERO(&p->zz); }
FR_INLINE void PN(set_inf)(PN(xyzz_t) * p) { memset(p, 0, sizeof *p); }

/* r = 2·(x, y) for an affine point (mdbl-2008-s-1). */
static void PN(dbl_aff)(PN(xyzz_t) * r, const E *x, const E *y) {
  E u, v, w, s, m, t;
  E_ADD(&u, y, y);
  E_SQR(&v, &u);
  E_MUL(&w, &u, &v);
  E_MUL(&s, x, &v);
  E_SQR(&t, x);
  E_ADD(&m, &t, &t);
  E_ADD(&m, &m, &t);
  E_SQR(&t, &m);
  E_SUB(&t, &t, &s);
  E_SUB(&r->x, &t, &s);
  E_SUB(&t, &s, &r->x);
  E_MUL(&t, &m, &t);
  E_MUL(&u, &w, y);
  E_SUB(&r->y, &t, &u);
  r->zz = v;
  r->zzz = w;
}

/* p = 2·p (dbl-2008-s-1). */
static void PN(dbl)(PN(xyzz_t) * p) {
  if (PN(is_inf)(p)) return;
  E u, v, w, s, m, t, x3;
  E_ADD(&u, &p->y, &p->y);
  E_SQR(&v, &u);
  E_MUL(&w, &u, &v);
  E_MUL(&s, &p->x, &v);
  E_SQR(&t, &p->x);
  E_ADD(&m, &t, &t);
  E_ADD(&m, &m, &t);
  E_SQR(&t, &m);
  E_SUB(&t, &t, &s);
  E_SUB(&x3, &t, &s);
  E_SUB(&t, &s, &x3);
  E_MUL(&t, &m, &t);
  E_MUL(&u, &w, &p->y);
  E_SUB(&p->y, &t, &u);
  p->x = x3;
  E_MUL(&p->zz, &p->zz, &v);
  E_MUL(&p->zzz, &p->zzz, &w);
}

/* X3 = R² − PPP − 2Q, Y3 = R·(Q − X3) − S1·PPP: the shared tail of madd-2008-s and add-2008-s
 * (S1 is Y1 for a mixed addition). */
FR_INLINE void PN(xy3)(PN(xyzz_t) * p, const E *r, const E *ppp, const E *q, const E *s1) {
  E t, u;
  E_SQR(&t, r);
  E_SUB(&t, &t, ppp);
  E_SUB(&t, &t, q);
  E_SUB(&p->x, &t, q);
  E_SUB(&t, q, &p->x);
  E_MUL(&t, r, &t);
  E_MUL(&u, s1, ppp);
  E_SUB(&p->y, &t, &u);
}

/* p += (x2, y2) for an affine point that is not infinity (madd-2008-s). */
static void PN(madd)(PN(xyzz_t) * p, const E *x2, const E *y2) {
  if (PN(is_inf)(p)) {
    p->x = *x2;
    p->y = *y2;
    E_SET_ONE(&p->zz);
    E_SET_ONE(&p->zzz);
    return;
  }
  E u2, s2, pp, ppp, q, r;
  E_MUL(&u2, x2, &p->zz);
  E_MUL(&s2, y2, &p->zzz);
  E_SUB(&u2, &u2, &p->x); /* P */
  E_SUB(&r, &s2, &p->y);  /* R */
  if (E_IS_ZERO(&u2)) {
    if (E_IS_ZERO(&r))
      PN(dbl_aff)(p, x2, y2);
    else
      PN(set_inf)(p);
    return;
  }
  E_SQR(&pp, &u2);
  E_MUL(&ppp, &u2, &pp);
  E_MUL(&q, &p->x, &pp);
  const E y1 = p->y;
  PN(xy3)(p, &r, &ppp, &q, &y1);
  E_MUL(&p->zz, &p->zz, &pp);
  E_MUL(&p->zzz, &p->zzz, &ppp);
}

/* p += q (add-2008-s). */
static void PN(add)(PN(xyzz_t) * p, const PN(xyzz_t) * q) {
  if (PN(is_inf)(q)) return;
  if (PN(is_inf)(p)) {
    *p = *q;
    return;
  }
  E u1, u2, s1, s2, pp, ppp, qq;
  E_MUL(&u1, &p->x, &q->zz);
  E_MUL(&u2, &q->x, &p->zz);
  E_MUL(&s1, &p->y, &q->zzz);
  E_MUL(&s2, &q->y, &p->zzz);
  E_SUB(&u2, &u2, &u1); /* P */
  E_SUB(&s2, &s2, &s1); /* R */
  if (E_IS_ZERO(&u2)) {
    if (E_IS_ZERO(&s2))
      PN(dbl)(p);
    else
      PN(set_inf)(p);
    return;
  }
  E_SQR(&pp, &u2);
  E_MUL(&ppp, &u2, &pp);
  E_MUL(&qq, &u1, &pp);
  PN(xy3)(p, &s2, &ppp, &qq, &s1);
  E_MUL(&p->zz, &p->zz, &q->zz);
  E_MUL(&p->zz, &p->zz, &pp);
  E_MUL(&p->zzz, &p->zzz, &q->zzz);
  E_MUL(&p->zzz, &p->zzz, &ppp);
}

/* Writes acc as a Jacobian point (X·ZZ·ZZZ², Y·ZZ³·ZZZ², ZZ·ZZZ: no inversion) into out; returns 1,
 * or 0 for infinity (out untouched). */
static int PN(to_jacobian)(const PN(xyzz_t) * acc, uint8_t *out) {
  if (PN(is_inf)(acc)) return 0;
  E zzz2, u, zz2, jac[3];
  E_SQR(&zzz2, &acc->zzz);
  E_MUL(&u, &acc->zz, &zzz2);
  E_MUL(&jac[0], &acc->x, &u);
  E_SQR(&zz2, &acc->zz);
  E_MUL(&jac[1], &acc->y, &zz2);
  E_MUL(&jac[1], &jac[1], &u);
  E_MUL(&jac[2], &acc->zz, &acc->zzz);
  memcpy(out, jac, sizeof jac);
  return 1;
}

/* One window: Σ_i digit_i · base_i with digits in [−nb, nb], via nb buckets. */
static void PN(window)(const uint8_t *bases, const int16_t *digits, size_t n, unsigned nb, PN(xyzz_t) * buckets,
                       PN(xyzz_t) * out) {
  for (unsigned b = 0; b < nb; b++) PN(set_inf)(&buckets[b]);
  int any = 0;
  for (size_t i = 0; i < n; i++) {
    const int d = digits[i];
    if (d == 0) continue;
    PN(aff_t) a;
    memcpy(&a, bases + i * sizeof a, sizeof a);
    any = 1;
    if (d > 0) {
      PN(madd)(&buckets[d - 1], &a.x, &a.y);
    } else {
      E ny;
      E_NEG(&ny, &a.y);
      PN(madd)(&buckets[-d - 1], &a.x, &ny);
    }
  }
  PN(set_inf)(out);
  if (!any) return;
  PN(xyzz_t) running;
  PN(set_inf)(&running);
  for (unsigned b = nb; b-- > 0;) {
    PN(add)(&running, &buckets[b]);
    PN(add)(out, &running);
  }
}

typedef struct {
  const uint8_t *bases;
  const int16_t *digits; /* [w·n + i] */
  size_t n;
  unsigned nb, windows;
  PN(xyzz_t) * results; /* one per window */
  atomic_uint next;
  atomic_int failed;
} PN(job_t);

static void *PN(worker)(void *arg) {
  PN(job_t) *job = arg;
  const size_t bucket_bytes = sizeof(PN(xyzz_t)) * job->nb;
  PN(xyzz_t) *buckets = scratch_alloc(bucket_bytes);
  if (!buckets) {
    atomic_store(&job->failed, 1);
    return NULL;
  }
  for (;;) {
    const unsigned w = atomic_fetch_add(&job->next, 1);
    if (w >= job->windows) break;
    PN(window)(job->bases, job->digits + (size_t)w * job->n, job->n, job->nb, buckets, &job->results[w]);
  }
  scratch_free(buckets, bucket_bytes);
  return NULL;
}

static int PN(msm)(const uint8_t *bases, const uint8_t *scalars, size_t scalar_size, size_t n, unsigned threads,
                   uint8_t *out) {
  if (n == 0) return 0;
  const unsigned c = msm_window_bits(n);
  const unsigned windows = (unsigned)(scalar_size * 8 / c) + 1;
  const size_t digit_bytes = sizeof(int16_t) * n * windows, result_bytes = sizeof(PN(xyzz_t)) * windows;
  int16_t *digits = scratch_alloc(digit_bytes);
  PN(xyzz_t) *results = scratch_alloc(result_bytes);
  if (!digits || !results) {
    scratch_free(digits, digit_bytes);
    scratch_free(results, result_bytes);
    return -1;
  }
  msm_recode(bases, sizeof(PN(aff_t)), scalars, scalar_size, n, c, windows, digits);

  PN(job_t) job = {.bases = bases, .digits = digits, .n = n, .nb = 1u << (c - 1), .windows = windows,
                   .results = results};
  atomic_init(&job.next, 0);
  atomic_init(&job.failed, 0);
  msm_enter();
  unsigned t = msm_thread_count(threads, windows);
  msm_run(PN(worker), &job, t);
  msm_leave();
  scratch_free(digits, digit_bytes);
  if (atomic_load(&job.failed)) {
    scratch_free(results, result_bytes);
    return -1;
  }

  PN(xyzz_t) acc = results[windows - 1];
  for (unsigned w = windows - 1; w-- > 0;) {
    for (unsigned k = 0; k < c; k++) PN(dbl)(&acc);
    PN(add)(&acc, &results[w]);
  }
  scratch_free(results, result_bytes);
  return PN(to_jacobian)(&acc, out);
}

/* ---- batch-affine Pippenger (the "affine" algorithm) ----
 * Buckets are affine points. A window's additions are collected into batches of independent
 * additions (no two for the same bucket) whose denominators x2 − x1 (2y for a doubling) are
 * inverted together with Montgomery's trick (3 multiplications each plus one inversion per batch),
 * so an addition costs about 6 multiplications instead of madd's 10. A point whose bucket already
 * waits in the current batch goes into that bucket's XYZZ overflow bucket (madd) instead of
 * waiting, so no input pattern can stall a batch. */
#define BA_SET 1u  /* the affine bucket holds a point */
#define BA_BUSY 2u /* an addition into it waits in the batch */
#define BA_EXT 4u  /* the overflow bucket holds a point */
#define BA_PEND 8u /* a point for it waits in the pending list (at most one: a crowded bucket overflows) */
#define BA_DBL 0x80000000u

typedef struct {
  PN(aff_t) * bk;  /* nb affine buckets */
  PN(xyzz_t) * ext; /* nb overflow buckets */
  uint8_t *state;   /* nb BA_* flags */
  uint32_t *op_b;   /* batch: bucket (| BA_DBL for a doubling) */
  PN(aff_t) * op_p; /* batch: the point added */
  E *den, *pre;     /* batch: denominators, prefix products */
  unsigned cap;     /* batch capacity */
  uint32_t *pend_b, *pend2_b; /* points that met a waiting bucket: bucket, point (pending, draining) */
  PN(aff_t) *pend_p, *pend2_p;
  unsigned npend, pcap; /* pending count, capacity (0: straight to the overflow bucket) */
#ifdef PN_IFMA
  VE *vden, *vpre; /* the eight-lane flush's denominators and prefix products, cap/8 rounded up */
#endif
} PN(ba_t);

/* Batch slots: the capacity rounded up to whole groups of eight lanes (PN(ba_flush_ifma) pads). */
#define BA_SLOTS(cap) (((size_t)(cap) + 7) & ~(size_t)7)

static size_t PN(ba_bytes)(unsigned nb, unsigned cap) {
  size_t bytes = (sizeof(PN(aff_t)) + sizeof(PN(xyzz_t)) + 1) * (size_t)nb + 64 +
                 (sizeof(uint32_t) + sizeof(PN(aff_t)) + 2 * sizeof(E)) * BA_SLOTS(cap) +
                 2 * (sizeof(uint32_t) + sizeof(PN(aff_t))) * (size_t)cap;
#ifdef PN_IFMA
  bytes += 2 * sizeof(VE) * (BA_SLOTS(cap) / 8);
#endif
  return bytes;
}

/* Carves the scratch block of PN(ba_bytes)(nb, cap) bytes (page-aligned from scratch_alloc; the
 * 64-byte vectors first). */
static void PN(ba_init)(PN(ba_t) * s, void *mem, unsigned nb, unsigned cap) {
  uint8_t *p = mem;
#ifdef PN_IFMA
  s->vden = (VE *)(void *)p;
  p += sizeof(VE) * (BA_SLOTS(cap) / 8);
  s->vpre = (VE *)(void *)p;
  p += sizeof(VE) * (BA_SLOTS(cap) / 8);
#endif
  s->bk = (PN(aff_t) *)p;
  p += sizeof(PN(aff_t)) * (size_t)nb;
  s->ext = (PN(xyzz_t) *)p;
  p += sizeof(PN(xyzz_t)) * (size_t)nb;
  s->op_p = (PN(aff_t) *)p;
  p += sizeof(PN(aff_t)) * BA_SLOTS(cap);
  s->den = (E *)p;
  p += sizeof(E) * BA_SLOTS(cap);
  s->pre = (E *)p;
  p += sizeof(E) * BA_SLOTS(cap);
  s->pend_p = (PN(aff_t) *)p;
  p += sizeof(PN(aff_t)) * (size_t)cap;
  s->pend2_p = (PN(aff_t) *)p;
  p += sizeof(PN(aff_t)) * (size_t)cap;
  s->op_b = (uint32_t *)p;
  p += sizeof(uint32_t) * BA_SLOTS(cap);
  s->pend_b = (uint32_t *)p;
  p += sizeof(uint32_t) * (size_t)cap;
  s->pend2_b = (uint32_t *)p;
  p += sizeof(uint32_t) * (size_t)cap;
  s->npend = 0;
  s->pcap = cap;
  s->state = p;
  s->cap = cap;
}

#ifdef PN_IFMA
/* PN(ba_flush) on eight AVX-512 IFMA lanes (msm_ifma.h; VE = v8 for G1, v8x2 for G2, whose
 * VE_(step) functions carry the bounds): addition j runs in lane j % 8 of group j / 8. Per lane,
 * the denominators' prefix products; the eight lane totals are inverted together on the scalar side
 * (Montgomery's trick, one E_INV); then per group, from the last: the lane inverses, λ, x3 and y3,
 * stored into the buckets. The tail group is padded with denominator 1 and bucket 0, and its dead
 * lanes are never stored. */
/* log2 of the words per coordinate (4 for Fq, 8 for Fq2); a point is twice that */
#define VE_WSHIFT (sizeof(E) == 32 ? 2 : 3)
IFMA_TARGET static void PN(ba_flush_ifma)(PN(ba_t) * s, unsigned k) {
  const unsigned groups = (k + 7) / 8;
  for (unsigned j = k; j < groups * 8; j++) {
    E_SET_ONE(&s->den[j]);
    s->op_b[j] = 0;
  }
  const uint64_t *den = (const uint64_t *)s->den, *opp = (const uint64_t *)s->op_p;
  uint64_t *bk = (uint64_t *)s->bk;
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  VE *vden = s->vden, *vpre = s->vpre;
  for (unsigned g = 0; g < groups; g++) {
    const __m512i j = _mm512_add_epi64(_mm512_set1_epi64((long long)g * 8), lane);
    VE_(gather16)(&vden[g], den, _mm512_slli_epi64(j, VE_WSHIFT));
    if (g)
      VE_(mul)(&vpre[g], &vpre[g - 1], &vden[g]);
    else
      vpre[0] = vden[0];
  }
  /* the lane totals' inverses, Montgomery's trick over the eight lanes */
  E tot[8], pfx[8], inv, linv[8];
  VE_(lanes_out)((uint64_t *)tot, &vpre[groups - 1]);
  pfx[0] = tot[0];
  for (int l = 1; l < 8; l++) E_MUL(&pfx[l], &pfx[l - 1], &tot[l]);
  E_INV(&inv, &pfx[7]);
  for (int l = 7; l > 0; l--) {
    E_MUL(&linv[l], &inv, &pfx[l - 1]);
    E_MUL(&inv, &inv, &tot[l]);
  }
  linv[0] = inv;
  VE vinv, di, num, lam, t, x3, d, y3, x1, y1, x2, y2;
  VE_(gather16)(&vinv, (const uint64_t *)linv, _mm512_slli_epi64(lane, VE_WSHIFT));
  for (unsigned g = groups; g-- > 0;) {
    if (g) {
      VE_(mul)(&di, &vinv, &vpre[g - 1]);
      VE_(mul)(&vinv, &vinv, &vden[g]);
    } else {
      di = vinv;
    }
    const __m512i ob = _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(s->op_b + (size_t)g * 8)));
    const __mmask8 dbl = _mm512_test_epi64_mask(ob, _mm512_set1_epi64(BA_DBL));
    const __m512i bidx = _mm512_slli_epi64(_mm512_and_si512(ob, _mm512_set1_epi64(~BA_DBL & 0xffffffffu)), VE_WSHIFT + 1);
    const __m512i pidx = _mm512_slli_epi64(_mm512_add_epi64(_mm512_set1_epi64((long long)g * 8), lane), VE_WSHIFT + 1);
    const __m512i yoff = _mm512_set1_epi64((long long)1 << VE_WSHIFT);
    const unsigned live_n = k - g * 8 < 8 ? k - g * 8 : 8;
    const __mmask8 live = (__mmask8)((1u << live_n) - 1);
    VE_(gather16)(&x1, bk, bidx);
    VE_(gather16)(&y1, bk, _mm512_add_epi64(bidx, yoff));
    VE_(gather16)(&x2, opp, pidx);
    VE_(gather16)(&y2, opp, _mm512_add_epi64(pidx, yoff));
    VE_(ba_num)(&num, &y2, &y1);
    if (dbl & live) { /* doublings (the bucket held the point itself): num = 3·x1² in those lanes */
      VE n3;
      VE_(ba_dbl)(&n3, &x1);
      VE_(blend)(&num, dbl, &n3);
    }
    VE_(mul)(&lam, &num, &di);
    VE_(sqr)(&t, &lam);
    VE_(ba_x3)(&x3, &t, &x1, &x2);
    VE_(ba_d)(&d, &x1, &x3);
    VE_(mul)(&t, &lam, &d);
    VE_(ba_y3)(&y3, &t, &y1);
    VE_(store)(bk, bidx, live, &x3);
    VE_(store)(bk, _mm512_add_epi64(bidx, yoff), live, &y3);
  }
  for (unsigned j = 0; j < k; j++) s->state[s->op_b[j] & ~BA_DBL] &= (uint8_t)~BA_BUSY;
}
#undef VE_WSHIFT
#endif

/* Completes the k additions of the batch: one inversion for all denominators, then per addition
 * λ = num/den, x3 = λ² − x1 − x2, y3 = λ(x1 − x3) − y1 into the bucket. */
static void PN(ba_flush)(PN(ba_t) * s, unsigned k) {
  if (k == 0) return;
#ifdef PN_IFMA
  PN(ba_flush_ifma)(s, k);
  return;
#endif
  E *den = s->den, *pre = s->pre;
  pre[0] = den[0];
  /* pre, inv, di and λ only feed multiplications (and E_INV): G1 leaves them in [0, 2q) */
  for (unsigned j = 1; j < k; j++) E_MUL_LAZY(&pre[j], &pre[j - 1], &den[j]);
  E inv;
  E_INV(&inv, &pre[k - 1]);
  for (unsigned j = k; j-- > 0;) {
    E di, num, lam, t, x3;
    if (j) {
      E_MUL_LAZY(&di, &inv, &pre[j - 1]);
      E_MUL_LAZY(&inv, &inv, &den[j]);
    } else {
      di = inv;
    }
    const uint32_t ob = s->op_b[j], b = ob & ~BA_DBL;
    PN(aff_t) *B = &s->bk[b];
    const PN(aff_t) *P = &s->op_p[j];
    if (ob & BA_DBL) {
      E_SQR(&t, &B->x);
      E_ADD(&num, &t, &t);
      E_ADD(&num, &num, &t);
    } else {
      E_SUB(&num, &P->y, &B->y);
    }
    E_MUL_LAZY(&lam, &num, &di);
    E_SQR(&t, &lam);
    E_SUB(&t, &t, &B->x);
    E_SUB(&x3, &t, &P->x);
    E_SUB(&t, &B->x, &x3);
    E_MUL(&t, &lam, &t);
    E_SUB(&B->y, &t, &B->y);
    B->x = x3;
    s->state[b] &= (uint8_t)~BA_BUSY;
  }
}

/* Adds the affine point (x, y) (not infinity) to bucket b: set it when empty, queue an affine
 * addition, or, when b already waits in this batch, keep the point for the next batch (pending,
 * PN(ba_drain)) or, with the pending list full, madd it into the overflow bucket. */
FR_INLINE void PN(ba_put)(PN(ba_t) * s, unsigned *k, unsigned b, const E *x, const E *y) {
  const uint8_t st = s->state[b];
  PN(aff_t) *B = &s->bk[b];
  if (!(st & BA_SET)) {
    B->x = *x;
    B->y = *y;
    s->state[b] = (uint8_t)(st | BA_SET);
    return;
  }
  if (st & BA_BUSY) {
    if (!(st & BA_PEND) && s->npend < s->pcap) {
      const unsigned i = s->npend++;
      s->pend_b[i] = b;
      s->pend_p[i].x = *x;
      s->pend_p[i].y = *y;
      s->state[b] = (uint8_t)(st | BA_PEND);
      return;
    }
    if (st & BA_EXT) {
      PN(madd)(&s->ext[b], x, y);
    } else {
      PN(xyzz_t) *X = &s->ext[b];
      X->x = *x;
      X->y = *y;
      E_SET_ONE(&X->zz);
      E_SET_ONE(&X->zzz);
      s->state[b] = (uint8_t)(st | BA_EXT);
    }
    return;
  }
  const unsigned j = *k;
  E_SUB(&s->den[j], x, &B->x);
  uint32_t ob = b;
  if (E_IS_ZERO(&s->den[j])) {
    E dy;
    E_SUB(&dy, y, &B->y);
    if (!E_IS_ZERO(&dy)) { /* P + (−P): the bucket empties */
      s->state[b] = (uint8_t)(st & ~BA_SET);
      return;
    }
    E_ADD(&s->den[j], y, y); /* doubling (y ≠ 0: no point of order 2) */
    ob |= BA_DBL;
  }
  s->op_b[j] = ob;
  s->op_p[j].x = *x;
  s->op_p[j].y = *y;
  s->state[b] = (uint8_t)(st | BA_BUSY);
  *k = j + 1;
}

/* Puts the pending points again (after a flush, when no bucket waits): each either joins the
 * batch (flushed when full) or, meeting a bucket that now waits again, stays pending. */
static void PN(ba_drain)(PN(ba_t) * s, unsigned *k) {
  const unsigned n = s->npend;
  if (n == 0) return;
  uint32_t *tb = s->pend_b;
  PN(aff_t) *tp = s->pend_p;
  s->pend_b = s->pend2_b;
  s->pend_p = s->pend2_p;
  s->pend2_b = tb;
  s->pend2_p = tp;
  s->npend = 0;
  for (unsigned i = 0; i < n; i++) s->state[tb[i]] &= (uint8_t)~BA_PEND;
  for (unsigned i = 0; i < n; i++) {
    PN(ba_put)(s, k, tb[i], &tp[i].x, &tp[i].y);
    if (*k == s->cap) {
      PN(ba_flush)(s, *k);
      *k = 0;
    }
  }
}

#define BA_PREFETCH 8
/* Chains of the batch-affine bucket reduction (PN(reduce_ba)): at most this many per group. */
#define BA_CHAINS 256

/* Moves every overflow (XYZZ) bucket of the nbt buckets into its affine bucket: the overflow
 * points go affine in chunks of cap/2 with one inversion per chunk (Montgomery's trick over their
 * ZZ and ZZZ), then join the buckets as one batch through the pending list. No bucket waits. */
static void PN(ext_fold)(PN(ba_t) * s, unsigned nbt) {
  const unsigned chunk = s->cap / 2 > 0 ? s->cap / 2 : 1, pcap = s->pcap;
  E *den = s->den, *pre = s->pre;
  unsigned b = 0, k = 0;
  s->pcap = 0;
  for (;;) {
    unsigned n = 0;
    for (; b < nbt && n < chunk; b++) {
      if (!(s->state[b] & BA_EXT)) continue;
      s->state[b] &= (uint8_t)~BA_EXT;
      if (PN(is_inf)(&s->ext[b])) continue; /* it summed to infinity */
      s->pend_b[n] = b;
      den[2 * n] = s->ext[b].zz;
      den[2 * n + 1] = s->ext[b].zzz;
      n++;
    }
    if (n == 0) break;
    pre[0] = den[0];
    for (unsigned j = 1; j < 2 * n; j++) E_MUL(&pre[j], &pre[j - 1], &den[j]);
    E inv, t;
    E_INV(&inv, &pre[2 * n - 1]);
    for (unsigned j = 2 * n; j-- > 1;) {
      E_MUL(&t, &inv, &pre[j - 1]);
      E_MUL(&inv, &inv, &den[j]);
      den[j] = t;
    }
    den[0] = inv;
    for (unsigned i = 0; i < n; i++) {
      const PN(xyzz_t) *X = &s->ext[s->pend_b[i]];
      E_MUL(&s->pend_p[i].x, &X->x, &den[2 * i]);
      E_MUL(&s->pend_p[i].y, &X->y, &den[2 * i + 1]);
    }
    s->npend = n;
    PN(ba_drain)(s, &k);
    PN(ba_flush)(s, k);
    k = 0;
  }
  s->pcap = pcap;
}

/* out[v] = Σ_b (b + 1)·bucket_{v·nb + b} for the g windows whose buckets s holds (overflow buckets
 * first folded in, PN(ext_fold)), with batch-affine additions instead of the XYZZ running sum: each window's nb buckets are cut into S segments of
 * L = nb/S (S a power of two, g·S ≤ BA_CHAINS chains); chain (v, j) walks its segment from the top,
 * O += R and R += bucket, every chain's step in one batch (cs: 2·g·S accumulators, R then O), so
 * that R = Σ bucket and O = Σ (i + 1)·bucket_{jL+i}; then out[v] = Σ_j O_j + L·Σ_j j·R_j (a running
 * sum over the S chains and log2 L doublings). */
static void PN(reduce_ba)(PN(ba_t) * s, void *cmem, unsigned g, unsigned nb, PN(xyzz_t) * out) {
  PN(ba_t) chains, *cs = &chains;
  unsigned S = BA_CHAINS / g;
  if (S > nb / 4) S = nb / 4;
  unsigned p2 = 1;
  while (p2 * 2 <= S) p2 *= 2;
  S = p2;
  const unsigned L = nb / S, C = g * S;
  PN(ext_fold)(s, g * nb);
  PN(ba_init)(cs, cmem, 2 * C, 2 * C);
  memset(cs->state, 0, 2 * C);
  unsigned k = 0;
  /* one batch per step: O += R (R's value before this step, copied into the batch) and R += bucket
   * side by side; a last O += R after the walk gives the same Σ (i + 1)·bucket */
  for (unsigned i = L + 1; i-- > 0;) {
    for (unsigned c = 0; c < C; c++) {
      if (cs->state[c] & BA_SET) PN(ba_put)(cs, &k, C + c, &cs->bk[c].x, &cs->bk[c].y);
      if (i == 0) continue;
      const unsigned b = (c / S) * nb + (c % S) * L + i - 1;
      if (s->state[b] & BA_SET) PN(ba_put)(cs, &k, c, &s->bk[b].x, &s->bk[b].y);
    }
    PN(ba_flush)(cs, k);
    k = 0;
  }
  for (unsigned v = 0; v < g; v++) {
    PN(xyzz_t) acc, t;
    PN(set_inf)(&acc);
    PN(set_inf)(&t);
    for (unsigned j = S; j-- > 1;) {
      const unsigned c = v * S + j;
      if (cs->state[c] & BA_SET) PN(madd)(&t, &cs->bk[c].x, &cs->bk[c].y);
      PN(add)(&acc, &t);
    }
    for (unsigned d = L; d > 1; d >>= 1) PN(dbl)(&acc);
    for (unsigned j = 0; j < S; j++) {
      const unsigned c = C + v * S + j;
      if (cs->state[c] & BA_SET) PN(madd)(&acc, &cs->bk[c].x, &cs->bk[c].y);
    }
    out[v] = acc;
  }
}

/* A group of g windows over the same m points, in one pass over the points, with the g·nb buckets
 * side by side (window v's bucket b at v·nb + b) so that one batch, and one inversion, serves all
 * of them: out[v] = Σ_j digits[v·m + j] · base_{idx[j]} with digits in [−nb, nb] (weighted); with
 * digits == NULL (g = 1) the plain sum Σ_j base_{idx[j]}, the points dealt to the nb buckets in turn. */
static void PN(window_ba)(const uint8_t *bases, const uint32_t *idx, const int16_t *digits, size_t m, unsigned g,
                          unsigned nb, PN(ba_t) * s, void *cmem, PN(xyzz_t) * out) {
  const unsigned nbt = g * nb;
  memset(s->state, 0, nbt);
  unsigned k = 0, b_ = 0;
  for (size_t j = 0; j < m; j++) {
    if (j + BA_PREFETCH < m) {
      __builtin_prefetch(bases + (size_t)idx[j + BA_PREFETCH] * sizeof(PN(aff_t)));
      if (digits)
        for (unsigned v = 0; v < g; v++) {
          const int dp = digits[(size_t)v * m + j + BA_PREFETCH];
          if (dp) __builtin_prefetch(&s->bk[v * nb + (unsigned)(dp > 0 ? dp : -dp) - 1]);
        }
    }
    const PN(aff_t) *P = (const PN(aff_t) *)(bases + (size_t)idx[j] * sizeof(PN(aff_t)));
    if (!digits) {
      PN(ba_put)(s, &k, b_, &P->x, &P->y);
      if (++b_ == nb) b_ = 0;
      if (k == s->cap) {
        PN(ba_flush)(s, k);
        k = 0;
      }
      continue;
    }
    int negated = 0;
    E ny;
    for (unsigned v = 0; v < g; v++) {
      const int d = digits[(size_t)v * m + j];
      if (d == 0) continue;
      if (d > 0) {
        PN(ba_put)(s, &k, v * nb + (unsigned)d - 1, &P->x, &P->y);
      } else {
        if (!negated) {
          E_NEG(&ny, &P->y);
          negated = 1;
        }
        PN(ba_put)(s, &k, v * nb + (unsigned)(-d) - 1, &P->x, &ny);
      }
      if (k == s->cap) {
        PN(ba_flush)(s, k);
        k = 0;
        PN(ba_drain)(s, &k);
      }
    }
  }
  /* the last batch, then the pending points once more, now with the overflow buckets for those
   * that meet a waiting bucket again (no chain of small batches for a crowded bucket) */
  PN(ba_flush)(s, k);
  k = 0;
  s->pcap = 0;
  PN(ba_drain)(s, &k);
  PN(ba_flush)(s, k);

  /* weighted sums by the chain reduction (cmem: PN(ba_bytes)(2·BA_CHAINS, 2·BA_CHAINS), g ≤ BA_CHAINS) */
  if (digits && cmem && nb >= 16 && g <= BA_CHAINS) {
    PN(reduce_ba)(s, cmem, g, nb, out);
    return;
  }
  for (unsigned v = 0; v < g; v++) {
    const uint8_t *state = s->state + v * nb;
    const PN(aff_t) *bk = s->bk + v * nb;
    const PN(xyzz_t) *ext = s->ext + v * nb;
    PN(xyzz_t) running;
    PN(set_inf)(&running);
    PN(set_inf)(&out[v]);
    unsigned top = nb;
    while (top > 0 && state[top - 1] == 0) top--;
    for (unsigned b = top; b-- > 0;) {
      const uint8_t st = state[b];
      if (st & BA_SET) PN(madd)(&running, &bk[b].x, &bk[b].y);
      if (st & BA_EXT) PN(add)(&running, &ext[b]);
      if (digits) PN(add)(&out[v], &running);
    }
    if (!digits) out[v] = running;
  }
}

/* Batch capacity for nbt buckets: large enough to spread the inversion (≈ 330 multiplications),
 * small against nbt so that few points meet a bucket already waiting in the batch. */
static unsigned PN(ba_cap)(unsigned nbt) {
  unsigned cap = nbt / MSM_BA_CAP_DIV;
  if (cap > MSM_BA_CAP_MAX) cap = MSM_BA_CAP_MAX;
  if (cap < 32) cap = nbt < 32 ? nbt : 32;
  return cap;
}

typedef struct {
  const uint8_t *bases, *bases1; /* the points of the windows; of the ones' pass */
  const uint32_t *idx, *idx1;    /* [0, m) into bases; [0, ones) into bases1 (scalar 1) */
  const int16_t *digits; /* [w·m + j] */
  size_t m, ones;
  unsigned nb, nb_ones, windows, group, tasks; /* task 0 = the ones when ones > 0, then the window groups */
  unsigned slices; /* > 0: a fixed-base table's one window over m (point, window) pairs, cut into this many slices */
  PN(xyzz_t) * results;                         /* [0] the ones, [1 + w] window w */
  atomic_uint next;
  atomic_int failed;
} PN(ba_job_t);

static void *PN(ba_worker)(void *arg) {
  PN(ba_job_t) *job = arg;
  /* the ones' pass deals buckets in turn, so a batch of nb_ones never meets a busy bucket */
  const unsigned nbt = job->group * job->nb, nbmax = nbt > job->nb_ones ? nbt : job->nb_ones;
  const unsigned cap = PN(ba_cap)(nbt) > job->nb_ones ? PN(ba_cap)(nbt) : job->nb_ones;
  const size_t bytes = PN(ba_bytes)(nbmax, cap);
  void *mem = scratch_alloc(bytes);
  const size_t cbytes = PN(ba_bytes)(2 * BA_CHAINS, 2 * BA_CHAINS);
  void *cmem = scratch_alloc(cbytes);
  if (!mem || !cmem) {
    scratch_free(mem, bytes);
    scratch_free(cmem, cbytes);
    atomic_store(&job->failed, 1);
    return NULL;
  }
  PN(ba_t) s;
  const unsigned first = job->ones ? 1 : 0;
  for (;;) {
    const unsigned t = atomic_fetch_add(&job->next, 1);
    if (t >= job->tasks) break;
    if (t < first) {
      PN(ba_init)(&s, mem, job->nb_ones, job->nb_ones);
      PN(window_ba)(job->bases1, job->idx1, NULL, job->ones, 1, job->nb_ones, &s, NULL, &job->results[0]);
    } else if (job->slices) {
      const size_t sl = t - first, lo = job->m * sl / job->slices, hi = job->m * (sl + 1) / job->slices;
      PN(ba_init)(&s, mem, job->nb, PN(ba_cap)(job->nb));
      PN(window_ba)(job->bases, job->idx + lo, job->digits + lo, hi - lo, 1, job->nb, &s, cmem, &job->results[1 + sl]);
    } else {
      const unsigned w0 = (t - first) * job->group;
      const unsigned g = job->windows - w0 < job->group ? job->windows - w0 : job->group;
      PN(ba_init)(&s, mem, g * job->nb, PN(ba_cap)(g * job->nb));
      PN(window_ba)(job->bases, job->idx, job->digits + (size_t)w0 * job->m, job->m, g, job->nb, &s, cmem,
                    &job->results[1 + w0]);
    }
  }
  scratch_free(mem, bytes);
  scratch_free(cmem, cbytes);
  return NULL;
}

/* Sorts an MSM's terms for the batch-affine paths into a scratch block of n indices (release it with
 * scratch_free(idx, n·4)): the indices of the scalars other than 0 and 1 first (*m of them), then
 * those of the scalars equal to 1 (*ones); zero scalars and bases at infinity (all-zero affine) are
 * dropped. *maxbits: the widest of the first group's scalars in bits (0 when *m = 0). Scalars:
 * little-endian, scalar_size bytes each. NULL when out of memory. */
static uint32_t *PN(split_scalars)(const uint8_t *bases, const uint8_t *scalars, size_t scalar_size, size_t n,
                                   size_t *m_out, size_t *ones_out, unsigned *maxbits_out) {
  static const uint8_t zero[sizeof(PN(aff_t))] = {0};
  uint32_t *idx = scratch_alloc(sizeof(uint32_t) * n);
  if (!idx) return NULL;
  size_t m = 0, ones = 0;
  unsigned maxbits = 0;
  for (size_t i = 0; i < n; i++) {
    const uint8_t *sc = scalars + i * scalar_size;
    size_t top = scalar_size;
    while (top > 0 && sc[top - 1] == 0) top--;
    if (top == 0 || memcmp(bases + i * sizeof(PN(aff_t)), zero, sizeof zero) == 0) continue;
    if (top == 1 && sc[0] == 1) {
      idx[n - 1 - ones++] = (uint32_t)i;
      continue;
    }
    idx[m++] = (uint32_t)i;
    const unsigned bits = (unsigned)(top - 1) * 8 + (unsigned)(32 - __builtin_clz((unsigned)sc[top - 1]));
    if (bits > maxbits) maxbits = bits;
  }
  /* the ones were stored from the end: move them right after the others */
  if (ones) memmove(idx + m, idx + n - ones, sizeof(uint32_t) * ones);
  *m_out = m;
  *ones_out = ones;
  *maxbits_out = maxbits;
  return idx;
}

/* Batch-affine MSM (msm.h semantics). Bases at infinity and zero scalars are dropped, bases with
 * scalar 1 are summed apart (one unweighted pass: witnesses are mostly bits), and the window
 * width and count follow the number of remaining points and their longest scalar. With glv (G1),
 * each remaining k·P becomes k1·(±P) + k2·(±φ(P)) with 127-bit k1, k2 (msm_glv_split). */
static int PN(msm_ba_any)(const uint8_t *bases, const uint8_t *scalars, size_t scalar_size, size_t n,
                          unsigned threads, uint8_t *out, int glv) {
  if (n == 0) return 0;
  if (n > UINT32_MAX) return PN(msm)(bases, scalars, scalar_size, n, threads, out); /* 32-bit indices */
  const size_t idx_bytes = sizeof(uint32_t) * n;
  size_t m, ones;
  unsigned maxbits;
  uint32_t *idx = PN(split_scalars)(bases, scalars, scalar_size, n, &m, &ones, &maxbits);
  if (!idx) return -1;
  const size_t m0 = m;
  if (m == 0 && ones == 0) {
    scratch_free(idx, idx_bytes);
    return 0;
  }
  const uint8_t *wbases = bases, *wscalars = scalars;
  const uint32_t *widx = idx;
  size_t wss = scalar_size;
  size_t glv_bytes = 0;
  uint8_t *glv_mem = NULL;
  (void)glv;
#ifdef E_GLV_BETA
  if (glv && m) {
    /* 2m points (±P, ±φ(P)), 16-byte scalars, identity indices, in one block */
    glv_bytes = (sizeof(PN(aff_t)) + 16 + sizeof(uint32_t)) * 2 * m;
    glv_mem = scratch_alloc(glv_bytes);
    if (!glv_mem) {
      scratch_free(idx, idx_bytes);
      return -1;
    }
    PN(aff_t) *gb = (PN(aff_t) *)glv_mem;
    uint8_t *gs = glv_mem + sizeof(PN(aff_t)) * 2 * m;
    uint32_t *gi = (uint32_t *)(gs + 16 * 2 * m);
    size_t m2 = 0;
    maxbits = 0;
    for (size_t j = 0; j < m; j++) {
      const PN(aff_t) *P = (const PN(aff_t) *)(bases + (size_t)idx[j] * sizeof(PN(aff_t)));
      uint8_t k[2][16];
      int neg[2];
      msm_glv_split(scalars + (size_t)idx[j] * scalar_size, scalar_size, k[0], &neg[0], k[1], &neg[1]);
      for (int h = 0; h < 2; h++) {
        uint64_t lo, hi;
        memcpy(&lo, k[h], 8);
        memcpy(&hi, k[h] + 8, 8);
        if ((lo | hi) == 0) continue;
        const unsigned bits = hi ? 128 - (unsigned)__builtin_clzll(hi) : 64 - (unsigned)__builtin_clzll(lo);
        if (bits > maxbits) maxbits = bits;
        if (h == 0)
          gb[m2].x = P->x;
        else
          E_MUL(&gb[m2].x, &P->x, E_GLV_BETA);
        if (neg[h])
          E_NEG(&gb[m2].y, &P->y);
        else
          gb[m2].y = P->y;
        memcpy(gs + 16 * m2, k[h], 16);
        gi[m2] = (uint32_t)m2;
        m2++;
      }
    }
    wbases = glv_mem;
    wscalars = gs;
    widx = gi;
    wss = 16;
    m = m2;
  }
#endif
  const unsigned c = msm_window_bits_ba(m, maxbits);
  const unsigned windows = m ? maxbits / c + 1 : 0;
  const size_t digit_bytes = sizeof(int16_t) * m * windows, result_bytes = sizeof(PN(xyzz_t)) * (1 + windows);
  int16_t *digits = m ? scratch_alloc(digit_bytes) : NULL;
  PN(xyzz_t) *results = scratch_alloc(result_bytes);
  if ((m && !digits) || !results) {
    scratch_free(idx, idx_bytes);
    scratch_free(glv_mem, glv_bytes);
    scratch_free(digits, digit_bytes);
    scratch_free(results, result_bytes);
    return -1;
  }
  if (m) msm_recode_idx(wscalars, wss, widx, m, c, windows, digits);

  unsigned nb_ones = 32;
  while (nb_ones < 1024 && nb_ones * 64 < ones) nb_ones <<= 1;
  /* windows per task: as many as keep the group's buckets within MSM_BA_GROUP_BUCKETS, spread
   * evenly over the threads (a lone MSM still uses every core) */
  const unsigned nb = 1u << (c - 1);
  msm_enter();
  unsigned t = msm_thread_count(threads, windows + (ones ? 1 : 0));
  unsigned gmax = MSM_BA_GROUP_BUCKETS / nb;
  if (gmax < 1) gmax = 1;
  unsigned group = 1, groups = 0;
  if (windows) {
    const unsigned per_thread = (windows + t - 1) / t;
    const unsigned rounds = (per_thread + gmax - 1) / gmax;
    group = (per_thread + rounds - 1) / rounds;
    groups = (windows + group - 1) / group;
  }
  const unsigned tasks = groups + (ones ? 1 : 0);
  if (t > tasks) t = tasks;
  PN(ba_job_t) job = {.bases = wbases, .bases1 = bases, .idx = widx, .idx1 = idx + m0, .digits = digits, .m = m,
                      .ones = ones, .nb = nb,
                      .nb_ones = nb_ones, .windows = windows, .group = group, .tasks = tasks, .results = results};
  atomic_init(&job.next, 0);
  atomic_init(&job.failed, 0);
  msm_run(PN(ba_worker), &job, t);
  msm_leave();
  scratch_free(idx, idx_bytes);
  scratch_free(glv_mem, glv_bytes);
  scratch_free(digits, digit_bytes);
  if (atomic_load(&job.failed)) {
    scratch_free(results, result_bytes);
    return -1;
  }

  PN(xyzz_t) acc;
  PN(set_inf)(&acc);
  if (windows) {
    acc = results[windows];
    for (unsigned w = windows - 1; w-- > 0;) {
      for (unsigned k = 0; k < c; k++) PN(dbl)(&acc);
      PN(add)(&acc, &results[1 + w]);
    }
  }
  if (ones) PN(add)(&acc, &results[0]);
  scratch_free(results, result_bytes);
  return PN(to_jacobian)(&acc, out);
}

static int PN(msm_ba)(const uint8_t *bases, const uint8_t *scalars, size_t scalar_size, size_t n, unsigned threads,
                      uint8_t *out) {
  return PN(msm_ba_any)(bases, scalars, scalar_size, n, threads, out, 0);
}
#ifdef E_GLV_BETA
static int PN(msm_glv)(const uint8_t *bases, const uint8_t *scalars, size_t scalar_size, size_t n, unsigned threads,
                       uint8_t *out) {
  return PN(msm_ba_any)(bases, scalars, scalar_size, n, threads, out, 1);
}
#endif

/* ---- fixed-base tables (msm.h: msm_table_build / msm_fixed) ----
 * For bases that never change (a proving key's), pts[v·n + i] = 2^(c·v)·base_i for v < W: then
 * every window's digit of a scalar can go into ONE set of 2^(c−1) buckets, Σ_v d_v·2^(c·v)·P_i =
 * Σ_v d_v·pts[v·n + i], so the MSM is a single batch-affine "window" over m·W table points with one
 * bucket reduction and no doublings, instead of W windows with a reduction each (and, with GLV,
 * 2m points over half the windows). */

/* Fills the columns [lo, hi) of pts (W rows of n points) from bases [lo, hi): row 0 is a copy,
 * each next row c doublings of the one before (XYZZ), made affine with one batched inversion per
 * row. Bases at infinity stay all zero. Returns 0, or −1 when out of memory. */
static int PN(table_fill)(const uint8_t *all_bases, size_t n, size_t lo, size_t hi, unsigned c, unsigned W,
                          uint8_t *all_pts) {
  const size_t ps = sizeof(PN(aff_t));
  const uint8_t *bases = all_bases + lo * ps;
  uint8_t *pts = all_pts + lo * ps;
  const size_t stride = n;
  n = hi - lo;
  memcpy(pts, bases, n * ps);
  if (W < 2 || n == 0) return 0;
  static const uint8_t zero[sizeof(PN(aff_t))] = {0};
  const size_t bytes = (sizeof(PN(xyzz_t)) + 2 * sizeof(E)) * n;
  uint8_t *mem = scratch_alloc(bytes);
  if (!mem) return -1;
  PN(xyzz_t) *acc = (PN(xyzz_t) *)mem;
  E *pre = (E *)(acc + n), *den = pre + n;
  for (size_t i = 0; i < n; i++) {
    const PN(aff_t) *P = (const PN(aff_t) *)(bases + i * ps);
    if (memcmp(P, zero, ps) == 0) {
      PN(set_inf)(&acc[i]);
      continue;
    }
    acc[i].x = P->x;
    acc[i].y = P->y;
    E_SET_ONE(&acc[i].zz);
    E_SET_ONE(&acc[i].zzz);
  }
  for (unsigned v = 1; v < W; v++) {
    PN(aff_t) *row = (PN(aff_t) *)(pts + (size_t)v * stride * ps);
    E run;
    E_SET_ONE(&run);
    size_t finite = 0;
    for (size_t i = 0; i < n; i++) {
      if (PN(is_inf)(&acc[i])) continue;
      for (unsigned k = 0; k < c; k++) PN(dbl)(&acc[i]);
      if (PN(is_inf)(&acc[i])) continue; /* only a base off the group (y = 0) gets here: it stays infinity */
      E_MUL(&den[i], &acc[i].zz, &acc[i].zzz);
      pre[i] = run;
      E_MUL(&run, &run, &den[i]);
      finite++;
    }
    E inv;
    if (finite) E_INV(&inv, &run);
    for (size_t i = n; i-- > 0;) {
      if (PN(is_inf)(&acc[i])) {
        memset(&row[i], 0, ps);
        continue;
      }
      E di, izz, izzz;
      E_MUL(&di, &inv, &pre[i]); /* 1/(ZZ·ZZZ) */
      E_MUL(&inv, &inv, &den[i]);
      E_MUL(&izz, &acc[i].zzz, &di);
      E_MUL(&izzz, &acc[i].zz, &di);
      E_MUL(&row[i].x, &acc[i].x, &izz);
      E_MUL(&row[i].y, &acc[i].y, &izzz);
    }
  }
  scratch_free(mem, bytes);
  return 0;
}

/* Σ scalar_i · base_i over a table of PN(table_fill) (n bases, width c, W rows; msm.h semantics
 * for the scalars and out). Zero scalars and bases at infinity are dropped, scalar-1 bases summed
 * apart; the m·W (point, window) pairs are cut into slices, one per thread. */
static int PN(msm_fixed)(const uint8_t *pts, size_t n, unsigned c, unsigned W, const uint8_t *scalars,
                         size_t scalar_size, unsigned threads, uint8_t *out) {
  if (n == 0) return 0;
  const size_t idx_bytes = sizeof(uint32_t) * n;
  size_t m, ones;
  unsigned maxbits; /* unused: the table's windows cover every scalar */
  uint32_t *idx = PN(split_scalars)(pts, scalars, scalar_size, n, &m, &ones, &maxbits);
  if (!idx) return -1;
  if (m == 0 && ones == 0) {
    scratch_free(idx, idx_bytes);
    return 0;
  }
#ifdef E_GLV_BETA
  if (m * 8 < n) {
    /* few scalars beyond 0 and 1 (a Merkle-like witness): the table's one reduction over 2^(c−1)
     * buckets, sized for n, would outweigh their additions; the plain MSM over row 0 (the bases)
     * sizes its windows for them (bench:msm, G1 2^13, 4 % full scalars: 395 against 613 ns/pt) */
    scratch_free(idx, idx_bytes);
    return PN(msm_ba_any)(pts, scalars, scalar_size, n, threads, out, 1);
  }
#endif
  const size_t M = m * W;
  const size_t digit_bytes = sizeof(int16_t) * M, idx2_bytes = sizeof(uint32_t) * M;
  int16_t *digits = M ? scratch_alloc(digit_bytes) : NULL;
  uint32_t *idx2 = M ? scratch_alloc(idx2_bytes) : NULL;
  msm_enter();
  unsigned t = msm_thread_count(threads, 64);
  const unsigned slices = M ? (M / t >= 4096 ? t : (unsigned)(M / 4096) + 1) : 0;
  const unsigned tasks = slices + (ones ? 1 : 0);
  const size_t result_bytes = sizeof(PN(xyzz_t)) * (1 + slices);
  PN(xyzz_t) *results = scratch_alloc(result_bytes);
  if ((M && (!digits || !idx2)) || !results) {
    msm_leave();
    scratch_free(idx, idx_bytes);
    scratch_free(digits, digit_bytes);
    scratch_free(idx2, idx2_bytes);
    scratch_free(results, result_bytes);
    return -1;
  }
  if (m) {
    msm_recode_idx(scalars, scalar_size, idx, m, c, W, digits);
    for (unsigned v = 0; v < W; v++)
      for (size_t j = 0; j < m; j++) idx2[(size_t)v * m + j] = (uint32_t)((size_t)v * n + idx[j]);
  }
  unsigned nb_ones = 32;
  while (nb_ones < 1024 && nb_ones * 64 < ones) nb_ones <<= 1;
  if (t > tasks) t = tasks;
  PN(ba_job_t) job = {.bases = pts, .bases1 = pts, .idx = idx2, .idx1 = idx + m, .digits = digits, .m = M, .ones = ones,
                      .nb = 1u << (c - 1), .nb_ones = nb_ones, .group = 1, .slices = slices, .tasks = tasks,
                      .results = results};
  atomic_init(&job.next, 0);
  atomic_init(&job.failed, 0);
  msm_run(PN(ba_worker), &job, t);
  msm_leave();
  scratch_free(idx, idx_bytes);
  scratch_free(digits, digit_bytes);
  scratch_free(idx2, idx2_bytes);
  if (atomic_load(&job.failed)) {
    scratch_free(results, result_bytes);
    return -1;
  }
  PN(xyzz_t) acc;
  PN(set_inf)(&acc);
  if (ones) acc = results[0];
  for (unsigned sl = 0; sl < slices; sl++) PN(add)(&acc, &results[1 + sl]);
  scratch_free(results, result_bytes);
  return PN(to_jacobian)(&acc, out);
}

#undef E
#undef E_ADD
#undef E_INV
#undef E_MUL_LAZY
#undef E_GLV_BETA
#undef E_SUB
#undef E_NEG
#undef E_MUL
#undef E_SQR
#undef E_IS_ZERO
#undef E_SET_ONE
#undef PN
#undef PN_IFMA
#undef VE
#undef VE_
#undef BA_SLOTS
#undef BA_CHAINS
