/* The default stream factory: one OpenCL in-order command queue per stream.
 *
 * Every command is enqueued with an event kept in a ring until poll() sees
 * it finish: that is how a failure after the enqueue (F8) is found, since
 * PoCL and rusticl never call the completion callback of a failed event.
 * The ring is drained at every poll and when it fills, so it stays as long
 * as the work actually in flight.  While the context traces
 * (CLS_BACKEND_PROFILE), queues are created with profiling, and each
 * finished command's device start and end are read from its event before
 * it is released and handed to the core (cls_backend.on_times).
 *
 * Ranged attribution (CLS_BACKEND_RANGED, F8a): the device fails every
 * command queued behind a failed one, so the event of a later command
 * tells whether anything before it failed.  A command then gets an event
 * only where one is needed -- a read, a blocking write, the producer of a
 * cross-stream wait (last_event, marker), a waiting poll -- and on every
 * event_every-th command; the rest are enqueued without one, and an
 * event is let go before its command finished once a newer one stands
 * for it where the core asks (CLS_BACKEND_RELEASE_EARLY, supersede).  An
 * event that ends failed places the failure in the range of commands
 * since the last event that completed cleanly, and poll_range reports
 * that range. */
#include "factory/opencl.h"
#include "factory/call.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct ev_entry {
  uint64_t seq;
  cl_event ev;
  const char *name; /* the kernel's, or the transfer's: for on_times */
  bool pinned;      /* a read's, a blocking write's, a foreign command's:
                       never let go before it finished (supersede) */
};

struct ocl_stream {
  cl_command_queue q;
  struct ev_entry *ring;
  size_t head, len, cap; /* cap: a power of two, positions wrap by mask */
  uint64_t completed;
  /* Failures drained but not reported yet (a drain also happens when the
   * ring is full, outside poll): commands first..last, one of which failed
   * (first == last with an event per command). */
  struct failed { uint64_t first, last; cl_int status; } *failed;
  size_t nfailed, capfailed;
  bool saw_failure; /* a command of this queue failed */
  /* Whether the queue's event statuses were seen to lag (below), and how
   * many drains go by before the tail is looked at again until then. */
  bool lags;
  unsigned tail_skip;
  uint64_t lent_seq; /* the newest command whose event was lent (0: none) */
  uint64_t done_seq; /* the newest blocking command, finished on return */
  /* Tracing: on_times and its argument (NULL: not profiling), the id
   * the stream was created as. */
  cls_times_fn on_times;
  void *times_arg;
  int id;
  /* Ranged attribution: on, the most commands in a row without an event,
   * how many since the last one, and the newest command enqueued (with or
   * without an event).  events: OpenCL events asked for. */
  bool ranged;
  unsigned every, since_event;
  uint64_t last_seq;
  uint64_t reported; /* ranged: the last command of the newest range */
  unsigned eager;    /* ranged: commands still to get an event, since a
                        marker had to stand for one (below) */
  uint64_t events;
  bool early; /* supersede: CLS_BACKEND_RELEASE_EARLY, ranged, not timing */
  /* Events of commands clstream made around foreign commands (the barrier
   * of a wait list), released once complete: PoCL aborts when an event
   * such a command waits for fails after its event was released. */
  cl_event *held;
  size_t nheld, capheld;
  /* Failed events kept until the stream is destroyed instead of released
   * when seen, once any stream was handed an event of another queue
   * (any_outside, below).  Failures are rare, so the list stays short. */
  cl_event *kept;
  size_t nkept, capkept;
};

/* Set once any stream was handed an event of another queue (a user
 * event): it may fail later, and PoCL 3.1 then fails every command
 * behind it, on any queue, on the thread that sets the status -- and
 * aborts ("pocl_update_event_failed") where one of them has no event the
 * program still holds (raw OpenCL does the same: a command enqueued
 * without an event behind a user event that fails, then another).  From
 * then on every command gets an event (eventless, below), barriers and
 * failed events are kept (drain), and a capture's plan runs keep theirs
 * (capture-impl.h, struct rec). */
static atomic_bool any_outside;

void cls__opencl_outside_event(void) {
  atomic_store_explicit(&any_outside, true, memory_order_relaxed);
}

static cl_int ocl_create(void *fdata, const struct cls_backend *be, int id, void **out) {
  cl_int rc = CL_SUCCESS;
  struct ocl_stream *s = calloc(1, sizeof *s);
  if (!s)
    return CL_OUT_OF_HOST_MEMORY;
  s->cap = 256;
  s->ring = malloc(s->cap * sizeof *s->ring);
  if (!s->ring) {
    rc = CL_OUT_OF_HOST_MEMORY;
    goto fail_ring;
  }
  /* clCreateCommandQueue is deprecated from 2.0 on but present in every
   * ICD; it is the one entry point a 1.2 platform has. */
  cl_command_queue_properties props = 0;
  if (be->flags & CLS_BACKEND_PROFILE && be->on_times) {
    props = CL_QUEUE_PROFILING_ENABLE;
    s->on_times = be->on_times;
    s->times_arg = be->times_arg;
  }
  s->id = id;
  if (be->flags & CLS_BACKEND_RANGED) {
    s->ranged = true;
    s->every = be->event_every ? be->event_every : 1;
  }
  /* Each command timed needs its own event until it finished. */
  s->early = s->ranged && (be->flags & CLS_BACKEND_RELEASE_EARLY) && !s->on_times;
  s->q = clCreateCommandQueue(be->context, be->device, props, &rc);
  if (rc != CL_SUCCESS)
    goto fail_queue;
  *out = s;
  return CL_SUCCESS;
fail_queue:
  free(s->ring);
fail_ring:
  free(s);
  return rc;
}

static void note_failed(struct ocl_stream *s, uint64_t first, uint64_t seq, cl_int st) {
  if (!cls__grow((void **)&s->failed, &s->capfailed, s->nfailed + 1, sizeof *s->failed, 8))
    return; /* the command stays counted as finished; nothing else to do */
  s->failed[s->nfailed].first = first;
  s->failed[s->nfailed].last = seq;
  s->failed[s->nfailed].status = st;
  s->nfailed++;
}

/* The newest command in the ring (len > 0), and its event. */
static struct ev_entry *tail_entry(const struct ocl_stream *s) {
  return &s->ring[(s->head + s->len - 1) & (s->cap - 1)];
}
static cl_event tail_event(const struct ocl_stream *s) { return tail_entry(s)->ev; }

/* rusticl (Mesa 22.3) marks an event complete only when something waits
 * for it, so an earlier command can still read CL_SUBMITTED after a later
 * one of the same in-order queue completed (a blocking read, an event
 * another queue waited on).  When a later command has finished, the head
 * has too: waiting for it returns at once and brings its status up to
 * date.  A blocking read or write that returned has finished, and with it
 * everything before it: its seq is taken without a look, since a download
 * learns right after it returns whether what it read had failed.  Two later
 * commands are worth a look when the head reads unfinished: the one whose event was lent to another queue (that queue
 * waited on it, so its status is current; a read that depended on it must
 * learn the failures before it, whatever the heuristic below says), and the
 * tail: at every such drain once a lag was seen, every 16th before (one
 * status query per busy poll is most of what a poll costs on PoCL, where
 * statuses never lag), and always when `all` (the queue was just
 * finished).  Returns the newest seq known finished, 0 if none. */
static struct ev_entry *entry_of(struct ocl_stream *s, uint64_t seq) {
  size_t lo = 0, hi = s->len; /* the ring is sorted by seq */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    struct ev_entry *e = &s->ring[(s->head + mid) & (s->cap - 1)];
    if (e->seq == seq)
      return e;
    if (e->seq < seq)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

static uint64_t finished_upto(struct ocl_stream *s, bool all) {
  if (s->len < 2)
    return 0; /* a lone entry is its own tail */
  struct ev_entry *head = &s->ring[s->head];
  uint64_t upto = 0;
  if (s->done_seq > head->seq)
    upto = s->done_seq; /* a blocking call returned: no need to look */
  if (!upto && s->lent_seq > head->seq) {
    struct ev_entry *lent = entry_of(s, s->lent_seq);
    if (lent && cls__event_state(lent->ev) <= CL_COMPLETE)
      upto = lent->seq;
  }
  if (!upto) {
    if (!s->lags && !all) {
      if (s->tail_skip) {
        s->tail_skip--;
        return 0;
      }
      s->tail_skip = 15;
    }
    struct ev_entry *tail = tail_entry(s);
    if (cls__event_state(tail->ev) > CL_COMPLETE)
      return 0;
    upto = tail->seq;
  }
  /* The head read unfinished before the later one was looked at: a lag,
   * unless it finished in between. */
  if (!s->lags && cls__event_state(head->ev) > CL_COMPLETE)
    s->lags = true;
  return upto;
}

/* Tracing: the device start and end of a command that finished well. */
static void report_times(const struct ocl_stream *s, const struct ev_entry *e) {
  cl_ulong start = 0, end = 0;
  if (clGetEventProfilingInfo(e->ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) ==
          CL_SUCCESS &&
      clGetEventProfilingInfo(e->ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) ==
          CL_SUCCESS &&
      start && end >= start)
    s->on_times(s->times_arg, s->id, e->seq, e->name, start, end);
}

/* A failed event (a command's, or a barrier's) kept rather than released,
 * once an event of another queue was seen (any_outside): PoCL may still be
 * failing what waits for it on the thread that set a user event's status.
 * False: released by the caller (none seen, or no room). */
static bool keep_failed(struct ocl_stream *s, cl_event ev) {
  if (!atomic_load_explicit(&any_outside, memory_order_relaxed) ||
      !cls__grow((void **)&s->kept, &s->capkept, s->nkept + 1, sizeof *s->kept, 4))
    return false;
  s->kept[s->nkept++] = ev;
  return true;
}

/* Releases finished events from the head; keeps failed ones to report.
 * `all`: the queue was finished, every event has. */
static void drain(struct ocl_stream *s, bool all) {
  uint64_t upto = 0;
  bool looked = false;
  while (s->len) {
    struct ev_entry *e = &s->ring[s->head];
    cl_int st = cls__event_state(e->ev);
    if (st > CL_COMPLETE && !looked) {
      upto = finished_upto(s, all);
      looked = true;
    }
    if (st > CL_COMPLETE && e->seq <= upto) {
      clWaitForEvents(1, &e->ev);
      st = cls__event_state(e->ev);
    }
    if (st > CL_COMPLETE)
      break; /* in-order queue: nothing after it has finished */
    if (st < 0) {
      s->saw_failure = true;
      if (!s->ranged) {
        note_failed(s, e->seq, e->seq, st);
      } else if (e->seq > s->reported) {
        /* Any command since the last clean event may be the one, and every
         * command enqueued before the failure happened is failed behind it
         * (PoCL fails those, and runs what was enqueued after): the range
         * runs to the newest command, once. */
        note_failed(s, (s->completed > s->reported ? s->completed : s->reported) + 1,
                    s->last_seq, st);
        s->reported = s->last_seq;
      }
    } else if (s->on_times) {
      report_times(s, e);
    }
    s->completed = e->seq;
    if (!(st < 0 && keep_failed(s, e->ev)))
      clReleaseEvent(e->ev);
    s->head = (s->head + 1) & (s->cap - 1);
    s->len--;
  }
  size_t keep = 0;
  for (size_t i = 0; i < s->nheld; i++) {
    cl_int st = cls__event_state(s->held[i]); /* a failed one is kept, even with all */
    if (!all && st > CL_COMPLETE)
      s->held[keep++] = s->held[i];
    else if (!(st < 0 && keep_failed(s, s->held[i])))
      clReleaseEvent(s->held[i]);
  }
  s->nheld = keep;
}

/* Waits until every command enqueued on the queue has finished.  clFinish
 * alone is not enough: rusticl (Mesa 22.3) returns from it at once when
 * every command was already flushed, since it waits only for commands not
 * yet handed to its worker; a sync then read bytes not yet copied (the
 * "39 where 40" of a flushed ping-pong).  The last command's event does
 * complete after everything before it (in-order queue), on every vendor.
 * A failed command is no failure of the wait: poll() reports it from its
 * event.  NVIDIA's clFinish returns such a command's status
 * (CL_OUT_OF_RESOURCES), so its error counts only while the last event
 * has not finished, or when no command this queue has seen failed. */
static cl_int finish(struct ocl_stream *s) {
  cl_int rc = clFinish(s->q);
  if (!s->len)
    return rc == CL_SUCCESS || s->saw_failure ? CL_SUCCESS : rc;
  cl_event last = tail_event(s);
  cl_int w = clWaitForEvents(1, &last);
  if (cls__event_state(last) <= CL_COMPLETE)
    return CL_SUCCESS; /* finished, failed or not */
  return rc != CL_SUCCESS ? rc : w;
}

static void ocl_destroy(void *stream) {
  struct ocl_stream *s = stream;
  finish(s);
  drain(s, true);
  clReleaseCommandQueue(s->q);
  for (size_t i = 0; i < s->nkept; i++)
    clReleaseEvent(s->kept[i]);
  free(s->kept);
  free(s->held);
  free(s->failed);
  free(s->ring);
  free(s);
}

static cl_int ocl_flush(void *stream) { return clFlush(((struct ocl_stream *)stream)->q); }

/* Room for one more event; grows the ring only when draining frees none. */
static __attribute__((noinline)) cl_event *slot_for_full(struct ocl_stream *s) {
  drain(s, false);
  if (s->len == s->cap &&
      !cls__ring_grow((void **)&s->ring, &s->cap, &s->head, s->len, sizeof *s->ring, 256))
    return NULL;
  return &s->ring[(s->head + s->len) & (s->cap - 1)].ev;
}
/* slot_for_full's test inline: a ring with room (every launch but one in
 * cap) costs no call. */
static inline cl_event *slot_for(struct ocl_stream *s) {
  if (__builtin_expect(s->len == s->cap, 0))
    return slot_for_full(s);
  return &s->ring[(s->head + s->len) & (s->cap - 1)].ev;
}

/* Ranged, with CLS_BACKEND_RELEASE_EARLY: the event before the newest one
 * (just enqueued) let go while its command is still queued or running,
 * when the one before that (or the last finished command) is no more than
 * event_every commands back.
 * The newest command was enqueued behind it on the in-order queue, so if
 * it fails from now on -- on its own or by a wait-list event of another
 * queue -- the device fails the newest one too (queue_poisoned), and a
 * range that runs from the last clean event still holds it, no longer
 * than event_every.  Read after that enqueue: a failure before it shows
 * here, and the event is kept.  Letting go of an unfinished event is
 * what raw OpenCL code does (the runtime frees it as its command ends,
 * on its own thread); released after a poll saw it finish, it is freed
 * on the caller's.  That is most of what a wait across streams cost the
 * host thread (ping-pong, fan); where the device is the host's CPU the
 * runtime's threads that end the event are the device's, and the core
 * does not ask for it.  Not once a command may wait on an event of no
 * queue that fails later (any_outside, which fault injection's gate sets
 * too; that factory also clears CLS_BACKEND_RELEASE_EARLY on the streams
 * it wraps), since PoCL 3.1 aborts failing a command whose event was let
 * go; nor while timing each command (s->early). */
static void supersede(struct ocl_stream *s) {
  size_t mask = s->cap - 1;
  struct ev_entry *b = &s->ring[(s->head + s->len - 2) & mask];
  struct ev_entry *c = &s->ring[(s->head + s->len - 1) & mask];
  uint64_t anchor = s->len > 2 ? s->ring[(s->head + s->len - 3) & mask].seq : s->completed;
  if (b->pinned || c->seq - anchor > s->every ||
      atomic_load_explicit(&any_outside, memory_order_relaxed) ||
      cls__event_state(b->ev) <= CL_COMPLETE)
    return;
  clReleaseEvent(b->ev);
  *b = *c;
  s->len--;
}

static void push(struct ocl_stream *s, uint64_t seq, const char *name, bool pinned) {
  struct ev_entry *e = &s->ring[(s->head + s->len) & (s->cap - 1)];
  e->seq = seq;
  e->name = name;
  e->pinned = pinned;
  s->len++;
  s->events++;
  s->since_event = 0;
  s->last_seq = seq;
  if (s->early && s->len > 1)
    supersede(s);
}

/* Ranged: the newest command has no event.  A marker stands for it (the
 * queue is in order, and poisoned behind a failure, so the marker's status
 * is that of everything up to it), flushed at once, since another queue
 * may wait on it.  Returns the OpenCL status. */
static inline bool tail_marked(const struct ocl_stream *s) {
  return s->last_seq <= (s->len ? tail_entry(s)->seq : s->completed);
}
static cl_int mark_tail(struct ocl_stream *s, bool for_wait) {
  if (tail_marked(s))
    return CL_SUCCESS; /* the newest command has its event, or finished */
  cl_event *ev = slot_for(s);
  if (!ev)
    return CL_OUT_OF_HOST_MEMORY;
  cl_int rc = clEnqueueMarkerWithWaitList(s->q, 0, NULL, ev);
  if (rc != CL_SUCCESS)
    return rc;
  push(s, s->last_seq, "marker", false);
  /* Another queue waits on this one's newest commands: a marker and a
   * flush each time cost more than the command's own event (ping-pong
   * traffic), so the next event_every commands keep theirs. */
  if (for_wait)
    s->eager = s->every;
  return clFlush(s->q);
}

/* Ranged: whether command `seq` goes without an event.  Counts it.  A
 * command that waits on other events keeps its own: a failed event it
 * waits on fails it, and on PoCL a command enqueued after that failure
 * runs, so no later event would tell.  None goes without once an event
 * of another queue was seen (any_outside). */
static inline bool eventless(struct ocl_stream *s, uint64_t seq, cl_uint nwait) {
  if (!s->ranged || nwait || ++s->since_event >= s->every ||
      atomic_load_explicit(&any_outside, memory_order_relaxed))
    return false;
  if (s->eager) {
    s->eager--;
    return false;
  }
  s->last_seq = seq;
  return true;
}

/* A command that may go without an event (ranged attribution): `call`
 * uses ev_, NULL when it goes without. */
#define MAYBE_EVENT(s, seq, name, call)     \
  do {                                      \
    if (eventless(s, seq, nwait)) {         \
      cl_event *ev_ = NULL;                 \
      cl_int rc_ = (call);                  \
      if (rc_ != CL_SUCCESS) {              \
        s->since_event--;                   \
        s->last_seq = seq - 1;              \
      }                                     \
      return rc_;                           \
    }                                       \
    KEEP_EVENT(s, seq, name, 0, false, call); \
  } while (0)
#define WITH_EVENT(s, seq, name, call) MAYBE_EVENT(s, seq, name, call)

/* `done`: the call blocks until the command finished, so every command
 * before it has too (in-order queue) whatever their statuses read.
 * `pin`: the event is kept until a poll sees it finish (supersede). */
#define KEEP_EVENT(s, seq, name, done, pin, call) \
  do {                                      \
    cl_event *ev_ = slot_for(s);            \
    if (!ev_)                               \
      return CL_OUT_OF_HOST_MEMORY;         \
    cl_int rc_ = (call);                    \
    if (rc_ != CL_SUCCESS)                  \
      return rc_;                           \
    push(s, seq, name, pin);                \
    if (done)                               \
      s->done_seq = seq;                    \
    return CL_SUCCESS;                      \
  } while (0)

/* A read, a blocking write: the event pinned, since what the read brought
 * back, or the write's return, is known good only from it. */
#define WITH_EVENT_DONE(s, seq, name, done, call) KEEP_EVENT(s, seq, name, done, true, call)

/* The memo's form of argument a's value: up to 8 bytes, 0 for local
 * memory (its size is the value).  False: larger; the memo keeps none.
 * The usual sizes (a cl_mem, an int or float) take a fixed-size load, not
 * a call to memcpy. */
static inline bool memo_bits(const struct cls_kernel_arg *a, uint64_t *bits) {
  *bits = 0;
  if (a->size > sizeof *bits)
    return false;
  if (!a->value)
    return true;
  if (a->size == sizeof *bits) {
    memcpy(bits, a->value, sizeof *bits);
  } else if (a->size == sizeof(uint32_t)) {
    uint32_t v;
    memcpy(&v, a->value, sizeof v);
    memcpy(bits, &v, sizeof v); /* the same bytes as the general case */
  } else {
    memcpy(bits, a->value, a->size);
  }
  return true;
}

/* Whether the kernel holds a, of memo form bits, as argument i. */
static inline bool memo_holds(const struct cls_kernel_args_memo *m, cl_uint i,
                              const struct cls_kernel_arg *a, uint64_t bits) {
  uint32_t bit = 1u << i;
  return (m->valid & bit) && m->size[i] == a->size && m->bits[i] == bits &&
         !(m->local & bit) == (a->value != NULL);
}

/* Sets argument i of c unless the kernel holds that value already (the
 * memo: a tiny chain then makes no clSetKernelArg call, as raw OpenCL code
 * that sets its arguments once makes none).  One pass: each argument's
 * memo form is read once, and only the arguments that changed (a time
 * step) are set. */
static inline cl_int set_args(const struct cls_kernel_cmd *c) {
  struct cls_kernel_args_memo *m = c->memo;
  for (cl_uint i = 0; i < c->nargs; i++) {
    const struct cls_kernel_arg *a = &c->args[i];
    uint64_t bits;
    bool known = m && i < 32 && memo_bits(a, &bits);
    if (known && memo_holds(m, i, a, bits))
      continue;
    cl_int rc = clSetKernelArg(c->kernel, i, a->size, a->value);
    if (rc != CL_SUCCESS || !known) { /* the memo no longer knows it */
      if (m && i < 32)
        m->valid &= ~(1u << i);
      if (rc != CL_SUCCESS)
        return rc;
      continue;
    }
    uint32_t bit = 1u << i;
    m->valid |= bit;
    m->size[i] = a->size;
    m->bits[i] = bits;
    if (a->value)
      m->local &= ~bit;
    else
      m->local |= bit;
  }
  return CL_SUCCESS;
}

static cl_int ocl_launch(void *stream, const struct cls_kernel_cmd *c, uint64_t seq,
                         cl_uint nwait, const cl_event *wait) {
  struct ocl_stream *s = stream;
  cl_int rc = set_args(c);
  if (rc != CL_SUCCESS)
    return rc;
  WITH_EVENT(s, seq, c->name, clEnqueueNDRangeKernel(s->q, c->kernel, c->dims, c->offset, c->global,
                                            c->local, nwait, nwait ? wait : NULL, ev_));
}

static cl_int ocl_write(void *stream, cl_mem dst, size_t off, size_t size, const void *src,
                        int blocking, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  struct ocl_stream *s = stream;
  if (!blocking)
    MAYBE_EVENT(s, seq, "upload", clEnqueueWriteBuffer(s->q, dst, CL_FALSE, off, size, src, nwait,
                                                       nwait ? wait : NULL, ev_));
  WITH_EVENT_DONE(s, seq, "upload", blocking, clEnqueueWriteBuffer(s->q, dst, CL_TRUE, off, size,
                                          src, nwait, nwait ? wait : NULL, ev_));
}

static cl_int ocl_read(void *stream, cl_mem src, size_t off, size_t size, void *dst,
                       int blocking, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  struct ocl_stream *s = stream;
  WITH_EVENT_DONE(s, seq, "download", blocking, clEnqueueReadBuffer(s->q, src, blocking ? CL_TRUE : CL_FALSE, off, size,
                                         dst, nwait, nwait ? wait : NULL, ev_));
}

static cl_int ocl_copy(void *stream, cl_mem src, size_t soff, cl_mem dst, size_t doff,
                       size_t size, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  struct ocl_stream *s = stream;
  WITH_EVENT(s, seq, "copy", clEnqueueCopyBuffer(s->q, src, dst, soff, doff, size, nwait,
                                         nwait ? wait : NULL, ev_));
}

static cl_int ocl_fill(void *stream, cl_mem dst, size_t off, size_t size, const void *pat,
                       size_t psize, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  struct ocl_stream *s = stream;
  WITH_EVENT(s, seq, "fill", clEnqueueFillBuffer(s->q, dst, pat, psize, off, size, nwait,
                                         nwait ? wait : NULL, ev_));
}

/* A foreign command: the user's callback enqueues on this queue
 * (cls_foreign_run), and the event it gives back is the command's, kept in
 * the ring like any command's, so a failure of it is found by poll() (F8).
 * An event of another queue of the context (a user event, a library's own
 * queue) does not order this in-order queue: a marker waiting for it
 * stands for it.  Without an event a marker stands for the work (the queue is in
 * order).  Always an event: a foreign command is never ranged away. */
static cl_int ocl_foreign(void *stream, const struct cls_foreign_cmd *c, uint64_t seq,
                          cl_uint nwait, const cl_event *wait) {
  struct ocl_stream *s = stream;
  cl_event ev = NULL, barrier = NULL;
  if (!cls__grow((void **)&s->held, &s->capheld, s->nheld + 1, sizeof *s->held, 4))
    return CL_OUT_OF_HOST_MEMORY;
  cl_int rc = cls_foreign_run(c, s->q, nwait, wait, &barrier, &ev);
  if (barrier)
    s->held[s->nheld++] = barrier;
  if (rc != CL_SUCCESS)
    return rc;
  cl_command_queue q = NULL;
  if (ev && clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) == CL_SUCCESS &&
      q != s->q) {
    /* Not this queue's: a marker waiting for it is the command's event
     * (it orders what follows; PoCL fails it when ev fails). */
    cl_event other = ev;
    cls__opencl_outside_event();
    rc = clEnqueueMarkerWithWaitList(s->q, 1, &other, &ev);
    clReleaseEvent(other);
    if (rc != CL_SUCCESS)
      ev = NULL;
  } else if (!ev) {
    rc = clEnqueueMarkerWithWaitList(s->q, 0, NULL, &ev);
  }
  cl_event *slot = rc == CL_SUCCESS ? slot_for(s) : NULL;
  if (!slot) {
    if (ev)
      clReleaseEvent(ev);
    return rc != CL_SUCCESS ? rc : CL_OUT_OF_HOST_MEMORY;
  }
  *slot = ev;
  push(s, seq, c->label, true);
  return CL_SUCCESS;
}

static cl_command_queue ocl_queue(void *stream) { return ((struct ocl_stream *)stream)->q; }

/* Image transfers (version 5): by kind, and by which ends are images. */
static cl_int ocl_image(void *stream, int kind, const struct cls_transfer *x, uint64_t seq,
                        cl_uint nwait, const cl_event *wait) {
  struct ocl_stream *s = stream;
  const cl_event *w = nwait ? wait : NULL;
  switch (kind) {
  case CLS_CMD_WRITE:
    if (!x->blocking)
      MAYBE_EVENT(s, seq, "upload",
                  clEnqueueWriteImage(s->q, x->dst, CL_FALSE, x->dst_origin, x->region,
                                      x->row_pitch, x->slice_pitch, x->host_src, nwait, w, ev_));
    WITH_EVENT_DONE(s, seq, "upload", 1,
                    clEnqueueWriteImage(s->q, x->dst, CL_TRUE, x->dst_origin, x->region,
                                        x->row_pitch, x->slice_pitch, x->host_src, nwait, w, ev_));
  case CLS_CMD_READ:
    WITH_EVENT_DONE(s, seq, "download", x->blocking,
                    clEnqueueReadImage(s->q, x->src, x->blocking ? CL_TRUE : CL_FALSE,
                                       x->src_origin, x->region, x->row_pitch, x->slice_pitch,
                                       x->host_dst, nwait, w, ev_));
  case CLS_CMD_COPY:
    if (x->image == (CLS_TRANSFER_SRC_IMAGE | CLS_TRANSFER_DST_IMAGE))
      WITH_EVENT(s, seq, "copy",
                 clEnqueueCopyImage(s->q, x->src, x->dst, x->src_origin, x->dst_origin, x->region,
                                    nwait, w, ev_));
    if (x->image == CLS_TRANSFER_SRC_IMAGE)
      WITH_EVENT(s, seq, "copy",
                 clEnqueueCopyImageToBuffer(s->q, x->src, x->dst, x->src_origin, x->region,
                                            x->dst_offset, nwait, w, ev_));
    WITH_EVENT(s, seq, "copy",
               clEnqueueCopyBufferToImage(s->q, x->src, x->dst, x->src_offset, x->dst_origin,
                                          x->region, nwait, w, ev_));
  case CLS_CMD_FILL:
    WITH_EVENT(s, seq, "fill",
               clEnqueueFillImage(s->q, x->dst, x->pattern, x->dst_origin, x->region, nwait, w,
                                  ev_));
  }
  return CL_INVALID_OPERATION;
}

/* Lent: the ring keeps its reference until a drain, which only a later
 * call into this stream does.  Ranged: a marker stands for a newest
 * command that went without an event; NULL when that marker cannot be
 * made (marker() then enqueues one of its own, whose error it returns). */
static cl_event ocl_last_event(void *stream) {
  struct ocl_stream *s = stream;
  /* The test of mark_tail inline: the newest command usually has its
   * event (it waited on another queue, or eager). */
  if (s->ranged && !tail_marked(s) && mark_tail(s, true) != CL_SUCCESS)
    return NULL;
  if (!s->len)
    return NULL;
  s->lent_seq = tail_entry(s)->seq;
  return tail_event(s);
}

/* The last command's event already completes after everything before it
 * (in-order queue): hand that out, with a reference of its own, rather
 * than enqueue a marker. */
static cl_int ocl_marker(void *stream, cl_event *out) {
  struct ocl_stream *s = stream;
  cl_event last = ocl_last_event(stream); /* ranged: a marker of the ring's */
  if (!last) {
    s->events++;
    return clEnqueueMarkerWithWaitList(s->q, 0, NULL, out);
  }
  cl_int rc = clRetainEvent(last);
  if (rc == CL_SUCCESS)
    *out = last;
  return rc;
}

/* Finishes (wait) and drains; the failures found go to the caller. */
static cl_int settle(struct ocl_stream *s, int wait, uint64_t *completed) {
  cl_int rc = CL_SUCCESS;
  /* Ranged: a sync must learn about the commands after the last event. */
  if (wait && s->ranged)
    rc = mark_tail(s, false);
  if (wait) {
    cl_int frc = finish(s);
    if (rc == CL_SUCCESS)
      rc = frc;
  }
  drain(s, wait);
  *completed = s->completed;
  return rc;
}

static cl_int ocl_poll_range(void *stream, int wait, cls_failed_range_fn on_failed, void *arg,
                             uint64_t *completed) {
  struct ocl_stream *s = stream;
  cl_int rc = settle(s, wait, completed);
  for (size_t i = 0; i < s->nfailed; i++)
    on_failed(arg, s->failed[i].first, s->failed[i].last, s->failed[i].status);
  s->nfailed = 0;
  return rc;
}

static cl_int ocl_poll(void *stream, int wait, cls_failed_fn on_failed, void *arg,
                       uint64_t *completed) {
  return cls__poll_each(ocl_poll_range, stream, wait, on_failed, arg, completed);
}

static uint64_t ocl_events(void *stream) { return ((struct ocl_stream *)stream)->events; }

static const struct cls_stream_factory opencl_factory = {
    .version = CLS_STREAM_FACTORY_VERSION,
    .name = "opencl",
    .description = "one OpenCL in-order command queue per stream",
    .create = ocl_create,
    .destroy = ocl_destroy,
    .flush = ocl_flush,
    .alloc = NULL,
    .launch = ocl_launch,
    .write = ocl_write,
    .read = ocl_read,
    .copy = ocl_copy,
    .fill = ocl_fill,
    .marker = ocl_marker,
    .poll = ocl_poll,
    .last_event = ocl_last_event,
    .poll_range = ocl_poll_range,
    .events = ocl_events,
    .foreign = ocl_foreign,
    .queue = ocl_queue,
    .image = ocl_image,
};

CLS_API const struct cls_stream_factory *cls_opencl_stream_factory(void) {
  return &opencl_factory;
}
