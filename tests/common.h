/* Shared helpers of the Check suites.
 *
 * Every suite is one program whose main() runs an SRunner.  A program that
 * needs a device calls ct_require_device() first: it exits 77 (Automake's
 * "skipped") only when no OpenCL device exists at all.  Any other problem is
 * a test failure.
 *
 * Everything here is static inline so each program takes what it uses. */
#ifndef CLS_TESTS_COMMON_H
#define CLS_TESTS_COMMON_H

#include <clstream.h>
#include <clstream/cl.h>

#include "util/util.h"

#include <check.h>
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define CT_SKIP 77

/* ------------------------------------------------------------------ */
/* Kernels                                                             */
/* ------------------------------------------------------------------ */

#define CT_FILL_SRC                                                    \
  "kernel void fill_k(global int *out, int v) {\n"                     \
  "  out[get_global_id(0)] = v;\n"                                     \
  "}\n"
#define CT_ADD_SRC                                                     \
  "kernel void add_k(global const int *a, global const int *b,\n"      \
  "                  global int *c) {\n"                               \
  "  size_t i = get_global_id(0);\n"                                   \
  "  c[i] = a[i] + b[i];\n"                                            \
  "}\n"
#define CT_INC_SRC                                                     \
  "kernel void inc_k(global int *x) {\n"                               \
  "  x[get_global_id(0)] += 1;\n"                                      \
  "}\n"
#define CT_COPY_SRC                                                    \
  "kernel void copy_k(global const int *a, global int *b) {\n"         \
  "  size_t i = get_global_id(0);\n"                                   \
  "  b[i] = a[i];\n"                                                   \
  "}\n"
/* A reader that works `iters` steps per item before it reads its input, so
 * a writer that is not ordered after it would be seen.  The result is
 * ct_slow_expect(i, iters, a[i]). */
#define CT_SLOW_SRC                                                    \
  "kernel void slow_k(global const int *a, global int *b, int iters) {\n" \
  "  size_t i = get_global_id(0);\n"                                   \
  "  uint acc = (uint)i;\n"                                            \
  "  for (int k = 0; k < iters; k++)\n"                                \
  "    acc = acc * 1664525u + 1013904223u;\n"                          \
  "  b[i] = (int)(acc + (uint)a[i]);\n"                                \
  "}\n"
/* out[x + W*y] = x + 1000*y */
#define CT_IDX2_SRC                                                    \
  "kernel void idx2_k(global int *out) {\n"                            \
  "  size_t x = get_global_id(0), y = get_global_id(1);\n"             \
  "  size_t w = get_global_size(0);\n"                                 \
  "  out[y * w + x] = (int)(x + 1000 * y);\n"                          \
  "}\n"
/* out[x + W*(y + H*z)] = x + 100*y + 10000*z */
#define CT_IDX3_SRC                                                    \
  "kernel void idx3_k(global int *out) {\n"                            \
  "  size_t x = get_global_id(0), y = get_global_id(1),\n"             \
  "         z = get_global_id(2);\n"                                   \
  "  size_t w = get_global_size(0), h = get_global_size(1);\n"         \
  "  out[(z * h + y) * w + x] = (int)(x + 100 * y + 10000 * z);\n"     \
  "}\n"
/* Reverses each work-group's slice through local scratch. */
#define CT_REV_SRC                                                     \
  "kernel void rev_k(global const int *in, global int *out,\n"         \
  "                  local int *tmp) {\n"                              \
  "  size_t l = get_local_id(0), n = get_local_size(0);\n"             \
  "  tmp[l] = in[get_global_id(0)];\n"                                 \
  "  barrier(CLK_LOCAL_MEM_FENCE);\n"                                  \
  "  out[get_global_id(0)] = tmp[n - 1 - l];\n"                        \
  "}\n"

/* Every kernel above in one program (one build per context). */
#define CT_ALL_SRC                                                     \
  CT_FILL_SRC CT_ADD_SRC CT_INC_SRC CT_COPY_SRC CT_SLOW_SRC CT_IDX2_SRC \
      CT_IDX3_SRC CT_REV_SRC

static inline int ct_slow_expect(uint32_t i, int iters, int a) {
  uint32_t acc = i;
  for (int k = 0; k < iters; k++)
    acc = acc * 1664525u + 1013904223u;
  return (int)(acc + (uint32_t)a);
}

/* ------------------------------------------------------------------ */
/* Assertions                                                          */
/* ------------------------------------------------------------------ */

/* The call must succeed; the message names the code and the detail. */
#define CT_OK(expr)                                                           \
  do {                                                                        \
    int ct_rc_ = (expr);                                                      \
    ck_assert_msg(ct_rc_ == 0, "%s returned %s (%d): %s", #expr,              \
                  cls_err_name(ct_rc_), ct_rc_, cls_last_error_detail());     \
  } while (0)

/* The call must fail with exactly `code`. */
#define CT_ERR(expr, code)                                                    \
  do {                                                                        \
    int ct_rc_ = (expr);                                                      \
    ck_assert_msg(ct_rc_ == (code), "%s: expected %s, got %s (%d): %s",       \
                  #expr, cls_err_name(code), cls_err_name(ct_rc_), ct_rc_,    \
                  cls_last_error_detail());                                   \
  } while (0)

/* The call must fail with one of two codes. */
#define CT_ERR2(expr, code1, code2)                                           \
  do {                                                                        \
    int ct_rc_ = (expr);                                                      \
    ck_assert_msg(ct_rc_ == (code1) || ct_rc_ == (code2),                     \
                  "%s: expected %s or %s, got %s (%d): %s", #expr,            \
                  cls_err_name(code1), cls_err_name(code2),                   \
                  cls_err_name(ct_rc_), ct_rc_, cls_last_error_detail());     \
  } while (0)

/* The library's own matcher (the tests link the core). */
static inline int ct_icontains(const char *hay, const char *needle) {
  return cls__icontains(hay, needle);
}

/* ------------------------------------------------------------------ */
/* Devices and contexts                                                */
/* ------------------------------------------------------------------ */

/* Number of OpenCL devices, asserting the listing itself works. */
static inline size_t ct_device_count(void) {
  size_t n = 0;
  CT_OK(cls_device_list(NULL, 0, &n));
  return n;
}

/* For main(): exits 77 when no OpenCL device exists at all.  The probe runs
 * in a child process so the runner's process never initialises OpenCL
 * before it forks the tests (a forked OpenCL runtime is not usable). */
/* Runs probe() in a child that leaves with _exit and returns its value
 * (0-255), or -1 when it could not run: what the loader and the vendors
 * allocate at their first load stays out of this process, where
 * LeakSanitizer would charge it at exit. */
static inline int ct_probe_in_child(int (*probe)(void)) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0)
    _exit(probe());
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
    return -1;
  return WEXITSTATUS(st);
}

static inline int ct__device_probe(void) {
  size_t n = 0;
  int rc = cls_device_list(NULL, 0, &n);
  return rc != 0 ? 1 : n == 0 ? CT_SKIP : 0;
}

static inline void ct_require_device(void) {
  /* cannot probe (-1): let the tests say what is wrong */
  if (ct_probe_in_child(ct__device_probe) == CT_SKIP) {
    fprintf(stderr, "no OpenCL device: skipping\n");
    exit(CT_SKIP);
  }
}

/* Creates a context or fails the test; exits 77 only when creation failed
 * with CLS_ENODEV because there is no OpenCL device at all. */
static inline cls_context *ct_context_opts(const struct cls_context_options *opts) {
  cls_context *ctx = NULL;
  int rc = cls_context_create(&ctx, opts);
  if (rc == CLS_ENODEV) {
    char detail[1024];
    snprintf(detail, sizeof detail, "%s", cls_last_error_detail());
    size_t n = 1;
    if (cls_device_list(NULL, 0, &n) == 0 && n == 0)
      exit(CT_SKIP);
    ck_abort_msg("cls_context_create: CLS_ENODEV with devices present: %s", detail);
  }
  ck_assert_msg(rc == 0, "cls_context_create returned %s (%d): %s", cls_err_name(rc),
                rc, cls_last_error_detail());
  ck_assert_ptr_nonnull(ctx);
  return ctx;
}

static inline cls_context *ct_context(void) { return ct_context_opts(NULL); }

/* A context with a fault spec and a stream factory (NULL: the defaults). */
static inline cls_context *ct_context_with(const char *fault,
                                           const struct cls_stream_factory *factory,
                                           void *factory_data) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .fault = fault,
                                  .factory = factory,
                                  .factory_data = factory_data};
  return ct_context_opts(&o);
}

static inline struct cls_device_info ct_context_info(cls_context *ctx) {
  struct cls_device_info info;
  memset(&info, 0, sizeof info);
  CT_OK(cls_context_device(ctx, &info));
  return info;
}

/* A new empty file named `stem`-XXXXXX in $TMPDIR (else /tmp), its path
 * into path[cap]; the caller unlinks it. */
static inline void ct_temp_file(char *path, size_t cap, const char *stem) {
  const char *dir = getenv("TMPDIR");
  snprintf(path, cap, "%s/%s-XXXXXX", dir && *dir ? dir : "/tmp", stem);
  int fd = mkstemp(path);
  ck_assert_msg(fd >= 0, "mkstemp %s failed", path);
  close(fd);
}

/* Stream s's generation (cls_stream_generation), checked. */
static inline uint64_t ct_generation(cls_context *ctx, int s) {
  uint64_t g = 99;
  CT_OK(cls_stream_generation(ctx, s, &g));
  return g;
}

/* Failure i of report r (cls_report_failure), checked. */
static inline struct cls_failure_info ct_failure(const cls_report *r, size_t i) {
  struct cls_failure_info f;
  memset(&f, 0, sizeof f);
  ck_assert_ptr_nonnull(r);
  CT_OK(cls_report_failure(r, i, &f));
  return f;
}

/* Whether failure 0 of r has `name` on its skip chain. */
static inline int ct_chain_names(const cls_report *r, const char *name) {
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  for (size_t i = 0; i < fi.nskips; i++) {
    struct cls_skip_info sk;
    CT_OK(cls_report_skip(r, 0, i, &sk));
    if (strcmp(sk.kernel, name) == 0)
      return 1;
  }
  return 0;
}

/* Stream s's statistics (cls_stream_stats), checked. */
/* Whether stream s's device offers cl_khr_command_buffer (the name
 * itself, not a longer one such as cl_khr_command_buffer_mutable_dispatch). */
static inline bool ct_has_cb(cls_context *ctx, int s) {
  cl_command_queue q;
  CT_OK(cls_stream_queue(ctx, s, &q));
  cl_device_id d;
  ck_assert_int_eq(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, NULL), CL_SUCCESS);
  char ext[8192] = "";
  clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
  const char name[] = "cl_khr_command_buffer";
  for (const char *p = strstr(ext, name); p; p = strstr(p + 1, name))
    if (p[sizeof name - 1] == ' ' || p[sizeof name - 1] == 0)
      return true;
  return false;
}

static inline struct cls_stream_stats ct_stats(cls_context *ctx, int s) {
  struct cls_stream_stats st;
  CT_OK(cls_stream_stats(ctx, s, &st));
  return st;
}

/* ------------------------------------------------------------------ */
/* Programs and kernels                                                */
/* ------------------------------------------------------------------ */

static inline cls_program *ct_build(cls_context *ctx, const char *src, const char *options) {
  cls_program *p = NULL;
  int rc = cls_program_build(ctx, src, options, &p);
  ck_assert_msg(rc == 0, "cls_program_build returned %s (%d): %s", cls_err_name(rc), rc,
                cls_last_error_detail());
  ck_assert_ptr_nonnull(p);
  return p;
}

static inline cls_kernel *ct_get_kernel(cls_context *ctx, cls_program *p, const char *name) {
  cls_kernel *k = NULL;
  int rc = cls_kernel_get(ctx, p, name, &k);
  ck_assert_msg(rc == 0, "cls_kernel_get(%s) returned %s (%d): %s", name, cls_err_name(rc),
                rc, cls_last_error_detail());
  ck_assert_ptr_nonnull(k);
  return k;
}

/* Builds `src` (the program stays with the context) and takes kernel `name`. */
static inline cls_kernel *ct_kernel(cls_context *ctx, const char *src, const char *name) {
  return ct_get_kernel(ctx, ct_build(ctx, src, NULL), name);
}

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */

static inline cls_buffer ct_alloc(cls_context *ctx, int stream, size_t size) {
  cls_buffer b = CLS_BUFFER_NULL;
  int rc = cls_alloc(ctx, stream, size, &b);
  ck_assert_msg(rc == 0, "cls_alloc(stream %d, %zu) returned %s (%d): %s", stream, size,
                cls_err_name(rc), rc, cls_last_error_detail());
  ck_assert_msg(b.bits != 0, "cls_alloc gave the zero handle");
  return b;
}

static inline void ct_upload_ints(cls_context *ctx, int stream, cls_buffer b,
                                  const int *v, size_t n) {
  CT_OK(cls_upload(ctx, stream, b, 0, v, n * sizeof *v));
}

static inline void ct_download_ints(cls_context *ctx, int stream, cls_buffer b, int *v,
                                    size_t n) {
  cls_report *r = NULL;
  int rc = cls_download(ctx, stream, b, 0, v, n * sizeof *v, &r);
  if (rc != 0) {
    char text[2048];
    snprintf(text, sizeof text, "%s", r ? cls_report_text(r) : cls_last_error_detail());
    cls_report_free(r);
    ck_abort_msg("cls_download(stream %d) returned %s (%d): %s", stream, cls_err_name(rc),
                 rc, text);
  }
  cls_report_free(r);
}

/* Every element of v[0..n) equals expect(i); the message names the first
 * element that does not. */
#define CT_EXPECT_INTS(v, n, i, expr)                                         \
  do {                                                                        \
    for (size_t i = 0; i < (n); i++) {                                        \
      int ct_want_ = (int)(expr);                                             \
      if ((v)[i] != ct_want_)                                                 \
        ck_abort_msg("%s[%zu] = %d, expected %d", #v, i, (v)[i], ct_want_);   \
    }                                                                         \
  } while (0)

/* The first n (at most 64) ints of b, read on `stream`, all equal v. */
static inline void ct_expect_ints(cls_context *ctx, int stream, cls_buffer b, size_t n, int v) {
  int got[64];
  ck_assert_uint_le(n, 64);
  ct_download_ints(ctx, stream, b, got, n);
  CT_EXPECT_INTS(got, n, i, v);
}

/* F12: b carries the record of a refused call: a download on `stream`
 * returns CLS_ETAINTED with one failure, synchronous, of status `code`,
 * whose operation is `op`, whose kernel is `kernel` (NULL: not checked) and
 * whose message says "refused" and quotes the call's detail. */
static inline void ct_expect_refused(cls_context *ctx, int stream, cls_buffer b, int code,
                                     const char *op, const char *kernel) {
  char got[16];
  cls_report *r = NULL;
  int rc = cls_download(ctx, stream, b, 0, got, sizeof got, &r);
  ck_assert_msg(rc == CLS_ETAINTED, "download after a refused %s: %s (%d), expected CLS_ETAINTED",
                op, cls_err_name(rc), rc);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_msg(fi.status == code, "refusal record has %s, expected %s: %s",
                cls_err_name(fi.status), cls_err_name(code), fi.message);
  ck_assert_str_eq(fi.operation, op);
  if (kernel)
    ck_assert_str_eq(fi.kernel, kernel);
  ck_assert_int_eq(fi.async, 0);
  ck_assert_int_eq(fi.cl_status, 0);
  ck_assert_msg(strstr(fi.message, "refused") && strstr(fi.message, cls_err_name(code)),
                "refusal record's message: %s", fi.message);
  cls_report_free(r);
}

/* A 1D launch that must be enqueued. */
static inline void ct_launch1(cls_context *ctx, int stream, cls_kernel *k, size_t n,
                              size_t nargs, const cls_arg *args) {
  size_t g[1] = {n};
  int rc = cls_launch(ctx, stream, k, 1, g, NULL, nargs, args);
  ck_assert_msg(rc == 0, "cls_launch(%s, stream %d) returned %s (%d): %s",
                k ? cls_kernel_name(k) : "(null)", stream, cls_err_name(rc), rc,
                cls_last_error_detail());
}

/* A buffer of n ints on `stream`, filled with v. */
static inline cls_buffer ct_written(cls_context *ctx, int stream, size_t n, int v) {
  cls_buffer b = ct_alloc(ctx, stream, n * sizeof(int));
  CT_OK(cls_fill(ctx, stream, b, 0, n * sizeof(int), &v, sizeof v));
  return b;
}

/* A correct round trip still works on ctx (after a misuse): fill_k (from
 * CT_FILL_SRC) on `stream` into a new buffer, read back on stream 0, freed.
 * Each call writes another value. */
static inline void ct_assert_context_works(cls_context *ctx, cls_kernel *fill_k, int stream) {
  static int round;
  int v = 1000 + ++round;
  cls_buffer o = ct_alloc(ctx, stream, 32 * sizeof(int));
  cls_arg a[] = {CLS_OUT(o), CLS_SCALAR(v)};
  ct_launch1(ctx, stream, fill_k, 32, 2, a);
  int got[32];
  ct_download_ints(ctx, 0, o, got, 32);
  CT_EXPECT_INTS(got, (size_t)32, i, v);
  CT_OK(cls_free(ctx, o));
}

/* ------------------------------------------------------------------ */
/* Process                                                             */
/* ------------------------------------------------------------------ */

/* Holding a stream's queue: a foreign command whose last event is a marker
 * behind a user event, so a command of another stream that reads `b`
 * must wait on it (the wait is made, whatever the timing).  A thread of
 * its own lets it go `ms` milliseconds after it ran (a failed enqueue's
 * waits happen on the host, and a platform that runs its queues inside
 * clFlush, oclgrind, runs this one there: a call may wait for it), or at
 * ct_hold_end, whichever comes first; `released` says whether it has
 * been.  ct_hold_free after the context is gone. */
struct ct_hold {
  _Atomic(cl_event) user;
  atomic_bool end, released;
  int ms;
  pthread_t th;
};
static inline cl_int ct__hold_cb(const struct cls_foreign_call *c, cl_event *last) {
  struct ct_hold *h = c->data;
  cl_context cx;
  cl_int rc = clGetCommandQueueInfo(c->queue, CL_QUEUE_CONTEXT, sizeof cx, &cx, NULL);
  if (rc != CL_SUCCESS)
    return rc;
  cl_event ev = clCreateUserEvent(cx, &rc);
  if (rc != CL_SUCCESS)
    return rc;
  rc = clEnqueueMarkerWithWaitList(c->queue, 1, &ev, last);
  atomic_store(&h->user, ev);
  return rc;
}
static inline void *ct__hold_release(void *arg) {
  struct ct_hold *h = arg;
  while (!atomic_load(&h->user) && !atomic_load(&h->end))
    usleep(1000);
  for (int t = 0; t < h->ms && !atomic_load(&h->end); t++)
    usleep(1000);
  atomic_store(&h->released, true);
  if (atomic_load(&h->user))
    clSetUserEventStatus(atomic_load(&h->user), CL_COMPLETE);
  return NULL;
}
static inline void ct_hold(cls_context *ctx, int stream, cls_buffer b, struct ct_hold *h,
                           int ms) {
  atomic_init(&h->user, NULL);
  atomic_init(&h->end, false);
  atomic_init(&h->released, false);
  h->ms = ms;
  ck_assert_int_eq(pthread_create(&h->th, NULL, ct__hold_release, h), 0);
  int rc = cls_foreign(ctx, stream, "held", ct__hold_cb, h, 1, (cls_arg[]){CLS_INOUT(b)});
  ck_assert_msg(rc == CLS_OK, "cls_foreign: %s", cls_err_name(rc));
}
static inline void ct_hold_end(struct ct_hold *h) {
  atomic_store(&h->end, true);
  pthread_join(h->th, NULL);
}
static inline void ct_hold_free(struct ct_hold *h) {
  if (atomic_load(&h->user))
    clReleaseEvent(atomic_load(&h->user));
}

/* Resident set size in bytes, 0 when unknown. */
static inline size_t ct_rss_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f)
    return 0;
  unsigned long size = 0, rss = 0;
  int n = fscanf(f, "%lu %lu", &size, &rss);
  fclose(f);
  if (n != 2)
    return 0;
  return (size_t)rss * (size_t)sysconf(_SC_PAGESIZE);
}

/* ------------------------------------------------------------------ */
/* Vendors                                                             */
/* ------------------------------------------------------------------ */

/* $CLS_TEST_QUICK (set by `make check-vendors` for the slow
 * implementations: oclgrind simulates every work-item) asks for less work:
 * what a test checks stays the same, only the load it checks it under
 * shrinks.  ct_scale(full, quick) picks the count to use. */
static inline int ct_quick(void) {
  const char *q = getenv("CLS_TEST_QUICK");
  return q && *q && strcmp(q, "0") != 0;
}

static inline int ct_scale(int full, int quick) { return ct_quick() ? quick : full; }

/* ------------------------------------------------------------------ */
/* Runner                                                              */
/* ------------------------------------------------------------------ */

/* A test case with a 60 s timeout, unless $CK_DEFAULT_TIMEOUT sets one
 * (valgrind runs raise it there). */
static inline TCase *ct_tcase(const char *name) {
  TCase *tc = tcase_create(name);
  /* Tagged with its name, so CK_EXCLUDE_TAGS can leave out single tests
   * (make check-vendors does, per vendor). */
  tcase_set_tags(tc, name);
  if (!getenv("CK_DEFAULT_TIMEOUT"))
    tcase_set_timeout(tc, 60);
  return tc;
}

/* Adds one test in its own test case named after the test. */
#define CT_ADD(suite, fn)                                                     \
  do {                                                                        \
    TCase *ct_tc_ = ct_tcase(#fn);                                            \
    tcase_add_test(ct_tc_, fn);                                               \
    suite_add_tcase((suite), ct_tc_);                                         \
  } while (0)

/* The same, with a checked fixture run around the test (in its process). */
#define CT_ADD_FIXTURE(suite, fn, setup, teardown)                            \
  do {                                                                        \
    TCase *ct_tc_ = ct_tcase(#fn);                                            \
    tcase_add_checked_fixture(ct_tc_, (setup), (teardown));                   \
    tcase_add_test(ct_tc_, fn);                                               \
    suite_add_tcase((suite), ct_tc_);                                         \
  } while (0)

static inline int ct_run(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* CLS_TESTS_COMMON_H */
