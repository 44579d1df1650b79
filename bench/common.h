/* Shared by clstream-bench's files: the workloads' parameters (set by the
 * options), the two sides' state, the rows.  Each declaration's comment
 * is at its definition. */
#ifndef CLS_BENCH_COMMON_H
#define CLS_BENCH_COMMON_H

#include <clstream.h>
#include <clstream/stream.h>

#include "bench.h"
#include "peer.h"
#include "../tests/real/real.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* common.c: the kernels, the sizes (--quick lowers them), errors. */
extern const char *SRC;
extern int TINY_N, SAXPY_REPS, PP_N, FAN_N, SKIP_N;
/* stencil-100: steps replayed, floats per buffer. */
extern const int STENCIL_N;
extern const size_t STENCIL_LEN;
extern size_t SAXPY_LEN;
#define SMALL 64

void die(const char *fmt, ...);

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

/* raw.c */
struct raw {
  cl_context c;
  cl_device_id d;
  cl_program p;
  cl_command_queue q[6];
  cl_kernel tiny, saxpy, step_ab, step_ba, prod, cons[4], red;
  cl_mem tiny_buf, sx, sy, A, B, P, C[4], R;
  /* The *-args workloads: kernels taking two buffers (the reducer five),
   * an int size and a float time step; their own float buffers. */
  cl_kernel tick, fstep_ab, fstep_ba, fprod, fcons[4], fred;
  cl_mem fx, fy, FA, FB, FP, FC[4], FR;
  /* stencil-100: a step is SA -> SB, SB -> SA. */
  cl_kernel sten_ab, sten_ba;
  cl_mem SA, SB;
  /* The corpus (workload real), on this context and its first queues. */
  struct real_raw real;
  cl_program real_prog[REAL_COUNT];
  cl_kernel real_k[REAL_COUNT][REAL_MAX_KERNELS];
  /* The image workload (image.c). */
  cl_kernel blur_ab, blur_ba;
  cl_mem ia, ib;
};

extern const size_t small_g;
void raw_init(struct raw *r);
double raw_tiny(struct raw *r);
double raw_tiny_setarg(struct raw *r);
double raw_tiny_event(struct raw *r);
double raw_tiny_ring(struct raw *r);
double raw_saxpy(struct raw *r);
double raw_pingpong(struct raw *r);
double raw_fan(struct raw *r);
double raw_fan_status(struct raw *r);
double raw_fan_poll(struct raw *r);
double raw_fan_one_queue(struct raw *r);
double raw_tiny_args(struct raw *r);
double raw_pingpong_args(struct raw *r);
double raw_fan_args(struct raw *r);
double raw_stencil(struct raw *r);

/* raw-cb.c: the *-replay workloads and stencil-100 as raw
 * cl_khr_command_buffer code (command buffers recorded once, enqueued
 * until they made the plain rows' launches), where the device has it. */
bool raw_cb_init(struct raw *r); /* false: the device has no command buffers */
double raw_cb_tiny(void *r);
double raw_cb_pingpong(void *r);
double raw_cb_fan(void *r);
double raw_cb_stencil(void *r);

/* counting.c */
extern unsigned long factory_calls;
extern const struct cls_stream_factory *inner;
extern const struct cls_stream_factory counting;

/* workloads.c */
/* Streams lib_init gives a buffer to: every workload's streams. */
#define LIB_STREAMS 6

struct lib {
  cls_context *ctx;
  const char *attribution; /* in force: "ranged" or "exact" */
  bool shared_queue;       /* scheduler:interleave: every stream on one queue */
  cls_kernel *tiny, *saxpy, *step, *failk, *red;
  cls_buffer tiny_buf, sx, sy, A, B, P, C[4], R;
  cls_kernel *tick, *fstep, *fred; /* the *-args workloads */
  /* The *-replay workloads: captured at their first run (issue 34). */
  cls_capture *cap_tiny, *cap_pp, *cap_fan, *cap_sten;
  cls_kernel *stencil;
  cls_buffer SA, SB;
  cls_buffer fx, fy, FA, FB, FP, FC[4], FR;
  cls_kernel *real_k[REAL_COUNT][REAL_MAX_KERNELS];
  cls_kernel *blur_img; /* the image workload (image.c) */
  cls_image ia, ib;
};

extern int lib_guard;
void lib_init(struct lib *l, const char *driver, const char *fault, int precise);
uint64_t lib_events(struct lib *l);
double lib_tiny(struct lib *l);
double lib_saxpy(struct lib *l);
double lib_pingpong(struct lib *l);
double lib_fan(struct lib *l);
double lib_tiny_args(struct lib *l);
double lib_pingpong_args(struct lib *l);
double lib_fan_args(struct lib *l);
double lib_tiny_replay(struct lib *l);
double lib_pingpong_replay(struct lib *l);
double lib_fan_replay(struct lib *l);
double lib_stencil_replay(struct lib *l);
/* The backend the capture of a *-replay workload took ("" before it). */
const char *lib_capture_backend(struct lib *l, const char *workload);

/* real.c */
extern bool real_quick;
extern int real_only;
void real_raw_setup(struct raw *r);
void real_lib_setup(struct lib *l);
double raw_real(struct raw *r);
double lib_real(struct lib *l);
void real_verify(struct raw *r, struct lib *l);

/* image.c */
extern int IMAGE_REPS;
extern size_t IMAGE_SIDE;
bool image_ok(struct raw *r);
void raw_image_setup(struct raw *r);
void lib_image_setup(struct lib *l);
double raw_image_blur(struct raw *r);
double lib_image_blur(struct lib *l);

/* stats.c */
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
  /* clstream rows of a workload with peers: the best peer (the lowest
   * paired ratio against raw in the same rounds), and the median of the
   * rounds' clstream / that peer's time, with its 95 % interval; peer
   * NULL: no peer row for this workload. */
  const char *peer;
  double vs_peer, vs_lo, vs_hi;
  const char *rounds; /* peer rows: the driver whose rounds they shared */
  char note[160];
};

#define MAX_REPS 201
/* Every workload x driver x attribution mode, with room to spare. */
#define CLS_BENCH_MAX_ROWS 256
extern struct row rows[CLS_BENCH_MAX_ROWS];
extern int nrows;
extern int reps;
double target_of(const char *workload);
bool launch_bound(const char *workload);
void print_targets(void);
struct row *new_row(const char *name, const char *driver, const char *kind);
struct row *add_row(const char *name, const char *driver, const char *kind, double *tr,
                    double *tl);
void pair_stats(struct row *row, double *tr, double *tl);
void print_header(void);
const char *attrib_col(const struct row *row);
const char *events_col(const struct row *row, char *buf, size_t n);
void print_row(const struct row *row);
void write_json(const char *path, const struct cls_device_info *dev);

#endif /* CLS_BENCH_COMMON_H */
