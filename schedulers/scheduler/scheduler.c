/* The scheduler-based driver: logical streams hold task lists, submitted in
 * batches onto shared backend queues.
 *
 * A logical stream's list is submitted when it reaches its limit, when
 * another stream binds a buffer its pending tasks write (so order holds),
 * before a blocking transfer on it, and on sync.  The limit is max_tasks
 * where it is given; by default it starts at 1 when the stream opens and
 * after each wait, and doubles at each submission of a full list up to
 * 32: a batch of 32 that waited for its last task kept the device idle
 * while the host issued it (a corpus program of 20 launches a stream ran
 * 1.17x raw OpenCL's time under sequential), and a long chain still
 * reaches full batches after five submissions.  Strategies:
 *   sequential  each stream's tasks, in order, onto its backend queue;
 *               N logical streams share M queues (stream i -> queue i % M;
 *               M = N unless queues=M is given)
 *   interleave  the pending tasks of every stream, round-robin, onto one
 *               queue
 * Parameters: CLS_SCHEDULER=scheduler[:STRATEGY][,max_tasks=N][,queues=M].
 *
 * Streams on one queue are ordered by the queue itself; streams on
 * different queues by a marker event, as in the event driver.  A task keeps
 * copies of what the enqueue needs (kernel arguments, work sizes, fill
 * pattern) in arenas of its list, reused after every submission, so a
 * launch allocates nothing once the arenas have grown.  An enqueue that
 * fails at submission is a failure found after cls_launch returned: it goes
 * through the same F8 path as a failure at completion.  The failure rules
 * themselves are the shared store's: nothing here decides about taint.
 *
 * This file holds the driver ops and the orderer; sched.h the data the
 * driver's files share; params.c the parameters; list.c the task lists;
 * strategy.c submission; qmap.c each backend queue's completion map and
 * its poll. */
#include "qmap.h"

#include <stdlib.h>

static struct sched_driver *sd(struct cls_driver *d) { return (struct sched_driver *)d; }

static int sc_create(cls_context *ctx, const char *params, struct cls_driver **out) {
  (void)ctx;
  struct sched_driver *d = calloc(1, sizeof *d);
  if (!d)
    return cls_driver_error(CLS_ENOMEM, 0, "out of host memory");
  int rc = cls__sched_parse_params(d, params);
  if (rc < 0) {
    free(d);
    return rc;
  }
  d->solo = d->strategy == SEQUENTIAL && !d->nqueues;
  *out = &d->base;
  return CLS_OK;
}

static void sc_destroy(struct cls_driver *base) {
  struct sched_driver *d = sd(base);
  for (int i = 0; i < CLS_MAX_STREAMS; i++)
    cls__sched_free_list(&d->lists[i]);
  free(d);
}

static int sc_open(struct cls_driver *base, struct cls_driver_stream *s) {
  struct sched_driver *d = sd(base);
  int qi = d->nqueues ? s->id % d->nqueues : s->id;
  if (d->nqueues && s->device) {
    /* Shared queues are per device: queue i of device k is i + M*k. */
    qi += d->nqueues * s->device;
    if (qi >= CLS_MAX_STREAMS)
      return cls_driver_error(CLS_EINVAL, 0,
                              "scheduler: %d queues on each of %d devices are more than %d",
                              d->nqueues, cls_driver_devices(base), CLS_MAX_STREAMS);
  }
  struct queue *q = &d->queues[qi];
  bool own = s->generation > 0; /* relocated: a fresh queue of its own */
  /* Solo, a stream never shares a queue: its slot may be a relocated
   * stream's (taken from the top), and a command waiting on two producers
   * of one queue must not borrow an event the other's hand-over lets go
   * (sc_orderer_now).  There is always a free one then: a slot per open
   * stream at most. */
  if (own || (q->users && (d->solo || q->own || q->device != s->device))) {
    /* A free slot, from the top (the policy's slots are the low ones). */
    for (qi = CLS_MAX_STREAMS - 1; qi >= 0 && d->queues[qi].users; qi--)
      ;
    if (qi < 0)
      return cls_driver_error(CLS_ENOMEM, 0, "scheduler: no free backend queue for stream %d",
                              s->id);
    q = &d->queues[qi];
  }
  if (!q->users) {
    int rc = cls_driver_factory_create_on(base, qi, s->device, &q->stream);
    if (rc < 0)
      return rc;
    q->device = s->device;
    q->own = own;
  }
  q->users++;
  d->lost &= ~(1ull << s->id); /* kept tasks go to this fresh queue */
  d->lists[s->id].queue = qi;
  d->limit[s->id] = d->ramp ? 1 : d->max_tasks;
  d->streams[s->id] = s;
  d->split |= qi != 0;
  s->backend = q->stream;
  return CLS_OK;
}

static void sc_close(struct cls_driver *base, struct cls_driver_stream *s) {
  struct sched_driver *d = sd(base);
  struct queue *q = &d->queues[d->lists[s->id].queue];
  if (--q->users == 0) {
    base->factory->destroy(q->stream);
    free(q->map);
    free(q->fails);
    memset(q, 0, sizeof *q);
  }
  s->backend = NULL;
  d->streams[s->id] = NULL;
  d->unreported &= ~(1ull << s->id);
}

/* By default (ramp), before the host waits (a blocking transfer, a
 * sync): every stream's list goes, not only the waiting one's, so that no
 * queue idles behind the wait with tasks held back (two streams each
 * ending on a download: the second's tail ran only after the first's
 * download returned), and each list starts small again, as the device
 * drains while the host waits. */
static void submit_before_wait(struct sched_driver *d) {
  for (uint64_t m = d->pending & ~d->lost; m; m &= m - 1)
    cls__sched_submit_list(d, __builtin_ctzll(m));
  for (int i = 0; i < CLS_MAX_STREAMS; i++)
    d->limit[i] = 1;
}

/* Waiting: s's pending tasks go first, or there is nothing to wait for.
 * The poll reports for every stream sharing s's queue. */
static int sc_poll(struct cls_driver *base, struct cls_driver_stream *s, bool wait) {
  struct sched_driver *d = sd(base);
  if (__builtin_expect(d->unreported != 0, 0))
    cls__sched_report_failed(d); /* found by the poll below, or by s's */
  if (wait) {
    cls__sched_submit_list(d, s->id);
    if (d->ramp)
      submit_before_wait(d);
  }
  return cls__sched_queue_poll(d, &d->queues[d->lists[s->id].queue], s->id, wait);
}

static void *sc_queue_of(struct cls_driver *base, struct cls_driver_stream *s,
                         struct cls_driver_stream *p) {
  struct sched_driver *d = sd(base);
  int qp = d->lists[p->id].queue;
  return qp == d->lists[s->id].queue ? NULL : d->queues[qp].stream;
}

static void *sc_backend_of(struct cls_driver *base, struct cls_driver_stream *p) {
  struct sched_driver *d = sd(base);
  return d->queues[d->lists[p->id].queue].stream;
}

static uint64_t sc_enqueued(struct cls_driver *base, struct cls_driver_stream *p) {
  return p->submitted - sd(base)->lists[p->id].n;
}

/* s's commands up to `upto` go to the queue now, with what its list holds
 * before them: a producer's pending tasks before a consumer is ordered
 * after them (orderer.prepare), and tasks whose memory is about to be
 * released (settle: the enqueued command then holds its memory objects). */
static void sc_settle(struct cls_driver *base, struct cls_driver_stream *s, uint64_t upto) {
  if (sc_enqueued(base, s) < upto)
    cls__sched_submit_list(sd(base), s->id);
}

/* F8: a task still in s's list that reads a failed input is dropped. */
static bool sc_withdraw(struct cls_driver *base, struct cls_driver_stream *s, uint64_t seq) {
  struct list *l = &sd(base)->lists[s->id];
  size_t lo = l->sent, hi = l->n; /* tasks are in seq order */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    struct task *t = &l->tasks[mid];
    if (t->seq == seq) {
      if (!t->kind)
        return false;
      t->kind = 0;
      return true;
    }
    if (t->seq < seq)
      lo = mid + 1;
    else
      hi = mid;
  }
  return false;
}

static const struct cls_driver_orderer sc_orderer = {.prepare = sc_settle,
                                               .queue_of = sc_queue_of,
                                               .backend_of = sc_backend_of,
                                               .enqueued = sc_enqueued};
/* A queue per stream (solo): a command that waits on another queue goes to
 * its own at once (sc_order, submit_any), so it may wait on
 * the event the producer's queue lends, as under the event driver, instead
 * of a marker retained, read again for F7 when its list goes and released
 * then (what a ping-pong paid per launch).  Safe because no two streams
 * share a queue (sc_open): a prepare adds only to its producer's own
 * queue, before that queue's event is read. */
static const struct cls_driver_orderer sc_orderer_now = {.prepare = sc_settle,
                                                   .queue_of = sc_queue_of,
                                                   .backend_of = sc_backend_of,
                                                   .enqueued = sc_enqueued,
                                                   .enqueues_now = true};

/* The orderer for a command of stream id: lent events only where it can be
 * enqueued at once (a stream whose tasks wait for a fresh queue keeps
 * them). */
static inline const struct cls_driver_orderer *orderer(const struct sched_driver *d, int id) {
  return d->solo && !(d->lost >> id & 1) ? &sc_orderer_now : &sc_orderer;
}

/* order() after submitting s's list (full, or before a blocking
 * transfer). */
static __attribute__((noinline)) int order_submitted(struct sched_driver *d,
                                                     struct cls_driver_cmd *cmd) {
  uint64_t minted = cls_driver_failures_seen(&d->base);
  int id = cmd->stream->id;
  cls__sched_submit_list(d, id);
  if (d->ramp && cmd->x.blocking)
    submit_before_wait(d);
  else if (d->ramp) /* full: the next list may be longer */
    d->limit[id] = d->limit[id] < d->max_tasks / 2 ? 2 * d->limit[id] : d->max_tasks;
  int rc = cls_driver_order_after(&d->base, cmd, orderer(d, cmd->stream->id));
  if (rc == CLS_OK && cls_driver_failures_seen(&d->base) != minted) {
    cls_driver_drop_waits(cmd); /* synced[] counts on them */
    return CLS_DRIVER_RETRY;
  }
  return rc;
}

/* Solo: cmd waits on another queue and goes to its own at once, behind the
 * tasks s's list holds: they go now, here (a deferred enqueue that fails
 * is F8's, checked before cmd's write scope opens), and cmd's waits become
 * its own first (the submission may poll).  A failure learnt meanwhile:
 * ordered again. */
static __attribute__((noinline)) int submit_before(struct sched_driver *d,
                                                   struct cls_driver_cmd *cmd) {
  uint64_t minted = cls_driver_failures_seen(&d->base);
  cls_driver_own_waits(cmd);
  cls__sched_submit_list(d, cmd->stream->id);
  if (cls_driver_failures_seen(&d->base) != minted) {
    cls_driver_drop_waits(cmd);
    return CLS_DRIVER_RETRY;
  }
  return CLS_OK;
}

static int sc_order(struct cls_driver *base, struct cls_driver_cmd *cmd) {
  struct sched_driver *d = sd(base);
  struct cls_driver_stream *s = cmd->stream;
  if (__builtin_expect(d->unreported != 0, 0)) {
    int rc = cls__sched_report_failed(d);
    if (rc != CLS_OK)
      return rc;
  }
  /* Lists are submitted here, never in submit() (which enqueues only a
   * blocking transfer, or, solo, a command that waits on another queue,
   * its list emptied here): a deferred enqueue that fails is an F8
   * failure, and the command being ordered must be checked against it
   * before it enters its write scope.  A full list goes now; so
   * does the list before a blocking transfer (the caller waits for it). */
  if (d->lists[s->id].n >= d->limit[s->id] ||
      (cmd->x.blocking && (cmd->kind == CLS_CMD_WRITE || cmd->kind == CLS_CMD_READ)))
    return order_submitted(d, cmd);
  /* Nothing submitted: cls_driver_order_after itself answers CLS_DRIVER_RETRY for a
   * failure learnt while it orders. */
  const struct cls_driver_orderer *o = orderer(d, s->id);
  int rc = cls_driver_order_after(base, cmd, o);
  if (rc == CLS_OK && cmd->nwait && o->enqueues_now && d->lists[s->id].n)
    return submit_before(d, cmd);
  return rc;
}

/* A command enqueued now, its list empty (order() submitted it): a
 * blocking transfer (the caller waits for it), or, solo, one that waits on
 * another queue, on the events order() lent. */
static cl_int enqueue_now(struct sched_driver *d, struct cls_driver_cmd *cmd) {
  struct cls_driver_stream *s = cmd->stream;
  struct queue *q = &d->queues[d->lists[s->id].queue];
  cl_int rc = cls_driver_enqueue_any(&d->base, q->stream, cmd, q->seq + 1);
  if (rc != CL_SUCCESS)
    return rc;
  q->seq++;
  cls__sched_map_add(q, s->id, cmd->seq, 1);
  s->stats.submissions++;
  return CL_SUCCESS;
}

/* The task could not be added: the command is not submitted, its waits
 * are dropped as order() expects of a failed enqueue. */
static cl_int submit_oom(struct cls_driver_cmd *cmd) {
  cls_driver_drop_waits(cmd);
  return CL_OUT_OF_HOST_MEMORY;
}

/* submit() for any command: see sc_submit. */
static __attribute__((noinline)) cl_int submit_any(struct sched_driver *d,
                                                   struct cls_driver_cmd *cmd) {
  if (cmd->x.blocking && (cmd->kind == CLS_CMD_WRITE || cmd->kind == CLS_CMD_READ))
    return enqueue_now(d, cmd);
  int id = cmd->stream->id;
  struct list *l = &d->lists[id];
  /* Solo, a command that waits on another queue goes now (order() emptied
   * its list), unless its stream waits for a fresh queue; a failed enqueue
   * is reported after the call, and one that met a lost queue is kept
   * (captured below, without the waits its failure waited out). */
  bool kept = false;
  if (cmd->nwait && d->solo && !l->n && !(d->lost >> id & 1)) {
    cl_int rc = enqueue_now(d, cmd);
    if (rc == CL_SUCCESS ||
        (rc = cls__sched_enqueue_failed(d, id, cmd->seq, rc)) != CLS__SCHED_KEEP)
      return rc;
    kept = true;
  }
  bool launch = cmd->kind == CLS_CMD_LAUNCH;
  size_t nargs = launch ? cmd->kcmd.nargs : 0;
  if (!cls__sched_list_has_room(l, nargs) && !cls__sched_list_reserve(l, nargs))
    return submit_oom(cmd);
  struct task *t = &l->tasks[l->n];
  if (launch) {
    size_t a0 = l->nargs;
    cls__sched_capture_cmd(t, l->args + a0, &cmd->kcmd);
    if (!cls__sched_capture_cells(l->cells + a0, l->args + a0, cmd->kcmd.args, nargs) &&
        !cls__sched_capture_args(l, a0, cmd->kcmd.args, nargs))
      return submit_oom(cmd);
    l->nargs = a0 + nargs;
  } else if (!cls__sched_capture_xfer(l, t, cmd)) {
    return submit_oom(cmd);
  }
  if (!cmd->nwait)
    t->nwait = 0; /* no call for a command without waits */
  else if (!cls__sched_capture_waits(l, t, cmd))
    return submit_oom(cmd);
  cls__sched_task_commit(d, l, t, cmd);
  if (kept)
    cls__sched_keep_lost(d, id);
  return CL_SUCCESS;
}

/* The common launch takes a straight path: no waits, room in the list
 * already, one dimension with no local size, and arguments of 8 or 4
 * bytes (cl_mem, the usual scalars), each a move into its cell; anything
 * else goes to submit_any, which starts over (nothing is counted before
 * the end).  No call on the way. */
static cl_int sc_submit(struct cls_driver *base, struct cls_driver_cmd *cmd) {
  struct sched_driver *d = sd(base);
  int id = cmd->stream->id;
  struct list *l = &d->lists[id];
  size_t n = l->n, a0 = l->nargs, nargs = cmd->kcmd.nargs;
  if (cmd->kind != CLS_CMD_LAUNCH || cmd->nwait || n >= l->cap || a0 + nargs > l->capargs ||
      cmd->kcmd.dims != 1 || cmd->kcmd.local)
    return submit_any(d, cmd);
  /* The values first: a launch that is not the usual one has stored
   * nothing the list counts. */
  struct cls_kernel_arg *ta = l->args + a0;
  if (!cls__sched_capture_cells(l->cells + a0, ta, cmd->kcmd.args, nargs))
    return submit_any(d, cmd);
  struct task *t = &l->tasks[n];
  cls__sched_capture_cmd(t, ta, &cmd->kcmd);
  t->nwait = 0;
  l->nargs = a0 + nargs;
  cls__sched_task_commit(d, l, t, cmd);
  return CL_SUCCESS;
}

extern const struct cls_driver_ops cls__scheduler_driver;
const struct cls_driver_ops cls__scheduler_driver = {
    .version = CLS_DRIVER_OPS_VERSION,
    .name = "scheduler",
    .description = "logical streams batch tasks onto shared queues "
                   "(sequential or interleave; max_tasks, queues)",
    .usage = cls__sched_usage,
    .params = cls__sched_params,
    .create = sc_create,
    .destroy = sc_destroy,
    .open = sc_open,
    .close = sc_close,
    .poll = sc_poll,
    .order = sc_order,
    .submit = sc_submit,
    .settle = sc_settle,
    .withdraw = sc_withdraw,
};
