/* Recovery's retention (kept.h; docs/devices.md, "Recovery").  The ring
 * holds each command its queue accepted, in submission order, until its
 * stream proves it complete; an entry is a copy of what the command path
 * needs to enqueue it again, so nothing of the caller's stack or of the
 * kernel's argument memo (which the next launch changes) is kept by
 * pointer, except the host memory of a non-blocking upload or download,
 * valid until the stream is synced (cls_upload_async, cls_download_async),
 * and a foreign command's data.  The replay of what a poll marked lost is
 * the core's (core/keep.c). */
#include "failure/kept.h"
#include "failure/log.h"
#include "stream/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct cls__kept *at(struct cls__keep *k, size_t i) {
  return &k->ring[(k->head + i) & (k->cap - 1)];
}

/* The kept entry of command `seq` of `stream`, NULL when not kept. */
static struct cls__kept *find(struct cls__keep *k, int stream, uint64_t seq) {
  for (size_t i = 0; i < k->len; i++) {
    struct cls__kept *e = at(k, i);
    if (e->stream == stream && e->seq == seq)
      return e;
  }
  return NULL;
}

/* Whether cmd can be enqueued again from a copy: a launch, an upload or
 * download that did not block (their host memory stays the caller's until
 * the stream is synced, as OpenCL asks of a non-blocking transfer: a
 * download run again writes the same bytes to the same place once its
 * inputs ran again), a copy, a fill -- of buffers or images alike (an
 * image transfer's origins, region and pitches are in struct
 * cls_transfer, copied whole) -- and a foreign command (its callback and
 * data: cls_foreign says they may be used again until a sync).  Not a
 * blocking transfer (finished at its return). */
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
  case CLS__CMD_FOREIGN:
    return cmd->foreign && cmd->foreign->fn && cmd->nbind <= CLS_MAX_ARGS;
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

/* Notes the bytes cmd writes on each buffer (struct cls__slot's span):
 * the write before joins the span, which starts again where that write
 * was not noted here, or is older than every kept command (none can ask
 * about it). */
static void note_span(struct cls__keep *k, const struct cls__cmd *cmd, uint64_t stamp) {
  for (size_t i = 0; i < cmd->nbind; i++) {
    struct cls__slot *slot = cmd->bind[i].slot;
    if (!(cmd->bind[i].access & CLS_WRITE))
      continue;
    uint64_t prev = slot->write_stamp;
    if (prev != slot->span_last || !k->len || prev < at(k, 0)->stamp) {
      slot->span_base = slot->span_prev = prev;
      slot->span_lo = SIZE_MAX; /* empty: overlaps nothing, and the union below holds */
      slot->span_hi = 0;
    } else {
      slot->span_lo = slot->last_lo < slot->span_lo ? slot->last_lo : slot->span_lo;
      slot->span_hi = slot->last_hi > slot->span_hi ? slot->last_hi : slot->span_hi;
      slot->span_prev = prev;
    }
    cls__binding_bytes(cmd->kind, &cmd->x, CLS_WRITE, slot->size, &slot->last_lo,
                       &slot->last_hi);
    slot->span_last = stamp;
  }
}

/* Whether cmd must come after a command of another stream that no poll
 * has seen finish: the last write of what it binds, or, where it writes,
 * the reads since.  Read before the command's own use updates the slots.
 * Whatever it must come after, its stream is ordered after by now
 * (synced, order.c): where all of that has finished, nothing is left to
 * look at (one stream, or a stream not waiting on others). */
static bool crosses(const cls_context *ctx, const struct cls__cmd *cmd) {
  const struct cls__stream *me = cmd->stream, *streams = ctx->pool.streams;
  bool waits = false;
  for (uint64_t m = me->synced_mask; m && !waits; m &= m - 1) {
    int t = __builtin_ctzll(m);
    waits = me->synced[t] > streams[t].completed;
  }
  if (!waits)
    return false;
  const unsigned s = (unsigned)me->id;
  for (const struct cls__binding *b = cmd->bind, *end = b + cmd->nbind; b < end; b++) {
    const struct cls__slot *slot = b->slot;
    unsigned w = (unsigned)slot->writer; /* -1 (none) is above every stream */
    if (w != s && w < CLS_MAX_STREAMS && slot->write_seq > streams[w].completed)
      return true;
    uint64_t m = b->access & CLS_WRITE ? slot->read_mask & ~(1ull << s) : 0;
    for (; m; m &= m - 1) {
      int r = __builtin_ctzll(m);
      if (slot->read_seq[r] > streams[r].completed)
        return true;
    }
  }
  return false;
}

/* Recovery on, before cmd's writes take the buffers (cmd is ordered
 * already): the reads of other streams since the last write that are not
 * known complete stay on each buffer it writes (command.c, commit: the
 * read mask a write leaves), and cmd's stream counts as ordered after
 * those streams only as far as they are known complete.  So a later
 * write of its stream waits for those reads itself (order.c), though cmd
 * waited for them already: where cmd fails behind a lost command, a
 * device may run what its queue holds behind it (PoCL does), and the
 * write would overwrite what the lost command reads before it runs again
 * (docs/devices.md, "Recovery").  A read or a write after a write needs
 * nothing more: what ran after a lost command on what it writes runs
 * again after it (core/keep.c, cls__keep_follow). */
static void hold_reads(cls_context *ctx, const struct cls__cmd *cmd) {
  struct cls__stream *s = cmd->stream;
  const uint64_t own = 1ull << s->id;
  for (size_t i = 0; i < cmd->nbind; i++) {
    if (!(cmd->bind[i].access & CLS_WRITE))
      continue; /* commit reads reads_held on a write binding only; the
                   buffer may be bound for reading too, after it */
    struct cls__slot *slot = cmd->bind[i].slot;
    uint64_t held = slot->read_mask & ~own;
    for (uint64_t m = held; m; m &= m - 1) {
      int r = __builtin_ctzll(m);
      uint64_t done = ctx->pool.streams[r].completed;
      if (slot->read_seq[r] <= done)
        held &= ~(1ull << r);
      else if (s->synced[r] > done)
        s->synced[r] = done;
    }
    slot->reads_held = held;
  }
}

/* Run again, write stamp `stamp`, first submitted with `origin`: noted
 * for cls__keep_placed while its log entry may be logged.  What the log
 * no longer holds goes first (the table and the log are both in stamp
 * order).  Out of memory: not noted, and a failure of a command run
 * again later sees this one as a later write (replay.c). */
static void note_again(cls_context *ctx, uint64_t stamp, uint64_t origin) {
  struct cls__keep *k = &ctx->keep;
  uint64_t oldest = ctx->log.len ? cls__log_at(ctx, 0)->stamp : UINT64_MAX;
  size_t drop = 0;
  while (drop < k->nagain && k->again[drop].stamp < oldest)
    drop++;
  if (drop) {
    memmove(k->again, k->again + drop, (k->nagain - drop) * sizeof *k->again);
    k->nagain -= drop;
  }
  if (!cls__grow((void **)&k->again, &k->again_cap, k->nagain + 1, sizeof *k->again, 16))
    return;
  k->again[k->nagain].stamp = stamp;
  k->again[k->nagain].origin = origin;
  k->nagain++;
}

bool cls__keep_add(cls_context *ctx, const struct cls__cmd *cmd, uint64_t position,
                   uint64_t stamp, struct cls__pending_read *read) {
  struct cls__keep *k = &ctx->keep;
  hold_reads(ctx, cmd);
  note_span(k, cmd, stamp);
  if (!keepable(cmd))
    return true;
  if (k->len == k->cap)
    cls__keep_prune(ctx);
  if (k->len == k->cap &&
      !cls__ring_grow((void **)&k->ring, &k->cap, &k->head, k->len, sizeof *k->ring, 16))
    return false;
  struct cls__kept *e = at(k, k->len);
  e->seq = cmd->seq;
  e->position = position;
  e->stamp = stamp;
  e->stream = cmd->stream->id;
  e->kind = cmd->kind;
  e->replays = ctx->replaying;
  e->origin = ctx->replay_origin ? ctx->replay_origin : stamp;
  if (ctx->replay_origin)
    note_again(ctx, stamp, ctx->replay_origin);
  e->lost = false;
  e->follows = false;
  e->failed = false;
  e->behind = false;
  e->stale = false;
  e->cross = crosses(ctx, cmd);
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
    cls__sizes_keep(&e->sz, cmd->kcmd.dims, cmd->kcmd.global, cmd->kcmd.local,
                    cmd->kcmd.offset);
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
  } else if (cmd->kind == CLS__CMD_FOREIGN) {
    e->fn = cmd->foreign->fn;
    e->data = cmd->foreign->data;
    e->kcmd = (struct cls_kernel_cmd){.name = cmd->kcmd.name}; /* the context's copy */
    memset(&e->x, 0, sizeof e->x);
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
  if (why && cap)
    why[0] = '\0';
  struct cls__kept *e = find(&ctx->keep, stream, seq);
  if (!e)
    return false;
  if (e->lost)
    return true;
  if (e->replays >= ctx->recover) {
    if (why)
      snprintf(why, cap, " (replay stopped: run again %u time%s, the bound CLS_RECOVER=%u)",
               e->replays, e->replays == 1 ? "" : "s", ctx->recover);
    return false;
  }
  e->lost = true;
  ctx->keep.nlost++;
  return true;
}

void cls__keep_failed(cls_context *ctx, int stream, uint64_t first, uint64_t last) {
  struct cls__keep *k = &ctx->keep;
  for (size_t i = 0; i < k->len; i++) {
    struct cls__kept *e = at(k, i);
    if (e->stream == stream && e->seq >= first && e->seq <= last)
      e->failed = true;
  }
}

void cls__keep_behind(cls_context *ctx, int stream, uint64_t seq) {
  struct cls__kept *e = find(&ctx->keep, stream, seq);
  if (e && e->failed && !e->lost)
    e->behind = true;
}

bool cls__keep_any_behind(const cls_context *ctx) {
  struct cls__keep *k = (struct cls__keep *)&ctx->keep;
  for (size_t i = 0; i < k->len; i++)
    if (at(k, i)->behind)
      return true;
  return false;
}

/* Whether entry e binds handle h with an access in `access`. */
static bool binds(const struct cls__kept *e, cls_buffer h, int access) {
  for (size_t b = 0; b < e->nbind; b++)
    if (e->bind[b].handle.bits == h.bits && (e->bind[b].access & access))
      return true;
  return false;
}

/* Adds the handles e binds with `access` to set[0..*n) (cap entries),
 * each once; past cap, *full is set and the set is every buffer. */
static void note_bound(const struct cls__kept *e, int access, cls_buffer *set, size_t *n,
                       size_t cap, bool *full) {
  for (size_t b = 0; b < e->nbind && !*full; b++) {
    if (!(e->bind[b].access & access))
      continue;
    bool known = false;
    for (size_t i = 0; i < *n && !known; i++)
      known = set[i].bits == e->bind[b].handle.bits;
    if (known)
      continue;
    if (*n == cap)
      *full = true;
    else
      set[(*n)++] = e->bind[b].handle;
  }
}

void cls__keep_follow(cls_context *ctx) {
  struct cls__keep *k = &ctx->keep;
  /* The buffers what runs again writes, so far in submission order; a
   * follower's writes join them.  Bounded as a command's bindings are:
   * past the bound, every later command that ran follows. */
  cls_buffer written[4 * CLS_MAX_ARGS];
  size_t nw = 0;
  bool all = false;
  /* The buffers what runs again (not as a follower) reads: a command that
   * failed behind one of them overwriting what it reads (a write after
   * its read waited for it) runs again after it too (found in review: a
   * lost copy's source, overwritten on another stream by a launch that
   * failed behind the copy, was left with that failure).  Past the bound,
   * every such failed command runs again. */
  cls_buffer read[4 * CLS_MAX_ARGS];
  size_t nr = 0;
  bool rall = false;
  /* The streams of what runs again: a later command of the same queue
   * that ran was ordered after other queues' commands only through the
   * waits of the one that failed, and a device that fails a command as
   * soon as one of its waits fails (rusticl, PoCL) lets it run before the
   * others finished (found on rusticl: a fill ran before the earlier
   * fill of the same buffer on another stream, which then overwrote
   * it).  Of those that ran, only one that had to come after another
   * stream's command not seen finished when it was enqueued (cross) can
   * have: one that did not ran on what its own stream and finished
   * commands left (found by
   * the model, CLS_MODEL_LATE=1, context 0xaa4c403baa40926b: an inc of a
   * buffer only its stream used, behind a fill that failed behind the
   * loss, was stopped as a follower that reads what it wrote). */
  uint64_t streams = 0;
  for (size_t i = 0; i < k->len; i++) {
    struct cls__kept *e = at(k, i);
    if (!e->lost) {
      if ((!nw && !streams) || (e->failed && !e->behind))
        continue;
      bool touches = all || ((streams >> e->stream & 1) && (e->failed || e->cross));
      for (size_t w = 0; w < nw && !touches; w++)
        touches = binds(e, written[w], CLS_READ | CLS_WRITE);
      if (e->failed && !touches)
        touches = rall;
      for (size_t r = 0; r < nr && e->failed && !touches; r++)
        touches = binds(e, read[r], CLS_WRITE);
      if (!touches)
        continue;
      if (e->failed) {
        /* It failed behind one of them, found before that one's loss
         * was (a poll of its stream came first): it never ran, and runs
         * again after it, as one failed behind it found later would
         * (found by the model, CLS_MODEL_LATE=1, context
         * 0xf0cab7272253ebe9).  Past the bound its record stands. */
        if (e->replays >= ctx->recover)
          continue;
        e->failed = e->behind = false;
        e->lost = true;
        k->nlost++;
        streams |= 1ull << e->stream;
      } else {
        const struct cls__stream *st = &ctx->pool.streams[e->stream];
        e->lost = true;
        e->follows = true;
        e->stale = (e->kind == CLS__CMD_WRITE || e->kind == CLS__CMD_READ ||
                    e->kind == CLS__CMD_FOREIGN) &&
                   e->seq <= st->host_synced;
        k->nlost++;
      }
    } else if (!e->follows) {
      streams |= 1ull << e->stream;
    }
    if (!e->follows)
      note_bound(e, CLS_READ, read, &nr, sizeof read / sizeof *read, &rall);
    note_bound(e, CLS_WRITE, written, &nw, sizeof written / sizeof *written, &all);
  }
}

bool cls__keep_is_marked(cls_context *ctx, int stream, uint64_t seq) {
  const struct cls__kept *e = find(&ctx->keep, stream, seq);
  return e && e->lost;
}

bool cls__keep_runs_again(cls_context *ctx, uint64_t stamp) {
  const struct cls__keep *k = &ctx->keep;
  for (size_t i = 0; i < k->len; i++) {
    const struct cls__kept *e = at((struct cls__keep *)k, i);
    if (e->stamp == stamp)
      return e->lost && !e->follows;
  }
  return false;
}

bool cls__keep_taken(const cls_context *ctx, int stream, uint64_t position) {
  const struct cls__keep *k = &ctx->keep;
  unsigned n = k->ntaken < CLS__KEEP_TAKEN ? k->ntaken : CLS__KEEP_TAKEN;
  for (unsigned i = 0; i < n; i++)
    if (k->taken[i].stream == stream && k->taken[i].position == position)
      return true;
  return false;
}

unsigned cls__keep_replays(cls_context *ctx, int stream, uint64_t seq) {
  const struct cls__kept *e = find(&ctx->keep, stream, seq);
  return e ? e->replays : 0;
}

uint64_t cls__keep_origin(cls_context *ctx, int stream, uint64_t seq) {
  const struct cls__kept *e = find(&ctx->keep, stream, seq);
  return e ? e->origin : 0;
}

uint64_t cls__keep_placed(const cls_context *ctx, uint64_t stamp) {
  const struct cls__keep *k = &ctx->keep;
  for (size_t i = k->nagain; i-- > 0 && k->again[i].stamp >= stamp;)
    if (k->again[i].stamp == stamp)
      return k->again[i].origin;
  return stamp;
}

bool cls__keep_before(cls_context *ctx, uint64_t stamp) {
  /* The command keep.c runs again now: taken, so no longer marked, and
   * not kept anew until its queue accepts it (its enqueue may poll). */
  if (ctx->replay_origin && ctx->replay_origin < stamp)
    return true;
  struct cls__keep *k = &ctx->keep;
  for (size_t i = 0; i < k->len; i++) {
    const struct cls__kept *e = at(k, i);
    if (e->origin >= stamp)
      continue; /* not before it; a run again, kept at the ring's tail,
                   may be (the ring is in stamp order, not origin order) */
    const struct cls__stream *s = &ctx->pool.streams[e->stream];
    if (e->lost || (e->origin != e->stamp && s->created && s->completed < e->seq))
      return true;
  }
  return false;
}

void cls__keep_unmark(cls_context *ctx, int stream, uint64_t seq) {
  struct cls__kept *e = find(&ctx->keep, stream, seq);
  if (e && e->lost) {
    e->lost = false;
    ctx->keep.nlost--;
  }
}

/* The marked entry first in submission order; the ring's index. */
static size_t first_lost(struct cls__keep *k) {
  for (size_t i = 0; i < k->len; i++)
    if (at(k, i)->lost)
      return i;
  return k->len;
}

uint64_t cls__keep_streams_binding(cls_context *ctx, cls_buffer h) {
  struct cls__keep *k = &ctx->keep;
  uint64_t mask = 0;
  for (size_t i = 0; i < k->len; i++) {
    const struct cls__kept *e = at(k, i);
    for (size_t b = 0; b < e->nbind; b++)
      if (e->bind[b].handle.bits == h.bits)
        mask |= 1ull << e->stream;
  }
  return mask;
}

bool cls__keep_take_lost(cls_context *ctx, struct cls__kept *out) {
  struct cls__keep *k = &ctx->keep;
  size_t i = first_lost(k);
  if (i == k->len) {
    k->nlost = 0;
    return false;
  }
  *out = *at(k, i);
  at(k, i)->lost = false;
  at(k, i)->follows = false;
  k->nlost--;
  unsigned t = k->ntaken++ % CLS__KEEP_TAKEN;
  k->taken[t].stream = out->stream;
  k->taken[t].position = out->position;
  return true;
}

void cls__keep_fini(cls_context *ctx) {
  free(ctx->keep.ring);
  free(ctx->keep.over);
  free(ctx->keep.scratch);
  free(ctx->keep.again);
  memset(&ctx->keep, 0, sizeof ctx->keep);
}
