/* Misuse, function by function: every public function of <clstream.h> and
 * <clstream/stream.h> given NULL, stale or foreign handles, zero sizes,
 * SIZE_MAX, out-of-range indices, wrong argument counts and kinds, and
 * malformed CLS_DEVICE / CLS_SCHEDULER / CLS_FAULT / CLS_LOG strings (from
 * the options and from the environment).  Each call returns its documented
 * code, nothing crashes, and a correct operation on the same context
 * succeeds afterwards.  (tests/test-misuse-by-kind.c covers every buffer operation
 * with each kind of bad handle.) */
#include "common.h"

#include <clstream/stream.h>

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

static cls_context *ctx;
static cls_program *prog;
static cls_kernel *fill_k, *copy_k, *rev_k;

static void setup(void) {
  ctx = ct_context();
  prog = ct_build(ctx, CT_ALL_SRC, NULL);
  fill_k = ct_get_kernel(ctx, prog, "fill_k");
  copy_k = ct_get_kernel(ctx, prog, "copy_k");
  rev_k = ct_get_kernel(ctx, prog, "rev_k");
}

static void teardown(void) {
  cls_context_destroy(ctx);
  ctx = NULL;
}

static void assert_context_works(void) { ct_assert_context_works(ctx, fill_k, 1); }

/* ------------------------------------------------------------------ */
/* Errors and versions                                                 */
/* ------------------------------------------------------------------ */

START_TEST(error_strings_exist_for_every_int) {
  const int extremes[] = {INT_MIN, INT_MIN + 1, -100000, -1000, 1, 2, 100, INT_MAX};
  for (int e = -200; e <= 200; e++) {
    ck_assert_ptr_nonnull(cls_strerror(e));
    ck_assert_ptr_nonnull(cls_err_name(e));
    ck_assert_ptr_nonnull(cls_cl_status_name(e));
  }
  for (size_t i = 0; i < sizeof extremes / sizeof *extremes; i++) {
    ck_assert_ptr_nonnull(cls_strerror(extremes[i]));
    ck_assert_str_eq(cls_err_name(extremes[i]), extremes[i] ? "UNKNOWN" : "CLS_OK");
    ck_assert_ptr_nonnull(cls_cl_status_name(extremes[i]));
  }
  /* Every code has its own name. */
  for (int a = CLS__ERR_LAST + 1; a < 0; a++)
    for (int b = a + 1; b < 0; b++)
      ck_assert_str_ne(cls_err_name(a), cls_err_name(b));
  ck_assert_ptr_nonnull(cls_version_string());
  ck_assert_ptr_nonnull(cls_last_error_detail());
  ck_assert_ptr_nonnull(cls_default_driver());
  assert_context_works();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Devices                                                             */
/* ------------------------------------------------------------------ */

START_TEST(device_calls_reject_bad_arguments) {
  size_t n = 0;
  struct cls_device_info info[2];
  CT_OK(cls_device_list(NULL, 0, &n));
  ck_assert_uint_ge(n, 1);
  CT_ERR(cls_device_list(NULL, 1, &n), CLS_EINVAL);
  CT_ERR(cls_device_list(info, 2, NULL), CLS_EINVAL);
  CT_OK(cls_device_list(info, 0, &n)); /* cap 0: only the count */
  CT_OK(cls_device_select(NULL, info));
  CT_OK(cls_device_select("", info));
  CT_ERR(cls_device_select("", NULL), CLS_EINVAL);
  const struct {
    const char *spec;
    int want;
  } bad[] = {
      {"-1:0", CLS_ECONFIG},       {"0:-1", CLS_ECONFIG},      {"-5:-5", CLS_ECONFIG},
      {"99:0", CLS_ENODEV},        {"0:99", CLS_ENODEV},       {"2147483647:0", CLS_ENODEV},
      {"no-such-device-xyz", CLS_ENODEV}, {":", CLS_ECONFIG},  {"1:", CLS_ECONFIG},
      {"0:0:0", CLS_ECONFIG},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int rc = cls_device_select(bad[i].spec, info);
    ck_assert_msg(rc == bad[i].want, "cls_device_select('%s'): %s, expected %s", bad[i].spec,
                  cls_err_name(rc), cls_err_name(bad[i].want));
    if (rc == CLS_ENODEV) /* the detail lists what exists */
      ck_assert_msg(cls_last_error_detail()[0] != '\0', "no detail for '%s'", bad[i].spec);
  }
  assert_context_works();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Context creation: options and configuration strings                 */
/* ------------------------------------------------------------------ */

static void assert_create_fails(const struct cls_context_options *o, int want, int want2,
                                const char *what) {
  cls_context *c = (cls_context *)&c;
  int rc = cls_context_create(&c, o);
  ck_assert_msg(rc == want || (want2 && rc == want2), "%s: expected %s, got %s (%d): %s", what,
                cls_err_name(want), cls_err_name(rc), rc, cls_last_error_detail());
  ck_assert_msg(c == NULL, "%s: *out not NULL after a failed create", what);
}

static bool has_driver(const char *name) {
  for (size_t i = 0; i < cls_driver_count(); i++) {
    const char *n = NULL;
    CT_OK(cls_driver_info(i, &n, NULL));
    if (strcmp(n, name) == 0)
      return true;
  }
  return false;
}

START_TEST(context_options_are_checked) {
  CT_ERR(cls_context_create(NULL, NULL), CLS_EINVAL);
  struct cls_context_options o = {.version = 0};
  assert_create_fails(&o, CLS_EVERSION, 0, "options version 0");
  o.version = CLS_CONTEXT_OPTIONS_VERSION + 1;
  assert_create_fails(&o, CLS_EVERSION, 0, "options version 2");
  /* A stream factory without its required members, or of version 0. */
  struct cls_stream_factory f = *cls_opencl_stream_factory();
  f.poll = NULL;
  o = (struct cls_context_options){.version = CLS_CONTEXT_OPTIONS_VERSION, .factory = &f};
  assert_create_fails(&o, CLS_EVERSION, 0, "factory without poll");
  f = *cls_opencl_stream_factory();
  f.version = 0;
  assert_create_fails(&o, CLS_EVERSION, 0, "factory version 0");
  assert_context_works();
}
END_TEST

START_TEST(malformed_scheduler_strings_are_rejected) {
  char longp[400];
  memset(longp, 'x', sizeof longp - 1);
  longp[sizeof longp - 1] = '\0';
  memcpy(longp, "scheduler:", 10);
  bool sched = has_driver("scheduler");
  const struct {
    const char *spec;
    int want; /* when the scheduler driver is built */
  } bad[] = {
      {"nope", CLS_EDRIVER},
      {"EVENT", CLS_EDRIVER},
      {"event:x=1", CLS_ECONFIG},
      {"scheduler:bogus", CLS_ECONFIG},
      {"scheduler:max_tasks=0", CLS_ECONFIG},
      {"scheduler:max_tasks=-1", CLS_ECONFIG},
      {"scheduler:max_tasks=", CLS_ECONFIG},
      {"scheduler:max_tasks=abc", CLS_ECONFIG},
      {"scheduler:max_tasks=99999999999999999999999", CLS_ECONFIG},
      {"scheduler:queues=0", CLS_ECONFIG},
      {"scheduler:queues=65", CLS_ECONFIG},
      {"scheduler:max_tasks=8,interleave", CLS_ECONFIG},
      {"scheduler:sequential,frobs=2", CLS_ECONFIG},
      {longp, CLS_ECONFIG},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    bool needs_sched = strncmp(bad[i].spec, "scheduler", 9) == 0;
    int want = needs_sched && !sched ? CLS_EDRIVER : bad[i].want;
    struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                    .scheduler = bad[i].spec};
    assert_create_fails(&o, want, 0, bad[i].spec);
    ck_assert_int_eq(setenv("CLS_SCHEDULER", bad[i].spec, 1), 0);
    assert_create_fails(NULL, want, 0, bad[i].spec);
    unsetenv("CLS_SCHEDULER");
  }
  assert_context_works();
}
END_TEST

START_TEST(malformed_fault_specs_are_econfig) {
  const char *bad[] = {
      "enqueue",          "enqueue:",          "bogus:nth=1",       "enqueue:nth=0",
      "enqueue:nth=x",    "enqueue:nth=-1",    "enqueue:stream=64", "enqueue:stream=-1",
      "enqueue:status=1", "enqueue:status=0",  "enqueue:status=CL_NOPE",
      "enqueue:status=-10001", "alloc:kernel=k", "alloc:op=launch", "enqueue:op=nope",
      "enqueue:=1",       "enqueue:kernel=",   "enqueue:times=0",  "enqueue:frob=1",
      "enqueue:nth=99999999999999999999999", "enqueue:nth=1;bogus", "complete:nth",
      ":nth=1",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .fault = bad[i]};
    assert_create_fails(&o, CLS_ECONFIG, 0, bad[i]);
    ck_assert_int_eq(setenv("CLS_FAULT", bad[i], 1), 0);
    assert_create_fails(NULL, CLS_ECONFIG, 0, bad[i]);
    unsetenv("CLS_FAULT");
  }
  /* An empty spec means no faults; empty faults are malformed. */
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .fault = ""};
  cls_context_destroy(ct_context_opts(&o));
  const char *empty[] = {";", " ; ;", ";;"};
  for (size_t i = 0; i < sizeof empty / sizeof *empty; i++) {
    o.fault = empty[i];
    assert_create_fails(&o, CLS_ECONFIG, 0, empty[i]);
  }
  assert_context_works();
}
END_TEST

START_TEST(malformed_log_levels_are_econfig) {
  const char *old = getenv("CLS_LOG");
  char saved[64] = "";
  if (old)
    snprintf(saved, sizeof saved, "%s", old);
  const char *bad[] = {"loud", "ERRORS", "full ", " off", "4", "-1", "errors,streams"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ck_assert_int_eq(setenv("CLS_LOG", bad[i], 1), 0);
    assert_create_fails(NULL, CLS_ECONFIG, 0, bad[i]);
  }
  if (old)
    setenv("CLS_LOG", saved, 1);
  else
    unsetenv("CLS_LOG");
  assert_context_works();
}
END_TEST

START_TEST(malformed_device_strings_fail_creation) {
  const struct {
    const char *spec;
    int want;
  } bad[] = {{"-1:0", CLS_ECONFIG}, {"0:-7", CLS_ECONFIG}, {"99:0", CLS_ENODEV},
             {"0:99", CLS_ENODEV},  {"no-such-device-xyz", CLS_ENODEV}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                    .device = bad[i].spec};
    assert_create_fails(&o, bad[i].want, 0, bad[i].spec);
    ck_assert_int_eq(setenv("CLS_DEVICE", bad[i].spec, 1), 0);
    assert_create_fails(NULL, bad[i].want, 0, bad[i].spec);
    unsetenv("CLS_DEVICE");
  }
  assert_context_works();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Streams, stats, drivers, logger                                     */
/* ------------------------------------------------------------------ */

START_TEST(stream_and_driver_calls_check_their_arguments) {
  struct cls_stream_stats st;
  memset(&st, 0xff, sizeof st);
  CT_OK(cls_stream_stats(ctx, CLS_MAX_STREAMS - 1, &st)); /* never used: zeros */
  ck_assert_uint_eq(st.enqueues, 0);
  CT_ERR(cls_stream_stats(ctx, INT_MIN, &st), CLS_ESTREAM);
  CT_ERR(cls_stream_stats(ctx, INT_MAX, &st), CLS_ESTREAM);
  CT_OK(cls_stream_sync(ctx, CLS_MAX_STREAMS - 1, NULL)); /* never used */
  CT_ERR(cls_stream_sync(ctx, INT_MIN, NULL), CLS_ESTREAM);
  CT_OK(cls_stats_reset(ctx));
  const char *name = NULL, *desc = NULL;
  CT_ERR(cls_driver_info(cls_driver_count(), &name, &desc), CLS_ERANGE);
  CT_ERR(cls_driver_info((size_t)-1, &name, &desc), CLS_ERANGE);
  CT_OK(cls_driver_info(0, NULL, NULL));
  ck_assert_str_eq(cls_context_driver(NULL), "");
  ck_assert_str_ne(cls_context_driver(ctx), "");
  CT_ERR(cls_set_logger(ctx, INT_MIN, NULL, NULL), CLS_EINVAL);
  CT_ERR(cls_set_logger(ctx, INT_MAX, NULL, NULL), CLS_EINVAL);
  CT_OK(cls_set_logger(ctx, CLS_LOG_OFF, NULL, NULL));
  assert_context_works();
}
END_TEST

/* The calls of devices, placement and relocation (docs/devices.md). */
START_TEST(placement_and_relocation_calls_check_their_arguments) {
  struct cls_device_info info[CLS_MAX_DEVICES];
  size_t n = 0;
  int dev = -1;
  uint64_t g = 7;
  CT_ERR(cls_context_devices(NULL, info, 1, &n), CLS_EINVAL);
  CT_ERR(cls_context_devices(ctx, info, 1, NULL), CLS_EINVAL);
  CT_ERR(cls_context_devices(ctx, NULL, 1, &n), CLS_EINVAL);
  CT_OK(cls_context_devices(ctx, NULL, 0, &n));
  ck_assert_uint_ge(n, 1);
  int last = (int)n - 1;
  CT_ERR(cls_stream_place(NULL, 0, 0), CLS_EINVAL);
  CT_ERR(cls_stream_place(ctx, INT_MIN, 0), CLS_ESTREAM);
  CT_ERR(cls_stream_place(ctx, CLS_MAX_STREAMS, 0), CLS_ESTREAM);
  CT_ERR(cls_stream_place(ctx, 5, INT_MIN), CLS_ERANGE);
  CT_ERR(cls_stream_place(ctx, 5, last + 1), CLS_ERANGE);
  CT_ERR(cls_stream_device(NULL, 0, &dev), CLS_EINVAL);
  CT_ERR(cls_stream_device(ctx, 0, NULL), CLS_EINVAL);
  CT_ERR(cls_stream_device(ctx, INT_MAX, &dev), CLS_ESTREAM);
  CT_ERR(cls_stream_generation(NULL, 0, &g), CLS_EINVAL);
  CT_ERR(cls_stream_generation(ctx, 0, NULL), CLS_EINVAL);
  CT_ERR(cls_stream_generation(ctx, -1, &g), CLS_ESTREAM);
  CT_OK(cls_stream_generation(ctx, CLS_MAX_STREAMS - 1, &g)); /* never used */
  ck_assert_uint_eq(g, 0);
  CT_ERR(cls_stream_relocate(NULL, 0, 0, 0), CLS_EINVAL);
  CT_ERR(cls_stream_relocate(ctx, INT_MIN, 0, 0), CLS_ESTREAM);
  CT_ERR(cls_stream_relocate(ctx, 1, -1, 0), CLS_ERANGE);
  CT_ERR(cls_stream_relocate(ctx, 1, last + 1, 0), CLS_ERANGE);
  CT_ERR(cls_stream_relocate(ctx, 1, 0, UINT64_MAX), CLS_EINVAL);
  CT_OK(cls_stream_relocate(ctx, 1, last, 0));
  CT_ERR(cls_stream_relocate(ctx, 1, 0, 0), CLS_ESTALEGEN);
  CT_ERR(cls_stream_place(ctx, 1, 0), CLS_EINVAL); /* relocated: placed already */
  CT_OK(cls_stream_generation(ctx, 1, &g));
  ck_assert_uint_eq(g, 1);
  /* Malformed placements, from the options and the environment. */
  const char *bad[] = {"Spread", "spread,first", " first", "none"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                    .placement = bad[i]};
    assert_create_fails(&o, CLS_ECONFIG, 0, bad[i]);
    ck_assert_int_eq(setenv("CLS_PLACEMENT", bad[i], 1), 0);
    assert_create_fails(NULL, CLS_ECONFIG, 0, bad[i]);
    unsetenv("CLS_PLACEMENT");
    o = (struct cls_context_options){.version = CLS_CONTEXT_OPTIONS_VERSION, .relocate = bad[i]};
    assert_create_fails(&o, CLS_ECONFIG, 0, bad[i]);
    ck_assert_int_eq(setenv("CLS_RELOCATE", bad[i], 1), 0);
    assert_create_fails(NULL, CLS_ECONFIG, 0, bad[i]);
    unsetenv("CLS_RELOCATE");
  }
  assert_context_works();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Buffers: zero sizes, SIZE_MAX, patterns, overlap                    */
/* ------------------------------------------------------------------ */

START_TEST(zero_sizes_and_size_max_are_rejected) {
  cls_buffer b = ct_written(ctx, 0, 16, 3), c = ct_written(ctx, 1, 16, 4), x = CLS_BUFFER_NULL;
  int host[16] = {0};
  const int pat = 9;
  CT_ERR(cls_alloc(ctx, 0, 0, &x), CLS_EINVAL);
  ck_assert(x.bits == 0);
  CT_ERR(cls_alloc(ctx, 0, SIZE_MAX, &x), CLS_ETOOBIG);
  CT_ERR(cls_alloc(ctx, 0, SIZE_MAX - 63, &x), CLS_ETOOBIG);
  ck_assert(x.bits == 0);
  CT_ERR(cls_upload(ctx, 0, b, 0, host, 0), CLS_EINVAL);
  CT_ERR(cls_upload_async(ctx, 0, b, 0, host, 0), CLS_EINVAL);
  CT_ERR(cls_download(ctx, 0, b, 0, host, 0, NULL), CLS_EINVAL);
  CT_ERR(cls_download_async(ctx, 0, b, 0, host, 0), CLS_EINVAL);
  CT_ERR(cls_copy(ctx, 0, b, 0, c, 0, 0), CLS_EINVAL);
  CT_ERR(cls_fill(ctx, 0, b, 0, 0, &pat, sizeof pat), CLS_EINVAL);
  CT_ERR(cls_upload(ctx, 0, b, SIZE_MAX, host, SIZE_MAX), CLS_ERANGE);
  CT_ERR(cls_download(ctx, 0, b, 1, host, SIZE_MAX, NULL), CLS_ERANGE);
  CT_ERR(cls_download_async(ctx, 0, b, SIZE_MAX, host, 1), CLS_ERANGE);
  CT_ERR(cls_upload_async(ctx, 0, b, 64, host, 1), CLS_ERANGE);
  CT_ERR(cls_copy(ctx, 0, b, SIZE_MAX, c, 0, 4), CLS_ERANGE);
  CT_ERR(cls_copy(ctx, 0, b, 0, c, 4, 64), CLS_ERANGE);
  /* Overlapping ranges of one buffer; adjacent ones are fine. */
  CT_ERR(cls_copy(ctx, 0, b, 0, b, 4, 8), CLS_EINVAL);
  CT_ERR(cls_copy(ctx, 0, b, 8, b, 4, 8), CLS_EINVAL);
  CT_ERR(cls_copy(ctx, 0, b, 0, b, 0, 4), CLS_EINVAL);
  /* F12: every refused write left its record (the last one's). */
  ct_expect_refused(ctx, 0, b, CLS_EINVAL, "copy", "");
  ct_expect_refused(ctx, 0, c, CLS_ERANGE, "copy", "");
  assert_context_works();
}
END_TEST

START_TEST(bad_fill_patterns_are_einval) {
  cls_buffer b = ct_written(ctx, 0, 16, 5);
  unsigned char pat[256] = {0};
  const size_t sizes[] = {0, 3, 5, 6, 7, 12, 256, SIZE_MAX};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    CT_ERR(cls_fill(ctx, 0, b, 0, 64, pat, sizes[i]), CLS_EINVAL);
  CT_ERR(cls_fill(ctx, 0, b, 2, 8, pat, 4), CLS_EINVAL);  /* offset not a multiple */
  CT_ERR(cls_fill(ctx, 0, b, 0, 6, pat, 4), CLS_EINVAL);  /* size not a multiple */
  CT_ERR(cls_fill(ctx, 0, b, 8, 64, pat, 8), CLS_ERANGE); /* past the end */
  CT_ERR(cls_fill(ctx, 0, b, 0, 64, NULL, 4), CLS_EINVAL);
  ct_expect_refused(ctx, 0, b, CLS_EINVAL, "fill", "");
  /* The largest pattern works. */
  int big[32];
  for (int i = 0; i < 32; i++)
    big[i] = 100 + (i % 16);
  CT_OK(cls_fill(ctx, 0, b, 0, 64, big, 64));
  int got[16];
  ct_download_ints(ctx, 0, b, got, 16);
  CT_EXPECT_INTS(got, (size_t)16, i, 100 + (int)i);
  assert_context_works();
}
END_TEST

START_TEST(check_takes_any_mix_of_handles) {
  cls_buffer good = ct_written(ctx, 0, 16, 1), stale = ct_written(ctx, 0, 16, 2);
  CT_OK(cls_free(ctx, stale));
  cls_report *r = (cls_report *)&r;
  CT_OK(cls_check(ctx, 0, NULL, &r)); /* nothing to check */
  ck_assert_ptr_null(r);
  CT_OK(cls_check(ctx, 1, &good, NULL));
  cls_buffer mix[] = {good, stale, CLS_BUFFER_NULL, {~0ull}, good};
  CT_ERR(cls_check(ctx, 5, mix, NULL), CLS_ETAINTED);
  CT_ERR(cls_check(ctx, 5, mix, &r), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(r), 0);
  ck_assert_uint_eq(cls_report_bad_handles(r), 3);
  int why[3];
  for (size_t i = 0; i < 3; i++)
    CT_OK(cls_report_bad_handle(r, i, NULL, &why[i]));
  ck_assert_int_eq(why[0], CLS_ESTALE);
  ck_assert_int_eq(why[1], CLS_ENULL);
  ck_assert(why[2] == CLS_EFOREIGN || why[2] == CLS_ESTALE);
  cls_report_free(r);
  assert_context_works();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Launches: counts, kinds, sizes, work sizes                          */
/* ------------------------------------------------------------------ */

START_TEST(launch_mistakes_get_their_codes_and_leave_a_record) {
  cls_buffer a = ct_written(ctx, 0, 16, 11), b = ct_written(ctx, 0, 16, 12);
  int v = 5;
  long long wide = 5;
  char narrow = 5;
  size_t g[3] = {16, 1, 1}, l[3] = {16, 1, 1}, l3[1] = {3}, zero[1] = {0}, huge[1] = {1u << 30};
  cls_arg ok[] = {CLS_OUT(b), CLS_SCALAR(v)};
  /* counts */
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 1, ok), CLS_EARGCOUNT);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 3, (cls_arg[]){CLS_OUT(b), CLS_SCALAR(v), CLS_SCALAR(v)}),
         CLS_EARGCOUNT);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 0, NULL), CLS_EARGCOUNT);
  cls_arg many[CLS_MAX_ARGS + 1];
  for (int i = 0; i <= CLS_MAX_ARGS; i++)
    many[i] = CLS_SCALAR(v);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, CLS_MAX_ARGS + 1, many), CLS_EARGCOUNT);
  /* kinds */
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, (cls_arg[]){CLS_SCALAR(v), CLS_SCALAR(v)}),
         CLS_EARGKIND);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(b), CLS_OUT(a)}),
         CLS_EARGKIND);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, (cls_arg[]){CLS_LOCAL(64), CLS_SCALAR(v)}),
         CLS_EARGKIND);
  CT_ERR(cls_launch(ctx, 0, rev_k, 1, g, l, 3, (cls_arg[]){CLS_IN(a), CLS_OUT(b), CLS_SCALAR(v)}),
         CLS_EARGKIND);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(b), CLS_SCALAR(wide)}),
         CLS_EARGKIND);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(b), CLS_SCALAR(narrow)}),
         CLS_EARGKIND);
  /* malformed arguments */
  cls_arg k0 = {.kind = 0}, k9 = {.kind = 99};
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(b), k0}), CLS_EINVAL);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, (cls_arg[]){k9, CLS_SCALAR(v)}), CLS_EINVAL);
  cls_arg acc0 = CLS_OUT(b), acc5 = CLS_OUT(b);
  acc0.access = 0;
  acc5.access = CLS_ACCESS_INFER + 1;
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, (cls_arg[]){acc0, CLS_SCALAR(v)}), CLS_EINVAL);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, (cls_arg[]){acc5, CLS_SCALAR(v)}), CLS_EINVAL);
  cls_arg nullval = {.kind = CLS_ARG_SCALAR, .value = NULL, .size = 4};
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(b), nullval}), CLS_EINVAL);
  cls_arg size0 = CLS_SCALAR(v);
  size0.size = 0;
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(b), size0}), CLS_EINVAL);
  CT_ERR(cls_launch(ctx, 0, rev_k, 1, g, l, 3, (cls_arg[]){CLS_IN(a), CLS_OUT(b), CLS_LOCAL(0)}),
         CLS_EINVAL);
  /* work sizes */
  CT_ERR(cls_launch(ctx, 0, fill_k, 0, g, NULL, 2, ok), CLS_EWORKSIZE);
  CT_ERR(cls_launch(ctx, 0, fill_k, 4, g, NULL, 2, ok), CLS_EWORKSIZE);
  CT_ERR(cls_launch(ctx, 0, fill_k, UINT_MAX, g, NULL, 2, ok), CLS_EWORKSIZE);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, zero, NULL, 2, ok), CLS_EWORKSIZE);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, l3, 2, ok), CLS_EWORKSIZE);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, zero, 2, ok), CLS_EWORKSIZE);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, huge, huge, 2, ok), CLS_EWORKSIZE);
  /* kernels that are not this context's */
  cls_context *other = ct_context();
  cls_kernel *theirs = ct_kernel(other, CT_FILL_SRC, "fill_k");
  CT_ERR(cls_launch(ctx, 0, theirs, 1, g, NULL, 2, ok), CLS_EINVAL);
  struct {
    unsigned magic;
    char pad[256];
  } fake = {0};
  CT_ERR(cls_launch(ctx, 0, (cls_kernel *)&fake, 1, g, NULL, 2, ok), CLS_EINVAL);
  ck_assert_str_eq(cls_kernel_name((cls_kernel *)&fake), "");
  CT_ERR(cls_kernel_num_args((cls_kernel *)&fake), CLS_EINVAL);
  struct cls_kernel_info ki = {.version = CLS_KERNEL_INFO_VERSION};
  CT_ERR(cls_kernel_info((cls_kernel *)&fake, &ki), CLS_EINVAL);
  cls_context_destroy(other);
  /* Nothing ran; b carries the last refusal's record (F12), a was only
   * ever read, and the context works. */
  ct_expect_refused(ctx, 0, b, CLS_EINVAL, "launch", NULL);
  /* a was declared an output once, where fill_k takes a scalar. */
  ct_expect_refused(ctx, 0, a, CLS_EARGKIND, "launch", "fill_k");
  assert_context_works();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Programs and kernels                                                */
/* ------------------------------------------------------------------ */

START_TEST(program_and_kernel_misuse_is_rejected) {
  cls_program *p = (cls_program *)&p;
  cls_kernel *k = (cls_kernel *)&k;
  CT_ERR(cls_program_build(ctx, "", NULL, &p), CLS_EINVAL);
  ck_assert_ptr_null(p);
  /* A bad option: CLS_EBUILD, and a program that remembers it. */
  CT_ERR(cls_program_build(ctx, CT_FILL_SRC, "-no-such-option-xyz", &p), CLS_EBUILD);
  ck_assert_ptr_nonnull(p);
  ck_assert_msg(cls_last_error_detail()[0] != '\0', "no build log");
  CT_OK(cls_program_release(ctx, p));
  CT_ERR(cls_program_release(ctx, p), CLS_ESTALE); /* released twice */
  CT_ERR(cls_kernel_get(ctx, p, "fill_k", &k), CLS_ESTALE); /* a kernel of it after */
  ck_assert_ptr_null(k);
  /* Unknown kernel names. */
  CT_ERR(cls_kernel_get(ctx, prog, "no_such_kernel", &k), CLS_ENOKERNEL);
  ck_assert_ptr_null(k);
  CT_ERR(cls_kernel_get(ctx, prog, "", &k), CLS_ENOKERNEL);
  /* Another context's program. */
  cls_context *other = ct_context();
  cls_program *theirs = ct_build(other, CT_FILL_SRC, NULL);
  CT_ERR(cls_kernel_get(ctx, theirs, "fill_k", &k), CLS_EFOREIGN);
  CT_ERR(cls_program_release(ctx, theirs), CLS_EFOREIGN);
  cls_context_destroy(other);
  ck_assert_str_eq(cls_kernel_name(NULL), "");
  CT_ERR(cls_kernel_num_args(NULL), CLS_EINVAL);
  ck_assert_int_eq(cls_kernel_num_args(fill_k), 2);
  struct cls_kernel_info ki = {.version = CLS_KERNEL_INFO_VERSION};
  CT_ERR(cls_kernel_info(NULL, &ki), CLS_EINVAL);
  CT_ERR(cls_kernel_info(fill_k, NULL), CLS_EINVAL);
  ki.version = CLS_KERNEL_INFO_VERSION + 1;
  CT_ERR(cls_kernel_info(fill_k, &ki), CLS_EVERSION);
  ki.version = CLS_KERNEL_INFO_VERSION;
  CT_OK(cls_kernel_info(fill_k, &ki));
  ck_assert_int_eq(ki.nargs, 2);
  assert_context_works();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Reports                                                             */
/* ------------------------------------------------------------------ */

START_TEST(report_accessors_check_their_arguments) {
  struct cls_failure_info fi;
  struct cls_skip_info si;
  cls_buffer h;
  int why;
  ck_assert_uint_eq(cls_report_failures(NULL), 0);
  ck_assert_uint_eq(cls_report_bad_handles(NULL), 0);
  CT_ERR(cls_report_failure(NULL, 0, &fi), CLS_EINVAL);
  CT_ERR(cls_report_skip(NULL, 0, 0, &si), CLS_EINVAL);
  CT_ERR(cls_report_bad_handle(NULL, 0, &h, &why), CLS_EINVAL);
  ck_assert_str_eq(cls_report_text(NULL), "");
  cls_report_free(NULL);
  /* A real report: one failure with one skip. */
  cls_buffer never = ct_alloc(ctx, 0, 64), out = ct_alloc(ctx, 0, 64);
  size_t g[1] = {16};
  CT_ERR(cls_launch(ctx, 0, copy_k, 1, g, NULL, 2, (cls_arg[]){CLS_IN(never), CLS_OUT(out)}),
         CLS_ESKIPPED);
  cls_report *r = NULL;
  CT_ERR(cls_check(ctx, 1, &out, &r), CLS_ETAINTED);
  CT_ERR(cls_report_failure(r, 0, NULL), CLS_EINVAL);
  CT_ERR(cls_report_failure(r, 1, &fi), CLS_ERANGE);
  CT_ERR(cls_report_failure(r, SIZE_MAX, &fi), CLS_ERANGE);
  CT_ERR(cls_report_skip(r, 0, 0, NULL), CLS_EINVAL);
  CT_ERR(cls_report_skip(r, 0, 1, &si), CLS_ERANGE);
  CT_ERR(cls_report_skip(r, 1, 0, &si), CLS_ERANGE);
  CT_ERR(cls_report_skip(r, SIZE_MAX, SIZE_MAX, &si), CLS_ERANGE);
  CT_ERR(cls_report_bad_handle(r, 0, &h, &why), CLS_ERANGE);
  CT_OK(cls_report_failure(r, 0, &fi));
  CT_OK(cls_report_skip(r, 0, 0, &si));
  ck_assert_str_eq(si.kernel, "copy_k");
  const char *t1 = cls_report_text(r), *t2 = cls_report_text(r);
  ck_assert_ptr_eq(t1, t2); /* rendered once, owned by the report */
  cls_report_free(r);
  assert_context_works();
}
END_TEST

/* A call with the pointer of a context just destroyed fails with
 * CLS_ESTALE instead of hanging on its lock (it hung forever).  Sound, not
 * a use-after-free: the library keeps the memory of the last 4 contexts
 * destroyed for this (include/clstream.h, cls_context_destroy). */
START_TEST(a_call_on_a_just_destroyed_context_is_estale) {
  cls_context *gone = ct_context();
  cls_kernel *k = ct_kernel(gone, CT_FILL_SRC, "fill_k");
  cls_buffer b = ct_alloc(gone, 0, 64);
  cls_context_destroy(gone);
#define STALE(call)                                                                  \
  do {                                                                               \
    int rc_ = (call);                                                                \
    ck_assert_msg(rc_ == CLS_ESTALE, "%s: %s", #call, cls_err_name(rc_));            \
    ck_assert_msg(strstr(cls_last_error_detail(), "was destroyed"), "%s: %s", #call, \
                  cls_last_error_detail());                                          \
  } while (0)
  cls_buffer nb;
  int v = 1;
  size_t g = 16, n = 0;
  struct cls_stream_stats st;
  struct cls_device_info info;
  struct cls_quirks q = {.version = CLS_QUIRKS_VERSION};
  cls_program *p;
  int mode, got[4];
  STALE(cls_alloc(gone, 0, 64, &nb));
  STALE(cls_launch(gone, 0, k, 1, &g, NULL, 2, (cls_arg[]){CLS_OUT(b), CLS_SCALAR(v)}));
  STALE(cls_download(gone, 0, b, 0, got, sizeof got, NULL));
  STALE(cls_check(gone, 1, &b, NULL));
  STALE(cls_free(gone, b));
  STALE(cls_sync(gone, NULL));
  STALE(cls_stream_sync(gone, 0, NULL));
  STALE(cls_stream_stats(gone, 0, &st));
  STALE(cls_program_build(gone, CT_FILL_SRC, NULL, &p));
  STALE(cls_set_logger(gone, CLS_LOG_OFF, NULL, NULL));
  STALE(cls_context_device(gone, &info));
  STALE(cls_context_quirks(gone, &q));
  STALE(cls_context_devices(gone, &info, 1, &n));
  STALE(cls_context_attribution(gone, &mode, NULL, NULL));
  cls_context_destroy(gone); /* again: nothing but the detail */
  ck_assert_msg(strstr(cls_last_error_detail(), "cls_context_destroy: context") &&
                    strstr(cls_last_error_detail(), "was destroyed"),
                "%s", cls_last_error_detail());
#undef STALE
  assert_context_works(); /* the fixture's context is untouched */
}
END_TEST

int main(void) {
  ct_require_device();
  unsetenv("CLS_DEVICE");
  unsetenv("CLS_SCHEDULER");
  unsetenv("CLS_FAULT");
  unsetenv("CLS_PLACEMENT");
  unsetenv("CLS_RELOCATE");
  Suite *s = suite_create("misuse-by-function");
#define ADD(fn) CT_ADD_FIXTURE(s, fn, setup, teardown)
  ADD(error_strings_exist_for_every_int);
  ADD(device_calls_reject_bad_arguments);
  ADD(context_options_are_checked);
  ADD(malformed_scheduler_strings_are_rejected);
  ADD(malformed_fault_specs_are_econfig);
  ADD(malformed_log_levels_are_econfig);
  ADD(malformed_device_strings_fail_creation);
  ADD(stream_and_driver_calls_check_their_arguments);
  ADD(placement_and_relocation_calls_check_their_arguments);
  ADD(zero_sizes_and_size_max_are_rejected);
  ADD(bad_fill_patterns_are_einval);
  ADD(check_takes_any_mix_of_handles);
  ADD(launch_mistakes_get_their_codes_and_leave_a_record);
  ADD(program_and_kernel_misuse_is_rejected);
  ADD(report_accessors_check_their_arguments);
  ADD(a_call_on_a_just_destroyed_context_is_estale);
#undef ADD
  return ct_run(s);
}
