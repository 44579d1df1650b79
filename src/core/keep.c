/* Recovery's replay at completion (keep.h; docs/devices.md, "Recovery"):
 * the commands a poll found lost after their enqueue, kept by
 * failure/kept.c, run again in their submission order through the command
 * path, on their streams' fresh queues.  Reached through
 * ctx->hooks.replay_kept from the relocation that moved them. */
#include "core/keep.h"
#include "core/command.h"
#include "core/kernel.h"
#include "core/relocate.h"
#include "failure/failure.h"
#include "failure/poll.h"
#include "memory/memory.h"
#include "base/handle.h"
#include "stream/pool.h"
#include "trace/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A download run again that could not run (or did not reach its queue):
 * its sync reports f (a reference is taken), as it reports a failure F8
 * finds. */
static void read_fails(struct cls__pending_read *read, struct cls__failure *f) {
  if (!read || !f || read->failure)
    return;
  read->failure = f;
  cls__failure_ref(f);
}

/* Kept command `e` is not run again: the old rule, its write set takes
 * the loss, with `why` in the record.  Its pending read reports it.  The
 * record is stamped as the command was (its place in program order), on
 * what nothing wrote later: a later command run again after it sees it
 * as its input's, not as a later command's (run_kept).  What this replay
 * wrote before it (stamped after `began`) comes before it in program
 * order too: it takes the record, and keeps its stamp. */
static void not_run_again(cls_context *ctx, struct cls__stream *s, const struct cls__kept *e,
                          uint64_t began, const char *why) {
  bool launch = e->kind == CLS__CMD_LAUNCH;
  const char *name = launch ? e->kcmd.name : e->op;
  struct cls__cmd_at where = {.stream = s->id,
                              .kind = e->kind,
                              .position = s->issued,
                              .op = e->op,
                              .kernel = launch ? e->kcmd.name : ""};
  struct cls__failure *f = cls__failure_mint(ctx, launch ? CLS_ELAUNCH : CLS_ECL,
                                             CL_DEVICE_NOT_AVAILABLE, &where, true, "%s", why);
  if (!f)
    return;
  read_fails(e->read, f);
  for (size_t i = 0; i < e->nbind; i++) {
    struct cls__slot *slot = cls__resolve(ctx, e->bind[i].handle);
    if (!slot || !(e->bind[i].access & CLS_WRITE))
      continue;
    if (slot->write_stamp <= e->stamp) {
      cls__slot_set_failure(slot, f);
      slot->write_stamp = e->stamp;
    } else if (slot->write_stamp > began) {
      cls__slot_set_failure(slot, f);
    }
  }
  if (ctx->trace)
    cls__trace_failure(ctx->trace, "failure", s->id, name, s->issued, f->message);
  cls__failure_unref(f);
}

/* A buffer it binds was freed after the poll that found it lost. */
static void not_replayed(cls_context *ctx, struct cls__stream *s, const struct cls__kept *e,
                         uint64_t began) {
  char why[CLS__MESSAGE_MAX];
  snprintf(why, sizeof why,
           "lost with stream %d generation %llu (not replayed: a buffer it binds was freed): "
           "command of %s failed after its enqueue with CL_DEVICE_NOT_AVAILABLE",
           s->id, (unsigned long long)s->generation,
           e->kind == CLS__CMD_LAUNCH ? e->kcmd.name : e->op);
  not_run_again(ctx, s, e, began, why);
}

/* Kept command `e` reads a buffer a later command wrote meanwhile, and
 * that command ran (PoCL runs what is enqueued after a failure on the
 * same queue, so a later writer ordered after `e` may have run while `e`
 * failed behind a loss): `e` cannot be run again on the bytes it read,
 * so the old rule holds, as where an input's bytes went with a lost
 * device's memory: what it writes that nothing wrote later takes the
 * loss, with why.  A later writer that is itself to run again (marked)
 * wrote nothing yet, and later writes that missed the bytes `e` reads
 * (the buffer's span, struct cls__slot) left them as they were (found by
 * the model, CLS_MODEL_LATE=1, seed 0x25b57aab90a039b4: a copy of bytes
 * 4..48 failed behind a loss, then an upload of bytes 52..64 of its
 * source). */
static bool input_overwritten(cls_context *ctx, const struct cls__kept *e,
                              const struct cls__cmd *cmd, uint64_t began) {
  /* A follower ran: what it wrote itself (an argument it reads and
   * writes) is not what it read either. */
  uint64_t after = e->follows ? e->stamp - 1 : e->stamp;
  for (size_t i = 0; i < e->nbind; i++) {
    const struct cls__slot *slot = cmd->bind[i].slot;
    const struct cls__failure *f = slot->failure;
    /* The last write a queue accepted (noted in the span, cls__keep_add):
     * a later stamp is a skip's, a refusal's or a failed enqueue's, which
     * wrote no bytes, whatever record the buffer holds now (a command
     * whose enqueue met the lost queue left its write scope with the
     * buffer clean: found by the model, CLS_MODEL_LATE=1, context
     * 0xf9d198a0504a7c97, an upload after a refused copy). */
    bool noted = slot->write_stamp == slot->span_last;
    uint64_t last = slot->span_last;
    if (!((e->bind[i].access & CLS_READ) && last > after &&
          last <= began && /* not what ran again before it */
          (!noted || !f || f == &cls__never_written || f->provisional) &&
          !cls__keep_runs_again(ctx, last)))
      continue;
    size_t lo, hi;
    cls__binding_bytes(e->kind, &e->x, CLS_READ, slot->size, &lo, &hi);
    if (!cls__ranges_overlap(slot->last_lo, slot->last_hi, lo, hi) &&
        (slot->span_prev <= after ||
         (slot->span_base <= after && !cls__ranges_overlap(slot->span_lo, slot->span_hi, lo, hi))))
      continue; /* every write since it ran missed what it reads */
    return true;
  }
  return false;
}

/* Kept command `e` is not run again `because` (a clause): a command lost
 * that could not run again, or a follower that ran and cannot run
 * again; the record says which, and why. */
static void stopped(cls_context *ctx, struct cls__stream *s, const struct cls__kept *e,
                    uint64_t began, const char *because) {
  char why[CLS__MESSAGE_MAX];
  const char *name = e->kind == CLS__CMD_LAUNCH ? e->kcmd.name : e->op;
  if (e->follows)
    snprintf(why, sizeof why,
             "replay stopped: %s on stream %d ran after a command that runs again after a "
             "loss, on what that command touches, and could not run again: %s",
             name, s->id, because);
  else
    snprintf(why, sizeof why,
             "replay stopped: run again after a loss, %s could not be: %s (lost with stream %d)",
             name, because, s->id);
  not_run_again(ctx, s, e, began, why);
}

/* How often kept command `e` will have run again once it has: a
 * follower was not lost, and its count stays. */
static unsigned times_run_again(const struct cls__kept *e) {
  return e->follows ? e->replays : e->replays + 1;
}

/* The records run_kept set aside, back where they were: on what the
 * command wrote, the later command's record and stamp again; on an input
 * it hid from F2, the slot's own reference back. */
static void restore_later(struct cls__cmd *cmd, struct cls__failure *const *later,
                          const uint64_t *later_stamp, const bool *hidden, const bool *again) {
  for (size_t i = 0; i < cmd->nbind; i++) {
    if (!later[i])
      continue;
    struct cls__slot *slot = cmd->bind[i].slot;
    if (again[i] && !hidden[i]) {
      /* On what it only writes, a record the later command left that
       * runs again after it: that run replaces it, and back, it would
       * stand on the later command's input as its own chain (found in
       * review: set_k's failure, passed on by inc_k reading what set_k
       * writes, came back after set_k ran again, and inc_k was then not
       * run again, its chain naming it). */
      cls__failure_unref(later[i]);
      continue;
    }
    if (hidden[i] && !slot->failure) {
      slot->failure = later[i]; /* the slot's own reference, back */
    } else {
      if (slot->failure != later[i])
        cls__slot_set_failure(slot, later[i]);
      if (hidden[i])
        cls__failure_unref(later[i]); /* the reference it held before */
    }
    slot->write_stamp = later_stamp[i];
    cls__failure_unref(later[i]);
  }
}

/* The own records run_kept hid from F2: replaced by what a run left, else
 * (not run again, or refused before its write scope: a guard check, an
 * ordering error, out of memory, so the slot is as it was, clean with
 * the command's stamp) back on their slots, the slot's own reference:
 * the command still wrote nothing there. */
static void restore_own(struct cls__cmd *cmd, struct cls__failure *const *own, uint64_t stamp) {
  for (size_t i = 0; i < cmd->nbind; i++) {
    struct cls__slot *slot = cmd->bind[i].slot;
    if (own[i] && slot->write_stamp == stamp && !slot->failure)
      slot->failure = own[i];
    else
      cls__failure_unref(own[i]);
  }
}

/* cmd counts as skipped already (skipped_already): what it writes that
 * is clean now (a record of a later command that runs again was not put
 * back, restore_later) takes the failure of its first failed input, as a
 * skip's writes do (F2). */
static void skipped_writes(struct cls__cmd *cmd) {
  struct cls__failure *f = NULL;
  for (size_t i = 0; i < cmd->nbind && !f; i++)
    if (cmd->bind[i].access & CLS_READ)
      f = cmd->bind[i].slot->failure;
  for (size_t i = 0; i < cmd->nbind && f; i++)
    if ((cmd->bind[i].access & CLS_WRITE) && !cmd->bind[i].slot->failure)
      cls__slot_set_failure(cmd->bind[i].slot, f);
}

/* Whether f's skip chain names kept command e's first run (as `kind`,
 * or any kind where kind is 0).  Chain entries carry the command's write
 * stamp, as its kept entry does; a run of skips, its first and last. */
static bool chain_names(const struct cls__failure *f, const struct cls__kept *e, int kind) {
  for (size_t j = 0; j < f->nskips; j++) {
    const struct cls__skip *k = &f->skips[j];
    uint64_t last = k->last > k->stamp ? k->last : k->stamp;
    if ((!kind || k->kind == kind) && !k->origin && k->stream == e->stream &&
        k->stamp <= e->stamp && e->stamp <= last)
      return true;
  }
  return false;
}

/* Whether F2 would skip cmd on a failure whose chain names it already:
 * the poll that found that failure counted it as skipped on it (a task
 * the driver dropped from its list, or a command failed behind the loss,
 * F8).  Run again it would take a new position and a second entry in the
 * same chain (found by the model, CLS_MODEL_LATE=1, queues=2, seed
 * 0xc614e78181b16bba). */
static bool skipped_already(const struct cls__cmd *cmd, const struct cls__kept *e) {
  for (size_t i = 0; i < cmd->nbind; i++) {
    const struct cls__failure *f = cmd->bind[i].slot->failure;
    if ((cmd->bind[i].access & CLS_READ) && f)
      return chain_names(f, e, 0); /* the first failed input decides (F2) */
  }
  return false;
}

/* Whether what cmd wrote at its first run (write stamp e->stamp) carries
 * a failure whose chain names that run as untrusted: a replay (F8) found
 * an input it read failed after it ran.  Where a later command wrote
 * that input since (run_kept hides its record; a lost one left none), F2
 * would not see the failure the input held at the first run (a buffer
 * holds one record), and a run again would write
 * clean bytes computed from it (found in review: a copy lost after its
 * enqueue, reading what an upload whose failure was held wrote, then
 * overwritten by a set_k that failed behind the copy's read). */
static bool untrusted_already(cls_context *ctx, const struct cls__cmd *cmd,
                              const struct cls__kept *e) {
  for (size_t i = 0; i < cmd->nbind; i++) {
    const struct cls__slot *slot = cmd->bind[i].slot;
    const struct cls__failure *f = slot->failure;
    if (!(cmd->bind[i].access & CLS_WRITE) || !f || slot->write_stamp != e->stamp)
      continue;
    /* Not where the root is a command recovery ran again (taken before
     * this one, in submission order): that run gave the input back, and
     * this one reads it (found in review: inc_k, failed behind a loss,
     * ran again and left clean what the copy read). */
    if ((f->origin || !cls__keep_taken(ctx, f->stream, f->position)) &&
        chain_names(f, e, CLS_SKIP_UNTRUSTED))
      return true;
  }
  return false;
}

/* Runs kept command `e` (a copy: the ring may grow meanwhile) again
 * through the command path.  False when it could not be built (a binding
 * freed since the poll that found it lost), or when it is not run again
 * because it counts as skipped already (skipped_already). */
static bool run_kept(cls_context *ctx, struct cls__kept *e, uint64_t began) {
  struct cls__cmd cmd;
  struct cls_foreign_buffer bufs[CLS_MAX_ARGS];
  struct cls_foreign_cmd fc;
  cmd.kind = e->kind;
  cmd.op = e->op;
  cmd.stream = cls__stream_peek(ctx, e->stream);
  cmd.nbind = e->nbind;
  cmd.nwait = 0;
  cmd.lent = 0;
  cmd.foreign = NULL;
  if (!cmd.stream)
    return false;
  for (size_t i = 0; i < e->nbind; i++) {
    cmd.bind[i].handle = e->bind[i].handle;
    cmd.bind[i].access = e->bind[i].access;
    if (!(cmd.bind[i].slot = cls__resolve(ctx, e->bind[i].handle))) {
      not_replayed(ctx, cmd.stream, e, began);
      return false;
    }
  }
  if (e->kind == CLS__CMD_LAUNCH) {
    cmd.kernel = e->kernel;
    cmd.kcmd = e->kcmd;
    cls__kernel_for(e->kernel, e->stream, &cmd.kcmd.kernel, &cmd.kcmd.memo);
    cls__sizes_point(&cmd.kcmd, &e->sz);
    const unsigned char *bytes = e->bytes;
    if (e->over_size) { /* a copy: keeping the replay may move the pool */
      struct cls__keep *k = &ctx->keep;
      if (k->scratch_cap < e->over_size) {
        unsigned char *n = realloc(k->scratch, e->over_size);
        if (!n)
          return false;
        k->scratch = n;
        k->scratch_cap = e->over_size;
      }
      memcpy(k->scratch, k->over + e->over, e->over_size);
      bytes = k->scratch;
    }
    for (cl_uint i = 0; i < e->kcmd.nargs; i++) {
      cmd.kargs[i].size = e->args[i].size;
      cmd.kargs[i].value = e->args[i].at == SIZE_MAX ? NULL : bytes + e->args[i].at;
    }
    cmd.kcmd.args = cmd.kargs;
    memset(&cmd.x, 0, sizeof cmd.x);
  } else if (e->kind == CLS__CMD_FOREIGN) {
    /* The callback again, with its data and the buffers as they are now. */
    for (size_t i = 0; i < e->nbind; i++) {
      size_t base;
      cl_mem mem = cls__slot_base(ctx, cmd.bind[i].slot, &base);
      bufs[i] = (struct cls_foreign_buffer){mem, base, cmd.bind[i].slot->size,
                                            e->bind[i].access};
    }
    fc = (struct cls_foreign_cmd){.fn = e->fn, .data = e->data, .label = e->kcmd.name,
                                  .stream = e->stream, .nbuffers = (cl_uint)e->nbind,
                                  .buffers = bufs};
    cmd.foreign = &fc;
    cmd.kernel = NULL;
    cmd.kcmd = (struct cls_kernel_cmd){.name = e->kcmd.name};
    memset(&cmd.x, 0, sizeof cmd.x);
  } else {
    cmd.kernel = NULL;
    cmd.x = e->x;
    if (e->kind == CLS__CMD_FILL)
      cmd.x.pattern = e->pattern;
  }
  /* Before any record is set aside below: a later command's record on an
   * input says that command wrote no bytes there (it did not run), and
   * hidden, it read as if one that ran had overwritten the input (found
   * by the model, CLS_MODEL_LATE=1, seed 0xde375f49fca3: a launch skipped
   * later on another input kept a command from running again). */
  if (input_overwritten(ctx, e, &cmd, began)) {
    stopped(ctx, cmd.stream, e, began,
            e->follows ? "what it reads changed since it ran"
                       : "a later command on its queue ran and overwrote what it reads");
    return true;
  }
  if (e->follows && e->stale) {
    stopped(ctx, cmd.stream, e, began, "a sync handed its host memory back");
    return true;
  }
  /* A buffer it touches that a later command left a record on (one that
   * did not run and is not run again: skipped, refused, F12, or failed
   * for another cause) keeps that record: in program order that command
   * comes after it (a later writer that ran waited for this one, failed
   * behind it, and runs again after it).  Nor does F2 see that record on
   * an input: what this command reads is what was there at its enqueue,
   * which nothing that ran has overwritten since (a later skip writes no
   * bytes); else it was skipped on it, at a new position, and named in
   * that record's chain (found by the model, CLS_MODEL_LATE=1).  Only
   * records of commands issued before this replay began (`began`): what
   * the replay itself wrote, before this command, is this command's input. */
  struct cls__failure *later[CLS_MAX_ARGS], *own[CLS_MAX_ARGS];
  uint64_t later_stamp[CLS_MAX_ARGS];
  bool hidden[CLS_MAX_ARGS], again[CLS_MAX_ARGS];
  /* An input a later command wrote since (its record hidden below, or
   * none: a lost writer leaves none, rusticl) no longer says what this
   * command read at its first run (untrusted_already). */
  bool read_later = false;
  for (size_t i = 0; i < e->nbind; i++) {
    struct cls__slot *slot = cmd.bind[i].slot;
    struct cls__failure *f = slot->failure;
    later[i] = own[i] = NULL;
    hidden[i] = again[i] = false;
    read_later |= (e->bind[i].access & CLS_READ) && slot->write_stamp > e->stamp &&
                  slot->write_stamp <= began;
    if (slot->write_stamp == e->stamp && (e->bind[i].access & CLS_READ) && f && f->async &&
        f->origin == 0 && cls__behind_failed_status(f->cl_status) && f->stream == e->stream &&
        f->position == e->position) {
      /* Its own record, on a buffer it reads and writes: it failed
       * behind a command whose loss was found after (failure/kept.h,
       * `behind`), so it wrote nothing there, and F2 must not see the
       * record: running again replaces it (found by the model,
       * CLS_MODEL_LATE=1, context 0x27debc283f27ab6e: an add_s0 reading
       * and writing b0 was skipped on its own failure). */
      own[i] = f; /* the slot's reference, held meanwhile */
      slot->failure = NULL;
      continue;
    }
    if (slot->write_stamp > e->stamp && slot->write_stamp <= began && f &&
        f != &cls__never_written && !f->provisional) {
      later[i] = f;
      later_stamp[i] = slot->write_stamp;
      again[i] = cls__keep_runs_again(ctx, slot->write_stamp);
      cls__failure_ref(f);
      if (e->bind[i].access & CLS_READ) { /* the slot's reference is held here meanwhile */
        slot->failure = NULL;
        hidden[i] = true;
      }
    }
  }
  if (skipped_already(&cmd, e) || (read_later && untrusted_already(ctx, &cmd, e))) {
    restore_own(&cmd, own, e->stamp);
    restore_later(&cmd, later, later_stamp, hidden, again);
    skipped_writes(&cmd);
    return false; /* not run again: nothing to count */
  }
  unsigned replaying = ctx->replaying;
  ctx->replaying = times_run_again(e);
  ctx->replay_origin = e->origin; /* a failure of it is placed where it was */
  /* F2 first; a failure is the buffers', or a download's: its sync reports
   * it (run with its pending read, F8 taints that as the first run's) */
  int rc = cls__run(ctx, &cmd, e->read, NULL);
  ctx->replay_origin = 0;
  ctx->replaying = replaying;
  restore_own(&cmd, own, e->stamp);
  restore_later(&cmd, later, later_stamp, hidden, again);
  if (e->read && rc >= 0) {
    e->read->seq = cmd.seq;
  } else if (e->read && rc < 0) {
    struct cls__failure *f = cls__read_failure(ctx, e->stream, cmd.bind, 1);
    if (f) {
      read_fails(e->read, f);
    } else if (!e->read->failure) { /* its enqueue failed: no record holds it */
      struct cls__cmd_at where = {.stream = e->stream, .kind = e->kind,
                                  .position = cmd.stream->issued, .op = e->op, .kernel = ""};
      f = cls__failure_mint(ctx, CLS_ECL, CL_DEVICE_NOT_AVAILABLE, &where, true,
                            "replay stopped: run again after a loss, %s on stream %d could not "
                            "be enqueued: %s",
                            e->op, e->stream, cls_strerror(rc));
      read_fails(e->read, f);
      cls__failure_unref(f);
    }
  }
  return true;
}

void cls__keep_replay(cls_context *ctx) {
  struct cls__keep *k = &ctx->keep;
  if (k->busy || !k->nlost)
    return;
  k->busy = true;
  /* Every command that failed behind a lost one is found before any runs
   * again, so that all run in their submission order (a write-after-read
   * wait of the original order then holds again). */
  cls__poll_all(ctx, true);
  if (ctx->lost_mask)
    cls__relocate_lost(ctx);
  /* What ran after them on the buffers they write runs again after them
   * (a device may run what is queued behind a failed command): else the
   * bytes of what ran later are overwritten, or were computed from what
   * the lost ones never wrote. */
  cls__keep_follow(ctx);
  unsigned count[CLS_MAX_STREAMS] = {0}, most[CLS_MAX_STREAMS] = {0};
  uint64_t streams = 0;
  /* Writes stamped after this are the replay's own (run_kept). */
  uint64_t began = ctx->stamp;
  struct cls__kept e;
  while (k->nlost && cls__keep_take_lost(ctx, &e)) {
    struct cls__stream *s = cls__stream_peek(ctx, e.stream);
    if (!s || !run_kept(ctx, &e, began))
      continue;
    s->stats.replays++;
    count[e.stream]++;
    if (times_run_again(&e) > most[e.stream])
      most[e.stream] = times_run_again(&e);
    streams |= 1ull << e.stream;
    if (ctx->trace)
      cls__trace_failure(ctx->trace, "replay", e.stream,
                         e.kind == CLS__CMD_LAUNCH ? e.kcmd.name : e.op, s->issued,
                         e.follows ? "run again: it ran after a lost command, on what that writes"
                                   : "run again: lost after its enqueue");
  }
  for (; streams; streams &= streams - 1) {
    int id = __builtin_ctzll(streams);
    const struct cls__stream *s = cls__stream_peek(ctx, id);
    cls__log(&ctx->logger, CLS_LOG_ERRORS,
             "stream %d: replayed %u command%s on generation %llu (lost after their enqueue, "
             "failed behind such a command, or ran after one on what it writes; run again %u "
             "of at most %u times)",
             id, count[id], count[id] == 1 ? "" : "s", (unsigned long long)s->generation,
             most[id], ctx->recover);
  }
  k->busy = false;
}

