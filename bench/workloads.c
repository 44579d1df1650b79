/* clstream-bench's clstream side: a context per driver setting and
 * attribution mode, with the workloads' kernels and buffers, and each
 * workload through clstream as the raw side runs it (raw.c). */
#include "common.h"

#include <string.h>

static cls_buffer zeros(cls_context *ctx, int stream, size_t bytes) {
  cls_buffer b;
  int zero = 0;
  CLS(cls_alloc(ctx, stream, bytes, &b));
  CLS(cls_fill(ctx, stream, b, 0, bytes, &zero, sizeof zero));
  return b;
}

/* fault: a fault plan, and the counting factory around the OpenCL one
 * (skip-chain); NULL: the OpenCL factory itself, as a user gets it. */
int lib_guard = -1; /* the guard option of the next lib_init */

/* precise: the context option, -1 ranged where the device allows it, 1
 * exact; set either way so that $CLS_PRECISE does not merge the modes. */
void lib_init(struct lib *l, const char *driver, const char *fault, int precise) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .scheduler = driver,
                                  .fault = fault,
                                  .factory = fault ? &counting : NULL,
                                  .guard = lib_guard,
                                  .precise = precise};
  CLS(cls_context_create(&l->ctx, &o));
  int mode;
  CLS(cls_context_attribution(l->ctx, &mode, NULL, NULL));
  l->cap_tiny = l->cap_pp = l->cap_fan = l->cap_sten = NULL;
  l->attribution = mode == CLS_ATTRIBUTION_RANGED ? "ranged" : "exact";
  l->shared_queue = strstr(driver, "interleave") != NULL;
  cls_program *p;
  CLS(cls_program_build(l->ctx, SRC, NULL, &p));
  CLS(cls_kernel_get(l->ctx, p, "tiny", &l->tiny));
  CLS(cls_kernel_get(l->ctx, p, "saxpy", &l->saxpy));
  CLS(cls_kernel_get(l->ctx, p, "stepk", &l->step));
  CLS(cls_kernel_get(l->ctx, p, "failk", &l->failk));
  CLS(cls_kernel_get(l->ctx, p, "reduce4", &l->red));
  CLS(cls_kernel_get(l->ctx, p, "tick", &l->tick));
  CLS(cls_kernel_get(l->ctx, p, "fstep", &l->fstep));
  CLS(cls_kernel_get(l->ctx, p, "fred", &l->fred));
  CLS(cls_kernel_get(l->ctx, p, "stencil", &l->stencil));
  CLS(cls_alloc(l->ctx, 0, STENCIL_LEN * sizeof(float), &l->SA));
  CLS(cls_alloc(l->ctx, 0, STENCIL_LEN * sizeof(float), &l->SB));
  {
    float one = 1.0f;
    CLS(cls_fill(l->ctx, 0, l->SA, 0, STENCIL_LEN * sizeof(float), &one, sizeof one));
  }
  l->tiny_buf = zeros(l->ctx, 0, SMALL * sizeof(int));
  l->A = zeros(l->ctx, 0, SMALL * sizeof(int));
  l->B = zeros(l->ctx, 1, SMALL * sizeof(int));
  l->P = zeros(l->ctx, 0, SMALL * sizeof(int));
  for (int i = 0; i < 4; i++)
    l->C[i] = zeros(l->ctx, 1 + i, SMALL * sizeof(int));
  l->R = zeros(l->ctx, 5, SMALL * sizeof(int));
  /* The *-args workloads' buffers, on the streams that write them. */
  l->fx = zeros(l->ctx, 0, SMALL * sizeof(float));
  l->fy = zeros(l->ctx, 0, SMALL * sizeof(float));
  l->FA = zeros(l->ctx, 0, SMALL * sizeof(float));
  l->FB = zeros(l->ctx, 1, SMALL * sizeof(float));
  l->FP = zeros(l->ctx, 0, SMALL * sizeof(float));
  for (int i = 0; i < 4; i++)
    l->FC[i] = zeros(l->ctx, 1 + i, SMALL * sizeof(float));
  l->FR = zeros(l->ctx, 5, SMALL * sizeof(float));
  float one = 1.0f;
  CLS(cls_alloc(l->ctx, 0, SAXPY_LEN * sizeof(float), &l->sx));
  CLS(cls_alloc(l->ctx, 0, SAXPY_LEN * sizeof(float), &l->sy));
  CLS(cls_fill(l->ctx, 0, l->sx, 0, SAXPY_LEN * sizeof(float), &one, sizeof one));
  CLS(cls_fill(l->ctx, 0, l->sy, 0, SAXPY_LEN * sizeof(float), &one, sizeof one));
  CLS(cls_sync(l->ctx, NULL));
}

/* OpenCL events l's streams asked for so far: the sum over streams, or
 * the largest where every stream gives the one shared queue's count. */
uint64_t lib_events(struct lib *l) {
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

double lib_tiny(struct lib *l) {
  cls_arg a[] = {CLS_INOUT(l->tiny_buf)};
  double t = bench_now();
  for (int i = 0; i < TINY_N; i++)
    CLS(cls_launch(l->ctx, 0, l->tiny, 1, &small_g, NULL, 1, a));
  CLS(cls_stream_sync(l->ctx, 0, NULL));
  return bench_now() - t;
}

double lib_saxpy(struct lib *l) {
  float alpha = 0.5f;
  cls_arg a[] = {CLS_IN(l->sx), CLS_INOUT(l->sy), CLS_SCALAR(alpha)};
  double t = bench_now();
  for (int i = 0; i < SAXPY_REPS; i++)
    CLS(cls_launch(l->ctx, 0, l->saxpy, 1, &SAXPY_LEN, NULL, 3, a));
  CLS(cls_stream_sync(l->ctx, 0, NULL));
  return bench_now() - t;
}

double lib_pingpong(struct lib *l) {
  cls_arg ab[] = {CLS_IN(l->A), CLS_OUT(l->B)}, ba[] = {CLS_IN(l->B), CLS_OUT(l->A)};
  double t = bench_now();
  for (int i = 0; i < PP_N; i++) {
    CLS(cls_launch(l->ctx, 0, l->step, 1, &small_g, NULL, 2, ab));
    CLS(cls_launch(l->ctx, 1, l->step, 1, &small_g, NULL, 2, ba));
  }
  CLS(cls_sync(l->ctx, NULL));
  return bench_now() - t;
}

double lib_fan(struct lib *l) {
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

/* The *-args workloads, as a user writes them with clstream: every
 * argument given at every launch (buffers with their access, the size and
 * the time step as scalars, as the examples do). */
double lib_tiny_args(struct lib *l) {
  int n = SMALL;
  double t = bench_now();
  for (int i = 0; i < TINY_N; i++) {
    float dt = STEP_DT(i);
    cls_arg a[] = {CLS_IN(l->fx), CLS_INOUT(l->fy), CLS_SCALAR(n), CLS_SCALAR(dt)};
    CLS(cls_launch(l->ctx, 0, l->tick, 1, &small_g, NULL, 4, a));
  }
  CLS(cls_stream_sync(l->ctx, 0, NULL));
  return bench_now() - t;
}

double lib_pingpong_args(struct lib *l) {
  int n = SMALL;
  double t = bench_now();
  for (int i = 0; i < PP_N; i++) {
    float dt = STEP_DT(2 * i);
    cls_arg ab[] = {CLS_IN(l->FA), CLS_OUT(l->FB), CLS_SCALAR(n), CLS_SCALAR(dt)};
    CLS(cls_launch(l->ctx, 0, l->fstep, 1, &small_g, NULL, 4, ab));
    dt = STEP_DT(2 * i + 1);
    cls_arg ba[] = {CLS_IN(l->FB), CLS_OUT(l->FA), CLS_SCALAR(n), CLS_SCALAR(dt)};
    CLS(cls_launch(l->ctx, 1, l->fstep, 1, &small_g, NULL, 4, ba));
  }
  CLS(cls_sync(l->ctx, NULL));
  return bench_now() - t;
}

double lib_fan_args(struct lib *l) {
  int n = SMALL;
  double t = bench_now();
  for (int it = 0; it < FAN_N; it++) {
    float dt = STEP_DT(it);
    cls_arg prod[] = {CLS_IN(l->FA), CLS_OUT(l->FP), CLS_SCALAR(n), CLS_SCALAR(dt)};
    CLS(cls_launch(l->ctx, 0, l->fstep, 1, &small_g, NULL, 4, prod));
    for (int c = 0; c < 4; c++) {
      cls_arg cons[] = {CLS_IN(l->FP), CLS_OUT(l->FC[c]), CLS_SCALAR(n), CLS_SCALAR(dt)};
      CLS(cls_launch(l->ctx, 1 + c, l->fstep, 1, &small_g, NULL, 4, cons));
    }
    cls_arg red[] = {CLS_IN(l->FC[0]), CLS_IN(l->FC[1]), CLS_IN(l->FC[2]), CLS_IN(l->FC[3]),
                     CLS_OUT(l->FR),   CLS_SCALAR(n),    CLS_SCALAR(dt)};
    CLS(cls_launch(l->ctx, 5, l->fred, 1, &small_g, NULL, 7, red));
  }
  CLS(cls_sync(l->ctx, NULL));
  return bench_now() - t;
}

/* The *-replay workloads (issue 34): tiny-chain, ping-pong and fan as the
 * plain rows run them, captured once (100, 100 and 50 iterations: the
 * capture is made at the first run, untimed) and replayed until they have
 * made as many launches as the plain rows.  The raw side is the plain
 * rows' one-enqueue-per-command loop. */
static void capture_of(struct lib *l, cls_capture **cap, void (*body)(struct lib *, int),
                       int iters) {
  if (*cap)
    return;
  CLS(cls_capture_begin(l->ctx));
  body(l, iters);
  CLS(cls_capture_end(l->ctx, cap));
}

static void tiny_body(struct lib *l, int n) {
  cls_arg a[] = {CLS_INOUT(l->tiny_buf)};
  for (int i = 0; i < n; i++)
    CLS(cls_launch(l->ctx, 0, l->tiny, 1, &small_g, NULL, 1, a));
}

static void pp_body(struct lib *l, int n) {
  cls_arg ab[] = {CLS_IN(l->A), CLS_OUT(l->B)}, ba[] = {CLS_IN(l->B), CLS_OUT(l->A)};
  for (int i = 0; i < n; i++) {
    CLS(cls_launch(l->ctx, 0, l->step, 1, &small_g, NULL, 2, ab));
    CLS(cls_launch(l->ctx, 1, l->step, 1, &small_g, NULL, 2, ba));
  }
}

static void fan_body(struct lib *l, int n) {
  cls_arg prod[] = {CLS_IN(l->A), CLS_OUT(l->P)};
  cls_arg red[] = {CLS_IN(l->C[0]), CLS_IN(l->C[1]), CLS_IN(l->C[2]), CLS_IN(l->C[3]),
                   CLS_OUT(l->R)};
  for (int it = 0; it < n; it++) {
    CLS(cls_launch(l->ctx, 0, l->step, 1, &small_g, NULL, 2, prod));
    for (int c = 0; c < 4; c++) {
      cls_arg cons[] = {CLS_IN(l->P), CLS_OUT(l->C[c])};
      CLS(cls_launch(l->ctx, 1 + c, l->step, 1, &small_g, NULL, 2, cons));
    }
    CLS(cls_launch(l->ctx, 5, l->red, 1, &small_g, NULL, 5, red));
  }
}

static double replays(struct lib *l, cls_capture *cap, int n, int chunk, bool all) {
  double t = bench_now();
  for (int i = 0; i < n; i += chunk)
    CLS(cls_replay(l->ctx, cap, 0, NULL));
  if (all)
    CLS(cls_sync(l->ctx, NULL));
  else
    CLS(cls_stream_sync(l->ctx, 0, NULL));
  return bench_now() - t;
}

double lib_tiny_replay(struct lib *l) {
  capture_of(l, &l->cap_tiny, tiny_body, 100);
  return replays(l, l->cap_tiny, TINY_N, 100, false);
}

double lib_pingpong_replay(struct lib *l) {
  capture_of(l, &l->cap_pp, pp_body, 100);
  return replays(l, l->cap_pp, PP_N, 100, true);
}

double lib_fan_replay(struct lib *l) {
  capture_of(l, &l->cap_fan, fan_body, 50);
  return replays(l, l->cap_fan, FAN_N, 50, true);
}

/* stencil-100: one step (SA -> SB, SB -> SA) captured once, replayed
 * STENCIL_N times. */
static void sten_body(struct lib *l, int n) {
  (void)n;
  int sn = (int)STENCIL_LEN;
  cls_arg ab[] = {CLS_IN(l->SA), CLS_OUT(l->SB), CLS_SCALAR(sn)};
  cls_arg ba[] = {CLS_IN(l->SB), CLS_OUT(l->SA), CLS_SCALAR(sn)};
  CLS(cls_launch(l->ctx, 0, l->stencil, 1, &STENCIL_LEN, NULL, 3, ab));
  CLS(cls_launch(l->ctx, 0, l->stencil, 1, &STENCIL_LEN, NULL, 3, ba));
}

double lib_stencil_replay(struct lib *l) {
  capture_of(l, &l->cap_sten, sten_body, 1);
  return replays(l, l->cap_sten, STENCIL_N, 1, false);
}

const char *lib_capture_backend(struct lib *l, const char *workload) {
  cls_capture *c = strcmp(workload, "tiny-chain-replay") == 0   ? l->cap_tiny
                   : strcmp(workload, "ping-pong-replay") == 0  ? l->cap_pp
                   : strcmp(workload, "fan-replay") == 0        ? l->cap_fan
                                                                : l->cap_sten;
  struct cls_capture_stats st;
  return c && cls_capture_info(c, &st) == CLS_OK ? st.backend : "";
}
