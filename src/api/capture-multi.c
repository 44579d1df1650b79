/* Capture and replay, runs over several streams (docs/capture.md, "Runs
 * over several streams"): under the event driver and the scheduler, a
 * plan run may hold the consecutive launches, copies and fills of up to
 * RUN_STREAMS streams of one device.  At capture each member gets its
 * waits on the members of other streams (cls__multi_plan); at replay the
 * run is ONE command of the command path on its first member's stream
 * (F2, F3/F4, F7, F8 once, as any run), whose enqueue puts each member on
 * its own stream's queue with its planned waits (cls__multi_enqueue),
 * and each other stream then logs a record of the run with its last
 * member's event (cls__multi_record), so that its sync waits for them. */
#include "api/capture-impl.h"
#include "driver/driver.h"
#include "util/util.h"
#include "factory/fault.h"
#include "stream/pool.h"

#include <stdlib.h>

/* Whether a plan run may span several streams (multi_enqueue): under
 * the event driver, which enqueues every command at the call on each
 * stream's own queue, where the members can go to their streams' queues
 * themselves; and under the scheduler, whose lists replay_multi hands
 * over around the run (settle): the other streams' before it, so their
 * earlier tasks come first on their queues, and the run's own right
 * after it.  Not where a loss is possible and recovered or injected
 * (relocation, a "lost" fault: they act on one stream's queue, which a
 * run of another stream's would bypass), nor under a deadline (a
 * stream's commands are waited for one by one).  Each replay also checks
 * that the run's streams share one device (else command by command). */
bool cls__multi_wanted(cls_context *ctx) {
  return (ctx->driver_ops == &cls__event_driver || ctx->driver_ops == &cls__scheduler_driver) &&
         ctx->relocate == CLS__RELOCATE_OFF &&
         !ctx->sync_timeout_ns && !ctx->guard && cls__factory_queue(ctx->pool.factory) &&
         !cls__fault_loses(ctx->faults);
}

/* The plan's walk over the members (cls__multi_plan), which compile()
 * turns into the replay's steps and then goes: per member its stream
 * index (ms), whether its event is asked for (need), the members of
 * other streams it waits for, wl[wfirst[i]..wfirst[i+1]) (for each other
 * stream, the latest one it conflicts with: a buffer both touch, one of
 * them writing, which covers the earlier ones of that in-order queue),
 * and the last member that waits for its event (lastuse; n: the final
 * marker or a record). */
struct walk {
  unsigned char *ms;
  bool *need;
  unsigned *wfirst, *wl, *lastuse;
};

static int compile(struct run *r, const struct walk *w);

/* A run over several streams, planned: its streams and each member's
 * waits (struct walk), compiled into its steps.  One walk, with per
 * binding of the union its last writer and each stream's readers since:
 * a member reading waits for the last writer, one writing for the last
 * writer and the readers of other streams since it (earlier readers came
 * before that writer). */
int cls__multi_plan(struct cls_capture *cap, struct run *r) {
  size_t n = r->n;
  int rc = CLS_OK;
  struct walk w = {.ms = malloc(n),
                   .need = calloc(n, sizeof *w.need),
                   .wfirst = malloc((n + 1) * sizeof *w.wfirst),
                   .wl = malloc(n * (RUN_STREAMS - 1) * sizeof *w.wl),
                   .lastuse = calloc(n, sizeof *w.lastuse)};
  r->mstream = malloc(n * sizeof *r->mstream);
  if (!w.ms || !w.need || !w.wfirst || !w.wl || !w.lastuse || !r->mstream) {
    rc = cls__error(CLS_ENOMEM, 0, "out of host memory");
    goto done;
  }
  long writer[CLS_MAX_ARGS], reader[CLS_MAX_ARGS][RUN_STREAMS];
  for (size_t u = 0; u < CLS_MAX_ARGS; u++) {
    writer[u] = -1;
    for (size_t k = 0; k < RUN_STREAMS; k++)
      reader[u][k] = -1;
  }
  unsigned nw = 0;
  for (size_t i = 0; i < n; i++) {
    const struct entry *e = &cap->e[r->first + i];
    size_t k = 0;
    while (k < r->nst && r->sid[k] != e->stream)
      k++;
    if (k == r->nst) {
      r->sid[r->nst++] = e->stream;
      r->firstm[k] = i;
    }
    w.ms[i] = (unsigned char)k;
    r->mstream[i] = e->stream;
    r->cnt[k]++;
    r->nl[k] += e->cmd.kind == CLS__CMD_LAUNCH;
    r->lastm[k] = i;
    long dep[RUN_STREAMS]; /* per stream: the latest member waited for */
    for (size_t o = 0; o < RUN_STREAMS; o++)
      dep[o] = -1;
#define DEP(m)                                                                                     \
  do {                                                                                             \
    long m_ = (m);                                                                                 \
    if (m_ >= 0 && w.ms[m_] != k && m_ > dep[w.ms[m_]])                                            \
      dep[w.ms[m_]] = m_;                                                                          \
  } while (0)
    for (size_t b = 0; b < e->cmd.nbind; b++) {
      size_t u = 0;
      while (cap->e[r->first + r->u[u].e].cmd.bind[r->u[u].b].handle.bits !=
             e->cmd.bind[b].handle.bits)
        u++;
      DEP(writer[u]);
      if (e->cmd.bind[b].access & CLS_WRITE)
        for (size_t o = 0; o < RUN_STREAMS; o++)
          DEP(reader[u][o]);
    }
#undef DEP
    for (size_t b = 0; b < e->cmd.nbind; b++) {
      size_t u = 0;
      while (cap->e[r->first + r->u[u].e].cmd.bind[r->u[u].b].handle.bits !=
             e->cmd.bind[b].handle.bits)
        u++;
      if (e->cmd.bind[b].access & CLS_WRITE) {
        writer[u] = (long)i;
        for (size_t o = 0; o < RUN_STREAMS; o++)
          reader[u][o] = -1;
      } else {
        reader[u][k] = (long)i;
      }
    }
    w.wfirst[i] = nw;
    for (size_t o = 0; o < RUN_STREAMS; o++)
      if (dep[o] >= 0) {
        w.wl[nw++] = (unsigned)dep[o];
        w.need[dep[o]] = true;
        w.lastuse[dep[o]] = (unsigned)i;
      }
  }
  w.wfirst[n] = nw;
  for (size_t k = 1; k < r->nst; k++) {
    w.need[r->lastm[k]] = true; /* the final marker's and the stream's record */
    w.lastuse[r->lastm[k]] = (unsigned)n;
  }
  rc = compile(r, &w);
done:
  free(w.lastuse);
  free(w.wl);
  free(w.wfirst);
  free(w.need);
  free(w.ms);
  return rc;
}

/* The walk compiled into the replay's steps (struct run), so that a
 * replay makes no decision per member.  dirty: the queues that took a
 * command since their last flush (the run's own has the wait list's
 * barrier, or the start marker, or its first member before anyone waits
 * on it).  Before a command waits for an event of another queue, that
 * queue is flushed if dirty (OpenCL asks it of a wait across queues;
 * oclgrind runs a queue inside clFlush, so a queue is flushed only after
 * those it waits for). */
static int compile(struct run *r, const struct walk *w) {
  size_t n = r->n;
  unsigned nw = w->wfirst[n];
  r->steps = malloc(n * sizeof *r->steps);
  r->ops = malloc(2 * (nw + r->nst) * sizeof *r->ops);
  if (!r->steps || !r->ops)
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  /* The start marker stands for what the run waits for, on its own
   * queue: every member must come after it.  Members of that queue do,
   * and by induction in member order so does every member waiting for
   * another member (that one came after it, and so did what came before
   * it on its in-order queue).  So only a stream's first member that
   * waits for no member needs it (startlast: the last such one, 0 none,
   * and then no marker at all). */
  size_t startlast = 0;
  for (size_t k = 1; k < r->nst; k++)
    if (w->wfirst[r->firstm[k]] == w->wfirst[r->firstm[k] + 1] && r->firstm[k] > startlast)
      startlast = r->firstm[k];
  r->start = startlast != 0;
  bool dirty[RUN_STREAMS] = {true};
  unsigned no = 0;
  for (size_t i = 0; i < n; i++) {
    struct mstep *st = &r->steps[i];
    unsigned k = w->ms[i];
    *st = (struct mstep){.k = (unsigned char)k, .ev = w->need[i]};
    if (k && r->firstm[k] == i && w->wfirst[i] == w->wfirst[i + 1]) {
      if (dirty[0])
        st->flush |= 1;
      dirty[0] = false;
      r->ops[no++] = (unsigned)n;
      st->nwait++;
    }
    for (unsigned j = w->wfirst[i]; j < w->wfirst[i + 1]; j++) {
      unsigned src = w->ms[w->wl[j]];
      if (dirty[src])
        st->flush |= (unsigned char)(1u << src);
      dirty[src] = false;
      r->ops[no++] = w->wl[j];
      st->nwait++;
    }
    dirty[k] = true;
    if (k && i == startlast) {
      r->ops[no++] = (unsigned)n;
      st->ndrop++;
    }
    for (unsigned j = w->wfirst[i]; j < w->wfirst[i + 1]; j++)
      if (w->lastuse[w->wl[j]] == i) {
        r->ops[no++] = w->wl[j];
        st->ndrop++;
      }
  }
  r->endflush = 0;
  for (size_t k = 1; k < r->nst; k++)
    if (dirty[k])
      r->endflush |= (unsigned char)(1u << k);
  return CLS_OK;
}

/* One member of a plan run on queue q, waiting for nw events of wl. */
static inline cl_int member_enqueue(cl_command_queue q, const struct dmember *m, cl_uint nw,
                             const cl_event *wl, cl_event *out) {
  switch (m->kind) {
  case CLS__CMD_LAUNCH:
    return clEnqueueNDRangeKernel(q, m->k, m->dims, m->offset, m->global, m->local, nw, wl, out);
  case CLS__CMD_COPY:
    return clEnqueueCopyBuffer(q, m->src, m->dst, m->src_offset, m->dst_offset, m->size, nw, wl,
                               out);
  default:
    return clEnqueueFillBuffer(q, m->dst, m->pattern, m->pattern_size, m->dst_offset, m->size,
                               nw, wl, out);
  }
}

/* An event of a plan run that nothing enqueued later waits for:
 * released, or kept where r->keep says a waited-for event may fail later
 * (struct rec), until cls__rec_sweep finds it complete; where the list
 * cannot grow, it is waited for before it is released. */
void cls__rec_drop(struct rec *r, cl_event ev) {
  if (r->keep && cls__grow((void **)&r->kept, &r->capkept, r->nkept + 1, sizeof *r->kept, 8)) {
    r->kept[r->nkept++] = ev;
    return;
  }
  if (r->keep)
    clWaitForEvents(1, &ev); /* its status, failed or not, is final after it */
  clReleaseEvent(ev);
}

/* At each enqueue of a plan run: its kept events that completed are
 * released; a failed one stays until the capture is destroyed (PoCL may
 * still be failing what waits for it, on the thread that set a user
 * event's status).  Once per replay, not per event. */
void cls__rec_sweep(struct rec *r) {
  size_t keep = 0;
  for (size_t i = 0; i < r->nkept; i++) {
    if (cls__event_state(r->kept[i]) != CL_COMPLETE)
      r->kept[keep++] = r->kept[i];
    else
      clReleaseEvent(r->kept[i]);
  }
  r->nkept = keep;
}

/* cls__multi_enqueue where every stream of the run has the run's queue
 * (scheduler:interleave: the streams of a device share one): the members
 * one after the other on it, in capture order, with no event but the
 * last one's, the run's; each other stream's record takes it too. */
static cl_int one_queue_enqueue(const struct cls_foreign_call *call, struct rec *r,
                                cl_event *ev) {
  const struct run *run = r->run;
  cl_int rc = CL_SUCCESS;
  for (size_t i = 0; i < run->n && rc == CL_SUCCESS; i++) {
    cl_event mine = NULL;
    rc = member_enqueue(call->queue, &r->dm[i], 0, NULL,
                        i + 1 == run->n ? ev : r->keep ? &mine : NULL);
    if (mine)
      cls__rec_drop(r, mine);
  }
  if (rc != CL_SUCCESS) {
    clFinish(call->queue);
    return rc;
  }
  for (size_t k = 1; k < run->nst; k++) {
    if (r->last[k])
      clReleaseEvent(r->last[k]);
    clRetainEvent(*ev);
    r->last[k] = *ev;
  }
  atomic_fetch_add_explicit(r->enqueues, 1, memory_order_relaxed);
  return CL_SUCCESS;
}

/* An event of the run that nothing enqueued later waits for goes now,
 * while its command is likely still in flight (as raw code releases its
 * events: one released once complete is freed on this thread), or is
 * kept where the run keeps its events (cls__rec_drop). */
static inline void drop(struct rec *r, cl_event *ev) {
  if (r->keep)
    cls__rec_drop(r, *ev);
  else
    clReleaseEvent(*ev); /* the usual replay: no call on the way */
  *ev = NULL;
}

/* After an enqueue or a flush of the run failed (rc), once the start
 * marker is enqueued: what was enqueued is waited for, so that nothing of
 * the run still runs once its failure is reported, and every event it
 * holds goes (the start marker's too). */
static cl_int run_failed(struct rec *r, cl_command_queue *qk, cl_int rc) {
  const struct run *run = r->run;
  for (size_t k = 0; k < run->nst; k++)
    clFinish(qk[k]);
  for (size_t i = 0; i <= run->n; i++)
    if (r->evs[i])
      drop(r, &r->evs[i]);
  return rc;
}

/* cls__multi_enqueue where the run's streams have a queue each: the
 * compiled plan (struct run's steps), its flushes, waits and releases
 * decided at capture.  Where the run keeps its events (r->keep), every
 * member has one, and those no member waits for are dropped at once. */
static cl_int compiled_enqueue(const struct cls_foreign_call *call, struct rec *r, cl_event *ev) {
  const struct run *run = r->run;
  cl_command_queue *qk = r->qs;
  cl_event *evs = r->evs, wl[RUN_STREAMS];
  const unsigned *op = run->ops;
  cl_int rc;
  if (run->start && (rc = clEnqueueMarkerWithWaitList(call->queue, 0, NULL, &evs[run->n])) !=
                        CL_SUCCESS)
    return rc;
  for (size_t i = 0; i < run->n; i++) {
    const struct mstep *st = &run->steps[i];
    for (unsigned m = st->flush; m; m &= m - 1)
      if ((rc = clFlush(qk[__builtin_ctz(m)])) != CL_SUCCESS)
        return run_failed(r, qk, rc);
    for (unsigned w = 0; w < st->nwait; w++)
      wl[w] = evs[op[w]];
    rc = member_enqueue(qk[st->k], &r->dm[i], st->nwait, st->nwait ? wl : NULL,
                        st->ev || r->keep ? &evs[i] : NULL);
    if (rc != CL_SUCCESS)
      return run_failed(r, qk, rc);
    if (!st->ev && r->keep)
      drop(r, &evs[i]);
    op += st->nwait;
    for (unsigned d = 0; d < st->ndrop; d++, op++)
      drop(r, &evs[*op]);
  }
  cl_uint nw = 0;
  for (unsigned m = run->endflush; m; m &= m - 1)
    if ((rc = clFlush(qk[__builtin_ctz(m)])) != CL_SUCCESS)
      return run_failed(r, qk, rc);
  for (size_t k = 1; k < run->nst; k++)
    wl[nw++] = evs[run->lastm[k]];
  if ((rc = clEnqueueMarkerWithWaitList(call->queue, nw, wl, ev)) != CL_SUCCESS)
    return run_failed(r, qk, rc);
  for (size_t k = 1; k < run->nst; k++) {
    if (r->last[k]) /* a record not handed over yet takes the newer one */
      clReleaseEvent(r->last[k]);
    r->last[k] = evs[run->lastm[k]];
    evs[run->lastm[k]] = NULL;
  }
  atomic_fetch_add_explicit(r->enqueues, 1, memory_order_relaxed);
  return CL_SUCCESS;
}

/* The foreign callback of a plan run over several streams, on the run's
 * own queue after the wait list's barrier: where a stream's first member
 * waits for no member, a start marker there that it waits for (so the
 * run's waits hold for every member; compile()); each member on its
 * stream's queue waiting for the members of other streams planned at
 * capture; then a marker on the run's queue waiting for each other
 * stream's last member: the run's event, complete when every member is
 * (and failed, where the vendor fails what waits for a failed event, as
 * PoCL does: each stream's record has its own last member's event too).
 * A planned event goes once its last waiter is enqueued, except each
 * other stream's last, which goes to its record.  A member that fails to
 * enqueue fails the run: those enqueued are waited for, so that nothing
 * of it still runs once the failure is reported.  The run's streams
 * share one queue (one_queue_enqueue) or have one each
 * (compiled_enqueue): cls__multi_before sends any other layout command
 * by command. */
cl_int cls__multi_enqueue(const struct cls_foreign_call *call, cl_event *ev) {
  struct rec *r = call->data;
  const struct run *run = r->run;
  if (r->nkept)
    cls__rec_sweep(r);
  r->qs[0] = call->queue;
  bool one = run->nst < 2 || r->qs[1] == call->queue;
  cl_int rc = CL_OUT_OF_HOST_MEMORY;
  /* Where events are kept, room for every one this replay may keep (its
   * members', the start marker's, the records'), before anything is
   * enqueued: cls__rec_drop would otherwise wait for an event in the
   * middle of the enqueue, which may be behind a user event the
   * program's own thread sets later. */
  if (!r->keep || cls__grow((void **)&r->kept, &r->capkept, r->nkept + run->n + run->nst + 1,
                            sizeof *r->kept, 8))
    rc = one ? one_queue_enqueue(call, r, ev) : compiled_enqueue(call, r, ev);
  atomic_fetch_sub_explicit(&r->held, 1, memory_order_release);
  return rc;
}

/* The foreign callback of a stream's record of a run over several
 * streams: the event of its last member on this stream, handed over --
 * unless it failed already, which cls_foreign_run would take for the
 * record's own failure at its enqueue (a second failure, and an error
 * left on a replay that returned CLS_OK): none then, and the record is a
 * marker behind the member on the in-order queue, found failed like any
 * command behind a failed one (the run's failure is found where the run
 * is, its event waiting for this one). */
cl_int cls__multi_record(const struct cls_foreign_call *call, cl_event *ev) {
  cl_event *last = call->data;
  if (cls__event_state(*last) < 0)
    return CL_SUCCESS; /* *last stays: cls__multi_after drops it */
  *ev = *last;
  *last = NULL;
  return CL_SUCCESS;
}

/* Whether the run's streams share one queue or have one each: the two
 * layouts a run is planned for (scheduler:sequential,queues=M with fewer
 * queues than the run's streams gives neither, and a replay there gave
 * other bytes than the program uncaptured: such a run goes command by
 * command). */
static bool one_or_apart(const cl_command_queue *q, size_t n) {
  size_t same = 0, pairs = 0;
  for (size_t a = 0; a < n; a++)
    for (size_t b = a + 1; b < n; b++, pairs++)
      same += q[a] == q[b];
  return same == 0 || same == pairs;
}

/* Before a run over several streams is handed to the command path on
 * its first member's stream s: each other stream, into st[], with its
 * queue now in the run's recording (1); 0 where one of them is no longer
 * on s's device (cls_stream_relocate), or where the streams' queues are
 * shared in part (one_or_apart): the run then goes command by command.
 * A driver that defers (the scheduler) hands what the other streams hold
 * to their queues now, before the run's members. */
int cls__multi_before(cls_context *ctx, struct run *r, struct cls__stream *s,
                      struct cls__stream **st) {
  cl_command_queue (*queue)(void *) = cls__factory_queue(ctx->pool.factory);
  int rc = CLS_OK;
  st[0] = s;
  for (size_t k = 1; k < r->nst; k++) {
    if (!(st[k] = cls__stream_get(ctx, r->sid[k], &rc)))
      return rc;
    if (st[k]->device != s->device || !st[k]->backend ||
        !(r->rec->qs[k] = queue(st[k]->backend)))
      return 0;
  }
  if (!s->backend || !(r->rec->qs[0] = queue(s->backend)) || !one_or_apart(r->rec->qs, r->nst))
    return 0;
  const struct cls_driver_ops *d = ctx->driver_ops;
  if (d->settle)
    for (size_t k = 1; k < r->nst; k++)
      d->settle(ctx->driver, &st[k]->pub, st[k]->submitted);
  return 1;
}

/* After the run went through the command path (`placed`: it took a
 * position, as a skip does; `ran`: it was accepted): a driver that
 * defers hands it over now, so that its members' events exist when the
 * records are; each other stream logs its record, with its last
 * member's event; and each member takes its position on its own stream
 * and counts there, as uncaptured. */
void cls__multi_after(cls_context *ctx, struct run *r, struct cls__stream **st, bool placed,
                      bool ran) {
  struct rec *rec = r->rec;
  struct cls__stream *s = st[0];
  const struct cls_driver_ops *d = ctx->driver_ops;
  if (d->settle)
    d->settle(ctx->driver, &s->pub, s->submitted);
  if (placed)
    s->issued += r->cnt[0] - 1;
  if (ran) {
    s->stats.enqueues += r->cnt[0] - 1;
    s->stats.launches += r->nl[0];
  }
  for (size_t k = 1; k < r->nst; k++) {
    struct cls__stream *sk = st[k];
    uint64_t pos = sk->issued, acc = sk->stats.enqueues;
    if (rec->last[k]) {
      /* Its record takes its last member's position; its failure, if
       * any, is the run's too, found where the run is. */
      sk->issued += r->cnt[k] - 1;
      struct cls_foreign_cmd fc = {
          .fn = cls__multi_record, .data = &rec->last[k], .label = r->label, .stream = r->sid[k]};
      struct cls__cmd rcmd = {.kind = CLS__CMD_FOREIGN, .op = "run", .stream = sk,
                              .kcmd = {.name = r->label}, .foreign = &fc};
      (void)cls__run(ctx, &rcmd, NULL, NULL);
      /* A driver that defers hands the record over now, while its event
       * is still the member's (the next replay's enqueue replaces it). */
      if (d->settle)
        d->settle(ctx->driver, &sk->pub, sk->submitted);
      if (rec->last[k]) { /* not handed over */
        cls__rec_drop(rec, rec->last[k]);
        rec->last[k] = NULL;
      }
    }
    sk->issued = pos + (placed ? r->cnt[k] : 0);
    sk->stats.enqueues = acc + (ran ? r->cnt[k] : 0);
    if (ran)
      sk->stats.launches += r->nl[k];
  }
}
