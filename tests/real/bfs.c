/* Breadth-first search over a random graph, level by level: one kernel
 * expands the frontier (mask) into the nodes it reaches, a second makes
 * those the next frontier and raises a flag; the host uploads a cleared
 * flag before and downloads it after every level, and stops when nothing
 * was reached.  Nodes are a struct of (first edge, edge count). */
#include "real.h"

#include <stdlib.h>
#include <string.h>

#define WG 256

static const char SRC[] =
    "typedef struct { int starting; int no_of_edges; } Node;\n"
    "__kernel void bfs_expand(__global Node *nodes, __global int *edges,\n"
    "                         __global char *mask, __global char *updating,\n"
    "                         __global char *visited, __global int *cost, int n) {\n"
    "  int tid = get_global_id(0);\n"
    "  if (tid < n && mask[tid]) {\n"
    "    mask[tid] = 0;\n"
    "    for (int i = nodes[tid].starting;\n"
    "         i < nodes[tid].no_of_edges + nodes[tid].starting; i++) {\n"
    "      int id = edges[i];\n"
    "      if (!visited[id]) {\n"
    "        cost[id] = cost[tid] + 1;\n"
    "        updating[id] = 1;\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "__kernel void bfs_update(__global char *mask, __global char *updating,\n"
    "                         __global char *visited, __global char *over, int n) {\n"
    "  int tid = get_global_id(0);\n"
    "  if (tid < n && updating[tid]) {\n"
    "    mask[tid] = 1;\n"
    "    visited[tid] = 1;\n"
    "    *over = 1;\n"
    "    updating[tid] = 0;\n"
    "  }\n"
    "}\n";

struct node {
  cl_int starting, no_of_edges;
};

struct host {
  cl_int n, nedges;
  struct node *nodes;
  cl_int *edges, *cost;
  cl_char *mask, *visited, *zeros;
};

static void release(void *p) {
  struct host *h = p;
  free(h->nodes);
  free(h->edges);
  free(h->cost);
  free(h->mask);
  free(h->visited);
  free(h->zeros);
  free(h);
}

static void *prepare(int quick) {
  struct host *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->n = quick ? 600 : 50000;
  h->nodes = malloc(h->n * sizeof *h->nodes);
  h->edges = malloc((size_t)h->n * 6 * sizeof *h->edges);
  h->cost = malloc(h->n * sizeof *h->cost);
  h->mask = calloc((size_t)h->n, 1);
  h->visited = calloc((size_t)h->n, 1);
  h->zeros = calloc((size_t)h->n, 1);
  if (!h->nodes || !h->edges || !h->cost || !h->mask || !h->visited || !h->zeros) {
    release(h);
    return NULL;
  }
  uint64_t s = 0xbf5;
  int at = 0;
  for (cl_int i = 0; i < h->n; i++) {
    int deg = 1 + (int)(real_rand(&s) % 5); /* sparse: many levels */
    h->nodes[i] = (struct node){at, deg};
    for (int j = 0; j < deg; j++) /* mostly near neighbours, a few far */
      h->edges[at++] = real_rand(&s) % 8 ? (cl_int)((i + 1 + real_rand(&s) % 64) % h->n)
                                         : (cl_int)(real_rand(&s) % (uint32_t)h->n);
    h->cost[i] = -1;
  }
  h->nedges = at;
  h->cost[0] = 0;
  h->mask[0] = 1;
  h->visited[0] = 1;
  return h;
}

/* The cost of each node, then the number of levels. */
static size_t out_size(const void *p) {
  const struct host *h = p;
  return (h->n + 1) * sizeof(cl_int);
}

static const size_t l_wg = WG;

static int raw(const struct real_raw *r, cl_kernel *k, const void *p, void *out) {
  const struct host *h = p;
  size_t g = ((size_t)h->n + WG - 1) / WG * WG;
  cl_mem nodes = NULL, edges = NULL, mask = NULL, upd = NULL, vis = NULL, cost = NULL, over = NULL;
  cl_int levels = 0;
  int rc = -1;
  REAL_TRY(real_raw_buffer(r, 0, h->n * sizeof(struct node), h->nodes, &nodes));
  REAL_TRY(real_raw_buffer(r, 0, h->nedges * sizeof(cl_int), h->edges, &edges));
  REAL_TRY(real_raw_buffer(r, 0, (size_t)h->n, h->mask, &mask));
  REAL_TRY(real_raw_buffer(r, 0, (size_t)h->n, h->zeros, &upd));
  REAL_TRY(real_raw_buffer(r, 0, (size_t)h->n, h->visited, &vis));
  REAL_TRY(real_raw_buffer(r, 0, h->n * sizeof(cl_int), h->cost, &cost));
  REAL_TRY(real_raw_buffer(r, 0, 1, NULL, &over));
  REAL_TRY(real_raw_args(k[0], 7, sizeof(cl_mem), &nodes, sizeof(cl_mem), &edges, sizeof(cl_mem),
                         &mask, sizeof(cl_mem), &upd, sizeof(cl_mem), &vis, sizeof(cl_mem), &cost,
                         sizeof h->n, &h->n));
  REAL_TRY(real_raw_args(k[1], 5, sizeof(cl_mem), &mask, sizeof(cl_mem), &upd, sizeof(cl_mem), &vis,
                         sizeof(cl_mem), &over, sizeof h->n, &h->n));
  cl_char stop;
  do {
    stop = 0;
    REAL_CL(clEnqueueWriteBuffer(r->q[0], over, CL_TRUE, 0, 1, &stop, 0, NULL, NULL));
    REAL_CL(clEnqueueNDRangeKernel(r->q[0], k[0], 1, NULL, &g, &l_wg, 0, NULL, NULL));
    REAL_CL(clEnqueueNDRangeKernel(r->q[0], k[1], 1, NULL, &g, &l_wg, 0, NULL, NULL));
    REAL_CL(clEnqueueReadBuffer(r->q[0], over, CL_TRUE, 0, 1, &stop, 0, NULL, NULL));
    levels++;
  } while (stop);
  REAL_CL(clEnqueueReadBuffer(r->q[0], cost, CL_TRUE, 0, h->n * sizeof(cl_int), out, 0, NULL,
                              NULL));
  ((cl_int *)out)[h->n] = levels;
  rc = 0;
out:;
  cl_mem all[] = {nodes, edges, mask, upd, vis, cost, over};
  for (int i = 0; i < 7; i++)
    if (all[i])
      clReleaseMemObject(all[i]);
  return rc;
}

static int cls(cls_context *ctx, cls_kernel **k, const void *p, void *out) {
  const struct host *h = p;
  size_t g = ((size_t)h->n + WG - 1) / WG * WG;
  cls_buffer nodes = CLS_BUFFER_NULL, edges = CLS_BUFFER_NULL, mask = CLS_BUFFER_NULL,
             upd = CLS_BUFFER_NULL, vis = CLS_BUFFER_NULL, cost = CLS_BUFFER_NULL,
             over = CLS_BUFFER_NULL;
  cl_int levels = 0;
  int rc = -1;
  REAL_TRY(real_cls_buffer(ctx, 0, h->n * sizeof(struct node), h->nodes, &nodes));
  REAL_TRY(real_cls_buffer(ctx, 0, h->nedges * sizeof(cl_int), h->edges, &edges));
  REAL_TRY(real_cls_buffer(ctx, 0, (size_t)h->n, h->mask, &mask));
  REAL_TRY(real_cls_buffer(ctx, 0, (size_t)h->n, h->zeros, &upd));
  REAL_TRY(real_cls_buffer(ctx, 0, (size_t)h->n, h->visited, &vis));
  REAL_TRY(real_cls_buffer(ctx, 0, h->n * sizeof(cl_int), h->cost, &cost));
  REAL_TRY(real_cls_buffer(ctx, 0, 1, NULL, &over));
  cls_arg a1[] = {CLS_IN(nodes),  CLS_IN(edges), CLS_INOUT(mask),   CLS_INOUT(upd),
                  CLS_IN(vis),    CLS_INOUT(cost), CLS_SCALAR(h->n)};
  cls_arg a2[] = {CLS_INOUT(mask), CLS_INOUT(upd), CLS_INOUT(vis), CLS_INOUT(over),
                  CLS_SCALAR(h->n)};
  cl_char stop;
  do {
    stop = 0;
    REAL_CLS(cls_upload(ctx, 0, over, 0, &stop, 1));
    REAL_TRY(real_launch(ctx, 0, k[0], 1, &g, &l_wg, 7, a1));
    REAL_TRY(real_launch(ctx, 0, k[1], 1, &g, &l_wg, 5, a2));
    REAL_TRY(real_cls_download(ctx, 0, over, &stop, 1));
    levels++;
  } while (stop);
  REAL_TRY(real_cls_download(ctx, 0, cost, out, h->n * sizeof(cl_int)));
  ((cl_int *)out)[h->n] = levels;
  rc = 0;
out:;
  cls_buffer all[] = {nodes, edges, mask, upd, vis, cost, over};
  for (int i = 0; i < 7; i++)
    if (all[i].bits)
      cls_free(ctx, all[i]);
  return rc;
}

/* The host's BFS: the same levels, the same costs (-1: unreached). */
static const char *check(const void *p, const void *o) {
  const struct host *h = p;
  const cl_int *got = o;
  cl_int *cost = malloc(h->n * sizeof *cost), *queue = malloc(h->n * sizeof *queue);
  const char *why = cost && queue ? NULL : "out of memory for the host's reference";
  if (!why) {
    int head = 0, tail = 0;
    for (cl_int i = 0; i < h->n; i++)
      cost[i] = -1;
    cost[0] = 0;
    queue[tail++] = 0;
    while (head < tail) {
      int v = queue[head++];
      for (int i = h->nodes[v].starting; i < h->nodes[v].starting + h->nodes[v].no_of_edges; i++)
        if (cost[h->edges[i]] < 0) {
          cost[h->edges[i]] = cost[v] + 1;
          queue[tail++] = h->edges[i];
        }
    }
    cl_int deepest = 0;
    for (cl_int i = 0; i < h->n; i++)
      if (cost[i] > deepest)
        deepest = cost[i];
    if (memcmp(got, cost, h->n * sizeof *cost) != 0)
      why = "the costs differ from the host's BFS";
    else if (got[h->n] != deepest + 1)
      why = "the number of levels differs from the host's BFS";
  }
  free(cost);
  free(queue);
  return why;
}

const struct real_program real_bfs = {
    .name = "bfs",
    .src = SRC,
    .kernels = {"bfs_expand", "bfs_update"},
    .prepare = prepare,
    .release = release,
    .out_size = out_size,
    .raw = raw,
    .cls = cls,
    .check = check,
};
