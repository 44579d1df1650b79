/* Byte histogram, two ways over the same input: per work-group bins in
 * __local memory (atomic_inc there, merged into global bins with
 * atomic_add), and atomic_inc straight on global bins.  The two are
 * independent readers of the input: two queues raw, two streams here. */
#include "real.h"

#include <stdlib.h>
#include <string.h>

#define BINS 256
#define WG 256
#define GROUPS 16

static const char SRC[] =
    "#define BINS 256\n"
    "__kernel void zero_bins(__global uint *bins) { bins[get_global_id(0)] = 0; }\n"
    "__kernel void hist_local(__global uint *data, __global uint *bins,\n"
    "                         __local uint *lbins, uint n) {\n"
    "  uint lid = get_local_id(0), lsz = get_local_size(0);\n"
    "  for (uint b = lid; b < BINS; b += lsz)\n"
    "    lbins[b] = 0;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {\n"
    "    uint w = data[i];\n"
    "    atomic_inc(&lbins[w & 0xff]);\n"
    "    atomic_inc(&lbins[(w >> 8) & 0xff]);\n"
    "    atomic_inc(&lbins[(w >> 16) & 0xff]);\n"
    "    atomic_inc(&lbins[w >> 24]);\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (uint b = lid; b < BINS; b += lsz)\n"
    "    atomic_add(&bins[b], lbins[b]);\n"
    "}\n"
    "__kernel void hist_global(__global uint *data, __global uint *bins, uint n) {\n"
    "  uint i = get_global_id(0);\n"
    "  if (i >= n)\n"
    "    return;\n"
    "  uint w = data[i];\n"
    "  atomic_inc(&bins[w & 0xff]);\n"
    "  atomic_inc(&bins[(w >> 8) & 0xff]);\n"
    "  atomic_inc(&bins[(w >> 16) & 0xff]);\n"
    "  atomic_inc(&bins[w >> 24]);\n"
    "}\n";

struct host {
  cl_uint n;
  uint32_t *data;
};

static void *prepare(int quick) {
  struct host *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->n = quick ? 4096 : 1u << 18;
  h->data = malloc(h->n * sizeof *h->data);
  if (!h->data) {
    free(h);
    return NULL;
  }
  uint64_t s = 0x4157;
  for (cl_uint i = 0; i < h->n; i++) /* skewed: low bytes favoured */
    h->data[i] = real_rand(&s) & real_rand(&s);
  return h;
}

static void release(void *p) {
  struct host *h = p;
  free(h->data);
  free(h);
}

/* The local histogram's bins, then the global one's. */
static size_t out_size(const void *p) {
  (void)p;
  return 2 * BINS * sizeof(cl_uint);
}

static const size_t g_bins = BINS, l_wg = WG, g_local = WG * GROUPS;

static size_t rounded(cl_uint n) { return (n + WG - 1) / WG * WG; }

static int raw(const struct real_raw *r, cl_kernel *k, const void *p, void *out) {
  const struct host *h = p;
  cl_mem d = NULL, b[2] = {NULL, NULL};
  size_t g_all = rounded(h->n);
  int rc = -1;
  REAL_TRY(real_raw_buffer(r, 0, h->n * sizeof(cl_uint), h->data, &d));
  for (int i = 0; i < 2; i++) {
    REAL_TRY(real_raw_buffer(r, i, BINS * sizeof(cl_uint), NULL, &b[i]));
    REAL_TRY(real_raw_args(k[0], 1, sizeof(cl_mem), &b[i]));
    REAL_CL(clEnqueueNDRangeKernel(r->q[i], k[0], 1, NULL, &g_bins, &l_wg, 0, NULL, NULL));
  }
  REAL_TRY(real_raw_args(k[1], 4, sizeof(cl_mem), &d, sizeof(cl_mem), &b[0],
                         BINS * sizeof(cl_uint), NULL, sizeof h->n, &h->n));
  REAL_CL(clEnqueueNDRangeKernel(r->q[0], k[1], 1, NULL, &g_local, &l_wg, 0, NULL, NULL));
  REAL_TRY(real_raw_args(k[2], 3, sizeof(cl_mem), &d, sizeof(cl_mem), &b[1], sizeof h->n,
                         &h->n));
  REAL_CL(clEnqueueNDRangeKernel(r->q[1], k[2], 1, NULL, &g_all, &l_wg, 0, NULL, NULL));
  for (int i = 0; i < 2; i++)
    REAL_CL(clEnqueueReadBuffer(r->q[i], b[i], CL_TRUE, 0, BINS * sizeof(cl_uint),
                                (cl_uint *)out + i * BINS, 0, NULL, NULL));
  rc = 0;
out:
  for (int i = 0; i < 2; i++)
    if (b[i])
      clReleaseMemObject(b[i]);
  if (d)
    clReleaseMemObject(d);
  return rc;
}

static int cls(cls_context *ctx, cls_kernel **k, const void *p, void *out) {
  const struct host *h = p;
  cls_buffer d = CLS_BUFFER_NULL, b[2] = {CLS_BUFFER_NULL, CLS_BUFFER_NULL};
  size_t g_all = rounded(h->n);
  int rc = -1;
  REAL_TRY(real_cls_buffer(ctx, 0, h->n * sizeof(cl_uint), h->data, &d));
  for (int i = 0; i < 2; i++) {
    REAL_TRY(real_cls_buffer(ctx, i, BINS * sizeof(cl_uint), NULL, &b[i]));
    cls_arg z[] = {CLS_OUT(b[i])};
    REAL_TRY(real_launch(ctx, i, k[0], 1, &g_bins, &l_wg, 1, z));
  }
  cls_arg al[] = {CLS_IN(d), CLS_INOUT(b[0]), CLS_LOCAL(BINS * sizeof(cl_uint)),
                  CLS_SCALAR(h->n)};
  REAL_TRY(real_launch(ctx, 0, k[1], 1, &g_local, &l_wg, 4, al));
  cls_arg ag[] = {CLS_IN(d), CLS_INOUT(b[1]), CLS_SCALAR(h->n)};
  REAL_TRY(real_launch(ctx, 1, k[2], 1, &g_all, &l_wg, 3, ag));
  for (int i = 0; i < 2; i++)
    REAL_TRY(real_cls_download(ctx, i, b[i], (cl_uint *)out + i * BINS, BINS * sizeof(cl_uint)));
  rc = 0;
out:
  for (int i = 0; i < 2; i++)
    if (b[i].bits)
      cls_free(ctx, b[i]);
  if (d.bits)
    cls_free(ctx, d);
  return rc;
}

static const char *check(const void *p, const void *o) {
  const struct host *h = p;
  const cl_uint *got = o;
  cl_uint want[BINS] = {0};
  for (cl_uint i = 0; i < h->n; i++)
    for (int s = 0; s < 32; s += 8)
      want[(h->data[i] >> s) & 0xff]++;
  if (memcmp(got, want, sizeof want) != 0)
    return "the local-memory histogram differs from the host's";
  if (memcmp(got + BINS, want, sizeof want) != 0)
    return "the global-atomics histogram differs from the host's";
  return NULL;
}

const struct real_program real_histogram = {
    .name = "histogram",
    .src = SRC,
    .kernels = {"zero_bins", "hist_local", "hist_global"},
    .prepare = prepare,
    .release = release,
    .out_size = out_size,
    .raw = raw,
    .cls = cls,
    .check = check,
};
