/* A foreign command: CLBlast's SGEMM on a clstream stream, between two of
 * the program's own kernels on other streams.
 *
 *   stream 0: make_ab   fills A (M x K) and B (K x N)
 *   stream 1: sgemm     C = A B, through CLBlastSgemm inside cls_foreign()
 *   stream 2: twice     D = 2 C
 *
 * clstream orders the GEMM after make_ab and twice after the GEMM (the
 * buffers say so), and keeps the failure rules across the library call:
 * run with CLS_FAULT=enqueue:kernel=make_ab and the GEMM is skipped (its
 * callback never called), and the download of D names make_ab, with
 * sgemm and twice on the skip chain.  Verified against a host GEMM.
 * Build: configure finds CLBlast (libclblast-dev). */
#include <clstream.h>
#include <clstream/cl.h>

#include <clblast_c.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { M = 64, N = 48, K = 32 };

static const char *src =
    "kernel void make_ab(global float *a, global float *b) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i < 64 * 32) a[i] = (float)(i % 7) - 3.0f;\n"
    "  if (i < 32 * 48) b[i] = (float)(i % 5) * 0.5f;\n"
    "}\n"
    "kernel void twice(global const float *c, global float *d) {\n"
    "  int i = get_global_id(0);\n"
    "  d[i] = 2.0f * c[i];\n"
    "}\n";

/* The foreign command's body: CLBlast enqueues on the stream's queue.
 * Offsets are CLBlast's, in elements. */
static cl_int sgemm(const struct cls_foreign_call *call, cl_event *last) {
  const struct cls_foreign_buffer *a = &call->buffers[0], *b = &call->buffers[1],
                                  *c = &call->buffers[2];
  cl_command_queue q = call->queue;
  int *calls = call->data;
  ++*calls;
  CLBlastStatusCode st = CLBlastSgemm(
      CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, M, N, K, 1.0f, a->mem,
      a->offset / sizeof(float), K, b->mem, b->offset / sizeof(float), N, 0.0f, c->mem,
      c->offset / sizeof(float), N, &q, last);
  return (cl_int)st; /* CLBlastSuccess is 0; its errors are negative */
}

int main(void) {
  cls_context *ctx = NULL;
  int rc = cls_context_create(&ctx, NULL);
  if (rc) {
    fprintf(stderr, "context: %s: %s\n", cls_strerror(rc), cls_last_error_detail());
    return rc == CLS_ENODEV ? 77 : 1;
  }
  cls_program *p = NULL;
  cls_kernel *make_ab = NULL, *twice = NULL;
  cls_buffer a, b, c, d;
  int calls = 0;
  static float host_d[M * N], want[M * N], ha[M * K], hb[K * N];
  if ((rc = cls_program_build(ctx, src, NULL, &p)) ||
      (rc = cls_kernel_get(ctx, p, "make_ab", &make_ab)) ||
      (rc = cls_kernel_get(ctx, p, "twice", &twice)) ||
      (rc = cls_alloc(ctx, 0, sizeof ha, &a)) || (rc = cls_alloc(ctx, 0, sizeof hb, &b)) ||
      (rc = cls_alloc(ctx, 1, sizeof host_d, &c)) || (rc = cls_alloc(ctx, 2, sizeof host_d, &d)))
    goto fail;
  size_t g_ab[1] = {M * K > K * N ? M * K : K * N}, g_d[1] = {M * N};
  cls_launch(ctx, 0, make_ab, 1, g_ab, NULL, 2, (cls_arg[]){CLS_OUT(a), CLS_OUT(b)});
  cls_foreign(ctx, 1, "sgemm", sgemm, &calls, 3,
              (cls_arg[]){CLS_IN(a), CLS_IN(b), CLS_OUT(c)});
  cls_launch(ctx, 2, twice, 1, g_d, NULL, 2, (cls_arg[]){CLS_IN(c), CLS_OUT(d)});
  cls_report *r = NULL;
  rc = cls_download(ctx, 2, d, 0, host_d, sizeof host_d, &r);
  if (rc == CLS_ETAINTED) {
    /* A failure upstream: the report says which, and what it stopped. */
    printf("the GEMM's callback ran %d times\n%s", calls, cls_report_text(r));
    cls_report_free(r);
    cls_context_destroy(ctx);
    return 0;
  }
  if (rc)
    goto fail;
  for (int i = 0; i < M * K; i++)
    ha[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < K * N; i++)
    hb[i] = (float)(i % 5) * 0.5f;
  int bad = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float s = 0;
      for (int k = 0; k < K; k++)
        s += ha[i * K + k] * hb[k * N + j];
      want[i * N + j] = 2.0f * s;
      if (fabsf(host_d[i * N + j] - want[i * N + j]) > 1e-3f * (1.0f + fabsf(want[i * N + j])))
        bad++;
    }
  printf("clblast-gemm: D = 2 A B (%dx%dx%d) through CLBlastSgemm on stream 1: %s\n", M, N, K,
         bad ? "WRONG" : "verified against the host");
  cls_context_destroy(ctx);
  return bad ? 1 : 0;
fail:
  fprintf(stderr, "clblast-gemm: %s: %s\n", cls_strerror(rc), cls_last_error_detail());
  cls_context_destroy(ctx);
  return 1;
}
