/* clstream-bench: each workload written twice, once as plain hand-written
 * OpenCL doing the same commands and once through clstream, run in pairs
 * after a warm-up (raw then clstream, then clstream then raw, so that
 * neither side is always second), and compared by their medians in the
 * same run.  Times drift on a shared machine, and both sides of a pair see
 * the same drift: each pair's ratio, their median, and a 95 % interval for
 * that median (order statistics, no assumption on the distribution) say
 * whether a target is met, missed, or not told apart from it by this run.
 *
 * Each workload runs through two clstream contexts against the same raw
 * runs, one per attribution mode (F8a): ranged (precise = -1: ranged where
 * the device allows it) and exact (precise = 1), a row each; a round times
 * all three, raw first or last, the two contexts swapping places every
 * other round.  Their
 * "attribution" column is the mode the context reports in force, and
 * "ev/launch" the OpenCL events its factory asked for in the measured runs
 * (cls_stream_events deltas) per launch.  Streams that share a backend
 * queue each report the queue's count: under scheduler:interleave (one
 * queue for all) the bench takes the largest stream's delta instead of the
 * sum; a sequential scheduler with queues=M would be counted more than
 * once.
 *
 *   bench/clstream-bench [--reps N] [--drivers LIST] [--workloads LIST]
 *                        [--json FILE] [--quick] [--callgrind]
 *
 * --callgrind (under valgrind --tool=callgrind, bench/host-cost.sh): one
 * warm-up and one measured run of each side, each measured run dumped on
 * its own ("host <workload> <driver> raw|ranged|exact <launches>"), so that the
 * instructions the host thread spends per launch can be compared: a count
 * that this noisy machine cannot blur.
 *
 * Workloads:
 *   tiny-chain  10,000 launches of a tiny kernel (global 64) on one stream
 *   saxpy       20 launches of saxpy over 2^24 floats (memory bound, GB/s)
 *   ping-pong   2,000 pairs of launches alternating between two streams,
 *               each reading the other's last output
 *   fan         one producer, four consumer streams, one reducer reading
 *               all four; 500 times
 *   skip-chain  a failed launch, then 10,000 launches depending on it: cost
 *               per skipped launch and OpenCL calls made for them (no raw
 *               counterpart)
 *   guard       tiny-chain and fan again in guard mode (CLS_GUARD): what
 *               the checker costs, rows without a target
 *   real        the corpus of real-idiom programs (tests/real/, the same
 *               code tests/test-real runs): each program's raw OpenCL
 *               against its clstream port, inputs, outputs and frees
 *               included; a row for the whole corpus, then one per program
 *               (--workloads real/bfs: that program's row only)
 * Then a calibration, raw OpenCL only: tiny-chain against itself with one
 * thing a layer adds (an argument set per launch, an event per launch,
 * events kept until polled), to say what those cost on the device, and the
 * fan against itself on one queue (what the interleave strategy does). */
#include "config.h"

#include <clstream.h>
#include <clstream/stream.h>

#include "bench.h"
#include "../tests/real/real.h"

#ifdef HAVE_VALGRIND_CALLGRIND_H
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#endif

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char *SRC =
    "kernel void tiny(global int *x) { x[get_global_id(0)] += 1; }\n"
    "kernel void saxpy(global const float *x, global float *y, float a) {\n"
    "  size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }\n"
    "kernel void stepk(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i] + 1; }\n"
    "kernel void failk(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i]; }\n"
    "kernel void reduce4(global const int *a, global const int *b, global const int *c,\n"
    "                    global const int *d, global int *r) {\n"
    "  size_t i = get_global_id(0); r[i] = a[i] + b[i] + c[i] + d[i]; }\n";

static int TINY_N = 10000, SAXPY_REPS = 20, PP_N = 2000, FAN_N = 500, SKIP_N = 10000;
static size_t SAXPY_LEN = (size_t)1 << 24;
#define SMALL 64

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "clstream-bench: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(2);
}

#define CL(call)                                                              \
  do {                                                                        \
    cl_int rc_ = (call);                                                      \
    if (rc_ != CL_SUCCESS)                                                    \
      die("%s failed: %s", #call, cls_cl_status_name(rc_));                    \
  } while (0)
#define CLS(call)                                                             \
  do {                                                                        \
    int rc_ = (call);                                                         \
    if (rc_ < 0)                                                              \
      die("%s failed: %s: %s", #call, cls_err_name(rc_), cls_last_error_detail()); \
  } while (0)

/* ------------------------------------------------------------------ */
/* Raw OpenCL                                                          */
/* ------------------------------------------------------------------ */

struct raw {
  cl_context c;
  cl_device_id d;
  cl_program p;
  cl_command_queue q[6];
  cl_kernel tiny, saxpy, step_ab, step_ba, prod, cons[4], red;
  cl_mem tiny_buf, sx, sy, A, B, P, C[4], R;
  /* The corpus (workload real), on this context and its first queues. */
  struct real_raw real;
  cl_program real_prog[REAL_COUNT];
  cl_kernel real_k[REAL_COUNT][REAL_MAX_KERNELS];
};

static void raw_init(struct raw *r) {
  struct cls_device_info info;
  CLS(cls_device_select(getenv("CLS_DEVICE"), &info));
  cl_platform_id plats[16];
  cl_uint np;
  CL(clGetPlatformIDs(16, plats, &np));
  cl_device_id devs[64];
  cl_uint nd;
  CL(clGetDeviceIDs(plats[info.platform_index], CL_DEVICE_TYPE_ALL, 64, devs, &nd));
  r->d = devs[info.device_index];
  cl_int rc;
  r->c = clCreateContext(NULL, 1, &r->d, NULL, NULL, &rc);
  CL(rc);
  r->p = clCreateProgramWithSource(r->c, 1, &SRC, NULL, &rc);
  CL(rc);
  CL(clBuildProgram(r->p, 1, &r->d, "", NULL, NULL));
  for (int i = 0; i < 6; i++) {
    r->q[i] = clCreateCommandQueue(r->c, r->d, 0, &rc);
    CL(rc);
  }
#define K(field, name)                                      \
  r->field = clCreateKernel(r->p, name, &rc);              \
  if (rc != CL_SUCCESS)                                    \
    die("clCreateKernel(%s): %s", name, cls_cl_status_name(rc))
  K(tiny, "tiny");
  K(saxpy, "saxpy");
  K(step_ab, "stepk");
  K(step_ba, "stepk");
  K(prod, "stepk");
  for (int i = 0; i < 4; i++) {
    K(cons[i], "stepk");
  }
  K(red, "reduce4");
#undef K
#define M(field, bytes)                                                   \
  r->field = clCreateBuffer(r->c, CL_MEM_READ_WRITE, bytes, NULL, &rc);   \
  CL(rc)
  M(tiny_buf, SMALL * sizeof(int));
  M(sx, SAXPY_LEN * sizeof(float));
  M(sy, SAXPY_LEN * sizeof(float));
  M(A, SMALL * sizeof(int));
  M(B, SMALL * sizeof(int));
  M(P, SMALL * sizeof(int));
  M(R, SMALL * sizeof(int));
  for (int i = 0; i < 4; i++) {
    M(C[i], SMALL * sizeof(int));
  }
#undef M
  int zero = 0;
  float one = 1.0f;
  cl_mem smalls[] = {r->tiny_buf, r->A, r->B, r->P, r->R, r->C[0], r->C[1], r->C[2], r->C[3]};
  for (size_t i = 0; i < sizeof smalls / sizeof *smalls; i++)
    CL(clEnqueueFillBuffer(r->q[0], smalls[i], &zero, sizeof zero, 0, SMALL * sizeof(int), 0,
                           NULL, NULL));
  CL(clEnqueueFillBuffer(r->q[0], r->sx, &one, sizeof one, 0, SAXPY_LEN * sizeof(float), 0, NULL,
                         NULL));
  CL(clEnqueueFillBuffer(r->q[0], r->sy, &one, sizeof one, 0, SAXPY_LEN * sizeof(float), 0, NULL,
                         NULL));
  CL(clFinish(r->q[0]));
  /* Arguments are set once: the hand-written code need not repeat them. */
  float a = 0.5f;
  CL(clSetKernelArg(r->tiny, 0, sizeof(cl_mem), &r->tiny_buf));
  CL(clSetKernelArg(r->saxpy, 0, sizeof(cl_mem), &r->sx));
  CL(clSetKernelArg(r->saxpy, 1, sizeof(cl_mem), &r->sy));
  CL(clSetKernelArg(r->saxpy, 2, sizeof a, &a));
  CL(clSetKernelArg(r->step_ab, 0, sizeof(cl_mem), &r->A));
  CL(clSetKernelArg(r->step_ab, 1, sizeof(cl_mem), &r->B));
  CL(clSetKernelArg(r->step_ba, 0, sizeof(cl_mem), &r->B));
  CL(clSetKernelArg(r->step_ba, 1, sizeof(cl_mem), &r->A));
  CL(clSetKernelArg(r->prod, 0, sizeof(cl_mem), &r->A));
  CL(clSetKernelArg(r->prod, 1, sizeof(cl_mem), &r->P));
  for (int i = 0; i < 4; i++) {
    CL(clSetKernelArg(r->cons[i], 0, sizeof(cl_mem), &r->P));
    CL(clSetKernelArg(r->cons[i], 1, sizeof(cl_mem), &r->C[i]));
    CL(clSetKernelArg(r->red, (cl_uint)i, sizeof(cl_mem), &r->C[i]));
  }
  CL(clSetKernelArg(r->red, 4, sizeof(cl_mem), &r->R));
}

static const size_t small_g = SMALL;

static double raw_tiny(struct raw *r) {
  double t = bench_now();
  for (int i = 0; i < TINY_N; i++)
    CL(clEnqueueNDRangeKernel(r->q[0], r->tiny, 1, NULL, &small_g, NULL, 0, NULL, NULL));
  CL(clFinish(r->q[0]));
  return bench_now() - t;
}

/* Calibration variants of tiny-chain, raw OpenCL only: what each thing a
 * layer may add costs on this device by itself. */
static double raw_tiny_setarg(struct raw *r) {
  double t = bench_now();
  for (int i = 0; i < TINY_N; i++) {
    CL(clSetKernelArg(r->tiny, 0, sizeof(cl_mem), &r->tiny_buf));
    CL(clEnqueueNDRangeKernel(r->q[0], r->tiny, 1, NULL, &small_g, NULL, 0, NULL, NULL));
  }
  CL(clFinish(r->q[0]));
  return bench_now() - t;
}

static double raw_tiny_event(struct raw *r) {
  double t = bench_now();
  for (int i = 0; i < TINY_N; i++) {
    cl_event e;
    CL(clEnqueueNDRangeKernel(r->q[0], r->tiny, 1, NULL, &small_g, NULL, 0, NULL, &e));
    clReleaseEvent(e);
  }
  CL(clFinish(r->q[0]));
  return bench_now() - t;
}

/* An event per launch kept in a ring until its status is read, as
 * clstream's OpenCL stream factory keeps them to find failures after the
 * enqueue: a full ring releases every finished event from its head and
 * doubles when none has finished (the host never waits). */
static double raw_tiny_ring(struct raw *r) {
  size_t cap = 256, head = 0, len = 0;
  cl_event *ring = malloc(cap * sizeof *ring);
  if (!ring)
    die("out of memory");
  double t = bench_now();
  for (int i = 0; i < TINY_N; i++) {
    while (len == cap) {
      cl_int st;
      CL(clGetEventInfo(ring[head], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
      if (st <= CL_COMPLETE) {
        clReleaseEvent(ring[head]);
        head = (head + 1) & (cap - 1);
        len--;
        continue;
      }
      cl_event *n = malloc(2 * cap * sizeof *n); /* nothing finished: grow */
      if (!n)
        die("out of memory");
      for (size_t k = 0; k < len; k++)
        n[k] = ring[(head + k) & (cap - 1)];
      free(ring);
      ring = n;
      cap *= 2;
      head = 0;
    }
    CL(clEnqueueNDRangeKernel(r->q[0], r->tiny, 1, NULL, &small_g, NULL, 0, NULL,
                              &ring[(head + len) & (cap - 1)]));
    len++;
  }
  CL(clFinish(r->q[0]));
  for (; len; len--, head = (head + 1) & (cap - 1))
    clReleaseEvent(ring[head]);
  double dt = bench_now() - t;
  free(ring);
  return dt;
}

static double raw_saxpy(struct raw *r) {
  double t = bench_now();
  for (int i = 0; i < SAXPY_REPS; i++)
    CL(clEnqueueNDRangeKernel(r->q[0], r->saxpy, 1, NULL, &SAXPY_LEN, NULL, 0, NULL, NULL));
  CL(clFinish(r->q[0]));
  return bench_now() - t;
}

/* Each launch waits on the other queue's last launch, which was flushed. */
static double raw_pingpong(struct raw *r) {
  double t = bench_now();
  cl_event prev = NULL, e0;
  for (int i = 0; i < PP_N; i++) {
    CL(clEnqueueNDRangeKernel(r->q[0], r->step_ab, 1, NULL, &small_g, NULL, prev ? 1 : 0,
                              prev ? &prev : NULL, &e0));
    if (prev)
      clReleaseEvent(prev);
    CL(clFlush(r->q[0]));
    CL(clEnqueueNDRangeKernel(r->q[1], r->step_ba, 1, NULL, &small_g, NULL, 1, &e0, &prev));
    clReleaseEvent(e0);
    CL(clFlush(r->q[1]));
  }
  CL(clFinish(r->q[1]));
  CL(clFinish(r->q[0]));
  clReleaseEvent(prev);
  return bench_now() - t;
}

/* What the raw fan does besides its work, to show what each thing costs
 * (calibration rows). */
enum fan_extra {
  FAN_PLAIN,
  /* Reads the status of each event a command is about to wait on. */
  FAN_STATUS,
  /* Keeps every command's event per queue and, before a command waits on
   * a queue, reads that queue's events from the oldest unfinished one,
   * releasing those finished: how polling a stream reads it. */
  FAN_POLL
};

#define FAN_MAX 500 /* FAN_N is at most this (--quick lowers it) */

struct fan_kept {
  cl_event ev[6][FAN_MAX];
  size_t head[6], len[6];
};

static void fan_keep(struct fan_kept *k, int q, cl_event ev) {
  CL(clRetainEvent(ev));
  k->ev[q][k->len[q]++] = ev;
}

static void fan_poll(struct fan_kept *k, int q) {
  while (k->head[q] < k->len[q]) {
    cl_int st;
    CL(clGetEventInfo(k->ev[q][k->head[q]], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st,
                      NULL));
    if (st > CL_COMPLETE)
      return;
    clReleaseEvent(k->ev[q][k->head[q]++]);
  }
}

/* Before a command waits on w[0..n-1] (queues qs[0..n-1]). */
static void fan_before(enum fan_extra x, struct fan_kept *k, cl_uint n, const cl_event *w,
                       const int *qs) {
  for (cl_uint i = 0; i < n; i++) {
    if (x == FAN_STATUS) {
      cl_int st;
      CL(clGetEventInfo(w[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    } else if (x == FAN_POLL) {
      fan_poll(k, qs[i]);
    }
  }
}

/* Producer (q0) -> four consumers (q1..q4) -> reducer (q5), with the waits
 * a correct program needs: read-after-write and write-after-read. */
static double fan_run(struct raw *r, enum fan_extra x) {
  static struct fan_kept k;
  memset(k.head, 0, sizeof k.head);
  memset(k.len, 0, sizeof k.len);
  static const int cq[4] = {1, 2, 3, 4}, pr[2] = {0, 5};
  double t = bench_now();
  cl_event ep = NULL, ec[4] = {NULL, NULL, NULL, NULL}, er = NULL;
  for (int it = 0; it < FAN_N; it++) {
    /* P is rewritten: after the consumers that read it. */
    cl_uint n = ec[0] ? 4 : 0;
    cl_event prod_ev;
    fan_before(x, &k, n, ec, cq);
    CL(clEnqueueNDRangeKernel(r->q[0], r->prod, 1, NULL, &small_g, NULL, n, n ? ec : NULL,
                              &prod_ev));
    CL(clFlush(r->q[0]));
    if (x == FAN_POLL)
      fan_keep(&k, 0, prod_ev);
    if (ep)
      clReleaseEvent(ep);
    ep = prod_ev;
    for (int c = 0; c < 4; c++) {
      /* C[c] is rewritten: after the reducer that read it. */
      cl_event w[2] = {ep, er};
      cl_event ev;
      fan_before(x, &k, er ? 2 : 1, w, pr);
      CL(clEnqueueNDRangeKernel(r->q[1 + c], r->cons[c], 1, NULL, &small_g, NULL, er ? 2 : 1, w,
                                &ev));
      CL(clFlush(r->q[1 + c]));
      if (x == FAN_POLL)
        fan_keep(&k, 1 + c, ev);
      if (ec[c])
        clReleaseEvent(ec[c]);
      ec[c] = ev;
    }
    cl_event ev;
    fan_before(x, &k, 4, ec, cq);
    CL(clEnqueueNDRangeKernel(r->q[5], r->red, 1, NULL, &small_g, NULL, 4, ec, &ev));
    CL(clFlush(r->q[5]));
    if (x == FAN_POLL)
      fan_keep(&k, 5, ev);
    if (er)
      clReleaseEvent(er);
    er = ev;
  }
  for (int i = 0; i < 6; i++)
    CL(clFinish(r->q[i]));
  for (int i = 0; i < 6; i++)
    while (k.head[i] < k.len[i])
      clReleaseEvent(k.ev[i][k.head[i]++]);
  clReleaseEvent(ep);
  clReleaseEvent(er);
  for (int c = 0; c < 4; c++)
    clReleaseEvent(ec[c]);
  return bench_now() - t;
}

static double raw_fan(struct raw *r) { return fan_run(r, FAN_PLAIN); }
static double raw_fan_status(struct raw *r) { return fan_run(r, FAN_STATUS); }
static double raw_fan_poll(struct raw *r) { return fan_run(r, FAN_POLL); }

/* The fan's commands in the same order on one in-order queue, no events:
 * what the scheduler's interleave strategy makes of the six streams.  The
 * queue's order is the only ordering; nothing runs side by side. */
static double raw_fan_one_queue(struct raw *r) {
  double t = bench_now();
  for (int it = 0; it < FAN_N; it++) {
    CL(clEnqueueNDRangeKernel(r->q[0], r->prod, 1, NULL, &small_g, NULL, 0, NULL, NULL));
    for (int c = 0; c < 4; c++)
      CL(clEnqueueNDRangeKernel(r->q[0], r->cons[c], 1, NULL, &small_g, NULL, 0, NULL, NULL));
    CL(clEnqueueNDRangeKernel(r->q[0], r->red, 1, NULL, &small_g, NULL, 0, NULL, NULL));
    CL(clFlush(r->q[0]));
  }
  CL(clFinish(r->q[0]));
  return bench_now() - t;
}

/* ------------------------------------------------------------------ */
/* clstream                                                            */
/* ------------------------------------------------------------------ */

/* Counts every call the core makes into the OpenCL stream factory: the
 * OpenCL work done on a stream's behalf. */
static unsigned long factory_calls;
static const struct cls_stream_factory *inner;

static cl_int c_create(void *d, const struct cls_backend *b, int id, void **out) {
  return inner->create(d, b, id, out);
}
static void c_destroy(void *s) { inner->destroy(s); }
static cl_int c_flush(void *s) {
  factory_calls++;
  return inner->flush(s);
}
static cl_int c_launch(void *s, const struct cls_kernel_cmd *c, uint64_t q, cl_uint n,
                       const cl_event *w) {
  factory_calls++;
  return inner->launch(s, c, q, n, w);
}
static cl_int c_write(void *s, cl_mem m, size_t o, size_t z, const void *p, int b, uint64_t q,
                      cl_uint n, const cl_event *w) {
  factory_calls++;
  return inner->write(s, m, o, z, p, b, q, n, w);
}
static cl_int c_read(void *s, cl_mem m, size_t o, size_t z, void *p, int b, uint64_t q,
                     cl_uint n, const cl_event *w) {
  factory_calls++;
  return inner->read(s, m, o, z, p, b, q, n, w);
}
static cl_int c_copy(void *s, cl_mem a, size_t ao, cl_mem b, size_t bo, size_t z, uint64_t q,
                     cl_uint n, const cl_event *w) {
  factory_calls++;
  return inner->copy(s, a, ao, b, bo, z, q, n, w);
}
static cl_int c_fill(void *s, cl_mem m, size_t o, size_t z, const void *p, size_t pz, uint64_t q,
                     cl_uint n, const cl_event *w) {
  factory_calls++;
  return inner->fill(s, m, o, z, p, pz, q, n, w);
}
static cl_int c_marker(void *s, cl_event *e) {
  factory_calls++;
  return inner->marker(s, e);
}
static cl_int c_poll(void *s, int wait, cls_failed_fn f, void *a, uint64_t *done) {
  return inner->poll(s, wait, f, a, done);
}

/* Ranged attribution needs the inner factory's ranges and its event count
 * (the OpenCL factory has both). */
static cl_int c_poll_range(void *s, int wait, cls_failed_range_fn f, void *a, uint64_t *done) {
  return inner->poll_range(s, wait, f, a, done);
}
static uint64_t c_events(void *s) { return inner->events(s); }

static const struct cls_stream_factory counting = {
    .version = CLS_STREAM_FACTORY_VERSION,
    .name = "counting",
    .description = "the OpenCL factory, counting the commands it is given",
    .create = c_create,
    .destroy = c_destroy,
    .flush = c_flush,
    .launch = c_launch,
    .write = c_write,
    .read = c_read,
    .copy = c_copy,
    .fill = c_fill,
    .marker = c_marker,
    .poll = c_poll,
    .poll_range = c_poll_range,
    .events = c_events,
};

/* Streams lib_init gives a buffer to: every workload's streams. */
#define LIB_STREAMS 6

struct lib {
  cls_context *ctx;
  const char *attribution; /* in force: "ranged" or "exact" */
  bool shared_queue;       /* scheduler:interleave: every stream on one queue */
  cls_kernel *tiny, *saxpy, *step, *failk, *red;
  cls_buffer tiny_buf, sx, sy, A, B, P, C[4], R;
  cls_kernel *real_k[REAL_COUNT][REAL_MAX_KERNELS];
};

static cls_buffer zeros(cls_context *ctx, int stream, size_t bytes) {
  cls_buffer b;
  int zero = 0;
  CLS(cls_alloc(ctx, stream, bytes, &b));
  CLS(cls_fill(ctx, stream, b, 0, bytes, &zero, sizeof zero));
  return b;
}

/* fault: a fault plan, and the counting factory around the OpenCL one
 * (skip-chain); NULL: the OpenCL factory itself, as a user gets it. */
static int lib_guard = -1; /* the guard option of the next lib_init */

/* precise: the context option, -1 ranged where the device allows it, 1
 * exact; set either way so that $CLS_PRECISE does not merge the modes. */
static void lib_init(struct lib *l, const char *driver, const char *fault, int precise) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .scheduler = driver,
                                  .fault = fault,
                                  .factory = fault ? &counting : NULL,
                                  .guard = lib_guard,
                                  .precise = precise};
  CLS(cls_context_create(&l->ctx, &o));
  int mode;
  CLS(cls_context_attribution(l->ctx, &mode, NULL, NULL));
  l->attribution = mode == CLS_ATTRIBUTION_RANGED ? "ranged" : "exact";
  l->shared_queue = strstr(driver, "interleave") != NULL;
  cls_program *p;
  CLS(cls_program_build(l->ctx, SRC, NULL, &p));
  CLS(cls_kernel_get(l->ctx, p, "tiny", &l->tiny));
  CLS(cls_kernel_get(l->ctx, p, "saxpy", &l->saxpy));
  CLS(cls_kernel_get(l->ctx, p, "stepk", &l->step));
  CLS(cls_kernel_get(l->ctx, p, "failk", &l->failk));
  CLS(cls_kernel_get(l->ctx, p, "reduce4", &l->red));
  l->tiny_buf = zeros(l->ctx, 0, SMALL * sizeof(int));
  l->A = zeros(l->ctx, 0, SMALL * sizeof(int));
  l->B = zeros(l->ctx, 1, SMALL * sizeof(int));
  l->P = zeros(l->ctx, 0, SMALL * sizeof(int));
  for (int i = 0; i < 4; i++)
    l->C[i] = zeros(l->ctx, 1 + i, SMALL * sizeof(int));
  l->R = zeros(l->ctx, 5, SMALL * sizeof(int));
  float one = 1.0f;
  CLS(cls_alloc(l->ctx, 0, SAXPY_LEN * sizeof(float), &l->sx));
  CLS(cls_alloc(l->ctx, 0, SAXPY_LEN * sizeof(float), &l->sy));
  CLS(cls_fill(l->ctx, 0, l->sx, 0, SAXPY_LEN * sizeof(float), &one, sizeof one));
  CLS(cls_fill(l->ctx, 0, l->sy, 0, SAXPY_LEN * sizeof(float), &one, sizeof one));
  CLS(cls_sync(l->ctx, NULL));
}

/* OpenCL events l's streams asked for so far: the sum over streams, or
 * the largest where every stream gives the one shared queue's count. */
static uint64_t lib_events(struct lib *l) {
  uint64_t total = 0;
  for (int s = 0; s < LIB_STREAMS; s++) {
    uint64_t n;
    CLS(cls_stream_events(l->ctx, s, &n));
    if (!l->shared_queue)
      total += n;
    else if (n > total)
      total = n;
  }
  return total;
}

static double lib_tiny(struct lib *l) {
  cls_arg a[] = {CLS_INOUT(l->tiny_buf)};
  double t = bench_now();
  for (int i = 0; i < TINY_N; i++)
    CLS(cls_launch(l->ctx, 0, l->tiny, 1, &small_g, NULL, 1, a));
  CLS(cls_stream_sync(l->ctx, 0, NULL));
  return bench_now() - t;
}

static double lib_saxpy(struct lib *l) {
  float alpha = 0.5f;
  cls_arg a[] = {CLS_IN(l->sx), CLS_INOUT(l->sy), CLS_SCALAR(alpha)};
  double t = bench_now();
  for (int i = 0; i < SAXPY_REPS; i++)
    CLS(cls_launch(l->ctx, 0, l->saxpy, 1, &SAXPY_LEN, NULL, 3, a));
  CLS(cls_stream_sync(l->ctx, 0, NULL));
  return bench_now() - t;
}

static double lib_pingpong(struct lib *l) {
  cls_arg ab[] = {CLS_IN(l->A), CLS_OUT(l->B)}, ba[] = {CLS_IN(l->B), CLS_OUT(l->A)};
  double t = bench_now();
  for (int i = 0; i < PP_N; i++) {
    CLS(cls_launch(l->ctx, 0, l->step, 1, &small_g, NULL, 2, ab));
    CLS(cls_launch(l->ctx, 1, l->step, 1, &small_g, NULL, 2, ba));
  }
  CLS(cls_sync(l->ctx, NULL));
  return bench_now() - t;
}

static double lib_fan(struct lib *l) {
  cls_arg prod[] = {CLS_IN(l->A), CLS_OUT(l->P)};
  cls_arg red[] = {CLS_IN(l->C[0]), CLS_IN(l->C[1]), CLS_IN(l->C[2]), CLS_IN(l->C[3]),
                   CLS_OUT(l->R)};
  double t = bench_now();
  for (int it = 0; it < FAN_N; it++) {
    CLS(cls_launch(l->ctx, 0, l->step, 1, &small_g, NULL, 2, prod));
    for (int c = 0; c < 4; c++) {
      cls_arg cons[] = {CLS_IN(l->P), CLS_OUT(l->C[c])};
      CLS(cls_launch(l->ctx, 1 + c, l->step, 1, &small_g, NULL, 2, cons));
    }
    CLS(cls_launch(l->ctx, 5, l->red, 1, &small_g, NULL, 5, red));
  }
  CLS(cls_sync(l->ctx, NULL));
  return bench_now() - t;
}

/* ------------------------------------------------------------------ */
/* The corpus (workload real)                                          */
/* ------------------------------------------------------------------ */

static bool real_quick;               /* --quick: the corpus's small inputs */
static void *real_host[REAL_COUNT];   /* each program's inputs, made once */
static unsigned char *real_out[2];    /* raw's and clstream's results */
static size_t real_out_max;
static int real_only = -1;            /* the program timed; -1: all of them */

static void real_raw_setup(struct raw *r) {
  r->real = (struct real_raw){.ctx = r->c, .dev = r->d, .q = {r->q[0], r->q[1]}};
  for (int i = 0; i < REAL_COUNT; i++) {
    const struct real_program *p = real_corpus[i];
    if (!(real_host[i] = p->prepare(real_quick)))
      die("%s: out of memory", p->name);
    if (p->out_size(real_host[i]) > real_out_max)
      real_out_max = p->out_size(real_host[i]);
    if (real_raw_build(&r->real, p, &r->real_prog[i], r->real_k[i]) != 0)
      die("%s", real_error);
  }
  if (!(real_out[0] = malloc(real_out_max)) || !(real_out[1] = malloc(real_out_max)))
    die("out of memory");
}

static void real_lib_setup(struct lib *l) {
  for (int i = 0; i < REAL_COUNT; i++)
    if (real_cls_build(l->ctx, real_corpus[i], l->real_k[i]) != 0)
      die("%s", real_error);
}

static double raw_real(struct raw *r) {
  double t = bench_now();
  for (int i = 0; i < REAL_COUNT; i++)
    if ((real_only < 0 || real_only == i) &&
        real_corpus[i]->raw(&r->real, r->real_k[i], real_host[i], real_out[0]) != 0)
      die("%s", real_error);
  return bench_now() - t;
}

static double lib_real(struct lib *l) {
  double t = bench_now();
  for (int i = 0; i < REAL_COUNT; i++)
    if ((real_only < 0 || real_only == i) &&
        real_corpus[i]->cls(l->ctx, l->real_k[i], real_host[i], real_out[1]) != 0)
      die("%s", real_error);
  return bench_now() - t;
}

/* Both sides once, each program's results compared: a port that differs
 * is not timed. */
static void real_verify(struct raw *r, struct lib *l) {
  for (int i = 0; i < REAL_COUNT; i++) {
    const struct real_program *p = real_corpus[i];
    size_t n = p->out_size(real_host[i]);
    if (p->raw(&r->real, r->real_k[i], real_host[i], real_out[0]) != 0 ||
        p->cls(l->ctx, l->real_k[i], real_host[i], real_out[1]) != 0)
      die("%s", real_error);
    if (memcmp(real_out[0], real_out[1], n) != 0)
      die("real: %s: clstream's result differs from raw OpenCL's", p->name);
  }
}

/* ------------------------------------------------------------------ */
/* The table                                                           */
/* ------------------------------------------------------------------ */

struct row {
  const char *workload, *driver;
  const char *attribution; /* clstream rows: "ranged" or "exact"; else NULL */
  double events;           /* OpenCL events per launch (clstream); < 0: none */
  const char *kind; /* "workload", "calibration" (the clstream column holds
                       the raw variant), "skip", "allocs" */
  double raw, lib, ratio;
  /* Workload rows: the median of the pairs' ratios, its 95 % interval,
   * and the target for the ratio (0: none). */
  double paired, lo, hi, target;
  char note[160];
};

#define MAX_REPS 201
static struct row rows[64];
static int nrows;
static int reps = 21;

/* The targets, as clstream/raw time ratios (saxpy's is on throughput:
 * >= 0.98x of raw, i.e. time <= 1/0.98). */
static double target_of(const char *workload) {
  if (strcmp(workload, "tiny-chain") == 0)
    return 1.03;
  if (strcmp(workload, "saxpy") == 0)
    return 1 / 0.98;
  if (strcmp(workload, "ping-pong") == 0 || strcmp(workload, "fan") == 0)
    return 1.05;
  if (strncmp(workload, "real", 4) == 0)
    return 1.02;
  return 0;
}

/* "met" only when the whole interval is at or under the target, "missed"
 * only when it is all above; otherwise this run cannot tell. */
static const char *verdict(const struct row *row) {
  if (row->target <= 0)
    return "-";
  if (row->hi <= row->target)
    return "met";
  if (row->lo > row->target)
    return "missed";
  return "unclear";
}

static bool callgrind; /* --callgrind */

static char workloads[256] =
    "tiny-chain,saxpy,ping-pong,fan,allocs,skip-chain,guard,real,calibration";

/* Whether --workloads names w (a whole item of the comma list). */
static bool wanted(const char *w) {
  size_t n = strlen(w);
  for (const char *p = workloads; (p = strstr(p, w)) != NULL; p += n)
    if ((p == workloads || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
      return true;
  return false;
}

/* "real" times the whole corpus and each program; "real/NAME" one
 * program (the rows' names, set by main).  i < 0: whether any is wanted. */
static char real_names[REAL_COUNT][32];
static bool real_wanted(int i) {
  if (wanted("real"))
    return true;
  for (int k = i < 0 ? 0 : i; k < (i < 0 ? REAL_COUNT : i + 1); k++)
    if (wanted(real_names[k]))
      return true;
  return false;
}

typedef double (*raw_fn)(struct raw *);
typedef double (*lib_fn)(struct lib *);

static struct row *new_row(const char *name, const char *driver, const char *kind) {
  if (nrows == (int)(sizeof rows / sizeof rows[0]))
    die("too many rows (fewer --drivers)");
  struct row *row = &rows[nrows++];
  *row = (struct row){.workload = name, .driver = driver, .kind = kind, .events = -1};
  return row;
}

/* A row from the alternating timings of both sides. */
static struct row *add_row(const char *name, const char *driver, const char *kind,
                           double *tr, double *tl) {
  struct row *row = new_row(name, driver, kind);
  double pr[MAX_REPS];
  for (int i = 0; i < reps; i++)
    pr[i] = tl[i] / tr[i];
  row->paired = bench_median_ci(pr, reps, &row->lo, &row->hi);
  row->raw = bench_median(tr, reps);
  row->lib = bench_median(tl, reps);
  row->ratio = row->lib / row->raw;
  return row;
}

static void print_header(void) {
  printf("%-11s %-22s %-6s %9s %9s %6s %6s %-13s %-13s %9s %s\n", "workload", "driver",
         "attrib", "raw ms", "cls ms", "ratio", "paired", "95% interval", "target", "ev/launch",
         "notes");
}

/* The attribution and events columns of a row ("-" where none). */
static const char *attrib_col(const struct row *row) {
  return row->attribution ? row->attribution : "-";
}
static const char *events_col(const struct row *row, char *buf, size_t n) {
  if (row->events < 0)
    return "-";
  snprintf(buf, n, "%.4f", row->events);
  return buf;
}

static void print_row(const struct row *row) {
  char ci[32], tg[32], ev[32];
  snprintf(ci, sizeof ci, "[%.3f,%.3f]", row->lo, row->hi);
  if (row->target > 0)
    snprintf(tg, sizeof tg, "<=%.3f %s", row->target, verdict(row));
  else
    snprintf(tg, sizeof tg, "-");
  printf("%-11s %-22s %-6s %9.2f %9.2f %6.3f %6.3f %-13s %-13s %9s %s\n", row->workload,
         row->driver, attrib_col(row), row->raw * 1e3, row->lib * 1e3, row->ratio, row->paired,
         ci, tg, events_col(row, ev, sizeof ev), row->note);
  fflush(stdout);
}

/* One measured run of fn, dumped as "host <name> <driver> <side> <launches>". */
#define DUMPED(side, call)                                                          \
  do {                                                                              \
    char label_[160];                                                               \
    snprintf(label_, sizeof label_, "host %s %s %s %d", name, driver, side, launches); \
    CALLGRIND_ZERO_STATS;                                                           \
    (void)(call);                                                                   \
    CALLGRIND_DUMP_STATS_AT(label_);                                                \
  } while (0)

/* The raw side against each of ls[0..nl) (one context per attribution
 * mode), a row each, every round timing every side once. */
static void compare(const char *name, const char *driver, struct raw *r, raw_fn rf,
                    struct lib *const *ls, int nl, lib_fn lf, double bytes, int launches) {
  double tr[MAX_REPS], tl[2][MAX_REPS];
  uint64_t ev0[2];
  rf(r); /* warm-up, every side */
  for (int k = 0; k < nl; k++)
    lf(ls[k]);
  if (callgrind) {
    DUMPED("raw", rf(r));
    for (int k = 0; k < nl; k++)
      DUMPED(ls[k]->attribution, lf(ls[k]));
    printf("%-11s %-22s dumped for callgrind (%d launches a run)\n", name, driver, launches);
    return;
  }
  for (int k = 0; k < nl; k++)
    ev0[k] = lib_events(ls[k]);
  for (int i = 0; i < reps; i++) {
    /* Raw first in even rounds, last in odd ones; the clstream sides swap
     * every other round too, so that neither is always next to raw. */
    bool forward = i % 4 == 0 || i % 4 == 3;
    if (i % 2 == 0)
      tr[i] = rf(r);
    for (int j = 0; j < nl; j++) {
      int k = forward ? j : nl - 1 - j;
      tl[k][i] = lf(ls[k]);
    }
    if (i % 2 == 1)
      tr[i] = rf(r);
  }
  for (int k = 0; k < nl; k++) {
    double trk[MAX_REPS]; /* add_row sorts what it is given */
    memcpy(trk, tr, sizeof trk);
    struct row *row = add_row(name, driver, "workload", trk, tl[k]);
    row->target = target_of(name);
    row->attribution = ls[k]->attribution;
    row->events = (double)(lib_events(ls[k]) - ev0[k]) / ((double)reps * launches);
    if (bytes > 0)
      snprintf(row->note, sizeof row->note,
               "raw %.1f GB/s, clstream %.1f GB/s (throughput %.3fx)", bytes / row->raw / 1e9,
               bytes / row->lib / 1e9, row->raw / row->lib);
    print_row(row);
  }
}

/* A raw workload against a raw variant of it, in pairs as compare() does
 * (the "clstream" column holds the variant). */
static void calibrate(const char *name, struct raw *r, raw_fn base, raw_fn variant,
                      const char *what) {
  double tr[MAX_REPS], tv[MAX_REPS];
  base(r);
  variant(r);
  for (int i = 0; i < reps; i++) {
    if (i % 2 == 0) {
      tr[i] = base(r);
      tv[i] = variant(r);
    } else {
      tv[i] = variant(r);
      tr[i] = base(r);
    }
  }
  struct row *row = add_row(name, "raw only", "calibration", tr, tv);
  snprintf(row->note, sizeof row->note, "%s", what);
  print_row(row);
}

static void skip_chain(const char *driver) {
  struct lib l;
  lib_init(&l, driver, "enqueue:kernel=failk", -1);
  cls_buffer X, Y;
  CLS(cls_alloc(l.ctx, 0, SMALL * sizeof(int), &X));
  CLS(cls_alloc(l.ctx, 0, SMALL * sizeof(int), &Y));
  cls_arg f[] = {CLS_IN(l.A), CLS_OUT(X)};
  int rc = cls_launch(l.ctx, 0, l.failk, 1, &small_g, NULL, 2, f);
  if (rc != CLS_ELAUNCH && rc != CLS_OK)
    die("failk: %s", cls_err_name(rc));
  CLS(cls_sync(l.ctx, NULL)); /* the scheduler finds it at submission */
  cls_arg s[] = {CLS_IN(X), CLS_OUT(Y)};
  double times[MAX_REPS];
  unsigned long calls = 0, allocs = 0;
  uint64_t ev0 = 0;
  for (int i = 0; i <= reps; i++) {
    if (i == 1)
      ev0 = lib_events(&l);
    unsigned long before = factory_calls;
    bench_count_start();
    double t = bench_now();
    for (int k = 0; k < SKIP_N; k++)
      if (cls_launch(l.ctx, 0, l.step, 1, &small_g, NULL, 2, s) != CLS_ESKIPPED)
        die("a launch on tainted input was not skipped");
    double dt = bench_now() - t;
    unsigned long a = bench_count_stop();
    if (i > 0) { /* the first round warms up */
      times[i - 1] = dt;
      calls += factory_calls - before;
      allocs += a;
    }
  }
  struct row *row = new_row("skip-chain", driver, "skip");
  row->lib = bench_median(times, reps);
  row->attribution = l.attribution;
  row->events = (double)(lib_events(&l) - ev0) / ((double)reps * SKIP_N);
  snprintf(row->note, sizeof row->note,
           "%.3f us per skipped launch, %lu OpenCL calls, %lu allocations for %d skips",
           row->lib / SKIP_N * 1e6, calls, allocs, reps * SKIP_N);
  char ev[32];
  printf("%-11s %-22s %-6s %9s %9.2f %6s %6s %-13s %-13s %9s %s\n", "skip-chain", driver,
         attrib_col(row), "-", row->lib * 1e3, "-", "-", "-", "-", events_col(row, ev, sizeof ev),
         row->note);
  cls_context_destroy(l.ctx);
}

/* Allocations per launch in steady state, tiny-chain on each side. */
static void allocations(const char *driver, struct raw *r, struct lib *l) {
  bench_count_start();
  raw_tiny(r);
  unsigned long ar = bench_count_stop();
  bench_count_start();
  lib_tiny(l);
  unsigned long al = bench_count_stop();
  struct row *row = new_row("allocs", driver, "allocs");
  row->attribution = l->attribution;
  row->raw = (double)ar / TINY_N;
  row->lib = (double)al / TINY_N;
  snprintf(row->note, sizeof row->note,
           "heap allocations per tiny launch: raw %.2f, clstream %.2f (the OpenCL runtime's "
           "included)",
           row->raw, row->lib);
  printf("%-11s %-22s %-6s %9.2f %9.2f %6s %6s %-13s %-13s %9s %s\n", "allocs", driver,
         attrib_col(row), row->raw, row->lib, "-", "-", "-", "-", "-",
         "per launch, all heap allocations in the process");
}

static void write_json(const char *path, const struct cls_device_info *dev) {
  FILE *f = fopen(path, "w");
  if (!f)
    die("cannot write %s", path);
  fprintf(f, "{\n  \"device\": \"%s\",\n  \"platform\": \"%s\",\n  \"reps\": %d,\n  \"rows\": [\n",
          dev->device_name, dev->platform_name, reps);
  for (int i = 0; i < nrows; i++) {
    /* null where a row has no clstream side (calibration). */
    char attrib[16] = "null", events[32] = "null";
    if (rows[i].attribution)
      snprintf(attrib, sizeof attrib, "\"%s\"", rows[i].attribution);
    if (rows[i].events >= 0)
      snprintf(events, sizeof events, "%.6g", rows[i].events);
    fprintf(f,
            "    {\"workload\": \"%s\", \"kind\": \"%s\", \"driver\": \"%s\", \"attribution\": %s, "
            "\"raw_s\": %.9g, \"clstream_s\": %.9g, \"ratio\": %.6g, \"paired_ratio\": %.6g, "
            "\"ci95\": [%.6g, %.6g], \"target\": %.6g, \"verdict\": \"%s\", "
            "\"events_per_launch\": %s, \"note\": \"%s\"}%s\n",
            rows[i].workload, rows[i].kind, rows[i].driver, attrib, rows[i].raw, rows[i].lib,
            rows[i].ratio, rows[i].paired, rows[i].lo, rows[i].hi, rows[i].target,
            verdict(&rows[i]), events, rows[i].note, i + 1 < nrows ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  fclose(f);
}

int main(int argc, char **argv) {
  const char *json = NULL;
  char drivers_buf[256] = "event,scheduler:sequential,scheduler:interleave";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
      json = argv[++i];
    else if (strcmp(argv[i], "--drivers") == 0 && i + 1 < argc)
      snprintf(drivers_buf, sizeof drivers_buf, "%s", argv[++i]);
    else if (strcmp(argv[i], "--callgrind") == 0)
      callgrind = true;
    else if (strcmp(argv[i], "--workloads") == 0 && i + 1 < argc)
      snprintf(workloads, sizeof workloads, "%s", argv[++i]);
    else if (strcmp(argv[i], "--quick") == 0) {
      real_quick = true;
      TINY_N = 1000, SAXPY_REPS = 4, PP_N = 200, FAN_N = 50, SKIP_N = 1000;
      SAXPY_LEN = (size_t)1 << 20;
    } else {
      fprintf(stderr,
              "usage: clstream-bench [--reps N] [--drivers event,scheduler:interleave,...]\n"
              "                      [--workloads tiny-chain,saxpy,ping-pong,fan,allocs,"
              "skip-chain,guard,real,calibration]\n"
              "                      [--json FILE] [--quick] [--callgrind]\n");
      return 2;
    }
  }
  if (reps < 5 || reps > MAX_REPS)
    die("--reps must be 5..%d", MAX_REPS);
  inner = cls_opencl_stream_factory();
  struct cls_device_info dev;
  CLS(cls_device_select(getenv("CLS_DEVICE"), &dev));
  printf("clstream %s on %s (%s); %d pairs of runs after a warm-up\n"
         "ratio: median clstream / median raw; paired: median of the pairs' ratios, with its 95%% "
         "interval;\ntarget: met when the interval is under it, missed when above, else unclear\n\n",
         cls_version_string(), dev.device_name, dev.platform_name, reps);
  print_header();
  struct raw r;
  raw_init(&r);
  for (int i = 0; i < REAL_COUNT; i++) /* the rows' names */
    snprintf(real_names[i], sizeof real_names[i], "real/%s", real_corpus[i]->name);
  if (real_wanted(-1))
    real_raw_setup(&r);
  double saxpy_bytes = (double)SAXPY_REPS * 3.0 * sizeof(float) * (double)SAXPY_LEN;
  char *save = NULL;
  for (char *d = strtok_r(drivers_buf, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
    /* strtok_r's pieces live in drivers_buf for the whole run. */
    /* One context per attribution mode, measured against the same raw runs. */
    struct lib lr, le, *ls[2] = {&lr, &le};
    lib_init(&lr, d, NULL, -1);
    lib_init(&le, d, NULL, 1);
    for (int k = 0; k < 2; k++) {
      const char *why = NULL;
      unsigned every = 0;
      int mode;
      CLS(cls_context_attribution(ls[k]->ctx, &mode, &why, &every));
      printf("# %s, precise=%d: %s (every %u)\n", d, k ? 1 : -1, why, every);
    }
    if (wanted("tiny-chain"))
      compare("tiny-chain", d, &r, raw_tiny, ls, 2, lib_tiny, 0, TINY_N);
    if (wanted("saxpy"))
      compare("saxpy", d, &r, raw_saxpy, ls, 2, lib_saxpy, saxpy_bytes, SAXPY_REPS);
    if (wanted("ping-pong"))
      compare("ping-pong", d, &r, raw_pingpong, ls, 2, lib_pingpong, 0, 2 * PP_N);
    if (wanted("fan"))
      compare("fan", d, &r, raw_fan, ls, 2, lib_fan, 0, 6 * FAN_N);
    if (real_wanted(-1)) {
      for (int k = 0; k < 2; k++) {
        real_lib_setup(ls[k]);
        real_verify(&r, ls[k]);
      }
      for (int i = -1; i < REAL_COUNT; i++) {
        if (i >= 0 ? !real_wanted(i) : !wanted("real"))
          continue;
        real_only = i;
        unsigned before = real_launches;
        lib_real(ls[0]);
        int launches = (int)(real_launches - before);
        compare(i < 0 ? "real" : real_names[i], d, &r, raw_real, ls, 2, lib_real, 0, launches);
      }
      real_only = -1;
    }
    if (wanted("allocs"))
      for (int k = 0; k < 2; k++)
        allocations(d, &r, ls[k]);
    cls_context_destroy(lr.ctx);
    cls_context_destroy(le.ctx);
    if (wanted("skip-chain"))
      skip_chain(d);
    if (wanted("guard")) {
      /* What guard mode costs: rows without a target. */
      struct lib gl, *gls[1] = {&gl};
      lib_guard = 1;
      lib_init(&gl, d, NULL, -1); /* guard mode is exact whatever precise says */
      lib_guard = -1;
      compare("tiny+guard", d, &r, raw_tiny, gls, 1, lib_tiny, 0, TINY_N);
      compare("fan+guard", d, &r, raw_fan, gls, 1, lib_fan, 0, 6 * FAN_N);
      cls_context_destroy(gl.ctx);
    }
  }
  if (wanted("calibration")) {
    printf("\ncalibration: raw OpenCL against raw variants of it (second column: the "
           "variant)\n");
    calibrate("tiny+arg", &r, raw_tiny, raw_tiny_setarg, "clSetKernelArg before every launch");
    calibrate("tiny+event", &r, raw_tiny, raw_tiny_event, "an event per launch, released at once");
    calibrate("tiny+ring", &r, raw_tiny, raw_tiny_ring,
              "an event per launch, kept until its status is read (the opencl factory's way)");
    calibrate("fan/1queue", &r, raw_fan, raw_fan_one_queue,
              "the fan on one in-order queue (what scheduler:interleave does)");
    calibrate("fan+status", &r, raw_fan, raw_fan_status,
              "the status of each event read before a command waits on it");
    calibrate("fan+poll", &r, raw_fan, raw_fan_poll,
              "each queue read from its oldest unfinished event before a wait on it");
  }
  if (json)
    write_json(json, &dev);
  return 0;
}
