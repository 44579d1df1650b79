/* Ordering shared by every driver: which streams a command must be
 * ordered after, how it waits for them, and what a wait buys. */
#include "order/order.h"
#include "factory/fault.h"
#include "base/cmd.h"
#include "failure/poll.h"
#include "stream/pool.h"
#include "trace/trace.h"

/* The streams cmd's stream must be ordered after: bit t of the result is
 * set when command need[t] of stream t (or later) must come first.  Only
 * streams not already ordered that far are named. */
static uint64_t needs(const struct cls__cmd *cmd, uint64_t need[CLS_MAX_STREAMS]) {
  const struct cls__stream *s = cmd->stream;
  uint64_t mask = 0;
  for (size_t i = 0; i < cmd->nbind; i++) {
    const struct cls__slot *slot = cmd->bind[i].slot;
    int w = slot->writer;
    /* Reading or writing: after the last write. */
    if (w >= 0 && w != s->id && slot->write_seq > s->synced[w]) {
      if (!(mask & (1ull << w)) || slot->write_seq > need[w])
        need[w] = slot->write_seq;
      mask |= 1ull << w;
    }
    /* Writing: also after the reads since that write. */
    if (!(cmd->bind[i].access & CLS_WRITE) || !slot->read_mask)
      continue;
    for (uint64_t m = slot->read_mask & ~(1ull << s->id); m; m &= m - 1) {
      int r = __builtin_ctzll(m);
      if (slot->read_seq[r] <= s->synced[r])
        continue;
      if (!(mask & (1ull << r)) || slot->read_seq[r] > need[r])
        need[r] = slot->read_seq[r];
      mask |= 1ull << r;
    }
  }
  return mask;
}

void cls__order_synced(struct cls__stream *s, const struct cls__stream *p, uint64_t upto) {
  if (upto > s->synced[p->id]) {
    s->synced[p->id] = upto;
    s->synced_mask |= 1ull << p->id;
  }
  /* What p was ordered after, s now is too -- only when s is after all of
   * p's commands: p's waits may sit on a later command than `upto` (one
   * finished up to `upto` only, or a driver that has not handed the rest
   * to the queue yet). */
  if (upto < p->submitted)
    return;
  for (uint64_t m = p->synced_mask & ~(1ull << s->id); m; m &= m - 1) {
    int u = __builtin_ctzll(m);
    if (p->synced[u] > s->synced[u])
      s->synced[u] = p->synced[u];
  }
  s->synced_mask |= p->synced_mask & ~(1ull << s->id);
}

void cls__order_unsent(cl_uint nwait, const cl_event *wait) {
  if (nwait) {
    cls__fault_before_host_wait(nwait, wait); /* a gate of a test's loss opens first */
    clWaitForEvents(nwait, wait);             /* an error status ends the wait too */
  }
}

void cls__order_release_waits(struct cls__cmd *cmd) {
  for (cl_uint i = 0; i < cmd->nwait; i++)
    if (!(cmd->lent & (1ull << i)))
      clReleaseEvent(cmd->wait[i]);
  cmd->nwait = 0;
  cmd->lent = 0;
}

void cls__order_own(struct cls__cmd *cmd) {
  for (uint64_t m = cmd->lent; m; m &= m - 1)
    clRetainEvent(cmd->wait[__builtin_ctzll(m)]);
  cmd->lent = 0;
}

/* Whether the last command of p's queue, which cmd needs, is still
 * running, read from the event the factory lends for it without polling
 * p.  A wait on p's queue is on that event, or on a marker behind it (on
 * a queue cmd shares, there is no wait: the queue's order holds).
 * Polling reads p's oldest unfinished event first, and that is the command
 * the device is running: on PoCL the read then contends with the worker
 * thread finishing it, which cost the fan a fifth of its time.  The event
 * is only looked at, so any driver may borrow it. */
static bool last_running(cls_context *ctx, const struct cls__cmd *cmd, struct cls__stream *p,
                         const struct cls_driver_orderer *o, struct cls_driver *d, uint64_t need,
                         cl_event *ev) {
  if (!ctx->pool.last_event || need != (o->enqueued ? o->enqueued(d, &p->pub) : p->submitted))
    return false;
  void *q = o->backend_of ? o->backend_of(d, &p->pub) : o->queue_of(d, &cmd->stream->pub, &p->pub);
  *ev = q ? ctx->pool.last_event(q) : NULL;
  cl_int st;
  return *ev && cls__event_status(*ev, &st) && st > CL_COMPLETE;
}

/* Makes cmd wait for everything queue q (stream p's backend) has: the
 * factory's marker -- or its last command's event, lent, when cmd is
 * enqueued before p is asked anything else -- after a flush (the spec
 * requires it before another queue waits; rusticl hangs without).  F7 is
 * the caller's: p was polled just before, or its last event (`seen`, when
 * cmd may borrow it) read still running, so that event had not failed
 * then. */
static int wait_on(cls_context *ctx, struct cls__cmd *cmd, struct cls__stream *p, void *q,
                   uint64_t upto, bool may_borrow, cl_event seen) {
  struct cls__stream *s = cmd->stream;
  const struct cls_stream_factory *f = ctx->pool.factory;
  cl_event ev = seen;
  if (!may_borrow)
    ev = NULL;
  else if (!ev && ctx->pool.last_event)
    ev = ctx->pool.last_event(q);
  bool lent = ev != NULL;
  cl_int crc = lent ? CL_SUCCESS : f->marker(q, &ev);
  /* Several consumers of one producer state need one flush; a marker is a
   * command of its own, never flushed yet (rusticl: a queue waiting on an
   * unflushed marker hangs until something flushes the marker's queue). */
  bool flush = crc == CL_SUCCESS && (!lent || p->flushed != p->submitted);
  if (flush && (crc = f->flush(q)) != CL_SUCCESS && !lent)
    clReleaseEvent(ev);
  if (crc != CL_SUCCESS)
    return cls__error(CLS_ECL, crc, "ordering stream %d after stream %d failed: %s", s->id, p->id,
                      cls_cl_status_name(crc));
  p->stats.markers++;
  if (flush) {
    p->stats.flushes++;
    p->flushed = p->submitted;
  }
  if (lent)
    cmd->lent |= 1ull << cmd->nwait;
  cmd->wait[cmd->nwait++] = ev;
  s->stats.waits++;
  if (ctx->trace)
    cls__trace_wait(ctx->trace, p->id, s->id, upto);
  cls__order_synced(s, p, upto);
  cls__log(&ctx->logger, CLS_LOG_STREAMS, "stream %d waits for stream %d up to %llu", s->id, p->id,
           (unsigned long long)upto);
  return CLS_OK;
}

/* cls__order_after once needs() named streams (mask, need): apart, so
 * that the usual command, ordered after nothing new, costs the walk and
 * not this function's frame. */
static __attribute__((noinline)) int order_after(struct cls_driver *d, struct cls__cmd *cmd,
                                                 const struct cls_driver_orderer *o,
                                                 uint64_t mask, const uint64_t *need) {
  cls_context *ctx = d->ctx;
  struct cls__stream *s = cmd->stream;
  /* Learn of failures before waiting on anything (F7).  A stream already
   * known to have finished what cmd needs has reported those commands'
   * failures at that poll: nothing to learn or wait for there.  Nor is
   * there when what cmd needs is p's last command and its event (what
   * cmd will wait on) reads still running: it has not failed, and a
   * command before it that failed is found at a later poll (F8). */
  uint64_t before = cls__failures_minted(ctx);
  /* The events read running, by stream: the same ones a wait borrows (in
   * a driver that enqueues at once, p's prepare adds to p's queue before
   * its event is read and no other stream's adds to it -- each producer's
   * queue is its own -- and nothing drains p unless a failure is found,
   * which retries). */
  cl_event seen[CLS_MAX_STREAMS];
  uint64_t seen_mask = 0;
  for (uint64_t m = mask; m; m &= m - 1) {
    int t = __builtin_ctzll(m);
    struct cls__stream *p = cls__stream_peek(ctx, t);
    if (p->completed >= need[t])
      continue;
    if (o->prepare)
      o->prepare(d, &p->pub, need[t]);
    if (last_running(ctx, cmd, p, o, d, need[t], &seen[t])) {
      seen_mask |= 1ull << t;
      continue;
    }
    int rc = cls__stream_poll(ctx, p, false);
    if (rc < 0)
      return rc;
  }
  if (cls__failures_minted(ctx) != before)
    return CLS__RETRY;
  for (uint64_t m = mask; m; m &= m - 1) {
    int t = __builtin_ctzll(m);
    struct cls__stream *p = cls__stream_peek(ctx, t);
    if (p->completed >= need[t]) {
      cls__order_synced(s, p, p->completed); /* finished: no event needed */
      continue;
    }
    /* A marker (or a shared queue) orders s after what p's queue has:
     * with a driver that defers enqueues, not all p submitted. */
    uint64_t upto = o->enqueued ? o->enqueued(d, &p->pub) : p->submitted;
    void *q = o->queue_of(d, &s->pub, &p->pub);
    if (!q) {
      cls__order_synced(s, p, upto); /* one queue: its order is the order */
      continue;
    }
    int rc = wait_on(ctx, cmd, p, q, upto, o->enqueues_now,
                     seen_mask & (1ull << t) ? seen[t] : NULL);
    if (rc < 0) {
      cls__order_drop(cmd); /* synced[] counts on the waits taken so far */
      return rc;
    }
  }
  return CLS_OK;
}

int cls__order_after(struct cls_driver *d, struct cls__cmd *cmd, const struct cls_driver_orderer *o) {
  uint64_t need[CLS_MAX_STREAMS];
  cmd->nwait = 0;
  cmd->lent = 0;
  uint64_t mask = needs(cmd, need);
  return mask ? order_after(d, cmd, o, mask, need) : CLS_OK;
}

cl_uint cls__order_live_waits(const cl_event *w, size_t nw, cl_event *keep) {
  cl_uint n = 0;
  for (size_t i = 0; i < nw; i++) {
    cl_int st;
    if (cls__event_status(w[i], &st) && st < 0)
      continue;
    keep[n++] = w[i];
  }
  return n;
}
