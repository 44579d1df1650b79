/* Sparse matrix-vector product, CSR, one work-item per row (work-groups of
 * 256, the rows padded): row pointers and column indices are non-const
 * int pointers.  Three products y = A x, x = A y, y = A x for each of two
 * vectors, one queue (stream) each: both read the one matrix. */
#include "real.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WG 256
#define STEPS 3

static const char SRC[] =
    "__kernel void spmv_csr(__global int *rowptr, __global int *cols,\n"
    "                       __global float *vals, __global float *x,\n"
    "                       __global float *y, int nrows) {\n"
    "  int row = get_global_id(0);\n"
    "  if (row < nrows) {\n"
    "    float sum = 0.0f;\n"
    "    for (int j = rowptr[row]; j < rowptr[row + 1]; j++)\n"
    "      sum += vals[j] * x[cols[j]];\n"
    "    y[row] = sum;\n"
    "  }\n"
    "}\n";

struct host {
  cl_int nrows, nnz;
  cl_int *rowptr, *cols;
  float *vals, *x[2];
};

static void release(void *p) {
  struct host *h = p;
  free(h->rowptr);
  free(h->cols);
  free(h->vals);
  free(h->x[0]);
  free(h->x[1]);
  free(h);
}

static void *prepare(int quick) {
  struct host *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->nrows = quick ? 500 : 20000; /* not a multiple of 256: the guard in the kernel */
  uint64_t s = 0x59a7;
  h->rowptr = malloc((h->nrows + 1) * sizeof(cl_int));
  h->cols = malloc((size_t)h->nrows * 24 * sizeof(cl_int));
  h->vals = malloc((size_t)h->nrows * 24 * sizeof(float));
  h->x[0] = malloc(h->nrows * sizeof(float));
  h->x[1] = malloc(h->nrows * sizeof(float));
  if (!h->rowptr || !h->cols || !h->vals || !h->x[0] || !h->x[1]) {
    release(h);
    return NULL;
  }
  h->rowptr[0] = 0;
  for (cl_int r = 0; r < h->nrows; r++) {
    int len = 1 + (int)(real_rand(&s) % 24), at = h->rowptr[r];
    for (int j = 0; j < len; j++) {
      h->cols[at + j] = (cl_int)(real_rand(&s) % (uint32_t)h->nrows);
      h->vals[at + j] = real_unit(&s) / (float)len; /* row sums < 1: no blow-up */
    }
    h->rowptr[r + 1] = at + len;
  }
  h->nnz = h->rowptr[h->nrows];
  for (cl_int r = 0; r < h->nrows; r++) {
    h->x[0][r] = real_unit(&s);
    h->x[1][r] = 2.0f * real_unit(&s) - 1.0f;
  }
  return h;
}

static size_t out_size(const void *p) {
  const struct host *h = p;
  return 2 * (size_t)h->nrows * sizeof(float);
}

static const size_t l_wg = WG;

static int raw(const struct real_raw *r, cl_kernel *k, const void *p, void *out) {
  const struct host *h = p;
  size_t vb = h->nrows * sizeof(float), g = ((size_t)h->nrows + WG - 1) / WG * WG;
  cl_mem rp = NULL, cols = NULL, vals = NULL, v[2][2] = {{NULL, NULL}, {NULL, NULL}};
  int rc = -1;
  REAL_TRY(real_raw_buffer(r, 0, (h->nrows + 1) * sizeof(cl_int), h->rowptr, &rp));
  REAL_TRY(real_raw_buffer(r, 0, h->nnz * sizeof(cl_int), h->cols, &cols));
  REAL_TRY(real_raw_buffer(r, 0, h->nnz * sizeof(float), h->vals, &vals));
  for (int q = 0; q < 2; q++) {
    REAL_TRY(real_raw_buffer(r, q, vb, h->x[q], &v[q][0]));
    REAL_TRY(real_raw_buffer(r, q, vb, NULL, &v[q][1]));
  }
  for (int step = 0; step < STEPS; step++)
    for (int q = 0; q < 2; q++) {
      REAL_TRY(real_raw_args(k[0], 6, sizeof(cl_mem), &rp, sizeof(cl_mem), &cols, sizeof(cl_mem),
                             &vals, sizeof(cl_mem), &v[q][step & 1], sizeof(cl_mem),
                             &v[q][!(step & 1)], sizeof h->nrows, &h->nrows));
      REAL_CL(clEnqueueNDRangeKernel(r->q[q], k[0], 1, NULL, &g, &l_wg, 0, NULL, NULL));
    }
  for (int q = 0; q < 2; q++)
    REAL_CL(clEnqueueReadBuffer(r->q[q], v[q][STEPS & 1], CL_TRUE, 0, vb, (char *)out + q * vb, 0,
                                NULL, NULL));
  rc = 0;
out:;
  cl_mem all[] = {rp, cols, vals, v[0][0], v[0][1], v[1][0], v[1][1]};
  for (int i = 0; i < 7; i++)
    if (all[i])
      clReleaseMemObject(all[i]);
  return rc;
}

static int cls(cls_context *ctx, cls_kernel **k, const void *p, void *out) {
  const struct host *h = p;
  size_t vb = h->nrows * sizeof(float), g = ((size_t)h->nrows + WG - 1) / WG * WG;
  cls_buffer rp = CLS_BUFFER_NULL, cols = CLS_BUFFER_NULL, vals = CLS_BUFFER_NULL,
             v[2][2] = {{CLS_BUFFER_NULL, CLS_BUFFER_NULL}, {CLS_BUFFER_NULL, CLS_BUFFER_NULL}};
  int rc = -1;
  REAL_TRY(real_cls_buffer(ctx, 0, (h->nrows + 1) * sizeof(cl_int), h->rowptr, &rp));
  REAL_TRY(real_cls_buffer(ctx, 0, h->nnz * sizeof(cl_int), h->cols, &cols));
  REAL_TRY(real_cls_buffer(ctx, 0, h->nnz * sizeof(float), h->vals, &vals));
  for (int q = 0; q < 2; q++) {
    REAL_TRY(real_cls_buffer(ctx, q, vb, h->x[q], &v[q][0]));
    REAL_TRY(real_cls_buffer(ctx, q, vb, NULL, &v[q][1]));
  }
  for (int step = 0; step < STEPS; step++)
    for (int q = 0; q < 2; q++) {
      cls_arg a[] = {CLS_IN(rp), CLS_IN(cols), CLS_IN(vals), CLS_IN(v[q][step & 1]),
                     CLS_OUT(v[q][!(step & 1)]), CLS_SCALAR(h->nrows)};
      REAL_TRY(real_launch(ctx, q, k[0], 1, &g, &l_wg, 6, a));
    }
  for (int q = 0; q < 2; q++)
    REAL_TRY(real_cls_download(ctx, q, v[q][STEPS & 1], (char *)out + q * vb, vb));
  rc = 0;
out:;
  cls_buffer all[] = {rp, cols, vals, v[0][0], v[0][1], v[1][0], v[1][1]};
  for (int i = 0; i < 7; i++)
    if (all[i].bits)
      cls_free(ctx, all[i]);
  return rc;
}

static const char *check(const void *p, const void *o) {
  const struct host *h = p;
  size_t n = (size_t)h->nrows;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  const char *why = a && b ? NULL : "out of memory for the host's reference";
  for (int q = 0; q < 2 && !why; q++) {
    memcpy(a, h->x[q], n * sizeof *a);
    for (int step = 0; step < STEPS; step++) {
      for (size_t r = 0; r < n; r++) {
        float sum = 0.0f;
        for (int j = h->rowptr[r]; j < h->rowptr[r + 1]; j++)
          sum += h->vals[j] * a[h->cols[j]];
        b[r] = sum;
      }
      float *t = a;
      a = b;
      b = t;
    }
    const float *got = (const float *)o + q * n;
    for (size_t i = 0; i < n && !why; i++)
      if (fabsf(got[i] - a[i]) > 1e-5f)
        why = "the product differs from the host's beyond rounding";
  }
  free(a);
  free(b);
  return why;
}

const struct real_program real_spmv = {
    .name = "spmv",
    .src = SRC,
    .kernels = {"spmv_csr"},
    .prepare = prepare,
    .release = release,
    .out_size = out_size,
    .raw = raw,
    .cls = cls,
    .check = check,
};
