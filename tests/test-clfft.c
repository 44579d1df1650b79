/* clFFT's transform inside a foreign command (cls_foreign), between two of
 * the program's own kernels on other streams: a signal made on stream 0,
 * its FFT on stream 1, its power spectrum on stream 2, verified against a
 * DFT on the host.  clFFT takes memory objects and no offsets, so the
 * callback makes a sub-buffer of each declared buffer (its offset is
 * aligned to the device's CL_DEVICE_MEM_BASE_ADDR_ALIGN, docs/design.md
 * "Foreign commands") and lets go of it after the enqueue (the enqueued
 * work keeps it).  Then: under guard mode, the transform writes only its
 * output, and all of it; a fault in the producer skips the transform (its
 * callback never called) and the read names the producer, the
 * transform's label on the skip chain; a transform clFFT refuses (a plan
 * already destroyed: a status of clFFT's own, not OpenCL's) taints what
 * it was to write and skips the power spectrum.  Built where configure
 * found clFFT; run under every driver setting. */
#include "common.h"

#include <math.h>

#include <clstream/cl.h>

#include <clFFT.h>

enum { N = 256, BATCH = 2 };

/* Under AddressSanitizer (CI's build-asan): clFFT 2.12 deletes an action
 * through a base pointer of another size (new-delete-type-mismatch, in
 * selectAction, libclFFT.so), a bug of its own that ASan cannot suppress
 * by library.  This program is C and has no new or delete of its own, so
 * the check is off for it alone; everything else stays on ($ASAN_OPTIONS
 * still applies on top of this). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "new_delete_type_mismatch=0"; }

#define FFT_SRC                                                                           \
  "kernel void make_signal(global float2 *x) {\n"                                         \
  "  int i = get_global_id(0);\n"                                                         \
  "  x[i] = (float2)((float)((i * 7) % 13) - 6.0f, (float)(i % 5) - 2.0f);\n"             \
  "}\n"                                                                                   \
  "kernel void power(global const float2 *f, global float *p) {\n"                        \
  "  int i = get_global_id(0);\n"                                                         \
  "  p[i] = f[i].x * f[i].x + f[i].y * f[i].y;\n"                                         \
  "}\n"

/* What the callback needs: the plan, and what it saw. */
struct fft {
  clfftPlanHandle plan;
  int calls;
  clfftStatus status; /* clFFT's own status, which may not be OpenCL's */
};

/* A memory object that starts at buffer b's first byte: clFFT takes no
 * offset. */
static cl_mem whole(const struct cls_foreign_buffer *b, cl_int *rc) {
  cl_buffer_region region = {b->offset, b->size};
  cl_mem_flags flags = b->access == CLS_READ ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE;
  return clCreateSubBuffer(b->mem, flags, CL_BUFFER_CREATE_TYPE_REGION, &region, rc);
}

static cl_int transform(const struct cls_foreign_call *call, cl_event *last) {
  struct fft *f = call->data;
  f->calls++;
  cl_int rc;
  cl_mem in = whole(&call->buffers[0], &rc);
  if (!in)
    return rc;
  cl_mem out = whole(&call->buffers[1], &rc);
  if (!out) {
    clReleaseMemObject(in);
    return rc;
  }
  cl_command_queue q = call->queue;
  /* The wait list is ordered by clstream's barrier already; a library
   * that takes one may be given it too. */
  f->status = clfftEnqueueTransform(f->plan, CLFFT_FORWARD, 1, &q, call->nwait, call->wait, last,
                                    &in, &out, NULL);
  clReleaseMemObject(out);
  clReleaseMemObject(in);
  /* clFFT's own statuses are positive (clstream counts the command
   * failed, CLS_FOREIGN_BAD_STATUS); its OpenCL ones pass on as they
   * are.  f->status keeps the library's code for the program. */
  return (cl_int)f->status;
}

/* A forward, out-of-place, single-precision plan of BATCH transforms of N
 * complex values for the context's OpenCL context, baked on stream 1's
 * queue. */
static clfftPlanHandle make_plan(cls_context *ctx) {
  cl_command_queue q;
  CT_OK(cls_stream_queue(ctx, 1, &q));
  cl_context cx;
  ck_assert_int_eq(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof cx, &cx, NULL), CL_SUCCESS);
  clfftPlanHandle plan;
  size_t len[1] = {N};
  ck_assert_int_eq(clfftCreateDefaultPlan(&plan, cx, CLFFT_1D, len), CLFFT_SUCCESS);
  ck_assert_int_eq(clfftSetPlanPrecision(plan, CLFFT_SINGLE), CLFFT_SUCCESS);
  ck_assert_int_eq(clfftSetLayout(plan, CLFFT_COMPLEX_INTERLEAVED, CLFFT_COMPLEX_INTERLEAVED),
                   CLFFT_SUCCESS);
  ck_assert_int_eq(clfftSetResultLocation(plan, CLFFT_OUTOFPLACE), CLFFT_SUCCESS);
  ck_assert_int_eq(clfftSetPlanBatchSize(plan, BATCH), CLFFT_SUCCESS);
  size_t dist = N;
  ck_assert_int_eq(clfftSetPlanDistance(plan, dist, dist), CLFFT_SUCCESS);
  ck_assert_int_eq(clfftBakePlan(plan, 1, &q, NULL, NULL), CLFFT_SUCCESS);
  return plan;
}

static void setup(void) {
  clfftSetupData sd = {clfftVersionMajor, clfftVersionMinor, clfftVersionPatch, 0};
  ck_assert_int_eq(clfftSetup(&sd), CLFFT_SUCCESS);
}

/* The pipeline, a small buffer allocated between the transform's input
 * and output (they share their page with other buffers); the download of
 * the power spectrum into p, its status returned. */
static int pipeline(cls_context *ctx, struct fft *f, float *p, cls_report **r) {
  cls_kernel *make = ct_kernel(ctx, FFT_SRC, "make_signal");
  cls_kernel *power = ct_kernel(ctx, FFT_SRC, "power");
  cls_buffer x = ct_alloc(ctx, 0, N * BATCH * 2 * sizeof(float));
  cls_buffer gap = ct_alloc(ctx, 0, 64);
  cls_buffer fx = ct_alloc(ctx, 0, N * BATCH * 2 * sizeof(float));
  cls_buffer pw = ct_alloc(ctx, 2, N * BATCH * sizeof(float));
  (void)gap;
  size_t g[1] = {N * BATCH};
  int rc = cls_launch(ctx, 0, make, 1, g, NULL, 1, (cls_arg[]){CLS_OUT(x)});
  ck_assert_int_le(rc, 0);
  rc = cls_foreign(ctx, 1, "clfft", transform, f, 2, (cls_arg[]){CLS_IN(x), CLS_OUT(fx)});
  ck_assert_int_le(rc, 0);
  rc = cls_launch(ctx, 2, power, 1, g, NULL, 2, (cls_arg[]){CLS_IN(fx), CLS_OUT(pw)});
  ck_assert_int_le(rc, 0);
  return cls_download(ctx, 2, pw, 0, p, N * BATCH * sizeof(float), r);
}

/* The power spectrum against a DFT in double on the host. */
static void check_spectrum(const float *p) {
  static double re[N * BATCH], im[N * BATCH];
  for (int i = 0; i < N * BATCH; i++) {
    re[i] = (double)((i * 7) % 13) - 6.0;
    im[i] = (double)(i % 5) - 2.0;
  }
  for (int b = 0; b < BATCH; b++)
    for (int k = 0; k < N; k++) {
      double sr = 0, si = 0;
      for (int n = 0; n < N; n++) {
        double a = -2.0 * M_PI * (double)k * (double)n / N;
        sr += re[b * N + n] * cos(a) - im[b * N + n] * sin(a);
        si += re[b * N + n] * sin(a) + im[b * N + n] * cos(a);
      }
      double want = sr * sr + si * si;
      float got = p[b * N + k];
      ck_assert_msg(fabs(got - want) <= 1e-3 * (1.0 + want) + 1e-2,
                    "power[%d][%d] = %g, host %g", b, k, got, want);
    }
}

static void run_and_check(cls_context *ctx) {
  static float p[N * BATCH];
  struct fft f = {.plan = make_plan(ctx)};
  for (int round = 0; round < 2; round++) { /* the plan again, as programs do */
    memset(p, 0, sizeof p);
    int rc = pipeline(ctx, &f, p, NULL);
    ck_assert_msg(rc == 0, "download: %s: %s", cls_err_name(rc), cls_last_error_detail());
    ck_assert_int_eq(f.calls, round + 1);
    ck_assert_int_eq(f.status, CLFFT_SUCCESS);
    check_spectrum(p);
  }
  CT_OK(cls_sync(ctx, NULL));
  ck_assert_int_eq(clfftDestroyPlan(&f.plan), CLFFT_SUCCESS);
}

START_TEST(clfft_between_own_kernels_matches_the_host) {
  setup();
  cls_context *ctx = ct_context();
  run_and_check(ctx);
  cls_context_destroy(ctx);
  clfftTeardown();
}
END_TEST

/* Guard mode checks what a foreign command writes as a launch's (bytes
 * outside its buffers, a CLS_OUT left partly unwritten): the sub-buffers
 * reach exactly the declared buffers. */
START_TEST(F11_under_guard_mode_the_transform_writes_its_output_only) {
  setup();
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .guard = 1};
  cls_context *ctx = ct_context_opts(&o);
  run_and_check(ctx);
  cls_context_destroy(ctx);
  clfftTeardown();
}
END_TEST

START_TEST(F2_fault_in_the_producer_skips_the_transform_and_the_read_names_it) {
  setup();
  cls_context *ctx = ct_context_with("enqueue:kernel=make_signal", NULL, NULL);
  static float p[N * BATCH];
  struct fft f = {.plan = make_plan(ctx)};
  cls_report *r = NULL;
  int rc = pipeline(ctx, &f, p, &r);
  ck_assert_msg(rc == CLS_ETAINTED, "download: %s", cls_err_name(rc));
  cls_sync(ctx, NULL);
  ck_assert_int_eq(f.calls, 0);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  ck_assert_str_eq(ct_failure(r, 0).kernel, "make_signal");
  ck_assert_msg(ct_chain_names(r, "clfft") && ct_chain_names(r, "power"), "skip chain: %s",
                cls_report_text(r));
  cls_report_free(r);
  ck_assert_int_eq(clfftDestroyPlan(&f.plan), CLFFT_SUCCESS);
  cls_context_destroy(ctx);
  clfftTeardown();
}
END_TEST

/* clFFT refuses a plan it no longer has with a status of its own (a
 * positive one): the command fails with CLS_FOREIGN_BAD_STATUS, its
 * output carries it, the power spectrum behind it is skipped, and the
 * callback's data keeps clFFT's code. */
START_TEST(F3_a_transform_clfft_refuses_taints_its_output) {
  setup();
  cls_context *ctx = ct_context();
  static float p[N * BATCH];
  struct fft f = {.plan = make_plan(ctx)};
  clfftPlanHandle gone = f.plan;
  ck_assert_int_eq(clfftDestroyPlan(&f.plan), CLFFT_SUCCESS);
  f.plan = gone;
  cls_report *r = NULL;
  int rc = pipeline(ctx, &f, p, &r);
  ck_assert_msg(rc == CLS_ETAINTED, "download: %s", cls_err_name(rc));
  ck_assert_int_eq(f.calls, 1);
  ck_assert_int_eq(f.status, CLFFT_INVALID_PLAN);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info fi = ct_failure(r, 0);
  ck_assert_str_eq(fi.kernel, "clfft");
  ck_assert_int_eq(fi.cl_status, CLS_FOREIGN_BAD_STATUS);
  ck_assert_msg(ct_chain_names(r, "power"), "skip chain: %s", cls_report_text(r));
  cls_report_free(r);
  cls_context_destroy(ctx);
  clfftTeardown();
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("clfft");
  CT_ADD(s, clfft_between_own_kernels_matches_the_host);
  CT_ADD(s, F11_under_guard_mode_the_transform_writes_its_output_only);
  CT_ADD(s, F2_fault_in_the_producer_skips_the_transform_and_the_read_names_it);
  CT_ADD(s, F3_a_transform_clfft_refuses_taints_its_output);
  return ct_run(s);
}
