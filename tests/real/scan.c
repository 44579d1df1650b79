/* Exclusive prefix sum, work-efficient (up-sweep, down-sweep) in __local
 * memory: each work-group of 256 scans a block of 512 and writes the
 * block's total; the same kernel scans the block totals (one block,
 * padded with zeros); a third pass adds each block's offset. */
#include "real.h"

#include <stdlib.h>
#include <string.h>

#define WG 256
#define BLOCK 512

static const char SRC[] =
    "#define BLOCK 512\n"
    "__kernel void scan_block(__global uint *in, __global uint *out,\n"
    "                         __global uint *sums, __local uint *tmp) {\n"
    "  uint lid = get_local_id(0), gid = get_group_id(0);\n"
    "  uint base = gid * BLOCK, off = 1;\n"
    "  tmp[2 * lid] = in[base + 2 * lid];\n"
    "  tmp[2 * lid + 1] = in[base + 2 * lid + 1];\n"
    "  for (uint d = BLOCK >> 1; d > 0; d >>= 1) {\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (lid < d) {\n"
    "      uint ai = off * (2 * lid + 1) - 1, bi = off * (2 * lid + 2) - 1;\n"
    "      tmp[bi] += tmp[ai];\n"
    "    }\n"
    "    off <<= 1;\n"
    "  }\n"
    "  if (lid == 0) {\n"
    "    sums[gid] = tmp[BLOCK - 1];\n"
    "    tmp[BLOCK - 1] = 0;\n"
    "  }\n"
    "  for (uint d = 1; d < BLOCK; d <<= 1) {\n"
    "    off >>= 1;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (lid < d) {\n"
    "      uint ai = off * (2 * lid + 1) - 1, bi = off * (2 * lid + 2) - 1;\n"
    "      uint t = tmp[ai];\n"
    "      tmp[ai] = tmp[bi];\n"
    "      tmp[bi] += t;\n"
    "    }\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  out[base + 2 * lid] = tmp[2 * lid];\n"
    "  out[base + 2 * lid + 1] = tmp[2 * lid + 1];\n"
    "}\n"
    "__kernel void add_offsets(__global uint *data, __global uint *offsets) {\n"
    "  uint i = get_global_id(0);\n"
    "  data[i] += offsets[i / BLOCK];\n"
    "}\n";

struct host {
  cl_uint n, blocks;
  uint32_t *in;
  uint32_t zeros[BLOCK]; /* the block totals' padding */
};

static void release(void *p) {
  struct host *h = p;
  free(h->in);
  free(h);
}

static void *prepare(int quick) {
  struct host *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->blocks = quick ? 8 : BLOCK; /* at most BLOCK: one block scans them */
  h->n = h->blocks * BLOCK;
  h->in = malloc(h->n * sizeof *h->in);
  if (!h->in) {
    release(h);
    return NULL;
  }
  uint64_t s = 0x5ca9;
  for (cl_uint i = 0; i < h->n; i++)
    h->in[i] = real_rand(&s) % 1000;
  return h;
}

/* The scan, then the total of everything. */
static size_t out_size(const void *p) {
  const struct host *h = p;
  return (h->n + 1) * sizeof(cl_uint);
}

static const size_t l_wg = WG;

static int raw(const struct real_raw *r, cl_kernel *k, const void *p, void *out) {
  const struct host *h = p;
  cl_mem in = NULL, res = NULL, sums = NULL, offs = NULL, total = NULL;
  size_t g_blocks = (size_t)h->blocks * WG, g_one = WG, g_all = h->n;
  int rc = -1;
  REAL_TRY(real_raw_buffer(r, 0, h->n * sizeof(cl_uint), h->in, &in));
  REAL_TRY(real_raw_buffer(r, 0, h->n * sizeof(cl_uint), NULL, &res));
  REAL_TRY(real_raw_buffer(r, 0, BLOCK * sizeof(cl_uint), h->zeros, &sums));
  REAL_TRY(real_raw_buffer(r, 0, BLOCK * sizeof(cl_uint), NULL, &offs));
  REAL_TRY(real_raw_buffer(r, 0, sizeof(cl_uint), NULL, &total));
  REAL_TRY(real_raw_args(k[0], 4, sizeof(cl_mem), &in, sizeof(cl_mem), &res, sizeof(cl_mem), &sums,
                         BLOCK * sizeof(cl_uint), NULL));
  REAL_CL(clEnqueueNDRangeKernel(r->q[0], k[0], 1, NULL, &g_blocks, &l_wg, 0, NULL, NULL));
  REAL_TRY(real_raw_args(k[0], 4, sizeof(cl_mem), &sums, sizeof(cl_mem), &offs, sizeof(cl_mem),
                         &total, BLOCK * sizeof(cl_uint), NULL));
  REAL_CL(clEnqueueNDRangeKernel(r->q[0], k[0], 1, NULL, &g_one, &l_wg, 0, NULL, NULL));
  REAL_TRY(real_raw_args(k[1], 2, sizeof(cl_mem), &res, sizeof(cl_mem), &offs));
  REAL_CL(clEnqueueNDRangeKernel(r->q[0], k[1], 1, NULL, &g_all, &l_wg, 0, NULL, NULL));
  REAL_CL(clEnqueueReadBuffer(r->q[0], res, CL_TRUE, 0, h->n * sizeof(cl_uint), out, 0, NULL,
                              NULL));
  REAL_CL(clEnqueueReadBuffer(r->q[0], total, CL_TRUE, 0, sizeof(cl_uint),
                              (cl_uint *)out + h->n, 0, NULL, NULL));
  rc = 0;
out:;
  cl_mem all[] = {in, res, sums, offs, total};
  for (int i = 0; i < 5; i++)
    if (all[i])
      clReleaseMemObject(all[i]);
  return rc;
}

static int cls(cls_context *ctx, cls_kernel **k, const void *p, void *out) {
  const struct host *h = p;
  cls_buffer in = CLS_BUFFER_NULL, res = CLS_BUFFER_NULL, sums = CLS_BUFFER_NULL,
             offs = CLS_BUFFER_NULL, total = CLS_BUFFER_NULL;
  size_t g_blocks = (size_t)h->blocks * WG, g_one = WG, g_all = h->n;
  int rc = -1;
  REAL_TRY(real_cls_buffer(ctx, 0, h->n * sizeof(cl_uint), h->in, &in));
  REAL_TRY(real_cls_buffer(ctx, 0, h->n * sizeof(cl_uint), NULL, &res));
  REAL_TRY(real_cls_buffer(ctx, 0, BLOCK * sizeof(cl_uint), h->zeros, &sums));
  REAL_TRY(real_cls_buffer(ctx, 0, BLOCK * sizeof(cl_uint), NULL, &offs));
  REAL_TRY(real_cls_buffer(ctx, 0, sizeof(cl_uint), NULL, &total));
  /* sums: written only up to the number of blocks, the padding kept. */
  cls_arg a1[] = {CLS_IN(in), CLS_OUT(res), CLS_INOUT(sums), CLS_LOCAL(BLOCK * sizeof(cl_uint))};
  REAL_TRY(real_launch(ctx, 0, k[0], 1, &g_blocks, &l_wg, 4, a1));
  cls_arg a2[] = {CLS_IN(sums), CLS_OUT(offs), CLS_OUT(total), CLS_LOCAL(BLOCK * sizeof(cl_uint))};
  REAL_TRY(real_launch(ctx, 0, k[0], 1, &g_one, &l_wg, 4, a2));
  cls_arg a3[] = {CLS_INOUT(res), CLS_IN(offs)};
  REAL_TRY(real_launch(ctx, 0, k[1], 1, &g_all, &l_wg, 2, a3));
  REAL_TRY(real_cls_download(ctx, 0, res, out, h->n * sizeof(cl_uint)));
  REAL_TRY(real_cls_download(ctx, 0, total, (cl_uint *)out + h->n, sizeof(cl_uint)));
  rc = 0;
out:;
  cls_buffer all[] = {in, res, sums, offs, total};
  for (int i = 0; i < 5; i++)
    if (all[i].bits)
      cls_free(ctx, all[i]);
  return rc;
}

static const char *check(const void *p, const void *o) {
  const struct host *h = p;
  const cl_uint *got = o;
  cl_uint acc = 0;
  for (cl_uint i = 0; i < h->n; i++) {
    if (got[i] != acc)
      return "the scan differs from the host's";
    acc += h->in[i];
  }
  return got[h->n] == acc ? NULL : "the total differs from the host's";
}

const struct real_program real_scan = {
    .name = "scan",
    .src = SRC,
    .kernels = {"scan_block", "add_offsets"},
    .prepare = prepare,
    .release = release,
    .out_size = out_size,
    .raw = raw,
    .cls = cls,
    .check = check,
};
