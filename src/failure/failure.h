/* Internal: the failure store -- rules F1-F5, F9 and F10 on the
 * context's buffers: minting roots, the check before a command (F2), the
 * write scope (F3/F4), and the report of a read (F5).  Asynchronous
 * failures (F8) are the log's (log.h, replay.h, poll.h).  Written once for
 * every driver: a driver never touches a failure record. */
#ifndef CLS_FAILURE_H
#define CLS_FAILURE_H

#include "base/cmd.h"
#include "base/context.h"
#include "base/record.h"
#include "factory/call.h"

/* A command where it stands: what the command path hands the F8 log
 * (log.h, replay.h) and what a failure's record names (cls__failure_mint,
 * which reads op, kernel, stream and position only).  Built on the
 * caller's stack for one call; nothing keeps a pointer to it. */
struct cls__cmd_at {
  int stream;                   /* its stream's id (-1: none) */
  int kind;                     /* enum cls__cmd_kind; 0: none of them (a
                                   refused receive, a build) */
  uint64_t position;            /* the stream's issued count it took */
  uint64_t stamp;               /* the write stamp its writes got */
  const char *op;               /* "launch", "upload", ... */
  const char *kernel;           /* the kernel's name for a launch, else ""
                                   (also when not known); lives as long as
                                   the context */
  const struct cls__binding *bind; /* argument order */
  size_t nbind;
};

/* Mints a new root failure of command `at` with one reference held by the
 * caller, and logs it (F9).  async: found after the enqueue (F8).  NULL
 * only when out of host memory. */
struct cls__failure *cls__failure_mint(cls_context *ctx, int status, cl_int cl_status,
                                       const struct cls__cmd_at *at, bool async,
                                       const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* A record the caller filled itself (a failure that came from another
 * process, src/wire/wire.c) becomes the context's: counted and logged (F9)
 * as cls__failure_mint does. */
void cls__failure_adopt(cls_context *ctx, struct cls__failure *f);
/* Failures with an identity across processes (record.h: cls__seen).
 * cls__failure_known: this context's record of f's failure, if it has one
 * (no reference given), and in *seen whether the context ever logged it.
 * cls__failure_seen: f is that failure's record here from now on (it takes
 * a reference while anything else holds f).  Neither allocates but the
 * table, once. */
struct cls__failure *cls__failure_known(cls_context *ctx, const struct cls__failure *f,
                                        bool *seen);
void cls__failure_seen(cls_context *ctx, struct cls__failure *f);

/* F2: the failure carried by the first read binding (argument order) that
 * carries one, or NULL.  A "never written" slot gets its record minted
 * here, the one slow path of the check. */
struct cls__failure *cls__materialize(cls_context *ctx, struct cls__slot *slot, cls_buffer h);
/* The first of bindings b[0..n) that reads a buffer carrying a failure,
 * the one whose failure F2 takes (cls__read_failure), or n.
 * cls__read_failure makes the same walk itself: written through this one,
 * GCC laid out launch() so that every launch took 9 instructions more
 * (make bench-own-cost). */
static inline size_t cls__first_failed_read(const struct cls__binding *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if ((b[i].access & CLS_READ) && b[i].slot->failure)
      return i;
  return n;
}
static inline struct cls__failure *cls__read_failure(cls_context *ctx, int stream,
                                                     const struct cls__binding *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    struct cls__failure *f = b[i].slot->failure;
    if (!(b[i].access & CLS_READ) || !f)
      continue;
    if (f == &cls__never_written || f->provisional)
      return cls__materialize(ctx, b[i].slot, b[i].handle);
    return f;
  }
  return NULL;
}

/* F2: a skipped launch.  Every write binding takes `found` (the root, not a
 * new record) and the skip is appended to its chain.  No allocation.
 * Returns the write stamp it took. */
static inline uint64_t cls__propagate_writes(cls_context *ctx, struct cls__failure *found,
                                             const struct cls__binding *b, size_t n) {
  uint64_t stamp = ++ctx->stamp;
  for (size_t i = 0; i < n; i++)
    if (b[i].access & CLS_WRITE) {
      cls__slot_set_failure(b[i].slot, found);
      b[i].slot->write_stamp = stamp;
    }
  return stamp;
}
static inline uint64_t cls__propagate(cls_context *ctx, struct cls__failure *found, int kind,
                                      const char *kernel, int stream, uint64_t position,
                                      const struct cls__binding *b, size_t n) {
  uint64_t stamp = cls__propagate_writes(ctx, found, b, n);
  cls__failure_add_skip(found, kind, kernel, stream, position, stamp);
  return stamp;
}
/* Stamps every write binding with a new context-wide write stamp and
 * returns it (the F8 replay tells later writes from earlier ones by it). */
uint64_t cls__stamp_writes(cls_context *ctx, const struct cls__binding *b, size_t n);

/* A binding's access bit beside CLS_READ / CLS_WRITE: a transfer that
 * writes part of its destination.  F4 for ranged attribution: such a
 * write leaves a ranged failure in place, since the bytes it does not
 * cover may come from a command of the failed range. */
#define CLS__PARTIAL 8
static inline int cls__dst_access(size_t offset, size_t size, size_t whole) {
  return CLS_WRITE | (offset || size < whole ? CLS__PARTIAL : 0);
}
/* Whether a write with `access` keeps failure f on its buffer. */
static inline bool cls__write_keeps(int access, const struct cls__failure *f) {
  return (access & CLS__PARTIAL) && f && f != &cls__never_written && f->ranged;
}

/* A new record for the write scope, in place of the pooled spare that
 * buffers a scope left behind still hold (cls__enter_write's slow path). */
struct cls__failure *cls__scope_record_new(cls_context *ctx);
/* F3: enter a write scope: every write binding takes a provisional failure,
 * returned (NULL when the write set is empty: nothing is minted).  A
 * partial write keeps a ranged failure (CLS__PARTIAL). */
static inline struct cls__failure *cls__enter_write(cls_context *ctx,
                                                    const struct cls__binding *b, size_t n) {
  struct cls__failure *p = NULL;
  for (size_t i = 0; i < n; i++)
    if (b[i].access & CLS_WRITE) {
      if (!p) {
        /* The scope's record: the pooled spare while no buffer a scope
         * left behind still holds it, else a new one (NULL: out of host
         * memory). */
        p = ctx->failures.spare;
        if (p && p->refs == 1)
          p->logged = false;
        else if (!(p = cls__scope_record_new(ctx)))
          return NULL;
      }
      if (!cls__write_keeps(b[i].access, b[i].slot->failure))
        cls__slot_set_failure(b[i].slot, p);
    }
  return p;
}
/* F3/F4: leave the scope.  error == NULL: the work was enqueued, the write
 * set is released (writing clears).  Otherwise the provisional record is
 * replaced by `error` on every buffer that still holds it.  Per binding
 * too, for a caller that walks its bindings once for several rules. */
static inline void cls__exit_write_one(struct cls__slot *slot, struct cls__failure *provisional,
                                       struct cls__failure *error) {
  if (slot->failure == provisional) /* else a replay changed it since */
    cls__slot_set_failure(slot, error);
}
static inline void cls__exit_write(struct cls__failure *provisional, const struct cls__binding *b,
                                   size_t n, struct cls__failure *error) {
  for (size_t i = 0; i < n; i++)
    if (b[i].access & CLS_WRITE)
      cls__exit_write_one(b[i].slot, provisional, error);
}

/* CLS_ESKIPPED for `op` of `name` (a launch's kernel) at `position` on
 * `stream`, skipped on failure f (F2), with a detail that says so, names
 * the argument it came through (`input`, where not NULL) and f's root.
 * F10: the detail is formatted only if cls_last_error_detail() asks for
 * it, and a run of skips of one kernel on one record copies their texts
 * once (cls__skip_copy: the name and the argument's text compare by
 * pointer, as the skip chain's runs do, the record by its serial; a
 * provisional record, F3, may still be completed, and is copied every
 * time). */
void cls__skip_copy(const char *name, const char *input, const struct cls__failure *f);
void cls__skip_render(void);
static inline int cls__skipped(const char *op, const char *name, int stream, uint64_t position,
                               const struct cls__failure *f, const char *input) {
  struct cls__last_error *l = &cls__last; /* one thread-local lookup */
  if (name != l->name_of || input != l->input_of || f->serial != l->serial || !f->serial ||
      f->provisional)
    cls__skip_copy(name, input, f);
  l->op = op;
  l->stream = stream;
  l->position = position;
  l->cl_status = 0;
  l->has_detail = true;
  l->deferred = cls__skip_render;
  return CLS_ESKIPPED;
}

#endif /* CLS_FAILURE_H */
