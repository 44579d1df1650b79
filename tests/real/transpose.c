/* Matrix transpose through a 16x16 __local tile (an argument, padded by
 * one column against bank conflicts), as in the vendor samples, with the
 * output argument first.  A is transposed on one queue (stream), and the
 * result transposed back on the other, which must wait for it. */
#include "real.h"

#include <stdlib.h>
#include <string.h>

#define TILE 16

static const char SRC[] =
    "#define TILE 16\n"
    "__kernel void transpose(__global float *out, __global float *in,\n"
    "                        __local float *block, int w, int h) {\n"
    "  int lx = get_local_id(0), ly = get_local_id(1);\n"
    "  block[ly * (TILE + 1) + lx] = in[get_global_id(1) * w + get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  int ox = get_group_id(1) * TILE + lx, oy = get_group_id(0) * TILE + ly;\n"
    "  out[oy * h + ox] = block[lx * (TILE + 1) + ly];\n"
    "}\n";

struct host {
  cl_int w, h;
  float *a;
};

static void release(void *p) {
  struct host *h = p;
  free(h->a);
  free(h);
}

static void *prepare(int quick) {
  struct host *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->w = quick ? 64 : 1024;
  h->h = quick ? 32 : 256;
  h->a = malloc((size_t)h->w * h->h * sizeof(float));
  if (!h->a) {
    release(h);
    return NULL;
  }
  uint64_t s = 0x7a05;
  for (int i = 0; i < h->w * h->h; i++)
    h->a[i] = real_unit(&s);
  return h;
}

/* A transposed, then back. */
static size_t out_size(const void *p) {
  const struct host *h = p;
  return 2 * (size_t)h->w * h->h * sizeof(float);
}

static const size_t l_tile[2] = {TILE, TILE};
#define TILE_BYTES ((size_t)TILE * (TILE + 1) * sizeof(float))

static int raw(const struct real_raw *r, cl_kernel *k, const void *p, void *out) {
  const struct host *h = p;
  size_t bytes = (size_t)h->w * h->h * sizeof(float);
  size_t g1[2] = {(size_t)h->w, (size_t)h->h}, g2[2] = {(size_t)h->h, (size_t)h->w};
  cl_mem a = NULL, t = NULL, b = NULL;
  cl_event done = NULL;
  int rc = -1;
  REAL_TRY(real_raw_buffer(r, 0, bytes, h->a, &a));
  REAL_TRY(real_raw_buffer(r, 0, bytes, NULL, &t));
  REAL_TRY(real_raw_buffer(r, 1, bytes, NULL, &b));
  REAL_TRY(real_raw_args(k[0], 5, sizeof(cl_mem), &t, sizeof(cl_mem), &a, TILE_BYTES, NULL,
                         sizeof h->w, &h->w, sizeof h->h, &h->h));
  REAL_CL(clEnqueueNDRangeKernel(r->q[0], k[0], 2, NULL, g1, l_tile, 0, NULL, &done));
  REAL_CL(clFlush(r->q[0]));
  REAL_TRY(real_raw_args(k[0], 5, sizeof(cl_mem), &b, sizeof(cl_mem), &t, TILE_BYTES, NULL,
                         sizeof h->h, &h->h, sizeof h->w, &h->w));
  REAL_CL(clEnqueueNDRangeKernel(r->q[1], k[0], 2, NULL, g2, l_tile, 1, &done, NULL));
  REAL_CL(clEnqueueReadBuffer(r->q[0], t, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
  REAL_CL(clEnqueueReadBuffer(r->q[1], b, CL_TRUE, 0, bytes, (char *)out + bytes, 0, NULL, NULL));
  rc = 0;
out:
  if (done)
    clReleaseEvent(done);
  cl_mem all[] = {a, t, b};
  for (int i = 0; i < 3; i++)
    if (all[i])
      clReleaseMemObject(all[i]);
  return rc;
}

static int cls(cls_context *ctx, cls_kernel **k, const void *p, void *out) {
  const struct host *h = p;
  size_t bytes = (size_t)h->w * h->h * sizeof(float);
  size_t g1[2] = {(size_t)h->w, (size_t)h->h}, g2[2] = {(size_t)h->h, (size_t)h->w};
  cls_buffer a = CLS_BUFFER_NULL, t = CLS_BUFFER_NULL, b = CLS_BUFFER_NULL;
  int rc = -1;
  REAL_TRY(real_cls_buffer(ctx, 0, bytes, h->a, &a));
  REAL_TRY(real_cls_buffer(ctx, 0, bytes, NULL, &t));
  REAL_TRY(real_cls_buffer(ctx, 1, bytes, NULL, &b));
  cls_arg a1[] = {CLS_OUT(t), CLS_IN(a), CLS_LOCAL(TILE_BYTES), CLS_SCALAR(h->w),
                  CLS_SCALAR(h->h)};
  REAL_TRY(real_launch(ctx, 0, k[0], 2, g1, l_tile, 5, a1));
  cls_arg a2[] = {CLS_OUT(b), CLS_IN(t), CLS_LOCAL(TILE_BYTES), CLS_SCALAR(h->h),
                  CLS_SCALAR(h->w)};
  REAL_TRY(real_launch(ctx, 1, k[0], 2, g2, l_tile, 5, a2));
  REAL_TRY(real_cls_download(ctx, 0, t, out, bytes));
  REAL_TRY(real_cls_download(ctx, 1, b, (char *)out + bytes, bytes));
  rc = 0;
out:;
  cls_buffer all[] = {a, t, b};
  for (int i = 0; i < 3; i++)
    if (all[i].bits)
      cls_free(ctx, all[i]);
  return rc;
}

static const char *check(const void *p, const void *o) {
  const struct host *h = p;
  const float *t = o, *b = t + (size_t)h->w * h->h;
  for (int y = 0; y < h->h; y++)
    for (int x = 0; x < h->w; x++) {
      float v = h->a[y * h->w + x];
      if (memcmp(&t[x * h->h + y], &v, sizeof v) != 0)
        return "the transpose differs from the host's";
      if (memcmp(&b[y * h->w + x], &v, sizeof v) != 0)
        return "transposed twice, the matrix is not itself";
    }
  return NULL;
}

const struct real_program real_transpose = {
    .name = "transpose",
    .src = SRC,
    .kernels = {"transpose"},
    .prepare = prepare,
    .release = release,
    .out_size = out_size,
    .raw = raw,
    .cls = cls,
    .check = check,
};
