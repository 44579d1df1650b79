/* Two-kernel sum reduction, as vendor samples write it: each work-group of
 * 256 sums a strided share of the input in __local scratch (a tree with
 * barriers) into one partial; one work-group then sums the partials.  Two
 * independent arrays, one queue (stream) each. */
#include "real.h"

#include <stdlib.h>
#include <string.h>

#define WG 256
#define GROUPS 64

static const char SRC[] =
    "__kernel void reduce_partial(__global uint *in, __global uint *partial,\n"
    "                             __local uint *scratch, uint n) {\n"
    "  uint lid = get_local_id(0);\n"
    "  uint acc = 0;\n"
    "  for (uint i = get_global_id(0); i < n; i += get_global_size(0))\n"
    "    acc += in[i];\n"
    "  scratch[lid] = acc;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {\n"
    "    if (lid < s)\n"
    "      scratch[lid] += scratch[lid + s];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (lid == 0)\n"
    "    partial[get_group_id(0)] = scratch[0];\n"
    "}\n"
    "__kernel void reduce_final(__global uint *partial, __global uint *result,\n"
    "                           __local uint *scratch, uint m) {\n"
    "  uint lid = get_local_id(0);\n"
    "  uint acc = 0;\n"
    "  for (uint i = lid; i < m; i += get_local_size(0))\n"
    "    acc += partial[i];\n"
    "  scratch[lid] = acc;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {\n"
    "    if (lid < s)\n"
    "      scratch[lid] += scratch[lid + s];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (lid == 0)\n"
    "    result[0] = scratch[0];\n"
    "}\n";

struct host {
  cl_uint n;
  uint32_t *in[2];
};

static void release(void *p) {
  struct host *h = p;
  free(h->in[0]);
  free(h->in[1]);
  free(h);
}

static void *prepare(int quick) {
  struct host *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->n = quick ? 1u << 13 : 1u << 20;
  uint64_t s = 0x7ed;
  for (int a = 0; a < 2; a++) {
    h->in[a] = malloc(h->n * sizeof(uint32_t));
    if (!h->in[a]) {
      release(h);
      return NULL;
    }
    for (cl_uint i = 0; i < h->n; i++)
      h->in[a][i] = real_rand(&s) >> (a ? 4 : 12);
  }
  return h;
}

/* Per array: its GROUPS partials, then its sum. */
#define PER (GROUPS + 1)
static size_t out_size(const void *p) {
  (void)p;
  return 2 * PER * sizeof(cl_uint);
}

static const size_t g_part = WG * GROUPS, l_wg = WG;
static const cl_uint m = GROUPS;

static int raw(const struct real_raw *r, cl_kernel *k, const void *p, void *out) {
  const struct host *h = p;
  cl_mem in[2] = {NULL, NULL}, part[2] = {NULL, NULL}, res[2] = {NULL, NULL};
  cl_uint *o = out;
  int rc = -1;
  for (int a = 0; a < 2; a++) {
    REAL_TRY(real_raw_buffer(r, a, h->n * sizeof(cl_uint), h->in[a], &in[a]));
    REAL_TRY(real_raw_buffer(r, a, GROUPS * sizeof(cl_uint), NULL, &part[a]));
    REAL_TRY(real_raw_buffer(r, a, sizeof(cl_uint), NULL, &res[a]));
  }
  /* One kernel object per kernel, set again before each launch. */
  for (int a = 0; a < 2; a++) {
    REAL_TRY(real_raw_args(k[0], 4, sizeof(cl_mem), &in[a], sizeof(cl_mem), &part[a],
                           WG * sizeof(cl_uint), NULL, sizeof h->n, &h->n));
    REAL_CL(clEnqueueNDRangeKernel(r->q[a], k[0], 1, NULL, &g_part, &l_wg, 0, NULL, NULL));
    REAL_TRY(real_raw_args(k[1], 4, sizeof(cl_mem), &part[a], sizeof(cl_mem), &res[a],
                           WG * sizeof(cl_uint), NULL, sizeof m, &m));
    REAL_CL(clEnqueueNDRangeKernel(r->q[a], k[1], 1, NULL, &l_wg, &l_wg, 0, NULL, NULL));
  }
  for (int a = 0; a < 2; a++) {
    REAL_CL(clEnqueueReadBuffer(r->q[a], part[a], CL_TRUE, 0, GROUPS * sizeof(cl_uint),
                                o + a * PER, 0, NULL, NULL));
    REAL_CL(clEnqueueReadBuffer(r->q[a], res[a], CL_TRUE, 0, sizeof(cl_uint),
                                o + a * PER + GROUPS, 0, NULL, NULL));
  }
  rc = 0;
out:
  for (int a = 0; a < 2; a++) {
    cl_mem all[] = {in[a], part[a], res[a]};
    for (int i = 0; i < 3; i++)
      if (all[i])
        clReleaseMemObject(all[i]);
  }
  return rc;
}

static int cls(cls_context *ctx, cls_kernel **k, const void *p, void *out) {
  const struct host *h = p;
  cls_buffer in[2] = {CLS_BUFFER_NULL, CLS_BUFFER_NULL}, part[2] = {CLS_BUFFER_NULL, CLS_BUFFER_NULL},
             res[2] = {CLS_BUFFER_NULL, CLS_BUFFER_NULL};
  cl_uint *o = out;
  int rc = -1;
  for (int a = 0; a < 2; a++) {
    REAL_TRY(real_cls_buffer(ctx, a, h->n * sizeof(cl_uint), h->in[a], &in[a]));
    REAL_TRY(real_cls_buffer(ctx, a, GROUPS * sizeof(cl_uint), NULL, &part[a]));
    REAL_TRY(real_cls_buffer(ctx, a, sizeof(cl_uint), NULL, &res[a]));
  }
  for (int a = 0; a < 2; a++) {
    cls_arg ap[] = {CLS_IN(in[a]), CLS_OUT(part[a]), CLS_LOCAL(WG * sizeof(cl_uint)),
                    CLS_SCALAR(h->n)};
    REAL_TRY(real_launch(ctx, a, k[0], 1, &g_part, &l_wg, 4, ap));
    cls_arg af[] = {CLS_IN(part[a]), CLS_OUT(res[a]), CLS_LOCAL(WG * sizeof(cl_uint)),
                    CLS_SCALAR(m)};
    REAL_TRY(real_launch(ctx, a, k[1], 1, &l_wg, &l_wg, 4, af));
  }
  for (int a = 0; a < 2; a++) {
    REAL_TRY(real_cls_download(ctx, a, part[a], o + a * PER, GROUPS * sizeof(cl_uint)));
    REAL_TRY(real_cls_download(ctx, a, res[a], o + a * PER + GROUPS, sizeof(cl_uint)));
  }
  rc = 0;
out:
  for (int a = 0; a < 2; a++) {
    cls_buffer all[] = {in[a], part[a], res[a]};
    for (int i = 0; i < 3; i++)
      if (all[i].bits)
        cls_free(ctx, all[i]);
  }
  return rc;
}

static const char *check(const void *p, const void *o) {
  const struct host *h = p;
  const cl_uint *got = o;
  for (int a = 0; a < 2; a++) {
    cl_uint sum = 0, parts = 0;
    for (cl_uint i = 0; i < h->n; i++)
      sum += h->in[a][i];
    for (int g = 0; g < GROUPS; g++)
      parts += got[a * PER + g];
    if (got[a * PER + GROUPS] != sum || parts != sum)
      return a ? "the second array's sum differs from the host's"
               : "the first array's sum differs from the host's";
  }
  return NULL;
}

const struct real_program real_reduce = {
    .name = "reduce",
    .src = SRC,
    .kernels = {"reduce_partial", "reduce_final"},
    .prepare = prepare,
    .release = release,
    .out_size = out_size,
    .raw = raw,
    .cls = cls,
    .check = check,
};
