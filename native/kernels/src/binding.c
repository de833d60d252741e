/* N-API binding for the circomlib Poseidon in poseidon.c. Uses only node_api.h.
 *
 * Exports (all byte strings are big-endian 32-byte BN254 Fr elements, canonical: < r):
 *   hash(out, in0[, in1 … in6]) → out   out: Uint8Array(≥ 32), writes out[0..32)
 *   hashBatch(input, arity, out) → out  input: Uint8Array(count·arity·32), out: Uint8Array(≥ count·32)
 *   impl() → "adx" | "c"                multiplication backend in use
 *   selectImpl(name) → boolean          force "c" or "adx" (tests/benchmarks)
 *   batchImpl() → "ifma" | "scalar"     hashBatch kernel in use (eight-lane AVX-512 IFMA or scalar)
 *   selectBatchImpl(name) → boolean     force "ifma" or "scalar" (tests/benchmarks)
 *   MAX_INPUTS = 7
 *   base58Decode(s) → Uint8Array | number   bytes of the base58 string s (same as bs58.decode), or
 *                                          the index of its first invalid character
 *   msmG1(bases, scalars, out[, threads]) → boolean   BN254 G1 multi-scalar multiplication in
 *   msmG2(bases, scalars, out[, threads]) → boolean   ffjavascript's layout (msm.h): bases n affine
 *        Montgomery points (64 / 128 bytes each), scalars n plain LE integers of 1..32 bytes each,
 *        out ≥ 96 / 192 bytes receives the Jacobian sum; false (out untouched) for infinity.
 *        threads: 0 or omitted = CPUs shared among running MSMs. Blocks the calling thread.
 *   msmJobs(delta) → number   adds delta to the process-wide open-job count (a proof: +1 at its start,
 *        −1 at its end) that automatic thread counts divide the CPUs by; returns the new count. What a
 *        thread leaves open when its environment is torn down (a terminated worker) is taken off again
 *   msmImpl() → "ifma" | "adx" | "c",  msmSelectImpl(name) → boolean   (the MSM's, frFft's and prover's multiplication)
 *   msmAlgorithm() → "glv" | "affine" | "xyzz",  msmSelectAlgorithm(name) → boolean   (the MSM's bucket algorithm)
 *   mallocTrim() → boolean   glibc malloc_trim(0) (false without glibc or when nothing was released)
 *   writeNonBlocking(fd, buf) → number   one write of buf that never blocks the calling thread, whatever
 *        the descriptor's O_NONBLOCK (which a child spawned with an inherited stdio may clear): on a socket
 *        send(MSG_DONTWAIT | MSG_NOSIGNAL), else write(); returns the bytes written, or −errno (−EAGAIN:
 *        full; from write() on another kind of descriptor only when it is non-blocking itself)
 *   frFft(buf, root[, scale]) → buf   in-place radix-2 NTT over BN254 Fr in ffjavascript's layout
 *        (fft.h): buf n·32 bytes (n a power of two ≥ 2, 8-byte aligned) of Montgomery LE elements,
 *        root a primitive n-th root of unity, scale a factor applied to every output (32 bytes
 *        Montgomery LE each); ifft = root⁻¹ and scale n⁻¹
 *   groth16Load(zkey) → handle   parses a snarkjs Groth16 zkey once into a resident key (groth16.h);
 *        the handle (an external, freed when collected) owns it. Error code ERR_GROTH16_KEY (malformed
 *        or unsupported key, message names the section) or ERR_GROTH16_NOMEM
 *   groth16Info(handle) → {nVars, nPublic, domainSize, nCoefs, bytes, tableBytes, tableBytesNeeded,
 *        tableSource ('none' | 'built' | 'file' | 'shared'), tableNote (string | null: what went wrong
 *        with the table file)}
 *   groth16Tables(handle, maxBytes[, path]) → number   gives the key fixed-base MSM tables within maxBytes
 *        (groth16.h g16_build_tables: shared by the keys of the process with the same points; else read
 *        from the table file at path, else built on every CPU by the first and written there; blocks,
 *        ≈ 1.2 s for inclusion_26_1 on 2 cores when built); returns the tables' bytes
 *   groth16TableSets() → {sets, bytes}   the process's shared table sets and their bytes
 *   groth16Prove(handle, wtns, out[, threads[, rs[, times]]]) → number   a proof for a .wtns witness
 *        (snarkjs' format): out ≥ 256 bytes receives π_A (x, y), π_B (x.c0, x.c1, y.c0, y.c1), π_C
 *        (x, y) as plain LE 32-byte coordinates; returns the infinity flags (bit 0 A, 1 B, 2 C).
 *        threads: MSM threads (0 / omitted = automatic); rs: 64 bytes (r, s plain LE) or
 *        undefined for CSPRNG values; times: Float64Array(16) ← per-stage thread-CPU ms [0..8) and
 *        wall ms [8..16) (witness, abc, fft, msmA, msmB1, msmB2, msmCH, finish). Errors:
 *        ERR_GROTH16_WITNESS (malformed witness), ERR_GROTH16_ARG (r or s ≥ r), ERR_GROTH16_NOMEM
 *   msmTable(group, bases) → handle   fixed-base table (msm.h msm_table_build) of n affine bases (group 1:
 *        64 bytes each, 2: 128), owned by the handle; msmFixed(table, scalars, out[, threads]) → boolean
 *        msmG1/msmG2's result over those bases; msmTableBytes(table) → number. Error ERR_MSM_NOMEM
 *   groth16Verify(vk, proof, publics) → boolean   Groth16 verification (pairing.h): vk g16_vk_bytes
 *        (α1, β2, γ2, δ2, IC), proof 256 bytes (groth16Prove's layout), publics n·32 bytes, all plain LE
 *        coordinates / integers, all-zero point = infinity. Error ERR_GROTH16_VERIFY_INPUT (message: which
 *        field and why) for a coordinate ≥ q, a point off its curve, π_B outside G2, a public ≥ r, a wrong size
 *   bn254Pairing(p, q, out) → out   e(P, Q) for P in G1 (64 bytes), Q in G2 (128 bytes), out ≥ 384 bytes
 *        ← the Fq12 value (12 plain LE coordinates, ffjavascript's order); same errors
 * Errors: TypeError (code ERR_INVALID_ARG_TYPE / ERR_INVALID_ARG_VALUE) for wrong shapes;
 * RangeError (code ERR_POSEIDON_INPUT_RANGE) naming the input when a value is >= r. */
#ifndef NAPI_VERSION
#define NAPI_VERSION 8
#endif
#include <node_api.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base58.h"
#include "fft.h"
#include "groth16.h"
#include "lightkey.h"
#include "msm.h"
#include "pairing.h"
#include "poseidon.h"

#define CHECK(call)                                                  \
  do {                                                               \
    if ((call) != napi_ok) {                                         \
      napi_throw_error(env, NULL, "refract_native: " #call " failed"); \
      return NULL;                                                   \
    }                                                                \
  } while (0)

/* Reads a Uint8Array (or Buffer); returns 0 and throws a TypeError otherwise.
 * `what` / `index` name the argument in the message ("input 3"); index < 0 omits the number. */
static int get_u8(napi_env env, napi_value v, const char *what, long index, uint8_t **data, size_t *len) {
  napi_typedarray_type type;
  void *ptr;
  size_t length;
  /* napi_get_typedarray_info fails (napi_invalid_arg) for anything that is not a typed array */
  if (napi_get_typedarray_info(env, v, &type, &length, &ptr, NULL, NULL) == napi_ok && type == napi_uint8_array) {
    *data = (uint8_t *)ptr;
    *len = length;
    return 1;
  }
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (pending) {
    napi_value ignored;
    napi_get_and_clear_last_exception(env, &ignored);
  }
  char msg[128];
  if (index >= 0)
    snprintf(msg, sizeof msg, "%s %ld must be a Uint8Array", what, index);
  else
    snprintf(msg, sizeof msg, "%s must be a Uint8Array", what);
  napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", msg);
  return 0;
}

static napi_value throw_range(napi_env env, const char *msg) {
  napi_throw_range_error(env, "ERR_POSEIDON_INPUT_RANGE", msg);
  return NULL;
}

static napi_value js_hash(napi_env env, napi_callback_info info) {
  size_t argc = POSEIDON_MAX_INPUTS + 2;
  napi_value argv[POSEIDON_MAX_INPUTS + 2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 2 || argc > POSEIDON_MAX_INPUTS + 1) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "hash(out, ...inputs) takes 1..7 inputs");
    return NULL;
  }
  uint8_t *out;
  size_t out_len;
  if (!get_u8(env, argv[0], "out", -1, &out, &out_len)) return NULL;
  if (out_len < 32) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "out must have at least 32 bytes");
    return NULL;
  }
  const size_t n = argc - 1;
  uint8_t buf[POSEIDON_MAX_INPUTS * 32];
  for (size_t i = 0; i < n; i++) {
    uint8_t *p;
    size_t len;
    if (!get_u8(env, argv[i + 1], "input", (long)i, &p, &len)) return NULL;
    if (len != 32) {
      char msg[96];
      snprintf(msg, sizeof msg, "Poseidon input %zu must be 32 bytes, got %zu", i, len);
      return throw_range(env, msg);
    }
    memcpy(buf + 32 * i, p, 32);
  }
  int bad = poseidon_hash_be(buf, n, out);
  if (bad >= 0) {
    char msg[128];
    snprintf(msg, sizeof msg, "Poseidon input %d is not a BN254 field element (must be < r)", bad);
    return throw_range(env, msg);
  }
  return argv[0];
}

static napi_value js_hash_batch(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc != 3) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "hashBatch(input, arity, out) takes 3 arguments");
    return NULL;
  }
  uint8_t *in, *out;
  size_t in_len, out_len;
  if (!get_u8(env, argv[0], "input", -1, &in, &in_len)) return NULL;
  uint32_t arity;
  if (napi_get_value_uint32(env, argv[1], &arity) != napi_ok || arity < 1 || arity > POSEIDON_MAX_INPUTS) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "arity must be an integer in 1..7");
    return NULL;
  }
  if (!get_u8(env, argv[2], "out", -1, &out, &out_len)) return NULL;
  const size_t stride = (size_t)arity * 32;
  if (in_len % stride != 0) {
    char msg[112];
    snprintf(msg, sizeof msg, "input length %zu is not a multiple of %zu (arity × 32)", in_len, stride);
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", msg);
    return NULL;
  }
  const size_t count = in_len / stride;
  if (out_len < count * 32) {
    char msg[96];
    snprintf(msg, sizeof msg, "out must have at least %zu bytes", count * 32);
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", msg);
    return NULL;
  }
  /* Each tuple is read completely before its 32-byte result is written and results are
   * written at 32·k ≤ stride·k, so hashing in place (out == in) is safe. */
  long bad = poseidon_hash_batch_be(in, arity, count, out);
  if (bad >= 0) {
    char msg[160];
    snprintf(msg, sizeof msg,
             "Poseidon batch item %ld input %ld is not a BN254 field element (must be < r)",
             bad / (long)arity, bad % (long)arity);
    return throw_range(env, msg);
  }
  return argv[2];
}

/* impl() / batchImpl() / msmImpl(): the name `name_fn` reports. */
static napi_value impl_name(napi_env env, const char *(*name_fn)(void)) {
  napi_value s;
  CHECK(napi_create_string_utf8(env, name_fn(), NAPI_AUTO_LENGTH, &s));
  return s;
}

static napi_value js_impl(napi_env env, napi_callback_info info) {
  (void)info;
  return impl_name(env, poseidon_impl_name);
}

static napi_value js_batch_impl(napi_env env, napi_callback_info info) {
  (void)info;
  return impl_name(env, poseidon_batch_impl_name);
}

/* selectImpl(name) / msmSelectImpl(name): `select` forces the named multiplication backend. */
static napi_value select_impl_by_name(napi_env env, napi_callback_info info, int (*select)(const char *), const char *usage) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  char name[16] = {0};
  size_t len = 0;
  if (argc < 1 || napi_get_value_string_utf8(env, argv[0], name, sizeof name, &len) != napi_ok) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", usage);
    return NULL;
  }
  napi_value r;
  CHECK(napi_get_boolean(env, select(name) != 0, &r));
  return r;
}

static napi_value js_select_impl(napi_env env, napi_callback_info info) {
  return select_impl_by_name(env, info, poseidon_select_impl, "selectImpl(name) takes a string");
}

static napi_value js_select_batch_impl(napi_env env, napi_callback_info info) {
  return select_impl_by_name(env, info, poseidon_select_batch_impl, "selectBatchImpl(name) takes a string");
}

/* base58Decode(s): s is read as UTF-8, so a non-ASCII character is an invalid byte (≥ 0x80) at its own
 * index (every character before it is ASCII), never folded into an ASCII one as latin1 would. */
static napi_value js_base58_decode(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  size_t len = 0;
  if (argc < 1 || napi_get_value_string_utf8(env, argv[0], NULL, 0, &len) != napi_ok) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "base58Decode(s) takes a string");
    return NULL;
  }
  char stack_buf[4096];
  char *s = len < sizeof stack_buf ? stack_buf : (char *)malloc(len + 1);
  if (!s) {
    napi_throw_error(env, NULL, "refract native: out of memory");
    return NULL;
  }
  size_t got = 0;
  napi_get_value_string_utf8(env, argv[0], s, len + 1, &got);
  /* Each leading '1' is one zero byte and the rest decode to fewer bytes than characters, so the
   * output never exceeds the character count (base58_decoded_max ignores leading zeros). */
  const size_t cap = got + 1;
  uint8_t stack_out[4096];
  uint8_t *tmp = cap <= sizeof stack_out ? stack_out : (uint8_t *)malloc(cap);
  long n = tmp ? base58_decode(s, got, tmp, cap) : -2;
  if (s != stack_buf) free(s);
  napi_value result = NULL;
  if (n >= 0) {
    void *data;
    napi_value ab;
    if (napi_create_arraybuffer(env, (size_t)n, &data, &ab) == napi_ok) {
      memcpy(data, tmp, (size_t)n);
      napi_create_typedarray(env, napi_uint8_array, (size_t)n, ab, 0, &result);
    }
  } else if (n <= -10) {
    napi_create_int64(env, -n - 10, &result);
  } else {
    napi_throw_error(env, NULL, "refract native: base58 decode failed (out of memory)");
  }
  if (tmp != stack_out) free(tmp);
  return result;
}

/* Reads up to *argc arguments into argv (*argc becomes the count given); returns 0 after throwing
 * a TypeError with `usage` when fewer than `min` were given or the call info is unreadable. */
static int get_args(napi_env env, napi_callback_info info, size_t min, size_t *argc, napi_value *argv, const char *usage) {
  if (napi_get_cb_info(env, info, argc, argv, NULL, NULL) != napi_ok || *argc < min) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", usage);
    return 0;
  }
  return 1;
}

/* msmG1 / msmG2 (group 1 / 2): see the header comment. */
static napi_value js_msm(napi_env env, napi_callback_info info, int group) {
  size_t argc = 4;
  napi_value argv[4];
  if (!get_args(env, info, 3, &argc, argv, "msm(bases, scalars, out[, threads]) takes 3 or 4 arguments")) return NULL;
  uint8_t *bases, *scalars, *out;
  size_t bases_len, scalars_len, out_len;
  if (!get_u8(env, argv[0], "bases", -1, &bases, &bases_len)) return NULL;
  if (!get_u8(env, argv[1], "scalars", -1, &scalars, &scalars_len)) return NULL;
  if (!get_u8(env, argv[2], "out", -1, &out, &out_len)) return NULL;
  uint32_t threads = 0;
  napi_valuetype tt = napi_undefined;
  if (argc > 3) napi_typeof(env, argv[3], &tt);
  if (tt != napi_undefined && napi_get_value_uint32(env, argv[3], &threads) != napi_ok) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "threads must be a non-negative integer");
    return NULL;
  }
  const size_t point = group == 1 ? 64 : 128, need = group == 1 ? 96 : 192;
  char msg[160];
  if (bases_len % point != 0) {
    snprintf(msg, sizeof msg, "bases length %zu is not a multiple of %zu (one affine G%d point)", bases_len, point, group);
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", msg);
    return NULL;
  }
  const size_t n = bases_len / point;
  const size_t ss = n ? scalars_len / n : 0;
  if (n && (ss * n != scalars_len || ss < 1 || ss > 32)) {
    snprintf(msg, sizeof msg, "scalars length %zu is not 1..32 bytes for each of %zu bases", scalars_len, n);
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", msg);
    return NULL;
  }
  if (out_len < need) {
    snprintf(msg, sizeof msg, "out must have at least %zu bytes", need);
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", msg);
    return NULL;
  }
  const int r = group == 1 ? msm_g1(bases, scalars, ss, n, threads, out) : msm_g2(bases, scalars, ss, n, threads, out);
  if (r < 0) {
    napi_throw_error(env, NULL, "refract native: MSM failed (out of memory)");
    return NULL;
  }
  napi_value result;
  CHECK(napi_get_boolean(env, r == 1, &result));
  return result;
}

static napi_value js_msm_g1(napi_env env, napi_callback_info info) { return js_msm(env, info, 1); }
static napi_value js_msm_g2(napi_env env, napi_callback_info info) { return js_msm(env, info, 2); }

/* Open jobs counted by one JS environment (the main thread or a worker thread). When that
 * environment is torn down with jobs still open (a worker terminated mid-proof, whose `finally`
 * never ran), its cleanup hook takes them off the process-wide count, so later MSMs are not
 * throttled for ever. */
typedef struct {
  int open;
} env_jobs;

static void env_jobs_cleanup(void *arg) {
  env_jobs *e = (env_jobs *)arg;
  if (e->open) msm_jobs(-e->open);
  free(e);
}

static napi_value js_msm_jobs(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  env_jobs *mine = NULL;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&mine));
  int32_t delta = 0;
  if (argc < 1 || napi_get_value_int32(env, argv[0], &delta) != napi_ok) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "msmJobs(delta) takes an integer");
    return NULL;
  }
  if (mine) mine->open += delta;
  napi_value r;
  CHECK(napi_create_int32(env, msm_jobs((int)delta), &r));
  return r;
}

static napi_value js_msm_impl(napi_env env, napi_callback_info info) {
  (void)info;
  return impl_name(env, msm_impl_name);
}

static napi_value js_fr_fft(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (!get_args(env, info, 2, &argc, argv, "frFft(buf, root[, scale]) takes 2 or 3 arguments")) return NULL;
  uint8_t *buf, *root, *scale = NULL;
  size_t len, root_len, scale_len = 32;
  if (!get_u8(env, argv[0], "buf", -1, &buf, &len)) return NULL;
  if (!get_u8(env, argv[1], "root", -1, &root, &root_len)) return NULL;
  napi_valuetype st = napi_undefined;
  if (argc > 2) napi_typeof(env, argv[2], &st);
  if (st != napi_undefined && !get_u8(env, argv[2], "scale", -1, &scale, &scale_len)) return NULL;
  const size_t n = len / 32;
  char msg[128];
  if (len % 32 != 0 || n < 2 || (n & (n - 1)) != 0 || ((uintptr_t)buf & 7) != 0) {
    snprintf(msg, sizeof msg, "buf must hold a power of two ≥ 2 of 32-byte elements, 8-byte aligned (got %zu bytes)", len);
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", msg);
    return NULL;
  }
  if (root_len != 32 || scale_len != 32) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "root and scale must be 32 bytes");
    return NULL;
  }
  if (!fr_fft(buf, n, root, scale)) {
    napi_throw_error(env, NULL, "refract native: FFT failed (out of memory)");
    return NULL;
  }
  return argv[0];
}

/* mallocTrim() → boolean: glibc's malloc_trim(0) (free arena memory back to the kernel); false
 * where there is no glibc. */
static napi_value js_malloc_trim(napi_env env, napi_callback_info info) {
  (void)info;
  int released = 0;
#if defined(__GLIBC__)
  released = malloc_trim(0);
#endif
  napi_value r;
  CHECK(napi_get_boolean(env, released != 0, &r));
  return r;
}

/* writeNonBlocking(fd, buf) → number: bytes written, or −errno (see the header comment). */
static napi_value js_write_nonblocking(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t fd;
  void *data;
  size_t len;
  if (argc < 2 || napi_get_value_int32(env, argv[0], &fd) != napi_ok ||
      napi_get_typedarray_info(env, argv[1], NULL, &len, &data, NULL, NULL) != napi_ok) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "writeNonBlocking(fd: number, buf: Uint8Array)");
    return NULL;
  }
  ssize_t n;
  do {
    n = send(fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = write(fd, data, len);
  } while (n < 0 && errno == EINTR);
  napi_value r;
  CHECK(napi_create_int64(env, n < 0 ? -(int64_t)errno : (int64_t)n, &r));
  return r;
}

/* msmAlgorithm() → "glv" | "affine" | "xyzz",  msmSelectAlgorithm(name) → boolean   (msm.h) */
static napi_value js_msm_algorithm(napi_env env, napi_callback_info info) {
  (void)info;
  return impl_name(env, msm_algorithm_name);
}
static napi_value js_msm_select_algorithm(napi_env env, napi_callback_info info) {
  return select_impl_by_name(env, info, msm_select_algorithm, "msmSelectAlgorithm(name) takes a string");
}

static napi_value js_msm_select_impl(napi_env env, napi_callback_info info) {
  return select_impl_by_name(env, info, msm_select_impl, "msmSelectImpl(name) takes a string");
}

/* ---- handles: externals owning addon memory ---- */

/* A tagged external owning data (fin frees it when collected), its bytes reported to V8 so the GC
 * weighs it; NULL after throwing (data freed through fin). */
static napi_value make_handle(napi_env env, void *data, napi_finalize fin, size_t bytes, const napi_type_tag *tag) {
  int64_t adjusted;
  napi_adjust_external_memory(env, (int64_t)bytes, &adjusted);
  napi_value ext;
  if (napi_create_external(env, data, fin, NULL, &ext) != napi_ok) {
    fin(env, data, NULL);
    napi_throw_error(env, NULL, "refract native: napi_create_external failed");
    return NULL;
  }
  CHECK(napi_type_tag_object(env, ext, tag));
  return ext;
}

/* The data behind an external of make_handle with this tag, or NULL after throwing a TypeError `msg`. */
static void *handle_data(napi_env env, napi_value v, const napi_type_tag *tag, const char *msg) {
  napi_valuetype t;
  bool tagged = false;
  void *data = NULL;
  if (napi_typeof(env, v, &t) == napi_ok && t == napi_external && napi_check_object_type_tag(env, v, tag, &tagged) == napi_ok &&
      tagged && napi_get_value_external(env, v, &data) == napi_ok && data)
    return data;
  napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", msg);
  return NULL;
}

/* ---- Groth16 (groth16.h) ---- */

static const napi_type_tag G16_TAG = {0x9d1f6e0c4b7a4e21ULL, 0x8c3a5b7d2e6f1a09ULL};

static void g16_finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  int64_t adjusted;
  napi_adjust_external_memory(env, -(int64_t)g16_key_bytes((g16_key *)data), &adjusted);
  g16_free((g16_key *)data);
}

static const char *g16_code(int rc) {
  switch (rc) {
    case G16_EKEY: return "ERR_GROTH16_KEY";
    case G16_EWITNESS: return "ERR_GROTH16_WITNESS";
    case G16_EARG: return "ERR_GROTH16_ARG";
    default: return "ERR_GROTH16_NOMEM";
  }
}

/* The key behind a handle, or NULL after throwing a TypeError. */
static g16_key *g16_handle(napi_env env, napi_value v) {
  return (g16_key *)handle_data(env, v, &G16_TAG, "handle must come from groth16Load");
}

static napi_value js_g16_load(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (!get_args(env, info, 1, &argc, argv, "groth16Load(zkey) takes 1 argument")) return NULL;
  uint8_t *z;
  size_t len;
  if (!get_u8(env, argv[0], "zkey", -1, &z, &len)) return NULL;
  char err[256] = {0};
  g16_key *key = NULL;
  const int rc = g16_load(z, len, &key, err, sizeof err);
  if (rc != G16_OK) {
    napi_throw_error(env, g16_code(rc), err);
    return NULL;
  }
  return make_handle(env, key, g16_finalize, g16_key_bytes(key), &G16_TAG);
}

static napi_value js_g16_info(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (!get_args(env, info, 1, &argc, argv, "groth16Info(handle) takes 1 argument")) return NULL;
  g16_key *key = g16_handle(env, argv[0]);
  if (!key) return NULL;
  uint32_t nv, np, d, nc;
  g16_info(key, &nv, &np, &d, &nc);
  napi_value o, v;
  CHECK(napi_create_object(env, &o));
  napi_create_uint32(env, nv, &v);
  napi_set_named_property(env, o, "nVars", v);
  napi_create_uint32(env, np, &v);
  napi_set_named_property(env, o, "nPublic", v);
  napi_create_uint32(env, d, &v);
  napi_set_named_property(env, o, "domainSize", v);
  napi_create_uint32(env, nc, &v);
  napi_set_named_property(env, o, "nCoefs", v);
  napi_create_double(env, (double)g16_key_bytes(key), &v);
  napi_set_named_property(env, o, "bytes", v);
  napi_create_double(env, (double)g16_table_bytes(key), &v);
  napi_set_named_property(env, o, "tableBytes", v);
  napi_create_double(env, (double)g16_table_need(key), &v);
  napi_set_named_property(env, o, "tableBytesNeeded", v);
  static const char *const sources[] = {"none", "built", "file", "shared"};
  const char *note;
  const int src = g16_table_source(key, &note);
  napi_create_string_utf8(env, sources[src >= 0 && src < 4 ? src : 0], NAPI_AUTO_LENGTH, &v);
  napi_set_named_property(env, o, "tableSource", v);
  if (note[0])
    napi_create_string_utf8(env, note, NAPI_AUTO_LENGTH, &v);
  else
    napi_get_null(env, &v);
  napi_set_named_property(env, o, "tableNote", v);
  return o;
}

static napi_value js_g16_tables(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (!get_args(env, info, 2, &argc, argv, "groth16Tables(handle, maxBytes[, path]) takes 2 or 3 arguments")) return NULL;
  g16_key *key = g16_handle(env, argv[0]);
  if (!key) return NULL;
  double max = 0;
  if (napi_get_value_double(env, argv[1], &max) != napi_ok || !(max >= 0)) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "maxBytes must be a non-negative number");
    return NULL;
  }
  char path[4096];
  int has_path = 0;
  if (argc > 2) {
    napi_valuetype t;
    napi_typeof(env, argv[2], &t);
    if (t != napi_undefined && t != napi_null) {
      size_t len = 0;
      /* the whole UTF-8 length first (a too small buffer would cut it silently; not a string fails here), then no NUL inside */
      if (napi_get_value_string_utf8(env, argv[2], NULL, 0, &len) != napi_ok || len == 0 || len >= sizeof path ||
          napi_get_value_string_utf8(env, argv[2], path, sizeof path, NULL) != napi_ok || strlen(path) != len) {
        napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "path must be a non-empty string of under 4096 UTF-8 bytes without NUL");
        return NULL;
      }
      has_path = 1;
    }
  }
  const size_t before = g16_key_bytes(key);
  const size_t bytes = g16_build_tables(key, max > 1e18 ? (size_t)1e18 : (size_t)max, 0, has_path ? path : NULL);
  int64_t adjusted;
  napi_adjust_external_memory(env, (int64_t)(g16_key_bytes(key) - before), &adjusted);
  napi_value r;
  CHECK(napi_create_double(env, (double)bytes, &r));
  return r;
}

static napi_value js_g16_table_sets(napi_env env, napi_callback_info info) {
  (void)info;
  unsigned sets;
  size_t bytes;
  g16_tables_stats(&sets, &bytes);
  napi_value o, v;
  CHECK(napi_create_object(env, &o));
  napi_create_uint32(env, sets, &v);
  napi_set_named_property(env, o, "sets", v);
  napi_create_double(env, (double)bytes, &v);
  napi_set_named_property(env, o, "bytes", v);
  return o;
}

static napi_value js_g16_prove(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  if (!get_args(env, info, 3, &argc, argv, "groth16Prove(handle, wtns, out[, threads[, rs[, times]]]) takes 3 to 6 arguments"))
    return NULL;
  g16_key *key = g16_handle(env, argv[0]);
  if (!key) return NULL;
  uint8_t *wtns, *out, *rs = NULL;
  size_t wtns_len, out_len, rs_len = 64;
  if (!get_u8(env, argv[1], "wtns", -1, &wtns, &wtns_len)) return NULL;
  if (!get_u8(env, argv[2], "out", -1, &out, &out_len)) return NULL;
  if (out_len < 256) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "out must have at least 256 bytes");
    return NULL;
  }
  uint32_t threads = 0;
  napi_valuetype t = napi_undefined;
  if (argc > 3) napi_typeof(env, argv[3], &t);
  if (t != napi_undefined && napi_get_value_uint32(env, argv[3], &threads) != napi_ok) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "threads must be a non-negative integer");
    return NULL;
  }
  t = napi_undefined;
  if (argc > 4) napi_typeof(env, argv[4], &t);
  if (t != napi_undefined && t != napi_null) {
    if (!get_u8(env, argv[4], "rs", -1, &rs, &rs_len)) return NULL;
    if (rs_len != 64) {
      napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "rs must be 64 bytes (r then s, little-endian)");
      return NULL;
    }
  }
  double *times_out = NULL;
  t = napi_undefined;
  if (argc > 5) napi_typeof(env, argv[5], &t);
  if (t != napi_undefined) {
    napi_typedarray_type tt;
    size_t tl = 0;
    void *tp = NULL;
    if (napi_get_typedarray_info(env, argv[5], &tt, &tl, &tp, NULL, NULL) != napi_ok || tt != napi_float64_array ||
        tl < 2 * G16_T_COUNT) {
      napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "times must be a Float64Array of at least 16 elements");
      return NULL;
    }
    times_out = (double *)tp;
  }
  char err[256] = {0};
  uint8_t inf[3] = {0, 0, 0};
  g16_times times;
  const int rc = g16_prove(key, wtns, wtns_len, rs, threads, out, inf, &times, err, sizeof err);
  if (rc != G16_OK) {
    napi_throw_error(env, g16_code(rc), err);
    return NULL;
  }
  if (times_out)
    for (int i = 0; i < G16_T_COUNT; i++) {
      times_out[i] = times.cpu_ms[i];
      times_out[G16_T_COUNT + i] = times.wall_ms[i];
    }
  napi_value r;
  CHECK(napi_create_uint32(env, (uint32_t)(inf[0] | inf[1] << 1 | inf[2] << 2), &r));
  return r;
}

/* ---- fixed-base tables (msm.h) ---- */

static const napi_type_tag MSM_TABLE_TAG = {0x5b2e8f1c7d3a4960ULL, 0xa17c3e5d9b2f8041ULL};

static void msm_table_finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  int64_t adjusted;
  napi_adjust_external_memory(env, -(int64_t)msm_table_bytes((msm_table *)data), &adjusted);
  msm_table_free((msm_table *)data);
}

static napi_value js_msm_table(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (!get_args(env, info, 2, &argc, argv, "msmTable(group, bases) takes 2 arguments")) return NULL;
  uint32_t group = 0;
  if (napi_get_value_uint32(env, argv[0], &group) != napi_ok || (group != 1 && group != 2)) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "group must be 1 (G1) or 2 (G2)");
    return NULL;
  }
  uint8_t *bases;
  size_t len;
  if (!get_u8(env, argv[1], "bases", -1, &bases, &len)) return NULL;
  const size_t point = group == 1 ? 64 : 128;
  if (len % point != 0) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "bases length is not a multiple of one affine point");
    return NULL;
  }
  msm_table *t = msm_table_build((int)group, bases, len / point, 0);
  if (!t) {
    napi_throw_error(env, "ERR_MSM_NOMEM", "msmTable: out of memory (or 2^32 table points or more)");
    return NULL;
  }
  return make_handle(env, t, msm_table_finalize, msm_table_bytes(t), &MSM_TABLE_TAG);
}

static napi_value js_msm_table_bytes(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (!get_args(env, info, 1, &argc, argv, "msmTableBytes(table) takes 1 argument")) return NULL;
  msm_table *t = (msm_table *)handle_data(env, argv[0], &MSM_TABLE_TAG, "table must come from msmTable");
  if (!t) return NULL;
  napi_value r;
  CHECK(napi_create_double(env, (double)msm_table_bytes(t), &r));
  return r;
}

static napi_value js_msm_fixed(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  if (!get_args(env, info, 3, &argc, argv, "msmFixed(table, scalars, out[, threads]) takes 3 or 4 arguments")) return NULL;
  msm_table *t = (msm_table *)handle_data(env, argv[0], &MSM_TABLE_TAG, "table must come from msmTable");
  if (!t) return NULL;
  uint8_t *scalars, *out;
  size_t sl, ol;
  if (!get_u8(env, argv[1], "scalars", -1, &scalars, &sl)) return NULL;
  if (!get_u8(env, argv[2], "out", -1, &out, &ol)) return NULL;
  uint32_t threads = 0;
  napi_valuetype tt = napi_undefined;
  if (argc > 3) napi_typeof(env, argv[3], &tt);
  if (tt != napi_undefined && napi_get_value_uint32(env, argv[3], &threads) != napi_ok) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "threads must be a non-negative integer");
    return NULL;
  }
  const size_t n = msm_table_n(t), ss = n ? sl / n : 0;
  if (ol < (msm_table_group(t) == 1 ? 96u : 192u) || (n && (ss * n != sl || ss < 1 || ss > 32))) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "scalars must be 1..32 bytes for each base and out hold a Jacobian point");
    return NULL;
  }
  const int rc = msm_fixed(t, scalars, ss, threads, out);
  if (rc < 0) {
    napi_throw_error(env, "ERR_MSM_NOMEM", "msmFixed: out of memory");
    return NULL;
  }
  napi_value r;
  CHECK(napi_get_boolean(env, rc == 1, &r));
  return r;
}

/* ---- Groth16 verification and the pairing (pairing.h) ---- */

static napi_value js_g16_verify(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (!get_args(env, info, 3, &argc, argv, "groth16Verify(vk, proof, publics) takes 3 arguments")) return NULL;
  uint8_t *vk, *proof, *publics;
  size_t vk_len, proof_len, publics_len;
  if (!get_u8(env, argv[0], "vk", -1, &vk, &vk_len)) return NULL;
  if (!get_u8(env, argv[1], "proof", -1, &proof, &proof_len)) return NULL;
  if (!get_u8(env, argv[2], "publics", -1, &publics, &publics_len)) return NULL;
  if (proof_len != 256 || publics_len % 32 != 0) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "proof must be 256 bytes and publics a multiple of 32 bytes");
    return NULL;
  }
  char err[160] = {0};
  int valid = 0;
  if (g16_verify(vk, vk_len, proof, publics, publics_len / 32, 1, &valid, err, sizeof err) != PAIRING_OK) {
    napi_throw_error(env, "ERR_GROTH16_VERIFY_INPUT", err);
    return NULL;
  }
  napi_value r;
  CHECK(napi_get_boolean(env, valid != 0, &r));
  return r;
}

static napi_value js_bn254_pairing(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (!get_args(env, info, 3, &argc, argv, "bn254Pairing(p, q, out) takes 3 arguments")) return NULL;
  uint8_t *p, *q, *out;
  size_t p_len, q_len, out_len;
  if (!get_u8(env, argv[0], "p", -1, &p, &p_len)) return NULL;
  if (!get_u8(env, argv[1], "q", -1, &q, &q_len)) return NULL;
  if (!get_u8(env, argv[2], "out", -1, &out, &out_len)) return NULL;
  if (p_len != 64 || q_len != 128 || out_len < 384) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "p must be 64 bytes, q 128 bytes and out at least 384 bytes");
    return NULL;
  }
  char err[160] = {0};
  if (bn254_pairing(p, q, out, err, sizeof err) != PAIRING_OK) {
    napi_throw_error(env, "ERR_GROTH16_VERIFY_INPUT", err);
    return NULL;
  }
  return argv[2];
}

/* ---- Light Protocol keys (lightkey.h) ----
 *   lightKeyDecode(key) → {header: [4 u32], points: Uint8Array, vk: Uint8Array, r1csOffset}
 *   lightKeyLoad(resident bytes | path of a .lkr: mapped, not copied) → handle; lightKeyInfo(handle) → {nbWires, nbPub, nbSec, m, n, bytes, solveThreads: [first, second]}
 *   lightKeyProve(handle, inputs, out[, rs[, times]]) → undefined (out ← 256 bytes)
 *   lightKeyVerify(handle, proof, publics) → boolean; lightKeyVk(handle) → Uint8Array
 * Errors: ERR_LIGHT_KEY (malformed / foreign key), ERR_LIGHT_INPUT (unsatisfied circuit or bad
 * inputs), ERR_LIGHT_VERIFY (proof failed the verifying key), ERR_LIGHT_NOMEM. */
static const napi_type_tag LK_TAG = {0x3e8b1d6a9c2f4071ULL, 0x6a0d5c3b8e1f2947ULL};
static const char *lk_code(int rc) {
  switch (rc) {
    case LK_EKEY: return "ERR_LIGHT_KEY";
    case LK_EINPUT: return "ERR_LIGHT_INPUT";
    case LK_EVERIFY: return "ERR_LIGHT_VERIFY";
    default: return "ERR_LIGHT_NOMEM";
  }
}
static void lk_finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  int64_t adjusted;
  napi_adjust_external_memory(env, -(int64_t)lk_key_bytes((lk_key *)data), &adjusted);
  lk_free((lk_key *)data);
}
static napi_value copy_out(napi_env env, const uint8_t *p, size_t len) {
  napi_value ab, arr;
  void *d;
  CHECK(napi_create_arraybuffer(env, len, &d, &ab));
  memcpy(d, p, len);
  CHECK(napi_create_typedarray(env, napi_uint8_array, len, ab, 0, &arr));
  return arr;
}
static napi_value js_lk_decode(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (!get_args(env, info, 1, &argc, argv, "lightKeyDecode(key) takes 1 argument")) return NULL;
  uint8_t *key;
  size_t len;
  if (!get_u8(env, argv[0], "key", -1, &key, &len)) return NULL;
  char err[256] = {0};
  lk_decoded d;
  const int rc = lk_decode(key, len, &d, err, sizeof err);
  if (rc != LK_OK) {
    napi_throw_error(env, lk_code(rc), err);
    return NULL;
  }
  napi_value o, v, h;
  CHECK(napi_create_object(env, &o));
  CHECK(napi_create_array_with_length(env, 4, &h));
  for (uint32_t i = 0; i < 4; i++) {
    CHECK(napi_create_uint32(env, d.h[i], &v));
    CHECK(napi_set_element(env, h, i, v));
  }
  CHECK(napi_set_named_property(env, o, "header", h));
  v = copy_out(env, d.points, d.points_len);
  free(d.points);
  if (!v) { free(d.vk); return NULL; }
  CHECK(napi_set_named_property(env, o, "points", v));
  v = copy_out(env, d.vk, d.vk_len);
  free(d.vk);
  if (!v) return NULL;
  CHECK(napi_set_named_property(env, o, "vk", v));
  CHECK(napi_create_double(env, (double)d.r1cs_offset, &v));
  CHECK(napi_set_named_property(env, o, "r1csOffset", v));
  return o;
}
static lk_key *lk_handle(napi_env env, napi_value v) {
  return (lk_key *)handle_data(env, v, &LK_TAG, "handle must come from lightKeyLoad");
}
static napi_value js_lk_load(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (!get_args(env, info, 1, &argc, argv, "lightKeyLoad(resident) takes 1 argument")) return NULL;
  char err[4400] = {0};
  lk_key *k = NULL;
  napi_valuetype t;
  CHECK(napi_typeof(env, argv[0], &t));
  int rc;
  if (t == napi_string) { /* a path: mapped by the addon, no copy of the file in the JS heap */
    char path[4096];
    size_t l = 0;
    CHECK(napi_get_value_string_utf8(env, argv[0], path, sizeof path, &l));
    if (l + 1 >= sizeof path) {
      napi_throw_error(env, "ERR_LIGHT_KEY", "lightKeyLoad: path longer than 4095 bytes");
      return NULL;
    }
    rc = lk_load_path(path, &k, err, sizeof err);
  } else {
    uint8_t *f;
    size_t len;
    if (!get_u8(env, argv[0], "resident", -1, &f, &len)) return NULL;
    rc = lk_load(f, len, &k, err, sizeof err);
  }
  if (rc != LK_OK) {
    napi_throw_error(env, lk_code(rc), err);
    return NULL;
  }
  return make_handle(env, k, lk_finalize, lk_key_bytes(k), &LK_TAG);
}
static napi_value js_lk_info(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (!get_args(env, info, 1, &argc, argv, "lightKeyInfo(handle) takes 1 argument")) return NULL;
  lk_key *k = lk_handle(env, argv[0]);
  if (!k) return NULL;
  uint32_t vals[5];
  lk_info(k, &vals[0], &vals[1], &vals[2], &vals[3], &vals[4]);
  const char *names[5] = {"nbWires", "nbPub", "nbSec", "m", "n"};
  napi_value o, v;
  CHECK(napi_create_object(env, &o));
  for (int i = 0; i < 5; i++) {
    CHECK(napi_create_uint32(env, vals[i], &v));
    CHECK(napi_set_named_property(env, o, names[i], v));
  }
  CHECK(napi_create_double(env, (double)lk_key_bytes(k), &v));
  CHECK(napi_set_named_property(env, o, "bytes", v));
  uint32_t first, second;
  lk_solve_threads(k, &first, &second);
  napi_value parts;
  CHECK(napi_create_array_with_length(env, 2, &parts));
  CHECK(napi_create_uint32(env, first, &v));
  CHECK(napi_set_element(env, parts, 0, v));
  CHECK(napi_create_uint32(env, second, &v));
  CHECK(napi_set_element(env, parts, 1, v));
  CHECK(napi_set_named_property(env, o, "solveThreads", parts));
  return o;
}
static napi_value js_lk_prove(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  if (!get_args(env, info, 3, &argc, argv, "lightKeyProve(handle, inputs, out[, rs[, times]]) takes 3 to 5 arguments")) return NULL;
  lk_key *k = lk_handle(env, argv[0]);
  if (!k) return NULL;
  uint8_t *in, *out, *rs = NULL;
  size_t in_len, out_len, rs_len;
  if (!get_u8(env, argv[1], "inputs", -1, &in, &in_len)) return NULL;
  if (!get_u8(env, argv[2], "out", -1, &out, &out_len)) return NULL;
  if (out_len < 256) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "out must have at least 256 bytes");
    return NULL;
  }
  napi_valuetype t = napi_undefined;
  if (argc > 3) napi_typeof(env, argv[3], &t);
  if (t != napi_undefined && t != napi_null) {
    if (!get_u8(env, argv[3], "rs", -1, &rs, &rs_len)) return NULL;
    if (rs_len != 64) {
      napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "rs must be 64 bytes");
      return NULL;
    }
  }
  double *times = NULL;
  t = napi_undefined;
  if (argc > 4) napi_typeof(env, argv[4], &t);
  if (t != napi_undefined) {
    napi_typedarray_type tt;
    size_t tl = 0;
    void *tp = NULL;
    if (napi_get_typedarray_info(env, argv[4], &tt, &tl, &tp, NULL, NULL) != napi_ok || tt != napi_float64_array || tl < LK_T_COUNT) {
      napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "times must be a Float64Array of at least 4 elements");
      return NULL;
    }
    times = (double *)tp;
  }
  char err[256] = {0};
  const int rc = lk_prove(k, in, in_len, rs, out, times, err, sizeof err);
  if (rc != LK_OK) {
    napi_throw_error(env, lk_code(rc), err);
    return NULL;
  }
  napi_value u;
  napi_get_undefined(env, &u);
  return u;
}
static napi_value js_lk_verify(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (!get_args(env, info, 3, &argc, argv, "lightKeyVerify(handle, proof, publics) takes 3 arguments")) return NULL;
  lk_key *k = lk_handle(env, argv[0]);
  if (!k) return NULL;
  uint8_t *proof, *pub;
  size_t pl, ul;
  if (!get_u8(env, argv[1], "proof", -1, &proof, &pl)) return NULL;
  if (!get_u8(env, argv[2], "publics", -1, &pub, &ul)) return NULL;
  if (pl != 256 || ul % 32) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "proof must be 256 bytes and publics a multiple of 32 bytes");
    return NULL;
  }
  char err[256] = {0};
  const int v = lk_verify(k, proof, pub, ul / 32, 1, err, sizeof err);
  if (v < 0) {
    napi_throw_error(env, "ERR_LIGHT_INPUT", err);
    return NULL;
  }
  napi_value r;
  CHECK(napi_get_boolean(env, v == 1, &r));
  return r;
}
static napi_value js_lk_vk(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (!get_args(env, info, 1, &argc, argv, "lightKeyVk(handle) takes 1 argument")) return NULL;
  lk_key *k = lk_handle(env, argv[0]);
  if (!k) return NULL;
  size_t len;
  const uint8_t *vk = lk_vk(k, &len);
  return copy_out(env, vk, len);
}

static napi_value js_lk_tables(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (!get_args(env, info, 2, &argc, argv, "lightKeyTables(handle, maxBytes[, path]) takes 2 or 3 arguments")) return NULL;
  lk_key *k = lk_handle(env, argv[0]);
  if (!k) return NULL;
  double maxb = 0;
  if (napi_get_value_double(env, argv[1], &maxb) != napi_ok || maxb < 0) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "maxBytes must be a non-negative number");
    return NULL;
  }
  char path[4096] = {0};
  napi_valuetype t = napi_undefined;
  if (argc > 2) napi_typeof(env, argv[2], &t);
  if (t == napi_string) {
    size_t l;
    napi_get_value_string_utf8(env, argv[2], path, sizeof path, &l);
  }
  int source = 0;
  const char *note = "";
  const size_t bytes = lk_tables(k, (size_t)maxb, 0, path[0] ? path : NULL, &source, &note);
  napi_value o, v;
  CHECK(napi_create_object(env, &o));
  CHECK(napi_create_double(env, (double)bytes, &v));
  CHECK(napi_set_named_property(env, o, "bytes", v));
  CHECK(napi_create_double(env, (double)lk_table_need(k), &v));
  CHECK(napi_set_named_property(env, o, "need", v));
  const char *names[4] = {"none", "built", "file", "shared"};
  CHECK(napi_create_string_utf8(env, names[source & 3], NAPI_AUTO_LENGTH, &v));
  CHECK(napi_set_named_property(env, o, "source", v));
  CHECK(napi_create_string_utf8(env, note ? note : "", NAPI_AUTO_LENGTH, &v));
  CHECK(napi_set_named_property(env, o, "note", v));
  return o;
}

NAPI_MODULE_INIT() {
  napi_value fn, v;
  napi_create_function(env, "hash", NAPI_AUTO_LENGTH, js_hash, NULL, &fn);
  napi_set_named_property(env, exports, "hash", fn);
  napi_create_function(env, "hashBatch", NAPI_AUTO_LENGTH, js_hash_batch, NULL, &fn);
  napi_set_named_property(env, exports, "hashBatch", fn);
  napi_create_function(env, "impl", NAPI_AUTO_LENGTH, js_impl, NULL, &fn);
  napi_set_named_property(env, exports, "impl", fn);
  napi_create_function(env, "selectImpl", NAPI_AUTO_LENGTH, js_select_impl, NULL, &fn);
  napi_set_named_property(env, exports, "selectImpl", fn);
  napi_create_function(env, "batchImpl", NAPI_AUTO_LENGTH, js_batch_impl, NULL, &fn);
  napi_set_named_property(env, exports, "batchImpl", fn);
  napi_create_function(env, "selectBatchImpl", NAPI_AUTO_LENGTH, js_select_batch_impl, NULL, &fn);
  napi_set_named_property(env, exports, "selectBatchImpl", fn);
  napi_create_function(env, "base58Decode", NAPI_AUTO_LENGTH, js_base58_decode, NULL, &fn);
  napi_set_named_property(env, exports, "base58Decode", fn);
  napi_create_function(env, "msmG1", NAPI_AUTO_LENGTH, js_msm_g1, NULL, &fn);
  napi_set_named_property(env, exports, "msmG1", fn);
  napi_create_function(env, "msmG2", NAPI_AUTO_LENGTH, js_msm_g2, NULL, &fn);
  napi_set_named_property(env, exports, "msmG2", fn);
  napi_create_function(env, "mallocTrim", NAPI_AUTO_LENGTH, js_malloc_trim, NULL, &fn);
  napi_set_named_property(env, exports, "mallocTrim", fn);
  napi_create_function(env, "writeNonBlocking", NAPI_AUTO_LENGTH, js_write_nonblocking, NULL, &fn);
  napi_set_named_property(env, exports, "writeNonBlocking", fn);
  napi_create_function(env, "frFft", NAPI_AUTO_LENGTH, js_fr_fft, NULL, &fn);
  napi_set_named_property(env, exports, "frFft", fn);
  env_jobs *jobs = (env_jobs *)calloc(1, sizeof *jobs);
  if (jobs && napi_add_env_cleanup_hook(env, env_jobs_cleanup, jobs) != napi_ok) {
    free(jobs);
    jobs = NULL;
  }
  napi_create_function(env, "msmJobs", NAPI_AUTO_LENGTH, js_msm_jobs, jobs, &fn);
  napi_set_named_property(env, exports, "msmJobs", fn);
  napi_create_function(env, "msmImpl", NAPI_AUTO_LENGTH, js_msm_impl, NULL, &fn);
  napi_set_named_property(env, exports, "msmImpl", fn);
  napi_create_function(env, "msmSelectImpl", NAPI_AUTO_LENGTH, js_msm_select_impl, NULL, &fn);
  napi_set_named_property(env, exports, "msmSelectImpl", fn);
  napi_create_function(env, "groth16Load", NAPI_AUTO_LENGTH, js_g16_load, NULL, &fn);
  napi_set_named_property(env, exports, "groth16Load", fn);
  napi_create_function(env, "groth16Info", NAPI_AUTO_LENGTH, js_g16_info, NULL, &fn);
  napi_set_named_property(env, exports, "groth16Info", fn);
  napi_create_function(env, "groth16Prove", NAPI_AUTO_LENGTH, js_g16_prove, NULL, &fn);
  napi_set_named_property(env, exports, "groth16Prove", fn);
  napi_create_function(env, "groth16Tables", NAPI_AUTO_LENGTH, js_g16_tables, NULL, &fn);
  napi_set_named_property(env, exports, "groth16Tables", fn);
  napi_create_function(env, "groth16TableSets", NAPI_AUTO_LENGTH, js_g16_table_sets, NULL, &fn);
  napi_set_named_property(env, exports, "groth16TableSets", fn);
  napi_create_function(env, "msmTable", NAPI_AUTO_LENGTH, js_msm_table, NULL, &fn);
  napi_set_named_property(env, exports, "msmTable", fn);
  napi_create_function(env, "msmFixed", NAPI_AUTO_LENGTH, js_msm_fixed, NULL, &fn);
  napi_set_named_property(env, exports, "msmFixed", fn);
  napi_create_function(env, "msmTableBytes", NAPI_AUTO_LENGTH, js_msm_table_bytes, NULL, &fn);
  napi_set_named_property(env, exports, "msmTableBytes", fn);
  napi_create_function(env, "groth16Verify", NAPI_AUTO_LENGTH, js_g16_verify, NULL, &fn);
  napi_set_named_property(env, exports, "groth16Verify", fn);
  napi_create_function(env, "lightKeyDecode", NAPI_AUTO_LENGTH, js_lk_decode, NULL, &fn);
  napi_set_named_property(env, exports, "lightKeyDecode", fn);
  napi_create_function(env, "lightKeyLoad", NAPI_AUTO_LENGTH, js_lk_load, NULL, &fn);
  napi_set_named_property(env, exports, "lightKeyLoad", fn);
  napi_create_function(env, "lightKeyInfo", NAPI_AUTO_LENGTH, js_lk_info, NULL, &fn);
  napi_set_named_property(env, exports, "lightKeyInfo", fn);
  napi_create_function(env, "lightKeyProve", NAPI_AUTO_LENGTH, js_lk_prove, NULL, &fn);
  napi_set_named_property(env, exports, "lightKeyProve", fn);
  napi_create_function(env, "lightKeyVerify", NAPI_AUTO_LENGTH, js_lk_verify, NULL, &fn);
  napi_set_named_property(env, exports, "lightKeyVerify", fn);
  napi_create_function(env, "lightKeyTables", NAPI_AUTO_LENGTH, js_lk_tables, NULL, &fn);
  napi_set_named_property(env, exports, "lightKeyTables", fn);
  napi_create_function(env, "lightKeyVk", NAPI_AUTO_LENGTH, js_lk_vk, NULL, &fn);
  napi_set_named_property(env, exports, "lightKeyVk", fn);
  napi_create_function(env, "bn254Pairing", NAPI_AUTO_LENGTH, js_bn254_pairing, NULL, &fn);
  napi_set_named_property(env, exports, "bn254Pairing", fn);
  napi_create_function(env, "msmAlgorithm", NAPI_AUTO_LENGTH, js_msm_algorithm, NULL, &fn);
  napi_set_named_property(env, exports, "msmAlgorithm", fn);
  napi_create_function(env, "msmSelectAlgorithm", NAPI_AUTO_LENGTH, js_msm_select_algorithm, NULL, &fn);
  napi_set_named_property(env, exports, "msmSelectAlgorithm", fn);
  napi_create_uint32(env, POSEIDON_MAX_INPUTS, &v);
  napi_set_named_property(env, exports, "MAX_INPUTS", v);
  return exports;
}
