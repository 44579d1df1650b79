/* Waiting with a deadline (CLS_SYNC_TIMEOUT): a command that runs past
 * it makes the wait return CLS_ETIMEDOUT, naming it, instead of hanging;
 * its outputs carry the failure; a context destroyed while it still runs
 * returns.  Without a deadline, waits are as long as the work. */
#include "common.h"

#include <stdint.h>
#include <time.h>

/* A kernel that runs for as long as its size says: each work-item a
 * dependent chain of `iters` steps the compiler cannot shorten.  At most
 * 50,000 steps per work-item: rusticl (llvmpipe) ends a work-item's loops
 * after 65,535 iterations in all and returns a wrong result
 * (docs/portability.md), so long runs come from many work-items. */
#define SPIN_SRC                                                               \
  "__kernel void spin(__global uint *o, uint iters) {\n"                      \
  "  uint a = get_global_id(0) + 1;\n"                                        \
  "  for (uint i = 0; i < iters; i++) a = a * 1664525u + 1013904223u;\n"      \
  "  o[get_global_id(0)] = a; }\n"
enum { STEPS = 50000 };

static cls_context *ctx;
static cls_kernel *spin;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void open_ctx(double timeout) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .sync_timeout = timeout};
  ctx = ct_context_opts(&o);
  spin = ct_kernel(ctx, SPIN_SRC, "spin");
}

static void teardown(void) {
  cls_context_destroy(ctx);
  ctx = NULL;
}

static void launch_spin(int stream, cls_buffer o, size_t items, uint32_t iters) {
  size_t g[1] = {items};
  cls_arg a[] = {CLS_OUT(o), CLS_SCALAR(iters)};
  CT_OK(cls_launch(ctx, stream, spin, 1, g, NULL, 2, a));
}

/* How many work-items keep the device busy for about 3 s (at most 2^24),
 * measured on this device without a deadline. */
static size_t long_items(void) {
  cls_context *c = ct_context();
  cls_kernel *k = ct_kernel(c, SPIN_SRC, "spin");
  size_t items = 1024;
  cls_buffer o = ct_alloc(c, 0, (size_t)1 << 26);
  for (;;) {
    uint32_t iters = STEPS;
    size_t g[1] = {items};
    cls_arg a[] = {CLS_OUT(o), CLS_SCALAR(iters)};
    double t0 = now();
    CT_OK(cls_launch(c, 0, k, 1, g, NULL, 2, a));
    CT_OK(cls_stream_sync(c, 0, NULL));
    double t = now() - t0;
    if (t > 0.1 || items >= ((size_t)1 << 24)) {
      double want = (double)items * 3.0 / t;
      items = want > (double)((size_t)1 << 24) ? (size_t)1 << 24 : (size_t)want;
      break;
    }
    items *= 8;
  }
  cls_context_destroy(c);
  return items;
}

/* The spinning launch's output: one uint per work-item. */
static cls_buffer spin_buffer(size_t items) { return ct_alloc(ctx, 0, items * sizeof(uint32_t)); }

START_TEST(timeout_sync_returns_etimedout_naming_the_running_kernel) {
  size_t items = long_items();
  open_ctx(0.2);
  cls_buffer o = spin_buffer(items);
  launch_spin(0, o, items, STEPS);
  double t0 = now();
  CT_ERR(cls_stream_sync(ctx, 0, NULL), CLS_ETIMEDOUT);
  double waited = now() - t0;
  ck_assert_msg(waited >= 0.15 && waited < 1.5, "the sync waited %.3f s", waited);
  const char *d = cls_last_error_detail();
  ck_assert_msg(strstr(d, "launch of 'spin' on stream 0 at position 1 has not finished"),
                "detail: %s", d);
  /* Its output carries the failure: the read says so at once. */
  uint32_t got[16];
  cls_report *r = NULL;
  t0 = now();
  CT_ERR(cls_download(ctx, 1, o, 0, got, sizeof got, &r), CLS_ETAINTED);
  ck_assert_msg(now() - t0 < 0.5, "the read waited");
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_int_eq(fi.status, CLS_ETIMEDOUT);
  cls_report_free(r);
  /* Destroy returns too, leaving the queue to the kernel. */
  t0 = now();
  cls_context_destroy(ctx);
  ctx = NULL;
  waited = now() - t0;
  ck_assert_msg(waited < 1.5, "destroy waited %.3f s", waited);
}
END_TEST

/* A blocking read behind the spinning kernel on its stream waits with the
 * deadline too; what it reads was not written by the kernel, so it is not
 * tainted, and once the kernel is done the read works. */
START_TEST(timeout_blocking_read_behind_a_running_kernel) {
  size_t items = long_items();
  open_ctx(0.2);
  cls_buffer o = spin_buffer(items), p = ct_written(ctx, 0, 16, 3);
  /* The blame goes to the oldest command not known finished: the fill is
   * known finished once synced. */
  CT_OK(cls_stream_sync(ctx, 0, NULL));
  launch_spin(0, o, items, STEPS);
  int got[16];
  double t0 = now();
  CT_ERR(cls_download(ctx, 0, p, 0, got, sizeof got, NULL), CLS_ETIMEDOUT);
  ck_assert_msg(now() - t0 < 1.5, "the read waited %.3f s", now() - t0);
  ck_assert_msg(strstr(cls_last_error_detail(), "'spin'"), "detail: %s",
                cls_last_error_detail());
  cls_context_destroy(ctx);
  ctx = NULL;
}
END_TEST

/* Work that finishes within the deadline is waited for as usual. */
START_TEST(timeout_work_within_the_deadline_completes) {
  open_ctx(30);
  cls_buffer o = ct_alloc(ctx, 0, 64);
  launch_spin(1, o, 16, STEPS);
  CT_OK(cls_stream_sync(ctx, 1, NULL));
  uint32_t got[16];
  CT_OK(cls_download(ctx, 0, o, 0, got, sizeof got, NULL));
  uint32_t a = 1;
  for (uint32_t i = 0; i < STEPS; i++)
    a = a * 1664525u + 1013904223u;
  ck_assert_uint_eq(got[0], a);
}
END_TEST

START_TEST(timeout_setting_is_parsed_strictly) {
  static const char *const bad[] = {"0", "-1", "abc", "1.", ".5", "1e3", " 1", "1 ", "2000000"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv("CLS_SYNC_TIMEOUT", bad[i], 1);
    cls_context *c = NULL;
    int rc = cls_context_create(&c, NULL);
    ck_assert_msg(rc == CLS_ECONFIG, "'%s' gave %s", bad[i], cls_err_name(rc));
    ck_assert_msg(strstr(cls_last_error_detail(), "CLS_SYNC_TIMEOUT"), "%s",
                  cls_last_error_detail());
  }
  static const char *const good[] = {"1", "0.5", "2.25", "1000000"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    setenv("CLS_SYNC_TIMEOUT", good[i], 1);
    cls_context *c = NULL;
    CT_OK(cls_context_create(&c, NULL));
    cls_context_destroy(c);
  }
  unsetenv("CLS_SYNC_TIMEOUT");
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("timeout");
  /* One test case each, tagged with its name (tests/check-vendors.sh
   * leaves two out on oclgrind); each closes its context itself or in
   * teardown. */
#define ADD(fn) CT_ADD_FIXTURE(s, fn, NULL, teardown)
  ADD(timeout_sync_returns_etimedout_naming_the_running_kernel);
  ADD(timeout_blocking_read_behind_a_running_kernel);
  ADD(timeout_work_within_the_deadline_completes);
  ADD(timeout_setting_is_parsed_strictly);
#undef ADD
  return ct_run(s);
}
