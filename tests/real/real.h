/* The corpus of real-idiom programs (issue 29), shared by tests/test-real.c
 * and the benchmark's `real` workload (bench/real.c).
 *
 * Each program is written twice, in raw OpenCL and through clstream, in the
 * idiom of published OpenCL code: read-only inputs are non-const __global
 * pointers (bound CLS_IN), __local scratch is a kernel argument, work-group
 * sizes are hard-coded (256, 16x16).  Both sides build the one kernel
 * source string of the program, byte for byte, with the same options, and
 * write their results into a host block of out_size() bytes that the test
 * compares with memcmp.  Inputs come from a fixed-seed generator.
 *
 * Only the public API is used (the benchmark links the shared library). */
#ifndef CLS_TESTS_REAL_H
#define CLS_TESTS_REAL_H

#include <clstream.h>
#include <clstream/cl.h>

#include <stddef.h>
#include <stdint.h>

#define REAL_QUEUES 2
#define REAL_MAX_KERNELS 4

/* The raw side's OpenCL objects: one context, in-order queues. */
struct real_raw {
  cl_context ctx;
  cl_device_id dev;
  cl_command_queue q[REAL_QUEUES];
};

struct real_program {
  const char *name;
  const char *src;                        /* the one kernel source, both sides */
  const char *kernels[REAL_MAX_KERNELS];  /* kernel names, NULL after the last */
  void *(*prepare)(int quick);            /* host inputs (fixed seed); NULL: out of memory */
  void (*release)(void *host);
  size_t (*out_size)(const void *host);
  int (*raw)(const struct real_raw *r, cl_kernel *k, const void *host, void *out);
  int (*cls)(cls_context *ctx, cls_kernel **k, const void *host, void *out);
  /* NULL when out is right (a host reference), else what is wrong. */
  const char *(*check)(const void *host, const void *out);
};

extern const struct real_program real_histogram, real_reduce, real_scan, real_stencil,
    real_spmv, real_bfs, real_transpose, real_matmul, real_nbody, real_sort, real_tiles;
#define REAL_COUNT 11
extern const struct real_program *const real_corpus[REAL_COUNT];

/* What went wrong in the last failing call below, for a message. */
extern char real_error[1024];
int real_fail(const char *fmt, ...);

/* The options both sides build with (none: as published code does). */
#define REAL_BUILD_OPTIONS ""

/* A context and REAL_QUEUES queues on the device clstream would pick
 * (CLS_DEVICE's rules), or 0 after real_fail. */
int real_raw_open(struct real_raw *r);
void real_raw_close(struct real_raw *r);
/* Builds p->src on the raw side: *prog and one kernel per name. */
int real_raw_build(const struct real_raw *r, const struct real_program *p, cl_program *prog,
                   cl_kernel *k);
void real_raw_unbuild(cl_program prog, cl_kernel *k);
int real_cls_build(cls_context *ctx, const struct real_program *p, cls_kernel **k);

/* The source text and options each side last handed to its build call,
 * so that a test can see both built the same bytes. */
extern const char *real_raw_built_src, *real_cls_built_src;
extern const char *real_raw_built_opts, *real_cls_built_opts;

/* real_launch counts its launches (real_launches).  Audit (tests): when
 * real_audit is set, it also counts the buffers
 * bound CLS_IN whose kernel argument is a non-const __global pointer
 * (cls_kernel_info says CLS_READ_WRITE), and those whose access the
 * platform does not report. */
extern int real_audit;
extern unsigned real_in_writable, real_in_unknown, real_launches;
int real_launch(cls_context *ctx, int stream, cls_kernel *k, unsigned dims, const size_t *g,
                const size_t *l, size_t nargs, const cls_arg *args);
/* The same at a global offset (cls_launch_offset; NULL: none). */
int real_launch_offset(cls_context *ctx, int stream, cls_kernel *k, unsigned dims,
                       const size_t *o, const size_t *g, const size_t *l, size_t nargs,
                       const cls_arg *args);

/* Raw helpers: a buffer of `size` bytes, written from `init` (blocking)
 * when not NULL; arguments as (size, pointer) pairs from index 0. */
int real_raw_buffer(const struct real_raw *r, int q, size_t size, const void *init,
                    cl_mem *out);
int real_raw_args(cl_kernel k, int n, ...);
/* clstream helpers: a buffer, uploaded from `init` when not NULL; a
 * blocking download whose failure report goes into real_error. */
int real_cls_buffer(cls_context *ctx, int stream, size_t size, const void *init,
                    cls_buffer *out);
int real_cls_download(cls_context *ctx, int stream, cls_buffer b, void *dst, size_t size);

/* The fixed-seed generator (splitmix64). */
static inline uint32_t real_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (uint32_t)((z ^ (z >> 31)) >> 32);
}
/* In [0, 1), exactly representable. */
static inline float real_unit(uint64_t *s) { return (float)(real_rand(s) >> 8) / 16777216.0f; }

/* Fail the run with the call's text and status, then go to `out`. */
#define REAL_CL(call)                                                            \
  do {                                                                           \
    cl_int real_rc_ = (call);                                                    \
    if (real_rc_ != CL_SUCCESS) {                                                \
      real_fail("raw: %s: %s", #call, cls_cl_status_name(real_rc_));             \
      goto out;                                                                  \
    }                                                                            \
  } while (0)
#define REAL_CLS(call)                                                           \
  do {                                                                           \
    int real_rc_ = (call);                                                       \
    if (real_rc_ != 0) {                                                         \
      real_fail("clstream: %s: %s: %s", #call, cls_err_name(real_rc_),           \
                cls_last_error_detail());                                        \
      goto out;                                                                  \
    }                                                                            \
  } while (0)
/* A helper above that already said what failed. */
#define REAL_TRY(call)                                                           \
  do {                                                                           \
    if ((call) != 0)                                                             \
      goto out;                                                                  \
  } while (0)

#endif
