/* Learning what finished: where failures found after the enqueue enter
 * the failure store (F8).  The driver polls a stream's backend; each
 * command it reports failed is replayed over the log (replay.c), once the
 * streams with earlier commands in flight have been polled too, and
 * entries known complete leave the log (log.c).  A report waits here for
 * the failures it names to settle. */
#include "failure/poll.h"
#include "failure/replay.h"
#include "failure/kept.h"
#include "trace/trace.h"
#include "stream/contract.h"
#include "base/cmd.h"
#include "base/handle.h"
#include "stream/pool.h"
#include "stream/deadline.h"
#include "util/settle.h"

#include <stdio.h>
#include <string.h>

/* A failure apply_later holds: command `seq` of `stream`, `status`. */
struct held {
  int stream;
  uint64_t seq;
  cl_int status;
};

/* Backends whose poll is running on this thread (a failure reported from
 * inside a poll has other streams polled first): never polled again until
 * it returns. */
static _Thread_local struct {
  size_t n;
  void *backend[CLS_MAX_STREAMS + 1];
  /* The write stamp of the oldest command whose failure waits for these
   * polls to be applied (UINT64_MAX: none). */
  uint64_t pending;
  /* Failures with the device's dependent status (quirk dependent_fails)
   * that a poll of another stream found while `pending` waited: applied
   * after it (flush_later), as a command failed behind it needs it
   * found first to name it (replay.c, queued_behind). */
  size_t nlater;
  struct held later[CLS_MAX_STREAMS];
  /* Streams whose poll cls__stream_poll has in progress: while one is,
   * its later failures may come before a held one in log order (a loss
   * after a completion fault, both of one poll), so the held failures
   * wait for that poll to return. */
  unsigned reporting;
} polling = {.pending = UINT64_MAX};

static bool is_polling(void *backend) {
  for (size_t i = 0; i < polling.n; i++)
    if (polling.backend[i] == backend)
      return true;
  return false;
}

/* Failures are applied in log order, not in the order polls find them: the
 * root of a failure found now may have run on the output of an earlier
 * command on another stream whose failure its poll has not reported yet
 * (the root waited for it, so it has finished).  Then that failure comes
 * first and the root counts as skipped on it.  So before applying a
 * failure, the other streams with earlier commands in flight are polled. */
static void poll_earlier(cls_context *ctx, size_t k) {
  struct cls__stream *rs = cls__stream_peek(ctx, cls__log_at(ctx, k)->stream);
  if (!rs || polling.n == CLS_MAX_STREAMS + 1)
    return;
  size_t mark = polling.n;
  uint64_t pending = polling.pending;
  polling.backend[polling.n++] = rs->backend;
  if (cls__log_at(ctx, k)->stamp < polling.pending)
    polling.pending = cls__log_at(ctx, k)->stamp;
  for (size_t i = 0; i < k && i < ctx->log.len; i++) {
    struct cls__log_entry *e = cls__log_at(ctx, i);
    struct cls__stream *p = cls__stream_peek(ctx, e->stream);
    if (e->kind == CLS__ENTRY_FAILED || e->kind == CLS__ENTRY_SKIPPED || !p ||
        p->completed >= e->seq || is_polling(p->backend) ||
        polling.n == CLS_MAX_STREAMS + 1)
      continue;
    polling.backend[polling.n++] = p->backend;
    uint64_t completed = p->completed;
    ctx->driver_ops->poll(ctx->driver, &p->pub, false);
    if (p->completed < completed)
      p->completed = completed;
  }
  polling.n = mark;
  polling.pending = pending;
}

/* poll_earlier for the oldest logged command of parts[0..n).  False when
 * none of them is logged: then there is nothing to replay (a blocking read
 * checks its own status).  The replay looks for it again: the polls may
 * have pruned the log's head. */
static bool poll_before(cls_context *ctx, const struct cls__range_part *parts, size_t n) {
  size_t k = cls__log_find(ctx, parts, n);
  if (k == ctx->log.len)
    return false;
  poll_earlier(ctx, k);
  return true;
}

/* poll_earlier for the newest logged command of parts[0..n): a range that
 * failed behind a failed event may have done so at any of its commands,
 * and the failure it was queued behind (replay.c) may be on a command
 * enqueued between its first and its last. */
static bool poll_before_last(cls_context *ctx, const struct cls__range_part *parts, size_t n) {
  size_t last = ctx->log.len;
  for (size_t i = 0; i < ctx->log.len; i++)
    if (cls__log_in(cls__log_at(ctx, i), parts, n))
      last = i;
  if (last == ctx->log.len)
    return false;
  poll_earlier(ctx, last);
  return true;
}

/* Whether command `seq` of `stream`, failed with the device's dependent
 * status, was found by a poll made for an older command's failure that
 * is not applied yet (poll_earlier polls a whole stream, and that
 * stream's later commands may have failed behind the older one): then it
 * waits for it (flush_later), else it could not name the failure it was
 * queued behind and would be reported as its own.  A failed range
 * (cls__stream_failed_parts) is not held: its record names its commands
 * ("one of ...") either way. */
static bool apply_later(cls_context *ctx, int stream, uint64_t seq, cl_int cl_status,
                        bool deferred) {
  if (polling.pending == UINT64_MAX || deferred || polling.nlater == CLS_MAX_STREAMS ||
      !cls__replay_dependent_status(ctx, cl_status))
    return false;
  size_t k = cls__log_find(ctx, &(struct cls__range_part){stream, seq, seq}, 1);
  if (k == ctx->log.len || cls__log_at(ctx, k)->stamp < polling.pending)
    return false;
  polling.later[polling.nlater++] = (struct held){stream, seq, cl_status};
  return true;
}

/* Command `seq` of `stream` failed with `cl_status` after its enqueue. */
static void failed(cls_context *ctx, int stream, uint64_t seq, cl_int cl_status, bool deferred) {
  if (apply_later(ctx, stream, seq, cl_status, deferred))
    return;
  if (poll_before(ctx, &(struct cls__range_part){stream, seq, seq}, 1))
    cls__replay_failed(ctx, stream, seq, cl_status, deferred);
}

/* The failures apply_later held, once the one they waited for is applied
 * and the poll that reported it has returned (by the outermost report:
 * no poll of polling's, nor of cls__stream_poll's, is in progress).  The
 * streams of the report's own poll, backends[0..n), are still in it: the
 * polls these make leave them alone. */
static void flush_later(cls_context *ctx, struct cls__stream *const *streams, size_t n) {
  if (polling.pending != UINT64_MAX || polling.reporting)
    return;
  size_t mark = polling.n;
  for (size_t i = 0; i < n && polling.n < CLS_MAX_STREAMS + 1; i++)
    if (streams[i]->backend && !is_polling(streams[i]->backend))
      polling.backend[polling.n++] = streams[i]->backend;
  for (size_t i = 0; i < polling.nlater; i++)
    failed(ctx, polling.later[i].stream, polling.later[i].seq, polling.later[i].status, false);
  polling.nlater = 0;
  polling.n = mark;
}

/* What waits for failures just applied: those apply_later held
 * (flush_later), then the commands that failed on their own before what
 * they were queued behind was found (replay.c, cls__replay_behind_found). */
static inline void after_failures(cls_context *ctx, struct cls__stream *const *streams,
                                  size_t n) {
  if (__builtin_expect(polling.nlater != 0, 0))
    flush_later(ctx, streams, n);
  if (__builtin_expect(ctx->log.nown != 0, 0))
    cls__replay_behind_found(ctx);
}

struct cls__failure *cls__poll_failed_as(cls_context *ctx, int stream, uint64_t seq,
                                         int status, const char *detail, cls_buffer wrote) {
  if (!poll_before(ctx, &(struct cls__range_part){stream, seq, seq}, 1))
    return NULL;
  return cls__replay_failed_as(ctx, stream, seq, status, detail, wrote);
}

/* Recovery under a driver that defers (the scheduler): a task of another
 * stream still in its list, ordered after the lost command at log index
 * k, would be handed to its queue with that wait dropped (the event
 * failed: F7), and would run on what the lost command never wrote, or
 * overwrite what it is to read.  Each later task that touches a buffer
 * the lost command touches (or such a task does) is withdrawn and kept,
 * to run again after it, in submission order (keep.c).  A task already
 * handed over waited on the lost one's event: it fails behind it. */
static __attribute__((noinline)) void hold_behind(cls_context *ctx, const struct cls__stream *s,
                                                  size_t k) {
  const struct cls_driver_ops *d = ctx->driver_ops;
  if (!d->withdraw)
    return;
  cls_buffer dirty[4 * CLS_MAX_ARGS];
  size_t nd = 0;
  struct cls__log_entry *x = cls__log_at(ctx, k);
  const struct cls__log_binding *xb = cls__log_bindings(ctx, x);
  for (size_t j = 0; j < x->nbind && nd < sizeof dirty / sizeof *dirty; j++)
    dirty[nd++] = xb[j].handle;
  for (size_t i = k + 1; i < ctx->log.len; i++) {
    struct cls__log_entry *e = cls__log_at(ctx, i);
    if (e->kind != CLS__ENTRY_RUN && e->kind != CLS__ENTRY_READ) /* a download is kept too */
      continue;
    const struct cls__log_binding *eb = cls__log_bindings(ctx, e);
    bool touches = false;
    for (size_t j = 0; j < e->nbind && !touches; j++)
      for (size_t m = 0; m < nd && !touches; m++)
        touches = eb[j].handle.bits == dirty[m].bits;
    if (!touches)
      continue;
    for (size_t j = 0; j < e->nbind && nd < sizeof dirty / sizeof *dirty; j++)
      dirty[nd++] = eb[j].handle;
    struct cls__stream *p = cls__stream_peek(ctx, e->stream);
    if (e->stream == x->stream || !p || p->completed >= e->seq || p->backend == s->backend ||
        is_polling(p->backend) || cls__keep_is_marked(ctx, e->stream, e->seq) ||
        !cls__keep_mark(ctx, e->stream, e->seq, NULL, 0))
      continue;
    if (!d->withdraw(ctx->driver, &p->pub, e->seq)) {
      cls__keep_unmark(ctx, e->stream, e->seq); /* handed over: it fails behind */
      continue;
    }
    p->stats.enqueues--; /* counted again when it runs again */
    p->stats.launches -= e->cmd == CLS__CMD_LAUNCH;
    ctx->losses_kept++;
  }
}

/* A failure that says the queue is lost, with relocation on: the command
 * takes the lost failure (F8 carries it), and the stream moves at the next
 * safe point (cls__relocate_lost: no driver call is then in progress). */
static __attribute__((noinline)) void lost(cls_context *ctx, struct cls__stream *s, uint64_t seq,
                                           cl_int status, bool deferred) {
  /* Recovery: a command the queue accepted and did not run is kept; it
   * runs again on the fresh queue at the next safe point (keep.c), within
   * the bound.  Its log entry goes as a finished one's. */
  char why[96] = "";
  if (ctx->recover && !deferred && cls__keep_mark(ctx, s->id, seq, why, sizeof why)) {
    const struct cls__log_entry *le = cls__log_oldest(ctx, s->id, seq - 1);
    bool logged = le && le->seq == seq;
    if (logged)
      hold_behind(ctx, s, (size_t)(le - cls__log_at(ctx, 0)) & (ctx->log.cap - 1));
    if (ctx->trace)
      cls__trace_failure(ctx->trace, "lost", s->id, logged ? cls__log_name(le) : "command",
                         logged ? le->position : 0,
                         "lost after its enqueue: runs again on a fresh queue");
    ctx->losses_kept++; /* an ordering in progress retries (cls__failures_minted) */
    ctx->lost_mask |= 1ull << s->id;
    return;
  }
  const struct cls__log_entry *e = cls__log_oldest(ctx, s->id, seq - 1);
  if (!e || e->seq != seq) {
    failed(ctx, s->id, seq, status, deferred);
  } else {
    bool launch = cls__log_launch(e);
    char detail[320];
    /* With recovery on, a deferred enqueue the lost queue refused is
     * here only once its driver stopped keeping it (past the bound); a
     * command lost after its enqueue, when it was not kept (a foreign
     * command: docs/devices.md) or is past the bound (`why`). */
    char not_replayed[96] = "";
    if (ctx->recover && deferred)
      snprintf(not_replayed, sizeof not_replayed,
               " (replay stopped: run again as often as the bound CLS_RECOVER=%u allows)",
               ctx->recover);
    else if (ctx->recover && why[0])
      snprintf(not_replayed, sizeof not_replayed, "%s", why);
    else if (ctx->recover)
      snprintf(not_replayed, sizeof not_replayed, " (not replayed: lost after its enqueue)");
    snprintf(detail, sizeof detail, "lost with stream %d generation %llu%s: %s of %s %s %s%s",
             s->id, (unsigned long long)s->generation, not_replayed,
             deferred ? "enqueue" : "command", launch ? e->kernel : e->op,
             deferred ? "failed:" : "failed after its enqueue with", cls_cl_status_name(status),
             deferred ? " (deferred)" : "");
    struct cls__failure *f =
        cls__poll_failed_as(ctx, s->id, seq, launch ? CLS_ELAUNCH : CLS_ECL, detail,
                            (cls_buffer){0});
    if (f) /* the status the queue gave, as an enqueue failure's record has it */
      f->cl_status = status;
    cls__failure_unref(f);
  }
  ctx->lost_mask |= 1ull << s->id;
}

/* A command run again after a loss failed, not lost (its inputs' bytes
 * may have gone with the lost device's memory): the old rule holds, and
 * the record says replay was tried and why it stopped. */
static __attribute__((noinline)) void failed_when_run_again(cls_context *ctx,
                                                            struct cls__stream *s, uint64_t seq,
                                                            cl_int status) {
  const struct cls__log_entry *e = cls__log_oldest(ctx, s->id, seq - 1);
  if (!e || e->seq != seq) {
    failed(ctx, s->id, seq, status, false);
    return;
  }
  bool launch = cls__log_launch(e);
  char detail[320];
  snprintf(detail, sizeof detail,
           "replay stopped: run again after a loss, it failed: command of %s failed after its "
           "enqueue with %s",
           launch ? e->kernel : e->op, cls_cl_status_name(status));
  struct cls__failure *f = cls__poll_failed_as(ctx, s->id, seq, launch ? CLS_ELAUNCH : CLS_ECL,
                                               detail, (cls_buffer){0});
  if (f)
    f->cl_status = status;
  cls__failure_unref(f);
}

static bool behind_lost(cl_int status) { return cls__behind_failed_status(status); }

/* Recovery: command `seq` of s failed behind another one.  If that one
 * was lost after its enqueue, this one runs again after it (it is marked,
 * true).  The lost one may not be found yet -- its stream comes later in
 * this poll of every stream -- so the streams with earlier commands in
 * flight are polled first, as before any failure is applied (F8). */
static bool behind_kept_loss(cls_context *ctx, struct cls__stream *s, uint64_t seq) {
  if (!ctx->keep.nlost)
    poll_before(ctx, &(struct cls__range_part){s->id, seq, seq}, 1);
  return ctx->keep.nlost && cls__keep_mark(ctx, s->id, seq, NULL, 0);
}

/* Recovery off: a command of s that a device failed behind a lost one
 * with the loss's own status (rusticl, oclgrind: quirk dependent_fails,
 * the event's status passed on) did not lose s's queue; where the log
 * shows it queued behind a loss found before, it counts as skipped on
 * that loss (replay.c).  With recovery on, lost() keeps it and it runs
 * again, as a command of a lost queue. */
static bool behind_loss_passed_on(cls_context *ctx, struct cls__stream *s, uint64_t seq,
                                  cl_int status, bool deferred) {
  /* The streams with earlier commands first: the loss may not be found
   * yet (F8 order). */
  return !ctx->recover && !deferred &&
         poll_before(ctx, &(struct cls__range_part){s->id, seq, seq}, 1) &&
         cls__replay_failed_behind(ctx, s->id, seq, status);
}

void cls__stream_failed(cls_context *ctx, struct cls__stream *s, uint64_t seq, cl_int status,
                        bool deferred) {
  if (__builtin_expect(ctx->keep.len != 0, 0))
    cls__keep_failed(ctx, s->id, seq, seq); /* it did not run: it never follows (keep.c) */
  s->failed_seq = seq;
  s->failed_first = seq;
  s->failed_status = status;
  s->failed_ranged = false;
  if (__builtin_expect(ctx->relocate != 0, 0) && cls__lost_status(status)) {
    if (!behind_loss_passed_on(ctx, s, seq, status, deferred))
      lost(ctx, s, seq, status, deferred);
  } else if (__builtin_expect(ctx->keep.len != 0, 0) && behind_lost(status) &&
           behind_kept_loss(ctx, s, seq))
    ctx->losses_kept++; /* failed behind a lost command: runs again after it */
  else if (__builtin_expect(ctx->keep.len != 0, 0) && !deferred &&
           cls__keep_replays(ctx, s->id, seq))
    failed_when_run_again(ctx, s, seq, status);
  else {
    if (__builtin_expect(ctx->keep.len != 0, 0) && behind_lost(status))
      cls__keep_behind(ctx, s->id, seq); /* a loss found later may be why */
    failed(ctx, s->id, seq, status, deferred);
  }
  after_failures(ctx, &s, 1);
}

void cls__stream_failed_parts(cls_context *ctx, struct cls__stream *const *streams,
                              const uint64_t *first, const uint64_t *last, size_t n,
                              cl_int status) {
  struct cls__range_part parts[CLS_MAX_STREAMS];
  char lost_as[80] = "";
  size_t m = 0;
  for (size_t i = 0; i < n && m < CLS_MAX_STREAMS; i++) {
    struct cls__stream *s = streams[i];
    s->failed_seq = last[i];
    s->failed_first = first[i];
    s->failed_status = status;
    s->failed_ranged = true;
    if (__builtin_expect(ctx->keep.len != 0, 0))
      cls__keep_failed(ctx, s->id, first[i], last[i]);
    parts[m++] = (struct cls__range_part){s->id, first[i], last[i]};
    if (__builtin_expect(ctx->relocate != 0, 0) && cls__lost_status(status)) {
      if (!lost_as[0])
        snprintf(lost_as, sizeof lost_as, "lost with stream %d generation %llu: ", s->id,
                 (unsigned long long)s->generation);
      ctx->lost_mask |= 1ull << s->id;
    }
  }
  if (cls__replay_dependent_status(ctx, status) ? poll_before_last(ctx, parts, m)
                                                 : poll_before(ctx, parts, m))
    cls__replay_failed_parts(ctx, parts, m, status, lost_as);
  after_failures(ctx, streams, n);
}

void cls__stream_failed_range(cls_context *ctx, struct cls__stream *s, uint64_t first,
                              uint64_t last, cl_int status) {
  cls__stream_failed_parts(ctx, &s, &first, &last, 1, status);
}

/* The wait ran out: the oldest command of s still unfinished takes a
 * CLS_ETIMEDOUT failure (once), as if it had failed: F8 replays it. */
static int timed_out(cls_context *ctx, struct cls__stream *s, uint64_t waited_ns) {
  /* No poll to learn what did finish: rusticl answers a status query of a
   * running command only once it has finished.  The command blamed is the
   * oldest not known finished. */
  s->hung = true;
  char detail[CLS__MESSAGE_MAX];
  const struct cls__log_entry *e = cls__log_oldest(ctx, s->id, s->completed);
  if (!e) {
    snprintf(detail, sizeof detail, "stream %d has not finished after %.3f s (CLS_SYNC_TIMEOUT)",
             s->id, (double)waited_ns / 1e9);
    return cls__error(CLS_ETIMEDOUT, 0, "%s", detail);
  }
  bool launch = e->kernel[0] && cls__log_launch(e);
  snprintf(detail, sizeof detail,
           "%s%s%s%s on stream %d at position %llu has not finished after %.3f s "
           "(CLS_SYNC_TIMEOUT)",
           e->op, launch ? " of '" : "", launch ? e->kernel : "", launch ? "'" : "", s->id,
           (unsigned long long)e->position, (double)waited_ns / 1e9);
  if (s->timed_out_seq != e->seq) { /* the same command is not failed twice */
    s->timed_out_seq = e->seq;
    cls__failure_unref(
        cls__poll_failed_as(ctx, s->id, e->seq, CLS_ETIMEDOUT, detail, (cls_buffer){0}));
    after_failures(ctx, &s, 1);
  }
  return cls__error(CLS_ETIMEDOUT, 0, "%s", detail);
}

/* Deadline mode: everything submitted to s so far, handed to its queue,
 * waited for at most the context's timeout. */
static int wait_for(cls_context *ctx, struct cls__stream *s) {
  const struct cls_driver_ops *d = ctx->driver_ops;
  const struct cls_stream_factory *f = ctx->pool.factory;
  if (d->settle)
    d->settle(ctx->driver, &s->pub, s->submitted);
  f->flush(s->backend);
  cl_event ev = NULL;
  cl_int crc = f->marker(s->backend, &ev);
  if (crc != CL_SUCCESS)
    return cls__error(CLS_ECL, crc, "stream %d: a marker to wait on failed: %s", s->id,
                      cls_cl_status_name(crc));
  if (!ev)
    return CLS_OK; /* nothing to wait for */
  uint64_t t0 = cls__now_ns();
  int rc = cls__wait_event_for(ev, ctx->sync_timeout_ns);
  if (rc == 1)
    return timed_out(ctx, s, cls__now_ns() - t0);
  if (rc == CLS_OK)
    s->hung = false;
  return rc;
}

int cls__stream_poll(cls_context *ctx, struct cls__stream *s, bool wait) {
  if (!s->backend)
    return CLS_OK; /* no queue left to ask (a failed relocation): nothing runs there */
  if (wait && ctx->sync_timeout_ns) {
    if (s->completed >= s->submitted) {
      /* Known finished, failures reported: nothing to poll (a poll could
       * block on a queue another stream's running command shares). */
      if (ctx->hooks.polled)
        ctx->hooks.polled(ctx);
      after_failures(ctx, NULL, 0); /* guard mode's failures may have held some */
      cls__log_prune(ctx);
      return CLS_OK;
    }
    int wrc = wait_for(ctx, s);
    if (wrc < 0)
      return wrc; /* the queue may still be busy: no waiting poll */
    /* s's work has finished; a waiting poll would also wait for what
     * other streams sharing its queue put there (a stream that timed out:
     * scheduler:interleave). */
    wait = false;
  }
  polling.reporting++;
  int rc = ctx->driver_ops->poll(ctx->driver, &s->pub, wait);
  polling.reporting--;
  if (__builtin_expect(rc != CLS_OK, 0))
    rc = cls__driver_status(ctx, "poll", rc);
  if (ctx->hooks.polled)
    ctx->hooks.polled(ctx); /* guard mode: before the log forgets the launches checked */
  after_failures(ctx, NULL, 0); /* held by this poll, or by guard mode's failures */
  cls__log_prune(ctx);
  if (ctx->keep.len)
    cls__keep_prune(ctx);
  return rc;
}

int cls__poll_all(cls_context *ctx, bool wait) {
  struct cls__stream_pool *pool = &ctx->pool;
  int ret = CLS_OK;
  for (int i = 0; i < pool->nstreams; i++)
    if (pool->streams[i].created) {
      int rc = cls__stream_poll(ctx, &pool->streams[i], wait);
      if (rc < 0 && ret == CLS_OK)
        ret = rc;
    }
  return ret;
}

void cls__poll_settle(cls_context *ctx, const cls_buffer *handles, size_t n) {
  size_t last = ctx->log.len;
  for (size_t i = 0; i < ctx->log.len; i++) {
    const struct cls__log_entry *e = cls__log_at(ctx, i);
    if (e->kind == CLS__ENTRY_SKIPPED || e->cause)
      last = i;
    else if (e->kind == CLS__ENTRY_RUN ||
             (e->kind == CLS__ENTRY_FAILED && !cls__log_writes_only(e)))
      /* The root of a failure reported here?  Found after its enqueue, or
       * its enqueue failed: either way an input's producer logged before
       * it may have failed too, and would decide. */
      for (size_t j = 0; j < n; j++) {
        const struct cls__slot *slot = cls__resolve(ctx, handles[j]);
        const struct cls__failure *f = slot ? slot->failure : NULL;
        if (f && f != &cls__never_written && (f->async || e->kind == CLS__ENTRY_FAILED) &&
            f->stream == e->stream && f->position == e->position) {
          last = i; /* an input's producer logged before it may have failed too */
          break;
        }
      }
  }
  if (last == ctx->log.len)
    return;
  uint64_t streams = 0;
  const uint64_t before = cls__log_at(ctx, last)->stamp;
  for (size_t i = 0; i < ctx->log.len; i++) {
    const struct cls__log_entry *e = cls__log_at(ctx, i);
    if (e->kind != CLS__ENTRY_RUN && e->kind != CLS__ENTRY_READ)
      continue;
    /* After `last`: a command run again after a loss, which in program
     * order came before it (its origin, kept.h). */
    uint64_t origin = i < last || !ctx->keep.len ? 0 : cls__keep_origin(ctx, e->stream, e->seq);
    if (i < last || (origin && origin < before))
      streams |= 1ull << e->stream;
  }
  /* Each poll may prune the log: the streams are chosen first. */
  for (; streams; streams &= streams - 1) {
    struct cls__stream *p = cls__stream_peek(ctx, __builtin_ctzll(streams));
    if (p && cls__stream_poll(ctx, p, true) < 0)
      return; /* a deadline ran out: the report says what is known */
  }
}
