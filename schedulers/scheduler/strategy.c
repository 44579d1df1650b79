/* Submission in the scheduler driver: a logical stream's task list (or,
 * interleaved, every stream's) goes onto its backend queue, by strategy
 * (sequential, interleave), and is recorded in the queue's completion map;
 * an enqueue that fails here is an F8 failure, found after cls_launch
 * returned.  The enqueue of one task is inline (once per task); what only
 * some tasks need (waits, transfers, failures) is out of line. */
#include "qmap.h"

/* A transfer task (launches call the factory directly: enqueue_task,
 * submit_sequential). */
/* What enqueue_task returns for a withdrawn task (kind 0): not an OpenCL
 * status.  The launch path never meets it: kind 0 is not a launch, so it
 * is found here and in enqueue_waiting, off the hot path. */
#define WITHDRAWN 1

static __attribute__((noinline)) cl_int enqueue_xfer(struct cls_driver *drv,
                                                     void *stream, int id, const struct list *l,
                                                     const struct task *t, uint64_t bseq,
                                                     cl_uint nw, const cl_event *w) {
  if (!t->kind)
    return WITHDRAWN;
  if (t->kind == CLS_CMD_FOREIGN) { /* captured into the byte arena */
    struct cls_foreign_cmd f;
    memcpy(&f, l->bytes + t->u.t.pattern_off, sizeof f);
    f.buffers = (const struct cls_foreign_buffer *)(l->bytes + t->u.t.pattern_off + sizeof f);
    return cls_driver_enqueue_foreign(drv, stream, &f, bseq, nw, w);
  }
  struct cls_transfer x = t->u.t.x;
  if (t->kind == CLS_CMD_FILL)
    x.pattern = l->bytes + t->u.t.pattern_off;
  return cls_driver_enqueue(drv, stream, id, t->kind, NULL, &x, bseq, nw, w);
}

/* Drops a task's waits after its enqueue (rc). */
static __attribute__((noinline)) void release_waits(const cl_event *w, size_t nw, cl_int rc) {
  if (rc != CL_SUCCESS)
    cls_driver_unsent((cl_uint)nw, w);
  for (size_t i = 0; i < nw; i++)
    clReleaseEvent(w[i]);
}

/* enqueue_task for a task with waits: enqueues it on those still live,
 * then drops them all. */
static __attribute__((noinline)) cl_int enqueue_waiting(struct cls_driver *drv,
                                                        void *qs, int id, uint64_t bseq,
                                                        const struct list *l,
                                                        const struct task *t) {
  size_t nw = t->nwait;
  const cl_event *w = l->waits + t->wait0;
  if (!t->kind) {
    release_waits(w, nw, CL_INVALID_OPERATION); /* waited out: see dropped() */
    return WITHDRAWN;
  }
  cl_event keep[CLS_MAX_STREAMS]; /* a command waits on each stream once at most */
  cl_uint nk = cls_driver_live_waits(w, nw, keep); /* F7: the task sat in its list */
  const cl_event *kw = nk ? keep : NULL;
  cl_int rc = t->kind == CLS_CMD_LAUNCH ? cls_driver_launch(drv, qs, id, &t->u.k.kc, bseq, nk, kw)
                                         : enqueue_xfer(drv, qs, id, l, t, bseq, nk, kw);
  release_waits(w, nw, rc);
  return rc;
}

/* The factory whose launch member a task without waits calls directly,
 * read once per submission: NULL when it wraps another (fault injection),
 * whose enqueues go through cls_driver_enqueue. */
static inline const struct cls_stream_factory *direct_factory(const struct cls_driver *drv) {
  return drv->wrapped ? NULL : drv->factory;
}

/* Enqueues task t of list l, of logical stream id, onto the factory
 * stream qs as backend command bseq, and drops its waits; fac is
 * direct_factory(drv). */
static inline cl_int enqueue_task(struct cls_driver *drv, const struct cls_stream_factory *fac,
                                  void *qs, int id, uint64_t bseq, const struct list *l,
                                  const struct task *t) {
  /* The usual task first: a launch without waits, straight to the
   * factory. */
  if (__builtin_expect(fac && t->kind == CLS_CMD_LAUNCH && !t->nwait, 1))
    return fac->launch(qs, &t->u.k.kc, bseq, 0, NULL);
  if (t->nwait)
    return enqueue_waiting(drv, qs, id, bseq, l, t);
  if (t->kind != CLS_CMD_LAUNCH)
    return enqueue_xfer(drv, qs, id, l, t, bseq, 0, NULL);
  return cls_driver_enqueue(drv, qs, id, CLS_CMD_LAUNCH, &t->u.k.kc, NULL, bseq, 0, NULL);
}

/* Task t of stream id was withdrawn (F8 found it reads a failed input):
 * it was not enqueued, its waits were waited out on the host (later
 * commands may count on the order they gave: enqueue_waiting), and it
 * completes with the queue's command before it. */
static __attribute__((noinline)) void dropped(struct queue *q, int id, const struct task *t) {
  if (cls__sched_map_push(q, q->seq, id, t->seq, 0, CL_SUCCESS))
    q->unreal++;
}

/* Waits for what queue q (stream id's) has and reports it now: a failed
 * enqueue recorded at its end comes after every earlier command's
 * failure, in queue order (F8).  A waiting poll of the factory, not a
 * marker waited for behind its back: a factory that holds commands
 * (fault injection's loss at completion) lets them go before a wait. */
static void report_now(struct sched_driver *d, struct queue *q, int id) {
  cls__sched_queue_poll(d, q, id, true);
}

/* Task `seq` of stream id could not be enqueued (rc): an error path.
 * Called with what was enqueued before it in the map. */
static __attribute__((noinline)) void task_failed(struct sched_driver *d, struct queue *q, int id,
                                                  uint64_t seq, cl_int rc) {
  struct cls_driver *base = &d->base;
  struct cls_driver_stream *s = d->streams[id];
  /* Completes with the queue's last command; the failure is reported
   * then, in queue order (cls__sched_queue_poll): a failure of an earlier
   * command, which this one may have read, comes first, as F8 requires. */
  if (!cls__sched_map_push(q, q->seq, id, seq, 0, rc)) {
    cls_driver_failed(base, s, seq, rc, true); /* out of memory: now */
    return;
  }
  q->unreal++;
  report_now(d, q, id);
}

/* Recovery: stream id's list met a lost queue at task `from` (failed:
 * that task's enqueue was refused; else it was not tried): the tasks from
 * there on are kept for the fresh queue the core gives the stream at its
 * next safe point (cls_driver_kept); until then they are not submitted. */
static __attribute__((noinline)) void keep(struct sched_driver *d, int id, size_t from,
                                           bool failed) {
  struct list *l = &d->lists[id];
  cls__sched_list_keep(l, from, failed);
  l->losses++;
  d->lost |= 1ull << id;
  cls_driver_kept(&d->base, d->streams[id], l->n);
}

static void queue_flush(struct sched_driver *d, int queue, uint64_t streams) {
  cl_int rc = d->base.factory->flush(d->queues[queue].stream);
  for (uint64_t m = streams; m; m &= m - 1) {
    struct cls_driver_stream *s = d->streams[__builtin_ctzll(m)];
    s->stats.submissions++;
    s->stats.flushes++;
    s->flushed = s->submitted;
  }
  if (rc != CL_SUCCESS)
    cls_driver_log_error(&d->base, "flushing backend queue %d failed: %s", queue,
                         cls_cl_status_name(rc));
}

/* Sequential: stream id's tasks, in order, onto its queue.  Its commands
 * there are consecutive, so the map records them as one run, from run0
 * up to the task at hand (recorded before a failure is handled, which
 * polls the map).  The factory calls nothing of ours, so the list and
 * queue are read once, and again after a failure (its handling may). */
static void submit_sequential(struct sched_driver *d, int id) {
  struct cls_driver *drv = &d->base;
  const struct cls_stream_factory *fac = direct_factory(drv);
  struct list *l = &d->lists[id];
  struct queue *q = &d->queues[l->queue];
  const struct task *t = l->tasks, *end = t + l->n, *run0 = t;
  void *qs = q->stream;
  uint64_t bseq = q->seq;
  for (; t < end; t++) {
    cl_int rc = enqueue_task(drv, fac, qs, id, bseq + 1, l, t);
    if (__builtin_expect(rc == CL_SUCCESS, 1)) {
      bseq++;
      continue;
    }
    q->seq = bseq;
    if (t > run0)
      cls__sched_map_add(q, id, run0->seq, (uint64_t)(t - run0));
    run0 = t + 1;
    if (rc == WITHDRAWN) {
      dropped(q, id, t); /* polls nothing: l, q and t stay */
      continue;
    }
    size_t i = (size_t)(t - l->tasks);
    if (__builtin_expect(rc == CL_DEVICE_NOT_AVAILABLE, 0) &&
        cls_driver_recovers(drv, rc, l->losses + 1)) {
      keep(d, id, i, true);
      queue_flush(d, l->queue, 1ull << id);
      return;
    }
    l->sent = i + 1;
    task_failed(d, q, id, t->seq, rc);
    t = l->tasks + i;
    run0 = t + 1;
    end = l->tasks + l->n;
    qs = q->stream;
    bseq = q->seq;
  }
  q->seq = bseq;
  if (end > run0)
    cls__sched_map_add(q, id, run0->seq, (uint64_t)(end - run0));
  cls__sched_list_reset(l);
  l->losses = 0;
  d->pending &= ~(1ull << id);
  queue_flush(d, l->queue, 1ull << id);
}

/* Recovery on a shared queue: whether every stream with tasks on it may
 * keep them (each within the bound). */
static bool recovers_all(struct sched_driver *d, uint64_t involved) {
  for (uint64_t j = involved; j; j &= j - 1)
    if (!cls_driver_recovers(&d->base, CL_DEVICE_NOT_AVAILABLE,
                             d->lists[__builtin_ctzll(j)].losses + 1))
      return false;
  return true;
}

/* The end of a queue's map as submit_interleave records into it, in
 * locals (the factory calls nothing of ours): entries go at pos (an index
 * before the wrap), `last` is the entry before (NULL: none).  Only while
 * `direct`: the map had room for every task of the submission. */
struct ring {
  struct qmap *map, *last;
  size_t mask, pos;
  bool direct;
};

/* Reads q's map into r, with room for `need` more entries if it can. */
static inline __attribute__((always_inline)) void ring_load(struct queue *q, struct ring *r,
                                                        size_t need) {
  r->direct = q->cap - q->len >= need || cls__sched_map_reserve(q, need);
  r->map = q->map;
  r->mask = q->cap - 1;
  r->pos = q->head + q->len;
  r->last = q->len ? &r->map[(r->pos - 1) & r->mask] : NULL;
}

/* Interleave: the pending tasks of every stream on queue `qi`, round
 * robin, onto it (one queue per device of the context: queue k for device
 * k; a relocated stream has a queue of its own).  Each command is
 * recorded as cls__sched_map_add would, into the map's room (struct
 * ring); a failure or withdrawal writes the locals back first (its
 * handling reads the map) and reads them again after. */
static void submit_interleave(struct sched_driver *d, int qi) {
  struct cls_driver *drv = &d->base;
  const struct cls_stream_factory *fac = direct_factory(drv);
  struct queue *q = &d->queues[qi];
  uint64_t involved = d->pending & ~d->lost, left; /* lost: kept for a fresh queue */
  /* Several devices, or a relocated stream's own queue: only this queue's
   * streams. */
  for (uint64_t m = d->split ? involved : 0; m; m &= m - 1)
    if (d->lists[__builtin_ctzll(m)].queue != qi)
      involved &= ~(1ull << __builtin_ctzll(m));
  size_t total = 0;
  for (uint64_t m = involved; m; m &= m - 1)
    total += d->lists[__builtin_ctzll(m)].n;
  struct ring r;
  ring_load(q, &r, total);
  q->streams |= involved; /* the direct records' streams (again after a reload) */
  void *qs = q->stream;
  uint64_t bseq = q->seq;
  left = involved;
  for (size_t round = 0; left; round++)
    for (uint64_t m = left; m; m &= m - 1) {
      int id = __builtin_ctzll(m);
      const struct list *l = &d->lists[id];
      if (round >= l->n) {
        left &= ~(1ull << id);
        continue;
      }
      const struct task *t = &l->tasks[round];
      cl_int rc = enqueue_task(drv, fac, qs, id, bseq + 1, l, t);
      if (__builtin_expect(rc == CL_SUCCESS && r.direct, 1)) {
        struct qmap *e = r.last;
        uint64_t seq = t->seq;
        bseq++;
        if (e && cls__sched_map_continues(e, id, seq, bseq)) {
          e->count++;
        } else {
          r.last = e = &r.map[r.pos++ & r.mask];
          *e = (struct qmap){bseq, seq, 1, id, CL_SUCCESS};
        }
        continue;
      }
      if (r.direct)
        q->len = r.pos - q->head;
      if (rc == CL_SUCCESS) {
        q->seq = ++bseq;
        cls__sched_map_add(q, id, t->seq, 1);
        continue; /* not direct: nothing to read again */
      }
      q->seq = bseq;
      if (__builtin_expect(rc == CL_DEVICE_NOT_AVAILABLE, 0) &&
          recovers_all(d, involved)) {
        /* The shared queue is lost for every stream on it: each keeps
         * its tasks not handed over yet, in its own order. */
        for (uint64_t j = involved; j; j &= j - 1) {
          int o = __builtin_ctzll(j);
          struct list *lo = &d->lists[o];
          size_t sent = round + (o < id);
          if (sent < lo->n) {
            keep(d, o, sent, o == id);
          } else {
            cls__sched_list_reset(lo);
            d->pending &= ~(1ull << o);
          }
        }
        queue_flush(d, qi, involved);
        return;
      }
      if (rc == WITHDRAWN) {
        dropped(q, id, t);
      } else {
        /* What each list has handed over, for a withdrawal the failure's
         * replay may make: this round reached stream id. */
        for (uint64_t j = involved; j; j &= j - 1) {
          int o = __builtin_ctzll(j);
          size_t sent = round + (o <= id);
          d->lists[o].sent = sent < d->lists[o].n ? sent : d->lists[o].n;
        }
        task_failed(d, q, id, t->seq, rc);
      }
      ring_load(q, &r, total); /* the poll may have emptied the map */
      q->streams |= involved;
      qs = q->stream;
      bseq = q->seq;
    }
  q->seq = bseq;
  if (r.direct)
    q->len = r.pos - q->head;
  for (uint64_t m = involved; m; m &= m - 1) {
    cls__sched_list_reset(&d->lists[__builtin_ctzll(m)]);
    d->lists[__builtin_ctzll(m)].losses = 0;
  }
  d->pending &= ~involved;
  queue_flush(d, qi, involved);
}

cl_int cls__sched_enqueue_failed(struct sched_driver *d, int id, uint64_t seq, cl_int rc) {
  if (rc == CL_DEVICE_NOT_AVAILABLE && cls_driver_recovers(&d->base, rc, d->lists[id].losses + 1))
    return CLS__SCHED_KEEP;
  /* As a deferred task's failed enqueue (task_failed), reported later. */
  struct queue *q = &d->queues[d->lists[id].queue];
  if (!cls__sched_map_push(q, q->seq, id, seq, 0, rc))
    return rc; /* out of memory: reported at the call, as the event driver does */
  q->unreal++;
  d->unreported |= 1ull << id;
  return CL_SUCCESS;
}

void cls__sched_keep_lost(struct sched_driver *d, int id) {
  keep(d, id, 0, false);
  queue_flush(d, d->lists[id].queue, 1ull << id);
}

int cls__sched_report_failed(struct sched_driver *d) {
  uint64_t minted = cls_driver_failures_seen(&d->base);
  while (d->unreported) {
    int id = __builtin_ctzll(d->unreported);
    d->unreported &= d->unreported - 1;
    report_now(d, &d->queues[d->lists[id].queue], id);
  }
  return cls_driver_failures_seen(&d->base) != minted ? CLS_DRIVER_RETRY : CLS_OK;
}

void cls__sched_submit_list(struct sched_driver *d, int id) {
  if (__builtin_expect(d->lost >> id & 1, 0))
    return; /* kept for its fresh queue: after the relocation */
  if (d->strategy == SEQUENTIAL) {
    if (d->lists[id].n)
      submit_sequential(d, id);
  } else if (d->pending & ~d->lost) {
    submit_interleave(d, d->lists[id].queue);
  }
}
