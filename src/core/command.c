/* The one path every command takes: launches, uploads, downloads, copies
 * and fills.
 *
 *   1. F2: check the read set; a tainted input skips the command before any
 *      OpenCL call is made for it (cls__run, inline in command.h, then
 *      cls__refuse; steps 2-6 are cls__run_clean).
 *   2. The driver orders the stream after what the bindings depend on; a
 *      poll there may find a failure (F8), and then step 1 runs again, so a
 *      command never waits on an event known to have failed (F7).
 *   3. F3: enter the write scope (provisional failure on the write set).
 *   4. The driver submits; 5. the scope ends: released on success (F4), the
 *      real error swapped in on failure.
 *   6. The command is logged until it completes, for F8 (5 and 6 walk the
 *      bindings once, in commit()).
 * While the context traces, steps 2-6 run between two readings of the
 * clock (cls__run_traced), and skips and failures are recorded where they
 * happen; otherwise the trace costs one branch per command. */
#include "core/command.h"
#include "core/kernel.h"
#include "core/relocate.h"
#include "failure/kept.h"
#include "failure/report.h"
#include "driver/driver.h"
#include "order/order.h"
#include "failure/poll.h"
#include "failure/replay.h"
#include "guard/guard.h"
#include "base/handle.h"
#include "stream/pool.h"
#include "trace/trace.h"
#include "util/settle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* After the enqueue, in one walk over the bindings: F4 (the write scope's
 * record leaves the write set), the ordering facts for later commands on
 * any stream, the F8 write stamp, and the bindings of the command's F8 log
 * entry `e` (NULL: not logged). */
static inline __attribute__((always_inline)) void commit(cls_context *ctx, struct cls__cmd *cmd,
                                                        struct cls__failure *prov,
                                                        uint64_t stamp, struct cls__log_entry *e) {
  int s = cmd->stream->id;
  struct cls__log_binding *lb = e ? cls__log_bindings(ctx, e) : NULL;
  for (size_t i = 0; i < cmd->nbind; i++) {
    const struct cls__binding *b = &cmd->bind[i];
    struct cls__slot *slot = b->slot;
    if (b->access & CLS_WRITE) {
      cls__exit_write_one(slot, prov, NULL);
      slot->writer = s;
      slot->write_seq = cmd->seq;
      slot->write_stamp = stamp;
      slot->read_mask = slot->reads_held; /* 0 unless recovery holds some (kept.c) */
    } else {
      slot->read_mask |= 1ull << s;
      slot->read_seq[s] = cmd->seq;
    }
    if (lb)
      lb[i] = cls__log_binding_of(b);
  }
}

/* Where cmd stands once it took position `pos` and its writes write stamp
 * `stamp`: what the F8 log and a failure's record are told of it.
 * `kernel`: the kernel's name for a launch, else "" (the caller has it at
 * hand: the hot path computes it once, with the command's name). */
static inline __attribute__((always_inline)) struct cls__cmd_at
cmd_at(const struct cls__cmd *cmd, const char *kernel, uint64_t pos, uint64_t stamp) {
  return (struct cls__cmd_at){.stream = cmd->stream->id,
                              .kind = cmd->kind,
                              .position = pos,
                              .stamp = stamp,
                              .op = cmd->op,
                              .kernel = kernel,
                              .bind = cmd->bind,
                              .nbind = cmd->nbind};
}

/* F2: the command does not run; its outputs take f, the skip is on f's
 * chain.  No OpenCL call, no allocation (F10). */
static inline __attribute__((always_inline)) void skip(cls_context *ctx, struct cls__cmd *cmd,
                                                      struct cls__failure *f, const char *name) {
  struct cls__stream *s = cmd->stream;
  uint64_t pos = ++s->issued;
  cls__propagate(ctx, f, CLS_SKIP_SKIPPED, name, s->id, pos, cmd->bind, cmd->nbind);
  s->stats.skips++;
}

/* F2 while commands are in flight (F8): the failure `f` the skip carries,
 * decided by binding `arg` (CLS__NO_ARG: by no input, a build failure),
 * may yet move, should an input up to arg turn out to have failed (its
 * last write is logged: its stamp is the oldest entry's or newer).  Then
 * the skip is logged so that the replay can move it.  One that cannot move
 * is still logged, writes only, when it overwrites a buffer whose last
 * write is logged: a replay must see that the buffer no longer holds what
 * the logged command wrote.  Else it is F2's plain skip.  pos: the
 * position it took. */
static __attribute__((noinline)) void skip_in_flight(cls_context *ctx, struct cls__cmd *cmd,
                                                     struct cls__failure *f, const char *name,
                                                     size_t arg, uint64_t pos) {
  const struct cls__log_entry *last = cls__log_newest(ctx);
  uint64_t since = cls__log_oldest_stamp(ctx);
  bool moves = false, overwrites = false, covered = cls__log_writes_only(last);
  for (size_t i = 0; i < cmd->nbind; i++) {
    const struct cls__binding *b = &cmd->bind[i];
    if (arg == CLS__FIRST_FAILED && (b->access & CLS_READ) && b->slot->failure)
      arg = i; /* the input that decided */
    if (b->slot->write_stamp < since)
      continue;
    if ((b->access & CLS_READ) && i <= arg)
      moves = true;
    if (b->access & CLS_WRITE) {
      overwrites = true;
      covered &= b->slot->write_stamp == last->stamp;
    }
  }
  if (moves) {
    uint64_t stamp = cls__propagate_writes(ctx, f, cmd->bind, cmd->nbind);
    const struct cls__cmd_at at = cmd_at(cmd, cls__cmd_named(cmd->kind) ? name : "", pos, stamp);
    if (cls__replay_skipped(ctx, f, arg, &at)) /* the log is full: learn what finished */
      cls__poll_all(ctx, false);
    return;
  }
  uint64_t stamp = cls__propagate(ctx, f, CLS_SKIP_SKIPPED, name, cmd->stream->id, pos, cmd->bind,
                                  cmd->nbind);
  if (covered && overwrites) { /* the newest entry took these buffers out already */
    cls__log_restamp(ctx, stamp);
  } else if (overwrites) {
    const struct cls__cmd_at at = cmd_at(cmd, cls__cmd_named(cmd->kind) ? name : "", pos, stamp);
    if (cls__replay_overwritten(ctx, &at))
      cls__poll_all(ctx, false);
  }
}

/* The trace's instant for the skip just made (at s->issued). */
static __attribute__((noinline)) void trace_skip(cls_context *ctx, const struct cls__cmd *cmd,
                                                 const struct cls__failure *f) {
  cls__trace_skip(ctx->trace, cmd->stream->id,
                  cls__cmd_named(cmd->kind) ? cmd->kcmd.name : cmd->op, cmd->stream->issued,
                  f->message);
}

/* F8, for a launch, copy or download whose enqueue just failed: an input
 * whose producer was still running may turn out to have failed.  Had that been
 * known, the command would have been skipped on it and its own failure
 * would never have happened (and a read reporting it would name the wrong
 * root).  An error path, so it waits: for the stream's earlier commands,
 * and through them for everything it was ordered after.  Returns the
 * input's failure, or NULL. */
static struct cls__failure *late_input_failure(cls_context *ctx, struct cls__cmd *cmd,
                                               struct cls__failure *prov, size_t *arg) {
  bool reads = false;
  for (size_t i = 0; i < cmd->nbind; i++)
    reads |= (cmd->bind[i].access & CLS_READ) != 0;
  if (!reads || cls__stream_poll(ctx, cmd->stream, true) < 0 || cls__poll_all(ctx, false) < 0)
    return NULL;
  for (size_t i = 0; i < cmd->nbind; i++) {
    struct cls__slot *slot = cmd->bind[i].slot;
    if ((cmd->bind[i].access & CLS_READ) && slot->failure && slot->failure != prov) {
      *arg = i;
      return cls__read_failure(ctx, cmd->stream->id, &cmd->bind[i], 1);
    }
  }
  /* The write set is this command's again (a replay may have touched it). */
  if (prov)
    for (size_t i = 0; i < cmd->nbind; i++)
      if (cmd->bind[i].access & CLS_WRITE)
        cls__slot_set_failure(cmd->bind[i].slot, prov);
  return NULL;
}

bool cls__learn_loss_first(cls_context *ctx, const struct cls__failure *found) {
  /* The dependent status says "behind a failure"; only a kept command
   * marked behind can turn out to be behind a loss (poll.c).  Not while
   * the kept commands run again (keep.c): nested, it would relocate and
   * replay inside that replay's loop. */
  if (!found->async || found->origin != 0 || !cls__behind_failed_status(found->cl_status) ||
      ctx->keep.busy || ctx->replaying >= ctx->recover || !cls__keep_any_behind(ctx))
    return false;
  cls__poll_all(ctx, true); /* finds the loss (marks what it held up) */
  if (ctx->keep.nlost || ctx->lost_mask)
    cls__relocate_lost(ctx);
  /* Either way the wait may have moved what the inputs carry (a command
   * counted as skipped behind the failure it waited on): `found` is
   * read again. */
  return true;
}

/* What the skip's detail calls the argument of launch cmd that carries the
 * failure it is skipped on: binding b's, or with b past the bindings the
 * one F2 takes the failure of (cls__first_failed_read).  "argument 3
 * ('dst')", made at the kernel's lookup; NULL for another command. */
static inline __attribute__((always_inline)) const char *input_text(const struct cls__cmd *cmd,
                                                                    size_t b) {
  if (cmd->kind != CLS__CMD_LAUNCH || !cmd->kernel->label)
    return NULL; /* (another command's kernel member is not set) */
  const struct cls_kernel *k = cmd->kernel;
  if (b >= cmd->nbind && (b = cls__first_failed_read(cmd->bind, cmd->nbind)) == cmd->nbind)
    return NULL;
  for (cl_uint a = 0; a < k->nargs; a++) /* a label per argument: nargs known */
    if (cmd->kargs[a].value == &cmd->bind[b].slot->mem)
      return k->label[a];
  return NULL;
}

/* Step 1 found `found` on the inputs: a download reports it, anything else
 * is skipped. */
int cls__refuse(cls_context *ctx, struct cls__cmd *cmd, struct cls__failure *found,
                cls_report **report) {
  if (cmd->kind == CLS__CMD_READ)
    return cls__read_report(ctx, cmd->op, cmd->stream->id, &cmd->bind[0].handle, 1, report);
  const char *name = cls__cmd_named(cmd->kind) ? cmd->kcmd.name : cmd->op;
  /* Before the skip gives its outputs, a read-write one among them, f. */
  const char *input = input_text(cmd, SIZE_MAX);
  if (__builtin_expect(ctx->log.len != 0, 0)) {
    skip_in_flight(ctx, cmd, found, name, CLS__FIRST_FAILED, ++cmd->stream->issued);
    cmd->stream->stats.skips++;
  } else {
    skip(ctx, cmd, found, name);
  }
  if (cmd->kind == CLS__CMD_COPY)
    return cls__copy_tainted(cmd->op, cmd->stream->id, cmd->bind[0].handle, found);
  return cls__skipped(cmd->op, cls__cmd_named(cmd->kind) ? name : NULL, cmd->stream->id,
                      cmd->stream->issued, found, input);
}

/* Deadline mode, before a blocking transfer: what it will wait for (its
 * stream's earlier commands, the buffer's last writer, and for a write
 * its readers) is waited for first, with the deadline, so the transfer
 * itself cannot block for long. */
static __attribute__((noinline)) int wait_inputs(cls_context *ctx, struct cls__cmd *cmd) {
  int rc = cls__stream_poll(ctx, cmd->stream, true);
  for (size_t i = 0; rc == CLS_OK && i < cmd->nbind; i++) {
    const struct cls__slot *slot = cmd->bind[i].slot;
    uint64_t streams = slot->writer >= 0 ? 1ull << slot->writer : 0;
    if (cmd->bind[i].access & CLS_WRITE)
      streams |= slot->read_mask;
    streams &= ~(1ull << cmd->stream->id);
    for (; rc == CLS_OK && streams; streams &= streams - 1) {
      struct cls__stream *p = cls__stream_peek(ctx, __builtin_ctzll(streams));
      if (p)
        rc = cls__stream_poll(ctx, p, true);
    }
  }
  return rc;
}

int cls__refuse_traced(cls_context *ctx, struct cls__cmd *cmd, struct cls__failure *found,
                       cls_report **report) {
  int rc = cls__refuse(ctx, cmd, found, report);
  if (cmd->kind != CLS__CMD_READ)
    trace_skip(ctx, cmd, found);
  else /* F5: a read of tainted data, refused */
    cls__trace_failure(ctx->trace, "tainted", cmd->stream->id, cmd->op, 0, found->message);
  return rc;
}

/* Guard mode, before a launch: each CLS_OUT destination is filled with the
 * canary on the launch's stream (docs/guard.md), but for one the launch
 * also reads through another argument (the fill would be its input).
 * clstream's own command: it gives its position back (the launch takes
 * it) and counts in no statistic. */
static int canary_fill(cls_context *ctx, const struct cls__cmd *launch) {
  static const unsigned char canary = CLS__GUARD_CANARY;
  struct cls__stream *s = launch->stream;
  for (size_t i = 0; i < launch->nbind; i++) {
    const struct cls__binding *b = &launch->bind[i];
    if (b->access != CLS_WRITE || b->slot->image || cls__cmd_binds_elsewhere(launch, i, CLS_READ))
      continue; /* only CLS_OUT: what it declared it writes in full; an
                   image takes no canary (docs/guard.md) */
    struct cls__cmd fill = {.kind = CLS__CMD_FILL, .op = "canary fill", .nbind = 1, .stream = s};
    fill.bind[0] = *b;
    fill.x = (struct cls_transfer){.dst = b->slot->mem, .size = b->slot->size,
                                .pattern = &canary, .pattern_size = 1};
    uint64_t issued = s->issued, enqueues = s->stats.enqueues;
    int rc = cls__run_clean(ctx, &fill, NULL, NULL);
    s->issued = issued;
    s->stats.enqueues = enqueues;
    if (rc < 0)
      return rc;
  }
  return CLS_OK;
}

/* Guard mode: one of clstream's own copies of `bind`'s buffer into
 * `shadow`, on stream s (positions and statistics as for the canary). */
static int shadow_copy(cls_context *ctx, struct cls__stream *s, const struct cls__binding *bind,
                       cl_mem shadow, uint64_t *seq) {
  struct cls__cmd copy = {.kind = CLS__CMD_COPY, .op = CLS__OP_GUARD_COPY, .nbind = 1,
                         .stream = s};
  copy.bind[0] = *bind;
  copy.bind[0].access = CLS_READ;
  copy.x = (struct cls_transfer){.src = bind->slot->mem, .dst = shadow, .size = bind->slot->size};
  uint64_t issued = s->issued, enqueues = s->stats.enqueues;
  int rc = cls__run_clean(ctx, &copy, NULL, NULL);
  s->issued = issued;
  s->stats.enqueues = enqueues;
  *seq = copy.seq;
  return rc;
}

/* Whether binding i of c is CLS_IN yet c may write through it: an
 * argument the kernel's signature lets it write (not const), or any
 * buffer of a foreign command, which has no signature (argument i is its
 * binding i); not a buffer c declares it writes through another binding,
 * nor an image.  *arg: the binding's argument. */
static bool writes_through(const struct cls__cmd *c, size_t i, unsigned *arg) {
  const struct cls__binding *b = &c->bind[i];
  if (b->access != CLS_READ || b->slot->image || cls__cmd_binds_elsewhere(c, i, CLS_WRITE))
    return false; /* an image has no guards, and is not compared (docs/guard.md) */
  if (c->kind == CLS__CMD_FOREIGN) {
    *arg = (unsigned)i;
    return true;
  }
  if (c->kind != CLS__CMD_LAUNCH || !c->kernel->writable)
    return false;
  /* Its argument: the one whose value is this slot's cl_mem. */
  unsigned a = 0;
  while (a < c->kcmd.nargs && c->kargs[a].value != &b->slot->mem)
    a++;
  *arg = a;
  return a < c->kcmd.nargs && (c->kernel->writable >> a & 1);
}

/* The CLS_IN bindings of cmd that writes_through, as bits by binding:
 * guard mode checks their guards too once cmd completed. */
static uint32_t inputs_written_through(const struct cls__cmd *cmd) {
  uint32_t bits = 0;
  unsigned arg;
  for (size_t i = 0; i < cmd->nbind; i++)
    if (writes_through(cmd, i, &arg))
      bits |= UINT32_C(1) << i;
  return bits;
}

/* Guard mode, before a launch (F11): each CLS_IN binding the launch may
 * write through is copied first, to compare with a copy made behind the
 * launch (cls__guard_launched). */
static int snapshot_inputs(cls_context *ctx, const struct cls__cmd *launch) {
  bool foreign = launch->kind == CLS__CMD_FOREIGN;
  for (size_t i = 0; i < launch->nbind; i++) {
    const struct cls__binding *b = &launch->bind[i];
    unsigned arg;
    if (!writes_through(launch, i, &arg))
      continue;
    cl_mem before = cls__guard_shadow(ctx, b->slot->size);
    if (!before)
      return cls__error_code(CLS_ECL);
    char name[64] = "";
    if (!foreign)
      cls__kernel_arg_name(launch->kernel, arg, name, sizeof name);
    int rc = cls__guard_pending(ctx, b->handle, arg, name, before, b->slot->size);
    uint64_t seq;
    if (rc == CLS_OK)
      rc = shadow_copy(ctx, launch->stream, b, before, &seq);
    if (rc < 0)
      return rc;
  }
  return CLS_OK;
}

void cls__guard_launched(cls_context *ctx, struct cls__cmd *launch, int rc) {
  size_t n = cls__guard_npending(ctx);
  if (rc == CLS_OK && n) {
    struct cls__stream *s = launch->stream;
    uint64_t seq = launch->seq, position = s->issued, stamp = ctx->stamp;
    for (size_t i = 0; i < n; i++) {
      struct cls__binding b = {.access = CLS_READ};
      size_t size;
      cls__guard_pending_at(ctx, i, &b.handle, &size);
      b.slot = cls__resolve(ctx, b.handle); /* slots move when a table grows */
      cl_mem after = b.slot ? cls__guard_shadow(ctx, size) : NULL;
      uint64_t after_seq = 0;
      if (after && shadow_copy(ctx, s, &b, after, &after_seq) < 0) {
        clReleaseMemObject(after);
        after = NULL;
      }
      cls__guard_watch(ctx, i, after, after_seq, s->id, seq, position, stamp,
                       launch->kcmd.name);
    }
  }
  cls__guard_pending_end(ctx);
}

/* Several devices: a buffer last used on another device than the
 * command's moves to it (the OpenCL runtime moves the bytes within the
 * context; docs/devices.md), counted once per command and buffer. */
static void count_migrations(struct cls__cmd *cmd) {
  struct cls__stream *s = cmd->stream;
  for (size_t i = 0; i < cmd->nbind; i++) {
    struct cls__slot *slot = cmd->bind[i].slot;
    if (slot->device != (unsigned char)s->device) {
      slot->device = (unsigned char)s->device;
      s->stats.migrations++;
    }
  }
}

/* What deadline and guard mode do before a command: one branch on the
 * hot path for both. */
static __attribute__((noinline)) int checks_before(cls_context *ctx, struct cls__cmd *cmd) {
  int rc = CLS_OK;
  if (ctx->lost_mask || ctx->keep.nlost) {
    /* Queues found lost during a poll move now, before this command is
     * ordered; the polls they make may have failed one of its inputs. */
    cls__relocate_lost(ctx);
    if (cls__read_failure(ctx, cmd->stream->id, cmd->bind, cmd->nbind))
      return CLS__RETRY;
  }
  if (ctx->ndevices > 1)
    count_migrations(cmd);
  if (ctx->sync_timeout_ns && cmd->x.blocking && (rc = wait_inputs(ctx, cmd)) < 0)
    return rc;
  if (ctx->guard && cmd->kind == CLS__CMD_LAUNCH && !cmd->kernel->prog->build_failure &&
      (rc = canary_fill(ctx, cmd)) == CLS_OK)
    rc = snapshot_inputs(ctx, cmd);
  else if (ctx->guard && cmd->kind == CLS__CMD_FOREIGN)
    rc = snapshot_inputs(ctx, cmd); /* F11: its declarations are checked as a launch's */
  return rc;
}

/* Recovery (docs/devices.md): cmd's enqueue met a lost queue, with
 * relocation and recovery on.  Nothing of it ran, and its inputs are
 * intact (every later writer of them is ordered after it), so it can run
 * again on the fresh queue: the stream moves now, cmd's write scope is
 * left (it enters again), its position is given back, and true is
 * returned.  Its waits were waited out on the host when its enqueue
 * failed (cls__order_drop), so what the stream is ordered after still
 * holds on the fresh queue.  False, with why replay stopped in `why`,
 * when the bound is reached (a loss during a replay counts) or the
 * stream could not move: then the loss is reported as without recovery. */
static __attribute__((noinline)) bool replay_lost(cls_context *ctx, struct cls__cmd *cmd,
                                                  struct cls__failure *prov, const char *name,
                                                  uint64_t pos, cl_int crc, char *why,
                                                  size_t cap) {
  struct cls__stream *s = cmd->stream;
  unsigned replays = ctx->replaying;
  if (replays >= ctx->recover) {
    snprintf(why, cap, " (replay stopped: run again %u time%s, the bound CLS_RECOVER=%u)",
             replays, replays == 1 ? "" : "s", ctx->recover);
    return false;
  }
  uint64_t gen = s->generation;
  char msg[160];
  snprintf(msg, sizeof msg, "lost with stream %d generation %llu: %s %s failed: %s", s->id,
           (unsigned long long)gen, cmd->kind == CLS__CMD_FOREIGN ? cmd->op : "enqueue of", name,
           cls_cl_status_name(crc));
  if (ctx->trace)
    cls__trace_failure(ctx->trace, "lost", s->id, name, pos, msg);
  ctx->lost_mask |= 1ull << s->id;
  uint64_t issued = s->issued;
  /* What the lost queue had accepted runs again only once cmd's scope is
   * left (it may read what cmd writes): not inside the relocation. */
  bool busy = ctx->keep.busy;
  ctx->keep.busy = true;
  cls__relocate_lost(ctx);
  ctx->keep.busy = busy;
  if (ctx->lost_mask & (1ull << s->id)) {
    snprintf(why, cap, " (replay stopped: the stream could not move to a fresh queue)");
    return false;
  }
  cls__exit_write(prov, cmd->bind, cmd->nbind, NULL);
  if (ctx->keep.nlost && ctx->hooks.replay_kept)
    ctx->hooks.replay_kept(ctx);
  /* Its position back, unless commands the queue had accepted ran again
   * meanwhile (keep.c): then it takes the next one. */
  if (s->issued == issued)
    s->issued = pos - 1;
  s->stats.replays++;
  cls__log(&ctx->logger, CLS_LOG_ERRORS,
           "stream %d: replayed 1 command on generation %llu (%s%s%s, lost with generation %llu; "
           "run again %u of at most %u times)",
           s->id, (unsigned long long)s->generation, cmd->op,
           cls__cmd_named(cmd->kind) ? " of " : "", cls__cmd_named(cmd->kind) ? name : "",
           (unsigned long long)gen, replays + 1, ctx->recover);
  if (ctx->trace)
    cls__trace_failure(ctx->trace, "replay", s->id, name, pos, msg);
  return true;
}

/* Recovery: cmd's enqueue failed because a command it waits for failed
 * (the status a vendor gives a wait on a failed event).  If that one was
 * lost after its enqueue and is kept, the polls that find it mark it, the
 * relocation runs it again on a fresh queue, and cmd can then run after it
 * (true: its write scope left, its position given back).  False when no
 * such loss is found, or past the bound. */
static __attribute__((noinline)) bool behind_lost_replay(cls_context *ctx, struct cls__cmd *cmd,
                                                         struct cls__failure *prov,
                                                         uint64_t pos) {
  struct cls__stream *s = cmd->stream;
  if (ctx->replaying >= ctx->recover)
    return false;
  cls__poll_all(ctx, true); /* finds the loss it waited on (marked, kept) */
  if (!ctx->keep.nlost && !ctx->lost_mask)
    return false;
  /* Its scope is left first: what runs again may read what it writes. */
  cls__exit_write(prov, cmd->bind, cmd->nbind, NULL);
  s->issued = pos - 1; /* its position back (what runs again takes the next ones) */
  cls__relocate_lost(ctx);
  return true;
}

/* A blocking upload refused because a command it was ordered after (a
 * writer of what it overwrites) failed after its enqueue: that command is
 * over and wrote nothing, so nothing is left to wait for.  The poll finds
 * its failure (F8) and the upload is enqueued again, once, without the
 * wait: it writes its bytes, and the rest of the buffer keeps the
 * failure (F4), as if the failure had been known at the call.  With
 * recovery, behind_lost_replay comes first. */
static __attribute__((noinline)) bool behind_failed_upload(cls_context *ctx,
                                                           struct cls__cmd *cmd,
                                                           struct cls__failure *prov,
                                                           uint64_t pos) {
  if (cmd->kind != CLS__CMD_WRITE || !cmd->x.blocking || ctx->rewaiting || !prov)
    return false;
  /* The scope is left first: the failure the poll finds goes on the
   * buffer as on any the failed command wrote (a ranged one is kept by
   * the partial write, F4).  Only when the poll finds one: the status
   * alone (-1 on PoCL) does not say a wait failed; else the scope is
   * entered again with the same record, and the upload fails. */
  cls__failure_ref(prov);
  cls__exit_write(prov, cmd->bind, cmd->nbind, NULL);
  uint64_t minted = cls__failures_minted(ctx);
  cls__poll_all(ctx, true);
  bool found = cls__failures_minted(ctx) != minted;
  for (size_t i = 0; !found && i < cmd->nbind; i++)
    if ((cmd->bind[i].access & CLS_WRITE) &&
        !cls__write_keeps(cmd->bind[i].access, cmd->bind[i].slot->failure))
      cls__slot_set_failure(cmd->bind[i].slot, prov);
  cls__failure_unref(prov);
  if (found)
    cmd->stream->issued = pos - 1; /* its position back: it runs again */
  return found;
}

/* Recovery: cmd runs again on the fresh queue replay_lost gave its
 * stream: F2 first (the relocation's wait may have found an input
 * failed, F8), then steps 2-6, with ctx->replaying counting the runs
 * (the lock is held: one command at a time; bounded by CLS_RECOVER). */
static __attribute__((noinline)) int run_again(cls_context *ctx, struct cls__cmd *cmd,
                                               struct cls__pending_read *pending,
                                               cls_report **report) {
  struct cls__failure *found = cls__read_failure(ctx, cmd->stream->id, cmd->bind, cmd->nbind);
  if (found)
    return ctx->trace ? cls__refuse_traced(ctx, cmd, found, report)
                      : cls__refuse(ctx, cmd, found, report);
  if (ctx->ndevices > 1)
    count_migrations(cmd);
  ctx->replaying++;
  int rc = cls__run_clean(ctx, cmd, pending, report);
  ctx->replaying--;
  return rc;
}

/* Steps 2-6; step 1 is cls__run (command.h), inline in every command. */
int cls__run_clean(cls_context *ctx, struct cls__cmd *cmd, struct cls__pending_read *pending,
                   cls_report **report) {
  struct cls__stream *s = cmd->stream;
  const struct cls_driver_ops *d = ctx->driver_ops;
  /* Its name (in chains and messages) and its kernel's (in records). */
  const char *name = cmd->op, *kernel = "";
  if (cls__cmd_named(cmd->kind))
    name = kernel = cmd->kcmd.name;
  int rc;
  if (__builtin_expect(ctx->checks != 0, 0) && (rc = checks_before(ctx, cmd)) != CLS_OK) {
    struct cls__failure *found = rc == CLS__RETRY ? cls__read_failure(ctx, s->id, cmd->bind,
                                                                      cmd->nbind)
                                                  : NULL;
    if (!found)
      return rc;
    return ctx->trace ? cls__refuse_traced(ctx, cmd, found, report)
                      : cls__refuse(ctx, cmd, found, report);
  }
  struct cls__retry retry;
  retry.n = 0; /* order()'s retries: bounded (contract.c) */
  for (;;) {
    if (cmd->kind == CLS__CMD_LAUNCH && cmd->kernel->prog->build_failure) {
      /* Its program never built: the launch cannot run, and its outputs
       * carry the build failure (with the log) to whoever reads them. */
      if (ctx->log.len) { /* an input failure found later decides: F2 comes first */
        skip_in_flight(ctx, cmd, cmd->kernel->prog->build_failure, name, CLS__NO_ARG,
                       ++s->issued);
        s->stats.skips++;
      } else {
        skip(ctx, cmd, cmd->kernel->prog->build_failure, name);
      }
      if (ctx->trace)
        trace_skip(ctx, cmd, cmd->kernel->prog->build_failure);
      return cls__error(CLS_EBUILD, cmd->kernel->prog->build_failure->cl_status,
                        "kernel '%s' comes from a program that failed to build", name);
    }
    rc = d->order(ctx->driver, &cmd->pub);
    if (rc == CLS_OK)
      break;
    if (rc != CLS__RETRY)
      return cls__driver_status(ctx, "order", rc);
    /* Recovery: kept work goes to a fresh queue first; running again may
     * clear the failure found here (a command failed behind a loss:
     * cls__keep_follow, `behind`). */
    cls__relocate_pending(ctx);
    struct cls__failure *found = cls__read_failure(ctx, s->id, cmd->bind, cmd->nbind);
    if (found)
      return ctx->trace ? cls__refuse_traced(ctx, cmd, found, report)
                        : cls__refuse(ctx, cmd, found, report);
    if ((rc = cls__driver_order_retry(ctx, &retry)) < 0)
      return rc;
  }
  struct cls__failure *prov = cls__enter_write(ctx, cmd->bind, cmd->nbind);
  uint64_t pos = ++s->issued;
  if (prov) {
    prov->scope_name = name;
    prov->operation = cmd->op;
    prov->stream = s->id;
    prov->position = pos;
  }
  cls__log(&ctx->logger, CLS_LOG_FULL, "stream %d: %s%s%s, %zu bindings, %u waits", s->id, cmd->op,
           cls__cmd_named(cmd->kind) ? " of " : "", cls__cmd_named(cmd->kind) ? name : "",
           cmd->nbind, cmd->nwait);
  cmd->seq = s->submitted + 1;
  cl_int crc = d->submit(ctx->driver, &cmd->pub);
  if (crc != CL_SUCCESS) {
    size_t arg = 0;
    struct cls__failure *in = cls__cmd_named(cmd->kind) || cmd->kind == CLS__CMD_COPY ||
                                      cmd->kind == CLS__CMD_READ
                                  ? late_input_failure(ctx, cmd, prov, &arg)
                                  : NULL;
    /* Recovery: it failed behind a command found lost (the wait polls
     * every stream): what was lost, and what failed behind it, runs again
     * first, and then cmd -- before an input failure found meanwhile
     * refuses or skips it, since running again may clear that (a command
     * failed behind the loss, found first: cls__keep_follow, `behind`). */
    if (ctx->keep.len && cls__behind_failed_status(crc) &&
        behind_lost_replay(ctx, cmd, prov, pos))
      return run_again(ctx, cmd, pending, report);
    /* A download behind a producer that failed after its enqueue (the
     * queue refuses a read waiting on a failed event): the read of
     * tainted data it is, with the root cause and the chain (F3), not an
     * enqueue failure of its own, and refused as one found before. */
    if (in && cmd->kind == CLS__CMD_READ) {
      if (s->issued == pos) /* refused, as in step 1: no position */
        s->issued--;
      return ctx->trace ? cls__refuse_traced(ctx, cmd, in, report)
                        : cls__refuse(ctx, cmd, in, report);
    }
    if (in) {
      if (ctx->log.len)
        skip_in_flight(ctx, cmd, in, name, arg, pos);
      else
        cls__propagate(ctx, in, CLS_SKIP_SKIPPED, name, s->id, pos, cmd->bind, cmd->nbind);
      s->stats.skips++;
      if (ctx->trace)
        cls__trace_skip(ctx->trace, s->id, name, pos, in->message);
      if (cmd->kind == CLS__CMD_COPY)
        return cls__error(CLS_ETAINTED, 0, "%s on stream %d: an input failed", name, s->id);
      return cls__skipped(cmd->op, cls__cmd_named(cmd->kind) ? name : NULL, s->id, pos, in,
                          input_text(cmd, arg));
    }
    int status = cls__cmd_named(cmd->kind) ? CLS_ELAUNCH : CLS_ECL;
    /* A queue found lost, with relocation on: with recovery, cmd runs
     * again on the fresh queue; else (or past the bound) the failure says
     * so, and the stream moves before the call returns (docs/devices.md). */
    bool lost = ctx->relocate && cls__lost_status(crc);
    char why[96] = "";
    if (lost && ctx->recover && replay_lost(ctx, cmd, prov, name, pos, crc, why, sizeof why))
      return run_again(ctx, cmd, pending, report);
    if (!lost && cls__behind_failed_status(crc) && behind_failed_upload(ctx, cmd, prov, pos)) {
      ctx->rewaiting = true; /* its waits were dropped with the failed enqueue */
      int rc2 = cls__run_clean(ctx, cmd, pending, report);
      ctx->rewaiting = false;
      return rc2;
    }
    char lost_as[192] = "";
    if (lost)
      snprintf(lost_as, sizeof lost_as, "lost with stream %d generation %llu%s: ", s->id,
               (unsigned long long)s->generation, why);
    else if (ctx->replaying) /* its inputs' bytes may have gone with the lost memory */
      snprintf(lost_as, sizeof lost_as, "replay stopped: run again after a loss, it failed: ");
    struct cls__cmd_at at = cmd_at(cmd, kernel, pos, 0);
    struct cls__failure *f = cls__failure_mint(ctx, status, crc, &at, false,
                                               "%s%s %s failed: %s", lost_as,
                                               cmd->kind == CLS__CMD_FOREIGN ? cmd->op
                                                                             : "enqueue of",
                                               name, cls_cl_status_name(crc));
    if (f) /* out of memory: the provisional record stays, reads still fail */
      cls__exit_write(prov, cmd->bind, cmd->nbind, f);
    if (ctx->trace)
      cls__trace_failure(ctx->trace, "failure", s->id, name, pos,
                         f ? f->message : "enqueue failed");
    cls__failure_unref(f);
    /* An earlier failure found later may turn out to have been its input. */
    at.stamp = cls__stamp_writes(ctx, cmd->bind, cmd->nbind);
    if (ctx->log.len && cls__log_add(ctx, CLS__ENTRY_FAILED, 0, &at, NULL) > 0)
      cls__poll_all(ctx, false);
    if (lost) {
      ctx->lost_mask |= 1ull << s->id;
      cls__relocate_lost(ctx);
    }
    return cls__error(status, crc, "%s on stream %d: enqueue failed: %s%s", name, s->id,
                      cls_cl_status_name(crc), why);
  }
  s->submitted = cmd->seq;
  s->stats.enqueues++;
  s->stats.launches += cmd->kind == CLS__CMD_LAUNCH;
  uint64_t stamp = ++ctx->stamp;
  if (cmd->kind == CLS__CMD_READ && cmd->x.blocking) {
    commit(ctx, cmd, prov, stamp, NULL); /* finished already: the caller checks what it read */
    return CLS_OK;
  }
  /* Recovery: kept until proven complete (keep.h); nothing when off, nor
   * under ranged attribution (CLS_PRECISE=0 asked for it: recovery makes
   * it exact otherwise), where a lost range's commands may have run. */
  if (__builtin_expect(ctx->checks != 0, 0) && ctx->recover && ctx->relocate && !ctx->ranged)
    cls__keep_add(ctx, cmd, pos, stamp, pending);
  const struct cls__cmd_at at = cmd_at(cmd, kernel, pos, stamp);
  struct cls__log_entry *e =
      cls__log_reserve(ctx, pending ? CLS__ENTRY_READ : CLS__ENTRY_RUN, cmd->seq, &at, pending);
  commit(ctx, cmd, prov, stamp, e);
  if (ctx->guard)
    cls__guard_committed(ctx, cmd, pos, inputs_written_through(cmd));
  if (!e)
    return CLS_ENOMEM; /* the log could not grow; the command runs */
  if (cls__log_commit(ctx))
    cls__poll_all(ctx, false);
  return CLS_OK;
}

/* Steps 2-6 while tracing: the command's host time, and its event when the
 * driver accepted it. */
int cls__run_traced(cls_context *ctx, struct cls__cmd *cmd, struct cls__pending_read *pending,
                    cls_report **report) {
  struct cls__stream *s = cmd->stream;
  uint64_t accepted = s->stats.enqueues;
  uint64_t t0 = cls__now_ns();
  int rc = cls__run_clean(ctx, cmd, pending, report);
  if (s->stats.enqueues != accepted)
    cls__trace_cmd(ctx->trace, s->id, cmd->op,
                   cls__cmd_named(cmd->kind) ? cmd->kcmd.name : cmd->op, cmd->seq, t0,
                   cls__now_ns());
  return rc;
}
