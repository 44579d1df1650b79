/* CLBlast's SGEMM inside a foreign command (cls_foreign), between two of
 * the program's own kernels on other streams: producer on stream 0, GEMM
 * on stream 1, consumer on stream 2, verified against a host GEMM; and
 * with a fault injected into the producer, the GEMM is skipped (its
 * callback never called) and the final read names the producer, with the
 * GEMM's label on the skip chain.  Built where configure found CLBlast;
 * run under every driver setting. */
#include "common.h"

#include <math.h>

#include <clstream/cl.h>

#include <clblast_c.h>

enum { M = 64, NN = 48, K = 32 };

#define GEMM_SRC                                                       \
  "kernel void make_ab(global float *a, global float *b) {\n"          \
  "  int i = get_global_id(0);\n"                                      \
  "  if (i < 64 * 32) a[i] = (float)(i % 7) - 3.0f;\n"                 \
  "  if (i < 32 * 48) b[i] = (float)(i % 5) * 0.5f;\n"                 \
  "}\n"                                                                \
  "kernel void twice(global const float *c, global float *d) {\n"      \
  "  int i = get_global_id(0);\n"                                      \
  "  d[i] = 2.0f * c[i];\n"                                            \
  "}\n"

static cl_int sgemm(const struct cls_foreign_call *call, cl_event *last) {
  const struct cls_foreign_buffer *a = &call->buffers[0], *b = &call->buffers[1],
                                  *c = &call->buffers[2];
  cl_command_queue q = call->queue;
  ++*(int *)call->data;
  return (cl_int)CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, M,
                              NN, K, 1.0f, a->mem, a->offset / sizeof(float), K, b->mem,
                              b->offset / sizeof(float), NN, 0.0f, c->mem,
                              c->offset / sizeof(float), NN, &q, last);
}

/* The pipeline; the download of D into d, its status returned. */
static int pipeline(cls_context *ctx, int *calls, float *d_host, cls_report **r) {
  cls_kernel *make_ab = ct_kernel(ctx, GEMM_SRC, "make_ab");
  cls_kernel *twice = ct_kernel(ctx, GEMM_SRC, "twice");
  cls_buffer a = ct_alloc(ctx, 0, M * K * sizeof(float));
  cls_buffer b = ct_alloc(ctx, 0, K * NN * sizeof(float));
  cls_buffer c = ct_alloc(ctx, 1, M * NN * sizeof(float));
  cls_buffer d = ct_alloc(ctx, 2, M * NN * sizeof(float));
  size_t g_ab[1] = {M * K}, g_d[1] = {M * NN};
  int rc = cls_launch(ctx, 0, make_ab, 1, g_ab, NULL, 2, (cls_arg[]){CLS_OUT(a), CLS_OUT(b)});
  ck_assert_int_le(rc, 0);
  rc = cls_foreign(ctx, 1, "sgemm", sgemm, calls, 3,
                   (cls_arg[]){CLS_IN(a), CLS_IN(b), CLS_OUT(c)});
  ck_assert_int_le(rc, 0);
  rc = cls_launch(ctx, 2, twice, 1, g_d, NULL, 2, (cls_arg[]){CLS_IN(c), CLS_OUT(d)});
  ck_assert_int_le(rc, 0);
  return cls_download(ctx, 2, d, 0, d_host, M * NN * sizeof(float), r);
}

START_TEST(clblast_sgemm_between_own_kernels_matches_the_host) {
  cls_context *ctx = ct_context();
  static float d[M * NN], ha[M * K], hb[K * NN];
  int calls = 0;
  int rc = pipeline(ctx, &calls, d, NULL);
  ck_assert_msg(rc == 0, "download: %s: %s", cls_err_name(rc), cls_last_error_detail());
  ck_assert_int_eq(calls, 1);
  for (int i = 0; i < M * K; i++)
    ha[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < K * NN; i++)
    hb[i] = (float)(i % 5) * 0.5f;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < NN; j++) {
      float s = 0;
      for (int k = 0; k < K; k++)
        s += ha[i * K + k] * hb[k * NN + j];
      ck_assert_msg(fabsf(d[i * NN + j] - 2.0f * s) <= 1e-3f * (1.0f + fabsf(2.0f * s)),
                    "D[%d][%d] = %g, host %g", i, j, d[i * NN + j], 2.0f * s);
    }
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(F2_fault_in_the_producer_skips_the_gemm_and_the_read_names_it) {
  cls_context *ctx = ct_context_with("enqueue:kernel=make_ab", NULL, NULL);
  static float d[M * NN];
  int calls = 0;
  cls_report *r = NULL;
  int rc = pipeline(ctx, &calls, d, &r);
  ck_assert_msg(rc == CLS_ETAINTED, "download: %s", cls_err_name(rc));
  cls_sync(ctx, NULL);
  ck_assert_int_eq(calls, 0);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  ck_assert_str_eq(ct_failure(r, 0).kernel, "make_ab");
  ck_assert_msg(ct_chain_names(r, "sgemm") && ct_chain_names(r, "twice"), "skip chain: %s",
                cls_report_text(r));
  cls_report_free(r);
  cls_context_destroy(ctx);
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("clblast");
  CT_ADD(s, clblast_sgemm_between_own_kernels_matches_the_host);
  CT_ADD(s, F2_fault_in_the_producer_skips_the_gemm_and_the_read_names_it);
  return ct_run(s);
}
