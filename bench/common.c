/* What every part of clstream-bench shares (common.h): the kernels both
 * sides build, the workload sizes the options may change, and die(). */
#include "common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *SRC =
    "kernel void tiny(global int *x) { x[get_global_id(0)] += 1; }\n"
    "kernel void saxpy(global const float *x, global float *y, float a) {\n"
    "  size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }\n"
    "kernel void stepk(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i] + 1; }\n"
    "kernel void failk(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i]; }\n"
    "kernel void reduce4(global const int *a, global const int *b, global const int *c,\n"
    "                    global const int *d, global int *r) {\n"
    "  size_t i = get_global_id(0); r[i] = a[i] + b[i] + c[i] + d[i]; }\n"
    /* The *-args workloads' kernels take what real kernels take: buffers,
     * a size and a coefficient (a time step). */
    "kernel void tick(global const float *x, global float *y, int n, float dt) {\n"
    "  int i = (int)get_global_id(0); if (i < n) y[i] += dt * x[i]; }\n"
    "kernel void fstep(global const float *a, global float *b, int n, float dt) {\n"
    "  int i = (int)get_global_id(0); if (i < n) b[i] = a[i] + dt; }\n"
    "kernel void fred(global const float *a, global const float *b, global const float *c,\n"
    "                 global const float *d, global float *r, int n, float dt) {\n"
    "  int i = (int)get_global_id(0); if (i < n) r[i] = dt * (a[i] + b[i] + c[i] + d[i]); }\n"
    /* stencil-100: one step of a 3-point stencil, there and back. */
    "kernel void stencil(global const float *a, global float *b, int n) {\n"
    "  int i = (int)get_global_id(0); if (i >= n) return;\n"
    "  b[i] = i > 0 && i < n - 1 ? 0.25f * a[i - 1] + 0.5f * a[i] + 0.25f * a[i + 1] : a[i]; }\n";

int TINY_N = 10000, SAXPY_REPS = 20, PP_N = 2000, FAN_N = 500, SKIP_N = 10000;
const int STENCIL_N = 100;
const size_t STENCIL_LEN = (size_t)1 << 16;
size_t SAXPY_LEN = (size_t)1 << 24;

void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "clstream-bench: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(2);
}
