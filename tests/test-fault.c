/* Fault injection: the CLS_FAULT grammar (src/factory/fault-spec.c), from
 * the context option and from the environment, and what each kind of
 * fault does.
 *
 *   spec  := fault { ';' fault }
 *   fault := when ':' key '=' value { ',' key '=' value }
 *   when  := enqueue | complete | alloc
 *   key   := kernel | op | stream | nth | times | status */
#include "common.h"
#include "heap.h"

#include <clstream/stream.h>

#include <stdbool.h>

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

#define N 16
#define NB (N * sizeof(int))

static const char SRC[] =
    "kernel void fk(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i] + 1;\n"
    "}\n"
    "kernel void ka(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i] + 2;\n"
    "}\n"
    "kernel void kb(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i] + 3;\n"
    "}\n"
    "kernel void kc(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i] + 4;\n"
    "}\n";

static cls_context *ctx;
static cls_program *prog;

static struct cls_context_options opts_with(const char *fault) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .fault = fault};
  return o;
}

static void open_ctx(const char *fault) {
  struct cls_context_options o = opts_with(fault);
  ctx = ct_context_opts(&o);
  prog = ct_build(ctx, SRC, NULL);
}

static void close_ctx(void) {
  cls_context_destroy(ctx);
  ctx = NULL;
  prog = NULL;
}

/* A command an "enqueue" fault fails.  The event driver enqueues at once,
 * so the call returns the failure.  A driver that defers the enqueue (the
 * scheduler driver) accepts the command and meets the failure when it
 * submits (F8); the sync makes it submit.  Whether the call itself returns
 * the failure, as the header says, is enqueue_fault_is_returned_by_the_call. */
static bool deferred; /* the last enqueue failure was found after the call */

#define ENQUEUE_FAILS(expr, code) enqueue_fails((expr), (code), #expr)

static void enqueue_fails(int rc, int code, const char *what) {
  deferred = false;
  if (rc == code)
    return;
  ck_assert_msg(rc == 0 && strcmp(cls_context_driver(ctx), "event") != 0,
                "%s: expected %s, got %s (%d) [driver %s]: %s", what, cls_err_name(code),
                cls_err_name(rc), rc, cls_context_driver(ctx), cls_last_error_detail());
  deferred = true;
  CT_OK(cls_sync(ctx, NULL));
}

static void fill_seq(int *v, int base) {
  for (int i = 0; i < N; i++)
    v[i] = base + i;
}

static void expect_seq(int stream, cls_buffer b, int base) {
  int got[N];
  ct_download_ints(ctx, stream, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, base + (int)i);
}

static int upload_seq(int stream, cls_buffer b, int base) {
  int v[N];
  fill_seq(v, base);
  return cls_upload(ctx, stream, b, 0, v, NB);
}

static cls_buffer input(int stream, int base) {
  cls_buffer b = ct_alloc(ctx, stream, NB);
  CT_OK(upload_seq(stream, b, base));
  return b;
}

static int launch_unary(int stream, const char *k, cls_buffer in, cls_buffer out) {
  size_t g[1] = {N};
  cls_arg a[] = {CLS_IN(in), CLS_OUT(out)};
  return cls_launch(ctx, stream, ct_get_kernel(ctx, prog, k), 1, g, NULL, 2, a);
}

static cls_report *tainted(int stream, cls_buffer b) {
  int got[N];
  cls_report *r = NULL;
  int rc = cls_download(ctx, stream, b, 0, got, NB, &r);
  ck_assert_msg(rc == CLS_ETAINTED, "download: expected CLS_ETAINTED, got %s (%d): %s",
                cls_err_name(rc), rc, cls_last_error_detail());
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  return r;
}

/* New work on `stream` succeeds. */
static void assert_healthy(int stream) {
  static int round = 100;
  int base = (round += 100);
  cls_buffer a = input(stream, base), b = ct_alloc(ctx, stream, NB);
  CT_OK(launch_unary(stream, "kc", a, b));
  expect_seq(stream, b, base + 4);
  CT_OK(cls_free(ctx, a));
  CT_OK(cls_free(ctx, b));
}

/* ------------------------------------------------------------------ */
/* Grammar                                                             */
/* ------------------------------------------------------------------ */

static const char *const valid_specs[] = {
    "enqueue:kernel=blur",
    "enqueue:nth=17",
    "complete:kernel=sobel",
    "complete:op=copy,hold=8;complete:kernel=k,hold=3",
    "alloc:nth=3",
    "enqueue:kernel=blur;alloc:nth=3",
    "enqueue:op=upload,stream=1,times=2",
    "enqueue:kernel=k,status=CL_INVALID_VALUE",
    "enqueue:op=fill,status=-5",
    "complete:op=download,stream=63,nth=2,times=4",
};

START_TEST(valid_specs_are_accepted) {
  for (size_t i = 0; i < sizeof valid_specs / sizeof *valid_specs; i++) {
    struct cls_context_options o = opts_with(valid_specs[i]);
    cls_context *c = NULL;
    int rc = cls_context_create(&c, &o);
    ck_assert_msg(rc == 0, "'%s' rejected: %s (%d): %s", valid_specs[i], cls_err_name(rc), rc,
                  cls_last_error_detail());
    ck_assert_ptr_nonnull(c);
    cls_context_destroy(c);
  }
}
END_TEST

/* A malformed spec and a word its error detail must contain. */
static const struct {
  const char *spec;
  const char *names;
} malformed[] = {
    {"enqueue", "enqueue"},
    {"enqueue:", "enqueue"},
    {"bogus:nth=1", "bogus"},
    {"enqueue:nth=0", "nth"},
    {"enqueue:nth=x", "nth"},
    {"enqueue:foo=1", "foo"},
    {"alloc:kernel=x", "kernel"},
    {"enqueue:status=CL_NOPE", "CL_NOPE"},
    {"enqueue:stream=99", "stream"},
    {"enqueue:times=0", "times"},
    {"enqueue:op=launchx", "launchx"},
    {"enqueue:kernel=", "kernel"},
    {"enqueue:nth=1;bogus:nth=1", "bogus"},
};

START_TEST(malformed_specs_are_econfig_and_leave_nothing) {
  for (size_t i = 0; i < sizeof malformed / sizeof *malformed; i++) {
    struct cls_context_options o = opts_with(malformed[i].spec);
    cls_context *c = (cls_context *)&o; /* must come back NULL */
    ct_heap_start(); /* a rejected configuration leaves nothing behind */
    int rc = cls_context_create(&c, &o);
    ct_heap_stop();
    const char *detail = cls_last_error_detail();
    ck_assert_msg(rc == CLS_ECONFIG, "'%s': expected CLS_ECONFIG, got %s (%d): %s",
                  malformed[i].spec, cls_err_name(rc), rc, detail);
    ck_assert_msg(c == NULL, "'%s': *out is not NULL after a failure", malformed[i].spec);
    ck_assert_msg(ct_icontains(detail, malformed[i].names),
                  "'%s': the detail should name '%s': \"%s\"", malformed[i].spec,
                  malformed[i].names, detail);
    ck_assert_msg(ct_heap_net == 0, "'%s': %ld heap blocks left behind", malformed[i].spec,
                  ct_heap_net);
  }
  /* "key" words for the two specs without any KEY=VALUE. */
  for (size_t i = 0; i < 2; i++) {
    struct cls_context_options o = opts_with(malformed[i].spec);
    cls_context *c = NULL;
    CT_ERR(cls_context_create(&c, &o), CLS_ECONFIG);
    ck_assert_msg(ct_icontains(cls_last_error_detail(), "key"),
                  "'%s': the detail should say a KEY=VALUE is missing: %s", malformed[i].spec,
                  cls_last_error_detail());
  }
}
END_TEST

/* The spec must be CLS_ECONFIG, from the option and from $CLS_FAULT,
 * leave nothing behind, and quote `quoted` in the detail. */
static void refused(const char *spec, const char *quoted) {
  struct cls_context_options o = opts_with(spec);
  cls_context *c = (cls_context *)&o;
  ct_heap_start();
  int rc = cls_context_create(&c, &o);
  ct_heap_stop();
  ck_assert_msg(rc == CLS_ECONFIG, "'%.40s': expected CLS_ECONFIG, got %s: %s", spec,
                cls_err_name(rc), cls_last_error_detail());
  ck_assert_ptr_null(c);
  ck_assert_msg(ct_heap_net == 0, "'%.40s': %ld heap blocks left behind", spec, ct_heap_net);
  ck_assert_msg(strstr(cls_last_error_detail(), quoted) != NULL,
                "'%.40s': the detail should quote '%s': %s", spec, quoted,
                cls_last_error_detail());
  ck_assert_int_eq(setenv("CLS_FAULT", spec, 1), 0);
  c = (cls_context *)&o;
  rc = cls_context_create(&c, NULL);
  unsetenv("CLS_FAULT");
  ck_assert_msg(rc == CLS_ECONFIG, "CLS_FAULT='%.40s': got %s", spec, cls_err_name(rc));
  ck_assert_ptr_null(c);
}

/* ";;" and 100 KB of ';' used to mean "no faults": an empty fault is a
 * mistake, refused at once (and quickly).  Only the empty spec is none. */
START_TEST(empty_faults_are_refused_even_100k_semicolons) {
  refused(";", "empty item");
  refused(";;", "empty item");
  refused("enqueue:nth=1;", "empty item at offset 14");
  refused(";enqueue:nth=1", "empty item at offset 0");
  refused("enqueue:nth=1;;complete:kernel=k", "empty item at offset 14");
  refused("enqueue:nth=1,", "empty item");
  refused("enqueue:,nth=1", "empty item");
  enum { BIG = 100 * 1024 };
  char *big = malloc(BIG + 1);
  ck_assert_ptr_nonnull(big);
  memset(big, ';', BIG);
  big[BIG] = '\0';
  refused(big, "(102400 characters)");
  ck_assert_uint_lt(strlen(cls_last_error_detail()), 1024); /* quoted cut short */
  free(big);
  struct cls_context_options o = opts_with("");
  cls_context_destroy(ct_context_opts(&o));
}
END_TEST

/* "nth= 1" was refused while " enqueue:nth=1" and "a; b" were accepted:
 * now whitespace is refused wherever it is. */
START_TEST(whitespace_is_refused_anywhere_in_a_spec) {
  refused("enqueue:nth= 1", "whitespace at offset 12");
  refused(" enqueue:nth=1", "whitespace at offset 0");
  refused("enqueue:nth=1 ", "whitespace");
  refused("enqueue:nth=1; complete:kernel=k", "whitespace at offset 14");
  refused("enqueue :nth=1", "whitespace");
  refused("enqueue:kernel=a b", "whitespace");
  refused("enqueue:nth=1\t", "whitespace");
}
END_TEST

START_TEST(a_key_given_twice_is_refused) {
  refused("enqueue:nth=1,nth=2", "nth given twice");
  refused("enqueue:kernel=a,kernel=b", "kernel given twice");
  refused("complete:status=-5,times=2,status=-6", "status given twice");
  /* Twice in different faults is two faults. */
  struct cls_context_options o = opts_with("enqueue:nth=1;enqueue:nth=2");
  cls_context_destroy(ct_context_opts(&o));
}
END_TEST

/* Numbers are unsigned decimals, checked against their range as given. */
START_TEST(fault_numbers_take_digits_only) {
  refused("enqueue:nth=+1", "'+1'");
  refused("enqueue:stream=+0", "'+0'");
  refused("enqueue:times=1x", "'1x'");
  refused("enqueue:nth=18446744073709551616", "'18446744073709551616'");
  refused("enqueue:status=-99999999999999999999", "'-99999999999999999999'");
  refused("enqueue:status=+5", "'+5'");
  refused("enqueue:status=-0", "'-0'");
  struct cls_context_options o = opts_with("enqueue:nth=18446744073709551615,status=-10000");
  cls_context_destroy(ct_context_opts(&o));
}
END_TEST

START_TEST(keys_that_do_not_apply_to_alloc_are_refused) {
  refused("alloc:kernel=k", "kernel does not apply to alloc");
  refused("alloc:op=launch", "op does not apply to alloc");
}
END_TEST

START_TEST(environment_variable_is_read) {
  /* Malformed in the environment. */
  ck_assert_int_eq(setenv("CLS_FAULT", "enqueue:nth=0", 1), 0);
  cls_context *c = (cls_context *)&c;
  int rc = cls_context_create(&c, NULL);
  char detail[1024];
  snprintf(detail, sizeof detail, "%s", cls_last_error_detail());
  unsetenv("CLS_FAULT");
  ck_assert_msg(rc == CLS_ECONFIG, "CLS_FAULT=enqueue:nth=0: got %s (%d): %s", cls_err_name(rc),
                rc, detail);
  ck_assert_ptr_null(c);
  ck_assert_msg(ct_icontains(detail, "nth"), "detail: %s", detail);

  ck_assert_int_eq(setenv("CLS_FAULT", "bogus:x=1", 1), 0);
  c = (cls_context *)&c;
  rc = cls_context_create(&c, NULL);
  snprintf(detail, sizeof detail, "%s", cls_last_error_detail());
  unsetenv("CLS_FAULT");
  ck_assert_int_eq(rc, CLS_ECONFIG);
  ck_assert_ptr_null(c);
  ck_assert_msg(ct_icontains(detail, "bogus"), "detail: %s", detail);

  /* Valid in the environment: it takes effect. */
  ck_assert_int_eq(setenv("CLS_FAULT", "enqueue:op=upload,times=1", 1), 0);
  ctx = ct_context();
  unsetenv("CLS_FAULT");
  prog = ct_build(ctx, SRC, NULL);
  cls_buffer b = ct_alloc(ctx, 0, NB);
  ENQUEUE_FAILS(upload_seq(0, b, 0), CLS_ECL);
  CT_OK(upload_seq(0, b, 5));
  expect_seq(0, b, 5);
  close_ctx();

  /* The option wins over the environment. */
  ck_assert_int_eq(setenv("CLS_FAULT", "bogus:x=1", 1), 0);
  struct cls_context_options o = opts_with("enqueue:kernel=blur");
  c = NULL;
  rc = cls_context_create(&c, &o);
  unsetenv("CLS_FAULT");
  ck_assert_msg(rc == 0, "option with a bad CLS_FAULT: %s", cls_err_name(rc));
  cls_context_destroy(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Behaviour                                                           */
/* ------------------------------------------------------------------ */

/* The header: cls_launch returns CLS_ELAUNCH "when the enqueue failed (the
 * outputs carry the new failure)"; other commands return the error too, with
 * the OpenCL status in cls_last_cl_status().  A driver that enqueues later
 * (the scheduler) returns 0 and the same failure, found after the call, is
 * in the reports with the same status. */
START_TEST(enqueue_fault_is_returned_by_the_call) {
  open_ctx("enqueue:kernel=fk,status=CL_INVALID_VALUE;enqueue:op=fill,status=-38");
  bool immediate = strcmp(cls_context_driver(ctx), "event") == 0;
  cls_buffer in = input(0, 0), out = ct_alloc(ctx, 0, NB), b = ct_alloc(ctx, 1, NB);
  const int pat = 9;
  if (immediate) {
    CT_ERR(launch_unary(0, "fk", in, out), CLS_ELAUNCH);
    ck_assert_int_eq(cls_last_cl_status(), CL_INVALID_VALUE);
    CT_ERR(cls_fill(ctx, 1, b, 0, NB, &pat, sizeof pat), CLS_ECL);
    ck_assert_int_eq(cls_last_cl_status(), CL_INVALID_MEM_OBJECT);
  } else {
    CT_OK(launch_unary(0, "fk", in, out));
    CT_OK(cls_fill(ctx, 1, b, 0, NB, &pat, sizeof pat));
  }
  cls_report *r = tainted(0, out);
  ck_assert_int_eq(ct_failure(r, 0).async, !immediate);
  ck_assert_int_eq(ct_failure(r, 0).cl_status, CL_INVALID_VALUE);
  ck_assert_str_eq(ct_failure(r, 0).kernel, "fk");
  cls_report_free(r);
  r = tainted(1, b);
  ck_assert_int_eq(ct_failure(r, 0).async, !immediate);
  ck_assert_int_eq(ct_failure(r, 0).cl_status, CL_INVALID_MEM_OBJECT);
  ck_assert_str_eq(ct_failure(r, 0).operation, "fill");
  cls_report_free(r);
  assert_healthy(0);
  assert_healthy(1);
  close_ctx();
}
END_TEST

START_TEST(alloc_nth_3_fails_exactly_the_third_allocation) {
  open_ctx("alloc:nth=3");
  cls_buffer b[5];
  b[0] = ct_alloc(ctx, 0, NB);
  b[1] = ct_alloc(ctx, 1, NB);
  b[2] = (cls_buffer){12345};
  CT_ERR(cls_alloc(ctx, 0, NB, &b[2]), CLS_EALLOC);
  ck_assert_int_eq(cls_last_cl_status(), CL_MEM_OBJECT_ALLOCATION_FAILURE);
  ck_assert_uint_eq(b[2].bits, 0);
  b[3] = ct_alloc(ctx, 0, NB);
  b[4] = ct_alloc(ctx, 1, NB);
  for (int i = 0; i < 5; i++) {
    if (i == 2)
      continue;
    CT_OK(upload_seq(i % 2, b[i], 10 * i));
    expect_seq(i % 2, b[i], 10 * i);
  }
  assert_healthy(0);
  close_ctx();
}
END_TEST

START_TEST(enqueue_nth_2_fails_exactly_the_second_command) {
  open_ctx("enqueue:nth=2");
  cls_buffer a = ct_alloc(ctx, 0, NB), b = ct_alloc(ctx, 0, NB), c = ct_alloc(ctx, 0, NB);
  CT_OK(upload_seq(0, a, 100));
  ENQUEUE_FAILS(upload_seq(0, b, 200), CLS_ECL);
  if (!deferred)
    ck_assert_int_eq(cls_last_cl_status(), CL_OUT_OF_RESOURCES);
  CT_OK(upload_seq(0, c, 300));
  expect_seq(0, a, 100);
  cls_report *r = tainted(0, b);
  struct cls_failure_info f = ct_failure(r, 0);
  ck_assert_str_eq(f.operation, "upload");
  ck_assert_int_eq(f.cl_status, CL_OUT_OF_RESOURCES);
  ck_assert_int_eq(f.async, deferred);
  ck_assert_int_eq(f.stream, 0);
  cls_report_free(r);
  expect_seq(0, c, 300);
  assert_healthy(0);
  close_ctx();
}
END_TEST

START_TEST(hold_applies_to_complete_faults_only) {
  refused("enqueue:kernel=k,hold=2", "hold applies to complete faults only");
  refused("alloc:hold=2", "hold applies to complete faults only");
  refused("complete:kernel=k,hold=0", "hold");
}
END_TEST

/* hold=N withholds a completion failure from polls that do not wait, never
 * from a wait: the sync finds it, and the buffer carries it (F8). */
START_TEST(a_held_completion_failure_is_found_at_the_sync) {
  open_ctx("complete:op=fill,hold=1000000");
  cls_buffer b = ct_alloc(ctx, 0, NB);
  int zero = 0;
  CT_OK(cls_fill(ctx, 0, b, 0, NB, &zero, sizeof zero));
  CT_OK(cls_sync(ctx, NULL));
  int out[4];
  CT_ERR(cls_download(ctx, 1, b, 0, out, sizeof out, NULL), CLS_ETAINTED);
  close_ctx();
}
END_TEST

START_TEST(times_2_fires_twice) {
  open_ctx("enqueue:op=upload,nth=2,times=2");
  cls_buffer b = ct_alloc(ctx, 0, NB);
  CT_OK(upload_seq(0, b, 1));
  ENQUEUE_FAILS(upload_seq(0, b, 2), CLS_ECL);
  ENQUEUE_FAILS(upload_seq(0, b, 3), CLS_ECL);
  CT_OK(upload_seq(0, b, 4));
  CT_OK(upload_seq(0, b, 5));
  expect_seq(0, b, 5);
  assert_healthy(0);
  close_ctx();
}
END_TEST

START_TEST(stream_key_limits_the_fault_to_one_stream) {
  open_ctx("enqueue:op=upload,stream=1,times=2");
  cls_buffer a = ct_alloc(ctx, 0, NB), b = ct_alloc(ctx, 1, NB);
  for (int i = 0; i < 3; i++)
    CT_OK(upload_seq(0, a, i));
  ENQUEUE_FAILS(upload_seq(1, b, 10), CLS_ECL);
  ENQUEUE_FAILS(upload_seq(1, b, 11), CLS_ECL);
  CT_OK(upload_seq(1, b, 12));
  expect_seq(0, a, 2);
  expect_seq(1, b, 12);
  assert_healthy(1);
  close_ctx();
}
END_TEST

START_TEST(status_by_name_shows_in_the_report) {
  open_ctx("enqueue:kernel=fk,status=CL_INVALID_VALUE");
  cls_buffer in = input(0, 0), out = ct_alloc(ctx, 0, NB);
  ENQUEUE_FAILS(launch_unary(0, "fk", in, out), CLS_ELAUNCH);
  if (!deferred)
    ck_assert_int_eq(cls_last_cl_status(), CL_INVALID_VALUE);
  cls_report *r = tainted(0, out);
  struct cls_failure_info f = ct_failure(r, 0);
  ck_assert_int_eq(f.cl_status, CL_INVALID_VALUE);
  ck_assert_str_eq(f.cl_name, "CL_INVALID_VALUE");
  ck_assert_str_eq(f.kernel, "fk");
  ck_assert_msg(strstr(cls_report_text(r), "CL_INVALID_VALUE") != NULL, "%s",
                cls_report_text(r));
  cls_report_free(r);
  /* Another kernel is not affected. */
  CT_OK(launch_unary(0, "ka", in, out));
  expect_seq(0, out, 2);
  assert_healthy(0);
  close_ctx();
}
END_TEST

START_TEST(status_by_number) {
  open_ctx("enqueue:op=fill,status=-38");
  cls_buffer b = ct_alloc(ctx, 0, NB);
  const int pat = 9;
  ENQUEUE_FAILS(cls_fill(ctx, 0, b, 0, NB, &pat, sizeof pat), CLS_ECL);
  if (!deferred)
    ck_assert_int_eq(cls_last_cl_status(), CL_INVALID_MEM_OBJECT);
  cls_report *r = tainted(0, b);
  ck_assert_int_eq(ct_failure(r, 0).cl_status, CL_INVALID_MEM_OBJECT);
  ck_assert_str_eq(ct_failure(r, 0).operation, "fill");
  cls_report_free(r);
  assert_healthy(0);
  close_ctx();
}
END_TEST

START_TEST(two_faults_separated_by_semicolon_both_fire) {
  open_ctx("enqueue:kernel=ka;enqueue:kernel=kb");
  cls_buffer in = input(0, 0), x = ct_alloc(ctx, 0, NB), y = ct_alloc(ctx, 1, NB),
             z = ct_alloc(ctx, 0, NB);
  ENQUEUE_FAILS(launch_unary(0, "ka", in, x), CLS_ELAUNCH);
  ENQUEUE_FAILS(launch_unary(1, "kb", in, y), CLS_ELAUNCH);
  CT_OK(launch_unary(0, "kc", in, z));
  cls_report *r = tainted(0, x);
  ck_assert_str_eq(ct_failure(r, 0).kernel, "ka");
  cls_report_free(r);
  r = tainted(1, y);
  ck_assert_str_eq(ct_failure(r, 0).kernel, "kb");
  cls_report_free(r);
  expect_seq(0, z, 4);
  assert_healthy(0);
  assert_healthy(1);
  close_ctx();
}
END_TEST

/* ------------------------------------------------------------------ */

int main(void) {
  ct_require_device();
  Suite *s = suite_create("fault");
  CT_ADD(s, valid_specs_are_accepted);
  CT_ADD(s, malformed_specs_are_econfig_and_leave_nothing);
  CT_ADD(s, empty_faults_are_refused_even_100k_semicolons);
  CT_ADD(s, whitespace_is_refused_anywhere_in_a_spec);
  CT_ADD(s, a_key_given_twice_is_refused);
  CT_ADD(s, fault_numbers_take_digits_only);
  CT_ADD(s, keys_that_do_not_apply_to_alloc_are_refused);
  CT_ADD(s, environment_variable_is_read);
  CT_ADD(s, enqueue_fault_is_returned_by_the_call);
  CT_ADD(s, alloc_nth_3_fails_exactly_the_third_allocation);
  CT_ADD(s, enqueue_nth_2_fails_exactly_the_second_command);
  CT_ADD(s, times_2_fires_twice);
  CT_ADD(s, hold_applies_to_complete_faults_only);
  CT_ADD(s, a_held_completion_failure_is_found_at_the_sync);
  CT_ADD(s, stream_key_limits_the_fault_to_one_stream);
  CT_ADD(s, status_by_name_shows_in_the_report);
  CT_ADD(s, status_by_number);
  CT_ADD(s, two_faults_separated_by_semicolon_both_fire);
  return ct_run(s);
}
