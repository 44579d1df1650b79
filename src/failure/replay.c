/* F8: what a failure found after the enqueue does to the log.
 *
 * Commands still in flight are logged in submission order (log.c), across
 * streams.  When command k is found failed, the log after k is replayed
 * over a set of buffers: k's write set is tainted; a later command that
 * ran reading a tainted buffer "ran on untrusted input" and its writes
 * join the set; a later write that read nothing tainted (or a skip, whose
 * writes carry another known failure) takes its buffers out.  What is
 * left in the set takes the failure: the same state as if the failure had
 * been known at enqueue time.  A skip is logged only when a replay may
 * still move it, or when it overwrites what a logged command wrote: every
 * write carries a context-wide stamp, and a buffer left in the set takes
 * the failure only if its last write is still the one the replay saw.
 * Nothing here polls: the callers do first (poll.c: failures are applied
 * in log order, not in the order polls find them), and poll when an entry
 * logged here fills the log. */
#include "failure/replay.h"
#include "failure/kept.h"
#include "device/quirks.h"
#include "base/cmd.h"
#include "base/handle.h"
#include "stream/pool.h"
#include "trace/trace.h"

#include <stdlib.h>
#include <string.h>

/* The replay's buffer set: handles (a buffer freed since its write still
 * taints what read it before the free) with the stamp of the logged write
 * that put each in. */
static bool set_has(cls_context *ctx, size_t n, cls_buffer h) {
  for (size_t i = 0; i < n; i++)
    if (ctx->taint_set[i].handle.bits == h.bits)
      return true;
  return false;
}

static size_t set_add(cls_context *ctx, size_t n, cls_buffer h, uint64_t stamp) {
  for (size_t i = 0; i < n; i++)
    if (ctx->taint_set[i].handle.bits == h.bits) {
      ctx->taint_set[i].stamp = stamp;
      return n;
    }
  if (!cls__grow((void **)&ctx->taint_set, &ctx->taint_cap, n + 1, sizeof *ctx->taint_set, 64))
    return n; /* out of memory: this buffer keeps its state */
  ctx->taint_set[n].handle = h;
  ctx->taint_set[n].stamp = stamp;
  return n + 1;
}

static size_t set_remove(cls_context *ctx, size_t n, cls_buffer h) {
  for (size_t i = 0; i < n; i++)
    if (ctx->taint_set[i].handle.bits == h.bits) {
      ctx->taint_set[i] = ctx->taint_set[n - 1];
      return n - 1;
    }
  return n;
}

/* The first binding of e (argument order) that reads the set, or -1. */
static int first_read_in_set(cls_context *ctx, size_t n, struct cls__log_entry *e) {
  const struct cls__log_binding *b = cls__log_bindings(ctx, e);
  for (size_t i = 0; i < e->nbind; i++) {
    if ((b[i].access & CLS_READ) && set_has(ctx, n, b[i].handle))
      return (int)i;
  }
  return -1;
}

static size_t writes_join(cls_context *ctx, size_t n, struct cls__log_entry *e, bool join,
                          const struct cls__failure *f) {
  const struct cls__log_binding *b = cls__log_bindings(ctx, e);
  for (size_t i = 0; i < e->nbind; i++) {
    if (!(b[i].access & CLS_WRITE))
      continue;
    if (join)
      n = set_add(ctx, n, b[i].handle, e->stamp);
    else if (cls__write_keeps(b[i].access, f)) /* F4 under ranges: part of it stays */
      n = set_has(ctx, n, b[i].handle) ? set_add(ctx, n, b[i].handle, e->stamp) : n;
    else
      n = set_remove(ctx, n, b[i].handle);
  }
  return n;
}

/* The writes of a root placed at its origin (skips_since_origin) back in
 * the set where a later write took them out, with its stamp (the buffer
 * takes f only if nothing wrote it since that run); a buffer a later skip
 * carried f on keeps that skip's stamp, the write the buffer shows now
 * (core/keep.c puts a later command's record and stamp back after a run
 * again): restamped, it would be left clean of f and of the record the
 * skip moved from (context 0x3474736ed5638251). */
static size_t writes_rejoin(cls_context *ctx, size_t n, struct cls__log_entry *e) {
  const struct cls__log_binding *b = cls__log_bindings(ctx, e);
  for (size_t i = 0; i < e->nbind; i++)
    if ((b[i].access & CLS_WRITE) && !set_has(ctx, n, b[i].handle))
      n = set_add(ctx, n, b[i].handle, e->stamp);
  return n;
}

/* Skip chains under F8 moves.  A chain is kept in write-stamp order and
 * run-length encoded as if every failure had been known at the enqueue:
 * an entry is a run of consecutive launches of one kernel on one stream.
 * A launch a replay may still move (its log entry counts on the failure:
 * e->cause) is a member of a run; the members of a run after one still in
 * the log are in the log too (it is pruned from its head), so a run is cut
 * or re-anchored from the log, with nothing stored per launch (F10). */
static int member_kind(const struct cls__log_entry *e) {
  return e->kind == CLS__ENTRY_RUN ? CLS_SKIP_UNTRUSTED : CLS_SKIP_SKIPPED;
}

/* Launches of this process (origin 0) only, unless `origin` says another:
 * entries of different ranks never merge, whatever their streams. */
static bool same_run_of(const struct cls__skip *s, int origin, int kind, int stream,
                        const char *name) {
  return s->origin == origin && s->kind == kind && s->stream == stream &&
         strncmp(s->kernel, name, CLS__NAME_MAX - 1) == 0;
}
static bool same_run(const struct cls__skip *s, int kind, int stream, const char *name) {
  return same_run_of(s, 0, kind, stream, name);
}

/* The logged members of f's run s with a stamp in (lo, hi]: how many, the
 * first's stamp and position, the last's stamp. */
static uint64_t members(cls_context *ctx, const struct cls__failure *f, const struct cls__skip *s,
                        uint64_t lo, uint64_t hi, uint64_t *first, uint64_t *pos,
                        uint64_t *last) {
  uint64_t n = 0;
  for (size_t i = 0; i < ctx->log.len; i++) {
    const struct cls__log_entry *e = cls__log_at(ctx, i);
    if (e->cause != f || e->kind == CLS__ENTRY_READ || e->stamp <= lo || e->stamp > hi ||
        !same_run(s, member_kind(e), e->stream, cls__log_name(e)))
      continue;
    if (!n++) {
      *first = e->stamp;
      *pos = e->position;
    }
    *last = e->stamp;
  }
  return n;
}

static void chain_cut(struct cls__failure *f, size_t i) {
  memmove(&f->skips[i], &f->skips[i + 1], (f->nskips - i - 1) * sizeof f->skips[0]);
  f->nskips--;
}

/* Runs i and i+1 are one run once what stood between them left. */
static void chain_join(struct cls__failure *f, size_t i) {
  if (i + 1 >= f->nskips)
    return;
  struct cls__skip *a = &f->skips[i], *b = &f->skips[i + 1];
  if (!same_run_of(a, b->origin, b->kind, b->stream, b->kernel) || (a->movable && !b->movable))
    return; /* b's launches the log does not know would follow a first that may leave */
  a->count += b->count;
  a->last = b->last;
  chain_cut(f, i + 1);
}

static void chain_insert(cls_context *ctx, struct cls__failure *f, int kind, const char *name,
                         int stream, uint64_t position, uint64_t stamp) {
  f->skipped++;
  size_t i = f->nskips;
  while (i && f->skips[i - 1].stamp > stamp)
    i--;
  struct cls__skip *prev = i ? &f->skips[i - 1] : NULL;
  if (prev && prev->last > stamp && !same_run(prev, kind, stream, name)) {
    /* Inside another run: cut it in two around the launch. */
    uint64_t first = 0, pos = 0, last = 0;
    uint64_t n = members(ctx, f, prev, stamp, prev->last, &first, &pos, &last);
    if (n && n < prev->count && f->nskips + 2 <= CLS__MAX_SKIP_ENTRIES) {
      memmove(&f->skips[i + 2], &f->skips[i], (f->nskips - i) * sizeof f->skips[0]);
      f->nskips += 2;
      struct cls__skip *tail = &f->skips[i + 1];
      *tail = *prev;
      tail->count = n;
      tail->stamp = first;
      tail->position = pos;
      tail->movable = true; /* its members are the logged ones members() found */
      prev->count -= n;
      prev->last = stamp - 1;
      struct cls__skip *e = &f->skips[i];
      *e = (struct cls__skip){.key = name, .kind = kind, .stream = stream,
                              .position = position, .count = 1, .stamp = stamp, .last = stamp,
                              .movable = true};
      cls__copy_name(e->kernel, name);
      return;
    }
  }
  if (prev && same_run(prev, kind, stream, name)) {
    prev->count++;
    if (prev->last < stamp)
      prev->last = stamp;
    chain_join(f, i - 1);
    return;
  }
  if (i < f->nskips && same_run(&f->skips[i], kind, stream, name) && f->skips[i].movable) {
    f->skips[i].count++; /* its new first launch (the run's others are logged too) */
    f->skips[i].stamp = stamp;
    f->skips[i].position = position;
    return;
  }
  if (f->nskips == CLS__MAX_SKIP_ENTRIES) {
    f->dropped++;
    return;
  }
  memmove(&f->skips[i + 1], &f->skips[i], (f->nskips - i) * sizeof f->skips[0]);
  f->nskips++;
  struct cls__skip *e = &f->skips[i];
  *e = (struct cls__skip){.key = name, .kind = kind, .stream = stream, .position = position,
                          .count = 1, .stamp = stamp, .last = stamp, .movable = true};
  cls__copy_name(e->kernel, name);
}

/* Log entry e, counted on its cause, leaves that failure's chain. */
static void chain_remove(cls_context *ctx, const struct cls__log_entry *e, int kind) {
  struct cls__failure *f = e->cause;
  const char *name = cls__log_name(e);
  for (size_t i = 0; i < f->nskips; i++) {
    struct cls__skip *s = &f->skips[i];
    if (e->stamp < s->stamp || e->stamp > s->last || !same_run(s, kind, e->stream, name))
      continue;
    f->skipped--;
    if (s->count <= 1) {
      chain_cut(f, i);
      if (i)
        chain_join(f, i - 1);
      return;
    }
    s->count--;
    uint64_t first = 0, pos = 0, last = 0;
    if (e->stamp == s->stamp && members(ctx, f, s, e->stamp, s->last, &first, &pos, &last)) {
      s->stamp = first;
      s->position = pos;
    } else if (e->stamp == s->last) {
      s->last = members(ctx, f, s, s->stamp - 1, e->stamp - 1, &first, &pos, &last) ? last
                                                                                   : s->stamp;
    }
    return;
  }
  if (f->dropped) { /* it was past the stored entries */
    f->dropped--;
    f->skipped--;
  }
}


/* Whether the driver dropped e's command before it reached the backend
 * (a deferring driver's task list): then it never ran. */
static bool withdrawn(cls_context *ctx, const struct cls__log_entry *e,
                      const struct cls__failure *f) {
  const struct cls_driver_ops *d = ctx->driver_ops;
  struct cls__stream *s = cls__stream_peek(ctx, e->stream);
  if (!d->withdraw || !s || s->completed >= e->seq || !d->withdraw(ctx->driver, &s->pub, e->seq))
    return false;
  /* Counted as a skip, as the event driver counts it, not as accepted. */
  s->stats.skips++;
  s->stats.enqueues--;
  s->stats.launches -= e->cmd == CLS__CMD_LAUNCH;
  if (ctx->trace)
    cls__trace_skip(ctx->trace, s->id, cls__log_name(e), e->position, f->message);
  return true;
}

/* Logged command e (its chain entry of kind `prior`) counts on f from
 * binding first_in on, as a `kind` of f's chain. */
static void count_on(cls_context *ctx, struct cls__log_entry *e, struct cls__failure *f,
                     int first_in, int prior, int kind) {
  /* Guard mode's own copy of a CLS_IN buffer counts on f as any reader
   * does, but the chain, which tells the user what f reached, leaves it
   * out: it wrote no buffer of theirs, and shares the next command's
   * position. */
  bool shown = !(e->cmd == CLS__CMD_COPY && strcmp(e->op, CLS__OP_GUARD_COPY) == 0);
  if (e->cause) {
    if (shown)
      chain_remove(ctx, e, prior);
    cls__failure_unref(e->cause);
  } else {
    ctx->log.causes++;
  }
  e->cause = f;
  cls__failure_ref(f);
  e->cause_arg = (unsigned char)first_in;
  if (shown)
    chain_insert(ctx, f, kind, cls__log_name(e), e->stream, e->position, e->stamp);
}

/* Root of f at log index k is a command run again after a loss
 * (core/keep.c), first submitted with write stamp `origin`: in program
 * order its failure is the lost command's, so it comes before what was
 * submitted between the two.  Of those, a skip made in its call on a
 * later input (CLS__ENTRY_SKIPPED) that reads what the root writes
 * through an earlier (or the same) argument counts on f (F8's argument
 * order), and its writes carry f on; any other command that wrote a
 * buffer of the set overwrote it.  A command run again before the root
 * that was first submitted before it (cls__keep_placed) comes before it
 * in program order too, wherever its run stands in the log: the root
 * overwrote what it wrote (found by the model, CLS_MODEL_LATE=1, context
 * 0x3474736ed5638251: set_s2 and add_s1, run again before an upload of
 * the buffer they write, took the upload's buffer out of the set, and
 * add_s2, skipped on a later input, moved to the upload's failure while
 * what it writes kept the other one).  Those that ran are left to the
 * walk from k: what read the root's buffers ran again after it, or
 * failed behind it.  The set after them (ctx->taint_set), its size. */
static size_t skips_since_origin(cls_context *ctx, size_t k, uint64_t origin,
                                 struct cls__failure *f) {
  size_t n = writes_join(ctx, 0, cls__log_at(ctx, k), true, f);
  for (size_t i = 0; i < k && n; i++) {
    struct cls__log_entry *e = cls__log_at(ctx, i);
    if (e->stamp <= origin || cls__keep_placed(ctx, e->stamp) <= origin)
      continue;
    int first_in = e->kind == CLS__ENTRY_SKIPPED && e->cause != f
                       ? first_read_in_set(ctx, n, e)
                       : -1;
    if (first_in > e->cause_arg)
      first_in = -1; /* an earlier input's failure decides */
    if (first_in >= 0)
      count_on(ctx, e, f, first_in, CLS_SKIP_SKIPPED, CLS_SKIP_SKIPPED);
    n = writes_join(ctx, n, e, first_in >= 0, f);
  }
  return n;
}

/* Failure f of one of the logged commands of parts[0..n) (one command
 * exactly; ranged, F8a, any of a range, on a queue streams share any of
 * each stream's part), the oldest at log position k: their write sets and
 * what ran on them take f, as if f had been known at k's enqueue.
 * root_failed: k is f's root (traced as a failure), not a command
 * skipped behind it (skipped_behind). */
static void replay(cls_context *ctx, size_t k, struct cls__failure *f,
                   const struct cls__range_part *parts, size_t nparts, bool root_failed) {
  struct cls__log_entry *root = cls__log_at(ctx, k);
  if (ctx->trace && root_failed) /* else skipped_behind traces it as a skip */
    cls__trace_failure(ctx->trace, "failure", root->stream,
                       cls__log_launch(root) ? root->kernel : root->op, root->position,
                       f->message);
  if (root->cause && nparts == 1 && parts[0].last == root->seq) {
    /* It ran on the output of a failure found before this one: had that
     * been known at its enqueue it would have been skipped, so its outputs
     * keep that failure (logged above, this one taints nothing). */
    return;
  }
  /* The log after the root, over the set of buffers that carry f: a
   * command that read one ran on untrusted input.  Which failure it counts
   * on is decided by argument order, never by the order failures are
   * found in: a command already counted on another failure moves to f
   * only when f reaches it through an earlier input (or the same one, now
   * carrying f); else it keeps its failure and its writes leave the set. */
  size_t n = 0;
  uint64_t origin = ctx->keep.len && nparts == 1 && parts[0].first == parts[0].last
                        ? cls__keep_origin(ctx, root->stream, root->seq)
                        : 0;
  bool placed = origin && origin < root->stamp;
  if (placed)
    n = skips_since_origin(ctx, k, origin, f);
  for (size_t i = k; i < ctx->log.len; i++) {
    struct cls__log_entry *e = cls__log_at(ctx, i);
    if (cls__log_in(e, parts, nparts) && !e->cause) {
      /* A root (of a range, any of them may be it).  One that ran on the
       * output of a failure found before this one is handled as any later
       * command below: it keeps that failure unless f reaches it first. */
      if (e->read && !e->read->failure) {
        e->read->failure = f;
        cls__failure_ref(f);
      }
      if (placed)
        n = writes_rejoin(ctx, n, e);
      else
        n = writes_join(ctx, n, e, true, f);
      continue;
    }
    int first_in = first_read_in_set(ctx, n, e);
    if (first_in >= 0 && e->cause && first_in > e->cause_arg)
      first_in = -1; /* an earlier input's failure decides */
    if (e->kind == CLS__ENTRY_READ) {
      if (first_in >= 0 && e->read && e->read->failure != f) {
        cls__failure_unref(e->read->failure);
        e->read->failure = f;
        cls__failure_ref(f);
        ctx->log.causes += !e->cause;
        cls__failure_unref(e->cause);
        e->cause = f;
        cls__failure_ref(f);
        e->cause_arg = (unsigned char)first_in;
      }
      continue;
    }
    if (first_in >= 0) {
      /* Had f been known at its enqueue, it would not have been tried: a
       * command whose enqueue failed, or that was skipped, counts as
       * skipped on f, as does one the driver had not handed to its backend
       * yet and drops; one that ran, as untrusted. */
      int prior = member_kind(e), kind = CLS_SKIP_SKIPPED;
      if (e->kind == CLS__ENTRY_RUN && withdrawn(ctx, e, f))
        e->kind = CLS__ENTRY_SKIPPED; /* never runs: a later replay moves it as a skip */
      else if (e->kind == CLS__ENTRY_RUN)
        kind = CLS_SKIP_UNTRUSTED;
      count_on(ctx, e, f, first_in, prior, kind);
    }
    n = writes_join(ctx, n, e, first_in >= 0, f);
  }
  for (size_t i = 0; i < n; i++) {
    struct cls__slot *slot = cls__resolve(ctx, ctx->taint_set[i].handle);
    if (slot && slot->write_stamp == ctx->taint_set[i].stamp) /* freed: nobody reads it */
      cls__slot_set_failure(slot, f);
  }
}

/* Where logged command e stands, for its record. */
static struct cls__cmd_at at_of(const struct cls__log_entry *e) {
  return (struct cls__cmd_at){.stream = e->stream, .kind = e->cmd, .position = e->position,
                              .stamp = e->stamp, .op = e->op,
                              .kernel = cls__log_launch(e) ? e->kernel : ""};
}

/* f was found on the logged commands of parts[0..n), from log index k:
 * each stream's part is what a command failed behind it was queued
 * behind (queued_behind).  A failure the device saw (a launch's or a
 * transfer's, a loss), not a deadline's or guard mode's. */
static void note_found(cls_context *ctx, const struct cls__range_part *parts, size_t n, size_t k,
                       struct cls__failure *f) {
  if (f->status != CLS_ELAUNCH && f->status != CLS_ECL)
    return;
  for (size_t p = 0; p < n; p++) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = k; i < ctx->log.len; i++) {
      const struct cls__log_entry *e = cls__log_at(ctx, i);
      if (!cls__log_in(e, &parts[p], 1))
        continue;
      lo = e->stamp < lo ? e->stamp : lo;
      hi = e->stamp > hi ? e->stamp : hi;
    }
    if (!hi)
      continue;
    struct cls__found *x = ctx->log.found[parts[p].stream];
    /* Noted again in the same moment (a range failed behind f, its
     * commands noted one by one: range_behind): what it holds grows, or
     * a command noted before would lose its record, and what was queued
     * behind it would fail on its own (found by the model, CLS_PRECISE=0,
     * context 0xb8001247c56e39dc under event and sequential). */
    if (x[0].f == f && x[0].known == ctx->stamp) {
      x[0].lo = lo < x[0].lo ? lo : x[0].lo;
      x[0].hi = hi > x[0].hi ? hi : x[0].hi;
      continue;
    }
    if (x[0].f != f) { /* else found again: its record, anew */
      cls__failure_ref(f); /* first: the record dropped below may be f's last holder */
      if (x[CLS__FOUND - 1].f) {
        cls__failure_unref(x[CLS__FOUND - 1].f);
        ctx->log.nfound--;
      }
      memmove(x + 1, x, (CLS__FOUND - 1) * sizeof *x);
      ctx->log.nfound++;
    }
    x[0] = (struct cls__found){.f = f, .lo = lo, .hi = hi, .known = ctx->stamp};
  }
}

/* Whether a command logged between entries i and k that was enqueued
 * and not (yet) found failed writes buffer h.  A command is ordered after
 * a buffer's last write, so where i wrote h, k waited for that command,
 * not for i: had i failed, a device failing that one behind it would be
 * found failed itself (and counted so, as a skip behind i's failure). */
static bool written_between(cls_context *ctx, size_t i, size_t k, cls_buffer h) {
  for (size_t j = i + 1; j < k; j++) {
    struct cls__log_entry *w = cls__log_at(ctx, j);
    if (w->kind != CLS__ENTRY_RUN)
      continue;
    const struct cls__log_binding *wb = cls__log_bindings(ctx, w);
    for (size_t b = 0; b < w->nbind; b++)
      if (wb[b].handle.bits == h.bits && (wb[b].access & CLS_WRITE))
        return true;
  }
  return false;
}

/* Whether entries i and k touch one buffer, one of them writing it (the
 * later waited for the earlier: write-after-write, write-after-read, a
 * read after a write), and, where i wrote it, no command between them
 * wrote it: then k waited for i itself (found by the model,
 * CLS_MODEL_LATE=1, context 0x27debc283f27ab6e: an upload whose
 * completion failed, then a launch overwriting its buffer on the same
 * queue, lost; a reader on another queue failed behind the lost launch
 * was taken as failed behind the upload, which it never waited for).  A
 * read of i's is not cut off so: a write after it may wait for it past a
 * later write (recovery holds such reads, failure/kept.c, hold_reads). */
static bool waited_for(cls_context *ctx, size_t i, size_t k) {
  struct cls__log_entry *a = cls__log_at(ctx, i), *b = cls__log_at(ctx, k);
  const struct cls__log_binding *ab = cls__log_bindings(ctx, a), *bb = cls__log_bindings(ctx, b);
  for (size_t x = 0; x < a->nbind; x++)
    for (size_t y = 0; y < b->nbind; y++)
      if (ab[x].handle.bits == bb[y].handle.bits && ((ab[x].access | bb[y].access) & CLS_WRITE) &&
          !((ab[x].access & CLS_WRITE) && written_between(ctx, i, k, ab[x].handle)))
        return true;
  return false;
}

bool cls__replay_dependent_status(const cls_context *ctx, cl_int cl_status) {
  return ctx->quirks.dependent_fails != 0 && ctx->quirks.dependent_status < 0 &&
         ctx->quirks.dependent_status != CLS__QUIRK_PROBE_STATUS &&
         cl_status == ctx->quirks.dependent_status;
}

/* The failure command k was queued behind, when the device failed it with
 * its dependent status (quirk dependent_fails): the first logged command
 * before it, enqueued, whose failure was found after k's enqueue (else k
 * would not have waited on it, F7), on k's queue where a failure fails
 * the rest of the queue (quirk queue_poisoned), or on another queue and
 * ordered before k by a buffer they share (waited_for).  A command the
 * device failed behind that one (skipped_behind) counts too: what waited
 * on it failed behind the same failure.  NULL when none is found (a foreign event failed, or
 * what it waited on left the log): k's failure is then its own.  A
 * status other than 0: the device passes a failed event's status on, and
 * only a failure with that status counts. */
static struct cls__failure *queued_behind(cls_context *ctx, size_t k, cl_int status) {
  struct cls__log_entry *c = cls__log_at(ctx, k);
  const struct cls__stream *cs = cls__stream_peek(ctx, c->stream);
  for (size_t i = 0; i < k; i++) {
    struct cls__log_entry *e = cls__log_at(ctx, i);
    const struct cls__found *x = cls__log_found(ctx, e);
    if (!x || c->stamp > x->known || (status && x->f->cl_status != status) ||
        (e->kind != CLS__ENTRY_RUN && e->kind != CLS__ENTRY_READ &&
         !(e->kind == CLS__ENTRY_SKIPPED && e->cause == x->f)))
      continue;
    const struct cls__stream *es = cls__stream_peek(ctx, e->stream);
    bool same_queue = e->stream == c->stream || (cs && es && cs->backend == es->backend);
    if ((same_queue && ctx->quirks.queue_poisoned == 1) || (!same_queue && waited_for(ctx, i, k)))
      return x->f;
  }
  return NULL;
}

/* Command k never ran: the device failed it behind failure g (F8's "as
 * if g had been known": the write sets take the loss).  Its writes and
 * what read them take g, and it joins g's chain as skipped, as a read
 * finds it (F5: the root cause, and the chain). */
static void skipped_behind(cls_context *ctx, size_t k, const struct cls__range_part *part,
                           struct cls__failure *g) {
  struct cls__log_entry *root = cls__log_at(ctx, k);
  /* g may be held by a found record alone (queued_behind), which the
   * note below can push out of its stream's ring: held here meanwhile
   * (found by the model, CLS_MODEL_LATE=1, context 0x50bdf5bbc2e965f1
   * under scheduler:sequential: a use after free in chain_insert). */
  cls__failure_ref(g);
  /* What the device failed behind this command failed behind the failure
   * that decides it: noted while its entry is still one note_found reads
   * (a run, not yet a skip). */
  note_found(ctx, part, 1, k, root->cause ? root->cause : g);
  if (!root->cause) { /* else it ran on the output of an earlier failure: that one decides */
    const char *name = cls__log_name(root);
    if (ctx->trace)
      cls__trace_skip(ctx->trace, root->stream, name, root->position, g->message);
    replay(ctx, k, g, part, 1, false);
    root->kind = CLS__ENTRY_SKIPPED; /* it never ran (member_kind) */
    root->cause = g;
    cls__failure_ref(g);
    ctx->log.causes++;
    root->cause_arg = CLS__NO_ARG; /* an input found failed decides instead (F2) */
    chain_insert(ctx, g, CLS_SKIP_SKIPPED, name, root->stream, root->position, root->stamp);
  }
  cls__failure_unref(g);
}

bool cls__replay_failed_behind(cls_context *ctx, int stream, uint64_t seq, cl_int cl_status) {
  if (ctx->quirks.dependent_fails != 1 || ctx->quirks.dependent_status != CLS__QUIRK_PROBE_STATUS)
    return false;
  const struct cls__range_part part = {stream, seq, seq};
  size_t k = cls__log_find(ctx, &part, 1);
  if (k == ctx->log.len)
    return false;
  struct cls__failure *behind = queued_behind(ctx, k, cl_status);
  if (!behind)
    return false;
  skipped_behind(ctx, k, &part, behind);
  return true;
}

/* Command `seq` of `stream` failed with the dependent status on its own
 * (cls__replay_behind_found). */
static void remember_own(cls_context *ctx, int stream, uint64_t seq, uint64_t stamp) {
  struct cls__log *log = &ctx->log;
  if (log->nown == CLS__OWN) {
    memmove(log->own, log->own + 1, (CLS__OWN - 1) * sizeof *log->own);
    log->nown--;
  }
  log->own[log->nown++] = (struct cls__own){.seq = seq, .stamp = stamp, .stream = stream};
}

void cls__replay_failed(cls_context *ctx, int stream, uint64_t seq, cl_int cl_status,
                        bool deferred) {
  const struct cls__range_part part = {stream, seq, seq};
  size_t k = cls__log_find(ctx, &part, 1);
  if (k == ctx->log.len)
    return; /* not a logged command (a blocking read checks its own status) */
  struct cls__log_entry *root = cls__log_at(ctx, k);
  bool launch = cls__log_launch(root);
  /* A vendor that fails a command queued on a failed event with a status
   * of its own (PoCL: -1, CL_DEVICE_NOT_FOUND) says nothing true with
   * that status: the report names the quirk (quirks.c) instead. */
  bool by_quirk = !deferred && cls__replay_dependent_status(ctx, cl_status);
  /* Only PoCL's own status says "behind a failure": where the device
   * passes the failed event's status on (rusticl, oclgrind), a command
   * with that status may have failed by itself (or by fault injection's
   * completion faults), so only a loss's status is taken so
   * (cls__replay_failed_behind, from poll.c). */
  struct cls__failure *behind = by_quirk ? queued_behind(ctx, k, 0) : NULL;
  if (behind) {
    skipped_behind(ctx, k, &part, behind);
    return;
  }
  const char *quirk = by_quirk ? " (quirk dependent_fails: what this device reports for a "
                                 "command queued on or behind a failed one)"
                               : "";
  int status = launch ? CLS_ELAUNCH : CLS_ECL;
  const struct cls__cmd_at at = at_of(root);
  /* A deferred enqueue says what the event driver says at the call
   * (command.c), and why it is found later. */
  struct cls__failure *f =
      deferred ? cls__failure_mint(ctx, status, cl_status, &at, true,
                                   "enqueue of %s failed: %s (deferred: the driver reports a "
                                   "stream's enqueue failures after the call)",
                                   launch ? root->kernel : root->op, cls_cl_status_name(cl_status))
               : cls__failure_mint(ctx, status, cl_status, &at, true,
                                   "%s%s%s failed after its enqueue with %s%s", root->op,
                                   launch ? " of " : "", at.kernel,
                                   cls_cl_status_name(cl_status), quirk);
  if (!f)
    return;
  uint64_t stamp = root->stamp;
  if (!deferred) /* a refused enqueue has no event anything waited on */
    note_found(ctx, &part, 1, k, f);
  replay(ctx, k, f, &part, 1, true);
  cls__failure_unref(f);
  if (by_quirk)
    remember_own(ctx, stream, seq, stamp);
}

void cls__replay_behind_found(cls_context *ctx) {
  struct cls__log *log = &ctx->log;
  bool moved = true;
  while (moved) { /* one that moves may be what another was queued behind */
    moved = false;
    unsigned keep = 0;
    for (unsigned i = 0; i < log->nown; i++) {
      const struct cls__range_part part = {log->own[i].stream, log->own[i].seq, log->own[i].seq};
      size_t k = cls__log_find(ctx, &part, 1);
      if (k == log->len)
        continue; /* finished and gone: what it waited on was found first or never */
      struct cls__log_entry *c = cls__log_at(ctx, k);
      if (c->stamp != log->own[i].stamp || c->kind != CLS__ENTRY_RUN || c->cause)
        continue; /* not that command, or a replay decided it since */
      struct cls__failure *g = queued_behind(ctx, k, 0);
      if (g) {
        skipped_behind(ctx, k, &part, g);
        moved = true;
      } else {
        log->own[keep++] = log->own[i];
      }
    }
    log->nown = keep;
  }
}

struct cls__failure *cls__replay_failed_as(cls_context *ctx, int stream, uint64_t seq,
                                           int status, const char *detail, cls_buffer wrote) {
  const struct cls__range_part part = {stream, seq, seq};
  size_t k = cls__log_find(ctx, &part, 1);
  if (k == ctx->log.len)
    return NULL;
  struct cls__log_entry *root = cls__log_at(ctx, k);
  /* What it was found to have written, declared a read: what read it
   * later ran on untrusted input, as for any other write. */
  struct cls__log_binding *b = cls__log_bindings(ctx, root);
  for (size_t i = 0; wrote.bits && i < root->nbind; i++)
    if (b[i].handle.bits == wrote.bits)
      b[i].access |= CLS_WRITE;
  const struct cls__cmd_at at = at_of(root);
  struct cls__failure *f = cls__failure_mint(ctx, status, 0, &at, true, "%s", detail);
  if (f) {
    note_found(ctx, &part, 1, k, f);
    replay(ctx, k, f, &part, 1, true);
  }
  return f;
}

/* What a range holds: commands, launches, and its kernels by count. */
struct range_names {
  struct { const char *name; unsigned n; } names[3];
  unsigned ncmd, nlaunch, more;
};

static void count_name(struct range_names *rn, const struct cls__log_entry *e) {
  rn->ncmd++;
  bool launch = cls__log_launch(e);
  rn->nlaunch += launch;
  const char *name = launch ? e->kernel : e->op;
  size_t j = 0;
  while (j < 3 && rn->names[j].name && strcmp(rn->names[j].name, name) != 0)
    j++;
  if (j == 3) {
    rn->more++;
  } else {
    rn->names[j].name = name;
    rn->names[j].n++;
  }
}

/* A range failed with the status a device gives what it fails behind a
 * failed event (PoCL: quirk dependent_fails), and a command of it was
 * queued behind a failure found after its enqueue (queued_behind): the
 * range failed behind that one, as an exact command would
 * (cls__replay_failed), and each of its logged commands counts as
 * skipped on it.  A range says only that one of its commands failed, and
 * every write of the range takes the failure either way; this names the
 * root.  False where no such failure is found. */
static bool range_behind(cls_context *ctx, const struct cls__range_part *parts, size_t n,
                         size_t k, cl_int cl_status) {
  if (!cls__replay_dependent_status(ctx, cl_status))
    return false;
  struct cls__failure *g = NULL;
  for (size_t i = k; i < ctx->log.len && !g; i++)
    if (cls__log_in(cls__log_at(ctx, i), parts, n))
      g = queued_behind(ctx, i, 0);
  if (!g)
    return false;
  cls__failure_ref(g); /* skipped_behind may replace what holds it */
  for (size_t i = k; i < ctx->log.len; i++) {
    struct cls__log_entry *e = cls__log_at(ctx, i);
    if (!cls__log_in(e, parts, n) || (e->kind != CLS__ENTRY_RUN && e->kind != CLS__ENTRY_READ))
      continue;
    const struct cls__range_part one = {e->stream, e->seq, e->seq};
    skipped_behind(ctx, i, &one, g);
  }
  cls__failure_unref(g);
  return true;
}

/* F8a: one of the commands of parts[0..n) failed (a poisoned queue's event
 * said so, not which): a stream's range, or on a queue streams share each
 * stream's part of the queue's range.  One record for the failure, naming
 * its parts, its kernels and how to pin it, logged once (F9); every write
 * of every part takes it. */
void cls__replay_failed_parts(cls_context *ctx, const struct cls__range_part *parts, size_t n,
                              cl_int cl_status, const char *prefix) {
  size_t k = cls__log_find(ctx, parts, n);
  if (k == ctx->log.len)
    return; /* nothing of it is logged (a blocking read checks its own status) */
  if (range_behind(ctx, parts, n, k, cl_status))
    return;
  struct range_names rn = {0};
  /* Each part's logged positions (parts with none logged are left out). */
  char span[160] = "";
  size_t used = 0, nlogged = 0;
  for (size_t p = 0; p < n; p++) {
    unsigned cnt = 0;
    uint64_t p0 = 0, p1 = 0;
    for (size_t i = k; i < ctx->log.len; i++) {
      const struct cls__log_entry *e = cls__log_at(ctx, i);
      if (!cls__log_in(e, &parts[p], 1))
        continue;
      if (!cnt++)
        p0 = e->position;
      p1 = e->position;
      count_name(&rn, e);
    }
    if (!cnt || used >= sizeof span)
      continue;
    /* "positions 2-5 on stream 0, 3 on stream 1" */
    const char *word = nlogged++ ? ", " : p0 == p1 ? "position " : "positions ";
    if (p0 == p1)
      used += (size_t)snprintf(span + used, sizeof span - used, "%s%llu on stream %d", word,
                               (unsigned long long)p0, parts[p].stream);
    else
      used += (size_t)snprintf(span + used, sizeof span - used, "%s%llu-%llu on stream %d", word,
                               (unsigned long long)p0, (unsigned long long)p1, parts[p].stream);
  }
  char list[96] = "";
  used = 0;
  for (size_t j = 0; j < 3 && rn.names[j].name && used < sizeof list; j++)
    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s x%u", j ? ", " : "",
                             rn.names[j].name, rn.names[j].n);
  if (rn.more && used < sizeof list)
    snprintf(list + used, sizeof list - used, ", %u more", rn.more);
  const char *kinds = rn.nlaunch == rn.ncmd ? "launches" : "commands";
  char what[80];
  if (nlogged > 1)
    snprintf(what, sizeof what, "one of %u %s on a shared queue failed", rn.ncmd, kinds);
  else if (rn.ncmd == 1) /* this stream's part of a queue's range: one command */
    snprintf(what, sizeof what, "one of the commands of a queue streams share failed");
  else
    snprintf(what, sizeof what, "one of %u %s failed", rn.ncmd, kinds);
  const struct cls__log_entry *root = cls__log_at(ctx, k);
  struct cls__failure *f = cls__failure_mint(
      ctx, rn.nlaunch ? CLS_ELAUNCH : CLS_ECL, cl_status,
      &(struct cls__cmd_at){.stream = root->stream,
                            .position = root->position,
                            .op = rn.nlaunch == rn.ncmd ? "launch" : "range",
                            .kernel = rn.ncmd == 1 && rn.nlaunch ? root->kernel : ""},
      true,
      "%s%s after its enqueue with %s, %s (%s)%s; rerun with CLS_PRECISE=1 to pin it",
      prefix ? prefix : "", what, cls_cl_status_name(cl_status), span, list,
      nlogged == 1 && rn.ncmd == 1 ? " is this stream's part" : "");
  if (!f)
    return;
  f->ranged = true;
  note_found(ctx, parts, n, k, f);
  replay(ctx, k, f, parts, n, true);
  cls__failure_unref(f);
}

/* For the command path: command `at` skipped (F2) on binding `arg`,
 * carrying `found`, with an earlier read binding while commands are in
 * flight.  That earlier input may still turn out to have failed, and would
 * then decide (F8): the skip goes on found's chain as an entry of its own
 * and is logged, so that the replay of that failure can move it.  Its
 * writes already carry found, with write stamp at->stamp. */
bool cls__replay_skipped(cls_context *ctx, struct cls__failure *found, size_t arg,
                         const struct cls__cmd_at *at) {
  /* An entry of its own on found's chain, under the name a plain skip's
   * would have (the kernel's for a launch, else the operation): the replay
   * may move it. */
  const char *name = at->kernel[0] ? at->kernel : at->op;
  chain_insert(ctx, found, CLS_SKIP_SKIPPED, name, at->stream, at->position, at->stamp);
  struct cls__log_entry *e = cls__log_reserve(ctx, CLS__ENTRY_SKIPPED, 0, at, NULL);
  if (!e)
    return false; /* out of memory: the skip keeps the failure it found */
  struct cls__log_binding *lb = cls__log_bindings(ctx, e);
  for (size_t i = 0; i < at->nbind; i++)
    lb[i] = cls__log_binding_of(&at->bind[i]);
  e->cause = found;
  ctx->log.causes++;
  cls__failure_ref(found);
  e->cause_arg = (unsigned char)arg;
  return cls__log_commit(ctx);
}

bool cls__replay_overwritten(cls_context *ctx, const struct cls__cmd_at *at) {
  struct cls__log_entry *e =
      cls__log_reserve(ctx, CLS__ENTRY_FAILED, CLS__SEQ_WRITES_ONLY, at, NULL);
  if (!e)
    return false; /* out of memory: a replay may count a later reader on its failure */
  struct cls__log_binding *lb = cls__log_bindings(ctx, e);
  for (size_t i = 0; i < at->nbind; i++) {
    lb[i] = cls__log_binding_of(&at->bind[i]);
    lb[i].access &= CLS_WRITE; /* reads nothing: never moved */
  }
  return cls__log_commit(ctx);
}

void cls__replay_fini(cls_context *ctx) {
  free(ctx->taint_set);
  ctx->taint_set = NULL;
  ctx->taint_cap = 0;
}
