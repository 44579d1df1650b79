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

/* A count no array can have: the refusal reads nothing of `args` (it used
 * to size a copy of them as nargs * 24, which wraps: SIZE_MAX asked for
 * 2^64 - 24 bytes and walked 32 arguments when that failed, SIZE_MAX / 24
 * + 1 got 8 bytes and wrote past them). */
START_TEST(F12_argument_count_past_any_array_reads_no_argument) {
  cls_buffer o = ct_written(ctx, 0, 16, 7);
  size_t g[1] = {16};
  cls_arg a[CLS_MAX_ARGS];
  for (size_t i = 0; i < CLS_MAX_ARGS; i++)
    a[i] = CLS_OUT(o);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, SIZE_MAX, a), CLS_EARGCOUNT);
  ck_assert_msg(strstr(cls_last_error_detail(), "takes 2 arguments"), "%s",
                cls_last_error_detail());
  ct_expect_ints(ctx, 0, o, 16, 7); /* nothing of `a` was taken as a write */
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, SIZE_MAX / 24 + 1, a), CLS_EARGCOUNT);
  ct_expect_ints(ctx, 0, o, 16, 7);
  /* A count an array can have still walks it (F12). */
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 3, a), CLS_EARGCOUNT);
  ct_expect_refused(ctx, 0, o, CLS_EARGCOUNT, "launch", "fill_k");
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

/* A kernel in the idiom of most published OpenCL code: its input is a
 * non-const __global pointer it only reads. */
#define NONCONST_SRC                                                          \
  "kernel void scale_k(global float *src, global float *dst, float k) {\n"   \
  "  size_t i = get_global_id(0);\n"                                          \
  "  dst[i] = src[i] * k;\n"                                                  \
  "}\n"

struct f11_log {
  int said;
  char line[1024];
};
static void on_f11_log(void *user, int level, const char *msg) {
  struct f11_log *l = user;
  (void)level;
  if (strstr(msg, "F11:")) {
    l->said++;
    snprintf(l->line, sizeof l->line, "%s", msg);
  }
}

/* F11: never stricter than the vendor.  Raw OpenCL runs a kernel whose
 * read-only input is not const, so clstream does too: the CLS_IN
 * declaration stands (ordered as a read), and the log says so once per
 * kernel and argument, with the fix. */
START_TEST(F11_read_binding_of_a_writable_argument_is_trusted_and_said_once) {
  struct f11_log l = {0};
  CT_OK(cls_set_logger(ctx, CLS_LOG_ERRORS, on_f11_log, &l));
  cls_program *p = ct_build(ctx, NONCONST_SRC, NULL);
  cls_kernel *k = ct_get_kernel(ctx, p, "scale_k");
  enum { N = 64 };
  float in[N], out[N];
  for (int i = 0; i < N; i++)
    in[i] = (float)i;
  cls_buffer src = ct_alloc(ctx, 0, sizeof in), dst = ct_alloc(ctx, 1, sizeof out);
  CT_OK(cls_upload(ctx, 0, src, 0, in, sizeof in));
  size_t g = N;
  float f = 2.5f;
  for (int rep = 0; rep < 3; rep++)
    CT_OK(cls_launch(ctx, 1, k, 1, &g, NULL, 3,
                     (cls_arg[]){CLS_IN(src), CLS_OUT(dst), CLS_SCALAR(f)}));
  CT_OK(cls_download(ctx, 1, dst, 0, out, sizeof out, NULL));
  for (int i = 0; i < N; i++)
    ck_assert_float_eq(out[i], in[i] * 2.5f);
  /* Said once for the three launches, naming kernel, argument and fix. */
  ck_assert_int_eq(l.said, 1);
  ck_assert_msg(strstr(l.line, "'scale_k'") && strstr(l.line, "argument 0") &&
                    strstr(l.line, "'src'") && strstr(l.line, "const") &&
                    strstr(l.line, "CLS_INOUT") && strstr(l.line, "CLS_GUARD=1"),
                "log: %s", l.line);
  /* A read binding stays a read: a failing consumer does not taint its
   * input (CLS_INOUT would have). */
  CT_OK(cls_download(ctx, 0, src, 0, out, sizeof out, NULL));
  CT_OK(cls_free(ctx, src));
  CT_OK(cls_free(ctx, dst));
}
END_TEST

/* F11, strict (the user's choice, CLS_STRICT=1 or the option): the
 * refusal is back, with the fix in the detail and a record (F12). */
START_TEST(F11_strict_refuses_a_read_binding_of_a_writable_argument) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .strict = 1};
  cls_context *sctx = ct_context_opts(&o);
  cls_program *p = ct_build(sctx, CT_INC_SRC, NULL);
  cls_kernel *k = ct_get_kernel(sctx, p, "inc_k");
  cls_buffer x = ct_written(sctx, 0, 16, 1);
  size_t g[1] = {16};
  int rc = cls_launch(sctx, 0, k, 1, g, NULL, 1, (cls_arg[]){CLS_IN(x)});
  if (rc == CLS_OK) /* PoCL, rusticl and oclgrind all give argument info */
    ck_abort_msg("strict: CLS_IN on inc_k's non-const x was accepted: no argument info?");
  ck_assert_int_eq(rc, CLS_EACCESS);
  const char *d = cls_last_error_detail();
  ck_assert_msg(strstr(d, "inc_k") && strstr(d, "argument 0") && strstr(d, "'x'") &&
                    strstr(d, "declare it CLS_INOUT, or const"),
                "detail: %s", d);
  ct_expect_refused(sctx, 0, x, CLS_EACCESS, "launch", "inc_k");
  /* The right declarations run. */
  CT_OK(cls_fill(sctx, 0, x, 0, 64, &(int){1}, sizeof(int)));
  ct_launch1(sctx, 0, k, 16, 1, (cls_arg[]){CLS_INOUT(x)});
  ct_launch1(sctx, 0, k, 16, 1, (cls_arg[]){CLS_ARG(x)});
  ct_expect_ints(sctx, 0, x, 16, 3);
  cls_context_destroy(sctx);
  /* The environment says the same; anything but 0 or 1 is a config error. */
  setenv("CLS_STRICT", "1", 1);
  sctx = ct_context();
  p = ct_build(sctx, CT_INC_SRC, NULL);
  k = ct_get_kernel(sctx, p, "inc_k");
  x = ct_written(sctx, 0, 16, 1);
  CT_ERR(cls_launch(sctx, 0, k, 1, g, NULL, 1, (cls_arg[]){CLS_IN(x)}), CLS_EACCESS);
  cls_context_destroy(sctx);
  setenv("CLS_STRICT", "yes", 1);
  cls_context *bad = NULL;
  CT_ERR(cls_context_create(&bad, NULL), CLS_ECONFIG);
  ck_assert_ptr_null(bad);
  unsetenv("CLS_STRICT");
}
END_TEST

/* F11 is about a buffer a launch may write but declares it only reads.
 * One buffer given as destination and source (the vendor samples'
 * in-place calls: CLS_OUT(b) and CLS_IN(b) in one launch) is declared
 * written: strict mode runs it, the log says nothing of it, and the same
 * argument bound CLS_IN alone is still refused (strict) or said (not). */
#define INPLACE_SRC                                                           \
  "kernel void merge_k(global int *dst, global int *src) {\n"                 \
  "  size_t i = get_global_id(0);\n"                                          \
  "  dst[i] = src[i] * 2;\n"                                                  \
  "}\n"

START_TEST(F11_a_buffer_the_launch_also_declares_written_is_not_refused) {
  for (int strict = 1; strict >= 0; strict--) {
    struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                    .strict = strict ? 1 : -1};
    cls_context *sctx = ct_context_opts(&o);
    struct f11_log l = {0};
    CT_OK(cls_set_logger(sctx, CLS_LOG_ERRORS, on_f11_log, &l));
    cls_program *p = ct_build(sctx, INPLACE_SRC, NULL);
    cls_kernel *k = ct_get_kernel(sctx, p, "merge_k");
    cls_buffer b = ct_written(sctx, 0, 16, 3), c = ct_written(sctx, 1, 16, 5);
    size_t g[1] = {16};
    for (int rep = 0; rep < 2; rep++) {
      CT_OK(cls_launch(sctx, 0, k, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(b), CLS_IN(b)}));
      CT_OK(cls_launch(sctx, 0, k, 1, g, NULL, 2, (cls_arg[]){CLS_INOUT(b), CLS_IN(b)}));
      CT_OK(cls_launch(sctx, 0, k, 1, g, NULL, 2, (cls_arg[]){CLS_ARG(b), CLS_IN(b)}));
    }
    ct_expect_ints(sctx, 0, b, 16, 3 << 6);
    ck_assert_msg(l.said == 0, "strict %d: said of an in-place launch: %s", strict, l.line);
    /* The source alone, another buffer: F11 as ever. */
    int rc = cls_launch(sctx, 1, k, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(c), CLS_IN(b)});
    if (strict) {
      ck_assert_int_eq(rc, CLS_EACCESS);
    } else {
      CT_OK(rc);
      ck_assert_int_eq(l.said, 1);
      ck_assert_msg(strstr(l.line, "argument 1 ('src')"), "log: %s", l.line);
    }
    cls_context_destroy(sctx);
  }
}
END_TEST

/* ------------------------------------------------------------------ */
/* F11a, typed scalars                                                 */
/* ------------------------------------------------------------------ */

#define TYPED_SRC                                                             \
  "kernel void scale(global float *x, float k) {\n"                           \
  "  x[get_global_id(0)] *= k;\n"                                             \
  "}\n"                                                                       \
  "kernel void count(global uint *x, uint n, long big, float4 v) {\n"         \
  "  x[get_global_id(0)] = n + (uint)big + (uint)v.w;\n"                      \
  "}\n"

/* The new user's mistake: an int where the kernel takes a float runs
 * silently as raw OpenCL (same size) and gives garbage; typed, it is
 * refused with both types named, and the output carries the refusal. */
START_TEST(F11a_typed_scalar_of_another_type_is_refused_naming_both) {
  cls_program *p = ct_build(ctx, TYPED_SRC, NULL);
  cls_kernel *scale = ct_get_kernel(ctx, p, "scale");
  float ones[16];
  for (int i = 0; i < 16; i++)
    ones[i] = 1.0f;
  cls_buffer x = ct_alloc(ctx, 0, sizeof ones);
  CT_OK(cls_upload(ctx, 0, x, 0, ones, sizeof ones));
  size_t g = 16;
  int n = 3;
  int rc = cls_launch(ctx, 0, scale, 1, &g, NULL, 2, (cls_arg[]){CLS_INOUT(x), CLS_TYPED(n)});
  ck_assert_int_eq(rc, CLS_EARGKIND);
  const char *d = cls_last_error_detail();
  ck_assert_msg(strstr(d, "kernel 'scale' argument 1 ('k') is float, an int was given"),
                "detail: %s", d);
  ct_expect_refused(ctx, 0, x, CLS_EARGKIND, "launch", "scale");
  /* Typed right, it runs; untyped, the size alone is checked, as raw
   * OpenCL does (the int's bits are read as a float). */
  CT_OK(cls_upload(ctx, 0, x, 0, ones, sizeof ones));
  float k = 3.0f;
  CT_OK(cls_launch(ctx, 0, scale, 1, &g, NULL, 2, (cls_arg[]){CLS_INOUT(x), CLS_TYPED(k)}));
  float got[16];
  CT_OK(cls_download(ctx, 0, x, 0, got, sizeof got, NULL));
  ck_assert_float_eq(got[5], 3.0f);
  CT_OK(cls_launch(ctx, 0, scale, 1, &g, NULL, 2, (cls_arg[]){CLS_INOUT(x), CLS_SCALAR(n)}));
  CT_OK(cls_free(ctx, x));
}
END_TEST

START_TEST(F11a_signedness_and_vectors) {
  cls_program *p = ct_build(ctx, TYPED_SRC, NULL);
  cls_kernel *count = ct_get_kernel(ctx, p, "count");
  cls_buffer x = ct_alloc(ctx, 0, 16 * sizeof(unsigned));
  size_t g = 16;
  int n = 5; /* an int for a uint: the bits C's conversion gives, accepted */
  long big = 10;
  struct { float v[4]; } v4 = {{0, 0, 0, 7}}, *vp = &v4;
  struct { float v[2]; } v2 = {{0, 0}};
  cls_arg ok[] = {CLS_OUT(x), CLS_TYPED(n), CLS_TYPED(big),
                  CLS_SCALAR_AS(CLS_TYPE_VEC(CLS_TYPE_FLOAT, 4), *vp)};
  CT_OK(cls_launch(ctx, 0, count, 1, &g, NULL, 4, ok));
  ct_expect_ints(ctx, 0, x, 16, 22);
  /* float3 is stored as float4: accepted for a float4 argument. */
  ok[3] = CLS_SCALAR_AS(CLS_TYPE_VEC(CLS_TYPE_FLOAT, 3), *vp);
  CT_OK(cls_launch(ctx, 0, count, 1, &g, NULL, 4, ok));
  /* Another width, or an int vector, is another type. */
  ok[3] = CLS_SCALAR_AS(CLS_TYPE_VEC(CLS_TYPE_FLOAT, 2), v2);
  CT_ERR(cls_launch(ctx, 0, count, 1, &g, NULL, 4, ok), CLS_EARGKIND);
  ck_assert_msg(strstr(cls_last_error_detail(), "is float4, a float2 was given"), "detail: %s",
                cls_last_error_detail());
  ok[3] = CLS_SCALAR_AS(CLS_TYPE_VEC(CLS_TYPE_INT, 4), *vp);
  CT_ERR(cls_launch(ctx, 0, count, 1, &g, NULL, 4, ok), CLS_EARGKIND);
  ck_assert_msg(strstr(cls_last_error_detail(), "is float4, an int4 was given"), "detail: %s",
                cls_last_error_detail());
  /* A long is not an int, whatever the signs. */
  ok[3] = CLS_SCALAR_AS(CLS_TYPE_VEC(CLS_TYPE_FLOAT, 4), *vp);
  ok[2] = CLS_TYPED(n);
  CT_ERR(cls_launch(ctx, 0, count, 1, &g, NULL, 4, ok), CLS_EARGKIND);
  ck_assert_msg(strstr(cls_last_error_detail(), "('big') is long, an int was given"),
                "detail: %s", cls_last_error_detail());
  /* A type whose size is not the value's, or no type at all, is bad input. */
  double dbl = 1;
  ok[2] = CLS_SCALAR_AS(CLS_TYPE_LONG, n);
  CT_ERR(cls_launch(ctx, 0, count, 1, &g, NULL, 4, ok), CLS_EINVAL);
  ok[2] = CLS_SCALAR_AS(99, dbl);
  CT_ERR(cls_launch(ctx, 0, count, 1, &g, NULL, 4, ok), CLS_EINVAL);
  CT_OK(cls_free(ctx, x));
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
 * characters each, the F11 refusal's whole fix (strict mode) survives in
 * the detail, in the failure's log line, in the record and in the text of
 * the report of a read of the buffer; and outside strict mode, the log
 * line that says the declaration is trusted keeps its fix too. */
#define LONG_KERNEL "increment_every_element_of_the_buffer_in_place_kernel_k_0123"
#define LONG_ARG "the_buffer_every_element_of_which_this_kernel_increments_012"
#define FIX_TEXT "declare it CLS_INOUT, or const in the kernel (CLS_ARG infers)"
#define HINT_FIX_TEXT "make it const in the kernel; if it writes it, declare it CLS_INOUT"

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

#define LONG_SRC                                                                          \
  "kernel void " LONG_KERNEL "(global int *" LONG_ARG ") {\n"                                \
  "  " LONG_ARG "[get_global_id(0)] += 1;\n"                                                 \
  "}\n"

START_TEST(messages_keep_their_fix_with_long_kernel_and_argument_names) {
  ck_assert_uint_eq(strlen(LONG_KERNEL), 60);
  ck_assert_uint_eq(strlen(LONG_ARG), 60);
  size_t g[1] = {16};
  struct log_lines log = {0};
  /* Not strict: trusted, and the log line says so with the fix. */
  cls_kernel *k = ct_kernel(ctx, LONG_SRC, LONG_KERNEL);
  CT_OK(cls_set_logger(ctx, CLS_LOG_ERRORS, keep_log, &log));
  cls_buffer x = ct_written(ctx, 0, 16, 1);
  CT_OK(cls_launch(ctx, 0, k, 1, g, NULL, 1, (cls_arg[]){CLS_IN(x)}));
  ck_assert_int_eq(log.n, 1);
  ck_assert_msg(strstr(log.last, HINT_FIX_TEXT) && strstr(log.last, LONG_KERNEL) &&
                    strstr(log.last, LONG_ARG),
                "the F11 log line (%zu characters) lost its fix: %s", strlen(log.last), log.last);
  cls_context_destroy(ctx);
  /* Strict: refused; every text keeps the fix (teardown destroys ctx). */
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .strict = 1};
  ctx = ct_context_opts(&o);
  k = ct_kernel(ctx, LONG_SRC, LONG_KERNEL);
  log.n = 0;
  CT_OK(cls_set_logger(ctx, CLS_LOG_ERRORS, keep_log, &log));
  x = ct_written(ctx, 0, 16, 1);
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
  ADD(F11_read_binding_of_a_writable_argument_is_trusted_and_said_once);
  ADD(F11_strict_refuses_a_read_binding_of_a_writable_argument);
  ADD(F11_a_buffer_the_launch_also_declares_written_is_not_refused);
  ADD(F11a_typed_scalar_of_another_type_is_refused_naming_both);
  ADD(F11a_signedness_and_vectors);
  ADD(F12_argument_count_past_any_array_reads_no_argument);
  ADD(F11_declaring_more_access_than_the_kernel_uses_is_allowed);
  ADD(F11_cls_arg_infers_read_for_const_and_write_otherwise);
  ADD(messages_keep_their_fix_with_long_kernel_and_argument_names);
  ADD(work_size_product_overflow_is_eworksize_and_never_a_write);
#undef ADD
  return ct_run(s);
}
