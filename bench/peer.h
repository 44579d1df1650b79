/* clstream-bench's peers: the launch-bound *-args workloads written with
 * another OpenCL wrapper, as its users write them, on the raw side's
 * device and context, timed in the same rounds as raw and clstream.  C
 * and C++ (a peer may be a C++ library: peer-boost.cpp). */
#ifndef CLS_BENCH_PEER_H
#define CLS_BENCH_PEER_H

#include <clstream/cl.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The *-args workloads' time step: a float that changes every launch. */
#define STEP_DT(i) (1e-3f + 1e-7f * (float)(i))

/* What a peer is given: the raw side's handles (the peer makes its own
 * queues, program, kernels and buffers on them) and the loads. */
struct peer_setup {
  cl_context context;
  cl_device_id device;
  const char *source; /* the bench's kernels (tick, fstep, fred) */
  size_t global;      /* every launch's global size (also the kernels' n) */
  int tiny_n, pp_n, fan_n;
};

/* A peer's workloads: each returns the seconds of one run, as raw.c's do;
 * NULL where the peer does not have that workload. */
struct peer {
  const char *name;    /* the row's name: "boost" */
  const char *version; /* e.g. "Boost.Compute 1.74" */
  void *state;
  double (*tiny_args)(void *state);
  double (*pingpong_args)(void *state);
  double (*fan_args)(void *state);
};

/* peer-boost.cpp, built where configure found Boost.Compute
 * (HAVE_BOOST_COMPUTE); exits with a message on an OpenCL error. */
void peer_boost_init(const struct peer_setup *s, struct peer *out);

#ifdef __cplusplus
}
#endif

#endif /* CLS_BENCH_PEER_H */
