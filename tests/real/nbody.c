/* All-pairs N-body, in the idiom of the vendor SDK samples: float4
 * positions (w: the mass) and velocities, a tile of positions staged in
 * __local float4 scratch (an argument), three scalars (the body count, the
 * time step, the softening), and positions and velocities ping-ponged
 * between steps by swapping the buffers bound.  After the steps a second
 * kernel on the other queue (stream) reads the final velocities through a
 * __constant pointer and takes a struct passed by value, as code that
 * packs its parameters does: the kinetic energy of each body. */
#include "real.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GROUP 64

static const char SRC[] =
    "typedef struct { float scale; int n; } energy_params;\n"
    "__kernel void nbody_step(__global float4 *pos, __global float4 *vel,\n"
    "                         __global float4 *newPos, __global float4 *newVel,\n"
    "                         __local float4 *tile, int numBodies, float deltaTime,\n"
    "                         float epsSqr) {\n"
    "  int gid = get_global_id(0), lid = get_local_id(0), size = get_local_size(0);\n"
    "  float4 myPos = pos[gid];\n"
    "  float4 acc = (float4)(0.0f, 0.0f, 0.0f, 0.0f);\n"
    "  for (int t = 0; t < numBodies / size; t++) {\n"
    "    tile[lid] = pos[t * size + lid];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (int j = 0; j < size; j++) {\n"
    "      float4 other = tile[j];\n"
    "      float4 r;\n"
    "      r.xyz = other.xyz - myPos.xyz;\n"
    "      float distSqr = r.x * r.x + r.y * r.y + r.z * r.z;\n"
    "      float invDist = 1.0f / sqrt(distSqr + epsSqr);\n"
    "      float s = other.w * invDist * invDist * invDist;\n"
    "      acc.xyz += s * r.xyz;\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  float4 oldVel = vel[gid];\n"
    "  float4 p = myPos;\n"
    "  p.xyz += oldVel.xyz * deltaTime + acc.xyz * 0.5f * deltaTime * deltaTime;\n"
    "  float4 v = oldVel;\n"
    "  v.xyz += acc.xyz * deltaTime;\n"
    "  newPos[gid] = p;\n"
    "  newVel[gid] = v;\n"
    "}\n"
    "__kernel void kinetic(__constant float4 *vel, __global float4 *pos,\n"
    "                      __global float *energy, energy_params prm) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i >= prm.n) return;\n"
    "  float4 v = vel[i];\n"
    "  energy[i] = prm.scale * pos[i].w * (v.x * v.x + v.y * v.y + v.z * v.z);\n"
    "}\n";

/* The struct the kernel takes by value, laid out as OpenCL C lays it out. */
typedef struct {
  cl_float scale;
  cl_int n;
} energy_params;

struct host {
  cl_int n, steps;
  cl_float dt, eps2;
  cl_float4 *pos, *vel;
};

static void release(void *p) {
  struct host *h = p;
  free(h->pos);
  free(h->vel);
  free(h);
}

static void *prepare(int quick) {
  struct host *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->n = quick ? 256 : 1024;
  h->steps = quick ? 4 : 10;
  h->dt = 0.005f;
  h->eps2 = 0.01f;
  h->pos = malloc((size_t)h->n * sizeof *h->pos);
  h->vel = malloc((size_t)h->n * sizeof *h->vel);
  if (!h->pos || !h->vel) {
    release(h);
    return NULL;
  }
  uint64_t s = 0x6b0d;
  for (int i = 0; i < h->n; i++) {
    for (int c = 0; c < 3; c++) {
      h->pos[i].s[c] = real_unit(&s) * 2.0f - 1.0f;
      h->vel[i].s[c] = (real_unit(&s) - 0.5f) * 0.1f;
    }
    h->pos[i].s[3] = 0.5f + real_unit(&s); /* the mass */
    h->vel[i].s[3] = 0.0f;
  }
  return h;
}

/* The final positions, then each body's kinetic energy. */
static size_t out_size(const void *p) {
  const struct host *h = p;
  return (size_t)h->n * (sizeof(cl_float4) + sizeof(cl_float));
}

static const size_t l_group[1] = {GROUP};

static int raw(const struct real_raw *r, cl_kernel *k, const void *p, void *out) {
  const struct host *h = p;
  size_t bytes = (size_t)h->n * sizeof(cl_float4), g[1] = {(size_t)h->n};
  cl_mem pos[2] = {NULL, NULL}, vel[2] = {NULL, NULL}, energy = NULL;
  cl_event stepped = NULL;
  energy_params prm = {0.5f, h->n};
  int rc = -1;
  REAL_TRY(real_raw_buffer(r, 0, bytes, h->pos, &pos[0]));
  REAL_TRY(real_raw_buffer(r, 0, bytes, h->vel, &vel[0]));
  REAL_TRY(real_raw_buffer(r, 0, bytes, NULL, &pos[1]));
  REAL_TRY(real_raw_buffer(r, 0, bytes, NULL, &vel[1]));
  REAL_TRY(real_raw_buffer(r, 1, (size_t)h->n * sizeof(cl_float), NULL, &energy));
  for (int it = 0; it < h->steps; it++) {
    int a = it & 1, b = !a;
    REAL_TRY(real_raw_args(k[0], 8, sizeof(cl_mem), &pos[a], sizeof(cl_mem), &vel[a],
                           sizeof(cl_mem), &pos[b], sizeof(cl_mem), &vel[b],
                           (size_t)GROUP * sizeof(cl_float4), NULL, sizeof h->n, &h->n,
                           sizeof h->dt, &h->dt, sizeof h->eps2, &h->eps2));
    REAL_CL(clEnqueueNDRangeKernel(r->q[0], k[0], 1, NULL, g, l_group, 0, NULL,
                                   it == h->steps - 1 ? &stepped : NULL));
  }
  clFlush(r->q[0]); /* another queue waits on it */
  int f = h->steps & 1;
  REAL_TRY(real_raw_args(k[1], 4, sizeof(cl_mem), &vel[f], sizeof(cl_mem), &pos[f],
                         sizeof(cl_mem), &energy, sizeof prm, &prm));
  REAL_CL(clEnqueueNDRangeKernel(r->q[1], k[1], 1, NULL, g, NULL, 1, &stepped, NULL));
  REAL_CL(clEnqueueReadBuffer(r->q[0], pos[f], CL_TRUE, 0, bytes, out, 0, NULL, NULL));
  REAL_CL(clEnqueueReadBuffer(r->q[1], energy, CL_TRUE, 0, (size_t)h->n * sizeof(cl_float),
                              (char *)out + bytes, 0, NULL, NULL));
  rc = 0;
out:
  if (stepped)
    clReleaseEvent(stepped);
  for (int i = 0; i < 2; i++) {
    if (pos[i])
      clReleaseMemObject(pos[i]);
    if (vel[i])
      clReleaseMemObject(vel[i]);
  }
  if (energy)
    clReleaseMemObject(energy);
  return rc;
}

static int cls(cls_context *ctx, cls_kernel **k, const void *p, void *out) {
  const struct host *h = p;
  size_t bytes = (size_t)h->n * sizeof(cl_float4), g[1] = {(size_t)h->n};
  cls_buffer pos[2] = {CLS_BUFFER_NULL, CLS_BUFFER_NULL};
  cls_buffer vel[2] = {CLS_BUFFER_NULL, CLS_BUFFER_NULL}, energy = CLS_BUFFER_NULL;
  energy_params prm = {0.5f, h->n};
  int rc = -1;
  REAL_TRY(real_cls_buffer(ctx, 0, bytes, h->pos, &pos[0]));
  REAL_TRY(real_cls_buffer(ctx, 0, bytes, h->vel, &vel[0]));
  REAL_TRY(real_cls_buffer(ctx, 0, bytes, NULL, &pos[1]));
  REAL_TRY(real_cls_buffer(ctx, 0, bytes, NULL, &vel[1]));
  REAL_TRY(real_cls_buffer(ctx, 1, (size_t)h->n * sizeof(cl_float), NULL, &energy));
  for (int it = 0; it < h->steps; it++) {
    int a = it & 1, b = !a;
    cls_arg args[] = {CLS_IN(pos[a]),    CLS_IN(vel[a]),
                      CLS_OUT(pos[b]),   CLS_OUT(vel[b]),
                      CLS_LOCAL((size_t)GROUP * sizeof(cl_float4)),
                      CLS_SCALAR(h->n),  CLS_SCALAR(h->dt),
                      CLS_SCALAR(h->eps2)};
    REAL_TRY(real_launch(ctx, 0, k[0], 1, g, l_group, 8, args));
  }
  int f = h->steps & 1;
  cls_arg e[] = {CLS_IN(vel[f]), CLS_IN(pos[f]), CLS_OUT(energy), CLS_SCALAR(prm)};
  REAL_TRY(real_launch(ctx, 1, k[1], 1, g, NULL, 4, e)); /* waits for stream 0's steps */
  REAL_TRY(real_cls_download(ctx, 0, pos[f], out, bytes));
  REAL_TRY(real_cls_download(ctx, 1, energy, (char *)out + bytes,
                             (size_t)h->n * sizeof(cl_float)));
  rc = 0;
out:
  for (int i = 0; i < 2; i++) {
    if (pos[i].bits)
      cls_free(ctx, pos[i]);
    if (vel[i].bits)
      cls_free(ctx, vel[i]);
  }
  if (energy.bits)
    cls_free(ctx, energy);
  return rc;
}

/* Within rounding of the host's, step for step in the device's order (the
 * device may contract into fma and its sqrt and division are not
 * correctly rounded). */
static const char *check(const void *p, const void *o) {
  const struct host *h = p;
  size_t n = (size_t)h->n;
  cl_float4 *pa = malloc(n * sizeof *pa), *va = malloc(n * sizeof *va);
  cl_float4 *pb = malloc(n * sizeof *pb), *vb = malloc(n * sizeof *vb);
  const char *why = pa && va && pb && vb ? NULL : "out of memory for the host's reference";
  if (!why) {
    memcpy(pa, h->pos, n * sizeof *pa);
    memcpy(va, h->vel, n * sizeof *va);
  }
  for (int it = 0; it < h->steps && !why; it++) {
    for (size_t i = 0; i < n; i++) {
      float acc[3] = {0, 0, 0};
      for (size_t j = 0; j < n; j++) {
        float r[3], d2 = 0;
        for (int c = 0; c < 3; c++) {
          r[c] = pa[j].s[c] - pa[i].s[c];
          d2 += r[c] * r[c];
        }
        float inv = 1.0f / sqrtf(d2 + h->eps2), s = pa[j].s[3] * inv * inv * inv;
        for (int c = 0; c < 3; c++)
          acc[c] += s * r[c];
      }
      for (int c = 0; c < 3; c++) {
        pb[i].s[c] = pa[i].s[c] + va[i].s[c] * h->dt + acc[c] * 0.5f * h->dt * h->dt;
        vb[i].s[c] = va[i].s[c] + acc[c] * h->dt;
      }
      pb[i].s[3] = pa[i].s[3];
      vb[i].s[3] = va[i].s[3];
    }
    cl_float4 *t = pa;
    pa = pb;
    pb = t;
    t = va;
    va = vb;
    vb = t;
  }
  const cl_float4 *got = o;
  const float *energy = (const float *)((const char *)o + n * sizeof(cl_float4));
  for (size_t i = 0; i < n && !why; i++) {
    for (int c = 0; c < 4; c++)
      if (fabsf(got[i].s[c] - pa[i].s[c]) > 1e-4f * (1.0f + fabsf(pa[i].s[c])))
        why = "the positions differ from the host's beyond rounding";
    float v2 = va[i].s[0] * va[i].s[0] + va[i].s[1] * va[i].s[1] + va[i].s[2] * va[i].s[2];
    float ke = 0.5f * pa[i].s[3] * v2;
    if (!why && fabsf(energy[i] - ke) > 1e-4f * (1.0f + fabsf(ke)))
      why = "the kinetic energies differ from the host's beyond rounding";
  }
  free(pa);
  free(va);
  free(pb);
  free(vb);
  return why;
}

const struct real_program real_nbody = {
    .name = "nbody",
    .src = SRC,
    .kernels = {"nbody_step", "kinetic"},
    .prepare = prepare,
    .release = release,
    .out_size = out_size,
    .raw = raw,
    .cls = cls,
    .check = check,
};
