/* clstream-bench's raw side: each workload as plain hand-written OpenCL,
 * the commands clstream would issue and nothing else, and the raw-only
 * calibration variants (an argument set, an event, events kept per launch;
 * the fan's extras and the fan on one queue). */
#include "common.h"

#include <stdlib.h>
#include <string.h>

void raw_init(struct raw *r) {
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
  K(tick, "tick");
  K(fstep_ab, "fstep");
  K(fstep_ba, "fstep");
  K(fprod, "fstep");
  for (int i = 0; i < 4; i++) {
    K(fcons[i], "fstep");
  }
  K(fred, "fred");
  K(sten_ab, "stencil");
  K(sten_ba, "stencil");
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
    M(FC[i], SMALL * sizeof(float));
  }
  M(fx, SMALL * sizeof(float));
  M(fy, SMALL * sizeof(float));
  M(FA, SMALL * sizeof(float));
  M(FB, SMALL * sizeof(float));
  M(FP, SMALL * sizeof(float));
  M(FR, SMALL * sizeof(float));
  M(SA, STENCIL_LEN * sizeof(float));
  M(SB, STENCIL_LEN * sizeof(float));
#undef M
  int zero = 0;
  float one = 1.0f;
  cl_mem smalls[] = {r->tiny_buf, r->A,     r->B,     r->P,     r->R,    r->C[0], r->C[1],
                     r->C[2],     r->C[3],  r->fx,    r->fy,    r->FA,   r->FB,   r->FP,
                     r->FR,       r->FC[0], r->FC[1], r->FC[2], r->FC[3]};
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
  /* The *-args kernels: buffers and the size once too; the time step
   * changes, so the raw loops set it before every launch. */
  int n = SMALL;
  CL(clSetKernelArg(r->tick, 0, sizeof(cl_mem), &r->fx));
  CL(clSetKernelArg(r->tick, 1, sizeof(cl_mem), &r->fy));
  CL(clSetKernelArg(r->fstep_ab, 0, sizeof(cl_mem), &r->FA));
  CL(clSetKernelArg(r->fstep_ab, 1, sizeof(cl_mem), &r->FB));
  CL(clSetKernelArg(r->fstep_ba, 0, sizeof(cl_mem), &r->FB));
  CL(clSetKernelArg(r->fstep_ba, 1, sizeof(cl_mem), &r->FA));
  CL(clSetKernelArg(r->fprod, 0, sizeof(cl_mem), &r->FA));
  CL(clSetKernelArg(r->fprod, 1, sizeof(cl_mem), &r->FP));
  cl_kernel two[] = {r->tick, r->fstep_ab, r->fstep_ba, r->fprod,
                     r->fcons[0], r->fcons[1], r->fcons[2], r->fcons[3]};
  for (int i = 0; i < 4; i++) {
    CL(clSetKernelArg(r->fcons[i], 0, sizeof(cl_mem), &r->FP));
    CL(clSetKernelArg(r->fcons[i], 1, sizeof(cl_mem), &r->FC[i]));
    CL(clSetKernelArg(r->fred, (cl_uint)i, sizeof(cl_mem), &r->FC[i]));
  }
  for (size_t i = 0; i < sizeof two / sizeof *two; i++)
    CL(clSetKernelArg(two[i], 2, sizeof n, &n));
  CL(clSetKernelArg(r->fred, 4, sizeof(cl_mem), &r->FR));
  CL(clSetKernelArg(r->fred, 5, sizeof n, &n));
  int sn = (int)STENCIL_LEN;
  CL(clEnqueueFillBuffer(r->q[0], r->SA, &one, sizeof one, 0, STENCIL_LEN * sizeof(float), 0,
                         NULL, NULL));
  CL(clFinish(r->q[0]));
  CL(clSetKernelArg(r->sten_ab, 0, sizeof(cl_mem), &r->SA));
  CL(clSetKernelArg(r->sten_ab, 1, sizeof(cl_mem), &r->SB));
  CL(clSetKernelArg(r->sten_ab, 2, sizeof sn, &sn));
  CL(clSetKernelArg(r->sten_ba, 0, sizeof(cl_mem), &r->SB));
  CL(clSetKernelArg(r->sten_ba, 1, sizeof(cl_mem), &r->SA));
  CL(clSetKernelArg(r->sten_ba, 2, sizeof sn, &sn));
}

/* stencil-100: STENCIL_N steps, each there and back, one enqueue each. */
double raw_stencil(struct raw *r) {
  double t = bench_now();
  for (int i = 0; i < STENCIL_N; i++) {
    CL(clEnqueueNDRangeKernel(r->q[0], r->sten_ab, 1, NULL, &STENCIL_LEN, NULL, 0, NULL, NULL));
    CL(clEnqueueNDRangeKernel(r->q[0], r->sten_ba, 1, NULL, &STENCIL_LEN, NULL, 0, NULL, NULL));
  }
  CL(clFinish(r->q[0]));
  return bench_now() - t;
}

const size_t small_g = SMALL;

double raw_tiny(struct raw *r) {
  double t = bench_now();
  for (int i = 0; i < TINY_N; i++)
    CL(clEnqueueNDRangeKernel(r->q[0], r->tiny, 1, NULL, &small_g, NULL, 0, NULL, NULL));
  CL(clFinish(r->q[0]));
  return bench_now() - t;
}

/* Calibration variants of tiny-chain, raw OpenCL only: what each thing a
 * layer may add costs on this device by itself. */
double raw_tiny_setarg(struct raw *r) {
  double t = bench_now();
  for (int i = 0; i < TINY_N; i++) {
    CL(clSetKernelArg(r->tiny, 0, sizeof(cl_mem), &r->tiny_buf));
    CL(clEnqueueNDRangeKernel(r->q[0], r->tiny, 1, NULL, &small_g, NULL, 0, NULL, NULL));
  }
  CL(clFinish(r->q[0]));
  return bench_now() - t;
}

double raw_tiny_event(struct raw *r) {
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
double raw_tiny_ring(struct raw *r) {
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

double raw_saxpy(struct raw *r) {
  double t = bench_now();
  for (int i = 0; i < SAXPY_REPS; i++)
    CL(clEnqueueNDRangeKernel(r->q[0], r->saxpy, 1, NULL, &SAXPY_LEN, NULL, 0, NULL, NULL));
  CL(clFinish(r->q[0]));
  return bench_now() - t;
}

/* Each launch waits on the other queue's last launch, which was flushed. */
double raw_pingpong(struct raw *r) {
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

double raw_fan(struct raw *r) { return fan_run(r, FAN_PLAIN); }
double raw_fan_status(struct raw *r) { return fan_run(r, FAN_STATUS); }
double raw_fan_poll(struct raw *r) { return fan_run(r, FAN_POLL); }

/* The fan's commands in the same order on one in-order queue, no events:
 * what the scheduler's interleave strategy makes of the six streams.  The
 * queue's order is the only ordering; nothing runs side by side. */
double raw_fan_one_queue(struct raw *r) {
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

/* The *-args workloads, as a user writes them in OpenCL: buffers and the
 * size set once (raw_init), the time step set before every launch. */
double raw_tiny_args(struct raw *r) {
  double t = bench_now();
  for (int i = 0; i < TINY_N; i++) {
    float dt = STEP_DT(i);
    CL(clSetKernelArg(r->tick, 3, sizeof dt, &dt));
    CL(clEnqueueNDRangeKernel(r->q[0], r->tick, 1, NULL, &small_g, NULL, 0, NULL, NULL));
  }
  CL(clFinish(r->q[0]));
  return bench_now() - t;
}

/* ping-pong's waits and flushes (raw_pingpong), the time step set per launch. */
double raw_pingpong_args(struct raw *r) {
  double t = bench_now();
  cl_event prev = NULL, e0;
  for (int i = 0; i < PP_N; i++) {
    float dt = STEP_DT(2 * i);
    CL(clSetKernelArg(r->fstep_ab, 3, sizeof dt, &dt));
    CL(clEnqueueNDRangeKernel(r->q[0], r->fstep_ab, 1, NULL, &small_g, NULL, prev ? 1 : 0,
                              prev ? &prev : NULL, &e0));
    if (prev)
      clReleaseEvent(prev);
    CL(clFlush(r->q[0]));
    dt = STEP_DT(2 * i + 1);
    CL(clSetKernelArg(r->fstep_ba, 3, sizeof dt, &dt));
    CL(clEnqueueNDRangeKernel(r->q[1], r->fstep_ba, 1, NULL, &small_g, NULL, 1, &e0, &prev));
    clReleaseEvent(e0);
    CL(clFlush(r->q[1]));
  }
  CL(clFinish(r->q[1]));
  CL(clFinish(r->q[0]));
  clReleaseEvent(prev);
  return bench_now() - t;
}

/* The fan's waits and flushes (fan_run, FAN_PLAIN), the time step set per
 * launch. */
double raw_fan_args(struct raw *r) {
  double t = bench_now();
  cl_event ep = NULL, ec[4] = {NULL, NULL, NULL, NULL}, er = NULL;
  for (int it = 0; it < FAN_N; it++) {
    float dt = STEP_DT(it);
    cl_uint n = ec[0] ? 4 : 0;
    cl_event prod_ev;
    CL(clSetKernelArg(r->fprod, 3, sizeof dt, &dt));
    CL(clEnqueueNDRangeKernel(r->q[0], r->fprod, 1, NULL, &small_g, NULL, n, n ? ec : NULL,
                              &prod_ev));
    CL(clFlush(r->q[0]));
    if (ep)
      clReleaseEvent(ep);
    ep = prod_ev;
    for (int c = 0; c < 4; c++) {
      cl_event w[2] = {ep, er};
      cl_event ev;
      CL(clSetKernelArg(r->fcons[c], 3, sizeof dt, &dt));
      CL(clEnqueueNDRangeKernel(r->q[1 + c], r->fcons[c], 1, NULL, &small_g, NULL, er ? 2 : 1, w,
                                &ev));
      CL(clFlush(r->q[1 + c]));
      if (ec[c])
        clReleaseEvent(ec[c]);
      ec[c] = ev;
    }
    cl_event ev;
    CL(clSetKernelArg(r->fred, 6, sizeof dt, &dt));
    CL(clEnqueueNDRangeKernel(r->q[5], r->fred, 1, NULL, &small_g, NULL, 4, ec, &ev));
    CL(clFlush(r->q[5]));
    if (er)
      clReleaseEvent(er);
    er = ev;
  }
  for (int i = 0; i < 6; i++)
    CL(clFinish(r->q[i]));
  clReleaseEvent(ep);
  clReleaseEvent(er);
  for (int c = 0; c < 4; c++)
    clReleaseEvent(ec[c]);
  return bench_now() - t;
}
