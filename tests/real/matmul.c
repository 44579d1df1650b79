/* Tiled matrix product, 16x16 work-groups with two __local tiles passed as
 * arguments and a barrier after each load and each use, as in the vendor
 * samples.  A*B on one queue (stream), B*A on the other: both read A and
 * B, and nothing orders the two products. */
#include "real.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BS 16

static const char SRC[] =
    "#define BS 16\n"
    "__kernel void matmul(__global float *C, __global float *A, __global float *B,\n"
    "                     __local float *As, __local float *Bs, int wA, int wB) {\n"
    "  int bx = get_group_id(0), by = get_group_id(1);\n"
    "  int tx = get_local_id(0), ty = get_local_id(1);\n"
    "  float sum = 0.0f;\n"
    "  for (int t = 0; t < wA / BS; t++) {\n"
    "    As[ty * BS + tx] = A[(by * BS + ty) * wA + t * BS + tx];\n"
    "    Bs[ty * BS + tx] = B[(t * BS + ty) * wB + bx * BS + tx];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (int k = 0; k < BS; k++)\n"
    "      sum += As[ty * BS + k] * Bs[k * BS + tx];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  C[get_global_id(1) * wB + get_global_id(0)] = sum;\n"
    "}\n";

struct host {
  cl_int n;
  float *a, *b;
};

static void release(void *p) {
  struct host *h = p;
  free(h->a);
  free(h->b);
  free(h);
}

static void *prepare(int quick) {
  struct host *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->n = quick ? 32 : 192;
  size_t nn = (size_t)h->n * h->n;
  h->a = malloc(nn * sizeof(float));
  h->b = malloc(nn * sizeof(float));
  if (!h->a || !h->b) {
    release(h);
    return NULL;
  }
  uint64_t s = 0x3a73;
  for (size_t i = 0; i < nn; i++) {
    h->a[i] = real_unit(&s) - 0.5f;
    h->b[i] = real_unit(&s) - 0.5f;
  }
  return h;
}

/* A*B, then B*A. */
static size_t out_size(const void *p) {
  const struct host *h = p;
  return 2 * (size_t)h->n * h->n * sizeof(float);
}

static const size_t l_tile[2] = {BS, BS};
#define TILE_BYTES ((size_t)BS * BS * sizeof(float))

static int raw(const struct real_raw *r, cl_kernel *k, const void *p, void *out) {
  const struct host *h = p;
  size_t bytes = (size_t)h->n * h->n * sizeof(float), g[2] = {(size_t)h->n, (size_t)h->n};
  cl_mem a = NULL, b = NULL, c[2] = {NULL, NULL};
  int rc = -1;
  REAL_TRY(real_raw_buffer(r, 0, bytes, h->a, &a));
  REAL_TRY(real_raw_buffer(r, 0, bytes, h->b, &b));
  for (int q = 0; q < 2; q++) {
    REAL_TRY(real_raw_buffer(r, q, bytes, NULL, &c[q]));
    REAL_TRY(real_raw_args(k[0], 7, sizeof(cl_mem), &c[q], sizeof(cl_mem), q ? &b : &a,
                           sizeof(cl_mem), q ? &a : &b, TILE_BYTES, NULL, TILE_BYTES, NULL,
                           sizeof h->n, &h->n, sizeof h->n, &h->n));
    REAL_CL(clEnqueueNDRangeKernel(r->q[q], k[0], 2, NULL, g, l_tile, 0, NULL, NULL));
    REAL_CL(clFlush(r->q[q]));
  }
  for (int q = 0; q < 2; q++)
    REAL_CL(clEnqueueReadBuffer(r->q[q], c[q], CL_TRUE, 0, bytes, (char *)out + q * bytes, 0,
                                NULL, NULL));
  rc = 0;
out:;
  cl_mem all[] = {a, b, c[0], c[1]};
  for (int i = 0; i < 4; i++)
    if (all[i])
      clReleaseMemObject(all[i]);
  return rc;
}

static int cls(cls_context *ctx, cls_kernel **k, const void *p, void *out) {
  const struct host *h = p;
  size_t bytes = (size_t)h->n * h->n * sizeof(float), g[2] = {(size_t)h->n, (size_t)h->n};
  cls_buffer a = CLS_BUFFER_NULL, b = CLS_BUFFER_NULL, c[2] = {CLS_BUFFER_NULL, CLS_BUFFER_NULL};
  int rc = -1;
  REAL_TRY(real_cls_buffer(ctx, 0, bytes, h->a, &a));
  REAL_TRY(real_cls_buffer(ctx, 0, bytes, h->b, &b));
  for (int q = 0; q < 2; q++) {
    REAL_TRY(real_cls_buffer(ctx, q, bytes, NULL, &c[q]));
    cls_arg args[] = {CLS_OUT(c[q]),         CLS_IN(q ? b : a),     CLS_IN(q ? a : b),
                      CLS_LOCAL(TILE_BYTES), CLS_LOCAL(TILE_BYTES), CLS_SCALAR(h->n),
                      CLS_SCALAR(h->n)};
    REAL_TRY(real_launch(ctx, q, k[0], 2, g, l_tile, 7, args));
  }
  for (int q = 0; q < 2; q++)
    REAL_TRY(real_cls_download(ctx, q, c[q], (char *)out + q * bytes, bytes));
  rc = 0;
out:;
  cls_buffer all[] = {a, b, c[0], c[1]};
  for (int i = 0; i < 4; i++)
    if (all[i].bits)
      cls_free(ctx, all[i]);
  return rc;
}

static const char *check(const void *p, const void *o) {
  const struct host *h = p;
  const float *got = o;
  int n = h->n;
  for (int q = 0; q < 2; q++) {
    const float *x = q ? h->b : h->a, *y = q ? h->a : h->b;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double sum = 0;
        for (int kk = 0; kk < n; kk++)
          sum += (double)x[i * n + kk] * y[kk * n + j];
        if (fabs(got[(size_t)q * n * n + i * n + j] - sum) > 1e-3)
          return q ? "B*A differs from the host's beyond rounding"
                   : "A*B differs from the host's beyond rounding";
      }
  }
  return NULL;
}

const struct real_program real_matmul = {
    .name = "matmul",
    .src = SRC,
    .kernels = {"matmul"},
    .prepare = prepare,
    .release = release,
    .out_size = out_size,
    .raw = raw,
    .cls = cls,
    .check = check,
};
