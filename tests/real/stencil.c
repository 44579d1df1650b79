/* Heat diffusion, a 5-point stencil over iterations with ping-pong
 * buffers: 16x16 work-groups load their tile and a one-cell halo into
 * __local scratch (an argument), clamped at the grid's edge.  Two
 * independent grids, one queue (stream) each. */
#include "real.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TS 16

static const char SRC[] =
    "#define TS 16\n"
    "#define TW (TS + 2)\n"
    "__kernel void heat_step(__global float *in, __global float *out,\n"
    "                        __local float *tile, int w, int h, float k) {\n"
    "  int lx = get_local_id(0), ly = get_local_id(1);\n"
    "  int x0 = get_group_id(0) * TS - 1, y0 = get_group_id(1) * TS - 1;\n"
    "  for (int i = ly * TS + lx; i < TW * TW; i += TS * TS) {\n"
    "    int x = clamp(x0 + i % TW, 0, w - 1), y = clamp(y0 + i / TW, 0, h - 1);\n"
    "    tile[i] = in[y * w + x];\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  float c = tile[(ly + 1) * TW + lx + 1];\n"
    "  float s = tile[ly * TW + lx + 1] + tile[(ly + 2) * TW + lx + 1]\n"
    "          + tile[(ly + 1) * TW + lx] + tile[(ly + 1) * TW + lx + 2];\n"
    "  out[get_global_id(1) * w + get_global_id(0)] = c + k * (s - 4.0f * c);\n"
    "}\n";

struct host {
  cl_int w, h, iters;
  cl_float k;
  float *grid[2];
};

static void release(void *p) {
  struct host *h = p;
  free(h->grid[0]);
  free(h->grid[1]);
  free(h);
}

static void *prepare(int quick) {
  struct host *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->w = quick ? 32 : 256;
  h->h = quick ? 32 : 128;
  h->iters = quick ? 4 : 20;
  h->k = 0.2f;
  uint64_t s = 0x4ea7;
  for (int g = 0; g < 2; g++) {
    h->grid[g] = malloc((size_t)h->w * h->h * sizeof(float));
    if (!h->grid[g]) {
      release(h);
      return NULL;
    }
    for (int i = 0; i < h->w * h->h; i++)
      h->grid[g][i] = real_unit(&s) * (g ? 100.0f : 1.0f);
  }
  return h;
}

static size_t out_size(const void *p) {
  const struct host *h = p;
  return 2 * (size_t)h->w * h->h * sizeof(float);
}

static const size_t l_tile[2] = {TS, TS};

static int raw(const struct real_raw *r, cl_kernel *k, const void *p, void *out) {
  const struct host *h = p;
  size_t bytes = (size_t)h->w * h->h * sizeof(float), g[2] = {(size_t)h->w, (size_t)h->h};
  cl_mem b[2][2] = {{NULL, NULL}, {NULL, NULL}};
  int rc = -1;
  for (int q = 0; q < 2; q++) {
    REAL_TRY(real_raw_buffer(r, q, bytes, h->grid[q], &b[q][0]));
    REAL_TRY(real_raw_buffer(r, q, bytes, NULL, &b[q][1]));
  }
  for (int it = 0; it < h->iters; it++)
    for (int q = 0; q < 2; q++) {
      REAL_TRY(real_raw_args(k[0], 6, sizeof(cl_mem), &b[q][it & 1], sizeof(cl_mem),
                             &b[q][!(it & 1)], (size_t)(TS + 2) * (TS + 2) * sizeof(float),
                             NULL, sizeof h->w, &h->w, sizeof h->h, &h->h, sizeof h->k, &h->k));
      REAL_CL(clEnqueueNDRangeKernel(r->q[q], k[0], 2, NULL, g, l_tile, 0, NULL, NULL));
    }
  for (int q = 0; q < 2; q++)
    REAL_CL(clEnqueueReadBuffer(r->q[q], b[q][h->iters & 1], CL_TRUE, 0, bytes,
                                (char *)out + q * bytes, 0, NULL, NULL));
  rc = 0;
out:
  for (int q = 0; q < 2; q++)
    for (int i = 0; i < 2; i++)
      if (b[q][i])
        clReleaseMemObject(b[q][i]);
  return rc;
}

static int cls(cls_context *ctx, cls_kernel **k, const void *p, void *out) {
  const struct host *h = p;
  size_t bytes = (size_t)h->w * h->h * sizeof(float), g[2] = {(size_t)h->w, (size_t)h->h};
  cls_buffer b[2][2] = {{CLS_BUFFER_NULL, CLS_BUFFER_NULL}, {CLS_BUFFER_NULL, CLS_BUFFER_NULL}};
  int rc = -1;
  for (int q = 0; q < 2; q++) {
    REAL_TRY(real_cls_buffer(ctx, q, bytes, h->grid[q], &b[q][0]));
    REAL_TRY(real_cls_buffer(ctx, q, bytes, NULL, &b[q][1]));
  }
  for (int it = 0; it < h->iters; it++)
    for (int q = 0; q < 2; q++) {
      cls_arg a[] = {CLS_IN(b[q][it & 1]), CLS_OUT(b[q][!(it & 1)]),
                     CLS_LOCAL((TS + 2) * (TS + 2) * sizeof(float)), CLS_SCALAR(h->w),
                     CLS_SCALAR(h->h), CLS_SCALAR(h->k)};
      REAL_TRY(real_launch(ctx, q, k[0], 2, g, l_tile, 6, a));
    }
  for (int q = 0; q < 2; q++)
    REAL_TRY(real_cls_download(ctx, q, b[q][h->iters & 1], (char *)out + q * bytes, bytes));
  rc = 0;
out:
  for (int q = 0; q < 2; q++)
    for (int i = 0; i < 2; i++)
      if (b[q][i].bits)
        cls_free(ctx, b[q][i]);
  return rc;
}

/* Within rounding of the host's (the device may contract into fma). */
static const char *check(const void *p, const void *o) {
  const struct host *h = p;
  size_t n = (size_t)h->w * h->h;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  const char *why = a && b ? NULL : "out of memory for the host's reference";
  for (int q = 0; q < 2 && !why; q++) {
    memcpy(a, h->grid[q], n * sizeof *a);
    for (int it = 0; it < h->iters; it++) {
      for (int y = 0; y < h->h; y++)
        for (int x = 0; x < h->w; x++) {
#define AT(xx, yy) a[(yy < 0 ? 0 : yy >= h->h ? h->h - 1 : yy) * h->w + \
                     (xx < 0 ? 0 : xx >= h->w ? h->w - 1 : xx)]
          float c = AT(x, y), s = AT(x, y - 1) + AT(x, y + 1) + AT(x - 1, y) + AT(x + 1, y);
#undef AT
          b[y * h->w + x] = c + h->k * (s - 4.0f * c);
        }
      float *t = a;
      a = b;
      b = t;
    }
    const float *got = (const float *)o + q * n;
    for (size_t i = 0; i < n && !why; i++)
      if (fabsf(got[i] - a[i]) > 1e-4f * (q ? 100.0f : 1.0f))
        why = "the grid differs from the host's beyond rounding";
  }
  free(a);
  free(b);
  return why;
}

const struct real_program real_stencil = {
    .name = "stencil",
    .src = SRC,
    .kernels = {"heat_step"},
    .prepare = prepare,
    .release = release,
    .out_size = out_size,
    .raw = raw,
    .cls = cls,
    .check = check,
};
