/* F8a: ranged attribution.  Where the device fails the rest of an in-order
 * queue behind a failed command (quirk queue_poisoned), a stream asks for
 * an OpenCL event only where one is needed and every event_every
 * commands; a failure found after the enqueue is then known to lie in a
 * range of commands, every write of the range takes it, and the report
 * names the range.  CLS_PRECISE=1 or the `precise` option pins it.
 * Completion failures come from CLS_FAULT's "complete:" (src/factory/
 * fault.c), which reports them as such an event would. */
#include "common.h"

#include <stdlib.h>

enum { N = 64 };

static const char *const SRC = CT_FILL_SRC CT_COPY_SRC CT_INC_SRC;

static cls_context *open_ctx(const char *fault, int precise, unsigned every) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .fault = fault,
                                  .precise = precise,
                                  .event_every = every};
  return ct_context_opts(&o);
}

static int mode_of(cls_context *ctx, const char **why) {
  int mode = -1;
  CT_OK(cls_context_attribution(ctx, &mode, why, NULL));
  return mode;
}

/* On a device whose queues a failure does not poison, attribution is
 * exact whatever was asked: only an event per command sees a failure
 * there.  The cases below then check that, and nothing else. */
static bool ranged_or_exact_explained(cls_context *ctx) {
  const char *why = NULL;
  int mode = mode_of(ctx, &why);
  if (mode == CLS_ATTRIBUTION_RANGED)
    return true;
  ck_assert_int_eq(mode, CLS_ATTRIBUTION_EXACT);
  ck_assert_msg(why && (strstr(why, "queue_poisoned") || strstr(why, "CLS_PRECISE")),
                "exact, and why: %s", why ? why : "(null)");
  return false;
}

static void launch_fill(cls_context *ctx, cls_kernel *k, int stream, cls_buffer b, int v) {
  ct_launch1(ctx, stream, k, N, 2, (cls_arg[]){CLS_OUT(b), CLS_SCALAR(v)});
}

static void launch_copy(cls_context *ctx, cls_kernel *k, int stream, cls_buffer a, cls_buffer b) {
  ct_launch1(ctx, stream, k, N, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)});
}

/* The one failure b carries, read on `stream`, into *f (the report is the
 * caller's to free). */
static cls_report *failure_of(cls_context *ctx, int stream, cls_buffer b,
                              struct cls_failure_info *f) {
  int got[N];
  cls_report *r = NULL;
  int rc = cls_download(ctx, stream, b, 0, got, sizeof got, &r);
  ck_assert_msg(rc == CLS_ETAINTED, "download: %s (%d), expected CLS_ETAINTED: %s",
                cls_err_name(rc), rc, cls_last_error_detail());
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  CT_OK(cls_report_failure(r, 0, f));
  return r;
}

/* After a sync (what came before finished cleanly), four launches on
 * stream 0: fill_k 1, 2, copy_k of *a (5s), fill_k 4 into b[0..3], and a
 * sync.  Under "complete:kernel=copy_k" the third fails at completion. */
static void four_launches(cls_context *ctx, cls_buffer *a, cls_buffer b[4]) {
  cls_kernel *fill = ct_kernel(ctx, SRC, "fill_k"), *copy = ct_kernel(ctx, SRC, "copy_k");
  *a = ct_written(ctx, 0, N, 5);
  for (int i = 0; i < 4; i++)
    b[i] = ct_alloc(ctx, 0, N * sizeof(int));
  CT_OK(cls_sync(ctx, NULL));
  launch_fill(ctx, fill, 0, b[0], 1);
  launch_fill(ctx, fill, 0, b[1], 2);
  launch_copy(ctx, copy, 0, *a, b[2]);
  launch_fill(ctx, fill, 0, b[3], 4);
  cls_sync(ctx, NULL);
}

START_TEST(F8a_ranged_is_the_default_where_the_queue_is_poisoned) {
  cls_context *ctx = open_ctx(NULL, 0, 0);
  struct cls_quirks q = {.version = CLS_QUIRKS_VERSION};
  CT_OK(cls_context_quirks(ctx, &q));
  const char *why = NULL;
  unsigned every = 0;
  int mode = -1;
  CT_OK(cls_context_attribution(ctx, &mode, &why, &every));
  const char *env = getenv("CLS_PRECISE");
  bool asked_exact = env && strcmp(env, "1") == 0;
  ck_assert_int_eq(mode, q.queue_poisoned == 1 && !asked_exact ? CLS_ATTRIBUTION_RANGED
                                                                : CLS_ATTRIBUTION_EXACT);
  ck_assert_ptr_nonnull(why);
  ck_assert_uint_ge(every, 1);
  cls_context_destroy(ctx);

  /* Exact is one option away, and says why. */
  ctx = open_ctx(NULL, 1, 0);
  ck_assert_int_eq(mode_of(ctx, &why), CLS_ATTRIBUTION_EXACT);
  ck_assert_msg(strstr(why, "CLS_PRECISE"), "why: %s", why);
  cls_context_destroy(ctx);
  CT_ERR(cls_context_attribution(NULL, &mode, NULL, NULL), CLS_EINVAL);
}
END_TEST

START_TEST(F8a_malformed_settings_are_refused) {
  cls_context *ctx = NULL;
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .event_every = 70000};
  CT_ERR(cls_context_create(&ctx, &o), CLS_ECONFIG);
  ck_assert_ptr_null(ctx);
  const char *bad[][2] = {{"CLS_PRECISE", "2"}, {"CLS_PRECISE", "yes"},
                          {"CLS_EVENT_EVERY", "0"}, {"CLS_EVENT_EVERY", "12x"},
                          {"CLS_EVENT_EVERY", "65537"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *old = getenv(bad[i][0]) ? strdup(getenv(bad[i][0])) : NULL;
    setenv(bad[i][0], bad[i][1], 1);
    int rc = cls_context_create(&ctx, NULL);
    ck_assert_msg(rc == CLS_ECONFIG, "%s=%s: %s", bad[i][0], bad[i][1], cls_err_name(rc));
    ck_assert_msg(strstr(cls_last_error_detail(), bad[i][0]), "detail: %s",
                  cls_last_error_detail());
    ck_assert_ptr_null(ctx);
    if (old)
      setenv(bad[i][0], old, 1);
    else
      unsetenv(bad[i][0]);
    free(old);
  }
}
END_TEST

/* Four launches after a sync; the third fails when it completes.  Ranged:
 * the failure lies somewhere among them, every output takes it, and the
 * report names the range, its kernels and how to pin it. */
START_TEST(F8a_a_completion_failure_taints_every_write_of_its_range) {
  cls_context *ctx = open_ctx("complete:kernel=copy_k", 0, 0);
  bool ranged = ranged_or_exact_explained(ctx);
  cls_buffer a, b[4];
  four_launches(ctx, &a, b);

  ct_expect_ints(ctx, 0, a, N, 5); /* before the range: untouched */
  struct cls_failure_info f;
  cls_report *r = failure_of(ctx, 0, b[2], &f);
  ck_assert_int_eq(f.status, CLS_ELAUNCH);
  ck_assert_int_eq(f.async, 1);
  if (!ranged) {
    ck_assert_str_eq(f.kernel, "copy_k");
    cls_report_free(r);
    for (int i = 0; i < 4; i++)
      if (i != 2)
        ct_expect_ints(ctx, 0, b[i], N, i + 1);
    cls_context_destroy(ctx);
    return;
  }
  ck_assert_msg(strstr(f.message, "one of 4 launches") && strstr(f.message, "stream 0") &&
                    strstr(f.message, "fill_k x3") && strstr(f.message, "copy_k x1") &&
                    strstr(f.message, "CLS_PRECISE=1"),
                "the range's record: %s", f.message);
  /* Every output of the range carries that one record. */
  cls_report *all = NULL;
  CT_ERR(cls_check(ctx, 4, b, &all), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(all), 1);
  cls_report_free(all);
  cls_report_free(r);
  cls_context_destroy(ctx);
}
END_TEST

/* A ranged record keeps its fix (issue 30 item 8): with kernels named with
 * 60 characters, "rerun with CLS_PRECISE=1 to pin it" survives in the
 * record, the read's detail, the report's text and the log line. */
#define LONG_FILL "fill_every_element_of_the_output_buffer_with_one_value_k_012"
#define LONG_COPY "copy_every_element_of_the_input_buffer_to_the_output_k_01234"
#define PIN_TEXT "rerun with CLS_PRECISE=1 to pin it"
static char last_line[4096];
static void keep_last(void *user, int level, const char *message) {
  (void)user;
  if (level == CLS_LOG_ERRORS)
    snprintf(last_line, sizeof last_line, "%s", message);
}

START_TEST(F8a_a_ranged_record_keeps_its_fix_with_long_kernel_names) {
  ck_assert_uint_eq(strlen(LONG_FILL), 60);
  ck_assert_uint_eq(strlen(LONG_COPY), 60);
  static const char *const src =
      "kernel void " LONG_FILL "(global int *out, int v) { out[get_global_id(0)] = v; }\n"
      "kernel void " LONG_COPY "(global const int *a, global int *b) {\n"
      "  b[get_global_id(0)] = a[get_global_id(0)];\n"
      "}\n";
  cls_context *ctx = open_ctx("complete:kernel=" LONG_COPY, 0, 0);
  bool ranged = ranged_or_exact_explained(ctx);
  CT_OK(cls_set_logger(ctx, CLS_LOG_ERRORS, keep_last, NULL));
  cls_kernel *fill = ct_kernel(ctx, src, LONG_FILL), *copy = ct_kernel(ctx, src, LONG_COPY);
  cls_buffer a = ct_written(ctx, 0, N, 5), b[4];
  for (int i = 0; i < 4; i++)
    b[i] = ct_alloc(ctx, 0, N * sizeof(int));
  CT_OK(cls_sync(ctx, NULL));
  launch_fill(ctx, fill, 0, b[0], 1);
  launch_fill(ctx, fill, 0, b[1], 2);
  launch_copy(ctx, copy, 0, a, b[2]);
  launch_fill(ctx, fill, 0, b[3], 4);
  cls_sync(ctx, NULL);
  int got[N];
  CT_ERR(cls_download(ctx, 0, b[2], 0, got, sizeof got, NULL), CLS_ETAINTED);
  char d[4096];
  snprintf(d, sizeof d, "%s", cls_last_error_detail());
  struct cls_failure_info f;
  cls_report *r = failure_of(ctx, 0, b[2], &f);
  if (ranged) {
    ck_assert_msg(strstr(f.message, PIN_TEXT), "the record (%zu bytes) lost its fix: %s",
                  strlen(f.message), f.message);
    ck_assert_msg(strstr(d, PIN_TEXT), "the detail lost its fix: %s", d);
    ck_assert_msg(strstr(cls_report_text(r), PIN_TEXT), "the report lost its fix: %s",
                  cls_report_text(r));
    ck_assert_msg(strstr(last_line, PIN_TEXT), "the log line lost its fix: %s", last_line);
  } else {
    ck_assert_str_eq(f.kernel, LONG_COPY);
  }
  cls_report_free(r);
  cls_context_destroy(ctx);
}
END_TEST

/* The same program with precise=1: the failure is pinned on copy_k, the
 * other launches keep their bytes. */
START_TEST(F8a_exact_on_request_pins_the_command) {
  cls_context *ctx = open_ctx("complete:kernel=copy_k", 1, 0);
  ck_assert_int_eq(mode_of(ctx, NULL), CLS_ATTRIBUTION_EXACT);
  cls_buffer a, b[4];
  four_launches(ctx, &a, b);
  struct cls_failure_info f;
  cls_report *r = failure_of(ctx, 0, b[2], &f);
  ck_assert_str_eq(f.kernel, "copy_k");
  ck_assert_ptr_null(strstr(f.message, "one of"));
  cls_report_free(r);
  ct_expect_ints(ctx, 0, b[0], N, 1);
  ct_expect_ints(ctx, 0, b[1], N, 2);
  ct_expect_ints(ctx, 0, b[3], N, 4);
  cls_context_destroy(ctx);
}
END_TEST

/* F4 under ranges: bytes a partial write does not cover may come from a
 * command of the failed range, so the failure stays; a full write clears
 * it. */
START_TEST(F8a_a_partial_write_keeps_a_ranged_failure_and_a_full_one_clears) {
  cls_context *ctx = open_ctx("complete:kernel=copy_k", 0, 0);
  bool ranged = ranged_or_exact_explained(ctx);
  cls_buffer a, b[4];
  four_launches(ctx, &a, b);
  cls_buffer victim = ranged ? b[0] : b[2]; /* exact: only copy_k's output failed */
  int half[N / 2];
  for (int i = 0; i < N / 2; i++)
    half[i] = 70 + i;
  CT_OK(cls_upload(ctx, 0, victim, 0, half, sizeof half));
  const int pat = 9;
  CT_OK(cls_fill(ctx, 0, victim, sizeof half, sizeof half, &pat, sizeof pat));
  struct cls_failure_info f;
  if (ranged) {
    /* Two partial writes covering it all are still partial writes. */
    cls_report *r = failure_of(ctx, 0, victim, &f); /* f's strings are r's */
    ck_assert_msg(strstr(f.message, "one of"), "still the range's: %s", f.message);
    cls_report_free(r);
  } else { /* F4 as ever */
    int got[N];
    ct_download_ints(ctx, 0, victim, got, N);
    CT_EXPECT_INTS(got, (size_t)N, i, i < N / 2 ? 70 + (int)i : 9);
  }
  int whole[N];
  for (int i = 0; i < N; i++)
    whole[i] = 100 + i;
  ct_upload_ints(ctx, 0, victim, whole, N);
  int back[N];
  ct_download_ints(ctx, 0, victim, back, N);
  CT_EXPECT_INTS(back, (size_t)N, i, 100 + (int)i);
  cls_context_destroy(ctx);
}
END_TEST

/* F8 carries a range's failure on: a launch on another stream that read
 * one of its outputs before the failure was known ran on untrusted input;
 * one that reads it after is skipped.  Both are on the range's chain. */
START_TEST(F8a_readers_on_another_stream_take_the_range_failure) {
  cls_context *ctx = open_ctx("complete:kernel=copy_k", 0, 0);
  bool ranged = ranged_or_exact_explained(ctx);
  cls_kernel *fill = ct_kernel(ctx, SRC, "fill_k"), *copy = ct_kernel(ctx, SRC, "copy_k");
  cls_buffer a = ct_written(ctx, 0, N, 5), b = ct_alloc(ctx, 0, N * sizeof(int)),
             c = ct_alloc(ctx, 0, N * sizeof(int)), d = ct_alloc(ctx, 1, N * sizeof(int)),
             e = ct_alloc(ctx, 1, N * sizeof(int));
  CT_OK(cls_sync(ctx, NULL));
  launch_fill(ctx, fill, 0, b, 1);
  launch_copy(ctx, copy, 0, a, c);
  cls_buffer read = ranged ? b : c;
  size_t g[1] = {N};
  /* Waits for stream 0's work; ordering may poll stream 0 and find the
   * failure first (then it is a skip: both are on the chain). */
  int rc = cls_launch(ctx, 1, copy, 1, g, NULL, 2, (cls_arg[]){CLS_IN(read), CLS_OUT(d)});
  ck_assert_msg(rc == CLS_OK || rc == CLS_ESKIPPED, "reader: %s", cls_err_name(rc));
  cls_sync(ctx, NULL);
  CT_ERR(cls_launch(ctx, 1, copy, 1, g, NULL, 2, (cls_arg[]){CLS_IN(read), CLS_OUT(e)}),
         CLS_ESKIPPED);
  struct cls_failure_info fd, fe;
  cls_report *rd = failure_of(ctx, 1, d, &fd), *re = failure_of(ctx, 1, e, &fe);
  ck_assert_str_eq(fd.message, fe.message);
  ck_assert_uint_ge(fd.skipped, 1);
  if (ranged)
    ck_assert_msg(strstr(fd.message, "one of 2 launches"), "record: %s", fd.message);
  cls_report_free(rd);
  cls_report_free(re);
  cls_context_destroy(ctx);
}
END_TEST

/* A download that was itself part of a failed range fails, tainted or
 * not: its bytes may never have been copied. */
START_TEST(F8a_a_download_inside_a_failed_range_fails) {
  cls_context *ctx = open_ctx("complete:op=download,nth=2", 0, 0);
  bool ranged = ranged_or_exact_explained(ctx);
  cls_kernel *fill = ct_kernel(ctx, SRC, "fill_k");
  cls_buffer b = ct_alloc(ctx, 0, N * sizeof(int));
  launch_fill(ctx, fill, 0, b, 3);
  ct_expect_ints(ctx, 0, b, N, 3); /* the first download */
  launch_fill(ctx, fill, 0, b, 4);
  int got[N];
  cls_report *r = NULL;
  int rc = cls_download(ctx, 0, b, 0, got, sizeof got, &r);
  cls_report_free(r);
  ck_assert_msg(rc == CLS_ECL || rc == CLS_ETAINTED, "download in a failed %s: %s",
                ranged ? "range" : "command", cls_err_name(rc));
  cls_context_destroy(ctx);
}
END_TEST

static uint64_t events_of(cls_context *ctx, int stream) {
  uint64_t n = 0;
  CT_OK(cls_stream_events(ctx, stream, &n));
  return n;
}

/* A chain of `launches` increments on stream 0 after a sync, then a sync:
 * the events stream 0 asked for meanwhile (the bytes checked). */
static uint64_t chain_events(cls_context *ctx, int launches) {
  cls_kernel *inc = ct_kernel(ctx, SRC, "inc_k");
  cls_buffer x = ct_written(ctx, 0, N, 0);
  CT_OK(cls_sync(ctx, NULL));
  uint64_t before = events_of(ctx, 0);
  for (int i = 0; i < launches; i++)
    ct_launch1(ctx, 0, inc, N, 1, (cls_arg[]){CLS_INOUT(x)});
  CT_OK(cls_sync(ctx, NULL));
  uint64_t events = events_of(ctx, 0) - before;
  ct_expect_ints(ctx, 0, x, N, launches);
  return events;
}

/* The point of ranged attribution: a chain of launches on one stream asks
 * for at most one event in 32 (the default is one in 64); exact asks for
 * one per command. */
START_TEST(F8a_a_chain_asks_for_few_events) {
  enum { LAUNCHES = 1024 };
  for (int precise = -1; precise <= 1; precise += 2) {
    cls_context *ctx = open_ctx(NULL, precise, 0);
    bool ranged = mode_of(ctx, NULL) == CLS_ATTRIBUTION_RANGED;
    uint64_t events = chain_events(ctx, LAUNCHES);
    if (ranged)
      ck_assert_msg(events * 32 <= LAUNCHES, "%llu events for %d launches",
                    (unsigned long long)events, LAUNCHES);
    else
      ck_assert_msg(events >= LAUNCHES, "exact: %llu events for %d launches",
                    (unsigned long long)events, LAUNCHES);
    CT_ERR(cls_stream_events(ctx, 0, NULL), CLS_EINVAL);
    CT_ERR(cls_stream_events(ctx, CLS_MAX_STREAMS, &events), CLS_ESTREAM);
    cls_context_destroy(ctx);
  }
}
END_TEST

/* event_every bounds the commands run without an event. */
START_TEST(F8a_event_every_bounds_the_commands_without_an_event) {
  enum { LAUNCHES = 800, EVERY = 8 };
  cls_context *ctx = open_ctx(NULL, 0, EVERY);
  unsigned every = 0;
  int mode = -1;
  CT_OK(cls_context_attribution(ctx, &mode, NULL, &every));
  ck_assert_uint_eq(every, EVERY);
  uint64_t events = chain_events(ctx, LAUNCHES);
  if (mode == CLS_ATTRIBUTION_RANGED)
    ck_assert_msg(events >= LAUNCHES / EVERY && events <= LAUNCHES / EVERY + 4,
                  "%llu events for %d launches, one in %d expected",
                  (unsigned long long)events, LAUNCHES, EVERY);
  cls_context_destroy(ctx);
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("ranged");
  CT_ADD(s, F8a_ranged_is_the_default_where_the_queue_is_poisoned);
  CT_ADD(s, F8a_malformed_settings_are_refused);
  CT_ADD(s, F8a_a_completion_failure_taints_every_write_of_its_range);
  CT_ADD(s, F8a_a_ranged_record_keeps_its_fix_with_long_kernel_names);
  CT_ADD(s, F8a_exact_on_request_pins_the_command);
  CT_ADD(s, F8a_a_partial_write_keeps_a_ranged_failure_and_a_full_one_clears);
  CT_ADD(s, F8a_readers_on_another_stream_take_the_range_failure);
  CT_ADD(s, F8a_a_download_inside_a_failed_range_fails);
  CT_ADD(s, F8a_a_chain_asks_for_few_events);
  CT_ADD(s, F8a_event_every_bounds_the_commands_without_an_event);
  return ct_run(s);
}
