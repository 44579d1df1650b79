/* Tiled work with global offsets, as renderers and long-running image
 * codes launch to stay under a display watchdog, and as a range is split
 * between queues: a 3x3 box blur of an 8-bit image in 64x64 tiles, each
 * launch at its tile's 2D offset (16x16 work-groups, the edge tiles
 * smaller), on one queue (stream); then a gradient magnitude of the
 * blurred image in two row bands, one per queue, each at its band's
 * offset.  The kernels index with get_global_id(), which includes the
 * offset, test the image's bounds, and take its size as scalars.
 *
 * Through clstream the first launch that writes an output binds it
 * CLS_OUT and the later ones CLS_INOUT: each keeps what the others wrote
 * (an offset narrows no write scope: a launch's binding is the whole
 * buffer).  So the second band, on the other stream, is ordered after the
 * first; raw OpenCL runs the two bands at once, on disjoint rows. */
#include "real.h"

#include <stdlib.h>
#include <string.h>

#define TILE 64
#define GROUP 16

static const char SRC[] =
    "__kernel void blur(__global uchar *out, __global uchar *in, int w, int h) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  if (x >= w || y >= h)\n"
    "    return;\n"
    "  int s = 0;\n"
    "  for (int dy = -1; dy <= 1; dy++)\n"
    "    for (int dx = -1; dx <= 1; dx++)\n"
    "      s += in[clamp(y + dy, 0, h - 1) * w + clamp(x + dx, 0, w - 1)];\n"
    "  out[y * w + x] = (uchar)(s / 9);\n"
    "}\n"
    "__kernel void gradient(__global ushort *out, __global uchar *in, int w, int h) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  if (x >= w || y >= h)\n"
    "    return;\n"
    "  int gx = in[y * w + min(x + 1, w - 1)] - in[y * w + max(x - 1, 0)];\n"
    "  int gy = in[min(y + 1, h - 1) * w + x] - in[max(y - 1, 0) * w + x];\n"
    "  out[y * w + x] = (ushort)(abs(gx) + abs(gy));\n"
    "}\n";

struct host {
  cl_int w, h;
  unsigned char *img;
};

static void release(void *p) {
  struct host *h = p;
  free(h->img);
  free(h);
}

/* Sizes that are not multiples of the tile, so the edge tiles are
 * smaller, nor of the group, so their work-items past the edge return. */
static void *prepare(int quick) {
  struct host *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->w = quick ? 150 : 1000;
  h->h = quick ? 90 : 700;
  h->img = malloc((size_t)h->w * h->h);
  if (!h->img) {
    release(h);
    return NULL;
  }
  uint64_t s = 0x711e5;
  for (int i = 0; i < h->w * h->h; i++)
    h->img[i] = (unsigned char)real_rand(&s);
  return h;
}

/* The blurred image, then the gradient (ushort). */
static size_t out_size(const void *p) {
  const struct host *h = p;
  return 3 * (size_t)h->w * h->h;
}

static size_t up(size_t n) { return (n + GROUP - 1) / GROUP * GROUP; }

/* Tile t of the image: its offset and its global size (rounded up to the
 * group); false past the last. */
static int tile(const struct host *h, int t, size_t *o, size_t *g) {
  int across = (h->w + TILE - 1) / TILE, down = (h->h + TILE - 1) / TILE;
  if (t >= across * down)
    return 0;
  o[0] = (size_t)(t % across) * TILE;
  o[1] = (size_t)(t / across) * TILE;
  g[0] = up((size_t)h->w - o[0] < TILE ? (size_t)h->w - o[0] : TILE);
  g[1] = up((size_t)h->h - o[1] < TILE ? (size_t)h->h - o[1] : TILE);
  return 1;
}

/* Band b (0, 1) of the rows: its offset and global size. */
static void band(const struct host *h, int b, size_t *o, size_t *g) {
  size_t half = up((size_t)h->h / 2);
  o[0] = 0;
  o[1] = b ? half : 0;
  g[0] = up((size_t)h->w);
  g[1] = b ? up((size_t)h->h - half) : half;
}

static const size_t l_group[2] = {GROUP, GROUP};

static int raw(const struct real_raw *r, cl_kernel *k, const void *p, void *out) {
  const struct host *h = p;
  size_t n = (size_t)h->w * h->h, o[2], g[2];
  cl_mem img = NULL, blurred = NULL, grad = NULL;
  cl_event tiles_done = NULL;
  int rc = -1;
  REAL_TRY(real_raw_buffer(r, 0, n, h->img, &img));
  REAL_TRY(real_raw_buffer(r, 0, n, NULL, &blurred));
  REAL_TRY(real_raw_buffer(r, 0, 2 * n, NULL, &grad));
  REAL_TRY(real_raw_args(k[0], 4, sizeof(cl_mem), &blurred, sizeof(cl_mem), &img, sizeof h->w,
                         &h->w, sizeof h->h, &h->h));
  for (int t = 0; tile(h, t, o, g); t++)
    REAL_CL(clEnqueueNDRangeKernel(r->q[0], k[0], 2, o, g, l_group, 0, NULL, NULL));
  REAL_CL(clEnqueueMarkerWithWaitList(r->q[0], 0, NULL, &tiles_done));
  REAL_CL(clFlush(r->q[0]));
  REAL_TRY(real_raw_args(k[1], 4, sizeof(cl_mem), &grad, sizeof(cl_mem), &blurred, sizeof h->w,
                         &h->w, sizeof h->h, &h->h));
  for (int b = 0; b < 2; b++) {
    band(h, b, o, g);
    REAL_CL(clEnqueueNDRangeKernel(r->q[1 - b], k[1], 2, o, g, l_group, b ? 0 : 1,
                                   b ? NULL : &tiles_done, NULL));
  }
  REAL_CL(clFinish(r->q[1]));
  REAL_CL(clEnqueueReadBuffer(r->q[0], blurred, CL_TRUE, 0, n, out, 0, NULL, NULL));
  REAL_CL(clEnqueueReadBuffer(r->q[0], grad, CL_TRUE, 0, 2 * n, (char *)out + n, 0, NULL, NULL));
  rc = 0;
out:
  if (tiles_done)
    clReleaseEvent(tiles_done);
  cl_mem all[] = {img, blurred, grad};
  for (int i = 0; i < 3; i++)
    if (all[i])
      clReleaseMemObject(all[i]);
  return rc;
}

static int cls(cls_context *ctx, cls_kernel **k, const void *p, void *out) {
  const struct host *h = p;
  size_t n = (size_t)h->w * h->h, o[2], g[2];
  cls_buffer img = CLS_BUFFER_NULL, blurred = CLS_BUFFER_NULL, grad = CLS_BUFFER_NULL;
  int rc = -1;
  REAL_TRY(real_cls_buffer(ctx, 0, n, h->img, &img));
  REAL_TRY(real_cls_buffer(ctx, 0, n, NULL, &blurred));
  REAL_TRY(real_cls_buffer(ctx, 0, 2 * n, NULL, &grad));
  for (int t = 0; tile(h, t, o, g); t++) {
    cls_arg a[] = {t ? CLS_INOUT(blurred) : CLS_OUT(blurred), CLS_IN(img), CLS_SCALAR(h->w),
                   CLS_SCALAR(h->h)};
    REAL_TRY(real_launch_offset(ctx, 0, k[0], 2, o, g, l_group, 4, a));
  }
  for (int b = 0; b < 2; b++) {
    band(h, b, o, g);
    cls_arg a[] = {b ? CLS_INOUT(grad) : CLS_OUT(grad), CLS_IN(blurred), CLS_SCALAR(h->w),
                   CLS_SCALAR(h->h)};
    REAL_TRY(real_launch_offset(ctx, 1 - b, k[1], 2, o, g, l_group, 4, a));
  }
  REAL_TRY(real_cls_download(ctx, 0, blurred, out, n));
  REAL_TRY(real_cls_download(ctx, 0, grad, (char *)out + n, 2 * n));
  rc = 0;
out:;
  cls_buffer all[] = {img, blurred, grad};
  for (int i = 0; i < 3; i++)
    if (all[i].bits)
      cls_free(ctx, all[i]);
  return rc;
}

static int at(const unsigned char *a, int w, int h, int x, int y) {
  x = x < 0 ? 0 : x >= w ? w - 1 : x;
  y = y < 0 ? 0 : y >= h ? h - 1 : y;
  return a[y * w + x];
}

static const char *check(const void *p, const void *o) {
  const struct host *h = p;
  const unsigned char *blurred = o;
  const unsigned char *gb = blurred + (size_t)h->w * h->h;
  for (int y = 0; y < h->h; y++)
    for (int x = 0; x < h->w; x++) {
      int s = 0;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
          s += at(h->img, h->w, h->h, x + dx, y + dy);
      if (blurred[y * h->w + x] != s / 9)
        return "a blurred pixel differs from the host's (a tile missed or misplaced)";
    }
  for (int y = 0; y < h->h; y++)
    for (int x = 0; x < h->w; x++) {
      int gx = at(blurred, h->w, h->h, x + 1, y) - at(blurred, h->w, h->h, x - 1, y);
      int gy = at(blurred, h->w, h->h, x, y + 1) - at(blurred, h->w, h->h, x, y - 1);
      uint16_t v;
      memcpy(&v, gb + 2 * ((size_t)y * h->w + x), sizeof v);
      if (v != abs(gx) + abs(gy))
        return "a gradient differs from the host's (a band missed or misplaced)";
    }
  return NULL;
}

const struct real_program real_tiles = {
    .name = "tiles",
    .src = SRC,
    .kernels = {"blur", "gradient"},
    .prepare = prepare,
    .release = release,
    .out_size = out_size,
    .raw = raw,
    .cls = cls,
    .check = check,
};
