/* Template (no include guard): Pippenger MSM over one BN254 group (G1 or G2; both have a = 0).
 * Before including, define
 *   E                     coordinate field element type (fq_t / fq2_t)
 *   E_ADD/E_SUB/E_NEG/E_MUL/E_SQR(r, a[, b]), E_IS_ZERO(a), E_SET_ONE(r)
 *   PN(name)              naming of this instance's functions
 * (all of which this file #undefs at its end)
 * Uses from msm.c: msm_window_bits, msm_recode, msm_thread_count, msm_enter/msm_leave.
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
  pthread_t tids[MSM_MAX_THREADS];
  unsigned started = 0;
  for (; started + 1 < t; started++)
    if (pthread_create(&tids[started], NULL, PN(worker), &job) != 0) break;
  PN(worker)(&job);
  for (unsigned k = 0; k < started; k++) pthread_join(tids[k], NULL);
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
  if (PN(is_inf)(&acc)) return 0;
  /* XYZZ → Jacobian without inversion: X·ZZ·ZZZ², Y·ZZ³·ZZZ², ZZ·ZZZ. */
  E zzz2, u, zz2, jac[3];
  E_SQR(&zzz2, &acc.zzz);
  E_MUL(&u, &acc.zz, &zzz2);
  E_MUL(&jac[0], &acc.x, &u);
  E_SQR(&zz2, &acc.zz);
  E_MUL(&jac[1], &acc.y, &zz2);
  E_MUL(&jac[1], &jac[1], &u);
  E_MUL(&jac[2], &acc.zz, &acc.zzz);
  memcpy(out, jac, sizeof jac);
  return 1;
}

#undef E
#undef E_ADD
#undef E_SUB
#undef E_NEG
#undef E_MUL
#undef E_SQR
#undef E_IS_ZERO
#undef E_SET_ONE
#undef PN
