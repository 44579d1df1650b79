/* Bitonic sort of key-value pairs in the shape of the vendor samples'
 * sorting networks: one work-group sorts its block in __local scratch
 * (arguments here), then, for every merge size above a block, one launch
 * per global stride (two `const uint` scalars that change every launch)
 * and one launch that finishes the strides inside a block in __local
 * memory.  Every kernel takes a destination and a source pair of
 * pointers, non-const, and the merges are given the same buffers as both,
 * as the samples' host code does: bound CLS_OUT and CLS_IN in one launch.
 * Ascending on one stream, descending on the other, 45 launches a stream
 * at full size. */
#include "real.h"

#include <stdlib.h>
#include <string.h>

#define L 128 /* work-items a group: a block is 2 * L pairs */

static const char SRC[] =
    "/* dir: 1 sorts ascending, 0 descending. */\n"
    "inline void cmp_swap(uint *ka, uint *va, uint *kb, uint *vb, uint up) {\n"
    "  if ((*ka > *kb) == up) {\n"
    "    uint k = *ka, v = *va;\n"
    "    *ka = *kb; *va = *vb; *kb = k; *vb = v;\n"
    "  }\n"
    "}\n"
    "__kernel void bitonic_sort_local(__global uint *dst_key, __global uint *dst_val,\n"
    "                                 __global uint *src_key, __global uint *src_val,\n"
    "                                 __local uint *lk, __local uint *lv, uint dir) {\n"
    "  uint lid = get_local_id(0), hw = get_local_size(0), block = 2 * hw;\n"
    "  uint base = get_group_id(0) * block;\n"
    "  lk[lid] = src_key[base + lid]; lv[lid] = src_val[base + lid];\n"
    "  lk[lid + hw] = src_key[base + lid + hw]; lv[lid + hw] = src_val[base + lid + hw];\n"
    "  for (uint size = 2; size <= block; size <<= 1)\n"
    "    for (uint stride = size >> 1; stride > 0; stride >>= 1) {\n"
    "      barrier(CLK_LOCAL_MEM_FENCE);\n"
    "      uint i = 2 * lid - (lid & (stride - 1));\n"
    "      uint ka = lk[i], va = lv[i], kb = lk[i + stride], vb = lv[i + stride];\n"
    "      cmp_swap(&ka, &va, &kb, &vb, (((base + i) & size) == 0) == (dir != 0));\n"
    "      lk[i] = ka; lv[i] = va; lk[i + stride] = kb; lv[i + stride] = vb;\n"
    "    }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  dst_key[base + lid] = lk[lid]; dst_val[base + lid] = lv[lid];\n"
    "  dst_key[base + lid + hw] = lk[lid + hw]; dst_val[base + lid + hw] = lv[lid + hw];\n"
    "}\n"
    "__kernel void bitonic_merge_global(__global uint *dst_key, __global uint *dst_val,\n"
    "                                   __global uint *src_key, __global uint *src_val,\n"
    "                                   const uint size, const uint stride, uint dir) {\n"
    "  uint id = get_global_id(0);\n"
    "  uint i = 2 * id - (id & (stride - 1));\n"
    "  uint ka = src_key[i], va = src_val[i], kb = src_key[i + stride], vb = src_val[i + stride];\n"
    "  cmp_swap(&ka, &va, &kb, &vb, ((i & size) == 0) == (dir != 0));\n"
    "  dst_key[i] = ka; dst_val[i] = va; dst_key[i + stride] = kb; dst_val[i + stride] = vb;\n"
    "}\n"
    "__kernel void bitonic_merge_local(__global uint *dst_key, __global uint *dst_val,\n"
    "                                  __global uint *src_key, __global uint *src_val,\n"
    "                                  __local uint *lk, __local uint *lv,\n"
    "                                  const uint size, uint dir) {\n"
    "  uint lid = get_local_id(0), hw = get_local_size(0), block = 2 * hw;\n"
    "  uint base = get_group_id(0) * block;\n"
    "  uint up = ((base & size) == 0) == (dir != 0);\n"
    "  lk[lid] = src_key[base + lid]; lv[lid] = src_val[base + lid];\n"
    "  lk[lid + hw] = src_key[base + lid + hw]; lv[lid + hw] = src_val[base + lid + hw];\n"
    "  for (uint stride = hw; stride > 0; stride >>= 1) {\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    uint i = 2 * lid - (lid & (stride - 1));\n"
    "    uint ka = lk[i], va = lv[i], kb = lk[i + stride], vb = lv[i + stride];\n"
    "    cmp_swap(&ka, &va, &kb, &vb, up);\n"
    "    lk[i] = ka; lv[i] = va; lk[i + stride] = kb; lv[i + stride] = vb;\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  dst_key[base + lid] = lk[lid]; dst_val[base + lid] = lv[lid];\n"
    "  dst_key[base + lid + hw] = lk[lid + hw]; dst_val[base + lid + hw] = lv[lid + hw];\n"
    "}\n";

struct host {
  cl_uint n;                   /* pairs an array, a power of two, at least a block */
  cl_uint *keys[2], *vals[2];  /* values: each key's index */
};

static void release(void *p) {
  struct host *h = p;
  for (int a = 0; a < 2; a++) {
    free(h->keys[a]);
    free(h->vals[a]);
  }
  free(h);
}

static void *prepare(int quick) {
  struct host *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->n = quick ? 4096 : 65536;
  uint64_t s = 0x5027;
  for (int a = 0; a < 2; a++) {
    h->keys[a] = malloc(h->n * sizeof(cl_uint));
    h->vals[a] = malloc(h->n * sizeof(cl_uint));
    if (!h->keys[a] || !h->vals[a]) {
      release(h);
      return NULL;
    }
    /* Few distinct keys on the second array: ties too. */
    for (cl_uint i = 0; i < h->n; i++) {
      h->keys[a][i] = a ? real_rand(&s) % 97 : real_rand(&s);
      h->vals[a][i] = i;
    }
  }
  return h;
}

/* Keys then values, per array. */
static size_t out_size(const void *p) {
  const struct host *h = p;
  return 4 * (size_t)h->n * sizeof(cl_uint);
}

/* The launches of one sort, in order (what each side enqueues): the
 * blocks sorted, then for each merge size above a block its global
 * strides and one launch for the strides inside a block. */
enum { SORT_LOCAL, MERGE_GLOBAL, MERGE_LOCAL };
struct step {
  int kernel;
  cl_uint size, stride;
};
#define MAX_STEPS 64 /* 45 for 65536 pairs */

static int steps(const struct host *h, struct step *st) {
  int n = 0;
  st[n++] = (struct step){SORT_LOCAL, 0, 0};
  for (cl_uint size = 4 * L; size <= h->n; size <<= 1) {
    for (cl_uint stride = size / 2; stride >= 2 * L; stride >>= 1)
      st[n++] = (struct step){MERGE_GLOBAL, size, stride};
    st[n++] = (struct step){MERGE_LOCAL, size, 0};
  }
  return n;
}

static const size_t l_group = L;

static int raw(const struct real_raw *r, cl_kernel *k, const void *p, void *out) {
  const struct host *h = p;
  size_t bytes = (size_t)h->n * sizeof(cl_uint), g = h->n / 2;
  size_t tile = 2 * L * sizeof(cl_uint);
  struct step st[MAX_STEPS];
  int nst = steps(h, st);
  cl_mem sk[2] = {NULL, NULL}, sv[2] = {NULL, NULL}, dk[2] = {NULL, NULL},
         dv[2] = {NULL, NULL};
  int rc = -1;
  for (int a = 0; a < 2; a++) {
    REAL_TRY(real_raw_buffer(r, a, bytes, h->keys[a], &sk[a]));
    REAL_TRY(real_raw_buffer(r, a, bytes, h->vals[a], &sv[a]));
    REAL_TRY(real_raw_buffer(r, a, bytes, NULL, &dk[a]));
    REAL_TRY(real_raw_buffer(r, a, bytes, NULL, &dv[a]));
  }
  for (int a = 0; a < 2; a++) {
    cl_uint dir = a ? 0 : 1;
    for (int i = 0; i < nst; i++) {
      cl_kernel kk = k[st[i].kernel];
      const size_t *lp = &l_group;
      if (st[i].kernel == SORT_LOCAL) {
        REAL_TRY(real_raw_args(kk, 7, sizeof(cl_mem), &dk[a], sizeof(cl_mem), &dv[a],
                               sizeof(cl_mem), &sk[a], sizeof(cl_mem), &sv[a], tile, NULL,
                               tile, NULL, sizeof dir, &dir));
      } else if (st[i].kernel == MERGE_GLOBAL) {
        REAL_TRY(real_raw_args(kk, 7, sizeof(cl_mem), &dk[a], sizeof(cl_mem), &dv[a],
                               sizeof(cl_mem), &dk[a], sizeof(cl_mem), &dv[a],
                               sizeof st[i].size, &st[i].size, sizeof st[i].stride,
                               &st[i].stride, sizeof dir, &dir));
        lp = NULL;
      } else {
        REAL_TRY(real_raw_args(kk, 8, sizeof(cl_mem), &dk[a], sizeof(cl_mem), &dv[a],
                               sizeof(cl_mem), &dk[a], sizeof(cl_mem), &dv[a], tile, NULL,
                               tile, NULL, sizeof st[i].size, &st[i].size, sizeof dir, &dir));
      }
      REAL_CL(clEnqueueNDRangeKernel(r->q[a], kk, 1, NULL, &g, lp, 0, NULL, NULL));
    }
  }
  for (int a = 0; a < 2; a++) {
    REAL_CL(clEnqueueReadBuffer(r->q[a], dk[a], CL_TRUE, 0, bytes,
                                (char *)out + (2 * a) * bytes, 0, NULL, NULL));
    REAL_CL(clEnqueueReadBuffer(r->q[a], dv[a], CL_TRUE, 0, bytes,
                                (char *)out + (2 * a + 1) * bytes, 0, NULL, NULL));
  }
  rc = 0;
out:
  for (int a = 0; a < 2; a++) {
    cl_mem all[] = {sk[a], sv[a], dk[a], dv[a]};
    for (int i = 0; i < 4; i++)
      if (all[i])
        clReleaseMemObject(all[i]);
  }
  return rc;
}

static int cls(cls_context *ctx, cls_kernel **k, const void *p, void *out) {
  const struct host *h = p;
  size_t bytes = (size_t)h->n * sizeof(cl_uint), g = h->n / 2;
  size_t tile = 2 * L * sizeof(cl_uint);
  struct step st[MAX_STEPS];
  int nst = steps(h, st);
  cls_buffer sk[2] = {CLS_BUFFER_NULL, CLS_BUFFER_NULL}, sv[2] = {CLS_BUFFER_NULL, CLS_BUFFER_NULL},
             dk[2] = {CLS_BUFFER_NULL, CLS_BUFFER_NULL}, dv[2] = {CLS_BUFFER_NULL, CLS_BUFFER_NULL};
  int rc = -1;
  for (int a = 0; a < 2; a++) {
    REAL_TRY(real_cls_buffer(ctx, a, bytes, h->keys[a], &sk[a]));
    REAL_TRY(real_cls_buffer(ctx, a, bytes, h->vals[a], &sv[a]));
    REAL_TRY(real_cls_buffer(ctx, a, bytes, NULL, &dk[a]));
    REAL_TRY(real_cls_buffer(ctx, a, bytes, NULL, &dv[a]));
  }
  for (int a = 0; a < 2; a++) {
    cl_uint dir = a ? 0 : 1;
    for (int i = 0; i < nst; i++) {
      if (st[i].kernel == SORT_LOCAL) {
        cls_arg x[] = {CLS_OUT(dk[a]), CLS_OUT(dv[a]), CLS_IN(sk[a]),   CLS_IN(sv[a]),
                       CLS_LOCAL(tile), CLS_LOCAL(tile), CLS_SCALAR(dir)};
        REAL_TRY(real_launch(ctx, a, k[SORT_LOCAL], 1, &g, &l_group, 7, x));
      } else if (st[i].kernel == MERGE_GLOBAL) {
        /* The samples' call: the same buffers as destination and source. */
        cls_arg x[] = {CLS_OUT(dk[a]),         CLS_OUT(dv[a]),           CLS_IN(dk[a]),
                       CLS_IN(dv[a]),          CLS_SCALAR(st[i].size), CLS_SCALAR(st[i].stride),
                       CLS_SCALAR(dir)};
        REAL_TRY(real_launch(ctx, a, k[MERGE_GLOBAL], 1, &g, NULL, 7, x));
      } else {
        cls_arg x[] = {CLS_OUT(dk[a]),  CLS_OUT(dv[a]),  CLS_IN(dk[a]),          CLS_IN(dv[a]),
                       CLS_LOCAL(tile), CLS_LOCAL(tile), CLS_SCALAR(st[i].size), CLS_SCALAR(dir)};
        REAL_TRY(real_launch(ctx, a, k[MERGE_LOCAL], 1, &g, &l_group, 8, x));
      }
    }
  }
  for (int a = 0; a < 2; a++) {
    REAL_TRY(real_cls_download(ctx, a, dk[a], (char *)out + (2 * a) * bytes, bytes));
    REAL_TRY(real_cls_download(ctx, a, dv[a], (char *)out + (2 * a + 1) * bytes, bytes));
  }
  rc = 0;
out:
  for (int a = 0; a < 2; a++) {
    cls_buffer all[] = {sk[a], sv[a], dk[a], dv[a]};
    for (int i = 0; i < 4; i++)
      if (all[i].bits)
        cls_free(ctx, all[i]);
  }
  return rc;
}

static int up(const void *x, const void *y) {
  cl_uint a = *(const cl_uint *)x, b = *(const cl_uint *)y;
  return (a > b) - (a < b);
}

/* Keys: the host's sort exactly, ascending then descending; values: a
 * permutation of the indices, each naming its key's place in the input. */
static const char *check(const void *p, const void *o) {
  const struct host *h = p;
  cl_uint *want = malloc(h->n * sizeof *want);
  unsigned char *seen = calloc(h->n, 1);
  const char *why = want && seen ? NULL : "out of memory for the host's reference";
  for (int a = 0; a < 2 && !why; a++) {
    memcpy(want, h->keys[a], h->n * sizeof *want);
    qsort(want, h->n, sizeof *want, up);
    const cl_uint *key = (const cl_uint *)o + (size_t)2 * a * h->n, *val = key + h->n;
    memset(seen, 0, h->n);
    for (cl_uint i = 0; i < h->n && !why; i++) {
      if (key[i] != want[a ? h->n - 1 - i : i])
        why = a ? "the second array's keys are not in descending order"
                : "the first array's keys are not in ascending order";
      else if (val[i] >= h->n || seen[val[i]]++ || h->keys[a][val[i]] != key[i])
        why = "a value does not name its key's place in the input once";
    }
  }
  free(seen);
  free(want);
  return why;
}

const struct real_program real_sort = {
    .name = "sort",
    .src = SRC,
    .kernels = {"bitonic_sort_local", "bitonic_merge_global", "bitonic_merge_local"},
    .prepare = prepare,
    .release = release,
    .out_size = out_size,
    .raw = raw,
    .cls = cls,
    .check = check,
};
