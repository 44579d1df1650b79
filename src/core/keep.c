/* Recovery's retention and the replay at completion (keep.h;
 * docs/devices.md, "Recovery").  The ring holds each command its queue
 * accepted, in submission order, until its stream proves it complete; an
 * entry is a copy of what the command path needs to enqueue it again, so
 * nothing of the caller's stack or of the kernel's argument memo (which
 * the next launch changes) is kept by pointer, except the host memory of
 * a non-blocking upload or download, valid until the stream is synced
 * (cls_upload_async, cls_download_async). */
#include "core/keep.h"
#include "core/command.h"
#include "core/kernel.h"
#include "core/relocate.h"
#include "failure/poll.h"
#include "base/handle.h"
#include "stream/pool.h"
#include "trace/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct cls__kept *at(struct cls__keep *k, size_t i) {
  return &k->ring[(k->head + i) & (k->cap - 1)];
}

/* Whether cmd can be enqueued again from a copy: a launch whose arguments
 * fit, an upload or download that did not block (their host memory stays
 * the caller's until the stream is synced, as OpenCL asks of a
 * non-blocking transfer: a download run again writes the same bytes to
 * the same place once its inputs ran again), a copy, a fill -- of buffers
 * or images alike (an image transfer's origins, region and pitches are in
 * struct cls_transfer, copied whole).  Not a blocking transfer (finished
 * at its return), nor a foreign command (its descriptor and user data
 * live for its call only). */
static bool keepable(const struct cls__cmd *cmd) {
  switch (cmd->kind) {
  case CLS__CMD_LAUNCH: /* its arguments' size is checked as they are copied */
    return cmd->kcmd.dims <= 3 && cmd->kcmd.nargs <= CLS_MAX_ARGS;
  case CLS__CMD_WRITE:
  case CLS__CMD_READ:
    return !cmd->x.blocking;
  case CLS__CMD_COPY:
    return true;
  case CLS__CMD_FILL:
    return cmd->x.pattern_size <= CLS__KEEP_PATTERN;
  default:
    return false;
  }
}

/* Room for `need` more bytes at the overflow pool's end: the kept spans
 * (in ring order, so in offset order) move down over the pruned ones
 * first, and the pool doubles only when they still fill it. */
static bool over_reserve(struct cls__keep *k, size_t need) {
  if (need <= k->over_cap - k->over_used)
    return true;
  size_t used = 0;
  for (size_t i = 0; i < k->len; i++) {
    struct cls__kept *e = at(k, i);
    if (!e->over_size)
      continue;
    memmove(k->over + used, k->over + e->over, e->over_size);
    e->over = used;
    used += e->over_size;
  }
  k->over_used = used;
  if (need <= k->over_cap - used)
    return true;
  size_t cap = k->over_cap ? 2 * k->over_cap : 4096;
  while (cap - used < need)
    cap *= 2;
  unsigned char *n = realloc(k->over, cap);
  if (!n)
    return false;
  k->over = n;
  k->over_cap = cap;
  return true;
}

bool cls__keep_add(cls_context *ctx, const struct cls__cmd *cmd, uint64_t stamp,
                   struct cls__pending_read *read) {
  struct cls__keep *k = &ctx->keep;
  if (!keepable(cmd))
    return true;
  if (k->len == k->cap)
    cls__keep_prune(ctx);
  if (k->len == k->cap &&
      !cls__ring_grow((void **)&k->ring, &k->cap, &k->head, k->len, sizeof *k->ring, 16))
    return false;
  struct cls__kept *e = at(k, k->len);
  e->seq = cmd->seq;
  e->stamp = stamp;
  e->stream = cmd->stream->id;
  e->kind = cmd->kind;
  e->replays = ctx->replaying;
  e->lost = false;
  e->op = cmd->op;
  e->read = read;
  e->nbind = cmd->nbind;
  for (size_t i = 0; i < cmd->nbind; i++) {
    e->bind[i].handle = cmd->bind[i].handle;
    e->bind[i].access = cmd->bind[i].access;
  }
  e->over_size = 0;
  if (cmd->kind == CLS__CMD_LAUNCH) {
    e->kernel = cmd->kernel;
    e->kcmd = cmd->kcmd;
    for (cl_uint d = 0; d < cmd->kcmd.dims; d++) {
      e->global[d] = cmd->kcmd.global[d];
      e->local[d] = cmd->kcmd.local ? cmd->kcmd.local[d] : 0;
    }
    e->has_local = cmd->kcmd.local != NULL;
    size_t total = 0;
    for (cl_uint i = 0; i < cmd->kcmd.nargs; i++)
      if (cmd->kargs[i].value)
        total += cmd->kargs[i].size;
    unsigned char *bytes = e->bytes;
    if (total > CLS__KEEP_ARG_BYTES) { /* rare: a large value by argument */
      if (!over_reserve(k, total))
        return false; /* not kept: its loss is reported, not replayed */
      e->over = k->over_used;
      e->over_size = total;
      k->over_used += total;
      bytes = k->over + e->over;
    }
    size_t off = 0;
    for (cl_uint i = 0; i < cmd->kcmd.nargs; i++) {
      size_t size = cmd->kargs[i].size;
      const void *v = cmd->kargs[i].value;
      e->args[i].size = size;
      e->args[i].at = v ? off : SIZE_MAX;
      if (!v)
        continue;
      if (size == sizeof(cl_mem)) /* a buffer, the usual argument: no call */
        memcpy(bytes + off, v, sizeof(cl_mem));
      else
        memcpy(bytes + off, v, size);
      off += size;
    }
  } else {
    e->x = cmd->x;
    if (cmd->kind == CLS__CMD_FILL)
      memcpy(e->pattern, cmd->x.pattern, cmd->x.pattern_size);
  }
  k->len++;
  return true;
}

void cls__keep_forget_read(cls_context *ctx, const struct cls__pending_read *r) {
  struct cls__keep *k = &ctx->keep;
  for (size_t i = 0; i < k->len; i++)
    if (at(k, i)->read == r)
      at(k, i)->read = NULL;
}

/* A download run again that could not run (or did not reach its queue):
 * its sync reports f (a reference is taken), as it reports a failure F8
 * finds. */
static void read_fails(struct cls__pending_read *read, struct cls__failure *f) {
  if (!read || !f || read->failure)
    return;
  read->failure = f;
  cls__failure_ref(f);
}

void cls__keep_prune(cls_context *ctx) {
  struct cls__keep *k = &ctx->keep;
  while (k->len) {
    const struct cls__kept *e = at(k, 0);
    const struct cls__stream *s = &ctx->pool.streams[e->stream];
    if (e->lost || (s->created && s->completed < e->seq))
      break;
    k->head = (k->head + 1) & (k->cap - 1);
    k->len--;
  }
  if (!k->len)
    k->over_used = 0; /* nothing kept overflows: the pool is free again */
}

bool cls__keep_mark(cls_context *ctx, int stream, uint64_t seq, char *why, size_t cap) {
  struct cls__keep *k = &ctx->keep;
  if (why && cap)
    why[0] = '\0';
  for (size_t i = 0; i < k->len; i++) {
    struct cls__kept *e = at(k, i);
    if (e->stream != stream || e->seq != seq)
      continue;
    if (e->lost)
      return true;
    if (e->replays >= ctx->recover) {
      if (why)
        snprintf(why, cap, " (replay stopped: run again %u time%s, the bound CLS_RECOVER=%u)",
                 e->replays, e->replays == 1 ? "" : "s", ctx->recover);
      return false;
    }
    e->lost = true;
    k->nlost++;
    return true;
  }
  return false;
}

bool cls__keep_is_marked(cls_context *ctx, int stream, uint64_t seq) {
  struct cls__keep *k = &ctx->keep;
  for (size_t i = 0; i < k->len; i++) {
    const struct cls__kept *e = at(k, i);
    if (e->stream == stream && e->seq == seq)
      return e->lost;
  }
  return false;
}

unsigned cls__keep_replays(cls_context *ctx, int stream, uint64_t seq) {
  struct cls__keep *k = &ctx->keep;
  for (size_t i = 0; i < k->len; i++) {
    const struct cls__kept *e = at(k, i);
    if (e->stream == stream && e->seq == seq)
      return e->replays;
  }
  return 0;
}

void cls__keep_unmark(cls_context *ctx, int stream, uint64_t seq) {
  struct cls__keep *k = &ctx->keep;
  for (size_t i = 0; i < k->len; i++) {
    struct cls__kept *e = at(k, i);
    if (e->stream == stream && e->seq == seq && e->lost) {
      e->lost = false;
      k->nlost--;
      return;
    }
  }
}

/* The marked entry first in submission order; the ring's index. */
static size_t first_lost(struct cls__keep *k) {
  for (size_t i = 0; i < k->len; i++)
    if (at(k, i)->lost)
      return i;
  return k->len;
}

/* Kept command `e` cannot run again (a buffer it binds was freed after
 * the poll that found it lost): the old rule, its write set takes the
 * loss, and the record says why it was not replayed. */
static void not_replayed(cls_context *ctx, struct cls__stream *s, const struct cls__kept *e) {
  bool launch = e->kind == CLS__CMD_LAUNCH;
  struct cls__cmd_at where = {.stream = s->id,
                              .kind = e->kind,
                              .position = s->issued,
                              .op = e->op,
                              .kernel = launch ? e->kcmd.name : ""};
  struct cls__failure *f = cls__failure_mint(
      ctx, launch ? CLS_ELAUNCH : CLS_ECL, CL_DEVICE_NOT_AVAILABLE, &where, true,
      "lost with stream %d generation %llu (not replayed: a buffer it binds was freed): "
      "command of %s failed after its enqueue with CL_DEVICE_NOT_AVAILABLE",
      s->id, (unsigned long long)s->generation, launch ? e->kcmd.name : e->op);
  if (!f)
    return;
  read_fails(e->read, f);
  uint64_t stamp = ++ctx->stamp;
  for (size_t i = 0; i < e->nbind; i++) {
    struct cls__slot *slot = cls__resolve(ctx, e->bind[i].handle);
    if (slot && (e->bind[i].access & CLS_WRITE)) {
      cls__slot_set_failure(slot, f);
      slot->write_stamp = stamp;
    }
  }
  cls__failure_unref(f);
}

/* Runs kept command `e` (a copy: the ring may grow meanwhile) again
 * through the command path.  False when it could not be built (a binding
 * freed since the poll that found it lost). */
static bool run_kept(cls_context *ctx, struct cls__kept *e) {
  struct cls__cmd cmd;
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
      not_replayed(ctx, cmd.stream, e);
      return false;
    }
  }
  if (e->kind == CLS__CMD_LAUNCH) {
    cmd.kernel = e->kernel;
    cmd.kcmd = e->kcmd;
    cls__kernel_for(e->kernel, e->stream, &cmd.kcmd.kernel, &cmd.kcmd.memo);
    cmd.kcmd.global = e->global;
    cmd.kcmd.local = e->has_local ? e->local : NULL;
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
  } else {
    cmd.kernel = NULL;
    cmd.x = e->x;
    if (e->kind == CLS__CMD_FILL)
      cmd.x.pattern = e->pattern;
  }
  unsigned replaying = ctx->replaying;
  ctx->replaying = e->replays + 1;
  /* F2 first; a failure is the buffers', or a download's: its sync reports
   * it (run with its pending read, F8 taints that as the first run's) */
  int rc = cls__run(ctx, &cmd, e->read, NULL);
  ctx->replaying = replaying;
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
  unsigned count[CLS_MAX_STREAMS] = {0}, most[CLS_MAX_STREAMS] = {0};
  uint64_t streams = 0;
  while (k->nlost) {
    size_t i = first_lost(k);
    if (i == k->len) {
      k->nlost = 0;
      break;
    }
    struct cls__kept e = *at(k, i);
    at(k, i)->lost = false;
    k->nlost--;
    struct cls__stream *s = cls__stream_peek(ctx, e.stream);
    if (!s || !run_kept(ctx, &e))
      continue;
    s->stats.replays++;
    count[e.stream]++;
    if (e.replays + 1 > most[e.stream])
      most[e.stream] = e.replays + 1;
    streams |= 1ull << e.stream;
    if (ctx->trace)
      cls__trace_failure(ctx->trace, "replay", e.stream,
                         e.kind == CLS__CMD_LAUNCH ? e.kcmd.name : e.op, s->issued,
                         "run again: lost after its enqueue");
  }
  for (; streams; streams &= streams - 1) {
    int id = __builtin_ctzll(streams);
    const struct cls__stream *s = cls__stream_peek(ctx, id);
    cls__log(&ctx->logger, CLS_LOG_ERRORS,
             "stream %d: replayed %u command%s on generation %llu (lost after their enqueue, "
             "or failed behind such a command; run again %u of at most %u times)",
             id, count[id], count[id] == 1 ? "" : "s", (unsigned long long)s->generation,
             most[id], ctx->recover);
  }
  k->busy = false;
}

void cls__keep_fini(cls_context *ctx) {
  free(ctx->keep.ring);
  free(ctx->keep.over);
  free(ctx->keep.scratch);
  memset(&ctx->keep, 0, sizeof ctx->keep);
}
