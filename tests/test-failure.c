/* The failure rules F1-F6, F9 and F10 of DESIGN.md, one test (or more) per
 * rule, named after it.  Faults are injected with the context option
 * `.fault` (grammar in src/factory/fault-spec.c); the white-box parts use
 * the core's internals (failure.h), which the tests link statically.
 *
 * Every test ends by showing the context still works: unrelated buffers
 * read back right and new work on the streams that saw a fault succeeds. */
#include "common.h"

#include <stdlib.h>
#include "gate.h"
#include "heap.h"

#include "failure/failure.h"
#include "base/handle.h"

#include <stdbool.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* Kernels, contexts, helpers                                          */
/* ------------------------------------------------------------------ */

#define N 16
#define NB (N * sizeof(int))

/* b[i] = a[i] + ADD, under many names: faults pick kernels by name. */
#define UNARY(name, add)                                                       \
  "kernel void " name "(global const int *a, global int *b) {\n"               \
  "  size_t i = get_global_id(0);\n"                                           \
  "  b[i] = a[i] + " #add ";\n"                                                \
  "}\n"

static const char SRC[] =
    UNARY("k1", 1) UNARY("root_fa", 10) UNARY("mid_fb", 20) UNARY("leaf_fc", 30)
    UNARY("fail_one", 2) UNARY("fail_two", 3) UNARY("taint_k", 4) UNARY("chain_k", 5)
    "kernel void split3(global const int *a, global int *x, global int *y,\n"
    "                   global int *z) {\n"
    "  size_t i = get_global_id(0);\n"
    "  x[i] = a[i]; y[i] = a[i] + 1; z[i] = a[i] + 2;\n"
    "}\n"
    "kernel void pair(global const int *a, global const int *b, global int *c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = a[i] + b[i];\n"
    "}\n"
    "kernel void only_reads(global const int *a) {\n"
    "  int v = a[get_global_id(0)];\n"
    "  (void)v;\n"
    "}\n"
    "kernel void noop(int v) {\n"
    "  (void)v;\n"
    "}\n";

static cls_context *ctx;
static cls_program *prog;

static void open_ctx(const char *fault, const struct cls_stream_factory *f, void *fdata) {
  ctx = ct_context_with(fault, f, fdata);
  prog = ct_build(ctx, SRC, NULL);
}

static void close_ctx(void) {
  cls_context_destroy(ctx);
  ctx = NULL;
  prog = NULL;
}

static cls_kernel *kern(const char *name) { return ct_get_kernel(ctx, prog, name); }

/* A command an "enqueue" fault fails.  The event driver enqueues at once,
 * so the call returns the failure (CLS_ELAUNCH for a launch).  A driver that
 * defers the enqueue (the scheduler driver) accepts the command and meets
 * the failure when it submits, as a failure found after the call (F8); the
 * sync makes it submit, so that from here on every driver is in the state
 * the rules describe.  That the call itself returns the failure, as the
 * header says, is checked once, in test-fault.c. */
static bool deferred; /* the last enqueue failure was found after the call */

static bool deferring_driver(void) { return strcmp(cls_context_driver(ctx), "event") != 0; }

#define ENQUEUE_FAILS(expr, code) enqueue_fails((expr), (code), #expr)

static void enqueue_fails(int rc, int code, const char *what) {
  deferred = false;
  if (rc == code)
    return;
  ck_assert_msg(rc == 0 && deferring_driver(), "%s: expected %s, got %s (%d) [driver %s]: %s",
                what, cls_err_name(code), cls_err_name(rc), rc, cls_context_driver(ctx),
                cls_last_error_detail());
  deferred = true;
  CT_OK(cls_sync(ctx, NULL));
}

/* A buffer on `stream` holding base + i. */
static cls_buffer input(int stream, int base) {
  int v[N];
  for (int i = 0; i < N; i++)
    v[i] = base + i;
  cls_buffer b = ct_alloc(ctx, stream, NB);
  ct_upload_ints(ctx, stream, b, v, N);
  return b;
}

static void upload_seq(int stream, cls_buffer b, int base) {
  int v[N];
  for (int i = 0; i < N; i++)
    v[i] = base + i;
  ct_upload_ints(ctx, stream, b, v, N);
}

/* The buffer reads back as base + i. */
static void expect_seq(int stream, cls_buffer b, int base) {
  int got[N];
  ct_download_ints(ctx, stream, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, base + (int)i);
}

static int launch_unary(int stream, const char *k, cls_buffer in, cls_buffer out) {
  size_t g[1] = {N};
  cls_arg a[] = {CLS_IN(in), CLS_OUT(out)};
  return cls_launch(ctx, stream, kern(k), 1, g, NULL, 2, a);
}

static int launch_pair(int stream, cls_buffer a, cls_buffer b, cls_buffer c) {
  size_t g[1] = {N};
  cls_arg args[] = {CLS_IN(a), CLS_IN(b), CLS_OUT(c)};
  return cls_launch(ctx, stream, kern("pair"), 1, g, NULL, 3, args);
}

/* A download of `b` must fail with CLS_ETAINTED and a report. */
static cls_report *tainted(int stream, cls_buffer b) {
  int got[N];
  cls_report *r = NULL;
  int rc = cls_download(ctx, stream, b, 0, got, NB, &r);
  ck_assert_msg(rc == CLS_ETAINTED, "download of a tainted buffer on stream %d: expected "
                "CLS_ETAINTED, got %s (%d): %s", stream, cls_err_name(rc), rc,
                cls_last_error_detail());
  ck_assert_msg(r != NULL, "CLS_ETAINTED without a report");
  return r;
}

static struct cls_skip_info sinfo(const cls_report *r, size_t fi, size_t i) {
  struct cls_skip_info s;
  memset(&s, 0, sizeof s);
  CT_OK(cls_report_skip(r, fi, i, &s));
  return s;
}

/* The report of a download of `b` names exactly one failure, the launch
 * of `kernel` on `stream`; returned for further checks. */
static cls_report *tainted_by(int read_stream, cls_buffer b, const char *kernel, int stream) {
  cls_report *r = tainted(read_stream, b);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info f = ct_failure(r, 0);
  ck_assert_msg(strcmp(f.kernel, kernel) == 0, "root kernel '%s', expected '%s'\n%s", f.kernel,
                kernel, cls_report_text(r));
  ck_assert_int_eq(f.stream, stream);
  return r;
}

static struct cls_stream_stats stats(int stream) {
  struct cls_stream_stats st;
  memset(&st, 0xff, sizeof st);
  CT_OK(cls_stream_stats(ctx, stream, &st));
  return st;
}

/* New work on `stream` succeeds and reads back right. */
static void assert_healthy(int stream) {
  static int round = 1000;
  int base = (round += 100);
  cls_buffer a = input(stream, base), b = ct_alloc(ctx, stream, NB);
  ck_assert_int_eq(launch_unary(stream, "k1", a, b), 0);
  expect_seq(stream, b, base + 1);
  CT_OK(cls_free(ctx, a));
  CT_OK(cls_free(ctx, b));
}

static size_t count_of(const char *hay, const char *needle) {
  size_t n = 0, l = strlen(needle);
  for (const char *p = strstr(hay, needle); p; p = strstr(p + l, needle))
    n++;
  return n;
}

/* ------------------------------------------------------------------ */
/* A logger that counts (F3, F9)                                       */
/* ------------------------------------------------------------------ */

struct logcount {
  int errors; /* lines at level CLS_LOG_ERRORS */
  int all;    /* every call */
  char last[1024];
};

static void count_log(void *user, int level, const char *msg) {
  struct logcount *lc = user;
  lc->all++;
  if (level == CLS_LOG_ERRORS) {
    lc->errors++;
    snprintf(lc->last, sizeof lc->last, "%s", msg);
  }
}

/* ------------------------------------------------------------------ */
/* F1 — record on the allocation                                       */
/* ------------------------------------------------------------------ */

START_TEST(F1_many_buffers_share_one_failure) {
  size_t start = cls__failures_alive();
  open_ctx("enqueue:kernel=split3", NULL, NULL);
  cls_buffer in = input(0, 0), unrelated = input(1, 7000);
  cls_buffer x = ct_alloc(ctx, 0, NB), y = ct_alloc(ctx, 1, NB), z = ct_alloc(ctx, 2, NB);
  cls_buffer xyz[3] = {x, y, z};
  size_t g[1] = {N};
  cls_arg a[] = {CLS_IN(in), CLS_OUT(x), CLS_OUT(y), CLS_OUT(z)};
  size_t base = cls__failures_alive();

  /* One failed launch writing three outputs: one record. */
  ENQUEUE_FAILS(cls_launch(ctx, 0, kern("split3"), 1, g, NULL, 4, a), CLS_ELAUNCH);
  ck_assert_uint_eq(cls__failures_alive(), base + 1);

  /* A read over all three names it once. */
  cls_report *r = NULL;
  CT_ERR(cls_check(ctx, 3, xyz, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  ck_assert_uint_eq(cls_report_bad_handles(r), 0);
  struct cls_failure_info f = ct_failure(r, 0);
  ck_assert_str_eq(f.kernel, "split3");
  ck_assert_str_eq(f.operation, "launch");
  ck_assert_int_eq(f.status, CLS_ELAUNCH);
  ck_assert_int_eq(f.stream, 0);
  const char *text = cls_report_text(r);
  ck_assert_msg(strstr(text, "split3") != NULL, "%s", text);
  ck_assert_uint_eq(cls__failures_alive(), base + 1);

  /* Rewritten buffers drop their references; the report keeps the record. */
  upload_seq(0, x, 10);
  upload_seq(1, y, 20);
  upload_seq(2, z, 30);
  ck_assert_uint_eq(cls__failures_alive(), base + 1);
  cls_report *none = (cls_report *)1;
  CT_OK(cls_check(ctx, 3, xyz, &none));
  ck_assert_ptr_null(none);
  ck_assert_str_eq(ct_failure(r, 0).kernel, "split3");
  cls_report_free(r);
  ck_assert_uint_eq(cls__failures_alive(), base);
  expect_seq(0, x, 10);
  expect_seq(1, y, 20);
  expect_seq(2, z, 30);

  /* Without a report: freed when the last buffer holding it is rewritten. */
  ENQUEUE_FAILS(cls_launch(ctx, 0, kern("split3"), 1, g, NULL, 4, a), CLS_ELAUNCH);
  ck_assert_uint_eq(cls__failures_alive(), base + 1);
  upload_seq(0, x, 11);
  upload_seq(1, y, 21);
  ck_assert_uint_eq(cls__failures_alive(), base + 1); /* z still holds it */
  const int pat = 5;
  CT_OK(cls_fill(ctx, 2, z, 0, NB, &pat, sizeof pat));
  ck_assert_uint_eq(cls__failures_alive(), base);

  /* A report outlives the buffers and the context. */
  ENQUEUE_FAILS(cls_launch(ctx, 0, kern("split3"), 1, g, NULL, 4, a), CLS_ELAUNCH);
  r = NULL;
  CT_ERR(cls_check(ctx, 3, xyz, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  CT_OK(cls_free(ctx, x));
  CT_OK(cls_free(ctx, y));
  CT_OK(cls_free(ctx, z));
  ck_assert_uint_eq(cls__failures_alive(), base + 1);
  expect_seq(1, unrelated, 7000);
  assert_healthy(0);
  CT_OK(cls_free(ctx, in));
  close_ctx();
  ck_assert_uint_eq(cls__failures_alive(), start + 1);
  text = cls_report_text(r);
  ck_assert_msg(strstr(text, "split3") != NULL && strstr(text, "CL_OUT_OF_RESOURCES") != NULL,
                "report text after cls_context_destroy:\n%s", text);
  f = ct_failure(r, 0);
  ck_assert_str_eq(f.kernel, "split3");
  ck_assert_int_eq(f.cl_status, CL_OUT_OF_RESOURCES);
  cls_report_free(r);
  ck_assert_uint_eq(cls__failures_alive(), start);
}
END_TEST

/* ------------------------------------------------------------------ */
/* F2 — check before a launch                                          */
/* ------------------------------------------------------------------ */

START_TEST(F2_skip_chain_across_three_streams) {
  open_ctx("enqueue:kernel=root_fa", NULL, NULL);
  cls_buffer in = input(0, 0), unrelated = input(1, 300);
  cls_buffer oa = ct_alloc(ctx, 0, NB), ob = ct_alloc(ctx, 1, NB), oc = ct_alloc(ctx, 2, NB);

  ENQUEUE_FAILS(launch_unary(0, "root_fa", in, oa), CLS_ELAUNCH);
  if (!deferred)
    ck_assert_int_eq(cls_last_cl_status(), CL_OUT_OF_RESOURCES);
  bool found_late = deferred;
  size_t alive = cls__failures_alive();
  CT_ERR(launch_unary(1, "mid_fb", oa, ob), CLS_ESKIPPED);
  CT_ERR(launch_unary(2, "leaf_fc", ob, oc), CLS_ESKIPPED);
  /* The skips pass the root on: no new record. */
  ck_assert_uint_eq(cls__failures_alive(), alive);

  cls_report *r = tainted(2, oc);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info f = ct_failure(r, 0);
  ck_assert_int_eq(f.status, CLS_ELAUNCH);
  ck_assert_int_eq(f.cl_status, CL_OUT_OF_RESOURCES);
  ck_assert_str_eq(f.cl_name, "CL_OUT_OF_RESOURCES");
  ck_assert_str_eq(f.operation, "launch");
  ck_assert_str_eq(f.kernel, "root_fa");
  ck_assert_int_eq(f.stream, 0);
  ck_assert_int_eq(f.async, found_late);
  ck_assert_uint_eq(f.nskips, 2);
  ck_assert_uint_eq(f.skipped, 2);
  struct cls_skip_info s0 = sinfo(r, 0, 0), s1 = sinfo(r, 0, 1);
  ck_assert_int_eq(s0.kind, CLS_SKIP_SKIPPED);
  ck_assert_str_eq(s0.kernel, "mid_fb");
  ck_assert_int_eq(s0.stream, 1);
  ck_assert_uint_eq(s0.count, 1);
  ck_assert_int_eq(s1.kind, CLS_SKIP_SKIPPED);
  ck_assert_str_eq(s1.kernel, "leaf_fc");
  ck_assert_int_eq(s1.stream, 2);
  ck_assert_uint_eq(s1.count, 1);
  ck_assert_int_eq(cls_report_skip(r, 0, 2, &s1), CLS_ERANGE);
  const char *text = cls_report_text(r);
  const char *pa = strstr(text, "root_fa"), *pb = strstr(text, "mid_fb"),
             *pc = strstr(text, "leaf_fc");
  ck_assert_msg(pa && pb && pc && pb < pc && strstr(text, "CL_OUT_OF_RESOURCES"),
                "report text:\n%s", text);
  cls_report_free(r);

  /* The middle buffer carries the same root; all three are one failure. */
  r = tainted_by(1, ob, "root_fa", 0);
  cls_report_free(r);
  cls_buffer all[3] = {oa, ob, oc};
  r = NULL;
  CT_ERR(cls_check(ctx, 3, all, &r), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  cls_report_free(r);

  /* Unrelated data and new work are fine; clean input runs mid_fb. */
  expect_seq(1, unrelated, 300);
  assert_healthy(0);
  assert_healthy(1);
  assert_healthy(2);
  ck_assert_int_eq(launch_unary(1, "mid_fb", in, ob), 0);
  expect_seq(1, ob, 20);
  close_ctx();
}
END_TEST

/* A skipped launch's CLS_ESKIPPED detail says what was skipped (kernel,
 * stream, position) and on which failure (its root, as a read names it):
 * a program that prints the detail of every failed call learns both. */
START_TEST(F2_a_skipped_launch_says_what_was_skipped_and_on_which_failure) {
  open_ctx("enqueue:kernel=root_fa", NULL, NULL);
  cls_buffer in = input(0, 0);
  cls_buffer oa = ct_alloc(ctx, 0, NB), ob = ct_alloc(ctx, 1, NB);
  ENQUEUE_FAILS(launch_unary(0, "root_fa", in, oa), CLS_ELAUNCH);
  CT_ERR(launch_unary(1, "mid_fb", oa, ob), CLS_ESKIPPED);
  char d[4096];
  snprintf(d, sizeof d, "%s", cls_last_error_detail());
  cls_report *r = tainted(1, ob);
  struct cls_skip_info s0 = sinfo(r, 0, 0);
  char what[128];
  snprintf(what, sizeof what,
           "launch of 'mid_fb' on stream 1 at position %llu skipped: argument 0 ('a') "
           "carries the failure",
           (unsigned long long)s0.position);
  ck_assert_msg(strstr(d, what), "the detail does not say '%s': '%s'", what, d);
  ck_assert_msg(strstr(d, "CLS_ELAUNCH") && strstr(d, "'root_fa' on stream 0") &&
                    strstr(d, "CL_OUT_OF_RESOURCES"),
                "the detail does not name the root: '%s'", d);
  cls_report_free(r);
  /* The next skips on that root: each names its own kernel and position
   * (the texts are kept once for a run, F10; what changes is not). */
  cls_buffer oc = ct_alloc(ctx, 2, NB);
  CT_ERR(launch_unary(2, "leaf_fc", ob, oc), CLS_ESKIPPED);
  snprintf(d, sizeof d, "%s", cls_last_error_detail());
  ck_assert_msg(strstr(d, "launch of 'leaf_fc' on stream 2 at position 1 skipped") &&
                    strstr(d, "'root_fa' on stream 0"),
                "the second skip's detail: '%s'", d);
  CT_ERR(launch_unary(1, "mid_fb", oa, ob), CLS_ESKIPPED);
  CT_ERR(launch_unary(1, "mid_fb", oa, ob), CLS_ESKIPPED);
  snprintf(what, sizeof what, "launch of 'mid_fb' on stream 1 at position %llu skipped",
           (unsigned long long)s0.position + 2);
  d[0] = '\0';
  snprintf(d, sizeof d, "%s", cls_last_error_detail());
  ck_assert_msg(strstr(d, what) && strstr(d, "'root_fa' on stream 0"),
                "a run's last skip: '%s' does not say '%s'", d, what);
  close_ctx();
}
END_TEST

START_TEST(F2_first_failing_input_in_argument_order_wins) {
  open_ctx("enqueue:kernel=fail_one;enqueue:kernel=fail_two", NULL, NULL);
  cls_buffer in = input(0, 0), clean = input(2, 50);
  cls_buffer x = ct_alloc(ctx, 0, NB), y = ct_alloc(ctx, 1, NB);
  cls_buffer c = ct_alloc(ctx, 2, NB), d = ct_alloc(ctx, 2, NB), e = ct_alloc(ctx, 2, NB);
  ENQUEUE_FAILS(launch_unary(0, "fail_one", in, x), CLS_ELAUNCH);
  ENQUEUE_FAILS(launch_unary(1, "fail_two", in, y), CLS_ELAUNCH);

  for (int round = 0; round < 3; round++) {
    CT_ERR(launch_pair(2, x, y, c), CLS_ESKIPPED);
    CT_ERR(launch_pair(2, y, x, d), CLS_ESKIPPED);
    CT_ERR(launch_pair(2, clean, y, e), CLS_ESKIPPED);
    /* The detail names the argument the failure came through. */
    ck_assert_msg(strstr(cls_last_error_detail(), "skipped: argument 1 ('b') carries the failure"),
                  "%s", cls_last_error_detail());
    cls_report *r = tainted_by(2, c, "fail_one", 0);
    struct cls_skip_info s = sinfo(r, 0, 0);
    ck_assert_str_eq(s.kernel, "pair");
    ck_assert_int_eq(s.stream, 2);
    cls_report_free(r);
    cls_report_free(tainted_by(2, d, "fail_two", 1));
    cls_report_free(tainted_by(2, e, "fail_two", 1));
  }
  /* x's record holds the skips that took it, y's the others. */
  cls_report *r = tainted_by(0, x, "fail_one", 0);
  ck_assert_uint_eq(ct_failure(r, 0).skipped, 3);
  cls_report_free(r);
  r = tainted_by(1, y, "fail_two", 1);
  ck_assert_uint_eq(ct_failure(r, 0).skipped, 6);
  cls_report_free(r);

  expect_seq(2, clean, 50);
  assert_healthy(0);
  assert_healthy(1);
  assert_healthy(2);
  close_ctx();
}
END_TEST

START_TEST(F2_skip_makes_no_opencl_call) {
  struct gate cnt = {0}; /* no kernel held: counts calls only */
  open_ctx("enqueue:kernel=root_fa", &gate_factory, &cnt);
  cls_buffer in = input(0, 0), unrelated = input(0, 40);
  cls_buffer oa = ct_alloc(ctx, 0, NB), ob = ct_alloc(ctx, 1, NB), oc = ct_alloc(ctx, 2, NB);
  ENQUEUE_FAILS(launch_unary(0, "root_fa", in, oa), CLS_ELAUNCH);
  ck_assert_msg(cnt.calls > 0, "the gate factory is not in use");

  struct cls_stream_stats a0 = stats(0), b0 = stats(1), c0 = stats(2);
  unsigned long before = cnt.calls;
  CT_ERR(launch_unary(1, "mid_fb", oa, ob), CLS_ESKIPPED);
  ck_assert_msg(cnt.calls == before, "a skipped launch made %lu stream factory calls",
                cnt.calls - before);
  CT_ERR(launch_unary(2, "leaf_fc", ob, oc), CLS_ESKIPPED);
  ck_assert_msg(cnt.calls == before, "a skipped launch made %lu stream factory calls",
                cnt.calls - before);
  struct cls_stream_stats a1 = stats(0), b1 = stats(1), c1 = stats(2);
  ck_assert_uint_eq(b1.enqueues, b0.enqueues);
  ck_assert_uint_eq(b1.launches, b0.launches);
  ck_assert_uint_eq(b1.waits, b0.waits);
  ck_assert_uint_eq(b1.skips, b0.skips + 1);
  ck_assert_uint_eq(c1.enqueues, c0.enqueues);
  ck_assert_uint_eq(c1.skips, c0.skips + 1);
  ck_assert_uint_eq(a1.enqueues, a0.enqueues);
  ck_assert_uint_eq(a1.markers, a0.markers);
  ck_assert_uint_eq(a1.flushes, a0.flushes);

  /* Control: the same launch on clean input does reach the factory (the
   * scheduler hands it over at the latest when its stream is synced). */
  ck_assert_int_eq(launch_unary(1, "mid_fb", in, ob), 0);
  CT_OK(cls_stream_sync(ctx, 1, NULL));
  ck_assert_msg(cnt.calls > before, "a launch that ran made no factory call");
  ck_assert_uint_eq(stats(1).enqueues, b1.enqueues + 1);
  expect_seq(1, ob, 20);
  expect_seq(0, unrelated, 40);
  assert_healthy(0);
  assert_healthy(2);
  close_ctx();
}
END_TEST

/* ------------------------------------------------------------------ */
/* F3 — tainted unless proven written                                  */
/* ------------------------------------------------------------------ */

START_TEST(F3_empty_write_set_mints_nothing) {
  open_ctx(NULL, NULL, NULL);
  struct logcount lc = {0};
  CT_OK(cls_set_logger(ctx, CLS_LOG_ERRORS, count_log, &lc));
  size_t g[1] = {N};
  int v = 3;
  cls_arg sc[] = {CLS_SCALAR(v)};
  /* First command of the context: nothing provisional exists yet. */
  size_t alive = cls__failures_alive();
  CT_OK(cls_launch(ctx, 0, kern("noop"), 1, g, NULL, 1, sc));
  CT_OK(cls_launch(ctx, 1, kern("noop"), 1, g, NULL, 1, sc));
  ck_assert_uint_eq(cls__failures_alive(), alive);

  cls_buffer in = input(0, 0);
  alive = cls__failures_alive();
  cls_arg rd[] = {CLS_IN(in)};
  for (int i = 0; i < 5; i++)
    CT_OK(cls_launch(ctx, i % 2, kern("only_reads"), 1, g, NULL, 1, rd));
  CT_OK(cls_sync(ctx, NULL));
  ck_assert_uint_eq(cls__failures_alive(), alive);
  ck_assert_int_eq(lc.errors, 0);
  ck_assert_uint_eq(stats(0).failures + stats(1).failures, 0);
  expect_seq(1, in, 0);
  assert_healthy(0);
  ck_assert_int_eq(lc.errors, 0);
  close_ctx();
}
END_TEST

START_TEST(F3_unfinished_write_scope_stays_tainted) {
  open_ctx(NULL, NULL, NULL);
  struct logcount lc = {0};
  CT_OK(cls_set_logger(ctx, CLS_LOG_ERRORS, count_log, &lc));
  cls_buffer b = input(0, 100), other = ct_alloc(ctx, 1, NB), unrelated = input(1, 600);

  /* A write scope entered and never left, as by a path that returned
   * early: the buffer held good bytes before, but they are no longer
   * proven. */
  CT_OK(cls__lock(ctx, "test"));
  struct cls__binding bind = {.handle = b, .access = CLS_WRITE};
  bind.slot = cls__resolve(ctx, b);
  int err = bind.slot ? CLS_OK : cls__resolve_error(ctx, b);
  struct cls__failure *prov = bind.slot ? cls__enter_write(ctx, &bind, 1) : NULL;
  cls__unlock(ctx);
  ck_assert_msg(bind.slot != NULL, "cls__resolve: %s", cls_err_name(err));
  ck_assert_ptr_nonnull(prov);

  /* Other writes in between do not release it. */
  upload_seq(1, other, 900);
  expect_seq(1, other, 900);

  for (int i = 0; i < 2; i++) {
    cls_report *r = tainted(0, b);
    ck_assert_uint_eq(cls_report_failures(r), 1);
    struct cls_failure_info f = ct_failure(r, 0);
    ck_assert_msg(ct_icontains(f.message, "never finished"),
                  "the report should say the write never finished: %s", cls_report_text(r));
    cls_report_free(r);
  }
  /* A launch reading it is skipped. */
  cls_buffer o = ct_alloc(ctx, 1, NB);
  CT_ERR(launch_unary(1, "k1", b, o), CLS_ESKIPPED);
  /* F9: logged once, however often it is read. */
  ck_assert_int_eq(lc.errors, 1);

  /* A fresh upload proves it written. */
  upload_seq(0, b, 200);
  expect_seq(0, b, 200);
  ck_assert_int_eq(launch_unary(1, "k1", b, o), 0);
  expect_seq(1, o, 201);
  expect_seq(1, unrelated, 600);
  assert_healthy(0);
  close_ctx();
}
END_TEST

/* ------------------------------------------------------------------ */
/* F4 — writing clears                                                 */
/* ------------------------------------------------------------------ */

START_TEST(F4_each_kind_of_write_clears) {
  open_ctx("enqueue:kernel=taint_k", NULL, NULL);
  cls_buffer in = input(0, 0), unrelated = input(1, 77);
  cls_buffer t[4];
  for (int i = 0; i < 4; i++) {
    t[i] = ct_alloc(ctx, i % 2, NB);
    upload_seq(i % 2, t[i], 5000); /* old bytes that must not come back */
    ENQUEUE_FAILS(launch_unary(0, "taint_k", in, t[i]), CLS_ELAUNCH);
    cls_report *r = NULL;
    CT_ERR(cls_check(ctx, 1, &t[i], &r), CLS_ETAINTED);
    cls_report_free(r);
  }
  /* upload */
  upload_seq(0, t[0], 100);
  expect_seq(0, t[0], 100);
  /* copy into it */
  cls_buffer src = input(1, 200);
  CT_OK(cls_copy(ctx, 1, src, 0, t[1], 0, NB));
  expect_seq(1, t[1], 200);
  /* fill */
  const int pat = 77;
  CT_OK(cls_fill(ctx, 0, t[2], 0, NB, &pat, sizeof pat));
  int got[N];
  ct_download_ints(ctx, 0, t[2], got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, 77);
  /* a launch writing it */
  ck_assert_int_eq(launch_unary(1, "k1", in, t[3]), 0);
  expect_seq(1, t[3], 1);

  cls_report *r = (cls_report *)1;
  CT_OK(cls_check(ctx, 4, t, &r));
  ck_assert_ptr_null(r);
  expect_seq(1, unrelated, 77);
  assert_healthy(0);
  assert_healthy(1);
  close_ctx();
}
END_TEST

/* ------------------------------------------------------------------ */
/* F5 — reads answer with every failure                                */
/* ------------------------------------------------------------------ */

START_TEST(F5_read_names_every_failure_once_and_bad_handles) {
  open_ctx("enqueue:kernel=fail_one;enqueue:kernel=fail_two", NULL, NULL);
  cls_buffer in = input(0, 0), clean = input(2, 9);
  cls_buffer x1 = ct_alloc(ctx, 0, NB), x2 = ct_alloc(ctx, 2, NB), y = ct_alloc(ctx, 1, NB);
  ENQUEUE_FAILS(launch_unary(0, "fail_one", in, x1), CLS_ELAUNCH);
  ENQUEUE_FAILS(launch_unary(1, "fail_two", in, y), CLS_ELAUNCH);
  CT_ERR(launch_unary(2, "chain_k", x1, x2), CLS_ESKIPPED); /* x2 shares x1's */
  cls_buffer stale = ct_alloc(ctx, 0, NB);
  CT_OK(cls_free(ctx, stale));

  cls_buffer list[] = {x1, clean, y, x2, CLS_BUFFER_NULL, stale, y, x1};
  cls_report *r = NULL;
  CT_ERR(cls_check(ctx, sizeof list / sizeof *list, list, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  const char *text = cls_report_text(r);
  ck_assert_msg(cls_report_failures(r) == 2, "expected 2 failures, got %zu:\n%s",
                cls_report_failures(r), text);
  int seen_one = 0, seen_two = 0;
  for (size_t i = 0; i < 2; i++) {
    struct cls_failure_info f = ct_failure(r, i);
    if (strcmp(f.kernel, "fail_one") == 0) {
      seen_one++;
      ck_assert_int_eq(f.stream, 0);
      ck_assert_uint_eq(f.nskips, 1);
      ck_assert_str_eq(sinfo(r, i, 0).kernel, "chain_k");
    } else if (strcmp(f.kernel, "fail_two") == 0) {
      seen_two++;
      ck_assert_int_eq(f.stream, 1);
      ck_assert_uint_eq(f.nskips, 0);
    }
  }
  ck_assert_msg(seen_one == 1 && seen_two == 1, "each failure once:\n%s", text);
  ck_assert_msg(cls_report_bad_handles(r) == 2, "expected 2 bad handles:\n%s", text);
  int got_null = 0, got_stale = 0;
  for (size_t i = 0; i < 2; i++) {
    cls_buffer h = {1};
    int why = 0;
    CT_OK(cls_report_bad_handle(r, i, &h, &why));
    if (why == CLS_ENULL && h.bits == 0)
      got_null++;
    if (why == CLS_ESTALE && h.bits == stale.bits)
      got_stale++;
  }
  ck_assert_msg(got_null == 1 && got_stale == 1, "bad handles:\n%s", text);
  ck_assert_msg(strstr(text, "fail_one") && strstr(text, "fail_two") && strstr(text, "chain_k"),
                "%s", text);
  cls_report_free(r);

  /* Bad handles alone fail the check, with no failure. */
  cls_buffer bad[] = {clean, stale};
  r = NULL;
  CT_ERR(cls_check(ctx, 2, bad, &r), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(r), 0);
  ck_assert_uint_eq(cls_report_bad_handles(r), 1);
  cls_report_free(r);

  /* A foreign handle is named as such. */
  cls_context *other = ct_context();
  cls_buffer foreign = ct_alloc(other, 0, NB);
  cls_buffer fl[] = {foreign, x1};
  r = NULL;
  CT_ERR(cls_check(ctx, 2, fl, &r), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  ck_assert_uint_eq(cls_report_bad_handles(r), 1);
  int why = 0;
  CT_OK(cls_report_bad_handle(r, 0, NULL, &why));
  ck_assert_int_eq(why, CLS_EFOREIGN);
  cls_report_free(r);
  cls_context_destroy(other);

  /* Clean buffers alone: no report. */
  r = (cls_report *)1;
  CT_OK(cls_check(ctx, 1, &clean, &r));
  ck_assert_ptr_null(r);

  /* A launch reading both failures takes the first; the other record's
   * chain does not grow. */
  cls_buffer z = ct_alloc(ctx, 2, NB);
  CT_ERR(launch_pair(2, y, x1, z), CLS_ESKIPPED);
  cls_buffer both[] = {x2, z};
  r = NULL;
  CT_ERR(cls_check(ctx, 2, both, &r), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(r), 2);
  for (size_t i = 0; i < 2; i++) {
    struct cls_failure_info f = ct_failure(r, i);
    ck_assert_uint_eq(f.skipped, 1);
  }
  cls_report_free(r);

  expect_seq(2, clean, 9);
  assert_healthy(0);
  assert_healthy(1);
  assert_healthy(2);
  close_ctx();
}
END_TEST

START_TEST(F5_tainted_download_fails_and_is_not_retried) {
  open_ctx("enqueue:kernel=fail_one", NULL, NULL);
  cls_buffer in = input(0, 0), unrelated = input(0, 31);
  cls_buffer x = input(0, 555); /* good bytes before the failed write */
  ENQUEUE_FAILS(launch_unary(0, "fail_one", in, x), CLS_ELAUNCH);

  for (int i = 0; i < 3; i++) {
    int got[N];
    memset(got, 0, sizeof got);
    cls_report *r = NULL;
    int rc = cls_download(ctx, i % 2, x, 0, got, NB, &r);
    ck_assert_msg(rc == CLS_ETAINTED, "download %d: %s", i, cls_err_name(rc));
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(cls_report_failures(r), 1);
    ck_assert_str_eq(ct_failure(r, 0).kernel, "fail_one");
    cls_report_free(r);
  }
  /* Without a report pointer, and for a part of the buffer. */
  int part[4];
  CT_ERR(cls_download(ctx, 0, x, 4 * sizeof(int), part, sizeof part, NULL), CLS_ETAINTED);

  /* A copy out of it is not made: the destination takes the failure. */
  cls_buffer dst = input(1, 42);
  CT_ERR(cls_copy(ctx, 1, x, 0, dst, 0, NB), CLS_ETAINTED);
  cls_report *r = tainted_by(1, dst, "fail_one", 0);
  cls_report_free(r);

  expect_seq(0, unrelated, 31);
  assert_healthy(0);
  assert_healthy(1);
  close_ctx();
}
END_TEST

/* A call that fails with a detail of its own: what a later call must
 * replace or clear.  Its text is kept in `out`. */
static void fail_a_call(char *out, size_t cap) {
  struct cls_stream_stats st;
  CT_ERR(cls_stream_stats(ctx, -1, &st), CLS_ESTREAM);
  ck_assert_msg(cls_last_error_detail()[0] != '\0', "the failing call left no detail");
  snprintf(out, cap, "%s", cls_last_error_detail());
}

/* The detail of the last call, which returned CLS_ETAINTED: not `before`,
 * and it names the read and the root (kernel fail_one on stream 0). */
static void detail_names_the_root(const char *before, const char *read) {
  const char *d = cls_last_error_detail();
  ck_assert_msg(strcmp(d, before) != 0, "the detail is the previous call's: %s", d);
  ck_assert_msg(strstr(d, read) != NULL, "the detail should name '%s': %s", read, d);
  ck_assert_msg(strstr(d, "1 failure; root: ") && strstr(d, "'fail_one' on stream 0") &&
                    strstr(d, "CL_OUT_OF_RESOURCES"),
                "the detail should name the root: %s", d);
}

/* cls_check, cls_download and cls_download_async used to return
 * CLS_ETAINTED with the previous call's detail: each sets its own. */
START_TEST(F5_a_tainted_read_sets_a_detail_naming_the_root) {
  open_ctx("enqueue:kernel=fail_one", NULL, NULL);
  cls_buffer in = input(0, 0), x = ct_alloc(ctx, 0, NB);
  ENQUEUE_FAILS(launch_unary(0, "fail_one", in, x), CLS_ELAUNCH);
  char before[1024], read[64];
  int got[N];
  cls_report *r = NULL;

  fail_a_call(before, sizeof before);
  CT_ERR(cls_download(ctx, 1, x, 0, got, NB, &r), CLS_ETAINTED);
  snprintf(read, sizeof read, "download of buffer %#llx on stream 1", (unsigned long long)x.bits);
  detail_names_the_root(before, read);
  cls_report_free(r);

  fail_a_call(before, sizeof before);
  CT_ERR(cls_download(ctx, 0, x, 0, got, NB, NULL), CLS_ETAINTED); /* no report wanted */
  detail_names_the_root(before, "download of buffer");

  fail_a_call(before, sizeof before);
  CT_ERR(cls_download_async(ctx, 2, x, 0, got, NB), CLS_ETAINTED);
  snprintf(read, sizeof read, "download of buffer %#llx on stream 2", (unsigned long long)x.bits);
  detail_names_the_root(before, read);

  fail_a_call(before, sizeof before);
  CT_ERR(cls_check(ctx, 1, &x, NULL), CLS_ETAINTED);
  snprintf(read, sizeof read, "check of buffer %#llx", (unsigned long long)x.bits);
  detail_names_the_root(before, read);

  /* A copy out of it is skipped (F2) with the same kind of detail. */
  cls_buffer dst = ct_alloc(ctx, 1, NB);
  fail_a_call(before, sizeof before);
  CT_ERR(cls_copy(ctx, 1, x, 0, dst, 0, NB), CLS_ETAINTED);
  snprintf(read, sizeof read, "copy on stream 1 from buffer %#llx", (unsigned long long)x.bits);
  detail_names_the_root(before, read);

  /* Several buffers: the counts, and the first root. */
  cls_buffer stale = ct_alloc(ctx, 0, NB), fresh = ct_alloc(ctx, 1, NB);
  CT_OK(cls_free(ctx, stale));
  cls_buffer list[] = {x, stale, fresh};
  fail_a_call(before, sizeof before);
  CT_ERR(cls_check(ctx, 3, list, &r), CLS_ETAINTED);
  const char *d = cls_last_error_detail();
  ck_assert_msg(strstr(d, "check of 3 buffers: 2 failures, 1 bad handle; first root: ") &&
                    strstr(d, "fail_one"),
                "%s", d);
  cls_report_free(r);

  assert_healthy(0);
  close_ctx();
}
END_TEST

/* A failure found after a non-blocking download was enqueued is answered
 * by the sync, whose detail names it too. */
START_TEST(F5_a_sync_answering_a_tainted_async_read_names_the_root) {
  open_ctx("complete:kernel=fail_one", NULL, NULL);
  cls_buffer in = input(0, 0), x = ct_alloc(ctx, 0, NB);
  CT_OK(launch_unary(0, "fail_one", in, x));
  char before[1024];
  int got[N];
  fail_a_call(before, sizeof before);
  int rc = cls_download_async(ctx, 1, x, 0, got, NB);
  if (rc == CLS_OK) { /* the failure was not known yet: the sync answers */
    fail_a_call(before, sizeof before);
    rc = cls_sync(ctx, NULL);
    ck_assert_msg(rc == CLS_ETAINTED, "sync: %s: %s", cls_err_name(rc), cls_last_error_detail());
    detail_names_the_root(before, "sync: 1 non-blocking download read data that failed");
  } else {
    ck_assert_msg(rc == CLS_ETAINTED, "%s: %s", cls_err_name(rc), cls_last_error_detail());
    detail_names_the_root(before, "download of buffer");
  }
  assert_healthy(0);
  close_ctx();
}
END_TEST

/* Every call that returns a status clears the detail on entry: a call
 * that succeeds shows none, whatever failed before it. */
#define LEAVES_NO_DETAIL(expr)                                                           \
  do {                                                                                    \
    char before_[1024];                                                                   \
    fail_a_call(before_, sizeof before_);                                                 \
    CT_OK(expr);                                                                          \
    ck_assert_msg(cls_last_error_detail()[0] == '\0', "%s succeeded with the detail: %s", \
                  #expr, cls_last_error_detail());                                        \
  } while (0)

START_TEST(a_call_that_succeeds_leaves_the_detail_empty) {
  open_ctx("enqueue:kernel=fail_one", NULL, NULL);
  int v[N] = {0}, got[N], zero = 0;
  size_t size = 0, count = 0;
  cls_buffer a = CLS_BUFFER_NULL, b = CLS_BUFFER_NULL;
  LEAVES_NO_DETAIL(cls_alloc(ctx, 0, NB, &a));
  LEAVES_NO_DETAIL(cls_alloc(ctx, 1, NB, &b));
  LEAVES_NO_DETAIL(cls_upload(ctx, 0, a, 0, v, NB));
  LEAVES_NO_DETAIL(cls_upload_async(ctx, 0, a, 0, v, NB));
  LEAVES_NO_DETAIL(cls_fill(ctx, 1, b, 0, NB, &zero, sizeof zero));
  LEAVES_NO_DETAIL(cls_copy(ctx, 1, a, 0, b, 0, NB));
  LEAVES_NO_DETAIL(launch_unary(0, "k1", a, b));
  LEAVES_NO_DETAIL(cls_download(ctx, 1, b, 0, got, NB, NULL));
  LEAVES_NO_DETAIL(cls_download_async(ctx, 0, b, 0, got, NB));
  LEAVES_NO_DETAIL(cls_check(ctx, 1, &b, NULL));
  LEAVES_NO_DETAIL(cls_stream_sync(ctx, 0, NULL));
  LEAVES_NO_DETAIL(cls_sync(ctx, NULL));
  LEAVES_NO_DETAIL(cls_buffer_size(ctx, a, &size));
  struct cls_stream_stats st;
  LEAVES_NO_DETAIL(cls_stream_stats(ctx, 0, &st));
  LEAVES_NO_DETAIL(cls_stats_reset(ctx));
  cls_program *p = NULL;
  cls_kernel *k = NULL;
  LEAVES_NO_DETAIL(cls_program_build(ctx, SRC, NULL, &p));
  LEAVES_NO_DETAIL(cls_kernel_get(ctx, p, "k1", &k));
  LEAVES_NO_DETAIL(cls_kernel_num_args(k) == 2 ? CLS_OK : -1);
  LEAVES_NO_DETAIL(cls_program_release(ctx, p));
  struct cls_device_info info;
  LEAVES_NO_DETAIL(cls_device_list(NULL, 0, &count));
  LEAVES_NO_DETAIL(cls_device_select(NULL, &info));
  LEAVES_NO_DETAIL(cls_context_device(ctx, &info));
  struct cls_quirks q = {.version = CLS_QUIRKS_VERSION};
  LEAVES_NO_DETAIL(cls_context_quirks(ctx, &q));
  LEAVES_NO_DETAIL(cls_driver_info(0, NULL, NULL));
  LEAVES_NO_DETAIL(cls_set_logger(ctx, CLS_LOG_OFF, NULL, NULL));
  cls_context *other = NULL;
  LEAVES_NO_DETAIL(cls_context_create(&other, NULL));
  cls_context_destroy(other);
  /* The report of a tainted read: its accessors succeed and clear. */
  cls_buffer in = input(0, 0), x = ct_alloc(ctx, 0, NB);
  ENQUEUE_FAILS(launch_unary(0, "fail_one", in, x), CLS_ELAUNCH);
  cls_report *r = tainted(0, x);
  struct cls_failure_info f;
  LEAVES_NO_DETAIL(cls_report_failure(r, 0, &f));
  CT_ERR(cls_report_failure(r, 1, &f), CLS_ERANGE);
  ck_assert_msg(cls_last_error_detail()[0] != '\0', "CLS_ERANGE without a detail");
  cls_report_free(r);
  LEAVES_NO_DETAIL(cls_free(ctx, a));
  /* A call that returns nothing keeps the detail for the caller. */
  char before[1024];
  fail_a_call(before, sizeof before);
  cls_context_destroy(ctx);
  ctx = NULL;
  ck_assert_str_eq(cls_last_error_detail(), before);
}
END_TEST

/* ------------------------------------------------------------------ */
/* F6 — across streams                                                 */
/* ------------------------------------------------------------------ */

START_TEST(F6_failure_taints_buffer_of_another_stream) {
  open_ctx("enqueue:kernel=fail_one", NULL, NULL);
  cls_buffer in = input(0, 0), unrelated = input(2, 12);
  cls_buffer t = ct_alloc(ctx, 2, NB); /* allocated on C */
  upload_seq(2, t, 800);
  ENQUEUE_FAILS(launch_unary(0, "fail_one", in, t), CLS_ELAUNCH); /* fails on A */
  cls_buffer o = ct_alloc(ctx, 1, NB);
  upload_seq(1, o, 900);
  CT_ERR(launch_unary(1, "k1", t, o), CLS_ESKIPPED); /* skipped on B */

  cls_report *r = tainted_by(1, o, "fail_one", 0);
  struct cls_failure_info f = ct_failure(r, 0);
  ck_assert_uint_eq(f.nskips, 1);
  struct cls_skip_info s = sinfo(r, 0, 0);
  ck_assert_str_eq(s.kernel, "k1");
  ck_assert_int_eq(s.stream, 1);
  cls_report_free(r);
  for (int st = 0; st < 3; st++)
    cls_report_free(tainted_by(st, t, "fail_one", 0));

  expect_seq(2, unrelated, 12);
  assert_healthy(0);
  assert_healthy(1);
  assert_healthy(2);
  close_ctx();
}
END_TEST

/* ------------------------------------------------------------------ */
/* F9 — every failure is reported once                                 */
/* ------------------------------------------------------------------ */

START_TEST(F9_every_failure_logged_exactly_once) {
  enum { CHAIN = 100 };
  open_ctx("enqueue:kernel=fail_one;enqueue:kernel=fail_two", NULL, NULL);
  struct logcount lc = {0};
  CT_OK(cls_set_logger(ctx, CLS_LOG_ERRORS, count_log, &lc));
  cls_buffer in = input(0, 0), unrelated = input(1, 64);
  static cls_buffer b[CHAIN + 1];
  for (int i = 0; i <= CHAIN; i++)
    b[i] = ct_alloc(ctx, i % 3, NB);
  ck_assert_int_eq(lc.errors, 0);

  ENQUEUE_FAILS(launch_unary(0, "fail_one", in, b[0]), CLS_ELAUNCH);
  ck_assert_int_eq(lc.errors, 1);
  ck_assert_msg(strstr(lc.last, "fail_one") != NULL, "log line: %s", lc.last);
  for (int i = 0; i < CHAIN; i++)
    CT_ERR(launch_unary(i % 3, "chain_k", b[i], b[i + 1]), CLS_ESKIPPED);
  ck_assert_int_eq(lc.errors, 1);

  cls_buffer y = ct_alloc(ctx, 1, NB);
  ENQUEUE_FAILS(launch_unary(1, "fail_two", in, y), CLS_ELAUNCH);
  ck_assert_int_eq(lc.errors, 2);
  ck_assert_msg(strstr(lc.last, "fail_two") != NULL, "log line: %s", lc.last);

  for (int i = 0; i < 2; i++) {
    cls_report *r = tainted_by(2, b[CHAIN], "fail_one", 0);
    ck_assert_uint_eq(ct_failure(r, 0).skipped, CHAIN);
    cls_report_free(r);
    cls_report_free(tainted_by(1, y, "fail_two", 1));
    cls_buffer both[] = {b[CHAIN], y, b[0]};
    r = NULL;
    CT_ERR(cls_check(ctx, 3, both, &r), CLS_ETAINTED);
    ck_assert_uint_eq(cls_report_failures(r), 2);
    cls_report_free(r);
  }
  ck_assert_int_eq(lc.errors, 2);

  /* The never-written failure of a fresh buffer is minted when first met:
   * logged then, once. */
  cls_buffer fresh = ct_alloc(ctx, 0, NB);
  ck_assert_int_eq(lc.errors, 2);
  cls_report_free(tainted(0, fresh));
  ck_assert_int_eq(lc.errors, 3);
  cls_report_free(tainted(0, fresh));
  cls_buffer o = ct_alloc(ctx, 0, NB);
  CT_ERR(launch_unary(0, "k1", fresh, o), CLS_ESKIPPED);
  ck_assert_int_eq(lc.errors, 3);

  expect_seq(1, unrelated, 64);
  assert_healthy(0);
  assert_healthy(1);
  assert_healthy(2);
  ck_assert_int_eq(lc.errors, 3);
  close_ctx();
}
END_TEST

/* A record with no OpenCL status behind it (a buffer never written) says
 * none: the log used to print "CLS_ETAINTED (CL_SUCCESS)" and "buffer of
 * 1 bytes". */
START_TEST(F9_a_record_without_an_opencl_status_shows_none) {
  open_ctx("enqueue:kernel=fail_one", NULL, NULL);
  struct logcount lc = {0};
  CT_OK(cls_set_logger(ctx, CLS_LOG_ERRORS, count_log, &lc));
  cls_buffer one = ct_alloc(ctx, 0, 1), two = ct_alloc(ctx, 1, 2);
  char bytes[2];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 0, one, 0, bytes, 1, &r), CLS_ETAINTED);
  ck_assert_int_eq(lc.errors, 1);
  ck_assert_msg(strstr(lc.last, "CL_SUCCESS") == NULL && strstr(lc.last, "()") == NULL,
                "log line: %s", lc.last);
  ck_assert_msg(strstr(lc.last, "failure: CLS_ETAINTED in alloc on stream 0: buffer of 1 byte "
                                "allocated on stream 0 was never written"),
                "log line: %s", lc.last);
  const char *text = cls_report_text(r);
  ck_assert_msg(!strstr(text, "CL_SUCCESS") && !strstr(text, "1 bytes") &&
                    strstr(text, "buffer of 1 byte allocated"),
                "%s", text);
  ck_assert_str_eq(ct_failure(r, 0).cl_name, "");
  cls_report_free(r);
  CT_ERR(cls_download(ctx, 1, two, 0, bytes, 2, NULL), CLS_ETAINTED);
  ck_assert_msg(!strstr(cls_last_error_detail(), "CL_SUCCESS") &&
                    strstr(cls_last_error_detail(), "buffer of 2 bytes allocated"),
                "%s", cls_last_error_detail());
  ck_assert_msg(strstr(lc.last, "buffer of 2 bytes allocated"), "log line: %s", lc.last);

  /* A record that has one shows it. */
  cls_buffer in = input(0, 0), x = ct_alloc(ctx, 0, NB);
  ENQUEUE_FAILS(launch_unary(0, "fail_one", in, x), CLS_ELAUNCH);
  ck_assert_msg(strstr(lc.last, "(CL_OUT_OF_RESOURCES) in launch of 'fail_one' on stream 0 at "
                                "position "),
                "log line: %s", lc.last);
  assert_healthy(0);
  close_ctx();
}
END_TEST

START_TEST(F9_log_off_logs_nothing) {
  open_ctx("enqueue:kernel=fail_one;enqueue:kernel=fail_two", NULL, NULL);
  struct logcount lc = {0};
  CT_OK(cls_set_logger(ctx, CLS_LOG_OFF, count_log, &lc));
  cls_buffer in = input(0, 0);
  cls_buffer x = ct_alloc(ctx, 0, NB), o = ct_alloc(ctx, 1, NB), fresh = ct_alloc(ctx, 1, NB);
  ENQUEUE_FAILS(launch_unary(0, "fail_one", in, x), CLS_ELAUNCH);
  CT_ERR(launch_unary(1, "k1", x, o), CLS_ESKIPPED);
  cls_report_free(tainted(1, o));
  cls_report_free(tainted(1, fresh));
  ck_assert_int_eq(lc.all, 0);

  /* Control: the same logger at "errors" does hear a failure. */
  CT_OK(cls_set_logger(ctx, CLS_LOG_ERRORS, count_log, &lc));
  cls_buffer y = ct_alloc(ctx, 1, NB);
  ENQUEUE_FAILS(launch_unary(1, "fail_two", in, y), CLS_ELAUNCH);
  ck_assert_int_eq(lc.errors, 1);
  assert_healthy(0);
  assert_healthy(1);
  close_ctx();
}
END_TEST

/* ------------------------------------------------------------------ */
/* F10 — skipping is cheap                                             */
/* ------------------------------------------------------------------ */

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

START_TEST(F10_ten_thousand_skips_allocate_nothing) {
  enum { WARM = 8, SKIPS = 10000 };
  open_ctx("enqueue:kernel=fail_one", NULL, NULL);
  cls_buffer in = input(0, 0), unrelated = input(0, 3);
  cls_buffer t = ct_alloc(ctx, 0, NB), o = ct_alloc(ctx, 0, NB);
  ENQUEUE_FAILS(launch_unary(0, "fail_one", in, t), CLS_ELAUNCH);
  cls_kernel *k = kern("chain_k");
  size_t g[1] = {N};
  cls_arg args[] = {CLS_IN(t), CLS_OUT(o)};
  for (int i = 0; i < WARM / 2; i++)
    CT_ERR(cls_launch(ctx, 0, k, 1, g, NULL, 2, args), CLS_ESKIPPED);
  CT_OK(cls_sync(ctx, NULL));
  for (int i = 0; i < WARM / 2; i++)
    CT_ERR(cls_launch(ctx, 0, k, 1, g, NULL, 2, args), CLS_ESKIPPED);

  int wrong = 0, last = 0;
  ct_heap_start();
  double t0 = now_ns();
  for (int i = 0; i < SKIPS; i++) {
    int rc = cls_launch(ctx, 0, k, 1, g, NULL, 2, args);
    if (rc != CLS_ESKIPPED) {
      wrong++;
      last = rc;
    }
  }
  double t1 = now_ns();
  ct_heap_stop();
  unsigned long allocs = ct_heap_allocs;
  printf("F10: %.1f ns per skipped launch (%d skips)\n", (t1 - t0) / SKIPS, SKIPS);
  fflush(stdout);
  ck_assert_msg(wrong == 0, "%d launches were not skipped (last: %s)", wrong,
                cls_err_name(last));
  ck_assert_msg(allocs == 0, "%lu heap allocations during %d skipped launches", allocs, SKIPS);

  ck_assert_uint_eq(stats(0).skips, (uint64_t)(WARM + SKIPS));
  cls_report *r = tainted_by(0, o, "fail_one", 0);
  struct cls_failure_info f = ct_failure(r, 0);
  ck_assert_uint_eq(f.skipped, (uint64_t)(WARM + SKIPS));
  ck_assert_uint_eq(f.nskips, 1);
  struct cls_skip_info s = sinfo(r, 0, 0);
  ck_assert_str_eq(s.kernel, "chain_k");
  ck_assert_int_eq(s.stream, 0);
  ck_assert_uint_eq(s.count, (uint64_t)(WARM + SKIPS));
  const char *text = cls_report_text(r);
  ck_assert_msg(strlen(text) < 2048, "report of %zu bytes:\n%s", strlen(text), text);
  ck_assert_msg(count_of(text, "chain_k") == 1, "one line for the run:\n%s", text);
  cls_report_free(r);

  expect_seq(0, unrelated, 3);
  assert_healthy(0);
  close_ctx();
}
END_TEST

/* ------------------------------------------------------------------ */

int main(void) {
  /* These cases pin each failure found after the enqueue on its command
   * (F8, exact attribution); ranged attribution (F8a), the default where
   * the device allows it, has its own suite: tests/test-ranged.c. */
  setenv("CLS_PRECISE", "1", 0);
  ct_require_device();
  Suite *s = suite_create("failure");
  CT_ADD(s, F1_many_buffers_share_one_failure);
  CT_ADD(s, F2_skip_chain_across_three_streams);
  CT_ADD(s, F2_a_skipped_launch_says_what_was_skipped_and_on_which_failure);
  CT_ADD(s, F2_first_failing_input_in_argument_order_wins);
  CT_ADD(s, F2_skip_makes_no_opencl_call);
  CT_ADD(s, F3_empty_write_set_mints_nothing);
  CT_ADD(s, F3_unfinished_write_scope_stays_tainted);
  CT_ADD(s, F4_each_kind_of_write_clears);
  CT_ADD(s, F5_read_names_every_failure_once_and_bad_handles);
  CT_ADD(s, F5_tainted_download_fails_and_is_not_retried);
  CT_ADD(s, F5_a_tainted_read_sets_a_detail_naming_the_root);
  CT_ADD(s, F5_a_sync_answering_a_tainted_async_read_names_the_root);
  CT_ADD(s, a_call_that_succeeds_leaves_the_detail_empty);
  CT_ADD(s, F6_failure_taints_buffer_of_another_stream);
  CT_ADD(s, F9_every_failure_logged_exactly_once);
  CT_ADD(s, F9_a_record_without_an_opencl_status_shows_none);
  CT_ADD(s, F9_log_off_logs_nothing);
  CT_ADD(s, F10_ten_thousand_skips_allocate_nothing);
  return ct_run(s);
}
