/* F8's log, the ring: commands in flight in submission order, across
 * streams.  An entry is added at the enqueue (never allocating once the
 * ring is as long as the most work ever in flight) and dropped from the
 * head once its command is known complete.  What a failure found later
 * does to the entries is replay.c's. */
#include "failure/log.h"
#include "failure/kept.h"
#include "stream/pool.h"

#include <stdlib.h>
#include <string.h>

/* A skip logged after a kept command first submitted before it, while
 * that one is to run again: its failure may still move the skip.  Out of
 * line: entry_done is inlined in the prune loop every poll takes. */
static __attribute__((noinline)) bool skip_held(cls_context *ctx, const struct cls__log_entry *e) {
  return e->kind == CLS__ENTRY_SKIPPED && cls__keep_before(ctx, e->stamp);
}

static inline __attribute__((always_inline)) bool entry_done(cls_context *ctx,
                                                             const struct cls__log_entry *e) {
  if (e->kind < CLS__ENTRY_FAILED) { /* run or read: done once its stream says so */
    /* e->stream is a stream's id, always below CLS_MAX_STREAMS. */
    const struct cls__stream *s = &ctx->pool.streams[e->stream];
    if (s->created && s->completed < e->seq)
      return false;
  } else if (__builtin_expect(ctx->keep.len != 0, 0) && skip_held(ctx, e)) {
    return false;
  }
  return !ctx->hooks.holds || !ctx->hooks.holds(ctx, e); /* guard mode: checked first */
}

/* Whether every stream has finished all it submitted: then every logged
 * command has. */
static bool all_finished(const cls_context *ctx) {
  for (int i = 0; i < ctx->pool.nstreams; i++) {
    const struct cls__stream *s = &ctx->pool.streams[i];
    if (s->created && s->completed < s->submitted)
      return false;
  }
  return true;
}

/* The failures found after their enqueue that a logged command may yet
 * turn out to have been queued behind (replay.c, queued_behind): only
 * commands enqueued before each was found can have been.  While one of
 * those has not finished, the record stays, and so do the entries of its
 * commands (held, below), which queued_behind looks at, however early
 * their own streams finish; then the record goes (a failure lives as long
 * as what carries it).  `oldest`: the write stamp of the oldest logged
 * command not finished. */
static __attribute__((noinline)) void forget_found(struct cls__log *log, uint64_t oldest) {
  struct cls__found *x = &log->found[0][0];
  for (size_t i = 0; i < CLS_MAX_STREAMS * CLS__FOUND && log->nfound; i++, x++) {
    if (x->f && oldest > x->known) {
      cls__failure_unref(x->f);
      x->f = NULL;
      log->nfound--;
    }
  }
}

static uint64_t oldest_unfinished(cls_context *ctx) {
  for (size_t i = 0; i < ctx->log.len; i++)
    if (!entry_done(ctx, cls__log_at(ctx, i)))
      return cls__log_at(ctx, i)->stamp;
  return UINT64_MAX;
}

void cls__log_prune(cls_context *ctx) {
  struct cls__log *log = &ctx->log;
  const size_t mask = log->cap - 1;
  if (!ctx->hooks.holds && !log->causes && all_finished(ctx)) {
    /* No entry holds a reference: the log empties in one step (a device
     * that keeps up with the host finds it so at most polls). */
    log->head = (log->head + log->len) & mask;
    log->len = 0;
    if (__builtin_expect(log->nfound != 0, 0))
      forget_found(log, UINT64_MAX);
    return;
  }
  if (__builtin_expect(log->nfound != 0, 0))
    forget_found(log, oldest_unfinished(ctx));
  while (log->len && entry_done(ctx, cls__log_at(ctx, 0)) &&
         (!log->nfound || !cls__log_found(ctx, cls__log_at(ctx, 0)))) {
    struct cls__log_entry *e = cls__log_at(ctx, 0);
    if (e->cause) {
      cls__failure_unref(e->cause);
      log->causes--;
    }
    log->head = (log->head + 1) & mask;
    log->len--;
  }
}

/* A new overflow array for a log of `cap` positions, with the live rows
 * of the current one, if any, moved to where their entries will be once
 * the log is unwrapped to start at 0 (cls__ring_grow).  Rows never touched
 * cost address space only. */
static struct cls__log_binding *overflow_for(cls_context *ctx, size_t cap) {
  struct cls__log_binding *n = malloc(cap * CLS_MAX_ARGS * sizeof *n);
  if (!n || !ctx->log.overflow)
    return n;
  for (size_t i = 0; i < ctx->log.len; i++) {
    struct cls__log_entry *e = cls__log_at(ctx, i);
    if (e->nbind > CLS__LOG_INLINE)
      memcpy(n + i * CLS_MAX_ARGS, cls__log_bindings(ctx, e), e->nbind * sizeof *n);
  }
  return n;
}

/* The capacity stays a power of two: positions wrap with a mask. */
static int grow(cls_context *ctx, bool overflow) {
  struct cls__log *log = &ctx->log;
  size_t ncap = log->cap ? 2 * log->cap : 256; /* as cls__ring_grow does */
  struct cls__log_binding *o = NULL;
  if (overflow && !(o = overflow_for(ctx, ncap)))
    goto fail;
  if (!cls__ring_grow((void **)&log->ring, &log->cap, &log->head, log->len, sizeof *log->ring,
                      256))
    goto fail;
  if (o) {
    free(log->overflow);
    log->overflow = o;
  }
  return CLS_OK;
fail:
  free(o);
  return cls__error(CLS_ENOMEM, 0, "out of memory growing the in-flight log");
}

/* Room for one more entry with `nbind` bindings: drop what finished, else
 * grow.  False: out of memory (the error is recorded). */
bool cls__log_make_room(cls_context *ctx, size_t nbind) {
  struct cls__log *log = &ctx->log;
  cls__log_prune(ctx);
  bool overflow = log->overflow || nbind > CLS__LOG_INLINE;
  if (log->len == log->cap)
    return grow(ctx, overflow) == CLS_OK;
  /* The first such entry: rows for the log as it is. */
  if (overflow && !log->overflow && !(log->overflow = overflow_for(ctx, log->cap))) {
    cls__error(CLS_ENOMEM, 0, "out of memory growing the in-flight log");
    return false;
  }
  return true;
}

int cls__log_add(cls_context *ctx, int kind, uint64_t seq, const struct cls__cmd_at *at,
                 struct cls__pending_read *read) {
  struct cls__log_entry *e = cls__log_reserve(ctx, kind, seq, at, read);
  if (!e)
    return CLS_ENOMEM;
  struct cls__log_binding *lb = cls__log_bindings(ctx, e);
  for (size_t i = 0; i < at->nbind; i++)
    lb[i] = cls__log_binding_of(&at->bind[i]);
  return cls__log_commit(ctx) ? 1 : CLS_OK;
}

const struct cls__log_entry *cls__log_oldest(cls_context *ctx, int stream, uint64_t after) {
  for (size_t i = 0; i < ctx->log.len; i++) {
    const struct cls__log_entry *e = cls__log_at(ctx, i);
    if (e->stream == stream && (e->kind == CLS__ENTRY_RUN || e->kind == CLS__ENTRY_READ) &&
        e->seq > after)
      return e;
  }
  return NULL;
}

size_t cls__log_find(cls_context *ctx, const struct cls__range_part *parts, size_t n) {
  size_t k = 0;
  while (k < ctx->log.len && !cls__log_in(cls__log_at(ctx, k), parts, n))
    k++;
  return k;
}

void cls__log_forget_read(cls_context *ctx, struct cls__pending_read *r) {
  for (size_t i = 0; i < ctx->log.len; i++)
    if (cls__log_at(ctx, i)->read == r)
      cls__log_at(ctx, i)->read = NULL;
  if (ctx->keep.len) /* recovery keeps it to run the download again */
    cls__keep_forget_read(ctx, r);
}

void cls__log_fini(cls_context *ctx) {
  struct cls__log *log = &ctx->log;
  for (size_t i = 0; i < log->len; i++)
    cls__failure_unref(cls__log_at(ctx, i)->cause);
  log->causes = 0;
  forget_found(log, UINT64_MAX);
  free(log->overflow);
  log->overflow = NULL;
  free(log->ring);
  log->ring = NULL;
  log->len = log->cap = log->head = 0;
}
