/* The gate: a test stream factory over another one (the OpenCL factory by
 * default) that
 *   - holds launches of one kernel (`gated`) behind a user event until the
 *     test opens the gate, so "still running" and "failed after enqueue"
 *     do not depend on how fast the device is (an H200 finishes the slow
 *     kernels of these tests before the host's next call);
 *   - counts every call the core makes into it (`calls`, and per stream
 *     `commands`, `markers` and `polls`);
 *   - can finish a stream's work behind the core's back (gate_finish): the
 *     core learns what finished, and what failed, at its next poll.
 * Shared by the suites that need deterministic timing or call counts. */
#ifndef CLS_TESTS_GATE_H
#define CLS_TESTS_GATE_H

#include "common.h"

#include <clstream/stream.h>

#include <stdbool.h>

struct gate;

struct gstream {
  struct gate *g;
  const struct cls_backend *be;
  void *s;
  int id;
  /* Failures the inner stream reported to gate_finish(), handed on at the
   * next poll. */
  struct {
    uint64_t seq;
    cl_int status;
  } held[64];
  size_t nheld;
};

struct gate {
  const char *gated; /* launches of this kernel wait for `ev`; NULL: none */
  cl_event ev;       /* created with the first stream when `gated` is set,
                        so another thread may open it (tests/test-streams) */
  bool opened;       /* once open, later launches are not held */
  unsigned long held; /* launches held so far: proof the gate did hold */
  unsigned long calls;
  struct gstream *streams[CLS_MAX_STREAMS];
  unsigned long markers[CLS_MAX_STREAMS];
  unsigned long commands[CLS_MAX_STREAMS];
  unsigned long polls[CLS_MAX_STREAMS];
  /* Launches by the argument memo's `valid` bits they found (what the core
   * told the factory their kernel copy already holds): none, some, all of
   * their arguments.  Counted per factory, not per stream (streams may
   * share a queue); the test resets them. */
  unsigned long memo_none, memo_some, memo_all;
};

/* The factory a gate wraps: the OpenCL one. */
static inline const struct cls_stream_factory *ocl(void) { return cls_opencl_stream_factory(); }

static cl_int g_create(void *fdata, const struct cls_backend *be, int id, void **out) {
  struct gate *g = fdata;
  g->calls++;
  struct gstream *gs = calloc(1, sizeof *gs);
  if (!gs)
    return CL_OUT_OF_HOST_MEMORY;
  cl_int rc = ocl()->create(NULL, be, id, &gs->s);
  if (rc != CL_SUCCESS) {
    free(gs);
    return rc;
  }
  if (g->gated && !g->ev) {
    g->ev = clCreateUserEvent(be->context, &rc);
    if (rc != CL_SUCCESS) {
      ocl()->destroy(gs->s);
      free(gs);
      return rc;
    }
  }
  gs->g = g;
  gs->be = be;
  gs->id = id;
  g->streams[id] = gs;
  *out = gs;
  return CL_SUCCESS;
}

static void g_destroy(void *stream) {
  struct gstream *gs = stream;
  gs->g->calls++;
  gs->g->streams[gs->id] = NULL;
  ocl()->destroy(gs->s);
  free(gs);
}

static cl_int g_flush(void *stream) {
  struct gstream *gs = stream;
  gs->g->calls++;
  return ocl()->flush(gs->s);
}

static cl_int g_alloc(void *stream, size_t size, cl_mem *out) {
  struct gstream *gs = stream;
  gs->g->calls++;
  cl_int rc; /* the OpenCL factory has no alloc member: the core's default */
  *out = clCreateBuffer(gs->be->context, CL_MEM_READ_WRITE, size, NULL, &rc);
  return rc;
}

static cl_int g_launch(void *stream, const struct cls_kernel_cmd *cmd, uint64_t seq,
                       cl_uint nwait, const cl_event *wait) {
  struct gstream *gs = stream;
  struct gate *g = gs->g;
  g->calls++;
  g->commands[gs->id]++;
  uint32_t known = cmd->memo ? cmd->memo->valid : 0;
  uint32_t all = cmd->nargs >= 32 ? UINT32_MAX : (1u << cmd->nargs) - 1; /* up to CLS_MAX_ARGS */
  if (!known)
    g->memo_none++;
  else if ((known & all) == all)
    g->memo_all++;
  else
    g->memo_some++;
  if (!g->gated || !g->ev || g->opened || strcmp(cmd->name, g->gated) != 0)
    return ocl()->launch(gs->s, cmd, seq, nwait, wait);
  g->held++;
  cl_event w[CLS_MAX_STREAMS + 1];
  for (cl_uint i = 0; i < nwait; i++)
    w[i] = wait[i];
  w[nwait] = g->ev;
  return ocl()->launch(gs->s, cmd, seq, nwait + 1, w);
}

static cl_int g_write(void *stream, cl_mem dst, size_t off, size_t size, const void *src,
                      int blocking, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  struct gstream *gs = stream;
  gs->g->calls++;
  gs->g->commands[gs->id]++;
  return ocl()->write(gs->s, dst, off, size, src, blocking, seq, nwait, wait);
}

static cl_int g_read(void *stream, cl_mem src, size_t off, size_t size, void *dst,
                     int blocking, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  struct gstream *gs = stream;
  gs->g->calls++;
  gs->g->commands[gs->id]++;
  return ocl()->read(gs->s, src, off, size, dst, blocking, seq, nwait, wait);
}

static cl_int g_copy(void *stream, cl_mem src, size_t soff, cl_mem dst, size_t doff,
                     size_t size, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  struct gstream *gs = stream;
  gs->g->calls++;
  gs->g->commands[gs->id]++;
  return ocl()->copy(gs->s, src, soff, dst, doff, size, seq, nwait, wait);
}

static cl_int g_fill(void *stream, cl_mem dst, size_t off, size_t size, const void *pat,
                     size_t psize, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  struct gstream *gs = stream;
  gs->g->calls++;
  gs->g->commands[gs->id]++;
  return ocl()->fill(gs->s, dst, off, size, pat, psize, seq, nwait, wait);
}

static cl_int g_marker(void *stream, cl_event *out) {
  struct gstream *gs = stream;
  gs->g->calls++;
  gs->g->markers[gs->id]++;
  return ocl()->marker(gs->s, out);
}

/* A lent event counts as a marker: it is one to the core. */
static cl_event g_last_event(void *stream) {
  struct gstream *gs = stream;
  gs->g->calls++;
  cl_event ev = ocl()->last_event(gs->s);
  if (ev)
    gs->g->markers[gs->id]++;
  return ev;
}

static cl_int g_poll(void *stream, int wait, cls_failed_fn on_failed, void *arg,
                     uint64_t *completed) {
  struct gstream *gs = stream;
  gs->g->calls++;
  gs->g->polls[gs->id]++;
  for (size_t i = 0; i < gs->nheld; i++)
    on_failed(arg, gs->held[i].seq, gs->held[i].status);
  gs->nheld = 0;
  return ocl()->poll(gs->s, wait, on_failed, arg, completed);
}

static const struct cls_stream_factory gate_factory = {
    .version = CLS_STREAM_FACTORY_VERSION,
    .name = "gate",
    .description = "test: holds one kernel behind a user event, counts calls",
    .create = g_create,
    .destroy = g_destroy,
    .flush = g_flush,
    .alloc = g_alloc,
    .launch = g_launch,
    .write = g_write,
    .read = g_read,
    .copy = g_copy,
    .fill = g_fill,
    .marker = g_marker,
    .poll = g_poll,
    .last_event = g_last_event,
};

/* Sets the gate's event to `status` (CL_COMPLETE: runs what it held; a
 * negative status fails it).  Later gated launches are not held. */
static inline void gate_set(struct gate *g, cl_int status) {
  if (g->ev && !g->opened)
    ck_assert_int_eq(clSetUserEventStatus(g->ev, status), CL_SUCCESS);
  g->opened = true;
}

static inline void gate_open(struct gate *g) { gate_set(g, CL_COMPLETE); }

static inline void gate_hold(void *arg, uint64_t seq, cl_int status) {
  struct gstream *gs = arg;
  ck_assert_uint_lt(gs->nheld, 64);
  gs->held[gs->nheld].seq = seq;
  gs->held[gs->nheld].status = status;
  gs->nheld++;
}

/* Waits for everything on `stream` at the OpenCL level, without telling
 * the core: it learns what finished (and failed) at its next poll. */
static inline void gate_finish(struct gate *g, int stream) {
  struct gstream *gs = g->streams[stream];
  ck_assert_ptr_nonnull(gs);
  uint64_t completed = 0;
  ck_assert_int_eq(ocl()->poll(gs->s, 1, gate_hold, gs, &completed), CL_SUCCESS);
}

/* Opens the gate if it is still closed and drops its event; never skip
 * it.  The gate must be open (gate_open, gate_set, or this) before the
 * context that used it is destroyed: the context waits for held work. */
static inline void gate_release(struct gate *g) {
  gate_open(g);
  if (g->ev) {
    clReleaseEvent(g->ev);
    g->ev = NULL;
  }
}

#endif /* CLS_TESTS_GATE_H */
