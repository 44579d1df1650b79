/* Deterministic fault injection: a stream factory that wraps another and
 * fails chosen commands, at enqueue or at completion (or, for "lost",
 * every command of a backend queue from one on), as the parsed spec
 * (fault-spec.c, its grammar) says; failures held back for a number of
 * polls are found in shuffled order. */
#include "factory/call.h"
#include "factory/fault.h"
#include "factory/fault-spec.h"
#include "factory/opencl.h"
#include "util/parse.h"
#include "util/settle.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* The wrapping stream                                                 */
/* ------------------------------------------------------------------ */

/* A command doomed to fail at completion, or a real failure of the inner
 * stream waiting with them: commands first..last, one of which failed
 * (ranged attribution; first == last == seq otherwise).  Ranged, a doomed
 * command's range is what a poisoned queue's events would tell (F8a): it
 * starts after the last command whose completion the inner stream proves
 * (its event, or a blocking call that returned) and ends at the first
 * such command from it on (last 0 until that one is enqueued). */
struct doomed {
  uint64_t seq;
  cl_int status;
  uint64_t hold; /* polls that do not wait before it is found */
  uint64_t first, last;
  /* A real failure of the inner stream held behind a doomed one (seq is
   * its range's last): due once the commands from `first` on may be
   * reported finished, since the caller forgets what it counts finished. */
  bool real;
};

struct fault_stream {
  const struct cls_stream_factory *inner;
  void *s;
  struct cls__fault_config *cfg;
  /* cls__fault_data.members: the commands inside a foreign command */
  bool (*members)(const struct cls_foreign_cmd *fc, size_t *n, const unsigned char **kinds,
                  const char *const **names, const int **streams);
  const struct cls_backend *backend;
  struct cls_backend inner_backend; /* *backend, without CLS_BACKEND_RELEASE_EARLY */
  int id;
  struct doomed *doomed; /* in seq order */
  size_t ndoomed, capdoomed;
  struct doomed *found;  /* inner failures of one poll */
  size_t nfound, capfound;
  uint64_t completed;    /* what the inner stream finished (a hold reports
                            less) */
  uint64_t waits;        /* cfg->waits when it last released its holds */
  cl_int lost;           /* a "lost" fault fired here: every command fails */
  /* A "lost" fault with at=complete fired here: every command from then
   * on is accepted but gated on `gate`, a user event set to `gone` at the
   * next poll (or blocking transfer, or destroy; any stream's that waits:
   * open_gates), so none of them runs.  The gate is
   * set only then, never before a command joins it: PoCL 3.1 never
   * finishes a command enqueued behind an event that has already failed
   * (it hangs), and fails those enqueued before (-1, without running
   * them), on every queue. */
  cl_int gone;
  cl_event gate;
  struct fault_stream *next_gated; /* cfg->gated's list, while gate is set */
  /* A marker on the queue behind what it held when a gated command
   * joined it, that did not complete in SETTLE_NS (settle_deps): the gate
   * opens only once it is complete. */
  cl_event settle;
  bool ranged;           /* the backend asked for ranged attribution */
  /* Ranged: the newest command handed to the inner stream, the newest one
   * with an event there (or finished: a blocking call), and the inner
   * stream's event count when last looked at. */
  uint64_t newest, evented, events;
};

static bool push(struct doomed **arr, size_t *n, size_t *cap, uint64_t seq, cl_int st) {
  if (!cls__grow((void **)arr, cap, *n + 1, sizeof **arr, 8))
    return false;
  (*arr)[*n].seq = seq;
  (*arr)[*n].status = st;
  (*arr)[*n].hold = 0;
  (*arr)[*n].first = (*arr)[*n].last = seq;
  (*arr)[*n].real = false;
  (*n)++;
  return true;
}

/* The configurations with a closed gate, in the whole process (a list
 * through next_closed), for cls__fault_before_host_wait. */
static pthread_mutex_t closed_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cls__fault_config *closed_list;
static atomic_int nclosed;

/* cfg's first gate closed: on the list. */
static void list_closed(struct cls__fault_config *cfg, cl_context c) {
  pthread_mutex_lock(&closed_lock);
  cfg->context = c;
  cfg->next_closed = closed_list;
  closed_list = cfg;
  atomic_fetch_add(&nclosed, 1);
  pthread_mutex_unlock(&closed_lock);
}

/* Its last gate opened, or its context ends: off the list, if on it. */
static void unlist_closed(struct cls__fault_config *cfg) {
  pthread_mutex_lock(&closed_lock);
  for (struct cls__fault_config **p = &closed_list; *p; p = &(*p)->next_closed)
    if (*p == cfg) {
      *p = cfg->next_closed;
      cfg->next_closed = NULL;
      atomic_fetch_sub(&nclosed, 1);
      break;
    }
  pthread_mutex_unlock(&closed_lock);
}

void cls__fault_forget_behind(struct cls__fault_config *cfg) {
  if (!cfg)
    return;
  unlist_closed(cfg);
  for (size_t i = 0; i < cfg->nbehind; i++)
    clReleaseEvent(cfg->behind[i]);
  for (size_t i = 0; i < cfg->nbehind_q; i++)
    clReleaseEvent(cfg->behind_q[i].last);
  free(cfg->behind);
  free(cfg->behind_q);
  cfg->behind = NULL;
  cfg->behind_q = NULL;
  cfg->nbehind = cfg->capbehind = cfg->nbehind_q = cfg->capbehind_q = 0;
}

static cl_int fs_create(void *fdata, const struct cls_backend *be, int id, void **out) {
  struct cls__fault_data *d = fdata;
  struct fault_stream *fs = calloc(1, sizeof *fs);
  if (!fs)
    return CL_OUT_OF_HOST_MEMORY;
  /* The inner stream's commands may wait on this stream's gate, a user
   * event that fails later: PoCL 3.1 aborts failing a command whose event
   * the program released, so the inner stream keeps every event until a
   * poll sees it finish. */
  fs->inner_backend = *be;
  fs->inner_backend.flags &= ~CLS_BACKEND_RELEASE_EARLY;
  cl_int rc = d->inner->create(d->inner_data, &fs->inner_backend, id, &fs->s);
  if (rc != CL_SUCCESS) {
    free(fs);
    return rc;
  }
  fs->inner = d->inner;
  fs->cfg = d->cfg;
  fs->members = d->members;
  fs->backend = be;
  fs->id = id;
  fs->ranged = (be->flags & CLS_BACKEND_RANGED) && cls__factory_poll_range(d->inner);
  *out = fs;
  return CL_SUCCESS;
}

/* at=complete: the commands behind the gate fail now (they never ran).
 * Not before the settle marker is complete (settle_deps): where `wait`,
 * it is waited for (the caller waits anyway); else the gate stays closed
 * until a later call finds it complete. */
static void open_gate(struct fault_stream *fs, bool wait) {
  if (!fs->gate)
    return;
  if (fs->settle) {
    if (wait)
      clWaitForEvents(1, &fs->settle);
    else if (cls__event_state(fs->settle) > CL_COMPLETE)
      return;
    clReleaseEvent(fs->settle);
    fs->settle = NULL;
  }
  for (struct fault_stream **p = (struct fault_stream **)&fs->cfg->gated; *p;
       p = &(*p)->next_gated)
    if (*p == fs) {
      *p = fs->next_gated;
      break;
    }
  fs->next_gated = NULL;
  clSetUserEventStatus(fs->gate, fs->gone);
  clReleaseEvent(fs->gate);
  fs->gate = NULL;
  if (!fs->cfg->gated)
    cls__fault_forget_behind(fs->cfg);
}

/* Before anything waits (a waiting poll, a blocking transfer, a destroy):
 * every gate of the context opens, not only this stream's, since the
 * wait may reach a command of another queue gated behind it (a reader of
 * the lost queue's output): it would never finish.  The oldest first
 * (cfg->gated is newest first): a queue's settle marker may wait behind
 * an older gate, never behind a newer one, made after what it waits
 * for. */
static void open_gates(struct cls__fault_config *cfg) {
  while (cfg->gated) {
    struct fault_stream *oldest = cfg->gated;
    while (oldest->next_gated)
      oldest = oldest->next_gated;
    open_gate(oldest, true);
  }
}

/* The waits' context is the caller's, whose lock this thread holds: its
 * gates may open here (a context's configuration is not shared). */
void cls__fault_before_host_wait(cl_uint nwait, const cl_event *wait) {
  if (!atomic_load_explicit(&nclosed, memory_order_relaxed))
    return;
  for (cl_uint i = 0; i < nwait; i++) {
    cl_context c = NULL;
    if (clGetEventInfo(wait[i], CL_EVENT_CONTEXT, sizeof c, &c, NULL) != CL_SUCCESS)
      continue;
    struct cls__fault_config *cfg;
    pthread_mutex_lock(&closed_lock);
    for (cfg = closed_list; cfg && cfg->context != c; cfg = cfg->next_closed)
      ;
    pthread_mutex_unlock(&closed_lock);
    if (cfg)
      open_gates(cfg);
  }
}

static void fs_destroy(void *stream) {
  struct fault_stream *fs = stream;
  open_gates(fs->cfg);
  if (fs->settle) /* its gate was never made (out of host memory) */
    clReleaseEvent(fs->settle);
  fs->inner->destroy(fs->s);
  free(fs->doomed);
  free(fs->found);
  free(fs);
}

static cl_int fs_flush(void *stream) {
  struct fault_stream *fs = stream;
  return fs->inner->flush(fs->s);
}

/* Ranged: whether the inner stream made an event since the last look (or
 * `done`: a blocking call returned); then command `upto` has one, and the
 * doomed commands up to it that waited for one end their range there. */
static void note_events(struct fault_stream *fs, uint64_t upto, bool done) {
  if (!fs->ranged)
    return;
  uint64_t (*count)(void *) = cls__factory_events(fs->inner);
  uint64_t n = count ? count(fs->s) : fs->events;
  if (n == fs->events && !done)
    return;
  fs->events = n;
  if (upto > fs->evented)
    fs->evented = upto;
  for (size_t j = 0; j < fs->ndoomed; j++)
    if (!fs->doomed[j].last && fs->doomed[j].seq <= upto)
      fs->doomed[j].last = upto;
}

/* PoCL 3.1 finishes a command twice -- an assertion, or its event freed
 * under a later broadcast -- when one of its dependencies fails it while
 * another completes at the same moment on a worker thread (fixed in PoCL
 * 7.2, "Guard pocl_update_event_finished against a concurrent
 * double-finish"; reproduced here with raw OpenCL: a fill waiting on a
 * command behind a failing user event, in order behind a running kernel,
 * aborts within seconds).  A gate fails what is behind it on the thread
 * that sets it.  So while a gate is closed, a command that will be behind
 * one -- joining it, waiting on a command behind it, or on a queue whose
 * newer commands are -- must have no other dependency that can still
 * complete: before its enqueue the work its queue holds and the events it
 * waits on that are not behind a gate are waited for (PoCL makes no
 * dependency on a complete event).  Up to SETTLE_NS in all, since the queue
 * may hold a command behind a user event the program sets later; past
 * that the command goes ahead as before the race was known, and a gated
 * one's marker is kept for open_gate to wait on, which narrows the race
 * to PoCL's broadcast of the marker's completion. */
#define SETTLE_NS 1000000000ULL

static cl_command_queue inner_queue(struct fault_stream *fs) {
  cl_command_queue (*queue)(void *) = cls__factory_queue(fs->inner);
  return queue ? queue(fs->s) : NULL;
}

static cl_event inner_last_event(struct fault_stream *fs) {
  cl_event (*lend)(void *) = cls__factory_last_event(fs->inner);
  return lend ? lend(fs->s) : NULL;
}

static bool listed(const cl_event *evs, size_t n, cl_event ev) {
  for (size_t i = 0; i < n; i++)
    if (evs[i] == ev)
      return true;
  return false;
}

/* An event behind a closed gate: one the gate fails when it opens, not
 * yet failed. */
static bool behind_gate(const struct cls__fault_config *cfg, cl_event ev) {
  return listed(cfg->behind, cfg->nbehind, ev) && cls__event_state(ev) > CL_COMPLETE;
}

static struct cls__fault_queue_behind *queue_entry(struct cls__fault_config *cfg,
                                                   cl_command_queue q) {
  for (size_t i = 0; i < cfg->nbehind_q; i++)
    if (cfg->behind_q[i].q == q)
      return &cfg->behind_q[i];
  return NULL;
}

static bool queue_behind_gate(struct cls__fault_config *cfg, cl_command_queue q) {
  struct cls__fault_queue_behind *e = q ? queue_entry(cfg, q) : NULL;
  return e && cls__event_state(e->last) > CL_COMPLETE;
}

/* Whether the command about to be enqueued on q after `wait` will be
 * behind a closed gate. */
static bool goes_behind(struct cls__fault_config *cfg, cl_command_queue q, cl_uint nwait,
                        const cl_event *wait) {
  for (cl_uint i = 0; i < nwait; i++)
    if (behind_gate(cfg, wait[i]))
      return true;
  return queue_behind_gate(cfg, q);
}

/* The command goes behind a gate: what else it would depend on finishes
 * first (above). */
static void settle_deps(struct fault_stream *fs, cl_command_queue q, cl_uint nwait,
                        const cl_event *wait) {
  struct cls__fault_config *cfg = fs->cfg;
  uint64_t deadline = cls__now_ns() + SETTLE_NS;
  cl_event left = NULL;
  if (q && !queue_behind_gate(cfg, q) && !cls__settle_queue(q, deadline, &left) && left) {
    if (fs->gone && !fs->settle)
      fs->settle = left; /* open_gate waits for it */
    else
      clReleaseEvent(left);
  }
  for (cl_uint i = 0; i < nwait; i++)
    if (!behind_gate(cfg, wait[i]))
      cls__settle_events(&wait[i], 1, deadline);
}

/* After the enqueue of a command behind a gate: it, and its queue from it
 * on, are behind it too.  Without the command's event (out of host
 * memory, or a factory that lends none) later commands are not known to
 * be behind it: the race as before. */
static void note_behind(struct cls__fault_config *cfg, cl_command_queue q, cl_event ev) {
  if (!ev || !cls__grow((void **)&cfg->behind, &cfg->capbehind, cfg->nbehind + 1,
                        sizeof *cfg->behind, 16))
    return;
  clRetainEvent(ev);
  cfg->behind[cfg->nbehind++] = ev;
  if (!q)
    return;
  struct cls__fault_queue_behind *e = queue_entry(cfg, q);
  if (!e) {
    if (!cls__grow((void **)&cfg->behind_q, &cfg->capbehind_q, cfg->nbehind_q + 1,
                   sizeof *cfg->behind_q, 4))
      return;
    e = &cfg->behind_q[cfg->nbehind_q++];
    e->q = q;
  } else {
    clReleaseEvent(e->last);
  }
  clRetainEvent(ev);
  e->last = ev;
}

static cl_int fs_alloc(void *stream, size_t size, cl_mem *out) {
  struct fault_stream *fs = stream;
  if (fs->inner->alloc)
    return fs->inner->alloc(fs->s, size, out);
  cl_int rc;
  *out = clCreateBuffer(fs->backend->context, CL_MEM_READ_WRITE, size, NULL, &rc);
  return rc;
}

/* A command refused at its enqueue (status st): its caller waits for its
 * wait list on the host (cls__order_drop), which may hold a gated
 * command: the gates open first, as before any wait. */
static cl_int refused(struct fault_stream *fs, cl_uint nwait, cl_int st) {
  if (nwait && fs->cfg->gated)
    open_gates(fs->cfg);
  return st;
}

/* The enqueue fault, then the real command, then the completion fault;
 * faults name the logical stream the command belongs to.  A foreign
 * command (fc) is matched by op=foreign and its label as kernel=. */
static cl_int inject(struct fault_stream *fs, int logical, int kind,
                     const struct cls_kernel_cmd *k, const struct cls_transfer *x,
                     const struct cls_foreign_cmd *fc, uint64_t seq, cl_uint nwait,
                     const cl_event *wait) {
  static const char *const op_names[] = {[CLS__CMD_LAUNCH] = "launch", [CLS__CMD_WRITE] = "upload",
                                    [CLS__CMD_READ] = "download", [CLS__CMD_COPY] = "copy",
                                    [CLS__CMD_FILL] = "fill", [CLS__CMD_FOREIGN] = "foreign"};
  const char *op = op_names[kind];
  const char *kernel = kind == CLS__CMD_LAUNCH ? k->name : fc ? fc->label : NULL;
  /* A replay's command buffer is matched as the commands inside it, each
   * counted as it would be on the plan: one that fires fails the whole
   * command buffer (at its enqueue, or at its completion). */
  const cl_uint nwait0 = nwait; /* the caller's: the gate may take its place */
  size_t nm = 1;
  const unsigned char *mkinds = NULL;
  const char *const *mnames = NULL;
  const int *mstreams = NULL;
  if (fc && fs->members)
    fs->members(fc, &nm, &mkinds, &mnames, &mstreams);
#define MEMBER_OP(i) (mkinds ? op_names[mkinds[i]] : op)
#define MEMBER_KERNEL(i) (mkinds ? mnames[i] : kernel)
#define MEMBER_STREAM(i) (mstreams ? mstreams[i] : logical)
  if (fs->lost)
    return refused(fs, nwait0, fs->lost);
  for (size_t i = 0; i < nm; i++)
    if ((fs->lost = cls__fault_fires(fs->cfg, W_LOST, MEMBER_OP(i), MEMBER_KERNEL(i),
                                     MEMBER_STREAM(i), NULL)) != CL_SUCCESS)
      return refused(fs, nwait0, fs->lost);
  for (size_t i = 0; i < nm && !fs->gone; i++)
    fs->gone =
        cls__fault_fires(fs->cfg, W_GONE, MEMBER_OP(i), MEMBER_KERNEL(i), MEMBER_STREAM(i), NULL);
  if (fs->gone) {
    /* Lost after the enqueue: a blocking transfer would wait on the gate,
     * so the queue refuses it (what a blocking call on a lost queue
     * does); anything else joins the gate. */
    if (x && x->blocking && (kind == CLS__CMD_WRITE || kind == CLS__CMD_READ)) {
      open_gates(fs->cfg); /* the queue said it is lost: what it holds ends now */
      return fs->gone;
    }
    cl_int crc = CL_SUCCESS;
    if (!fs->gate) {
      if (!(fs->gate = clCreateUserEvent(fs->backend->context, &crc)))
        return crc;
      if (!fs->cfg->gated)
        list_closed(fs->cfg, fs->backend->context);
      /* It fails later, and PoCL 3.1 aborts failing what follows a
       * command without an event behind it: from now on every command
       * keeps its event, as behind a foreign command's user event. */
      cls__opencl_outside_event();
      fs->next_gated = fs->cfg->gated;
      fs->cfg->gated = fs;
      note_behind(fs->cfg, NULL, fs->gate);
    }
    /* The gate alone: the command never runs, so its order does not
     * matter, and a second dependency finishing while the gate fails it
     * is the PoCL 3.1 race (settle_deps). */
    wait = &fs->gate;
    nwait = 1;
  }
  /* A blocking transfer may wait on a command of another queue gated
   * behind a lost one, through its wait list or through an earlier
   * command of its own queue: the gates open, and since PoCL 3.1 never
   * finishes a command queued behind a failed event, the transfer waits
   * for its wait list here and fails without running behind a failed one
   * (as a dependent of the lost queue does). */
  if (fs->cfg->gated && x && x->blocking && (kind == CLS__CMD_WRITE || kind == CLS__CMD_READ)) {
    open_gates(fs->cfg);
    if (nwait)
      clWaitForEvents(nwait, wait);
    for (cl_uint i = 0; i < nwait; i++)
      if (cls__event_state(wait[i]) < 0) /* failed, or cannot be read */
        return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  }
  cl_int st = CL_SUCCESS;
  for (size_t i = 0; i < nm && st == CL_SUCCESS; i++)
    st = cls__fault_fires(fs->cfg, W_ENQUEUE, MEMBER_OP(i), MEMBER_KERNEL(i), MEMBER_STREAM(i),
                          NULL);
  if (st != CL_SUCCESS)
    return refused(fs, nwait0, st);
  /* Ranged: what is proven finished before this command (F8a). */
  uint64_t proven = fs->evented > fs->completed ? fs->evented : fs->completed;
  cl_command_queue q = fs->cfg->gated ? inner_queue(fs) : NULL;
  bool behind = fs->cfg->gated && goes_behind(fs->cfg, q, nwait, wait);
  if (behind)
    settle_deps(fs, q, nwait, wait);
  cl_int rc = fc ? cls__enqueue_foreign_plain(fs->inner, fs->s, fc, seq, nwait, wait)
                 : cls__enqueue_plain(fs->inner, fs->s, kind, k, x, seq, nwait, wait);
  if (rc != CL_SUCCESS)
    return rc;
  if (behind)
    note_behind(fs->cfg, q, inner_last_event(fs));
  fs->newest = seq;
  note_events(fs, seq, x && x->blocking && (kind == CLS__CMD_WRITE || kind == CLS__CMD_READ));
  /* A blocking download waited for what it read, on any stream: the
   * failures held there are found by the poll that follows it. */
  if (kind == CLS__CMD_READ && x->blocking)
    fs->cfg->waits++;
  uint64_t hold = 0;
  st = fs->gone;
  for (size_t i = 0; i < nm && st == CL_SUCCESS; i++)
    st = cls__fault_fires(fs->cfg, W_COMPLETE, MEMBER_OP(i), MEMBER_KERNEL(i), MEMBER_STREAM(i),
                          &hold);
#undef MEMBER_OP
#undef MEMBER_KERNEL
#undef MEMBER_STREAM
  if (st != CL_SUCCESS && push(&fs->doomed, &fs->ndoomed, &fs->capdoomed, seq, st)) {
    struct doomed *d = &fs->doomed[fs->ndoomed - 1];
    d->hold = hold;
    if (fs->ranged) {
      d->first = proven + 1;
      d->last = fs->evented >= seq ? seq : 0;
    }
  }
  return CL_SUCCESS;
}

cl_int cls__fault_enqueue(void *stream, int logical, int kind, const struct cls_kernel_cmd *k,
                          const struct cls_transfer *x, uint64_t seq, cl_uint nwait,
                          const cl_event *wait) {
  if (kind == CLS__CMD_FOREIGN)
    return CL_INVALID_OPERATION; /* its descriptor travels apart: cls__fault_foreign */
  return inject(stream, logical, kind, k, x, NULL, seq, nwait, wait);
}

cl_int cls__fault_foreign(void *stream, const struct cls_foreign_cmd *fc, uint64_t seq,
                          cl_uint nwait, const cl_event *wait) {
  if (!fc)
    return CL_INVALID_OPERATION;
  return inject(stream, fc->stream, CLS__CMD_FOREIGN, NULL, NULL, fc, seq, nwait, wait);
}

/* The factory's members: the command belongs to the stream's own id (a
 * foreign command names its logical stream itself). */
static cl_int fs_foreign(void *stream, const struct cls_foreign_cmd *fc, uint64_t seq,
                         cl_uint nwait, const cl_event *wait) {
  return cls__fault_foreign(stream, fc, seq, nwait, wait);
}

/* The inner stream's queue, where it has one. */
static cl_command_queue fs_queue(void *stream) {
  return inner_queue(stream);
}

static cl_int fs_launch(void *stream, const struct cls_kernel_cmd *cmd, uint64_t seq,
                        cl_uint nwait, const cl_event *wait) {
  struct fault_stream *fs = stream;
  return cls__fault_enqueue(fs, fs->id, CLS__CMD_LAUNCH, cmd, NULL, seq, nwait, wait);
}

static cl_int fs_write(void *stream, cl_mem dst, size_t off, size_t size, const void *src,
                       int blocking, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  struct fault_stream *fs = stream;
  struct cls_transfer x = {.dst = dst, .dst_offset = off, .size = size, .host_src = src,
                        .blocking = blocking};
  return cls__fault_enqueue(fs, fs->id, CLS__CMD_WRITE, NULL, &x, seq, nwait, wait);
}

static cl_int fs_read(void *stream, cl_mem src, size_t off, size_t size, void *dst,
                      int blocking, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  struct fault_stream *fs = stream;
  struct cls_transfer x = {.src = src, .src_offset = off, .size = size, .host_dst = dst,
                        .blocking = blocking};
  return cls__fault_enqueue(fs, fs->id, CLS__CMD_READ, NULL, &x, seq, nwait, wait);
}

static cl_int fs_copy(void *stream, cl_mem src, size_t soff, cl_mem dst, size_t doff,
                      size_t size, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  struct fault_stream *fs = stream;
  struct cls_transfer x = {.src = src, .src_offset = soff, .dst = dst, .dst_offset = doff,
                        .size = size};
  return cls__fault_enqueue(fs, fs->id, CLS__CMD_COPY, NULL, &x, seq, nwait, wait);
}

static cl_int fs_fill(void *stream, cl_mem dst, size_t off, size_t size, const void *pat,
                      size_t psize, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  struct fault_stream *fs = stream;
  struct cls_transfer x = {.dst = dst, .dst_offset = off, .size = size, .pattern = pat,
                        .pattern_size = psize};
  return cls__fault_enqueue(fs, fs->id, CLS__CMD_FILL, NULL, &x, seq, nwait, wait);
}

static cl_int fs_image(void *stream, int kind, const struct cls_transfer *x, uint64_t seq,
                       cl_uint nwait, const cl_event *wait) {
  struct fault_stream *fs = stream;
  if (kind < CLS__CMD_WRITE || kind > CLS__CMD_FILL || !x || !x->image)
    return CL_INVALID_OPERATION;
  return cls__fault_enqueue(fs, fs->id, kind, NULL, x, seq, nwait, wait);
}

static cl_int fs_marker(void *stream, cl_event *out) {
  struct fault_stream *fs = stream;
  /* Not the gate: another queue may wait on the marker, and must fail
   * behind the commands the lost queue never ran (the in-order queue
   * puts the marker behind them). */
  cl_command_queue q = inner_queue(fs);
  bool behind = fs->cfg->gated && queue_behind_gate(fs->cfg, q);
  cl_int rc = fs->inner->marker(fs->s, out);
  note_events(fs, fs->newest, false); /* ranged: a marker may stand for the newest */
  if (rc == CL_SUCCESS && behind)
    note_behind(fs->cfg, q, *out);
  return rc;
}

/* Lent on from the wrapped factory, when it lends (version 2 or later). */
static cl_event fs_last_event(void *stream) {
  struct fault_stream *fs = stream;
  cl_event (*lend)(void *) = cls__factory_last_event(fs->inner);
  cl_event ev = lend ? lend(fs->s) : NULL;
  note_events(fs, fs->newest, false); /* ranged: a marker may stand for the newest */
  return ev;
}

static void collect_range(void *arg, uint64_t first, uint64_t last, cl_int status) {
  struct fault_stream *fs = arg;
  if (push(&fs->found, &fs->nfound, &fs->capfound, last, status))
    fs->found[fs->nfound - 1].first = first;
}

/* Whether doomed entry d is reported by a poll that counts `completed`
 * finished: a doomed command once it finished, a real failure held
 * behind one once its range has begun to finish. */
static bool due(const struct doomed *d, uint64_t completed) {
  return d->real ? d->first <= completed : d->seq <= completed;
}

static cl_int fs_poll_range(void *stream, int wait, cls_failed_range_fn on_failed, void *arg,
                            uint64_t *completed) {
  struct fault_stream *fs = stream;
  if (wait)
    open_gates(fs->cfg);
  else
    open_gate(fs, false);
  fs->nfound = 0;
  cl_int rc = cls__poll_ranges(fs->inner, fs->s, wait, collect_range, fs, completed);
  note_events(fs, fs->newest, false); /* a waiting poll marks the newest command */
  /* Ranged: a doomed command the inner stream now reports finished failed
   * in the range set at its enqueue; one whose range end no event showed
   * ends at what the inner stream reports finished. */
  if (*completed > fs->completed)
    fs->completed = *completed;
  for (size_t j = 0; fs->ranged && j < fs->ndoomed && fs->doomed[j].seq <= fs->completed; j++)
    if (!fs->doomed[j].last)
      fs->doomed[j].last = fs->completed;
  *completed = fs->completed;
  /* hold=N: a finished doomed command still held counts one more poll,
   * and nothing from its range on is reported finished (else the log
   * entries would go, and its failure with them); a poll of this stream
   * that waits, or a blocking download anywhere, releases its holds. */
  bool release = wait || fs->waits != fs->cfg->waits;
  fs->waits = fs->cfg->waits;
  for (size_t j = 0; j < fs->ndoomed && fs->doomed[j].seq <= fs->completed; j++) {
    if (release)
      fs->doomed[j].hold = 0;
    if (!fs->doomed[j].hold)
      continue;
    fs->doomed[j].hold--;
    *completed = fs->doomed[j].first - 1;
    break;
  }
  /* Real failures past that point wait with the doomed ones, in seq order;
   * one whose range starts at or before it goes now, though its last
   * command may still run (the inner stream reports a failed command with
   * an event of its own that way): a poll that counts the range's first
   * command finished must name the range, or the caller forgets the
   * command that failed (found by the model, CLS_PRECISE=0, context
   * 0x9f8e61bfb2f25d1d: a fill failed behind a lost queue read back as
   * written).  A doomed command inside such a range that has not
   * finished yet is reported again when it has (a second record over
   * commands tainted already; its status may say more, as a loss's). */
  size_t keep = 0;
  for (size_t i = 0; i < fs->nfound; i++) {
    fs->found[i].real = true;
    if (fs->found[i].first <= *completed) {
      fs->found[keep++] = fs->found[i];
      continue;
    }
    size_t j = 0;
    while (j < fs->ndoomed && fs->doomed[j].seq < fs->found[i].seq)
      j++;
    /* Doomed as well, over a range that holds this one: reported once.
     * Over a shorter one (its range set at its enqueue, the real one's
     * first command before it) the real one waits beside it, or the
     * commands before the doomed one lose their failure (the test's
     * F8a_a_real_range_held_behind_an_injected_failure_reaches_its_writes:
     * a copy failed in a range to a doomed command read back clean). */
    if (j < fs->ndoomed && fs->doomed[j].seq == fs->found[i].seq &&
        fs->doomed[j].first <= fs->found[i].first)
      continue;
    if (!push(&fs->doomed, &fs->ndoomed, &fs->capdoomed, 0, 0))
      continue; /* out of memory: that failure is not reported */
    memmove(&fs->doomed[j + 1], &fs->doomed[j], (fs->ndoomed - 1 - j) * sizeof *fs->doomed);
    fs->doomed[j] = fs->found[i];
    fs->doomed[j].hold = 0;
  }
  fs->nfound = keep;
  /* What is due now: the real failures found and the doomed commands up
   * to the first one not due (they go in seq order).  Ranges that overlap
   * are reported once, as their union, with a doomed command's status
   * where one is among them (a loss says more than what failed behind
   * it): a real range runs to the newest command, where the device fails
   * the rest of a queue behind a failed command, and dropping any part of
   * either leaves writes clean that nothing wrote (found by the model,
   * CLS_MODEL_LATE=1, context 0x39685d1dfb7f99a7: a fill and an upload
   * behind a copy failed behind a loss, read back as zeros; and by the
   * case above, where a held real range and a doomed command inside it
   * came due in one poll and only the doomed one's part was reported). */
  size_t ndue = 0;
  while (ndue < fs->ndoomed && due(&fs->doomed[ndue], *completed))
    ndue++;
  for (size_t j = 0; j < ndue; j++) {
    if (!push(&fs->found, &fs->nfound, &fs->capfound, 0, 0)) {
      const struct doomed *d = &fs->doomed[j]; /* out of memory: alone */
      on_failed(arg, d->first, d->last, d->status);
      continue;
    }
    fs->found[fs->nfound - 1] = fs->doomed[j];
  }
  for (size_t i = 1; i < fs->nfound; i++) { /* by first command: few */
    struct doomed t = fs->found[i];
    size_t k = i;
    for (; k && fs->found[k - 1].first > t.first; k--)
      fs->found[k] = fs->found[k - 1];
    fs->found[k] = t;
  }
  for (size_t i = 0; i < fs->nfound;) {
    struct doomed u = fs->found[i++];
    while (i < fs->nfound && fs->found[i].first <= u.last) {
      const struct doomed *o = &fs->found[i++];
      if (o->last > u.last)
        u.last = o->last;
      if (u.real && !o->real) {
        u.status = o->status;
        u.real = false;
      }
    }
    on_failed(arg, u.first, u.last, u.status);
  }
  fs->nfound = 0;
  if (ndue && ndue < fs->ndoomed) /* never memmove from NULL (no doomed command yet) */
    memmove(fs->doomed, fs->doomed + ndue, (fs->ndoomed - ndue) * sizeof *fs->doomed);
  fs->ndoomed -= ndue;
  /* A real failure still held (behind a doomed command not finished):
   * nothing from its range on counts finished until it is reported. */
  for (size_t k = 0; k < fs->ndoomed; k++)
    if (fs->doomed[k].real && fs->doomed[k].first <= *completed)
      *completed = fs->doomed[k].first - 1;
  return rc;
}

static cl_int fs_poll(void *stream, int wait, cls_failed_fn on_failed, void *arg,
                      uint64_t *completed) {
  return cls__poll_each(fs_poll_range, stream, wait, on_failed, arg, completed);
}

static uint64_t fs_events(void *stream) {
  struct fault_stream *fs = stream;
  uint64_t (*ev)(void *) = cls__factory_events(fs->inner);
  return ev ? ev(fs->s) : 0;
}

const struct cls_stream_factory cls__fault_factory = {
    .version = CLS_STREAM_FACTORY_VERSION,
    .name = "fault",
    .description = "wraps another factory and fails chosen commands (CLS_FAULT)",
    .create = fs_create,
    .destroy = fs_destroy,
    .flush = fs_flush,
    .alloc = fs_alloc,
    .launch = fs_launch,
    .write = fs_write,
    .read = fs_read,
    .copy = fs_copy,
    .fill = fs_fill,
    .marker = fs_marker,
    .poll = fs_poll,
    .last_event = fs_last_event,
    .poll_range = fs_poll_range,
    .events = fs_events,
    .foreign = fs_foreign,
    .queue = fs_queue,
    .image = fs_image,
};
