/* Private to capture and replay: what src/api/capture.c (capture, the
 * plan, command buffers, the replay) and src/api/capture-multi.c (runs
 * over several streams) share -- the stored commands, the runs, their
 * recordings -- and the few functions one calls of the other.  Every
 * function here runs under the context's lock, except the foreign
 * callbacks, which run where the driver hands a run over (also under
 * it: the event driver at the call, the scheduler at a hand-over inside
 * a call). */
#ifndef CLS_CAPTURE_IMPL_H
#define CLS_CAPTURE_IMPL_H

#include "api/capture.h"
#include "core/command.h"
#include "device/cmdbuf.h"

#include <stdatomic.h>

struct entry {
  struct cls__cmd cmd;           /* as recorded; pointers refreshed at replay */
  int stream;
  struct cls__sizes sz;           /* a launch's */
  signed char param[CLS_MAX_ARGS];   /* launch scalar i: parameter number, -1 none */
  unsigned char pidx[CLS_MAX_ARGS];  /* the arguments that take a parameter */
  unsigned nparam;
  signed char bparam[CLS_MAX_ARGS];  /* binding b: buffer parameter number, -1 none */
  unsigned char barg[CLS_MAX_ARGS];  /* binding b of a launch: its argument */
  bool swaps;                        /* a binding takes a buffer parameter */
  unsigned char akind[CLS_MAX_ARGS]; /* launch argument i: enum cls_arg_kind */
  size_t voff[CLS_MAX_ARGS];         /* launch scalar i: its bytes in vals */
  unsigned char pattern[128];        /* a fill's pattern, copied */
  unsigned char *vals;               /* a launch's scalars, copied */
  struct run *run;                   /* the run that starts here, NULL none */
};

/* A member of a plan run (direct_enqueue): what its enqueue takes, set
 * once when the run is prepared. */
struct dmember {
  unsigned char kind;                /* CLS__CMD_LAUNCH, _COPY or _FILL */
  cl_uint dims;
  cl_kernel k;                       /* the run's own kernel, arguments set */
  const size_t *global, *local;      /* into the entry (never moves) */
  const size_t *offset;              /* into the entry; NULL: none */
  cl_mem src, dst;
  size_t src_offset, dst_offset, size;
  const void *pattern;               /* into the entry */
  size_t pattern_size;
};

/* One recording of a run: kept until the capture goes (a replay's
 * command may still be deferred by the driver with it as its data).  A
 * command buffer (cb, on `queue`), or for a plan run its members, each
 * enqueued on whatever queue the stream has then (dm; cb and queue
 * NULL). */
/* The most streams one plan run may span (a run over several streams). */
#define RUN_STREAMS 8

struct rec {
  cl_command_buffer_khr cb;
  cl_command_queue queue;            /* retained: what cb was recorded on */
  const struct cls__cb_api *api;
  struct dmember *dm;                /* a plan run's members */
  /* A plan run's: submitted and not yet enqueued by direct_enqueue (a
   * driver that defers holds it: its values must not change), and the
   * values its members' enqueues take (each binding's cl_mem, the
   * parameter bytes), as in the run's mems and pv for command buffers. */
  atomic_uint held;
  cl_mem *mems;
  unsigned char *pv;
  uint64_t epoch;                    /* ctx->handles_epoch at its update */
  struct run *run;
  atomic_ullong *enqueues;           /* the capture's count */
  struct rec *next;                  /* the capture's list */
  /* A run over several streams: each member's planned event (NULL where
   * none is asked for; [n], the run's start marker's), each stream's queue at this replay (set before
   * the run's enqueue; [0], the run's own, by its enqueue), and the last
   * member's event of each other stream, handed to that stream's record. */
  cl_event *evs;
  cl_command_queue qs[RUN_STREAMS];
  cl_event last[RUN_STREAMS];
  /* Where an event of another queue may fail later (keep, set by each
   * replay of a plan run from ctx->foreign_seen): every member has an
   * event, and it and the start marker's are kept until complete (a
   * failed one until the capture is destroyed: cls__rec_drop and
   * cls__rec_sweep) instead of released once waited for.  PoCL 3.1 aborts when it fails
   * the commands behind a failed user event and one of them has no
   * event the program holds (opencl.c, any_outside). */
  bool keep;
  cl_event *kept;
  size_t nkept, capkept;
  size_t nk;
  cl_kernel k[];                     /* the launches' own kernels: PoCL reads
                                        their arguments at the enqueue */
};

/* A run of consecutive commands on one stream, replayed as one command
 * buffer. */
struct run {
  size_t first, n;
  int stream;
  bool off;                          /* command by command for good (no
                                        extension, recording failed) */
  bool direct;                       /* a plan run: its members enqueued
                                        one by one, in one command */
  size_t nlaunch;                    /* its launches */
  bool swaps;                        /* one of its bindings takes a buffer
                                        parameter */
  char label[96];                    /* what reports call it */
  size_t nu;                         /* the union of its bindings */
  struct { unsigned short e, b; unsigned char access; } u[CLS_MAX_ARGS];
  size_t nmem;                       /* each binding's cl_mem, as recorded */
  cl_mem *mems;
  size_t npv;                        /* the parameter bytes, as recorded */
  unsigned char *pv;
  unsigned char *kinds;              /* fault injection's view */
  const char **names;
  struct rec *rec;                   /* the current recording, NULL none */
  /* A plan run over several streams (multi_enqueue): its members on
   * their own streams' queues, ordered among themselves by events planned
   * here, at capture (cls__multi_plan).  sid[0] is the run's own stream
   * (its first member's); per stream index: members, launches, first and
   * last member; per member its stream's id (mstream, fault injection's
   * view).  The plan is compiled so that a replay makes no decision per
   * member: per member (steps) its stream index, the queues to flush
   * first (a bit per stream index), whether its event is asked for, the
   * events it waits for and then those to release after its enqueue, in
   * ops (member indices; n: the run's start marker, asked for only where
   * start says); endflush, the final marker's flushes.  Where members
   * keep their events (struct rec's keep), every member asks for one. */
  bool multi;
  size_t nst;
  int sid[RUN_STREAMS];
  size_t cnt[RUN_STREAMS], nl[RUN_STREAMS], firstm[RUN_STREAMS], lastm[RUN_STREAMS];
  int *mstream;
  struct mstep {
    unsigned char k, flush, nwait, ndrop;
    bool ev;
  } *steps;
  unsigned *ops;
  unsigned char endflush;
  bool start;
};

struct cls_capture {
  cls_context *ctx;
  char name[24];   /* "capture #N": a whole-replay skip names it */
  struct entry *e;
  size_t n, cap;
  uint64_t epoch;  /* ctx->handles_epoch when the handles were last resolved */
  struct run *runs;   /* the command-buffer backend's; nruns 0: the plan */
  size_t nruns, capruns;
  struct rec *recs;   /* every recording, current or retired */
  size_t retired;     /* recordings replaced since the last release */
  atomic_ullong recordings, enqueues;
  struct cls_capture *next_cb; /* ctx->cb_captures */
  size_t nparams;
  struct {
    const void *ptr;
    size_t size;       /* a buffer parameter: the buffer's size */
    bool buffer;       /* cls_capture_buffer_param */
    cls_buffer handle; /* the buffer the capture's commands name */
    unsigned char kind;
  } params[CLS_MAX_ARGS];
};

/* The most commands one run over several streams may hold. */
#define MULTI_MAX 1024

/* capture-multi.c (capture.c calls it; it calls nothing of capture.c):
 * runs over several streams.  Whether the context may plan them; a
 * run's plan (its streams and each member's waits: struct run), CLS_OK
 * or CLS_ENOMEM; what a replay does before and after the run goes
 * through the command path as one command whose enqueue is
 * cls__multi_enqueue (before: 1 go, 0 command by command, <0 an error;
 * st gets the run's streams); the foreign callbacks of the run and of
 * each other stream's record (fault injection tells them apart:
 * cls__capture_run_members). */
bool cls__multi_wanted(cls_context *ctx);
int cls__multi_plan(struct cls_capture *cap, struct run *r);
int cls__multi_before(cls_context *ctx, struct run *r, struct cls__stream *s,
                      struct cls__stream **st);
void cls__multi_after(cls_context *ctx, struct run *r, struct cls__stream **st, bool placed,
                      bool ran);
cl_int cls__multi_enqueue(const struct cls_foreign_call *call, cl_event *ev);
cl_int cls__multi_record(const struct cls_foreign_call *call, cl_event *ev);
/* An event of a plan run's enqueue that nothing later waits for: kept
 * where rec->keep, else released now (struct rec); and, at each
 * enqueue, the kept ones that completed released. */
void cls__rec_drop(struct rec *r, cl_event ev);
void cls__rec_sweep(struct rec *r);

#endif /* CLS_CAPTURE_IMPL_H */
