/* F12 (a refusal leaves a record), F11 (the declared access is checked)
 * and the work-size checks that keep a launch that cannot run from
 * counting as a write.  Every kind of refusal of a writing call is made
 * once, and a read of its destination must say what was refused. */
#include "common.h"

#include <stdint.h>

static cls_context *ctx;
static cls_program *prog;
static cls_kernel *fill_k, *add_k, *copy_k, *inc_k;

static void setup(void) {
  ctx = ct_context();
  prog = ct_build(ctx, CT_ALL_SRC, NULL);
  fill_k = ct_get_kernel(ctx, prog, "fill_k");
  add_k = ct_get_kernel(ctx, prog, "add_k");
  copy_k = ct_get_kernel(ctx, prog, "copy_k");
  inc_k = ct_get_kernel(ctx, prog, "inc_k");
}
static void teardown(void) {
  cls_context_destroy(ctx);
  ctx = NULL;
}

/* The one failure a download of b reports, copied out (message too). */
struct seen {
  struct cls_failure_info fi; /* its strings are the copies below */
  char message[256], kernel[64], operation[32];
};
static struct seen failure_of(cls_buffer b) {
  int got[4];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 0, b, 0, got, sizeof got, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct seen s;
  CT_OK(cls_report_failure(r, 0, &s.fi));
  snprintf(s.message, sizeof s.message, "%s", s.fi.message);
  snprintf(s.kernel, sizeof s.kernel, "%s", s.fi.kernel);
  snprintf(s.operation, sizeof s.operation, "%s", s.fi.operation);
  s.fi.message = s.fi.kernel = s.fi.operation = NULL; /* freed with the report */
  cls_report_free(r);
  return s;
}

static void assert_says(const struct seen *s, const char *what) {
  ck_assert_msg(strstr(s->message, what), "record '%s' does not say '%s'", s->message, what);
}

/* ------------------------------------------------------------------ */
/* F12, one test per kind of refusal                                   */
/* ------------------------------------------------------------------ */

START_TEST(F12_invalid_kernel_handle_taints_the_outputs) {
  cls_buffer o = ct_written(ctx, 1, 16, 5);
  size_t g[1] = {16};
  int v = 1;
  cls_arg a[] = {CLS_OUT(o), CLS_SCALAR(v)};
  CT_ERR(cls_launch(ctx, 1, NULL, 1, g, NULL, 2, a), CLS_EINVAL);
  ck_assert_msg(strstr(cls_last_error_detail(), "not a kernel"), "detail: %s",
                cls_last_error_detail());
  struct seen s = failure_of(o);
  ck_assert_int_eq(s.fi.status, CLS_EINVAL);
  ck_assert_str_eq(s.operation, "launch");
  ck_assert_str_eq(s.kernel, "");
  ck_assert_int_eq(s.fi.stream, 1);
  ck_assert_uint_gt(s.fi.position, 0);
  ck_assert_int_eq(s.fi.cl_status, 0);
  assert_says(&s, "not a kernel of this context");
  /* A kernel of another context is no kernel of this one. */
  cls_context *other = ct_context();
  cls_kernel *theirs = ct_kernel(other, CT_FILL_SRC, "fill_k");
  CT_OK(cls_fill(ctx, 0, o, 0, 64, &v, sizeof v));
  CT_ERR(cls_launch(ctx, 0, theirs, 1, g, NULL, 2, a), CLS_EINVAL);
  cls_context_destroy(other);
  ct_expect_refused(ctx, 0, o, CLS_EINVAL, "launch", "");
}
END_TEST

START_TEST(F12_work_size_refusal_names_the_call_and_the_reason) {
  cls_buffer o = ct_written(ctx, 1, 1024, 5);
  size_t g[1] = {1024}, l[1] = {7};
  int v = 1;
  cls_arg a[] = {CLS_OUT(o), CLS_SCALAR(v)};
  ct_launch1(ctx, 1, fill_k, 1024, 2, a); /* position 2 on stream 1 */
  CT_ERR(cls_launch(ctx, 1, fill_k, 1, g, l, 2, a), CLS_EWORKSIZE);
  struct seen s = failure_of(o);
  ck_assert_int_eq(s.fi.status, CLS_EWORKSIZE);
  ck_assert_str_eq(s.kernel, "fill_k");
  ck_assert_int_eq(s.fi.stream, 1);
  ck_assert_uint_eq(s.fi.position, 3);
  ck_assert_int_eq(s.fi.async, 0);
  assert_says(&s, "launch of 'fill_k' on stream 1 refused: CLS_EWORKSIZE");
  assert_says(&s, "local size 7 does not divide global size 1024");
}
END_TEST

START_TEST(F12_argument_count_and_kind_refusals_taint_declared_outputs) {
  cls_buffer a = ct_written(ctx, 0, 16, 1), b = ct_written(ctx, 0, 16, 2),
             c = ct_written(ctx, 0, 16, 3);
  size_t g[1] = {16};
  cls_arg four[] = {CLS_IN(a), CLS_IN(b), CLS_OUT(c), CLS_IN(a)};
  CT_ERR(cls_launch(ctx, 0, add_k, 1, g, NULL, 4, four), CLS_EARGCOUNT);
  ct_expect_refused(ctx, 0, c, CLS_EARGCOUNT, "launch", "add_k");
  ct_expect_ints(ctx, 0, a, 16, 1); /* inputs keep their bytes */
  ct_expect_ints(ctx, 0, b, 16, 2);
  int v = 3;
  cls_arg kind[] = {CLS_OUT(b), CLS_OUT(a)}; /* a where an int goes */
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, kind), CLS_EARGKIND);
  ct_expect_refused(ctx, 0, b, CLS_EARGKIND, "launch", "fill_k");
  ct_expect_refused(ctx, 0, a, CLS_EARGKIND, "launch", "fill_k");
  (void)v;
}
END_TEST

START_TEST(F12_upload_copy_and_fill_refusals_taint_the_destination) {
  int host[16] = {0};
  cls_buffer u = ct_written(ctx, 0, 16, 1), c = ct_written(ctx, 0, 16, 2),
             f = ct_written(ctx, 0, 16, 3), src = ct_written(ctx, 0, 16, 4);
  CT_ERR(cls_upload(ctx, 0, u, 8, host, sizeof host), CLS_ERANGE);
  ct_expect_refused(ctx, 0, u, CLS_ERANGE, "upload", "");
  CT_ERR(cls_upload(ctx, 0, u, 0, NULL, sizeof host), CLS_EINVAL);
  ct_expect_refused(ctx, 0, u, CLS_EINVAL, "upload", "");
  CT_ERR(cls_copy(ctx, 0, src, 4, c, 0, 64), CLS_ERANGE);
  ct_expect_refused(ctx, 0, c, CLS_ERANGE, "copy", "");
  ct_expect_ints(ctx, 0, src, 16, 4); /* the source keeps its bytes */
  const int pat = 9;
  CT_ERR(cls_fill(ctx, 0, f, 0, 6, &pat, sizeof pat), CLS_EINVAL); /* 4 does not divide 6 */
  ct_expect_refused(ctx, 0, f, CLS_EINVAL, "fill", "");
  /* A copy refused for its source still marks its destination. */
  cls_buffer gone = ct_written(ctx, 0, 16, 5);
  CT_OK(cls_free(ctx, gone));
  CT_OK(cls_fill(ctx, 0, c, 0, 64, &pat, sizeof pat));
  CT_ERR(cls_copy(ctx, 0, gone, 0, c, 0, 64), CLS_ESTALE);
  ct_expect_refused(ctx, 0, c, CLS_ESTALE, "copy", "");
}
END_TEST

START_TEST(F12_an_invalid_destination_gets_nothing_and_nothing_else_changes) {
  cls_buffer src = ct_written(ctx, 0, 16, 4), gone = ct_written(ctx, 0, 16, 5);
  CT_OK(cls_free(ctx, gone));
  CT_ERR(cls_copy(ctx, 0, src, 0, gone, 0, 64), CLS_ESTALE);
  int v = 1;
  size_t g[1] = {16};
  cls_arg a[] = {CLS_OUT(gone), CLS_SCALAR(v)};
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, a), CLS_ESTALE);
  ct_expect_ints(ctx, 0, src, 16, 4);
  struct cls_stream_stats st;
  CT_OK(cls_stream_stats(ctx, 0, &st));
  ck_assert_uint_eq(st.failures, 0); /* nothing minted */
}
END_TEST

START_TEST(F12_a_refusal_travels_by_F2_across_streams) {
  cls_buffer a = ct_written(ctx, 0, 16, 1), mid = ct_written(ctx, 0, 16, 2),
             out = ct_written(ctx, 2, 16, 3);
  size_t g[1] = {16}, l[1] = {3};
  cls_arg first[] = {CLS_IN(a), CLS_OUT(mid)};
  CT_ERR(cls_launch(ctx, 0, copy_k, 1, g, l, 2, first), CLS_EWORKSIZE);
  cls_arg second[] = {CLS_IN(mid), CLS_OUT(out)};
  CT_ERR(cls_launch(ctx, 2, copy_k, 1, g, NULL, 2, second), CLS_ESKIPPED);
  int got[16];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 2, out, 0, got, sizeof got, &r), CLS_ETAINTED);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_int_eq(fi.status, CLS_EWORKSIZE);
  ck_assert_int_eq(fi.stream, 0);
  ck_assert_uint_eq(fi.nskips, 1);
  struct cls_skip_info sk;
  CT_OK(cls_report_skip(r, 0, 0, &sk));
  ck_assert_int_eq(sk.kind, CLS_SKIP_SKIPPED);
  ck_assert_str_eq(sk.kernel, "copy_k");
  ck_assert_int_eq(sk.stream, 2);
  cls_report_free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* F11                                                                 */
/* ------------------------------------------------------------------ */

START_TEST(F11_read_binding_of_a_written_argument_is_eaccess) {
  cls_buffer x = ct_written(ctx, 0, 16, 1);
  size_t g[1] = {16};
  cls_arg in[] = {CLS_IN(x)};
  int rc = cls_launch(ctx, 0, inc_k, 1, g, NULL, 1, in);
  if (rc == CLS_OK) {
    /* The device gives no argument info: the declaration is trusted
     * (logged once).  PoCL, rusticl and oclgrind all give it. */
    ck_abort_msg("CLS_IN on inc_k's non-const x was accepted: no argument info?");
  }
  ck_assert_int_eq(rc, CLS_EACCESS);
  const char *d = cls_last_error_detail();
  ck_assert_msg(strstr(d, "inc_k") && strstr(d, "argument 0") && strstr(d, "'x'") &&
                    strstr(d, "CLS_INOUT or CLS_OUT"),
                "detail: %s", d);
  ct_expect_refused(ctx, 0, x, CLS_EACCESS, "launch", "inc_k");
  /* The right declarations run. */
  CT_OK(cls_fill(ctx, 0, x, 0, 64, &(int){1}, sizeof(int)));
  cls_arg inout[] = {CLS_INOUT(x)};
  ct_launch1(ctx, 0, inc_k, 16, 1, inout);
  cls_arg inferred[] = {CLS_ARG(x)};
  ct_launch1(ctx, 0, inc_k, 16, 1, inferred);
  ct_expect_ints(ctx, 0, x, 16, 3);
}
END_TEST

START_TEST(F11_declaring_more_access_than_the_kernel_uses_is_allowed) {
  cls_buffer a = ct_written(ctx, 0, 16, 7), b = ct_written(ctx, 0, 16, 0);
  cls_arg args[] = {CLS_INOUT(a), CLS_OUT(b)}; /* a is const in copy_k */
  ct_launch1(ctx, 0, copy_k, 16, 2, args);
  ct_expect_ints(ctx, 0, b, 16, 7);
}
END_TEST

/* CLS_ARG takes the signature's access: copy_k(const a, b) reads a and
 * writes b.  Seen through a failure: the launch's enqueue fails, so what it
 * writes is tainted and what it reads is not. */
START_TEST(F11_cls_arg_infers_read_for_const_and_write_otherwise) {
  cls_context *c = ct_context_with("enqueue:kernel=copy_k", NULL, NULL);
  cls_kernel *k = ct_kernel(c, CT_COPY_SRC, "copy_k");
  cls_buffer a = ct_written(c, 0, 16, 7), b = ct_written(c, 1, 16, 0);
  cls_arg args[] = {CLS_ARG(a), CLS_ARG(b)};
  size_t g[1] = {16};
  int rc = cls_launch(c, 0, k, 1, g, NULL, 2, args);
  ck_assert_msg(rc == CLS_ELAUNCH || rc == CLS_OK, "launch: %s", cls_err_name(rc));
  CT_OK(cls_sync(c, NULL));
  ct_expect_ints(c, 1, a, 16, 7);
  int got[4];
  CT_ERR(cls_download(c, 1, b, 0, got, sizeof got, NULL), CLS_ETAINTED);
  cls_context_destroy(c);
}
END_TEST

/* Messages keep their fix: with a kernel and an argument named with 60
 * characters each, the F11 refusal's whole fix ("declare it CLS_INOUT or
 * CLS_OUT, or CLS_ARG to take the access from the signature") survives in
 * the detail, in the failure's log line, in the record and in the text of
 * the report of a read of the buffer. */
#define LONG_KERNEL "increment_every_element_of_the_buffer_in_place_kernel_k_0123"
#define LONG_ARG "the_buffer_every_element_of_which_this_kernel_increments_012"
#define FIX_TEXT                                                                          \
  "declare it CLS_INOUT or CLS_OUT, or CLS_ARG to take the access from the signature"

struct log_lines {
  int n;
  char last[4096];
};
static void keep_log(void *user, int level, const char *message) {
  struct log_lines *l = user;
  if (level == CLS_LOG_ERRORS) {
    l->n++;
    snprintf(l->last, sizeof l->last, "%s", message);
  }
}

START_TEST(messages_keep_their_fix_with_long_kernel_and_argument_names) {
  ck_assert_uint_eq(strlen(LONG_KERNEL), 60);
  ck_assert_uint_eq(strlen(LONG_ARG), 60);
  cls_kernel *k = ct_kernel(ctx,
                            "kernel void " LONG_KERNEL "(global int *" LONG_ARG ") {\n"
                            "  " LONG_ARG "[get_global_id(0)] += 1;\n"
                            "}\n",
                            LONG_KERNEL);
  struct log_lines log = {0};
  CT_OK(cls_set_logger(ctx, CLS_LOG_ERRORS, keep_log, &log));
  cls_buffer x = ct_written(ctx, 0, 16, 1);
  size_t g[1] = {16};
  int rc = cls_launch(ctx, 0, k, 1, g, NULL, 1, (cls_arg[]){CLS_IN(x)});
  ck_assert_msg(rc == CLS_EACCESS, "CLS_IN of a written argument: %s", cls_err_name(rc));
  const char *d = cls_last_error_detail();
  ck_assert_msg(strstr(d, FIX_TEXT) && strstr(d, LONG_KERNEL) && strstr(d, LONG_ARG),
                "the detail (%zu characters) lost its fix: %s", strlen(d), d);
  ck_assert_int_eq(log.n, 1);
  ck_assert_msg(strstr(log.last, FIX_TEXT), "the log line (%zu characters) lost its fix: %s",
                strlen(log.last), log.last);
  int got[4];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 0, x, 0, got, sizeof got, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  d = cls_last_error_detail();
  ck_assert_msg(strstr(d, FIX_TEXT), "the read's detail lost the fix: %s", d);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_msg(strstr(fi.message, FIX_TEXT), "the record lost its fix: %s", fi.message);
  const char *text = cls_report_text(r);
  ck_assert_msg(strstr(text, FIX_TEXT), "the report lost its fix: %s", text);
  cls_report_free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Work sizes that cannot be a launch                                  */
/* ------------------------------------------------------------------ */

START_TEST(work_size_product_overflow_is_eworksize_and_never_a_write) {
  cls_buffer o = ct_written(ctx, 0, 16, 5);
  int v = 1;
  cls_arg a[] = {CLS_OUT(o), CLS_SCALAR(v)};
  size_t g2[2] = {(size_t)1 << 32, (size_t)1 << 32};
  CT_ERR(cls_launch(ctx, 0, fill_k, 2, g2, NULL, 2, a), CLS_EWORKSIZE);
  ck_assert_msg(strstr(cls_last_error_detail(), "dimension 1"), "detail: %s",
                cls_last_error_detail());
  ct_expect_refused(ctx, 0, o, CLS_EWORKSIZE, "launch", "fill_k");
  size_t g3[3] = {SIZE_MAX, 2, 2}, l3[3] = {1, 2, 2};
  CT_ERR(cls_launch(ctx, 0, fill_k, 3, g3, l3, 2, a), CLS_EWORKSIZE);
  size_t g4[2] = {(size_t)1 << 40, (size_t)1 << 40};
  CT_ERR(cls_launch(ctx, 0, fill_k, 2, g4, NULL, 2, a), CLS_EWORKSIZE);
  ct_expect_refused(ctx, 0, o, CLS_EWORKSIZE, "launch", "fill_k");
  CT_OK(cls_sync(ctx, NULL)); /* nothing reached the runtime to abort in */
  ct_assert_context_works(ctx, fill_k, 0);
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("refusal");
#define ADD(fn) CT_ADD_FIXTURE(s, fn, setup, teardown)
  ADD(F12_invalid_kernel_handle_taints_the_outputs);
  ADD(F12_work_size_refusal_names_the_call_and_the_reason);
  ADD(F12_argument_count_and_kind_refusals_taint_declared_outputs);
  ADD(F12_upload_copy_and_fill_refusals_taint_the_destination);
  ADD(F12_an_invalid_destination_gets_nothing_and_nothing_else_changes);
  ADD(F12_a_refusal_travels_by_F2_across_streams);
  ADD(F11_read_binding_of_a_written_argument_is_eaccess);
  ADD(F11_declaring_more_access_than_the_kernel_uses_is_allowed);
  ADD(F11_cls_arg_infers_read_for_const_and_write_otherwise);
  ADD(messages_keep_their_fix_with_long_kernel_and_argument_names);
  ADD(work_size_product_overflow_is_eworksize_and_never_a_write);
#undef ADD
  return ct_run(s);
}
